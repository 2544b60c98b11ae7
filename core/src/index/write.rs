//! Writes: each makes the next [`Index`] from this one (a page added, replaced, removed or
//! renamed), splicing the pages it changes into this one (`Index::spliced`), which gives the
//! data [`assemble`] makes from the same pages.

use std::cmp::Ordering as Order;
use std::collections::HashMap;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::blob::IndexData;
use crate::data::config::Config;
use crate::data::error::{Error, Result};
use crate::data::record::{BuildStage, LanguageMix};
use crate::embed::Embedder;
use crate::graph::{GraphSection, Names};
use crate::index::vectors::{self};
use crate::index::Index;
use crate::lane::lexical::{ChunkTerms, LexicalIndex, PageFields};
use crate::lane::phrase::Positions;
use crate::text::analyze::{Analyzer, Vocabulary};
use crate::text::chunk::{self, ChunkRecord};
use crate::text::page::{self, Page, Scope};
use crate::text::raw::{self, RawSection};

/// How the index a sync starts from cut its pages: page path → the cut.
/// Splitting is a third of making an index's derived data again, and a page is cut by its
/// body (its text from `body_start`) and the chunk sizes alone, so [`assemble`] takes the
/// chunks of a page whose text and body start are those cut from here. Only cuts made with
/// the chunk sizes of the index being made may be given.
pub(crate) type Cuts<'a> = HashMap<&'a str, Cut<'a>>;

/// What a write changes in its index's pages: the positions of the pages it takes out (in the
/// index before) and of the pages it puts in (in the pages after), each ascending. Every
/// other page is the same page (path and text), in the same order.
#[derive(Debug, Clone, Default)]
pub(crate) struct Change {
    pub(crate) removed: Vec<usize>,
    pub(crate) added: Vec<usize>,
}

impl Change {
    /// The change from `before` to `after`, each in canonical order (by scope and key): a
    /// page of `after` equal to the page of `before` with its scope and key is kept, every
    /// other page of either is taken out or put in.
    pub(crate) fn between(before: &[Arc<Page>], after: &[Arc<Page>]) -> Change {
        let mut change = Change::default();
        let (mut j, mut i) = (0usize, 0usize);
        while j < before.len() || i < after.len() {
            let order = match (before.get(j), after.get(i)) {
                (Some(b), Some(a)) => page::canonical(b, a),
                (Some(_), None) => Order::Less,
                _ => Order::Greater,
            };
            match order {
                Order::Less => change.removed.push(j),
                Order::Greater => change.added.push(i),
                Order::Equal if Arc::ptr_eq(&before[j], &after[i]) || before[j] == after[i] => {}
                Order::Equal => {
                    change.removed.push(j);
                    change.added.push(i);
                }
            }
            j += usize::from(order != Order::Greater);
            i += usize::from(order != Order::Less);
        }
        change
    }

    /// For each of `after` pages, the page before this change it is (`None`: put in), with
    /// `before` pages before it.
    pub(crate) fn kept_from(&self, before: usize, after: usize) -> Result<Vec<Option<usize>>> {
        let mismatch = || Error::invalid_argument("a change that does not fit its pages");
        if before + self.added.len() != after + self.removed.len() {
            return Err(mismatch());
        }
        let (mut removed, mut added) =
            (self.removed.iter().peekable(), self.added.iter().peekable());
        let mut j = 0usize;
        let mut out = Vec::with_capacity(after);
        for i in 0..after {
            if added.next_if_eq(&&i).is_some() {
                out.push(None);
                continue;
            }
            while removed.next_if_eq(&&j).is_some() {
                j += 1;
            }
            out.push(Some(j));
            j += 1;
        }
        // What is left to take out is the pages after the last kept one.
        if added.next().is_some() || !removed.copied().eq(j..before) {
            return Err(mismatch());
        }
        Ok(out)
    }
}

/// Where `page`'s scope and key are in `pages` (canonical order): `Ok` at the page that has
/// them, `Err` where a page with them goes.
pub(crate) fn slot(pages: &[Arc<Page>], page: &Page) -> std::result::Result<usize, usize> {
    page::position(pages, &page.scope, &page.key)
}

/// A page as it was cut ([`Cuts`]), and its chunks.
#[derive(Clone, Copy)]
pub(crate) struct Cut<'a> {
    pub(crate) page: &'a Page,
    pub(crate) chunks: &'a [ChunkRecord],
}

