//! Writes the seed inputs of every target into `fuzz/corpus/<target>/seed_*`, in each
//! target's input format (see src/lib.rs): the example wiki's pages, the test fixtures'
//! wikis and blobs, the demo's queries and answers, and a few small hostile cases.
//!
//! `cargo run --manifest-path fuzz/Cargo.toml --example seeds`, then `cargo fuzz cmin` each
//! target before committing (`make fuzz-seeds` does both).

use std::fs;
use std::path::{Path, PathBuf};

use wikidex::{Config, IndexBuilder, SearchOptions};

fn main() {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR"));
    let repo = fuzz.parent().expect("fuzz/ is in the repository");
    let mut seeds = Seeds {
        corpus: fuzz.join("corpus"),
        written: 0,
    };
    blob_seeds(repo, &mut seeds);
    page_seeds(repo, &mut seeds);
    search_seeds(&mut seeds);
    verify_seeds(&mut seeds);
    header_seeds(&mut seeds);
    println!(
        "{} seeds written under {}",
        seeds.written,
        seeds.corpus.display()
    );
}

struct Seeds {
    corpus: PathBuf,
    written: usize,
}

impl Seeds {
    fn put(&mut self, target: &str, name: &str, bytes: &[u8]) {
        let dir = self.corpus.join(target);
        fs::create_dir_all(&dir).expect("corpus folder");
        let name: String = name
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        fs::write(dir.join(format!("seed_{name}")), bytes).expect("seed written");
        self.written += 1;
    }
}

/// Each blob twice: as it is (mode 0) and with the checksum fix-up (mode 1).
fn blob_seeds(repo: &Path, seeds: &mut Seeds) {
    let mut blobs = Vec::new();
    // The committed blob of each released format version.
    let path = repo.join("core/tests/fixtures/blobs/format-1.wdx");
    blobs.push(("format_1".to_string(), fs::read(path).expect("format 1 blob")));
    for wiki in ["clean", "ktx"] {
        let mut b = IndexBuilder::new(Config::default()).expect("default config");
        b.add_dir(&repo.join("core/tests/fixtures/wikis").join(wiki))
            .expect("fixture wiki readable");
        let (index, _) = b.build().expect("fixture wiki builds");
        blobs.push((wiki.to_string(), index.to_bytes().expect("encodes")));
    }
    let (with_vectors, _) = wikidex_fuzz::fixture();
    blobs.push((
        "vectors".to_string(),
        with_vectors.to_bytes().expect("encodes"),
    ));
    for (name, blob) in blobs {
        for mode in [0u8, 1] {
            seeds.put(
                "blob",
                &format!("{name}_mode{mode}"),
                &[&[mode], &blob[..]].concat(),
            );
        }
    }
}

/// The first byte of a page input picks its path (`wikidex_fuzz::PAGE_PATHS`): 0 global, 2 a
/// user's, 4 a raw document.
fn selector(path: &str) -> u8 {
    if path.contains("/raw/") {
        4
    } else if path.contains("/user/") {
        2
    } else {
        0
    }
}

