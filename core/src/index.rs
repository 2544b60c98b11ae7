//! [`Index`] and [`IndexBuilder`]: the public entry points.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::ops::ControlFlow;
#[cfg(feature = "fs")]
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::analyze::Analyzer;
use crate::blob::IndexData;
use crate::chunk::{self, ChunkRecord};
use crate::config::Config;
use crate::embed::Embedder;
use crate::error::{Error, Result};
#[cfg(feature = "fs")]
use crate::file::Listed;
use crate::graph::GraphSection;
use crate::lane::lexical::{LexicalIndex, PageFields};
use crate::lane::phrase::Positions;
use crate::lane::semantic::{VectorEncoding, VectorSection};
use crate::page::{self, Page, Scope};
use crate::raw::{self, RawDoc, RawSection};
use crate::record::{BuildReport, BuildStage, Skipped, SyncReport, Warning};
use crate::snapshot::Index;
use crate::vectors::{self, Attached};

/// Collects pages, then builds an [`Index`].
///
/// # Example
/// ```
/// use wikidex::{IndexBuilder, SearchOptions};
/// let mut b = IndexBuilder::new(Default::default())?;
/// b.add_file("global/revenue.md", b"---\nsummary: Money in.\n---\nRevenue is recognized monthly.")?;
/// b.add_file("global/churn.md", b"Churn is the share of accounts lost.")?;
/// let (index, report) = b.build()?;
/// assert_eq!(report.pages, 2);
/// let hits = index.search("recognized revenue", &SearchOptions::default())?.hits;
/// assert_eq!(hits[0].key, "revenue");
/// # Ok::<(), wikidex::Error>(())
/// ```
#[derive(Debug)]
pub struct IndexBuilder {
    config: Config,
    strict: bool,
    follow_outside_root: bool,
    embedder: Option<Attached>,
    encoding: VectorEncoding,
    pages: BTreeMap<(Scope, String), Page>,
    raw: BTreeMap<String, RawDoc>,
    report: BuildReport,
    previous: Option<Previous>,
    /// Path → modification time (Unix seconds) of each file read from a folder.
    modified: HashMap<String, i64>,
    file_times: bool,
}

/// What a build on a previous index can take from it (see [`IndexBuilder::previous`]).
#[derive(Debug)]
struct Previous {
    /// Path → the page or raw document indexed from it, with the file's verbatim text.
    files: HashMap<String, Stored>,
    /// The previous vectors, and each embedded passage's vector.
    vectors: Option<VectorSection>,
    /// Page id → its chunks' hashes and id numbers, so edits keep chunk ids.
    numbers: chunk::PriorChunks,
    known: HashMap<String, Vec<f32>>,
    /// Paths given to this build, and how each compared.
    seen: HashSet<String>,
    added: Vec<String>,
    changed: Vec<String>,
    unchanged: usize,
}

#[derive(Debug)]
enum Stored {
    Page(Box<Page>),
    Raw(RawDoc),
}

impl Stored {
    fn text(&self) -> &str {
        match self {
            Stored::Page(p) => &p.text,
            Stored::Raw(d) => &d.text,
        }
    }
}

impl IndexBuilder {
    /// A builder with `config`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if a config value is out of range.
    pub fn new(config: Config) -> Result<IndexBuilder> {
        config.validate()?;
        Ok(IndexBuilder {
            config,
            strict: false,
            follow_outside_root: false,
            embedder: None,
            encoding: VectorEncoding::F32,
            pages: BTreeMap::new(),
            raw: BTreeMap::new(),
            report: BuildReport::default(),
            previous: None,
            modified: HashMap::new(),
            file_times: true,
        })
    }

    /// Builds on `previous`, the index these files gave last time (loaded from its blob), so
    /// that only what changed is redone:
    /// - a file given to [`IndexBuilder::add_file`] (or read by [`IndexBuilder::add_dir`])
    ///   whose bytes are the text `previous` indexed at the same path is taken from it
    ///   without parsing (the blob keeps every file's text verbatim, so the comparison is
    ///   exact; no separate hash is needed);
    /// - every passage `previous` embedded keeps its vector when this builder's embedder has
    ///   the same fingerprint, so only new or edited chunks are embedded; the vectors keep
    ///   `previous`'s encoding;
    /// - [`IndexBuilder::sync_with_progress`] reports the files added, changed and removed.
    ///
    /// The index built is the one a build from scratch gives for the same files (byte for
    /// byte, apart from the vectors of reused passages, which are the stored ones). The
    /// warnings reported are those of the files parsed, not of the files taken unchanged.
    pub fn previous(&mut self, previous: &Index) -> &mut IndexBuilder {
        let data = &previous.data;
        let mut files: HashMap<String, Stored> = data
            .pages
            .iter()
            .map(|p| (p.path.clone(), Stored::Page(Box::new(p.clone()))))
            .collect();
        files.extend(
            data.raw
                .docs
                .iter()
                .map(|d| (d.path.clone(), Stored::Raw(d.clone()))),
        );
        if let Some(v) = &data.vectors {
            self.encoding = v.encoding();
        }
        self.previous = Some(Previous {
            files,
            numbers: previous.prior_chunks(),
            vectors: data.vectors.clone(),
            known: vectors::known_vectors(data),
            seen: HashSet::new(),
            added: Vec::new(),
            changed: Vec::new(),
            unchanged: 0,
        });
        self
    }

    /// In strict mode the first page that cannot be used fails the build instead of being
    /// skipped and reported.
    pub fn strict(&mut self, strict: bool) -> &mut IndexBuilder {
        self.strict = strict;
        self
    }

    /// Whether [`IndexBuilder::add_dir`] and [`IndexBuilder::add_raw_dir`] read files whose
    /// symbolic links lead outside the folder given (default false). By default such a file
    /// is not opened at all and is reported as [`Skipped`] with code [`SKIPPED_OUTSIDE_ROOT`](crate::SKIPPED_OUTSIDE_ROOT):
    /// a link like `env.md -> /proc/self/environ` would otherwise put secrets into the index.
    pub fn follow_links_outside_root(&mut self, follow: bool) {
        self.follow_outside_root = follow;
    }

    /// Whether [`IndexBuilder::add_dir`] records each page file's modification time in the
    /// index (default true): the date a page without a frontmatter date is filtered by
    /// (`SearchOptions::since`/`until`). Off, the blob depends only on the files' paths and
    /// texts, so a fresh checkout of the same wiki (where every file is new) gives the same
    /// bytes.
    pub fn file_times(&mut self, record: bool) -> &mut IndexBuilder {
        self.file_times = record;
        self
    }

    /// Embeds every chunk with `embedder` at build time (the semantic lane). A
    /// [`crate::Session`] over the built index then embeds queries with it.
    pub fn embedder(&mut self, embedder: Arc<dyn Embedder>) -> &mut IndexBuilder {
        self.embedder = Some(Attached(embedder));
        self
    }

    /// How to store the vectors (default [`VectorEncoding::F32`]).
    pub fn vector_encoding(&mut self, encoding: VectorEncoding) -> &mut IndexBuilder {
        self.encoding = encoding;
        self
    }

    /// Adds files given as `(path, bytes)` in sorted path order, whatever order they come in
    /// (a dict, a JavaScript object), so the same files make the same index on every surface.
    ///
    /// # Errors
    /// As [`IndexBuilder::add_file`], for the first file that fails.
    pub fn add_files<P: AsRef<str>, B: AsRef<[u8]>>(
        &mut self,
        files: impl IntoIterator<Item = (P, B)>,
    ) -> Result<()> {
        let mut files: Vec<(P, B)> = files.into_iter().collect();
        crate::sort::sort_by(&mut files, |a, b| a.0.as_ref().cmp(b.0.as_ref()));
        for (path, bytes) in &files {
            self.add_file(path.as_ref(), bytes.as_ref())?;
        }
        Ok(())
    }

    /// Adds one Markdown file (`path` relative to the wiki root, `/`-separated). A file that
    /// cannot be parsed is skipped and listed in the report. A file under `raw/` is a raw
    /// source document (see [`raw`](crate::raw)), not a page.
    ///
    /// # Errors
    /// In strict mode, the error that made the file unusable.
    pub fn add_file(&mut self, path: &str, bytes: &[u8]) -> Result<()> {
        if let Some(prev) = &mut self.previous {
            prev.seen.insert(path.to_string());
            match prev.files.get(path) {
                Some(stored) if stored.text().as_bytes() == bytes => {
                    prev.unchanged += 1;
                    return match stored {
                        Stored::Page(p) => {
                            let p = Page::clone(p);
                            self.insert_page(p)
                        }
                        Stored::Raw(d) => {
                            let d = d.clone();
                            self.add_raw(d)
                        }
                    };
                }
                Some(_) => prev.changed.push(path.to_string()),
                None => prev.added.push(path.to_string()),
            }
        }
        let text = std::str::from_utf8(bytes).map_err(|e| Error::InvalidPage {
            path: path.to_string(),
            line: Some(line_of(bytes, e.valid_up_to())),
            reason: format!("not valid UTF-8: {e}"),
        });
        if let Some(doc) = raw::document(path, "") {
            return match text {
                Ok(text) => self.add_raw(RawDoc {
                    text: text.to_string(),
                    ..raw::document(path, text).unwrap_or(doc)
                }),
                Err(e) => self.skip(e),
            };
        }
        let parsed = text.and_then(|text| page::parse(path, text));
        match parsed {
            Ok(p) => {
                for w in p.warnings {
                    self.report.warnings.push(Warning {
                        path: path.to_string(),
                        message: w,
                    });
                }
                self.add_page(p.page)
            }
            Err(e) => self.skip(e),
        }
    }

