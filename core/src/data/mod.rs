//! Plain data: errors with their stable codes, the configuration, the records a build
//! reports, offset units, dates, the sort every surface shares, and the options every binding
//! parses.

pub mod config;
pub mod date;
pub mod error;
pub mod offset;
pub mod options;
pub(crate) mod parallel;
pub mod record;
pub mod sort;
