#!/usr/bin/env python3
"""wikidex's Python binding against bm25s, in one Python process, on BEIR collections.

For each collection: index build time, single-thread queries per second, queries per second
with 4 Python threads, and nDCG@10 / MAP / recall@100 of each tool; plus the binding's call
overhead against the Rust CLI's own query loop (`wikidex eval --lanes lexical`). Both tools
use the same BM25 (Lucene variant, k1/b below), the same stopword list, the Snowball English
stemmer and the same word splitting; wikidex indexes each document as one chunk
(`chunk.max_tokens` 4096, no overlap), as bm25s does. See compare_bm25s.py for the details of
the alignment, which this script reuses.

Timing: one warm-up, then the best of --repeats runs over all evaluated queries, top 100
each, alternating the tools --rounds times. wikidex is timed with `Index.rank`, lexical lane
only: a `Ranking` of page ids and scores kept native until read, as bm25s returns numpy
arrays of document ids and scores. Beside it: `rank(...).to_list()`, which makes the 100
`(id, score)` tuples per query (q/s tuples), `Index.rank_many` (all queries in one call
over 4 threads, the GIL released once), `Index.search` with 100 hits and no snippets, every
hit read (q/s records), and `Index.search` as a user calls it for 10 hits and for 100: the
call alone (it ranks; each hit, with its snippet, is made when first read), and the call with
every hit's page id, title and snippet read, and with every hit's page id and title read
(no snippet made). bm25s is timed with its faster backend. With threads, each thread takes a quarter of the queries; bm25s holds the GIL while
it scores, wikidex releases it.

Usage (from the repo root; `make bench` does this):
    PY=$(scripts/py-env.sh bench/requirements.txt)
    (cd bindings-py && VIRTUAL_ENV=$PWD/../.venv "$PY" -m maturin develop --release)
    cargo build --release -p wikidex-cli
    "$PY" bench/compare_python.py [COLLECTION ...] [--json]
"""

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse
import json
import logging
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import compare_bm25s as cb  # noqa: E402

import Stemmer  # noqa: E402

import wikidex  # noqa: E402

K1, B = 1.5, 0.6  # wikidex's defaults (core/src/data/config.rs), used for both tools
THREADS = 4


def split(items, n):
    return [items[i::n] for i in range(n)]


def threaded(fn, batches):
    with ThreadPoolExecutor(len(batches)) as pool:
        return list(pool.map(fn, batches))


