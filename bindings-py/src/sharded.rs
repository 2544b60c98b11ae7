//! `NativeSharded`: the core's `ShardedIndex`, the indexes of parts of one wiki searched as
//! one, for the package's `ShardedIndex`. Its rankings are `Ranking`s over the page ids of
//! every shard, one shard's after another's; its searches whole SearchResults (JSON), as
//! `NativeIndexFile`'s. `NativeShardSearcher` and `NativeCoordinator`:
//! the two sides of the same search for shards held apart (by Ray actors), talking in bytes.

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;
use pyo3::types::{PyBytes, PyString};
use wikidex::{
    over_bytes, Coordinator, Embedder, Error, Index, OffsetUnit, ShardRanked, ShardReply,
    ShardRequest, ShardSearcher, ShardSummary, ShardedIndex,
};

use crate::ranking::Ranking;
use crate::{raise, run, search_options, to_json, Model, NativeIndex, PageIds};

#[pyclass(module = "wikidex._wikidex", frozen)]
pub(crate) struct NativeSharded {
    index: ShardedIndex,
    ids: Arc<PageIds>,
    /// Per shard: where its pages start in `ids`.
    starts: Vec<usize>,
}

impl NativeSharded {
    fn ranking(&self, ranked: &[ShardRanked]) -> Ranking {
        let hits = ranked
            .iter()
            .map(|r| (self.starts[r.shard] + r.page, r.score))
            .collect();
        Ranking::new(Arc::clone(&self.ids), hits)
    }
}

#[pymethods]
impl NativeSharded {
    /// The shards' current snapshots searched as one (`ShardedIndex::new`), with `model`, or
    /// else the first shard's.
    #[new]
    #[pyo3(signature = (shards, model=None))]
    fn new(
        py: Python<'_>,
        shards: Vec<PyRef<'_, NativeIndex>>,
        model: Option<PyRef<'_, Model>>,
    ) -> PyResult<Self> {
        let snapshots: Vec<Arc<Index>> = shards.iter().map(|s| s.session.index()).collect();
        let model: Option<Arc<dyn Embedder>> = match model {
            Some(m) => Some(Arc::clone(&m.inner) as Arc<dyn Embedder>),
            None => shards.first().and_then(|s| s.session.model()),
        };
        // Each shard's page ids as its own `rank` holds them (made once per snapshot).
        let mut starts = Vec::with_capacity(snapshots.len());
        let mut ids = Vec::new();
        for (shard, snapshot) in shards.iter().zip(&snapshots) {
            starts.push(ids.len());
            let own = shard.page_ids(py, Arc::clone(snapshot));
            ids.extend(own.ids.iter().map(|id| id.clone_ref(py)));
        }
        let mut index = run(py, || ShardedIndex::new(snapshots, model))?;
        index.set_offset_unit(OffsetUnit::Char);
        Ok(NativeSharded {
            index,
            ids: Arc::new(PageIds {
                snapshot: None,
                ids,
            }),
            starts,
        })
    }

