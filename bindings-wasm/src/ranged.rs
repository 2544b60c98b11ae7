//! `RangedIndex`: a blob read in parts, for a site whose blob is too big
//! to download before the first result. The core says which byte ranges a search needs (the
//! error `not_loaded`, `details.ranges`); the page fetches them with HTTP range requests and
//! hands them over with `supply` (`ranged.js` beside the module does that loop).

use js_sys::Array;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wikidex::OffsetUnit;

use crate::error::OrThrow;
use crate::{bytes, invalid, CoreResult};

/// A byte offset from JavaScript: a whole number from 0 to 2^53.
fn offset(what: &str, v: &JsValue) -> CoreResult<u64> {
    match v.as_f64() {
        Some(n) if n >= 0.0 && n.fract() == 0.0 && n <= 9_007_199_254_740_992.0 => Ok(n as u64),
        _ => Err(invalid(format!("{what} must be a whole number of bytes"))),
    }
}

/// An index read in parts from a blob (see the module docs).
#[wasm_bindgen(js_name = RangedIndex)]
pub struct JsRangedIndex {
    inner: wikidex::RangedIndex,
}

#[wasm_bindgen(js_class = RangedIndex)]
impl JsRangedIndex {
    /// How many bytes from the start of a blob its head takes, from the blob's first 56 bytes
    /// (or more). Throws `incompatible_format` for a format version this build does not read.
    #[wasm_bindgen(js_name = headEnd)]
    pub fn head_end(
        #[wasm_bindgen(unchecked_param_type = "Uint8Array | ArrayBuffer")] prefix: JsValue,
    ) -> Result<f64, JsValue> {
        bytes(&prefix)
            .and_then(|b| wikidex::RangedIndex::head_end(&b))
            .map(|n| n as f64)
            .or_throw()
    }

    /// Opens a blob from its first bytes (at least up to `headEnd`); whole
    /// sections after the head in them are kept.
    pub fn open(
        #[wasm_bindgen(unchecked_param_type = "Uint8Array | ArrayBuffer")] data: JsValue,
    ) -> Result<JsRangedIndex, JsValue> {
        let mut inner = bytes(&data)
            .and_then(|b| wikidex::RangedIndex::open(&b))
            .or_throw()?;
        inner.set_offset_unit(OffsetUnit::Utf16);
        Ok(JsRangedIndex { inner })
    }

    /// Hands over the blob's bytes from byte `start`: one or more whole sections, as a
    /// `not_loaded` error's `details.ranges` names them.
    pub fn supply(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "number")] start: JsValue,
        #[wasm_bindgen(unchecked_param_type = "Uint8Array | ArrayBuffer")] data: JsValue,
    ) -> Result<(), JsValue> {
        (|| {
            let start = offset("start", &start)?;
            self.inner.supply(start, &bytes(&data)?)
        })()
        .or_throw()
    }

    /// Hands over several ranges at once: `ranges` is an array of `[start, bytes]` pairs,
    /// each as `supply` takes it (what one `not_loaded` error names). The dictionary is made
    /// again once, not once a range; a bad range loads nothing.
    #[wasm_bindgen(js_name = supplyMany)]
    pub fn supply_many(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "[number, Uint8Array | ArrayBuffer][]")]
        ranges: JsValue,
    ) -> Result<(), JsValue> {
        (|| {
            let not_pairs =
                || invalid("ranges must be an array of [start, bytes] pairs".to_string());
            let ranges = ranges
                .dyn_ref::<Array>()
                .ok_or_else(not_pairs)?
                .iter()
                .map(|pair| {
                    let pair = pair.dyn_into::<Array>().map_err(|_| not_pairs())?;
                    if pair.length() != 2 {
                        return Err(not_pairs());
                    }
                    Ok((offset("start", &pair.get(0))?, bytes(&pair.get(1))?))
                })
                .collect::<CoreResult<Vec<(u64, Vec<u8>)>>>()?;
            let ranges: Vec<(u64, &[u8])> =
                ranges.iter().map(|(s, b)| (*s, b.as_slice())).collect();
            self.inner.supply_many(&ranges)
        })()
        .or_throw()
    }

    /// Searches as `Index.search` does, with the same answers; throws `not_loaded` with
    /// `details.ranges` (`[start, end)` byte offsets) while parts it reads are not loaded.
    #[wasm_bindgen(unchecked_return_type = "SearchResults")]
    pub fn search(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] query: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "SearchOptions")] options: Option<JsValue>,
    ) -> Result<JsValue, JsValue> {
        crate::search_record(&query, options, |q, o| self.inner.search(q, o))
    }

    /// A page's whole record, as `Index.pageRecord`; throws `not_loaded` until its part and
    /// the graph are loaded. Not in the search module (feature `page-record`).
    #[cfg(feature = "page-record")]
    #[wasm_bindgen(js_name = pageRecord, unchecked_return_type = "PageRecord")]
    pub fn page_record(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] key: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "string | null")] scope: Option<JsValue>,
    ) -> Result<JsValue, JsValue> {
        crate::page_record(&key, scope, |k, s| self.inner.page_record(k, s))
    }

    /// Number of pages.
    #[wasm_bindgen(getter = pageCount)]
    pub fn page_count(&self) -> u32 {
        crate::count(self.inner.page_count())
    }

    /// Number of page chunks.
    #[wasm_bindgen(getter = chunkCount)]
    pub fn chunk_count(&self) -> u32 {
        crate::count(self.inner.chunk_count())
    }

    /// Every page's id, in the blob's order (from the head).
    #[wasm_bindgen(js_name = pageIds)]
    pub fn page_ids(&self) -> Vec<String> {
        self.inner.page_ids()
    }

    /// The byte ranges not loaded yet, `[start, end)` each.
    #[wasm_bindgen(unchecked_return_type = "Array<[number, number]>")]
    pub fn missing(&self) -> Array {
        self.inner
            .missing()
            .into_iter()
            .map(|[s, e]| Array::of2(&(s as f64).into(), &(e as f64).into()))
            .collect()
    }

    /// Bytes of the blob loaded so far (the head included).
    #[wasm_bindgen(getter = loadedBytes)]
    pub fn loaded_bytes(&self) -> f64 {
        self.inner.loaded_bytes() as f64
    }

    /// The blob's length in bytes.
    #[wasm_bindgen(getter = blobLength)]
    pub fn blob_length(&self) -> f64 {
        self.inner.blob_len() as f64
    }
}
