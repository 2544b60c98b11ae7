//! The head and the sections of a blob (the header and the rule for versions: [`super`]).
//!
//! The head holds what every search reads: the configuration, a stub of each page (what
//! filters, link names and dates read: no text, title or summary; see [`head::Stubs`]), each page's
//! number of chunks, the chunk numbers and page times, the chunk lengths, where the blocks of
//! terms, pages and dictionary shards start, the first term of each block of postings (so the
//! first round of a search fetches its terms' postings with their shards), the vector section
//! without its values, and each section's length. It is deflated a field at a time
//! (`encode_head`) and inflates as one stream: the postcard encoding of [`Head`], whose
//! fields are, in order,
//!
//! ```text
//! config          the configuration
//! languages       the pages of each language detected (LanguageMix)
//! pages           the page stubs (Stubs: keys front-coded, then the stubs with more than a key)
//! chunk_counts    each page's number of chunks
//! chunk_numbers   each chunk's id number (empty: its position in its page)
//! page_modified   each page's file time (empty: none has one)
//! dictionary      each chunk's length (a dictionary without terms)
//! vectors         the vector section without its values, or none
//! positions       whether the index has term positions
//! term_blocks     the first term of each block of postings (as gaps)
//! page_blocks     the first page of each block of pages (as gaps)
//! sections        each section's length in the file, tag included
//! n_terms         the number of terms
//! dict_blocks     the first block of postings of each dictionary shard (as gaps)
//! block_bounds    the first term of each block of postings (front-coded)
//! ```
//!
//! The sections, in [`Part`] order: the dictionary in shards of consecutive terms (the terms,
//! their document frequencies and the surface words between a shard's first term and the next
//! shard's; a shard is one or more whole blocks of postings), the posting lists in blocks of
//! consecutive terms, their term positions in blocks alike (when the index has positions), the
//! whole pages in blocks of consecutive pages (with their chunks' spans), the raw layer, the
//! graph, the vectors' values (when the index has vectors). Blocks are cut at about
//! [`BLOCK_BYTES`] of encoded data (pages at [`PAGE_BLOCK_BYTES`] of text). A search reads the
//! shards of its terms and of the prefixes it is matched as, and those of a first letter only
//! for a word typo tolerance expands (a typo keeps the first character): see
//! [`crate::RangedIndex`]. A whole load reads every section.

use serde::{Deserialize, Serialize};

mod decode;
mod encode;
mod head;

pub(crate) use decode::{decode, decode_head, decode_section, head_end, Keep, Loaded};
pub(crate) use encode::encode;
#[cfg(feature = "fs")]
pub(crate) use encode::{encode_parts, Parts};
pub(crate) use head::Head;

/// About how many bytes of encoded data a block of postings or positions holds (a term larger
/// than that is a block of its own), and a dictionary shard (whole blocks of postings).
/// Smaller blocks fetch fewer bytes for a query and make the head's list of sections longer:
/// measured as [`PAGE_BLOCK_BYTES`] was, 2048 rather than 4096 fetches 8% (CACM) and 13%
/// (Cranfield) fewer bytes for a blob 1% larger; 1024 no fewer than 2048 (the head grows as
/// much as the blocks shrink), nor shards of 1024 with postings of 2048 (2% and 1%).
pub const BLOCK_BYTES: usize = 2048;

/// About how many bytes of page text a block of pages holds. A search fetches the block of
/// each page it shows, so pages come in smaller blocks than postings. Measured on the first
/// queries of CACM and Cranfield (the bench's kind: each query's two longest words;
/// `RangedIndex` in Node, median of ten): against 2048, 1024 fetches 13% and 8% fewer bytes
/// for a blob 6% and 4% larger whole, 512 17% and 15% fewer for 13% and 7% larger.
pub const PAGE_BLOCK_BYTES: usize = 1024;

/// One section as the head lists it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub(crate) struct Section {
    /// Its length in the file (deflated, with its tag). It inflates to at most what deflate
    /// can make of that length (as the head does), and its tag says whether it is the section
    /// the head was written with.
    pub len: u32,
}

/// The bytes before each section's deflated bytes: its tag.
const TAG_LEN: usize = 8;

/// What a section holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Part {
    /// Dictionary shard `i`.
    Dictionary(usize),
    /// The posting lists of term block `i`.
    Postings(usize),
    /// The term positions of term block `i`.
    Positions(usize),
    /// The pages of page block `i`.
    Pages(usize),
    /// The page graph.
    Graph,
    /// The raw layer.
    Raw,
    /// The vectors' values.
    Vectors,
}

/// A section's tag: the first [`TAG_LEN`] bytes of the BLAKE3 hash of its deflated bytes,
/// keyed with the head's hash.
fn tag(key: &[u8; 32], bytes: &[u8]) -> [u8; TAG_LEN] {
    let mut t = [0u8; TAG_LEN];
    t.copy_from_slice(&blake3::keyed_hash(key, bytes).as_bytes()[..TAG_LEN]);
    t
}

#[cfg(test)]
mod fixtures {
    /// A blob of four pages whose stubs differ (tags, a type, a date, a usage mode, a user scope)
    /// and a raw page, for the tests of the head and the sections.
    pub(super) fn small() -> Vec<u8> {
        let mut b = crate::IndexBuilder::new(crate::Config::default()).unwrap();
        b.add_file(
            "global/a.md",
            b"---\ntags: [x]\ntype: note\nupdated: 2024-03-01\n---\n# A\n\nalpha [[b]] \"beta\" gamma\n\ndelta",
        )
        .unwrap();
        b.add_file("global/b.md", b"---\nusage_mode: always\n---\ngamma alpha")
            .unwrap();
        b.add_file("user/ann/a.md", b"alphabet soup").unwrap();
        b.add_file("raw/r.md", b"raw text").unwrap();
        let (mut index, _) = b.build().unwrap();
        // Int8 vectors of two values a chunk, so that every kind of part is in it.
        let vectors: Vec<[f32; 2]> = (0..index.data.chunks.len())
            .map(|i| [1.0, i as f32])
            .collect();
        let int8 = crate::VectorEncoding::Int8;
        index.data.vectors = Some(crate::VectorSection::new("m", "f", 2, &vectors, int8).unwrap());
        index.to_bytes().unwrap()
    }
}
