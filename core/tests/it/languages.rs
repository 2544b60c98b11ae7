//! The wiki's languages choose its defaults (issue 32): the mix a build detects, the default
//! model by it (multilingual-e5-small for a wiki largely not in English, when it is installed;
//! else MiniLM and a notice saying what to install), and the analysis language.
//!
//! The choice is checked on folders that only look like the models (`embed::choose` reads
//! names and manifests, loads nothing), then once end to end with a folder holding MiniLM's
//! files under e5's package name: the build loads what it chose, and fast.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use wikidex::embed::{choose, Manifest, ModelSource, Surface, MANIFEST_FILE, MODEL_ENV};
use wikidex::{
    BuildOptions, BuildReport, Config, Index, Language, ModelChoice, OnnxEmbedder, OnnxOptions,
    Session, Source, WriteOptions,
};

const ENGLISH: [(&str, &str); 3] = [
    (
        "global/backups.md",
        "# Backups\n\nThe database is backed up every night at two, and the backups are kept for thirty days before they are deleted. Restores are tested once a month.",
    ),
    (
        "global/oncall.md",
        "# On-call\n\nThe on-call engineer answers pages within fifteen minutes, day and night, and hands over the rotation every Monday morning.",
    ),
    (
        "global/expenses.md",
        "# Travel expenses\n\nKeep every receipt and submit your travel expenses within four weeks of the trip; the finance team pays them with the next salary.",
    ),
];

const GERMAN: [(&str, &str); 2] = [
    (
        "global/sicherung.md",
        "# Sicherung\n\nDie Datenbank wird jede Nacht um zwei Uhr gesichert, und die Sicherungen werden dreißig Tage lang aufbewahrt, bevor sie gelöscht werden.",
    ),
    (
        "global/urlaub.md",
        "# Urlaub\n\nUrlaub wird mindestens zwei Wochen vorher im Kalender eingetragen und von der Teamleitung bestätigt; Krankheitstage meldet man am selben Morgen.",
    ),
];

const RUSSIAN: [(&str, &str); 3] = [
    (
        "global/rezervnye.md",
        "# Резервные копии\n\nБаза данных копируется каждую ночь в два часа, а резервные копии хранятся тридцать дней, после чего удаляются.",
    ),
    (
        "global/dezhurstvo.md",
        "# Дежурство\n\nДежурный инженер отвечает на вызовы в течение пятнадцати минут днём и ночью и передаёт смену каждый понедельник.",
    ),
    (
        "global/komandirovki.md",
        "# Командировки\n\nСохраняйте все чеки и сдавайте отчёт о командировке в течение четырёх недель после поездки.",
    ),
];

const CHINESE: [(&str, &str); 3] = [
    (
        "global/beifen.md",
        "# 备份\n\n数据库每天晚上两点自动备份，备份文件保存三十天，然后自动删除。每个月都要测试一次恢复流程。",
    ),
    (
        "global/zhiban.md",
        "# 值班\n\n值班工程师必须在十五分钟内响应告警，无论白天还是夜里，每周一早上交接班。",
    ),
    (
        "global/chailv.md",
        "# 差旅\n\n请保留所有发票，并在出差结束后四周内提交差旅报销，财务部门会随下一次工资一起支付。",
    ),
];

fn files(pages: &[(&str, &str)]) -> Vec<(String, Vec<u8>)> {
    pages
        .iter()
        .map(|(p, t)| (p.to_string(), t.as_bytes().to_vec()))
        .collect()
}

/// Builds `pages` without a model, with `config`.
fn report_of(pages: &[(&str, &str)], config: Config) -> (Arc<Index>, BuildReport) {
    let options = BuildOptions {
        config,
        ..BuildOptions::default()
    };
    let session = Session::build_with_model(
        Source::Files(files(pages)),
        &options,
        ModelChoice::Off,
        &mut |_, _, _| std::ops::ControlFlow::Continue(()),
    )
    .unwrap();
    (session.index(), session.build_report().unwrap())
}

