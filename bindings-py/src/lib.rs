//! wikidex for Python: the native module `wikidex._wikidex`.
//!
//! Thin by rule (CONTRIBUTING.md, "The core's layers"): each method converts its arguments, calls one
//! core function, and converts the result back. Records cross as the core's own serde JSON
//! (the Python package turns them into frozen records), a search's hits as native objects
//! that convert a field when it is read (`found.rs`), options arrive as JSON of the core's
//! option structs, and a core error becomes the `wikidex` exception for its code
//! (`wikidex._errors.from_record`). The GIL is released around every call that does work.
//! Offsets count code points (`OffsetUnit::Char`), so they index Python strings directly.
//! Vectors cross as numpy float32 arrays: the values are copied once, as one block, while the
//! GIL is held (another thread may write the array once it is released).

mod file;
mod found;
mod ranking;
mod sharded;

use std::collections::HashMap;
use std::ops::ControlFlow;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use numpy::ndarray::Array2;
use numpy::{
    IntoPyArray, PyArray2, PyArrayDescrMethods, PyArrayDyn, PyArrayMethods, PyUntypedArray,
    PyUntypedArrayMethods,
};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString, PyTuple};
use serde::Serialize;
use wikidex::cite::Cited;
use wikidex::embed::{Surface, MODEL_FILE, TOKENIZER_FILE};
use wikidex::querylog::JsonlLog;
use wikidex::{
    BuildOptions, BuildStage, Embedder, Error, EvidenceOptions, Index, LogEntry, ModelChoice,
    OffsetUnit, OnnxEmbedder, OnnxOptions, PromptKind, QueryLog, Scope, SearchOptions,
    SearchResults, Session, Source, ToolLimits, TraverseOptions, VectorEncoding, WriteOptions,
};

/// A core error as the `wikidex` exception of its code.
fn raise(py: Python<'_>, e: &Error) -> PyErr {
    let details = serde_json::to_string(&e.details()).unwrap_or_else(|_| "{}".into());
    let made = py
        .import("wikidex._errors")
        .and_then(|m| m.getattr("from_record"))
        .and_then(|f| f.call1((e.code(), e.to_string(), details)));
    match made {
        Ok(exc) => PyErr::from_value(exc),
        Err(err) => err,
    }
}

fn to_json<T: Serialize>(v: &T) -> Result<String, Error> {
    serde_json::to_string(v).map_err(|e| Error::Encode {
        detail: e.to_string(),
    })
}

fn from_json<T: serde::de::DeserializeOwned + Default>(
    what: &str,
    json: Option<&str>,
) -> Result<T, Error> {
    wikidex::options::from_json(what, json)
}

/// Cited ids as the CLI takes them: `id`, or `id@hash` with the hash the model saw.
fn parse_cited(cited: &[String]) -> Vec<Cited> {
    cited.iter().map(|c| Cited::parse(c)).collect()
}

fn scope(s: Option<&str>) -> Result<Option<Scope>, Error> {
    s.map(Scope::parse).transpose()
}

/// The values of a C-contiguous float32 numpy array of `ndim` dimensions, and its shape. One
/// copy of the whole buffer, made with the GIL held; anything else is `invalid_argument`.
fn f32_array(
    what: &str,
    obj: &Bound<'_, PyAny>,
    ndim: usize,
) -> Result<(Vec<f32>, Vec<usize>), Error> {
    let bad = |detail: String| Error::InvalidArgument {
        detail: format!("{what}: {detail}"),
    };
    let array = obj.cast::<PyUntypedArray>().map_err(|_| {
        let got = obj
            .get_type()
            .name()
            .map_or_else(|_| "?".into(), |n| n.to_string());
        bad(format!("a numpy.ndarray of float32 expected, got {got}"))
    })?;
    if array.ndim() != ndim {
        return Err(bad(format!(
            "a {ndim}-D array expected, got {}-D (shape {:?})",
            array.ndim(),
            array.shape()
        )));
    }
    let dtype = array.dtype();
    if !dtype.is_equiv_to(&numpy::dtype::<f32>(obj.py())) {
        return Err(bad(format!(
            "dtype float32 expected, got {dtype} (use .astype(numpy.float32))"
        )));
    }
    if !array.is_c_contiguous() {
        return Err(bad(
            "a C-contiguous array expected (use numpy.ascontiguousarray)".into(),
        ));
    }
    let typed = obj
        .cast::<PyArrayDyn<f32>>()
        .map_err(|e| bad(e.to_string()))?;
    let view = typed.try_readonly().map_err(|e| bad(e.to_string()))?;
    let values = view.as_slice().map_err(|e| bad(e.to_string()))?.to_vec();
    Ok((values, array.shape().to_vec()))
}

