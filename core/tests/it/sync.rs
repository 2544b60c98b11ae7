//! Building on a previous index (`IndexBuilder::previous`, `wikidex sync`): only changed
//! files are parsed, only new passages embedded, and the result is a fresh build's.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use wikidex::{folder_stamp, Embedder, Index, IndexBuilder, SyncReport};

use crate::blob::temp_dir;

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A wiki of four pages and a raw document.
fn wiki(tag: &str) -> PathBuf {
    let root = temp_dir(&format!("sync-{tag}"));
    write(
        &root,
        "global/revenue.md",
        "---\nsummary: Money in.\n---\nRevenue is recognized monthly. See [[churn]].",
    );
    write(
        &root,
        "global/churn.md",
        "Churn is the share of accounts lost.",
    );
    write(
        &root,
        "global/nightly.md",
        "The nightly job loads the warehouse.",
    );
    write(&root, "global/old-name.md", "A page that will be renamed.");
    write(&root, "raw/notes.md", "# Notes\nRaw notes about revenue.");
    root
}

/// An embedder that records every text it embeds; `fingerprint` names its version.
pub(crate) struct Counting {
    fingerprint: String,
    texts: Mutex<Vec<String>>,
}

impl Counting {
    pub(crate) fn new(fingerprint: &str) -> Arc<Counting> {
        Arc::new(Counting {
            fingerprint: fingerprint.into(),
            texts: Mutex::new(Vec::new()),
        })
    }
    /// Texts embedded, less the nonsense queries the build measures the floor with.
    pub(crate) fn embedded(&self) -> usize {
        let texts = self.texts.lock().unwrap();
        texts
            .iter()
            .filter(|t| !crate::prompts::is_floor_probe(t))
            .count()
    }
}

impl Embedder for Counting {
    fn model_id(&self) -> &str {
        "counting"
    }
    fn fingerprint(&self) -> &str {
        &self.fingerprint
    }
    fn dim(&self) -> usize {
        2
    }
    fn embed(&self, texts: &[&str]) -> wikidex::Result<Vec<Vec<f32>>> {
        let mut seen = self.texts.lock().unwrap();
        seen.extend(texts.iter().map(|t| t.to_string()));
        Ok(texts
            .iter()
            .map(|t| vec![t.len() as f32, 1.0 + t.matches('e').count() as f32])
            .collect())
    }
}

fn build(root: &Path, previous: Option<&Index>, e: Option<Arc<Counting>>) -> (Index, SyncReport) {
    let mut b = IndexBuilder::new(Default::default()).unwrap();
    if let Some(e) = e {
        b.embedder(e);
    }
    if let Some(p) = previous {
        b.previous(p);
    }
    b.add_dir(root).unwrap();
    b.sync_with_progress(&mut |_, _, _| std::ops::ControlFlow::Continue(()))
        .unwrap()
}

/// Edits, adds, deletes and renames files in the wiki of [`wiki`].
fn edit(root: &Path) {
    write(
        root,
        "global/churn.md",
        "Churn is the share of accounts lost in a month.",
    );
    write(root, "global/margin.md", "Margin is revenue less costs.");
    std::fs::remove_file(root.join("global/nightly.md")).unwrap();
    std::fs::rename(
        root.join("global/old-name.md"),
        root.join("global/new-name.md"),
    )
    .unwrap();
}

#[test]
fn sync_reports_changes_and_equals_a_fresh_build() {
    let root = wiki("fresh");
    let (first, report) = build(&root, None, None);
    assert_eq!(
        report.added,
        [
            "global/churn.md",
            "global/nightly.md",
            "global/old-name.md",
            "global/revenue.md",
            "raw/notes.md"
        ]
    );
    // Resuming from the blob, as after a restart.
    let first = Index::from_bytes(&first.to_bytes().unwrap()).unwrap();
    let (same, report) = build(&root, Some(&first), None);
    assert!(!report.has_changes());
    assert_eq!(report.unchanged, 5);
    assert_eq!(same.to_bytes().unwrap(), first.to_bytes().unwrap());

    edit(&root);
    let (synced, report) = build(&root, Some(&first), None);
    assert_eq!(report.added, ["global/margin.md", "global/new-name.md"]);
    assert_eq!(report.changed, ["global/churn.md"]);
    assert_eq!(report.removed, ["global/nightly.md", "global/old-name.md"]);
    assert_eq!(report.unchanged, 2);
    assert_eq!(report.build.pages, 4);
    let (fresh, _) = build(&root, None, None);
    assert_eq!(synced.to_bytes().unwrap(), fresh.to_bytes().unwrap());
    std::fs::remove_dir_all(&root).unwrap();
}

