//! `SiteLinks`: a hit's link on a static docs site (`wikidex site`'s bundle): the URL of the
//! page its generator built and the anchor of the heading the hit is under, by the core's
//! rules ([`wikidex::site::SiteLinks`]).

use wasm_bindgen::prelude::*;

use crate::error::OrThrow;
use crate::stringify;

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
        stringify("site links", &links)
            .and_then(|json| wikidex::site::SiteLinks::from_json(&json))
            .map(|inner| JsSiteLinks { inner })
            .or_throw()
    }

    /// The link of a hit (its `path`, `title` and `headings`): its page's URL relative to
    /// the site's root (absolute when the site's rule makes it so), with `#anchor` of the
    /// innermost heading unless that heading is the page's title.
    pub fn href(&self, path: &str, title: &str, headings: Vec<String>) -> String {
        self.inner.href(path, title, &headings)
    }

    /// The headings a hit is shown under (its `title` and `headings`), as the site renders
    /// them, without the page's title when it is the outermost.
    pub fn trail(&self, title: &str, headings: Vec<String>) -> Vec<String> {
        wikidex::site::SiteLinks::trail(title, &headings)
    }
}
