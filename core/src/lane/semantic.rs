//! The semantic lane: cosine similarity between the query embedding and every chunk's
//! embedding, over the vector section of the blob.
//!
//! Vectors are unit length, so cosine is a dot product. Below 50,000 vectors
//! (`codes::CODES_FROM`) the scan is exact: one pass over contiguous rows with independent
//! accumulators (which the compiler turns into SIMD), feeding a bounded heap of the best keys;
//! its cost is reading the vectors once, at memory bandwidth. From there on the rows are first
//! ranked by their binary codes (`semantic::codes`) and only the nearest are scored,
//! exactly.

pub(crate) mod codes;

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::{top_keys, Mask};
use crate::data::error::{Error, Result};
use crate::embed::Prompts;
use crate::text::analyze::BuildHash;
use codes::Codes;

/// How vectors are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum VectorEncoding {
    /// 4 bytes per value, exact.
    #[default]
    F32,
    /// 1 byte per value plus one f32 scale per vector (a quarter of the size; cosines move by
    /// about 1e-3).
    Int8,
}

impl VectorEncoding {
    /// `f32` or `int8`.
    pub fn name(self) -> &'static str {
        match self {
            VectorEncoding::F32 => "f32",
            VectorEncoding::Int8 => "int8",
        }
    }

    /// Parses `f32` or `int8`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for anything else.
    pub fn parse(s: &str) -> Result<VectorEncoding> {
        match s.trim().to_ascii_lowercase().as_str() {
            "f32" => Ok(VectorEncoding::F32),
            "int8" | "i8" => Ok(VectorEncoding::Int8),
            _ => Err(Error::invalid_argument(format!(
                "unknown vector encoding `{s}`; expected f32 or int8"
            ))),
        }
    }
}

/// The stored values, row-major, one row per chunk in chunk order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum VectorValues {
    /// `chunks x dim` floats.
    F32(Vec<f32>),
    /// `chunks x dim` bytes and one scale per chunk: value = byte x scale.
    Int8 {
        /// The quantized values.
        #[serde(deserialize_with = "i8_values")]
        values: Vec<i8>,
        /// One scale per row.
        scales: Vec<f32>,
    },
}

/// Int8 values as the blob holds them (postcard writes a sequence of `i8` as its length, then
/// one byte each: the encoding of a byte string), read as a byte string: one pass over the
/// bytes rather than a call for each value, which was a sixth of reading a million rows. A
/// format that gives a sequence instead (JSON's array) is read as one.
fn i8_values<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Vec<i8>, D::Error> {
    struct Values;
    impl<'de> serde::de::Visitor<'de> for Values {
        type Value = Vec<i8>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("int8 values")
        }
        fn visit_bytes<E: serde::de::Error>(self, v: &[u8]) -> std::result::Result<Vec<i8>, E> {
            Ok(v.iter().map(|&b| b as i8).collect())
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(
            self,
            mut seq: A,
        ) -> std::result::Result<Vec<i8>, A::Error> {
            let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1 << 20));
            while let Some(v) = seq.next_element()? {
                out.push(v);
            }
            Ok(out)
        }
    }
    d.deserialize_bytes(Values)
}

/// One vector of a section being made ([`VectorSection::from_rows`]).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Row<'a> {
    /// A vector to store (normalized, then quantized for int8).
    New(&'a [f32]),
    /// Row `at` of a stored section, kept as it is stored.
    Stored(&'a VectorSection, usize),
}

/// Chunk embeddings stored in the blob, one unit vector per chunk, in chunk order, with the
/// identity of the model that made them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VectorSection {
    /// The model's id (e.g. `all-MiniLM-L6-v2`).
    pub model_id: String,
    /// Dimension of every vector.
    pub dim: u32,
    /// Fingerprint of the model the vectors were computed with.
    pub fingerprint: String,
    /// The vectors.
    pub values: VectorValues,
    /// The prompts the passages were embedded after, and queries are (none for vectors the
    /// caller brought).
    pub prompts: Prompts,
    /// The relevance floor of the semantic lane for this index and model
    /// (0: none). A query none of whose words the index knows (not even within a typo) and
    /// whose best passage scores below it gets no semantic hits: it is no closer to anything
    /// in the index than nonsense is. A query with a known word is ranked as ever (on CACM and
    /// Cranfield the relevant documents of real queries often score below it, so it is not a
    /// cut per hit). Measured at build by embedding [`FLOOR_PROBES`] nonsense queries with
    /// the model: the highest best score any of them gets, or 0 when their best scores lie
    /// within [`FLOOR_MIN_SPREAD`] of each other. Vectors the caller brings have none.
    pub floor: f32,
}

