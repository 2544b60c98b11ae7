//! What every answer must satisfy whatever the input: the invariants that tests feeding random
//! pages, queries or tampered blobs assert of results they cannot predict. Each helper panics
//! (proptest turns that into a shrunk failure) with the query and what broke.

use std::collections::BTreeSet;

use wikidex::{AlwaysMode, Index, Lane, SearchOptions, SearchResults, DEFAULT_LIMIT, MAX_LIMIT};

/// The number of hits a search may return: the option clamped to `1..=MAX_LIMIT`, as
/// `SearchOptions::limit` documents.
pub fn limit(opts: &SearchOptions) -> usize {
    opts.limit.unwrap_or(DEFAULT_LIMIT).clamp(1, MAX_LIMIT)
}

/// Searches (which must succeed: the options are valid) and checks the answer.
pub fn search(index: &Index, query: &str, opts: &SearchOptions) -> SearchResults {
    let results = index
        .search(query, opts)
        .unwrap_or_else(|e| panic!("search {query:?} failed with {}: {e}", e.code()));
    results_hold(index, query, opts, &results);
    results
}

/// Checks a search answer: at most `limit` ranked hits (`always` pages take no slot);
/// `always` pages first (with [`AlwaysMode::First`]) or apart (the default) and only there; ranked hits by fused score, best first; each page
/// (or chunk, with `chunks`) once; every hit's chunk resolves through [`Index::chunk`] to the
/// hit's page and hash; lane reports and per-hit lanes in [`Lane::ALL`] order; and
/// [`Index::rank`] gives the same order as the ranked hits.
pub fn results_hold(index: &Index, query: &str, opts: &SearchOptions, r: &SearchResults) {
    let ctx = || format!("query {query:?}, options {opts:?}");
    let n_always = r.hits.iter().take_while(|h| h.always).count();
    assert!(
        r.hits.len() - n_always <= limit(opts),
        "{} ranked hits > limit: {}",
        r.hits.len() - n_always,
        ctx()
    );
    let reported: Vec<Lane> = r.lanes.iter().map(|l| l.lane).collect();
    assert_eq!(reported, Lane::ALL, "{}", ctx());
    if opts.always == AlwaysMode::Separate {
        assert_eq!(n_always, 0, "always hit among ranked hits: {}", ctx());
        assert!(r.always.iter().all(|h| h.always), "{}", ctx());
    } else {
        assert!(r.always.is_empty(), "{}", ctx());
    }
    let ranked = &r.hits[n_always..];
    assert!(
        ranked.iter().all(|h| !h.always),
        "always hit after ranked ones: {}",
        ctx()
    );
    for w in ranked.windows(2) {
        assert!(
            w[0].score >= w[1].score,
            "{} ({}) ranked above {} ({}): {}",
            w[0].chunk,
            w[0].score,
            w[1].chunk,
            w[1].score,
            ctx()
        );
    }
    let ids: Vec<&str> = r
        .hits
        .iter()
        .map(|h| {
            if opts.chunks {
                h.chunk.as_str()
            } else {
                h.page_id.as_str()
            }
        })
        .collect();
    let distinct: BTreeSet<&str> = ids.iter().copied().collect();
    assert_eq!(
        distinct.len(),
        ids.len(),
        "repeated hit in {ids:?}: {}",
        ctx()
    );
    for h in r.hits.iter().chain(&r.always) {
        assert!(
            h.score.is_finite() && h.score >= 0.0,
            "{}: {}",
            h.chunk,
            ctx()
        );
        let lanes: Vec<Lane> = h.lanes.iter().map(|l| l.lane).collect();
        assert_eq!(lanes, Lane::ALL, "{}: {}", h.chunk, ctx());
        let c = index
            .chunk(&h.chunk)
            .unwrap_or_else(|e| panic!("hit chunk {} does not resolve ({e}): {}", h.chunk, ctx()));
        assert_eq!(c.id, h.chunk, "{}", ctx());
        assert_eq!((&c.key, &c.scope), (&h.key, &h.scope), "{}", ctx());
        assert_eq!(c.hash, h.chunk_hash, "{}: {}", h.chunk, ctx());
        assert!(
            h.chunk.starts_with(&format!("{}::chunk_", h.page_id)),
            "{} is not a chunk of {}: {}",
            h.chunk,
            h.page_id,
            ctx()
        );
        if let Some(scope) = &opts.scope {
            assert!(
                h.scope == *scope || h.scope == wikidex::Scope::Global,
                "{} outside {scope:?}: {}",
                h.page_id,
                ctx()
            );
        }
    }
    let rank = index
        .rank(query, opts)
        .unwrap_or_else(|e| panic!("rank failed with {}: {e}: {}", e.code(), ctx()));
    let pages = index.pages();
    let rank_ids: Vec<String> = rank.iter().map(|r| pages[r.page].id()).collect();
    let hit_ids: Vec<String> = ranked.iter().map(|h| h.page_id.clone()).collect();
    assert!(
        rank_ids.starts_with(&hit_ids),
        "rank() {rank_ids:?} does not start with the ranked hits {hit_ids:?}: {}",
        ctx()
    );
}
