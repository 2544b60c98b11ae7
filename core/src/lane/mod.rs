//! The three ranking lanes. Each ranks chunks independently; [`crate::lane::fusion`]
//! combines them.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

pub use crate::data::config::Lane;

pub mod evidence;
pub mod fusion;
pub mod lexical;
pub mod phrase;
pub(crate) mod prune;
pub mod semantic;
pub mod token;
pub mod typo;

/// The reason a [`LaneStatus::Skipped`] lane gives when the search did not ask for it.
pub const NOT_REQUESTED: &str = "not requested";

/// The reason every lane gives when the query has no searchable word (empty, punctuation, or
/// only stopwords) and no query vector: such a query matches nothing, in every lane, so an
/// empty result stays the content-gap signal it should be (the semantic lane would otherwise
/// rank every page by its similarity to nothing).
pub const NO_QUERY_TERMS: &str = "the query has no searchable words (empty or only stopwords)";

/// How a lane fared on one query. A skipped or failed lane is dropped from fusion, not zeroed.
/// Serialized as `{"status": "ok"}`, `{"status": "skipped", "reason": ...}` or
/// `{"status": "failed", "code": ..., "reason": ...}` (`code`: the [`crate::Error::code`] of
/// what failed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "lowercase")]
pub enum LaneStatus {
    /// The lane ran.
    Ok,
    /// The lane did not run (not asked for, or not available in this index).
    Skipped {
        /// Why.
        reason: Cow<'static, str>,
    },
    /// The lane tried and failed.
    Failed {
        /// The error code of the failure ([`crate::Error::code`]).
        code: Cow<'static, str>,
        /// The error's message.
        reason: Cow<'static, str>,
    },
}

/// [`LaneStatus`] without its reason, as each hit carries it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StatusKind {
    /// The lane ran.
    Ok,
    /// The lane did not run.
    Skipped,
    /// The lane failed.
    Failed,
}

impl StatusKind {
    /// `ok`, `skipped` or `failed`.
    pub fn name(self) -> &'static str {
        match self {
            StatusKind::Ok => "ok",
            StatusKind::Skipped => "skipped",
            StatusKind::Failed => "failed",
        }
    }
}

impl LaneStatus {
    /// A skipped lane, and why.
    pub fn skipped(reason: impl Into<Cow<'static, str>>) -> LaneStatus {
        LaneStatus::Skipped {
            reason: reason.into(),
        }
    }

    /// A failed lane: the error that stopped it, with its code kept.
    pub fn failed(e: &crate::Error) -> LaneStatus {
        LaneStatus::Failed {
            code: e.code().into(),
            reason: e.to_string().into(),
        }
    }

    /// `ok`, `skipped` or `failed`.
    pub fn name(&self) -> &'static str {
        self.kind().name()
    }

    /// The status without its reason.
    pub fn kind(&self) -> StatusKind {
        match self {
            LaneStatus::Ok => StatusKind::Ok,
            LaneStatus::Skipped { .. } => StatusKind::Skipped,
            LaneStatus::Failed { .. } => StatusKind::Failed,
        }
    }

    /// The reason for a skipped or failed lane.
    pub fn reason(&self) -> Option<&str> {
        match self {
            LaneStatus::Ok => None,
            LaneStatus::Skipped { reason } | LaneStatus::Failed { reason, .. } => Some(reason),
        }
    }

    /// The error code of a failed lane.
    pub fn code(&self) -> Option<&str> {
        match self {
            LaneStatus::Failed { code, .. } => Some(code),
            _ => None,
        }
    }
}

/// Which chunks a query may return: one flag per chunk.
pub(crate) type Mask<'a> = &'a [bool];

/// Runs `f` with this thread's value of `slot`, taken out for the call and put back after
/// it: a lane's buffers as long as the index are made once per thread, not once per query
/// (at a million chunks, allocating and zeroing them was most of a token-lane query). `f`
/// must leave them as it found them (all zero). If `f` panics, the value is dropped rather
/// than put back half-used.
pub(crate) fn with_reused<S: Default + 'static, R>(
    slot: &'static std::thread::LocalKey<std::cell::RefCell<S>>,
    f: impl FnOnce(&mut S) -> R,
) -> R {
    let mut value = slot.with(|s| std::mem::take(&mut *s.borrow_mut()));
    let out = f(&mut value);
    slot.with(|s| *s.borrow_mut() = value);
    out
}