    /// Adds a page. Of two pages with the same key in the same scope, the one with the
    /// smaller path (by bytes: `B/Revenue.md` before `a/revenue.md`) is kept, whatever the
    /// order they were added in, so the blob does not depend on it; the other is skipped and
    /// reported as `duplicate_key`, naming both paths.
    ///
    /// The page is checked first, since [`Page`] is a plain public struct: its key must be
    /// non-empty, in [normalized form](page::normalize_key) and without `/`; `body_start` must
    /// lie within `text`, on a character boundary; unknown fields may not nest deeper than
    /// [`page::MAX_FRONTMATTER_DEPTH`] levels.
    ///
    /// # Errors
    /// [`Error::InvalidPage`] for a page that fails those checks (always, even when not
    /// strict: it is a caller's mistake, not a file to skip); in strict mode,
    /// [`Error::DuplicateKey`].
    pub fn add_page(&mut self, page: Page) -> Result<()> {
        check_page(&page, true)?;
        self.insert_page(page)
    }

    fn insert_page(&mut self, page: Page) -> Result<()> {
        if let Some(prev) = &mut self.previous {
            prev.seen.insert(page.path.clone());
        }
        let slot = (page.scope.clone(), page.key.clone());
        if let Some(first) = self.pages.get(&slot) {
            let (kept, dropped) = if first.path <= page.path {
                (first.path.clone(), page)
            } else {
                let old = self.pages.insert(slot, page);
                let Some(old) = old else { return Ok(()) };
                (
                    self.pages[&(old.scope.clone(), old.key.clone())]
                        .path
                        .clone(),
                    old,
                )
            };
            let err = Error::DuplicateKey {
                key: dropped.key.clone(),
                scope: dropped.scope.to_string(),
                first: kept,
                second: dropped.path.clone(),
            };
            return self.skip_at(dropped.path, err);
        }
        self.pages.insert(slot, page);
        Ok(())
    }

    fn add_raw(&mut self, doc: RawDoc) -> Result<()> {
        if let Some(prev) = &mut self.previous {
            prev.seen.insert(doc.path.clone());
        }
        if let Some(first) = self.raw.get(&doc.id) {
            let err = Error::DuplicateKey {
                key: doc.id.clone(),
                scope: "raw".into(),
                first: first.path.clone(),
                second: doc.path.clone(),
            };
            return self.skip_at(doc.path, err);
        }
        self.raw.insert(doc.id.clone(), doc);
        Ok(())
    }

    /// Adds every `.md`, `.markdown` and `.txt` file under `dir` as a raw source document, as
    /// if `dir` were the wiki's `raw/` folder (`dir/a/b.md` becomes `raw/a/b`). Symbolic links
    /// are treated as in [`IndexBuilder::add_dir`], with `dir` as the root.
    ///
    /// # Errors
    /// [`Error::Io`] if `dir` cannot be read; in strict mode, the first unusable file or
    /// folder.
    #[cfg(feature = "fs")]
    pub fn add_raw_dir(&mut self, dir: &Path) -> Result<()> {
        let files = files_under(dir, &|_| true, self.follow_outside_root)?;
        let raw_path = |rel: &str| format!("{}{rel}", raw::RAW_PREFIX);
        self.skip_unlisted(files.skipped, &raw_path)?;
        let root = files.keep_within.as_deref();
        for (rel, full) in files.files {
            let path = raw_path(&rel);
            if !raw::is_raw_path(&path) {
                continue;
            }
            match crate::file::read_listed(&full, root) {
                Ok(Listed::Read(bytes, _)) => self.add_file(&path, &bytes)?,
                Ok(Listed::Outside(target)) => self.skip_outside(path, &target),
                Err(e) => self.skip_at(path, e)?,
            }
        }
        Ok(())
    }

    /// Adds every Markdown file under `root` (recursively, in path order). Hidden files and
    /// folders (`.obsidian`, `.git`) and non-Markdown files are ignored; symbolic links to
    /// folders are not followed. A file (or file link) whose real path is outside `root`'s
    /// real path is not read unless [`IndexBuilder::follow_links_outside_root`] allows it;
    /// it is reported as [`Skipped`] with code [`SKIPPED_OUTSIDE_ROOT`](crate::SKIPPED_OUTSIDE_ROOT). A file or subfolder
    /// that cannot be read is skipped and reported with code `io`; the build goes on.
    ///
    /// # Errors
    /// [`Error::Io`] if `root` cannot be read; in strict mode, the first unusable page or
    /// unreadable file or subfolder.
    #[cfg(feature = "fs")]
    pub fn add_dir(&mut self, root: &Path) -> Result<()> {
        let files = wiki_files(root, self.follow_outside_root)?;
        self.add_listing(files)
    }

    /// Reads and adds the files a walk of the wiki's folder listed, each checked again on the
    /// handle read ([`crate::file::read_listed`]).
    #[cfg(feature = "fs")]
    fn add_listing(&mut self, files: Listing) -> Result<()> {
        self.skip_unlisted(files.skipped, &|rel| rel.to_string())?;
        let real_root = files.keep_within.as_deref();
        for (rel, full) in files.files {
            match crate::file::read_listed(&full, real_root) {
                Ok(Listed::Read(bytes, modified)) => {
                    if let Some(t) = modified.filter(|_| self.file_times) {
                        self.modified.insert(rel.clone(), t);
                    }
                    self.add_file(&rel, &bytes)?;
                }
                Ok(Listed::Outside(target)) => self.skip_outside(rel, &target),
                Err(e) => self.skip_at(rel, e)?,
            }
        }
        Ok(())
    }

    /// Reports what the folder walk left out: unreadable folders (as errors, which fail a
    /// strict build) and links outside the root (a policy, reported in every mode).
    #[cfg(feature = "fs")]
    fn skip_unlisted(
        &mut self,
        skipped: Vec<Unlisted>,
        path: &dyn Fn(&str) -> String,
    ) -> Result<()> {
        for s in skipped {
            match s {
                Unlisted::Unreadable { rel, error } => self.skip_at(path(&rel), error)?,
                Unlisted::OutsideRoot { rel, target } => self.skip_outside(path(&rel), &target),
            }
        }
        Ok(())
    }

    /// Reports a file whose real path is outside the folder being indexed (a policy, reported
    /// in every mode, never an error).
    #[cfg(feature = "fs")]
    fn skip_outside(&mut self, path: String, target: &Path) {
        self.report.skipped.push(Skipped {
            path,
            line: None,
            code: crate::record::SKIPPED_OUTSIDE_ROOT.to_string(),
            reason: format!(
                "a symbolic link to {} outside the folder being indexed; not read",
                target.display()
            ),
        });
    }

