//! What a search returns: [`SearchResults`](crate::SearchResults) with its [`Hit`](crate::Hit)s, snippets, lane reports,
//! explanations and facets; [`Ranked`](crate::Ranked) positions for callers that only rank.

use serde::{Deserialize, Serialize};

use crate::lane::lexical::TermScore;
use crate::lane::{Lane, LaneStatus, StatusKind};
use crate::text::page::Scope;

/// A lane's part in one hit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LaneHit {
    /// The lane.
    pub lane: Lane,
    /// `ok`, `skipped` or `failed` (for the query as a whole; the reason is in
    /// [`SearchResults::lanes`](crate::SearchResults::lanes)).
    pub status: StatusKind,
    /// 1-based rank of the hit's chunk in the lane, if the lane ranked it.
    pub rank: Option<u32>,
    /// The lane's own score for the chunk, if it ranked it.
    pub score: Option<f32>,
    /// This lane's share of the fused score: `weight / (k + rank)`.
    pub contribution: Option<f32>,
    /// The chunk this lane scored, when it is not the hit's chunk (for page hits each lane
    /// ranks a page by its own best chunk). `None` means the hit's chunk, or no rank.
    pub chunk: Option<String>,
}

/// A query term found in a snippet, as offsets into the snippet text (in the index's
/// [`OffsetUnit`](crate::OffsetUnit): bytes in Rust, code points in Python, UTF-16 units in
/// JavaScript).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Highlight {
    /// Start of the match.
    pub start: u32,
    /// One past its end.
    pub end: u32,
}

/// A short excerpt of the best chunk around the query terms.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Snippet {
    /// About 150 characters of the chunk, cut at word boundaries.
    pub text: String,
    /// Where query terms occur in `text`.
    pub highlights: Vec<Highlight>,
    /// Where the excerpt starts in the page's body (whitespace in `text` is collapsed, so
    /// only the start maps back), in the index's offset unit.
    pub offset: u32,
}

/// Why a hit ranked where it did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Explanation {
    /// Each query term's BM25 contribution in the chunk the lexical lane scored (they add up
    /// to the lexical lane's score).
    pub lexical: Vec<TermScore>,
    /// The RRF constant used.
    pub k: f32,
}

/// One result: a page (or a chunk, with `chunks: true`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Hit {
    /// Page key.
    pub key: String,
    /// Page id (`key`, or `user/<name>/<key>`).
    pub page_id: String,
    /// The page's scope.
    pub scope: Scope,
    /// Source path relative to the wiki root.
    pub path: String,
    /// Page title.
    pub title: String,
    /// Page summary.
    pub summary: Option<String>,
    /// Page type.
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// Page tags.
    pub tags: Vec<String>,
    /// Fused score (0 for an `always` page no lane matched).
    pub score: f32,
    /// Id of the best-matching chunk.
    pub chunk: String,
    /// Content hash of that chunk.
    pub chunk_hash: String,
    /// The chunk's first line in the page's file, 1-based (frontmatter included): cite
    /// `path:line_start`.
    pub line_start: u32,
    /// Its last line.
    pub line_end: u32,
    /// The headings the chunk sits under, outermost first.
    pub headings: Vec<String>,
    /// Excerpt of that chunk.
    pub snippet: Option<Snippet>,
    /// Per lane, in [`Lane::ALL`](crate::Lane::ALL) order.
    pub lanes: Vec<LaneHit>,
    /// The page has `usage_mode: always`.
    pub always: bool,
    /// The page's `stale_since`, if any.
    pub stale_since: Option<String>,
    /// The page's date, the one the date filters read: as its frontmatter writes it
    /// ([`Page::date`](crate::Page::date)) when that is a date; else its file's modification time when the build
    /// read it from a folder (`2024-03-12T09:30:00Z`); else the frontmatter's text, if any.
    pub date: Option<String>,
    /// With `explain: true`.
    pub explain: Option<Explanation>,
}