    /// `ShardedIndex::rank`, as `NativeIndex.rank` takes its arguments.
    #[pyo3(signature = (query, options=None, query_vector=None))]
    fn rank(
        &self,
        py: Python<'_>,
        query: &str,
        options: Option<&str>,
        query_vector: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Ranking> {
        let vector = crate::query_vector(py, query_vector)?;
        let ranked = run(py, || {
            let opts = search_options(options, vector)?;
            self.index.rank(query, &opts)
        })?;
        Ok(self.ranking(&ranked))
    }

    /// `ShardedIndex::search`: the whole SearchResults (JSON), offsets in code points.
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
            to_json(&self.index.search(query, &opts)?)
        })
    }

    /// `ShardedIndex::verify`, as `NativeIndex.verify` takes its arguments.
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
                    .index
                    .verify(answer, &crate::parse_cited(&cited), &offered)?,
            )
        })
    }

    /// `ShardedIndex::check_answer`, as `NativeIndex.check_answer` takes its arguments.
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
                    .index
                    .check_answer(answer, &crate::parse_cited(&cited), &offered)?,
            )
        })
    }

    /// `ShardedIndex::uncited_support`.
    fn uncited_support(&self, py: Python<'_>, answer: &str) -> PyResult<String> {
        run(py, || to_json(&self.index.uncited_support(answer)?))
    }

    /// `ShardedIndex::rank_many`, as `NativeIndex.rank_many` takes its arguments.
    #[pyo3(signature = (queries, options=None, threads=None))]
    fn rank_many(
        &self,
        py: Python<'_>,
        queries: Vec<String>,
        options: Option<&str>,
        threads: Option<usize>,
    ) -> PyResult<Vec<Ranking>> {
        let ranked = run(py, || {
            let opts = search_options(options, None)?;
            self.index.rank_many(&queries, &opts, threads)
        })?;
        Ok(ranked.iter().map(|r| self.ranking(r)).collect())
    }

    /// `ShardedIndex::shard_of`: the position of the shard holding the page with this id.
    fn shard_of(&self, page_id: &str) -> Option<usize> {
        self.index.shard_of(page_id)
    }

    /// Pages over every shard.
    #[getter]
    fn page_count(&self) -> usize {
        self.index.page_count()
    }

    /// Chunks over every shard.
    #[getter]
    fn chunk_count(&self) -> usize {
        self.index.chunk_count()
    }
}

/// `NativeShardSearcher`: one shard's side of a sharded search held apart from its
/// coordinator (the core's `ShardSearcher`), as a Ray actor holds it: requests and replies as
/// bytes.
#[pyclass(module = "wikidex._wikidex", frozen)]
pub(crate) struct NativeShardSearcher {
    searcher: ShardSearcher,
}

#[pymethods]
impl NativeShardSearcher {
    /// The searcher of the index's current snapshot.
    #[new]
    fn new(index: PyRef<'_, NativeIndex>) -> Self {
        NativeShardSearcher {
            searcher: ShardSearcher::new(index.session.index()),
        }
    }

    /// `ShardSearcher::summary`, as bytes.
    fn summary<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let bytes = py.detach(|| self.searcher.summary().to_bytes());
        PyBytes::new(py, &bytes)
    }

    /// `ShardSearcher::reply_bytes`.
    fn reply<'py>(&self, py: Python<'py>, request: &[u8]) -> Bound<'py, PyBytes> {
        let bytes = py.detach(|| self.searcher.reply_bytes(request));
        PyBytes::new(py, &bytes)
    }
}

/// `NativeCoordinator`: the coordinator of shards held apart (the core's `Coordinator`); each
/// round of requests goes through `ask`, a Python callable that takes one request per shard
/// (bytes) and returns one reply per shard.
#[pyclass(module = "wikidex._wikidex", frozen)]
pub(crate) struct NativeCoordinator {
    coordinator: Coordinator,
}

/// The core's `Ask` over the Python callable `ask`; a Python exception it raises is kept in
/// `raised` (and stops the round), to be raised as it is.
fn asking<'a>(
    ask: &'a Py<PyAny>,
    raised: &'a mut Option<PyErr>,
) -> impl FnMut(&[ShardRequest]) -> wikidex::Result<Vec<ShardReply>> + 'a {
    over_bytes(move |requests: Vec<Vec<u8>>| {
        Python::attach(|py| {
            let sent: Vec<Bound<'_, PyBytes>> =
                requests.iter().map(|r| PyBytes::new(py, r)).collect();
            ask.bind(py)
                .call1((sent,))
                .and_then(|replies| {
                    // Each read whole: a `Vec<u8>` would be read a Python int at a time.
                    let replies = replies.extract::<Vec<PyBackedBytes>>()?;
                    Ok(replies.iter().map(|r| r.to_vec()).collect())
                })
                .map_err(|e| {
                    *raised = Some(e);
                    Error::InvalidArgument {
                        detail: "the shards' replies did not come".into(),
                    }
                })
        })
    })
}

/// `result`, or the Python exception `ask` raised, else the core's error raised.
fn asked<T>(py: Python<'_>, result: wikidex::Result<T>, raised: Option<PyErr>) -> PyResult<T> {
    match (result, raised) {
        (Ok(v), _) => Ok(v),
        (Err(_), Some(e)) => Err(e),
        (Err(e), None) => Err(raise(py, &e)),
    }
}

