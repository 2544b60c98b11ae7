//! The index format: one self-describing byte string, format [`FORMAT_VERSION`], read whole
//! ([`crate::Index::from_bytes`]) or in parts ([`crate::RangedIndex`]: a browser searching a
//! big site by HTTP range requests downloads the head, the dictionary shards of the query's
//! words, the postings of its terms and the records of its hits, not the whole blob).
//!
//! ```text
//! offset    size  field
//! 0         8     magic  b"WIKIDEX\0"
//! 8         4     format version (u32, little-endian)
//! 12        4     flags (u32, little-endian; 0, reserved)
//! 16        8     head length H in bytes (u64, little-endian)
//! 24        32    BLAKE3 hash of the head
//! 56        H     head: deflate of the postcard encoding of the head (below)
//! 56 + H    ...   the sections, one after another, each 8 bytes of tag then the deflate of
//!                 its postcard encoding; the head lists each one's length (tag included)
//! ```
//!
//! The head holds what every search reads; the sections hold the rest, in blocks a reader
//! fetches as it needs them (the layout of each: `blob/sections/`). A section's tag is the
//! first 8 bytes of the BLAKE3 hash of its deflated bytes keyed with the head's hash: a
//! section that was changed, or that belongs to another blob, does not match it. Every
//! collection is a list in a canonical order, so the same index always gives byte-identical
//! output. Loading checks the header, the head's hash, each section's tag, then the internal
//! consistency of every part: a truncated, corrupted, foreign or newer blob is an [`Error`],
//! never a panic.
//!
//! # Compatibility
//!
//! A blob written by a released version of wikidex stays readable:
//! - Any change to the bytes a build writes, however small, bumps [`FORMAT_VERSION`]; a build
//!   writes only the current version.
//! - A build keeps a reader for every released version from
//!   [`OLDEST_SUPPORTED_FORMAT_VERSION`] to [`FORMAT_VERSION`]; an older version's reader
//!   decodes it into the current in-memory index.
//! - Each released version has a blob under `core/tests/fixtures/blobs/` (`format-<N>.wdx`,
//!   with the command that made it) and a test that loads it and checks its answers. Fixtures
//!   are never regenerated.
//! - [`OLDEST_SUPPORTED_FORMAT_VERSION`] is raised only in a major release, and the CHANGELOG
//!   says so.
//!
//! A blob of any other version is [`Error::IncompatibleFormat`], naming the version found and
//! the versions this build reads.

use crate::data::config::Config;
use crate::data::error::{Error, Result};
use crate::data::record::LanguageMix;
use crate::graph::GraphSection;
use crate::lane::phrase::Positions;
use crate::lane::semantic::VectorSection;
use crate::postings::LexicalIndex;
use crate::text::chunk::ChunkRecord;
use crate::text::page::Page;
use crate::text::raw::RawSection;
use std::sync::Arc;

mod inflate;
mod sections;

pub(crate) use sections::{decode_head, decode_section, head_end, Head, Loaded, Part};
pub use sections::{BLOCK_BYTES, PAGE_BLOCK_BYTES};

/// Magic bytes at the start of every blob.
pub const MAGIC: [u8; 8] = *b"WIKIDEX\0";
/// The format version this build writes, and the newest it reads.
pub const FORMAT_VERSION: u32 = 1;
/// The oldest format version this build reads (see the module docs for when it changes).
pub const OLDEST_SUPPORTED_FORMAT_VERSION: u32 = 1;
/// Size of the fixed header before the head.
pub const HEADER_LEN: usize = 56;

/// Everything stored in a blob, as an [`crate::Index`] holds it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct IndexData {
    pub config: Config,
    /// The languages of the pages ([`crate::language::mix`]), made with the derived data.
    pub languages: LanguageMix,
    pub pages: Vec<Arc<Page>>,
    /// Stored without the content hashes, which a load derives from the page texts.
    pub chunks: Vec<ChunkRecord>,
    pub lexical: LexicalIndex,
    pub vectors: Option<VectorSection>,
    /// Forward and backward adjacency of the pages.
    pub graph: GraphSection,
    /// Raw source documents and their chunks.
    pub raw: Arc<RawSection>,
    /// The number in each chunk's id (`{page_id}::chunk_{n}`), in chunk table order; empty
    /// when every chunk's number is its position in its page (any index built from scratch).
    /// Edits keep the numbers of the chunks they did not touch
    /// ([`crate::text::chunk::carry_numbers`]).
    pub chunk_numbers: Vec<u32>,
    /// Each page's file modification time (Unix seconds) when a build read it from a folder,
    /// in page order; `None` for a page given as text; empty when no page has one. A page's
    /// date falls back to it when its frontmatter has none.
    pub page_modified: Vec<Option<i64>>,
    /// Where each term occurs in each chunk, for phrases; `None` when the configuration turns
    /// them off.
    pub positions: Option<Positions>,
}

