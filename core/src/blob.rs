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
//! table, the lexical postings and the (optional) vector section. Every collection in it is a
//! list in a canonical order, so the same input always gives byte-identical output. Loading
//! checks the header, the length, the checksum, then the internal consistency of every
//! section: a truncated, corrupted, foreign or newer blob is an [`Error`], never a panic.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::index::Config;
use crate::lane::lexical::LexicalIndex;
use crate::lane::semantic::VectorSection;
use crate::page::Page;

/// Magic bytes at the start of every blob.
pub const MAGIC: [u8; 8] = *b"WIKIDEX\0";
/// The format version this build writes.
pub const FORMAT_VERSION: u32 = 1;
/// The oldest format version this build reads.
pub const OLDEST_SUPPORTED_FORMAT_VERSION: u32 = 1;
/// Size of the fixed header before the payload.
pub const HEADER_LEN: usize = 56;

/// One chunk's row in the chunk table; its page and ordinal come from the table's order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ChunkRecord {
    /// Index of the page in the page list.
    pub page: u32,
    /// Byte span in the page's text.
    pub start: u32,
    /// Byte span end (exclusive).
    pub end: u32,
    /// Content hash of the chunk text.
    pub hash: String,
}

/// Everything stored in a blob.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct IndexData {
    pub config: Config,
    pub pages: Vec<Page>,
    pub chunks: Vec<ChunkRecord>,
    pub lexical: LexicalIndex,
    pub vectors: Option<VectorSection>,
}

/// Encodes an index as a blob.
pub(crate) fn encode(data: &IndexData) -> Result<Vec<u8>> {
    let payload = postcard::to_allocvec(data)
        .map_err(|e| Error::corrupt(format!("cannot encode index: {e}")))?;
    let mut out = Vec::with_capacity(HEADER_LEN + payload.len());
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(blake3::hash(&payload).as_bytes());
    out.extend_from_slice(&payload);
    Ok(out)
}

/// Decodes and validates a blob.
pub(crate) fn decode(bytes: &[u8]) -> Result<IndexData> {
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
    let (data, rest): (IndexData, &[u8]) = postcard::take_from_bytes(payload)
        .map_err(|e| Error::corrupt(format!("cannot decode payload: {e}")))?;
    if !rest.is_empty() {
        return Err(Error::corrupt("payload has unread bytes"));
    }
    validate(&data)?;
    let mut data = data;
    data.lexical.index_terms();
    Ok(data)
}

/// Checks every cross-reference a search or look-up relies on, so that a blob with a valid
/// checksum but inconsistent contents (written by a buggy or hostile writer) cannot make a
/// later index operation panic.
fn validate(data: &IndexData) -> Result<()> {
    data.config
        .validate()
        .map_err(|e| Error::corrupt(format!("stored configuration: {e}")))?;
    let n_pages = data.pages.len();
    let mut expect_page = 0usize;
    for (i, c) in data.chunks.iter().enumerate() {
        let p = c.page as usize;
        if p != expect_page && p != expect_page + 1 {
            return Err(Error::corrupt(format!("chunk {i} is out of page order")));
        }
        if i == 0 && p != 0 {
            return Err(Error::corrupt(
                "first chunk does not belong to the first page",
            ));
        }
        expect_page = p;
        let page = data
            .pages
            .get(p)
            .ok_or_else(|| Error::corrupt(format!("chunk {i} points at missing page {p}")))?;
        let (s, e) = (c.start as usize, c.end as usize);
        if s > e || page.text.get(s..e).is_none() {
            return Err(Error::corrupt(format!(
                "chunk {i} span {s}..{e} is outside its page"
            )));
        }
    }
    if n_pages > 0 && (data.chunks.is_empty() || expect_page + 1 != n_pages) {
        return Err(Error::corrupt("a page has no chunk"));
    }
    for p in &data.pages {
        if p.text.get(p.body_start as usize..).is_none() {
            return Err(Error::corrupt(format!(
                "page {} body offset is invalid",
                p.key
            )));
        }
    }
    data.lexical.validate(data.chunks.len())?;
    if let Some(v) = &data.vectors {
        v.validate(data.chunks.len())?;
    }
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
        bytes[8..12].copy_from_slice(&(FORMAT_VERSION + 1).to_le_bytes());
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

    #[test]
    fn trailing_bytes_are_corrupt() {
        let mut bytes = encode(&empty()).unwrap();
        bytes.push(0);
        assert_eq!(decode(&bytes).unwrap_err().code(), "corrupt_index");
    }
}
