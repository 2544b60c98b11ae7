//! A read-only snapshot of an index: its data, the tables derived from it on load, and the
//! look-ups every operation starts from (pages by key and scope, chunks by id, page records).
//!
//! A snapshot never changes once made: [`Index::search`], traversal, citation checks and lint
//! read it, and a write (in the front, `index.rs`) builds the next snapshot beside it.

mod splice;
pub mod vectors;
pub mod write;

use std::collections::HashMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::blob::{self, IndexData};
use crate::data::config::Config;
use crate::data::error::{Error, Result};
use crate::data::offset::OffsetUnit;
use crate::embed::Embedder;
use crate::graph::Names;
use crate::lane::fusion::FusionConfig;
use crate::lane::lexical::Bm25Scorer;
use crate::text::analyze::Analyzer;
use crate::text::chunk::{self, ChunkHash, ChunkRecord};
use crate::text::page::{self, Page, Scope};
use crate::text::raw::RawDoc;

/// What a search without filters may return (made by the search, kept by the index).
#[derive(Debug)]
pub(crate) struct Unfiltered {
    /// Per page: visible to a search without filters.
    pub(crate) pages: Vec<bool>,
    /// Per chunk: rankable in a search without filters.
    pub(crate) chunks: Vec<bool>,
    /// Every chunk is rankable in a search without filters (no lane needs to check a mask).
    pub(crate) all: bool,
    /// The pages marked `usage_mode: always`, visible or not (a search keeps those its
    /// filters let through), so a search does not read every page's record to find them.
    pub(crate) always: Vec<usize>,
}

/// Every wiki and raw chunk's content terms, as term → chunk positions (wiki chunks first,
/// then raw chunks, each list ascending): made once per index by the first citation check
/// that looks for support ([`Index::uncited_support`]).
#[derive(Debug, Default)]
pub(crate) struct TermTable {
    pub(crate) postings: HashMap<String, Vec<u32>>,
}

/// What a caller brings to a read of an index beside the query: the model that embeds the
/// query for the semantic lane, and the unit the returned records count offsets in. An
/// [`Index`] read directly has neither (no model, offsets in bytes); a [`crate::Session`]
/// brings its own.
#[derive(Clone, Copy, Default)]
pub(crate) struct Caller<'a> {
    pub(crate) model: Option<&'a dyn Embedder>,
    pub(crate) unit: OffsetUnit,
}

/// A chunk with its text, as returned by [`Index::chunk`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Chunk {
    /// `{page_id}::chunk_{n}`: `n` is the chunk's position in its page when the index was
    /// built, and an edit keeps the `n` of every chunk it did not touch (so it can differ
    /// from `ordinal` after edits).
    pub id: String,
    /// Key of the page it belongs to.
    pub key: String,
    /// The page's scope.
    pub scope: Scope,
    /// Path of the page relative to the wiki root.
    pub path: String,
    /// Position within the page (0-based).
    pub ordinal: u32,
    /// Where the chunk starts in the page's body (the text after the frontmatter, as
    /// [`PageRecord::body`] holds it), in the index's [`OffsetUnit`].
    pub start: u32,
    /// One past its end, likewise.
    pub end: u32,
    /// Content hash (first 128 bits of BLAKE3, hex).
    pub hash: String,
    /// The chunk's text.
    pub text: String,
    /// A raw source chunk (its `key` is the raw document id, its scope global).
    pub raw: bool,
    /// The first line of the chunk in its file, 1-based (the file's own lines, frontmatter
    /// included), so a citation can say `path:line`.
    pub line_start: u32,
    /// Its last line, likewise.
    pub line_end: u32,
    /// The Markdown headings the chunk sits under, outermost first (`["Runbook",
    /// "Escalation"]`); empty before the first heading.
    pub headings: Vec<String>,
    /// When the chunk starts inside the body of a Markdown table that an earlier chunk began
    /// (a table too large for one chunk is cut between rows): the table's header and
    /// delimiter rows, which `text` (a slice of the file) does not hold. They are indexed and
    /// embedded with the chunk, and belong before `text` when it is shown.
    pub table_header: Option<String>,
}