/// Nonsense queries the floor is measured with, made by a fixed generator (so a build is
/// deterministic): pseudo-words of two to four consonant-vowel syllables, one to three per
/// query, plus the issue's own example.
pub const FLOOR_PROBES: usize = 32;

/// The least spread (highest minus lowest) of the [`FLOOR_PROBES`]' best scores for a floor
/// to be set: below it the model scores nonsense and text alike on the index, and the floor
/// is 0 (none).
pub const FLOOR_MIN_SPREAD: f32 = 0.05;

/// The reason the semantic lane gives when the query's best passage is below the floor.
pub const BELOW_FLOOR: &str = "the index knows none of the query's words and no passage is \
     closer to it than the model's relevance floor for this index";

/// Whether a best score `score` is below the relevance floor `floor` (0: none, see
/// [`VectorSection::floor`]).
pub(crate) fn below(floor: f32, score: f32) -> bool {
    floor > 0.0 && score < floor
}

/// The [`FLOOR_PROBES`] nonsense queries.
pub fn floor_probes() -> Vec<String> {
    // xorshift64*, seeded: the same probes on every machine.
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = |n: u64| {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        (state.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 33) % n
    };
    const CONSONANTS: &[u8] = b"bcdfghjklmnpqrstvwxz";
    const VOWELS: &[u8] = b"aeiouy";
    let mut out = vec!["xqzvbnm plorkish".to_string()];
    while out.len() < FLOOR_PROBES {
        let words = 1 + next(3);
        let query: Vec<String> = (0..words)
            .map(|_| {
                (0..2 + next(3))
                    .flat_map(|_| {
                        [
                            CONSONANTS[next(CONSONANTS.len() as u64) as usize] as char,
                            VOWELS[next(VOWELS.len() as u64) as usize] as char,
                        ]
                    })
                    .collect()
            })
            .collect();
        out.push(query.join(" "));
    }
    out
}

impl VectorSection {
    /// Builds a section from one vector per chunk (normalized here), stored as `encoding`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when a vector's length is not `dim`, `dim` is 0, or a value
    /// is not finite.
    pub fn new<V: AsRef<[f32]>>(
        model_id: &str,
        fingerprint: &str,
        dim: usize,
        vectors: &[V],
        encoding: VectorEncoding,
    ) -> Result<VectorSection> {
        let rows: Vec<Row<'_>> = vectors.iter().map(|v| Row::New(v.as_ref())).collect();
        VectorSection::from_rows(model_id, fingerprint, dim, &rows, encoding)
    }

