//! Wiki lint: the problems an agent (or CI) should fix in a wiki.
//!
//! | code | severity | finding |
//! |---|---|---|
//! | `dangling_link` | error | a ref, inline link or relation target resolves to no page visible in the page's scope |
//! | `unknown_source` | error | a `sources` entry or a relation's `chunk` names no chunk |
//! | `redirect_cycle` | error | `redirect_from` claims that loop (reported once, on the cycle's first page id) |
//! | `redirect_too_long` | error | an old key that goes through more than 16 redirects (`graph::MAX_HOPS`) to its end (reported on each page whose claimed key is that far from the end) |
//! | `skipped_file` | error | a file of the wiki the build could not use (from a build report: a page that does not parse, is too large or cannot be read); the target is the error's code (`invalid_page`, `too_large`, `io`, ...) |
//! | `duplicate_key` | error | two files with the same key in one scope (from a build report), or an old key claimed by two pages' `redirect_from`, or an alias claimed by two pages or equal to another page's key |
//! | `links_archived` | warning | a page that is not archived links to an archived page |
//! | `links_stale` | warning | a page that is not archived links to a page marked `stale_since` |
//! | `orphan` | warning | a global page (not archived, not `never`, not a redirect stub) that no other page links to |
//! | `redirect_chain` | warning | an old key that reaches its page through more than one redirect |
//! | `no_summary` | warning | a page (not archived) without a `summary` |
//! | `drifted_source` | warning | a `sources` entry whose recorded `hash` differs from the chunk's current hash |
//! | `outside_root` | warning | a symbolic link that leads out of the wiki folder, not read (from a build report) |
//!
//! One finding per (code, page, target). Findings are values: a lint run that finds problems
//! still succeeds; [`LintReport::errors`] tells a CI gate whether to fail.

use std::collections::{BTreeSet, HashMap};

use serde::{Deserialize, Serialize};

use crate::data::record::{BuildReport, SKIPPED_OUTSIDE_ROOT};
use crate::graph::{Names, Target, KIND_REDIRECT};
use crate::index::Index;
use crate::text::page::{self, Scope, UsageMode};

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Broken: a CI gate fails.
    Error,
    /// Worth fixing, not broken.
    Warning,
}

/// Every lint rule's code and severity, in the order of the table above.
pub const RULES: &[(&str, Severity)] = &[
    ("dangling_link", Severity::Error),
    ("unknown_source", Severity::Error),
    ("redirect_cycle", Severity::Error),
    ("redirect_too_long", Severity::Error),
    ("skipped_file", Severity::Error),
    ("duplicate_key", Severity::Error),
    ("links_archived", Severity::Warning),
    ("links_stale", Severity::Warning),
    ("orphan", Severity::Warning),
    ("redirect_chain", Severity::Warning),
    ("no_summary", Severity::Warning),
    ("drifted_source", Severity::Warning),
    ("outside_root", Severity::Warning),
];

/// The severity of a rule code (`Warning` for a code not in [`RULES`]).
pub fn severity(code: &str) -> Severity {
    RULES
        .iter()
        .find(|(c, _)| *c == code)
        .map_or(Severity::Warning, |(_, s)| *s)
}

/// One lint finding.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct LintIssue {
    /// The page's id (or, for a file that was not indexed, its path).
    pub page_id: String,
    /// The rule's stable code (see the module docs).
    pub code: String,
    /// What the finding is about: the missing key, the linked page, the chunk id, ...
    pub target: Option<String>,
    /// `error` or `warning`.
    pub severity: Severity,
    /// A sentence for people.
    pub message: String,
}

/// What a lint run found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LintReport {
    /// Findings, sorted by page, code, target.
    pub issues: Vec<LintIssue>,
    /// Number of error findings.
    pub errors: usize,
    /// Number of warning findings.
    pub warnings: usize,
}

impl LintReport {
    fn from_issues(mut issues: Vec<LintIssue>) -> LintReport {
        crate::data::sort::sort(&mut issues);
        issues.dedup_by(|a, b| a.page_id == b.page_id && a.code == b.code && a.target == b.target);
        let errors = issues
            .iter()
            .filter(|i| i.severity == Severity::Error)
            .count();
        LintReport {
            warnings: issues.len() - errors,
            errors,
            issues,
        }
    }
}

fn issue(page: String, code: &str, target: Option<String>, message: String) -> LintIssue {
    LintIssue {
        page_id: page,
        code: code.to_string(),
        target,
        severity: severity(code),
        message,
    }
}

