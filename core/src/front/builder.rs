//! [`IndexBuilder`]: collects pages from files, folders and BEIR corpora, then builds an
//! [`Index`] (on a previous one, when given, redoing only what changed).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::ops::ControlFlow;
#[cfg(feature = "fs")]
use std::path::Path;
use std::sync::Arc;

use crate::data::config::Config;
use crate::data::config::Language;
use crate::data::error::{Error, Result};
use crate::data::record::{BuildReport, BuildStage, LanguageMix, Skipped, SyncReport, Warning};
use crate::embed::Embedder;
#[cfg(feature = "fs")]
#[cfg(feature = "fs")]
use crate::front::file::Listed;
#[cfg(feature = "fs")]
use crate::front::walk::{files_under, wiki_files, Listing, Unlisted};
use crate::index::vectors::{self, Attached, Known};
use crate::index::write::{assemble, cancelled, Change, Cut, Cuts, PAGES_PER_THREAD};
use crate::index::Index;
use crate::lane::semantic::VectorEncoding;
use crate::text::chunk::{self, ChunkRecord};
use crate::text::page::{self, Page, Scope};
use crate::text::raw::{self, RawDoc, RawSection};

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
pub struct IndexBuilder<'p> {
    config: Config,
    strict: bool,
    follow_outside_root: bool,
    embedder: Option<Attached>,
    encoding: VectorEncoding,
    pages: Pages,
    raw: BTreeMap<String, RawDoc>,
    report: BuildReport,
    previous: Option<Previous<'p>>,
    /// Vectors of indexes built on ([`IndexBuilder::previous`], [`IndexBuilder::add_index`])
    /// that the build takes instead of embedding a passage again.
    reusable: Vec<Known<'static>>,
    /// Path → modification time (Unix seconds) of each file read from a folder.
    modified: HashMap<String, i64>,
    file_times: bool,
    /// The languages of `pages`, once asked for ([`IndexBuilder::languages`]); dropped when a
    /// page is added.
    languages: Option<LanguageMix>,
    /// The languages of the pages that came with indexes ([`IndexBuilder::add_index`], and
    /// [`IndexBuilder::previous`]'s, whose pages not taken unchanged [`IndexBuilder::languages`]
    /// takes out): each index's own mix, less its pages dropped since as duplicates. A merge
    /// or a sync does not detect them again.
    indexed_languages: LanguageMix,
    /// The slots of `pages` holding a page counted in `indexed_languages`.
    indexed: HashSet<(Scope, String)>,
}

/// What a build on a previous index can take from it (see [`IndexBuilder::previous`]).
#[derive(Debug)]
struct Previous<'p> {
    /// The index itself, which a build whose settings and raw layer are its own splices the
    /// changed pages into ([`Index::spliced`]).
    index: &'p Index,
    /// Path → the page or raw document indexed from it, with the file's verbatim text.
    files: HashMap<&'p str, Stored<'p>>,
    /// Paths given to this build, and how each compared.
    seen: HashSet<String>,
    /// Paths of the pages taken unchanged (their languages counted in the builder's
    /// `indexed_languages`, which holds `previous`'s whole mix).
    reused: HashSet<String>,
    added: Vec<String>,
    changed: Vec<String>,
    unchanged: usize,
}

/// A page or raw document of the index a build is on (borrowed from it).
#[derive(Debug, Clone, Copy)]
enum Stored<'p> {
    /// A page, with its chunks when the previous index cut it with this builder's chunk
    /// sizes: an unchanged page is not cut again ([`crate::index::write::Cuts`]).
    Page(&'p Arc<Page>, Option<&'p [ChunkRecord]>),
    Raw(&'p RawDoc),
}

impl<'p> Stored<'p> {
    fn text(&self) -> &'p str {
        match self {
            Stored::Page(p, _) => &p.text,
            Stored::Raw(d) => &d.text,
        }
    }
}

