//! `Ranking`: what `Index.rank` returns. A read-only sequence of `(page id, score)` tuples
//! that holds the ranked hits as Rust values and makes each tuple only when it is read, so
//! a call costs one Python object instead of a hundred tuples and floats (bm25s returns
//! numpy arrays for the same reason). `ids` and `scores` give the two columns at once.

use std::sync::Arc;

use numpy::PyArray1;
use pyo3::exceptions::PyIndexError;
use pyo3::prelude::*;
use pyo3::types::{PyList, PySlice, PyTuple};

use crate::PageIds;

#[pyclass(module = "wikidex._wikidex", frozen, sequence)]
pub(crate) struct Ranking {
    ids: Arc<PageIds>,
    /// (page index in the snapshot, fused score), best first.
    hits: Vec<(usize, f32)>,
}

impl Ranking {
    pub(crate) fn new(ids: Arc<PageIds>, hits: Vec<(usize, f32)>) -> Self {
        Self { ids, hits }
    }

    fn item<'py>(&self, py: Python<'py>, i: usize) -> PyResult<Bound<'py, PyTuple>> {
        let (page, score) = self.hits[i];
        (self.ids.ids[page].clone_ref(py), score).into_pyobject(py)
    }

    fn list<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let items = (0..self.hits.len())
            .map(|i| self.item(py, i))
            .collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, items)
    }
}

#[pymethods]
impl Ranking {
    fn __len__(&self) -> usize {
        self.hits.len()
    }

    /// `ranking[i]` (negative counts from the end) is a `(page id, score)` tuple;
    /// `ranking[a:b:c]` a list of them.
    fn __getitem__<'py>(&self, py: Python<'py>, key: &Bound<'py, PyAny>) -> PyResult<Py<PyAny>> {
        if let Ok(slice) = key.cast::<PySlice>() {
            let ix = slice.indices(self.hits.len() as isize)?;
            let items = (0..ix.slicelength)
                .map(|k| self.item(py, (ix.start + k as isize * ix.step) as usize))
                .collect::<PyResult<Vec<_>>>()?;
            return Ok(PyList::new(py, items)?.into_any().unbind());
        }
        let i: isize = key.extract()?;
        let n = self.hits.len() as isize;
        let at = if i < 0 { i + n } else { i };
        if at < 0 || at >= n {
            return Err(PyIndexError::new_err("Ranking index out of range"));
        }
        Ok(self.item(py, at as usize)?.into_any().unbind())
    }

    /// The page ids, best first.
    #[getter]
    fn ids<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        PyList::new(
            py,
            self.hits
                .iter()
                .map(|&(p, _)| self.ids.ids[p].clone_ref(py)),
        )
    }

    /// The fused scores, best first, as a 1-D `numpy.float32` array.
    #[getter]
    fn scores<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f32>> {
        PyArray1::from_iter(py, self.hits.iter().map(|&(_, s)| s))
    }

    /// The hits as a list of `(page id, score)` tuples.
    fn to_list<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        self.list(py)
    }

    /// Equal to another `Ranking` or to a list with the same tuples (as `list(self) == other`).
    fn __eq__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<bool> {
        let mine = self.list(py)?;
        match other.cast::<Ranking>() {
            Ok(r) => mine.eq(r.get().list(py)?),
            Err(_) => mine.eq(other),
        }
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!("Ranking({})", self.list(py)?.repr()?))
    }

    /// Pickles as the plain list of tuples.
    fn __reduce__<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyList>,))> {
        Ok((py.get_type::<PyList>().into_any(), (self.list(py)?,)))
    }
}
