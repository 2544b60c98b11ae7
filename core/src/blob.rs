//! The index format (DESIGN §6): one self-describing byte string.
//!
//! ```text
//! offset  size  field
//! 0       8     magic  b"WIKIDEX\0"
//! 8       4     format version (u32, little-endian)
//! 12      4     flags (u32, little-endian; 0, reserved)
//! 16      8     payload length in bytes (u64, little-endian)
//! 24      32    BLAKE3 hash of the payload
//! 56      ...   payload: postcard encoding of the schema below
//! ```
//!
//! The payload holds the whole configuration, the pages (with their full text), the chunk
//! table, the lexical postings, the (optional) vector section, and (since v2) the page graph
//! and the raw layer. Every collection in it is a list in a canonical order, so the same input
//! always gives byte-identical output. Loading checks the header, the length, the checksum,
//! then the internal consistency of every section: a truncated, corrupted, foreign or newer
//! blob is an [`Error`], never a panic.
//!
//! Versions:
//! - v7 stores the same data in fewer bytes: the chunk table without its content hashes
//!   (derived from the page texts on load) and the lexical index compactly (document
//!   frequencies instead of offsets, chunk ids as gaps, no chunk lengths, only the surface
//!   words that are not their own term; see `lane::lexical::stored`). A v5 or v6 payload is
//!   decoded with the frozen v6 schema.
//! - v6 adds the term positions ([`crate::lane::phrase`]), after every other section (`None`
//!   when the configuration's `positions` is off), and the configuration's `positions` flag;
//!   older payloads are decoded with their frozen schema (configuration included) as an index
//!   built with `positions: false`, which is what they are: a quoted phrase is searched as its
//!   words until the wiki is built again.
//! - v5 adds to the vector section the prompts its passages were embedded after (and queries
//!   are); older payloads are decoded with their frozen schema and get no prompts, which is
//!   how their vectors were made.
//! - v4 adds the chunk numbers (the `n` of `{page_id}::chunk_{n}`, kept across edits) and
//!   the pages' file modification times; a v1 to v3 blob has neither stored, so each chunk's
//!   number is its position in its page, as those versions named them, and its pages have no
//!   modification time.
//! - v3 has the schema of v2; its postings (and the token lane, which reads them) come from
//!   the analyzer that segments CJK text into bigrams ([`crate::analyze`]).
//! - v2 postings were made by the analyzer before CJK segmentation, which the queries of this
//!   build would not match: a v2 payload is decoded with the current schema and its lexical
//!   index rebuilt from the stored pages and chunk table, so it answers (and saves) exactly as
//!   a fresh build of the same pages.
//! - v1 is decoded with the frozen v1 schema and upgraded: its pages get the fields v2 added
//!   (empty), the graph is rebuilt from them, and the lexical index as for v2. Only with the
//!   feature `legacy-v1` (a default): rebuilding the graph parses every page's Markdown.

use serde::{Deserialize, Serialize};

use crate::chunk::ChunkRecord;
use crate::config::Config;
use crate::config::{Bm25Params, ChunkConfig, FusionConfig, Language};
use crate::error::{Error, Result};
use crate::graph::GraphSection;
use crate::lane::lexical::LexicalIndex;
use crate::lane::phrase::Positions;
use crate::lane::semantic::{VectorSection, VectorSectionV4};
use crate::page::Page;
use crate::raw::RawSection;

mod sections;

pub(crate) use sections::{decode_head, decode_section, empty_like, head_end, Head, Loaded, Part};
pub use sections::{BLOCK_BYTES, PAGE_BLOCK_BYTES};