/// Search options (JSON) with the query vector (a 1-D float32 array) set.
fn search_options(
    options: Option<&str>,
    query_vector: Option<Vec<f32>>,
) -> Result<SearchOptions, Error> {
    let mut opts: SearchOptions = from_json("search options", options)?;
    if query_vector.is_some() {
        opts.query_vector = query_vector;
    }
    Ok(opts)
}

fn query_vector(py: Python<'_>, v: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Vec<f32>>> {
    v.map(|v| f32_array("query_vector", v, 1).map(|(values, _)| values))
        .transpose()
        .map_err(|e| raise(py, &e))
}

/// Runs `work` without the GIL and turns its error into the `wikidex` exception.
fn run<T: Send>(py: Python<'_>, work: impl FnOnce() -> Result<T, Error> + Send) -> PyResult<T> {
    py.detach(work).map_err(|e| raise(py, &e))
}

/// A built or loaded index: the core's `Session` (the current snapshot, the model, the query
/// log, the agent tools, the build report), with the page ids of the last snapshot ranked.
#[pyclass(module = "wikidex._wikidex", frozen)]
struct NativeIndex {
    session: Session,
    ids: Mutex<Option<Arc<PageIds>>>,
}

/// The page ids of one snapshot as Python strings, made on the first `rank` after a write:
/// `rank` then hands out new references to them rather than making a string per hit. It
/// holds its snapshot, so a newer one is never mistaken for it (none: the ids of a sharded
/// index's shards, one after another, made with it).
pub(crate) struct PageIds {
    snapshot: Option<Arc<Index>>,
    pub(crate) ids: Vec<Py<PyString>>,
}

fn wrap(session: Session) -> NativeIndex {
    session.set_offset_unit(OffsetUnit::Char);
    NativeIndex {
        session,
        ids: Mutex::new(None),
    }
}

/// Runs `work` (a build) without the GIL, calling `progress(stage, done, total)` with the GIL
/// taken back for each step. Ctrl-C (or the notebook's stop button) and an exception raised by
/// `progress` stop the work: the callback breaks, core returns `cancelled`, and the Python
/// exception is raised.
fn with_progress<T: Send>(
    py: Python<'_>,
    progress: Option<Py<PyAny>>,
    work: impl FnOnce(&mut dyn FnMut(BuildStage, usize, usize) -> ControlFlow<()>) -> Result<T, Error>
        + Send,
) -> PyResult<T> {
    let mut raised: Option<PyErr> = None;
    let done = run(py, || {
        work(&mut |stage, done, total| {
            Python::attach(|py| {
                let step = py.check_signals().and_then(|()| match &progress {
                    Some(cb) => cb.call1(py, (stage.as_str(), done, total)).map(drop),
                    None => Ok(()),
                });
                match step {
                    Ok(()) => ControlFlow::Continue(()),
                    Err(e) => {
                        raised = Some(e);
                        ControlFlow::Break(())
                    }
                }
            })
        })
    });
    match (done, raised) {
        (Err(_), Some(e)) => Err(e),
        (done, _) => done,
    }
}

