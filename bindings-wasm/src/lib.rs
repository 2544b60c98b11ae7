//! wikidex for the browser: the wasm module behind the ES module `bindings-wasm/pkg` (built
//! by `scripts/wasm-build.sh`), the lexical build (no model runner, no files).
//!
//! Thin by rule (CONTRIBUTING.md, "The core's layers"), and the same contract as the Node binding:
//! - Records are the core's serde records as plain objects, field names as the core names
//!   them (`page_id`, `usage_mode`). They go through the core's JSON and the engine's own
//!   `JSON.parse`, so an `f32` score reads `0.0115`. Options are plain objects of the core's
//!   option structs (same names), read through `JSON.stringify`.
//! - Offsets count UTF-16 code units (`OffsetUnit::Utf16`): they index JavaScript strings.
//! - A core error is thrown as an `Error` with `code` and `details` (`error.rs`); an argument
//!   of the wrong type is the core's `invalid_argument`. Every argument arrives as a
//!   `JsValue` and is checked here, so wasm-bindgen's glue never coerces or throws its own.
//! - Everything runs on the calling thread (a page runs it in a Web Worker).
//! - Feature `write` (default): `Index.build` and the page writes; feature `agent` (default):
//!   the agent tools, the query log (`agent.rs`), `promptBlock`, the citation checks
//!   (`verify`, `checkAnswer`, `uncitedSupport`, `pointers`, `parseHeaders`) and `lint`.
//!   Without them and without `index` (the `Index` class), the search module: `RangedIndex`
//!   alone, for a site that loads a blob the CLI built. `write` also turns on the core's
//!   `normalization-tables`; the search module has not: it normalizes and lowercases non-ASCII
//!   text with the engine's `String.prototype.normalize` and `toLowerCase` ([`start`]).
//! - Feature `model` (the `pkg-full` module: the whole API plus this): the semantic lane in the
//!   browser, a `Model` loaded from the bytes of an ONNX file and its `tokenizer.json`
//!   (`model.rs`) and attached with `Index.attachModel`.

#[cfg(feature = "agent")]
mod agent;
mod error;
#[cfg(feature = "model")]
mod model;
mod ranged;
mod site;

use js_sys::{Array, ArrayBuffer, Uint8Array, JSON};
use serde::de::DeserializeOwned;
use serde::Serialize;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
#[cfg(feature = "agent")]
use wikidex::cite::Cited;
#[cfg(feature = "agent")]
use wikidex::TraverseOptions;
use wikidex::{Error, SearchOptions};
#[cfg(feature = "index")]
use {
    js_sys::Float32Array,
    wikidex::{OffsetUnit, Session, VectorEncoding},
};
#[cfg(feature = "write")]
use {
    js_sys::Object,
    wikidex::{BuildOptions, Source, WriteOptions},
};

use wikidex::SearchResults;

use crate::error::OrThrow;

#[wasm_bindgen(typescript_custom_section)]
const TYPES: &str = include_str!("../types.d.ts");

type CoreResult<T> = std::result::Result<T, Error>;

/// Runs when the module is instantiated: registers the engine's `String.prototype.normalize`
/// and `toLowerCase` as the core's normalizer. A core built without its normalization tables
/// (the search module) uses it for non-ASCII text; one built with them (the whole module) keeps
/// its tables, so that a blob built in the browser is the blob a native build makes.
#[wasm_bindgen(start)]
fn start() {
    wikidex::analyze::set_normalizer(normalize);
}

/// `text` in `form`, by the engine (ICU in V8): `normalize` or `toLowerCase`.
fn normalize(text: &str, form: wikidex::analyze::Form) -> String {
    let text = js_sys::JsString::from(text);
    let form = match form {
        wikidex::analyze::Form::Nfc => "NFC",
        wikidex::analyze::Form::Nfkc => "NFKC",
        wikidex::analyze::Form::Nfkd => "NFKD",
        wikidex::analyze::Form::Lower => return text.to_lower_case().into(),
    };
    // Throws (a RangeError) only for a form other than NFC, NFD, NFKC and NFKD.
    text.normalize(form).into()
}

fn invalid(detail: String) -> Error {
    Error::InvalidArgument { detail }
}

