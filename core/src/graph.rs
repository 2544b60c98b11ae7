//! The page graph as the blob stores it: edges, forward and backward adjacency, and
//! name resolution. Walking it is [`crate::traverse`]'s (an operation over a snapshot).
//!
//! **Edges.** Every page has outgoing edges, stored in the blob in page order:
//! - `ref`: a key in `refs` (confidence 1.0);
//! - `link`: an inline link whose key is not also in `refs` (confidence 1.0);
//! - a relation's type (`causes`, `depends_on`, ...): from `relations`, with its confidence and
//!   evidence text, and the chunk named by its `chunk` field when it names one;
//! - `sl_ref`: a named external source from `sl_refs`, kept as an external target;
//! - `redirect`: from a page whose key another page claims in `redirect_from` to that page.
//!
//! A `ref` or `link` edge carries the sentence of the body where the target is linked and the
//! chunk holding it (when the target is linked inline). Edges to pages that do not exist are
//! kept as *missing* targets (that is what lint and the write API report); a page's edges to
//! itself are dropped. The backward adjacency (every edge that reaches a page) is stored too;
//! it is what [`Index::edges_to`](crate::Index::edges_to), orphan detection and `delete_page` breakage reports read.
//!
//! **Resolution.** A key written on a page in scope `S` resolves, looking in `S` and then in
//! the global scope: first through `redirect_from` claims (a page that declares
//! `redirect_from: [old]` takes over `old`, even from a page still called `old`, which becomes a
//! redirect stub), followed hop by hop; then to the page with that key; then to a page with
//! that alias. A redirect cycle stops at the page written, if it exists. A chain of more than
//! 16 redirects (`MAX_HOPS`) is not followed to its end: an edge through it points at the page
//! written if it exists (else it is a missing target), [`Index::resolve`](crate::Index::resolve) returns an error,
//! and lint reports it as `redirect_too_long`.
//!
//! **Traversal** ([`Index::neighbors`](crate::Index::neighbors)) goes forward along page-to-page edges (the direction
//! the author wrote them), breadth first, to depth ≤ 2. The confidence of a connection is the
//! highest confidence of the typed relations between the two pages, or 1.0 when they are only
//! connected by refs, links or redirects (a plain ref does not raise a relation's stated
//! confidence). A node's confidence is the product along its best path from a seed.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use unicode_segmentation::UnicodeSegmentation;

use crate::data::error::{Error, Result};
use crate::postings::WordList;
use crate::text::analyze::BuildHash;
use crate::text::chunk;
use crate::text::chunk::ChunkRecord;
use crate::text::page::{self, Page, Scope};
use crate::text::raw::RawSection;

/// Edge type of a key in `refs`.
pub const KIND_REF: &str = "ref";
/// Edge type of an inline link (whose key is not in `refs`).
pub const KIND_LINK: &str = "link";
/// Edge type from a redirect stub to the page that claims its key.
pub const KIND_REDIRECT: &str = "redirect";
/// Edge type of a named external source (`sl_refs`).
pub const KIND_EXTERNAL: &str = "sl_ref";
/// Deepest traversal [`Index::neighbors`](crate::Index::neighbors) accepts.
pub const MAX_DEPTH: u32 = 2;
/// Most nodes a traversal returns.
pub const MAX_NODES: usize = 1000;
/// Most `sources` pointers [`Index::pointers`](crate::Index::pointers) returns.
pub const MAX_POINTERS: usize = 5;
/// Longest supporting sentence kept on an edge, in bytes (longer ones are cut at a word).
const MAX_EVIDENCE_BYTES: usize = 400;

/// Where an edge points.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Target {
    /// A page, by position in the page list.
    Page(u32),
    /// A named external source (`sl_refs`).
    External(Text),
    /// A key no visible page has.
    Missing(Text),
}

/// An edge's text (its type, the key written, its evidence, an external source's or a missing
/// key's name): its number in its graph's [`EdgeTexts`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Text(u32);

/// Most parts [`EdgeTexts`] holds before a write puts them together.
const MAX_TEXT_PARTS: usize = 16;

/// The texts of a graph's edges, numbered. A load holds them in one part; a write adds the
/// texts of the edges it derives as a part of its own and shares the parts before with the
/// snapshot it was made from (so the edges it keeps are renumbered without touching their
/// texts). Past [`MAX_TEXT_PARTS`] parts, the texts the edges still use are copied into one.
#[derive(Debug, Clone, Default)]
pub(crate) struct EdgeTexts {
    parts: Vec<Arc<WordList>>,
    /// The number of each part's first text.
    firsts: Vec<u32>,
}

impl EdgeTexts {
    /// Text `t`.
    ///
    /// # Panics
    /// For a text not of these (every text comes from the graph that holds it).
    pub(crate) fn get(&self, t: Text) -> &str {
        let part = self.firsts.partition_point(|&f| f <= t.0) - 1;
        &self.parts[part][(t.0 - self.firsts[part]) as usize]
    }

    /// Number of texts.
    fn len(&self) -> u32 {
        let last = self.parts.last().map_or(0, |p| p.len() as u32);
        self.firsts.last().map_or(0, |&f| f + last)
    }

    /// These texts and `part` (numbered after them; see [`NewTexts`]).
    fn with(&self, part: NewTexts) -> EdgeTexts {
        debug_assert_eq!(part.first, self.len());
        let mut out = self.clone();
        if !part.list.is_empty() {
            out.firsts.push(part.first);
            out.parts.push(Arc::new(part.list));
        }
        out
    }
}

