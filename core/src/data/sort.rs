//! Sorting with one body of code for every element type, in the browser module.
//!
//! Each `sort_by` of std is a separate copy of its sort (driftsort, pdqsort and their small
//! sorts: 3 to 5 KB of wasm) for each element type and comparison. The core sorted 25 kinds
//! of things in the search module: 60 KB of its 430 KB. On `wasm32` these functions sort a
//! list of positions with one merge sort that calls the comparison through a `dyn` reference,
//! then move the elements into place: a few hundred bytes per call site. Elsewhere they are
//! std's own sorts, which are faster.
//!
//! The two give the same order, so every surface gives the same answers:
//! - [`sort_by`] and [`sort_by_key`] are stable on both: a stable sort's result is unique.
//! - [`sort_unstable`] is for types whose equal values are the same value (integers,
//!   characters, strings, tuples of them): there the order of equal elements cannot be seen.
//!   The merge sort is a valid unstable sort.
//!
//! `tests` run the merge sort on every target against std's stable sort.

use std::cmp::Ordering;

/// Sorts `v` by `cmp`, stably.
#[inline]
pub(crate) fn sort_by<T>(v: &mut [T], cmp: impl FnMut(&T, &T) -> Ordering) {
    #[cfg(target_family = "wasm")]
    {
        let mut cmp = cmp;
        let order = merge_order(v.len(), &mut |i, j| cmp(&v[i], &v[j]));
        permute(v, order);
    }
    #[cfg(not(target_family = "wasm"))]
    v.sort_by(cmp);
}

/// Sorts `v` in ascending order, stably: `v.sort()`.
#[inline]
pub(crate) fn sort<T: Ord>(v: &mut [T]) {
    sort_by(v, T::cmp);
}

/// Sorts `v` by the key `f` gives, stably.
#[inline]
pub(crate) fn sort_by_key<T, K: Ord>(v: &mut [T], mut f: impl FnMut(&T) -> K) {
    sort_by(v, |a, b| f(a).cmp(&f(b)));
}

/// Sorts `v` in ascending order; for types whose equal values are indistinguishable.
#[inline]
pub(crate) fn sort_unstable<T: Ord>(v: &mut [T]) {
    #[cfg(target_family = "wasm")]
    sort_by(v, T::cmp);
    #[cfg(not(target_family = "wasm"))]
    v.sort_unstable();
}

/// Sorts `v` by `cmp`, which must order equal-comparing elements only when they are
/// indistinguishable (see the module).
#[inline]
pub(crate) fn sort_unstable_by<T>(v: &mut [T], cmp: impl FnMut(&T, &T) -> Ordering) {
    #[cfg(target_family = "wasm")]
    sort_by(v, cmp);
    #[cfg(not(target_family = "wasm"))]
    v.sort_unstable_by(cmp);
}

/// Puts the `n` first elements in `cmp`'s order at the front of `v`, the `n`-th of them at
/// `n - 1` and the others in any order, as `select_nth_unstable_by(n - 1, cmp)` does (`n` at
/// least 1, at most `v.len()`). In the browser module, a whole sort: the same elements end up
/// in front, the same one at `n - 1`.
#[inline]
pub(crate) fn select_first<T>(v: &mut [T], n: usize, cmp: impl FnMut(&T, &T) -> Ordering) {
    #[cfg(target_family = "wasm")]
    {
        let _ = n;
        sort_by(v, cmp);
    }
    #[cfg(not(target_family = "wasm"))]
    v.select_nth_unstable_by(n - 1, cmp);
}

/// Sorts the `n` first elements in `cmp`'s order to the front of `v`, the others after them in
/// any order (`n` at most `v.len()`): [`select_first`], then [`sort_unstable_by`] of the
/// front, whose rule for `cmp` holds here. In the browser module, one whole sort.
#[inline]
pub(crate) fn sort_first<T>(v: &mut [T], n: usize, cmp: impl FnMut(&T, &T) -> Ordering) {
    #[cfg(target_family = "wasm")]
    {
        let _ = n;
        sort_by(v, cmp);
    }
    #[cfg(not(target_family = "wasm"))]
    {
        let mut cmp = cmp;
        if n == 0 {
            return;
        }
        if n < v.len() {
            v.select_nth_unstable_by(n - 1, &mut cmp);
        }
        v[..n].sort_unstable_by(cmp);
    }
}