/// A record for JavaScript: the core's JSON, parsed by the engine's `JSON.parse`.
fn record<T: Serialize>(v: &T) -> CoreResult<JsValue> {
    let text = serde_json::to_string(v).map_err(|e| Error::Encode {
        detail: e.to_string(),
    })?;
    JSON::parse(&text).map_err(|_| Error::Encode {
        detail: "JSON.parse of a record failed".into(),
    })
}

/// An optional argument, `undefined` when left out.
fn absent_if_none(v: Option<JsValue>) -> JsValue {
    v.unwrap_or(JsValue::UNDEFINED)
}

fn is_absent(v: &JsValue) -> bool {
    v.is_undefined() || v.is_null()
}

/// A plain object (not an array, not `null`).
fn is_plain_object(v: &JsValue) -> bool {
    v.is_object() && !Array::is_array(v) && !v.is_function()
}

/// An object as its JSON text (`JSON.stringify`: `undefined` fields and functions are left
/// out, as they are by the Node binding).
fn stringify(what: &str, v: &JsValue) -> CoreResult<String> {
    JSON::stringify(v)
        .ok()
        .and_then(|s| s.as_string())
        .ok_or_else(|| invalid(format!("{what} cannot be written as JSON")))
}

/// An options object as the core's option struct; `undefined` or `null` is the defaults.
fn options<T: DeserializeOwned + Default>(what: &str, v: &JsValue) -> CoreResult<T> {
    if is_absent(v) {
        return Ok(T::default());
    }
    if !is_plain_object(v) {
        return Err(invalid(format!("{what} must be an object")));
    }
    wikidex::options::from_json(what, Some(&stringify(what, v)?))
}

fn string(what: &str, v: &JsValue) -> CoreResult<String> {
    v.as_string()
        .ok_or_else(|| invalid(format!("{what} must be a string")))
}

#[cfg(any(
    feature = "index",
    feature = "page-record",
    feature = "agent",
    feature = "model"
))]
fn opt_string(what: &str, v: &JsValue) -> CoreResult<Option<String>> {
    if is_absent(v) {
        Ok(None)
    } else {
        string(what, v).map(Some)
    }
}

#[cfg(any(feature = "agent", feature = "model"))]
fn strings(what: &str, v: &JsValue) -> CoreResult<Vec<String>> {
    let items = v
        .dyn_ref::<Array>()
        .ok_or_else(|| invalid(format!("{what} must be an array of strings")))?;
    items
        .iter()
        .map(|s| {
            s.as_string()
                .ok_or_else(|| invalid(format!("{what} must be an array of strings")))
        })
        .collect()
}

#[cfg(feature = "agent")]
fn opt_strings(what: &str, v: &JsValue) -> CoreResult<Vec<String>> {
    if is_absent(v) {
        Ok(Vec::new())
    } else {
        strings(what, v)
    }
}

#[cfg(any(feature = "index", feature = "page-record"))]
fn scope(v: &JsValue) -> CoreResult<Option<wikidex::Scope>> {
    opt_string("scope", v)?
        .as_deref()
        .map(wikidex::Scope::parse)
        .transpose()
}

/// Blob bytes from a `Uint8Array` (a Node `Buffer` is one) or an `ArrayBuffer`.
fn bytes(v: &JsValue) -> CoreResult<Vec<u8>> {
    if let Some(a) = v.dyn_ref::<Uint8Array>() {
        Ok(a.to_vec())
    } else if let Some(b) = v.dyn_ref::<ArrayBuffer>() {
        Ok(Uint8Array::new(b).to_vec())
    } else {
        Err(invalid(
            "data must be a Uint8Array or an ArrayBuffer".into(),
        ))
    }
}

fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// A class's `search`: the query and options read, `run` called with them, its results as a
/// record.
fn search_record(
    query: &JsValue,
    options: Option<JsValue>,
    run: impl FnOnce(&str, &SearchOptions) -> CoreResult<SearchResults>,
) -> Result<JsValue, JsValue> {
    (|| {
        let query = string("query", query)?;
        let opts: SearchOptions = crate::options("search options", &absent_if_none(options))?;
        record(&run(&query, &opts)?)
    })()
    .or_throw()
}

/// A class's `pageRecord`: the key and scope read, `run` called with them, its page record
/// as a record.
#[cfg(any(feature = "index", feature = "page-record"))]
fn page_record(
    key: &JsValue,
    scope: Option<JsValue>,
    run: impl FnOnce(&str, Option<&wikidex::Scope>) -> CoreResult<wikidex::PageRecord>,
) -> Result<JsValue, JsValue> {
    (|| {
        let key = string("key", key)?;
        let s = crate::scope(&absent_if_none(scope))?;
        record(&run(&key, s.as_ref())?)
    })()
    .or_throw()
}