impl IndexData {
    /// Sets [`IndexData::page_modified`] to `times` (one per page), stored empty when no page
    /// has a time (the canonical form).
    pub(crate) fn set_page_modified(&mut self, times: Vec<Option<i64>>) {
        self.page_modified = times;
        if self.page_modified.iter().all(Option::is_none) {
            self.page_modified.clear();
        }
    }
}

/// Encodes an index as a blob. Same input, same bytes.
pub(crate) fn encode(data: &IndexData) -> Result<Vec<u8>> {
    sections::encode(data)
}

/// [`encode`] up to the blob's parts, which make the blob once the index is dropped
/// ([`Index::save_into`](crate::Index::save_into)); its lexical index and positions are
/// dropped once their sections are made, the rest once every section is.
#[cfg(feature = "fs")]
pub(crate) fn encode_parts(data: IndexData) -> Result<sections::Parts> {
    sections::encode_parts(std::borrow::Cow::Owned(data))
}

/// Appends the header of a blob whose head is `head`, then the head.
fn put_header(out: &mut Vec<u8>, head: &[u8]) {
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&(head.len() as u64).to_le_bytes());
    out.extend_from_slice(blake3::hash(head).as_bytes());
    out.extend_from_slice(head);
}

/// Checks a blob's header (its first [`HEADER_LEN`] bytes; fewer are a truncated blob):
/// magic, a version this build reads, flags; returns the version. A caller holding a large
/// buffer checks it before copying the buffer.
///
/// # Errors
/// As [`crate::Index::from_bytes`] for a bad header.
pub fn check_header(bytes: &[u8]) -> Result<u32> {
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
    if !(OLDEST_SUPPORTED_FORMAT_VERSION..=FORMAT_VERSION).contains(&version) {
        return Err(Error::IncompatibleFormat {
            found: version,
            oldest: OLDEST_SUPPORTED_FORMAT_VERSION,
            current: FORMAT_VERSION,
        });
    }
    let flags = u32_at(12);
    if flags != 0 {
        return Err(Error::corrupt(format!("unknown header flags {flags:#x}")));
    }
    Ok(version)
}

/// Decodes and validates a whole blob, on every core.
pub(crate) fn decode(bytes: &[u8]) -> Result<IndexData> {
    let threads = crate::data::parallel::cores();
    finish(sections::decode(bytes, threads, sections::Keep::Index)?)
}

/// Checks that `bytes` load: whatever a load refuses, this refuses, with the same error. It
/// decodes on the calling thread and keeps no page and no vector beside the blob, checking
/// each page block and the vectors' values alone and dropping them (a save's check, beside
/// the blob it saves).
///
/// # Errors
/// As [`decode`].
#[cfg_attr(not(feature = "fs"), allow(dead_code))] // Saving is a file's.
pub(crate) fn check(bytes: &[u8]) -> Result<()> {
    validate(&sections::decode(bytes, 1, sections::Keep::Checks)?)
}

/// The checks and derivations every load makes, whole or in parts ([`crate::RangedIndex`]):
/// the consistency of every part, then the chunk hashes the blob leaves out and the lexical
/// index's look-up maps.
pub(crate) fn finish(mut data: IndexData) -> Result<IndexData> {
    validate(&data)?;
    data.lexical.index_terms();
    Ok(data)
}

