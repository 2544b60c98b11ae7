//! A session: what a caller holds. An [`Index`] is data and pure operations over it; a
//! [`Session`] owns the current index (a [`SharedIndex`], swapped by writes) and what a caller
//! brings to it: the model that embeds queries and new chunks, the unit the records count
//! offsets in, the query log, the agent tools with their per-turn limits, and the report of
//! the build that made the index. Every binding wraps this one type.
//!
//! A session is `Send + Sync`: searches run on the current snapshot from any number of
//! threads while a write builds the next one beside it.
//!
//! ```
//! use wikidex::{IndexBuilder, OffsetUnit, SearchOptions, Session};
//! let mut b = IndexBuilder::new(Default::default())?;
//! b.add_file("global/café.md", b"Caf\xc3\xa9 opens at seven.")?;
//! let session = Session::from_build(b.build()?);
//! session.set_offset_unit(OffsetUnit::Utf16);
//! session.upsert_page("global/tea.md", "Tea is served at four.", &Default::default())?;
//! let hits = session.search("tea", &SearchOptions::default())?.hits;
//! assert_eq!(hits[0].key, "tea");
//! assert_eq!(session.index().pages().len(), 2);
//! # Ok::<(), wikidex::Error>(())
//! ```

use std::ops::ControlFlow;
use std::sync::{Arc, RwLock};

use crate::cite::{AnswerCheck, Cited, Support, Verification};
use crate::data::config::Config;
use crate::data::error::Result;
use crate::data::offset::OffsetUnit;
use crate::data::record::{BuildReport, BuildStage};
use crate::embed::Embedder;
use crate::front::build::{build_chosen, BuildOptions, ModelChoice, Source, SyncRecord};
use crate::front::querylog::{LogSink, QueryLog, Stopwatch};
use crate::front::shared::SharedIndex;
use crate::front::tools::{ToolDef, ToolLimits, ToolResult, Tools};
use crate::index::write::{DeleteReport, RenameReport, UpsertReport, WriteOptions};
use crate::index::{Caller, Chunk, Index, PageRecord};
use crate::lane::fusion::FusionConfig;
use crate::lane::semantic::VectorEncoding;
use crate::lane::{Lane, LaneStatus};
use crate::lint::LintReport;
use crate::search::{Found, Ranked, SearchOptions, SearchResults};
use crate::text::page::Scope;
use crate::traverse::{Evidence, EvidenceOptions};

/// An index and what a caller brings to it: the model that embeds queries and new chunks, the
/// unit the records count offsets in, the query log, the agent tools with their per-turn
/// limits, and the report of the build that made the index. Every binding wraps this one type;
/// it is `Send + Sync`, and searches run on the current index from any number of threads while
/// a write builds the next one beside it.
#[derive(Debug)]
pub struct Session {
    index: SharedIndex,
    state: RwLock<State>,
}

/// A session's settings, copied out (cheaply: `Arc`s) for each call.
#[derive(Clone)]
struct State {
    model: Option<Arc<dyn Embedder>>,
    unit: OffsetUnit,
    log: Option<LogSink>,
    tools: Arc<Tools>,
    // Behind `Arc`s: every call copies the state out, and these can hold every file's path.
    report: Option<Arc<BuildReport>>,
    sync: Option<Arc<SyncRecord>>,
}

impl std::fmt::Debug for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("State")
            .field(
                "model",
                &self.model.as_ref().map(|m| m.model_id().to_string()),
            )
            .field("unit", &self.unit)
            .field("log", &self.log)
            .field("tools", &self.tools.limits())
            .finish_non_exhaustive()
    }
}

impl State {
    fn caller(&self) -> Caller<'_> {
        Caller {
            model: self.model.as_deref(),
            unit: self.unit,
        }
    }
}

impl Session {
    /// A session over `index`: no model, offsets in bytes, no query log, the default tool
    /// limits.
    pub fn new(index: Index) -> Session {
        Session {
            index: SharedIndex::new(index),
            state: RwLock::new(State {
                model: None,
                unit: OffsetUnit::Byte,
                log: None,
                tools: Arc::new(Tools::default()),
                report: None,
                sync: None,
            }),
        }
    }