/// Chunks and analyzes `pages` (already in canonical order) into index data, with
/// `languages` their mix ([`crate::text::language::mix`], which the caller may need before:
/// a build chooses its analysis language and model by it). A build makes its data here, and
/// a write or a small sync splices into data made here (`Index::spliced`, held to this by
/// tests), so they give the same bytes for the same pages and the same `prior` chunks (the
/// numbers of the chunk ids: [`chunk::carry_numbers`]); a page `cuts` holds with its text
/// keeps its chunks' spans and hashes.
pub(crate) fn assemble(
    config: Config,
    languages: LanguageMix,
    pages: Vec<Arc<Page>>,
    raw: RawSection,
    prior: &chunk::PriorChunks,
    cuts: &Cuts<'_>,
    progress: &mut dyn FnMut(usize, usize) -> ControlFlow<()>,
) -> Result<IndexData> {
    u32::try_from(pages.len()).map_err(|_| Error::invalid_argument("more than 4 Gi pages"))?;
    let analyzer = Analyzer::new(config.language());
    let threads = crate::data::parallel::threads_for(pages.len(), PAGES_PER_THREAD);
    let shared = Shared {
        config: &config,
        analyzer: &analyzer,
        pages: &pages,
        prior,
        cuts,
    };
    let analyzed = shared.analyze(threads, progress)?;
    // The other threads' arenas keep what they freed: a million-page build peaked 0.16 GB
    // higher with them.
    if threads > 1 {
        crate::data::memory::give_back();
    }
    made(config, languages, pages, raw, analyzed)
}

/// The index data of `pages`, [`Shared::analyze`]d into `analyzed`.
fn made(
    config: Config,
    languages: LanguageMix,
    pages: Vec<Arc<Page>>,
    raw: RawSection,
    analyzed: Analyzed,
) -> Result<IndexData> {
    let Analyzed {
        vocabulary,
        chunks,
        mut numbers,
        positional,
        terms: chunk_terms,
    } = analyzed;
    u32::try_from(chunks.len()).map_err(|_| Error::invalid_argument("more than 4 Gi chunks"))?;
    let (lexical, position) = LexicalIndex::build_numbered(chunk_terms.terms(), vocabulary);
    let positions = config
        .positions
        .then(|| Positions::build(&lexical, &position, &chunk_terms));
    drop(chunk_terms);
    // Canonical form: no numbers stored when every chunk is numbered by its position.
    if positional {
        numbers.clear();
    }
    let graph = GraphSection::build(&pages, &chunks, &numbers, &raw);
    Ok(IndexData {
        config,
        languages,
        pages,
        chunks,
        lexical,
        vectors: None,
        graph,
        raw: Arc::new(raw),
        chunk_numbers: numbers,
        page_modified: Vec::new(),
        positions,
    })
}

/// Fewest pages a thread of [`assemble`] analyzes: a smaller wiki is analyzed on the calling
/// thread.
pub(crate) const PAGES_PER_THREAD: usize = 2048;

/// The error of an analysis asked to stop.
pub(crate) fn cancelled() -> Error {
    Error::Cancelled {
        stage: BuildStage::Pages.as_str().into(),
    }
}

/// Tells the other threads of an analysis to stop when the calling thread's run panics (a
/// progress callback may), so that the scope does not wait for all their pages.
struct StopOnPanic<'a>(&'a AtomicBool);

impl Drop for StopOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.store(true, Ordering::Relaxed);
        }
    }
}

/// What every thread of [`assemble`]'s analysis reads.
#[derive(Clone, Copy)]
pub(crate) struct Shared<'a> {
    pub(crate) config: &'a Config,
    pub(crate) analyzer: &'a Analyzer,
    pub(crate) pages: &'a [Arc<Page>],
    pub(crate) prior: &'a chunk::PriorChunks,
    pub(crate) cuts: &'a Cuts<'a>,
}

/// A run of pages cut into chunks and analyzed: the chunks, their id numbers (and whether each
/// is its position in its page), their terms, and the vocabulary that numbers those.
pub(crate) struct Analyzed {
    pub(crate) vocabulary: Vocabulary,
    pub(crate) chunks: Vec<ChunkRecord>,
    pub(crate) numbers: Vec<u32>,
    pub(crate) positional: bool,
    pub(crate) terms: ChunkTerms,
}

impl Analyzed {
    /// No pages yet.
    pub(crate) fn new() -> Analyzed {
        Analyzed {
            vocabulary: Vocabulary::default(),
            chunks: Vec::new(),
            numbers: Vec::new(),
            positional: true,
            terms: ChunkTerms::default(),
        }
    }

    /// Puts the run `next` (the pages after these) after this one.
    fn absorb(&mut self, next: Analyzed) {
        let remap = self.vocabulary.absorb(next.vocabulary);
        self.terms.append(next.terms, &remap);
        self.chunks.extend(next.chunks);
        self.numbers.extend(next.numbers);
        self.positional &= next.positional;
    }
}