impl Chunk {
    /// The id of the page (or raw document) the chunk belongs to: the part of its id before
    /// `::chunk_`.
    pub fn key_id(&self) -> String {
        chunk::parse_chunk_id(&self.id).map_or_else(|| self.key.clone(), |(p, _)| p.to_string())
    }
}

/// A chunk of a page record: its id, hash and span.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChunkSpan {
    /// `{page_id}::chunk_{n}` (see [`Chunk::id`]).
    pub id: String,
    /// Content hash.
    pub hash: String,
    /// Start in [`PageRecord::body`], in the index's [`OffsetUnit`].
    pub start: u32,
    /// One past the end, likewise.
    pub end: u32,
}

/// A page as every surface returns it ([`Index::page_record`]): its frontmatter fields, body
/// and chunks. Serialized field names are the contract (`type`, not `kind`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PageRecord {
    /// `key`, or `user/<name>/<key>`.
    pub id: String,
    /// Flat key derived from the file name.
    pub key: String,
    /// Global or a user's scope.
    pub scope: Scope,
    /// Source path relative to the wiki root.
    pub path: String,
    /// Display title.
    pub title: String,
    /// One-line summary.
    pub summary: Option<String>,
    /// Open category (`type` frontmatter).
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// Topic labels.
    pub tags: Vec<String>,
    /// Outgoing edges from `refs`.
    pub refs: Vec<String>,
    /// Outgoing edges from inline links.
    pub links: Vec<String>,
    /// Named external sources.
    pub sl_refs: Vec<String>,
    /// Typed, weighted edges.
    pub relations: Vec<crate::text::page::Relation>,
    /// `always`, `auto` or `never`.
    pub usage_mode: crate::text::page::UsageMode,
    /// Where the page came from.
    pub source: Option<String>,
    /// Raw chunks the page was compiled from.
    pub sources: Vec<crate::text::page::SourceRef>,
    /// Other names.
    pub aliases: Vec<String>,
    /// Old keys that now point here.
    pub redirect_from: Vec<String>,
    /// Lifecycle mark: stale since this date.
    pub stale_since: Option<String>,
    /// Lifecycle mark: archived since this date.
    pub archived_since: Option<String>,
    /// `<!-- from: path -->` provenance comments.
    pub provenance: Vec<String>,
    /// Frontmatter fields wikidex does not know, verbatim.
    pub extra: crate::text::page::Extra,
    /// The text after the frontmatter.
    pub body: String,
    /// The page's chunks, in order, with spans into `body`.
    pub chunks: Vec<ChunkSpan>,
    /// The key asked for when it named this page through a redirect (an old key in
    /// `redirect_from`) or an alias; `None` when it was the page's own key or id.
    pub resolved_from: Option<String>,
}

/// A searchable index: pages, chunks, postings and configuration, loaded from or saved to one
/// blob. Never changed once made: [`Index::upsert_page`] and [`Index::delete_page`] return
/// the next index, and leave this one as it was (a [`crate::Session`] keeps the current one).
#[derive(Debug)]
pub struct Index {
    pub(crate) data: IndexData,
    pub(crate) analyzer: Analyzer,
    pub(crate) scorer: Bm25Scorer,
    /// Per chunk: index of its page.
    pub(crate) chunk_page: Vec<u32>,
    /// Per page: index of its first chunk (one extra entry at the end).
    pub(crate) first_chunk: Vec<u32>,
    /// Redirects and aliases, for link resolution (keys are found in the pages): made on first
    /// use, or kept from the write that made this snapshot.
    names: std::sync::OnceLock<Names>,
    /// Raw document id → position.
    pub(crate) raw_ids: HashMap<String, u32>,
    /// Per raw document: index of its first raw chunk (one extra entry at the end).
    pub(crate) raw_first: Vec<u32>,
    /// Per page: its date in Unix seconds ([`Page::date`], read by [`crate::data::date::parse`]).
    pub(crate) page_dates: Vec<Option<i64>>,
    /// What a search without filters may return, made by the first search (a write makes a
    /// new `Index`, so it is never stale).
    pub(crate) unfiltered: std::sync::OnceLock<Unfiltered>,
    /// Chunk terms for [`Index::uncited_support`], made on first use (a write makes a new
    /// `Index`, so it is never stale).
    pub(crate) support: std::sync::OnceLock<TermTable>,
    /// The trie typo tolerance walks, made from the lexical index's words on first use (a
    /// write makes a new `Index`, so it is never stale).
    pub(crate) typo: std::sync::OnceLock<crate::lane::typo::Dictionary>,
    /// The vectors' binary codes, made by the first semantic search
    /// ([`crate::lane::semantic::codes::Codes::of`]: none for a small section; a write makes a new
    /// `Index`, so they are never stale).
    pub(crate) codes: std::sync::OnceLock<Option<crate::lane::semantic::codes::Codes>>,
    /// Per chunk: its content hash, made the first time it is asked for ([`Index::chunk_hash`]):
    /// a blob stores none, and a load hashes none (at a million chunks that was a sixth of a
    /// whole load).
    pub(crate) hashes: Vec<std::sync::OnceLock<ChunkHash>>,
}