/// How one lane did for the whole query.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LaneReport {
    /// The lane.
    pub lane: Lane,
    /// Whether it ran.
    #[serde(flatten)]
    pub status: LaneStatus,
    /// Candidates it contributed to fusion.
    pub candidates: usize,
    /// Its fusion weight for this query: the configured weight, or 0 for the lexical and
    /// token lanes when the index reads too little of the query (`known`).
    pub weight: f32,
    /// For the lexical and token lanes, when they ran beside the semantic lane: the share of
    /// the query's term weight the index can read (`0.0..=1.0`,
    /// [`known_share`](crate::lane::evidence)). Below
    /// [`MIN_KNOWN_SHARE`](crate::lane::evidence::MIN_KNOWN_SHARE) their weight is 0: the
    /// semantic lane ranks alone. `None`: the lane kept its configured weight.
    pub known: Option<f32>,
}

/// The answer to a search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchResults {
    /// The query as searched (cut to the configured maximum length).
    pub query: String,
    /// Whether the query was cut.
    pub truncated: bool,
    /// The analyzed query terms.
    pub terms: Vec<String>,
    /// Per lane, in [`Lane::ALL`](crate::Lane::ALL) order.
    pub lanes: Vec<LaneReport>,
    /// Ranked hits, at most `limit` (after the `always` pages with [`AlwaysMode::First`](crate::AlwaysMode::First)).
    pub hits: Vec<Hit>,
    /// `always` pages, with [`AlwaysMode::Separate`](crate::AlwaysMode::Separate).
    pub always: Vec<Hit>,
    /// With [`SearchOptions::facets`](crate::SearchOptions::facets): the tag and type counts of every matching page, not
    /// only of the hits returned.
    pub facets: Option<Facets>,
    /// When the query quotes a phrase (`"net revenue"`): how its phrases were searched. `None`
    /// for a query without one.
    pub phrases: Option<PhraseReport>,
}

/// How the quoted phrases of a query were searched. Text between double quotes (`"`, or the
/// typographic `“` `”`) is a phrase: its words must occur in that order, at those distances
/// (a stopword stands for any one word), within one field of a chunk (its text, or the
/// page's key, title, summary or a tag). A hit that holds every phrase ranks above every hit
/// that does not, in each lane and fused; within each group the usual order holds. The
/// phrases' words are searched as ordinary words too (without typo tolerance), so pages with
/// the words but not the phrase still come, after. A quote nothing closes is ignored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PhraseReport {
    /// The phrases as quoted (those with a searchable word), in query order.
    pub phrases: Vec<String>,
    /// How many of the ranked hits hold every phrase: the first `matched` of them (after the
    /// `always` pages with [`AlwaysMode::First`](crate::AlwaysMode::First)). For a page hit, its chunk is one that holds
    /// them whenever the page has one.
    pub matched: usize,
    /// Why the phrases were searched as their words only, if they were:
    /// [`NO_POSITIONS`](crate::NO_POSITIONS) for an index without term positions
    /// ([`Config::positions`](crate::Config::positions) off).
    pub reason: Option<String>,
}

/// Tag and type counts over every page that matches a query: a page (visible under the
/// search's filters, not an `always` page) with a chunk that holds one of the query's terms,
/// exactly or, as the token lane matches, as a prefix (the last word, and words the index does
/// not contain). The semantic lane does not count: it scores every page. Each page counts
/// once per tag (tags compared without case) and once for its type, so a search UI shows
/// "finance (4), ops (2)".
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Facets {
    /// Matching pages.
    pub pages: usize,
    /// Per tag: pages with it, most first (ties by tag).
    pub tags: Vec<FacetCount>,
    /// Per type: pages of it, most first (ties by type); pages without a type are not counted.
    pub types: Vec<FacetCount>,
}

/// One value of a facet and how many matching pages have it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FacetCount {
    /// The tag or type.
    pub value: String,
    /// Matching pages with it.
    pub count: usize,
}

/// A ranked page (or chunk) before hydration, from [`Index::rank`](crate::Index::rank).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ranked {
    /// Position of the page in [`Index::pages`](crate::Index::pages).
    pub page: usize,
    /// Position of the best chunk in the index's chunk table.
    pub chunk: usize,
    /// Fused score.
    pub score: f32,
}
