//! Node bindings (napi-rs). Not started yet: see the README's status list.