    /// Adds a BEIR `corpus.jsonl`: each line `{"_id", "title", "text"}` becomes a page with key
    /// `_id` (verbatim), that title, and the text as its body.
    ///
    /// # Errors
    /// [`Error::Io`] if the file cannot be read; in strict mode, the first bad line.
    #[cfg(feature = "fs")]
    pub fn add_beir_corpus(&mut self, path: &Path) -> Result<()> {
        let text = crate::file::read_text_capped(path, u64::MAX, "corpus bytes")?;
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let at = format!("corpus.jsonl:{}", i + 1);
            match crate::eval::beir_doc(line) {
                Ok((id, title, body)) => {
                    // BEIR ids are kept verbatim (`MED-10`), not normalized.
                    let page = page_from_record(at, id, title, body);
                    match check_page(&page, false) {
                        Ok(()) => self.insert_page(page)?,
                        // An id the page contract refuses (a `/` in it) skips its line only.
                        Err(e) => self.skip_at(
                            "corpus.jsonl".to_string(),
                            Error::InvalidInput {
                                path: path.display().to_string(),
                                line: u32::try_from(i + 1).ok(),
                                reason: match e {
                                    Error::InvalidPage { reason, .. } => reason,
                                    other => other.to_string(),
                                },
                            },
                        )?,
                    }
                }
                // The line is in `line`; the path names the file once (not `corpus.jsonl:3:3`).
                Err(reason) => self.skip_at(
                    "corpus.jsonl".to_string(),
                    Error::InvalidInput {
                        path: path.display().to_string(),
                        line: u32::try_from(i + 1).ok(),
                        reason,
                    },
                )?,
            }
        }
        Ok(())
    }

    #[cfg(test)]
    fn add_beir_corpus_lines(&mut self, id: &str, text: &str) {
        let page = page_from_record(
            "corpus.jsonl:1".into(),
            id.into(),
            String::new(),
            text.into(),
        );
        self.insert_page(page).unwrap();
    }

    fn skip(&mut self, err: Error) -> Result<()> {
        let path = match &err {
            Error::InvalidPage { path, .. } => path.clone(),
            _ => String::new(),
        };
        self.skip_at(path, err)
    }

    fn skip_at(&mut self, path: String, err: Error) -> Result<()> {
        if self.strict {
            return Err(err);
        }
        let line = match &err {
            Error::InvalidPage { line, .. } | Error::InvalidInput { line, .. } => *line,
            _ => None,
        };
        let reason = match &err {
            Error::InvalidPage { reason, .. } | Error::InvalidInput { reason, .. } => {
                reason.clone()
            }
            other => other.to_string(),
        };
        self.report.skipped.push(Skipped {
            path,
            line,
            code: err.code().to_string(),
            reason,
        });
        Ok(())
    }

    /// Builds the index.
    ///
    /// # Errors
    /// Only if the index would exceed the format's limits (4 Gi chunks or pages).
    pub fn build(self) -> Result<(Index, BuildReport)> {
        self.build_with_progress(&mut |_, _, _| ControlFlow::Continue(()))
    }

    /// Builds the index, calling `progress(stage, done, total)` as pages are chunked and
    /// analyzed (after each page), then as chunks are embedded (after each group of 256, with
    /// an embedder). The callback returns [`ControlFlow::Break`] to stop the build.
    ///
    /// # Errors
    /// As [`IndexBuilder::build`], whatever the embedder reports, and [`Error::Cancelled`]
    /// when `progress` asked to stop.
    pub fn build_with_progress(
        self,
        progress: &mut dyn FnMut(BuildStage, usize, usize) -> ControlFlow<()>,
    ) -> Result<(Index, BuildReport)> {
        self.sync_with_progress(progress).map(|(i, r)| (i, r.build))
    }

    /// Builds the index as [`IndexBuilder::build_with_progress`] does, and reports what
    /// changed since the index given to [`IndexBuilder::previous`] (without one, every file
    /// is added).
    ///
    /// # Errors
    /// As [`IndexBuilder::build_with_progress`].
    pub fn sync_with_progress(
        self,
        progress: &mut dyn FnMut(BuildStage, usize, usize) -> ControlFlow<()>,
    ) -> Result<(Index, SyncReport)> {
        let modified = self.modified;
        let mut report = self.report;
        let pages: Vec<Page> = self.pages.into_values().collect();
        let raw = RawSection::build(self.raw.into_values().collect(), &self.config.chunk)?;
        let no_prior = chunk::PriorChunks::new();
        let prior = self.previous.as_ref().map_or(&no_prior, |p| &p.numbers);
        let mut data = assemble(self.config, pages, raw, prior, &mut |d, t| {
            progress(BuildStage::Pages, d, t)
        })?;
        data.set_page_modified(|p| modified.get(&p.path).copied());
        let previous = self.previous;
        let mut embedded = 0;
        if let Some(e) = &self.embedder {
            let same_model = |v: &VectorSection| {
                v.fingerprint == e.0.fingerprint()
                    && v.dim as usize == e.0.dim()
                    && v.prompts == *e.0.prompts()
            };
            let known = match &previous {
                Some(p) if p.vectors.as_ref().is_some_and(same_model) => &p.known,
                _ => &HashMap::new(),
            };
            embedded = vectors::embed_chunks(
                &mut data,
                e.0.as_ref(),
                e.0.prompts(),
                self.encoding,
                known,
                &mut |d, t| progress(BuildStage::Embeddings, d, t),
            )?;
            vectors::calibrate_floor(&mut data, e.0.as_ref())?;
        }
        report.pages = data.pages.len();
        report.chunks = data.chunks.len();
        report.raw_documents = data.raw.docs.len();
        report.raw_chunks = data.raw.chunks.len();
        let index = Index::from_data(data);
        let mut sync = SyncReport {
            embedded,
            ..SyncReport::default()
        };
        match previous {
            Some(p) => {
                let mut removed: Vec<String> = p
                    .files
                    .into_keys()
                    .filter(|path| !p.seen.contains(path))
                    .collect();
                crate::sort::sort(&mut removed);
                // A new file that failed to parse is in `build.skipped` only: it was not
                // indexed before either, so nothing changed.
                let indexed: HashSet<&str> = index
                    .data
                    .pages
                    .iter()
                    .map(|p| p.path.as_str())
                    .chain(index.data.raw.docs.iter().map(|d| d.path.as_str()))
                    .collect();
                sync.added = p
                    .added
                    .into_iter()
                    .filter(|path| indexed.contains(path.as_str()))
                    .collect();
                sync.changed = p.changed;
                sync.removed = removed;
                sync.unchanged = p.unchanged;
            }
            None => {
                sync.added = index.data.pages.iter().map(|p| p.path.clone()).collect();
                sync.added
                    .extend(index.data.raw.docs.iter().map(|d| d.path.clone()));
                crate::sort::sort(&mut sync.added);
            }
        }
        sync.build = report;
        Ok((index, sync))
    }
}

fn line_of(bytes: &[u8], offset: usize) -> u32 {
    let n = bytes[..offset.min(bytes.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count();
    u32::try_from(n + 1).unwrap_or(u32::MAX)
}

/// A page made from a plain record (a BEIR document): no frontmatter, the body is the text.
#[cfg(any(feature = "fs", test))]
fn page_from_record(path: String, key: String, title: String, body: String) -> Page {
    Page {
        title: if title.trim().is_empty() {
            key.clone()
        } else {
            title
        },
        key,
        scope: Scope::Global,
        path,
        summary: None,
        tags: Vec::new(),
        kind: None,
        refs: Vec::new(),
        links: Vec::new(),
        sl_refs: Vec::new(),
        relations: Vec::new(),
        usage_mode: Default::default(),
        source: None,
        sources: Vec::new(),
        aliases: Vec::new(),
        redirect_from: Vec::new(),
        stale_since: None,
        archived_since: None,
        provenance: Vec::new(),
        extra: Default::default(),
        text: body,
        body_start: 0,
    }
}

/// Checks a [`Page`] given by a caller (see [`IndexBuilder::add_page`]); `normalized` also
/// requires the key in normalized form (not for BEIR ids, which are kept verbatim).
fn check_page(page: &Page, normalized: bool) -> Result<()> {
    let invalid = |reason: String| Error::InvalidPage {
        path: page.path.clone(),
        line: None,
        reason,
    };
    if page.key.is_empty() {
        return Err(invalid("the key is empty".into()));
    }
    if page.key.contains('/') {
        return Err(invalid(format!("the key `{}` contains `/`", page.key)));
    }
    if normalized && page::normalize_key(&page.key) != page.key {
        return Err(invalid(format!(
            "the key `{}` is not normalized (expected `{}`)",
            page.key,
            page::normalize_key(&page.key)
        )));
    }
    let at = page.body_start as usize;
    if at > page.text.len() || !page.text.is_char_boundary(at) {
        return Err(invalid(format!(
            "body_start {at} is not a character boundary within the text ({} bytes)",
            page.text.len()
        )));
    }
    if u32::try_from(page.text.len()).is_err() {
        return Err(Error::too_large(
            "page text bytes",
            u32::MAX as usize,
            page.text.len(),
        ));
    }
    let depth = page.extra.0.values().map(json_depth).max().unwrap_or(0);
    if depth > page::MAX_FRONTMATTER_DEPTH {
        return Err(invalid(format!(
            "unknown fields nest {depth} levels deep, more than {}",
            page::MAX_FRONTMATTER_DEPTH
        )));
    }
    Ok(())
}

/// Nesting depth of a JSON value (a scalar is 0), without recursion.
fn json_depth(v: &serde_json::Value) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(v, 0usize)];
    while let Some((v, d)) = stack.pop() {
        let children: Box<dyn Iterator<Item = &serde_json::Value>> = match v {
            serde_json::Value::Array(a) => Box::new(a.iter()),
            serde_json::Value::Object(o) => Box::new(o.values()),
            _ => continue,
        };
        deepest = deepest.max(d + 1);
        stack.extend(children.map(|c| (c, d + 1)));
    }
    deepest
}

/// What a folder walk found: the files to read, and what it left out.
#[cfg(feature = "fs")]
struct Listing {
    files: Vec<(String, PathBuf)>,
    skipped: Vec<Unlisted>,
    /// The root's real path, when the files read must be inside it (links outside the root
    /// are not followed): each file is checked again when it is opened.
    keep_within: Option<PathBuf>,
}

/// An entry a folder walk did not list.
#[cfg(feature = "fs")]
enum Unlisted {
    /// A folder (or an entry in it) that could not be read.
    Unreadable { rel: String, error: Error },
    /// A symbolic link whose real path is outside the root.
    OutsideRoot { rel: String, target: PathBuf },
}