/// Builds from `source` with `options` (JSON of the core's `BuildOptions`) and `model`, else
/// (with `candidates`, the model folders of the installed `wikidex.models` entry points) the
/// default model by the core's rule, else none.
fn build(
    py: Python<'_>,
    source: Source,
    options: Option<&str>,
    progress: Option<Py<PyAny>>,
    model: Option<&Model>,
    candidates: Option<Vec<PathBuf>>,
) -> PyResult<NativeIndex> {
    let model = match (model, candidates) {
        (Some(m), _) => ModelChoice::Given(Arc::clone(&m.inner) as Arc<dyn Embedder>),
        (None, Some(candidates)) => ModelChoice::Default {
            candidates,
            surface: Surface::Python,
            options: wikidex::OnnxOptions::default(),
        },
        (None, None) => ModelChoice::Off,
    };
    with_progress(py, progress, |progress| {
        let options: BuildOptions = from_json("build options", options)?;
        Session::build_with_model(source, &options, model, progress)
    })
    .map(wrap)
}

#[pymethods]
impl NativeIndex {
    /// Builds from a list of `(path, text)`, added in sorted path order (by core).
    #[staticmethod]
    #[pyo3(signature = (files, options=None, progress=None, model=None, candidates=None))]
    fn build_files(
        py: Python<'_>,
        files: Vec<(String, String)>,
        options: Option<&str>,
        progress: Option<Py<PyAny>>,
        model: Option<PyRef<'_, Model>>,
        candidates: Option<Vec<PathBuf>>,
    ) -> PyResult<NativeIndex> {
        let files = files
            .into_iter()
            .map(|(p, t)| (p, t.into_bytes()))
            .collect();
        build(
            py,
            Source::Files(files),
            options,
            progress,
            model.as_deref(),
            candidates,
        )
    }

    /// Builds from the files `files` (relative paths, as `folder_files` lists them) of the
    /// wiki folder `root`: one part of a folder built in parts (the core's
    /// `Source::FolderFiles`).
    #[staticmethod]
    #[pyo3(signature = (root, files, options=None, progress=None, model=None, candidates=None))]
    fn build_folder_files(
        py: Python<'_>,
        root: PathBuf,
        files: Vec<String>,
        options: Option<&str>,
        progress: Option<Py<PyAny>>,
        model: Option<PyRef<'_, Model>>,
        candidates: Option<Vec<PathBuf>>,
    ) -> PyResult<NativeIndex> {
        build(
            py,
            Source::FolderFiles(root, files),
            options,
            progress,
            model.as_deref(),
            candidates,
        )
    }

    /// Builds from a wiki folder.
    #[staticmethod]
    #[pyo3(signature = (path, options=None, progress=None, model=None, candidates=None))]
    fn build_dir(
        py: Python<'_>,
        path: PathBuf,
        options: Option<&str>,
        progress: Option<Py<PyAny>>,
        model: Option<PyRef<'_, Model>>,
        candidates: Option<Vec<PathBuf>>,
    ) -> PyResult<NativeIndex> {
        build(
            py,
            Source::Folder(path),
            options,
            progress,
            model.as_deref(),
            candidates,
        )
    }

    /// Merges `shards` (indexes built each from part of the files) into the index of all
    /// their pages, keeping the vectors `model` made (the core's `Source::Indexes`).
    #[staticmethod]
    #[pyo3(signature = (shards, options=None, progress=None, model=None, candidates=None))]
    fn merge(
        py: Python<'_>,
        shards: Vec<PyRef<'_, NativeIndex>>,
        options: Option<&str>,
        progress: Option<Py<PyAny>>,
        model: Option<PyRef<'_, Model>>,
        candidates: Option<Vec<PathBuf>>,
    ) -> PyResult<NativeIndex> {
        let shards = shards.iter().map(|s| s.session.index()).collect();
        build(
            py,
            Source::Indexes(shards),
            options,
            progress,
            model.as_deref(),
            candidates,
        )
    }