/// A sync counts the previous index's pages in the languages it stored, less those changed,
/// removed or dropped as a duplicate key since: the mix (and the bytes) of a fresh build.
#[test]
fn sync_counts_languages_as_a_fresh_build_does() {
    let english = "The nightly build failed because the database ran out of disk space, and the \
                   backups were moved to a larger volume the next morning.";
    let german = "Die Datenbank wird jede Nacht gesichert, und die Sicherungen werden dreißig \
                  Tage lang aufbewahrt, bevor sie gelöscht werden.";
    let french = "La base de données est sauvegardée chaque nuit, et les sauvegardes sont \
                  conservées pendant trente jours avant d'être supprimées.";
    let root = temp_dir("sync-languages");
    write(&root, "global/alpha.md", english);
    write(&root, "global/beta.md", german);
    write(&root, "global/gamma.md", french);
    write(&root, "global/zeta.md", german);
    let (first, _) = build(&root, None, None);
    let first = Index::from_bytes(&first.to_bytes().unwrap()).unwrap();
    assert_eq!(first.languages().pages("deu"), 2);
    // alpha changes language, gamma goes, delta comes, and a/zeta.md (a smaller path) drops
    // the unchanged global/zeta.md as a duplicate key.
    write(&root, "global/alpha.md", german);
    std::fs::remove_file(root.join("global/gamma.md")).unwrap();
    write(&root, "global/delta.md", french);
    write(&root, "a/zeta.md", english);
    let (synced, report) = build(&root, Some(&first), None);
    assert_eq!(report.unchanged, 2);
    let (fresh, _) = build(&root, None, None);
    assert_eq!(synced.languages(), fresh.languages());
    let counts = ["eng", "deu", "fra"].map(|c| fresh.languages().pages(c));
    assert_eq!(counts, [1, 2, 1]);
    assert_eq!(synced.to_bytes().unwrap(), fresh.to_bytes().unwrap());
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn sync_embeds_only_new_passages_of_the_same_model() {
    let root = wiki("embed");
    let e = Counting::new("v1");
    let (first, report) = build(&root, None, Some(Arc::clone(&e)));
    let all = first.chunk_count();
    assert_eq!(report.embedded, all);
    assert_eq!(e.embedded(), all);

    edit(&root);
    let e = Counting::new("v1");
    let (synced, report) = build(&root, Some(&first), Some(Arc::clone(&e)));
    // churn (edited), margin (new), new-name (new file, so a new page key and passage).
    assert_eq!(report.embedded, 3);
    assert_eq!(e.embedded(), 3);
    assert!(e
        .texts
        .lock()
        .unwrap()
        .iter()
        .any(|t| t.contains("in a month")));
    // The vectors are those a fresh build computes.
    let (fresh, _) = build(&root, None, Some(Counting::new("v1")));
    assert_eq!(synced.to_bytes().unwrap(), fresh.to_bytes().unwrap());

    // Another model version: nothing reused.
    let e = Counting::new("v2");
    let (_, report) = build(&root, Some(&synced), Some(Arc::clone(&e)));
    assert_eq!(report.embedded, synced.chunk_count());
    assert!(!report.has_changes());
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn sync_reports_a_broken_file_and_goes_on() {
    let root = wiki("broken");
    let (first, _) = build(&root, None, None);
    write(&root, "global/churn.md", "---\ntags: [unclosed\n---\nbody");
    write(&root, "global/margin.md", "Margin is revenue less costs.");
    let (synced, report) = build(&root, Some(&first), None);
    assert_eq!(report.changed, ["global/churn.md"]);
    assert_eq!(report.added, ["global/margin.md"]);
    assert_eq!(report.build.skipped.len(), 1);
    assert_eq!(report.build.skipped[0].path, "global/churn.md");
    assert!(synced.page("margin", None).is_ok());
    assert!(synced.page("churn", None).is_err());
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn folder_stamp_moves_when_a_file_does() {
    let root = wiki("stamp");
    let stamp = || folder_stamp(&root, None, false).unwrap();
    let a = stamp();
    assert_eq!(a, stamp());
    write(&root, "global/churn.md", "Churn, edited to a new length.");
    let b = stamp();
    assert_ne!(a, b);
    std::fs::rename(root.join("global/churn.md"), root.join("global/lost.md")).unwrap();
    let c = stamp();
    assert_ne!(b, c);
    // Files the build does not read do not count.
    write(&root, "global/image.png", "not markdown");
    write(&root, ".obsidian/workspace.md", "hidden");
    assert_eq!(c, stamp());
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn a_file_that_keeps_failing_is_not_a_change() {
    let root = wiki("failing");
    write(&root, "global/bad.md", "---\ntags: [unclosed\n---\nbody");
    let (first, report) = build(&root, None, None);
    assert_eq!(report.build.skipped.len(), 1);
    assert!(!report.added.contains(&"global/bad.md".to_string()));
    let (_, report) = build(&root, Some(&first), None);
    assert!(!report.has_changes());
    assert_eq!(report.build.skipped[0].path, "global/bad.md");
    std::fs::remove_dir_all(&root).unwrap();
}

/// A sync takes an unchanged page's chunks from the previous index only when it was cut
/// with the same chunk sizes: with other sizes, every page is cut again, as a fresh build
/// with those sizes cuts it.
#[test]
fn a_sync_with_other_chunk_sizes_cuts_every_page_again() {
    let root = wiki("sizes");
    let long: Vec<String> = (0..60).map(|i| format!("word{i}")).collect();
    write(&root, "global/long.md", &format!("{}.", long.join(" ")));
    let (first, _) = build(&root, None, None);
    let small = || {
        let mut config = wikidex::Config::default();
        config.chunk.max_tokens = 16;
        config.chunk.overlap_tokens = 0;
        IndexBuilder::new(config).unwrap()
    };
    let done = |mut b: IndexBuilder| {
        b.add_dir(&root).unwrap();
        b.build().unwrap().0
    };
    let mut synced = small();
    synced.previous(&first);
    let (synced, fresh) = (done(synced), done(small()));
    assert!(synced.chunk_count() > first.chunk_count());
    assert_eq!(synced.to_bytes().unwrap(), fresh.to_bytes().unwrap());
    std::fs::remove_dir_all(&root).unwrap();
}