/// The files of `Index.build`: an object of path to text (core adds them in sorted order).
#[cfg(feature = "write")]
fn files(v: &JsValue) -> CoreResult<Vec<(String, Vec<u8>)>> {
    if !is_plain_object(v) {
        return Err(invalid("files must be an object of path to text".into()));
    }
    let files = Object::entries(v.unchecked_ref::<Object>())
        .iter()
        .map(|entry| {
            let pair: Array = entry.unchecked_into();
            let path = string("a file path", &pair.get(0))?;
            let text = pair
                .get(1)
                .as_string()
                .ok_or_else(|| invalid(format!("the text of {path} must be a string")))?;
            Ok((path, text.into_bytes()))
        })
        .collect::<CoreResult<Vec<_>>>()?;
    Ok(files)
}

/// The index `Index.build` and `Index.merge` give: `source` built with `options`.
#[cfg(feature = "write")]
fn built(
    options: Option<JsValue>,
    source: impl FnOnce() -> CoreResult<Source>,
) -> Result<JsIndex, JsValue> {
    let session = (|| {
        let opts: BuildOptions = crate::options("build options", &absent_if_none(options))?;
        Session::build(source()?, &opts, None, &mut |_, _, _| {
            std::ops::ControlFlow::Continue(())
        })
    })()
    .or_throw()?;
    Ok(wrap(session))
}

/// The indexes of `Index.merge`'s array. Each shard's `copy()` (its index shared, not copied)
/// is the object Rust takes over, so the caller's shards stay usable.
#[cfg(feature = "write")]
fn indexes(v: &JsValue) -> CoreResult<Vec<std::sync::Arc<wikidex::Index>>> {
    use wasm_bindgen::convert::TryFromJsValue;
    if !Array::is_array(v) {
        return Err(invalid("shards must be an array of Index".into()));
    }
    let not_an_index = |i: u32| invalid(format!("shards[{i}] is not an Index"));
    let mut out = Vec::new();
    for (i, shard) in v.unchecked_ref::<Array>().iter().enumerate() {
        let i = i as u32;
        let copy = js_sys::Reflect::get(&shard, &JsValue::from_str("copy"))
            .ok()
            .and_then(|f| f.dyn_into::<js_sys::Function>().ok())
            .and_then(|f| f.call0(&shard).ok())
            .ok_or_else(|| not_an_index(i))?;
        let shard = JsIndex::try_from_js_value(copy).map_err(|_| not_an_index(i))?;
        out.push(shard.session.index());
    }
    Ok(out)
}

/// A built or loaded index: the core's `Session` (the current snapshot, the model, the query
/// log, the agent tools, the build report).
#[cfg(feature = "index")]
#[wasm_bindgen(js_name = Index)]
pub struct JsIndex {
    session: Session,
}

#[cfg(feature = "index")]
fn wrap(session: Session) -> JsIndex {
    session.set_offset_unit(OffsetUnit::Utf16);
    JsIndex { session }
}

#[cfg(feature = "index")]
#[wasm_bindgen(js_class = Index)]
impl JsIndex {
    /// Builds an index from an object of path to text (added in sorted path order; paths
    /// under `raw/` are raw documents). `options`: `config` (the core's `Config`), `strict`
    /// (a broken page fails the build).
    #[cfg(feature = "write")]
    pub fn build(
        #[wasm_bindgen(unchecked_param_type = "Record<string, string>")] files: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "BuildOptions")] options: Option<JsValue>,
    ) -> Result<JsIndex, JsValue> {
        crate::built(options, || Ok(Source::Files(crate::files(&files)?)))
    }

    /// Merges shards (indexes built each from part of a wiki's files, with the same options)
    /// into the index of all their pages: pages as the shards indexed them, the lexical index
    /// and the graph made again over all of them. With the shards' options the result is the
    /// index one `build` of all the files gives, byte for byte. The shards stay usable. No
    /// vector is kept: a browser build embeds nothing (`setVectors`, or a `Model` attached,
    /// after). `options` as in `build`.
    #[cfg(feature = "write")]
    pub fn merge(
        #[wasm_bindgen(unchecked_param_type = "Index[]")] shards: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "BuildOptions")] options: Option<JsValue>,
    ) -> Result<JsIndex, JsValue> {
        crate::built(options, || Ok(Source::Indexes(crate::indexes(&shards)?)))
    }