impl Shared<'_> {
    /// Every page analyzed, in contiguous runs over up to `threads` threads (on the calling
    /// thread with one, and always on wasm), each run with a vocabulary of its own, then the
    /// runs put together in page order: the terms and their numbers are those of one pass
    /// (the dictionary is sorted, so how terms were numbered on the way leaves no trace).
    /// `progress` is called on the calling thread only, with the pages done on all of them
    /// (after each page of its own run, then every 10 ms until the others end); when it asks
    /// to stop, every thread stops at its next page and the analysis is cancelled.
    fn analyze(
        self,
        threads: usize,
        progress: &mut dyn FnMut(usize, usize) -> ControlFlow<()>,
    ) -> Result<Analyzed> {
        let total = self.pages.len();
        let threads = crate::data::parallel::usable(threads, total);
        if threads == 1 {
            let mut done = 0;
            return self.analyze_run(0..total, &mut || {
                done += 1;
                progress(done, total)
            });
        }
        let size = total.div_ceil(threads);
        let done = AtomicUsize::new(0);
        let stop = AtomicBool::new(false);
        let (done, stop) = (&done, &stop);
        let (first, others) = std::thread::scope(|s| {
            let others: Vec<_> = (size..total)
                .step_by(size)
                .map(|from| {
                    s.spawn(move || {
                        self.analyze_run(from..(from + size).min(total), &mut || {
                            done.fetch_add(1, Ordering::Relaxed);
                            if stop.load(Ordering::Relaxed) {
                                ControlFlow::Break(())
                            } else {
                                ControlFlow::Continue(())
                            }
                        })
                    })
                })
                .collect();
            let mut report = |pages: usize| {
                let flow = progress(pages, total);
                if flow.is_break() {
                    stop.store(true, Ordering::Relaxed);
                }
                flow
            };
            let first = {
                let _guard = StopOnPanic(stop);
                self.analyze_run(0..size, &mut || {
                    report(done.fetch_add(1, Ordering::Relaxed) + 1)
                })
            };
            if first.is_err() {
                stop.store(true, Ordering::Relaxed);
            }
            // Reporting (and so listening for a stop) until the other runs end too.
            while !stop.load(Ordering::Relaxed) && others.iter().any(|h| !h.is_finished()) {
                std::thread::sleep(std::time::Duration::from_millis(10));
                let _ = report(done.load(Ordering::Relaxed));
            }
            let others: Vec<Result<Analyzed>> = others
                .into_iter()
                .map(|run| run.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                .collect();
            (first, others)
        });
        // The first error in page order, as one pass would meet it.
        let mut all = first?;
        if stop.load(Ordering::Relaxed) {
            return Err(cancelled());
        }
        for run in others {
            all.absorb(run?);
        }
        if progress(total, total).is_break() {
            return Err(cancelled());
        }
        Ok(all)
    }

    /// Cuts the pages `range` into chunks and analyzes them; `tick` after each page, which
    /// stops the run when it breaks.
    fn analyze_run(
        self,
        range: std::ops::Range<usize>,
        tick: &mut dyn FnMut() -> ControlFlow<()>,
    ) -> Result<Analyzed> {
        let mut out = Analyzed::new();
        for (pi, page) in range.clone().zip(&self.pages[range]) {
            self.analyze_page(pi, page, &mut out)?;
            if tick().is_break() {
                return Err(cancelled());
            }
        }
        Ok(out)
    }

    /// Cuts page `pi` of the pages into chunks (taking its cut from `cuts` when its text is
    /// the one cut there) and analyzes them into `out`.
    pub(crate) fn analyze_page(self, pi: usize, page: &Page, out: &mut Analyzed) -> Result<()> {
        let Shared {
            config,
            analyzer,
            prior,
            cuts,
            ..
        } = self;
        let first = out.chunks.len();
        let body_start = page.body_start as usize;
        let body = page.body();
        let cut = cuts
            .get(page.path.as_str())
            .filter(|c| c.page.body_start == page.body_start && c.page.text == page.text)
            .map(|c| c.chunks);
        let spans: Vec<(usize, usize)> = match cut {
            Some(cut) => cut
                .iter()
                .map(|c| (c.start as usize, c.end as usize))
                .collect(),
            None => chunk::split(body, &config.chunk)
                .into_iter()
                .map(|span| (body_start + span.start, body_start + span.end))
                .collect(),
        };
        analyze_chunks(analyzer, page, &spans, &mut out.vocabulary, &mut out.terms);
        for &(start, end) in &spans {
            let offset =
                |o: usize| u32::try_from(o).map_err(|_| Error::invalid_argument("page > 4 GiB"));
            out.chunks.push(ChunkRecord {
                page: pi as u32,
                start: offset(start)?,
                end: offset(end)?,
            });
        }
        // Only a page the previous index held has its chunks hashed, to carry their numbers.
        let page_numbers = match prior.get(&page.id()) {
            Some(old) => {
                let hashes: Vec<chunk::ChunkHash> = out.chunks[first..]
                    .iter()
                    .map(|c| c.hash(&page.text))
                    .collect();
                chunk::carry_numbers(&hashes, old)
            }
            None => (0..spans.len() as u32).collect(),
        };
        out.positional &= page_numbers.iter().zip(0u32..).all(|(&n, at)| n == at);
        out.numbers.extend(page_numbers);
        Ok(())
    }
}

