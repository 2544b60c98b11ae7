//! Core errors as JavaScript `Error`s: `message` is the core's, `code` its stable code and
//! `details` an object with what a caller acts on (one error mapping per binding).

use napi::bindgen_prelude::JsValue;
use napi::{Env, Status};

/// The JavaScript error for a core error, to return as `Err` (napi throws it, or rejects the
/// promise with it).
pub fn js_error(env: &Env, e: &wikidex::Error) -> napi::Error {
    let built = (|| {
        let mut obj = env.create_error(napi::Error::new(Status::GenericFailure, e.to_string()))?;
        obj.set("code", e.code())?;
        obj.set("details", e.details())?;
        Ok::<_, napi::Error>(napi::Error::from(obj.to_unknown()))
    })();
    built.unwrap_or_else(|failed| failed)
}

/// A core `Result` with its error made a JavaScript error.
pub trait OrThrow<T> {
    /// The value, or the core error as a JavaScript error.
    fn or_throw(self, env: &Env) -> napi::Result<T>;
}

impl<T> OrThrow<T> for wikidex::Result<T> {
    fn or_throw(self, env: &Env) -> napi::Result<T> {
        self.map_err(|e| js_error(env, &e))
    }
}
