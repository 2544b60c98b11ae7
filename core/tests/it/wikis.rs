//! Real wikis build unchanged: an Obsidian vault, a ktx-style wiki with user scopes and a broken
//! page (both described in `tests/fixtures/wikis/*.EXPECTED.md`), and the example wiki.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde_json::json;
use wikidex::analyze::{Analyzer, Language};
use wikidex::{
    AlwaysMode, BuildReport, Index, IndexBuilder, Lane, OffsetUnit, Page, Scope, SearchOptions,
    SearchResults, Session, UsageMode, WriteOptions,
};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/wikis")
}

fn obsidian_dir() -> PathBuf {
    fixtures().join("obsidian")
}

fn ktx_dir() -> PathBuf {
    fixtures().join("ktx/wiki")
}

fn example_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/wiki")
}

fn build_dir(dir: &Path) -> (Index, BuildReport) {
    let mut b = IndexBuilder::new(Default::default()).unwrap();
    b.add_dir(dir).unwrap();
    b.build().unwrap()
}

fn obsidian() -> &'static (Index, BuildReport) {
    static BUILT: OnceLock<(Index, BuildReport)> = OnceLock::new();
    BUILT.get_or_init(|| build_dir(&obsidian_dir()))
}

fn ktx() -> &'static (Index, BuildReport) {
    static BUILT: OnceLock<(Index, BuildReport)> = OnceLock::new();
    BUILT.get_or_init(|| build_dir(&ktx_dir()))
}

fn example() -> &'static (Index, BuildReport) {
    static BUILT: OnceLock<(Index, BuildReport)> = OnceLock::new();
    BUILT.get_or_init(|| build_dir(&example_dir()))
}

fn carol() -> Scope {
    Scope::User("carol".into())
}

fn global_page<'a>(index: &'a Index, key: &str) -> &'a Page {
    index
        .page(key, Some(&Scope::Global))
        .unwrap_or_else(|e| panic!("page {key}: {e}"))
}

/// Every page the page points at through `refs` and inline links, as a set.
fn targets(page: &Page) -> BTreeSet<&str> {
    page.refs
        .iter()
        .chain(&page.links)
        .map(String::as_str)
        .collect()
}

fn set<'a>(items: &[&'a str]) -> BTreeSet<&'a str> {
    items.iter().copied().collect()
}

fn hit_ids(results: &SearchResults) -> Vec<&str> {
    results.hits.iter().map(|h| h.page_id.as_str()).collect()
}

// ---------------------------------------------------------------------------------------------
// Obsidian vault

/// (path, key, title, summary, link targets) from `obsidian.EXPECTED.md`.
type ObsidianRow = (
    &'static str,
    &'static str,
    &'static str,
    Option<&'static str>,
    &'static [&'static str],
);

const OBSIDIAN_PAGES: &[ObsidianRow] = &[
    (
        "Home.md",
        "home",
        "Home",
        Some("Entry point of the vault; links to the active project and the reference notes."),
        &["project-alpha", "glossary", "2024-05-02"],
    ),
    (
        "Projects/Alpha/Project Alpha.md",
        "project-alpha",
        "Project Alpha",
        Some("Alpha migrates the reporting stack to the new warehouse by the end of Q3 2024."),
        &[
            "glossary",
            "team-directory",
            "meeting-notes-2024-05-01",
            "alpha-risks",
        ],
    ),
    (
        "Projects/Alpha/Alpha Risks.md",
        "alpha-risks",
        "Alpha risk register",
        Some("Open risks for Project Alpha with owner and mitigation."),
        &["project-alpha", "glossary"],
    ),
    (
        "Daily/Meeting Notes 2024-05-01.md",
        "meeting-notes-2024-05-01",
        "Alpha kickoff meeting",
        Some("Kickoff of Project Alpha - scope, owners and the weekly review slot."),
        &["project-alpha", "alpha-risks"],
    ),
    (
        "Daily/2024-05-01.md",
        "2024-05-01",
        "Daily 2024-05-01",
        None,
        &["meeting-notes-2024-05-01", "alpha-risks"],
    ),
    (
        "Daily/2024-05-02.md",
        "2024-05-02",
        "2024-05-02",
        None,
        &["meeting-notes-2024-05-01", "alpha-risks"],
    ),
    (
        "Reference/Glossary.md",
        "glossary",
        "Glossary",
        Some("Short definitions of the terms used in Project Alpha notes."),
        &["team-directory"],
    ),
    (
        "Reference/Team Directory.md",
        "team-directory",
        "Alpha Team Directory",
        Some("Who works on Project Alpha and what they own."),
        &["project-alpha"],
    ),
];

#[test]
fn obsidian_vault_builds_eight_pages_and_skips_nothing() {
    let (index, report) = obsidian();
    assert_eq!(report.pages, 8);
    assert!(report.skipped.is_empty(), "{:?}", report.skipped);
    let keys: BTreeSet<&str> = index.pages().iter().map(|p| p.key.as_str()).collect();
    let expected: BTreeSet<&str> = OBSIDIAN_PAGES.iter().map(|p| p.1).collect();
    assert_eq!(keys, expected);
}

#[test]
fn obsidian_dot_folder_and_non_markdown_files_are_ignored() {
    let (index, _) = obsidian();
    for p in index.pages() {
        assert!(!p.path.contains(".obsidian"), "{}", p.path);
        assert!(p.path.ends_with(".md"), "{}", p.path);
    }
}

#[test]
fn obsidian_pages_keep_their_paths_relative_to_the_vault() {
    let (index, _) = obsidian();
    for (path, key, ..) in OBSIDIAN_PAGES {
        assert_eq!(global_page(index, key).path, *path, "{key}");
    }
}

#[test]
fn obsidian_pages_are_found_by_their_file_name() {
    let (index, _) = obsidian();
    assert_eq!(
        index.page("Project Alpha", None).unwrap().key,
        "project-alpha"
    );
    assert_eq!(
        index.page("Meeting Notes 2024-05-01", None).unwrap().key,
        "meeting-notes-2024-05-01"
    );
    assert_eq!(
        index.page("team directory", None).unwrap().key,
        "team-directory"
    );
}

#[test]
fn obsidian_pages_are_global() {
    let (index, _) = obsidian();
    assert!(index.pages().iter().all(|p| p.scope == Scope::Global));
}

#[test]
fn obsidian_titles_come_from_the_title_field_then_the_first_heading_then_the_key() {
    let (index, _) = obsidian();
    for (_, key, title, ..) in OBSIDIAN_PAGES {
        assert_eq!(global_page(index, key).title, *title, "{key}");
    }
}

#[test]
fn obsidian_summaries_come_from_summary_or_description() {
    let (index, _) = obsidian();
    for (_, key, _, summary, _) in OBSIDIAN_PAGES {
        assert_eq!(
            global_page(index, key).summary.as_deref(),
            *summary,
            "{key}"
        );
    }
}

#[test]
fn obsidian_link_targets_match_the_expected_keys_per_page() {
    let (index, _) = obsidian();
    for (_, key, _, _, links) in OBSIDIAN_PAGES {
        assert_eq!(targets(global_page(index, key)), set(links), "{key}");
    }
}

