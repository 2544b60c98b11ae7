//! The head of a blob: what every search reads (see [`super`] for its fields), the page
//! stubs it keeps, and the checks a head passes before anything reads it.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::{Part, Section};
use crate::data::config::Config;
use crate::data::error::{Error, Result};
use crate::data::record::LanguageMix;
use crate::lane::semantic::VectorSection;
use crate::lane::token::MAX_PREFIX_EXPANSIONS;
use crate::postings::{block_range, front_coded, Dictionary, WordList};
use crate::text::chunk::ChunkRecord;
use crate::text::page::{Extra, Page, Scope};

/// What every search reads, at the head of a blob (see the module docs).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Head {
    pub config: Config,
    /// The languages of the pages.
    pub languages: LanguageMix,
    /// Per page: [`stub`] of it. [`crate::RangedIndex::open`] makes them the pages of its
    /// index ([`Stubs::into_pages`]), where a page block's pages replace them.
    pub pages: Stubs,
    /// Each page's number of chunks: the chunk table without the spans (each page's block
    /// holds its chunks' spans).
    pub(super) chunk_counts: Vec<u32>,
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
///
/// Held as stored too: the keys end to end in one list, and the other stubs with their
/// places. A whole load only checks each page against its stub ([`StubOf`]); a stub is made
/// a [`Page`] of its own only for an index read in parts ([`Stubs::into_pages`]). Made for
/// every page at a load, the stubs of a million pages took half a gigabyte and a tenth of a
/// second to free.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Stubs {
    /// Every page's key.
    keys: WordList,
    /// The pages whose stub holds more than a key, ascending.
    places: Vec<u32>,
    /// Their stubs, keys left empty.
    others: Vec<Page>,
}

#[derive(Serialize, Deserialize)]
struct StubsLayout {
    #[serde(with = "front_coded")]
    keys: WordList,
    /// Where each of `others` goes: the number of pages since the one before (the first: its
    /// position). Apart from them, so that the stubs decode as a page block's pages do.
    gaps: Vec<u32>,
    others: Vec<Page>,
}

impl Stubs {
    /// `stubs` (each [`stub`] of its page) as a head holds them.
    pub(crate) fn of(stubs: impl Iterator<Item = Page>) -> Stubs {
        let mut out = Stubs::default();
        for (p, mut page) in (0u32..).zip(stubs) {
            out.keys.push(&std::mem::take(&mut page.key));
            if page != Page::default() {
                out.places.push(p);
                out.others.push(page);
            }
        }
        out
    }

    /// How many pages there are.
    pub(crate) fn len(&self) -> usize {
        self.keys.len()
    }

    /// The stub of page `p` but its key: its other stub, or a bare one.
    fn rest_of(&self, p: usize) -> &Page {
        static BARE: std::sync::LazyLock<Page> = std::sync::LazyLock::new(Page::default);
        match self.places.binary_search(&(p as u32)) {
            Ok(i) => &self.others[i],
            Err(_) => &BARE,
        }
    }

    /// Whether the pages are in canonical order (scope, then key), none twice.
    pub(crate) fn in_canonical_order(&self) -> bool {
        let mut others = self.places.iter().zip(&self.others).peekable();
        let global = Scope::Global;
        let mut last: Option<(&Scope, &str)> = None;
        for (p, key) in (0u32..).zip(self.keys.iter()) {
            let scope = match others.next_if(|&(&at, _)| at == p) {
                Some((_, stub)) => &stub.scope,
                None => &global,
            };
            if last.is_some_and(|l| l >= (scope, key)) {
                return false;
            }
            last = Some((scope, key));
        }
        true
    }

    /// Each stub as a page of its own, as an index holds its pages.
    pub(crate) fn into_pages(self) -> Vec<Arc<Page>> {
        let mut others = self.places.into_iter().zip(self.others).peekable();
        (0u32..)
            .zip(self.keys.iter())
            .map(|(p, key)| {
                let stub = others.next_if(|(at, _)| *at == p).map(|(_, stub)| stub);
                Arc::new(Page {
                    key: key.to_string(),
                    ..stub.unwrap_or_default()
                })
            })
            .collect()
    }
}

