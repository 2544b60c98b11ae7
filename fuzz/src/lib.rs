//! The bodies of the fuzz targets, one plain function per target.
//!
//! The libFuzzer binaries in `fuzz/fuzz_targets/` call them, and so does the replay test in
//! `core/tests/it/fuzz_replay.rs` (which includes this file with `#[path]`), so `make test`
//! runs every committed corpus file through exactly the code the fuzzer ran. Hence this file
//! uses only `wikidex` and the crates `wikidex` itself depends on.
//!
//! A body returns normally for every input; a panic (or an abort, a hang, running out of
//! memory) is the finding. Besides "never panic", some bodies assert a property the issue
//! asks for (a blob that was written loads again).
//!
//! Inputs are plain bytes, read front to back: a few header bytes pick options, the rest is
//! text. Raw text stays raw (a real page or answer, with its header bytes, is a seed), which
//! the `arbitrary` crate's encoding would not give; and the replay test needs no dependency
//! beyond what `wikidex` already has.

use std::sync::{Arc, OnceLock};

use wikidex::cite::{self, Cited};
use wikidex::{
    AlwaysMode, Config, Embedder, EvidenceOptions, Index, IndexBuilder, Lane, Scope, SearchOptions,
    Session, TraverseOptions, UsageMode, WriteOptions,
};

/// Header bytes first, then the rest; missing header bytes read as 0.
struct Input<'a> {
    bytes: &'a [u8],
}

