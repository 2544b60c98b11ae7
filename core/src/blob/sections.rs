//! The head and the sections of a blob (the header and the rule for versions: [`super`]).
//!
//! The head holds what every search reads: the configuration, a stub of each page (what
//! filters, link names and dates read: no text, title or summary; see [`Stubs`]), each page's
//! number of chunks, the chunk numbers and page times, the chunk lengths, where the blocks of
//! terms, pages and dictionary shards start, the first term of each block of postings (so the
//! first round of a search fetches its terms' postings with their shards), the vector section
//! without its values, and each section's length. It is deflated a field at a time
//! ([`encode_head`]) and inflates as one stream: the postcard encoding of [`Head`], whose
//! fields are, in order,
//!
//! ```text
//! config          the configuration
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

use super::inflate::Inflater;
use super::{IndexData, HEADER_LEN};
use crate::data::config::Config;
use crate::data::error::{Error, Result};
use crate::graph::GraphSection;
use crate::lane::phrase::Positions;
use crate::lane::semantic::{VectorSection, VectorValues};
use crate::lane::token::MAX_PREFIX_EXPANSIONS;
use crate::postings::{block_range, front_coded, Dictionary, LexicalIndex, PostingBlock};
use crate::text::chunk::ChunkRecord;
use crate::text::page::{Extra, Page};
use crate::text::raw::RawSection;

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

/// What every search reads, at the head of a blob (see the module docs).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Head {
    pub config: Config,
    /// Per page: [`stub`] of it. [`crate::RangedIndex::open`] moves them into its index, where
    /// a page block's pages replace them.
    pub pages: Stubs,
    /// Each page's number of chunks: the chunk table without the spans (each page's block
    /// holds its chunks' spans).
    chunk_counts: Vec<u32>,
    /// The chunk table, every span empty and no hash until its page's block is loaded;
    /// derived from `chunk_counts` by [`Head::validate`] once their sum is checked.
    #[serde(skip)]
    pub chunks: Vec<ChunkRecord>,
    pub chunk_numbers: Vec<u32>,
    pub page_modified: Vec<Option<i64>>,
    /// The chunk lengths only ([`Dictionary::lengths_only`]).
    pub dictionary: Dictionary,
    /// The vector section with its values empty (its values are a section).
    pub vectors: Option<VectorSection>,
    /// Whether the index has term positions (a positions block per postings block).
    pub positions: bool,
    /// The first term of each block of postings (and positions).
    #[serde(with = "gaps")]
    pub term_blocks: Vec<u32>,
    /// The first page of each block of pages.
    #[serde(with = "gaps")]
    pub page_blocks: Vec<u32>,
    /// Every section, in [`Part`] order.
    pub sections: Vec<Section>,
    /// Number of terms in the dictionary.
    pub n_terms: u32,
    /// The first block of postings of each dictionary shard (none for an index with no
    /// terms).
    #[serde(with = "gaps")]
    pub dict_blocks: Vec<u32>,
    /// The first term of each block of postings, so that a search asks for the postings of
    /// its words' terms with their dictionary shards, before the shards say where the terms
    /// are.
    #[serde(with = "front_coded")]
    pub block_bounds: Vec<String>,
    /// The first term of each dictionary shard, derived from `block_bounds` by
    /// [`Head::validate`].
    #[serde(skip)]
    pub dict_bounds: Vec<String>,
    /// The BLAKE3 hash of the head's bytes: the key of the sections' tags.
    #[serde(skip)]
    pub key: [u8; 32],
}

/// The page stubs as a head stores them: every page's key, front-coded (the keys of
/// consecutive pages share their starts: CACM's 3,204 keys deflate to 178 bytes this way, to
/// 6.7 KB whole), then only the stubs that hold more than a key (tags, a type, aliases, a
/// date...), each after the number of pages since the one before (the first after its
/// position), without its key. A wiki's pages are mostly bare stubs (CACM's all are), and
/// opening a head decodes just the keys for them (decoding each of CACM's stubs' 22 fields
/// took 2.4 of the 4.0 ms of opening its head).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Stubs(pub Vec<Page>);

impl std::ops::Deref for Stubs {
    type Target = Vec<Page>;

    fn deref(&self) -> &Vec<Page> {
        &self.0
    }
}

#[derive(Serialize, Deserialize)]
struct StubsLayout {
    #[serde(with = "front_coded")]
    keys: Vec<String>,
    /// Where each of `others` goes: the number of pages since the one before (the first: its
    /// position). Apart from them, so that the stubs decode as a page block's pages do.
    gaps: Vec<u32>,
    others: Vec<Page>,
}

