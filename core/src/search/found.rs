//! A search's answer with its hits made when they are read ([`Found`]).

use std::ops::Deref;
use std::sync::{Arc, OnceLock};

use super::hits::{HitContext, MatchTerms};
use super::{
    AlwaysMode, Facets, Hit, LaneReport, PhraseReport, Phrases, Reads, SearchOptions,
    SearchResults, Snippet,
};
use crate::data::error::Result;
use crate::data::offset::OffsetUnit;
use crate::index::{Caller, Index};
use crate::lane::fusion::Fused;
use crate::lane::phrase::NO_POSITIONS;
use crate::lane::typo::Expansion;
use crate::text::analyze::QueryTerms;

/// The answer to a search, ranked, with each hit (its page's fields, lane ranks, snippet and
/// explanation) made when it is read: [`Found::hit`] makes one, [`Found::results`] all of
/// them as [`SearchResults`]. Ranking a query takes a few microseconds on a wiki and a hit
/// with its snippet about as long again, so a caller that shows the first few hits of a
/// hundred, or only their keys, pays for those. A binding hands its language one hit at a
/// time this way (Python's `SearchResults`).
///
/// It holds the index it searched (`I`: an `Arc<Index>` from [`crate::Session::find`], so a
/// later write to the session does not change its hits; a borrow for [`Index`]'s own search).
pub struct Found<I: Deref<Target = Index> = Arc<Index>> {
    index: I,
    unit: OffsetUnit,
    snippets: bool,
    explain: bool,
    always_first: bool,
    /// Whether snippets match by the index's term positions: not for an index loaded in
    /// parts ([`crate::RangedIndex`]), which holds only its phrase terms' positions.
    by_positions: bool,
    query: String,
    truncated: bool,
    qterms: QueryTerms,
    typos: Vec<Expansion>,
    reports: Vec<LaneReport>,
    /// The ranked chunks, best first (no `always` page among them).
    picked: Vec<Fused>,
    /// The `always` pages the search's filters keep, as positions in [`Index::pages`].
    always: Vec<usize>,
    facets: Option<Facets>,
    phrases: Option<PhraseReport>,
    /// What the snippets match, made by the first.
    match_terms: OnceLock<MatchTerms>,
}

impl<I: Deref<Target = Index>> Found<I> {
    /// Ranks `query` over `index` for `caller`, asking `reads` as [`Index::search_checked`]
    /// does (before it reads the pages the hits show, too).
    pub(crate) fn search(
        index: I,
        query: &str,
        opts: &SearchOptions,
        reads: Option<&Reads<'_>>,
        caller: Caller<'_>,
    ) -> Result<Found<I>> {
        let ix: &Index = &index;
        let r = ix.ranking(query, opts, reads, caller.model)?;
        let always: Vec<usize> = (ix.unfiltered().always.iter().copied())
            .filter(|&i| r.page_ok[i])
            .collect();
        if let Some(reads) = reads {
            let shown: Vec<usize> = r
                .picked
                .iter()
                .map(|f| ix.chunk_page[f.chunk as usize] as usize)
                .chain(always.iter().copied())
                .collect();
            (reads.pages)(&shown)?;
        }
        let facets = opts.facets.then(|| ix.facets(&r.qterms, &r.typos, &r.mask));
        let held = r.phrases.as_ref().and_then(Phrases::first);
        let phrases = r.phrases.as_ref().map(|p| PhraseReport {
            phrases: p.texts.iter().map(|t| t.trim().to_string()).collect(),
            matched: held.map_or(0, |h| {
                r.picked.iter().take_while(|f| h[f.chunk as usize]).count()
            }),
            reason: p.held.is_none().then(|| NO_POSITIONS.to_string()),
        });
        let found = Found {
            unit: caller.unit,
            snippets: opts.snippets,
            explain: opts.explain,
            always_first: opts.always == AlwaysMode::First,
            by_positions: reads.is_none(),
            query: r.query.to_string(),
            truncated: r.truncated,
            qterms: QueryTerms::new(&r.qterms),
            typos: r.typos,
            reports: r.reports,
            picked: r.picked,
            always,
            facets,
            phrases,
            match_terms: OnceLock::new(),
            index,
        };
        Ok(found)
    }

    /// The index searched.
    pub fn index(&self) -> &Index {
        &self.index
    }

    /// How many hits [`SearchResults::hits`] holds: the ranked ones, after the `always` pages
    /// with [`AlwaysMode::First`].
    pub fn hits_len(&self) -> usize {
        self.picked.len()
            + if self.always_first {
                self.always.len()
            } else {
                0
            }
    }

    /// How many hits [`SearchResults::always`] holds (none with [`AlwaysMode::First`]).
    pub fn always_len(&self) -> usize {
        if self.always_first {
            0
        } else {
            self.always.len()
        }
    }