/// Analyzes the chunks `spans` (byte spans of its text) of `page` as the index holds them:
/// each chunk's indexed text with the page's fields, into `terms`, its terms numbered and its
/// words recorded in `vocabulary`.
pub(crate) fn analyze_chunks(
    analyzer: &Analyzer,
    page: &Page,
    spans: &[(usize, usize)],
    vocabulary: &mut Vocabulary,
    terms: &mut ChunkTerms,
) {
    let fields = PageFields::new(analyzer, page, vocabulary);
    for text in chunk::indexed_texts(&page.text, page.body_start as usize, spans) {
        fields.chunk_terms(analyzer, &text, vocabulary, terms);
    }
}

/// What [`Index::upsert_page`] did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UpsertReport {
    /// The page's id.
    pub page_id: String,
    /// Whether a page with this key and scope already existed (and was replaced).
    pub replaced: bool,
    /// Chunks the page now has.
    pub chunks: usize,
    /// Non-fatal problems in the page.
    pub warnings: Vec<String>,
    /// Targets that resolve to no visible page (only when dangling links were allowed).
    pub dangling: Vec<String>,
}

/// Options of the write API ([`Index::upsert_page`], [`crate::Session::upsert_page`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WriteOptions {
    /// Accept a page whose refs or links point at no visible page (default false: reject).
    pub allow_dangling: bool,
}

/// What [`Index::delete_page`] did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeleteReport {
    /// The page removed.
    pub page: Page,
    /// Ids of the pages that now have a dangling link because of the removal, sorted.
    pub broken: Vec<String>,
}

/// What [`Index::rename_page`] did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RenameReport {
    /// The page's old id.
    pub from: String,
    /// Its new id.
    pub to: String,
    /// Its new path, relative to the wiki root.
    pub path: String,
    /// Its new text (with the redirect), to write to `path`.
    pub text: String,
}

impl Index {
    /// The index with the page at `path` (relative to the wiki root) added or replaced by
    /// `text`, re-chunked, its statistics and graph recomputed; `self` stays as it is. The
    /// result is byte-identical to building from scratch with the same pages. When the index
    /// holds vectors, `model` (the one that made them) embeds the new chunks.
    ///
    /// Every ref, inline link and relation target of the page must resolve to a page visible
    /// in the page's scope (itself, a global page, or for a user page that user's pages;
    /// redirects and aliases count), unless [`WriteOptions::allow_dangling`] is set.
    ///
    /// Cost: only the page is cut and analyzed; every other page's chunks, postings,
    /// positions and edges are taken from `self` as they are, and its pages are shared with
    /// `self`. What still grows with the index is copying the postings, positions, chunks and
    /// edges into the new snapshot (numbers and bytes, no text): 0.03-0.07 s at 100k pages on
    /// two cores (0.06-0.13 s with 8 links a page), where analyzing every page took 1.4-1.9 s.
    ///
    /// # Errors
    /// [`Error::InvalidPage`] if the page cannot be parsed; [`Error::DanglingLinks`] with the
    /// sorted list of missing targets; [`Error::Immutable`] for a path under `raw/`;
    /// [`Error::NoEmbedder`] when new chunks need vectors and no model is given.
    ///
    /// # Example
    /// ```
    /// # use wikidex::IndexBuilder;
    /// # let mut b = IndexBuilder::new(Default::default())?;
    /// # b.add_file("global/revenue.md", b"Revenue is recognized monthly.")?;
    /// # let (index, _) = b.build()?;
    /// let err = index.upsert_page("global/answer.md", "See [[revenue]] and [[nope]].", &Default::default(), None).unwrap_err();
    /// assert_eq!(err.code(), "dangling_links");
    /// let (next, report) = index.upsert_page("global/answer.md", "---\ntype: topic\n---\nSee [[revenue]].", &Default::default(), None)?;
    /// assert_eq!((index.pages().len(), next.pages().len(), report.replaced), (1, 2, false));
    /// # Ok::<(), wikidex::Error>(())
    /// ```
    pub fn upsert_page(
        &self,
        path: &str,
        text: &str,
        opts: &WriteOptions,
        model: Option<&dyn Embedder>,
    ) -> Result<(Index, UpsertReport)> {
        let keys = self.config().keys;
        if keys == page::Keys::FileName && raw::is_raw_path(path) {
            return Err(Error::Immutable {
                id: raw::raw_id(path).unwrap_or_default(),
            });
        }
        let parsed = page::parse_with(path, text, keys)?;
        let page = parsed.page;
        let id = page.id();
        let mut pages = self.data.pages.clone();
        let (at, replaced) = match slot(&pages, &page) {
            Ok(i) => {
                pages[i] = Arc::new(page);
                (i, true)
            }
            Err(i) => {
                pages.insert(i, Arc::new(page));
                (i, false)
            }
        };
        let change = Change {
            removed: if replaced { vec![at] } else { Vec::new() },
            added: vec![at],
        };
        let names = (self.names()).after(&self.data.pages, &pages, &change.removed, &change.added);
        let missing = crate::graph::missing_targets(&names, &pages, at);
        if !missing.is_empty() && !opts.allow_dangling {
            return Err(Error::DanglingLinks { page: id, missing });
        }
        let next = self.rebuilt(pages, names, &change, model)?;
        // The page is at `at` in the new snapshot too.
        let chunks = next.page_chunks(at).len();
        let report = UpsertReport {
            page_id: id,
            replaced,
            chunks,
            warnings: parsed.warnings,
            dangling: missing,
        };
        Ok((next, report))
    }

