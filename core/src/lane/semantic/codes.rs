//! Binary codes for the semantic lane on large sections. Each vector less the section's mean
//! becomes one bit per dimension (its sign): 48 bytes at 384 dimensions, an eighth of an int8
//! row. A query ranks every code by Hamming distance to its own (XOR and popcount), then scores
//! only the [`depth`] nearest exactly with the stored values, so the lane reads the codes and a
//! few thousand rows instead of every row.
//!
//! The mean takes out the direction every embedding of a model shares (without it most bits
//! say the same for every row). It is summed in fixed blocks added in order, and every step
//! after it is integer, so the candidates are the same on every machine and thread count.

use std::ops::Range;

use super::VectorSection;
use crate::data::parallel;
use crate::lane::Mask;

/// Sections of at least this many vectors are searched through their codes; smaller ones are
/// scanned exactly (at 384 dimensions an exact int8 scan of this many takes about 5 ms on one
/// core, and the codes would save little).
pub(crate) const CODES_FROM: usize = 50_000;

/// Sections of more dimensions than this are scanned exactly (a code's distance is kept in 16
/// bits; models give a few hundred to a few thousand).
const MAX_DIM: usize = 16_384;

/// Rows summed (for the mean) or encoded per task.
const BLOCK: usize = 4096;

/// Rows a task measures the distance of, for a query (a few hundred µs of work).
const NEAREST_BLOCK: usize = 8 * BLOCK;

/// Rows `0..rows` cut into blocks of `size` (the last one shorter), the tasks of
/// [`parallel::map`].
fn row_blocks(rows: usize, size: usize) -> Vec<Range<usize>> {
    (0..rows)
        .step_by(size)
        .map(|start| start..(start + size).min(rows))
        .collect()
}

/// The rows a search of `n` results among `rows` vectors scores exactly: the nearest codes,
/// many more than `n` since a code's distance only estimates the angle, and more in a larger
/// section, where more rows crowd near the best. Chosen on MiniLM vectors at 1.1M chunks
/// (recall@10 of the exact scan's top 10: 0.965 with 2,048 rows, 0.989 with 4,096, 0.996 with
/// 8,192, 0.999 with 16,384) and at 111k (0.998 with 2,048).
pub(crate) fn depth(n: usize, rows: usize) -> usize {
    n.saturating_mul(64).max(rows / 128).max(2048)
}

/// A section's codes.
#[derive(Debug)]
pub(crate) struct Codes {
    /// The mean vector, taken from every vector before its signs are read.
    mean: Vec<f32>,
    /// `u64` words per code.
    words: usize,
    /// The codes, `words` per row, in row order; bit `d % 64` of word `d / 64` is set when
    /// dimension `d` is above the mean.
    bits: Vec<u64>,
}

impl Codes {
    /// The codes of `section` when it is searched through them: [`CODES_FROM`] vectors or
    /// more, of at most [`MAX_DIM`] dimensions.
    pub(crate) fn of(section: &VectorSection) -> Option<Codes> {
        let large = section.len() >= CODES_FROM && section.dim as usize <= MAX_DIM;
        large.then(|| Codes::new(section))
    }

    /// The codes of every vector of `section`, made on every core.
    pub(super) fn new(section: &VectorSection) -> Codes {
        let dim = section.dim as usize;
        let n = section.len();
        let blocks = row_blocks(n, BLOCK);
        let threads = parallel::cores();
        let sums = parallel::map(&blocks, threads, |rows| {
            let mut sum = vec![0f64; dim];
            let mut row = vec![0f32; dim];
            for i in rows.clone() {
                section.row_into(i, &mut row);
                for (s, x) in sum.iter_mut().zip(&row) {
                    *s += f64::from(*x);
                }
            }
            sum
        });
        let mut total = vec![0f64; dim];
        for sum in &sums {
            for (t, s) in total.iter_mut().zip(sum) {
                *t += s;
            }
        }
        let mean: Vec<f32> = total.iter().map(|t| (t / n.max(1) as f64) as f32).collect();
        let words = dim.div_ceil(64);
        let mut codes = Codes {
            mean,
            words,
            bits: Vec::new(),
        };
        let encoded = parallel::map(&blocks, threads, |rows| {
            let mut out = vec![0u64; rows.len() * words];
            let mut row = vec![0f32; dim];
            for (i, code) in rows.clone().zip(out.chunks_exact_mut(words)) {
                section.row_into(i, &mut row);
                codes.encode(&row, code);
            }
            out
        });
        codes.bits = encoded.concat();
        codes
    }

    /// Writes the code of `v` into `code` (`words` long, zero). A word at a time and without
    /// a branch: a bit is as likely set as not, so a branch per dimension was mispredicted
    /// half the time (most of the time a million-row section took to encode).
    fn encode(&self, v: &[f32], code: &mut [u64]) {
        for ((word, v), m) in code.iter_mut().zip(v.chunks(64)).zip(self.mean.chunks(64)) {
            let mut w = 0u64;
            for (j, (x, m)) in v.iter().zip(m).enumerate() {
                w |= u64::from(x > m) << j;
            }
            *word |= w;
        }
    }