/// Magic bytes at the start of every blob.
pub const MAGIC: [u8; 8] = *b"WIKIDEX\0";
/// The format version this build writes by default: the index in one piece.
pub const FORMAT_VERSION: u32 = 7;
/// The format version of the sectioned layout (`Index::to_sectioned_bytes`): the same index in
/// parts a browser can fetch by HTTP range requests ([`crate::RangedIndex`]); the newest
/// version this build reads.
pub const SECTIONED_FORMAT_VERSION: u32 = sections::SECTIONED_VERSION;
/// The first sectioned format version, 8, whose head holds the whole dictionary (v9 splits
/// it in shards); still read.
pub const FIRST_SECTIONED_FORMAT_VERSION: u32 = sections::FIRST_SECTIONED_VERSION;
/// The oldest format version this build reads: 1 with the feature `legacy-v1` (a default),
/// 2 with `one-piece` alone, 8 with `older-sectioned` alone (sectioned blobs only), else
/// [`SECTIONED_FORMAT_VERSION`].
pub const OLDEST_SUPPORTED_FORMAT_VERSION: u32 = if cfg!(feature = "legacy-v1") {
    1
} else if cfg!(feature = "one-piece") {
    2
} else {
    sections::OLDEST_SECTIONED_READ
};
/// Size of the fixed header before the payload.
pub const HEADER_LEN: usize = 56;

/// Everything stored in a blob.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct IndexData {
    pub config: Config,
    pub pages: Vec<Page>,
    /// Since v7 stored without the content hashes, which a load derives.
    #[serde(with = "crate::chunk::stored")]
    pub chunks: Vec<ChunkRecord>,
    /// Since v7 stored compactly (see [`crate::lane::lexical::stored`]).
    #[serde(with = "crate::lane::lexical::stored")]
    pub lexical: LexicalIndex,
    pub vectors: Option<VectorSection>,
    /// Since v2: forward and backward adjacency of the pages.
    pub graph: GraphSection,
    /// Since v2: raw source documents and their chunks.
    pub raw: RawSection,
    /// Since v4: the number in each chunk's id (`{page_id}::chunk_{n}`), in chunk table
    /// order; empty when every chunk's number is its position in its page (any index built
    /// from scratch). Edits keep the numbers of the chunks they did not touch
    /// ([`crate::chunk::carry_numbers`]).
    pub chunk_numbers: Vec<u32>,
    /// Since v4: each page's file modification time (Unix seconds) when a build read it from
    /// a folder, in page order; `None` for a page given as text; empty when no page has one.
    /// A page's date falls back to it when its frontmatter has none.
    pub page_modified: Vec<Option<i64>>,
    /// Since v6: where each term occurs in each chunk, for phrases; `None` when the
    /// configuration turns them off, and in any older blob.
    pub positions: Option<Positions>,
}

impl IndexData {
    /// Sets [`IndexData::page_modified`] from `modified(page)`, stored empty when no page has
    /// a time (the canonical form).
    pub(crate) fn set_page_modified(&mut self, modified: impl Fn(&Page) -> Option<i64>) {
        self.page_modified = self.pages.iter().map(modified).collect();
        if self.page_modified.iter().all(Option::is_none) {
            self.page_modified.clear();
        }
    }
}

/// The configuration of v1 to v5 (frozen: never change it): today's without `positions`.
#[derive(Deserialize)]
struct ConfigV5 {
    chunk: ChunkConfig,
    language: Language,
    bm25: Bm25Params,
    fusion: FusionConfig,
    max_query_chars: u32,
}

impl From<ConfigV5> for Config {
    /// An older blob has no positions: it loads (and saves, and is written to) as an index
    /// built without them.
    fn from(c: ConfigV5) -> Config {
        Config {
            chunk: c.chunk,
            language: c.language,
            bm25: c.bm25,
            fusion: c.fusion,
            max_query_chars: c.max_query_chars,
            positions: false,
        }
    }
}

/// The v2 and v3 payload: the schema of v4 before `chunk_numbers`.
#[derive(Deserialize)]
struct IndexDataV3 {
    config: ConfigV5,
    pages: Vec<Page>,
    chunks: Vec<ChunkRecord>,
    lexical: LexicalIndex,
    vectors: Option<VectorSectionV4>,
    graph: GraphSection,
    raw: RawSection,
}

