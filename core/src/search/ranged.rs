//! An index read in parts from a blob ([`crate::blob`]): what a
//! browser uses to search a big site without downloading the whole blob first.
//!
//! Open it with the blob's head ([`RangedIndex::head_end`] says how many bytes from the start
//! that is), then search. A search that reads parts not loaded yet fails with
//! [`Error::NotLoaded`] naming their byte ranges; fetch those (HTTP range requests), hand each
//! to [`RangedIndex::supply`] and search again. A first search reads the dictionary
//! shards of the query's terms and of the terms the word being typed begins, with the postings
//! the head says those terms are in (a word the wiki lacks reads, in a round more, the shards
//! of the terms it begins and, when typo tolerance expands it, those of the words starting with
//! its first character, then the postings of the terms it is taken for), and the next the pages
//! its hits show. Parts stay loaded, so the next queries fetch less and less. Every answer is the one the whole index gives: a shard holds every word of
//! its range with its document frequency, and the head the chunk lengths, so loading a part
//! never changes a ranking, only completes it.
//!
//! ```
//! # use wikidex::{IndexBuilder, RangedIndex, SearchOptions, Error};
//! # let mut b = IndexBuilder::new(Default::default())?;
//! # b.add_file("global/revenue.md", b"Revenue is recognized monthly.")?;
//! # let (index, _) = b.build()?;
//! let blob = index.to_bytes()?;                      // a site serves this file
//! let head = RangedIndex::head_end(&blob[..56])? as usize;
//! let mut ranged = RangedIndex::open(&blob[..head])?;
//! let opts = SearchOptions::default();
//! let results = loop {
//!     match ranged.search("revenue", &opts) {
//!         Err(Error::NotLoaded { ranges }) => {
//!             for [start, end] in ranges {                // one range request each
//!                 ranged.supply(start, &blob[start as usize..end as usize])?;
//!             }
//!         }
//!         other => break other?,
//!     }
//! };
//! assert_eq!(results, index.search("revenue", &opts)?);
//! # Ok::<(), wikidex::Error>(())
//! ```

use crate::blob::{self, Head, Loaded, Part, HEADER_LEN};
use crate::data::error::{Error, Result};
use crate::embed::Embedder;
use crate::index::{Index, PageRecord};
use crate::lane::lexical::Bm25Scorer;
use crate::lane::phrase::Positions;
use crate::lane::semantic::VectorSection;
use crate::lane::{token, typo};
use crate::postings::{Dictionary, LexicalIndex, PostingBlock};
use crate::search::{Analyzed, Reads, SearchOptions, SearchResults};
use crate::text::analyze::QueryTerm;
use crate::text::page::Scope;

/// An index whose parts load on demand from a blob (see the module docs).
#[derive(Debug)]
pub struct RangedIndex {
    /// The head's stubs and the parts loaded so far, as an index the search code reads.
    index: Index,
    /// How the records this handle returns count offsets.
    unit: crate::OffsetUnit,
    head: Head,
    parts: Vec<Part>,
    /// Where each section starts in the blob (one more entry: the blob's length).
    starts: Vec<u64>,
    /// Per section: loaded.
    loaded: Vec<bool>,
    /// The dictionary shards loaded.
    shards: Vec<Option<Dictionary>>,
    postings: Vec<Option<PostingBlock>>,
    positions: Vec<Option<Vec<u8>>>,
    /// The vector section as the head describes it, until its values load.
    vectors: Option<VectorSection>,
}

impl RangedIndex {
    /// How many bytes from the start of a blob its head takes, read from the blob's first
    /// [`HEADER_LEN`] (56) bytes: fetch that many, then [`RangedIndex::open`].
    ///
    /// # Errors
    /// [`Error::NotAnIndex`] for foreign bytes, [`Error::IncompatibleFormat`] for a format
    /// version this build does not read, [`Error::Corrupt`] for fewer than 56 bytes.
    pub fn head_end(prefix: &[u8]) -> Result<u64> {
        blob::head_end(prefix)
    }