    /// A session over a freshly built index, keeping its build report
    /// ([`Session::build_report`]).
    pub fn from_build((index, report): (Index, BuildReport)) -> Session {
        let session = Session::new(index);
        session.write_state().report = Some(Arc::new(report));
        session
    }

    /// Builds an index ([`crate::build`]) and a session over it, with `model` (which embedded
    /// the chunks) as its model and the build's report.
    ///
    /// # Errors
    /// As [`crate::build`].
    pub fn build(
        source: Source,
        options: &BuildOptions,
        model: Option<Arc<dyn Embedder>>,
        progress: &mut dyn FnMut(BuildStage, usize, usize) -> ControlFlow<()>,
    ) -> Result<Session> {
        Session::build_with_model(source, options, model.into(), progress)
    }

    /// [`Session::build`] with the model chosen as `model` says: given, none, or the default
    /// model, chosen by the wiki's languages once its pages are read
    /// ([`crate::embed::choose`]: `$WIKIDEX_MODEL`, else an installed model package,
    /// multilingual-e5-small for a wiki largely not in English). The report says which model
    /// and why ([`BuildReport::model_reason`]), which package to install when the wiki
    /// wanted the multilingual model and it is not installed ([`BuildReport::model_notice`]),
    /// and, when no default model is found, that the index has no semantic lane and how to
    /// turn it on ([`BuildReport::semantic_off`]).
    ///
    /// # Errors
    /// As [`crate::build`]; for the default model, as [`crate::embed::choose()`] and
    /// [`crate::embed::Found::load`] (a `$WIKIDEX_MODEL` folder that does not load is an
    /// error, not a silent lexical-only build).
    pub fn build_with_model(
        source: Source,
        options: &BuildOptions,
        model: ModelChoice,
        progress: &mut dyn FnMut(BuildStage, usize, usize) -> ControlFlow<()>,
    ) -> Result<Session> {
        let (index, report, model) = build_chosen(source, options, model, None, progress)?;
        let session = Session::from_build((index, report.build));
        session.write_state().model = model;
        Ok(session)
    }

    /// Brings the blob at `blob` up to date with the wiki folder `dir` ([`crate::sync_file`])
    /// and opens a session over the result, with `model` as its model; what changed is its
    /// [`Session::sync_record`].
    ///
    /// # Errors
    /// As [`crate::sync_file`].
    #[cfg(feature = "fs")]
    pub fn sync_file(
        dir: &std::path::Path,
        blob: &std::path::Path,
        options: &BuildOptions,
        model: Option<Arc<dyn Embedder>>,
        drop_vectors: bool,
        progress: &mut dyn FnMut(BuildStage, usize, usize) -> ControlFlow<()>,
    ) -> Result<Session> {
        let (index, record) = crate::front::build::sync_file(
            dir,
            blob,
            options,
            model.clone(),
            drop_vectors,
            progress,
        )?;
        let session = Session::from_build((index, record.report.build.clone()));
        let mut state = session.write_state();
        state.model = model;
        state.sync = Some(Arc::new(record));
        drop(state);
        Ok(session)
    }

    /// Brings the session's index up to date with the wiki folder `dir` (`wikidex mcp
    /// --watch`): builds on the current index, so only the files that changed are read again
    /// and only new chunks are embedded (with the session's model), keeping the index's
    /// configuration; when anything changed, saves the result to `blob` (if given) and swaps
    /// it in. Returns what changed, `None` when nothing did. Meant for a session whose writes
    /// all come from the folder: a page written through the session meanwhile is replaced by
    /// the folder's state.
    ///
    /// # Errors
    /// As [`crate::build`] and [`Index::save`]; the session is then unchanged.
    #[cfg(feature = "fs")]
    pub fn sync_folder(
        &self,
        dir: &std::path::Path,
        blob: Option<&std::path::Path>,
        options: &BuildOptions,
        progress: &mut dyn FnMut(BuildStage, usize, usize) -> ControlFlow<()>,
    ) -> Result<Option<crate::data::record::SyncReport>> {
        let current = self.index();
        let options = BuildOptions {
            config: current.config().clone(),
            ..options.clone()
        };
        let source = Source::Folder(dir.to_path_buf());
        let model = self.model().into();
        let (next, report) =
            crate::front::build::build(source, &options, model, Some(&current), progress)?;
        if !report.has_changes() && report.embedded == 0 {
            return Ok(None);
        }
        if let Some(blob) = blob {
            next.save(blob)?;
        }
        self.index.update(|_| Ok((next, ())))?;
        Ok(Some(report))
    }