/// Checks every cross-reference a search or look-up relies on, so that a blob with a valid
/// checksum but inconsistent contents (written by a buggy or hostile writer) cannot make a
/// later index operation panic.
fn validate(data: &IndexData) -> Result<()> {
    data.config.validate_stored()?;
    data.languages.validate(data.pages.len())?;
    // The chunk table's order and the pages' texts need no check here: the head's decoding
    // checks the order ([`sections::decode_head`]), and each page block's the body offsets and
    // the chunks' spans in the texts, in both loads.
    crate::text::chunk::validate_numbers(&data.chunks, &data.chunk_numbers)?;
    if !data.page_modified.is_empty() && data.page_modified.len() != data.pages.len() {
        return Err(Error::corrupt(format!(
            "{} modification times for {} pages",
            data.page_modified.len(),
            data.pages.len()
        )));
    }
    data.lexical.validate(data.chunks.len())?;
    // The positions need no check here: both loads make them with `Positions::from_parts`,
    // which checks every list against its posting's frequency as it finds where it starts.
    // Nor the vectors: their section's decoding checks them against the head's description.
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
            languages: LanguageMix::default(),
            pages: Vec::new(),
            chunks: Vec::new(),
            lexical: LexicalIndex::build(Vec::<Vec<String>>::new(), Default::default()),
            vectors: None,
            graph: GraphSection::default(),
            raw: Default::default(),
            chunk_numbers: Vec::new(),
            page_modified: Vec::new(),
            positions: None,
        }
    }

    #[test]
    fn empty_index_round_trips() {
        let bytes = encode(&empty()).unwrap();
        assert_eq!(&bytes[..8], b"WIKIDEX\0");
        assert_eq!(bytes[8..12], FORMAT_VERSION.to_le_bytes());
        assert_eq!(decode(&bytes).unwrap(), empty());
    }

    #[test]
    fn newer_or_older_version_is_incompatible() {
        for version in [0, FORMAT_VERSION + 1, u32::MAX] {
            let mut bytes = encode(&empty()).unwrap();
            bytes[8..12].copy_from_slice(&version.to_le_bytes());
            assert_eq!(decode(&bytes).unwrap_err().code(), "incompatible_format");
        }
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

    /// Each of `bad`, encoded as a buggy or hostile writer would, is refused as corrupt, by a
    /// load and with the same error by a save's check.
    fn assert_corrupt(bad: &[IndexData]) {
        for (i, d) in bad.iter().enumerate() {
            let blob = encode(d).unwrap();
            let err = decode(&blob).unwrap_err();
            assert_eq!(err.code(), "corrupt_index", "case {i}");
            assert_eq!(
                check(&blob).unwrap_err().to_string(),
                err.to_string(),
                "case {i}"
            );
        }
    }

    #[cfg(feature = "fs")]
    #[test]
    fn an_index_given_to_its_save_encodes_as_one_lent() {
        // Given, its lexical index and positions go once their sections are made.
        let chunks = built().chunks.len();
        for d in [built(), with_vectors(3, 3 * chunks)] {
            assert!(d.positions.is_some());
            let lent = encode(&d).unwrap();
            assert_eq!(encode_parts(d).unwrap().assemble(), lent);
        }
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
        Arc::make_mut(&mut d.raw).chunks[0].end = 999;
        bad.push(d);
        let mut d = ok.clone();
        Arc::make_mut(&mut d.raw).docs[0].id = "nope".into();
        bad.push(d);
        assert_corrupt(&bad);
    }

    /// [`built`] with a vector section of `dim` and `values` values (f32).
    fn with_vectors(dim: u32, values: usize) -> IndexData {
        let mut d = built();
        d.vectors = Some(VectorSection {
            model_id: "m".into(),
            dim,
            fingerprint: "f".into(),
            values: crate::lane::semantic::VectorValues::F32(
                (0..values).map(|i| i as f32).collect(),
            ),
            prompts: Default::default(),
            floor: 0.0,
        });
        d
    }

    #[test]
    fn a_vector_section_of_the_wrong_size_or_floor_is_corrupt() {
        let chunks = built().chunks.len();
        let ok = with_vectors(3, 3 * chunks);
        assert!(decode(&encode(&ok).unwrap()).is_ok());
        let mut bad: Vec<IndexData> = [(3, 3 * chunks - 1), (3, 3 * chunks + 3), (0, 0), (1, 0)]
            .into_iter()
            .map(|(dim, values)| with_vectors(dim, values))
            .collect();
        bad.push(with_vectors(u32::MAX, 0));
        for floor in [f32::NAN, -0.5, 1.5, f32::INFINITY] {
            let mut d = ok.clone();
            d.vectors.as_mut().unwrap().floor = floor;
            bad.push(d);
        }
        assert_corrupt(&bad);
        let mut d = ok.clone();
        d.vectors.as_mut().unwrap().floor = 0.5;
        let loaded = decode(&encode(&d).unwrap()).unwrap();
        assert_eq!(loaded.vectors.unwrap().floor, 0.5);
    }

    #[test]
    fn pages_out_of_order_or_twice_are_corrupt() {
        let ok = built();
        assert!(ok.pages[0].key < ok.pages[1].key);
        let keyed = |key: &str| {
            let mut d = ok.clone();
            let mut page = (*d.pages[1]).clone();
            page.key = key.to_string();
            d.pages[1] = std::sync::Arc::new(page);
            d
        };
        let bad = [keyed(""), keyed(&ok.pages[0].key)];
        for d in &bad {
            let err = decode(&encode(d).unwrap()).unwrap_err().to_string();
            assert!(err.contains("not in order of scope and key"), "{err}");
        }
        assert_corrupt(&bad);
    }

    #[test]
    fn chunk_numbers_repeated_within_a_page_or_one_short_are_corrupt() {
        let config = Config {
            chunk: crate::data::config::ChunkConfig {
                max_tokens: 16,
                overlap_tokens: 0,
            },
            ..Config::default()
        };
        let para = |w: &str| format!("{w} one two three four five six seven eight nine ten.");
        let text = format!("{}\n\n{}", para("alpha"), para("beta"));
        let mut b = crate::IndexBuilder::new(config).unwrap();
        b.add_file("a.md", text.as_bytes()).unwrap();
        let mut d = b.build().unwrap().0.data;
        assert_eq!(d.chunks.len(), 2, "one page of two chunks");
        d.chunk_numbers = vec![1, 0];
        assert!(decode(&encode(&d).unwrap()).is_ok());
        let mut repeated = d.clone();
        repeated.chunk_numbers = vec![1, 1];
        let mut short = d.clone();
        short.chunk_numbers.pop();
        let mut times = d.clone();
        times.page_modified = vec![Some(1), None];
        assert_corrupt(&[repeated, short, times]);
    }
}
