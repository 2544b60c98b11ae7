//! Plain data: errors with their stable codes, the configuration, the records a build
//! reports, offset units, dates, the sort every surface shares, the options every binding
//! parses, and giving freed memory back.

pub mod config;
pub mod date;
pub mod error;
pub(crate) mod memory;
pub mod offset;
pub mod options;
pub(crate) mod parallel;
pub mod record;
pub mod sort;