/// A fingerprint of what [`IndexBuilder::add_dir`] would read under `root` (and
/// [`IndexBuilder::add_raw_dir`] under `raw`): every listed file's path, size and
/// modification time, and the entries the walk left out. It changes when a file is added,
/// removed, renamed or written (as finely as the file system keeps times), and costs one
/// `stat` per file, so a watcher polls it and rebuilds only when it moves.
///
/// # Errors
/// [`Error::Io`] if `root` (or `raw`) cannot be read.
#[cfg(feature = "fs")]
pub fn folder_stamp(
    root: &Path,
    raw: Option<&Path>,
    follow_outside_root: bool,
) -> Result<[u8; 32]> {
    let mut h = blake3::Hasher::new();
    let mut listings = vec![wiki_files(root, follow_outside_root)?];
    if let Some(raw) = raw {
        listings.push(files_under(raw, &|_| true, follow_outside_root)?);
    }
    for listing in listings {
        for (rel, full) in &listing.files {
            h.update(rel.as_bytes());
            h.update(&[0]);
            match std::fs::metadata(full) {
                Ok(m) => {
                    h.update(&m.len().to_le_bytes());
                    let since = m
                        .modified()
                        .ok()
                        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                        .unwrap_or_default();
                    h.update(&since.as_nanos().to_le_bytes());
                }
                Err(_) => {
                    h.update(b"unreadable");
                }
            }
        }
        for s in &listing.skipped {
            h.update(b"skipped:");
            h.update(s.rel().as_bytes());
            h.update(&[0]);
        }
        h.update(b"\n");
    }
    Ok(*h.finalize().as_bytes())
}

/// Markdown files (and raw documents) under `root`, as (relative `/` path, full path), sorted
/// by relative path.
#[cfg(feature = "fs")]
fn wiki_files(root: &Path, follow_outside_root: bool) -> Result<Listing> {
    files_under(
        root,
        &|rel| page::is_markdown_path(rel) || raw::is_raw_path(rel),
        follow_outside_root,
    )
}

/// Files under `root` whose relative path `keep` accepts, sorted by relative path. Folders
/// that cannot be read are reported, not fatal (only `root` itself must be readable).
/// Symbolic links to folders are not followed; a link to a file is listed only if its real
/// path is inside `root`'s real path, or `follow_outside_root` is set.
#[cfg(feature = "fs")]
fn files_under(
    root: &Path,
    keep: &dyn Fn(&str) -> bool,
    follow_outside_root: bool,
) -> Result<Listing> {
    let meta = std::fs::metadata(root).map_err(|e| Error::io(root, e))?;
    if !meta.is_dir() {
        return Err(Error::invalid_argument(format!(
            "{} is not a folder",
            root.display()
        )));
    }
    let real_root = std::fs::canonicalize(root).map_err(|e| Error::io(root, e))?;
    let mut out = Listing {
        files: Vec::new(),
        skipped: Vec::new(),
        keep_within: (!follow_outside_root).then(|| real_root.clone()),
    };
    let mut stack = vec![(root.to_path_buf(), String::new())];
    while let Some((dir, rel)) = stack.pop() {
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if rel.is_empty() => return Err(Error::io(&dir, e)),
            Err(e) => {
                out.skipped.push(Unlisted::Unreadable {
                    rel,
                    error: Error::io(&dir, e),
                });
                continue;
            }
        };
        for entry in entries {
            let entry = match entry {
                Ok(entry) => entry,
                Err(e) => {
                    out.skipped.push(Unlisted::Unreadable {
                        rel: rel.clone(),
                        error: Error::io(&dir, e),
                    });
                    continue;
                }
            };
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            let rel_path = if rel.is_empty() {
                name.clone()
            } else {
                format!("{rel}/{name}")
            };
            let ft = match entry.file_type() {
                Ok(ft) => ft,
                Err(e) => {
                    out.skipped.push(Unlisted::Unreadable {
                        rel: rel_path,
                        error: Error::io(entry.path(), e),
                    });
                    continue;
                }
            };
            if ft.is_dir() {
                stack.push((entry.path(), rel_path));
                continue;
            }
            if !(ft.is_file() || ft.is_symlink()) || !keep(&rel_path) || !entry.path().is_file() {
                continue;
            }
            if ft.is_symlink() && !follow_outside_root {
                match std::fs::canonicalize(entry.path()) {
                    Ok(real) if real.starts_with(&real_root) => {}
                    Ok(real) => {
                        out.skipped.push(Unlisted::OutsideRoot {
                            rel: rel_path,
                            target: real,
                        });
                        continue;
                    }
                    Err(e) => {
                        out.skipped.push(Unlisted::Unreadable {
                            rel: rel_path,
                            error: Error::io(entry.path(), e),
                        });
                        continue;
                    }
                }
            }
            out.files.push((rel_path, entry.path()));
        }
    }
    crate::sort::sort(&mut out.files);
    crate::sort::sort_by(&mut out.skipped, |a, b| a.rel().cmp(b.rel()));
    Ok(out)
}

#[cfg(feature = "fs")]
impl Unlisted {
    fn rel(&self) -> &str {
        match self {
            Unlisted::Unreadable { rel, .. } | Unlisted::OutsideRoot { rel, .. } => rel,
        }
    }
}

/// How old a temporary file of a save must be before a later save next to it removes it,
/// when no process holds its lock (a save holds the lock on its temporary file until the
/// rename): a few seconds, so a save that has just created its file is never raced.
#[cfg(feature = "fs")]
const STALE_TEMP_SECONDS: u64 = 2;

/// The most bytes of the target's name kept in a temporary file's name (a name of up to 255
/// bytes stays valid with the temporary suffix on every file system).
#[cfg(feature = "fs")]
const TEMP_NAME_BYTES: usize = 160;

/// Writes `bytes` to `path` atomically (see [`Index::save`] for the rules).
#[cfg(feature = "fs")]
pub(crate) fn save_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    use std::sync::atomic::{AtomicU64, Ordering};
    static SAVES: AtomicU64 = AtomicU64::new(0);

    let target = resolve_links(path)?;
    let existing = match std::fs::metadata(&target) {
        Ok(m) => Some(m),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(Error::io(path, e)),
    };
    if let Some(m) = &existing {
        if !m.is_file() {
            return Err(crate::file::not_regular(path, m, "refusing to replace it"));
        }
        if m.permissions().readonly() {
            return Err(Error::io(
                path,
                std::io::Error::new(
                    std::io::ErrorKind::PermissionDenied,
                    "the file is read-only; refusing to replace it",
                ),
            ));
        }
        refuse_foreign(path, &target)?;
    }
    let dir = target
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = target
        .file_name()
        .ok_or_else(|| Error::invalid_argument(format!("{} is not a file path", path.display())))?
        .to_string_lossy()
        .into_owned();
    let mut keep = name.len().min(TEMP_NAME_BYTES);
    while !name.is_char_boundary(keep) {
        keep -= 1;
    }
    let prefix = format!(".{}.tmp-", &name[..keep]);
    remove_stale_temps(dir, &prefix);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let tmp = dir.join(format!(
        "{prefix}{}-{}-{nanos}",
        std::process::id(),
        SAVES.fetch_add(1, Ordering::Relaxed)
    ));
    /// Removes the temporary file unless the rename happened.
    struct Guard<'a>(&'a Path, bool);
    impl Drop for Guard<'_> {
        fn drop(&mut self) {
            if !self.1 {
                let _ = std::fs::remove_file(self.0);
            }
        }
    }
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)
        .map_err(|e| Error::io(path, e))?;
    let mut guard = Guard(&tmp, false);
    let write = || -> std::io::Result<()> {
        // Held until the rename: a later save removes the file only once nobody holds it.
        match file.lock() {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::Unsupported => {}
            Err(e) => return Err(e),
        }
        file.write_all(bytes)?;
        if let Some(m) = &existing {
            file.set_permissions(m.permissions())?;
        }
        file.sync_all()?;
        std::fs::rename(&tmp, &target)?;
        drop(file);
        Ok(())
    };
    write().map_err(|e| Error::io(path, e))?;
    guard.1 = true;
    Ok(())
}

/// Refuses to replace a file that holds something other than an index: a save replaces a
/// missing or empty file, or a wikidex blob of any version, never a page or a note given as
/// the output by mistake.
#[cfg(feature = "fs")]
fn refuse_foreign(path: &Path, target: &Path) -> Result<()> {
    use std::io::Read;
    let (file, _) = crate::file::open_regular(target)?;
    let mut head = Vec::with_capacity(crate::blob::MAGIC.len());
    file.take(crate::blob::MAGIC.len() as u64)
        .read_to_end(&mut head)
        .map_err(|e| Error::io(path, e))?;
    if head.is_empty() || head == crate::blob::MAGIC {
        return Ok(());
    }
    Err(Error::invalid_argument(format!(
        "{} exists and is not a wikidex index; refusing to replace it (remove it or choose \
         another output)",
        path.display()
    )))
}

/// `path` with symbolic links followed to the file they name (which need not exist yet).
#[cfg(feature = "fs")]
fn resolve_links(path: &Path) -> Result<PathBuf> {
    let mut cur = path.to_path_buf();
    for _ in 0..40 {
        match std::fs::symlink_metadata(&cur) {
            Ok(m) if m.file_type().is_symlink() => {
                let link = std::fs::read_link(&cur).map_err(|e| Error::io(&cur, e))?;
                cur = match cur.parent() {
                    Some(parent) if link.is_relative() => parent.join(link),
                    _ => link,
                };
            }
            _ => return Ok(cur),
        }
    }
    Err(Error::io(
        path,
        std::io::Error::other("too many levels of symbolic links"),
    ))
}