impl<'p> IndexBuilder<'p> {
    /// A builder with `config`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if a config value is out of range.
    pub fn new(config: Config) -> Result<Self> {
        config.validate()?;
        Ok(IndexBuilder {
            config,
            strict: false,
            follow_outside_root: false,
            embedder: None,
            encoding: VectorEncoding::F32,
            pages: Pages::default(),
            raw: BTreeMap::new(),
            report: BuildReport::default(),
            previous: None,
            reusable: Vec::new(),
            modified: HashMap::new(),
            file_times: true,
            indexed_languages: LanguageMix::default(),
            indexed: HashSet::new(),
            languages: None,
        })
    }

    /// Builds on `previous`, the index these files gave last time (loaded from its blob), so
    /// that only what changed is redone:
    /// - a file given to [`IndexBuilder::add_file`] (or read by [`IndexBuilder::add_dir`])
    ///   whose bytes are the text `previous` indexed at the same path is taken from it
    ///   without parsing, the page itself shared with `previous` (the blob keeps every
    ///   file's text verbatim, so the comparison is exact; no separate hash is needed);
    /// - every passage `previous` embedded keeps its vector when this builder's embedder has
    ///   the same fingerprint, so only new or edited chunks are embedded; the vectors keep
    ///   `previous`'s encoding;
    /// - the pages' languages are `previous`'s counts: only the files changed, added or
    ///   removed are detected;
    /// - when fewer than 2,048 pages changed (added, edited or removed; an edited page counts
    ///   twice) and `previous` has this build's configuration and
    ///   raw documents, only the changed pages are cut and analyzed, and spliced into
    ///   `previous`'s postings, positions and graph, as [`Index::upsert_page`] does (so the
    ///   builder borrows `previous` until it builds); otherwise each unchanged page keeps its
    ///   chunks (when `previous` has this builder's chunk sizes) and the index is made again;
    /// - [`IndexBuilder::sync_with_progress`] reports the files added, changed and removed.
    ///
    /// The index built is the one a build from scratch gives for the same files (byte for
    /// byte, apart from the vectors of reused passages, which are the stored ones). The
    /// warnings reported are those of the files parsed, not of the files taken unchanged.
    pub fn previous(&mut self, previous: &'p Index) -> &mut Self {
        let data = &previous.data;
        let same_sizes = data.config.chunk == self.config.chunk;
        let mut files: HashMap<&str, Stored<'p>> = (data.pages.iter().enumerate())
            .map(|(i, p)| {
                let chunks = same_sizes.then(|| previous.page_chunks(i));
                (p.path.as_str(), Stored::Page(p, chunks))
            })
            .collect();
        files.extend((data.raw.docs.iter()).map(|d| (d.path.as_str(), Stored::Raw(d))));
        if let Some(v) = &data.vectors {
            self.encoding = v.encoding();
        }
        self.reusable.extend(Known::copied(data));
        self.indexed_languages = self.indexed_languages.plus(&data.languages);
        self.previous = Some(Previous {
            index: previous,
            files,
            seen: HashSet::new(),
            reused: HashSet::new(),
            added: Vec::new(),
            changed: Vec::new(),
            unchanged: 0,
        });
        self
    }

    /// Adds every page and raw document of `index` as it indexed them (with the modification
    /// times it recorded, unless [`IndexBuilder::file_times`] is off), and lets the build take
    /// the vectors `index` holds: a passage it embedded is not embedded again when this
    /// builder's embedder is the same model (fingerprint, dimension and prompts).
    ///
    /// This merges shards: indexes built, each from part of a wiki's files (on several
    /// machines, say: `wikidex.distributed`), added together to a builder with the same
    /// options and model give the index one build of all the files gives, byte for byte
    /// (tested on CACM in four shards), having embedded nothing. The lexical index, the graph
    /// and the semantic floor are made again from all the pages, so the statistics are those
    /// of the whole. Pages are deduplicated across indexes as files are
    /// ([`IndexBuilder::add_page`]); the warnings and skipped files of the shards' own builds
    /// are in their reports, not in this one.
    ///
    /// # Errors
    /// In strict mode, [`Error::DuplicateKey`] for a page in two indexes.
    pub fn add_index(&mut self, index: &Index) -> Result<()> {
        let data = &index.data;
        // Its pages' languages, as its build detected them (kept current by page writes).
        self.indexed_languages = self.indexed_languages.plus(&data.languages);
        for (i, page) in data.pages.iter().enumerate() {
            let time = data.page_modified.get(i).copied().flatten();
            if let Some(t) = time.filter(|_| self.file_times) {
                self.modified.insert(page.path.clone(), t);
            }
            self.insert_page(Arc::clone(page), true)?;
        }
        for doc in &data.raw.docs {
            self.add_raw(doc.clone())?;
        }
        self.reusable.extend(Known::copied(data));
        Ok(())
    }