    /// Opens a blob from its first bytes: at least its head; the whole sections in
    /// the bytes after it are loaded too (a reader that fetches a fixed prefix, say the first
    /// 64 KiB, wastes none of it), and a section cut off at their end is left out.
    ///
    /// # Errors
    /// As [`RangedIndex::head_end`], and [`Error::Corrupt`] for a head cut short, changed or
    /// inconsistent, or a whole section after it that is not what the head says.
    pub fn open(head_bytes: &[u8]) -> Result<RangedIndex> {
        let mut head = blob::decode_head(head_bytes)?;
        // The index takes the page stubs (not a copy); a page block's pages replace them.
        let pages = std::mem::take(&mut head.pages).into_pages();
        let parts = head.parts();
        let mut starts = Vec::with_capacity(head.sections.len() + 1);
        let mut at = blob::head_end(head_bytes)?;
        starts.push(at);
        for s in &head.sections {
            at = at
                .checked_add(u64::from(s.len))
                .ok_or_else(|| Error::corrupt("sections overflow"))?;
            starts.push(at);
        }
        let n_blocks = head.term_blocks.len();
        let postings: Vec<Option<PostingBlock>> = vec![None; n_blocks];
        let positions = vec![None; n_blocks];
        // The head's vector section without values (a head that holds some is not trusted
        // with them: the values come from their own section, checked when it loads).
        let vectors = head.vectors.as_ref().map(VectorSection::without_rows);
        let shards = vec![None; head.dict_blocks.len()];
        let data = blob::IndexData {
            config: head.config.clone(),
            languages: head.languages.clone(),
            pages,
            chunks: head.chunks.clone(),
            lexical: LexicalIndex::default(),
            vectors: vectors.clone(),
            graph: Default::default(),
            raw: Default::default(),
            chunk_numbers: head.chunk_numbers.clone(),
            page_modified: head.page_modified.clone(),
            positions: None,
        };
        let mut ranged = RangedIndex {
            index: Index::from_data(data),
            unit: crate::OffsetUnit::Byte,
            loaded: vec![false; head.sections.len()],
            shards,
            head,
            parts,
            starts,
            postings,
            positions,
            vectors,
        };
        // Nothing loaded yet: the lexical index of no shard, with no lists.
        let terms = ranged.terms_of(&vec![None; ranged.shards.len()], &[], &[])?;
        ranged.set_terms(terms);
        let end = ranged.starts[0] as usize;
        if head_bytes.len() >= ranged.starts.get(1).map_or(u64::MAX, |&e| e) as usize {
            ranged.supply(end as u64, &head_bytes[end..])?;
        }
        Ok(ranged)
    }

    /// Sets how the records this handle returns count offsets (default
    /// [`crate::OffsetUnit::Byte`]; see [`crate::data::offset`]).
    pub fn set_offset_unit(&mut self, unit: crate::OffsetUnit) {
        self.unit = unit;
    }

    /// The blob's length in bytes.
    pub fn blob_len(&self) -> u64 {
        self.starts.last().copied().unwrap_or(HEADER_LEN as u64)
    }

    /// Hands over bytes of the blob that start at byte `start`: one or more whole sections
    /// (as [`Error::NotLoaded`] names them; bytes past the last whole section are ignored).
    /// A section loaded before is left as it is.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when `start` is not where a section starts, or the bytes
    /// hold no whole section; [`Error::Corrupt`] when they are not what the head says is there
    /// (nothing is loaded then).
    pub fn supply(&mut self, start: u64, bytes: &[u8]) -> Result<()> {
        self.supply_many(&[(start, bytes)])
    }

