//! The front: what a caller holds. [`Session`](session::Session) owns an index and what a
//! caller brings to it; [`build`](mod@build) is the build plan and the sync of a blob with its
//! folder. Every binding wraps these.

pub mod build;
pub mod builder;
pub mod eval;
// `eval::load_collection` reads files in every build; the walk's readers serve `fs` alone.
#[cfg_attr(not(feature = "fs"), allow(dead_code))]
pub mod file;
pub mod querylog;
pub mod session;
pub mod shared;
pub mod site;
pub mod tools;
pub mod walk;