def wikidex_side(coll, repeats, rounds):
    doc_ids, doc_texts, q_ids, q_texts, qrels = coll
    files = {f"d{n}.md": text for n, text in enumerate(doc_texts)}
    config = {"chunk": {"max_tokens": 4096, "overlap_tokens": 0}, "bm25": {"k1": K1, "b": B}}
    t0 = time.perf_counter()
    index = wikidex.Index.build(files, config)
    build = time.perf_counter() - t0

    def run(queries):
        return [index.rank(q, limit=cb.DEPTH, lanes="lexical") for q in queries]

    def run_tuples(queries):
        return [index.rank(q, limit=cb.DEPTH, lanes="lexical").to_list() for q in queries]

    def run_records(queries):
        out = [index.search(q, limit=cb.DEPTH, lanes="lexical", snippets=False, always="separate")
               for q in queries]
        for r in out:
            for h in r.hits:
                h.chunk  # noqa: B018 (made when read)
        return out

    def run_search(limit):
        # The call as a user makes it: the ranking, each hit made when read.
        return lambda: [index.search(q, limit=limit, lanes="lexical") for q in q_texts]

    def run_read(limit, snippets=True):
        # And every hit of it read: with its snippet (the full records), or for its page id and
        # title only (what a list of results without snippets shows; no snippet is made).
        def read():
            out = []
            for q in q_texts:
                hits = index.search(q, limit=limit, lanes="lexical").hits
                out.append([(h.page_id, h.title, h.snippet.text) if snippets else (h.page_id, h.title)
                            for h in hits])
            return out
        return read

    single = threads = tuples = records = batch = search10 = search100 = read10 = read100 = float("inf")
    titles10 = float("inf")
    for _ in range(rounds):
        s, results = cb.best_time(lambda: run(q_texts), repeats)
        single = min(single, s)
        t, _ = cb.best_time(lambda: threaded(run, split(q_texts, THREADS)), repeats)
        threads = min(threads, t)
        m, _ = cb.best_time(
            lambda: index.rank_many(q_texts, limit=cb.DEPTH, lanes="lexical", threads=THREADS), repeats
        )
        batch = min(batch, m)
        u, _ = cb.best_time(lambda: run_tuples(q_texts), repeats)
        tuples = min(tuples, u)
        r, full = cb.best_time(lambda: run_records(q_texts), repeats)
        records = min(records, r)
        search10 = min(search10, cb.best_time(run_search(10), repeats)[0])
        search100 = min(search100, cb.best_time(run_search(cb.DEPTH), repeats)[0])
        read10 = min(read10, cb.best_time(run_read(10), repeats)[0])
        read100 = min(read100, cb.best_time(run_read(cb.DEPTH), repeats)[0])
        titles10 = min(titles10, cb.best_time(run_read(10, snippets=False), repeats)[0])
    runs = {qid: [doc_ids[int(p[1:])] for p, _ in r] for qid, r in zip(q_ids, results)}
    same = all([h.page_id for h in f.hits] == [p for p, _ in r] for f, r in zip(full, results))
    if not same:
        sys.exit("error: Index.rank and Index.search ranked differently")
    return {
        "build_seconds": build,
        "qps": len(q_ids) / single,
        "qps_threads": len(q_ids) / threads,
        "qps_tuples": len(q_ids) / tuples,
        "qps_rank_many": len(q_ids) / batch,
        "qps_records": len(q_ids) / records,
        "qps_search10": len(q_ids) / search10,
        "qps_search100": len(q_ids) / search100,
        "qps_read10": len(q_ids) / read10,
        "qps_read100": len(q_ids) / read100,
        "qps_titles10": len(q_ids) / titles10,
        **cb.evaluate(runs, qrels),
    }