impl<'a> Input<'a> {
    fn new(bytes: &'a [u8]) -> Input<'a> {
        Input { bytes }
    }

    fn byte(&mut self) -> u8 {
        match self.bytes.split_first() {
            Some((&b, rest)) => {
                self.bytes = rest;
                b
            }
            None => 0,
        }
    }

    /// The rest as text: invalid UTF-8 becomes U+FFFD (the targets that take bytes, blob
    /// and page, see invalid UTF-8 as it is).
    fn text(self) -> String {
        String::from_utf8_lossy(self.bytes).into_owned()
    }
}

/// Target `blob`: [`Index::from_bytes`] on any bytes, then a loaded index must work.
///
/// Byte 0 is a mode; the rest is the blob. With bit 0 of the mode set, the header's BLAKE3
/// hash is rewritten to match the head (as long as the header says, cut at the blob's end), so
/// the mutations reach the head decoder and its consistency checks instead of stopping at the
/// checksum. (The sections' tags are keyed with that hash: a changed head makes every section
/// a mismatch, which the core refuses.)
pub fn blob(data: &[u8]) {
    let Some((&mode, blob)) = data.split_first() else {
        return;
    };
    let mut blob = blob.to_vec();
    let header = wikidex::blob::HEADER_LEN;
    if mode & 1 == 1 && blob.len() >= header {
        let declared = u64::from_le_bytes(blob[16..24].try_into().expect("8 bytes"));
        let head_len = declared.min((blob.len() - header) as u64) as usize;
        let hash = blake3::hash(&blob[header..header + head_len]);
        blob[24..56].copy_from_slice(hash.as_bytes());
    }
    let Ok(index) = Index::from_bytes(&blob) else {
        return;
    };
    exercise(&index, "revenue nightly outage", mode);
    let again = index.to_bytes().expect("a loaded index encodes");
    Index::from_bytes(&again).expect("a loaded index, encoded again, loads");
}

/// Paths a page of the `page` target may have (picked by its first byte): both scopes, a
/// shadowing pair, the raw layer, a `wiki/` prefix, odd file names.
const PAGE_PATHS: [&str; 12] = [
    "global/revenue.md",
    "global/churn_rate.md",
    "user/alice/revenue.md",
    "wiki/global/Revenue.md",
    "raw/slack_2024_03_12.md",
    "raw/airflow/log.txt",
    "global/notes/a b/Émoji 🎉.md",
    "user/bob/deep/x/y.md",
    "global/.md",
    "index.md",
    "global/revenue.markdown",
    "user//revenue.md",
];

/// Separates the pages of one `page` input: never part of valid UTF-8, so no valid page
/// loses a byte to it.
const PAGE_SEPARATOR: u8 = 0xFF;

/// Target `page`: [`wikidex::page::parse`] on arbitrary frontmatter + Markdown, then an
/// index of one to three such pages ([`IndexBuilder::add_file`]) searched, linted, walked,
/// updated, and saved to a blob that must load again.
///
/// The input is up to three pages separated by byte 0xFF; each page's first byte picks its
/// path from [`PAGE_PATHS`], the rest is the file's bytes (any bytes, UTF-8 or not).
pub fn page(data: &[u8]) {
    let files: Vec<(&str, &[u8])> = data
        .split(|&b| b == PAGE_SEPARATOR)
        .take(3)
        .map(|piece| match piece.split_first() {
            Some((&sel, bytes)) => (PAGE_PATHS[usize::from(sel) % PAGE_PATHS.len()], bytes),
            None => (PAGE_PATHS[0], piece),
        })
        .collect();
    for (path, bytes) in &files {
        if let Ok(text) = std::str::from_utf8(bytes) {
            let _ = wikidex::page::parse(path, text);
        }
    }
    let mut builder = IndexBuilder::new(Config::default()).expect("the default config is valid");
    for (path, bytes) in &files {
        let _ = builder.add_file(path, bytes);
    }
    let Ok((index, report)) = builder.build() else {
        return;
    };
    let _ = index.lint_with_build(&report);
    let query = index
        .pages()
        .first()
        .map_or_else(|| "revenue".to_string(), |p| p.title.clone());
    exercise(&index, &query, 0xFF);
    roundtrip(&index);
    // A write on top: the last file's text under the first file's path.
    if let (Some((path, _)), Some((_, bytes))) = (files.first(), files.last()) {
        if let Ok(text) = std::str::from_utf8(bytes) {
            if let Ok((next, _)) = index.upsert_page(path, text, &WriteOptions::default(), None) {
                exercise(&next, &query, 0x0F);
                roundtrip(&next);
            }
        }
    }
}

/// Target `search`: [`Session::search`] of the fixed [`fixture`] index (with and without a
/// model, [`sessions`]) with an arbitrary query and options, and the graph and lookup calls
/// that take a user's string.
///
/// Header bytes: limit, lanes, flags, scope, query vector; then text fields separated by
/// NUL: query, scope name, tags (comma-separated), types (comma-separated), since, until.
pub fn search(data: &[u8]) {
    let mut input = Input::new(data);
    let limit = input.byte();
    let lanes = input.byte();
    let flags = input.byte();
    let scope = input.byte();
    let vector = input.byte();
    let text = input.text();
    let mut fields = text.split('\0');
    let query = fields.next().unwrap_or("");
    let scope_name = fields.next().unwrap_or("");
    let list = |s: Option<&str>| -> Vec<String> {
        s.map(|s| s.split(',').map(str::to_string).collect())
            .unwrap_or_default()
    };
    let tags = list(fields.next());
    let types = list(fields.next());
    let since = fields.next().map(str::to_string);
    let until = fields.next().map(str::to_string);

    let (built, loaded) = sessions();
    let session = if flags & 0x10 == 0 { built } else { loaded };
    let index = session.index();
    let dim = 8;
    let opts = SearchOptions {
        limit: match limit {
            0 => None,
            255 => Some(usize::MAX),
            n => Some(usize::from(n) - 1),
        },
        lanes: (lanes & 0x80 == 0).then(|| {
            let mut v: Vec<Lane> = Lane::ALL
                .iter()
                .enumerate()
                .filter(|(i, _)| lanes & (1 << i) != 0)
                .map(|(_, l)| *l)
                .collect();
            if lanes & 0x08 != 0 {
                v.push(Lane::Lexical);
            }
            if lanes & 0x10 != 0 {
                v.reverse();
            }
            v
        }),
        tags,
        types,
        scope: match scope % 6 {
            0 => None,
            1 => Some(Scope::Global),
            2 => Some(Scope::User("alice".into())),
            3 => Some(Scope::User(String::new())),
            4 => Some(Scope::User(scope_name.to_string())),
            _ => Scope::parse(scope_name).ok(),
        },
        usage_modes: match (flags >> 5) & 3 {
            0 => vec![],
            1 => vec![UsageMode::Always],
            2 => vec![UsageMode::Never],
            _ => vec![UsageMode::Auto, UsageMode::Never, UsageMode::Always],
        },
        chunks: flags & 0x01 != 0,
        facets: flags & 0x80 != 0,
        since,
        until,
        explain: flags & 0x02 != 0,
        snippets: flags & 0x04 != 0,
        // Every bit of `flags` is taken (0x80 is facets); the lanes byte has 0x20 free.
        typos: lanes & 0x20 == 0,
        always: if flags & 0x08 != 0 {
            AlwaysMode::Separate
        } else {
            AlwaysMode::First
        },
        query_vector: match vector % 8 {
            0 => None,
            1 => Some(vec![]),
            2 => Some(vec![0.0; dim]),
            3 => Some(vec![f32::NAN; dim]),
            4 => Some(vec![f32::INFINITY; dim]),
            5 => Some(vec![1.0; dim + 1]),
            6 => Some(
                query
                    .bytes()
                    .chain(std::iter::repeat(0))
                    .take(dim)
                    .map(|b| f32::from(b) - 100.0)
                    .collect(),
            ),
            _ => Some(vec![f32::MAX; dim]),
        },
    };
    if let Ok(results) = session.search(query, &opts) {
        let block = index.prompt_block(&results);
        let _ = cite::parse_headers(&block.text);
    }
    let _ = index.page(query, opts.scope.as_ref());
    let _ = session.chunk(query);
    let _ = session.chunks_of(query, opts.scope.as_ref());
    let traverse = TraverseOptions {
        depth: u32::from(limit % 4),
        min_confidence: f32::from(vector) / 200.0,
        max_nodes: usize::from(lanes) * 5,
        scope: opts.scope.clone(),
    };
    let _ = index.neighbors(&[query, scope_name], &traverse);
    let _ = index.edges_to(query, opts.scope.as_ref());
    let _ = index.pointers(query, opts.scope.as_ref());
    let evidence = EvidenceOptions {
        seeds: usize::from(flags % 24),
        traverse,
    };
    let _ = session.query_with_evidence(query, &evidence);
}

/// Target `verify`: [`Index::verify`] and [`Index::uncited_support`] of the fixed
/// [`fixture`] index with an arbitrary answer and cited and offered ids.
///
/// Byte 0 picks the calls (bit 0 verify, bit 1 uncited support, neither: both; bit 2 the
/// loaded index); the rest, split at NUL: the answer, then ids (`+id` is offered, anything
/// else is cited, as [`Cited::parse`] reads it).
pub fn verify(data: &[u8]) {
    let mut input = Input::new(data);
    let mode = input.byte();
    let text = input.text();
    let mut fields = text.split('\0');
    let answer = fields.next().unwrap_or("");
    let mut cited = Vec::new();
    let mut offered = Vec::new();
    for id in fields {
        match id.strip_prefix('+') {
            Some(o) => offered.push(o.to_string()),
            None => cited.push(Cited::parse(id)),
        }
    }
    let (built, loaded) = fixture();
    let index = if mode & 4 == 0 { built } else { loaded };
    let both = mode & 3 == 0;
    if both || mode & 1 != 0 {
        // Past the caps a verification is `too_large`, never a panic.
        match index.verify(answer, &cited, &offered) {
            Ok(v) => assert!(
                v.citations.len() <= cited.len() + offered.len(),
                "one verdict per distinct id"
            ),
            Err(e) => assert_eq!(e.code(), "too_large"),
        }
    }
    if both || mode & 2 != 0 {
        if let Err(e) = index.uncited_support(answer) {
            assert_eq!(e.code(), "too_large");
        }
        if let Err(e) = index.check_answer(answer, &cited, &offered) {
            assert_eq!(e.code(), "too_large");
        }
    }
    let _ = cite::cited_ids(answer);
    if let Some(first) = cited.first() {
        let _ = cite::find_quote(answer, &first.id);
    }
}

/// Target `headers`: [`cite::parse_headers`] on any text.
pub fn headers(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let headers = cite::parse_headers(&text);
    assert!(
        headers.len() <= text.matches("[page ").count(),
        "a header per `[page ` at most"
    );
    for h in &headers {
        let line = cite::format_header(&h.page_id, &h.chunk, h.score.unwrap_or(0.0), &h.title);
        let _ = cite::parse_headers(&line);
    }
}

/// The calls every loaded or built index must survive.
fn exercise(index: &Index, query: &str, flags: u8) {
    let opts = SearchOptions {
        explain: flags & 1 != 0,
        chunks: flags & 2 != 0,
        always: if flags & 4 != 0 {
            AlwaysMode::Separate
        } else {
            AlwaysMode::First
        },
        ..SearchOptions::default()
    };
    // No `verify` here: it is quadratic in answer and chunk (the `verify` target has it),
    // and would cut this target's executions per second by half.
    if let Ok(results) = index.search(query, &opts) {
        let _ = index.prompt_block(&results);
    }
    let _ = index.lint();
    for p in index.pages().iter().take(3) {
        let _ = index.chunks_of(&p.key, Some(&p.scope));
        let _ = index.neighbors(&[p.key.as_str()], &TraverseOptions::default());
    }
    for doc in index.raw_documents().iter().take(2) {
        let _ = index.chunk(&format!("{}::chunk_0", doc.id));
    }
}

/// A blob the index writes must load again (issue 9: "a build must never write a blob it
/// cannot load"). Refusing to write one (an `Err`) is allowed.
fn roundtrip(index: &Index) {
    if let Ok(bytes) = index.to_bytes() {
        if let Err(e) = Index::from_bytes(&bytes) {
            panic!("the index wrote a blob it cannot load: {e}");
        }
    }
}

/// The fixed index of the `search` and `verify` targets: small (every `uncited_support`
/// call reads all of it), with both scopes, a shadowed page, `always`, `never` and archived
/// pages, relations, redirects, aliases, a raw document, and vectors from [`ToyEmbedder`].
/// Returns it as built and as loaded from its blob.
pub fn fixture() -> &'static (Index, Index) {
    static FIXTURE: OnceLock<(Index, Index)> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let mut b = IndexBuilder::new(Config::default()).expect("the default config is valid");
        b.strict(true).embedder(Arc::new(ToyEmbedder));
        for (path, text) in FIXTURE_FILES {
            b.add_file(path, text.as_bytes())
                .unwrap_or_else(|e| panic!("fixture page {path}: {e}"));
        }
        let (built, _) = b.build().expect("the fixture builds");
        let loaded = Index::from_bytes(&built.to_bytes().expect("the fixture encodes"))
            .expect("the fixture loads");
        (built, loaded)
    })
}