/// Texts being added after `first` texts, for the edges a build or a write derives.
struct NewTexts {
    first: u32,
    list: WordList,
}

impl NewTexts {
    fn after(texts: &EdgeTexts) -> NewTexts {
        NewTexts {
            first: texts.len(),
            list: WordList::default(),
        }
    }

    fn add(&mut self, text: &str) -> Text {
        self.list.push(text);
        Text(self.first + self.list.len() as u32 - 1)
    }
}

/// A chunk an edge's evidence sits in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum ChunkRef {
    /// Position in the wiki chunk table.
    Wiki(u32),
    /// Position in the raw chunk table.
    Raw(u32),
}

/// One edge. Its texts are numbers in its graph's [`EdgeTexts`], so a write that renumbers
/// the edges of the pages it keeps copies numbers only.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct EdgeRecord {
    pub from: u32,
    pub to: Target,
    pub kind: Text,
    pub confidence: f32,
    /// The key as the page wrote it (differs from the target's key through a redirect or
    /// alias).
    pub written: Text,
    pub evidence: Option<Text>,
    pub chunk: Option<ChunkRef>,
}

/// Forward edges (sorted by source page) and, for every page, the edges that reach it.
#[derive(Debug, Clone, Default)]
pub(crate) struct GraphSection {
    pub edges: Vec<EdgeRecord>,
    /// Indices into `edges` of every edge with a page target, sorted by (target, index).
    pub incoming: Vec<u32>,
    /// The edges' texts.
    pub texts: EdgeTexts,
    /// What each page writes, as [`GraphSection::spliced`] checks it: made on the first write,
    /// and spliced by each.
    written: std::sync::OnceLock<WrittenKeys>,
}

/// Hashes of what a page's edges depend on besides the names they resolve through: the keys it
/// writes (refs, links, relation targets, its own key) and the documents its relations'
/// chunks name. A write checks a kept page against the names it changes by these alone, so it
/// reads no page that writes none of them (a hash shared by chance only sends a page to the
/// exact check). Per page, in page order.
#[derive(Debug, Clone, Default)]
struct WrittenKeys {
    hashes: Vec<u64>,
    /// Page `i`'s hashes are `hashes[ends[i - 1]..ends[i]]` (from 0 for the first).
    ends: Vec<usize>,
}

/// The hash [`WrittenKeys`] keeps of a key or a page id.
fn key_hash(key: &str) -> u64 {
    use std::hash::BuildHasher;
    BuildHash::default().hash_one(key)
}

impl WrittenKeys {
    fn with_capacity(pages: usize, hashes: usize) -> WrittenKeys {
        WrittenKeys {
            hashes: Vec::with_capacity(hashes),
            ends: Vec::with_capacity(pages),
        }
    }

    fn of(pages: &[Arc<Page>]) -> WrittenKeys {
        let mut keys = WrittenKeys::with_capacity(pages.len(), pages.len());
        for p in pages {
            keys.push_page(p);
        }
        keys
    }

    fn start(&self, i: usize) -> usize {
        i.checked_sub(1).map_or(0, |j| self.ends[j])
    }

    /// Page `i`'s hashes.
    fn page(&self, i: usize) -> &[u64] {
        &self.hashes[self.start(i)..self.ends[i]]
    }

    /// Adds the hashes of page `p`.
    fn push_page(&mut self, p: &Page) {
        let written = (p.refs.iter().chain(&p.links))
            .chain(p.relations.iter().map(|r| &r.target))
            .chain([&p.key]);
        self.hashes.extend(written.map(|k| key_hash(k)));
        let docs = (p.relations.iter())
            .filter_map(|r| r.chunk.as_deref().and_then(chunk::parse_chunk_id))
            .map(|(doc, _)| key_hash(doc));
        self.hashes.extend(docs);
        self.ends.push(self.hashes.len());
    }

    /// Adds the hashes of `other`'s pages `at`.
    fn push_pages(&mut self, other: &WrittenKeys, at: std::ops::Range<usize>) {
        if at.is_empty() {
            return;
        }
        let (from, to) = (other.start(at.start), other.ends[at.end - 1]);
        let base = self.hashes.len();
        self.hashes.extend_from_slice(&other.hashes[from..to]);
        (self.ends).extend(other.ends[at].iter().map(|&e| base + (e - from)));
    }
}

/// An edge as a blob stores it: its texts written out.
#[derive(Serialize, Deserialize)]
struct StoredEdge<'a> {
    from: u32,
    #[serde(borrow)]
    to: StoredTarget<'a>,
    #[serde(borrow)]
    kind: Cow<'a, str>,
    confidence: f32,
    #[serde(borrow)]
    written: Cow<'a, str>,
    #[serde(borrow)]
    evidence: Option<Cow<'a, str>>,
    chunk: Option<ChunkRef>,
}

/// [`Target`] as a blob stores it (and as a page's edges are derived, before their texts
/// are numbered).
#[derive(Debug, Hash, PartialEq, Eq, Serialize, Deserialize)]
enum StoredTarget<'a> {
    Page(u32),
    External(#[serde(borrow)] Cow<'a, str>),
    Missing(#[serde(borrow)] Cow<'a, str>),
}

impl StoredTarget<'_> {
    fn owned(&self) -> StoredTarget<'static> {
        match self {
            StoredTarget::Page(p) => StoredTarget::Page(*p),
            StoredTarget::External(n) => StoredTarget::External(Cow::Owned(n.to_string())),
            StoredTarget::Missing(k) => StoredTarget::Missing(Cow::Owned(k.to_string())),
        }
    }
}