    /// The index without the page `key` in `scope` (the page's own scope; `None`: the page
    /// [`Index::page`] finds, global first), its statistics and graph recomputed, with a
    /// report of the pages whose links now dangle because of it. `model` as for
    /// [`Index::upsert_page`].
    ///
    /// # Errors
    /// [`Error::UnknownPage`] if there is no such page; [`Error::Immutable`] for a raw
    /// document id.
    pub fn delete_page(
        &self,
        key: &str,
        scope: Option<&Scope>,
        model: Option<&dyn Embedder>,
    ) -> Result<(Index, DeleteReport)> {
        if self.raw_ids.contains_key(key) {
            return Err(Error::Immutable {
                id: key.to_string(),
            });
        }
        let i = self.position_in(key, scope)?;
        let dependents: Vec<String> = {
            let mut v: Vec<String> = self
                .in_edges(i as u32)
                .filter(|e| e.from != i as u32)
                .map(|e| self.data.pages[e.from as usize].id())
                .collect();
            crate::data::sort::sort(&mut v);
            v.dedup();
            v
        };
        let missing_before: Vec<usize> = dependents.iter().map(|d| self.missing_count(d)).collect();
        let mut pages = self.data.pages.clone();
        let removed = pages.remove(i);
        let change = Change {
            removed: vec![i],
            added: Vec::new(),
        };
        let names = (self.names()).after(&self.data.pages, &pages, &change.removed, &change.added);
        let next = self.rebuilt(pages, names, &change, model)?;
        let broken = dependents
            .into_iter()
            .zip(missing_before)
            .filter(|(d, before)| next.missing_count(d) > *before)
            .map(|(d, _)| d)
            .collect();
        let report = DeleteReport {
            page: Arc::unwrap_or_clone(removed),
            broken,
        };
        Ok((next, report))
    }

    /// The index with page `key` (in `scope`, the page's own; `None`: the page
    /// [`Index::page`] finds) renamed to `new_key`, leaving a redirect: the page's frontmatter
    /// gains `redirect_from: [<old key>]` (kept with any it had), so links to the old key
    /// still resolve. The file name changes to `<new_key>.md` in the same folder ([`page::path_for_key`]: in a docs index, `guide.start` is `guide/start.md`). The report
    /// carries the new path and text for the caller to write to disk. `model` as for
    /// [`Index::upsert_page`].
    ///
    /// # Errors
    /// [`Error::UnknownPage`]; [`Error::DuplicateKey`] if `new_key` is taken in that scope;
    /// [`Error::InvalidArgument`] for an empty new key; [`Error::Immutable`] for a raw
    /// document.
    pub fn rename_page(
        &self,
        key: &str,
        scope: Option<&Scope>,
        new_key: &str,
        model: Option<&dyn Embedder>,
    ) -> Result<(Index, RenameReport)> {
        if self.raw_ids.contains_key(key) {
            return Err(Error::Immutable {
                id: key.to_string(),
            });
        }
        let i = self.position_in(key, scope)?;
        let old = &self.data.pages[i];
        let new_key = page::normalize_key(new_key);
        if new_key.is_empty() || new_key.contains('/') {
            return Err(Error::invalid_argument(
                "the new key must be a non-empty file stem",
            ));
        }
        if let Some(taken) = self
            .data
            .pages
            .iter()
            .find(|p| p.scope == old.scope && p.key == new_key)
        {
            return Err(Error::DuplicateKey {
                key: new_key,
                scope: old.scope.to_string(),
                first: taken.path.clone(),
                second: old.path.clone(),
            });
        }
        let folder = old.path.rsplit_once('/').map_or("", |(f, _)| f);
        let keys = self.config().keys;
        let path = page::path_for_key(&new_key, folder, keys);
        let text = page::add_redirect(&old.text, &old.key)?;
        let renamed = page::parse_with(&path, &text, keys)?.page;
        let from = old.id();
        let to = renamed.id();
        let mut pages = self.data.pages.clone();
        pages.remove(i);
        let at = slot(&pages, &renamed).unwrap_or_else(|e| e);
        pages.insert(at, Arc::new(renamed));
        let change = Change {
            removed: vec![i],
            added: vec![at],
        };
        let names = (self.names()).after(&self.data.pages, &pages, &change.removed, &change.added);
        let next = self.rebuilt(pages, names, &change, model)?;
        Ok((
            next,
            RenameReport {
                from,
                to,
                path,
                text,
            },
        ))
    }