    /// Loads an index from its blob bytes.
    #[wasm_bindgen(js_name = fromBytes)]
    pub fn from_bytes(
        #[wasm_bindgen(unchecked_param_type = "Uint8Array | ArrayBuffer")] data: JsValue,
    ) -> Result<JsIndex, JsValue> {
        let session = bytes(&data)
            .and_then(|b| Session::from_bytes(&b))
            .or_throw()?;
        Ok(wrap(session))
    }

    /// The blob of the current snapshot: the whole index, which `Index.fromBytes` loads and a
    /// `RangedIndex` loads in parts on demand. Not in the search module (feature `write`: its
    /// deflate compressor is about 10 KB gzipped that a site's search never uses).
    #[cfg(feature = "write")]
    #[wasm_bindgen(js_name = toBytes)]
    pub fn to_bytes(&self) -> Result<Vec<u8>, JsValue> {
        self.session.to_bytes().or_throw()
    }

    /// An independent copy (writes to one leave the other as it is).
    pub fn copy(&self) -> JsIndex {
        JsIndex {
            session: self.session.copy(),
        }
    }

    /// The build report when this index was built here, else `null`.
    #[wasm_bindgen(js_name = buildReport, unchecked_return_type = "BuildReport | null")]
    pub fn build_report(&self) -> Result<JsValue, JsValue> {
        match &self.session.build_report() {
            Some(r) => record(r).or_throw(),
            None => Ok(JsValue::NULL),
        }
    }

    /// Number of pages.
    #[wasm_bindgen(getter = pageCount)]
    pub fn page_count(&self) -> u32 {
        count(self.session.index().pages().len())
    }

    /// Every page's id (`key`, or `user/<name>/<key>`), in the index's order (scope, then
    /// key); `pageRecord(id)` reads each. A static site lists its pages with it.
    #[wasm_bindgen(js_name = pageIds)]
    pub fn page_ids(&self) -> Vec<String> {
        self.session
            .index()
            .pages()
            .iter()
            .map(|p| p.id())
            .collect()
    }

    /// Number of page chunks.
    #[wasm_bindgen(getter = chunkCount)]
    pub fn chunk_count(&self) -> u32 {
        count(self.session.index().chunk_count())
    }