#[test]
fn obsidian_links_never_dangle() {
    let (index, _) = obsidian();
    for p in index.pages() {
        for t in targets(p) {
            assert!(
                index.page(t, Some(&Scope::Global)).is_ok(),
                "{} -> {t}",
                p.key
            );
        }
    }
}

#[test]
fn obsidian_attachment_embeds_and_external_links_are_not_page_links() {
    let (index, _) = obsidian();
    let alpha = global_page(index, "project-alpha");
    assert!(
        !alpha.links.iter().any(|l| l.contains("diagram")),
        "{:?}",
        alpha.links
    );
    let home = global_page(index, "home");
    assert!(
        !home.links.iter().any(|l| l.contains("example")),
        "{:?}",
        home.links
    );
}

#[test]
fn obsidian_backlinks_match_the_expected_graph() {
    let (index, _) = obsidian();
    let mut backlinks: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for p in index.pages() {
        for t in targets(p) {
            backlinks.entry(t).or_default().insert(p.key.as_str());
        }
    }
    let expected: BTreeMap<&str, BTreeSet<&str>> = [
        (
            "project-alpha",
            set(&[
                "home",
                "alpha-risks",
                "meeting-notes-2024-05-01",
                "team-directory",
            ]),
        ),
        (
            "alpha-risks",
            set(&[
                "project-alpha",
                "meeting-notes-2024-05-01",
                "2024-05-01",
                "2024-05-02",
            ]),
        ),
        ("glossary", set(&["home", "project-alpha", "alpha-risks"])),
        ("team-directory", set(&["project-alpha", "glossary"])),
        (
            "meeting-notes-2024-05-01",
            set(&["project-alpha", "2024-05-01", "2024-05-02"]),
        ),
        ("2024-05-02", set(&["home"])),
    ]
    .into_iter()
    .collect();
    assert_eq!(backlinks, expected);
}

#[test]
fn obsidian_aliases_and_tags_are_read() {
    let (index, _) = obsidian();
    let alpha = global_page(index, "project-alpha");
    assert_eq!(alpha.aliases, ["PA", "Alpha"]);
    assert_eq!(alpha.tags, ["project"]);
    assert_eq!(
        global_page(index, "team-directory").tags,
        ["reference", "people"]
    );
}

#[test]
fn obsidian_unknown_fields_are_kept() {
    let (index, _) = obsidian();
    let extra = |key: &str| global_page(index, key).extra.0.clone();
    let alpha = extra("project-alpha");
    assert_eq!(alpha["status"], json!("active"));
    assert_eq!(alpha["owner"], json!("Lena"));
    assert_eq!(extra("home")["cssclass"], json!("home-page"));
    let meeting = extra("meeting-notes-2024-05-01");
    assert_eq!(meeting["date"], json!("2024-05-01"));
    assert_eq!(meeting["attendees"], json!(["Lena", "Omar", "Sam"]));
    assert_eq!(extra("2024-05-01")["mood"], json!("busy"));
}

#[test]
fn obsidian_known_fields_do_not_leak_into_unknown_fields() {
    let (index, _) = obsidian();
    let alpha = &global_page(index, "project-alpha").extra.0;
    let keys: Vec<&str> = alpha.keys().map(String::as_str).collect();
    assert_eq!(keys, ["owner", "status"]);
}

#[test]
fn obsidian_page_without_frontmatter_has_no_fields() {
    let (index, _) = obsidian();
    let p = global_page(index, "2024-05-02");
    assert!(p.tags.is_empty());
    assert!(p.extra.0.is_empty());
    assert!(p.aliases.is_empty());
    assert_eq!(p.summary, None);
    assert_eq!(p.kind, None);
    assert_eq!(p.body_start, 0);
}

// ---------------------------------------------------------------------------------------------
// ktx wiki

/// (scope user or global, key, title, type, usage mode, refs + inline links, sl_refs) from
/// `ktx.EXPECTED.md`.
type KtxRow = (
    Option<&'static str>,
    &'static str,
    &'static str,
    &'static str,
    UsageMode,
    &'static [&'static str],
    &'static [&'static str],
);

const KTX_PAGES: &[KtxRow] = &[
    (
        None,
        "mart_account_segments",
        "mart_account_segments",
        "reference",
        UsageMode::Auto,
        &["active_accounts", "churn_rate"],
        &["warehouse.accounts", "warehouse.subscriptions"],
    ),
    (
        None,
        "active_accounts",
        "Active accounts",
        "reference",
        UsageMode::Auto,
        &["mart_account_segments"],
        &["warehouse.subscriptions"],
    ),
    (
        None,
        "churn_rate",
        "Churn rate",
        "reference",
        UsageMode::Auto,
        &["active_accounts", "mart_account_segments"],
        &[],
    ),
    (
        None,
        "rule_pii_handling",
        "Rule: PII handling",
        "rule",
        UsageMode::Always,
        &[],
        &["exports.account_contacts"],
    ),
    (
        Some("carol"),
        "churn_rate",
        "Churn rate (carol's draft, excludes account merges)",
        "note",
        UsageMode::Auto,
        &["active_accounts", "segment_notes"],
        &[],
    ),
    (
        Some("carol"),
        "segment_notes",
        "Segment notes",
        "note",
        UsageMode::Never,
        &["churn_rate", "mart_account_segments"],
        &["salesforce.accounts"],
    ),
];

fn ktx_scope(user: Option<&str>) -> Scope {
    user.map_or(Scope::Global, |u| Scope::User(u.into()))
}

/// The page `key` exactly in `scope` (no fallback to the global page).
fn ktx_page<'a>(index: &'a Index, user: Option<&str>, key: &str) -> &'a Page {
    let scope = ktx_scope(user);
    index
        .pages()
        .iter()
        .find(|p| p.key == key && p.scope == scope)
        .unwrap_or_else(|| panic!("no page {key} in scope {scope}"))
}

#[test]
fn ktx_builds_six_pages_and_skips_the_broken_one() {
    let (index, report) = ktx();
    assert_eq!(report.pages, 6);
    assert_eq!(index.pages().len(), 6);
    let ids: BTreeSet<String> = index.pages().iter().map(|p| p.id()).collect();
    let expected: BTreeSet<String> = KTX_PAGES
        .iter()
        .map(|(user, key, ..)| match user {
            Some(u) => format!("user/{u}/{key}"),
            None => key.to_string(),
        })
        .collect();
    assert_eq!(ids, expected);
}

#[test]
fn ktx_broken_yaml_is_reported_with_its_path_code_and_line() {
    let (_, report) = ktx();
    assert_eq!(report.skipped.len(), 1, "{:?}", report.skipped);
    let s = &report.skipped[0];
    assert_eq!(s.path, "global/broken_yaml.md");
    assert_eq!(s.code, "invalid_page");
    // EXPECTED: line 3 (the `[` that opens the sequence); 4 (where the parser gave up) is
    // tolerated; never 2 (frontmatter-relative) or 0.
    assert!(matches!(s.line, Some(3 | 4)), "line {:?}", s.line);
    assert!(!s.reason.is_empty());
}

#[test]
fn ktx_broken_page_is_not_a_page_and_its_links_are_not_edges() {
    let (index, _) = ktx();
    assert_eq!(
        index.page("broken_yaml", None).unwrap_err().code(),
        "unknown_page"
    );
    assert!(index.pages().iter().all(|p| !p.path.contains("broken")));
}

