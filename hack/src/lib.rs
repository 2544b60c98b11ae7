//! Deliberately empty: see `Cargo.toml`.