/// The v4 payload (frozen: never change it): the v3 fields (postcard writes a nested struct
/// as its fields in order, so they decode the same), then two lists; the current schema but
/// for the vector section, which had no prompts.
#[derive(Deserialize)]
struct IndexDataV4 {
    v3: IndexDataV3,
    chunk_numbers: Vec<u32>,
    page_modified: Vec<Option<i64>>,
}

impl From<IndexDataV3> for IndexDataV4 {
    fn from(v3: IndexDataV3) -> IndexDataV4 {
        IndexDataV4 {
            v3,
            chunk_numbers: Vec::new(),
            page_modified: Vec::new(),
        }
    }
}

impl From<IndexDataV4> for IndexData {
    fn from(old: IndexDataV4) -> IndexData {
        let v3 = old.v3;
        IndexData {
            config: v3.config.into(),
            pages: v3.pages,
            chunks: v3.chunks,
            lexical: v3.lexical,
            vectors: v3.vectors.map(VectorSection::from),
            graph: v3.graph,
            raw: v3.raw,
            chunk_numbers: old.chunk_numbers,
            page_modified: old.page_modified,
            positions: None,
        }
    }
}

/// The v5 (see [`v5_as_v6`]) and v6 payload (frozen: never change it): today's fields, with
/// the chunk table and the lexical index stored as they are in memory.
#[derive(Deserialize)]
struct IndexDataV6 {
    config: Config,
    pages: Vec<Page>,
    chunks: Vec<ChunkRecord>,
    lexical: LexicalIndex,
    vectors: Option<VectorSection>,
    graph: GraphSection,
    raw: RawSection,
    chunk_numbers: Vec<u32>,
    page_modified: Vec<Option<i64>>,
    positions: Option<Positions>,
}

impl From<IndexDataV6> for IndexData {
    fn from(old: IndexDataV6) -> IndexData {
        IndexData {
            config: old.config,
            pages: old.pages,
            chunks: old.chunks,
            lexical: old.lexical,
            vectors: old.vectors,
            graph: old.graph,
            raw: old.raw,
            chunk_numbers: old.chunk_numbers,
            page_modified: old.page_modified,
            positions: old.positions,
        }
    }
}

/// A v5 payload as the v6 payload of the same index without positions: the v6 configuration
/// adds its `positions` flag after the v5 fields and the payload its positions after every
/// other section, so the flag (`false`) goes in after the configuration and `None` at the end,
/// and the current schema decodes the rest (one schema fewer for every build to carry).
#[cfg(feature = "one-piece")]
fn v5_as_v6(payload: &[u8]) -> std::result::Result<Vec<u8>, postcard::Error> {
    let (_, rest): (ConfigV5, &[u8]) = postcard::take_from_bytes(payload)?;
    let config_len = payload.len() - rest.len();
    let mut out = Vec::with_capacity(payload.len() + 2);
    out.extend_from_slice(&payload[..config_len]);
    out.push(0);
    out.extend_from_slice(rest);
    out.push(0);
    Ok(out)
}

/// The v1 payload, decoded as it was written, then upgraded by [`upgrade_v1`].
#[cfg(feature = "legacy-v1")]
#[derive(Deserialize)]
struct IndexDataV1 {
    config: ConfigV5,
    pages: Vec<v1::Page>,
    chunks: Vec<ChunkRecord>,
    lexical: LexicalIndex,
    // Always `None` in every v1 blob ever written (no v1 build had a model).
    vectors: Option<VectorSectionV4>,
}

/// The v1 page schema (frozen: never change it).
#[cfg(feature = "legacy-v1")]
mod v1 {
    use serde::Deserialize;

    use crate::page::{Extra, Scope, UsageMode};

    #[derive(Deserialize)]
    pub(super) struct Relation {
        pub target: String,
        pub kind: String,
        pub confidence: f32,
        pub evidence: Option<String>,
    }

    #[derive(Deserialize)]
    pub(super) struct SourceRef {
        pub chunk: String,
        pub weight: f32,
    }