/// Removes the temporary files `prefix*` in `dir` that interrupted saves left: those more
/// than [`STALE_TEMP_SECONDS`] old whose lock no process holds (where the platform has no file
/// locks, those more than an hour old). Best effort.
#[cfg(feature = "fs")]
fn remove_stale_temps(dir: &Path, prefix: &str) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let now = std::time::SystemTime::now();
    for entry in entries.flatten() {
        if !entry.file_name().to_string_lossy().starts_with(prefix) {
            continue;
        }
        let Ok(meta) = entry.metadata() else { continue };
        let age = meta
            .modified()
            .ok()
            .and_then(|t| now.duration_since(t).ok())
            .map_or(0, |age| age.as_secs());
        if !meta.is_file() || age <= STALE_TEMP_SECONDS {
            continue;
        }
        let Ok(file) = std::fs::File::open(entry.path()) else {
            continue;
        };
        let abandoned = match file.try_lock() {
            Ok(()) => true,
            Err(std::fs::TryLockError::WouldBlock) => false,
            Err(std::fs::TryLockError::Error(_)) => age > 3600,
        };
        if abandoned {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Chunks and analyzes `pages` (already in canonical order) into index data. The only place
/// derived data is made, so a build and an upsert give the same bytes for the same pages and
/// the same `prior` chunks (the numbers of the chunk ids: [`chunk::carry_numbers`]).
fn assemble(
    config: Config,
    pages: Vec<Page>,
    raw: RawSection,
    prior: &chunk::PriorChunks,
    progress: &mut dyn FnMut(usize, usize) -> ControlFlow<()>,
) -> Result<IndexData> {
    u32::try_from(pages.len()).map_err(|_| Error::invalid_argument("more than 4 Gi pages"))?;
    let analyzer = Analyzer::new(config.language);
    let mut surface = crate::analyze::Surface::default();
    let mut chunks = Vec::new();
    let mut numbers: Vec<u32> = Vec::new();
    let mut positional = true;
    let mut chunk_terms = Vec::new();
    let total = pages.len();
    for (pi, page) in pages.iter().enumerate() {
        let first = chunks.len();
        let body_start = page.body_start as usize;
        let body = page.body();
        let fields = PageFields::new(&analyzer, page, &mut surface);
        let spans: Vec<(usize, usize)> = chunk::split(body, &config.chunk)
            .into_iter()
            .map(|span| (body_start + span.start, body_start + span.end))
            .collect();
        let indexed = chunk::indexed_texts(&page.text, body_start, &spans);
        for (&(start, end), indexed) in spans.iter().zip(&indexed) {
            let text = &page.text[start..end];
            chunk_terms.push(fields.chunk_terms(&analyzer, indexed, &mut surface));
            chunks.push(ChunkRecord {
                page: pi as u32,
                start: u32::try_from(start).map_err(|_| Error::invalid_argument("page > 4 GiB"))?,
                end: u32::try_from(end).map_err(|_| Error::invalid_argument("page > 4 GiB"))?,
                hash: chunk::content_hash(text),
            });
        }
        let hashes: Vec<&str> = chunks[first..].iter().map(|c| c.hash.as_str()).collect();
        let page_numbers = match prior.get(&page.id()) {
            Some(old) => {
                let old: Vec<(&str, u32)> = old.iter().map(|(h, n)| (h.as_str(), *n)).collect();
                chunk::carry_numbers(&hashes, &old)
            }
            None => (0..hashes.len() as u32).collect(),
        };
        positional &= page_numbers.iter().zip(0u32..).all(|(&n, at)| n == at);
        numbers.extend(page_numbers);
        if progress(pi + 1, total).is_break() {
            return Err(Error::Cancelled {
                stage: BuildStage::Pages.as_str().into(),
            });
        }
    }
    u32::try_from(chunks.len()).map_err(|_| Error::invalid_argument("more than 4 Gi chunks"))?;
    let lexical = LexicalIndex::build_from(chunk_terms.iter().map(|c| &c.0), surface);
    let positions = config
        .positions
        .then(|| Positions::build(&lexical, &chunk_terms));
    // Canonical form: no numbers stored when every chunk is numbered by its position.
    if positional {
        numbers.clear();
    }
    let graph = GraphSection::build(&pages, &chunks, &numbers, &raw);
    Ok(IndexData {
        config,
        pages,
        chunks,
        lexical,
        vectors: None,
        graph,
        raw,
        chunk_numbers: numbers,
        page_modified: Vec::new(),
        positions,
    })
}

/// What [`Index::upsert_page`] did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UpsertReport {
    /// The page's id.
    pub page: String,
    /// Whether a page with this key and scope already existed (and was replaced).
    pub replaced: bool,
    /// Chunks the page now has.
    pub chunks: usize,
    /// Non-fatal problems in the page.
    pub warnings: Vec<String>,
    /// Targets that resolve to no visible page (only when dangling links were allowed).
    pub dangling: Vec<String>,
}

/// Options of the write API ([`Index::upsert_page`], [`crate::Session::upsert_page`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WriteOptions {
    /// Accept a page whose refs or links point at no visible page (default false: reject).
    pub allow_dangling: bool,
}

/// What [`Index::delete_page`] did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeleteReport {
    /// The page removed.
    pub page: Page,
    /// Ids of the pages that now have a dangling link because of the removal, sorted.
    pub broken: Vec<String>,
}

/// What [`Index::rename_page`] did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RenameReport {
    /// The page's old id.
    pub from: String,
    /// Its new id.
    pub to: String,
    /// Its new path, relative to the wiki root.
    pub path: String,
    /// Its new text (with the redirect), to write to `path`.
    pub text: String,
}

impl Index {
    /// Lints the wiki in folder `root` as it is on disk (its `raw/` folder included, plus the
    /// raw documents under `raw` when given; files linked from outside the folder only with
    /// `follow_outside_root`): builds it in memory without embeddings, then
    /// [`Index::lint_with_build`], so duplicate keys are reported too.
    ///
    /// # Errors
    /// [`Error::Io`] if `root` (or `raw`) cannot be read.
    #[cfg(feature = "fs")]
    pub fn lint_dir(
        root: &std::path::Path,
        raw: Option<&std::path::Path>,
        follow_outside_root: bool,
    ) -> Result<crate::LintReport> {
        let mut b = IndexBuilder::new(Config::default())?;
        b.follow_links_outside_root(follow_outside_root);
        if let Some(raw) = raw {
            b.add_raw_dir(raw)?;
        }
        b.add_dir(root)?;
        let (index, report) = b.build()?;
        Ok(index.lint_with_build(&report))
    }

    /// Loads an index from a file. Only a regular file is read (a FIFO or a device is refused
    /// without blocking or reading it), and its header is checked before the rest is read.
    ///
    /// # Errors
    /// [`Error::Io`]; [`Error::InvalidArgument`] for a path that is not a regular file; or as
    /// [`Index::from_bytes`].
    #[cfg(feature = "fs")]
    pub fn open(path: &Path) -> Result<Index> {
        let bytes = crate::file::read_checked_head(path, crate::blob::HEADER_LEN, |head| {
            crate::blob::check_header(head).map(|_| ())
        })?;
        Index::from_bytes(&bytes)
    }

    /// Saves the blob to `path` atomically: it is written to a temporary file in the same
    /// folder (a name unique to this call), flushed, then renamed over `path`, so readers see
    /// the old or the new index, never half of one.
    ///
    /// - The blob is decoded before anything is written: an index that would not load again
    ///   is never saved.
    /// - A read-only `path` is refused ([`Error::Io`], permission denied), not replaced.
    /// - A symbolic link at `path` is followed: the file it points to is replaced (atomically,
    ///   in its own folder) and the link stays. The replaced file keeps its permissions.
    /// - Only a missing or empty file, or a wikidex blob (of any version), is replaced: a FIFO,
    ///   a device, a folder or a file of other content is refused ([`Error::InvalidArgument`]
    ///   naming it).
    /// - Temporary files `.NAME.tmp-*` next to the target that a killed save left (no process
    ///   holds their lock) are removed.
    ///
    /// # Errors
    /// [`Error::Corrupt`] if the blob would not decode; [`Error::Io`] if the folder is not
    /// writable or `path` is read-only; [`Error::InvalidArgument`] if `path` is not a file a
    /// save replaces. `path` is then unchanged and no temporary file is left.
    #[cfg(feature = "fs")]
    pub fn save(&self, path: &Path) -> Result<()> {
        save_checked(path, &self.to_bytes()?)
    }
}

/// Writes `bytes` to `path` atomically once they decode.
#[cfg(feature = "fs")]
fn save_checked(path: &Path, bytes: &[u8]) -> Result<()> {
    crate::blob::decode(bytes).map_err(|e| {
        Error::corrupt(format!(
            "refusing to save an index that would not load again: {e}"
        ))
    })?;
    crate::index::save_atomic(path, bytes)
}

