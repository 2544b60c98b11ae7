//! Embeddings in an index: computing them at build time with an [`Embedder`], bringing your
//! own, keeping them through page writes, and embedding queries.

use std::borrow::Cow;
use std::collections::HashMap;
use std::ops::ControlFlow;
use std::sync::Arc;

use crate::blob::IndexData;
use crate::data::error::{Error, Result};
use crate::embed::{Embedder, PromptKind, Prompts};
use crate::index::Index;
use crate::lane::semantic::{Row, VectorEncoding, VectorSection};
use crate::text::chunk::ChunkRecord;
use crate::text::page::Page;

/// Texts handed to an embedder per call while building (it sorts and batches them itself).
const EMBED_GROUP: usize = 256;

/// An embedder attached to a builder or index (with a `Debug` the trait object lacks).
#[derive(Clone)]
pub(crate) struct Attached(pub Arc<dyn Embedder>);

impl std::fmt::Debug for Attached {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.0.model_id(), self.0.fingerprint())
    }
}

/// The text the model sees for each chunk, in chunk order: the page title and the headings the
/// chunk sits under (`Runbook > Escalation`, on their own line), then the chunk text as it is
/// indexed (with the header of the table it continues, if any:
/// [`crate::text::chunk::indexed_texts`]); without the title or the heading the chunk already
/// starts with (as a page's first chunk under its `# heading` does). A chunk deep in a long
/// page is then embedded with what it is about (measured on the development set,
/// `bench/devset`: the semantic lane's nDCG@10 0.656 → 0.673 with MiniLM, 0.691 → 0.752 on its
/// conceptual queries).
pub(crate) fn passages(data: &IndexData) -> Vec<String> {
    crate::text::chunk::indexed_table(&data.pages, &data.chunks)
        .iter()
        .zip(&data.chunks)
        .map(|(indexed, rec)| passage(indexed, rec))
        .collect()
}