impl Serialize for Stubs {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let (mut gaps, mut others) = (Vec::new(), Vec::new());
        let mut last = 0;
        for (p, page) in self.0.iter().enumerate() {
            let keyless = Page {
                key: String::new(),
                ..page.clone()
            };
            if keyless != Page::default() {
                gaps.push((p - last) as u32);
                others.push(keyless);
                last = p;
            }
        }
        StubsLayout {
            keys: self.0.iter().map(|p| p.key.clone()).collect(),
            gaps,
            others,
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for Stubs {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Stubs, D::Error> {
        let StubsLayout { keys, gaps, others } = StubsLayout::deserialize(d)?;
        if gaps.len() != others.len() {
            return Err(crate::data::error::decode_error(
                "a position for each page stub, or a page stub for each position",
            ));
        }
        let mut pages: Vec<Page> = keys
            .into_iter()
            .map(|key| Page {
                key,
                ..Page::default()
            })
            .collect();
        let mut at: Option<usize> = None;
        for (gap, stub) in gaps.into_iter().zip(others) {
            let p = match at {
                None => Some(gap as usize),
                Some(_) if gap == 0 => None,
                Some(a) => a.checked_add(gap as usize),
            };
            let Some(page) = p.and_then(|p| pages.get_mut(p)) else {
                return Err(crate::data::error::decode_error(
                    "a page stub out of order or past the last key",
                ));
            };
            *page = Page {
                key: std::mem::take(&mut page.key),
                ..stub
            };
            at = p;
        }
        Ok(Stubs(pages))
    }
}

/// Ascending block starts as a head stores them: the gaps between them (the first as it
/// is), small numbers that deflate to a quarter of the bytes (CACM's 790 page blocks: 333
/// bytes rather than 1,398).
mod gaps {
    use serde::{Deserialize, Deserializer, Serializer};

    use crate::data::error::decode_error;

    pub(super) fn serialize<S: Serializer>(firsts: &[u32], s: S) -> Result<S::Ok, S::Error> {
        let mut prev = 0u32;
        s.collect_seq(firsts.iter().map(|&f| {
            let gap = f.wrapping_sub(prev);
            prev = f;
            gap
        }))
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u32>, D::Error> {
        let gaps: Vec<u32> = Vec::deserialize(d)?;
        let mut at = 0u32;
        let mut firsts = Vec::with_capacity(gaps.len());
        for gap in gaps {
            at = at
                .checked_add(gap)
                .ok_or_else(|| decode_error("block starts past 2^32"))?;
            firsts.push(at);
        }
        Ok(firsts)
    }
}

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

impl Head {
    /// The parts of the sections, in the order they lie in the file.
    pub(crate) fn parts(&self) -> Vec<Part> {
        let terms = self.term_blocks.len();
        let mut parts: Vec<Part> = (0..self.dict_blocks.len()).map(Part::Dictionary).collect();
        parts.extend((0..terms).map(Part::Postings));
        if self.positions {
            parts.extend((0..terms).map(Part::Positions));
        }
        parts.extend((0..self.page_blocks.len()).map(Part::Pages));
        // The raw layer first: the graph points into it, so a load checks it after.
        parts.extend([Part::Raw, Part::Graph]);
        if self.vectors.is_some() {
            parts.push(Part::Vectors);
        }
        parts
    }

    /// The pages of page block `i`.
    pub(crate) fn page_range(&self, i: usize) -> std::ops::Range<usize> {
        // One chunk count per page (checked by `validate`): a ranged index moves the pages out.
        block_range(&self.page_blocks, i, self.chunk_counts.len())
    }

    /// The chunks (positions in the chunk table) of the pages `pages`.
    pub(crate) fn chunk_range(&self, pages: std::ops::Range<usize>) -> std::ops::Range<usize> {
        chunks_of(&self.chunks, pages)
    }

    /// The page block page `p` is in.
    pub(crate) fn page_block(&self, p: usize) -> usize {
        self.page_blocks
            .partition_point(|&f| f as usize <= p)
            .saturating_sub(1)
    }

    /// The term block term `t` is in.
    pub(crate) fn term_block(&self, t: usize) -> usize {
        self.term_blocks
            .partition_point(|&f| f as usize <= t)
            .saturating_sub(1)
    }

    /// The dictionary of the shards at hand (see [`Dictionary::assemble`]: its terms numbered
    /// across them); the head's own (no terms) for an index with no terms.
    ///
    /// # Errors
    /// As [`Dictionary::assemble`].
    pub(crate) fn dictionary_of(&self, shards: &[Option<&Dictionary>]) -> Result<Dictionary> {
        if !self.sharded() {
            return Ok(self.dictionary.clone());
        }
        Dictionary::assemble(
            self.dictionary.lengths(),
            self.n_terms as usize,
            &self.dict_firsts(),
            shards,
        )
    }

    /// Whether the index has terms, which its dictionary shards hold ([`Head::validate`]
    /// checks that an index without shards has none).
    pub(crate) fn sharded(&self) -> bool {
        !self.dict_blocks.is_empty()
    }

    /// The first term of each dictionary shard.
    pub(crate) fn dict_firsts(&self) -> Vec<u32> {
        self.dict_blocks
            .iter()
            .map(|&b| self.term_blocks[b as usize])
            .collect()
    }

    /// The terms of dictionary shard `i`.
    pub(crate) fn shard_terms(&self, i: usize) -> std::ops::Range<usize> {
        let blocks = block_range(&self.dict_blocks, i, self.term_blocks.len());
        let start = self
            .term_blocks
            .get(blocks.start)
            .map_or(0, |&f| f as usize);
        let end = self
            .term_blocks
            .get(blocks.end)
            .map_or(self.n_terms as usize, |&f| f as usize);
        start..end
    }

    /// The dictionary shard that holds term `t`.
    pub(crate) fn term_shard(&self, t: usize) -> usize {
        let block = self.term_block(t) as u32;
        self.dict_blocks
            .partition_point(|&b| b <= block)
            .saturating_sub(1)
    }

    /// The dictionary shard that holds the term or surface word `w`, if the index has it (the
    /// first shard also holds the surface words before its first term).
    pub(crate) fn word_shard(&self, w: &str) -> usize {
        self.dict_bounds
            .partition_point(|b| b.as_str() <= w)
            .saturating_sub(1)
    }

    /// The dictionary shards that hold the words (terms or surface words) starting with
    /// `prefix`: the shard of `prefix` itself, and those after it whose first term starts
    /// with it.
    pub(crate) fn prefix_shards(&self, prefix: &str) -> std::ops::Range<usize> {
        let start = self.word_shard(prefix);
        let after = self.dict_bounds.get(start + 1..).unwrap_or_default();
        start..start + 1 + after.iter().take_while(|b| b.starts_with(prefix)).count()
    }

    /// The blocks of postings a search of the query term `term` reads, as far as the head
    /// tells before the dictionary shards do: the block of the
    /// term, and when it is also matched as a prefix (`prefix`), the blocks of the first
    /// [`crate::lane::token::MAX_PREFIX_EXPANSIONS`] terms it begins. A term the dictionary
    /// lacks wastes its block.
    pub(crate) fn term_postings(&self, term: &str, prefix: bool) -> std::ops::Range<usize> {
        if self.block_bounds.is_empty() {
            return 0..0;
        }
        let start = self
            .block_bounds
            .partition_point(|b| b.as_str() <= term)
            .saturating_sub(1);
        if !prefix {
            return start..start + 1;
        }
        // The first terms it begins are in this block and the next, up to as many terms past
        // this block's end as a prefix expands to.
        let limit = self
            .term_blocks
            .get(start + 1)
            .map_or(u64::MAX, |&f| u64::from(f) + MAX_PREFIX_EXPANSIONS as u64);
        let after = self.block_bounds.get(start + 1..).unwrap_or_default();
        let more = after
            .iter()
            .zip(&self.term_blocks[start + 1..])
            .take_while(|(b, &f)| b.starts_with(term) && u64::from(f) < limit)
            .count();
        start..start + 1 + more
    }

    /// Checks what a search reads of the head before any section is loaded (the same checks
    /// a whole load makes of these fields, but for the chunks' spans: the page texts are in
    /// the sections, [`check_page_block`] checks them), and derives the chunk table from the
    /// pages' chunk counts once they add up to the dictionary's chunk count (a count is never
    /// trusted with an allocation before that).
    pub(crate) fn validate(&mut self) -> Result<()> {
        self.config.validate_stored()?;
        let n_pages = self.pages.len();
        check_firsts(&self.page_blocks, n_pages, "page")?;
        check_firsts(&self.dict_blocks, self.term_blocks.len(), "dictionary")?;
        if self.block_bounds.len() != self.term_blocks.len()
            || self.block_bounds.windows(2).any(|w| w[0] >= w[1])
        {
            return Err(Error::corrupt("blocks of postings are out of order"));
        }
        // The shards' first terms are their first blocks'.
        self.dict_bounds = (self.dict_blocks.iter())
            .map(|&b| self.block_bounds[b as usize].clone())
            .collect();
        if !self.dictionary.is_lengths_only() {
            return Err(Error::corrupt("the head holds dictionary terms"));
        }
        check_firsts(&self.term_blocks, self.n_terms as usize, "term")?;
        if self.parts().len() != self.sections.len() {
            return Err(Error::corrupt(format!(
                "{} sections listed for {} parts",
                self.sections.len(),
                self.parts().len()
            )));
        }
        let total: u64 = self.chunk_counts.iter().map(|&n| u64::from(n)).sum();
        if self.chunk_counts.len() != n_pages || total != self.dictionary.chunk_count() as u64 {
            return Err(Error::corrupt(format!(
                "chunk counts of {} pages add up to {total}, for {} pages and {} chunk lengths",
                self.chunk_counts.len(),
                n_pages,
                self.dictionary.chunk_count()
            )));
        }
        self.chunks = (0u32..)
            .zip(&self.chunk_counts)
            .flat_map(|(page, &n)| {
                (0..n).map(move |_| ChunkRecord {
                    page,
                    start: 0,
                    end: 0,
                    hash: String::new(),
                })
            })
            .collect();
        // Order and a chunk for every page, as a whole load checks them (spans all empty).
        crate::text::chunk::validate_chunk_table(&self.chunks, n_pages, |_| Some(""))?;
        crate::text::chunk::validate_numbers(&self.chunks, &self.chunk_numbers)?;
        if !self.page_modified.is_empty() && self.page_modified.len() != n_pages {
            return Err(Error::corrupt(format!(
                "{} modification times for {} pages",
                self.page_modified.len(),
                n_pages
            )));
        }
        Ok(())
    }
}

/// Checks a list of block starts: the first is 0, ascending, each inside `0..n` (none for
/// `n == 0`).
fn check_firsts(firsts: &[u32], n: usize, what: &str) -> Result<()> {
    let ok = if n == 0 {
        firsts.is_empty()
    } else {
        firsts.first() == Some(&0)
            && firsts.windows(2).all(|w| w[0] < w[1])
            && firsts.last().is_some_and(|&l| (l as usize) < n)
    };
    if ok {
        Ok(())
    } else {
        Err(Error::corrupt(format!("{what} blocks are out of order")))
    }
}

/// The positions in a chunk table (in page order) of the chunks of the pages `pages`.
fn chunks_of(chunks: &[ChunkRecord], pages: std::ops::Range<usize>) -> std::ops::Range<usize> {
    let lo = chunks.partition_point(|c| (c.page as usize) < pages.start);
    let hi = chunks.partition_point(|c| (c.page as usize) < pages.end);
    lo..hi
}

/// What the head keeps of a page: what search filters (scope, tags, type, usage mode,
/// lifecycle, date), link resolution (key, redirects, aliases) and the ranking's ties (the
/// id) read.
pub(crate) fn stub(page: &Page) -> Page {
    // Inserted one by one: `collect` into a map sorts first (a copy of std's sort in the
    // browser module for this one type).
    let mut extra = std::collections::BTreeMap::new();
    for (k, v) in &page.extra.0 {
        if crate::text::page::DATE_FIELDS.contains(&k.as_str()) {
            extra.insert(k.clone(), v.clone());
        }
    }
    Page {
        key: page.key.clone(),
        scope: page.scope.clone(),
        path: String::new(),
        title: String::new(),
        summary: None,
        tags: page.tags.clone(),
        kind: page.kind.clone(),
        refs: Vec::new(),
        links: Vec::new(),
        sl_refs: Vec::new(),
        relations: Vec::new(),
        usage_mode: page.usage_mode,
        source: None,
        sources: Vec::new(),
        aliases: page.aliases.clone(),
        redirect_from: page.redirect_from.clone(),
        stale_since: None,
        archived_since: page.archived_since.clone(),
        provenance: Vec::new(),
        extra: Extra(extra),
        text: String::new(),
        body_start: 0,
    }
}

/// Whether `s` is [`stub`] of `page`, compared field by field rather than made (a whole load
/// checks every page against the head's stub).
fn is_stub_of(s: &Page, page: &Page) -> bool {
    // Every field, so that one added to `Page` is a compile error here until it is sorted
    // into those a stub keeps (compared) and those it leaves empty.
    let Page {
        key,
        scope,
        path,
        title,
        summary,
        tags,
        kind,
        refs,
        links,
        sl_refs,
        relations,
        usage_mode,
        source,
        sources,
        aliases,
        redirect_from,
        stale_since,
        archived_since,
        provenance,
        extra,
        text,
        body_start,
    } = s;
    let dates = page
        .extra
        .0
        .iter()
        .filter(|(k, _)| crate::text::page::DATE_FIELDS.contains(&k.as_str()));
    *key == page.key
        && *scope == page.scope
        && *tags == page.tags
        && *kind == page.kind
        && *usage_mode == page.usage_mode
        && *aliases == page.aliases
        && *redirect_from == page.redirect_from
        && *archived_since == page.archived_since
        && extra.0.iter().eq(dates)
        && path.is_empty()
        && title.is_empty()
        && summary.is_none()
        && refs.is_empty()
        && links.is_empty()
        && sl_refs.is_empty()
        && relations.is_empty()
        && source.is_none()
        && sources.is_empty()
        && stale_since.is_none()
        && provenance.is_empty()
        && text.is_empty()
        && *body_start == 0
}

/// Cuts `0..n` into blocks of about `block` bytes by each item's size; the first item of each
/// block.
fn cut(n: usize, block: usize, size: impl Fn(usize) -> usize) -> Vec<u32> {
    let mut firsts = Vec::new();
    let mut filled = block;
    for i in 0..n {
        if filled >= block {
            firsts.push(i as u32);
            filled = 0;
        }
        filled += size(i);
    }
    firsts
}

fn encode_err(e: impl std::fmt::Display) -> Error {
    Error::Encode {
        detail: e.to_string(),
    }
}

/// Encodes `value` as a section: its postcard bytes deflated.
fn section<T: Serialize + ?Sized>(value: &T) -> Result<Vec<u8>> {
    let raw = postcard::to_allocvec(value).map_err(encode_err)?;
    Ok(miniz_oxide::deflate::compress_to_vec(&raw, 9))
}

/// Encodes an index as a blob. Same input, same bytes.
pub(crate) fn encode(data: &IndexData) -> Result<Vec<u8>> {
    let lexical = &data.lexical;
    let n_terms = lexical.term_count();
    let positions = data.positions.as_ref();
    let term_blocks = cut(n_terms, BLOCK_BYTES, |t| {
        // About two bytes a posting for its gap and frequency, and as many for positions.
        let df = lexical.df(t);
        8 + 2 * df + positions.map_or(0, |_| 2 * df)
    });
    let page_blocks = cut(data.pages.len(), PAGE_BLOCK_BYTES, |p| {
        let page = &data.pages[p];
        page.text.len() + page.title.len() + 64
    });
    let mut bodies: Vec<Vec<u8>> = Vec::new();
    let mut sections: Vec<Section> = Vec::new();
    let mut push = |bytes: Vec<u8>| -> Result<()> {
        sections.push(Section {
            len: u32::try_from(bytes.len() + TAG_LEN)
                .map_err(|_| encode_err("a section over 4 GiB"))?,
        });
        bodies.push(bytes);
        Ok(())
    };
    let terms_of = |i: usize| block_range(&term_blocks, i, n_terms);
    // The dictionary shards, each some whole blocks of postings.
    let dictionary = lexical.dictionary();
    let (terms, others) = (dictionary.terms(), dictionary.other_words());
    // Each other surface word goes with the shard of the last term at or before it.
    let word_block = |w: &str| {
        let t = terms.partition_point(|t| t.as_str() <= w).saturating_sub(1);
        term_blocks
            .partition_point(|&f| f as usize <= t)
            .saturating_sub(1)
    };
    let mut block_bytes: Vec<usize> = (0..term_blocks.len())
        .map(|b| terms_of(b).map(|t| terms[t].len() + 4).sum())
        .collect();
    for w in others {
        if let Some(size) = block_bytes.get_mut(word_block(w)) {
            *size += w.len() + 4;
        }
    }
    let dict_blocks = cut(term_blocks.len(), BLOCK_BYTES, |b| block_bytes[b]);
    let term_blocks_bounds: Vec<String> = term_blocks
        .iter()
        .map(|&f| terms[f as usize].clone())
        .collect();
    let dict_bounds: Vec<String> = dict_blocks
        .iter()
        .map(|&b| term_blocks_bounds[b as usize].clone())
        .collect();
    for j in 0..dict_blocks.len() {
        let blocks = block_range(&dict_blocks, j, term_blocks.len());
        let first = terms_of(blocks.start).start;
        let last = blocks.end.checked_sub(1).map_or(first, |b| terms_of(b).end);
        let words_from = |j: usize| match j {
            0 => 0,
            j => dict_bounds
                .get(j)
                .map_or(others.len(), |b| others.partition_point(|w| w < b)),
        };
        push(section(
            &dictionary.shard(first..last, words_from(j)..words_from(j + 1)),
        )?)?;
    }
    for i in 0..term_blocks.len() {
        push(section(&lexical.posting_block(terms_of(i)))?)?;
    }
    if let Some(p) = positions {
        for i in 0..term_blocks.len() {
            push(section(&p.block(lexical, terms_of(i)))?)?;
        }
    }
    for i in 0..page_blocks.len() {
        let pages = block_range(&page_blocks, i, data.pages.len());
        let spans: Vec<(u32, u32)> = data.chunks[chunks_of(&data.chunks, pages.clone())]
            .iter()
            .map(|c| (c.start, c.end))
            .collect();
        push(section(&(&data.pages[pages], spans))?)?;
    }
    push(section(&data.raw)?)?;
    push(section(&data.graph)?)?;
    if let Some(v) = &data.vectors {
        push(section(&v.values)?)?;
    }
    let head = Head {
        config: data.config.clone(),
        pages: Stubs(data.pages.iter().map(stub).collect()),
        chunk_counts: {
            let mut counts = vec![0u32; data.pages.len()];
            for c in &data.chunks {
                counts[c.page as usize] += 1;
            }
            counts
        },
        chunks: Vec::new(),
        chunk_numbers: data.chunk_numbers.clone(),
        page_modified: data.page_modified.clone(),
        dictionary: dictionary.lengths_only(),
        vectors: data.vectors.as_ref().map(|v| VectorSection {
            values: empty_like(&v.values),
            ..v.clone()
        }),
        positions: positions.is_some(),
        term_blocks,
        page_blocks,
        sections,
        n_terms: u32::try_from(n_terms).map_err(|_| encode_err("over 4 billion terms"))?,
        block_bounds: term_blocks_bounds,
        dict_blocks,
        dict_bounds,
        key: [0; 32],
    };
    let head_bytes = encode_head(&head)?;
    Ok(assemble(&head_bytes, &bodies))
}

/// Encodes the head: its postcard bytes, deflated a field at a time, each field in deflate
/// blocks of its own with their own codes (CACM's head deflates to 7.9 KB rather than 9.0 as
/// one run, whose blocks mixed the page stubs, the chunk lengths and the list of sections; as
/// little as zopfli's 7.5 KB, at no cost in time). It inflates as one stream, to the postcard
/// bytes of `head`, so a reader sees no difference.
fn encode_head(head: &Head) -> Result<Vec<u8>> {
    #[derive(Serialize)]
    struct Gaps<'a>(#[serde(with = "gaps")] &'a Vec<u32>);
    #[derive(Serialize)]
    struct FrontCoded<'a>(#[serde(with = "front_coded")] &'a Vec<String>);
    fn field<T: Serialize + ?Sized>(value: &T) -> Result<Vec<u8>> {
        postcard::to_allocvec(value).map_err(encode_err)
    }
    // Every field, in order (a field added to `Head` is a compile error here until it is
    // listed, with the encoding its attribute gives it).
    let Head {
        config,
        pages,
        chunk_counts,
        chunks: _,
        chunk_numbers,
        page_modified,
        dictionary,
        vectors,
        positions,
        term_blocks,
        page_blocks,
        sections,
        n_terms,
        dict_blocks,
        block_bounds,
        dict_bounds: _,
        key: _,
    } = head;
    let fields = [
        field(config)?,
        field(pages)?,
        field(chunk_counts)?,
        field(chunk_numbers)?,
        field(page_modified)?,
        field(dictionary)?,
        field(vectors)?,
        field(positions)?,
        field(&Gaps(term_blocks))?,
        field(&Gaps(page_blocks))?,
        field(sections)?,
        field(n_terms)?,
        field(&Gaps(dict_blocks))?,
        field(&FrontCoded(block_bounds))?,
    ];
    // The fields one after another are the head's encoding (each field's own attribute is
    // copied above); checked in debug builds, the tests'.
    debug_assert!(field(head).is_ok_and(|whole| whole == fields.concat()));
    deflate_fields(&fields)
}

/// One deflate stream of `fields` one after another, a full flush after each: each field
/// starts a new block, with codes of its own.
fn deflate_fields(fields: &[Vec<u8>]) -> Result<Vec<u8>> {
    use miniz_oxide::deflate::core::{
        compress, create_comp_flags_from_zip_params, CompressorOxide, TDEFLFlush, TDEFLStatus,
    };
    let mut compressor = CompressorOxide::new(create_comp_flags_from_zip_params(9, 0, 0));
    let mut out = vec![0u8; fields.iter().map(Vec::len).sum::<usize>() / 2 + 64];
    let mut at = 0;
    for (i, field) in fields.iter().enumerate() {
        let flush = if i + 1 == fields.len() {
            TDEFLFlush::Finish
        } else {
            TDEFLFlush::Full
        };
        let mut input = &field[..];
        loop {
            let (status, read, wrote) = compress(&mut compressor, input, &mut out[at..], flush);
            at += wrote;
            input = &input[read..];
            match status {
                TDEFLStatus::Done => break,
                TDEFLStatus::Okay if input.is_empty() && flush != TDEFLFlush::Finish => break,
                TDEFLStatus::Okay => {
                    // More to write than room for it.
                    if out.len() - at < 64 || (read == 0 && wrote == 0) {
                        out.resize(out.len() * 2, 0);
                    }
                }
                _ => return Err(encode_err("deflate stopped")),
            }
        }
    }
    out.truncate(at);
    Ok(out)
}

/// A blob: the header, the head, then each section's tag (keyed with the head's hash) and its
/// bytes.
fn assemble(head_bytes: &[u8], bodies: &[Vec<u8>]) -> Vec<u8> {
    let key = *blake3::hash(head_bytes).as_bytes();
    let mut out = Vec::with_capacity(
        HEADER_LEN + head_bytes.len() + bodies.iter().map(|b| b.len() + TAG_LEN).sum::<usize>(),
    );
    super::put_header(&mut out, head_bytes);
    for b in bodies {
        out.extend_from_slice(&tag(&key, b));
        out.extend_from_slice(b);
    }
    out
}

/// A section's tag: the first [`TAG_LEN`] bytes of the BLAKE3 hash of its deflated bytes,
/// keyed with the head's hash.
fn tag(key: &[u8; 32], bytes: &[u8]) -> [u8; TAG_LEN] {
    let mut t = [0u8; TAG_LEN];
    t.copy_from_slice(&blake3::keyed_hash(key, bytes).as_bytes()[..TAG_LEN]);
    t
}

/// Vector values of the same encoding with no rows.
pub(crate) fn empty_like(values: &VectorValues) -> VectorValues {
    match values {
        VectorValues::F32(_) => VectorValues::F32(Vec::new()),
        VectorValues::Int8 { .. } => VectorValues::Int8 {
            values: Vec::new(),
            scales: Vec::new(),
        },
    }
}

/// How many bytes from the start of a blob its head ends at, read from the first
/// [`HEADER_LEN`] bytes (checked as far as they go: magic, version, flags).
///
/// # Errors
/// As a load of those bytes: [`Error::NotAnIndex`], [`Error::IncompatibleFormat`] for a
/// version this build does not read, [`Error::Corrupt`] for fewer than [`HEADER_LEN`] bytes.
pub(crate) fn head_end(prefix: &[u8]) -> Result<u64> {
    super::check_header(prefix)?;
    let mut len = [0u8; 8];
    len.copy_from_slice(&prefix[16..24]);
    u64::from_le_bytes(len)
        .checked_add(HEADER_LEN as u64)
        .ok_or_else(|| Error::corrupt("head length overflows"))
}

/// Reads the head from the blob's first bytes (at least up to [`head_end`]; bytes after it
/// are ignored), checking its hash and what [`Head::validate`] checks.
///
/// # Errors
/// As [`head_end`], and [`Error::Corrupt`] for a head cut short, changed or inconsistent.
pub(crate) fn decode_head(bytes: &[u8]) -> Result<Head> {
    let end = head_end(bytes)?;
    let Some(head) = usize::try_from(end)
        .ok()
        .and_then(|e| bytes.get(HEADER_LEN..e))
    else {
        return Err(Error::corrupt(format!(
            "truncated: the head ends at byte {end}, the bytes at {}",
            bytes.len()
        )));
    };
    let key = *blake3::hash(head).as_bytes();
    if key[..] != bytes[24..56] {
        return Err(Error::corrupt("head checksum mismatch"));
    }
    let mut head: Head = inflate_decode(&mut Inflater::new(), head, || "the head".into())?;
    head.key = key;
    head.validate()?;
    Ok(head)
}

/// Inflates a section (or the head) with `inflater` and decodes it; `what` names it in an
/// error.
fn inflate_decode<T: serde::de::DeserializeOwned>(
    inflater: &mut Inflater,
    bytes: &[u8],
    what: impl Fn() -> String,
) -> Result<T> {
    let raw = inflater
        .inflate(bytes)
        .map_err(|e| Error::corrupt(format!("cannot inflate {}: {e}", what())))?;
    from_postcard(raw, what)
}

/// Decodes the postcard bytes `raw` of a section (or the head) named `what`.
fn from_postcard<'a, T: Deserialize<'a>>(raw: &'a [u8], what: impl Fn() -> String) -> Result<T> {
    crate::data::error::take_decode_cause();
    postcard::from_bytes(raw).map_err(|e| {
        let cause = crate::data::error::take_decode_cause();
        match (e, cause) {
            (postcard::Error::SerdeDeCustom, Some(cause)) => {
                Error::corrupt(format!("cannot decode {}: {cause}", what()))
            }
            (e, _) => Error::corrupt(format!("cannot decode {}: {e}", what())),
        }
    })
}

/// A decoded section.
pub(crate) enum Loaded {
    Dictionary(Dictionary),
    Postings(PostingBlock),
    Positions(Vec<u8>),
    /// The pages of a block, and the spans of their chunks.
    Pages(Vec<Page>, Vec<(u32, u32)>),
    Graph(GraphSection),
    Raw(RawSection),
    Vectors(VectorValues),
}

/// Checks section `i`'s bytes against its length and its tag (keyed with the head's hash) and
/// decodes them.
///
/// # Errors
/// [`Error::Corrupt`] for bytes that are not that section.
pub(crate) fn decode_section(
    head: &Head,
    stubs: &[Page],
    parts: &[Part],
    i: usize,
    bytes: &[u8],
) -> Result<Loaded> {
    let Some(&part) = parts.get(i) else {
        return Err(Error::corrupt(format!("no section {i}")));
    };
    let bytes = checked_body(head, i, bytes)?;
    decode_part(head, stubs, part, i, bytes, &mut Inflater::new())
}

/// Decodes section `i`, a `part`, from its deflated bytes.
fn decode_part(
    head: &Head,
    stubs: &[Page],
    part: Part,
    i: usize,
    bytes: &[u8],
    inflater: &mut Inflater,
) -> Result<Loaded> {
    let what = || format!("section {i}");
    Ok(match part {
        Part::Dictionary(j) => {
            let shard: Dictionary = inflate_decode(inflater, bytes, what)?;
            check_shard(head, j, &shard)?;
            Loaded::Dictionary(shard)
        }
        Part::Postings(_) => Loaded::Postings(inflate_decode(inflater, bytes, what)?),
        Part::Positions(_) => {
            let raw = inflater
                .inflate(bytes)
                .map_err(|e| Error::corrupt(format!("cannot inflate section {i}: {e}")))?;
            // A block is stored as a `Vec<u8>`, which postcard writes as it writes bytes.
            Loaded::Positions(from_postcard::<&[u8]>(raw, what)?.to_vec())
        }
        Part::Pages(b) => {
            let (pages, spans): (Vec<Page>, Vec<(u32, u32)>) =
                inflate_decode(inflater, bytes, what)?;
            check_page_block(head, stubs, b, &pages, &spans)?;
            Loaded::Pages(pages, spans)
        }
        Part::Graph => Loaded::Graph(inflate_decode(inflater, bytes, what)?),
        Part::Raw => Loaded::Raw(inflate_decode(inflater, bytes, what)?),
        Part::Vectors => Loaded::Vectors(inflate_decode(inflater, bytes, what)?),
    })
}

/// Section `i`'s deflated bytes, once `bytes` are checked against its length and its tag
/// (keyed with the head's hash).
///
/// # Errors
/// [`Error::Corrupt`] for bytes that are not that section.
fn checked_body<'a>(head: &Head, i: usize, bytes: &'a [u8]) -> Result<&'a [u8]> {
    let mismatch = || Error::corrupt(format!("section {i} checksum mismatch"));
    let Some(s) = head.sections.get(i) else {
        return Err(Error::corrupt(format!("no section {i}")));
    };
    if bytes.len() != s.len as usize {
        return Err(mismatch());
    }
    match bytes.split_at_checked(TAG_LEN) {
        Some((t, rest)) if t == tag(&head.key, rest) => Ok(rest),
        _ => Err(mismatch()),
    }
}