/// Sessions over the two [`fixture`] indexes: the built one with [`ToyEmbedder`] as its
/// model (queries get a semantic lane), the loaded one without a model.
pub fn sessions() -> &'static (Session, Session) {
    static SESSIONS: OnceLock<(Session, Session)> = OnceLock::new();
    SESSIONS.get_or_init(|| {
        let (built, loaded) = fixture();
        let built = Session::new(built.clone());
        built
            .set_model(Some(Arc::new(ToyEmbedder)))
            .expect("the fixture's own model");
        (built, Session::new(loaded.clone()))
    })
}

const FIXTURE_FILES: [(&str, &str); 8] = [
    (
        "global/revenue.md",
        "---\ntitle: Revenue\nsummary: Recognized revenue, net of refunds.\ntags: [finance, metrics]\ntype: metric\naliases: [sales, turnover]\nrefs: [churn_rate]\nrelations:\n  - {target: churn_rate, type: causes, confidence: 0.8, evidence: \"Churn lowers revenue.\"}\nsources:\n  - {chunk: \"raw/slack_2024_03_12::chunk_0\", weight: 1.0}\n---\n# Revenue\n\nRevenue is booked in the service month from [[stg_stripe_invoices]], net of refunds.\nSee [[churn_rate]] and [[Oncall|the on-call page]].\n\n## Caveats\n\nMarketplace sales are missing until DATA-2291 lands.\n",
    ),
    (
        "global/churn_rate.md",
        "---\ntitle: Churn rate\ntags: [metrics]\ntype: metric\nredirect_from: [churn, attrition]\n---\nChurn rate is the share of active accounts that cancel in a month. It lowers [[revenue]].\n",
    ),
    (
        "user/alice/revenue.md",
        "---\ntitle: Revenue (draft)\ntags: [finance, draft]\nstatus: draft\n---\nAlice's draft adds AWS Marketplace sales net of the 3% fee to [[revenue]].\n",
    ),
    (
        "global/oncall.md",
        "---\ntitle: On-call\nusage_mode: always\ntags: [ops]\n---\nPage the on-call engineer for any outage of the nightly pipeline.\n",
    ),
    (
        "global/secret.md",
        "---\ntitle: Secret\nusage_mode: never\n---\nThe warehouse password rotates every night.\n",
    ),
    (
        "global/old_dashboard.md",
        "---\ntitle: Old dashboard\narchived_since: 2024-01-01\nstale_since: 2023-06-01\n---\nThe old revenue dashboard, replaced by the exec dashboard.\n",
    ),
    (
        "global/nightly_pipeline.md",
        "# Nightly pipeline\n\nThe nightly_build job runs at 02:00 UTC. The segment_enricher pod was OOM-killed three times, and nightly_build failed at 03:31 UTC. <!-- from: raw/slack_2024_03_12.md -->\n\n- [[oncall]]\n- [[revenue]]\n- [[missing_page]]\n",
    ),
    (
        "raw/slack_2024_03_12.md",
        "# #data-incidents, 2024-03-12\n\n03:41 Priya Nair: Exit code 137 is an OOM kill. The segment_enricher pod was OOM-killed three times, and nightly_build failed at 03:31 UTC.\n",
    ),
];

/// A deterministic 8-dimensional embedder (each word adds 1 to a bucket picked by its
/// bytes), so the fixture has a semantic lane without a model.
struct ToyEmbedder;

impl Embedder for ToyEmbedder {
    fn model_id(&self) -> &str {
        "fuzz-toy"
    }

    fn fingerprint(&self) -> &str {
        "fuzz-toy-1"
    }

    fn dim(&self) -> usize {
        8
    }

    fn embed(&self, texts: &[&str]) -> wikidex::Result<Vec<Vec<f32>>> {
        Ok(texts
            .iter()
            .map(|t| {
                let mut v = vec![0.0f32; 8];
                for w in t.split_whitespace() {
                    let bucket = w.bytes().fold(0usize, |h, b| {
                        h.wrapping_mul(31).wrapping_add(usize::from(b))
                    }) % 8;
                    v[bucket] += 1.0;
                }
                let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
                if norm > 0.0 {
                    v.iter_mut().for_each(|x| *x /= norm);
                }
                v
            })
            .collect())
    }
}