    /// Position of the page a write names: with `Some(scope)`, the page `key` in exactly that
    /// scope (the key as given or normalized); with `None`, the page [`Index::page`] finds
    /// (global first, then the lowest-named user scope): `None` means the same for every
    /// call that takes a scope.
    fn position_in(&self, key: &str, scope: Option<&Scope>) -> Result<usize> {
        let unknown = || Error::UnknownPage {
            key: key.to_string(),
        };
        let Some(scope) = scope else {
            return self
                .page_index(key, None)
                .map(|i| i as usize)
                .ok_or_else(unknown);
        };
        let normalized = page::normalize_key(key);
        let pages = &self.data.pages;
        pages
            .iter()
            .position(|p| p.scope == *scope && p.key == key)
            .or_else(|| {
                pages
                    .iter()
                    .position(|p| p.scope == *scope && p.key == normalized)
            })
            .ok_or_else(unknown)
    }

    /// Number of edges of page `id` whose target is missing.
    fn missing_count(&self, id: &str) -> usize {
        self.page_of_id(id).map_or(0, |p| {
            self.out_edges(p)
                .iter()
                .filter(|e| matches!(e.to, crate::graph::Target::Missing(_)))
                .count()
        })
    }

    /// The file time of each of `pages`, this index's pages after `change` (none when this
    /// index has none): a page keeps its file's time while its text is the one read from the file,
    /// so a kept page keeps its own, and a page put in the one of the page it replaces at its
    /// path when their texts are equal.
    fn times_after(
        &self,
        pages: &[Arc<Page>],
        change: &Change,
        from: &[Option<usize>],
    ) -> Vec<Option<i64>> {
        let before = &self.data.page_modified;
        if before.is_empty() {
            return Vec::new();
        }
        let replaced: HashMap<&str, usize> = (change.removed.iter())
            .map(|&j| (self.data.pages[j].path.as_str(), j))
            .collect();
        (pages.iter().zip(from.iter().copied()))
            .map(|(p, from)| {
                let j = from.or_else(|| {
                    let j = *replaced.get(p.path.as_str())?;
                    (self.data.pages[j].text == p.text).then_some(j)
                })?;
                before[j]
            })
            .collect()
    }

    /// The language mix of `pages`, this index's pages after `change`: this index's mix with
    /// the pages it took out taken out and the ones it put in detected.
    fn languages_after(
        &self,
        pages: &[Arc<Page>],
        change: &Change,
    ) -> crate::data::record::LanguageMix {
        let detect = crate::text::language::detect_page;
        self.data.languages.changed(
            change.removed.iter().map(|&j| detect(&self.data.pages[j])),
            change.added.iter().map(|&i| detect(&pages[i])),
        )
    }

