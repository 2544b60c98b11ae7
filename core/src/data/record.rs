//! Plain records the build reports (what was indexed, skipped and odd), shared by the builder
//! and lint.

use serde::{Deserialize, Serialize};

/// A file or record the build could not use, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Skipped {
    /// Path relative to the wiki root; for a BEIR record, `corpus.jsonl` (with `line`) when the
    /// line is malformed, or `corpus.jsonl:<line>` for a duplicate id.
    pub path: String,
    /// 1-based line of the problem, when known.
    pub line: Option<u32>,
    /// The error code (`invalid_page`, `duplicate_key`, `io`, ...), or
    /// [`SKIPPED_OUTSIDE_ROOT`] for a symbolic link that leads out of the wiki root (not read).
    pub code: String,
    /// What was wrong.
    pub reason: String,
}

/// The [`Skipped::code`] of a file whose symbolic link leads outside the folder being indexed:
/// it is not read unless `IndexBuilder::follow_links_outside_root` allows it. Not an error
/// code: nothing failed.
pub const SKIPPED_OUTSIDE_ROOT: &str = "outside_root";

/// A problem in a page that did not stop it from being indexed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Warning {
    /// Path relative to the wiki root.
    pub path: String,
    /// What was odd.
    pub message: String,
}

/// What a build did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BuildReport {
    /// Pages indexed.
    pub pages: usize,
    /// Chunks indexed.
    pub chunks: usize,
    /// Raw source documents indexed (see [`raw`](crate::text::raw)).
    pub raw_documents: usize,
    /// Their chunks.
    pub raw_chunks: usize,
    /// Files skipped, with reasons.
    pub skipped: Vec<Skipped>,
    /// Non-fatal problems in indexed pages.
    pub warnings: Vec<Warning>,
    /// When the build looked for the default model and found none: that the semantic lane
    /// is off and how to turn it on ([`crate::embed::semantic_off`]). `None` when a model
    /// embedded the chunks, or the caller asked for no model.
    #[serde(default)]
    pub semantic_off: Option<String>,
    /// The languages of the pages, detected from their prose ([`LanguageMix`]); the default
    /// model and analysis language follow it.
    #[serde(default)]
    pub languages: LanguageMix,
    /// Which analysis language the build chose and why, when the caller named none
    /// (`german: the main language of the pages (12 of 20)`); `None` when the caller named
    /// it.
    #[serde(default)]
    pub language_reason: Option<String>,
    /// Which model embedded the chunks and why (`multilingual-e5-small: 45% of the pages are
    /// not in English`, `the model given`); `None` without a model.
    #[serde(default)]
    pub model_reason: Option<String>,
    /// When the wiki would be better served by a model that is not installed: one line
    /// saying which package to install, in the surface's words
    /// ([`crate::embed::model_notice`]); else `None`.
    #[serde(default)]
    pub model_notice: Option<String>,
}

/// The languages of a wiki's pages, as a build detects them from each page's prose (code
/// blocks, inline code, frontmatter and URLs left out; [`crate::language::detect`]):
/// how many pages are in each language, and how many have too little prose, or prose too
/// ambiguous, to say. Counted in pages, not in text, so that a language written in fewer
/// characters (Chinese, Japanese) weighs as much per page as one written in more.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LanguageMix {
    /// Pages per language detected, most pages first (ties by code).
    pub languages: Vec<LanguagePages>,
    /// Pages whose language was not detected.
    pub undetected: usize,
}

/// The pages of one language ([`LanguageMix::languages`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LanguagePages {
    /// The language's ISO 639-3 code (`eng`, `deu`, `rus`, `cmn` for Mandarin Chinese, `jpn`).
    pub language: String,
    /// Pages in it.
    pub pages: usize,
}

/// The ISO 639-3 code of English in a [`LanguageMix`].
pub const ENGLISH: &str = "eng";