    /// Builds a section from one [`Row`] per chunk, stored as `encoding`: a new vector is
    /// normalized (and quantized for int8); a stored row is copied as it is stored (an int8
    /// row with its scale), or quantized from its floats for int8, so a row kept through a
    /// rebuild or a page write is the bytes a build from scratch gives.
    ///
    /// # Errors
    /// As [`VectorSection::new`]; a stored row of another dimension is refused too.
    pub(crate) fn from_rows(
        model_id: &str,
        fingerprint: &str,
        dim: usize,
        rows: &[Row<'_>],
        encoding: VectorEncoding,
    ) -> Result<VectorSection> {
        if dim == 0 || dim > u32::MAX as usize {
            return Err(Error::invalid_argument(format!(
                "vector dimension {dim} is out of range"
            )));
        }
        let mut flat: Vec<f32> = Vec::new();
        let mut bytes: Vec<i8> = Vec::new();
        let mut scales: Vec<f32> = Vec::new();
        let mut unit = vec![0f32; dim];
        for (i, row) in rows.iter().enumerate() {
            let v: &[f32] = match *row {
                Row::New(v) => {
                    if v.len() != dim {
                        return Err(Error::invalid_argument(format!(
                            "vector {i} has {} values, expected {dim}",
                            v.len()
                        )));
                    }
                    if v.iter().any(|x| !x.is_finite()) {
                        return Err(Error::invalid_argument(format!(
                            "vector {i} has a value that is not finite"
                        )));
                    }
                    unit.copy_from_slice(v);
                    // Vectors that are unit length already (an embedder's) are kept bit for
                    // bit, so storing them again gives the same bytes.
                    let norm = unit.iter().map(|x| x * x).sum::<f32>().sqrt();
                    if (norm - 1.0).abs() > 1e-5 {
                        crate::embed::normalize(&mut unit);
                    }
                    &unit
                }
                Row::Stored(section, at) => {
                    if section.dim as usize != dim {
                        return Err(Error::invalid_argument(format!(
                            "stored vector {at} has {} values, expected {dim}",
                            section.dim
                        )));
                    }
                    let range = at * dim..(at + 1) * dim;
                    match (&section.values, encoding) {
                        (VectorValues::Int8 { values, scales: s }, VectorEncoding::Int8) => {
                            bytes.extend_from_slice(&values[range]);
                            scales.push(s[at]);
                            continue;
                        }
                        (VectorValues::F32(values), _) => &values[range],
                        (VectorValues::Int8 { .. }, VectorEncoding::F32) => {
                            let stored = section.vector(at).unwrap_or_default();
                            unit.copy_from_slice(&stored);
                            &unit
                        }
                    }
                }
            };
            match encoding {
                VectorEncoding::F32 => flat.extend_from_slice(v),
                VectorEncoding::Int8 => quantize_into(v, &mut bytes, &mut scales),
            }
        }
        let values = match encoding {
            VectorEncoding::F32 => VectorValues::F32(flat),
            VectorEncoding::Int8 => VectorValues::Int8 {
                values: bytes,
                scales,
            },
        };
        Ok(VectorSection {
            model_id: model_id.to_owned(),
            dim: dim as u32,
            fingerprint: fingerprint.to_owned(),
            values,
            prompts: Prompts::default(),
            floor: 0.0,
        })
    }

    /// The section with `prompts` recorded as the ones its passages were embedded after.
    pub fn with_prompts(mut self, prompts: Prompts) -> VectorSection {
        self.prompts = prompts;
        self
    }

    /// This section's model, dimension, prompts and floor without its rows (the vectors are
    /// not copied).
    pub(crate) fn without_rows(&self) -> VectorSection {
        VectorSection {
            model_id: self.model_id.clone(),
            dim: self.dim,
            fingerprint: self.fingerprint.clone(),
            values: match &self.values {
                VectorValues::F32(_) => VectorValues::F32(Vec::new()),
                VectorValues::Int8 { .. } => VectorValues::Int8 {
                    values: Vec::new(),
                    scales: Vec::new(),
                },
            },
            prompts: self.prompts.clone(),
            floor: self.floor,
        }
    }

    /// The best score of any of these vectors for the unit query vector `q` (`None`: no rows).
    pub(crate) fn best_score(&self, q: &[f32]) -> Option<f32> {
        self.search(q, None, None, 1, None).first().map(|&(_, s)| s)
    }

    /// The section with its relevance floor set (see [`VectorSection::floor`]).
    pub fn with_floor(mut self, floor: f32) -> VectorSection {
        self.floor = floor;
        self
    }

    /// Whether a best score `score` is below this index's relevance floor (see
    /// [`VectorSection::floor`]). A floor of 0 is none: vectors brought without one may score
    /// below 0 and are still above it.
    pub fn below_floor(&self, score: f32) -> bool {
        below(self.floor, score)
    }

    /// How the values are stored.
    pub fn encoding(&self) -> VectorEncoding {
        match self.values {
            VectorValues::F32(_) => VectorEncoding::F32,
            VectorValues::Int8 { .. } => VectorEncoding::Int8,
        }
    }

    /// Number of vectors.
    pub fn len(&self) -> usize {
        let dim = (self.dim as usize).max(1);
        match &self.values {
            VectorValues::F32(v) => v.len() / dim,
            VectorValues::Int8 { scales, .. } => scales.len(),
        }
    }

    /// Whether the section holds no vector.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Vector `i` as floats (dequantized for int8); `None` for `i` outside the section.
    pub fn vector(&self, i: usize) -> Option<Vec<f32>> {
        if i >= self.len() {
            return None;
        }
        let mut out = vec![0f32; self.dim as usize];
        self.row_into(i, &mut out);
        Some(out)
    }

    /// Checks that `values` (a blob's vector section, which the blob's head describes as
    /// `self`) are exactly one finite vector of this section's dimension per chunk, and that
    /// this section's floor is in `0..=1`.
    pub(crate) fn validate_values(&self, values: &VectorValues, chunks: usize) -> Result<()> {
        let dim = self.dim as usize;
        let expected = dim.checked_mul(chunks);
        let (n_values, scales_ok) = match values {
            VectorValues::F32(v) => (v.len(), v.iter().all(|x| x.is_finite())),
            VectorValues::Int8 { values, scales } => (
                values.len(),
                scales.len() == chunks && scales.iter().all(|s| s.is_finite()),
            ),
        };
        if !(self.floor.is_finite() && (0.0..=1.0).contains(&self.floor)) {
            return Err(Error::corrupt(format!(
                "semantic floor {} is not in 0..=1",
                crate::data::error::show_f32(self.floor)
            )));
        }
        if dim == 0 || expected != Some(n_values) || !scales_ok {
            return Err(Error::corrupt(format!(
                "vector section holds {n_values} values for {chunks} chunks of dimension {dim}"
            )));
        }
        Ok(())
    }

    /// The `n` vectors nearest to `query` (a unit vector of `dim` values) by cosine, best
    /// first, as (vector index, cosine); ties go to the lower index. One exact pass over every
    /// vector.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when `query` does not have `dim` values.
    pub fn nearest(&self, query: &[f32], n: usize) -> Result<Vec<(u32, f32)>> {
        if query.len() != self.dim as usize {
            return Err(Error::invalid_argument(format!(
                "query has {} values, the vectors have {}",
                query.len(),
                self.dim
            )));
        }
        Ok(self.search(query, None, None, n, None))
    }

    /// Row `i` as floats into `out` (`dim` long; dequantized for int8).
    pub(crate) fn row_into(&self, i: usize, out: &mut [f32]) {
        let dim = self.dim as usize;
        match &self.values {
            VectorValues::F32(v) => out.copy_from_slice(&v[i * dim..(i + 1) * dim]),
            VectorValues::Int8 { values, scales } => {
                for (o, &q) in out.iter_mut().zip(&values[i * dim..(i + 1) * dim]) {
                    *o = f32::from(q) * scales[i];
                }
            }
        }
    }

    /// The cosine of row `i` with `query`, as the exact scan computes it.
    fn score(&self, i: usize, query: &[f32]) -> f32 {
        let dim = self.dim as usize;
        match &self.values {
            VectorValues::F32(v) => dot(&v[i * dim..(i + 1) * dim], query),
            VectorValues::Int8 { values, scales } => {
                dot_i8(&values[i * dim..(i + 1) * dim], query) * scales[i]
            }
        }
    }

    /// The `n` best chunks by cosine with `query` (a unit vector of `dim` values), among the
    /// chunks `mask` allows; with `groups`, the best chunk of each of the `n` best groups
    /// (pages). Ties go to the lower chunk index. With `codes` (the section's, see
    /// [`codes`]) only the chunks with the [`codes::depth`] nearest codes are
    /// scored; without, every chunk.
    pub(crate) fn search(
        &self,
        query: &[f32],
        mask: Option<Mask<'_>>,
        groups: Option<(&[u32], usize)>,
        n: usize,
        codes: Option<&Codes>,
    ) -> Vec<(u32, f32)> {
        let allowed = |c: &usize| mask.is_none_or(|m| m[*c]);
        let scored = |c: usize| (c, self.score(c, query));
        let keys = match codes {
            Some(codes) => {
                let rows = codes.nearest(query, mask, codes::depth(n, self.len()));
                top_scores(rows.into_iter().map(|c| scored(c as usize)), groups, n)
            }
            None => top_scores((0..self.len()).filter(allowed).map(scored), groups, n),
        };
        keys.into_iter().map(unkey).collect()
    }
}

/// The keys of the `n` best scores (`(chunk, score)` pairs), or of the best chunk of the `n`
/// best groups: in a slot per group, or in a map when there are far fewer chunks than groups
/// (the rows the codes chose among a million pages).
fn top_scores(
    scores: impl Iterator<Item = (usize, f32)>,
    groups: Option<(&[u32], usize)>,
    n: usize,
) -> Vec<u64> {
    let keyed = scores.map(|(c, s)| (c, key(c as u32, s)));
    match groups {
        None => top_keys(keyed.map(|(_, k)| k), n),
        Some((groups, n_groups)) if keyed.size_hint().1.is_some_and(|c| c < n_groups / 8) => {
            let mut best: HashMap<u32, u64, BuildHash> = HashMap::default();
            for (c, k) in keyed {
                let g = best.entry(groups[c]).or_insert(0);
                *g = (*g).max(k);
            }
            top_keys(best.into_values(), n)
        }
        Some((groups, n_groups)) => {
            let mut best = vec![0u64; n_groups];
            for (c, k) in keyed {
                let g = &mut best[groups[c] as usize];
                *g = (*g).max(k);
            }
            top_keys(best.into_iter().filter(|&k| k != 0), n)
        }
    }
}

/// Per-vector symmetric quantization of `row` (scale = max |x| / 127), appended to `values`
/// and `scales`.
fn quantize_into(row: &[f32], values: &mut Vec<i8>, scales: &mut Vec<f32>) {
    let max = row.iter().fold(0f32, |m, x| m.max(x.abs()));
    let scale = if max > 0.0 { max / 127.0 } else { 1.0 };
    scales.push(scale);
    values.extend(
        row.iter()
            .map(|x| (x / scale).round().clamp(-127.0, 127.0) as i8),
    );
}

/// Lanes of independent partial sums: wide enough for the compiler to keep a SIMD register
/// per lane group without reassociating floating-point additions.
const LANES: usize = 16;

/// Dot product of two equally long slices.
#[inline]
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0f32; LANES];
    let (ca, cb) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for i in 0..LANES {
            acc[i] += x[i] * y[i];
        }
    }
    let tail: f32 = ra.iter().zip(rb).map(|(x, y)| x * y).sum();
    acc.iter().sum::<f32>() + tail
}

