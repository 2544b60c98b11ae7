//! The index blob (DESIGN §6): truncated, corrupted, foreign, newer and hostile bytes give an
//! error with a stable code, never a panic; the same input gives the same bytes; saving is
//! atomic.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

use wikidex::blob::{
    FORMAT_VERSION, HEADER_LEN, MAGIC, OLDEST_SUPPORTED_FORMAT_VERSION, SECTIONED_FORMAT_VERSION,
};
use wikidex::{Error, Index, IndexBuilder, Lane, SearchOptions};

use crate::check;

const SMALL_WIKI: &[(&str, &str)] = &[
    (
        "global/revenue.md",
        "---\ntitle: Revenue\nsummary: Money in, recognized monthly.\ntags: [finance, metrics]\ntype: reference\nowner: finance-team\n---\n# Revenue\n\nRevenue is recognized monthly. See [[churn_rate]] and [[arr|annual]].\n",
    ),
    (
        "global/churn_rate.md",
        "---\ntitle: Churn rate\ntags: [metrics]\nrelations:\n  - {target: revenue, type: affects, confidence: 0.7, evidence: lost accounts}\n---\nChurn is the share of accounts lost in a month.\n\nIt is computed per segment. <!-- from: raw/slack.md -->\n",
    ),
    (
        "global/arr.md",
        "Annual recurring revenue: twelve times the monthly recurring revenue, in euros (€).\n",
    ),
    (
        "user/alice/revenue.md",
        "---\nusage_mode: never\n---\nAlice's draft: revenue excludes refunds. Ünïcode wörds too.\n",
    ),
];

fn example_wiki() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/wiki")
}

fn build_small() -> Index {
    let mut b = IndexBuilder::new(Default::default()).unwrap();
    for (path, text) in SMALL_WIKI {
        b.add_file(path, text.as_bytes()).unwrap();
    }
    let (index, report) = b.build().unwrap();
    assert_eq!(report.pages, SMALL_WIKI.len(), "{report:?}");
    index
}

fn small_blob() -> Vec<u8> {
    build_small().to_bytes().unwrap()
}

/// The folder's pages, without file times: the bytes depend on the texts alone.
fn build_dir(dir: &Path) -> Index {
    let mut b = IndexBuilder::new(Default::default()).unwrap();
    b.file_times(false);
    b.add_dir(dir).unwrap();
    b.build().unwrap().0
}

/// The example wiki's blob, built once for the tests that only read it.
fn example_blob() -> &'static [u8] {
    static BLOB: OnceLock<Vec<u8>> = OnceLock::new();
    BLOB.get_or_init(|| build_dir(&example_wiki()).to_bytes().unwrap())
}

/// `Index::from_bytes`, turning a panic into a test failure that names the input.
fn load(bytes: &[u8], what: &str) -> Result<Index, Error> {
    catch_unwind(AssertUnwindSafe(|| Index::from_bytes(bytes)))
        .unwrap_or_else(|_| panic!("Index::from_bytes panicked on {what}"))
}

/// The error code of loading `bytes`; fails the test if they load.
fn load_error(bytes: &[u8], what: &str) -> &'static str {
    match load(bytes, what) {
        Ok(_) => panic!("{what} loaded as an index"),
        Err(e) => e.code(),
    }
}

/// The code a blob corrupted at `offset` (and nowhere else) must be rejected with.
fn expected_code_at(offset: usize) -> &'static str {
    match offset {
        0..8 => "not_an_index",
        8..12 => "incompatible_format",
        _ => "corrupt_index",
    }
}

/// Rewrites the header checksum so that it matches the (tampered) payload.
fn reseal(bytes: &mut [u8]) {
    let hash = blake3::hash(&bytes[HEADER_LEN..]);
    bytes[24..HEADER_LEN].copy_from_slice(hash.as_bytes());
}