    #[derive(Deserialize)]
    pub(super) struct Page {
        pub key: String,
        pub scope: Scope,
        pub path: String,
        pub title: String,
        pub summary: Option<String>,
        pub tags: Vec<String>,
        pub kind: Option<String>,
        pub refs: Vec<String>,
        pub links: Vec<String>,
        pub sl_refs: Vec<String>,
        pub relations: Vec<Relation>,
        pub usage_mode: UsageMode,
        pub source: Option<String>,
        pub sources: Vec<SourceRef>,
        pub aliases: Vec<String>,
        pub redirect_from: Vec<String>,
        pub stale_since: Option<String>,
        pub archived_since: Option<String>,
        pub provenance: Vec<String>,
        pub extra: Extra,
        pub text: String,
        pub body_start: u32,
    }

    impl From<Page> for crate::page::Page {
        fn from(p: Page) -> Self {
            crate::page::Page {
                key: p.key,
                scope: p.scope,
                path: p.path,
                title: p.title,
                summary: p.summary,
                tags: p.tags,
                kind: p.kind,
                refs: p.refs,
                links: p.links,
                sl_refs: p.sl_refs,
                relations: p
                    .relations
                    .into_iter()
                    .map(|r| crate::page::Relation {
                        target: r.target,
                        kind: r.kind,
                        confidence: r.confidence,
                        evidence: r.evidence,
                        chunk: None,
                    })
                    .collect(),
                usage_mode: p.usage_mode,
                source: p.source,
                sources: p
                    .sources
                    .into_iter()
                    .map(|s| crate::page::SourceRef {
                        chunk: s.chunk,
                        weight: s.weight,
                        hash: None,
                    })
                    .collect(),
                aliases: p.aliases,
                redirect_from: p.redirect_from,
                stale_since: p.stale_since,
                archived_since: p.archived_since,
                provenance: p.provenance,
                extra: p.extra,
                text: p.text,
                body_start: p.body_start,
            }
        }
    }
}

/// A v1 index as v2 data: the same pages, chunks and postings, no raw layer, and the graph
/// derived from the pages (v1 did not store one). The postings are rebuilt afterwards, as for
/// any blob older than v3.
#[cfg(feature = "legacy-v1")]
fn upgrade_v1(old: IndexDataV1) -> Result<IndexData> {
    let pages: Vec<Page> = old.pages.into_iter().map(Page::from).collect();
    // The graph reads chunk spans: check them before deriving it.
    crate::chunk::validate_chunk_table(&old.chunks, pages.len(), |p| {
        pages.get(p).map(|p| p.text.as_str())
    })?;
    let raw = RawSection::default();
    let graph = GraphSection::build(&pages, &old.chunks, &[], &raw);
    Ok(IndexData {
        config: old.config.into(),
        pages,
        chunks: old.chunks,
        lexical: old.lexical,
        vectors: old.vectors.map(VectorSection::from),
        graph,
        raw,
        chunk_numbers: Vec::new(),
        page_modified: Vec::new(),
        positions: None,
    })
}

/// Encodes an index as a blob.
pub(crate) fn encode(data: &IndexData) -> Result<Vec<u8>> {
    let payload = postcard::to_allocvec(data).map_err(|e| Error::Encode {
        detail: e.to_string(),
    })?;
    let mut out = Vec::with_capacity(HEADER_LEN + payload.len());
    put_header(&mut out, FORMAT_VERSION, &payload);
    Ok(out)
}

/// Appends the header of a blob of `version` whose checked part (the payload; a sectioned
/// blob's head) is `checked`, then that part.
fn put_header(out: &mut Vec<u8>, version: u32, checked: &[u8]) {
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&version.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&(checked.len() as u64).to_le_bytes());
    out.extend_from_slice(blake3::hash(checked).as_bytes());
    out.extend_from_slice(checked);
}