    /// The rows `mask` allows whose codes are the `depth` nearest to `query`'s, in row order;
    /// ties at the last distance taken go to the lower rows.
    pub(crate) fn nearest(&self, query: &[f32], mask: Option<Mask<'_>>, depth: usize) -> Vec<u32> {
        let words = self.words;
        let mut q = vec![0u64; words];
        self.encode(query, &mut q);
        let far = (words * 64 + 1) as u16;
        // Every row's distance, blocks of rows on every core (each block's distances in row
        // order, and how many rows are at each distance).
        let rows = self.bits.len() / words.max(1);
        let blocks = row_blocks(rows, NEAREST_BLOCK);
        let parts = parallel::map(&blocks, parallel::cores(), |rows| {
            let mut counts = vec![0usize; usize::from(far) + 1];
            let codes = self.bits[rows.start * words..rows.end * words].chunks_exact(words);
            let distances: Vec<u16> = (rows.clone().zip(codes))
                .map(|(i, code)| {
                    let d = if mask.is_some_and(|m| !m[i]) {
                        far
                    } else {
                        code.iter()
                            .zip(&q)
                            .map(|(a, b)| (a ^ b).count_ones())
                            .sum::<u32>() as u16
                    };
                    counts[usize::from(d)] += 1;
                    d
                })
                .collect();
            (distances, counts)
        });
        let mut counts = vec![0usize; usize::from(far) + 1];
        for (_, part) in &parts {
            for (c, n) in counts.iter_mut().zip(part) {
                *c += n;
            }
        }
        // The least distance `cut` with `depth` rows at or below it: every row nearer than
        // `cut`, then rows at `cut` in order until `depth`.
        let mut cut = 0usize;
        let mut below = 0usize;
        while cut < usize::from(far) && below + counts[cut] < depth {
            below += counts[cut];
            cut += 1;
        }
        let mut at_cut = depth.saturating_sub(below);
        let mut out = Vec::with_capacity(depth.min(rows));
        let distances = parts.iter().flat_map(|(distances, _)| distances);
        for (i, &d) in distances.enumerate() {
            let d = usize::from(d);
            if d < cut || (d == cut && d < usize::from(far) && at_cut > 0) {
                if d == cut {
                    at_cut -= 1;
                }
                out.push(i as u32);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lane::semantic::tests::clustered;
    use crate::lane::semantic::VectorEncoding;

    #[test]
    fn nearest_codes_over_many_blocks_are_the_nearest_by_distance_then_row() {
        let rows = 2 * NEAREST_BLOCK + 1234;
        let vs = clustered(rows, 8);
        let section = VectorSection::new("m", "f", 8, &vs, VectorEncoding::F32).unwrap();
        let codes = Codes::new(&section);
        let mask: Vec<bool> = (0..rows).map(|i| i % 3 != 1).collect();
        for (q, depth) in [
            (3usize, 2048),
            (NEAREST_BLOCK + 9, 5000),
            (rows - 1, 40_000),
        ] {
            let query = section.vector(q).unwrap();
            let mut code = vec![0u64; 1];
            codes.encode(&query, &mut code);
            for mask in [None, Some(&mask[..])] {
                // Every allowed row by (distance, row), the first `depth`, in row order.
                let mut want: Vec<(u32, u32)> = (0..rows)
                    .filter(|&i| mask.is_none_or(|m| m[i]))
                    .map(|i| ((codes.bits[i] ^ code[0]).count_ones(), i as u32))
                    .collect();
                want.sort_unstable();
                let mut want: Vec<u32> = want.iter().take(depth).map(|&(_, i)| i).collect();
                want.sort_unstable();
                assert_eq!(
                    codes.nearest(&query, mask, depth),
                    want,
                    "row {q}, depth {depth}"
                );
            }
        }
    }

    #[test]
    fn nearest_codes_hold_the_exact_best_and_honour_the_mask() {
        let vs = clustered(3000, 70);
        for encoding in [VectorEncoding::F32, VectorEncoding::Int8] {
            let section = VectorSection::new("m", "f", 70, &vs, encoding).unwrap();
            let codes = Codes::new(&section);
            assert_eq!(codes.words, 2);
            for q in [5usize, 77, 2999] {
                let query = section.vector(q).unwrap();
                let near = codes.nearest(&query, None, 50);
                assert_eq!(near.len(), 50);
                assert!(near.windows(2).all(|w| w[0] < w[1]));
                // A vector's own code is at distance 0.
                assert!(near.contains(&(q as u32)), "{encoding:?} {q}");
                let mask: Vec<bool> = (0..3000).map(|i| i != q && i % 2 == 0).collect();
                let near = codes.nearest(&query, Some(&mask), 50);
                assert_eq!(near.len(), 50);
                assert!(near.iter().all(|&i| mask[i as usize]));
            }
            // Asking for more rows than the mask allows gives every allowed row.
            let mask: Vec<bool> = (0..3000).map(|i| i < 10).collect();
            let near = codes.nearest(&section.vector(0).unwrap(), Some(&mask), 50);
            assert_eq!(near, (0..10).collect::<Vec<u32>>());
        }
    }

    #[test]
    fn codes_read_each_dimension_against_the_mean() {
        let vs = vec![vec![1.0, 0.0, 0.5], vec![0.0, 1.0, 0.5]];
        let section = VectorSection::new("m", "f", 3, &vs, VectorEncoding::F32).unwrap();
        let codes = Codes::new(&section);
        // Dimension 2 is the mean in both rows: never above it.
        assert_eq!(codes.bits, [0b001, 0b010]);
    }
}