/// A fresh, empty folder for one test (shared by the test modules).
pub(crate) fn temp_dir(tag: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "wikidex-it-{tag}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    // Left over from an earlier run with the same process id, if at all.
    if dir.exists() {
        std::fs::remove_dir_all(&dir).unwrap();
    }
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn dir_entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn small_blob_has_the_documented_header() {
    let bytes = small_blob();
    assert_eq!(bytes[..8], MAGIC);
    assert_eq!(bytes[8..12], FORMAT_VERSION.to_le_bytes());
    assert_eq!(bytes[12..16], [0, 0, 0, 0]);
    assert_eq!(
        bytes[16..24],
        ((bytes.len() - HEADER_LEN) as u64).to_le_bytes()
    );
    assert_eq!(
        bytes[24..56],
        *blake3::hash(&bytes[HEADER_LEN..]).as_bytes()
    );
}

#[test]
fn truncated_blob_is_rejected_at_every_offset() {
    let bytes = small_blob();
    for n in 0..bytes.len() {
        let code = load_error(
            &bytes[..n],
            &format!("the blob cut to {n} of {} bytes", bytes.len()),
        );
        assert!(
            code == "not_an_index" || code == "corrupt_index",
            "cut to {n} bytes: code {code}"
        );
    }
}

#[test]
fn truncated_example_wiki_blob_is_rejected_in_the_header_and_every_97th_byte() {
    let bytes = example_blob();
    let offsets = (0..HEADER_LEN).chain((HEADER_LEN..bytes.len()).step_by(97));
    for n in offsets {
        let code = load_error(&bytes[..n], &format!("the example blob cut to {n} bytes"));
        assert!(
            code == "not_an_index" || code == "corrupt_index",
            "cut to {n} bytes: code {code}"
        );
    }
}

#[test]
fn every_byte_flipped_with_xor_ff_is_rejected_with_the_code_of_its_region() {
    let bytes = small_blob();
    for at in 0..bytes.len() {
        let mut bad = bytes.clone();
        bad[at] ^= 0xFF;
        let code = load_error(&bad, &format!("byte {at} xor 0xFF"));
        assert_eq!(code, expected_code_at(at), "byte {at} xor 0xFF");
    }
}

#[test]
fn every_byte_flipped_with_xor_01_is_rejected_with_the_code_of_its_region() {
    let bytes = small_blob();
    for at in 0..bytes.len() {
        let mut bad = bytes.clone();
        bad[at] ^= 0x01;
        // v7 xor 1 is v6, which this build reads: a v7 payload labelled v6 is rejected as
        // corrupt (its chunk table and postings are not v6's). Every other header byte's flip
        // gives what its region says.
        assert_eq!(FORMAT_VERSION ^ 0x01, 6);
        let expected = if at == 8 {
            "corrupt_index"
        } else {
            expected_code_at(at)
        };
        let code = load_error(&bad, &format!("byte {at} xor 0x01"));
        assert_eq!(code, expected, "byte {at} xor 0x01");
    }
}

#[test]
fn newer_format_version_is_incompatible_and_the_message_names_both_versions() {
    let mut bytes = small_blob();
    let newer = SECTIONED_FORMAT_VERSION + 1;
    bytes[8..12].copy_from_slice(&newer.to_le_bytes());
    let err = load(&bytes, "a newer version").unwrap_err();
    assert_eq!(err.code(), "incompatible_format");
    match &err {
        Error::IncompatibleFormat {
            found,
            oldest,
            current,
        } => {
            assert_eq!(*found, newer);
            assert_eq!(*oldest, OLDEST_SUPPORTED_FORMAT_VERSION);
            assert_eq!(*current, SECTIONED_FORMAT_VERSION);
        }
        other => panic!("unexpected error {other:?}"),
    }
    let message = err.to_string();
    assert!(message.contains(&format!("v{newer}")), "{message}");
    assert!(
        message.contains(&format!("v{SECTIONED_FORMAT_VERSION}")),
        "{message}"
    );
}

#[test]
fn a_one_piece_payload_labelled_sectioned_is_corrupt() {
    let mut bytes = small_blob();
    bytes[8..12].copy_from_slice(&SECTIONED_FORMAT_VERSION.to_le_bytes());
    assert_eq!(load_error(&bytes, "v7 labelled v9"), "corrupt_index");
    bytes[8..12].copy_from_slice(&wikidex::blob::FIRST_SECTIONED_FORMAT_VERSION.to_le_bytes());
    assert_eq!(load_error(&bytes, "v7 labelled v8"), "corrupt_index");
}

#[test]
fn version_zero_is_incompatible() {
    let mut bytes = small_blob();
    bytes[8..12].copy_from_slice(&0u32.to_le_bytes());
    assert_eq!(load_error(&bytes, "version 0"), "incompatible_format");
}

#[test]
fn foreign_files_are_not_an_index() {
    let png =
        b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0\x1f\x15\xc4\x89".to_vec();
    let zip = b"PK\x03\x04\x14\0\0\0\x08\0\0\0!\0hello.txt".to_vec();
    let json = br#"{"pages": [], "version": 1, "magic": "WIKIDEX"}"#.to_vec();
    let zeros = vec![0u8; 1 << 20];
    let text = b"# Revenue\n\nRevenue is recognized monthly.\n".to_vec();
    for (what, bytes) in [
        ("png", png),
        ("zip", zip),
        ("json", json),
        ("1 MiB of zeros", zeros),
        ("markdown", text),
    ] {
        assert_eq!(load_error(&bytes, what), "not_an_index", "{what}");
    }
}

/// The crate treats empty input as a blob truncated before its magic (its own unit test
/// `foreign_bytes_are_not_an_index` pins `corrupt_index`), not as a foreign file.
#[test]
fn empty_input_is_rejected_as_a_truncated_index() {
    assert_eq!(load_error(b"", "empty input"), "corrupt_index");
}

#[test]
fn blob_with_trailing_bytes_is_corrupt() {
    let mut bytes = small_blob();
    bytes.extend_from_slice(b"extra");
    assert_eq!(load_error(&bytes, "trailing bytes"), "corrupt_index");
}

/// Exercises every read path of a loaded index and checks what each returns (`check`): a
/// tampered index that loads must answer like any index, or refuse with the documented code.
/// Any panic fails the caller.
fn use_everything(index: &Index) {
    let opts = SearchOptions::default();
    check::search(index, "x", &opts);
    let explain = SearchOptions {
        explain: true,
        chunks: true,
        limit: Some(100),
        ..Default::default()
    };
    check::search(
        index,
        "revenue recognized churn accounts refunds ünïcode rev",
        &explain,
    );
    let token = SearchOptions {
        lanes: Some(vec![Lane::Token]),
        scope: Some(wikidex::Scope::User("alice".into())),
        ..Default::default()
    };
    check::search(index, "rev chu", &token);
    let ranked = index
        .rank("revenue", &opts)
        .expect("rank with valid options");
    assert!(ranked.len() <= check::limit(&opts));
    for r in &ranked {
        assert!(r.page < index.pages().len() && r.chunk < index.chunk_count());
    }
    for page in index.pages() {
        let found = index
            .page(&page.key, Some(&page.scope))
            .unwrap_or_else(|e| panic!("page {} of the page list: {e}", page.id()));
        assert_eq!((&found.key, &found.scope), (&page.key, &page.scope));
        let chunks = index
            .chunks_of(&page.key, Some(&page.scope))
            .unwrap_or_else(|e| panic!("chunks of {}: {e}", page.id()));
        assert!(!chunks.is_empty(), "{} has no chunk", page.id());
        for c in &chunks {
            let again = index
                .chunk(&c.id)
                .unwrap_or_else(|e| panic!("chunk {} of chunks_of: {e}", c.id));
            assert_eq!((&again.text, &again.hash), (&c.text, &c.hash), "{}", c.id);
        }
        for ordinal in 0..chunks.len() + 2 {
            let id = wikidex::chunk::chunk_id(&page.id(), ordinal);
            match index.chunk(&id) {
                Ok(c) => {
                    assert!(ordinal < chunks.len(), "{id} resolves past the last chunk");
                    assert_eq!(c.id, id);
                }
                Err(e) => {
                    assert_eq!(e.code(), "unknown_chunk", "{id}: {e}");
                    assert!(
                        ordinal >= chunks.len(),
                        "{id} of chunks_of does not resolve"
                    );
                }
            }
        }
    }
    let bytes = index.to_bytes().expect("a loaded index saves");
    let again = Index::from_bytes(&bytes).expect("what an index saves loads");
    assert_eq!(again.to_bytes().unwrap(), bytes, "saving is not stable");
}

#[test]
fn resealed_payload_with_any_byte_tampered_never_panics() {
    let bytes = small_blob();
    let mut loaded = 0usize;
    for at in HEADER_LEN..bytes.len() {
        for value in [0xFFu8, 0x00] {
            if bytes[at] == value {
                continue;
            }
            let mut bad = bytes.clone();
            bad[at] = value;
            reseal(&mut bad);
            let what = format!("payload byte {at} set to {value:#04x} with a valid checksum");
            if let Ok(index) = load(&bad, &what) {
                loaded += 1;
                catch_unwind(AssertUnwindSafe(|| use_everything(&index)))
                    .unwrap_or_else(|_| panic!("using the index loaded from {what} panicked"));
            }
        }
    }
    // Some tampered bytes (inside page text, say) still make a consistent index.
    assert!(loaded > 0);
}

#[test]
fn resealed_payload_with_any_byte_nudged_by_one_never_panics() {
    // ±1 keeps most varints well-formed, so counts, offsets and spans change instead of the
    // decoder giving up: this reaches the consistency checks behind the codec.
    let bytes = small_blob();
    for at in HEADER_LEN..bytes.len() {
        for delta in [1u8, 255] {
            let mut bad = bytes.clone();
            bad[at] = bad[at].wrapping_add(delta);
            reseal(&mut bad);
            let what = format!("payload byte {at} nudged by {delta} with a valid checksum");
            if let Ok(index) = load(&bad, &what) {
                catch_unwind(AssertUnwindSafe(|| use_everything(&index)))
                    .unwrap_or_else(|_| panic!("using the index loaded from {what} panicked"));
            }
        }
    }
}

#[test]
fn resealed_example_wiki_payload_with_every_331st_byte_tampered_never_panics() {
    let bytes = example_blob();
    for at in (HEADER_LEN..bytes.len()).step_by(331) {
        let mut bad = bytes.to_vec();
        bad[at] ^= 0x55;
        reseal(&mut bad);
        let what = format!("example payload byte {at} xor 0x55 with a valid checksum");
        if let Ok(index) = load(&bad, &what) {
            catch_unwind(AssertUnwindSafe(|| use_everything(&index)))
                .unwrap_or_else(|_| panic!("using the index loaded from {what} panicked"));
        }
    }
}

/// Replaces the payload with `edit(payload)` and rewrites the length and checksum, as a buggy
/// or hostile writer would.
fn with_payload(bytes: &[u8], edit: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    let mut payload = bytes[HEADER_LEN..].to_vec();
    edit(&mut payload);
    let mut out = bytes[..HEADER_LEN].to_vec();
    out[16..24].copy_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(&payload);
    reseal(&mut out);
    out
}

/// Postcard's unsigned varint.
fn varint(mut v: u64) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let byte = (v & 0x7F) as u8;
        v >>= 7;
        if v == 0 {
            out.push(byte);
            return out;
        }
        out.push(byte | 0x80);
    }
}

