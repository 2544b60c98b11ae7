//! The `since` / `until` filters over a page's frontmatter date.

use wikidex::{IndexBuilder, SearchOptions};

const WIKI: &[(&str, &str)] = &[
    ("global/march.md", "---\ndate: 2024-03-12\n---\nThe nightly job crashed."),
    (
        "global/edited.md",
        "---\ndate: 2023-01-01\nupdated: 2024-06-01T08:00:00+02:00\n---\nThe nightly job was rewritten.",
    ),
    ("global/undated.md", "The nightly job runs at 03:00."),
    ("global/bad.md", "---\ndate: sometime in May\n---\nThe nightly job is slow."),
];

fn keys(since: Option<&str>, until: Option<&str>) -> Vec<String> {
    let mut b = IndexBuilder::new(Default::default()).unwrap();
    for (p, t) in WIKI {
        b.add_file(p, t.as_bytes()).unwrap();
    }
    let index = b.build().unwrap().0;
    let opts = SearchOptions {
        since: since.map(str::to_string),
        until: until.map(str::to_string),
        ..Default::default()
    };
    let mut k: Vec<String> = index
        .search("nightly job", &opts)
        .unwrap()
        .hits
        .into_iter()
        .map(|h| h.key)
        .collect();
    k.sort();
    k
}

#[test]
fn date_filters_keep_pages_dated_in_range_and_leave_undated_ones_out() {
    assert_eq!(keys(None, None), ["bad", "edited", "march", "undated"]);
    assert_eq!(keys(Some("2024-01-01"), None), ["edited", "march"]);
    // `updated` wins over `date`; an offset is honoured (06:00Z).
    assert_eq!(keys(Some("2024-06-01T06:00:00Z"), None), ["edited"]);
    assert_eq!(
        keys(Some("2024-06-01T06:00:01Z"), None),
        Vec::<String>::new()
    );
    // A date alone as `until` keeps that whole day.
    assert_eq!(keys(None, Some("2024-03-12")), ["march"]);
    assert_eq!(keys(Some("2024-03-12"), Some("2024-03-12")), ["march"]);
    assert_eq!(keys(None, Some("2024-03-11")), Vec::<String>::new());
}

#[test]
fn a_bad_date_filter_is_invalid_argument_and_a_hit_shows_its_date() {
    let mut b = IndexBuilder::new(Default::default()).unwrap();
    for (p, t) in WIKI {
        b.add_file(p, t.as_bytes()).unwrap();
    }
    let index = b.build().unwrap().0;
    let opts = SearchOptions {
        since: Some("last week".into()),
        ..Default::default()
    };
    assert_eq!(
        index.search("nightly", &opts).unwrap_err().code(),
        "invalid_argument"
    );
    let r = index.search("crashed", &SearchOptions::default()).unwrap();
    assert_eq!(r.hits[0].date.as_deref(), Some("2024-03-12"));
}

/// The wiki above written to a folder, every file modified at `secs` (Unix seconds).
fn folder(secs: u64) -> std::path::PathBuf {
    let root = crate::blob::temp_dir("dates-mtime");
    for (p, t) in WIKI {
        let path = root.join(p);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, t).unwrap();
        let at = std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs);
        std::fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(at)
            .unwrap();
    }
    root
}

fn search(index: &wikidex::Index, since: &str) -> Vec<(String, Option<String>)> {
    let opts = SearchOptions {
        since: Some(since.to_string()),
        ..Default::default()
    };
    let mut k: Vec<(String, Option<String>)> = index
        .search("nightly job", &opts)
        .unwrap()
        .hits
        .into_iter()
        .map(|h| (h.key, h.date))
        .collect();
    k.sort();
    k
}

#[test]
fn a_page_without_a_frontmatter_date_is_dated_by_its_file_modification_time() {
    // 2025-02-03T04:05:06Z
    let root = folder(1_738_555_506);
    let mut b = IndexBuilder::new(Default::default()).unwrap();
    b.add_dir(&root).unwrap();
    let index = b.build().unwrap().0;
    let mtime = Some("2025-02-03T04:05:06Z".to_string());
    // The frontmatter date wins; the undated page and the one with a bad date get the file's.
    assert_eq!(
        search(&index, "2024-01-01"),
        [
            ("bad".to_string(), mtime.clone()),
            (
                "edited".to_string(),
                Some("2024-06-01T08:00:00+02:00".to_string())
            ),
            ("march".to_string(), Some("2024-03-12".to_string())),
            ("undated".to_string(), mtime.clone()),
        ]
    );
    assert_eq!(search(&index, "2025-01-01").len(), 2);
    // Stored in the blob.
    let loaded = wikidex::Index::from_bytes(&index.to_bytes().unwrap()).unwrap();
    assert_eq!(search(&loaded, "2025-01-01"), search(&index, "2025-01-01"));
    // A page written through the API has no file time: its new text was not read from a file.
    let (edited, _) = loaded
        .upsert_page(
            "global/undated.md",
            "The nightly job runs at 04:00.",
            &Default::default(),
            None,
        )
        .unwrap();
    assert_eq!(
        search(&edited, "2025-01-01"),
        [("bad".to_string(), mtime.clone())]
    );
    // The text read from its file, written again, keeps the file's time; a renamed page is
    // not at its file's path, and loses it.
    let bad = edited.page("bad", None).unwrap();
    let (same, _) = edited
        .upsert_page(&bad.path, &bad.text, &Default::default(), None)
        .unwrap();
    assert_eq!(search(&same, "2025-01-01"), search(&edited, "2025-01-01"));
    let (renamed, _) = same.rename_page("bad", None, "worse", None).unwrap();
    assert!(search(&renamed, "2025-01-01").is_empty());
    // Pages given as text have none either.
    let mut b = IndexBuilder::new(Default::default()).unwrap();
    for (p, t) in WIKI {
        b.add_file(p, t.as_bytes()).unwrap();
    }
    assert!(search(&b.build().unwrap().0, "2025-01-01").is_empty());
}