/// One chunk's passage ([`passages`]), from its page and indexed text
/// ([`crate::text::chunk::indexed_table`]) and its record.
fn passage((page, text): &(&Page, Cow<'_, str>), rec: &ChunkRecord) -> String {
    let head = text.trim_start().trim_start_matches('#').trim_start();
    let mut trail: Vec<String> =
        crate::text::chunk::heading_path(&page.text, page.body_start as usize, rec.start as usize);
    if trail.last().is_some_and(|h| head.starts_with(h.as_str())) {
        trail.pop();
    }
    if !page.title.is_empty()
        && !head.starts_with(page.title.as_str())
        && trail.first() != Some(&page.title)
    {
        trail.insert(0, page.title.clone());
    }
    if trail.is_empty() {
        text.to_string()
    } else {
        format!("{}\n{text}", trail.join(" > "))
    }
}

/// Embeds every chunk of `data` after the passage prompt of `prompts` (in groups, reporting
/// `progress(done, total)`, which may stop the work: [`Error::Cancelled`]), and stores the
/// vectors as `encoding`, with `prompts`. A passage one of `known` holds (made with the same
/// model and prompts) keeps its stored vector instead. Returns how many chunks were embedded.
pub(crate) fn embed_chunks(
    data: &mut IndexData,
    embedder: &dyn Embedder,
    prompts: &Prompts,
    encoding: VectorEncoding,
    known: &[&Known<'_>],
    progress: &mut dyn FnMut(usize, usize) -> ControlFlow<()>,
) -> Result<usize> {
    let dim = embedder.dim();
    // Each passage is made when it is looked up and again when it is embedded, never all at
    // once: a million chunks' passages take about as much memory as their pages' text.
    let table = crate::text::chunk::indexed_table(&data.pages, &data.chunks);
    let passage_of = |c: usize| passage(&table[c], &data.chunks[c]);
    let mut lengths = Vec::with_capacity(table.len());
    let stored: Vec<Option<Row<'_>>> = (0..table.len())
        .map(|c| {
            let p = passage_of(c);
            lengths.push(p.len());
            known.iter().find_map(|k| k.row(&p, encoding))
        })
        .collect();
    let mut todo: Vec<usize> = (0..table.len()).filter(|&c| stored[c].is_none()).collect();
    // Similar lengths together, so the embedder's batches pad little.
    crate::data::sort::sort_by_key(&mut todo, |&c| lengths[c]);
    let total = todo.len();
    let cancelled = || Error::Cancelled {
        stage: crate::data::record::BuildStage::Embeddings.as_str().into(),
    };
    if progress(0, total).is_break() {
        return Err(cancelled());
    }
    // Each group's vectors are stored as they come, in `encoding`: a large build holds
    // 388 bytes a 384-d chunk in int8, not the 1.5 KB of its f32 vector, until the end.
    // `fresh[c]` is chunk `c`'s group and row there.
    let mut fresh: Vec<(usize, usize)> = vec![(0, 0); table.len()];
    let mut groups: Vec<VectorSection> = Vec::new();
    for (g, group) in todo.chunks(EMBED_GROUP).enumerate() {
        let passages: Vec<String> = group.iter().map(|&c| passage_of(c)).collect();
        let prompted: Vec<_> = passages
            .iter()
            .map(|p| prompts.apply(PromptKind::Passage, p))
            .collect();
        let texts: Vec<&str> = prompted.iter().map(|t| t.as_ref()).collect();
        let out = embedder.embed(&texts)?;
        let unusable = |v: &Vec<f32>| v.len() != dim || v.iter().any(|x| !x.is_finite());
        if out.len() != texts.len() || out.iter().any(unusable) {
            return Err(Error::Model {
                detail: format!(
                    "the embedder returned {} vectors for {} texts (or a vector not of \
                     dimension {dim}, or with a value that is not finite)",
                    out.len(),
                    texts.len()
                ),
            });
        }
        let rows: Vec<Row<'_>> = out.iter().map(|v| Row::New(v)).collect();
        for (at, &c) in group.iter().enumerate() {
            fresh[c] = (groups.len(), at);
        }
        groups.push(VectorSection::from_rows(
            embedder.model_id(),
            embedder.fingerprint(),
            dim,
            &rows,
            encoding,
        )?);
        if progress((g * EMBED_GROUP + group.len()).min(total), total).is_break() {
            return Err(cancelled());
        }
    }
    let rows: Vec<Row<'_>> = stored
        .iter()
        .zip(&fresh)
        .map(|(s, &(g, at))| s.unwrap_or_else(|| Row::Stored(&groups[g], at)))
        .collect();
    let section = VectorSection::from_rows(
        embedder.model_id(),
        embedder.fingerprint(),
        dim,
        &rows,
        encoding,
    )?
    .with_prompts(prompts.clone());
    data.vectors = Some(section);
    Ok(total)
}

/// Measures the semantic lane's relevance floor of `data`'s vectors with `embedder` (the model
/// they were made with) and stores it: the highest best score any of the
/// [`semantic::floor_probes`] nonsense queries gets against them.
pub(crate) fn calibrate_floor(data: &mut IndexData, embedder: &dyn Embedder) -> Result<()> {
    let Some(section) = &data.vectors else {
        return Ok(());
    };
    let floor = measure_floor(section, embedder, |q| section.best_score(q))?;
    data.vectors = data.vectors.take().map(|s| s.with_floor(floor));
    Ok(())
}

/// The relevance floor of vectors like `section`'s (its model's, after its prompts) where
/// `best` gives the highest score of any of them for a unit query vector: the highest best
/// score of the [`semantic::floor_probes`] embedded with `embedder`, or 0 when their best
/// scores lie within [`semantic::FLOOR_MIN_SPREAD`] of each other.
pub(crate) fn measure_floor(
    section: &VectorSection,
    embedder: &dyn Embedder,
    best: impl Fn(&[f32]) -> Option<f32>,
) -> Result<f32> {
    let probes = floor_probe_vectors(section, embedder)?;
    let best: Vec<f32> = probes.iter().filter_map(|v| best(v)).collect();
    Ok(floor_of(&best))
}

/// The [`semantic::floor_probes`] embedded with `embedder` as queries of `section`'s vectors
/// (its prompts, unit length), those of the wrong dimension left out.
pub(crate) fn floor_probe_vectors(
    section: &VectorSection,
    embedder: &dyn Embedder,
) -> Result<Vec<Vec<f32>>> {
    let probes = crate::lane::semantic::floor_probes();
    let probes: Vec<&str> = probes.iter().map(String::as_str).collect();
    let prompted = section.prompts.apply_all(Some(PromptKind::Query), &probes);
    let texts: Vec<&str> = prompted.iter().map(|t| t.as_ref()).collect();
    Ok(embedder
        .embed(&texts)?
        .into_iter()
        .filter(|v| v.len() == section.dim as usize)
        .map(|mut v| {
            crate::embed::normalize(&mut v);
            v
        })
        .collect())
}

/// The relevance floor from the floor probes' best scores: the highest, or 0 when they lie
/// within [`semantic::FLOOR_MIN_SPREAD`] of each other.
pub(crate) fn floor_of(best: &[f32]) -> f32 {
    let (low, high) = best
        .iter()
        .fold((f32::INFINITY, 0.0f32), |(l, h), &s| (l.min(s), h.max(s)));
    // A model that gives every nonsense string nearly the same best score (multilingual-e5
    // on the example wiki: 0.807 to 0.830, where a German question about an English page
    // scores 0.778) does not tell nonsense from text by score here: no floor then.
    if high - low >= crate::lane::semantic::FLOOR_MIN_SPREAD {
        high.clamp(0.0, 1.0)
    } else {
        0.0
    }
}

/// The vectors an index holds, by the passage each was made from: a build or a page write
/// takes a stored vector as it is stored (bit for bit, int8 included) instead of embedding its
/// passage again.
#[derive(Debug)]
pub(crate) struct Known<'a> {
    section: Cow<'a, VectorSection>,
    /// Passage → its row in `section`.
    rows: HashMap<String, usize>,
}

impl Known<'_> {
    /// The vectors of `data`, if it has any, borrowed.
    pub(crate) fn of(data: &IndexData) -> Option<Known<'_>> {
        let section = data.vectors.as_ref()?;
        Some(Known {
            rows: Known::rows(data, section.len()),
            section: Cow::Borrowed(section),
        })
    }

    /// The vectors of `data`, if it has any, copied (to outlive it).
    pub(crate) fn copied(data: &IndexData) -> Option<Known<'static>> {
        let section = data.vectors.clone()?;
        Some(Known {
            rows: Known::rows(data, section.len()),
            section: Cow::Owned(section),
        })
    }

    /// Passage → row, for the `n` rows of `data`'s vectors.
    fn rows(data: &IndexData, n: usize) -> HashMap<String, usize> {
        passages(data)
            .into_iter()
            .enumerate()
            .filter(|&(c, _)| c < n)
            .map(|(c, p)| (p, c))
            .collect()
    }

    /// Whether `embedder` made these vectors (same fingerprint, dimension and prompts).
    pub(crate) fn made_by(&self, embedder: &dyn Embedder) -> bool {
        self.section.fingerprint == embedder.fingerprint()
            && self.section.dim as usize == embedder.dim()
            && self.section.prompts == *embedder.prompts()
    }

    /// The stored row of `passage`, when it can be stored as `encoding` as a new vector
    /// would be: stored in that encoding, or as floats (int8 values are not floats again).
    fn row(&self, passage: &str, encoding: VectorEncoding) -> Option<Row<'_>> {
        let usable =
            self.section.encoding() == encoding || self.section.encoding() == VectorEncoding::F32;
        let at = *self.rows.get(passage).filter(|_| usable)?;
        Some(Row::Stored(&self.section, at))
    }
}