    /// `section` checked against the rest of the index, for the parts whose decoding cannot
    /// check it alone: the graph against the pages, the chunks and the raw layer (`raw_chunks`:
    /// how many raw chunks there are, set when the raw layer comes, which lies before the graph
    /// in the blob).
    fn checked(&self, section: Loaded, raw_chunks: &mut usize) -> Result<Loaded> {
        Ok(match section {
            Loaded::Raw(r) => {
                r.validate()?;
                *raw_chunks = r.chunks.len();
                Loaded::Raw(r)
            }
            Loaded::Graph(g) => {
                g.validate(
                    self.index.data.pages.len(),
                    self.head.chunks.len(),
                    *raw_chunks,
                )?;
                Loaded::Graph(g)
            }
            other => other,
        })
    }

    /// Hands over several ranges of the blob at once, each as [`RangedIndex::supply`] takes
    /// one: what one [`Error::NotLoaded`] names. The dictionary, when shards came, is made
    /// again once rather than once a range.
    ///
    /// # Errors
    /// As [`RangedIndex::supply`], for any of the ranges (nothing is loaded then).
    pub fn supply_many(&mut self, ranges: &[(u64, &[u8])]) -> Result<()> {
        let mut ranges: Vec<(u64, &[u8])> = ranges.to_vec();
        crate::data::sort::sort_by_key(&mut ranges, |&(start, _)| start);
        // Decode and check every section first, so that bytes with a bad part load nothing.
        let mut decoded: Vec<(usize, Loaded)> = Vec::new();
        let mut raw_chunks = self.index.data.raw.chunks.len();
        for (start, bytes) in ranges {
            let Ok(first) = self.starts[..self.starts.len() - 1].binary_search(&start) else {
                return Err(Error::invalid_argument(format!(
                    "byte {start} is not where a section of this blob starts"
                )));
            };
            let end = start + bytes.len() as u64;
            let mut i = first;
            while i < self.head.sections.len() && self.starts[i + 1] <= end {
                if !self.loaded[i] && !decoded.iter().any(|&(k, _)| k == i) {
                    let from = (self.starts[i] - start) as usize;
                    let to = (self.starts[i + 1] - start) as usize;
                    let section = blob::decode_section(
                        &self.head,
                        &self.index.data.pages[..],
                        &self.parts,
                        i,
                        &bytes[from..to],
                    )?;
                    decoded.push((i, self.checked(section, &mut raw_chunks)?));
                }
                i += 1;
            }
            if i == first {
                return Err(Error::invalid_argument(format!(
                    "{} bytes at {start} hold no whole section (the next is {} bytes)",
                    bytes.len(),
                    self.starts[first + 1] - start
                )));
            }
        }
        // What the lexical index reads once these sections are in: the shards, postings and
        // positions at hand with the new ones laid over them. The lexical index and the
        // positions are made from them, and checked, before anything is loaded.
        let mut shards: Vec<Option<&Dictionary>> = self.shards.iter().map(Option::as_ref).collect();
        let mut postings: Vec<Option<&PostingBlock>> =
            self.postings.iter().map(Option::as_ref).collect();
        let mut positions: Vec<Option<&[u8]>> =
            self.positions.iter().map(Option::as_deref).collect();
        let (mut new_shards, mut new_lists) = (false, false);
        for (i, section) in &decoded {
            match (section, self.parts[*i]) {
                (Loaded::Dictionary(d), Part::Dictionary(j)) => {
                    shards[j] = Some(d);
                    new_shards = true;
                }
                (Loaded::Postings(b), Part::Postings(k)) => {
                    postings[k] = Some(b);
                    new_lists = true;
                }
                (Loaded::Positions(p), Part::Positions(k)) => {
                    positions[k] = Some(p);
                    new_lists = true;
                }
                _ => {}
            }
        }
        let terms = if new_shards || new_lists {
            Some(self.terms_of(&shards, &postings, &positions)?)
        } else {
            None
        };
        if let Some(terms) = terms {
            self.set_terms(terms);
        }
        for (i, section) in decoded {
            self.loaded[i] = true;
            let data = &mut self.index.data;
            match section {
                Loaded::Dictionary(d) => {
                    if let Part::Dictionary(j) = self.parts[i] {
                        self.shards[j] = Some(d);
                    }
                }
                Loaded::Postings(b) => {
                    if let Part::Postings(k) = self.parts[i] {
                        self.postings[k] = Some(b);
                    }
                }
                Loaded::Positions(p) => {
                    if let Part::Positions(k) = self.parts[i] {
                        self.positions[k] = Some(p);
                    }
                }
                Loaded::Pages(pages, spans) => {
                    let Part::Pages(k) = self.parts[i] else {
                        continue;
                    };
                    let range = self.head.page_range(k);
                    let chunks = self.head.chunk_range(range.clone());
                    for (p, page) in range.zip(pages) {
                        data.pages[p] = page;
                    }
                    for (c, (start, end)) in data.chunks[chunks.clone()].iter_mut().zip(spans) {
                        (c.start, c.end) = (start, end);
                    }
                    // A hash asked for before the block came was of an empty span.
                    for hash in &mut self.index.hashes[chunks] {
                        *hash = std::sync::OnceLock::new();
                    }
                }
                Loaded::Graph(g) => data.graph = g,
                Loaded::Raw(r) => {
                    (self.index.raw_ids, self.index.raw_first) = crate::index::raw_lookup(&r);
                    self.index.data.raw = std::sync::Arc::new(r);
                }
                Loaded::Vectors(values) => {
                    data.vectors = self.vectors.as_ref().map(|meta| VectorSection {
                        values,
                        ..meta.clone()
                    });
                    self.index.codes = std::sync::OnceLock::new();
                }
            }
        }
        Ok(())
    }