    /// Searches (the lexical and token lanes; the semantic lane with `options.query_vector`
    /// and vectors set). `options`: the core's `SearchOptions`.
    #[wasm_bindgen(unchecked_return_type = "SearchResults")]
    pub fn search(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] query: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "SearchOptions")] options: Option<JsValue>,
    ) -> Result<JsValue, JsValue> {
        search_record(&query, options, |q, o| self.session.search(q, o))
    }

    /// The prompt block for search results: citation headers with the chunk text, and the
    /// `always` pages. Part of the agent side (feature `agent`): reading a `SearchResults`
    /// back from JavaScript costs the search module about 9 KB gzipped of deserializers.
    #[cfg(feature = "agent")]
    #[wasm_bindgen(js_name = promptBlock, unchecked_return_type = "PromptBlock")]
    pub fn prompt_block(
        &self,
        #[wasm_bindgen(unchecked_param_type = "SearchResults")] results: JsValue,
    ) -> Result<JsValue, JsValue> {
        (|| {
            if !is_plain_object(&results) {
                return Err(invalid("search results must be an object".into()));
            }
            let results: SearchResults =
                serde_json::from_str(&stringify("search results", &results)?)
                    .map_err(|e| invalid(format!("search results: {e}")))?;
            record(&self.session.index().prompt_block(&results))
        })()
        .or_throw()
    }

    /// A page's whole record (body, chunks with their spans, graph fields, extra fields).
    #[wasm_bindgen(js_name = pageRecord, unchecked_return_type = "PageRecord")]
    pub fn page_record(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] key: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "string | null")] scope: Option<JsValue>,
    ) -> Result<JsValue, JsValue> {
        page_record(&key, scope, |k, s| self.session.page_record(k, s))
    }

    /// One chunk (of a page or a raw document) by id.
    #[wasm_bindgen(unchecked_return_type = "Chunk")]
    pub fn chunk(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] id: JsValue,
    ) -> Result<JsValue, JsValue> {
        (|| record(&self.session.chunk(&string("id", &id)?)?))().or_throw()
    }

    #[cfg(feature = "agent")]
    /// Lints the wiki's graph (with the build's skipped files when built here).
    #[wasm_bindgen(unchecked_return_type = "LintReport")]
    pub fn lint(&self) -> Result<JsValue, JsValue> {
        record(&self.session.lint()).or_throw()
    }

    /// The subgraph around `seeds` with its evidence. `options`: the core's
    /// `TraverseOptions`. Not in the search module (the agent side: a graph walk, about 10 KB
    /// gzipped that a site's search box never runs).
    #[cfg(feature = "agent")]
    #[wasm_bindgen(unchecked_return_type = "Subgraph")]
    pub fn neighbors(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string[]")] seeds: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "TraverseOptions")] options: Option<JsValue>,
    ) -> Result<JsValue, JsValue> {
        (|| {
            let seeds = strings("seeds", &seeds)?;
            let opts: TraverseOptions =
                crate::options("traverse options", &absent_if_none(options))?;
            let seeds: Vec<&str> = seeds.iter().map(String::as_str).collect();
            record(&self.session.index().neighbors(&seeds, &opts)?)
        })()
        .or_throw()
    }

    #[cfg(feature = "agent")]
    /// The raw chunks a page was compiled from (its `sources`), with weights.
    #[wasm_bindgen(unchecked_return_type = "Pointer[]")]
    pub fn pointers(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] key: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "string | null")] scope: Option<JsValue>,
    ) -> Result<JsValue, JsValue> {
        (|| {
            let key = string("key", &key)?;
            let s = crate::scope(&absent_if_none(scope))?;
            record(&self.session.index().pointers(&key, s.as_ref())?)
        })()
        .or_throw()
    }

    #[cfg(feature = "agent")]
    /// Verdicts on the chunks an answer cites (`id` or `id@hash`), and on those it was
    /// offered but did not cite.
    #[wasm_bindgen(unchecked_return_type = "Verification")]
    pub fn verify(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] answer: JsValue,
        #[wasm_bindgen(unchecked_param_type = "string[]")] cited: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "string[]")] offered: Option<JsValue>,
    ) -> Result<JsValue, JsValue> {
        (|| {
            let answer = string("answer", &answer)?;
            let cited: Vec<Cited> = strings("cited", &cited)?
                .iter()
                .map(|c| Cited::parse(c))
                .collect();
            let offered = opt_strings("offered", &absent_if_none(offered))?;
            record(&self.session.verify(&answer, &cited, &offered)?)
        })()
        .or_throw()
    }

    #[cfg(feature = "agent")]
    /// `verify` with the ids written in the answer merged in, and the answer's sentences
    /// that no citation supports.
    #[wasm_bindgen(js_name = checkAnswer, unchecked_return_type = "AnswerCheck")]
    pub fn check_answer(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] answer: JsValue,
        #[wasm_bindgen(unchecked_param_type = "string[]")] cited: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "string[]")] offered: Option<JsValue>,
    ) -> Result<JsValue, JsValue> {
        (|| {
            let answer = string("answer", &answer)?;
            let cited: Vec<Cited> = strings("cited", &cited)?
                .iter()
                .map(|c| Cited::parse(c))
                .collect();
            let offered = opt_strings("offered", &absent_if_none(offered))?;
            record(&self.session.check_answer(&answer, &cited, &offered)?)
        })()
        .or_throw()
    }

    #[cfg(feature = "agent")]
    /// The answer's sentences without a citation, and those no chunk supports.
    #[wasm_bindgen(js_name = uncitedSupport, unchecked_return_type = "Support")]
    pub fn uncited_support(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] answer: JsValue,
    ) -> Result<JsValue, JsValue> {
        (|| {
            let answer = string("answer", &answer)?;
            record(&self.session.uncited_support(&answer)?)
        })()
        .or_throw()
    }

    /// Adds or replaces the page at `path` (a new snapshot is swapped in). `options`: the
    /// core's `WriteOptions`.
    #[cfg(feature = "write")]
    #[wasm_bindgen(js_name = upsertPage, unchecked_return_type = "UpsertReport")]
    pub fn upsert_page(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] path: JsValue,
        #[wasm_bindgen(unchecked_param_type = "string")] text: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "WriteOptions")] options: Option<JsValue>,
    ) -> Result<JsValue, JsValue> {
        (|| {
            let path = string("path", &path)?;
            let text = string("text", &text)?;
            let opts: WriteOptions = crate::options("write options", &absent_if_none(options))?;
            record(&self.session.upsert_page(&path, &text, &opts)?)
        })()
        .or_throw()
    }

    /// Deletes a page; the report lists the pages whose links it breaks.
    #[cfg(feature = "write")]
    #[wasm_bindgen(js_name = deletePage, unchecked_return_type = "DeleteReport")]
    pub fn delete_page(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] key: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "string | null")] scope: Option<JsValue>,
    ) -> Result<JsValue, JsValue> {
        (|| {
            let key = string("key", &key)?;
            let s = crate::scope(&absent_if_none(scope))?;
            record(&self.session.delete_page(&key, s.as_ref())?)
        })()
        .or_throw()
    }

    /// Renames a page, leaving a redirect from the old key.
    #[cfg(feature = "write")]
    #[wasm_bindgen(js_name = renamePage, unchecked_return_type = "RenameReport")]
    pub fn rename_page(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] key: JsValue,
        #[wasm_bindgen(js_name = newKey, unchecked_param_type = "string")] new_key: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "string | null")] scope: Option<JsValue>,
    ) -> Result<JsValue, JsValue> {
        (|| {
            let key = string("key", &key)?;
            let new_key = string("newKey", &new_key)?;
            let s = crate::scope(&absent_if_none(scope))?;
            record(&self.session.rename_page(&key, s.as_ref(), &new_key)?)
        })()
        .or_throw()
    }

    /// The text each chunk's embedding is computed from, in the order `setVectors` takes.
    pub fn passages(&self) -> Vec<String> {
        self.session.index().passages()
    }

    /// Stores one vector per chunk (in `passages()` order) for the semantic lane.
    /// `encoding`: `"f32"` (default) or `"int8"`.
    #[wasm_bindgen(js_name = setVectors)]
    pub fn set_vectors(
        &self,
        #[wasm_bindgen(js_name = modelId, unchecked_param_type = "string")] model_id: JsValue,
        #[wasm_bindgen(unchecked_param_type = "string")] fingerprint: JsValue,
        #[wasm_bindgen(unchecked_param_type = "Float32Array[]")] vectors: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "'f32' | 'int8'")] encoding: Option<JsValue>,
    ) -> Result<(), JsValue> {
        (|| {
            let model_id = string("modelId", &model_id)?;
            let fingerprint = string("fingerprint", &fingerprint)?;
            let encoding = opt_string("encoding", &absent_if_none(encoding))?;
            let encoding = VectorEncoding::parse(encoding.as_deref().unwrap_or("f32"))?;
            let not_rows = || invalid("vectors must be an array of Float32Array".into());
            let rows = vectors
                .dyn_ref::<Array>()
                .ok_or_else(not_rows)?
                .iter()
                .map(|row| {
                    row.dyn_ref::<Float32Array>()
                        .map(Float32Array::to_vec)
                        .ok_or_else(not_rows)
                })
                .collect::<CoreResult<Vec<Vec<f32>>>>()?;
            self.session
                .set_vectors(&model_id, &fingerprint, &rows, encoding)
        })()
        .or_throw()
    }

    /// Sets the model that embeds queries (and new chunks on page writes): from then on
    /// a search without `query_vector` runs the semantic lane too. Throws `model_mismatch`
    /// when the index's vectors were made by another model.
    #[cfg(feature = "model")]
    #[wasm_bindgen(js_name = attachModel)]
    pub fn attach_model(&self, model: &model::JsModel) -> Result<(), JsValue> {
        let embedder = std::sync::Arc::clone(&model.inner) as std::sync::Arc<dyn wikidex::Embedder>;
        self.session.set_model(Some(embedder)).or_throw()
    }
}

#[cfg(feature = "agent")]
/// The citation headers (`[page <key> · chunk <id> · score <s>] <title>`) found in `text`.
#[wasm_bindgen(js_name = parseHeaders, unchecked_return_type = "CitationHeader[]")]
pub fn parse_headers(
    #[wasm_bindgen(unchecked_param_type = "string")] text: JsValue,
) -> Result<JsValue, JsValue> {
    (|| record(&wikidex::cite::parse_headers(&string("text", &text)?)))().or_throw()
}

/// The version of the wasm module.
#[wasm_bindgen]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").into()
}