impl Index {
    /// Lints the index's pages (see the [module docs](crate::lint) for the rules).
    ///
    /// # Example
    /// ```
    /// # use wikidex::IndexBuilder;
    /// let mut b = IndexBuilder::new(Default::default())?;
    /// b.add_file("a.md", b"---\nsummary: A.\n---\nSee [[b]].")?;
    /// let (index, _) = b.build()?;
    /// let report = index.lint();
    /// assert_eq!(report.errors, 1);
    /// assert_eq!(report.issues[0].code, "dangling_link");
    /// # Ok::<(), wikidex::Error>(())
    /// ```
    pub fn lint(&self) -> LintReport {
        LintReport::from_issues(self.lint_issues())
    }

    /// [`Index::lint`] plus what only the build report knows: duplicate keys (two files with
    /// one key in one scope, which a built index no longer holds), files the build skipped as
    /// unusable (`skipped_file`) and links out of the wiki folder it did not follow
    /// (`outside_root`).
    pub fn lint_with_build(&self, report: &BuildReport) -> LintReport {
        let mut issues = self.lint_issues();
        for s in &report.skipped {
            let reason = match s.line {
                Some(line) => format!("line {line}: {}", s.reason),
                None => s.reason.clone(),
            };
            issues.push(match s.code.as_str() {
                "duplicate_key" => issue(
                    s.path.clone(),
                    "duplicate_key",
                    Some(page::key_from_path(&s.path)),
                    s.reason.clone(),
                ),
                SKIPPED_OUTSIDE_ROOT => issue(s.path.clone(), SKIPPED_OUTSIDE_ROOT, None, reason),
                code => issue(
                    s.path.clone(),
                    "skipped_file",
                    Some(code.to_string()),
                    reason,
                ),
            });
        }
        LintReport::from_issues(issues)
    }

    fn lint_issues(&self) -> Vec<LintIssue> {
        let pages = self.pages();
        let mut out = Vec::new();
        for (i, p) in pages.iter().enumerate() {
            let id = p.id();
            let i = i as u32;
            let graph = &self.data.graph;
            for e in self.out_edges(i) {
                match &e.to {
                    Target::Missing(k) => out.push(issue(
                        id.clone(),
                        "dangling_link",
                        Some(graph.text(*k).to_string()),
                        format!(
                            "`{}` ({}) resolves to no page",
                            graph.text(*k),
                            graph.text(e.kind)
                        ),
                    )),
                    Target::Page(t) if graph.text(e.kind) != KIND_REDIRECT && !p.is_archived() => {
                        let q = &pages[*t as usize];
                        if q.is_archived() {
                            out.push(issue(
                                id.clone(),
                                "links_archived",
                                Some(q.id()),
                                format!(
                                    "links to `{}`, archived since {}",
                                    q.id(),
                                    q.archived_since.as_deref().unwrap_or("?")
                                ),
                            ));
                        } else if let Some(since) = &q.stale_since {
                            out.push(issue(
                                id.clone(),
                                "links_stale",
                                Some(q.id()),
                                format!("links to `{}`, stale since {since}", q.id()),
                            ));
                        }
                    }
                    _ => {}
                }
            }
            if !p.is_archived() && p.summary.as_deref().is_none_or(|s| s.trim().is_empty()) {
                out.push(issue(
                    id.clone(),
                    "no_summary",
                    None,
                    "the page has no summary".into(),
                ));
            }
            let stub = self
                .names()
                .redirect(&p.scope, &p.key)
                .is_some_and(|q| q != i);
            let linked = self.in_edges(i).any(|e| e.from != i);
            if p.scope == Scope::Global
                && !p.is_archived()
                && p.usage_mode != UsageMode::Never
                && !stub
                && !linked
            {
                out.push(issue(
                    id.clone(),
                    "orphan",
                    None,
                    "no other page links here".into(),
                ));
            }
            for s in &p.sources {
                match self.chunk(&s.chunk) {
                    Err(_) => out.push(issue(
                        id.clone(),
                        "unknown_source",
                        Some(s.chunk.clone()),
                        format!("source `{}` names no chunk", s.chunk),
                    )),
                    Ok(c) => {
                        if let Some(h) = s.hash.as_deref().filter(|h| *h != c.hash) {
                            out.push(issue(
                                id.clone(),
                                "drifted_source",
                                Some(s.chunk.clone()),
                                format!("source `{}` changed since the page was compiled (hash {h}, now {})", s.chunk, c.hash),
                            ));
                        }
                    }
                }
            }
            for r in p.relations.iter().filter_map(|r| r.chunk.as_ref()) {
                if self.chunk(r).is_err() {
                    out.push(issue(
                        id.clone(),
                        "unknown_source",
                        Some(r.clone()),
                        format!("relation evidence chunk `{r}` names no chunk"),
                    ));
                }
            }
            self.lint_names(i, &mut out);
        }
        out
    }