def bm25s_side(coll, repeats, rounds, stopwords, stemmer):
    doc_ids, doc_texts, q_ids, q_texts, qrels = coll
    backends = cb.available_backends("auto")
    best = None
    for backend in backends:
        t0 = time.perf_counter()
        runner = cb.Bm25sRunner(doc_texts, K1, B, backend, stopwords, stemmer,
                                cb.WIKIDEX_TOKEN_PATTERN, distinct_query_terms=False)
        build = time.perf_counter() - t0
        single = threads = float("inf")
        for _ in range(rounds):
            s, result = cb.best_time(lambda: runner.search(q_texts, cb.DEPTH), repeats)
            single = min(single, s)
            t, _ = cb.best_time(
                lambda: threaded(lambda qs: runner.search(qs, cb.DEPTH), split(q_texts, THREADS)),
                repeats,
            )
            threads = min(threads, t)
        docs, scores = result
        runs = {qid: [doc_ids[d] for d, sc in zip(docs[i], scores[i]) if sc > 0]
                for i, qid in enumerate(q_ids)}
        row = {"backend": backend, "build_seconds": build, "qps": len(q_ids) / single,
               "qps_threads": len(q_ids) / threads, **cb.evaluate(runs, qrels)}
        if best is None or row["qps"] > best["qps"]:
            best = row
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("collections", nargs="*", default=cb.DEFAULT_COLLECTIONS)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--wikidex", metavar="PATH", help="the CLI for the overhead figure")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    logging.getLogger("bm25s").setLevel(logging.ERROR)
    stopwords = cb.load_stopwords("wikidex")
    stemmer = Stemmer.Stemmer("english")
    binary = cb.resolve_wikidex(args.wikidex)
    report = {"versions": {**cb.versions(), "wikidex-python": wikidex.__version__},
              "k1": K1, "b": B, "threads": THREADS, "collections": {}}
    for path in args.collections:
        coll = cb.load_collection(path)
        wx = wikidex_side(coll, args.repeats, args.rounds)
        bm = bm25s_side(coll, args.repeats, args.rounds, stopwords, stemmer)
        cli = cb.run_wikidex(binary, Path(path), K1, B, True, args.repeats)
        report["collections"][Path(path).name] = {
            "queries": len(coll[2]),
            "wikidex": wx,
            "bm25s": bm,
            "cli_qps": cli["qps"],
            "ratios": {
                "qps_single": wx["qps"] / bm["qps"],
                "qps_threads": wx["qps_threads"] / bm["qps_threads"],
                "qps_rank_many": wx["qps_rank_many"] / bm["qps_threads"],
                "build": bm["build_seconds"] / wx["build_seconds"],
                "python_vs_cli_qps": wx["qps"] / cli["qps"],
                "search10_vs_bm25s": wx["qps_search10"] / bm["qps"],
                "rank_vs_search100": wx["qps"] / wx["qps_search100"],
                "read10_vs_bm25s": wx["qps_read10"] / bm["qps"],
                "rank_vs_read100": wx["qps"] / wx["qps_read100"],
                "titles10_vs_bm25s": wx["qps_titles10"] / bm["qps"],
            },
        }
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"k1 {K1}, b {B}, top {cb.DEPTH}; versions: {report['versions']}")
    for name, r in report["collections"].items():
        wx, bm, ra = r["wikidex"], r["bm25s"], r["ratios"]
        print(f"\n{name} ({r['queries']} queries)")
        print(f"{'':10}{'build s':>9}{'q/s':>10}{'q/s x' + str(THREADS):>10}{'nDCG@10':>9}{'MAP':>8}{'R@100':>8}")
        for label, row in (("wikidex", wx), ("bm25s", bm)):
            print(f"{label:10}{row['build_seconds']:>9.2f}{row['qps']:>10.0f}{row['qps_threads']:>10.0f}"
                  f"{row['ndcg@10']:>9.4f}{row['map']:>8.4f}{row['recall@100']:>8.4f}")
        print(f"wikidex Index.rank with its hits made into 100 tuples (.to_list()): {wx['qps_tuples']:.0f} q/s "
              f"({wx['qps_tuples'] / bm['qps']:.1f}x bm25s)")
        print(f"wikidex Index.rank_many, one call, {THREADS} threads: {wx['qps_rank_many']:.0f} q/s "
              f"({ra['qps_rank_many']:.1f}x bm25s with {THREADS} threads)")
        print(f"wikidex Index.search with 100 full records per query, no snippets: {wx['qps_records']:.0f} q/s")
        print(f"wikidex Index.search, 10 hits (made when read): {wx['qps_search10']:.0f} q/s "
              f"({ra['search10_vs_bm25s']:.2f}x bm25s's top 100); every hit read with its snippet: "
              f"{wx['qps_read10']:.0f} q/s ({ra['read10_vs_bm25s']:.2f}x); every hit's page id and title "
              f"read, no snippet: {wx['qps_titles10']:.0f} q/s ({ra['titles10_vs_bm25s']:.2f}x)")
        print(f"wikidex Index.search, 100 hits (made when read): {wx['qps_search100']:.0f} q/s "
              f"(Index.rank {ra['rank_vs_search100']:.1f}x faster); every hit read with its snippet: "
              f"{wx['qps_read100']:.0f} q/s (Index.rank {ra['rank_vs_read100']:.1f}x faster)")
        print(f"ratios: q/s {ra['qps_single']:.1f}x single, {ra['qps_threads']:.1f}x with {THREADS} threads; "
              f"build {ra['build']:.1f}x faster; Python calls give {ra['python_vs_cli_qps']:.2f} of the CLI's own q/s "
              f"({r['cli_qps']:.0f})")


if __name__ == "__main__":
    main()