    /// A session over the blob `bytes` ([`Index::from_bytes`]).
    ///
    /// # Errors
    /// As [`Index::from_bytes`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Session> {
        Index::from_bytes(bytes).map(Session::new)
    }

    /// A session over the blob at `path` ([`Index::open`]).
    ///
    /// # Errors
    /// As [`Index::open`].
    #[cfg(feature = "fs")]
    pub fn open(path: &std::path::Path) -> Result<Session> {
        Index::open(path).map(Session::new)
    }

    /// A session over the current index with the same settings (model, offset unit, query
    /// log, tool limits, build report); writes to either leave the other as it is. The index
    /// is shared, not copied, until one of them writes.
    pub fn copy(&self) -> Session {
        let mut state = self.state();
        state.tools = Arc::new(Tools::new(state.tools.limits()).unwrap_or_default());
        Session {
            index: SharedIndex::from_arc(self.index()),
            state: RwLock::new(state),
        }
    }

    /// The current index: a snapshot that stays as it is however many writes follow. Every
    /// read that returns no offsets (pages, links, lint, neighbors) is a method of it.
    pub fn index(&self) -> Arc<Index> {
        self.index.snapshot()
    }

    /// The blob of the current index ([`Index::to_bytes`]).
    ///
    /// # Errors
    /// As [`Index::to_bytes`].
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        self.index().to_bytes()
    }

    /// Saves the current index to `path` atomically ([`Index::save`]).
    ///
    /// # Errors
    /// As [`Index::save`].
    #[cfg(feature = "fs")]
    pub fn save(&self, path: &std::path::Path) -> Result<()> {
        self.index().save(path)
    }

    /// The configuration of the current index.
    pub fn config(&self) -> Config {
        self.index().config().clone()
    }

    fn state(&self) -> State {
        // A poisoned lock only means a thread panicked while replacing a field: every field
        // is still whole.
        self.state.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn write_state(&self) -> std::sync::RwLockWriteGuard<'_, State> {
        self.state.write().unwrap_or_else(|e| e.into_inner())
    }

    // Settings.

    /// Sets the model that embeds queries for the semantic lane, and new chunks on page
    /// writes; `None` drops it.
    ///
    /// # Errors
    /// [`crate::Error::ModelMismatch`] when the index holds vectors of another model
    /// ([`Index::check_model`]); the session is then unchanged.
    pub fn set_model(&self, model: Option<Arc<dyn Embedder>>) -> Result<()> {
        if let Some(m) = &model {
            self.index().check_model(m.as_ref())?;
        }
        self.write_state().model = model;
        Ok(())
    }

    /// The session's model, if any.
    pub fn model(&self) -> Option<Arc<dyn Embedder>> {
        self.state().model
    }

    /// Sets how the records this session returns count offsets (default
    /// [`OffsetUnit::Byte`]; see [`crate::data::offset`]).
    pub fn set_offset_unit(&self, unit: OffsetUnit) {
        self.write_state().unit = unit;
    }

    /// How the records this session returns count offsets.
    pub fn offset_unit(&self) -> OffsetUnit {
        self.state().unit
    }

    /// Logs this session's searches and citation checks (its tools' included) to `log` (see
    /// [`crate::front::querylog`]), naming `origin` as the surface (`cli`, `mcp`, `python`, ...);
    /// `None` stops logging.
    pub fn set_query_log(&self, log: Option<Arc<dyn QueryLog>>, origin: &str) {
        self.write_state().log = log.map(|log| LogSink {
            log,
            origin: origin.to_string(),
        });
    }

    /// Sets the agent tools' limits; the turn's drill-down count starts again at 0.
    ///
    /// # Errors
    /// As [`Tools::new`]; the session is then unchanged.
    pub fn set_tool_limits(&self, limits: ToolLimits) -> Result<()> {
        let tools = Tools::new(limits)?;
        self.write_state().tools = Arc::new(tools);
        Ok(())
    }

    /// The agent tools' limits.
    pub fn tool_limits(&self) -> ToolLimits {
        self.state().tools.limits()
    }

    /// The report of the build that made this session's index ([`Session::from_build`]);
    /// `None` for an index loaded from a blob.
    pub fn build_report(&self) -> Option<BuildReport> {
        self.state().report.as_deref().cloned()
    }

    /// What the sync that made this session's index changed ([`Session::sync_file`]); `None`
    /// for a session made otherwise.
    pub fn sync_record(&self) -> Option<SyncRecord> {
        self.state().sync.as_deref().cloned()
    }

    // Reads, for the session's model and offset unit, logged.

    /// What to fix in the wiki ([`Index::lint`]); with the build's report when the session
    /// was built here ([`Index::lint_with_build`]: duplicate keys and skipped files too).
    pub fn lint(&self) -> LintReport {
        let index = self.index();
        match self.state().report {
            Some(report) => index.lint_with_build(&report),
            None => index.lint(),
        }
    }

    /// Searches the current index ([`Index::search`]) with the session's model and offset
    /// unit, and logs the search.
    ///
    /// # Errors
    /// As [`Index::search`].
    pub fn search(&self, query: &str, opts: &SearchOptions) -> Result<SearchResults> {
        self.found(query, opts, Found::results)
            .map(|(_, results)| results)
    }

    /// [`Session::search`] with its hits made when they are read ([`Found`]): the ranking,
    /// and what making a hit needs, over the current index (a later write does not change
    /// them). The search is logged as [`Session::search`] logs it, its time the ranking's.
    ///
    /// # Errors
    /// As [`Index::search`].
    ///
    /// # Example
    /// ```
    /// # use wikidex::{IndexBuilder, SearchOptions, Session};
    /// # let mut b = IndexBuilder::new(Default::default())?;
    /// # b.add_file("global/revenue.md", b"Revenue is recognized monthly.")?;
    /// let session = Session::from_build(b.build()?);
    /// let found = session.find("revenue", &SearchOptions::default())?;
    /// assert_eq!(found.hits_len(), 1);
    /// let top = found.hit(0).unwrap(); // made now, with its snippet
    /// assert_eq!(top.key, "revenue");
    /// assert_eq!(found.results().hits, [top]);
    /// # Ok::<(), wikidex::Error>(())
    /// ```
    pub fn find(&self, query: &str, opts: &SearchOptions) -> Result<Found> {
        self.found(query, opts, |_| ()).map(|(found, ())| found)
    }

    /// Ranks `query`, runs `then` on what was found, and logs the search (its time with
    /// `then`'s).
    fn found<R>(
        &self,
        query: &str,
        opts: &SearchOptions,
        then: impl FnOnce(&Found) -> R,
    ) -> Result<(Found, R)> {
        let state = self.state();
        let clock = Stopwatch::start();
        let found = Found::search(self.index(), query, opts, None, state.caller())?;
        let out = then(&found);
        if let Some(log) = &state.log {
            log.search(opts, &found, clock);
        }
        Ok((found, out))
    }

    /// Whether a search with `opts` may take long: when the session's model embeds the query
    /// (the semantic lane asked for, or every lane, and no query vector given), or the query
    /// log writes it. Any other search takes well under a millisecond on a wiki, less than a
    /// hop to a thread pool and back costs, so a binding runs it on the caller's thread.
    pub fn search_may_block(&self, opts: &SearchOptions) -> bool {
        let state = self.state();
        let embeds =
            state.model.is_some() && opts.query_vector.is_none() && opts.wants(Lane::Semantic);
        embeds || state.log.is_some()
    }

    /// [`Index::rank`] with the session's model (not logged: for evaluation and batches),
    /// with the index ranked: the positions in [`Ranked`] are positions in it.
    ///
    /// # Errors
    /// As [`Index::rank`].
    pub fn rank(&self, query: &str, opts: &SearchOptions) -> Result<(Arc<Index>, Vec<Ranked>)> {
        let state = self.state();
        let index = self.index();
        let ranked = index.rank_with(query, opts, state.model.as_deref())?;
        Ok((index, ranked))
    }

    /// [`Index::rank_many`] with the session's model (not logged), with the index ranked.
    ///
    /// # Errors
    /// As [`Index::rank_many`].
    pub fn rank_many<Q: AsRef<str> + Sync>(
        &self,
        queries: &[Q],
        opts: &SearchOptions,
        threads: Option<usize>,
    ) -> Result<(Arc<Index>, Vec<Vec<Ranked>>)> {
        let state = self.state();
        let index = self.index();
        let ranked = index.rank_many_with(queries, opts, threads, state.model.as_deref())?;
        Ok((index, ranked))
    }

    /// Whether `lane` can rank the current index for a query given as text, with the
    /// session's model ([`Index::lane_status`]).
    pub fn lane_status(&self, lane: Lane) -> LaneStatus {
        let state = self.state();
        self.index().lane_status(lane, state.model.as_deref())
    }

    /// [`Index::query_with_evidence`] with the session's model; the search it seeds from is
    /// logged.
    ///
    /// # Errors
    /// As [`Index::query_with_evidence`].
    pub fn query_with_evidence(&self, query: &str, opts: &EvidenceOptions) -> Result<Evidence> {
        let state = self.state();
        let clock = Stopwatch::start();
        let index = self.index();
        let (evidence, found) = index.evidence_for(query, opts, state.model.as_deref())?;
        if let Some(log) = &state.log {
            log.search(&SearchOptions::default(), &found, clock);
        }
        Ok(evidence)
    }

    /// [`Index::verify`] with the quote spans in the session's unit; logged.
    ///
    /// # Errors
    /// As [`Index::verify`].
    pub fn verify(
        &self,
        answer: &str,
        cited: &[Cited],
        offered: &[String],
    ) -> Result<Verification> {
        let state = self.state();
        let clock = Stopwatch::start();
        let v = self.index().verify_in(answer, cited, offered, state.unit)?;
        if let Some(log) = &state.log {
            log.verify(&v, clock);
        }
        Ok(v)
    }

    /// [`Index::uncited_support`] with the sentence spans in the session's unit.
    ///
    /// # Errors
    /// As [`Index::uncited_support`].
    pub fn uncited_support(&self, answer: &str) -> Result<Support> {
        let state = self.state();
        self.index().uncited_support_in(answer, state.unit)
    }

    /// [`Index::check_answer`] with the spans in the session's unit; its verification is
    /// logged.
    ///
    /// # Errors
    /// As [`Index::check_answer`].
    pub fn check_answer(
        &self,
        answer: &str,
        cited: &[Cited],
        offered: &[String],
    ) -> Result<AnswerCheck> {
        let state = self.state();
        let clock = Stopwatch::start();
        let check = self
            .index()
            .check_answer_in(answer, cited, offered, state.unit)?;
        if let Some(log) = &state.log {
            log.verify(&check.verification, clock);
        }
        Ok(check)
    }

    /// [`Index::chunk`] with offsets in the session's unit.
    ///
    /// # Errors
    /// As [`Index::chunk`].
    pub fn chunk(&self, id: &str) -> Result<Chunk> {
        self.index().chunk_in(id, self.state().unit)
    }

    /// [`Index::chunks_of`] with offsets in the session's unit.
    ///
    /// # Errors
    /// As [`Index::chunks_of`].
    pub fn chunks_of(&self, key: &str, scope: Option<&Scope>) -> Result<Vec<Chunk>> {
        self.index().chunks_of_in(key, scope, self.state().unit)
    }

    /// [`Index::page_record`] with offsets in the session's unit.
    ///
    /// # Errors
    /// As [`Index::page_record`].
    pub fn page_record(&self, key: &str, scope: Option<&Scope>) -> Result<PageRecord> {
        self.index().page_record_in(key, scope, self.state().unit)
    }

    // Writes: each builds the next index beside the current one and swaps it in; nothing
    // changes when one fails.

    /// Adds or replaces a page ([`Index::upsert_page`], new chunks embedded with the
    /// session's model).
    ///
    /// # Errors
    /// As [`Index::upsert_page`]; the index is then unchanged.
    pub fn upsert_page(&self, path: &str, text: &str, opts: &WriteOptions) -> Result<UpsertReport> {
        let model = self.state().model;
        self.index
            .update(|index| index.upsert_page(path, text, opts, model.as_deref()))
    }

    /// Removes a page ([`Index::delete_page`]).
    ///
    /// # Errors
    /// As [`Index::delete_page`]; the index is then unchanged.
    pub fn delete_page(&self, key: &str, scope: Option<&Scope>) -> Result<DeleteReport> {
        let model = self.state().model;
        self.index
            .update(|index| index.delete_page(key, scope, model.as_deref()))
    }

    /// Renames a page, leaving a redirect ([`Index::rename_page`]).
    ///
    /// # Errors
    /// As [`Index::rename_page`]; the index is then unchanged.
    pub fn rename_page(
        &self,
        key: &str,
        scope: Option<&Scope>,
        new_key: &str,
    ) -> Result<RenameReport> {
        let model = self.state().model;
        self.index
            .update(|index| index.rename_page(key, scope, new_key, model.as_deref()))
    }

    /// Changes the fusion weights and constant ([`Index::with_fusion`]).
    ///
    /// # Errors
    /// As [`Index::with_fusion`]; the index is then unchanged.
    pub fn set_fusion(&self, fusion: FusionConfig) -> Result<()> {
        self.index
            .update(|index| Ok((index.with_fusion(fusion)?, ())))
    }

    /// Stores vectors the caller computed ([`Index::with_vectors`]). The session's model is
    /// dropped when its fingerprint is not `fingerprint`.
    ///
    /// # Errors
    /// As [`Index::with_vectors`]; the index is then unchanged.
    pub fn set_vectors<V: AsRef<[f32]>>(
        &self,
        model_id: &str,
        fingerprint: &str,
        vectors: &[V],
        encoding: VectorEncoding,
    ) -> Result<()> {
        self.index.update(|index| {
            let next = index.with_vectors(model_id, fingerprint, vectors, encoding)?;
            let mut state = self.write_state();
            if state
                .model
                .as_ref()
                .is_some_and(|m| m.fingerprint() != fingerprint)
            {
                state.model = None;
            }
            Ok((next, ()))
        })
    }

    /// Embeds every chunk with `model` ([`Index::embed_all`]) and makes it the session's
    /// model. `progress(done, total)` returns [`ControlFlow::Break`] to stop.
    ///
    /// # Errors
    /// As [`Index::embed_all`]; the session is then unchanged.
    pub fn embed_all(
        &self,
        model: Arc<dyn Embedder>,
        encoding: VectorEncoding,
        progress: &mut dyn FnMut(usize, usize) -> ControlFlow<()>,
    ) -> Result<()> {
        self.index.update(|index| {
            let next = index.embed_all(model.as_ref(), encoding, progress)?;
            self.write_state().model = Some(Arc::clone(&model));
            Ok((next, ()))
        })
    }

    // The agent tools.

    /// Every agent tool's definition ([`Tools::definitions`]).
    pub fn tool_definitions(&self) -> Vec<ToolDef> {
        self.state().tools.definitions()
    }

    /// Runs an agent tool on the current index, with the session's model and offset unit;
    /// its searches and citation checks are logged.
    ///
    /// # Errors
    /// As [`Tools::call`].
    pub fn call_tool(&self, name: &str, args: &str) -> Result<ToolResult> {
        let state = self.state();
        state.tools.call_for(
            &self.index(),
            name,
            args,
            state.caller(),
            state.log.as_ref(),
        )
    }

    /// What an agent should always know about the current index ([`Tools::instructions`]).
    pub fn tool_instructions(&self) -> String {
        self.state().tools.instructions(&self.index())
    }

    /// Starts a new turn of the agent tools: the drill-down count goes back to 0.
    pub fn reset_turn(&self) {
        self.state().tools.reset_turn();
    }

    /// Drill-down calls the agent tools made this turn.
    pub fn drilldowns(&self) -> usize {
        self.state().tools.drilldowns()
    }
}
