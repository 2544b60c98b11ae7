//! `NativeSharded`: the core's `ShardedIndex`, the indexes of parts of one wiki searched as
//! one, for the package's `ShardedIndex`. Its rankings are `Ranking`s over the page ids of
//! every shard, one shard's after another's.

use std::sync::Arc;

use pyo3::prelude::*;
use wikidex::{Embedder, Index, ShardRanked, ShardedIndex};

use crate::ranking::Ranking;
use crate::{run, search_options, Model, NativeIndex, PageIds};

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
        let index = run(py, || ShardedIndex::new(snapshots, model))?;
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