impl Index {
    /// The index with the page at `path` (relative to the wiki root) added or replaced by
    /// `text`, re-chunked, its statistics and graph recomputed; `self` stays as it is. The
    /// result is byte-identical to building from scratch with the same pages. When the index
    /// holds vectors, `model` (the one that made them) embeds the new chunks.
    ///
    /// Every ref, inline link and relation target of the page must resolve to a page visible
    /// in the page's scope (itself, a global page, or for a user page that user's pages;
    /// redirects and aliases count), unless [`WriteOptions::allow_dangling`] is set.
    ///
    /// Cost: the whole index is re-analyzed, O(total text); fine for wikis, slow for
    /// collections of hundreds of thousands of pages.
    ///
    /// # Errors
    /// [`Error::InvalidPage`] if the page cannot be parsed; [`Error::DanglingLinks`] with the
    /// sorted list of missing targets; [`Error::Immutable`] for a path under `raw/`;
    /// [`Error::NoEmbedder`] when new chunks need vectors and no model is given.
    ///
    /// # Example
    /// ```
    /// # use wikidex::IndexBuilder;
    /// # let mut b = IndexBuilder::new(Default::default())?;
    /// # b.add_file("global/revenue.md", b"Revenue is recognized monthly.")?;
    /// # let (index, _) = b.build()?;
    /// let err = index.upsert_page("global/answer.md", "See [[revenue]] and [[nope]].", &Default::default(), None).unwrap_err();
    /// assert_eq!(err.code(), "dangling_links");
    /// let (next, report) = index.upsert_page("global/answer.md", "---\ntype: topic\n---\nSee [[revenue]].", &Default::default(), None)?;
    /// assert_eq!((index.pages().len(), next.pages().len(), report.replaced), (1, 2, false));
    /// # Ok::<(), wikidex::Error>(())
    /// ```
    pub fn upsert_page(
        &self,
        path: &str,
        text: &str,
        opts: &WriteOptions,
        model: Option<&dyn Embedder>,
    ) -> Result<(Index, UpsertReport)> {
        if raw::is_raw_path(path) {
            return Err(Error::Immutable {
                id: raw::raw_id(path).unwrap_or_default(),
            });
        }
        let parsed = page::parse(path, text)?;
        let page = parsed.page;
        let id = page.id();
        let mut pages = self.data.pages.clone();
        let (at, replaced) =
            match pages.binary_search_by(|p| (&p.scope, &p.key).cmp(&(&page.scope, &page.key))) {
                Ok(i) => {
                    pages[i] = page;
                    (i, true)
                }
                Err(i) => {
                    pages.insert(i, page);
                    (i, false)
                }
            };
        let missing = crate::graph::missing_targets(&pages, at);
        if !missing.is_empty() && !opts.allow_dangling {
            return Err(Error::DanglingLinks { page: id, missing });
        }
        let next = self.rebuilt(pages, model)?;
        let chunks = next.chunks_of_id(&id);
        let report = UpsertReport {
            page: id,
            replaced,
            chunks,
            warnings: parsed.warnings,
            dangling: missing,
        };
        Ok((next, report))
    }

    /// The index without the page `key` in `scope` (the page's own scope; `None`: the page
    /// [`Index::page`] finds, global first), its statistics and graph recomputed, with a
    /// report of the pages whose links now dangle because of it. `model` as for
    /// [`Index::upsert_page`].
    ///
    /// # Errors
    /// [`Error::UnknownPage`] if there is no such page; [`Error::Immutable`] for a raw
    /// document id.
    pub fn delete_page(
        &self,
        key: &str,
        scope: Option<&Scope>,
        model: Option<&dyn Embedder>,
    ) -> Result<(Index, DeleteReport)> {
        if self.raw_ids.contains_key(key) {
            return Err(Error::Immutable {
                id: key.to_string(),
            });
        }
        let i = self.position_in(key, scope)?;
        let dependents: Vec<String> = {
            let mut v: Vec<String> = self
                .in_edges(i as u32)
                .filter(|e| e.from != i as u32)
                .map(|e| self.data.pages[e.from as usize].id())
                .collect();
            crate::sort::sort(&mut v);
            v.dedup();
            v
        };
        let missing_before: Vec<usize> = dependents.iter().map(|d| self.missing_count(d)).collect();
        let mut pages = self.data.pages.clone();
        let removed = pages.remove(i);
        let next = self.rebuilt(pages, model)?;
        let broken = dependents
            .into_iter()
            .zip(missing_before)
            .filter(|(d, before)| next.missing_count(d) > *before)
            .map(|(d, _)| d)
            .collect();
        let report = DeleteReport {
            page: removed,
            broken,
        };
        Ok((next, report))
    }

    /// The index with page `key` (in `scope`, the page's own; `None`: the page
    /// [`Index::page`] finds) renamed to `new_key`, leaving a redirect: the page's frontmatter
    /// gains `redirect_from: [<old key>]` (kept with any it had), so links to the old key
    /// still resolve. The file name changes to `<new_key>.md` in the same folder. The report
    /// carries the new path and text for the caller to write to disk. `model` as for
    /// [`Index::upsert_page`].
    ///
    /// # Errors
    /// [`Error::UnknownPage`]; [`Error::DuplicateKey`] if `new_key` is taken in that scope;
    /// [`Error::InvalidArgument`] for an empty new key; [`Error::Immutable`] for a raw
    /// document.
    pub fn rename_page(
        &self,
        key: &str,
        scope: Option<&Scope>,
        new_key: &str,
        model: Option<&dyn Embedder>,
    ) -> Result<(Index, RenameReport)> {
        if self.raw_ids.contains_key(key) {
            return Err(Error::Immutable {
                id: key.to_string(),
            });
        }
        let i = self.position_in(key, scope)?;
        let old = &self.data.pages[i];
        let new_key = page::normalize_key(new_key);
        if new_key.is_empty() || new_key.contains('/') {
            return Err(Error::invalid_argument(
                "the new key must be a non-empty file stem",
            ));
        }
        if let Some(taken) = self
            .data
            .pages
            .iter()
            .find(|p| p.scope == old.scope && p.key == new_key)
        {
            return Err(Error::DuplicateKey {
                key: new_key,
                scope: old.scope.to_string(),
                first: taken.path.clone(),
                second: old.path.clone(),
            });
        }
        let folder = old.path.rsplit_once('/').map_or("", |(f, _)| f);
        let path = if folder.is_empty() {
            format!("{new_key}.md")
        } else {
            format!("{folder}/{new_key}.md")
        };
        let text = page::add_redirect(&old.text, &old.key)?;
        let renamed = page::parse(&path, &text)?.page;
        let from = old.id();
        let to = renamed.id();
        let mut pages = self.data.pages.clone();
        pages.remove(i);
        let at = pages
            .binary_search_by(|p| (&p.scope, &p.key).cmp(&(&renamed.scope, &renamed.key)))
            .unwrap_or_else(|e| e);
        pages.insert(at, renamed);
        let next = self.rebuilt(pages, model)?;
        Ok((
            next,
            RenameReport {
                from,
                to,
                path,
                text,
            },
        ))
    }

    /// Position of the page a write names: with `Some(scope)`, the page `key` in exactly that
    /// scope (the key as given or normalized); with `None`, the page [`Index::page`] finds
    /// (global first, then the lowest-named user scope): `None` means the same for every
    /// call that takes a scope.
    fn position_in(&self, key: &str, scope: Option<&Scope>) -> Result<usize> {
        let unknown = || Error::UnknownPage {
            key: key.to_string(),
        };
        let Some(scope) = scope else {
            return self
                .page_index(key, None)
                .map(|i| i as usize)
                .ok_or_else(unknown);
        };
        let normalized = page::normalize_key(key);
        let pages = &self.data.pages;
        pages
            .iter()
            .position(|p| p.scope == *scope && p.key == key)
            .or_else(|| {
                pages
                    .iter()
                    .position(|p| p.scope == *scope && p.key == normalized)
            })
            .ok_or_else(unknown)
    }

    /// Number of edges of page `id` whose target is missing.
    fn missing_count(&self, id: &str) -> usize {
        self.page_ids().get(id).map_or(0, |&p| {
            self.out_edges(p)
                .iter()
                .filter(|e| matches!(e.to, crate::graph::Target::Missing(_)))
                .count()
        })
    }

    fn chunks_of_id(&self, id: &str) -> usize {
        self.page_ids().get(id).map_or(0, |&p| {
            (self.first_chunk[p as usize + 1] - self.first_chunk[p as usize]) as usize
        })
    }