/// Offset of the page count in the v1 payload of a default-config index: the configuration
/// comes first (max_tokens 200 and overlap 50 as varints, the language tag, k1 and b, k and
/// three lane weights as f32, max_query_chars 1000 as a varint, `positions` as a bool).
const PAGE_COUNT_AT: usize = 2 + 1 + 1 + 8 + 16 + 2 + 1;

#[test]
fn huge_declared_page_count_is_corrupt_not_an_allocation() {
    let bytes = small_blob();
    assert_eq!(
        bytes[HEADER_LEN + PAGE_COUNT_AT] as usize,
        SMALL_WIKI.len(),
        "payload layout changed"
    );
    for count in [1u64 << 20, 1 << 40, u64::MAX >> 1] {
        let bad = with_payload(&bytes, |p| {
            p.splice(PAGE_COUNT_AT..PAGE_COUNT_AT + 1, varint(count));
        });
        assert_eq!(
            load_error(&bad, &format!("{count} pages declared")),
            "corrupt_index"
        );
    }
}

/// A vector section (`Some`, model id, dimension, fingerprint, f32 values) in postcard.
fn vector_section(dim: u64, values: usize) -> Vec<u8> {
    let mut out = vec![1u8];
    out.extend(varint(1));
    out.push(b'm');
    out.extend(varint(dim));
    out.extend(varint(1));
    out.push(b'f');
    out.extend(varint(0)); // VectorValues::F32
    out.extend(varint(values as u64));
    for i in 0..values {
        out.extend_from_slice(&(i as f32).to_le_bytes());
    }
    out.extend(varint(0)); // since v5, the prompts: query ""
    out.extend(varint(0)); // passage ""
    out.extend_from_slice(&0f32.to_le_bytes()); // and the floor
    out
}