fn page_seeds(repo: &Path, seeds: &mut Seeds) {
    let mut files = Vec::new();
    for dir in ["examples/wiki", "core/tests/fixtures/wikis"] {
        collect_markdown(&repo.join(dir), &mut files);
    }
    files.sort();
    for path in &files {
        let rel = path.strip_prefix(repo).expect("under the repository");
        let rel = rel.to_string_lossy();
        let bytes = fs::read(path).expect("page readable");
        seeds.put("page", &rel, &[&[selector(&rel)], &bytes[..]].concat());
    }
    // Several pages in one input: a shadowing pair, a page with its raw source.
    let groups: [&[(u8, &str)]; 3] = [
        &[
            (0, "examples/wiki/global/revenue.md"),
            (2, "examples/wiki/user/alice/revenue.md"),
            (4, "examples/wiki/raw/slack_2024_03_12.md"),
        ],
        &[
            (1, "core/tests/fixtures/wikis/ktx/wiki/global/churn_rate.md"),
            (
                2,
                "core/tests/fixtures/wikis/ktx/wiki/user/carol/churn_rate.md",
            ),
        ],
        &[
            (0, "core/tests/fixtures/wikis/clean/global/crash.md"),
            (1, "core/tests/fixtures/wikis/clean/global/leak.md"),
            (5, "core/tests/fixtures/wikis/clean/raw/log.txt"),
        ],
    ];
    for (i, group) in groups.iter().enumerate() {
        let mut input = Vec::new();
        for (n, (sel, path)) in group.iter().enumerate() {
            if n > 0 {
                input.push(0xFF);
            }
            input.push(*sel);
            input.extend(fs::read(repo.join(path)).expect("page readable"));
        }
        seeds.put("page", &format!("group{i}"), &input);
    }
    let hostile: [(&str, &[u8]); 12] = [
        ("alias", b"\0---\nbase: &a [x, y]\ntags: *a\n---\nAn alias, small.\n"),
        ("nested", b"\0---\nextra: [[[[[[[[[[[[1]]]]]]]]]]]]\n---\nNested.\n"),
        ("bad_relations", b"\0---\nrelations:\n  - {target: a, type: causes, confidence: high}\n  - {target: b, confidence: .nan}\n  - {target: c, confidence: 0.5}\n---\n[[a]] [[b]]\n"),
        ("rule_first_line", b"\0---\n\nText under a horizontal rule.\n"),
        ("crlf", b"\0---\r\ntitle: CRLF\r\ntags: [a]\r\n---\r\n# Heading\r\n\r\nBody [[x]].\r\n"),
        ("bom", b"\0\xEF\xBB\xBF---\ntitle: BOM\n---\nBody.\n"),
        ("invalid_utf8", b"\0---\ntitle: bad\n---\nBody \xC3\x28 here.\n"),
        ("links", b"\0# Index\n\n- [[p1]]\n- [[p2|two]]\n- [[p3#section]]\n- ![[img.png]]\n- [md](p4.md)\n- [[p1]]\n"),
        ("not_mapping", b"\0---\n- a\n- b\n---\nBody.\n"),
        ("usage_always", b"\0---\nusage_mode: always\nsources: [\"raw/x::chunk_0\"]\nredirect_from: [old, Old Name]\naliases: alias\n---\nAlways shown.\n"),
        ("code_fence", b"\0```\n[[not_a_link]]\n```\n~~~\n---\n~~~\n<!-- from: raw/x.md -->\n"),
        ("empty", b"\0"),
    ];
    for (name, bytes) in hostile {
        seeds.put("page", name, bytes);
    }
}

fn collect_markdown(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("folder readable") {
        let path = entry.expect("entry").path();
        let hidden = path
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with('.'));
        if hidden {
            continue;
        }
        if path.is_dir() {
            collect_markdown(&path, out);
        } else if path.extension().is_some_and(|e| e == "md" || e == "txt") {
            out.push(path);
        }
    }
}

/// Header bytes: limit, lanes, flags, scope, query vector; then query, scope name, tags,
/// types separated by NUL.
fn search_seeds(seeds: &mut Seeds) {
    let cases: [(&str, [u8; 5], &str); 14] = [
        (
            "default",
            [0, 0x80, 0x04, 0, 0],
            "why did the nightly job crash",
        ),
        (
            "outage",
            [0, 0x80, 0x04, 0, 0],
            "who do I page for an outage",
        ),
        (
            "filters",
            [4, 0x07, 0x07, 2, 6],
            "how is revenue defined\0\0finance\0metric",
        ),
        ("prefix_token", [1, 0x04, 0x02, 1, 0], "recog"),
        (
            "all_flags",
            [255, 0x1F, 0x7F, 4, 3],
            "PII in exports\0alice\0ops,metrics\0",
        ),
        (
            "scope_parse",
            [0, 0x02, 0x10, 5, 2],
            "who do I page\0user/alice",
        ),
        ("bad_vector", [101, 0x02, 0x09, 3, 5], "revenue"),
        ("empty", [0, 0x80, 0, 0, 1], ""),
        (
            "syntax",
            [0, 0x80, 0x06, 0, 0],
            "\"exact phrase\" -not OR revenue* title:x",
        ),
        (
            "unicode",
            [0, 0x80, 0x04, 0, 0],
            "日本 é ß 👩\u{200d}👩\u{200d}👧 Revenue",
        ),
        ("redirect", [0, 0x80, 0x04, 1, 0], "churn"),
        ("alias", [0, 0x80, 0x04, 0, 0], "sales"),
        ("chunk_id", [2, 0x01, 0x03, 0, 0], "revenue::chunk_0"),
        (
            "raw_id",
            [0, 0x80, 0x14, 0, 7],
            "raw/slack_2024_03_12::chunk_0",
        ),
    ];
    for (name, header, text) in cases {
        seeds.put("search", name, &[&header[..], text.as_bytes()].concat());
    }
}

