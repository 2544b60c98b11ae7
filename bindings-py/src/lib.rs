//! Python bindings (pyo3 + maturin). Not started yet: see the README's status list.