/// The format version of a blob's header, checked as far as the header goes: the magic bytes,
/// its length, the version (from `oldest` to [`SECTIONED_FORMAT_VERSION`]), the flags.
fn header_version(bytes: &[u8], oldest: u32) -> Result<u32> {
    let magic_len = bytes.len().min(MAGIC.len());
    if bytes[..magic_len] != MAGIC[..magic_len] {
        return Err(Error::NotAnIndex);
    }
    if bytes.len() < HEADER_LEN {
        return Err(Error::corrupt(format!(
            "truncated header: {} of {HEADER_LEN} bytes",
            bytes.len()
        )));
    }
    let u32_at =
        |at: usize| u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
    let version = u32_at(8);
    if !(oldest..=SECTIONED_FORMAT_VERSION).contains(&version) {
        return Err(Error::IncompatibleFormat {
            found: version,
            oldest,
            current: SECTIONED_FORMAT_VERSION,
        });
    }
    let flags = u32_at(12);
    if flags != 0 {
        return Err(Error::corrupt(format!("unknown header flags {flags:#x}")));
    }
    Ok(version)
}

/// Encodes an index in the sectioned layout ([`SECTIONED_FORMAT_VERSION`]).
pub(crate) fn encode_sectioned(data: &IndexData) -> Result<Vec<u8>> {
    sections::encode(data)
}

/// Checks a blob's header (its first [`HEADER_LEN`] bytes; fewer are a truncated blob):
/// magic, a version this build reads, flags; returns the version. A caller holding a large
/// buffer checks it before copying the buffer.
///
/// # Errors
/// As [`crate::Index::from_bytes`] for a bad header.
pub fn check_header(bytes: &[u8]) -> Result<u32> {
    header_version(bytes, OLDEST_SUPPORTED_FORMAT_VERSION)
}

/// Decodes and validates a blob.
pub(crate) fn decode(bytes: &[u8]) -> Result<IndexData> {
    let version = header_version(bytes, OLDEST_SUPPORTED_FORMAT_VERSION)?;
    if version >= FIRST_SECTIONED_FORMAT_VERSION {
        return finish(sections::decode(bytes)?, &[], version);
    }
    decode_one_piece(bytes, version)
}

/// Decodes a blob in one piece (formats 1 to 7); `header_version` checked its header.
#[cfg(not(feature = "one-piece"))]
fn decode_one_piece(_bytes: &[u8], version: u32) -> Result<IndexData> {
    // `header_version` refuses these versions without the feature.
    Err(Error::IncompatibleFormat {
        found: version,
        oldest: OLDEST_SUPPORTED_FORMAT_VERSION,
        current: SECTIONED_FORMAT_VERSION,
    })
}

/// Decodes a blob in one piece (formats 1 to 7); `header_version` checked its header.
#[cfg(feature = "one-piece")]
fn decode_one_piece(bytes: &[u8], version: u32) -> Result<IndexData> {
    let mut len_bytes = [0u8; 8];
    len_bytes.copy_from_slice(&bytes[16..24]);
    let declared = u64::from_le_bytes(len_bytes);
    let actual = (bytes.len() - HEADER_LEN) as u64;
    if declared != actual {
        return Err(Error::corrupt(if declared > actual {
            format!("truncated: payload is {actual} of {declared} bytes")
        } else {
            format!("{} trailing bytes after the payload", actual - declared)
        }));
    }
    let payload = &bytes[HEADER_LEN..];
    if blake3::hash(payload).as_bytes()[..] != bytes[24..56] {
        return Err(Error::corrupt("checksum mismatch"));
    }
    let cannot = |e: postcard::Error| {
        // postcard drops the message of a value's own check (its `custom` errors); those
        // checks leave it with `error::decode_error`, so the error can still say what was wrong.
        let cause = crate::error::take_decode_cause();
        match (e, cause) {
            (postcard::Error::SerdeDeCustom, Some(cause)) => {
                Error::corrupt(format!("cannot decode payload: {cause}"))
            }
            (e, _) => Error::corrupt(format!("cannot decode payload: {e}")),
        }
    };
    crate::error::take_decode_cause();
    #[cfg(feature = "legacy-v1")]
    if version == 1 {
        let (old, rest): (IndexDataV1, &[u8]) =
            postcard::take_from_bytes(payload).map_err(cannot)?;
        return finish(upgrade_v1(old)?, rest, version);
    }
    let (data, rest): (IndexData, &[u8]) = if version < 4 {
        let (old, rest): (IndexDataV3, &[u8]) =
            postcard::take_from_bytes(payload).map_err(cannot)?;
        (IndexDataV4::from(old).into(), rest)
    } else if version < PROMPTS_VERSION {
        let (old, rest): (IndexDataV4, &[u8]) =
            postcard::take_from_bytes(payload).map_err(cannot)?;
        (old.into(), rest)
    } else if version < POSITIONS_VERSION {
        let v6 = v5_as_v6(payload).map_err(cannot)?;
        let (data, rest): (IndexDataV6, &[u8]) = postcard::take_from_bytes(&v6).map_err(cannot)?;
        // A byte after a v5 payload would have been read as the positions' tag.
        if data.positions.is_some() {
            return Err(Error::corrupt("payload has unread bytes"));
        }
        return finish(data.into(), rest, version);
    } else if version < COMPACT_VERSION {
        let (old, rest): (IndexDataV6, &[u8]) =
            postcard::take_from_bytes(payload).map_err(cannot)?;
        (old.into(), rest)
    } else {
        postcard::take_from_bytes(payload).map_err(cannot)?
    };
    finish(data, rest, version)
}

