//! The raw layer: the source documents wiki pages were compiled from,
//! indexed beside the pages as immutable, addressable chunks.
//!
//! A file under `raw/` in the wiki root (or `wiki/raw/`, or any file of the folder given to
//! [`IndexBuilder::add_raw_dir`](crate::IndexBuilder::add_raw_dir)) is a raw document. It is
//! taken verbatim (no frontmatter is read, its links are not graph edges), chunked like a page,
//! and addressed as `raw/<path>::chunk_<i>`, where `<path>` is the file's path under `raw/`
//! without its extension, each folder and the file stem normalized like a page key:
//! `raw/Slack/2024-03-12 incident.md` has chunks `raw/slack/2024-03-12-incident::chunk_0`, ...
//!
//! Raw documents are not search results (the wiki pages are the answer surface), and no write
//! through [`Index::upsert_page`](crate::Index::upsert_page) or
//! [`Index::delete_page`](crate::Index::delete_page) changes them. They are what
//! [`Index::chunk`](crate::Index::chunk), citation verification and a page's `sources`
//! pointers read.

use serde::{Deserialize, Serialize};

use crate::data::error::{Error, Result};
use crate::text::chunk::ChunkRecord;
use crate::text::chunk::{self, ChunkConfig};
use crate::text::page;

/// The prefix of every raw document id.
pub const RAW_PREFIX: &str = "raw/";

/// File extensions read as raw documents.
const RAW_EXTENSIONS: &[&str] = &["md", "markdown", "txt"];

/// One raw source document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RawDoc {
    /// `raw/<normalized path without extension>`; its chunks are `{id}::chunk_{i}`.
    pub id: String,
    /// Path relative to the wiki root (`raw/...`).
    pub path: String,
    /// The first `# heading`, else the file stem.
    pub title: String,
    /// The whole text, verbatim.
    pub text: String,
}

/// Every raw document and its chunks (chunk `page` fields index `docs`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct RawSection {
    pub docs: Vec<RawDoc>,
    pub chunks: Vec<ChunkRecord>,
}

/// The raw document id of `path` (relative to the wiki root, `/`-separated), if it names a raw
/// document: a `.md`, `.markdown` or `.txt` file under `raw/` (optionally under `wiki/`).
pub fn raw_id(path: &str) -> Option<String> {
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    let parts = match parts.first() {
        Some(first) if parts.len() > 2 && first.eq_ignore_ascii_case("wiki") => &parts[1..],
        _ => &parts[..],
    };
    let (first, rest) = parts.split_first()?;
    if !first.eq_ignore_ascii_case("raw") || rest.is_empty() {
        return None;
    }
    let (file, folders) = rest.split_last()?;
    let (stem, ext) = file.rsplit_once('.')?;
    if stem.is_empty() || !RAW_EXTENSIONS.iter().any(|e| e.eq_ignore_ascii_case(ext)) {
        return None;
    }
    let mut id = String::from(RAW_PREFIX);
    for f in folders {
        let k = page::normalize_key(f);
        if k.is_empty() {
            return None;
        }
        id.push_str(&k);
        id.push('/');
    }
    let k = page::normalize_key(stem);
    if k.is_empty() {
        return None;
    }
    id.push_str(&k);
    Some(id)
}

/// Whether `path` should be read as a raw document.
pub(crate) fn is_raw_path(path: &str) -> bool {
    raw_id(path).is_some()
}

/// A raw document from its path and text.
pub(crate) fn document(path: &str, text: &str) -> Option<RawDoc> {
    let id = raw_id(path)?;
    let title = text
        .lines()
        .find_map(|l| l.strip_prefix("# ").map(str::trim))
        .filter(|t| !t.is_empty())
        .map(str::to_string)
        .unwrap_or_else(|| id.rsplit('/').next().unwrap_or(&id).to_string());
    Some(RawDoc {
        id,
        path: path.to_string(),
        title,
        text: text.to_string(),
    })
}

impl RawSection {
    /// Chunks `docs` (already sorted by id, ids unique).
    pub(crate) fn build(docs: Vec<RawDoc>, config: &ChunkConfig) -> Result<RawSection> {
        let mut chunks = Vec::new();
        for (di, doc) in docs.iter().enumerate() {
            for span in chunk::split(&doc.text, config) {
                let too_big = || Error::invalid_argument("raw document > 4 GiB");
                chunks.push(ChunkRecord {
                    page: u32::try_from(di).map_err(|_| too_big())?,
                    start: u32::try_from(span.start).map_err(|_| too_big())?,
                    end: u32::try_from(span.end).map_err(|_| too_big())?,
                });
            }
        }
        u32::try_from(chunks.len()).map_err(|_| Error::invalid_argument("> 4 Gi raw chunks"))?;
        Ok(RawSection { docs, chunks })
    }

    /// Checks ids, order and chunk spans, so look-ups cannot panic on a hostile blob.
    pub(crate) fn validate(&self) -> Result<()> {
        for (i, d) in self.docs.iter().enumerate() {
            if !d.id.starts_with(RAW_PREFIX) || d.id.contains("::") {
                return Err(Error::corrupt(format!("raw document {i} has a bad id")));
            }
            if i > 0 && self.docs[i - 1].id >= d.id {
                return Err(Error::corrupt("raw documents are out of order"));
            }
        }
        crate::text::chunk::validate_chunk_table(&self.chunks, self.docs.len(), |d| {
            Some(self.docs.get(d)?.text.as_str())
        })
        .map_err(|e| Error::corrupt(format!("raw section: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_ids_keep_folders_and_drop_the_extension() {
        assert_eq!(
            raw_id("raw/Slack/2024-03-12 incident.md").as_deref(),
            Some("raw/slack/2024-03-12-incident")
        );
        assert_eq!(raw_id("wiki/raw/a.txt").as_deref(), Some("raw/a"));
        assert_eq!(raw_id("raw/a.png"), None);
        assert_eq!(raw_id("global/raw.md"), None);
        assert_eq!(raw_id("raw/.md"), None);
    }

    #[test]
    fn a_raw_document_is_verbatim_and_titled_by_its_heading() {
        let d = document("raw/x.md", "---\ntitle: no\n---\n# Slack export\nhi").unwrap();
        assert_eq!(d.title, "Slack export");
        assert!(d.text.starts_with("---"));
        assert_eq!(document("raw/y.txt", "plain").unwrap().title, "y");
    }
}