    /// Searches as [`Index::search`] does, with the same answers.
    ///
    /// # Errors
    /// [`Error::NotLoaded`] with the byte ranges of the parts the search reads that are not
    /// loaded yet (the dictionary shards of the query's words, in stages, as the module docs
    /// say; the postings of the query's terms and expansions, their
    /// positions for a phrase, the vectors for a query vector; then the pages its hits show);
    /// otherwise as
    /// [`Index::search`].
    pub fn search(&self, query: &str, opts: &SearchOptions) -> Result<SearchResults> {
        self.search_with_model(query, opts, None)
    }

    /// [`RangedIndex::search`] with `model` to embed the query for the semantic lane, as a
    /// [`crate::Session`] holding that model searches: the same answers, the vectors' values
    /// read with the postings of the query's terms when the semantic lane is asked for. The
    /// model runs in every round that reaches the semantic lane (a caller that retries
    /// gives one that remembers its last answer: [`crate::file::RangedFile`] does).
    ///
    /// # Errors
    /// As [`RangedIndex::search`].
    pub fn search_with_model(
        &self,
        query: &str,
        opts: &SearchOptions,
        model: Option<&dyn Embedder>,
    ) -> Result<SearchResults> {
        let words = |qterms: &[QueryTerm<'_>]| self.words_read(qterms, opts.typos);
        let terms = |analyzed: &Analyzed<'_>| {
            let (postings, positions) = self.index.terms_read(analyzed);
            let mut need: Vec<Part> = postings
                .iter()
                .map(|&t| Part::Postings(self.head.term_block(self.global_term(t))))
                .collect();
            if self.head.positions {
                need.extend(
                    positions
                        .iter()
                        .map(|&t| Part::Positions(self.head.term_block(self.global_term(t)))),
                );
            }
            if self.vectors.is_some()
                && opts.wants(crate::Lane::Semantic)
                && (opts.query_vector.is_some() || model.is_some())
            {
                need.push(Part::Vectors);
            }
            self.require(&need)
        };
        let pages = |pages: &[usize]| {
            let need: Vec<Part> = pages
                .iter()
                .map(|&p| Part::Pages(self.head.page_block(p)))
                .collect();
            self.require(&need)
        };
        let reads = Reads {
            words: &words,
            terms: &terms,
            pages: &pages,
        };
        let caller = crate::index::Caller {
            model,
            unit: self.unit,
        };
        self.index.search_checked(query, opts, Some(&reads), caller)
    }