/// [`finish`] for the parts of a sectioned blob loaded one by one ([`crate::RangedIndex`]).
pub(crate) fn finish_sectioned(data: IndexData) -> Result<IndexData> {
    finish(data, &[], SECTIONED_FORMAT_VERSION)
}

/// The checks and the rebuilding every decoded payload goes through, whatever its version.
fn finish(mut data: IndexData, rest: &[u8], version: u32) -> Result<IndexData> {
    if !rest.is_empty() {
        return Err(Error::corrupt("payload has unread bytes"));
    }
    if version < ANALYZER_VERSION {
        reanalyze(&mut data)?;
    }
    if version >= COMPACT_VERSION {
        data.lexical.derive_lengths(data.chunks.len());
    }
    validate(&mut data)?;
    if version >= COMPACT_VERSION {
        let pages = &data.pages;
        crate::chunk::derive_hashes(&mut data.chunks, |p| pages[p].text.as_str());
    }
    data.lexical.index_terms();
    Ok(data)
}

/// The first format version that stores the chunk table without hashes and the lexical index
/// compactly.
const COMPACT_VERSION: u32 = 7;

/// The first format version that stores term positions (and the configuration's flag).
#[cfg(feature = "one-piece")]
const POSITIONS_VERSION: u32 = 6;

/// The first format version whose vector section stores prompts.
#[cfg(feature = "one-piece")]
const PROMPTS_VERSION: u32 = 5;

/// The first format version whose postings come from the current analyzer (CJK bigrams).
const ANALYZER_VERSION: u32 = 3;

/// Replaces the postings of a blob written before [`ANALYZER_VERSION`] with the ones the
/// current analyzer makes from its pages and chunk table (checked first: the analysis slices
/// page texts at the chunk spans).
fn reanalyze(data: &mut IndexData) -> Result<()> {
    crate::chunk::validate_chunk_table(&data.chunks, data.pages.len(), |p| {
        data.pages.get(p).map(|p| p.text.as_str())
    })?;
    let analyzer = crate::analyze::Analyzer::new(data.config.language);
    data.lexical = LexicalIndex::analyze(&analyzer, &data.pages, &data.chunks);
    Ok(())
}