impl GraphSection {
    /// Text `t` of an edge of this graph.
    pub(crate) fn text(&self, t: Text) -> &str {
        self.texts.get(t)
    }

    /// The number of parts the texts are in, checked against [`MAX_TEXT_PARTS`], and whether
    /// they are the texts the edges use and no others (as a load and a compaction leave them).
    #[cfg(test)]
    pub(crate) fn text_parts(&self) -> (usize, bool) {
        let parts = self.texts.parts.len();
        assert!(parts <= MAX_TEXT_PARTS, "{parts} parts");
        let used = self.edges.iter().map(|e| {
            let target = matches!(e.to, Target::External(_) | Target::Missing(_));
            2 + usize::from(target) + usize::from(e.evidence.is_some())
        });
        (parts, used.sum::<usize>() == self.texts.len() as usize)
    }

    /// `e` (an edge of this graph) with its texts written out.
    fn stored(&self, e: &EdgeRecord) -> StoredEdge<'_> {
        let text = |t: Text| Cow::Borrowed(self.text(t));
        StoredEdge {
            from: e.from,
            to: self.stored_target(e.to),
            kind: text(e.kind),
            confidence: e.confidence,
            written: text(e.written),
            evidence: e.evidence.map(text),
            chunk: e.chunk,
        }
    }

    fn stored_target(&self, t: Target) -> StoredTarget<'_> {
        match t {
            Target::Page(p) => StoredTarget::Page(p),
            Target::External(n) => StoredTarget::External(Cow::Borrowed(self.text(n))),
            Target::Missing(k) => StoredTarget::Missing(Cow::Borrowed(self.text(k))),
        }
    }
}

impl PartialEq for GraphSection {
    /// The same edges with the same texts, however the texts are numbered.
    fn eq(&self, other: &Self) -> bool {
        let same = |a: &EdgeRecord, b: &EdgeRecord| {
            let (a, b) = (self.stored(a), other.stored(b));
            (a.from, a.to, a.kind, a.written, a.evidence, a.chunk)
                == (b.from, b.to, b.kind, b.written, b.evidence, b.chunk)
                && a.confidence == b.confidence
        };
        self.incoming == other.incoming
            && self.edges.len() == other.edges.len()
            && self.edges.iter().zip(&other.edges).all(|(a, b)| same(a, b))
    }
}

impl Serialize for GraphSection {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        struct Edges<'a>(&'a GraphSection);
        impl Serialize for Edges<'_> {
            fn serialize<S: serde::Serializer>(
                &self,
                s: S,
            ) -> std::result::Result<S::Ok, S::Error> {
                s.collect_seq(self.0.edges.iter().map(|e| self.0.stored(e)))
            }
        }
        let mut out = s.serialize_struct("GraphSection", 2)?;
        out.serialize_field("edges", &Edges(self))?;
        out.serialize_field("incoming", &self.incoming)?;
        out.end()
    }
}

impl<'de> Deserialize<'de> for GraphSection {
    /// Each edge as it is read, its texts added to one part in turn.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        use serde::de::{DeserializeSeed, Error as _, SeqAccess, Visitor};
        struct Graph;
        impl<'de> Visitor<'de> for Graph {
            type Value = GraphSection;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a graph's edges and backward adjacency")
            }

            fn visit_seq<A: SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> std::result::Result<GraphSection, A::Error> {
                let missing = |i| A::Error::invalid_length(i, &"edges and backward adjacency");
                let (edges, texts) = seq.next_element_seed(Edges)?.ok_or_else(|| missing(0))?;
                let incoming = seq.next_element()?.ok_or_else(|| missing(1))?;
                Ok(GraphSection {
                    edges,
                    incoming,
                    texts: EdgeTexts::default().with(texts),
                    written: std::sync::OnceLock::new(),
                })
            }
        }
        struct Edges;
        impl<'de> DeserializeSeed<'de> for Edges {
            type Value = (Vec<EdgeRecord>, NewTexts);

            fn deserialize<D: serde::Deserializer<'de>>(
                self,
                d: D,
            ) -> std::result::Result<Self::Value, D::Error> {
                d.deserialize_seq(self)
            }
        }
        impl<'de> Visitor<'de> for Edges {
            type Value = (Vec<EdgeRecord>, NewTexts);

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a graph's edges")
            }

            fn visit_seq<A: SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> std::result::Result<Self::Value, A::Error> {
                // The hint is the decoder's claim; the vector grows past a small start otherwise.
                let mut edges = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
                let mut texts = NewTexts::after(&EdgeTexts::default());
                while let Some(e) = seq.next_element::<StoredEdge<'_>>()? {
                    edges.push(EdgeRecord {
                        from: e.from,
                        to: match &e.to {
                            StoredTarget::Page(p) => Target::Page(*p),
                            StoredTarget::External(n) => Target::External(texts.add(n)),
                            StoredTarget::Missing(k) => Target::Missing(texts.add(k)),
                        },
                        kind: texts.add(&e.kind),
                        confidence: e.confidence,
                        written: texts.add(&e.written),
                        evidence: e.evidence.as_deref().map(|t| texts.add(t)),
                        chunk: e.chunk,
                    });
                }
                Ok((edges, texts))
            }
        }
        d.deserialize_struct("GraphSection", &["edges", "incoming"], Graph)
    }
}

/// The name tables keys resolve through, besides the pages' own keys (found in the pages,
/// which are in canonical order, by binary search).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Names {
    redirect: HashMap<(Scope, String), u32>,
    alias: HashMap<(Scope, String), u32>,
}