    /// Brings the blob at `path` up to date with the wiki folder `dir` (the core's
    /// `Session::sync_file`); what changed is its `sync_record`.
    #[staticmethod]
    #[pyo3(signature = (dir, path, options=None, progress=None, model=None, drop_vectors=false))]
    fn sync_file(
        py: Python<'_>,
        dir: PathBuf,
        path: PathBuf,
        options: Option<&str>,
        progress: Option<Py<PyAny>>,
        model: Option<PyRef<'_, Model>>,
        drop_vectors: bool,
    ) -> PyResult<NativeIndex> {
        let model = model.map(|m| Arc::clone(&m.inner) as Arc<dyn Embedder>);
        with_progress(py, progress, |progress| {
            let options: BuildOptions = from_json("build options", options)?;
            Session::sync_file(&dir, &path, &options, model, drop_vectors, progress)
        })
        .map(wrap)
    }

    /// What the sync that made this index changed (JSON of `SyncRecord`), else `None`.
    fn sync_record(&self, py: Python<'_>) -> PyResult<Option<String>> {
        self.session
            .sync_record()
            .as_ref()
            .map(to_json)
            .transpose()
            .map_err(|e| raise(py, &e))
    }

    /// Decodes without copying: `bytes` are immutable, and the argument keeps them alive.
    #[staticmethod]
    fn from_bytes(py: Python<'_>, data: &[u8]) -> PyResult<NativeIndex> {
        run(py, || Session::from_bytes(data)).map(wrap)
    }

    /// Checks the header of a blob (its first bytes) before a caller copies a large buffer.
    #[staticmethod]
    fn check_header(py: Python<'_>, head: &[u8]) -> PyResult<()> {
        wikidex::blob::check_header(head)
            .map(|_| ())
            .map_err(|e| raise(py, &e))
    }

