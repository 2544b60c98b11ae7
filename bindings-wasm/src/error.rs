//! Core errors as JavaScript `Error`s: `message` is the core's, `code` its stable code and
//! `details` an object with what a caller acts on (one error mapping per binding).

use js_sys::{Object, Reflect, JSON};
use wasm_bindgen::JsValue;

/// The JavaScript error for a core error, to return as `Err` (wasm-bindgen throws it).
pub fn js_error(e: &wikidex::Error) -> JsValue {
    let err = js_sys::Error::new(&e.to_string());
    let details = JSON::parse(&e.details().to_string()).unwrap_or_else(|_| Object::new().into());
    // Setting a property on a fresh `Error` cannot fail; a failure would only leave it out.
    let _ = Reflect::set(&err, &"code".into(), &e.code().into());
    let _ = Reflect::set(&err, &"details".into(), &details);
    err.into()
}

/// A core `Result` with its error made a JavaScript error.
pub trait OrThrow<T> {
    /// The value, or the core error as a JavaScript error.
    fn or_throw(self) -> Result<T, JsValue>;
}

impl<T> OrThrow<T> for wikidex::Result<T> {
    fn or_throw(self) -> Result<T, JsValue> {
        self.map_err(|e| js_error(&e))
    }
}