/// The outcome of resolving one written key.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Resolved {
    /// The page it reaches.
    pub page: Option<u32>,
    /// Keys followed through `redirect_from` claims, in order (empty: no redirect).
    pub hops: Vec<String>,
    /// The redirects loop.
    pub cycle: bool,
    /// The chain goes on past [`MAX_HOPS`] redirects without looping.
    pub too_long: bool,
}

/// Most redirects a key is followed through.
pub const MAX_HOPS: usize = 16;

impl Names {
    /// The names of `pages`, in canonical order.
    pub(crate) fn new(pages: &[Arc<Page>]) -> Names {
        debug_assert!(
            page::in_canonical_order(pages),
            "pages out of canonical order"
        );
        let mut n = Names::default();
        for (i, p) in pages.iter().enumerate() {
            let i = i as u32;
            for r in &p.redirect_from {
                n.redirect.entry((p.scope.clone(), r.clone())).or_insert(i);
            }
            for a in &p.aliases {
                let a = page::normalize_key(a);
                if !a.is_empty() {
                    n.alias.entry((p.scope.clone(), a)).or_insert(i);
                }
            }
        }
        n
    }

    /// The names of `pages`, made from these (the names of `old_pages`) when pages `removed` of
    /// those were taken out and pages `added` of `pages` put in (positions ascending, as a
    /// write makes them): the entries renumbered, no page read. Made anew from `pages` when a
    /// page taken out or put in has names of its own, which another page may claim too.
    pub(crate) fn after(
        &self,
        old_pages: &[Arc<Page>],
        pages: &[Arc<Page>],
        removed: &[usize],
        added: &[usize],
    ) -> Names {
        let named = |p: &Page| !p.redirect_from.is_empty() || !p.aliases.is_empty();
        if removed.iter().any(|&j| named(&old_pages[j])) || added.iter().any(|&i| named(&pages[i]))
        {
            return Names::new(pages);
        }
        // A kept page's position after: its place among the kept pages, past the pages put in
        // before it.
        let moved = |q: u32| {
            let q = q as usize;
            let mut at = q - removed.partition_point(|&r| r < q);
            for &a in added {
                if a > at {
                    break;
                }
                at += 1;
            }
            u32::try_from(at).unwrap_or(u32::MAX)
        };
        let remap = |map: &HashMap<(Scope, String), u32>| {
            (map.iter())
                .map(|(name, &q)| (name.clone(), moved(q)))
                .collect()
        };
        Names {
            redirect: remap(&self.redirect),
            alias: remap(&self.alias),
        }
    }

    /// Every key a page claims in `redirect_from`, in any scope (a key claimed in several
    /// scopes comes once for each).
    fn claimed(&self) -> impl Iterator<Item = &str> {
        self.redirect.keys().map(|(_, k)| k.as_str())
    }

    fn lookup(map: &HashMap<(Scope, String), u32>, scopes: &[Scope], key: &str) -> Option<u32> {
        if map.is_empty() {
            return None;
        }
        scopes
            .iter()
            .find_map(|s| map.get(&(s.clone(), key.to_string())).copied())
    }

    /// The page of `pages` (canonical order) with `key` in the first of `scopes` that has one.
    fn lookup_key(pages: &[Arc<Page>], scopes: &[Scope], key: &str) -> Option<u32> {
        (scopes.iter())
            .find_map(|s| page::find(pages, s, key))
            .map(|at| u32::try_from(at).unwrap_or(u32::MAX))
    }

    /// The page of `pages` (canonical order) with exactly this key, seen from `scope`.
    pub(crate) fn exact(pages: &[Arc<Page>], scope: &Scope, key: &str) -> Option<u32> {
        Self::lookup_key(pages, &visible_scopes(scope), key)
    }

    /// The page that claims `key` in `redirect_from`, seen from `scope`.
    pub(crate) fn redirect(&self, scope: &Scope, key: &str) -> Option<u32> {
        Self::lookup(&self.redirect, &visible_scopes(scope), key)
    }

    /// Resolves `key` as written on a page in `scope` (see the module docs); `pages` are those
    /// these names were made of.
    pub(crate) fn resolve(&self, pages: &[Arc<Page>], scope: &Scope, key: &str) -> Resolved {
        let scopes = visible_scopes(scope);
        let mut cur = key.to_string();
        let mut seen = vec![cur.clone()];
        let mut hops = Vec::new();
        loop {
            if let Some(q) = Self::lookup(&self.redirect, &scopes, &cur) {
                let next = pages[q as usize].key.clone();
                let cycle = seen.contains(&next);
                if cycle || hops.len() >= MAX_HOPS {
                    return Resolved {
                        page: Self::lookup_key(pages, &scopes, key),
                        hops,
                        cycle,
                        too_long: !cycle,
                    };
                }
                hops.push(cur);
                seen.push(next.clone());
                cur = next;
                continue;
            }
            let page = Self::lookup_key(pages, &scopes, &cur)
                .or_else(|| Self::lookup(&self.alias, &scopes, &cur));
            return Resolved {
                page,
                hops,
                cycle: false,
                too_long: false,
            };
        }
    }
}

/// Whether a page in `scope` sees names in scope `other`: one of [`visible_scopes`].
fn sees(scope: &Scope, other: &Scope) -> bool {
    *other == Scope::Global || other == scope
}

/// The scopes a page in `scope` sees, in the order they are searched.
fn visible_scopes(scope: &Scope) -> Vec<Scope> {
    match scope {
        Scope::Global => vec![Scope::Global],
        s => vec![s.clone(), Scope::Global],
    }
}