/// A coordinator's ranked hits as a `Ranking` over their own page ids.
fn ranking_of(py: Python<'_>, ranked: &[ShardRanked]) -> Ranking {
    let ids = (ranked.iter())
        .map(|r| PyString::new(py, &r.page_id).unbind())
        .collect();
    let hits = (ranked.iter().enumerate())
        .map(|(i, r)| (i, r.score))
        .collect();
    Ranking::new(
        Arc::new(PageIds {
            snapshot: None,
            ids,
        }),
        hits,
    )
}

#[pymethods]
impl NativeCoordinator {
    /// `Coordinator::new` over the shards' summaries (bytes), asking them through `ask`.
    #[new]
    #[pyo3(signature = (summaries, ask, model=None))]
    fn new(
        py: Python<'_>,
        summaries: Vec<Vec<u8>>,
        ask: Py<PyAny>,
        model: Option<PyRef<'_, Model>>,
    ) -> PyResult<Self> {
        let model: Option<Arc<dyn Embedder>> =
            model.map(|m| Arc::clone(&m.inner) as Arc<dyn Embedder>);
        let mut raised = None;
        let result = py.detach(|| {
            let summaries = (summaries.iter())
                .map(|s| ShardSummary::from_bytes(s))
                .collect::<wikidex::Result<Vec<_>>>()?;
            Coordinator::new(summaries, model, &mut asking(&ask, &mut raised))
        });
        let coordinator = asked(py, result, raised)?;
        Ok(NativeCoordinator { coordinator })
    }

    /// `Coordinator::rank`, as `NativeIndex.rank` takes its arguments, asking the shards
    /// through `ask`.
    #[pyo3(signature = (query, ask, options=None, query_vector=None))]
    fn rank(
        &self,
        py: Python<'_>,
        query: &str,
        ask: Py<PyAny>,
        options: Option<&str>,
        query_vector: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Ranking> {
        let vector = crate::query_vector(py, query_vector)?;
        let mut raised = None;
        let result = py.detach(|| {
            let opts = search_options(options, vector)?;
            (self.coordinator).rank(query, &opts, &mut asking(&ask, &mut raised))
        });
        Ok(ranking_of(py, &asked(py, result, raised)?))
    }

    /// `Coordinator::search`: the whole SearchResults (JSON), offsets in code points, asking
    /// the shards through `ask` (two rounds; three for a user's scope).
    #[pyo3(signature = (query, ask, options=None, query_vector=None))]
    fn search(
        &self,
        py: Python<'_>,
        query: &str,
        ask: Py<PyAny>,
        options: Option<&str>,
        query_vector: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<String> {
        let vector = crate::query_vector(py, query_vector)?;
        let mut raised = None;
        let result = py.detach(|| {
            let opts = search_options(options, vector)?;
            let mut ask = asking(&ask, &mut raised);
            to_json(&(self.coordinator).search(query, &opts, OffsetUnit::Char, &mut ask)?)
        });
        asked(py, result, raised)
    }

    /// `Coordinator::rank_many`, as `NativeIndex.rank_many` takes its queries and options:
    /// one round through `ask` for all of them (two for a user's scope).
    #[pyo3(signature = (queries, ask, options=None))]
    fn rank_many(
        &self,
        py: Python<'_>,
        queries: Vec<String>,
        ask: Py<PyAny>,
        options: Option<&str>,
    ) -> PyResult<Vec<Ranking>> {
        let mut raised = None;
        let result = py.detach(|| {
            let opts = search_options(options, None)?;
            (self.coordinator).rank_many(&queries, &opts, &mut asking(&ask, &mut raised))
        });
        let ranked = asked(py, result, raised)?;
        Ok(ranked.iter().map(|r| ranking_of(py, r)).collect())
    }

    /// Shards.
    #[getter]
    fn shard_count(&self) -> usize {
        self.coordinator.shard_count()
    }

    /// Pages over every shard.
    #[getter]
    fn page_count(&self) -> usize {
        self.coordinator.page_count()
    }

    /// Chunks over every shard.
    #[getter]
    fn chunk_count(&self) -> usize {
        self.coordinator.chunk_count()
    }
}
