//! Merging shards (`Source::Indexes`, `IndexBuilder::add_index`): indexes built each from part
//! of a wiki's files, merged, give the index of all the files, having embedded nothing again.

use std::ops::ControlFlow;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use wikidex::{
    build, BuildOptions, Embedder, Index, ModelChoice, Source, SyncReport, VectorEncoding,
};

use crate::blob::{example_wiki, markdown_files, temp_dir};
use crate::sync::Counting;

/// Every file of the example wiki (pages, user pages, raw documents) as `(path, bytes)`.
fn example_files() -> Vec<(String, Vec<u8>)> {
    markdown_files(&example_wiki())
        .into_iter()
        .map(|(rel, full)| (rel, std::fs::read(full).unwrap()))
        .collect()
}

fn options(vectors: VectorEncoding) -> BuildOptions {
    BuildOptions {
        vectors,
        ..BuildOptions::default()
    }
}

fn run(
    source: Source,
    options: &BuildOptions,
    model: Option<Arc<Counting>>,
) -> (Index, SyncReport) {
    let model = ModelChoice::from(model.map(|m| m as Arc<dyn Embedder>));
    build(source, options, model, None, &mut |_, _, _| {
        ControlFlow::Continue(())
    })
    .unwrap()
}

/// `files` dealt into `n` shards in turn (so each shard holds pages from all over the wiki),
/// each built with its own copy of the model and loaded back from its blob, as a worker would
/// hand it over.
fn shards(files: &[(String, Vec<u8>)], n: usize, options: &BuildOptions) -> Vec<Arc<Index>> {
    (0..n)
        .map(|s| {
            let part: Vec<_> = files.iter().skip(s).step_by(n).cloned().collect();
            let (shard, _) = run(Source::Files(part), options, Some(Counting::new("v1")));
            Arc::new(Index::from_bytes(&shard.to_bytes().unwrap()).unwrap())
        })
        .collect()
}

#[test]
fn merged_shards_are_one_build_byte_for_byte_and_embed_nothing_again() {
    let files = example_files();
    assert!(files.iter().any(|(p, _)| p.starts_with("raw/")));
    assert!(files.iter().any(|(p, _)| p.starts_with("user/")));
    for encoding in [VectorEncoding::F32, VectorEncoding::Int8] {
        let options = options(encoding);
        let (whole, _) = run(
            Source::Files(files.clone()),
            &options,
            Some(Counting::new("v1")),
        );
        let model = Counting::new("v1");
        let (merged, report) = run(
            Source::Indexes(shards(&files, 3, &options)),
            &options,
            Some(Arc::clone(&model)),
        );
        assert_eq!(model.embedded(), 0, "{encoding:?}");
        assert_eq!(report.embedded, 0);
        assert_eq!(report.build.pages, whole.pages().len());
        assert!(
            merged.to_bytes().unwrap() == whole.to_bytes().unwrap(),
            "{encoding:?}: the merged blob differs from one build's"
        );
    }
}

#[test]
fn a_merge_with_another_model_embeds_every_chunk_with_it() {
    let files = example_files();
    let options = options(VectorEncoding::F32);
    let model = Counting::new("v2");
    let (merged, report) = run(
        Source::Indexes(shards(&files, 2, &options)),
        &options,
        Some(Arc::clone(&model)),
    );
    assert_eq!(report.embedded, merged.chunk_count());
    assert_eq!(model.embedded(), merged.chunk_count());
    let (whole, _) = run(Source::Files(files), &options, Some(Counting::new("v2")));
    assert_eq!(merged.to_bytes().unwrap(), whole.to_bytes().unwrap());
}

#[test]
fn a_merge_without_a_model_drops_the_vectors() {
    let files = example_files();
    let options = options(VectorEncoding::F32);
    let (merged, _) = run(Source::Indexes(shards(&files, 2, &options)), &options, None);
    let (whole, _) = run(Source::Files(files), &options, None);
    assert_eq!(merged.to_bytes().unwrap(), whole.to_bytes().unwrap());
}

