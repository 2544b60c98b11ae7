//! Text: the page contract (frontmatter, keys, scopes, links), chunks, analysis (normalize,
//! segment, filter, stem, the same way for chunks and queries), the marks of the Markdown a
//! page is written in, the language it is written in, and raw source documents.

pub mod analyze;
pub mod chunk;
pub mod language;
pub mod marks;
pub mod page;
pub mod raw;