/// The positions of `n` elements in the stable order `cmp` (comparing two positions) gives:
/// a top-down merge sort, insertion sort below 12 elements. One copy for every element type.
#[cfg(any(test, target_family = "wasm"))]
fn merge_order(n: usize, cmp: &mut dyn FnMut(usize, usize) -> Ordering) -> Vec<usize> {
    fn sort(a: &mut [usize], buf: &mut Vec<usize>, cmp: &mut dyn FnMut(usize, usize) -> Ordering) {
        if a.len() <= 12 {
            for i in 1..a.len() {
                let mut j = i;
                while j > 0 && cmp(a[j - 1], a[j]) == Ordering::Greater {
                    a.swap(j - 1, j);
                    j -= 1;
                }
            }
            return;
        }
        let mid = a.len() / 2;
        sort(&mut a[..mid], buf, cmp);
        sort(&mut a[mid..], buf, cmp);
        if cmp(a[mid - 1], a[mid]) != Ordering::Greater {
            return; // already in order
        }
        buf.clear();
        buf.extend_from_slice(&a[..mid]);
        let (mut i, mut j, mut k) = (0, mid, 0);
        while i < buf.len() && j < a.len() {
            // Ties take the left run's element first: stable.
            if cmp(buf[i], a[j]) == Ordering::Greater {
                a[k] = a[j];
                j += 1;
            } else {
                a[k] = buf[i];
                i += 1;
            }
            k += 1;
        }
        a[k..k + buf.len() - i].copy_from_slice(&buf[i..]);
    }
    let mut order: Vec<usize> = (0..n).collect();
    sort(&mut order, &mut Vec::with_capacity(n / 2 + 1), cmp);
    order
}

/// Rearranges `v` so that its element `i` is the one that was at `order[i]`, by following
/// the permutation's cycles with swaps.
#[cfg(any(test, target_family = "wasm"))]
fn permute<T>(v: &mut [T], mut order: Vec<usize>) {
    for start in 0..v.len() {
        let mut at = start;
        loop {
            let from = order[at];
            order[at] = at; // placed
            if from == start {
                break;
            }
            v.swap(at, from);
            at = from;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The browser module's sort, on any target.
    fn merge_sort_by<T>(v: &mut [T], mut cmp: impl FnMut(&T, &T) -> Ordering) {
        let order = merge_order(v.len(), &mut |i, j| cmp(&v[i], &v[j]));
        permute(v, order);
    }

    proptest::proptest! {
        #[test]
        fn the_merge_sort_is_std_stable_sort(
            v in proptest::collection::vec((0u8..6, 0u32..1000), 0..300),
        ) {
            // Sorting by the first field only: many ties, told apart by the second.
            let mut ours = v.clone();
            merge_sort_by(&mut ours, |a, b| a.0.cmp(&b.0));
            let mut std = v;
            std.sort_by_key(|a| a.0);
            proptest::prop_assert_eq!(ours, std);
        }

        #[test]
        fn the_front_holds_the_first_n(v in proptest::collection::vec(0u64..50, 1..200), n in 1usize..200) {
            let n = n.min(v.len());
            let mut front = v.clone();
            select_first(&mut front, n, |a, b| b.cmp(a));
            front.truncate(n);
            sort_unstable(&mut front);
            let mut sorted = v.clone();
            sort_first(&mut sorted, n, |a, b| b.cmp(a));
            let mut all = v;
            all.sort_unstable_by(|a, b| b.cmp(a));
            all.truncate(n);
            proptest::prop_assert_eq!(&sorted[..n], &all[..]);
            all.sort_unstable();
            proptest::prop_assert_eq!(front, all);
        }
    }

    #[test]
    fn permute_follows_every_cycle() {
        let mut v = ['a', 'b', 'c', 'd', 'e', 'f'];
        permute(&mut v, vec![2, 0, 1, 5, 4, 3]);
        assert_eq!(v, ['c', 'a', 'b', 'f', 'e', 'd']);
    }
}