/// Writes `text` at `root/rel` with modification time `at` (seconds after the epoch).
fn write_at(root: &Path, rel: &str, text: &str, at: u64) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, text).unwrap();
    let file = std::fs::File::options().write(true).open(&path).unwrap();
    file.set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(at))
        .unwrap();
}

#[test]
fn a_merge_keeps_file_times_and_drops_a_duplicate_key_as_one_build_does() {
    let pages = [
        (
            "global/revenue.md",
            "Revenue is recognized monthly.",
            1_700_000_000,
        ),
        (
            "global/churn.md",
            "Churn is the share of accounts lost.",
            1_710_000_000,
        ),
        (
            "team/revenue.md",
            "Another page whose key is revenue.",
            1_720_000_000,
        ),
    ];
    let whole = temp_dir("merge-whole");
    for (rel, text, at) in pages {
        write_at(&whole, rel, text, at);
    }
    let options = options(VectorEncoding::F32);
    let (one, one_report) = run(Source::Folder(whole), &options, None);
    let shards: Vec<Arc<Index>> = [&pages[..2], &pages[2..]]
        .iter()
        .map(|part| {
            let dir = temp_dir("merge-shard");
            for (rel, text, at) in *part {
                write_at(&dir, rel, text, *at);
            }
            Arc::new(run(Source::Folder(dir), &options, None).0)
        })
        .collect();
    let (merged, report) = run(Source::Indexes(shards), &options, None);
    assert_eq!(merged.to_bytes().unwrap(), one.to_bytes().unwrap());
    assert_eq!(report.build.skipped, one_report.build.skipped);
    assert_eq!(report.build.skipped.len(), 1);
    assert_eq!(report.build.skipped[0].code, "duplicate_key");
    assert_eq!(report.build.skipped[0].path, "team/revenue.md");
}

/// A folder built in parts (`folder_files` dealt out, each part `Source::FolderFiles`, as
/// `wikidex.distributed` builds a folder on a cluster) and merged is the folder's own index,
/// file times included, with every vector each part made.
#[test]
fn a_folder_built_in_parts_and_merged_is_the_folders_index() {
    let root = temp_dir("merge-folder");
    for (i, (rel, full)) in markdown_files(&example_wiki()).into_iter().enumerate() {
        let text = std::fs::read_to_string(full).unwrap();
        write_at(&root, &rel, &text, 1_700_000_000 + 1000 * i as u64);
    }
    let options = options(VectorEncoding::Int8);
    let (one, _) = run(
        Source::Folder(root.clone()),
        &options,
        Some(Counting::new("v1")),
    );
    let files = wikidex::folder_files(&root, false).unwrap();
    assert_eq!(files, {
        let mut sorted = files.clone();
        sorted.sort();
        sorted
    });
    assert!(files.iter().any(|p| p.starts_with("raw/")));
    let parts: Vec<Arc<Index>> = (0..3)
        .map(|s| {
            let part: Vec<String> = files.iter().skip(s).step_by(3).cloned().collect();
            let source = Source::FolderFiles(root.clone(), part);
            let (shard, _) = run(source, &options, Some(Counting::new("v1")));
            Arc::new(Index::from_bytes(&shard.to_bytes().unwrap()).unwrap())
        })
        .collect();
    let again = Counting::new("v1");
    let (merged, _) = run(Source::Indexes(parts), &options, Some(Arc::clone(&again)));
    assert_eq!(merged.to_bytes().unwrap(), one.to_bytes().unwrap());
    assert_eq!(again.embedded(), 0, "the merge embedded nothing again");
}

