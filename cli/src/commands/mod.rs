//! One module per command (`page` also holds `chunk`): each takes its arguments, calls the
//! library and prints the result; [`common`] holds what several of them share.

mod build;
mod common;
mod embed;
mod eval;
mod insights;
mod lint;
mod mcp;
mod neighbors;
mod page;
mod search;
mod site;
mod sync;
mod tool;
mod verify;

pub(crate) use build::{build, merge};
pub(crate) use embed::embed;
pub(crate) use eval::evaluate;
pub(crate) use insights::insights;
pub(crate) use lint::lint;
pub(crate) use mcp::mcp;
pub(crate) use neighbors::neighbors;
pub(crate) use page::{chunk, page};
pub(crate) use search::search;
pub(crate) use site::site;
pub(crate) use sync::sync;
pub(crate) use tool::tool;
pub(crate) use verify::verify;