/// Checks every cross-reference a search or look-up relies on, so that a blob with a valid
/// checksum but inconsistent contents (written by a buggy or hostile writer) cannot make a
/// later index operation panic.
fn validate(data: &mut IndexData) -> Result<()> {
    data.config.validate_stored()?;
    crate::chunk::validate_chunk_table(&data.chunks, data.pages.len(), |p| {
        data.pages.get(p).map(|p| p.text.as_str())
    })?;
    for p in &data.pages {
        if p.text.get(p.body_start as usize..).is_none() {
            return Err(Error::corrupt(format!(
                "page {} body offset is invalid",
                p.key
            )));
        }
    }
    crate::chunk::validate_numbers(&data.chunks, &data.chunk_numbers)?;
    if !data.page_modified.is_empty() && data.page_modified.len() != data.pages.len() {
        return Err(Error::corrupt(format!(
            "{} modification times for {} pages",
            data.page_modified.len(),
            data.pages.len()
        )));
    }
    data.lexical.validate(data.chunks.len())?;
    if let Some(p) = &mut data.positions {
        p.index(&data.lexical)?;
    }
    if let Some(v) = &data.vectors {
        v.validate(data.chunks.len())?;
    }
    data.raw.validate()?;
    data.graph
        .validate(data.pages.len(), data.chunks.len(), data.raw.chunks.len())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn empty() -> IndexData {
        IndexData {
            config: Config::default(),
            pages: Vec::new(),
            chunks: Vec::new(),
            lexical: LexicalIndex::build(Vec::<Vec<String>>::new(), Default::default()),
            vectors: None,
            graph: GraphSection::default(),
            raw: RawSection::default(),
            chunk_numbers: Vec::new(),
            page_modified: Vec::new(),
            positions: None,
        }
    }

    #[test]
    fn empty_index_round_trips() {
        let bytes = encode(&empty()).unwrap();
        assert_eq!(&bytes[..8], b"WIKIDEX\0");
        assert_eq!(decode(&bytes).unwrap(), empty());
    }

    #[test]
    fn newer_version_is_incompatible() {
        let mut bytes = encode(&empty()).unwrap();
        bytes[8..12].copy_from_slice(&(SECTIONED_FORMAT_VERSION + 1).to_le_bytes());
        assert_eq!(decode(&bytes).unwrap_err().code(), "incompatible_format");
    }

    #[test]
    fn foreign_bytes_are_not_an_index() {
        assert_eq!(
            decode(b"PK\x03\x04zipzip").unwrap_err().code(),
            "not_an_index"
        );
        assert_eq!(decode(b"").unwrap_err().code(), "corrupt_index");
        assert_eq!(decode(b"WIKI").unwrap_err().code(), "corrupt_index");
    }

    fn built() -> IndexData {
        let mut b = crate::IndexBuilder::new(Config::default()).unwrap();
        b.add_file("a.md", b"[[b]] and [[c]]").unwrap();
        b.add_file(
            "b.md",
            b"---\nrelations:\n  - {target: a, type: x, chunk: \"raw/r::chunk_0\"}\n---\nb",
        )
        .unwrap();
        b.add_file("raw/r.md", b"raw text").unwrap();
        b.build().unwrap().0.data
    }

    #[test]
    fn an_inconsistent_graph_or_raw_section_is_corrupt_not_a_panic() {
        let ok = built();
        assert!(decode(&encode(&ok).unwrap()).is_ok());
        let mut bad = Vec::new();
        let mut d = ok.clone();
        d.graph.edges[0].to = crate::graph::Target::Page(99);
        bad.push(d);
        let mut d = ok.clone();
        d.graph.incoming.reverse();
        d.graph.incoming.push(0);
        bad.push(d);
        let mut d = ok.clone();
        d.graph.edges[0].confidence = f32::NAN;
        bad.push(d);
        let mut d = ok.clone();
        let last = d.graph.edges.len() - 1;
        d.graph.edges[last].chunk = Some(crate::graph::ChunkRef::Raw(7));
        bad.push(d);
        let mut d = ok.clone();
        d.raw.chunks[0].end = 999;
        bad.push(d);
        let mut d = ok.clone();
        d.raw.docs[0].id = "nope".into();
        bad.push(d);
        for (i, d) in bad.iter().enumerate() {
            let err = decode(&encode(d).unwrap()).unwrap_err();
            assert_eq!(err.code(), "corrupt_index", "case {i}");
        }
    }

    #[test]
    fn trailing_bytes_are_corrupt() {
        let mut bytes = encode(&empty()).unwrap();
        bytes.push(0);
        assert_eq!(decode(&bytes).unwrap_err().code(), "corrupt_index");
    }
}
