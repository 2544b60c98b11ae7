//! Skipping what cannot win: the top-`n` search the lexical and token lanes share in large
//! indexes (MaxScore, Turtle and Flood 1995).
//!
//! A query is a list of units (a lexical term; a token-lane word with the terms it is
//! credited for), each unit one or more posting lists, each unit adding at most its bound to
//! a chunk's score. The units are taken in order of bound; once `n` candidates are held, the
//! first units, whose bounds together stay below the `n`th best score, cannot make a chunk on
//! their own: only the others (the essential units) propose chunks, and those are looked up
//! in the rest only while they can still reach that score (a tie may still win on what the
//! key orders next, so reaching is enough). Chunks are taken a window at a time: the
//! essential units add their postings' parts term at a time, then the chunks they touched are
//! judged in order. Within a unit, a list whose postings all add less than the unit's bound
//! stops proposing chunks once no chunk can reach the floor through it, and the lane may pass
//! it over when it looks a chunk up ([`Scored::part`]'s `need`). A chunk that may enter gets
//! its key from the lane ([`Scored::key`]),
//! exactly as the lane's pass over every posting makes it, so both ways give the same
//! candidates with the same scores, bit for bit.

/// From this many chunks on, the lexical lane finds a query's best chunks by [`search`]
/// rather than by scoring every posting of the query's terms into one score per chunk, which
/// is faster while those scores stay in the processor's cache. Measured on synthetic corpora
/// (CACM's and Cranfield's queries, 10 hits): scoring every posting was faster at 100k chunks
/// (0.6x the time of pruning for whole queries), pruning at 300k (0.85x) and 1.1M (0.6x).
pub(crate) const PRUNE_LEXICAL_FROM: usize = 1 << 18;

/// The same for the token lane, whose every-posting pass keeps three numbers a chunk: at 30k
/// chunks both ways took the same time, at 100k pruning took half.
pub(crate) const PRUNE_TOKEN_FROM: usize = 1 << 16;

/// Chunks a pruned search scores together, term at a time (in the tests, few enough that
/// their small indexes span several windows).
const WINDOW: u32 = if cfg!(test) { 64 } else { 4096 };

/// The best `n` keys offered, at most one per group (a page, or the chunk itself). Offers are
/// rare once the floor is set (only chunks that may beat it are scored), so a list searched
/// from end to end serves.
struct Leaders<K> {
    n: usize,
    /// Each held key with its group.
    held: Vec<(K, u32)>,
    /// The smallest key held, once `n` are.
    floor: Option<K>,
}

impl<K: Ord + Copy> Leaders<K> {
    fn new(n: usize) -> Leaders<K> {
        Leaders {
            n,
            held: Vec::with_capacity(n),
            floor: None,
        }
    }

    /// The key a chunk must beat to enter (the `n`th best), or nothing while fewer are held.
    fn floor(&self) -> Option<K> {
        self.floor
    }

    /// Holds `key` for `group` if it is among the best `n` groups' best keys.
    fn offer(&mut self, key: K, group: u32) {
        if self.floor.is_some_and(|f| key <= f) {
            return;
        }
        if let Some(e) = self.held.iter_mut().find(|e| e.1 == group) {
            e.0 = e.0.max(key);
        } else if self.held.len() < self.n {
            self.held.push((key, group));
        } else if let Some(low) = self.held.iter_mut().min_by_key(|e| e.0) {
            *low = (key, group);
        }
        if self.held.len() == self.n {
            self.floor = self.held.iter().map(|e| e.0).min();
        }
    }

    /// The keys held, largest first.
    fn into_sorted(self) -> Vec<K> {
        let mut keys: Vec<K> = self.held.into_iter().map(|e| e.0).collect();
        keys.sort_unstable_by(|a, b| b.cmp(a));
        keys
    }
}

/// A cursor over one posting list: its chunks, and the posting it stands at.
pub(crate) struct Cursor<'a> {
    pub chunks: &'a [u32],
    pub at: usize,
}