    #[staticmethod]
    fn open(py: Python<'_>, path: PathBuf) -> PyResult<NativeIndex> {
        run(py, move || Session::open(&path)).map(wrap)
    }

    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = run(py, || self.session.to_bytes())?;
        Ok(PyBytes::new(py, &bytes))
    }

    fn save(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        run(py, || self.session.save(&path))
    }

    /// A copy of the session (writes to it leave this index as it is).
    fn copy(&self) -> NativeIndex {
        NativeIndex {
            session: self.session.copy(),
            ids: Mutex::new(None),
        }
    }

    /// The build report (JSON), when this index was built here.
    fn build_report(&self, py: Python<'_>) -> PyResult<Option<String>> {
        self.session
            .build_report()
            .as_ref()
            .map(to_json)
            .transpose()
            .map_err(|e| raise(py, &e))
    }

    fn page_count(&self) -> usize {
        self.session.index().pages().len()
    }

    fn chunk_count(&self) -> usize {
        self.session.index().chunk_count()
    }

    #[pyo3(signature = (query, options=None, query_vector=None))]
    fn find(
        &self,
        py: Python<'_>,
        query: &str,
        options: Option<&str>,
        query_vector: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<found::Found> {
        let vector = crate::query_vector(py, query_vector)?;
        run(py, || {
            let opts = search_options(options, vector)?;
            self.session.find(query, &opts)
        })
        .map(found::Found::new)
    }

    /// The ranked pages only (`Index::rank`): `(page id, fused score)` per hit, no records.
    #[pyo3(signature = (query, options=None, query_vector=None))]
    fn rank(
        &self,
        py: Python<'_>,
        query: &str,
        options: Option<&str>,
        query_vector: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<ranking::Ranking> {
        let vector = crate::query_vector(py, query_vector)?;
        let (snap, ranked) = run(py, || {
            let opts = search_options(options, vector)?;
            self.session.rank(query, &opts)
        })?;
        let ids = self.page_ids(py, snap);
        let hits = ranked.iter().map(|r| (r.page, r.score)).collect();
        Ok(ranking::Ranking::new(ids, hits))
    }

    /// `rank` for many queries in one call (`Index::rank_many`): the GIL released once, the
    /// queries spread over `threads` threads.
    #[pyo3(signature = (queries, options=None, threads=None))]
    fn rank_many(
        &self,
        py: Python<'_>,
        queries: Vec<String>,
        options: Option<&str>,
        threads: Option<usize>,
    ) -> PyResult<Vec<ranking::Ranking>> {
        let (snap, ranked) = run(py, || {
            let opts = search_options(options, None)?;
            self.session.rank_many(&queries, &opts, threads)
        })?;
        let ids = self.page_ids(py, snap);
        Ok(ranked
            .into_iter()
            .map(|r| {
                let hits = r.iter().map(|r| (r.page, r.score)).collect();
                ranking::Ranking::new(Arc::clone(&ids), hits)
            })
            .collect())
    }

    fn prompt_block(&self, py: Python<'_>, results: &str) -> PyResult<String> {
        run(py, || {
            let results: SearchResults =
                serde_json::from_str(results).map_err(|e| Error::InvalidArgument {
                    detail: format!("search results: {e}"),
                })?;
            to_json(&self.session.index().prompt_block(&results))
        })
    }

    #[pyo3(signature = (key, scope=None))]
    fn page_record(&self, py: Python<'_>, key: &str, scope: Option<&str>) -> PyResult<String> {
        run(py, || {
            let s = crate::scope(scope)?;
            to_json(&self.session.page_record(key, s.as_ref())?)
        })
    }

    fn chunk(&self, py: Python<'_>, id: &str) -> PyResult<String> {
        run(py, || to_json(&self.session.chunk(id)?))
    }

    fn lint(&self, py: Python<'_>) -> PyResult<String> {
        run(py, || to_json(&self.session.lint()))
    }

    #[pyo3(signature = (seeds, options=None))]
    fn neighbors(
        &self,
        py: Python<'_>,
        seeds: Vec<String>,
        options: Option<&str>,
    ) -> PyResult<String> {
        run(py, || {
            let opts: TraverseOptions = from_json("traverse options", options)?;
            let seeds: Vec<&str> = seeds.iter().map(String::as_str).collect();
            to_json(&self.session.index().neighbors(&seeds, &opts)?)
        })
    }

    #[pyo3(signature = (query, options=None))]
    fn query_with_evidence(
        &self,
        py: Python<'_>,
        query: &str,
        options: Option<&str>,
    ) -> PyResult<String> {
        run(py, || {
            let opts: EvidenceOptions = from_json("evidence options", options)?;
            to_json(&self.session.query_with_evidence(query, &opts)?)
        })
    }

    #[pyo3(signature = (key, scope=None))]
    fn pointers(&self, py: Python<'_>, key: &str, scope: Option<&str>) -> PyResult<String> {
        run(py, || {
            let s = crate::scope(scope)?;
            to_json(&self.session.index().pointers(key, s.as_ref())?)
        })
    }

    fn verify(
        &self,
        py: Python<'_>,
        answer: &str,
        cited: Vec<String>,
        offered: Vec<String>,
    ) -> PyResult<String> {
        run(py, || {
            to_json(
                &self
                    .session
                    .verify(answer, &parse_cited(&cited), &offered)?,
            )
        })
    }

    fn check_answer(
        &self,
        py: Python<'_>,
        answer: &str,
        cited: Vec<String>,
        offered: Vec<String>,
    ) -> PyResult<String> {
        run(py, || {
            to_json(
                &self
                    .session
                    .check_answer(answer, &parse_cited(&cited), &offered)?,
            )
        })
    }

    fn uncited_support(&self, py: Python<'_>, answer: &str) -> PyResult<String> {
        run(py, || to_json(&self.session.uncited_support(answer)?))
    }

    #[pyo3(signature = (path, text, options=None))]
    fn upsert_page(
        &self,
        py: Python<'_>,
        path: &str,
        text: &str,
        options: Option<&str>,
    ) -> PyResult<String> {
        run(py, || {
            let opts: WriteOptions = from_json("write options", options)?;
            to_json(&self.session.upsert_page(path, text, &opts)?)
        })
    }

    #[pyo3(signature = (key, scope=None))]
    fn delete_page(&self, py: Python<'_>, key: &str, scope: Option<&str>) -> PyResult<String> {
        run(py, || {
            let s = crate::scope(scope)?;
            to_json(&self.session.delete_page(key, s.as_ref())?)
        })
    }

    #[pyo3(signature = (key, new_key, scope=None))]
    fn rename_page(
        &self,
        py: Python<'_>,
        key: &str,
        new_key: &str,
        scope: Option<&str>,
    ) -> PyResult<String> {
        run(py, || {
            let s = crate::scope(scope)?;
            to_json(&self.session.rename_page(key, s.as_ref(), new_key)?)
        })
    }

    fn passages(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        run(py, || Ok(self.session.index().passages()))
    }

    /// Stores one vector per passage from a 2-D C-contiguous float32 array: its buffer is
    /// copied once, and the rows handed to core are slices of that copy.
    fn set_vectors(
        &self,
        py: Python<'_>,
        model_id: &str,
        fingerprint: &str,
        vectors: &Bound<'_, PyAny>,
        encoding: &str,
    ) -> PyResult<()> {
        let (values, shape) = f32_array("vectors", vectors, 2).map_err(|e| raise(py, &e))?;
        run(py, || {
            let encoding = VectorEncoding::parse(encoding)?;
            // A (n, 0) array has no rows to slice; core refuses the dimension 0.
            let rows: Vec<&[f32]> = match shape[1] {
                0 => vec![&[]; shape[0]],
                dim => values.chunks_exact(dim).collect(),
            };
            self.session
                .set_vectors(model_id, fingerprint, &rows, encoding)
        })
    }

    /// Attaches the model that embeds queries (and the chunks of pages written later).
    fn attach_model(&self, py: Python<'_>, model: PyRef<'_, Model>) -> PyResult<()> {
        let embedder = Arc::clone(&model.inner) as Arc<dyn Embedder>;
        run(py, || self.session.set_model(Some(embedder)))
    }

    /// The agent tools' definitions (JSON).
    fn tools(&self, py: Python<'_>) -> PyResult<String> {
        run(py, || to_json(&self.session.tool_definitions()))
    }

    /// Runs an agent tool; returns its result (JSON `{text, data}`).
    fn call_tool(&self, py: Python<'_>, name: &str, args: &str) -> PyResult<String> {
        run(py, || to_json(&self.session.call_tool(name, args)?))
    }

    /// Logs searches and citation checks to a JSON Lines file (`path`), or to `callback(json)`,
    /// as `origin`; with neither, stops logging.
    #[pyo3(signature = (path=None, callback=None, origin="python"))]
    fn set_query_log(
        &self,
        py: Python<'_>,
        path: Option<PathBuf>,
        callback: Option<Py<PyAny>>,
        origin: &str,
    ) -> PyResult<()> {
        run(py, || {
            let log: Option<Arc<dyn QueryLog>> = match (path, callback) {
                (Some(_), Some(_)) => {
                    return Err(Error::InvalidArgument {
                        detail: "give a path or a callback, not both".into(),
                    })
                }
                (Some(p), None) => Some(Arc::new(JsonlLog::open(&p)?)),
                (None, Some(cb)) => Some(Arc::new(CallbackLog(cb))),
                (None, None) => None,
            };
            self.session.set_query_log(log, origin);
            Ok(())
        })
    }

    /// Starts a new turn of the agent tools (the drill-down count goes back to 0).
    fn reset_turn(&self) {
        self.session.reset_turn();
    }

    /// Sets the agent tools' limits (JSON of `ToolLimits`); the turn count starts at 0.
    fn set_tool_limits(&self, py: Python<'_>, limits: &str) -> PyResult<()> {
        run(py, || {
            self.session
                .set_tool_limits(from_json::<ToolLimits>("tool limits", Some(limits))?)
        })
    }
}

impl NativeIndex {
    /// The page ids of `snap` as Python strings (made once per snapshot; the GIL, held here,
    /// keeps the lock uncontended).
    fn page_ids(&self, py: Python<'_>, snap: Arc<Index>) -> Arc<PageIds> {
        let mut cached = self.ids.lock().unwrap_or_else(|e| e.into_inner());
        match &*cached {
            Some(ids) if ids.snapshot.as_ref().is_some_and(|s| Arc::ptr_eq(s, &snap)) => {
                Arc::clone(ids)
            }
            _ => {
                let ids = snap
                    .pages()
                    .iter()
                    .map(|p| PyString::new(py, &p.id()).unbind())
                    .collect();
                let made = Arc::new(PageIds {
                    snapshot: Some(snap),
                    ids,
                });
                *cached = Some(Arc::clone(&made));
                made
            }
        }
    }
}

/// A query log that hands each entry (as JSON) to a Python callable. The call takes the GIL;
/// an exception in it is reported as unraisable, never raised into the search.
struct CallbackLog(Py<PyAny>);

impl QueryLog for CallbackLog {
    fn record(&self, entry: &LogEntry) {
        let Ok(json) = serde_json::to_string(entry) else {
            return;
        };
        Python::attach(|py| {
            if let Err(e) = self.0.call1(py, (json,)) {
                e.write_unraisable(py, None);
            }
        });
    }
}

/// An ONNX sentence model with its tokenizer, run in process (`OnnxEmbedder`).
#[pyclass(module = "wikidex._wikidex", frozen)]
struct Model {
    inner: Arc<OnnxEmbedder>,
    /// What it was made with (`dir`, `onnx`, `max_length`, `threads`), to pickle it.
    made: (PathBuf, String, Option<usize>, Option<usize>),
}

#[pymethods]
impl Model {
    /// Loads `dir/onnx` and `dir/tokenizer.json`; `None` options take the core's defaults.
    #[new]
    #[pyo3(
        signature = (dir, *, onnx=MODEL_FILE.to_string(), max_length=None, threads=None),
        text_signature = "(dir, *, onnx='model.onnx', max_length=None, threads=None)"
    )]
    fn new(
        py: Python<'_>,
        dir: PathBuf,
        onnx: String,
        max_length: Option<usize>,
        threads: Option<usize>,
    ) -> PyResult<Model> {
        let mut options = OnnxOptions {
            max_length,
            ..OnnxOptions::default()
        };
        if let Some(n) = threads {
            options.threads = n;
        }
        let inner = run(py, || {
            OnnxEmbedder::from_files(&dir.join(&onnx), &dir.join(TOKENIZER_FILE), options)
        })?;
        Ok(Model {
            inner: Arc::new(inner),
            // Absolute, so a worker started in another folder finds the same files.
            made: (
                std::path::absolute(&dir).unwrap_or(dir),
                onnx,
                max_length,
                threads,
            ),
        })
    }

    /// Pickles as the folder and options it was loaded with (`wikidex._load_model`, which a
    /// process loads once): a worker process loads the model from the same path.
    fn __reduce__<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyTuple>)> {
        let load = py.import("wikidex")?.getattr("_load_model")?;
        let (dir, onnx, max_length, threads) = &self.made;
        let args = (dir.clone(), onnx.clone(), *max_length, *threads).into_pyobject(py)?;
        Ok((load, args))
    }

    #[getter]
    fn id(&self) -> &str {
        self.inner.model_id()
    }

    #[getter]
    fn fingerprint(&self) -> &str {
        self.inner.fingerprint()
    }

    #[getter]
    fn dim(&self) -> usize {
        self.inner.dim()
    }

    #[getter]
    fn max_length(&self) -> usize {
        self.inner.max_length()
    }

    /// The prompts put before queries and passages (`config_sentence_transformers.json`).
    #[getter]
    fn prompts(&self) -> HashMap<&'static str, String> {
        let p = self.inner.prompts();
        HashMap::from([("query", p.query.clone()), ("passage", p.passage.clone())])
    }

    /// One unit vector per text, after the model's `prompt` (`query` or `passage`) if given:
    /// a float32 array of shape `(len(texts), dim)`.
    #[pyo3(signature = (texts, prompt=None))]
    fn embed<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<String>,
        prompt: Option<&str>,
    ) -> PyResult<Bound<'py, PyArray2<f32>>> {
        let dim = self.inner.dim();
        let kind = prompt
            .map(PromptKind::parse)
            .transpose()
            .map_err(|e| raise(py, &e))?;
        let flat = run(py, || {
            let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
            Ok(self.inner.embed_as(&texts, kind)?.concat())
        })?;
        let rows = flat.len() / dim;
        let array = Array2::from_shape_vec((rows, dim), flat).map_err(|e| {
            raise(
                py,
                &Error::Model {
                    detail: e.to_string(),
                },
            )
        })?;
        Ok(array.into_pyarray(py))
    }

    /// The token ids the model is fed for each text, after the model's `prompt` if given:
    /// special tokens included, truncated at `max_length` or, for a model that embeds long
    /// texts in windows, every window's ids one after the other (`OnnxEmbedder::tokenize`).
    #[pyo3(signature = (texts, prompt=None))]
    fn tokenize(
        &self,
        py: Python<'_>,
        texts: Vec<String>,
        prompt: Option<&str>,
    ) -> PyResult<Vec<Vec<u32>>> {
        let kind = prompt
            .map(PromptKind::parse)
            .transpose()
            .map_err(|e| raise(py, &e))?;
        run(py, || {
            let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
            self.inner.tokenize_as(&texts, kind)
        })
    }

    fn __repr__(&self) -> String {
        format!(
            "Model(id={:?}, dim={}, max_length={})",
            self.inner.model_id(),
            self.inner.dim(),
            self.inner.max_length()
        )
    }
}