    /// Hit `i` of [`SearchResults::hits`], made now; `None` past the end.
    pub fn hit(&self, i: usize) -> Option<Hit> {
        self.made(HitList::Hits, i, self.snippets)
    }

    /// Hit `i` of [`SearchResults::always`], made now; `None` past the end.
    pub fn always_hit(&self, i: usize) -> Option<Hit> {
        self.made(HitList::Always, i, self.snippets)
    }

    /// Hit `i` of `list`, made now without its snippet (`snippet` is `None` even when the
    /// search makes snippets): [`Found::snippet`] makes that, so a caller that reads a hit's
    /// other fields does not pay for its snippet (about three quarters of a hit's cost).
    /// `None` past the end.
    pub fn hit_fields(&self, list: HitList, i: usize) -> Option<Hit> {
        self.made(list, i, false)
    }

    /// The snippet of hit `i` of `list`, made now: the one [`Found::hit`] gives it. `None`
    /// past the end, or when the search was made with [`SearchOptions::snippets`] off.
    pub fn snippet(&self, list: HitList, i: usize) -> Option<Snippet> {
        if !self.snippets {
            return None;
        }
        let ctx = self.context(true);
        match self.slot(list, i)? {
            Slot::Ranked(f) => Some(ctx.snippet(f.chunk)),
            Slot::Always(page) => Some(ctx.snippet(ctx.always_chunk(page))),
        }
    }

    fn made(&self, list: HitList, i: usize, snippets: bool) -> Option<Hit> {
        let ctx = self.context(snippets);
        Some(match self.slot(list, i)? {
            Slot::Ranked(f) => ctx.hit(f),
            Slot::Always(page) => ctx.always_hit(page),
        })
    }

    /// What hit `i` of `list` is made from.
    fn slot(&self, list: HitList, i: usize) -> Option<Slot<'_>> {
        let first = if self.always_first {
            self.always.len()
        } else {
            0
        };
        match list {
            HitList::Always if self.always_first => None,
            HitList::Always => self.always.get(i).map(|&p| Slot::Always(p)),
            HitList::Hits => match i.checked_sub(first) {
                None => Some(Slot::Always(self.always[i])),
                Some(j) => self.picked.get(j).map(Slot::Ranked),
            },
        }
    }

    /// The ranked chunks' ids, best first (no `always` page), as the query log keeps them.
    pub(crate) fn ranked_chunk_ids(&self) -> impl ExactSizeIterator<Item = String> + '_ {
        self.picked.iter().map(|f| self.index.chunk_id(f.chunk))
    }

    /// The query as searched (cut to the configured maximum length).
    pub fn query(&self) -> &str {
        &self.query
    }

    /// Per lane, how it did.
    pub fn lanes(&self) -> &[LaneReport] {
        &self.reports
    }

    /// The results without their hits: `hits` and `always` empty, every other field as
    /// [`Found::results`] gives it.
    pub fn head(&self) -> SearchResults {
        SearchResults {
            query: self.query.clone(),
            truncated: self.truncated,
            terms: self.qterms.terms().map(str::to_string).collect(),
            lanes: self.reports.clone(),
            hits: Vec::new(),
            always: Vec::new(),
            facets: self.facets.clone(),
            phrases: self.phrases.clone(),
        }
    }

    /// Every hit made, as [`Index::search`] returns them.
    pub fn results(&self) -> SearchResults {
        // One context, so the hits share its matcher and what it learned of the words.
        let ctx = self.context(self.snippets);
        let always = self.always.iter().map(|&p| ctx.always_hit(p));
        let ranked = self.picked.iter().map(|f| ctx.hit(f));
        let (hits, always) = if self.always_first {
            (always.chain(ranked).collect(), Vec::new())
        } else {
            (ranked.collect(), always.collect())
        };
        SearchResults {
            hits,
            always,
            ..self.head()
        }
    }

    fn context(&self, snippets: bool) -> HitContext<'_> {
        HitContext {
            index: &self.index,
            scorer: &self.index.scorer,
            known: None,
            unit: self.unit,
            qterms: self.qterms.get(),
            typos: &self.typos,
            reports: &self.reports,
            snippets,
            explain: self.explain,
            positions: self
                .index
                .data
                .positions
                .as_ref()
                .filter(|_| self.by_positions),
            match_terms: &self.match_terms,
            matcher: Default::default(),
        }
    }
}

/// Which list of [`SearchResults`] a hit of a [`Found`] is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HitList {
    /// [`SearchResults::hits`].
    Hits,
    /// [`SearchResults::always`].
    Always,
}

/// A hit before it is made: a ranked chunk, or an `always` page (its position in
/// [`Index::pages`]).
enum Slot<'f> {
    Ranked(&'f Fused),
    Always(usize),
}

impl<I: Deref<Target = Index>> std::fmt::Debug for Found<I> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Found")
            .field("query", &self.query)
            .field("hits", &self.hits_len())
            .field("always", &self.always_len())
            .finish_non_exhaustive()
    }
}