/// A configuration without term positions: the payload then ends with an empty vector
/// section, the four empty lists of an empty graph and raw layer, two empty lists (chunk
/// numbers, page times) and no positions, a zero byte each.
fn no_positions() -> wikidex::Config {
    wikidex::Config {
        positions: false,
        ..Default::default()
    }
}

/// A wiki without links or raw documents, built without positions (see [`no_positions`]).
fn build_linkless() -> Index {
    let mut b = IndexBuilder::new(no_positions()).unwrap();
    b.add_file("global/a.md", b"Alpha text about revenue.")
        .unwrap();
    b.add_file(
        "global/b.md",
        b"Beta text about churn.\n\nA second paragraph.",
    )
    .unwrap();
    b.build().unwrap().0
}

fn with_vectors(dim: u64, values: usize) -> Vec<u8> {
    let bytes = build_linkless().to_bytes().unwrap();
    assert_eq!(
        bytes[bytes.len() - 8..],
        [0, 0, 0, 0, 0, 0, 0, 0],
        "the payload no longer ends with an empty vector section, graph, raw layer, chunk \
         numbers, page times and positions"
    );
    with_payload(&bytes, |p| {
        p.truncate(p.len() - 8);
        p.extend(vector_section(dim, values));
        p.extend([0, 0, 0, 0, 0, 0, 0]);
    })
}