/// What `wiki_choices` reads: `(path, text)` pairs, or a wiki folder.
#[derive(FromPyObject)]
enum Files {
    Pairs(Vec<(String, String)>),
    Folder(PathBuf),
}

/// What a build of `files` (`(path, text)` pairs, or a wiki folder) with `options` decides
/// from all its pages (the core's `wiki_choices`): the analysis language's name and, with
/// `candidates`, the model folder and ONNX file it takes by default (`None` when none is).
#[pyfunction]
#[pyo3(signature = (files, options, candidates=None))]
fn wiki_choices(
    py: Python<'_>,
    files: Files,
    options: Option<&str>,
    candidates: Option<Vec<PathBuf>>,
) -> PyResult<(&'static str, Option<(PathBuf, PathBuf)>)> {
    run(py, || {
        let options: BuildOptions = from_json("build options", options)?;
        let source = match files {
            Files::Pairs(files) => Source::Files(
                files
                    .into_iter()
                    .map(|(p, t)| (p, t.into_bytes()))
                    .collect(),
            ),
            Files::Folder(root) => Source::Folder(root),
        };
        let choices =
            wikidex::wiki_choices(source, &options, candidates.as_deref(), Surface::Python)?;
        Ok((
            choices.language.name(),
            choices.model.map(|f| (f.dir, f.onnx)),
        ))
    })
}