/// The raw layer's look-ups: each raw document's position by id, and the position of each one's
/// first raw chunk (one extra entry at the end).
pub(crate) fn raw_lookup(raw: &crate::text::raw::RawSection) -> (HashMap<String, u32>, Vec<u32>) {
    let mut raw_first = vec![0u32; raw.docs.len() + 1];
    for (i, c) in raw.chunks.iter().enumerate().rev() {
        raw_first[c.page as usize] = i as u32;
    }
    raw_first[raw.docs.len()] = raw.chunks.len() as u32;
    let raw_ids = (raw.docs.iter().enumerate())
        .map(|(i, d)| (d.id.clone(), i as u32))
        .collect();
    (raw_ids, raw_first)
}

/// How a key given with no scope names a page ([`Index::page_named`]), in the order they are
/// tried: a page id (or an un-normalized key, as BEIR ids are) as given, the id its key
/// normalizes to, then the key of the first page in page order that has it (a user's page).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Named {
    Id,
    NormalizedId,
    Key,
}

/// A chunk hash cache of `n` chunks, none made yet ([`Index::chunk_hash`]).
pub(crate) fn unhashed(n: usize) -> Vec<std::sync::OnceLock<ChunkHash>> {
    (0..n).map(|_| std::sync::OnceLock::new()).collect()
}

/// Page `i`'s date in Unix seconds: its frontmatter's, else its file's modification time.
pub(crate) fn page_date(data: &IndexData, i: usize) -> Option<i64> {
    (data.pages[i].date())
        .and_then(|d| crate::data::date::parse(d, false))
        .or_else(|| data.page_modified.get(i).copied().flatten())
}

impl Index {
    pub(crate) fn from_data(data: IndexData) -> Index {
        let page_dates = (0..data.pages.len()).map(|i| page_date(&data, i)).collect();
        Index::dated(data, page_dates)
    }

    /// [`Index::from_data`] with the pages' dates at hand.
    pub(crate) fn dated(data: IndexData, page_dates: Vec<Option<i64>>) -> Index {
        let analyzer = Analyzer::new(data.config.language());
        let scorer = Bm25Scorer::new(&data.lexical, data.config.bm25);
        let chunk_page: Vec<u32> = data.chunks.iter().map(|c| c.page).collect();
        let mut first_chunk = vec![0u32; data.pages.len() + 1];
        for (i, c) in data.chunks.iter().enumerate().rev() {
            first_chunk[c.page as usize] = i as u32;
        }
        first_chunk[data.pages.len()] = data.chunks.len() as u32;
        let (raw_ids, raw_first) = raw_lookup(&data.raw);
        let hashes = unhashed(data.chunks.len());
        Index {
            page_dates,
            data,
            analyzer,
            scorer,
            chunk_page,
            first_chunk,
            names: std::sync::OnceLock::new(),
            raw_ids,
            raw_first,
            unfiltered: std::sync::OnceLock::new(),
            support: std::sync::OnceLock::new(),
            typo: std::sync::OnceLock::new(),
            codes: std::sync::OnceLock::new(),
            hashes,
        }
    }