fn tmp(name: &str) -> PathBuf {
    // Under Cargo's folder for integration tests' files (`target/tmp`), replaced each run.
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("wikidex-languages-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A folder that looks like a model to `choose`: `tokenizer.json` and `model.onnx`, empty.
fn look_alike(root: &Path, name: &str) -> PathBuf {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("tokenizer.json"), "{}").unwrap();
    std::fs::write(dir.join("model.onnx"), "").unwrap();
    dir
}

/// The models a CLI finds in `models/` (no manifests: known by their names).
fn both(root: &Path) -> Vec<PathBuf> {
    vec![
        look_alike(root, "all-MiniLM-L6-v2"),
        look_alike(root, "multilingual-e5-small"),
    ]
}

fn chosen_name(pages: &[(&str, &str)], candidates: &[PathBuf]) -> (String, String) {
    let (_, report) = report_of(pages, Config::default());
    let chosen = choose(None, None, candidates, &report.languages, Surface::Cli).unwrap();
    let found = chosen.found.expect("a model");
    (found.name(), chosen.reason.unwrap())
}

#[test]
fn a_russian_a_chinese_and_a_mixed_wiki_choose_the_multilingual_model() {
    let root = tmp("choose");
    let candidates = both(&root);
    let mixed: Vec<(&str, &str)> = ENGLISH[..2].iter().chain(&GERMAN).copied().collect();
    for (name, pages) in [
        ("russian", &RUSSIAN[..]),
        ("chinese", &CHINESE[..]),
        ("mixed", &mixed[..]),
    ] {
        let (model, why) = chosen_name(pages, &candidates);
        assert_eq!(model, "multilingual-e5-small", "{name}: {why}");
        assert!(why.contains("not in English"), "{name}: {why}");
    }
    let (model, why) = chosen_name(&ENGLISH, &candidates);
    assert_eq!(model, "all-MiniLM-L6-v2", "{why}");
    assert!(
        why.starts_with("all-MiniLM-L6-v2: 0% of the pages"),
        "{why}"
    );
    // An English wiki with only e5 installed gets it, as before, and says why.
    let (model, why) = chosen_name(&ENGLISH, &candidates[1..]);
    assert_eq!(model, "multilingual-e5-small", "{why}");
    assert!(why.ends_with("all-MiniLM-L6-v2 is not installed"), "{why}");
}

#[test]
fn the_mix_counts_pages_per_language() {
    let mixed: Vec<(&str, &str)> = ENGLISH[..2].iter().chain(&GERMAN).copied().collect();
    let (index, report) = report_of(&mixed, Config::default());
    assert_eq!(report.languages.pages("eng"), 2);
    assert_eq!(report.languages.pages("deu"), 2);
    assert_eq!(report.languages.undetected, 0);
    assert_eq!(index.languages(), &report.languages, "stored in the index");
    let loaded = Index::from_bytes(&index.to_bytes().unwrap()).unwrap();
    assert_eq!(loaded.languages(), &report.languages, "and in the blob");
    let (_, chinese) = report_of(&CHINESE, Config::default());
    assert_eq!(chinese.languages.pages("cmn"), 3);
}

#[test]
fn an_english_wiki_with_a_page_in_another_language_or_with_code_stays_english() {
    let root = tmp("stays");
    let candidates = both(&root);
    let code = "# Deploy\n\n```sh\nkubectl rollout restart deployment/api --namespace prod\nkubectl get pods -l app=api\n```\n\nRun `make deploy` after the checks pass.";
    let mut pages: Vec<(String, String)> = (0..4)
        .flat_map(|i| {
            ENGLISH
                .iter()
                .map(move |(p, t)| (p.replace(".md", &format!("{i}.md")), t.to_string()))
        })
        .collect();
    pages.push(("global/deploy.md".into(), code.into()));
    pages.push(("global/sicherung.md".into(), GERMAN[0].1.into()));
    let pages: Vec<(&str, &str)> = pages
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    let (model, why) = chosen_name(&pages, &candidates);
    assert_eq!(model, "all-MiniLM-L6-v2", "{why}");
    let (index, report) = report_of(&pages, Config::default());
    assert_eq!(report.languages.pages("deu"), 1, "{:?}", report.languages);
    assert_eq!(index.config().language, Some(Language::English));
}

#[test]
fn without_the_multilingual_model_a_russian_wiki_gets_minilm_and_a_notice() {
    let root = tmp("notice");
    let minilm = vec![look_alike(&root, "all-MiniLM-L6-v2")];
    let (_, report) = report_of(&RUSSIAN, Config::default());
    for (surface, words) in [
        (Surface::Python, "pip install wikidex-model-e5-small"),
        (Surface::Node, "npm install wikidex-model-e5-small"),
        (Surface::Cli, "models/"),
    ] {
        let chosen = choose(None, None, &minilm, &report.languages, surface).unwrap();
        assert_eq!(chosen.found.unwrap().name(), "all-MiniLM-L6-v2");
        assert!(chosen.reason.unwrap().contains("not installed"));
        let notice = chosen.notice.expect("a notice");
        assert!(notice.contains(words), "{notice}");
        assert!(!notice.contains('\n'), "one line: {notice}");
    }
    // An English wiki without it needs no notice.
    let (_, english) = report_of(&ENGLISH, Config::default());
    let chosen = choose(None, None, &minilm, &english.languages, Surface::Python).unwrap();
    assert_eq!(chosen.notice, None);
    // Nothing installed: no model, and how to turn the lane on.
    let chosen = choose(None, None, &[], &report.languages, Surface::Python).unwrap();
    assert!(chosen.found.is_none() && chosen.notice.is_none());
    assert!(chosen.off.unwrap().contains("semantic lane is off"));
}

#[test]
fn an_explicit_model_or_the_environment_wins_over_the_languages() {
    let root = tmp("explicit");
    let candidates = both(&root);
    let (_, report) = report_of(&RUSSIAN, Config::default());
    let mine = look_alike(&root, "mine");
    let chosen = choose(
        Some(&mine),
        None,
        &candidates,
        &report.languages,
        Surface::Cli,
    )
    .unwrap();
    let found = chosen.found.unwrap();
    assert_eq!(
        (found.source, found.dir),
        (ModelSource::Explicit, mine.clone())
    );
    assert_eq!(chosen.reason.unwrap(), "mine: the model given");
    let chosen = choose(
        None,
        Some(mine.as_os_str()),
        &candidates,
        &report.languages,
        Surface::Cli,
    )
    .unwrap();
    assert_eq!(chosen.found.unwrap().source, ModelSource::Env);
    assert!(chosen.reason.unwrap().contains(MODEL_ENV));
}

#[test]
fn the_analysis_language_follows_a_german_wiki_unless_one_is_named() {
    let (index, report) = report_of(&GERMAN, Config::default());
    assert_eq!(index.config().language, Some(Language::German));
    let why = report.language_reason.unwrap();
    assert!(
        why.starts_with("german: the main language (2 of 2 pages)"),
        "{why}"
    );
    // German stemming and stopwords: `gesichert` finds `Sicherungen`'s page by its stem.
    let hits = index.search("gesichert", &Default::default()).unwrap().hits;
    assert_eq!(hits[0].key, "sicherung");
    // Named, English wins, and the report gives no reason.
    let named = Config {
        language: Some(Language::English),
        ..Config::default()
    };
    let (index, report) = report_of(&GERMAN, named);
    assert_eq!(index.config().language, Some(Language::English));
    assert_eq!(report.language_reason, None);
    // JSON options: a language named there wins too.
    let options: BuildOptions = wikidex::options::from_json(
        "build options",
        Some(r#"{"config": {"language": "english"}}"#),
    )
    .unwrap();
    assert_eq!(options.config.language, Some(Language::English));
    let options: BuildOptions = wikidex::options::from_json("build options", Some("{}")).unwrap();
    assert_eq!(options.config.language, None);
}

#[test]
fn a_main_language_without_a_stemmer_stays_english_and_says_so() {
    let (index, report) = report_of(&CHINESE, Config::default());
    assert_eq!(index.config().language, Some(Language::English));
    let why = report.language_reason.unwrap();
    assert!(
        why.starts_with("english: the main language, Mandarin"),
        "{why}"
    );
    let (index, _) = report_of(&RUSSIAN, Config::default());
    assert_eq!(index.config().language, Some(Language::Russian));
}

#[test]
fn a_page_write_keeps_the_mix_as_a_fresh_build_has_it() {
    let (index, _) = report_of(&ENGLISH, Config::default());
    let index = Arc::unwrap_or_clone(index);
    let (index, _) = index
        .upsert_page(GERMAN[0].0, GERMAN[0].1, &WriteOptions::default(), None)
        .unwrap();
    assert_eq!(index.languages().pages("deu"), 1);
    // A fresh build of the same pages, with the language the first build chose.
    let pages: Vec<(&str, &str)> = ENGLISH.iter().chain(&GERMAN[..1]).copied().collect();
    let english = Config {
        language: Some(Language::English),
        ..Config::default()
    };
    let (fresh, _) = report_of(&pages, english);
    assert_eq!(index.to_bytes().unwrap(), fresh.to_bytes().unwrap());
    let (index, _) = index.delete_page("sicherung", None, None).unwrap();
    assert_eq!(index.languages().pages("deu"), 0);
}

/// A folder holding MiniLM's int8 files under multilingual-e5-small's package, so a build
/// that chooses it loads a real model in a second or two.
fn e5_look_alike(root: &Path) -> Option<PathBuf> {
    let minilm = Path::new(env!("CARGO_MANIFEST_DIR")).join("../models/all-MiniLM-L6-v2");
    if !minilm.join("model-int8.onnx").is_file() {
        eprintln!(
            "skipped: {} has no model-int8.onnx (`make models`)",
            minilm.display()
        );
        return None;
    }
    let dir = root.join("multilingual-e5-small");
    std::fs::create_dir_all(&dir).unwrap();
    for f in ["model-int8.onnx", "tokenizer.json"] {
        std::fs::copy(minilm.join(f), dir.join(f)).unwrap();
    }
    let manifest = Manifest {
        name: "multilingual-e5-small".into(),
        package: "wikidex-model-e5-small".into(),
        version: "0.0.0".into(),
        onnx: "model-int8.onnx".into(),
        fingerprint: String::new(),
        license: "MIT".into(),
        sha256: Default::default(),
    };
    std::fs::write(
        dir.join(MANIFEST_FILE),
        serde_json::to_vec(&manifest).unwrap(),
    )
    .unwrap();
    Some(dir)
}

#[test]
fn a_build_with_no_model_argument_loads_the_model_its_languages_choose() {
    if std::env::var_os(MODEL_ENV).is_some_and(|v| !v.is_empty()) {
        eprintln!("skipped: {MODEL_ENV} is set, and wins");
        return;
    }
    let root = tmp("end-to-end");
    let Some(e5) = e5_look_alike(&root) else {
        return;
    };
    let session = Session::build_with_model(
        Source::Files(files(&RUSSIAN)),
        &BuildOptions::default(),
        ModelChoice::Default {
            candidates: vec![e5],
            surface: Surface::Python,
            options: OnnxOptions::default(),
        },
        &mut |_, _, _| std::ops::ControlFlow::Continue(()),
    )
    .unwrap();
    let report = session.build_report().unwrap();
    let why = report.model_reason.unwrap();
    assert!(
        why.starts_with("multilingual-e5-small: 100% of the pages"),
        "{why}"
    );
    assert_eq!(report.model_notice, None);
    let vectors = session.index().vectors().cloned().expect("embedded");
    assert_eq!(vectors.model_id, "multilingual-e5-small/model-int8");
    assert!(
        session.model().is_some(),
        "the session keeps the model for queries"
    );
    // A model given is used whatever the languages, and the report says so.
    let minilm = Path::new(env!("CARGO_MANIFEST_DIR")).join("../models/all-MiniLM-L6-v2");
    let given = OnnxEmbedder::from_files(
        &minilm.join("model-int8.onnx"),
        &minilm.join("tokenizer.json"),
        OnnxOptions::default(),
    )
    .unwrap();
    let session = Session::build_with_model(
        Source::Files(files(&RUSSIAN)),
        &BuildOptions::default(),
        ModelChoice::Given(Arc::new(given)),
        &mut |_, _, _| std::ops::ControlFlow::Continue(()),
    )
    .unwrap();
    let why = session.build_report().unwrap().model_reason.unwrap();
    assert_eq!(why, "all-MiniLM-L6-v2/model-int8: the model given");
    std::fs::remove_dir_all(&root).unwrap();
}

/// What a sharded build asks before it deals the files out: the default model and the analysis
/// language of all of them, by the same rules a build follows.
#[test]
fn the_choices_of_files_are_the_ones_their_build_would_make() {
    if std::env::var_os(MODEL_ENV).is_some_and(|v| !v.is_empty()) {
        eprintln!("skipped: {MODEL_ENV} is set, and wins");
        return;
    }
    let root = tmp("default-model");
    let candidates = both(&root);
    let options = BuildOptions::default();
    let choices = |pages: &[(&str, &str)], candidates: Option<&[std::path::PathBuf]>| {
        wikidex::wiki_choices(
            Source::Files(files(pages)),
            &options,
            candidates,
            Surface::Python,
        )
        .unwrap()
    };
    let name = |pages: &[(&str, &str)]| {
        let found = choices(pages, Some(&candidates)).model.expect("a model");
        found.name()
    };
    assert_eq!(name(&RUSSIAN), "multilingual-e5-small");
    assert_eq!(name(&ENGLISH), "all-MiniLM-L6-v2");
    assert!(choices(&ENGLISH, Some(&[])).model.is_none());
    assert!(choices(&ENGLISH, None).model.is_none());
    for pages in [&RUSSIAN[..], &ENGLISH[..]] {
        let built = wikidex::build(
            Source::Files(files(pages)),
            &options,
            ModelChoice::Off,
            None,
            &mut |_, _, _| std::ops::ControlFlow::Continue(()),
        )
        .unwrap()
        .0;
        assert_eq!(choices(pages, None).language, built.config().language());
    }
    let pinned = BuildOptions {
        config: Config {
            language: Some(Language::German),
            ..Default::default()
        },
        ..BuildOptions::default()
    };
    let german = wikidex::wiki_choices(
        Source::Files(files(&ENGLISH)),
        &pinned,
        None,
        Surface::Python,
    );
    assert_eq!(german.unwrap().language, Language::German);
}
