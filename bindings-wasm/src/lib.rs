//! Browser bindings (wasm-bindgen). Not started yet: see the README's status list.
