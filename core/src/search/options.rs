//! What a search is asked: [`SearchOptions`](crate::SearchOptions) (filters, lanes, limits) and their checks.

use serde::{Deserialize, Serialize};

use crate::data::error::{Error, Result};
use crate::lane::Lane;
use crate::text::page::{Scope, UsageMode};

/// Default number of hits.
pub const DEFAULT_LIMIT: usize = 20;
/// Largest number of hits a search returns.
pub const MAX_LIMIT: usize = 100;
/// Largest number of candidates a lane contributes to fusion.
pub const MAX_CANDIDATES: usize = 100;
/// Target snippet length in characters.
pub const SNIPPET_CHARS: usize = 150;
/// The most threads [`Index::rank_many`](crate::Index::rank_many) spreads one batch over.
pub const MAX_RANK_THREADS: usize = 64;

/// Where pages with `usage_mode: always` go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AlwaysMode {
    /// Before the ranked hits, inline; they take no slot of the limit (up to `limit` ranked
    /// hits follow them).
    First,
    /// In [`SearchResults::always`](crate::SearchResults::always), apart from the ranked hits (the default).
    #[default]
    Separate,
}

/// How to search. `Default` gives the documented defaults.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SearchOptions {
    /// Hits to return: default 20, at least 1 (0 is [`Error::InvalidArgument`](crate::Error::InvalidArgument) on every
    /// surface); more than [`MAX_LIMIT`] is taken as [`MAX_LIMIT`].
    pub limit: Option<usize>,
    /// Lanes to run (`None`: every lane the index supports).
    pub lanes: Option<Vec<Lane>>,
    /// Keep pages with at least one of these tags (case-insensitive). Empty: no filter.
    pub tags: Vec<String>,
    /// Keep pages with one of these types (case-insensitive). Empty: no filter.
    pub types: Vec<String>,
    /// Search as this scope: a user scope sees its own pages and the global ones, its own
    /// shadowing global pages with the same key; `global` sees global pages only; `None` sees
    /// every page of every scope.
    pub scope: Option<Scope>,
    /// Keep pages with one of these usage modes. Empty: `auto` and `always` (pages with
    /// `never` are never returned, whatever this says).
    pub usage_modes: Vec<UsageMode>,
    /// Return chunk hits (several per page) instead of collapsing to the best chunk per page.
    pub chunks: bool,
    /// Where `always` pages go: apart in [`SearchResults::always`](crate::SearchResults::always) (default) or first among
    /// the hits; either way they take no slot of `limit`.
    pub always: AlwaysMode,
    /// Add per-term lexical explanations and per-lane fusion contributions to each hit.
    pub explain: bool,
    /// Add a snippet of the best chunk to each hit (default true).
    pub snippets: bool,
    /// The query's embedding for the semantic lane, when the caller computes it (bring your
    /// own embeddings). `None`: the attached embedder embeds the query, if there is one.
    pub query_vector: Option<Vec<f32>>,
    /// Typo tolerance in the lexical and token lanes (default true): a query word the index
    /// does not know also matches the words of the text one edit away (words of 5 to 8
    /// characters) or two (9 or more), scored below an exact match; see
    /// [`crate::lane::typo`]. `false` matches every word exactly, as before typo tolerance.
    pub typos: bool,
    /// Count the `tags` and `type`s of every page that matches (see [`Facets`](crate::Facets)) into
    /// [`SearchResults::facets`](crate::SearchResults::facets) (default false: it costs a pass over the query's postings).
    pub facets: bool,
    /// Keep pages dated on or after this (`2024-03-12`, or a date-time such as
    /// `2024-03-12T09:30:00Z`; see [`crate::data::date::parse`]). A page's date is its frontmatter's
    /// `updated`, `last_updated` or `date` ([`Page::date`](crate::Page::date)), else the modification time of
    /// its file when the build read it from a folder; a page with neither is left out when a
    /// date filter is set.
    pub since: Option<String>,
    /// Keep pages dated on or before this (a date alone includes the whole day).
    pub until: Option<String>,
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions {
            limit: None,
            lanes: None,
            tags: Vec::new(),
            types: Vec::new(),
            scope: None,
            usage_modes: Vec::new(),
            chunks: false,
            always: AlwaysMode::Separate,
            explain: false,
            snippets: true,
            query_vector: None,
            typos: true,
            facets: false,
            since: None,
            until: None,
        }
    }
}

impl SearchOptions {
    /// Whether `lane` is asked for (`lanes` unset: every lane is).
    pub(crate) fn wants(&self, lane: Lane) -> bool {
        self.lanes.as_ref().is_none_or(|l| l.contains(&lane))
    }

    /// Whether any filter is set (tags, types, scope, usage modes).
    pub(super) fn has_filters(&self) -> bool {
        !self.tags.is_empty()
            || !self.types.is_empty()
            || self.scope.is_some()
            || !self.usage_modes.is_empty()
            || self.since.is_some()
            || self.until.is_some()
    }

    /// The date filters as Unix seconds: (`since`, `until`), each `None` when not set.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) for a value that is not a date.
    pub(super) fn date_range(&self) -> Result<(Option<i64>, Option<i64>)> {
        let read = |name: &str, v: &Option<String>, end_of_day: bool| {
            v.as_deref()
                .map(|s| {
                    crate::data::date::parse(s, end_of_day).ok_or_else(|| {
                        Error::invalid_argument(format!(
                            "{name} must be a date (2024-03-12) or a date-time \
                             (2024-03-12T09:30:00Z), got {s:?}"
                        ))
                    })
                })
                .transpose()
        };
        Ok((
            read("since", &self.since, false)?,
            read("until", &self.until, true)?,
        ))
    }

    /// Checks the options against what the index can do.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) for a limit of 0, an empty lane list or a bad date.
    pub fn validate(&self) -> Result<()> {
        if self.limit == Some(0) {
            return Err(Error::invalid_argument(format!(
                "limit must be at least 1 (at most {MAX_LIMIT} hits are returned)"
            )));
        }
        self.date_range()?;
        if self.lanes.as_ref().is_some_and(Vec::is_empty) {
            return Err(Error::invalid_argument("lanes must not be empty"));
        }
        Ok(())
    }
}