#[test]
fn ktx_strict_build_fails_on_the_broken_page() {
    let mut b = IndexBuilder::new(Default::default()).unwrap();
    b.strict(true);
    let err = b.add_dir(&ktx_dir()).unwrap_err();
    assert_eq!(err.code(), "invalid_page");
    assert!(err.to_string().contains("broken_yaml.md"), "{err}");
}

#[test]
fn ktx_pages_have_the_expected_scopes_titles_types_and_usage_modes() {
    let (index, _) = ktx();
    for (user, key, title, kind, mode, ..) in KTX_PAGES {
        let p = ktx_page(index, *user, key);
        assert_eq!(p.scope, ktx_scope(*user), "{key}");
        assert_eq!(p.title, *title, "{key}");
        assert_eq!(p.kind.as_deref(), Some(*kind), "{key}");
        assert_eq!(p.usage_mode, *mode, "{key}");
    }
}

#[test]
fn ktx_refs_and_inline_links_together_match_the_expected_targets() {
    let (index, _) = ktx();
    for (user, key, _, _, _, refs, _) in KTX_PAGES {
        assert_eq!(
            targets(ktx_page(index, *user, key)),
            set(refs),
            "{user:?} {key}"
        );
    }
}

#[test]
fn ktx_sl_refs_are_kept_as_data() {
    let (index, _) = ktx();
    for (user, key, _, _, _, _, sl_refs) in KTX_PAGES {
        assert_eq!(
            ktx_page(index, *user, key).sl_refs,
            *sl_refs,
            "{user:?} {key}"
        );
    }
}

#[test]
fn ktx_relations_keep_type_confidence_and_evidence() {
    let (index, _) = ktx();
    let rel = |user, key| -> Vec<(String, String, f32, Option<String>)> {
        ktx_page(index, user, key)
            .relations
            .iter()
            .map(|r| {
                (
                    r.target.clone(),
                    r.kind.clone(),
                    r.confidence,
                    r.evidence.clone(),
                )
            })
            .collect()
    };
    let s = |x: &str| x.to_string();
    assert_eq!(
        rel(None, "churn_rate"),
        [
            (
                s("active_accounts"),
                s("depends_on"),
                1.0,
                Some(s(
                    "Numerator and denominator are both counts of active accounts."
                ))
            ),
            (
                s("mart_account_segments"),
                s("depends_on"),
                0.8,
                Some(s(
                    "The churn model reads is_active from mart_account_segments."
                ))
            ),
        ]
    );
    assert_eq!(
        rel(Some("carol"), "churn_rate"),
        [(
            s("segment_notes"),
            s("derived_from"),
            0.6,
            Some(s(
                "The merge exclusion comes from the June investigation in segment_notes."
            ))
        )]
    );
}

#[test]
fn ktx_unknown_fields_are_kept() {
    let (index, _) = ktx();
    let extra = |user, key| ktx_page(index, user, key).extra.0.clone();
    let expected = [
        (
            None,
            "mart_account_segments",
            json!({"owner": "data-team", "grain": "account_id x date_day"}),
        ),
        (
            None,
            "active_accounts",
            json!({"owner": "data-team", "metric_version": 2}),
        ),
        (None, "churn_rate", json!({"owner": "data-team"})),
        (
            None,
            "rule_pii_handling",
            json!({"owner": "data-protection", "policy_id": "SEC-07"}),
        ),
        (
            Some("carol"),
            "churn_rate",
            json!({"status": "draft", "owner": "carol"}),
        ),
        (Some("carol"), "segment_notes", json!({"owner": "carol"})),
    ];
    for (user, key, fields) in expected {
        let got = serde_json::to_value(extra(user, key)).unwrap();
        assert_eq!(got, fields, "{user:?} {key}");
    }
}

#[test]
fn ktx_provenance_comment_is_kept() {
    let (index, _) = ktx();
    assert_eq!(
        ktx_page(index, Some("carol"), "churn_rate").provenance,
        ["raw/slack_2024_07_02.md"]
    );
}

#[test]
fn ktx_refs_resolve_in_their_own_scope() {
    let (index, _) = ktx();
    for p in index.pages() {
        for t in targets(p) {
            let found = index.page(t, Some(&p.scope));
            assert!(found.is_ok(), "{} -> {t} in scope {}", p.id(), p.scope);
        }
    }
}

#[test]
fn ktx_user_page_shadows_the_global_page_for_lookups_in_its_scope() {
    let (index, _) = ktx();
    let p = index.page("churn_rate", Some(&carol())).unwrap();
    assert_eq!(p.scope, carol());
    assert_eq!(p.path, "user/carol/churn_rate.md");
}

#[test]
fn ktx_global_page_is_what_the_global_scope_and_other_users_see() {
    let (index, _) = ktx();
    for scope in [None, Some(Scope::Global), Some(Scope::User("dave".into()))] {
        let p = index.page("churn_rate", scope.as_ref()).unwrap();
        assert_eq!(p.path, "global/churn_rate.md", "{scope:?}");
    }
}

#[test]
fn ktx_other_users_do_not_see_carols_pages() {
    let (index, _) = ktx();
    let dave = Scope::User("dave".into());
    assert_eq!(
        index.page("segment_notes", Some(&dave)).unwrap_err().code(),
        "unknown_page"
    );
    assert_eq!(
        index
            .page("segment_notes", Some(&Scope::Global))
            .unwrap_err()
            .code(),
        "unknown_page"
    );
}

#[test]
fn ktx_search_in_carols_scope_returns_her_churn_rate_and_not_the_global_one() {
    let (index, _) = ktx();
    let opts = SearchOptions {
        scope: Some(carol()),
        ..Default::default()
    };
    let results = index.search("churn rate", &opts).unwrap();
    let ids = hit_ids(&results);
    assert!(ids.contains(&"user/carol/churn_rate"), "{ids:?}");
    assert!(!ids.contains(&"churn_rate"), "{ids:?}");
}

#[test]
fn ktx_search_in_the_global_scope_returns_only_global_pages() {
    let (index, _) = ktx();
    let opts = SearchOptions {
        scope: Some(Scope::Global),
        ..Default::default()
    };
    let results = index.search("churn rate account merges", &opts).unwrap();
    let ids = hit_ids(&results);
    assert!(ids.contains(&"churn_rate"), "{ids:?}");
    assert!(
        results.hits.iter().all(|h| h.scope == Scope::Global),
        "{ids:?}"
    );
}

#[test]
fn ktx_never_page_is_not_returned_in_any_scope() {
    let (index, _) = ktx();
    let query = "Segment notes: June churned SMB accounts merged into parent accounts salesforce";
    for scope in [None, Some(Scope::Global), Some(carol())] {
        for chunks in [false, true] {
            let opts = SearchOptions {
                scope: scope.clone(),
                chunks,
                ..Default::default()
            };
            let results = index.search(query, &opts).unwrap();
            assert!(!results.hits.is_empty());
            assert!(
                results.hits.iter().all(|h| h.key != "segment_notes"),
                "{scope:?}: {:?}",
                hit_ids(&results)
            );
        }
    }
}