/// Checks dictionary shard `j` against the head: as many terms as it spans, the first one the
/// head's, the terms and the other surface words sorted and between its first term and the
/// next shard's (the first shard's words may come before its first term), the own bits and
/// the frequencies as many as the terms, each other word's term inside the dictionary.
fn check_shard(head: &Head, j: usize, d: &Dictionary) -> Result<()> {
    let bad = |what: &str| Err(Error::corrupt(format!("dictionary shard {j}: {what}")));
    let terms = d.terms();
    if terms.len() != head.shard_terms(j).len() || terms.first() != head.dict_bounds.get(j) {
        return bad("not the terms the head lists");
    }
    if !d.is_shard_shaped() {
        return bad("its lists disagree");
    }
    // The head names each block's first term too: those of this shard's blocks.
    let first = head.shard_terms(j).start;
    let blocks = block_range(&head.dict_blocks, j, head.term_blocks.len());
    if blocks.into_iter().any(|b| {
        let t = head.term_blocks[b] as usize - first;
        terms.get(t) != head.block_bounds.get(b)
    }) {
        return bad("not the terms the head lists");
    }
    let next = head.dict_bounds.get(j + 1);
    let inside = |w: &String| next.is_none_or(|n| w < n);
    let words = d.other_words();
    if terms.windows(2).any(|w| w[0] >= w[1])
        || words.windows(2).any(|w| w[0] >= w[1])
        || !terms.last().is_none_or(inside)
        || !words.last().is_none_or(inside)
        || (j > 0 && words.first().is_some_and(|w| w < &head.dict_bounds[j]))
        || d.other_terms().iter().any(|&t| t >= head.n_terms)
    {
        return bad("words out of order or out of range");
    }
    Ok(())
}