/// Chunk id → chunk position, for the chunk tables of one index; the maps are made on the
/// first look-up (only a relation that names a chunk needs one).
struct ChunkIds<'a> {
    pages: &'a [Arc<Page>],
    chunks: &'a [ChunkRecord],
    raw: &'a RawSection,
    /// The number in each wiki chunk's id (empty: its position in its page).
    numbers: &'a [u32],
    maps: std::cell::OnceCell<IdMaps<'a>>,
}

/// Page id and raw document id → the first of its chunks and their number.
struct IdMaps<'a> {
    pages: HashMap<String, (u32, u32)>,
    raw: HashMap<&'a str, (u32, u32)>,
}

impl<'a> ChunkIds<'a> {
    fn new(
        pages: &'a [Arc<Page>],
        chunks: &'a [ChunkRecord],
        numbers: &'a [u32],
        raw: &'a RawSection,
    ) -> ChunkIds<'a> {
        ChunkIds {
            pages,
            chunks,
            raw,
            numbers,
            maps: std::cell::OnceCell::new(),
        }
    }

    fn maps(&self) -> &IdMaps<'a> {
        self.maps.get_or_init(|| {
            let spans = |table: &[ChunkRecord]| {
                let mut out: HashMap<u32, (u32, u32)> = HashMap::new();
                for (i, c) in table.iter().enumerate() {
                    let e = out.entry(c.page).or_insert((i as u32, 0));
                    e.1 += 1;
                }
                out
            };
            let wiki = spans(self.chunks);
            let raw_spans = spans(&self.raw.chunks);
            IdMaps {
                pages: (self.pages.iter().enumerate())
                    .filter_map(|(i, p)| Some((p.id(), *wiki.get(&(i as u32))?)))
                    .collect(),
                raw: (self.raw.docs.iter().enumerate())
                    .filter_map(|(i, d)| Some((d.id.as_str(), *raw_spans.get(&(i as u32))?)))
                    .collect(),
            }
        })
    }

    fn find(&self, id: &str) -> Option<ChunkRef> {
        let (doc, ordinal) = chunk::parse_chunk_id(id)?;
        let ordinal = u32::try_from(ordinal).ok()?;
        let maps = self.maps();
        if let Some(&(first, n)) = maps.raw.get(doc) {
            return (ordinal < n).then_some(ChunkRef::Raw(first + ordinal));
        }
        let &(first, n) = maps.pages.get(doc)?;
        crate::text::chunk::find_number(self.numbers, first, n, ordinal).map(ChunkRef::Wiki)
    }
}

impl GraphSection {
    /// Derives the graph from pages, their chunk table (with its id numbers) and the raw
    /// layer.
    pub(crate) fn build(
        pages: &[Arc<Page>],
        chunks: &[ChunkRecord],
        numbers: &[u32],
        raw: &RawSection,
    ) -> GraphSection {
        let names = Names::new(pages);
        let ids = ChunkIds::new(pages, chunks, numbers, raw);
        // Each page's chunks as a range of the table (chunks are stored in page order).
        let mut page_chunks = vec![(0usize, 0usize); pages.len()];
        for (i, c) in chunks.iter().enumerate() {
            if let Some(slot) = page_chunks.get_mut(c.page as usize) {
                if slot.1 == 0 {
                    *slot = (i, i + 1);
                } else {
                    slot.1 = i + 1;
                }
            }
        }
        let mut edges = Vec::new();
        let mut texts = NewTexts::after(&EdgeTexts::default());
        for (i, p) in pages.iter().enumerate() {
            let (first, end) = page_chunks[i];
            let own = Own {
                first,
                chunks: &chunks[first..end],
            };
            let out = &mut (&mut edges, &mut texts);
            page_edges(p, i as u32, &names, pages, &ids, &own, out);
        }
        let incoming = incoming_of(&edges, pages.len());
        GraphSection {
            edges,
            incoming,
            texts: EdgeTexts::default().with(texts),
            written: std::sync::OnceLock::new(),
        }
    }

    /// This graph with its texts in one part, only those its edges use.
    fn compacted(mut self) -> GraphSection {
        let old = std::mem::take(&mut self.texts);
        let mut texts = NewTexts::after(&EdgeTexts::default());
        let mut add = |t: Text| texts.add(old.get(t));
        for e in &mut self.edges {
            e.to = match e.to {
                Target::External(n) => Target::External(add(n)),
                Target::Missing(k) => Target::Missing(add(k)),
                page => page,
            };
            e.kind = add(e.kind);
            e.written = add(e.written);
            e.evidence = e.evidence.map(&mut add);
        }
        self.texts = EdgeTexts::default().with(texts);
        self
    }