    /// The index's data; what the index made from it (look-up maps, codes) is dropped now.
    #[cfg(feature = "fs")]
    pub(crate) fn into_data(self) -> IndexData {
        self.data
    }

    /// Loads an index from blob bytes.
    ///
    /// # Errors
    /// [`Error::NotAnIndex`] for foreign bytes, [`Error::IncompatibleFormat`] for a version this
    /// build cannot read, [`Error::Corrupt`] for truncated, corrupted or inconsistent bytes.
    pub fn from_bytes(bytes: &[u8]) -> Result<Index> {
        Ok(Index::from_data(blob::decode(bytes)?))
    }

    /// Encodes the index as a blob (format [`blob::FORMAT_VERSION`]): every load gives the same
    /// index back, whole ([`Index::from_bytes`]) or in the parts a browser fetches by HTTP range
    /// requests ([`crate::RangedIndex`]). The same index always gives the same bytes.
    ///
    /// # Errors
    /// Only if encoding fails, which it does not for an index this crate built.
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        blob::encode(&self.data)
    }
    /// The configuration the index was built with.
    pub fn config(&self) -> &Config {
        &self.data.config
    }

    /// The languages of the pages, as the build detected them (kept current by page writes).
    pub fn languages(&self) -> &crate::data::record::LanguageMix {
        &self.data.languages
    }

    /// This index with other fusion weights and constant (query-time settings: no rebuild;
    /// saved with the index).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a value out of range.
    pub fn with_fusion(&self, fusion: FusionConfig) -> Result<Index> {
        let config = Config {
            fusion,
            ..self.data.config.clone()
        };
        config.validate()?;
        let mut data = self.data.clone();
        data.config = config;
        Ok(Index::from_data(data))
    }

    /// Every page, in canonical order (scope, then key). Each is shared with the snapshots a
    /// write makes from this one.
    pub fn pages(&self) -> &[Arc<Page>] {
        &self.data.pages
    }

    /// `scope` parsed (`global`, `user/<name>`), refused unless it is the global scope or
    /// some page of the index is in it: a filter by a scope no page has is a typo, not an
    /// empty answer.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a malformed scope or one no page is in (naming the
    /// scopes there are).
    pub fn scope_named(&self, scope: &str) -> Result<Scope> {
        let scope = Scope::parse(scope)?;
        if scope != Scope::Global && !self.data.pages.iter().any(|p| p.scope == scope) {
            let mut known: Vec<String> = self
                .data
                .pages
                .iter()
                .map(|p| p.scope.to_string())
                .collect();
            known.dedup();
            return Err(Error::invalid_argument(format!(
                "unknown scope `{scope}`: no page of the index is in it (scopes: {})",
                known.join(", ")
            )));
        }
        Ok(scope)
    }

    /// Number of chunks.
    pub fn chunk_count(&self) -> usize {
        self.data.chunks.len()
    }

    /// The page `key` as seen from `scope`: a user scope sees its own page first, then the
    /// global one; `None` looks in the global scope, then in any user scope (lowest name
    /// first).
    ///
    /// # Errors
    /// [`Error::UnknownPage`].
    pub fn page(&self, key: &str, scope: Option<&Scope>) -> Result<&Page> {
        self.page_index(key, scope)
            .map(|i| &*self.data.pages[i as usize])
            .ok_or_else(|| Error::UnknownPage {
                key: key.to_string(),
            })
    }

    /// The position of the page with this id (`key`, or `user/<name>/<key>`), found by binary
    /// search in the pages' canonical order. An id a global key and a user page would share is
    /// the user page's.
    pub(crate) fn page_of_id(&self, id: &str) -> Option<u32> {
        let pages = &self.data.pages;
        // A key holds no `/` (a user's name may).
        let user = (id.strip_prefix("user/"))
            .and_then(|rest| rest.rsplit_once('/'))
            .and_then(|(name, key)| page::find(pages, &Scope::User(name.to_string()), key));
        let at = user.or_else(|| page::find(pages, &Scope::Global, id))?;
        Some(u32::try_from(at).unwrap_or(u32::MAX))
    }

    /// Redirects and aliases, for link resolution.
    pub(crate) fn names(&self) -> &Names {
        self.names.get_or_init(|| Names::new(&self.data.pages))
    }

    pub(crate) fn page_index(&self, key: &str, scope: Option<&Scope>) -> Option<u32> {
        let Some(scope) = scope else {
            return self.page_named(key).map(|(_, i)| i);
        };
        // A page id (or an un-normalized key, as BEIR ids are) found as given wins over the
        // normalized form.
        let exact = self.page_of_id(key);
        let key = if exact.is_some() {
            key.to_string()
        } else {
            page::normalize_key(key)
        };
        if let user @ Scope::User(_) = scope {
            if let Some(i) = page::find(&self.data.pages, user, &key) {
                return Some(u32::try_from(i).unwrap_or(u32::MAX));
            }
        }
        let i = exact.or_else(|| self.page_of_id(&key))?;
        let found = &self.data.pages[i as usize].scope;
        let visible = match scope {
            Scope::Global => *found == Scope::Global,
            s => found == s || *found == Scope::Global,
        };
        visible.then_some(i)
    }

    /// The page `key` names when no scope is given ([`Index::page`] with `None`), and how it
    /// names it. A wiki in shards names the page one index of it would by taking, over the
    /// shards, the least of how, then the first page in the wiki's order.
    pub(crate) fn page_named(&self, key: &str) -> Option<(Named, u32)> {
        if let Some(i) = self.page_of_id(key) {
            return Some((Named::Id, i));
        }
        let key = page::normalize_key(key);
        if let Some(i) = self.page_of_id(&key) {
            return Some((Named::NormalizedId, i));
        }
        let i = self.data.pages.iter().position(|p| p.key == key)?;
        Some((Named::Key, i as u32))
    }

    /// The page with this id (`key` or `user/<name>/<key>`).
    pub fn page_by_id(&self, id: &str) -> Option<&Page> {
        self.page_of_id(id).map(|i| &*self.data.pages[i as usize])
    }

    /// The chunk with this id, with its text (offsets in bytes).
    ///
    /// # Errors
    /// [`Error::UnknownChunk`] when no chunk has this id: ids are never guessed.
    pub fn chunk(&self, id: &str) -> Result<Chunk> {
        self.chunk_in(id, OffsetUnit::Byte)
    }

    /// [`Index::chunk`] with offsets in `unit`.
    pub(crate) fn chunk_in(&self, id: &str, unit: OffsetUnit) -> Result<Chunk> {
        let unknown = || Error::UnknownChunk { id: id.to_string() };
        let (page_id, ordinal) = chunk::parse_chunk_id(id).ok_or_else(unknown)?;
        if let Some(&d) = self.raw_ids.get(page_id) {
            let first = self.raw_first[d as usize] as usize;
            let count = self.raw_first[d as usize + 1] as usize - first;
            if ordinal >= count {
                return Err(unknown());
            }
            return Ok(self.raw_chunk_at((first + ordinal) as u32, unit));
        }
        let p = self.page_of_id(page_id).ok_or_else(unknown)?;
        let first = self.first_chunk[p as usize];
        let count = self.first_chunk[p as usize + 1] - first;
        let number = u32::try_from(ordinal).map_err(|_| unknown())?;
        let c = chunk::find_number(&self.data.chunk_numbers, first, count, number)
            .ok_or_else(unknown)?;
        Ok(self.chunk_at(c, unit))
    }

    /// The chunk at table position `c` (must be in range), with offsets in `unit`.
    pub(crate) fn chunk_at(&self, c: u32, unit: OffsetUnit) -> Chunk {
        let rec = &self.data.chunks[c as usize];
        let page = &self.data.pages[rec.page as usize];
        let (start, end) = body_span(page, rec, unit);
        let (line_start, line_end) =
            chunk::line_range(&page.text, rec.start as usize, rec.end as usize);
        Chunk {
            line_start,
            line_end,
            headings: chunk::heading_path(&page.text, page.body_start as usize, rec.start as usize),
            table_header: chunk::table_header(
                &page.text,
                page.body_start as usize,
                rec.start as usize,
            ),
            id: self.chunk_id(c),
            ordinal: c - self.first_chunk[rec.page as usize],
            key: page.key.clone(),
            scope: page.scope.clone(),
            path: page.path.clone(),
            start,
            end,
            hash: self.chunk_hash(c).to_string(),
            text: self.chunk_text(c).to_string(),
            raw: false,
        }
    }

    /// The page `key` as a [`PageRecord`]: the page [`Index::page`] finds, else the one an
    /// old key (`redirect_from`) or an alias leads to, as [`Index::resolve`] follows them
    /// (then `resolved_from` names the key asked for).
    ///
    /// # Errors
    /// [`Error::UnknownPage`]; [`Error::InvalidPage`] for a key that reaches a page only
    /// through too many redirects.
    pub fn page_record(&self, key: &str, scope: Option<&Scope>) -> Result<PageRecord> {
        self.page_record_in(key, scope, OffsetUnit::Byte)
    }

    /// [`Index::page_record`] with offsets in `unit`.
    pub(crate) fn page_record_in(
        &self,
        key: &str,
        scope: Option<&Scope>,
        unit: OffsetUnit,
    ) -> Result<PageRecord> {
        let (p, resolved_from) = match self.page_index(key, scope) {
            Some(p) => (p as usize, None),
            // An old key (a redirect) or an alias, followed as `neighbors` follows it.
            None => match self.resolve(key, scope)? {
                Some(page) => {
                    let p = self
                        .page_of_id(&page.id())
                        .ok_or_else(|| Error::UnknownPage {
                            key: key.to_string(),
                        })?;
                    (p as usize, Some(key.to_string()))
                }
                None => {
                    return Err(Error::UnknownPage {
                        key: key.to_string(),
                    })
                }
            },
        };
        let page = &self.data.pages[p];
        let chunks = (self.first_chunk[p]..self.first_chunk[p + 1])
            .map(|c| {
                let rec = &self.data.chunks[c as usize];
                let (start, end) = body_span(page, rec, unit);
                ChunkSpan {
                    id: self.chunk_id(c),
                    hash: self.chunk_hash(c).to_string(),
                    start,
                    end,
                }
            })
            .collect();
        let page = Page::clone(page);
        Ok(PageRecord {
            id: page.id(),
            body: page.body().to_string(),
            key: page.key,
            scope: page.scope,
            path: page.path,
            title: page.title,
            summary: page.summary,
            kind: page.kind,
            tags: page.tags,
            refs: page.refs,
            links: page.links,
            sl_refs: page.sl_refs,
            relations: page.relations,
            usage_mode: page.usage_mode,
            source: page.source,
            sources: page.sources,
            aliases: page.aliases,
            redirect_from: page.redirect_from,
            stale_since: page.stale_since,
            archived_since: page.archived_since,
            provenance: page.provenance,
            extra: page.extra,
            chunks,
            resolved_from,
        })
    }

    /// The raw document list, in id order.
    pub fn raw_documents(&self) -> &[RawDoc] {
        &self.data.raw.docs
    }

    /// Number of raw chunks.
    pub fn raw_chunk_count(&self) -> usize {
        self.data.raw.chunks.len()
    }

    /// The raw chunk at raw-table position `c` (must be in range).
    pub(crate) fn raw_chunk_at(&self, c: u32, unit: OffsetUnit) -> Chunk {
        let rec = &self.data.raw.chunks[c as usize];
        let doc = &self.data.raw.docs[rec.page as usize];
        let (line_start, line_end) =
            chunk::line_range(&doc.text, rec.start as usize, rec.end as usize);
        Chunk {
            line_start,
            line_end,
            headings: chunk::heading_path(&doc.text, 0, rec.start as usize),
            table_header: chunk::table_header(&doc.text, 0, rec.start as usize),
            id: self.raw_chunk_id(c),
            ordinal: c - self.raw_first[rec.page as usize],
            key: doc.id.clone(),
            scope: Scope::Global,
            path: doc.path.clone(),
            start: unit.convert_u32(&doc.text, rec.start as usize),
            end: unit.convert_u32(&doc.text, rec.end as usize),
            hash: rec.hash(&doc.text).to_string(),
            text: doc.text[rec.start as usize..rec.end as usize].to_string(),
            raw: true,
        }
    }

    /// The id of the raw chunk at raw-table position `c` (must be in range).
    pub(crate) fn raw_chunk_id(&self, c: u32) -> String {
        let d = self.data.raw.chunks[c as usize].page;
        let ordinal = c - self.raw_first[d as usize];
        chunk::chunk_id(&self.data.raw.docs[d as usize].id, ordinal as usize)
    }

    /// The id of the chunk at table position `c` (must be in range).
    pub(crate) fn chunk_id(&self, c: u32) -> String {
        let p = self.chunk_page[c as usize];
        chunk::chunk_id(
            &self.data.pages[p as usize].id(),
            self.chunk_number(c) as usize,
        )
    }

    /// The number in the id of the chunk at table position `c` (must be in range): its
    /// position in its page, unless edits since the index was built kept older numbers.
    pub(crate) fn chunk_number(&self, c: u32) -> u32 {
        match self.data.chunk_numbers.get(c as usize) {
            Some(&n) => n,
            None => c - self.first_chunk[self.chunk_page[c as usize] as usize],
        }
    }

    /// Page id → the content hash and id number of each of its chunks, in order (see
    /// [`crate::text::chunk::PriorChunks`]).
    pub(crate) fn prior_chunks(&self) -> crate::text::chunk::PriorChunks {
        (self.data.pages.iter().enumerate())
            .map(|(p, page)| (page.id(), self.numbered_chunks(p)))
            .collect()
    }

    /// The content hash and id number of each chunk of page `p`, in order.
    pub(crate) fn numbered_chunks(&self, p: usize) -> Vec<(ChunkHash, u32)> {
        (self.first_chunk[p]..self.first_chunk[p + 1])
            .map(|c| (self.chunk_hash(c), self.chunk_number(c)))
            .collect()
    }

    /// The chunks of page `p` (its position in [`Index::pages`]).
    pub(crate) fn page_chunks(&self, p: usize) -> &[ChunkRecord] {
        &self.data.chunks[self.first_chunk[p] as usize..self.first_chunk[p + 1] as usize]
    }

    /// The content hash of chunk `c`, made from its text the first time it is asked for.
    pub(crate) fn chunk_hash(&self, c: u32) -> ChunkHash {
        *self.hashes[c as usize].get_or_init(|| ChunkHash::of(self.chunk_text(c)))
    }

    pub(crate) fn chunk_text(&self, c: u32) -> &str {
        let rec = &self.data.chunks[c as usize];
        let page = &self.data.pages[rec.page as usize];
        &page.text[rec.start as usize..rec.end as usize]
    }

    /// The chunks of a page, in order (offsets in bytes).
    ///
    /// # Errors
    /// [`Error::UnknownPage`].
    pub fn chunks_of(&self, key: &str, scope: Option<&Scope>) -> Result<Vec<Chunk>> {
        self.chunks_of_in(key, scope, OffsetUnit::Byte)
    }

    /// [`Index::chunks_of`] with offsets in `unit`.
    pub(crate) fn chunks_of_in(
        &self,
        key: &str,
        scope: Option<&Scope>,
        unit: OffsetUnit,
    ) -> Result<Vec<Chunk>> {
        let p = self
            .page_index(key, scope)
            .ok_or_else(|| Error::UnknownPage {
                key: key.to_string(),
            })? as usize;
        Ok((self.first_chunk[p]..self.first_chunk[p + 1])
            .map(|c| self.chunk_at(c, unit))
            .collect())
    }
}

impl Clone for Index {
    /// A copy of the snapshot (same data); the derived tables are recomputed.
    fn clone(&self) -> Index {
        Index::from_data(self.data.clone())
    }
}

/// A chunk record's span in its page's body, in `unit`.
fn body_span(page: &Page, rec: &ChunkRecord, unit: OffsetUnit) -> (u32, u32) {
    let body = page.body();
    let base = page.body_start as usize;
    let at = |b: u32| unit.convert_u32(body, (b as usize).saturating_sub(base));
    (at(rec.start), at(rec.end))
}