    /// In strict mode the first page that cannot be used fails the build instead of being
    /// skipped and reported.
    pub fn strict(&mut self, strict: bool) -> &mut Self {
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
    pub fn file_times(&mut self, record: bool) -> &mut Self {
        self.file_times = record;
        self
    }

    /// Embeds every chunk with `embedder` at build time (the semantic lane). A
    /// [`crate::Session`] over the built index then embeds queries with it.
    pub fn embedder(&mut self, embedder: Arc<dyn Embedder>) -> &mut Self {
        self.embedder = Some(Attached(embedder));
        self
    }

    /// How to store the vectors (default [`VectorEncoding::F32`]).
    pub fn vector_encoding(&mut self, encoding: VectorEncoding) -> &mut Self {
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
        crate::data::sort::sort_by(&mut files, |a, b| a.0.as_ref().cmp(b.0.as_ref()));
        for (path, bytes) in &files {
            self.add_file(path.as_ref(), bytes.as_ref())?;
        }
        Ok(())
    }

    /// Adds one Markdown file (`path` relative to the wiki root, `/`-separated). A file that
    /// cannot be parsed is skipped and listed in the report. A file under `raw/` is a raw
    /// source document (see [`raw`](crate::text::raw)), not a page.
    ///
    /// # Errors
    /// In strict mode, the error that made the file unusable.
    pub fn add_file(&mut self, path: &str, bytes: &[u8]) -> Result<()> {
        if let Some(prev) = &mut self.previous {
            prev.seen.insert(path.to_string());
            match prev.files.get(path).copied() {
                Some(stored) if stored.text().as_bytes() == bytes => {
                    prev.unchanged += 1;
                    return match stored {
                        Stored::Page(p, _) => {
                            prev.reused.insert(path.to_string());
                            self.insert_page(Arc::clone(p), true)
                        }
                        Stored::Raw(d) => self.add_raw(d.clone()),
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
        let keys = self.config.keys;
        if let Some(doc) = raw::document(path, "").filter(|_| keys == page::Keys::FileName) {
            return match text {
                Ok(text) => self.add_raw(RawDoc {
                    text: text.to_string(),
                    ..raw::document(path, text).unwrap_or(doc)
                }),
                Err(e) => self.skip(e),
            };
        }
        let parsed = text.and_then(|text| page::parse_with(path, text, keys));
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
        self.insert_page(Arc::new(page), false)
    }

    /// Adds `page`, keeping the one with the smaller path of two with the same key in one
    /// scope. `indexed`: it came with an index, its language counted in `indexed_languages`.
    fn insert_page(&mut self, page: Arc<Page>, indexed: bool) -> Result<()> {
        self.languages = None;
        if let Some(prev) = &mut self.previous {
            prev.seen.insert(page.path.clone());
        }
        let slot = (page.scope.clone(), page.key.clone());
        let Some(first) = self.pages.get(&slot) else {
            self.set_indexed(&slot, indexed);
            self.pages.insert(slot, page);
            return Ok(());
        };
        let (kept, dropped, dropped_indexed) = if first.path <= page.path {
            (first.path.clone(), page, indexed)
        } else {
            let kept = page.path.clone();
            let was_indexed = self.indexed.contains(&slot);
            self.set_indexed(&slot, indexed);
            let Some(old) = self.pages.insert(slot, page) else {
                return Ok(());
            };
            (kept, old, was_indexed)
        };
        if dropped_indexed {
            let code = crate::text::language::detect_page(&dropped);
            self.indexed_languages = self.indexed_languages.changed([code], []);
        }
        let err = Error::DuplicateKey {
            key: dropped.key.clone(),
            scope: dropped.scope.to_string(),
            first: kept,
            second: dropped.path.clone(),
        };
        self.skip_at(dropped.path.clone(), err)
    }

    fn set_indexed(&mut self, slot: &(Scope, String), indexed: bool) {
        if indexed {
            self.indexed.insert(slot.clone());
        } else {
            self.indexed.remove(slot);
        }
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
            match crate::front::file::read_listed(&full, root) {
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

    /// Adds the files `files` of the wiki folder `root` (paths relative to it, as
    /// [`crate::folder_files`] lists them), as [`IndexBuilder::add_dir`] adds them, with their
    /// modification times: one part of a folder built in parts and merged
    /// ([`IndexBuilder::add_index`]). The folder is walked again, so a file is read only if the
    /// walk lists it (the same checks as [`IndexBuilder::add_dir`]); a path it does not list
    /// (removed since, or not a wiki file) is skipped and reported with code
    /// `invalid_argument`. What the walk left out of the folder is not reported: it belongs to
    /// no part.
    ///
    /// # Errors
    /// [`Error::Io`] if `root` cannot be read; in strict mode, the first unusable page, file
    /// that cannot be read, or path not listed.
    #[cfg(feature = "fs")]
    pub fn add_dir_files(&mut self, root: &Path, files: &[String]) -> Result<()> {
        let mut listing = wiki_files(root, self.follow_outside_root)?;
        listing.skipped.clear();
        // What the walk lists comes out of `unlisted`; what is left, it did not list.
        let mut unlisted: HashSet<&str> = files.iter().map(String::as_str).collect();
        listing
            .files
            .retain(|(rel, _)| unlisted.remove(rel.as_str()));
        let mut unlisted: Vec<&str> = unlisted.into_iter().collect();
        crate::data::sort::sort(&mut unlisted);
        for rel in unlisted {
            let reason = format!(
                "{rel} is not a Markdown file or raw document of {}",
                root.display()
            );
            self.skip_at(rel.to_string(), Error::invalid_argument(reason))?;
        }
        self.add_listing(listing)
    }

    /// Reads and adds the files a walk of the wiki's folder listed, each checked again on the
    /// handle read ([`crate::front::file::read_listed`]).
    #[cfg(feature = "fs")]
    fn add_listing(&mut self, files: Listing) -> Result<()> {
        self.skip_unlisted(files.skipped, &|rel| rel.to_string())?;
        let real_root = files.keep_within.as_deref();
        for (rel, full) in files.files {
            match crate::front::file::read_listed(&full, real_root) {
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
            code: crate::data::record::SKIPPED_OUTSIDE_ROOT.to_string(),
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
        use std::io::BufRead;
        // Read a line at a time: the whole file (722 MB for a million documents) would sit
        // beside the pages made from it, and leave a hole its size in the heap after.
        let (file, _) = crate::front::file::open_regular(path)?;
        let mut reader = std::io::BufReader::new(file);
        let mut text = String::new();
        for i in 0usize.. {
            text.clear();
            match reader.read_line(&mut text) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::InvalidData => {
                    return Err(Error::invalid_argument(format!(
                        "{} is not UTF-8 (line {})",
                        path.display(),
                        i + 1
                    )))
                }
                Err(e) => return Err(Error::io(path, e)),
            }
            let line = text.strip_suffix('\n').unwrap_or(&text);
            let line = line.strip_suffix('\r').unwrap_or(line);
            if line.trim().is_empty() {
                continue;
            }
            let at = format!("corpus.jsonl:{}", i + 1);
            match crate::front::eval::beir_doc(line) {
                Ok((id, title, body)) => {
                    // BEIR ids are kept verbatim (`MED-10`), not normalized.
                    let page = page_from_record(at, id, title, body);
                    match check_page(&page, false) {
                        Ok(()) => self.insert_page(Arc::new(page), false)?,
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
        self.insert_page(Arc::new(page), false).unwrap();
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

    /// The languages of the pages added so far ([`crate::language::mix`]), detected once
    /// and kept for the build (until another page is added), so a caller can choose by them
    /// (the default model: [`crate::build`]) without the pages being read twice.
    pub fn languages(&mut self) -> &LanguageMix {
        let (pages, indexed) = (&self.pages, &self.indexed);
        let (known, previous) = (&self.indexed_languages, &self.previous);
        self.languages.get_or_insert_with(|| {
            // The pages of indexes are counted in `known`, with every page of `previous`:
            // those of its pages not taken unchanged come out, and only the pages not from an
            // index are read.
            let gone = previous.iter().flat_map(|p| {
                p.files.iter().filter_map(|(path, stored)| match stored {
                    Stored::Page(page, _) if !p.reused.contains(*path) => Some(Arc::as_ref(page)),
                    _ => None,
                })
            });
            let rest = pages
                .iter()
                .filter(|(slot, _)| !indexed.contains(*slot))
                .map(|(_, page)| page);
            let gone = crate::text::language::mix(gone);
            let rest = crate::text::language::mix(rest);
            known.minus(&gone).plus(&rest)
        })
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
        mut self,
        progress: &mut dyn FnMut(BuildStage, usize, usize) -> ControlFlow<()>,
    ) -> Result<(Index, SyncReport)> {
        let languages = self.languages().clone();
        let modified = self.modified;
        let mut report = self.report;
        let mut config = self.config;
        if config.language.is_none() {
            let (language, why) = Language::for_mix(&languages);
            config.language = Some(language);
            report.language_reason = Some(why);
        }
        report.languages = languages.clone();
        let pages = self.pages.into_sorted();
        let raw = RawSection::build(self.raw.into_values().collect(), &config.chunk)?;
        // On an index with these settings and this raw layer, fewer pages changed than one
        // thread analyzes: the changed ones are spliced into it, as a write does.
        let splice = (self.previous.as_ref())
            .filter(|p| p.index.data.config == config && *p.index.data.raw == raw)
            .map(|p| (p.index, Change::between(&p.index.data.pages, &pages)))
            .filter(|(_, change)| change.added.len() + change.removed.len() < PAGES_PER_THREAD);
        let mut data = if let Some((index, change)) = splice {
            let total = pages.len();
            let names = crate::graph::Names::new(&pages);
            let data = index.spliced(pages, &names, &change, languages)?;
            if progress(BuildStage::Pages, total, total).is_break() {
                return Err(cancelled());
            }
            data
        } else {
            // Page id → its chunks' hashes and id numbers, so edits keep chunk ids.
            let prior = (self.previous.as_ref())
                .map_or_else(chunk::PriorChunks::new, |p| p.index.prior_chunks());
            let cuts: Cuts<'_> = (self.previous.iter().flat_map(|p| &p.files))
                .filter_map(|(path, stored)| match stored {
                    Stored::Page(page, Some(chunks)) => Some((*path, Cut { page, chunks })),
                    _ => None,
                })
                .collect();
            assemble(config, languages, pages, raw, &prior, &cuts, &mut |d, t| {
                progress(BuildStage::Pages, d, t)
            })?
        };
        let times = (data.pages.iter()).map(|p| modified.get(&p.path).copied());
        data.set_page_modified(times.collect());
        let previous = self.previous;
        let mut embedded = 0;
        if let Some(e) = &self.embedder {
            let known: Vec<&Known<'_>> = self
                .reusable
                .iter()
                .filter(|k| k.made_by(e.0.as_ref()))
                .collect();
            embedded = vectors::embed_chunks(
                &mut data,
                e.0.as_ref(),
                e.0.prompts(),
                self.encoding,
                &known,
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
                    .filter(|path| !p.seen.contains(*path))
                    .map(str::to_string)
                    .collect();
                crate::data::sort::sort(&mut removed);
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
                crate::data::sort::sort(&mut sync.added);
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

/// The pages added, by scope and key. The pages lie in a list in the order they came and
/// the map holds their places: a map of the pages themselves kept each (488 bytes and its
/// key) in tree nodes about two thirds full, and a large build's memory kept the holes the
/// nodes left once the pages moved out.
#[derive(Debug, Default)]
struct Pages {
    places: BTreeMap<(Scope, String), usize>,
    list: Vec<Arc<Page>>,
}

impl Pages {
    fn get(&self, slot: &(Scope, String)) -> Option<&Page> {
        self.places.get(slot).map(|&i| &*self.list[i])
    }

    /// Puts `page` at `slot`, and gives back the page it replaces there, as a map does.
    fn insert(&mut self, slot: (Scope, String), page: Arc<Page>) -> Option<Arc<Page>> {
        match self.places.entry(slot) {
            std::collections::btree_map::Entry::Occupied(place) => {
                Some(std::mem::replace(&mut self.list[*place.get()], page))
            }
            std::collections::btree_map::Entry::Vacant(place) => {
                place.insert(self.list.len());
                self.list.push(page);
                None
            }
        }
    }

    /// Each slot and its page, in slot order.
    fn iter(&self) -> impl Iterator<Item = (&(Scope, String), &Page)> {
        self.places.iter().map(|(slot, &i)| (slot, &*self.list[i]))
    }

    /// The pages in slot order (by scope, then key).
    fn into_sorted(self) -> Vec<Arc<Page>> {
        let mut list: Vec<Option<Arc<Page>>> = self.list.into_iter().map(Some).collect();
        let mut sorted = Vec::with_capacity(self.places.len());
        sorted.extend(self.places.into_values().filter_map(|i| list[i].take()));
        sorted
    }
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::front::shared::SharedIndex;
    use crate::index::write::WriteOptions;

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
    #[cfg(feature = "fs")]
    fn a_beir_corpus_is_read_a_line_at_a_time_with_its_line_numbers() {
        let dir = std::env::temp_dir().join(format!("wikidex-beir-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let corpus = dir.join("corpus.jsonl");
        std::fs::write(
            &corpus,
            "{\"_id\": \"a\", \"title\": \"Alpha\", \"text\": \"one\"}\r\n\n  \n\
             not json\n{\"_id\": 7, \"text\": \"seven\"}",
        )
        .unwrap();
        let mut b = IndexBuilder::new(Config::default()).unwrap();
        b.add_beir_corpus(&corpus).unwrap();
        let (index, report) = b.build().unwrap();
        assert_eq!(report.pages, 2);
        assert_eq!(index.page("a", None).unwrap().title, "Alpha");
        assert_eq!(index.page("a", None).unwrap().path, "corpus.jsonl:1");
        assert_eq!(index.page("7", None).unwrap().text, "seven");
        assert_eq!(index.page("7", None).unwrap().path, "corpus.jsonl:5");
        assert_eq!(report.skipped.len(), 1);
        assert_eq!(report.skipped[0].line, Some(4));
        std::fs::write(&corpus, b"{\"_id\": \"a\", \"text\": \"x\"}\n\xff\n").unwrap();
        let e = IndexBuilder::new(Config::default())
            .unwrap()
            .add_beir_corpus(&corpus)
            .unwrap_err();
        assert_eq!(e.code(), "invalid_argument");
        assert!(e.to_string().contains("line 2"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
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

    /// A page given whole may say its body starts elsewhere than its parse would: a build on
    /// a previous index cuts it as a fresh build does, not as the previous index's page with
    /// the same path and text was cut.
    #[test]
    fn a_page_with_another_body_start_is_cut_again() {
        let text = "---\ntitle: A title\n---\nRevenue is recognized monthly.";
        let (first, _) = build(&[("global/a.md", text)]);
        assert!(first.pages()[0].body_start > 0);
        let page = Page {
            body_start: 0,
            ..Page::clone(&first.pages()[0])
        };
        let built = |previous: Option<&Index>| {
            let mut b = IndexBuilder::new(Config::default()).unwrap();
            if let Some(p) = previous {
                b.previous(p);
            }
            b.add_page(page.clone()).unwrap();
            b.build().unwrap().0.to_bytes().unwrap()
        };
        assert_eq!(built(Some(&first)), built(None));
        assert_ne!(built(None), first.to_bytes().unwrap());
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
                ("global/zzzz.md", crate::data::record::SKIPPED_OUTSIDE_ROOT),
                ("notes/n.md", crate::data::record::SKIPPED_OUTSIDE_ROOT),
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