/// Stands in for the model when a write to an index with vectors is given none: every stored
/// vector can be reused, nothing new can be embedded.
pub(crate) struct KnownOnly<'a> {
    pub section: &'a VectorSection,
}

impl Embedder for KnownOnly<'_> {
    fn model_id(&self) -> &str {
        &self.section.model_id
    }

    fn fingerprint(&self) -> &str {
        &self.section.fingerprint
    }

    fn dim(&self) -> usize {
        self.section.dim as usize
    }

    fn prompts(&self) -> &Prompts {
        &self.section.prompts
    }

    fn embed(&self, _texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        Err(Error::NoEmbedder {
            detail: format!(
                "this index holds embeddings of {}; set that model on the session (or give \
                 it to the write) before writing pages with new text",
                self.section.model_id
            ),
        })
    }
}

impl Index {
    /// The stored embeddings, if the index has any.
    pub fn vectors(&self) -> Option<&VectorSection> {
        self.data.vectors.as_ref()
    }

    /// Checks that `model` can embed queries for this index: when it holds vectors, they must
    /// be `model`'s (same fingerprint and dimension).
    ///
    /// # Errors
    /// [`Error::ModelMismatch`] when the index holds vectors made by another model.
    pub fn check_model(&self, model: &dyn Embedder) -> Result<()> {
        if let Some(v) = &self.data.vectors {
            if v.fingerprint != model.fingerprint() || v.dim as usize != model.dim() {
                return Err(Error::ModelMismatch {
                    index: v.model_id.clone(),
                    index_fingerprint: v.fingerprint.clone(),
                    given: model.model_id().to_string(),
                    given_fingerprint: model.fingerprint().to_string(),
                });
            }
        }
        Ok(())
    }

