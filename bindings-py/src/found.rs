//! `Found`: what `Index.search` holds, the core's `Found` (a search ranked, its hits made
//! when they are read), and `Hit`, one of its hits made without its snippet. The package's
//! `SearchResults` reads the head (JSON) and the hits from it when a field is first read, and
//! each hit converts a field, or makes its snippet, when that field is first read: a search
//! whose results are not read costs its ranking, and a hit read for its title costs no
//! snippet and no JSON text.
//!
//! A hit's fields become Python objects here, field for field as the core's serde JSON has
//! them (the Python tests hold the two to each other): `f32`s as the shortest decimal that
//! gives them back, as the JSON writes them, not as their binary expansion.

use std::sync::Arc;

use pyo3::exceptions::PyKeyError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use pyo3::IntoPyObjectExt;
use wikidex::{Explanation, HitList, LaneHit, Snippet, TermScore};

use crate::{run, to_json};

#[pyclass(module = "wikidex._wikidex", frozen)]
pub(crate) struct Found {
    found: Arc<wikidex::Found>,
}

impl Found {
    pub(crate) fn new(found: wikidex::Found) -> Self {
        Self {
            found: Arc::new(found),
        }
    }
}

fn list_of(always: bool) -> HitList {
    if always {
        HitList::Always
    } else {
        HitList::Hits
    }
}

#[pymethods]
impl Found {
    /// The SearchResults without their hits (JSON): `hits` and `always` empty.
    fn head(&self, py: Python<'_>) -> PyResult<String> {
        run(py, || to_json(&self.found.head()))
    }

    /// The hits of `hits` (or of `always`), made now without their snippets.
    #[pyo3(signature = (always=false))]
    fn hits(&self, py: Python<'_>, always: bool) -> PyResult<Vec<Hit>> {
        let list = list_of(always);
        let made: Vec<wikidex::Hit> = py.detach(|| {
            (0..)
                .map_while(|i| self.found.hit_fields(list, i))
                .collect()
        });
        Ok(made
            .into_iter()
            .enumerate()
            .map(|(i, hit)| Hit {
                hit,
                found: Arc::clone(&self.found),
                list,
                i,
            })
            .collect())
    }
}

/// One hit of a [`Found`]: the core's record without its snippet, and where to make that.
#[pyclass(module = "wikidex._wikidex", name = "FoundHit", frozen)]
pub(crate) struct Hit {
    hit: wikidex::Hit,
    found: Arc<wikidex::Found>,
    list: HitList,
    i: usize,
}

/// A hit's fields, in the order of the core's record.
const FIELDS: [&str; 20] = [
    "key",
    "page_id",
    "scope",
    "path",
    "title",
    "summary",
    "type",
    "tags",
    "score",
    "chunk",
    "chunk_hash",
    "line_start",
    "line_end",
    "headings",
    "snippet",
    "lanes",
    "always",
    "stale_since",
    "date",
    "explain",
];

#[pymethods]
impl Hit {
    /// The field names, in the order of the core's record.
    #[classattr]
    #[allow(non_snake_case)]
    fn FIELDS() -> Vec<&'static str> {
        FIELDS.to_vec()
    }

    /// Field `name` as Python values (`dict`s and `list`s, as `json.loads` of the record
    /// gives them); `snippet` is made now. `KeyError` for a name that is no field.
    fn field<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
        let h = &self.hit;
        match name {
            "key" => h.key.as_str().into_bound_py_any(py),
            "page_id" => h.page_id.as_str().into_bound_py_any(py),
            "scope" => h.scope.to_string().into_bound_py_any(py),
            "path" => h.path.as_str().into_bound_py_any(py),
            "title" => h.title.as_str().into_bound_py_any(py),
            "summary" => h.summary.as_deref().into_bound_py_any(py),
            "type" => h.kind.as_deref().into_bound_py_any(py),
            "tags" => h.tags.as_slice().into_bound_py_any(py),
            "score" => float(h.score).into_bound_py_any(py),
            "chunk" => h.chunk.as_str().into_bound_py_any(py),
            "chunk_hash" => h.chunk_hash.as_str().into_bound_py_any(py),
            "line_start" => h.line_start.into_bound_py_any(py),
            "line_end" => h.line_end.into_bound_py_any(py),
            "headings" => h.headings.as_slice().into_bound_py_any(py),
            "snippet" => {
                let (found, list, i) = (&self.found, self.list, self.i);
                match run(py, || Ok(found.snippet(list, i)))? {
                    Some(s) => snippet(py, &s),
                    None => Ok(py.None().into_bound(py)),
                }
            }
            "lanes" => {
                let lanes = (h.lanes.iter().map(|l| lane(py, l))).collect::<PyResult<Vec<_>>>()?;
                Ok(PyList::new(py, lanes)?.into_any())
            }
            "always" => h.always.into_bound_py_any(py),
            "stale_since" => h.stale_since.as_deref().into_bound_py_any(py),
            "date" => h.date.as_deref().into_bound_py_any(py),
            "explain" => match &h.explain {
                Some(e) => explanation(py, e),
                None => Ok(py.None().into_bound(py)),
            },
            _ => Err(PyKeyError::new_err(name.to_string())),
        }
    }
}

/// An `f32` as the JSON writes it: its shortest decimal (`0.024590164`, not
/// `0.024590164422988892`); `None` for one that is not finite, as the JSON's `null`.
fn float(x: f32) -> Option<f64> {
    x.is_finite()
        .then(|| x.to_string().parse().unwrap_or(f64::from(x)))
}

fn snippet<'py>(py: Python<'py>, s: &Snippet) -> PyResult<Bound<'py, PyAny>> {
    let d = PyDict::new(py);
    d.set_item("text", s.text.as_str())?;
    let highlights = (s.highlights.iter())
        .map(|m| {
            let h = PyDict::new(py);
            h.set_item("start", m.start)?;
            h.set_item("end", m.end)?;
            Ok(h)
        })
        .collect::<PyResult<Vec<_>>>()?;
    d.set_item("highlights", PyList::new(py, highlights)?)?;
    d.set_item("offset", s.offset)?;
    Ok(d.into_any())
}

fn lane<'py>(py: Python<'py>, l: &LaneHit) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("lane", l.lane.name())?;
    d.set_item("status", l.status.name())?;
    d.set_item("rank", l.rank)?;
    d.set_item("score", l.score.and_then(float))?;
    d.set_item("contribution", l.contribution.and_then(float))?;
    d.set_item("chunk", l.chunk.as_deref())?;
    Ok(d)
}

fn explanation<'py>(py: Python<'py>, e: &Explanation) -> PyResult<Bound<'py, PyAny>> {
    let terms = (e.lexical.iter().map(|t| term(py, t))).collect::<PyResult<Vec<_>>>()?;
    let d = PyDict::new(py);
    d.set_item("lexical", PyList::new(py, terms)?)?;
    d.set_item("k", float(e.k))?;
    Ok(d.into_any())
}

fn term<'py>(py: Python<'py>, t: &TermScore) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("term", t.term.as_str())?;
    d.set_item("weight", float(t.weight))?;
    d.set_item("tf", t.tf)?;
    d.set_item("df", t.df)?;
    d.set_item("idf", float(t.idf))?;
    d.set_item("score", float(t.score))?;
    d.set_item("matched", t.matched.as_deref())?;
    d.set_item("edits", t.edits)?;
    Ok(d)
}