#[test]
fn ktx_never_page_is_not_returned_even_when_never_is_asked_for() {
    let (index, _) = ktx();
    let opts = SearchOptions {
        scope: Some(carol()),
        usage_modes: vec![UsageMode::Never, UsageMode::Auto],
        ..Default::default()
    };
    let results = index
        .search("segment notes merged salesforce", &opts)
        .unwrap();
    assert!(!results.hits.is_empty(), "other pages match the query");
    assert!(
        results.hits.iter().all(|h| h.key != "segment_notes"),
        "{:?}",
        hit_ids(&results)
    );
}

#[test]
fn ktx_always_page_comes_first_with_always_mode_first() {
    let (index, _) = ktx();
    let first = SearchOptions {
        always: AlwaysMode::First,
        limit: Some(2),
        ..Default::default()
    };
    let results = index.search("churn rate", &first).unwrap();
    // The `always` page takes no slot: two ranked hits follow it.
    assert_eq!(results.hits.len(), 3, "{:?}", hit_ids(&results));
    assert_eq!(results.hits[0].key, "rule_pii_handling");
    assert!(results.hits[0].always);
    assert!(results.hits[1..].iter().all(|h| !h.always));
    assert!(results.always.is_empty());
}

#[test]
fn ktx_always_page_is_returned_separately_with_always_mode_separate() {
    let (index, _) = ktx();
    let opts = SearchOptions {
        always: AlwaysMode::Separate,
        ..Default::default()
    };
    let results = index.search("churn rate", &opts).unwrap();
    let always: Vec<&str> = results.always.iter().map(|h| h.key.as_str()).collect();
    assert_eq!(always, ["rule_pii_handling"]);
    assert!(results.hits.iter().all(|h| h.key != "rule_pii_handling"));
    assert!(!results.hits.is_empty());
}

// ---------------------------------------------------------------------------------------------
// The example wiki

fn lexical_and_token() -> SearchOptions {
    SearchOptions {
        lanes: Some(vec![Lane::Lexical, Lane::Token]),
        always: AlwaysMode::Separate,
        ..Default::default()
    }
}

#[test]
fn example_wiki_builds_42_pages_and_2_raw_documents_skipping_only_the_planted_duplicate() {
    let (index, report) = example();
    assert_eq!(report.pages, 42);
    assert_eq!(index.pages().len(), 42);
    assert_eq!(report.raw_documents, 2);
    assert_eq!(index.raw_documents().len(), 2);
    let skipped: Vec<(&str, &str)> = report
        .skipped
        .iter()
        .map(|s| (s.path.as_str(), s.code.as_str()))
        .collect();
    assert_eq!(
        skipped,
        [("global/wiki_import/glossary.md", "duplicate_key")]
    );
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    assert_eq!(report.chunks, index.chunk_count());
}

#[test]
fn example_wiki_has_exactly_one_archived_page() {
    let (index, _) = example();
    let archived: Vec<&str> = index
        .pages()
        .iter()
        .filter(|p| p.is_archived())
        .map(|p| p.key.as_str())
        .collect();
    assert_eq!(archived, ["legacy_sql_scripts"]);
}

#[test]
fn archived_page_is_never_returned_even_for_its_exact_title() {
    let (index, _) = example();
    let page = index.page("legacy_sql_scripts", None).unwrap();
    for query in [
        page.title.as_str(),
        "legacy sql scripts",
        "legacy_sql_scripts etl-scripts cron",
    ] {
        for chunks in [false, true] {
            for scope in [None, Some(Scope::Global)] {
                let opts = SearchOptions {
                    chunks,
                    scope,
                    limit: Some(100),
                    ..Default::default()
                };
                let results = index.search(query, &opts).unwrap();
                assert!(!results.hits.is_empty(), "other pages match {query:?}");
                assert!(
                    results.hits.iter().all(|h| h.key != "legacy_sql_scripts"),
                    "{query}"
                );
                assert!(
                    results.always.iter().all(|h| h.key != "legacy_sql_scripts"),
                    "{query}"
                );
            }
        }
    }
}

#[test]
fn archived_page_is_still_addressable_by_key() {
    let (index, _) = example();
    let page = index.page("legacy_sql_scripts", None).unwrap();
    assert_eq!(page.archived_since.as_deref(), Some("2024-01-15"));
    assert!(index.chunk("legacy_sql_scripts::chunk_0").is_ok());
}

fn first_hit(query: &str) -> String {
    let (index, _) = example();
    let results = index.search(query, &lexical_and_token()).unwrap();
    results
        .hits
        .first()
        .map(|h| h.page_id.clone())
        .unwrap_or_default()
}

#[test]
fn nightly_job_crash_question_finds_the_filed_answer_then_the_memory_leak_incident() {
    let (index, _) = example();
    let results = index
        .search("why did the nightly job crash", &lexical_and_token())
        .unwrap();
    // An agent filed its answer to this very question back as a topic page (issue 4); the
    // incident it cites comes next.
    assert_eq!(
        hit_ids(&results)[..2],
        [
            "answer_why_nightly_crashed_2024_03_12",
            "incident_2024_03_memory_leak"
        ]
    );
}

#[test]
fn raw_documents_are_never_search_results_but_chunks_resolve() {
    let (index, _) = example();
    let results = index
        .search(
            "segment_enricher OOM-killed exit code 137",
            &Default::default(),
        )
        .unwrap();
    assert!(
        !results.hits.is_empty(),
        "pages cite the raw document's words"
    );
    assert!(results.hits.iter().all(|h| !h.page_id.starts_with("raw/")));
    let c = index
        .chunk("raw/airflow_nightly_build_2024_03_12::chunk_0")
        .unwrap();
    assert!(c.raw);
    assert!(c.text.contains("OOMKilled"));
}

#[test]
fn example_pointers_are_ordered_by_weight_and_skip_unknown_chunks() {
    let (index, _) = example();
    let p: Vec<(String, f32)> = index
        .pointers("answer_why_nightly_crashed_2024_03_12", None)
        .unwrap()
        .into_iter()
        .map(|p| (p.chunk, p.weight))
        .collect();
    assert_eq!(
        p,
        [
            ("raw/slack_2024_03_12::chunk_0".to_string(), 0.9),
            (
                "raw/airflow_nightly_build_2024_03_12::chunk_0".to_string(),
                0.6
            ),
        ]
    );
}

#[test]
fn example_lint_finds_exactly_one_planted_problem_per_rule() {
    let (index, report) = example();
    let lint = index.lint_with_build(report);
    let mut codes: Vec<&str> = lint.issues.iter().map(|i| i.code.as_str()).collect();
    codes.sort();
    // Every rule but redirect_too_long (a chain of 17 redirects), skipped_file and outside_root
    // (a broken file and a link out of the folder, which the example keeps out of the demo):
    // hostile.rs and tests/vectors/lint.json pin those.
    let mut rules: Vec<&str> = wikidex::lint::RULES
        .iter()
        .map(|r| r.0)
        .filter(|&r| !matches!(r, "redirect_too_long" | "skipped_file" | "outside_root"))
        .collect();
    rules.sort();
    assert_eq!(codes, rules);
    assert_eq!((lint.errors, lint.warnings), (4, 6));
}

