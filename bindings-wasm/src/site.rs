//! `SiteLinks`: a hit's link on a static docs site (`wikidex site`'s bundle): the URL of the
//! page its generator built and the anchor of the heading the hit is under, by the core's
//! rules ([`wikidex::site::SiteLinks`]).

use std::collections::BTreeMap;

use js_sys::{Array, Object, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::error::OrThrow;
use crate::invalid;

/// The links of a site, from its `site.json`'s `links`.
#[wasm_bindgen(js_name = SiteLinks)]
pub struct JsSiteLinks {
    inner: wikidex::site::SiteLinks,
}

#[wasm_bindgen(js_class = SiteLinks)]
impl JsSiteLinks {
    /// Reads `site.json`'s `links` (the object: `layout`, `pattern`, `anchors`, `pages`).
    /// Throws `invalid_argument` when they are not links.
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "SiteLinkRules")] links: JsValue,
    ) -> Result<JsSiteLinks, JsValue> {
        let field = |name: &str| -> Result<Option<String>, JsValue> {
            let v = Reflect::get(&links, &name.into()).unwrap_or(JsValue::UNDEFINED);
            if v.is_undefined() || v.is_null() {
                return Ok(None);
            }
            v.as_string().map(Some).ok_or_else(|| {
                crate::error::js_error(&invalid(format!("site links: `{name}` is not a string")))
            })
        };
        if !links.is_object() {
            return Err(crate::error::js_error(&invalid(
                "site links: not an object".into(),
            )));
        }
        let mut pages = BTreeMap::new();
        let listed = Reflect::get(&links, &"pages".into()).unwrap_or(JsValue::UNDEFINED);
        if listed.is_object() {
            for entry in Object::entries(listed.unchecked_ref::<Object>()) {
                let pair: Array = entry.unchecked_into();
                match (pair.get(0).as_string(), pair.get(1).as_string()) {
                    (Some(path), Some(url)) => {
                        pages.insert(path, url);
                    }
                    _ => {
                        return Err(crate::error::js_error(&invalid(
                            "site links: a page's URL is not a string".into(),
                        )))
                    }
                }
            }
        } else if !(listed.is_undefined() || listed.is_null()) {
            return Err(crate::error::js_error(&invalid(
                "site links: `pages` is not an object".into(),
            )));
        }
        let (layout, pattern, anchors) = (field("layout")?, field("pattern")?, field("anchors")?);
        wikidex::site::SiteLinks::from_parts(
            layout.as_deref(),
            pattern.as_deref(),
            anchors.as_deref(),
            pages,
        )
        .map(|inner| JsSiteLinks { inner })
        .or_throw()
    }

    /// The link of a hit (its `path`, `title` and `headings`): its page's URL relative to
    /// the site's root (absolute when the site's rule makes it so), with `#anchor` of the
    /// innermost heading unless that heading is the page's title.
    pub fn href(&self, path: &str, title: &str, headings: Vec<String>) -> String {
        self.inner.href(path, title, &headings)
    }
}