#[test]
fn vector_section_with_one_vector_per_chunk_loads() {
    let chunks = build_linkless().chunk_count();
    let index = load(&with_vectors(3, 3 * chunks), "a well-formed vector section").unwrap();
    use_everything(&index);
}

#[test]
fn vector_section_of_the_wrong_size_is_corrupt() {
    let chunks = build_linkless().chunk_count();
    for (dim, values) in [(3, 3 * chunks - 1), (3, 3 * chunks + 3), (0, 0), (1, 0)] {
        let bad = with_vectors(dim, values);
        assert_eq!(
            load_error(&bad, &format!("dim {dim}, {values} values")),
            "corrupt_index"
        );
    }
}

#[test]
fn a_semantic_floor_outside_0_to_1_is_corrupt() {
    let chunks = build_linkless().chunk_count();
    let good = with_vectors(3, 3 * chunks);
    for bad_floor in [f32::NAN, -0.5, 1.5, f32::INFINITY] {
        let bytes = good.clone();
        let at = bytes.len() - 7 - 4;
        let mut bad = with_payload(&bytes, |_| {});
        bad[at..at + 4].copy_from_slice(&bad_floor.to_le_bytes());
        reseal(&mut bad);
        assert_eq!(
            load_error(&bad, &format!("floor {bad_floor}")),
            "corrupt_index"
        );
    }
    let mut ok = good.clone();
    let at = ok.len() - 7 - 4;
    ok[at..at + 4].copy_from_slice(&0.5f32.to_le_bytes());
    reseal(&mut ok);
    let index = load(&ok, "floor 0.5").unwrap();
    assert_eq!(index.vectors().unwrap().floor, 0.5);
}

#[test]
fn vector_section_whose_size_overflows_is_corrupt() {
    let bad = with_vectors(u64::from(u32::MAX), 0);
    assert_eq!(load_error(&bad, "dimension u32::MAX"), "corrupt_index");
    let bad = with_vectors(1 << 40, 0);
    assert_eq!(load_error(&bad, "dimension 2^40"), "corrupt_index");
}

#[test]
fn resealed_blob_with_an_unchanged_payload_loads() {
    let mut bytes = small_blob();
    reseal(&mut bytes);
    assert!(load(&bytes, "a resealed blob").is_ok());
}

#[test]
fn building_the_same_folder_twice_gives_identical_bytes() {
    let a = build_dir(&example_wiki()).to_bytes().unwrap();
    assert_eq!(a, example_blob());
}