    /// The graph [`GraphSection::build`] derives from `splice.pages`, made from `splice.old`:
    /// the pages put in and the kept pages whose edges the change may alter get theirs
    /// derived again; every other page's edges are its old ones, renumbered. A kept page's
    /// edges may change when a key it writes (a ref, link or relation target, or its own key
    /// for a redirect edge) is a name of a page taken out or put in (its key, a
    /// `redirect_from` claim, an alias) in a scope it sees, when such a key is claimed by a
    /// redirect and resolves elsewhere now, or when a relation names a chunk of such a page.
    pub(crate) fn spliced(splice: &GraphSplice<'_>) -> GraphSection {
        let GraphSplice {
            old,
            old_pages,
            old_names,
            pages,
            names,
            from,
            kept_chunks,
            chunks,
            numbers,
            raw,
        } = *splice;
        let ids = ChunkIds::new(pages, chunks, numbers, raw);
        let mut kept_pages = vec![u32::MAX; old_pages.len()];
        for (i, j) in (0u32..).zip(from) {
            if let Some(j) = *j {
                kept_pages[j] = i;
            }
        }
        // The names and ids of the pages taken out and put in.
        let changed = (old_pages.iter().zip(&kept_pages))
            .filter(|(_, &to)| to == u32::MAX)
            .map(|(p, _)| p)
            .chain(
                from.iter()
                    .zip(pages)
                    .filter(|(j, _)| j.is_none())
                    .map(|(_, p)| p),
            );
        // Name → the scopes it names a changed page in.
        let mut touched: HashMap<String, Vec<&Scope>, BuildHash> = HashMap::default();
        let mut changed_ids: HashSet<String, BuildHash> = HashSet::default();
        for p in changed {
            changed_ids.insert(p.id());
            let aliases =
                (p.aliases.iter().map(|a| page::normalize_key(a))).filter(|a| !a.is_empty());
            for name in [p.key.clone()]
                .into_iter()
                .chain(p.redirect_from.iter().cloned())
                .chain(aliases)
            {
                touched.entry(name).or_default().push(&p.scope);
            }
        }
        let old_names = old_names.get_or_init(|| Names::new(old_pages));
        let claimed: HashSet<&str, BuildHash> =
            (old_names.claimed().chain(names.claimed())).collect();
        // What a kept page's written keys must hash to for its edges to be checked at all.
        let heeded: HashSet<u64, BuildHash> = (touched.keys().map(String::as_str))
            .chain(changed_ids.iter().map(String::as_str))
            .chain(claimed.iter().copied())
            .map(key_hash)
            .collect();
        let old_keys = old.written.get_or_init(|| WrittenKeys::of(old_pages));
        let mut keys = WrittenKeys::with_capacity(pages.len(), old_keys.hashes.len());
        let mut kept_run = 0..0;
        // Each old page's edges, as a range of the old edges.
        let mut old_edges = vec![(0usize, 0usize); old_pages.len()];
        for (at, e) in old.edges.iter().enumerate() {
            if let Some(slot) = old_edges.get_mut(e.from as usize) {
                *slot = (if slot.1 == 0 { at } else { slot.0 }, at + 1);
            }
        }
        let mut first = 0usize;
        let mut edges = Vec::with_capacity(old.edges.len());
        let mut texts = NewTexts::after(&old.texts);
        for (i, (p, j)) in (0u32..).zip(pages.iter().zip(from)) {
            let end = first + chunks[first..].iter().take_while(|c| c.page == i).count();
            let own = Own {
                first,
                chunks: &chunks[first..end],
            };
            first = end;
            if let Some(j) = *j {
                if kept_run.end != j {
                    keys.push_pages(old_keys, std::mem::replace(&mut kept_run, j..j));
                }
                kept_run.end = j + 1;
                // Read the page only when a hash of what it writes is one to heed.
                let heeds = |h: &u64| heeded.contains(h);
                let may_change = || {
                    let touches = |k: &str| {
                        (touched.get(k))
                            .is_some_and(|names| names.iter().any(|&s| sees(&p.scope, s)))
                    };
                    let resolves_elsewhere = |k: &str| {
                        let before = old_names
                            .resolve(old_pages, &p.scope, k)
                            .page
                            .map(|q| kept_pages[q as usize]);
                        before != names.resolve(pages, &p.scope, k).page
                    };
                    let written = (p.refs.iter().chain(&p.links))
                        .chain(p.relations.iter().map(|r| &r.target))
                        .chain([&p.key]);
                    written
                        .map(String::as_str)
                        .any(|k| touches(k) || (claimed.contains(k) && resolves_elsewhere(k)))
                        || p.relations.iter().any(|r| {
                            (r.chunk.as_deref())
                                .and_then(chunk::parse_chunk_id)
                                .is_some_and(|(doc, _)| changed_ids.contains(doc))
                        })
                };
                let (start, end) = old_edges[j];
                if !old_keys.page(j).iter().any(heeds) || !may_change() {
                    // Its old edges, unless one points at what was taken out.
                    let mark = edges.len();
                    let moved = old.edges[start..end].iter().all(|e| {
                        let Some(e) = renumbered(e, i, &kept_pages, kept_chunks) else {
                            return false;
                        };
                        edges.push(e);
                        true
                    });
                    if moved {
                        continue;
                    }
                    edges.truncate(mark);
                }
            } else {
                keys.push_pages(old_keys, std::mem::replace(&mut kept_run, 0..0));
                keys.push_page(p);
            }
            page_edges(
                p,
                i,
                names,
                pages,
                &ids,
                &own,
                &mut (&mut edges, &mut texts),
            );
        }
        keys.push_pages(old_keys, kept_run);
        let incoming = incoming_of(&edges, pages.len());
        let graph = GraphSection {
            edges,
            incoming,
            texts: old.texts.with(texts),
            written: keys.into(),
        };
        if graph.texts.parts.len() > MAX_TEXT_PARTS {
            graph.compacted()
        } else {
            graph
        }
    }