    /// Redirect chains and cycles, and key conflicts, of the names page `i` claims.
    fn lint_names(&self, i: u32, out: &mut Vec<LintIssue>) {
        let pages = self.pages();
        let p = &pages[i as usize];
        let id = p.id();
        for r in &p.redirect_from {
            if self.names().redirect(&p.scope, r) != Some(i) {
                let first = self
                    .names()
                    .redirect(&p.scope, r)
                    .map(|q| pages[q as usize].id());
                out.push(issue(
                    id.clone(),
                    "duplicate_key",
                    Some(r.clone()),
                    format!(
                        "old key `{r}` is also claimed by `{}`",
                        first.unwrap_or_default()
                    ),
                ));
                continue;
            }
            let res = self.names().resolve(pages, &p.scope, r);
            if res.too_long {
                out.push(issue(
                    id.clone(),
                    "redirect_too_long",
                    Some(r.clone()),
                    format!(
                        "`{r}` goes through more than {} redirects without reaching a page; \
                         links to it are not followed to the end",
                        crate::graph::MAX_HOPS
                    ),
                ));
            } else if res.cycle {
                let mut members = BTreeSet::new();
                let mut key = r.clone();
                while let Some(q) = self.names().redirect(&p.scope, &key) {
                    if !members.insert(pages[q as usize].id()) {
                        break;
                    }
                    key = pages[q as usize].key.clone();
                }
                if members.first() == Some(&id) {
                    let cycle: Vec<String> = members.iter().cloned().collect();
                    out.push(issue(
                        id.clone(),
                        "redirect_cycle",
                        Some(cycle.join(" -> ")),
                        format!("redirects loop through {}", cycle.join(", ")),
                    ));
                }
            } else if res.hops.len() > 1 {
                let to = res.page.map(|t| pages[t as usize].id()).unwrap_or_default();
                out.push(issue(
                    id.clone(),
                    "redirect_chain",
                    Some(r.clone()),
                    format!(
                        "`{}` reaches `{to}` through {} redirects; claim it on `{to}` directly",
                        r,
                        res.hops.len()
                    ),
                ));
            }
        }
        let mut seen: HashMap<String, ()> = HashMap::new();
        for a in &p.aliases {
            let key = page::normalize_key(a);
            if key.is_empty() || key == p.key || seen.insert(key.clone(), ()).is_some() {
                continue;
            }
            let holder = Names::exact(self.pages(), &p.scope, &key).or_else(|| {
                self.resolve(&key, Some(&p.scope))
                    .ok()
                    .flatten()
                    .and_then(|q| self.page_of_id(&q.id()))
            });
            if let Some(q) = holder.filter(|q| *q != i) {
                out.push(issue(
                    id.clone(),
                    "duplicate_key",
                    Some(key.clone()),
                    format!(
                        "alias `{a}` is already the key or alias of `{}`",
                        pages[q as usize].id()
                    ),
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::IndexBuilder;

    fn lint(files: &[(&str, &str)]) -> Vec<(String, String, Option<String>)> {
        let mut b = IndexBuilder::new(Default::default()).unwrap();
        for (p, t) in files {
            b.add_file(p, t.as_bytes()).unwrap();
        }
        let (index, report) = b.build().unwrap();
        index
            .lint_with_build(&report)
            .issues
            .into_iter()
            .map(|i| (i.page_id, i.code, i.target))
            .collect()
    }

    fn s(page: &str, code: &str, target: Option<&str>) -> (String, String, Option<String>) {
        (page.into(), code.into(), target.map(str::to_string))
    }

    const HUB: &str = "---\nsummary: Hub.\n---\n";

    #[test]
    fn a_clean_wiki_has_no_findings() {
        let r = lint(&[
            ("a.md", "---\nsummary: A.\n---\n[[b]]"),
            ("b.md", "---\nsummary: B.\n---\n[[a]]"),
        ]);
        assert!(r.is_empty(), "{r:?}");
    }

    #[test]
    fn dangling_links_are_errors() {
        let r = lint(&[("a.md", "---\nsummary: A.\nrefs: [a]\n---\n[[gone]]")]);
        assert_eq!(
            r,
            [
                s("a", "dangling_link", Some("gone")),
                s("a", "orphan", None)
            ]
        );
    }

    #[test]
    fn links_to_archived_and_stale_pages_are_reported() {
        let r = lint(&[
            ("a.md", &format!("{HUB}[[old]] [[stale]]")),
            ("old.md", "---\narchived_since: 2024-01-01\n---\n[[a]]"),
            (
                "stale.md",
                "---\nsummary: S.\nstale_since: 2024-01-01\n---\n[[a]]",
            ),
        ]);
        assert_eq!(
            r,
            [
                s("a", "links_archived", Some("old")),
                s("a", "links_stale", Some("stale"))
            ]
        );
    }

    #[test]
    fn orphans_exclude_user_never_archived_and_stub_pages() {
        let r = lint(&[
            ("a.md", HUB),
            ("t.md", "---\nsummary: T.\nusage_mode: never\n---\n"),
            ("user/bob/n.md", "---\nsummary: N.\n---\n"),
        ]);
        assert_eq!(r, [s("a", "orphan", None)]);
    }

    #[test]
    fn redirect_chains_and_cycles() {
        let r = lint(&[
            ("hub.md", &format!("{HUB}[[new]] [[p]]")),
            ("mid.md", "---\nsummary: M.\nredirect_from: [oldest]\n---\n"),
            (
                "new.md",
                "---\nsummary: N.\nredirect_from: [mid]\n---\n[[hub]]",
            ),
            ("p.md", "---\nsummary: P.\nredirect_from: [q]\n---\n"),
            ("q.md", "---\nsummary: Q.\nredirect_from: [p]\n---\n"),
        ]);
        assert_eq!(
            r,
            [
                s("mid", "redirect_chain", Some("oldest")),
                s("p", "redirect_cycle", Some("p -> q"))
            ]
        );
    }

    #[test]
    fn duplicate_keys_from_files_redirects_and_aliases() {
        let r = lint(&[
            ("a/x.md", &format!("{HUB}[[y]] [[z]]")),
            ("b/x.md", "---\nsummary: X2.\n---\n"),
            (
                "y.md",
                "---\nsummary: Y.\nredirect_from: [old]\naliases: [x]\n---\n[[x]]",
            ),
            ("z.md", "---\nsummary: Z.\nredirect_from: [old]\n---\n"),
        ]);
        assert_eq!(
            r,
            [
                s("b/x.md", "duplicate_key", Some("x")),
                s("y", "duplicate_key", Some("x")),
                s("z", "duplicate_key", Some("old")),
            ]
        );
    }

    #[test]
    fn pages_without_summary_and_sources_that_drifted_or_do_not_exist() {
        let mut b = IndexBuilder::new(Default::default()).unwrap();
        b.add_file("raw/log.md", b"The job crashed at 03:31.")
            .unwrap();
        let (i, _) = b.build().unwrap();
        let hash = i.chunk("raw/log::chunk_0").unwrap().hash;
        let page = format!("---\nsources:\n  - {{chunk: raw/log::chunk_0, hash: {hash}}}\n  - {{chunk: raw/log::chunk_0, hash: 00}}\n  - raw/nope::chunk_0\n---\n");
        let mut b = IndexBuilder::new(Default::default()).unwrap();
        b.add_file("raw/log.md", b"The job crashed at 03:31.")
            .unwrap();
        b.add_file("a.md", page.as_bytes()).unwrap();
        let (i, _) = b.build().unwrap();
        let r: Vec<_> = i
            .lint()
            .issues
            .into_iter()
            .map(|i| (i.code, i.target))
            .collect();
        assert_eq!(
            r,
            [
                (
                    "drifted_source".to_string(),
                    Some("raw/log::chunk_0".to_string())
                ),
                ("no_summary".into(), None),
                ("orphan".into(), None),
                ("unknown_source".into(), Some("raw/nope::chunk_0".into())),
            ]
        );
    }

    #[test]
    fn every_rule_has_a_severity() {
        assert_eq!(severity("dangling_link"), Severity::Error);
        assert_eq!(severity("orphan"), Severity::Warning);
        assert_eq!(RULES.len(), 13);
    }
}
