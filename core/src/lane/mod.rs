//! The three ranking lanes (DESIGN §3). Each ranks chunks independently; [`crate::fusion`]
//! combines them.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

pub use crate::config::Lane;

pub mod lexical;
pub mod semantic;
pub mod token;

/// The reason a [`LaneStatus::Skipped`] lane gives when the search did not ask for it.
pub const NOT_REQUESTED: &str = "not requested";

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

/// The `n` largest keys, largest first, with a bounded min-heap: most candidates cost one
/// comparison with the current n-th best. Lanes pack their whole ordering (score, then tie
/// rules) into one integer key.
// Inlined into each lane's search: out of line, every candidate costs a call into the
// caller's key closure (measured: twice the instructions for this step).
#[inline]
pub(crate) fn top_keys<K: Ord + Copy>(keys: impl IntoIterator<Item = K>, n: usize) -> Vec<K> {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    if n == 0 {
        return Vec::new();
    }
    let mut heap: BinaryHeap<Reverse<K>> = BinaryHeap::with_capacity(n + 1);
    for k in keys {
        if heap.len() < n {
            heap.push(Reverse(k));
        } else if let Some(mut min) = heap.peek_mut() {
            if k > min.0 {
                *min = Reverse(k);
            }
        }
    }
    // Ascending order of Reverse(k) is descending order of k.
    heap.into_sorted_vec()
        .into_iter()
        .map(|Reverse(k)| k)
        .collect()
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

    #[test]
    fn top_keys_keeps_the_largest_in_descending_order() {
        assert_eq!(top_keys([5, 1, 9, 3, 7], 3), [9, 7, 5]);
        assert_eq!(top_keys([2u128, 1], 5), [2, 1]);
        assert!(top_keys([1u64], 0).is_empty());
    }
}