    /// Checks every index and the backward adjacency, so traversal cannot panic on a hostile
    /// blob.
    pub(crate) fn validate(&self, pages: usize, chunks: usize, raw_chunks: usize) -> Result<()> {
        let mut last = 0u32;
        for (i, e) in self.edges.iter().enumerate() {
            let bad = |what: &str| Error::corrupt(format!("graph edge {i}: {what}"));
            if e.from as usize >= pages || e.from < last {
                return Err(bad("source page out of range or order"));
            }
            last = e.from;
            if let Target::Page(t) = e.to {
                if t as usize >= pages {
                    return Err(bad("target page out of range"));
                }
            }
            if !(0.0..=1.0).contains(&e.confidence) {
                return Err(bad("confidence outside 0..=1"));
            }
            let chunk_ok = match e.chunk {
                None => true,
                Some(ChunkRef::Wiki(c)) => (c as usize) < chunks,
                Some(ChunkRef::Raw(c)) => (c as usize) < raw_chunks,
            };
            if !chunk_ok || self.text(e.kind).is_empty() {
                return Err(bad("chunk out of range or empty type"));
            }
        }
        if incoming_of(&self.edges, pages) != self.incoming {
            return Err(Error::corrupt(
                "graph backward adjacency does not match its edges",
            ));
        }
        Ok(())
    }
}

/// The refs, links and relation targets of `pages[at]` that resolve to no page visible in its
/// scope (`names` those of `pages`), sorted and deduplicated.
pub(crate) fn missing_targets(names: &Names, pages: &[Arc<Page>], at: usize) -> Vec<String> {
    let p = &pages[at];
    let mut missing: Vec<String> = p
        .refs
        .iter()
        .chain(&p.links)
        .chain(p.relations.iter().map(|r| &r.target))
        .filter(|k| **k != p.key && names.resolve(pages, &p.scope, k).page.is_none())
        .cloned()
        .collect();
    crate::data::sort::sort(&mut missing);
    missing.dedup();
    missing
}

/// The positions of the edges with a page target, by target, then position (targets are below
/// `pages`).
fn incoming_of(edges: &[EdgeRecord], pages: usize) -> Vec<u32> {
    // A counting sort by target: the edges are taken in order, so each target's stay so.
    let target = |e: &EdgeRecord| match e.to {
        Target::Page(t) => Some(t as usize),
        _ => None,
    };
    let mut next = vec![0u32; pages + 1];
    for t in edges.iter().filter_map(target) {
        next[t + 1] += 1;
    }
    for t in 1..next.len() {
        next[t] += next[t - 1];
    }
    let mut incoming = vec![0u32; next[pages] as usize];
    for (i, e) in (0u32..).zip(edges) {
        if let Some(t) = target(e) {
            incoming[next[t] as usize] = i;
            next[t] += 1;
        }
    }
    incoming
}

/// What [`GraphSection::spliced`] makes a graph of: the pages before and after a change,
/// for each page after the page before it is (`None`: put in), each old chunk's position
/// after (`u32::MAX`: taken out), and the chunk table (with its id numbers) and raw layer
/// after.
#[derive(Clone, Copy)]
pub(crate) struct GraphSplice<'a> {
    pub(crate) old: &'a GraphSection,
    pub(crate) old_pages: &'a [Arc<Page>],
    /// The names of `old_pages`, made when first needed and kept with the index they are of.
    pub(crate) old_names: &'a std::sync::OnceLock<Names>,
    pub(crate) pages: &'a [Arc<Page>],
    /// The names of `pages`.
    pub(crate) names: &'a Names,
    pub(crate) from: &'a [Option<usize>],
    pub(crate) kept_chunks: &'a [u32],
    pub(crate) chunks: &'a [ChunkRecord],
    pub(crate) numbers: &'a [u32],
    pub(crate) raw: &'a RawSection,
}

/// Edge `e` as page `from`'s after a change that moved its target and chunk as `pages` and
/// `chunks` say; `None` when either was taken out.
fn renumbered(e: &EdgeRecord, from: u32, pages: &[u32], chunks: &[u32]) -> Option<EdgeRecord> {
    let kept = |at: &[u32], n: u32| at.get(n as usize).copied().filter(|&n| n != u32::MAX);
    let to = match e.to {
        Target::Page(q) => Target::Page(kept(pages, q)?),
        other => other,
    };
    let chunk = match e.chunk {
        Some(ChunkRef::Wiki(c)) => Some(ChunkRef::Wiki(kept(chunks, c)?)),
        other => other,
    };
    Some(EdgeRecord {
        from,
        to,
        chunk,
        ..*e
    })
}

/// A page's chunks: the first's position in the chunk table, and the chunks.
struct Own<'a> {
    first: usize,
    chunks: &'a [ChunkRecord],
}

impl Own<'_> {
    /// The chunk holding byte `offset` of the page, found by binary search over the running
    /// maximum of the chunks' ends `reach` (so locating every link of a page is
    /// O(links · log)).
    fn chunk_of(&self, reach: &[usize], offset: usize) -> Option<ChunkRef> {
        let from_here = reach.partition_point(|&e| e <= offset);
        (self.chunks.iter().enumerate())
            .skip(from_here)
            .take_while(|(_, c)| c.start as usize <= offset)
            .find(|(_, c)| (c.start as usize..c.end.max(c.start + 1) as usize).contains(&offset))
            .map(|(c, _)| ChunkRef::Wiki((self.first + c) as u32))
    }

    /// The running maximum of the chunks' ends.
    fn reach(&self) -> Vec<usize> {
        let mut max_end = 0usize;
        (self.chunks.iter())
            .map(|c| {
                max_end = max_end.max(c.end.max(c.start + 1) as usize);
                max_end
            })
            .collect()
    }
}

