//! The semantic lane in the browser (feature `model`, the `pkg-full` module): an ONNX sentence
//! model run by the core's `OnnxEmbedder` (tract and tokenizers compiled to wasm), loaded from
//! the bytes of the model file and its `tokenizer.json` that the page fetched. Attached to an
//! index, it embeds each query after the index's stored query prompt, as on every surface.

use std::sync::Arc;

use js_sys::Float32Array;
use serde::Deserialize;
use wasm_bindgen::prelude::*;
use wikidex::embed::{Embedder, OnnxEmbedder, OnnxOptions, Prompts};
use wikidex::PromptKind;

use crate::error::OrThrow;
use crate::{absent_if_none, bytes, count, opt_string, record, strings, CoreResult};

/// `Model.fromBytes`' options (`ModelBytesOptions` in the types), named as the Node binding
/// names its model options; every field may be left out.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ModelOptions {
    /// The id an index built with this model stores (default `onnx-model`).
    #[serde(default)]
    model_id: Option<String>,
    /// Longest input in tokens (default: the tokenizer's truncation, else 512).
    #[serde(default)]
    max_length: Option<usize>,
    /// Texts per model call (default 32).
    #[serde(default)]
    batch_size: Option<usize>,
    /// What to put before queries and passages when `embed` is asked for a kind (an index
    /// uses the prompts stored with its vectors instead).
    #[serde(default)]
    prompts: Option<Prompts>,
}

fn load(model: &JsValue, tokenizer: &JsValue, options: &JsValue) -> CoreResult<OnnxEmbedder> {
    let o: ModelOptions = crate::options("model options", options)?;
    let mut opts = OnnxOptions {
        max_length: o.max_length,
        model_id: o.model_id,
        prompts: o.prompts,
        ..OnnxOptions::default()
    };
    if let Some(n) = o.batch_size {
        opts.batch_size = n;
    }
    OnnxEmbedder::from_bytes(&bytes(model)?, &bytes(tokenizer)?, opts)
}

/// An ONNX sentence model (all-MiniLM-L6-v2, its int8 variant, or any sentence-transformers
/// export) with its `tokenizer.json`, run on the calling thread.
#[wasm_bindgen(js_name = Model)]
pub struct JsModel {
    pub(crate) inner: Arc<OnnxEmbedder>,
}

#[wasm_bindgen(js_class = Model)]
impl JsModel {
    /// Loads a model from the bytes of its ONNX file and of its `tokenizer.json`. `options`:
    /// `modelId`, `maxLength`, `batchSize`, `prompts` (`{query, passage}`).
    #[wasm_bindgen(js_name = fromBytes)]
    pub fn from_bytes(
        #[wasm_bindgen(unchecked_param_type = "Uint8Array | ArrayBuffer")] model: JsValue,
        #[wasm_bindgen(unchecked_param_type = "Uint8Array | ArrayBuffer")] tokenizer: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "ModelBytesOptions")] options: Option<
            JsValue,
        >,
    ) -> Result<JsModel, JsValue> {
        let inner = load(&model, &tokenizer, &absent_if_none(options)).or_throw()?;
        Ok(JsModel {
            inner: Arc::new(inner),
        })
    }

    /// The id stored in an index built with this model.
    #[wasm_bindgen(getter)]
    pub fn id(&self) -> String {
        self.inner.model_id().to_string()
    }

    /// The vectors' dimension.
    #[wasm_bindgen(getter)]
    pub fn dim(&self) -> u32 {
        count(self.inner.dim())
    }

    /// The fingerprint of the model file (what an index's vectors must have been made with).
    #[wasm_bindgen(getter)]
    pub fn fingerprint(&self) -> String {
        self.inner.fingerprint().to_string()
    }

    /// The prompts given in the options (empty strings for none).
    #[wasm_bindgen(getter, unchecked_return_type = "ModelPrompts")]
    pub fn prompts(&self) -> Result<JsValue, JsValue> {
        record(self.inner.prompts()).or_throw()
    }

    /// Embeds texts (L2-normalized); `prompt` (`"query"` or `"passage"`) puts the model's
    /// prompt of that kind before each text.
    #[wasm_bindgen(unchecked_return_type = "Float32Array[]")]
    pub fn embed(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string[]")] texts: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "'query' | 'passage'")] prompt: Option<
            JsValue,
        >,
    ) -> Result<JsValue, JsValue> {
        (|| {
            let texts = strings("texts", &texts)?;
            let kind = opt_string("prompt", &absent_if_none(prompt))?
                .as_deref()
                .map(PromptKind::parse)
                .transpose()?;
            let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
            let rows = self.inner.embed_as(&texts, kind)?;
            Ok(rows
                .iter()
                .map(|r| JsValue::from(Float32Array::from(r.as_slice())))
                .collect::<js_sys::Array>()
                .into())
        })()
        .or_throw()
    }
}