/// Byte 0 picks the calls; then the answer and ids separated by NUL (`+id` offered).
fn verify_seeds(seeds: &mut Seeds) {
    let oom = "The segment_enricher pod was OOM-killed three times, and nightly_build failed at 03:31 UTC.";
    let cases: [(&str, u8, String); 9] = [
        (
            "demo",
            0,
            format!("{oom}\0raw/slack_2024_03_12::chunk_0\0made_up::chunk_0"),
        ),
        (
            "inline_ids",
            1,
            format!("{oom} [raw/slack_2024_03_12::chunk_0]. Revenue is booked in the service month [revenue::chunk_0].\0revenue::chunk_0"),
        ),
        (
            "hash",
            1,
            "Churn lowers revenue.\0revenue::chunk_0@0123456789abcdef\0churn_rate::chunk_0@".into(),
        ),
        (
            "offered",
            1,
            "Page the on-call engineer for any outage of the nightly pipeline.\0oncall::chunk_0\0+oncall::chunk_0\0+revenue::chunk_0\0+made_up::chunk_3".into(),
        ),
        (
            "page_ids",
            1,
            "Alice's draft adds marketplace sales.\0revenue\0user/alice/revenue::chunk_0\0churn".into(),
        ),
        (
            "uncited",
            2,
            format!("Revenue is booked in the service month, net of refunds. {oom} The moon is made of cheese and tastes of nothing at all. Short."),
        ),
        ("loaded", 4, format!("{oom}\0raw/slack_2024_03_12::chunk_0")),
        (
            "unicode",
            3,
            "Le chiffre d'affaires… 日本語の文。 Ünïcödé revenue, net of refunds!\0revenue::chunk_0".into(),
        ),
        ("empty", 0, String::new()),
    ];
    for (name, mode, text) in cases {
        seeds.put("verify", name, &[&[mode][..], text.as_bytes()].concat());
    }
}

fn header_seeds(seeds: &mut Seeds) {
    let (index, _) = wikidex_fuzz::fixture();
    for (name, query) in [
        ("block_revenue", "revenue"),
        ("block_nightly", "nightly crash"),
    ] {
        let results = index
            .search(query, &SearchOptions::default())
            .expect("fixture search");
        seeds.put(
            "headers",
            name,
            index.prompt_block(&results).text.as_bytes(),
        );
    }
    let cases: [(&str, &str); 6] = [
        ("one", "[page revenue · chunk revenue::chunk_0 · score 0.0325] Revenue"),
        ("pipes", "[page a | chunk a::chunk_1 | score NaN] t [page c · chunk c::chunk_0] u"),
        ("unclosed", "[page x · chunk x::chunk_0\n[page  · chunk ] empty\n]]][[page"),
        ("scores", "[page a · chunk a::chunk_0 · score -1e40] x\n[page b · chunk b::chunk_0 · score inf] y\n[page c · chunk c::chunk_0 · score 1e-3] z"),
        ("unicode", "[page 日本 · chunk 日本::chunk_0 · score 0.5] Ünïcödé · title | with | separators"),
        ("user", "text before [page user/alice/revenue · chunk user/alice/revenue::chunk_2] Draft\r\n"),
    ];
    for (name, text) in cases {
        seeds.put("headers", name, text.as_bytes());
    }
}
