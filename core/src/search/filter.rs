//! Which pages and chunks a search may return (lifecycle, usage mode, scope, tags, types,
//! dates), and the facets of the pages that match.

use super::{FacetCount, Facets, SearchOptions};
use std::collections::{HashMap, HashSet};

use crate::index::{Index, Unfiltered};
use crate::lane::token;
use crate::lane::typo::Expansion;
use crate::text::analyze::QueryTerm;
use crate::text::page::{Scope, UsageMode};

/// The facet counts of some pages ([`Index::facet_tally`]), before they are sorted into
/// [`Facets`]: per value folded to lower case, the value as the first of the pages (in page
/// order) that has it writes it, how many pages have it, and that first page.
#[derive(Debug, Default)]
pub(super) struct FacetTally {
    pub(super) pages: usize,
    pub(super) tags: HashMap<String, (String, usize, u32)>,
    pub(super) types: HashMap<String, (String, usize, u32)>,
}

impl FacetTally {
    /// The [`Facets`]: each list by count, most first, then by value.
    pub(super) fn sorted(self) -> Facets {
        Facets {
            pages: self.pages,
            tags: sorted_counts(
                self.tags
                    .into_values()
                    .map(|(value, count, _)| (value, count)),
            ),
            types: sorted_counts(
                self.types
                    .into_values()
                    .map(|(value, count, _)| (value, count)),
            ),
        }
    }
}

/// Facet values with their counts, by count (most first), then by value.
pub(super) fn sorted_counts(counts: impl Iterator<Item = (String, usize)>) -> Vec<FacetCount> {
    let mut v: Vec<FacetCount> = counts
        .map(|(value, count)| FacetCount { value, count })
        .collect();
    crate::data::sort::sort_by(&mut v, |a, b| {
        b.count.cmp(&a.count).then_with(|| a.value.cmp(&b.value))
    });
    v
}

impl Index {
    /// The [`Facets`](crate::Facets) of the pages whose chunks hold a query term (as the token lane matches
    /// them, typo matches included) among the chunks `mask` lets through.
    pub(super) fn facets(
        &self,
        qterms: &[QueryTerm<'_>],
        typos: &[Expansion],
        mask: &[bool],
    ) -> Facets {
        let chunks = token::matching_chunks(&self.data.lexical, qterms, typos, mask);
        self.facet_tally(&chunks).sorted()
    }

    /// The facet counts of the pages of `chunks`, not yet sorted.
    pub(super) fn facet_tally(&self, chunks: &[u32]) -> FacetTally {
        let mut matched = vec![false; self.data.pages.len()];
        for &c in chunks {
            matched[self.chunk_page[c as usize] as usize] = true;
        }
        let mut tally = FacetTally::default();
        let mut seen: Vec<String> = Vec::new();
        for (p, page) in (0u32..).zip(self.data.pages.iter()) {
            if !matched[p as usize] {
                continue;
            }
            tally.pages += 1;
            seen.clear();
            for t in &page.tags {
                let folded = crate::text::analyze::lowercase(t).into_owned();
                if seen.contains(&folded) {
                    continue;
                }
                tally
                    .tags
                    .entry(folded.clone())
                    .or_insert_with(|| (t.clone(), 0, p))
                    .1 += 1;
                seen.push(folded);
            }
            if let Some(k) = &page.kind {
                (tally.types)
                    .entry(crate::text::analyze::lowercase(k).into_owned())
                    .or_insert_with(|| (k.clone(), 0, p))
                    .1 += 1;
            }
        }
        tally
    }

    /// Per chunk: may a lane return it? Its page is visible and not an `always` page (those
    /// are placed by [`AlwaysMode`](crate::AlwaysMode), not ranked).
    pub(crate) fn chunk_mask(&self, page_ok: &[bool]) -> Vec<bool> {
        self.chunk_page
            .iter()
            .map(|&p| {
                page_ok[p as usize] && self.data.pages[p as usize].usage_mode != UsageMode::Always
            })
            .collect()
    }

    /// What a search without filters may return, made on the first search.
    pub(super) fn unfiltered(&self) -> &Unfiltered {
        self.unfiltered.get_or_init(|| {
            let pages = self.visible_pages(&SearchOptions::default());
            let chunks = self.chunk_mask(&pages);
            let all = chunks.iter().all(|&ok| ok);
            let always = (0..self.data.pages.len())
                .filter(|&i| self.data.pages[i].usage_mode == UsageMode::Always)
                .collect();
            Unfiltered {
                pages,
                chunks,
                all,
                always,
            }
        })
    }

    /// Per page: may this search return it? Applies lifecycle, usage mode, scope (with
    /// shadowing) and the tag and type filters.
    pub(crate) fn visible_pages(&self, opts: &SearchOptions) -> Vec<bool> {
        self.visible_pages_shadowed(opts, &self.shadowed(opts))
    }

    /// The keys of the pages of the user `opts` scopes the search to that stand in for the
    /// global pages of the same key (none without a user scope). A user's archived or `never`
    /// page no longer stands in for the global one.
    pub(crate) fn shadowed(&self, opts: &SearchOptions) -> HashSet<&str> {
        match &opts.scope {
            Some(Scope::User(name)) => (self.data.pages.iter())
                .filter(|p| matches!(&p.scope, Scope::User(n) if n == name))
                .filter(|p| !p.is_archived() && p.usage_mode != UsageMode::Never)
                .map(|p| p.key.as_str())
                .collect(),
            _ => HashSet::new(),
        }
    }

    /// [`Index::visible_pages`] with the global pages of the keys in `shadowed` out of a
    /// user's scope (a sharded search's: the user's pages may be in other shards).
    pub(crate) fn visible_pages_shadowed(
        &self,
        opts: &SearchOptions,
        shadowed: &HashSet<&str>,
    ) -> Vec<bool> {
        let pages = &self.data.pages;
        // `validate` has read them already: a bad value cannot reach here.
        let (since, until) = opts.date_range().unwrap_or((None, None));
        let dated = |p: usize| match (since, until) {
            (None, None) => true,
            _ => self.page_dates[p]
                .is_some_and(|d| since.is_none_or(|s| d >= s) && until.is_none_or(|u| d <= u)),
        };
        let lower = |v: &[String]| {
            v.iter()
                .map(|s| crate::text::analyze::lowercase(s).into_owned())
                .collect::<HashSet<_>>()
        };
        let tags = lower(&opts.tags);
        let types = lower(&opts.types);
        pages
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let in_scope = match &opts.scope {
                    None => true,
                    Some(Scope::Global) => p.scope == Scope::Global,
                    Some(s @ Scope::User(_)) => {
                        p.scope == *s
                            || (p.scope == Scope::Global && !shadowed.contains(p.key.as_str()))
                    }
                };
                let mode_ok = if opts.usage_modes.is_empty() {
                    p.usage_mode != UsageMode::Never
                } else {
                    p.usage_mode != UsageMode::Never && opts.usage_modes.contains(&p.usage_mode)
                };
                in_scope
                    && mode_ok
                    && dated(i)
                    && !p.is_archived()
                    && (tags.is_empty()
                        || p.tags
                            .iter()
                            .any(|t| tags.contains(crate::text::analyze::lowercase(t).as_ref())))
                    && (types.is_empty()
                        || p.kind.as_ref().is_some_and(|k| {
                            types.contains(crate::text::analyze::lowercase(k).as_ref())
                        }))
            })
            .collect()
    }
}