/// Grows `v` to at least `n` entries, new ones the default (zero).
pub(crate) fn grow<T: Default + Clone>(v: &mut Vec<T>, n: usize) {
    if v.len() < n {
        v.resize(n, T::default());
    }
}

/// The `n` largest keys, largest first. Candidates go into a buffer of `4n`; when it is full,
/// a selection (`select_nth_unstable`, linear) keeps the `n` largest and their smallest
/// becomes a floor that later keys must beat, so most candidates cost one comparison and
/// memory stays `O(n)`. Every key is drawn from `keys` (lanes reset their score buffers in the
/// key closure). Lanes pack their whole ordering (score, then tie rules) into one integer
/// key; equal keys are interchangeable, so the result is the one a full sort gives
/// ([`top_keys_by_sorting`], the oracle of the tests).
// Inlined into each lane's search: out of line, every candidate costs a call into the
// caller's key closure (measured: twice the instructions for this step). A bounded binary
// heap did the same job with a sift per improving key: about half of a lexical query's time on
// Cranfield (perf), where this takes a few percent.
#[inline]
pub(crate) fn top_keys<K: Ord + Copy>(keys: impl IntoIterator<Item = K>, n: usize) -> Vec<K> {
    let desc = |a: &K, b: &K| b.cmp(a);
    let keys = keys.into_iter();
    if n == 0 {
        keys.for_each(drop);
        return Vec::new();
    }
    let cap = n.saturating_mul(4).max(64);
    let mut buf: Vec<K> = Vec::with_capacity(cap.min(keys.size_hint().0.max(n)));
    let mut floor: Option<K> = None;
    for k in keys {
        if floor.is_some_and(|f| k <= f) {
            continue;
        }
        buf.push(k);
        if buf.len() >= cap {
            crate::data::sort::select_first(&mut buf, n, desc);
            buf.truncate(n);
            floor = Some(buf[n - 1]);
        }
    }
    let n = n.min(buf.len());
    crate::data::sort::sort_first(&mut buf, n, desc);
    buf.truncate(n);
    buf
}

/// [`top_keys`] the obvious way: sort every key, keep `n`.
#[cfg(test)]
pub(crate) fn top_keys_by_sorting<K: Ord + Copy>(
    keys: impl IntoIterator<Item = K>,
    n: usize,
) -> Vec<K> {
    let mut all: Vec<K> = keys.into_iter().collect();
    all.sort_unstable_by(|a, b| b.cmp(a));
    all.truncate(n);
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lane_lists_parse_and_dedupe() {
        assert_eq!(
            Lane::parse_list("token, lexical,token").unwrap(),
            [Lane::Lexical, Lane::Token]
        );
        assert_eq!(Lane::parse_list("").unwrap_err().code(), "invalid_argument");
        assert_eq!(
            Lane::parse_list("bm25").unwrap_err().code(),
            "invalid_argument"
        );
    }

    proptest::proptest! {
        #[test]
        fn top_keys_matches_sorting_every_key(
            keys in proptest::collection::vec(0u64..500, 0..2000),
            n in 0usize..300,
        ) {
            proptest::prop_assert_eq!(top_keys(keys.iter().copied(), n), top_keys_by_sorting(keys, n));
        }
    }

    #[test]
    fn top_keys_draws_every_key_even_when_none_is_kept() {
        let mut drawn = 0;
        let _ = top_keys((0..1000u64).rev().inspect(|_| drawn += 1), 3);
        assert_eq!(drawn, 1000);
        let _ = top_keys((0..10u64).inspect(|_| drawn += 1), 0);
        assert_eq!(drawn, 1010);
    }

    #[test]
    fn top_keys_keeps_the_largest_in_descending_order() {
        assert_eq!(top_keys([5, 1, 9, 3, 7], 3), [9, 7, 5]);
        assert_eq!(top_keys([2u128, 1], 5), [2, 1]);
        assert!(top_keys([1u64], 0).is_empty());
    }
}
