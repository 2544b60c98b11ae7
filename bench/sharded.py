#!/usr/bin/env python3
"""Shards searched together (`wikidex.ShardedIndex`) against their merged index
(`wikidex.Index.merge`), in one Python process, on BEIR collections (default: CACM and
Cranfield from ../shared/data) or on a synthetic corpus (`--corpus FILE`, a `corpus.jsonl` of
../shared/tools/make_corpus.py, with `--queries` from a collection).

For each collection and shard count: the time to build the shards (one after another here, as
Ray tasks would in parallel), to merge them and to make a `ShardedIndex` of them; the rankings
of every query, checked equal (`rank`, limit 10, default lanes, no vectors); and the time of a
query in each, single-threaded, best of --repeats runs alternating the two --rounds times.

Usage (from the repo root):
    PY=$(scripts/py-env.sh bench/requirements.txt)
    (cd bindings-py && VIRTUAL_ENV=$PWD/../.venv "$PY" -m maturin develop --release)
    "$PY" bench/sharded.py [COLLECTION ...] [--shards 2 4 8] [--corpus FILE --queries DIR]
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
    args = ap.parse_args()
    if args.corpus:
        queries = queries_of(args.data / args.queries)
        run(args.corpus.parent.name, files_of(args.corpus), queries, args.shards, args.repeats, args.rounds)
        return
    for c in args.collections:
        collection = args.data / c
        run(c, files_of(collection / "corpus.jsonl"), queries_of(collection), args.shards, args.repeats, args.rounds)


if __name__ == "__main__":
    main()
