//! The semantic lane's exact vector scan at 10k and 100k vectors of 384 dimensions (the size
//! of all-MiniLM-L6-v2's), f32 and int8, top 100, with the bytes per second each reaches.
//!
//! `read/N` is the ceiling to compare with: one thread summing the same f32 buffer, a plain
//! streaming read of the same bytes (this machine's single-thread memory read bandwidth at
//! 100k, where the 154 MB cannot stay in cache). The scan is single-threaded too.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use wikidex::{VectorEncoding, VectorSection};

const DIM: usize = 384;

/// Deterministic pseudo-random unit vectors (xorshift; no dependency).
fn vectors(n: usize, seed: u64) -> Vec<Vec<f32>> {
    let mut state = seed.max(1);
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 40) as f32 / (1u64 << 24) as f32 - 0.5
    };
    (0..n)
        .map(|_| {
            let v: Vec<f32> = (0..DIM).map(|_| next()).collect();
            let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            v.into_iter().map(|x| x / norm).collect()
        })
        .collect()
}

/// Sums a buffer with independent accumulators: a streaming read at full speed.
fn read_all(values: &[f32]) -> f32 {
    let mut acc = [0f32; 16];
    for chunk in values.chunks_exact(16) {
        for i in 0..16 {
            acc[i] += chunk[i];
        }
    }
    acc.iter().sum()
}

fn benches(c: &mut Criterion) {
    let query = vectors(1, 99).pop().expect("one query");
    let mut group = c.benchmark_group("scan");
    group.sample_size(20);
    for n in [10_000usize, 100_000] {
        let vs = vectors(n, n as u64);
        let f32s = VectorSection::new("bench", "bench", DIM, &vs, VectorEncoding::F32)
            .expect("f32 section");
        let int8 = VectorSection::new("bench", "bench", DIM, &vs, VectorEncoding::Int8)
            .expect("int8 section");
        // The scan must find the exact best vector before it is timed.
        let best = (0..n)
            .max_by(|&a, &b| {
                let dot = |i: usize| vs[i].iter().zip(&query).map(|(x, y)| x * y).sum::<f32>();
                dot(a).total_cmp(&dot(b))
            })
            .expect("vectors");
        assert_eq!(f32s.nearest(&query, 100).expect("scan")[0].0 as usize, best);
        let flat: Vec<f32> = vs.into_iter().flatten().collect();

        group.throughput(Throughput::Bytes((n * DIM * 4) as u64));
        group.bench_with_input(BenchmarkId::new("read", n), &flat, |b, flat| {
            b.iter(|| read_all(black_box(flat)))
        });
        group.bench_with_input(BenchmarkId::new("f32", n), &f32s, |b, s| {
            b.iter(|| s.nearest(black_box(&query), 100))
        });
        group.throughput(Throughput::Bytes((n * (DIM + 4)) as u64));
        group.bench_with_input(BenchmarkId::new("int8", n), &int8, |b, s| {
            b.iter(|| s.nearest(black_box(&query), 100))
        });
    }
    group.finish();
}

criterion_group!(scan, benches);
criterion_main!(scan);