    /// Whether `lane` can rank this index's chunks for a query given as text, with `model`
    /// (if any) to embed it: lexical and token always can; semantic needs stored vectors and a
    /// model (or a query vector in the options, which this does not see). What `eval` and
    /// search UIs check before they offer a lane.
    pub fn lane_status(
        &self,
        lane: crate::Lane,
        model: Option<&dyn Embedder>,
    ) -> crate::LaneStatus {
        use crate::lane::semantic::{NO_QUERY_VECTOR, NO_VECTORS};
        match lane {
            crate::Lane::Semantic if self.data.vectors.is_none() => {
                crate::LaneStatus::skipped(NO_VECTORS)
            }
            crate::Lane::Semantic if model.is_none() => crate::LaneStatus::skipped(NO_QUERY_VECTOR),
            _ => crate::LaneStatus::Ok,
        }
    }

    /// This index with every chunk embedded by `embedder`, after its passage prompt
    /// (replacing any stored vectors).
    /// `progress(done, total)` is called as chunks are embedded; it returns
    /// [`ControlFlow::Break`] to stop ([`Error::Cancelled`]).
    ///
    /// # Errors
    /// Whatever the embedder reports.
    pub fn embed_all(
        &self,
        embedder: &dyn Embedder,
        encoding: VectorEncoding,
        progress: &mut dyn FnMut(usize, usize) -> ControlFlow<()>,
    ) -> Result<Index> {
        let mut data = self.data.clone();
        embed_chunks(
            &mut data,
            embedder,
            embedder.prompts(),
            encoding,
            &[],
            progress,
        )?;
        Ok(Index::from_data(data))
    }

    /// The text each chunk's embedding is computed from (page title and the headings above the
    /// chunk, then chunk text, after the header of the table it continues, if any), in chunk
    /// order: what to embed when
    /// bringing your own vectors to [`Index::with_vectors`] (without a model's passage prompt:
    /// the index puts it before these when it embeds them itself).
    pub fn passages(&self) -> Vec<String> {
        passages(&self.data)
    }

    /// This index with vectors the caller computed (bring your own embeddings): one per
    /// chunk, in the order of [`Index::passages`], each a `Vec<f32>` or a `&[f32]` (rows of one
    /// flat buffer need no copy of their own). They are normalized here. Queries then need
    /// [`crate::SearchOptions::query_vector`] (or a model with the same `fingerprint`, which
    /// then embeds queries without a prompt: the stored prompts are none).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when the count or a dimension is wrong.
    pub fn with_vectors<V: AsRef<[f32]>>(
        &self,
        model_id: &str,
        fingerprint: &str,
        vectors: &[V],
        encoding: VectorEncoding,
    ) -> Result<Index> {
        if vectors.len() != self.data.chunks.len() {
            return Err(Error::invalid_argument(format!(
                "{} vectors for {} chunks",
                vectors.len(),
                self.data.chunks.len()
            )));
        }
        let dim = vectors.first().map_or(0, |v| v.as_ref().len());
        let mut data = self.data.clone();
        data.vectors = Some(VectorSection::new(
            model_id,
            fingerprint,
            dim,
            vectors,
            encoding,
        )?);
        Ok(Index::from_data(data))
    }

    /// The unit query vector for the semantic lane: the caller's, else `model`'s for the
    /// query after the query prompt stored with the vectors. `Ok(None)` when there is
    /// neither.
    pub(crate) fn query_vector(
        &self,
        query: &str,
        given: Option<&[f32]>,
        model: Option<&dyn Embedder>,
    ) -> Result<Option<Vec<f32>>> {
        let Some(section) = &self.data.vectors else {
            return Ok(None);
        };
        let dim = section.dim as usize;
        if let Some(v) = given {
            if v.len() != dim || v.iter().any(|x| !x.is_finite()) {
                return Err(Error::invalid_argument(format!(
                    "the query vector has {} values (finite ones expected), the index's vectors have {dim}",
                    v.len()
                )));
            }
            let mut v = v.to_vec();
            crate::embed::normalize(&mut v);
            return Ok(Some(v));
        }
        let Some(e) = model else {
            return Ok(None);
        };
        let text = section.prompts.apply(PromptKind::Query, query);
        let mut out = e.embed(&[text.as_ref()])?;
        match out.pop() {
            Some(v) if v.len() == dim => Ok(Some(v)),
            _ => Err(Error::Model {
                detail: format!("the embedder did not return one vector of dimension {dim}"),
            }),
        }
    }
}