    /// The next snapshot: `pages` (with their `names`), this index's after `change`, spliced
    /// into this one ([`Index::spliced`]); stored vectors are kept for unchanged passages and
    /// new ones embedded with `model`. The snapshot keeps `names` for the next write.
    fn rebuilt(
        &self,
        pages: Vec<Arc<Page>>,
        names: Names,
        change: &Change,
        model: Option<&dyn Embedder>,
    ) -> Result<Index> {
        let languages = self.languages_after(&pages, change);
        // Which page before each page after is, for the splice, the file times and the dates.
        let from = change.kept_from(self.data.pages.len(), pages.len())?;
        let mut data = self.spliced_from(pages, &names, change, &from, languages)?;
        let times = self.times_after(&data.pages, change, &from);
        data.set_page_modified(times);
        if let Some(old) = &self.data.vectors {
            let known = vectors::Known::of(&self.data);
            if let Some(m) = model {
                self.check_model(m)?;
            }
            let known_only = vectors::KnownOnly { section: old };
            let embedder: &dyn Embedder = model.unwrap_or(&known_only);
            // New chunks get the prompts the stored ones were embedded after.
            vectors::embed_chunks(
                &mut data,
                embedder,
                &old.prompts,
                old.encoding(),
                &known.iter().collect::<Vec<_>>(),
                &mut |_, _| ControlFlow::Continue(()),
            )?;
            // A write keeps the floor the build measured (measuring costs 32 embeddings;
            // `wikidex sync` and any build measure it again).
            data.vectors = data.vectors.take().map(|s| s.with_floor(old.floor));
        }
        // A kept page keeps its date (and its file time: `times_after`).
        let dates = (from.iter().enumerate())
            .map(|(i, j)| j.map_or_else(|| super::page_date(&data, i), |j| self.page_dates[j]))
            .collect();
        let next = Index::dated(data, dates);
        next.names.get_or_init(|| names);
        Ok(next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pages of every kind the analysis meets: summaries, tags, links, CJK, a table, a page
    /// long enough for several chunks.
    fn pages(n: usize) -> Vec<Arc<Page>> {
        let mut pages: Vec<Arc<Page>> = (0..n)
            .map(|i| {
                let body = match i % 4 {
                    0 => format!("Revenue {i} is recognized monthly. See [[page-{}]].", i + 1),
                    1 => format!("自然言語処理 {i} と検索。Running runners ran."),
                    2 => format!("| a | b |\n|---|---|\n| churn {i} | lost |\n"),
                    _ => (0..120).map(|w| format!("word{} ", (w * i) % 37)).collect(),
                };
                let text = format!(
                    "---\nsummary: Page {i} in summary\ntags: [t{}]\n---\n{body}",
                    i % 3
                );
                page::parse_with(&format!("global/page-{i}.md"), &text, page::Keys::FileName)
                    .unwrap()
                    .page
            })
            .map(Arc::new)
            .collect();
        crate::data::sort::sort_by(&mut pages, |a, b| {
            (&a.scope, &a.key).cmp(&(&b.scope, &b.key))
        });
        pages
    }

    fn config() -> Config {
        let mut config = Config::default();
        config.chunk.max_tokens = 16;
        config.chunk.overlap_tokens = 0;
        config
    }

    /// [`Shared::analyze`] on `threads` threads, with chunk numbers from `prior` and chunks
    /// from `cuts`, then the index data made.
    fn analyzed_with(
        threads: usize,
        pages: &[Arc<Page>],
        prior: &chunk::PriorChunks,
        cuts: &Cuts<'_>,
        progress: &mut dyn FnMut(usize, usize) -> ControlFlow<()>,
    ) -> Result<IndexData> {
        let config = config();
        let analyzer = Analyzer::new(config.language());
        let shared = Shared {
            config: &config,
            analyzer: &analyzer,
            pages,
            prior,
            cuts,
        };
        let analyzed = shared.analyze(threads, progress)?;
        let (languages, raw) = (LanguageMix::default(), RawSection::default());
        made(config.clone(), languages, pages.to_vec(), raw, analyzed)
    }

    fn analyzed_on(
        threads: usize,
        pages: &[Arc<Page>],
        progress: &mut dyn FnMut(usize, usize) -> ControlFlow<()>,
    ) -> Result<IndexData> {
        analyzed_with(
            threads,
            pages,
            &chunk::PriorChunks::new(),
            &Cuts::new(),
            progress,
        )
    }

    /// A chunk's hash is its text's, asked for before or after a write: a write's snapshot
    /// does not take the hashes its source had made for chunks whose text moved or changed.
    #[test]
    fn chunk_hashes_are_of_the_text_before_and_after_a_write() {
        let data = analyzed_on(1, &pages(6), &mut |_, _| ControlFlow::Continue(())).unwrap();
        let index = Index::from_data(data);
        let all = |ix: &Index| -> Vec<(String, chunk::ChunkHash)> {
            (0..ix.chunk_count() as u32)
                .map(|c| (ix.chunk_id(c), ix.chunk_hash(c)))
                .collect()
        };
        let text_hashes = |ix: &Index| -> Vec<(String, chunk::ChunkHash)> {
            (0..ix.chunk_count() as u32)
                .map(|c| (ix.chunk_id(c), chunk::ChunkHash::of(ix.chunk_text(c))))
                .collect()
        };
        let before = all(&index);
        assert_eq!(before, text_hashes(&index));
        assert_eq!(
            before,
            all(&index),
            "asked again, the cache answers the same"
        );
        // A page that sorts first gets a new text: every chunk after it moves down the table.
        let path = &index.pages()[0].path;
        let edited = format!(
            "{}\n\nOne line more, to change its last chunk.",
            index.pages()[0].text
        );
        let (next, _) = index
            .upsert_page(path, &edited, &WriteOptions::default(), None)
            .unwrap();
        let after = all(&next);
        assert_eq!(after, text_hashes(&next));
        assert_ne!(after, before);
        // The other pages' chunks keep their ids and hashes.
        let kept = |v: &[(String, chunk::ChunkHash)]| -> Vec<(String, chunk::ChunkHash)> {
            let first = &index.pages()[0].key;
            v.iter()
                .filter(|(id, _)| !id.starts_with(first.as_str()))
                .cloned()
                .collect()
        };
        assert_eq!(kept(&after), kept(&before));
    }

    #[test]
    fn a_change_that_does_not_fit_its_pages_is_refused() {
        let change = |removed: &[usize], added: &[usize]| Change {
            removed: removed.to_vec(),
            added: added.to_vec(),
        };
        assert_eq!(
            change(&[1], &[1]).kept_from(3, 3).unwrap(),
            [Some(0), None, Some(2)]
        );
        assert_eq!(
            change(&[0], &[]).kept_from(3, 2).unwrap(),
            [Some(1), Some(2)]
        );
        assert_eq!(
            change(&[0], &[2]).kept_from(3, 3).unwrap(),
            [Some(1), Some(2), None]
        );
        assert_eq!(
            change(&[], &[0]).kept_from(2, 3).unwrap(),
            [None, Some(0), Some(1)]
        );
        assert!(change(&[], &[]).kept_from(3, 3).is_ok());
        assert!(change(&[1], &[]).kept_from(3, 3).is_err());
        assert!(change(&[], &[7]).kept_from(3, 4).is_err());
        assert!(change(&[5], &[]).kept_from(3, 2).is_err());
    }

    #[test]
    fn a_change_keeps_the_equal_pages_and_takes_out_or_puts_in_the_others() {
        let page = |key: &str, text: &str| {
            Arc::new(
                page::parse_with(&format!("global/{key}.md"), text, page::Keys::FileName)
                    .unwrap()
                    .page,
            )
        };
        let before = [
            page("a", "A."),
            page("b", "B."),
            page("c", "C."),
            page("e", "E."),
        ];
        let mut moved = page("e", "E.");
        Arc::make_mut(&mut moved).body_start = 1;
        let after = [
            page("a", "A."),
            page("b", "B, edited."),
            page("d", "D."),
            moved,
        ];
        let change = Change::between(&before, &after);
        // b edited, c gone, d new, e the same text with another body start.
        assert_eq!(change.removed, [1, 2, 3]);
        assert_eq!(change.added, [1, 2, 3]);
        let same = Change::between(&before, &before);
        assert!(same.removed.is_empty() && same.added.is_empty());
        let none = Change::between(&[], &after[..2]);
        assert_eq!((none.removed.len(), none.added), (0, vec![0, 1]));
    }

    #[test]
    fn analysis_on_several_threads_makes_the_index_one_thread_makes() {
        let pages = pages(41);
        let go = &mut |_, _| ControlFlow::Continue(());
        let one = analyzed_on(1, &pages, go).unwrap();
        assert!(one.chunks.len() > pages.len());
        let none = analyzed_on(3, &[], go).unwrap();
        assert!(none.chunks.is_empty());
        for threads in [2, 3, 7, 41, 100] {
            let many = analyzed_on(threads, &pages, go).unwrap();
            assert!(many == one, "{threads} threads");
            assert_eq!(
                crate::blob::encode(&many).unwrap(),
                crate::blob::encode(&one).unwrap()
            );
        }
    }

    /// With chunk numbers carried from a previous index (not every chunk numbered by its
    /// position) and every page's chunks taken from its cut, the threads still make what one
    /// thread makes, and what cutting every page makes.
    #[test]
    fn several_threads_carry_numbers_and_take_cuts_as_one_does() {
        let pages = pages(23);
        let go = &mut |_, _| ControlFlow::Continue(());
        let fresh = analyzed_on(1, &pages, go).unwrap();
        // Page 3 (long) had its chunks numbered backwards.
        let id = pages[3].id();
        let page = fresh.chunks.iter().filter(|c| c.page == 3);
        let hashes: Vec<chunk::ChunkHash> = page.map(|c| c.hash(&pages[3].text)).collect();
        assert!(hashes.len() > 1);
        let numbered = hashes.iter().rev().zip(0u32..).map(|(h, n)| (*h, n + 7));
        let prior = chunk::PriorChunks::from([(id, numbered.collect())]);
        let mut cuts = Cuts::new();
        for (i, p) in pages.iter().enumerate() {
            let first = fresh
                .chunks
                .iter()
                .position(|c| c.page as usize == i)
                .unwrap();
            let n = fresh.chunks[first..]
                .iter()
                .take_while(|c| c.page as usize == i)
                .count();
            let cut = Cut {
                page: p,
                chunks: &fresh.chunks[first..first + n],
            };
            cuts.insert(p.path.as_str(), cut);
        }
        let one = analyzed_with(1, &pages, &prior, &Cuts::new(), go).unwrap();
        assert!(!one.chunk_numbers.is_empty());
        for threads in [1, 2, 3, 5] {
            let many = analyzed_with(threads, &pages, &prior, &cuts, go).unwrap();
            assert!(many == one, "{threads} threads");
        }
    }

    #[test]
    fn progress_counts_every_page_and_a_stop_stops_every_thread() {
        let pages = pages(30);
        for threads in [1, 3] {
            let mut seen = Vec::new();
            analyzed_on(threads, &pages, &mut |d, t| {
                seen.push((d, t));
                ControlFlow::Continue(())
            })
            .unwrap();
            assert_eq!(seen.last(), Some(&(30, 30)), "{threads} threads");
            assert!(seen.windows(2).all(|w| w[0].0 <= w[1].0));
            let err = analyzed_on(threads, &pages, &mut |_, _| ControlFlow::Break(())).unwrap_err();
            assert_eq!(err.code(), "cancelled");
        }
    }
}