#[test]
fn loading_and_saving_again_gives_identical_bytes() {
    let bytes = example_blob();
    let again = Index::from_bytes(bytes).unwrap().to_bytes().unwrap();
    assert!(again == bytes, "a load/save round trip changed the blob");
}

/// Markdown files under `root` as (`/`-separated relative path, full path).
fn markdown_files(root: &Path) -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    let mut stack = vec![(root.to_path_buf(), String::new())];
    while let Some((dir, rel)) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let entry = entry.unwrap();
            let name = entry.file_name().to_string_lossy().into_owned();
            let rel = if rel.is_empty() {
                name.clone()
            } else {
                format!("{rel}/{name}")
            };
            if entry.file_type().unwrap().is_dir() {
                stack.push((entry.path(), rel));
            } else if name.ends_with(".md") || name.ends_with(".txt") {
                out.push((rel, entry.path()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn adding_the_example_wiki_files_in_reverse_order_gives_identical_bytes() {
    let files = markdown_files(&example_wiki());
    // 43 pages (one a planted duplicate key) and 2 raw documents.
    assert_eq!(files.len(), 45);
    let mut b = IndexBuilder::new(Default::default()).unwrap();
    for (rel, full) in files.iter().rev() {
        b.add_file(rel, &std::fs::read(full).unwrap()).unwrap();
    }
    let reversed = b.build().unwrap().0.to_bytes().unwrap();
    assert!(reversed == example_blob(), "file order changed the blob");
}

#[test]
fn saved_index_opens_to_the_same_bytes_and_leaves_no_temporary_file() {
    let dir = temp_dir("save");
    let index = build_small();
    let path = dir.join("wiki.wdx");
    index.save(&path).unwrap();
    let opened = Index::open(&path).unwrap();
    assert_eq!(opened.to_bytes().unwrap(), index.to_bytes().unwrap());
    assert_eq!(dir_entries(&dir), ["wiki.wdx"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn saving_over_an_existing_index_replaces_it() {
    let dir = temp_dir("replace");
    let path = dir.join("wiki.wdx");
    // An older blob, or one cut short: what a save may replace (any other content is refused).
    std::fs::write(&path, b"WIKIDEX\0old contents").unwrap();
    let index = build_small();
    index.save(&path).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), index.to_bytes().unwrap());
    assert_eq!(dir_entries(&dir), ["wiki.wdx"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn saving_into_a_missing_folder_is_an_io_error_and_leaves_nothing_behind() {
    let dir = temp_dir("missing");
    let missing = dir.join("no-such-folder");
    let path = missing.join("wiki.wdx");
    let err = build_small().save(&path).unwrap_err();
    assert_eq!(err.code(), "io");
    assert!(!missing.exists());
    assert!(dir_entries(&dir).is_empty());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn opening_a_missing_file_is_an_io_error() {
    let dir = temp_dir("open");
    let err = Index::open(&dir.join("absent.wdx")).unwrap_err();
    assert_eq!(err.code(), "io");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn opening_a_foreign_file_is_not_an_index() {
    let dir = temp_dir("foreign");
    let path = dir.join("notes.md");
    std::fs::write(&path, "# Not an index\n").unwrap();
    assert_eq!(Index::open(&path).unwrap_err().code(), "not_an_index");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Format compatibility: every committed blob of a released format version must still load and
/// answer. `tests/fixtures/blobs/v<N>.wdx` are never regenerated (v1: the tiny wiki of
/// `tests/vectors/search.json`, built when format v1 was released).
#[test]
fn committed_v1_blob_still_loads_and_answers() {
    let index = Index::open(&fixture("v1.wdx")).expect("format v1 blob loads");
    assert_eq!(index.pages().len(), 8);
    let opts = wikidex::SearchOptions {
        always: wikidex::AlwaysMode::Separate,
        ..Default::default()
    };
    let results = index.search("how is revenue recognized", &opts).unwrap();
    assert_eq!(results.hits[0].page_id, "revenue");
    assert_eq!(results.always[0].page_id, "pii_rule");
    assert_eq!(index.chunk("arr::chunk_0").unwrap().key, "arr");
}

/// The v1 fixture, upgraded, re-encodes to exactly what building its wiki today gives: the
/// upgrade derives the same graph a fresh build does.
#[test]
fn upgraded_v1_blob_equals_a_fresh_build_of_its_wiki() {
    let upgraded = Index::open(&fixture("v1.wdx")).unwrap().to_bytes().unwrap();
    assert_eq!(upgraded[8..12], FORMAT_VERSION.to_le_bytes());
    let fresh = search_json_build(no_positions());
    assert!(
        upgraded == fresh,
        "the upgraded v1 blob differs from a fresh build"
    );
}

#[test]
fn a_v3_blob_loads_with_chunk_ids_by_position_and_saves_as_a_fresh_build() {
    // v3 is v5 without the chunk numbers and page times at the end of the payload; the v5
    // fixture (built without file times, every chunk numbered by position) stores an empty
    // list of each (a zero byte each), so dropping those two bytes gives a v3 blob.
    let v5 = std::fs::read(fixture("v5.wdx")).unwrap();
    assert_eq!(
        v5[v5.len() - 2..],
        [0, 0],
        "the v5 fixture stores numbers or times"
    );
    let mut v3 = with_payload(&v5, |p| p.truncate(p.len() - 2));
    v3[8..12].copy_from_slice(&3u32.to_le_bytes());
    let index = load(&v3, "the v5 fixture as v3").expect("a v3 blob loads");
    assert_eq!(index.to_bytes().unwrap(), search_json_build(no_positions()));
    let chunks = index.chunks_of("revenue", None).unwrap();
    assert!(!chunks.is_empty());
    for c in &chunks {
        assert_eq!(c.id, format!("revenue::chunk_{}", c.ordinal));
    }
    // A v5 payload read as v3 has bytes left over: rejected, not misread.
    let mut wrong = v5.clone();
    wrong[8..12].copy_from_slice(&3u32.to_le_bytes());
    assert_eq!(load_error(&wrong, "v5 labelled v3"), "corrupt_index");
}

/// The v6 fixture (the wiki of `tests/vectors/search.json`, built by the last v6 build with
/// positions and without file times or a model) loads with its positions, answers a phrase,
/// and saves as a fresh build does today: the same index in fewer bytes (v7 stores the chunk
/// table without hashes and the lexical index compactly).
#[test]
fn a_v6_blob_loads_with_its_positions_and_saves_as_a_fresh_build() {
    let v6 = std::fs::read(fixture("v6.wdx")).unwrap();
    assert_eq!(v6[8..12], 6u32.to_le_bytes());
    let index = load(&v6, "the v6 fixture").expect("a v6 blob loads");
    assert_eq!(index.loaded_format(), Some(6));
    assert!(index.config().positions);
    let opts = wikidex::SearchOptions::default();
    let r = index.search("\"recurring revenue\"", &opts).unwrap();
    assert_eq!(r.phrases.as_ref().unwrap().matched, 1);
    assert_eq!(r.hits[0].page_id, "arr");
    let hashes = |index: &Index| -> Vec<String> {
        let chunks = index.chunks_of("revenue", None).unwrap();
        chunks.into_iter().map(|c| c.hash).collect()
    };
    let saved = index.to_bytes().unwrap();
    assert_eq!(saved, search_json_build(wikidex::Config::default()));
    assert!(
        saved.len() < v6.len(),
        "{} >= {} bytes",
        saved.len(),
        v6.len()
    );
    // The hashes a v7 load derives are the ones v6 stored.
    let reloaded = load(&saved, "the v6 fixture saved as v7").unwrap();
    assert_eq!(hashes(&reloaded), hashes(&index));
    // A v7 payload labelled v6 is rejected, not misread.
    let mut wrong = saved.clone();
    wrong[8..12].copy_from_slice(&6u32.to_le_bytes());
    assert_eq!(load_error(&wrong, "v7 labelled v6"), "corrupt_index");
}

/// The v7 to v12 fixtures (the wiki of `tests/vectors/search.json`, with positions and
/// without file times or a model; each sectioned one written by the first build that wrote
/// its version): v7 and v12 are what a fresh build writes today, and v8 to v12, the same
/// index sectioned, load whole as the same index and answer in parts as they do whole.
#[test]
fn the_v7_to_v12_blobs_load_as_the_same_index() {
    let v7 = std::fs::read(fixture("v7.wdx")).unwrap();
    let sectioned: Vec<(Vec<u8>, u32)> = (8..=12u32)
        .map(|v| (std::fs::read(fixture(&format!("v{v}.wdx"))).unwrap(), v))
        .collect();
    assert_eq!(v7[8..12], 7u32.to_le_bytes());
    assert_eq!(v7, search_json_build(wikidex::Config::default()));
    let v12 = &sectioned[4].0;
    let query = "\"recurring revenue\"";
    let opts = wikidex::SearchOptions::default();
    for (sectioned, version) in &sectioned {
        assert_eq!(sectioned[8..12], version.to_le_bytes());
        let whole = load(sectioned, "a sectioned fixture").expect("a sectioned blob loads");
        assert_eq!(whole.loaded_format(), Some(*version));
        assert_eq!(whole.to_bytes().unwrap(), v7);
        // Written again, sectioned, it is today's layout.
        assert_eq!(&whole.to_sectioned_bytes().unwrap(), v12);
        let want = whole.search(query, &opts).unwrap();
        assert_eq!(want.hits[0].page_id, "arr");
        let end = wikidex::RangedIndex::head_end(sectioned).unwrap() as usize;
        let mut ranged = wikidex::RangedIndex::open(&sectioned[..end]).unwrap();
        let got = loop {
            match ranged.search(query, &opts) {
                Err(Error::NotLoaded { ranges }) => {
                    for [s, e] in ranges {
                        ranged
                            .supply(s, &sectioned[s as usize..e as usize])
                            .unwrap();
                    }
                }
                other => break other.unwrap(),
            }
        };
        assert_eq!(got, want);
    }
}

/// A committed blob of `tests/fixtures/blobs/` (shared by the test modules).
pub(crate) fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/blobs")
        .join(name)
}

/// The files of the wiki of `tests/vectors/search.json`, path → text (shared by the test
/// modules).
pub(crate) fn search_json_files() -> std::collections::BTreeMap<String, String> {
    let vector: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/vectors/search.json"),
        )
        .unwrap(),
    )
    .unwrap();
    serde_json::from_value(vector["files"].clone()).unwrap()
}

/// The bytes of a fresh build of [`search_json_files`] with `config` (no model, no file
/// times).
fn search_json_build(config: wikidex::Config) -> Vec<u8> {
    let mut b = IndexBuilder::new(config).unwrap();
    for (p, t) in &search_json_files() {
        b.add_file(p, t.as_bytes()).unwrap();
    }
    b.build().unwrap().0.to_bytes().unwrap()
}

#[test]
fn chunk_numbers_repeated_within_a_page_are_corrupt() {
    let config = wikidex::Config {
        chunk: wikidex::ChunkConfig {
            max_tokens: 16,
            overlap_tokens: 0,
        },
        ..Default::default()
    };
    let para = |w: &str| format!("{w} one two three four five six seven eight nine ten eleven.");
    let text = |ps: &[String]| ps.join("\n\n");
    let mut b = IndexBuilder::new(wikidex::Config {
        positions: false,
        ..config
    })
    .unwrap();
    b.add_file(
        "global/a.md",
        text(&[para("alpha"), para("beta")]).as_bytes(),
    )
    .unwrap();
    let mut index = b.build().unwrap().0;
    index
        .upsert_page(
            "global/a.md",
            &text(&[para("new"), para("alpha"), para("beta")]),
        )
        .unwrap();
    let bytes = index.to_bytes().unwrap();
    // The payload ends with the numbers (a count of 3, then 2, 0, 1), no page times and no
    // positions.
    assert_eq!(bytes[bytes.len() - 6..], [3, 2, 0, 1, 0, 0]);
    assert!(load(&bytes, "an edited index").is_ok());
    let n = bytes.len();
    let bad = with_payload(&bytes, |p| {
        let m = p.len();
        p[m - 3] = 0;
    });
    assert_eq!(bad.len(), n);
    assert_eq!(load_error(&bad, "a number repeated"), "corrupt_index");
    let short = with_payload(&bytes, |p| {
        let m = p.len();
        p[m - 6] = 2;
        p.remove(m - 3);
    });
    assert_eq!(
        load_error(&short, "fewer numbers than chunks"),
        "corrupt_index"
    );
}