    /// A new snapshot re-derived from `pages`; stored vectors are kept for unchanged passages
    /// and new ones embedded with `model`.
    fn rebuilt(&self, pages: Vec<Page>, model: Option<&dyn Embedder>) -> Result<Index> {
        let config = self.data.config.clone();
        let raw = self.data.raw.clone();
        let prior = self.prior_chunks();
        let mut data = assemble(config, pages, raw, &prior, &mut |_, _| {
            ControlFlow::Continue(())
        })?;
        // A page keeps its file's time while its text is the one read from the file.
        let times: HashMap<&str, (&str, i64)> = self
            .data
            .pages
            .iter()
            .zip(&self.data.page_modified)
            .filter_map(|(p, t)| Some((p.path.as_str(), (p.text.as_str(), (*t)?))))
            .collect();
        data.set_page_modified(|p| {
            times
                .get(p.path.as_str())
                .filter(|(text, _)| *text == p.text)
                .map(|&(_, t)| t)
        });
        if let Some(old) = &self.data.vectors {
            let known = vectors::known_vectors(&self.data);
            if let Some(m) = model {
                self.check_model(m)?;
            }
            let known_only = vectors::KnownOnly { section: old };
            let embedder: &dyn Embedder = model.unwrap_or(&known_only);
            // New chunks get the prompts the stored ones were embedded after.
            vectors::embed_chunks(
                &mut data,
                embedder,
                &old.prompts,
                old.encoding(),
                &known,
                &mut |_, _| ControlFlow::Continue(()),
            )?;
            // A write keeps the floor the build measured (measuring costs 32 embeddings;
            // `wikidex sync` and any build measure it again).
            data.vectors = data.vectors.take().map(|s| s.with_floor(old.floor));
        }
        Ok(Index::from_data(data))
    }
}

/// An index shared between threads, the way every binding holds one: searches run on the
/// current snapshot ([`SharedIndex::snapshot`], an `Arc` any number of threads hold), and a
/// write builds a new snapshot beside it and swaps it in, so readers never wait for a write
/// and never see half of one. Writes are serialized among themselves.
///
/// # Example
/// ```
/// use wikidex::{IndexBuilder, SearchOptions, SharedIndex};
/// let mut b = IndexBuilder::new(Default::default())?;
/// b.add_file("global/a.md", b"alpha")?;
/// let shared = SharedIndex::new(b.build()?.0);
/// let before = shared.snapshot();
/// shared.update(|index| index.upsert_page("global/b.md", "beta", &Default::default(), None))?;
/// assert_eq!(before.pages().len(), 1); // an old snapshot stays as it was
/// assert_eq!(shared.snapshot().pages().len(), 2);
/// # Ok::<(), wikidex::Error>(())
/// ```
#[derive(Debug)]
pub struct SharedIndex {
    current: std::sync::RwLock<Arc<Index>>,
    writer: std::sync::Mutex<()>,
}

impl SharedIndex {
    /// Shares `index`.
    pub fn new(index: Index) -> SharedIndex {
        SharedIndex {
            current: std::sync::RwLock::new(Arc::new(index)),
            writer: std::sync::Mutex::new(()),
        }
    }

    /// Shares the snapshot `index` (no copy).
    pub(crate) fn from_arc(index: Arc<Index>) -> SharedIndex {
        SharedIndex {
            current: std::sync::RwLock::new(index),
            writer: std::sync::Mutex::new(()),
        }
    }

    /// The current snapshot. It stays valid (and unchanged) however many writes follow.
    pub fn snapshot(&self) -> Arc<Index> {
        // A poisoned lock only means a thread panicked while swapping an `Arc` in: the value
        // is still a whole snapshot.
        Arc::clone(&self.current.read().unwrap_or_else(|e| e.into_inner()))
    }