/// Dot product of quantized values with floats (the caller applies the scale).
#[inline]
fn dot_i8(a: &[i8], b: &[f32]) -> f32 {
    let mut acc = [0f32; LANES];
    let (ca, cb) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for i in 0..LANES {
            acc[i] += f32::from(x[i]) * y[i];
        }
    }
    let tail: f32 = ra.iter().zip(rb).map(|(&x, y)| f32::from(x) * y).sum();
    acc.iter().sum::<f32>() + tail
}

/// Packs a score and chunk into a key whose integer order is (score desc, chunk asc); never 0.
fn key(c: u32, score: f32) -> u64 {
    let bits = score.to_bits();
    // Flip so that the unsigned order of the bits is the numeric order of the floats.
    let ordered = if bits & 0x8000_0000 != 0 {
        !bits
    } else {
        bits | 0x8000_0000
    };
    (u64::from(ordered) << 32) | u64::from(!c)
}

fn unkey(k: u64) -> (u32, f32) {
    let ordered = (k >> 32) as u32;
    let bits = if ordered & 0x8000_0000 != 0 {
        ordered & 0x7fff_ffff
    } else {
        !ordered
    };
    (!(k as u32), f32::from_bits(bits))
}

/// Why the semantic lane did not run for an index without vectors.
pub(crate) const NO_VECTORS: &str =
    "this index has no embeddings (build it with a model, or set vectors)";