/// Pages' stubs a page read from a block is checked against: the head's, or the pages of an
/// index read in parts (stubs until their block comes).
pub(crate) trait StubOf {
    /// Whether the stub of page `p` is [`stub`] of `page`.
    fn stub_of(&self, p: usize, page: &Page) -> bool;
}

impl StubOf for Stubs {
    fn stub_of(&self, p: usize, page: &Page) -> bool {
        self.keys.get(p) == Some(page.key.as_str()) && is_stub_but_key(self.rest_of(p), page)
    }
}

impl StubOf for [Arc<Page>] {
    fn stub_of(&self, p: usize, page: &Page) -> bool {
        self.get(p)
            .is_some_and(|s| s.key == page.key && is_stub_but_key(s, page))
    }
}

impl Serialize for Stubs {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        /// [`StubsLayout`], borrowed.
        #[derive(Serialize)]
        struct Layout<'a> {
            #[serde(with = "front_coded")]
            keys: &'a WordList,
            gaps: Vec<u32>,
            others: &'a [Page],
        }
        let mut last = 0;
        let gaps = (self.places.iter())
            .map(|&p| p - std::mem::replace(&mut last, p))
            .collect();
        Layout {
            keys: &self.keys,
            gaps,
            others: &self.others,
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for Stubs {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Stubs, D::Error> {
        let StubsLayout {
            keys,
            gaps,
            mut others,
        } = StubsLayout::deserialize(d)?;
        // A stored stub's key is the list's (a writer leaves it empty): held empty, so that
        // stubs of the same pages are equal and write the same bytes.
        others.iter_mut().for_each(|o| o.key.clear());
        if gaps.len() != others.len() {
            return Err(crate::data::error::decode_error(
                "a position for each page stub, or a page stub for each position",
            ));
        }
        // Where each of `others` goes, checked.
        let mut places: Vec<u32> = Vec::with_capacity(gaps.len());
        for gap in gaps {
            let p = match places.last() {
                None => Some(gap),
                Some(_) if gap == 0 => None,
                Some(&a) => a.checked_add(gap),
            };
            match p.filter(|&p| (p as usize) < keys.len()) {
                Some(p) => places.push(p),
                None => {
                    return Err(crate::data::error::decode_error(
                        "a page stub out of order or past the last key",
                    ))
                }
            }
        }
        Ok(Stubs {
            keys,
            places,
            others,
        })
    }
}

/// Ascending block starts as a head stores them: the gaps between them (the first as it
/// is), small numbers that deflate to a quarter of the bytes (CACM's 790 page blocks: 333
/// bytes rather than 1,398).
pub(super) mod gaps {
    use serde::{Deserialize, Deserializer, Serializer};

    use crate::data::error::decode_error;

    pub(in crate::blob::sections) fn serialize<S: Serializer>(
        firsts: &[u32],
        s: S,
    ) -> Result<S::Ok, S::Error> {
        let mut prev = 0u32;
        s.collect_seq(firsts.iter().map(|&f| {
            let gap = f.wrapping_sub(prev);
            prev = f;
            gap
        }))
    }

    pub(in crate::blob::sections) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Vec<u32>, D::Error> {
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
    /// the sections, `check_page_block` checks them), and derives the chunk table from the
    /// pages' chunk counts once they add up to the dictionary's chunk count (a count is never
    /// trusted with an allocation before that).
    pub(crate) fn validate(&mut self) -> Result<()> {
        self.config.validate_stored()?;
        // Look-ups by key and by id search the pages by binary search.
        if !self.pages.in_canonical_order() {
            return Err(Error::corrupt(
                "pages are not in order of scope and key, each once",
            ));
        }
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
                })
            })
            .collect();
        // Order and a chunk for every page, as a whole load checks them (spans all empty).
        crate::text::chunk::validate_chunk_table(&self.chunks, n_pages, |_| Some(""))?;
        crate::text::chunk::validate_numbers(&self.chunks, &self.chunk_numbers)?;
        self.languages.validate(n_pages)?;
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
pub(super) fn chunks_of(
    chunks: &[ChunkRecord],
    pages: std::ops::Range<usize>,
) -> std::ops::Range<usize> {
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

/// Whether `s` is [`stub`] of `page` but for their keys (compared apart: [`StubOf`]),
/// compared field by field rather than made (a whole load checks every page against the
/// head's stub).
fn is_stub_but_key(s: &Page, page: &Page) -> bool {
    // Every field, so that one added to `Page` is a compile error here until it is sorted
    // into those a stub keeps (compared) and those it leaves empty.
    let Page {
        key: _,
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
    *scope == page.scope
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

#[cfg(test)]
mod tests {
    use super::super::decode_head;
    use super::super::fixtures::small;
    use super::*;

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
        // Each stub made a page of its own is the stub of the page a whole load reads.
        let index = crate::Index::from_bytes(&blob).unwrap();
        let pages = head.pages.clone().into_pages();
        assert_eq!(pages.len(), index.pages().len());
        for (p, (page, own)) in index.pages().iter().zip(&pages).enumerate() {
            assert_eq!(**own, stub(page));
            assert!(head.pages.stub_of(p, page) && pages[..].stub_of(p, page));
            assert!(!head.pages.stub_of((p + 1) % 3, page));
        }
        // Bare stubs are their keys alone.
        let bare = Stubs::of(["p", "q", "r"].into_iter().map(|k| Page {
            key: k.into(),
            ..Page::default()
        }));
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
            let keys = ["p", "q", "r"].into_iter().collect();
            let bytes = postcard::to_allocvec(&StubsLayout { keys, gaps, others }).unwrap();
            assert!(postcard::from_bytes::<Stubs>(&bytes).is_err());
        }
        // A key stored in a stub is not its page's (the list's is): it decodes as without one.
        let layout = |stub: &Page| {
            let keys = ["p", "q", "r"].into_iter().collect();
            let others = vec![stub.clone()];
            postcard::to_allocvec(&StubsLayout {
                keys,
                gaps: vec![1],
                others,
            })
            .unwrap()
        };
        let keyed = Page {
            key: "zzz".into(),
            ..stub.clone()
        };
        let decoded = postcard::from_bytes::<Stubs>(&layout(&keyed)).unwrap();
        assert_eq!(
            decoded,
            postcard::from_bytes::<Stubs>(&layout(&stub)).unwrap()
        );
        assert_eq!(postcard::to_allocvec(&decoded).unwrap(), layout(&stub));
    }

    #[test]
    fn stubs_are_in_canonical_order_when_their_scopes_and_keys_ascend() {
        let stubs = |pages: &[(&str, Option<&str>)]| {
            Stubs::of(pages.iter().map(|&(key, user)| Page {
                key: key.into(),
                scope: user.map_or(Scope::Global, |u| Scope::User(u.into())),
                ..Page::default()
            }))
        };
        assert!(stubs(&[]).in_canonical_order());
        assert!(stubs(&[
            ("a", None),
            ("b", None),
            ("a", Some("ann")),
            ("b", Some("ann"))
        ])
        .in_canonical_order());
        assert!(stubs(&[("a", None), ("a", Some("ann")), ("a", Some("bob"))]).in_canonical_order());
        for wrong in [
            &[("b", None), ("a", None)][..],
            &[("a", None), ("a", None)],
            &[("a", Some("ann")), ("b", None)],
            &[("a", Some("bob")), ("a", Some("ann"))],
        ] {
            assert!(!stubs(wrong).in_canonical_order(), "{wrong:?}");
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
                    let expected = s == stub(b);
                    let head = Stubs::of(std::iter::once(s.clone()));
                    assert_eq!(head.stub_of(0, b), expected, "{s:?} of {b:?}");
                    assert_eq!([Arc::new(s)][..].stub_of(0, b), expected);
                }
            }
        }
    }
}