    /// Runs `write` on the current snapshot and swaps in the snapshot it returns. Nothing
    /// changes when it fails.
    ///
    /// # Errors
    /// Whatever `write` returns.
    pub fn update<R>(&self, write: impl FnOnce(&Index) -> Result<(Index, R)>) -> Result<R> {
        let _one_writer = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        let (next, out) = write(&self.snapshot())?;
        *self.current.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(next);
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build(files: &[(&str, &str)]) -> (Index, BuildReport) {
        let mut b = IndexBuilder::new(Config::default()).unwrap();
        for (p, t) in files {
            b.add_file(p, t.as_bytes()).unwrap();
        }
        b.build().unwrap()
    }

    #[test]
    fn broken_page_is_skipped_and_reported_unless_strict() {
        let files = [
            ("global/ok.md", "fine"),
            ("global/bad.md", "---\na: [\n---\n"),
        ];
        let (index, report) = build(&files);
        assert_eq!(report.pages, 1);
        assert_eq!(report.skipped.len(), 1);
        assert_eq!(report.skipped[0].path, "global/bad.md");
        assert_eq!(report.skipped[0].code, "invalid_page");
        assert!(report.skipped[0].line.is_some());
        assert!(index.page("ok", None).is_ok());
        let mut strict = IndexBuilder::new(Config::default()).unwrap();
        strict.strict(true);
        strict.add_file(files[0].0, files[0].1.as_bytes()).unwrap();
        assert_eq!(
            strict
                .add_file(files[1].0, files[1].1.as_bytes())
                .unwrap_err()
                .code(),
            "invalid_page"
        );
    }

    #[test]
    fn invalid_utf8_is_reported_with_its_line() {
        let mut b = IndexBuilder::new(Config::default()).unwrap();
        b.add_file("x.md", b"line one\nbad \xff byte").unwrap();
        let (_, report) = b.build().unwrap();
        assert_eq!(report.skipped[0].line, Some(2));
    }

    #[test]
    fn duplicate_keys_in_one_scope_are_reported_but_scopes_may_share_keys() {
        let (index, report) = build(&[
            ("a/revenue.md", "one"),
            ("b/Revenue.md", "two"),
            ("user/alice/revenue.md", "alice's"),
        ]);
        assert_eq!(report.pages, 2);
        assert_eq!(report.skipped[0].code, "duplicate_key");
        let alice = Scope::User("alice".into());
        assert_eq!(
            index.page("revenue", Some(&alice)).unwrap().body(),
            "alice's"
        );
        assert_eq!(
            index.page("revenue", Some(&Scope::Global)).unwrap().body(),
            "one"
        );
    }

    #[test]
    fn page_ids_respect_the_scope_asked_for() {
        let (index, _) = build(&[("global/a.md", "g"), ("user/bob/a.md", "b")]);
        let bob = Scope::User("bob".into());
        assert_eq!(index.page("user/bob/a", Some(&bob)).unwrap().body(), "b");
        assert_eq!(
            index
                .page("user/bob/a", Some(&Scope::Global))
                .unwrap_err()
                .code(),
            "unknown_page"
        );
        assert_eq!(
            index
                .page("user/bob/a", Some(&Scope::User("eve".into())))
                .unwrap_err()
                .code(),
            "unknown_page"
        );
        assert_eq!(
            index
                .page("a", Some(&Scope::User("eve".into())))
                .unwrap()
                .body(),
            "g"
        );
    }

    #[test]
    fn pages_with_unnormalized_keys_can_be_deleted() {
        let mut b = IndexBuilder::new(Config::default()).unwrap();
        b.add_beir_corpus_lines("MED-10", "text");
        let (index, _) = b.build().unwrap();
        assert_eq!(
            index.delete_page("MED-10", None, None).unwrap().1.page.key,
            "MED-10"
        );
    }

    #[test]
    fn an_archived_user_page_no_longer_shadows_the_global_one() {
        let (index, _) = build(&[
            ("global/rev.md", "revenue global"),
            (
                "user/bob/rev.md",
                "---\narchived_since: 2024-01-01\n---\nrevenue bob",
            ),
        ]);
        let opts = crate::SearchOptions {
            scope: Some(Scope::User("bob".into())),
            ..Default::default()
        };
        let hits = index.search("revenue", &opts).unwrap().hits;
        assert_eq!(
            hits.iter().map(|h| h.page_id.as_str()).collect::<Vec<_>>(),
            ["rev"]
        );
    }

    #[test]
    fn chunk_lookup_is_exact() {
        let (index, _) = build(&[("global/a.md", "text"), ("user/bob/a.md", "bob text")]);
        assert_eq!(index.chunk("a::chunk_0").unwrap().text, "text");
        assert_eq!(index.chunk("user/bob/a::chunk_0").unwrap().text, "bob text");
        for bad in ["a::chunk_1", "b::chunk_0", "a", "a::chunk_00", ""] {
            assert_eq!(
                index.chunk(bad).unwrap_err().code(),
                "unknown_chunk",
                "{bad}"
            );
        }
    }

    #[test]
    fn upsert_and_delete_match_a_fresh_build_byte_for_byte() {
        let opts = WriteOptions::default();
        let (index, _) = build(&[("global/a.md", "alpha"), ("global/c.md", "gamma")]);
        let (index, r) = index
            .upsert_page("global/b.md", "beta [[a]]", &opts, None)
            .unwrap();
        assert!(!r.replaced);
        let (fresh, _) = build(&[
            ("global/a.md", "alpha"),
            ("global/b.md", "beta [[a]]"),
            ("global/c.md", "gamma"),
        ]);
        assert_eq!(index.to_bytes().unwrap(), fresh.to_bytes().unwrap());
        let (index, r) = index
            .upsert_page("global/b.md", "beta two", &opts, None)
            .unwrap();
        assert!(r.replaced);
        let (index, _) = index.delete_page("b", None, None).unwrap();
        let (index, _) = index.delete_page("c", None, None).unwrap();
        let (fresh, _) = build(&[("global/a.md", "alpha")]);
        assert_eq!(index.to_bytes().unwrap(), fresh.to_bytes().unwrap());
    }

    #[test]
    fn a_progress_callback_that_breaks_cancels_the_build() {
        let mut b = IndexBuilder::new(Config::default()).unwrap();
        for i in 0..5 {
            b.add_file(&format!("global/p{i}.md"), b"text").unwrap();
        }
        let mut seen = Vec::new();
        let err = b
            .build_with_progress(&mut |stage, done, total| {
                seen.push((stage, done, total));
                if done == 2 {
                    ControlFlow::Break(())
                } else {
                    ControlFlow::Continue(())
                }
            })
            .unwrap_err();
        assert_eq!(err.code(), "cancelled");
        assert_eq!(err.details(), serde_json::json!({"stage": "pages"}));
        assert_eq!(
            seen,
            [(BuildStage::Pages, 1, 5), (BuildStage::Pages, 2, 5)],
            "no callback after the break"
        );
    }

    #[test]
    fn failed_writes_leave_the_session_index_unchanged() {
        let (index, _) = build(&[("global/a.md", "alpha")]);
        let session = crate::Session::new(index);
        let before = session.index().to_bytes().unwrap();
        assert_eq!(
            session
                .upsert_page(
                    "global/x.md",
                    "---\nbad: [\n---\n",
                    &WriteOptions::default()
                )
                .unwrap_err()
                .code(),
            "invalid_page"
        );
        assert_eq!(
            session.delete_page("nope", None).unwrap_err().code(),
            "unknown_page"
        );
        assert_eq!(session.index().to_bytes().unwrap(), before);
    }

    #[test]
    fn readers_keep_their_snapshot_while_a_write_swaps_in_a_new_one() {
        let (index, _) = build(&[("global/a.md", "alpha")]);
        let shared = SharedIndex::new(index);
        let old = shared.snapshot();
        std::thread::scope(|s| {
            let readers: Vec<_> = (0..4)
                .map(|_| {
                    s.spawn(|| {
                        for _ in 0..50 {
                            let snap = shared.snapshot();
                            let n = snap.pages().len();
                            let hits = snap
                                .search("alpha beta", &crate::SearchOptions::default())
                                .unwrap()
                                .hits;
                            // A snapshot is whole: its search sees exactly its own pages.
                            assert!(hits.len() <= n && (n == 1 || n == 2));
                        }
                    })
                })
                .collect();
            shared
                .update(|index| {
                    index.upsert_page("global/b.md", "beta [[a]]", &WriteOptions::default(), None)
                })
                .unwrap();
            for r in readers {
                r.join().unwrap();
            }
        });
        assert_eq!(old.pages().len(), 1);
        assert_eq!(shared.snapshot().pages().len(), 2);
        let err = shared
            .update(|index| {
                index.upsert_page("global/c.md", "[[nowhere]]", &WriteOptions::default(), None)
            })
            .unwrap_err();
        assert_eq!(err.code(), "dangling_links");
        assert_eq!(err.details()["missing"], serde_json::json!(["nowhere"]));
        assert_eq!(
            shared.snapshot().pages().len(),
            2,
            "a failed write swaps nothing in"
        );
    }

    #[test]
    fn none_scope_means_the_page_lookups_find_for_every_call() {
        let (index, _) = build(&[("user/bob/only.md", "bob's"), ("global/g.md", "g")]);
        assert_eq!(index.page("only", None).unwrap().id(), "user/bob/only");
        // A write with no scope names the same page a look-up finds.
        assert_eq!(
            index.delete_page("only", None, None).unwrap().1.page.id(),
            "user/bob/only"
        );
    }

    #[test]
    fn save_is_atomic_and_round_trips() {
        let (index, _) = build(&[("global/a.md", "alpha")]);
        let dir = std::env::temp_dir().join(format!("wikidex-save-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("index.wdx");
        index.save(&path).unwrap();
        let loaded = Index::open(&path).unwrap();
        assert_eq!(loaded.to_bytes().unwrap(), index.to_bytes().unwrap());
        let leftovers: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
        assert_eq!(leftovers.len(), 1, "no temporary file is left behind");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Issue 26: the walk lists `zzzz.md` as a file inside the wiki, then it becomes a link to
    /// a file outside before it is read: the file outside is not read (here deterministically,
    /// between the listing and the reads that `add_dir` runs one after the other).
    #[cfg(unix)]
    #[test]
    fn a_link_swapped_in_after_the_listing_is_not_read_through() {
        let dir = std::env::temp_dir().join(format!("wikidex-swap-{}", std::process::id()));
        let wiki = dir.join("wiki");
        std::fs::create_dir_all(wiki.join("global")).unwrap();
        std::fs::write(wiki.join("global/aaaa.md"), "alpha page").unwrap();
        let swapped = wiki.join("global/zzzz.md");
        std::fs::write(&swapped, "zulu page").unwrap();
        let secret = dir.join("secret.md");
        std::fs::write(&secret, "the outside secret").unwrap();
        // A folder swapped for a link to outside is caught the same way.
        std::fs::create_dir_all(wiki.join("notes")).unwrap();
        std::fs::write(wiki.join("notes/n.md"), "note page").unwrap();
        let outside = dir.join("outside");
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("n.md"), "the outside note").unwrap();

        let listing = wiki_files(&wiki, false).unwrap();
        assert_eq!(listing.files.len(), 3);
        std::fs::remove_file(&swapped).unwrap();
        std::os::unix::fs::symlink(&secret, &swapped).unwrap();
        std::fs::rename(wiki.join("notes"), dir.join("notes-moved")).unwrap();
        std::os::unix::fs::symlink(&outside, wiki.join("notes")).unwrap();

        let mut b = IndexBuilder::new(Config::default()).unwrap();
        b.add_listing(listing).unwrap();
        let (index, report) = b.build().unwrap();
        let texts: Vec<&str> = index.pages().iter().map(|p| p.text.as_str()).collect();
        assert_eq!(texts, ["alpha page"], "nothing outside the root is read");
        let mut skipped: Vec<(&str, &str)> = report
            .skipped
            .iter()
            .map(|s| (s.path.as_str(), s.code.as_str()))
            .collect();
        skipped.sort();
        assert_eq!(
            skipped,
            [
                ("global/zzzz.md", crate::record::SKIPPED_OUTSIDE_ROOT),
                ("notes/n.md", crate::record::SKIPPED_OUTSIDE_ROOT),
            ]
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Issue 26: a save replaces a missing or empty file or a blob, nothing else; a FIFO (or a
    /// link to one) is refused without blocking, and stays a FIFO.
    #[cfg(unix)]
    #[test]
    fn a_save_replaces_only_a_blob_or_nothing() {
        use std::os::unix::fs::FileTypeExt;
        let (index, _) = build(&[("global/a.md", "alpha")]);
        let dir = std::env::temp_dir().join(format!("wikidex-save-to-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("fifo");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let link = dir.join("link-to-fifo");
        std::os::unix::fs::symlink(&fifo, &link).unwrap();
        for target in [&fifo, &link] {
            let err = index.save(target).unwrap_err();
            assert_eq!(err.code(), "invalid_argument", "{err}");
            assert!(err.to_string().contains("a FIFO"), "{err}");
            let kind = std::fs::metadata(&fifo).unwrap().file_type();
            assert!(kind.is_fifo(), "the FIFO is left as it was");
        }
        let note = dir.join("notes.txt");
        std::fs::write(&note, "my notes").unwrap();
        assert_eq!(index.save(&note).unwrap_err().code(), "invalid_argument");
        assert_eq!(std::fs::read_to_string(&note).unwrap(), "my notes");
        let empty = dir.join("empty.wdx");
        std::fs::write(&empty, "").unwrap();
        index.save(&empty).unwrap();
        index.save(&empty).unwrap();
        assert!(Index::open(&empty).is_ok());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Issue 26: the temporary file of a killed save (nobody holds its lock) is removed by the
    /// next save beside it; one a live save holds is left; a long name still saves.
    #[test]
    fn a_killed_saves_temporary_file_goes_with_the_next_save() {
        let (index, _) = build(&[("global/a.md", "alpha")]);
        let dir = std::env::temp_dir().join(format!("wikidex-temps-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("index.wdx");
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
        let left = dir.join(".index.wdx.tmp-4000000-0-0");
        let held = dir.join(".index.wdx.tmp-4000001-0-0");
        for p in [&left, &held] {
            let f = std::fs::File::create(p).unwrap();
            f.set_modified(old).unwrap();
        }
        let holder = std::fs::File::open(&held).unwrap();
        holder.lock().unwrap();
        index.save(&path).unwrap();
        assert!(!left.exists(), "the killed save's file is removed");
        assert!(held.exists(), "a file whose save still runs is left");
        drop(holder);

        let long = dir.join("l".repeat(250));
        index.save(&long).unwrap();
        assert!(Index::open(&long).is_ok());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