/// A part names only files of the folder: one the walk does not list (gone since, or not a
/// wiki file) is skipped and reported, and fails a strict build; a hidden file is not read.
#[test]
fn a_folder_part_reports_the_paths_the_walk_does_not_list() {
    let root = temp_dir("merge-folder-part");
    write_at(&root, "a.md", "# A\n\nAlpha.", 1_700_000_000);
    write_at(&root, ".hidden/b.md", "# B\n\nBeta.", 1_700_000_000);
    let part = vec!["gone.md".to_string(), "a.md".into(), ".hidden/b.md".into()];
    let (index, report) = run(
        Source::FolderFiles(root.clone(), part.clone()),
        &options(VectorEncoding::F32),
        None,
    );
    assert_eq!(index.pages().len(), 1);
    let skipped: Vec<(&str, &str)> = report
        .build
        .skipped
        .iter()
        .map(|s| (s.path.as_str(), s.code.as_str()))
        .collect();
    assert_eq!(
        skipped,
        [
            (".hidden/b.md", "invalid_argument"),
            ("gone.md", "invalid_argument")
        ]
    );
    let strict = BuildOptions {
        strict: true,
        ..options(VectorEncoding::F32)
    };
    let err = build(
        Source::FolderFiles(root, part),
        &strict,
        ModelChoice::Off,
        None,
        &mut |_, _, _| ControlFlow::Continue(()),
    )
    .unwrap_err();
    assert_eq!(err.code(), "invalid_argument");
    assert!(err.to_string().contains(".hidden/b.md"), "{err}");
}

/// A merge counts each shard's pages in the languages its build detected, and takes out a
/// page it drops as a duplicate key, whichever shard comes first: the mix (and so the
/// analysis language and the bytes) is one build's.
#[test]
fn a_merge_counts_the_shards_languages_less_the_duplicates_it_drops() {
    let english = "The nightly build failed because the database ran out of disk space, and \
                   the backups were moved to a larger volume the next morning.";
    let german = "Die Datenbank wird jede Nacht gesichert, und die Sicherungen werden dreißig \
                  Tage lang aufbewahrt, bevor sie gelöscht werden.";
    let french = "La base de données est sauvegardée chaque nuit, et les sauvegardes sont \
                  conservées pendant trente jours avant d'être supprimées.";
    let first = vec![
        ("a/backups.md".to_string(), english.as_bytes().to_vec()),
        ("a/nightly.md".to_string(), german.as_bytes().to_vec()),
    ];
    // `backups` again, in French, at a larger path: one build keeps the English page.
    let second = vec![
        ("b/backups.md".to_string(), french.as_bytes().to_vec()),
        ("b/retention.md".to_string(), french.as_bytes().to_vec()),
    ];
    let options = options(VectorEncoding::F32);
    let all: Vec<_> = first.iter().chain(&second).cloned().collect();
    let (one, _) = run(Source::Files(all), &options, None);
    assert_eq!(
        (one.languages().pages("eng"), one.languages().pages("deu")),
        (1, 1)
    );
    assert_eq!(one.languages().pages("fra"), 1);
    let shard = |files: &[(String, Vec<u8>)]| {
        Arc::new(run(Source::Files(files.to_vec()), &options, None).0)
    };
    for order in [[&first, &second], [&second, &first]] {
        let shards = order.iter().map(|f| shard(f)).collect();
        let (merged, report) = run(Source::Indexes(shards), &options, None);
        assert_eq!(merged.languages(), one.languages());
        assert_eq!(report.build.languages, *one.languages());
        assert_eq!(merged.to_bytes().unwrap(), one.to_bytes().unwrap());
    }
}

/// A page write takes the stored int8 vectors as they are stored: writing a page and writing
/// it back gives the blob it started from (quantized values decoded and quantized again would
/// drift on every write).
#[test]
fn a_page_written_and_written_back_leaves_int8_vectors_as_they_were() {
    let files = example_files();
    let options = options(VectorEncoding::Int8);
    let model = Counting::new("v1");
    let (index, _) = run(
        Source::Files(files.clone()),
        &options,
        Some(Arc::clone(&model)),
    );
    let (path, text) = files
        .iter()
        .find(|(p, _)| p == "global/churn_rate.md")
        .unwrap();
    let text = std::str::from_utf8(text).unwrap();
    let write = wikidex::WriteOptions::default();
    let (edited, _) = index
        .upsert_page(
            path,
            "Churn is the share of accounts lost.",
            &write,
            Some(&*model),
        )
        .unwrap();
    let (back, _) = edited
        .upsert_page(path, text, &write, Some(&*model))
        .unwrap();
    assert!(back.to_bytes().unwrap() == index.to_bytes().unwrap());
}