#[test]
fn memory_leak_neighbors_carry_typed_evidence_from_raw_chunks() {
    let (index, _) = example();
    let g = index
        .neighbors(
            &["incident_2024_03_memory_leak"],
            &wikidex::TraverseOptions {
                depth: 1,
                ..Default::default()
            },
        )
        .unwrap();
    let edge = g
        .edges
        .iter()
        .find(|e| e.kind == "causes" && e.to == "nightly_pipeline")
        .unwrap();
    assert_eq!(edge.chunk.as_deref(), Some("raw/slack_2024_03_12::chunk_0"));
    assert!((edge.confidence - 0.95).abs() < 1e-6);
    assert!(
        g.chain
            .iter()
            .any(|l| l.contains("--[causes]--> Nightly pipeline")),
        "{:?}",
        g.chain
    );
}

#[test]
fn outage_paging_question_finds_the_oncall_runbook() {
    assert_eq!(first_hit("who to page for an outage"), "runbook_oncall");
}

#[test]
fn backfill_question_finds_the_backfill_runbook() {
    assert_eq!(
        first_hit("how do I backfill a day of orders"),
        "runbook_backfill"
    );
}

#[test]
fn dbt_adoption_question_finds_the_decision_record() {
    assert_eq!(first_hit("why did we adopt dbt"), "decision_adopt_dbt");
}

#[test]
fn tag_filter_returns_only_pages_with_that_tag() {
    let (index, _) = example();
    let opts = SearchOptions {
        tags: vec!["PII".into()],
        limit: Some(100),
        ..Default::default()
    };
    let results = index.search("export customer data", &opts).unwrap();
    assert!(!results.hits.is_empty());
    for h in &results.hits {
        assert!(
            h.tags.iter().any(|t| t.eq_ignore_ascii_case("pii")),
            "{} {:?}",
            h.key,
            h.tags
        );
    }
}

#[test]
fn tag_filter_keeps_every_matching_page() {
    let (index, _) = example();
    let opts = SearchOptions {
        tags: vec!["pii".into()],
        limit: Some(100),
        always: AlwaysMode::Separate,
        ..Default::default()
    };
    let results = index
        .search("export customer data personal", &opts)
        .unwrap();
    let got: BTreeSet<&str> = results
        .hits
        .iter()
        .chain(&results.always)
        .map(|h| h.key.as_str())
        .collect();
    assert!(got.contains("data_exports"), "{got:?}");
    assert!(got.contains("rule_pii_handling"), "{got:?}");
}

#[test]
fn type_filter_returns_only_pages_of_that_type() {
    let (index, _) = example();
    let opts = SearchOptions {
        types: vec!["runbook".into()],
        limit: Some(100),
        ..Default::default()
    };
    let results = index
        .search("nightly failure oncall backfill", &opts)
        .unwrap();
    assert!(results.hits.len() >= 2, "{:?}", hit_ids(&results));
    for h in &results.hits {
        assert_eq!(h.kind.as_deref(), Some("runbook"), "{}", h.key);
    }
}

/// Checks that every highlight is a whole word of the snippet that matches a query word: the
/// same stem, or the query word as a prefix (as the token lane matches).
fn assert_highlights_are_query_words(query: &str, results: &SearchResults) {
    let analyzer = Analyzer::new(Language::English);
    let qterms = analyzer.query(query);
    let mut checked = 0;
    for h in results.hits.iter().chain(&results.always) {
        let snippet = h.snippet.as_ref().expect("snippets are on by default");
        // Highlights are byte offsets in Rust: slice the snippet with them.
        let text = snippet.text.as_str();
        for hl in &snippet.highlights {
            let (s, e) = (hl.start as usize, hl.end as usize);
            let word = text
                .get(s..e)
                .filter(|w| !w.is_empty())
                .unwrap_or_else(|| panic!("{}: highlight {hl:?} outside {text:?}", h.key));
            let word = word.to_string();
            let before = text[..s].chars().next_back();
            let after = text[e..].chars().next();
            assert!(
                word.chars().all(char::is_alphanumeric),
                "{}: {word:?} in {:?}",
                h.key,
                snippet.text
            );
            assert!(
                !before.is_some_and(char::is_alphanumeric),
                "{}: {word:?} starts mid-word",
                h.key
            );
            assert!(
                !after.is_some_and(char::is_alphanumeric),
                "{}: {word:?} ends mid-word",
                h.key
            );
            let norm = analyzer.normalize(&word);
            let stem = analyzer.term(&word);
            let matches = qterms.iter().any(|q| {
                stem.as_deref() == Some(q.term.as_ref())
                    || (q.word.chars().count() >= 2 && norm.starts_with(q.word.as_ref()))
            });
            assert!(
                matches,
                "{}: highlighted {word:?} matches no word of {query:?}",
                h.key
            );
            checked += 1;
        }
    }
    assert!(checked > 0, "no highlights for {query:?}");
}

#[test]
fn snippet_highlights_are_query_words_at_their_offsets() {
    let (index, _) = example();
    for query in [
        "why did the nightly job crash",
        "who to page for an outage",
        "how do I backfill a day of orders",
        "Tomás signs off revenue changes",
        "Helena Sørensen approval for exports",
        "churn rate definition",
    ] {
        let results = index.search(query, &SearchOptions::default()).unwrap();
        assert_highlights_are_query_words(query, &results);
    }
}

#[test]
fn snippet_highlights_index_the_snippet_in_every_offset_unit() {
    let query = "Tomás Ibarra finance signs off";
    let index = Session::new(build_dir(&example_dir()).0);
    for unit in [OffsetUnit::Byte, OffsetUnit::Char, OffsetUnit::Utf16] {
        index.set_offset_unit(unit);
        let results = index.search(query, &SearchOptions::default()).unwrap();
        let revenue = results
            .hits
            .iter()
            .find(|h| h.key == "revenue")
            .expect("revenue is a hit");
        let snippet = revenue.snippet.as_ref().unwrap();
        // Slice as the surface of each unit would: bytes (Rust), code points (Python),
        // UTF-16 units (JavaScript).
        let slice = |s: u32, e: u32| -> String {
            let (s, e) = (s as usize, e as usize);
            match unit {
                OffsetUnit::Byte => snippet.text[s..e].to_string(),
                OffsetUnit::Char => snippet.text.chars().skip(s).take(e - s).collect(),
                _ => {
                    let units: Vec<u16> = snippet.text.encode_utf16().collect();
                    String::from_utf16(&units[s..e]).unwrap()
                }
            }
        };
        let words: Vec<String> = snippet
            .highlights
            .iter()
            .map(|h| slice(h.start, h.end))
            .collect();
        assert!(
            words.iter().any(|w| w == "Tomás") && words.iter().any(|w| w == "Ibarra"),
            "{unit:?}: {words:?} in {:?}",
            snippet.text
        );
        // The snippet's offset points into the page body in the same unit.
        let body = index.page_record("revenue", None).unwrap().body;
        let at = match unit {
            OffsetUnit::Byte => body[snippet.offset as usize..].to_string(),
            OffsetUnit::Char => body.chars().skip(snippet.offset as usize).collect(),
            _ => {
                let units: Vec<u16> = body.encode_utf16().collect();
                String::from_utf16(&units[snippet.offset as usize..]).unwrap()
            }
        };
        let first_word = snippet.text.split(' ').next().unwrap();
        assert!(at.starts_with(first_word), "{unit:?}: {at:?}");
    }
}

