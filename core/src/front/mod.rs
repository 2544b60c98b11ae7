//! The front: what a caller holds. [`Session`](session::Session) owns an index and what a
//! caller brings to it; [`build`](mod@build) is the build plan and the sync of a blob with its
//! folder. Every binding wraps these.

pub mod build;
pub mod session;
