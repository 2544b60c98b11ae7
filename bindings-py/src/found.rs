//! `Found`: what `Index.search` holds, the core's `Found` (a search ranked, its hits made
//! when they are read). The package's `SearchResults` makes its records from it when one
//! of its fields is first read, so a search whose results are not read costs its ranking.

use pyo3::prelude::*;

use crate::{run, to_json};

#[pyclass(module = "wikidex._wikidex", frozen)]
pub(crate) struct Found {
    found: wikidex::Found,
}

impl Found {
    pub(crate) fn new(found: wikidex::Found) -> Self {
        Self { found }
    }
}

#[pymethods]
impl Found {
    /// The whole SearchResults (JSON), every hit made now.
    fn results(&self, py: Python<'_>) -> PyResult<String> {
        run(py, || to_json(&self.found.results()))
    }
}
