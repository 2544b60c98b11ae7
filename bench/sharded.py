#!/usr/bin/env python3
"""Shards searched together (`wikidex.ShardedIndex`) against their merged index
(`wikidex.Index.merge`), in one Python process, on BEIR collections (default: CACM and
Cranfield from ../shared/data) or on a synthetic corpus (`--corpus FILE`, a `corpus.jsonl` of
../shared/tools/make_corpus.py, with `--queries` from a collection).

For each collection and shard count: the time to build the shards (one after another here, as
Ray tasks would in parallel), to merge them and to make a `ShardedIndex` of them; the rankings
of every query, checked equal (`rank`, limit 10, default lanes, no vectors); and the time of a
query in each, single-threaded, best of --repeats runs alternating the two --rounds times.

With --remote, each shard goes to a Ray actor of a local cluster (`distributed.serve`,
`ray.init(num_cpus=--cpus)`) instead: the rankings of every query are checked equal to the
merged index's, then the time of a query asked alone (`rank`, one round trip to every actor)
and in batches (`rank_many`, --batch queries a round trip), against the merged index's
`rank` and `rank_many` (every core) in the same process.

Usage (from the repo root):
    PY=$(scripts/py-env.sh bench/requirements.txt bindings-py/requirements-dev.txt)
    (cd bindings-py && VIRTUAL_ENV=$PWD/../.venv "$PY" -m maturin develop --release)
    "$PY" bench/sharded.py [COLLECTION ...] [--shards 2 4 8] [--corpus FILE --queries DIR]
        [--remote [--batch 64] [--cpus 2]]
"""

import argparse
import json
import sys
import time
from pathlib import Path

import wikidex
from wikidex import distributed

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"


def files_of(corpus: Path) -> dict:
    """A BEIR corpus.jsonl as wiki files: `<id>.md`, the title as a heading, then the text."""
    files = {}
    with open(corpus) as f:
        for line in f:
            doc = json.loads(line)
            files[f"{doc['_id']}.md"] = f"# {doc.get('title') or doc['_id']}\n\n{doc['text']}\n"
    return files


def queries_of(collection: Path) -> list:
    with open(collection / "queries.jsonl") as f:
        return [json.loads(line)["text"] for line in f]


def timed(fn):
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def per_query(index, queries, repeats):
    """Best of `repeats` runs over `queries`, in µs per query."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for q in queries:
            index.rank(q, limit=10)
        best = min(best, (time.perf_counter() - start) / len(queries) * 1e6)
    return best


def batched(index, queries, repeats, **more):
    """Best of `repeats` runs of `rank_many` over `queries`, in µs per query."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        index.rank_many(queries, limit=10, **more)
        best = min(best, (time.perf_counter() - start) / len(queries) * 1e6)
    return best


def run_remote(name, files, queries, counts, repeats, rounds, batch):
    print(f"\n{name}: {len(files)} pages, {len(queries)} queries, shards in Ray actors")
    print(
        "| shards | served | merged `rank` | remote `rank` | merged `rank_many` "
        f"| remote `rank_many` ({batch} a batch) | remote / merged, alone | batched |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for k in counts:
        parts = distributed.deal(files, k)
        shards = [wikidex.Index.build(dict(p), model=False) for p in parts]
        merged = wikidex.Index.merge(shards, model=False)
        remote, serve = timed(lambda: distributed.serve(shards))
        with remote:
            if remote.rank_many(queries, limit=10, batch_size=batch) != merged.rank_many(queries, limit=10):
                sys.exit(f"{name}, {k} shards: the batched rankings differ")
            for q in queries:
                if remote.rank(q, limit=10) != merged.rank(q, limit=10):
                    sys.exit(f"{name}, {k} shards: the rankings of {q!r} differ")
            t = {key: float("inf") for key in ("merged", "remote", "merged_many", "remote_many")}
            for _ in range(rounds):
                t["merged"] = min(t["merged"], per_query(merged, queries, repeats))
                t["remote"] = min(t["remote"], per_query(remote, queries, repeats))
                t["merged_many"] = min(t["merged_many"], batched(merged, queries, repeats))
                t["remote_many"] = min(
                    t["remote_many"], batched(remote, queries, repeats, batch_size=batch)
                )
        print(
            f"| {k} | {serve:.1f} s | {t['merged']:.0f} µs | {t['remote']:.0f} µs "
            f"| {t['merged_many']:.0f} µs | {t['remote_many']:.0f} µs "
            f"| **{t['remote'] / t['merged']:.1f}x** | **{t['remote_many'] / t['merged_many']:.1f}x** |"
        )


def run(name, files, queries, counts, repeats, rounds):
    print(f"\n{name}: {len(files)} pages, {len(queries)} queries")
    print("| shards | build shards | merge | ShardedIndex | merged: µs/query | sharded: µs/query | sharded / merged |")
    print("|---|---|---|---|---|---|---|")
    for k in counts:
        parts = distributed.deal(files, k)
        shards, build = timed(lambda: [wikidex.Index.build(dict(p), model=False) for p in parts])
        merged, merge = timed(lambda: wikidex.Index.merge(shards, model=False))
        sharded, make = timed(lambda: wikidex.ShardedIndex(shards))
        for q in queries:
            if sharded.rank(q, limit=10) != merged.rank(q, limit=10):
                sys.exit(f"{name}, {k} shards: the rankings of {q!r} differ")
        times = {"merged": float("inf"), "sharded": float("inf")}
        for _ in range(rounds):
            for label, index in (("merged", merged), ("sharded", sharded)):
                times[label] = min(times[label], per_query(index, queries, repeats))
        print(
            f"| {k} | {build:.2f} s | {merge:.2f} s | {make:.3f} s | {times['merged']:.0f} "
            f"| {times['sharded']:.0f} | **{times['sharded'] / times['merged']:.2f}x** |"
        )


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("collections", nargs="*", default=["cacm", "cranfield"])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--shards", type=int, nargs="+", default=[2, 4, 8])
    ap.add_argument("--corpus", type=Path, help="a corpus.jsonl to shard instead of the collections")
    ap.add_argument("--queries", default="cacm", help="the collection whose queries --corpus is asked")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--remote", action="store_true", help="shards in Ray actors (distributed.serve)")
    ap.add_argument("--batch", type=int, default=64, help="queries a round trip with --remote")
    ap.add_argument("--cpus", type=int, default=2, help="the local Ray cluster's CPUs with --remote")
    args = ap.parse_args()
    if args.remote:
        import ray

        ray.init(num_cpus=args.cpus, include_dashboard=False, log_to_driver=False)

        def go(name, files, queries):
            run_remote(name, files, queries, args.shards, args.repeats, args.rounds, args.batch)
    else:

        def go(name, files, queries):
            run(name, files, queries, args.shards, args.repeats, args.rounds)

    if args.corpus:
        go(args.corpus.parent.name, files_of(args.corpus), queries_of(args.data / args.queries))
        return
    for c in args.collections:
        collection = args.data / c
        go(c, files_of(collection / "corpus.jsonl"), queries_of(collection))


if __name__ == "__main__":
    main()