impl LanguageMix {
    /// The mix of pages whose languages are `detected` (a code per page, `None` for a page
    /// whose language was not detected), in canonical order.
    pub fn count<'a>(detected: impl IntoIterator<Item = Option<&'a str>>) -> LanguageMix {
        LanguageMix::default().changed(std::iter::empty(), detected)
    }

    /// This mix with the pages of languages `removed` taken out and those of `added` put in
    /// (a page write: the same mix a count of the pages after it gives, without detecting
    /// the pages it left alone). A language no page is left in is dropped.
    pub fn changed<'a>(
        &self,
        removed: impl IntoIterator<Item = Option<&'a str>>,
        added: impl IntoIterator<Item = Option<&'a str>>,
    ) -> LanguageMix {
        let mut counts: std::collections::BTreeMap<String, usize> = self
            .languages
            .iter()
            .map(|l| (l.language.clone(), l.pages))
            .collect();
        let mut undetected = self.undetected;
        for code in removed {
            match code {
                Some(c) => {
                    if let Some(n) = counts.get_mut(c) {
                        *n = n.saturating_sub(1);
                    }
                }
                None => undetected = undetected.saturating_sub(1),
            }
        }
        for code in added {
            match code {
                Some(c) => *counts.entry(c.to_string()).or_default() += 1,
                None => undetected += 1,
            }
        }
        let mut languages: Vec<LanguagePages> = counts
            .into_iter()
            .filter(|&(_, pages)| pages > 0)
            .map(|(language, pages)| LanguagePages { language, pages })
            .collect();
        // Stable: ties keep the codes' order.
        languages.sort_by_key(|l| std::cmp::Reverse(l.pages));
        LanguageMix {
            languages,
            undetected,
        }
    }

    /// This mix with the pages of `other` put in: the mix of both sets of pages.
    pub(crate) fn plus(&self, other: &LanguageMix) -> LanguageMix {
        self.changed(std::iter::empty(), other.each())
    }

    /// This mix with the pages of `other` (some of its pages) taken out.
    pub(crate) fn minus(&self, other: &LanguageMix) -> LanguageMix {
        self.changed(other.each(), std::iter::empty())
    }

    /// A language (or `None`, undetected) for each page counted.
    fn each(&self) -> impl Iterator<Item = Option<&str>> {
        let languages = self
            .languages
            .iter()
            .flat_map(|l| std::iter::repeat_n(Some(l.language.as_str()), l.pages));
        languages.chain(std::iter::repeat_n(None, self.undetected))
    }

    /// Pages whose language was detected.
    pub fn detected(&self) -> usize {
        self.languages
            .iter()
            .fold(0usize, |n, l| n.saturating_add(l.pages))
    }

    /// Checks a mix read from a blob of `n_pages` pages: every page counted once.
    ///
    /// # Errors
    /// [`crate::Error::Corrupt`] when the counts do not add up to `n_pages`.
    pub(crate) fn validate(&self, n_pages: usize) -> crate::Result<()> {
        if self.detected().saturating_add(self.undetected) != n_pages {
            return Err(crate::Error::corrupt(format!(
                "a language mix of {} pages for {n_pages} pages",
                self.detected().saturating_add(self.undetected)
            )));
        }
        Ok(())
    }

    /// Pages detected in `code`.
    pub fn pages(&self, code: &str) -> usize {
        self.languages
            .iter()
            .find(|l| l.language == code)
            .map_or(0, |l| l.pages)
    }

    /// The share (0..=1) of the pages whose language was detected that are not in English;
    /// 0 when none was detected.
    pub fn other_share(&self) -> f64 {
        let detected = self.detected();
        if detected == 0 {
            return 0.0;
        }
        (detected - self.pages(ENGLISH)) as f64 / detected as f64
    }

    /// The language of the most pages; of languages with as many pages, English, else the
    /// first code. `None` when no page's language was detected.
    pub fn main(&self) -> Option<&LanguagePages> {
        let first = self.languages.first()?;
        self.languages
            .iter()
            .find(|l| l.language == ENGLISH && l.pages == first.pages)
            .or(Some(first))
    }

    /// `German 12, English 8, undetected 3`: the mix as a report line says it.
    pub fn describe(&self) -> String {
        let mut parts: Vec<String> = self
            .languages
            .iter()
            .map(|l| format!("{} {}", language_name(&l.language), l.pages))
            .collect();
        if self.undetected > 0 {
            parts.push(format!("undetected {}", self.undetected));
        }
        if parts.is_empty() {
            return "no pages".into();
        }
        parts.join(", ")
    }
}

/// The English name of a language by its ISO 639-3 code (`deu`: `German`), else the code.
pub fn language_name(code: &str) -> String {
    whatlang::Lang::from_code(code).map_or_else(|| code.to_string(), |l| l.eng_name().to_string())
}

/// What a build on a previous index changed
/// ([`crate::IndexBuilder::sync_with_progress`], `wikidex sync`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SyncReport {
    /// Files indexed now and not before (sorted paths; without a previous index, every file
    /// indexed). A new file that fails to parse is only in `build.skipped`.
    pub added: Vec<String>,
    /// Files whose text differs from the one indexed before, read and parsed again (one that
    /// now fails to parse is also in `build.skipped`, and its page is gone).
    pub changed: Vec<String>,
    /// Files indexed before and not given now: deleted, or renamed (the new path is in
    /// `added`).
    pub removed: Vec<String>,
    /// Files whose text is the one indexed before: taken from the previous index unparsed.
    pub unchanged: usize,
    /// Chunks embedded by this build; every other chunk kept the vector stored for its
    /// passage.
    pub embedded: usize,
    /// The new index's counts, skipped files and warnings.
    pub build: BuildReport,
}

impl SyncReport {
    /// Whether anything was added, changed or removed.
    pub fn has_changes(&self) -> bool {
        !(self.added.is_empty() && self.changed.is_empty() && self.removed.is_empty())
    }
}

/// What [`crate::IndexBuilder::build_with_progress`] is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BuildStage {
    /// Chunking and analyzing pages (counts pages).
    Pages,
    /// Embedding chunks (counts chunks).
    Embeddings,
}

impl BuildStage {
    /// The stage's name on every surface: `pages` or `embeddings`.
    pub fn as_str(self) -> &'static str {
        match self {
            BuildStage::Pages => "pages",
            BuildStage::Embeddings => "embeddings",
        }
    }
}