/// The highlighted words of `key`'s snippet for `query` (chunk hits, so `chunk` is the one).
fn highlighted_words(index: &Index, query: &str, chunk: &str) -> (String, Vec<String>) {
    let opts = SearchOptions {
        chunks: true,
        limit: Some(100),
        always: AlwaysMode::Separate,
        ..Default::default()
    };
    let results = index.search(query, &opts).unwrap();
    let hit = results
        .hits
        .iter()
        .chain(&results.always)
        .find(|h| h.chunk == chunk)
        .unwrap_or_else(|| panic!("{chunk} is not a hit for {query:?}"));
    let snippet = hit.snippet.as_ref().unwrap();
    let words = snippet
        .highlights
        .iter()
        .map(|h| snippet.text[h.start as usize..h.end as usize].to_string())
        .collect();
    (snippet.text.clone(), words)
}

#[test]
fn snippet_highlights_a_longer_word_matching_a_two_letter_query_word() {
    let (index, _) = example();
    // data_exports: "Any export with names, emails, phones or IPs needs DPO approval ...".
    // "IPs" stems to "ip", the query's term, and starts with the query word "ip".
    let (text, words) = highlighted_words(index, "IP", "data_exports::chunk_1");
    assert!(text.contains("IPs"), "{text:?}");
    assert!(words.iter().any(|w| w == "IPs"), "{words:?} in {text:?}");
}

#[test]
fn snippet_highlights_a_word_whose_stem_begins_differently() {
    let mut b = IndexBuilder::new(Default::default()).unwrap();
    b.add_file("global/outage.md", b"The dying server lit up the skies.")
        .unwrap();
    let (index, _) = b.build().unwrap();
    for (query, word) in [("die", "dying"), ("sky", "skies")] {
        let (text, words) = highlighted_words(&index, query, "outage::chunk_0");
        assert!(
            words.iter().any(|w| w == word),
            "{query:?}: {words:?} in {text:?}"
        );
    }
}

#[test]
fn snippet_highlights_every_word_that_shares_the_query_term() {
    // The working half of the two tests above: words whose first three letters match the
    // query word's are all marked.
    let (index, _) = example();
    let (text, words) = highlighted_words(index, "exports", "data_exports::chunk_1");
    let expected = Analyzer::new(Language::English);
    let want: Vec<&str> = wikidex::analyze::words(&text)
        .map(|(_, w)| w)
        .filter(|w| expected.term(w).as_deref() == Some("export"))
        .collect();
    assert!(!want.is_empty(), "{text:?}");
    assert_eq!(words, want, "{text:?}");
}

#[test]
fn chunk_hits_can_return_several_chunks_of_one_page() {
    let (index, _) = example();
    let opts = SearchOptions {
        chunks: true,
        limit: Some(50),
        ..Default::default()
    };
    let results = index
        .search("memory leak worker airflow nightly", &opts)
        .unwrap();
    let of_page: Vec<&str> = results
        .hits
        .iter()
        .filter(|h| h.page_id == "incident_2024_03_memory_leak")
        .map(|h| h.chunk.as_str())
        .collect();
    assert!(of_page.len() >= 2, "{of_page:?}");
    let distinct: BTreeSet<&str> = of_page.iter().copied().collect();
    assert_eq!(distinct.len(), of_page.len());
}

#[test]
fn page_hits_return_each_page_once() {
    let (index, _) = example();
    let opts = SearchOptions {
        limit: Some(100),
        ..Default::default()
    };
    let results = index
        .search("memory leak worker airflow nightly", &opts)
        .unwrap();
    let ids = hit_ids(&results);
    let distinct: BTreeSet<&str> = ids.iter().copied().collect();
    assert_eq!(distinct.len(), ids.len(), "{ids:?}");
}

#[test]
fn page_hits_fill_the_limit_when_enough_pages_match() {
    let (index, _) = example();
    let query = "data warehouse pipeline revenue accounts";
    let all = index
        .search(
            query,
            &SearchOptions {
                limit: Some(100),
                always: AlwaysMode::Separate,
                ..Default::default()
            },
        )
        .unwrap()
        .hits
        .len();
    assert!(all >= 15, "{all} pages match");
    for limit in 1..=15 {
        let opts = SearchOptions {
            limit: Some(limit),
            always: AlwaysMode::Separate,
            ..Default::default()
        };
        assert_eq!(
            index.search(query, &opts).unwrap().hits.len(),
            limit,
            "limit {limit}"
        );
    }
}

#[test]
fn empty_lane_list_is_an_invalid_argument() {
    let (index, _) = example();
    let opts = SearchOptions {
        lanes: Some(Vec::new()),
        ..Default::default()
    };
    assert_eq!(
        index.search("revenue", &opts).unwrap_err().code(),
        "invalid_argument"
    );
}

/// For every hit the lexical lane scored: the explanation (per-term BM25 in the hit's chunk)
/// adds up to the lexical lane's score, i.e. both describe the same chunk.
fn assert_explanations_add_up(index: &Index, queries: &[&str]) {
    for query in queries {
        let mut checked = 0;
        for chunks in [false, true] {
            let opts = SearchOptions {
                explain: true,
                chunks,
                limit: Some(50),
                ..Default::default()
            };
            for h in index.search(query, &opts).unwrap().hits {
                let Some(lexical) = h
                    .lanes
                    .iter()
                    .find(|l| l.lane == Lane::Lexical)
                    .and_then(|l| l.score)
                else {
                    continue;
                };
                let explained: f32 = h
                    .explain
                    .as_ref()
                    .unwrap()
                    .lexical
                    .iter()
                    .map(|t| t.score)
                    .sum();
                assert!(
                    (explained - lexical).abs() <= 1e-4 * lexical,
                    "{query:?} (chunks: {chunks}): hit {} has lexical score {lexical}, its explanation sums to {explained}",
                    h.chunk
                );
                checked += 1;
            }
        }
        assert!(checked > 0, "{query:?}: no hit the lexical lane scored");
    }
}

const EXPLAINED_QUERIES: &[&str] = &[
    "why did the nightly job crash",
    "who to page for an outage",
    "memory leak",
    "revenue recognition",
    "dbt",
];

#[test]
fn explanation_adds_up_to_the_lexical_lane_score_of_every_hit() {
    let (index, _) = example();
    assert_explanations_add_up(index, EXPLAINED_QUERIES);
}

#[test]
fn explanation_adds_up_to_the_lexical_lane_score_when_the_token_lane_outweighs_lexical() {
    let mut config = wikidex::Config::default();
    config.fusion.lexical = 0.5;
    config.fusion.token = 3.0;
    let mut b = IndexBuilder::new(config).unwrap();
    b.add_dir(&example_dir()).unwrap();
    let (index, _) = b.build().unwrap();
    assert_explanations_add_up(&index, EXPLAINED_QUERIES);
}

#[test]
fn stopword_only_query_returns_no_hits_without_error() {
    let (index, _) = example();
    let results = index.search("the of and", &lexical_and_token()).unwrap();
    assert!(results.terms.is_empty(), "{:?}", results.terms);
    assert!(results.hits.is_empty(), "{:?}", hit_ids(&results));
}