/// Checks the pages of page block `b` against the head: as many as the block spans, each
/// the page its stub stands for, its body offset inside its text, and a span for each of
/// their chunks, inside its page's text.
fn check_page_block(
    head: &Head,
    stubs: &[Page],
    b: usize,
    pages: &[Page],
    spans: &[(u32, u32)],
) -> Result<()> {
    let range = head.page_range(b);
    if pages.len() != range.len() {
        return Err(Error::corrupt(format!(
            "page block {b} holds {} pages, not {}",
            pages.len(),
            range.len()
        )));
    }
    for (page, p) in pages.iter().zip(range.clone()) {
        if !stubs.get(p).is_some_and(|s| is_stub_of(s, page)) {
            return Err(Error::corrupt(format!(
                "page {} differs from its entry in the head",
                page.key
            )));
        }
        if page.text.get(page.body_start as usize..).is_none() {
            return Err(Error::corrupt(format!(
                "page {} body offset is invalid",
                page.key
            )));
        }
    }
    let chunks = head.chunk_range(range.clone());
    if spans.len() != chunks.len() {
        return Err(Error::corrupt(format!(
            "page block {b} holds {} chunk spans, not {}",
            spans.len(),
            chunks.len()
        )));
    }
    for (i, &(s, e)) in chunks.zip(spans) {
        let page = &pages[head.chunks[i].page as usize - range.start];
        if s > e || page.text.get(s as usize..e as usize).is_none() {
            return Err(Error::corrupt(format!(
                "chunk {i} span {s}..{e} is outside its page"
            )));
        }
    }
    Ok(())
}