    /// [`Error::NotLoaded`] for the dictionary shards a search of `qterms` reads, as far as
    /// the shards at hand tell; each round of a search asks for the next ones:
    /// 1. the shard of each query term (its look-up), and those of the terms the last word
    ///    and its term begin (the word being typed is matched as a prefix), with the postings
    ///    of those terms ([`Head::term_postings`]: the search reads them next);
    /// 2. with those, the shards of the terms that begin the words whose terms the dictionary
    ///    lacks (matched as prefixes too), and, when `typos`, of the words that start as the
    ///    words typo tolerance expands do ([`typo::expands`]: a typo keeps the first
    ///    character);
    /// 3. with those, the shards of the terms of those words (`computers` → `comput`). Every
    ///    stemmer here keeps a word's first letter or changes it as it changes the query's
    ///    (German `ä` → `a`), so these are mostly at hand already.
    ///
    /// A query of words the wiki has reads a shard or two for each, not every shard of their
    /// first letters; a mistyped word costs a round more.
    fn words_read(&self, qterms: &[QueryTerm<'_>], typos: bool) -> Result<()> {
        if !self.head.sharded() {
            // No terms: nothing to read.
            return Ok(());
        }
        let head = &self.head;
        let n = qterms.len();
        let mut need = vec![false; self.shards.len()];
        let mut postings: Vec<Part> = Vec::new();
        for (i, q) in qterms.iter().enumerate() {
            need[head.word_shard(&q.term)] = true;
            postings.extend(head.term_postings(&q.term, false).map(Part::Postings));
            if i + 1 == n {
                for p in token::prefixes(false, i, qterms) {
                    need[head.prefix_shards(p)].fill(true);
                    postings.extend(head.term_postings(p, true).map(Part::Postings));
                }
            }
        }
        // With them, the postings the head says those terms are in, which the search
        // reads next when the dictionary has the terms: a round less.
        self.require_shards(&need, postings)?;
        let lexical = &self.index.data.lexical;
        let known: Vec<Option<usize>> = qterms.iter().map(|q| lexical.lookup(&q.term)).collect();
        let mut chars: Vec<char> = Vec::new();
        for i in 0..n {
            for p in token::prefixes(known[i].is_some(), i, qterms) {
                need[head.prefix_shards(p)].fill(true);
            }
            if typos && typo::expands(lexical, qterms, &known, i) {
                if let Some(c) = qterms[i].word.chars().next() {
                    let mut buf = [0u8; 4];
                    need[head.prefix_shards(c.encode_utf8(&mut buf))].fill(true);
                    chars.push(c);
                }
            }
        }
        self.require_shards(&need, Vec::new())?;
        for j in 0..need.len() {
            if let (true, Some(shard)) = (need[j], &self.shards[j]) {
                for (w, &t) in shard.other_words().iter().zip(shard.other_terms()) {
                    if w.chars().next().is_some_and(|c| chars.contains(&c)) {
                        need[head.term_shard(t as usize)] = true;
                    }
                }
            }
        }
        self.require_shards(&need, Vec::new())
    }

    /// [`Error::NotLoaded`] for the dictionary shards `need` marks, and the parts `with`, that
    /// are not loaded.
    fn require_shards(&self, need: &[bool], with: Vec<Part>) -> Result<()> {
        let mut parts: Vec<Part> = (0..need.len())
            .filter(|&j| need[j])
            .map(Part::Dictionary)
            .collect();
        parts.extend(with);
        self.require(&parts)
    }

    /// The page's record, as [`Index::page_record`].
    ///
    /// # Errors
    /// [`Error::NotLoaded`] for the page's part and the graph until they are loaded;
    /// otherwise as [`Index::page_record`].
    pub fn page_record(&self, key: &str, scope: Option<&Scope>) -> Result<PageRecord> {
        let mut need = vec![Part::Graph, Part::Raw];
        if let Some(p) = self.index.page_index(key, scope) {
            need.push(Part::Pages(self.head.page_block(p as usize)));
        }
        self.require(&need)?;
        self.index.page_record_in(key, scope, self.unit)
    }

    /// The chunk `id` (of a page, or of a raw document), as [`Index::chunk`] gives it.
    ///
    /// # Errors
    /// [`Error::NotLoaded`] for the raw layer and the part of the page the id names until they
    /// are loaded; otherwise as [`Index::chunk`].
    pub fn chunk(&self, id: &str) -> Result<crate::Chunk> {
        // Every raw document's id begins with `raw/` and no page's does: a page's chunk needs
        // its page's part, not the raw layer.
        let need = crate::text::chunk::parse_chunk_id(id).and_then(|(key, _)| {
            if key.starts_with(crate::text::raw::RAW_PREFIX) {
                return Some(Part::Raw);
            }
            let p = self.index.page_of_id(key)?;
            Some(Part::Pages(self.head.page_block(p as usize)))
        });
        self.require(need.as_slice())?;
        self.index.chunk_in(id, self.unit)
    }

    /// `scope` parsed and checked as [`Index::scope_named`] does, from the head.
    ///
    /// # Errors
    /// As [`Index::scope_named`].
    pub fn scope_named(&self, scope: &str) -> Result<Scope> {
        self.index.scope_named(scope)
    }

    /// The id of the model the blob's vectors were made with (`all-MiniLM-L6-v2`), from the
    /// head; `None` without vectors.
    pub fn vectors_model_id(&self) -> Option<&str> {
        self.vectors.as_ref().map(|v| v.model_id.as_str())
    }

    /// Checks that `model` can embed queries for this index, as [`Index::check_model`].
    ///
    /// # Errors
    /// As [`Index::check_model`].
    pub fn check_model(&self, model: &dyn Embedder) -> Result<()> {
        self.index.check_model(model)
    }

    /// Number of pages.
    pub fn page_count(&self) -> usize {
        self.index.data.pages.len()
    }

    /// Number of page chunks.
    pub fn chunk_count(&self) -> usize {
        self.head.chunks.len()
    }

    /// Every page's id (`key`, or `user/<name>/<key>`), in the blob's order, from the head.
    pub fn page_ids(&self) -> Vec<String> {
        self.index.pages().iter().map(|p| p.id()).collect()
    }

    /// The byte ranges not loaded yet (all of them: a whole load in parts), joined as
    /// [`Error::NotLoaded`] joins them.
    pub fn missing(&self) -> Vec<[u64; 2]> {
        self.ranges((0..self.loaded.len()).filter(|&i| !self.loaded[i]))
    }

    /// How many bytes of the blob are loaded (the head included).
    pub fn loaded_bytes(&self) -> u64 {
        let sections: u64 = (0..self.loaded.len())
            .filter(|&i| self.loaded[i])
            .map(|i| self.starts[i + 1] - self.starts[i])
            .sum();
        self.starts[0] + sections
    }

    /// The whole index once every part is loaded ([`RangedIndex::missing`] is empty): what
    /// [`Index::from_bytes`] gives for the whole blob.
    ///
    /// # Errors
    /// [`Error::NotLoaded`] with the missing ranges; [`Error::Corrupt`] when the parts do not
    /// make a consistent index.
    pub fn into_index(self) -> Result<Index> {
        let missing = self.missing();
        if !missing.is_empty() {
            return Err(Error::NotLoaded { ranges: missing });
        }
        // Every part is loaded: the vector section, if any, holds its values.
        Ok(Index::from_data(blob::finish(self.index.data)?))
    }

    /// [`Error::NotLoaded`] for the sections of `need` not loaded.
    fn require(&self, need: &[Part]) -> Result<()> {
        let missing =
            (0..self.parts.len()).filter(|&i| !self.loaded[i] && need.contains(&self.parts[i]));
        let ranges = self.ranges(missing);
        if ranges.is_empty() {
            Ok(())
        } else {
            Err(Error::NotLoaded { ranges })
        }
    }

    /// The byte ranges of sections `sections` (ascending), adjacent ones joined.
    fn ranges(&self, sections: impl Iterator<Item = usize>) -> Vec<[u64; 2]> {
        let mut out: Vec<[u64; 2]> = Vec::new();
        for i in sections {
            let (s, e) = (self.starts[i], self.starts[i + 1]);
            match out.last_mut() {
                Some(last) if last[1] == s => last[1] = e,
                _ => out.push([s, e]),
            }
        }
        out
    }

    /// The whole dictionary's position of the lexical index's term `t`. The lexical index
    /// holds the terms of the dictionary shards loaded, numbered across them in order
    /// ([`crate::postings::Dictionary::assemble`]).
    fn global_term(&self, t: usize) -> usize {
        let mut at = 0;
        for j in (0..self.shards.len()).filter(|&j| self.shards[j].is_some()) {
            let terms = self.head.shard_terms(j);
            if t < at + terms.len() {
                return terms.start + (t - at);
            }
            at += terms.len();
        }
        t
    }

    /// The blocks of `blocks` (postings or positions, one per term block; `None` for one not
    /// at hand) that the lexical index of the dictionary shards `shards` holds the terms of,
    /// each with where its terms start there: those of the shards at hand.
    fn lexical_blocks<'a, T: ?Sized>(
        &self,
        shards: &[Option<&Dictionary>],
        blocks: &[Option<&'a T>],
    ) -> (Vec<u32>, Vec<Option<&'a T>>) {
        let n_blocks = self.head.term_blocks.len();
        let get = |b: usize| blocks.get(b).copied().flatten();
        let (mut firsts, mut out) = (Vec::new(), Vec::new());
        let mut at = 0;
        for j in (0..shards.len()).filter(|&j| shards[j].is_some()) {
            let terms = self.head.shard_terms(j);
            for b in crate::postings::block_range(&self.head.dict_blocks, j, n_blocks) {
                firsts.push((at + self.head.term_blocks[b] as usize - terms.start) as u32);
                out.push(get(b));
            }
            at += terms.len();
        }
        (firsts, out)
    }

    /// The lexical index of the dictionary shards `shards` with the postings `postings`, and
    /// its term positions from `positions` (each list one per term block, `None` for one not
    /// at hand; `None` for the positions of an index without them). Made again from the
    /// shards rather than copied (a copy of the lexical index was 0.9 KB more of the
    /// browser's module): its maps cover those shards only. A block whose shard is not
    /// loaded is left out (its terms are not in the lexical index yet), and a block of
    /// positions until its postings are here too.
    fn terms_of(
        &self,
        shards: &[Option<&Dictionary>],
        postings: &[Option<&PostingBlock>],
        positions: &[Option<&[u8]>],
    ) -> Result<(LexicalIndex, Option<Positions>)> {
        let mut lexical = LexicalIndex::from_dictionary(self.head.dictionary_of(shards)?)?;
        let (firsts, blocks) = self.lexical_blocks(shards, postings);
        lexical.set_blocks(&firsts, &blocks, shards.iter().all(Option::is_some))?;
        if !self.head.positions {
            return Ok((lexical, None));
        }
        let with_postings: Vec<Option<&[u8]>> = (positions.iter().zip(postings))
            .map(|(p, q)| p.filter(|_| q.is_some()))
            .collect();
        let (firsts, blocks) = self.lexical_blocks(shards, &with_postings);
        let positions = Positions::from_parts(&lexical, &firsts, &blocks)?;
        Ok((lexical, Some(positions)))
    }

    /// Puts a lexical index and its positions ([`RangedIndex::terms_of`]) in place, with
    /// what is made from them.
    fn set_terms(&mut self, (lexical, positions): (LexicalIndex, Option<Positions>)) {
        self.index.scorer = Bm25Scorer::new(&lexical, self.index.data.config.bm25);
        self.index.data.lexical = lexical;
        self.index.data.positions = positions;
        // The typo trie is made from the dictionary's words on first use.
        self.index.typo = std::sync::OnceLock::new();
    }
}