#[test]
fn stopword_only_query_returns_only_always_pages_with_always_mode_first() {
    let (index, _) = example();
    let first = SearchOptions {
        always: AlwaysMode::First,
        ..Default::default()
    };
    let results = index.search("the of and", &first).unwrap();
    // No term ranks anything; the one `always` page is still given, first.
    assert_eq!(hit_ids(&results), ["rule_pii_handling"]);
    assert!(results.hits[0].always);
}

#[test]
fn long_query_is_cut_to_the_configured_length() {
    let (index, _) = example();
    let query = "revenue é ".repeat(500);
    assert_eq!(query.chars().count(), 5000);
    let results = index.search(&query, &SearchOptions::default()).unwrap();
    assert!(results.truncated);
    assert_eq!(
        results.query.chars().count(),
        index.config().max_query_chars as usize
    );
    assert!(query.starts_with(&results.query));
}

#[test]
fn short_query_is_not_cut() {
    let (index, _) = example();
    let results = index.search("revenue", &SearchOptions::default()).unwrap();
    assert!(!results.truncated);
    assert_eq!(results.query, "revenue");
}

#[test]
fn every_hit_chunk_hydrates_to_text_with_the_hit_hash() {
    let (index, _) = example();
    for query in [
        "why did the nightly job crash",
        "revenue recognition",
        "dbt naming conventions",
    ] {
        for chunks in [false, true] {
            let opts = SearchOptions {
                chunks,
                limit: Some(100),
                ..Default::default()
            };
            let hits = index.search(query, &opts).unwrap().hits;
            assert!(!hits.is_empty(), "{query:?}");
            for h in hits {
                let c = index.chunk(&h.chunk).unwrap();
                assert_eq!(c.id, h.chunk);
                assert_eq!(c.hash, h.chunk_hash, "{}", h.chunk);
                assert_eq!(
                    wikidex::chunk::content_hash(&c.text),
                    h.chunk_hash,
                    "{}",
                    h.chunk
                );
            }
        }
    }
}

#[test]
fn unknown_page_key_is_reported_as_unknown_page() {
    let (index, _) = example();
    for key in ["no_such_page", "", "revenue::chunk_0", "user/alice"] {
        assert_eq!(
            index.page(key, None).unwrap_err().code(),
            "unknown_page",
            "{key:?}"
        );
    }
}

#[test]
fn unknown_chunk_ids_are_reported_as_unknown_chunk() {
    let (index, _) = example();
    let n = index
        .chunks_of("revenue", Some(&Scope::Global))
        .unwrap()
        .len();
    let past_end = format!("revenue::chunk_{n}");
    for id in [
        "no_such_page::chunk_0",
        past_end.as_str(),
        "revenue::chunk_4294967296",
        "revenue",
        "revenue::chunk_",
        "revenue::chunk_01",
        "revenue::chunk_-1",
        "revenue::chunk_0 ",
        "::chunk_0",
        "",
        "user/zed/revenue::chunk_0",
        "user/alice/no_such_page::chunk_0",
    ] {
        assert_eq!(
            index.chunk(id).unwrap_err().code(),
            "unknown_chunk",
            "{id:?}"
        );
    }
}

#[test]
fn user_page_chunks_are_addressed_by_their_scoped_id() {
    let (index, _) = example();
    let c = index.chunk("user/alice/revenue::chunk_0").unwrap();
    assert_eq!(c.scope, Scope::User("alice".into()));
    assert_eq!(c.path, "user/alice/revenue.md");
}

const NEW_PAGE_PATH: &str = "global/zz_quokka_census.md";
const NEW_PAGE: &str = "---\ntitle: Quokka census\ntags: [wildlife]\n---\n# Quokka census\n\nThe quokka census counts marsupials on Rottnest every spring. See [[revenue]].\n";

/// A session over a fresh build of the example wiki, for tests that write to it.
fn example_session() -> Session {
    Session::from_build(build_dir(&example_dir()))
}

#[test]
fn upserted_page_is_found_by_search() {
    let index = example_session();
    let report = index
        .upsert_page(NEW_PAGE_PATH, NEW_PAGE, &WriteOptions::default())
        .unwrap();
    assert!(!report.replaced);
    assert_eq!(report.page_id, "zz_quokka_census");
    let results = index
        .search("quokka census marsupials", &lexical_and_token())
        .unwrap();
    assert_eq!(results.hits[0].key, "zz_quokka_census");
}

#[test]
fn upsert_gives_the_bytes_of_a_fresh_build_with_the_new_file() {
    let (index, _) = build_dir(&example_dir());
    let (index, _) = index
        .upsert_page(NEW_PAGE_PATH, NEW_PAGE, &WriteOptions::default(), None)
        .unwrap();
    let mut b = IndexBuilder::new(Default::default()).unwrap();
    b.add_dir(&example_dir()).unwrap();
    b.add_file(NEW_PAGE_PATH, NEW_PAGE.as_bytes()).unwrap();
    let (fresh, _) = b.build().unwrap();
    assert!(
        index.to_bytes().unwrap() == fresh.to_bytes().unwrap(),
        "upsert differs from a fresh build"
    );
}

#[test]
fn deleted_page_is_no_longer_found_by_search() {
    let index = example_session();
    index
        .upsert_page(NEW_PAGE_PATH, NEW_PAGE, &WriteOptions::default())
        .unwrap();
    let before = index
        .search("quokka census marsupials", &lexical_and_token())
        .unwrap();
    assert_eq!(hit_ids(&before)[..1], ["zz_quokka_census"]);
    let removed = index.delete_page("zz_quokka_census", None).unwrap();
    assert_eq!(removed.page.path, NEW_PAGE_PATH);
    let results = index
        .search("quokka census marsupials", &lexical_and_token())
        .unwrap();
    assert!(
        results.hits.iter().all(|h| h.key != "zz_quokka_census"),
        "{:?}",
        hit_ids(&results)
    );
    assert_eq!(
        index
            .index()
            .page("zz_quokka_census", None)
            .unwrap_err()
            .code(),
        "unknown_page"
    );
}

#[test]
fn upsert_then_delete_gives_back_the_original_bytes() {
    let (index, _) = build_dir(&example_dir());
    let before = index.to_bytes().unwrap();
    let (index, _) = index
        .upsert_page(NEW_PAGE_PATH, NEW_PAGE, &WriteOptions::default(), None)
        .unwrap();
    let (index, _) = index.delete_page("zz_quokka_census", None, None).unwrap();
    assert!(
        index.to_bytes().unwrap() == before,
        "upsert + delete changed the blob"
    );
}

#[test]
fn upserting_an_existing_page_replaces_it() {
    let index = example_session();
    let report = index
        .upsert_page(
            "global/runbook_backfill.md",
            "# Backfill\n\nNow about quokkas only.\n",
            &WriteOptions::default(),
        )
        .unwrap();
    assert!(report.replaced);
    assert_eq!(index.index().pages().len(), 42);
    let results = index.search("quokkas", &lexical_and_token()).unwrap();
    assert_eq!(results.hits[0].key, "runbook_backfill");
}