/// Decodes a whole blob (`bytes` from its first byte to its last) into the index's data, before
/// the checks and derivations every load makes ([`super::decode`] goes on with them). Each
/// section is checked as [`decode_section`] checks it, with one [`Inflater`] for them all;
/// the dictionary shards are joined without copying their words, and the lexical index's
/// look-up maps are left to [`super::finish`] (made once).
///
/// # Errors
/// [`Error::Corrupt`] for any part cut short, changed or inconsistent.
pub(crate) fn decode(bytes: &[u8]) -> Result<IndexData> {
    let head = decode_head(bytes)?;
    let parts = head.parts();
    let mut at = usize::try_from(head_end(bytes)?).unwrap_or(usize::MAX);
    let inflater = &mut Inflater::new();
    let mut shards: Vec<Dictionary> = Vec::with_capacity(head.dict_blocks.len());
    let mut postings: Vec<PostingBlock> = Vec::with_capacity(head.term_blocks.len());
    let mut positions: Vec<Vec<u8>> = Vec::with_capacity(head.term_blocks.len());
    let mut pages: Vec<Page> = Vec::with_capacity(head.pages.len());
    let mut spans: Vec<(u32, u32)> = Vec::with_capacity(head.chunks.len());
    let (mut graph, mut raw, mut values) = (None, None, None);
    for (i, (s, &part)) in head.sections.iter().zip(&parts).enumerate() {
        let end = at.saturating_add(s.len as usize);
        let Some(section) = bytes.get(at..end) else {
            return Err(Error::corrupt(format!(
                "truncated: section {i} ends past the last byte"
            )));
        };
        at = end;
        let body = checked_body(&head, i, section)?;
        match decode_part(&head, &head.pages, part, i, body, inflater)? {
            Loaded::Dictionary(d) => shards.push(d),
            Loaded::Postings(p) => postings.push(p),
            Loaded::Positions(p) => positions.push(p),
            Loaded::Pages(mut p, mut s) => {
                pages.append(&mut p);
                spans.append(&mut s);
            }
            Loaded::Graph(g) => graph = Some(g),
            Loaded::Raw(r) => raw = Some(r),
            Loaded::Vectors(v) => values = Some(v),
        }
    }
    if at != bytes.len() {
        return Err(Error::corrupt(format!(
            "{} trailing bytes after the last section",
            bytes.len() - at
        )));
    }
    let dictionary = if head.sharded() {
        Dictionary::concat(
            head.dictionary.lengths().to_vec(),
            head.n_terms as usize,
            &head.dict_firsts(),
            shards,
        )?
    } else {
        head.dictionary.clone()
    };
    let lexical = LexicalIndex::from_parts(dictionary, &head.term_blocks, &postings)?;
    let positions = if head.positions {
        let blocks: Vec<Option<&[u8]>> = positions.iter().map(|p| Some(&p[..])).collect();
        Some(Positions::from_parts(&lexical, &head.term_blocks, &blocks)?)
    } else {
        None
    };
    let vectors = match (head.vectors, values) {
        (Some(v), Some(values)) => Some(VectorSection { values, ..v }),
        _ => None,
    };
    let mut chunks = head.chunks;
    for (c, (start, end)) in chunks.iter_mut().zip(spans) {
        (c.start, c.end) = (start, end);
    }
    Ok(IndexData {
        config: head.config,
        pages,
        chunks,
        lexical,
        vectors,
        graph: graph.unwrap_or_default(),
        raw: raw.unwrap_or_default(),
        chunk_numbers: head.chunk_numbers,
        page_modified: head.page_modified,
        positions,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{IndexBuilder, RangedIndex, SearchOptions};

    fn small() -> Vec<u8> {
        let mut b = IndexBuilder::new(Config::default()).unwrap();
        b.add_file(
            "global/a.md",
            b"---\ntags: [x]\ntype: note\nupdated: 2024-03-01\n---\n# A\n\nalpha [[b]] \"beta\" gamma\n\ndelta",
        )
        .unwrap();
        b.add_file("global/b.md", b"---\nusage_mode: always\n---\ngamma alpha")
            .unwrap();
        b.add_file("user/ann/a.md", b"alphabet soup").unwrap();
        b.add_file("raw/r.md", b"raw text").unwrap();
        let (index, _) = b.build().unwrap();
        index.to_bytes().unwrap()
    }

    #[test]
    fn page_stubs_keep_what_a_head_reads_and_list_only_those_with_more_than_a_key() {
        let blob = small();
        let head = decode_head(&blob).unwrap();
        // a (tags, type, date), b (usage mode) and ann's a (its scope) hold more than a key.
        assert_eq!(head.pages.len(), 3);
        let bytes = postcard::to_allocvec(&head.pages).unwrap();
        let layout: StubsLayout = postcard::from_bytes(&bytes).unwrap();
        assert_eq!(layout.gaps, [0, 1, 1]);
        assert_eq!(postcard::from_bytes::<Stubs>(&bytes).unwrap(), head.pages);
        // Bare stubs are their keys alone.
        let bare = Stubs(
            ["p", "q", "r"]
                .map(|k| Page {
                    key: k.into(),
                    ..Page::default()
                })
                .to_vec(),
        );
        let bytes = postcard::to_allocvec(&bare).unwrap();
        assert!(postcard::from_bytes::<StubsLayout>(&bytes)
            .unwrap()
            .others
            .is_empty());
        assert_eq!(postcard::from_bytes::<Stubs>(&bytes).unwrap(), bare);
        // Stubs out of order, past the last key, or not one for each position are errors.
        let stub = Page {
            tags: vec!["t".into()],
            ..Page::default()
        };
        for (gaps, others) in [
            (vec![1, 0], vec![stub.clone(), stub.clone()]),
            (vec![3], vec![stub.clone()]),
            (vec![0, 1], vec![stub.clone()]),
        ] {
            let keys = ["p", "q", "r"].map(String::from).to_vec();
            let bytes = postcard::to_allocvec(&StubsLayout { keys, gaps, others }).unwrap();
            assert!(postcard::from_bytes::<Stubs>(&bytes).is_err());
        }
    }

    #[test]
    fn a_page_is_compared_with_a_stub_as_its_stub_would_be() {
        let full = Page {
            key: "k".into(),
            scope: crate::text::page::Scope::User("ann".into()),
            path: "user/ann/k.md".into(),
            title: "K".into(),
            summary: Some("s".into()),
            tags: vec!["t".into()],
            kind: Some("note".into()),
            refs: vec!["r".into()],
            links: vec!["l".into()],
            sl_refs: vec!["x".into()],
            relations: vec![crate::text::page::Relation {
                target: "t".into(),
                kind: "x".into(),
                confidence: 1.0,
                evidence: None,
                chunk: None,
            }],
            usage_mode: crate::text::page::UsageMode::Always,
            source: Some("src".into()),
            sources: vec![crate::text::page::SourceRef {
                chunk: "raw/r::chunk_0".into(),
                weight: 1.0,
                hash: None,
            }],
            aliases: vec!["a".into()],
            redirect_from: vec!["old".into()],
            stale_since: Some("2024-01-01".into()),
            archived_since: Some("2024-02-01".into()),
            provenance: vec!["p".into()],
            extra: Extra(
                [
                    ("updated", "2024-03-01"),
                    ("owner", "ann"),
                    ("date", "2024-01-02"),
                ]
                .map(|(k, v)| (k.to_string(), serde_json::Value::from(v)))
                .into_iter()
                .collect(),
            ),
            text: "text".into(),
            body_start: 2,
        };
        // Each field changed, then cleared: a stub of one page is or is not one of another
        // exactly as the stubs made of both compare.
        let mut pages = vec![full.clone(), Page::default()];
        let variants: [fn(&mut Page); 22] = [
            |p| p.key.push('2'),
            |p| p.scope = crate::text::page::Scope::Global,
            |p| p.path.push('2'),
            |p| p.title.push('2'),
            |p| p.summary = None,
            |p| p.tags.clear(),
            |p| p.kind = None,
            |p| p.refs.clear(),
            |p| p.links.clear(),
            |p| p.sl_refs.clear(),
            |p| p.relations.clear(),
            |p| p.usage_mode = crate::text::page::UsageMode::Never,
            |p| p.source = None,
            |p| p.sources.clear(),
            |p| p.aliases.clear(),
            |p| p.redirect_from.clear(),
            |p| p.stale_since = None,
            |p| p.archived_since = None,
            |p| p.provenance.clear(),
            |p| {
                p.extra.0.remove("updated");
            },
            |p| p.text.clear(),
            |p| p.body_start = 0,
        ];
        for change in variants {
            let mut p = full.clone();
            change(&mut p);
            pages.push(p);
        }
        let mut with_owner = Page::default();
        with_owner.extra.0.insert("owner".into(), "x".into());
        pages.push(with_owner);
        for a in &pages {
            for b in &pages {
                // Stubs, and pages that are not stubs (a stub with text is no stub).
                for s in [stub(a), a.clone()] {
                    assert_eq!(is_stub_of(&s, b), s == stub(b), "{s:?} of {b:?}");
                }
            }
        }
    }

    /// The blob with section `i`'s encoded bytes (before deflate) replaced by `raw`, and every
    /// hash and length made valid again: only the decoders' own checks stand between hostile
    /// content and a panic. `i == usize::MAX` replaces the head.
    fn with_raw(blob: &[u8], i: usize, raw: &[u8]) -> Vec<u8> {
        let mut head = decode_head(blob).unwrap();
        let mut bodies = bodies(blob);
        let body = miniz_oxide::deflate::compress_to_vec(raw, 1);
        let head_bytes = if i == usize::MAX {
            body
        } else {
            head.sections[i] = Section {
                len: (body.len() + TAG_LEN) as u32,
            };
            bodies[i] = body;
            section(&head).unwrap()
        };
        assemble(&head_bytes, &bodies)
    }

    /// The deflated bytes of each section of a blob, without their tags.
    fn bodies(blob: &[u8]) -> Vec<Vec<u8>> {
        let head = decode_head(blob).unwrap();
        let mut at = head_end(blob).unwrap() as usize;
        let mut out = Vec::new();
        for s in &head.sections {
            out.push(blob[at + TAG_LEN..at + s.len as usize].to_vec());
            at += s.len as usize;
        }
        out
    }

    /// Loads `blob` whole and in parts, searching and reading a page; errors are fine, a panic
    /// fails the test.
    fn exercise(blob: &[u8]) {
        let _ = super::super::decode(blob);
        let Ok(end) = head_end(blob) else { return };
        let Some(head) = blob.get(..end as usize) else {
            return;
        };
        let Ok(mut ranged) = RangedIndex::open(head) else {
            return;
        };
        // A head may list sections past the file's end (a range request would fail there).
        // Bytes refused load nothing.
        for [s, e] in ranged.missing() {
            if let Some(bytes) = blob.get(s as usize..e as usize) {
                let before = (ranged.missing(), ranged.loaded_bytes());
                if ranged.supply(s, bytes).is_err() {
                    assert_eq!((ranged.missing(), ranged.loaded_bytes()), before);
                }
            }
        }
        let opts = SearchOptions {
            facets: true,
            explain: true,
            ..Default::default()
        };
        for q in ["alpha \"beta gamma\"", "alphx", "delt"] {
            let _ = ranged.search(q, &opts);
        }
        let _ = ranged.page_record("a", None);
        let _ = ranged.into_index();
    }

    #[test]
    fn fields_deflated_apart_inflate_to_their_concatenation() {
        // Empty fields, small ones, and one larger than the first output buffer that does not
        // compress (pseudo-random bytes), so the buffer grows mid-field.
        let mut x = 12345u32;
        let noise: Vec<u8> = (0..200_000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                x as u8
            })
            .collect();
        let cases: Vec<Vec<Vec<u8>>> = vec![
            vec![vec![]],
            vec![b"abc".to_vec()],
            vec![
                vec![],
                b"revenue revenue revenue".to_vec(),
                vec![],
                vec![7; 5000],
            ],
            vec![b"head".to_vec(), noise.clone(), vec![0; 100_000], noise],
        ];
        for fields in cases {
            let deflated = deflate_fields(&fields).unwrap();
            let inflated = miniz_oxide::inflate::decompress_to_vec(&deflated).unwrap();
            assert_eq!(inflated, fields.concat());
        }
    }

    #[test]
    fn a_head_asking_for_billions_of_chunks_is_corrupt_before_any_allocation() {
        let blob = small();
        let mut head = decode_head(&blob).unwrap();
        head.chunk_counts[0] = u32::MAX;
        let bad = with_raw(&blob, usize::MAX, &postcard::to_allocvec(&head).unwrap());
        assert_eq!(decode_head(&bad).unwrap_err().code(), "corrupt_index");
        assert_eq!(
            super::super::decode(&bad).unwrap_err().code(),
            "corrupt_index"
        );
    }

    #[test]
    fn a_head_claiming_billions_of_terms_allocates_nothing_for_them_and_its_shards_are_corrupt() {
        let blob = small();
        let mut head = decode_head(&blob).unwrap();
        assert!(head.sharded());
        head.n_terms = u32::MAX;
        let bad = with_raw(&blob, usize::MAX, &postcard::to_allocvec(&head).unwrap());
        let end = head_end(&bad).unwrap() as usize;
        // In parts, the terms not loaded take nothing; the last shard holds fewer terms.
        let mut ranged = RangedIndex::open(&bad[..end]).unwrap();
        let missing = ranged.missing();
        let parts: Vec<(u64, &[u8])> = missing
            .iter()
            .map(|&[s, e]| (s, &bad[s as usize..e as usize]))
            .collect();
        assert_eq!(
            ranged.supply_many(&parts).unwrap_err().code(),
            "corrupt_index"
        );
        // Whole, the shards are here and hold fewer terms.
        assert_eq!(
            super::super::decode(&bad).unwrap_err().code(),
            "corrupt_index"
        );
    }

    #[test]
    fn hostile_parts_with_valid_hashes_are_errors_never_panics() {
        let blob = small();
        let end = head_end(&blob).unwrap() as usize;
        let mut raws: Vec<(usize, Vec<u8>)> = Vec::new();
        raws.push((
            usize::MAX,
            miniz_oxide::inflate::decompress_to_vec(&blob[HEADER_LEN..end]).unwrap(),
        ));
        for (i, body) in bodies(&blob).iter().enumerate() {
            raws.push((i, miniz_oxide::inflate::decompress_to_vec(body).unwrap()));
        }
        for (i, raw) in &raws {
            for cut in 0..raw.len() {
                exercise(&with_raw(&blob, *i, &raw[..cut]));
            }
            for at in 0..raw.len() {
                for flip in [0x01u8, 0x80, 0xff] {
                    let mut bad = raw.clone();
                    bad[at] ^= flip;
                    exercise(&with_raw(&blob, *i, &bad));
                }
            }
        }
    }

    #[test]
    fn a_section_of_another_head_is_refused_though_intact() {
        // The same sections after a head that differs in one setting (another version of the
        // blob on the server): each section's tag is keyed with the head it was written with.
        let blob = small();
        let mut head = decode_head(&blob).unwrap();
        head.config.max_query_chars += 1;
        let end = head_end(&blob).unwrap() as usize;
        let mut other = Vec::new();
        super::super::put_header(&mut other, &section(&head).unwrap());
        let other_end = other.len();
        other.extend_from_slice(&blob[end..]);
        let mut ranged = RangedIndex::open(&other[..other_end]).unwrap();
        for [s, e] in ranged.missing() {
            let err = ranged
                .supply(s, &other[s as usize..e as usize])
                .unwrap_err();
            assert_eq!(err.code(), "corrupt_index");
            assert!(err.to_string().contains("checksum mismatch"), "{err}");
        }
        assert_eq!(
            super::super::decode(&other).unwrap_err().code(),
            "corrupt_index"
        );
        // Keyed with its own head, the same bytes load.
        let retagged = assemble(&section(&head).unwrap(), &bodies(&blob));
        assert!(super::super::decode(&retagged).is_ok());
    }
}