/// The outgoing edges of one page, appended to `out` (see the module docs for the order).
fn page_edges(
    p: &Page,
    from: u32,
    names: &Names,
    pages: &[Arc<Page>],
    ids: &ChunkIds<'_>,
    own: &Own<'_>,
    (out, texts): &mut (&mut Vec<EdgeRecord>, &mut NewTexts),
) {
    let reach = own.reach();
    let chunk_of = |offset: usize| own.chunk_of(&reach, offset);
    let body = p.body();
    let body_start = p.body_start as usize;
    let mut first_span: HashMap<String, page::LinkSpan> = HashMap::new();
    for s in page::link_spans(body) {
        first_span.entry(s.key.clone()).or_insert(s);
    }
    let sentences = if first_span.is_empty() {
        Sentences::default()
    } else {
        Sentences::of(body)
    };
    let located = |key: &str| -> (Option<Cow<'_, str>>, Option<ChunkRef>) {
        match first_span.get(key) {
            Some(s) => (
                Some(Cow::Owned(sentences.at(body, s.start))),
                chunk_of(body_start + s.start),
            ),
            None => (None, None),
        }
    };
    let mut seen: HashSet<(StoredTarget<'static>, String)> = HashSet::new();
    let mut push = |to: StoredTarget<'_>,
                    kind: &str,
                    confidence: f32,
                    written: &str,
                    ev: Option<Cow<'_, str>>,
                    chunk| {
        if to == StoredTarget::Page(from) || !seen.insert((to.owned(), kind.to_string())) {
            return;
        }
        let to = match to {
            StoredTarget::Page(t) => Target::Page(t),
            StoredTarget::External(n) => Target::External(texts.add(&n)),
            StoredTarget::Missing(k) => Target::Missing(texts.add(&k)),
        };
        out.push(EdgeRecord {
            from,
            to,
            kind: texts.add(kind),
            confidence,
            written: texts.add(written),
            evidence: ev.map(|e| texts.add(&e)),
            chunk,
        });
    };
    let target = |key: &str| match names.resolve(pages, &p.scope, key).page {
        Some(t) => StoredTarget::Page(t),
        None => StoredTarget::Missing(Cow::Owned(key.to_string())),
    };
    let refs: HashSet<&str> = p.refs.iter().map(String::as_str).collect();
    for r in &p.refs {
        let (ev, c) = located(r);
        push(target(r), KIND_REF, 1.0, r, ev, c);
    }
    for l in p.links.iter().filter(|l| !refs.contains(l.as_str())) {
        let (ev, c) = located(l);
        push(target(l), KIND_LINK, 1.0, l, ev, c);
    }
    for rel in &p.relations {
        let (sentence, linked) = located(&rel.target);
        let chunk = match &rel.chunk {
            Some(id) => ids.find(id),
            None => linked,
        };
        let confidence = if rel.confidence.is_finite() {
            rel.confidence.clamp(0.0, 1.0)
        } else {
            0.0
        };
        let kind = if rel.kind.trim().is_empty() {
            "related"
        } else {
            rel.kind.as_str()
        };
        push(
            target(&rel.target),
            kind,
            confidence,
            &rel.target,
            rel.evidence.as_deref().map(Cow::Borrowed).or(sentence),
            chunk,
        );
    }
    for s in &p.sl_refs {
        push(
            StoredTarget::External(Cow::Borrowed(s)),
            KIND_EXTERNAL,
            1.0,
            s,
            None,
            None,
        );
    }
    if let Some(q) = names.redirect(&p.scope, &p.key) {
        push(
            StoredTarget::Page(q),
            KIND_REDIRECT,
            1.0,
            &p.key,
            None,
            None,
        );
    }
}

/// The sentence spans of a body, found once: paragraphs are the text between `\n\n`
/// separators, and sentences are Unicode sentence bounds within a paragraph. Looking up the
/// sentence of each link is then a binary search, so a page of 100,000 links costs one pass
/// over its body, not one per link.
#[derive(Debug, Default)]
struct Sentences {
    /// (start, end) byte spans, sorted and disjoint.
    spans: Vec<(usize, usize)>,
}

impl Sentences {
    fn of(body: &str) -> Sentences {
        let mut spans = Vec::new();
        let mut para_start = 0;
        let bytes = body.as_bytes();
        let mut i = 0;
        let paragraph = |start: usize, end: usize, spans: &mut Vec<(usize, usize)>| {
            if start < end {
                for (s, t) in body[start..end].split_sentence_bound_indices() {
                    spans.push((start + s, start + s + t.len()));
                }
            }
        };
        while i + 1 < bytes.len() {
            if bytes[i] == b'\n' && bytes[i + 1] == b'\n' {
                paragraph(para_start, i, &mut spans);
                para_start = i + 2;
            }
            i += 1;
        }
        paragraph(para_start.min(body.len()), body.len(), &mut spans);
        Sentences { spans }
    }

    /// The sentence of `body` around byte `offset`, whitespace collapsed (cut to
    /// [`MAX_EVIDENCE_BYTES`] at a word boundary).
    fn at(&self, body: &str, offset: usize) -> String {
        let i = self.spans.partition_point(|&(_, end)| end <= offset);
        let sentence = match self.spans.get(i) {
            Some(&(start, end)) if start <= offset => &body[start..end],
            _ => "",
        };
        let mut out = String::new();
        for w in sentence.split_whitespace() {
            if out.len() + w.len() + 1 > MAX_EVIDENCE_BYTES {
                out.push_str(" …");
                break;
            }
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(w);
        }
        out
    }
}

/// Whether an edge type is a typed relation (not a ref, link, redirect or external name).
pub(crate) fn is_relation(kind: &str) -> bool {
    !matches!(kind, KIND_REF | KIND_LINK | KIND_REDIRECT | KIND_EXTERNAL)
}