#[test]
fn page_record_follows_an_old_key_and_an_alias_and_names_the_key_asked() {
    let (index, _) = example();
    let own = index.page_record("revenue", None).unwrap();
    assert_eq!(own.resolved_from, None);
    // metrics_dictionary → kpi_glossary (a redirect page) → glossary, as `neighbors` follows.
    let old = index.page_record("metrics_dictionary", None).unwrap();
    assert_eq!(old.key, "glossary");
    assert_eq!(old.resolved_from.as_deref(), Some("metrics_dictionary"));
    let alias = index.page_record("net revenue", None).unwrap();
    assert!(
        alias
            .aliases
            .iter()
            .any(|a| a.eq_ignore_ascii_case("net revenue")),
        "{alias:?}"
    );
    assert_eq!(alias.resolved_from.as_deref(), Some("net revenue"));
    assert_eq!(
        index.page_record("no_such_page", None).unwrap_err().code(),
        "unknown_page"
    );
}

#[test]
fn every_chunk_names_the_file_lines_that_hold_it_and_its_headings() {
    let (index, _) = example();
    let root = example_dir();
    let mut with_headings = 0;
    for p in index.pages() {
        let file = std::fs::read_to_string(root.join(&p.path)).unwrap();
        let lines: Vec<&str> = file.split('\n').collect();
        for c in index.chunks_of(&p.key, Some(&p.scope)).unwrap() {
            let (first, last) = (c.line_start as usize, c.line_end as usize);
            assert!(
                1 <= first && first <= last && last <= lines.len(),
                "{}",
                c.id
            );
            let text = c.text.trim();
            if text.is_empty() {
                continue;
            }
            let held = lines[first - 1..last].join("\n");
            let (head, tail) = (text.lines().next().unwrap(), text.lines().last().unwrap());
            assert!(
                held.contains(head) && held.contains(tail),
                "{}: lines {first}-{last}",
                c.id
            );
            // Every heading named is a heading line of the file above the chunk.
            for h in &c.headings {
                assert!(
                    lines[..first]
                        .iter()
                        .any(|l| l.starts_with('#') && l.contains(h.as_str())),
                    "{}: heading {h:?} not above line {first}",
                    c.id
                );
            }
            with_headings += usize::from(!c.headings.is_empty());
        }
    }
    assert!(with_headings > 20, "the example wiki's pages have headings");
    // A hit carries its best chunk's place.
    let r = index
        .search("who do I page for an outage", &SearchOptions::default())
        .unwrap();
    let h = &r.hits[0];
    let c = index.chunk(&h.chunk).unwrap();
    assert_eq!(
        (h.line_start, h.line_end, &h.headings),
        (c.line_start, c.line_end, &c.headings)
    );
}

/// A docs folder (`Config::keys` = `path`): `index.md` in two folders are two pages, `raw/` and
/// `user/` are folders like any other, and an upsert or a rename keys a page by its path as the
/// build did, giving the bytes of a fresh build.
#[test]
fn a_docs_index_keys_pages_by_path_in_builds_and_writes() {
    let config = wikidex::site::docs_config(wikidex::Config::default());
    let files = [
        ("index.md", "# Home\n\nWelcome."),
        ("guide/index.md", "# Guide\n\nThe guide."),
        ("raw/notes.md", "# Raw notes\n\nNot a raw document here."),
        ("user/alice/tips.md", "# Tips\n\nA page, not a scope."),
    ];
    let mut b = IndexBuilder::new(config.clone()).unwrap();
    for (p, t) in files {
        b.add_file(p, t.as_bytes()).unwrap();
    }
    let (index, report) = b.build().unwrap();
    assert_eq!((report.pages, report.raw_documents), (4, 0), "{report:?}");
    let keys: BTreeSet<&str> = index.pages().iter().map(|p| p.key.as_str()).collect();
    assert_eq!(
        keys,
        BTreeSet::from(["index", "guide.index", "raw.notes", "user.alice.tips"])
    );
    assert!(index
        .pages()
        .iter()
        .all(|p| p.scope == wikidex::Scope::Global));
    let loaded = Index::from_bytes(&index.to_bytes().unwrap()).unwrap();
    assert_eq!(loaded.config().keys, wikidex::page::Keys::Path);
    let (upserted, r) = loaded
        .upsert_page(
            "guide/setup.md",
            "# Setup\n\nInstall it.",
            &WriteOptions::default(),
            None,
        )
        .unwrap();
    assert_eq!(r.page_id, "guide.setup");
    let mut fresh = IndexBuilder::new(config).unwrap();
    for (p, t) in files
        .into_iter()
        .chain([("guide/setup.md", "# Setup\n\nInstall it.")])
    {
        fresh.add_file(p, t.as_bytes()).unwrap();
    }
    assert!(upserted.to_bytes().unwrap() == fresh.build().unwrap().0.to_bytes().unwrap());
    let (renamed, rr) = upserted
        .rename_page("guide.setup", None, "guide.install", None)
        .unwrap();
    assert_eq!(
        (rr.to.as_str(), rr.path.as_str()),
        ("guide.install", "guide/install.md")
    );
    assert_eq!(
        renamed.page("guide.install", None).unwrap().path,
        "guide/install.md"
    );
}

#[test]
fn a_found_search_makes_each_hit_as_the_whole_results_do_and_keeps_its_index() {
    let session = Session::new(build_dir(&ktx_dir()).0);
    let queries = [
        "churn rate",
        "pii handling customer data",
        "\"churn rate\" dashboard",
    ];
    for query in queries {
        for always in [AlwaysMode::Separate, AlwaysMode::First] {
            for (explain, chunks) in [(false, false), (true, false), (false, true)] {
                let opts = SearchOptions {
                    always,
                    explain,
                    chunks,
                    facets: true,
                    limit: Some(5),
                    ..Default::default()
                };
                let whole = session.search(query, &opts).unwrap();
                let found = session.find(query, &opts).unwrap();
                assert_eq!(found.results(), whole, "{query} {always:?}");
                assert_eq!(found.hits_len(), whole.hits.len());
                assert_eq!(found.always_len(), whole.always.len());
                // Each hit alone, last first: a hit does not depend on those made before it.
                for i in (0..whole.hits.len()).rev() {
                    assert_eq!(
                        found.hit(i).as_ref(),
                        Some(&whole.hits[i]),
                        "{query} hit {i}"
                    );
                }
                for i in (0..whole.always.len()).rev() {
                    assert_eq!(found.always_hit(i).as_ref(), Some(&whole.always[i]));
                }
                assert_eq!(found.hit(whole.hits.len()), None);
                assert_eq!(found.always_hit(whole.always.len()), None);
                let head = found.head();
                assert!(head.hits.is_empty() && head.always.is_empty());
                assert_eq!(
                    SearchResults {
                        hits: whole.hits.clone(),
                        always: whole.always.clone(),
                        ..head
                    },
                    whole
                );
            }
        }
    }
    // A write after the search leaves its hits as they were.
    let opts = SearchOptions::default();
    let found = session.find("churn rate", &opts).unwrap();
    let before = found.results();
    let key = &before.hits[0].key;
    let page = found
        .index()
        .page(key, Some(&before.hits[0].scope))
        .unwrap();
    let path = page.path.clone();
    session
        .upsert_page(
            &path,
            "# Gone\n\nNothing here now.\n",
            &WriteOptions::default(),
        )
        .unwrap();
    assert_ne!(
        session.search("churn rate", &opts).unwrap().hits,
        before.hits
    );
    assert_eq!(found.results(), before);
    assert_eq!(found.hit(0).as_ref(), Some(&before.hits[0]));
}
