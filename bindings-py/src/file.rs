//! `NativeIndexFile`: an index file searched in parts, the core's `RangedFile` (opening reads
//! the blob's head; each search or page reads the parts it needs, which stay loaded).

use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

use pyo3::prelude::*;
use wikidex::file::RangedFile;
use wikidex::{Embedder, OffsetUnit};

use crate::{run, search_options, to_json, Model};

#[pyclass(module = "wikidex._wikidex", frozen)]
pub(crate) struct NativeIndexFile {
    file: Mutex<RangedFile>,
}

impl NativeIndexFile {
    /// The file; a panic in another call cannot leave it half-changed (each call reads parts
    /// in whole or not at all), so a poisoned lock is taken as it is.
    fn file(&self) -> MutexGuard<'_, RangedFile> {
        self.file.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[pymethods]
impl NativeIndexFile {
    #[staticmethod]
    fn open(py: Python<'_>, path: PathBuf) -> PyResult<NativeIndexFile> {
        run(py, move || {
            let mut file = RangedFile::open(&path)?;
            file.set_offset_unit(OffsetUnit::Char);
            Ok(NativeIndexFile {
                file: Mutex::new(file),
            })
        })
    }

    /// The whole SearchResults (JSON).
    #[pyo3(signature = (query, options=None, query_vector=None))]
    fn search(
        &self,
        py: Python<'_>,
        query: &str,
        options: Option<&str>,
        query_vector: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<String> {
        let vector = crate::query_vector(py, query_vector)?;
        run(py, || {
            let opts = search_options(options, vector)?;
            to_json(&self.file().search(query, &opts)?)
        })
    }

    #[pyo3(signature = (key, scope=None))]
    fn page_record(&self, py: Python<'_>, key: &str, scope: Option<&str>) -> PyResult<String> {
        run(py, || {
            let s = crate::scope(scope)?;
            to_json(&self.file().page_record(key, s.as_ref())?)
        })
    }

    fn chunk(&self, py: Python<'_>, id: &str) -> PyResult<String> {
        run(py, || to_json(&self.file().chunk(id)?))
    }

    fn attach_model(&self, py: Python<'_>, model: PyRef<'_, Model>) -> PyResult<()> {
        let embedder = Arc::clone(&model.inner) as Arc<dyn Embedder>;
        run(py, || self.file().set_model(Some(embedder)))
    }

    /// `(bytes read so far, the blob's length)`, without the GIL: it waits for a search in
    /// progress on another thread.
    fn loaded(&self, py: Python<'_>) -> (u64, u64) {
        py.detach(|| {
            let file = self.file();
            (file.index().loaded_bytes(), file.index().blob_len())
        })
    }
}