impl<'a> Cursor<'a> {
    /// A cursor at the first of `chunks`.
    pub(crate) fn new(chunks: &'a [u32]) -> Cursor<'a> {
        Cursor { chunks, at: 0 }
    }

    /// Moves to the first posting at or after chunk `c` and tells whether it is `c`'s.
    pub(crate) fn seek(&mut self, c: u32) -> bool {
        self.at = gallop(self.chunks, self.at, c);
        self.chunks.get(self.at) == Some(&c)
    }
}

/// The first place at or after `from` in ascending `chunks` whose chunk is `c` or later (the
/// length when none is): galloping from `from`, then a binary search, so a place near `from`
/// costs a few reads of memory near it, where a binary search of the whole rest would read
/// scattered lines of a long list.
fn gallop(chunks: &[u32], from: usize, c: u32) -> usize {
    let (mut lo, mut hi, mut step) = (from, from, 1);
    while hi < chunks.len() && chunks[hi] < c {
        lo = hi + 1;
        hi += step;
        step *= 2;
    }
    let hi = hi.min(chunks.len());
    lo + chunks[lo..hi].partition_point(|&x| x < c)
}

/// What a lane's pruned search asks of its query. Unit `u`'s lists are the cursors the search
/// passes back; a lane keeps whatever else it needs (impacts, credits) by unit and list.
pub(crate) trait Scored {
    /// The lane's order of chunks: larger first.
    type Key: Ord + Copy;
    /// What each posting of list `l` of unit `u` adds to its chunk at most (added up over a
    /// window's essential postings as a bound).
    fn parts(&self, u: usize, l: usize) -> Parts<'_>;
    /// What unit `u` adds to chunk `c`, its lists' cursors moved there. A chunk given less
    /// than `need` cannot enter, whatever it is given: a lane may leave out the lists whose
    /// every posting adds less (their cursors stay where they are).
    fn part(&self, u: usize, lists: &mut [Cursor<'_>], c: u32, need: f64) -> f32;
    /// Chunk `c`'s key, every cursor moved there: exactly what the lane's full pass makes; or
    /// nothing when the lane finds, before making all of it, that it is at most `floor` (the
    /// key a chunk must beat), which cannot enter.
    fn key(
        &self,
        units: &mut [Vec<Cursor<'_>>],
        c: u32,
        floor: Option<Self::Key>,
    ) -> Option<Self::Key>;
    /// The sum of the units' parts that the score in `key` stands for.
    fn reach(&self, key: Self::Key) -> f64;
}

/// What a list's postings add to their chunks ([`Scored::parts`]).
pub(crate) enum Parts<'a> {
    /// Each posting its value (parallel to the list's chunks) times the weight.
    Each(&'a [f32], f32),
    /// Every posting the same.
    All(f32),
}

/// The best `n` chunks' keys, largest first, at most one per group (`group` of a chunk: its
/// page, or itself), among the chunks `allowed` lets through: the keys the lane's full pass
/// would keep. `units[u]` are unit `u`'s posting lists, `bounds[u]` what it adds at most.
pub(crate) fn search<S: Scored>(
    scored: &S,
    mut units: Vec<Vec<Cursor<'_>>>,
    bounds: &[f64],
    allowed: impl Fn(u32) -> bool,
    group: impl Fn(u32) -> u32,
    n: usize,
) -> Vec<S::Key> {
    if n == 0 {
        return Vec::new();
    }
    let postings = |u: &[Cursor<'_>]| u.iter().map(|l| l.chunks.len()).sum::<usize>();
    // The units by bound ascending, the longest lists first among equals; `below[i]`, what the
    // first `i` of them add at most. The bounds are summed in f64 and the sums raised by a
    // margin far above what rounding an f32 sum of as many parts can add, so no chunk that
    // could enter is skipped.
    let mut order: Vec<usize> = (0..units.len()).collect();
    order.sort_by(|&a, &b| {
        bounds[a]
            .total_cmp(&bounds[b])
            .then(postings(&units[b]).cmp(&postings(&units[a])))
    });
    let margin = 1.0 + 1e-6 * (units.len() as f64 + 1.0);
    let below: Vec<f64> = std::iter::once(0.0)
        .chain(order.iter().scan(0.0, |sum, &u| {
            *sum += bounds[u];
            Some(*sum * margin)
        }))
        .collect();
    let all: f64 = bounds.iter().sum();
    let mut best = Leaders::new(n);
    let floor_of =
        |best: &Leaders<S::Key>| best.floor().map_or(f64::NEG_INFINITY, |k| scored.reach(k));
    // Units `order[..first]` are not essential.
    let mut first = 0;
    // Where each list's window pass stands; its cursor (`at`) only moves for chunks judged.
    let mut scan: Vec<Vec<usize>> = units.iter().map(|u| vec![0; u.len()]).collect();
    let mut sums = [0f32; WINDOW as usize];
    let mut hit = [0u64; WINDOW as usize / 64];
    while let Some(start) = order[first..]
        .iter()
        .flat_map(|&u| {
            units[u]
                .iter()
                .zip(&scan[u])
                .filter_map(|(l, &at)| l.chunks.get(at).copied())
        })
        .min()
    {
        let end = start.saturating_add(WINDOW);
        for &u in &order[first..] {
            for (l, (list, scan)) in units[u].iter().zip(&mut scan[u]).enumerate() {
                let from = *scan;
                let to = gallop(list.chunks, from, end);
                let chunks = &list.chunks[from..to];
                let mut add = |c: u32, part: f32| {
                    let at = (c - start) as usize;
                    sums[at] += part;
                    hit[at / 64] |= 1 << (at % 64);
                };
                match scored.parts(u, l) {
                    Parts::Each(values, weight) => {
                        for (&c, &value) in chunks.iter().zip(&values[from..to]) {
                            add(c, weight * value);
                        }
                    }
                    Parts::All(part) => chunks.iter().for_each(|&c| add(c, part)),
                }
                *scan = to;
            }
        }
        let mut floor = floor_of(&best);
        for (w, word) in hit.iter_mut().enumerate() {
            while *word != 0 {
                let at = w * 64 + word.trailing_zeros() as usize;
                *word &= *word - 1;
                let c = start + at as u32;
                let mut sure = f64::from(std::mem::take(&mut sums[at]));
                if !allowed(c) {
                    continue;
                }
                let mut open = sure * margin + below[first] >= floor;
                for j in (0..first).rev() {
                    if !open {
                        break;
                    }
                    let u = order[j];
                    let need = (floor - below[j]) / margin - sure;
                    sure += f64::from(scored.part(u, &mut units[u], c, need));
                    open = sure * margin + below[j] >= floor;
                }
                if open {
                    if let Some(key) = scored.key(&mut units, c, best.floor()) {
                        best.offer(key, group(c));
                        floor = floor_of(&best);
                    }
                }
            }
        }
        while first < order.len() && below[first + 1] < floor {
            first += 1;
        }
        // A list of an essential unit whose postings all add less than the unit's bound,
        // through which no chunk can reach the floor even with every other unit's bound,
        // proposes no more chunks (the floor only rises): a chunk it holds can reach the floor
        // only through a list of the unit that adds more, and that list still proposes it.
        for &u in &order[first..] {
            for (l, scan) in scan[u].iter_mut().enumerate() {
                if let Parts::All(part) = scored.parts(u, l) {
                    if (all - bounds[u] + f64::from(part)) * margin < floor {
                        *scan = units[u][l].chunks.len();
                    }
                }
            }
        }
    }
    best.into_sorted()
}

/// The groupings the lanes' tests of [`search`] try for chunks given `pages`: none, each
/// page's chunks together (as an index lays them out), and scattered; with the number of
/// pages.
#[cfg(test)]
pub(crate) fn test_groupings(pages: &[u32]) -> ([Option<Vec<u32>>; 3], usize) {
    let n_groups = pages.iter().max().map_or(0, |&g| g as usize + 1);
    let mut together = pages.to_vec();
    together.sort_unstable();
    ([None, Some(together), Some(pages.to_vec())], n_groups)
}

#[cfg(test)]
mod tests {
    use super::gallop;
    use proptest::prelude::*;

    /// What [`gallop`] must find: a binary search of the rest of the list.
    fn expected(chunks: &[u32], from: usize, c: u32) -> usize {
        from + chunks[from..].partition_point(|&x| x < c)
    }

    #[test]
    fn gallop_at_the_ends() {
        assert_eq!(gallop(&[], 0, 0), 0);
        assert_eq!(gallop(&[], 0, u32::MAX), 0);
        let chunks = [0, 3, 3, 9, u32::MAX - 1, u32::MAX];
        for from in 0..=chunks.len() {
            for c in [0, 1, 3, 4, 9, 10, u32::MAX - 1, u32::MAX] {
                assert_eq!(
                    gallop(&chunks, from, c),
                    expected(&chunks, from, c),
                    "{from} {c}"
                );
            }
        }
    }

    proptest! {
        #[test]
        fn gallop_finds_what_a_binary_search_finds(
            mut chunks in proptest::collection::vec(any::<u32>(), 0..300),
            at in any::<prop::sample::Index>(),
            c in any::<u32>(),
            pick in any::<prop::sample::Index>(),
        ) {
            chunks.sort_unstable();
            let from = at.index(chunks.len() + 1);
            prop_assert_eq!(gallop(&chunks, from, c), expected(&chunks, from, c));
            if !chunks.is_empty() {
                let c = chunks[pick.index(chunks.len())];
                prop_assert_eq!(gallop(&chunks, from, c), expected(&chunks, from, c));
            }
        }
    }
}
