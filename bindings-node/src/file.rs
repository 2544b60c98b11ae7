//! `IndexFile`: an index file searched in parts, the core's `RangedFile` (opening reads the
//! blob's head; each search or page reads the parts it needs, which stay loaded), shared with
//! the tasks on the thread pool.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use napi::bindgen_prelude::AsyncTask;
use napi::Env;
use napi_derive::napi;
use serde_json::Value;
use wikidex::file::RangedFile;
use wikidex::{Embedder, OffsetUnit, SearchOptions};

use crate::error::OrThrow;
use crate::{json, record, CoreResult, JsModel, Json, JsonWork, Work};

/// An index file searched in parts: `open` reads only the blob's head, and each `search`,
/// `pageRecord` or `chunk` reads from the open file the parts it needs (the dictionary shards and
/// postings of the query's words, the vectors' section for the semantic lane, then the pages
/// of the hits), which stay loaded for the next. Its answers are those of `Index.open`'s
/// index. For searching and reading pages only. Searches and pages take turns on the pool.
#[napi(js_name = "IndexFile")]
pub struct JsIndexFile {
    file: Arc<Mutex<RangedFile>>,
    /// Bytes read so far, set by each call once it has read: `loaded` does not wait for a
    /// search in progress.
    read: Arc<AtomicU64>,
    length: u64,
}

/// Work that resolves to an index file.
pub type FileWork = Work<RangedFile, JsIndexFile>;

fn wrap_file(mut file: RangedFile) -> napi::Result<JsIndexFile> {
    file.set_offset_unit(OffsetUnit::Utf16);
    Ok(JsIndexFile {
        read: Arc::new(AtomicU64::new(file.index().loaded_bytes())),
        length: file.index().blob_len(),
        file: Arc::new(Mutex::new(file)),
    })
}

/// The file; a call that panicked cannot have left it half-changed (a part is loaded whole
/// or not at all), so a poisoned lock is taken as it is.
fn lock(file: &Mutex<RangedFile>) -> MutexGuard<'_, RangedFile> {
    file.lock().unwrap_or_else(|e| e.into_inner())
}

/// `op` on the file, then how many bytes it has read, into `read`.
fn reading<T>(
    file: &Mutex<RangedFile>,
    read: &AtomicU64,
    op: impl FnOnce(&mut RangedFile) -> CoreResult<T>,
) -> CoreResult<T> {
    let mut file = lock(file);
    let out = op(&mut file);
    read.store(file.index().loaded_bytes(), Ordering::Relaxed);
    out
}

#[napi]
impl JsIndexFile {
    /// Opens an index file and reads its head, on the thread pool.
    #[napi(configurable = true, ts_return_type = "Promise<IndexFile>")]
    pub fn open(path: String) -> AsyncTask<FileWork> {
        Work::task(move || RangedFile::open(path.as_ref()), wrap_file)
    }

    /// `open` on the calling thread.
    #[napi(configurable = true)]
    pub fn open_sync(env: Env, path: String) -> napi::Result<JsIndexFile> {
        wrap_file(RangedFile::open(path.as_ref()).or_throw(&env)?)
    }

    /// Searches as `Index.search` does, with the same options and answers, reading the parts
    /// of the file it needs first, on the thread pool (reading is file I/O).
    #[napi(
        ts_args_type = "query: string, options?: SearchOptions",
        ts_return_type = "Promise<SearchResults>"
    )]
    pub fn search(&self, query: String, options: Option<Value>) -> AsyncTask<JsonWork> {
        let opts: CoreResult<SearchOptions> = crate::options("search options", options);
        let (file, read) = (Arc::clone(&self.file), Arc::clone(&self.read));
        Work::task(
            move || {
                let opts = opts?;
                record(&reading(&file, &read, |f| f.search(&query, &opts))?)
            },
            json,
        )
    }

    /// `search` on the calling thread.
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
            record(&reading(&self.file, &self.read, |f| {
                f.search(&query, &opts)
            })?)
        })()
        .or_throw(&env)
    }

    /// A page's whole record, as `Index.pageRecord` gives it, reading its part of the file
    /// first, on the thread pool.
    #[napi(ts_return_type = "Promise<PageRecord>")]
    pub fn page_record(&self, key: String, scope: Option<String>) -> AsyncTask<JsonWork> {
        let (file, read) = (Arc::clone(&self.file), Arc::clone(&self.read));
        Work::task(
            move || {
                let s = crate::scope(scope.as_deref())?;
                record(&reading(&file, &read, |f| f.page_record(&key, s.as_ref()))?)
            },
            json,
        )
    }

    /// `pageRecord` on the calling thread.
    #[napi(ts_return_type = "PageRecord")]
    pub fn page_record_sync(
        &self,
        env: Env,
        key: String,
        scope: Option<String>,
    ) -> napi::Result<Json> {
        (|| {
            let s = crate::scope(scope.as_deref())?;
            record(&reading(&self.file, &self.read, |f| {
                f.page_record(&key, s.as_ref())
            })?)
        })()
        .or_throw(&env)
    }

    /// A chunk by id, as `Index.chunk` gives it, reading its page's part of the file (or the
    /// raw layer) first, on the thread pool.
    #[napi(ts_return_type = "Promise<Chunk>")]
    pub fn chunk(&self, id: String) -> AsyncTask<JsonWork> {
        let (file, read) = (Arc::clone(&self.file), Arc::clone(&self.read));
        Work::task(
            move || record(&reading(&file, &read, |f| f.chunk(&id))?),
            json,
        )
    }

    /// `chunk` on the calling thread.
    #[napi(ts_return_type = "Chunk")]
    pub fn chunk_sync(&self, env: Env, id: String) -> napi::Result<Json> {
        (|| record(&reading(&self.file, &self.read, |f| f.chunk(&id))?))().or_throw(&env)
    }

    /// Attaches the model that embeds queries, as `Index.attachModel` does: a search of a
    /// file with vectors then reads their section. `model_mismatch` when the file holds
    /// vectors of another model. It waits for a search in progress on the pool.
    #[napi(ts_args_type = "model: Model")]
    pub fn attach_model(&self, env: Env, model: &JsModel) -> napi::Result<()> {
        let embedder = Arc::clone(&model.inner) as Arc<dyn Embedder>;
        lock(&self.file).set_model(Some(embedder)).or_throw(&env)
    }

    /// `[bytes read so far, the file's length]` (the bytes read when the last search or page
    /// that finished had read).
    #[napi(getter, ts_return_type = "[number, number]")]
    pub fn loaded(&self) -> Vec<f64> {
        vec![self.read.load(Ordering::Relaxed) as f64, self.length as f64]
    }
}