/// Why the semantic lane did not run when the index has vectors but the query has none.
pub(crate) const NO_QUERY_VECTOR: &str = "no embedder attached and no query vector given";

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    fn section(vectors: &[Vec<f32>], encoding: VectorEncoding) -> VectorSection {
        VectorSection::new("m", "fp", vectors[0].len(), vectors, encoding).unwrap()
    }

    #[test]
    fn int8_values_read_as_bytes_are_the_values_written_as_a_sequence() {
        let values = VectorValues::Int8 {
            values: (-128i8..=127).chain([0, -1, 1]).collect(),
            scales: vec![0.5, 2.0],
        };
        // postcard writes them as a sequence: a length, then one byte each.
        let bytes = postcard::to_allocvec(&values).unwrap();
        assert_eq!(
            &bytes[..4],
            [1, 131, 2, 128],
            "the variant, the length 259, -128"
        );
        assert_eq!(
            postcard::from_bytes::<VectorValues>(&bytes).unwrap(),
            values
        );
        let json = serde_json::to_string(&values).unwrap();
        assert_eq!(serde_json::from_str::<VectorValues>(&json).unwrap(), values);
        // A length past the bytes there are is an error, not a panic.
        assert!(postcard::from_bytes::<VectorValues>(&bytes[..100]).is_err());
    }

    #[test]
    fn keys_order_like_scores_then_lower_chunk() {
        let scores = [-1.0f32, -0.5, -0.0, 0.0, 0.25, 1.0];
        let keys: Vec<u64> = scores.iter().map(|&s| key(7, s)).collect();
        assert!(keys.windows(2).all(|w| w[0] <= w[1]));
        assert!(key(1, 0.5) > key(2, 0.5));
        for s in scores {
            assert_eq!(unkey(key(3, s)), (3, s));
        }
    }

    #[test]
    fn dot_matches_the_naive_sum_for_every_length() {
        for len in [1usize, 15, 16, 17, 384, 385] {
            let a: Vec<f32> = (0..len).map(|i| (i as f32 * 0.37).sin()).collect();
            let b: Vec<f32> = (0..len).map(|i| (i as f32 * 0.11).cos()).collect();
            let naive: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
            assert!((dot(&a, &b) - naive).abs() < 1e-4, "len {len}");
        }
    }

    #[test]
    fn search_ranks_by_cosine_with_masks_and_groups() {
        let v = vec![
            vec![1.0, 0.0, 0.0],
            vec![0.8, 0.6, 0.0],
            vec![0.0, 1.0, 0.0],
            vec![-1.0, 0.0, 0.0],
        ];
        for enc in [VectorEncoding::F32, VectorEncoding::Int8] {
            let s = section(&v, enc);
            let q = [1.0, 0.0, 0.0];
            let ids: Vec<u32> = s
                .search(&q, None, None, 10, None)
                .iter()
                .map(|h| h.0)
                .collect();
            assert_eq!(ids, [0, 1, 2, 3], "{enc:?}");
            let mask = [false, true, true, true];
            let top = s.search(&q, Some(&mask), None, 2, None);
            assert_eq!(top[0].0, 1);
            assert!((top[0].1 - 0.8).abs() < 0.01);
            // Chunks 0 and 1 are one page, 2 and 3 another: one hit per page, its best chunk.
            let groups = [0u32, 0, 1, 1];
            let pages = s.search(&q, None, Some((&groups, 2)), 10, None);
            assert_eq!(pages.iter().map(|h| h.0).collect::<Vec<_>>(), [0, 2]);
        }
    }

    /// Unit vectors in clusters around a shared direction, as a model's are (xorshift).
    pub(crate) fn clustered(n: usize, dim: usize) -> Vec<Vec<f32>> {
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 40) as f32 / (1u64 << 24) as f32 - 0.5
        };
        let centers: Vec<Vec<f32>> = (0..40)
            .map(|_| (0..dim).map(|_| next()).collect())
            .collect();
        (0..n)
            .map(|i| {
                let c = &centers[i % centers.len()];
                (0..dim).map(|d| 0.3 + c[d] + 0.5 * next()).collect()
            })
            .collect()
    }

    #[test]
    fn the_codes_path_scores_its_rows_exactly_and_finds_the_exact_best() {
        let n = 12_000;
        let vs = clustered(n, 48);
        let groups: Vec<u32> = (0..n as u32).map(|c| c / 3).collect();
        let mask: Vec<bool> = (0..n).map(|c| c % 5 != 0).collect();
        for encoding in [VectorEncoding::F32, VectorEncoding::Int8] {
            let s = section(&vs, encoding);
            let codes = Codes::new(&s);
            let (mut found, mut asked) = (0, 0);
            for q in (0..n).step_by(997) {
                let query = s.vector(q).unwrap();
                let scores: HashMap<u32, f32> =
                    s.search(&query, None, None, n, None).into_iter().collect();
                for (mask, groups) in [
                    (None, None),
                    (Some(&mask[..]), None),
                    (None, Some((&groups[..], n / 3))),
                ] {
                    let exact = s.search(&query, mask, groups, 10, None);
                    let near = s.search(&query, mask, groups, 10, Some(&codes));
                    assert_eq!(near.len(), 10);
                    // Every row the codes path gives is one the exact scan allows, with its
                    // exact score; the best is the exact best.
                    for &(c, score) in &near {
                        assert!(mask.is_none_or(|m| m[c as usize]));
                        assert_eq!(score, scores[&c]);
                    }
                    assert_eq!(near[0], exact[0], "{encoding:?} query {q}");
                    if let Some((g, _)) = groups {
                        let mut pages: Vec<u32> = near.iter().map(|h| g[h.0 as usize]).collect();
                        pages.dedup();
                        assert_eq!(pages.len(), 10, "one chunk a page");
                    }
                    found += near.iter().filter(|h| exact.contains(h)).count();
                    asked += exact.len();
                }
            }
            // 2,048 of 12,000 rows rescored: nearly all of the exact top 10.
            assert!(
                found as f64 >= 0.95 * asked as f64,
                "{encoding:?}: {found} of {asked}"
            );
            // With every row rescored the codes path is the exact scan.
            let all = Codes::new(&section(&vs[..2000], encoding));
            let small = section(&vs[..2000], encoding);
            let query = small.vector(7).unwrap();
            assert_eq!(
                small.search(&query, None, None, 50, Some(&all)),
                small.search(&query, None, None, 50, None)
            );
        }
    }

    #[test]
    fn only_large_sections_get_codes() {
        let vs = clustered(codes::CODES_FROM, 4);
        assert!(Codes::of(&section(&vs[..vs.len() - 1], VectorEncoding::Int8)).is_none());
        assert!(Codes::of(&section(&vs, VectorEncoding::Int8)).is_some());
    }

    #[test]
    fn vectors_are_normalized_and_int8_stays_close() {
        let v = vec![vec![3.0, 4.0], vec![0.0, 0.0]];
        let s = section(&v, VectorEncoding::F32);
        assert_eq!(s.vector(0).unwrap(), [0.6, 0.8]);
        assert_eq!(s.vector(2), None);
        assert_eq!(s.vector(usize::MAX), None);
        assert_eq!(s.vector(1).unwrap(), [0.0, 0.0]);
        let q = section(&v, VectorEncoding::Int8);
        assert!(dot(&q.vector(0).unwrap(), &[0.6, 0.8]) > 0.999);
        assert_eq!(q.len(), 2);
    }

    #[test]
    fn bad_vectors_are_rejected() {
        let e = VectorSection::new("m", "f", 2, &[vec![1.0]], VectorEncoding::F32);
        assert_eq!(e.unwrap_err().code(), "invalid_argument");
        let e = VectorSection::new("m", "f", 1, &[vec![f32::NAN]], VectorEncoding::F32);
        assert_eq!(e.unwrap_err().code(), "invalid_argument");
        let s = section(&[vec![1.0, 0.0]], VectorEncoding::Int8);
        assert!(s.validate_values(&s.values, 1).is_ok());
        assert_eq!(
            s.validate_values(&s.values, 2).unwrap_err().code(),
            "corrupt_index"
        );
    }
}