/// The files a build of the wiki folder `root` with `options` reads (relative paths, sorted;
/// the core's `folder_files`).
#[pyfunction]
#[pyo3(signature = (root, options=None))]
fn folder_files(py: Python<'_>, root: PathBuf, options: Option<&str>) -> PyResult<Vec<String>> {
    run(py, || {
        let options: BuildOptions = from_json("build options", options)?;
        wikidex::folder_files(&root, options.follow_outside_root)
    })
}

/// The citation headers in `text` (JSON).
#[pyfunction]
fn parse_headers(text: &str) -> PyResult<String> {
    Python::attach(|py| to_json(&wikidex::cite::parse_headers(text)).map_err(|e| raise(py, &e)))
}

#[pymodule]
fn _wikidex(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<NativeIndex>()?;
    m.add_class::<Model>()?;
    m.add_class::<ranking::Ranking>()?;
    m.add_class::<found::Found>()?;
    m.add_class::<found::Hit>()?;
    m.add_class::<file::NativeIndexFile>()?;
    m.add_class::<sharded::NativeSharded>()?;
    m.add_class::<sharded::NativeShardSearcher>()?;
    m.add_class::<sharded::NativeCoordinator>()?;
    m.add_function(wrap_pyfunction!(parse_headers, m)?)?;
    m.add_function(wrap_pyfunction!(wiki_choices, m)?)?;
    m.add_function(wrap_pyfunction!(folder_files, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("HEADER_LEN", wikidex::blob::HEADER_LEN)?;
    Ok(())
}
