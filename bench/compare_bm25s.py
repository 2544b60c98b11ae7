#!/usr/bin/env python3
"""Side-by-side benchmark: wikidex's lexical BM25 lane vs the `bm25s` Python package.

For each BEIR collection (corpus.jsonl, queries.jsonl, qrels/test.tsv) this measures, in one run,
single-threaded queries per second and MAP / nDCG@10 / recall@100 of both tools, using the same
BM25 settings:

  * BM25 variant  Lucene/ATIRE: idf = ln(1 + (N - df + 0.5) / (df + 0.5)),
                  tf part = tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))
                  (bm25s method="lucene" leaves out the constant (k1 + 1) factor, which does not
                  change any ranking);
  * k1, b         --k1/--b, passed to both tools; by default the values wikidex reports in its
                  output config are used for bm25s;
  * documents     title + " " + text, each indexed whole (wikidex runs with
                  --chunk-tokens 4096 --overlap-tokens 0 so that a document is one chunk;
                  --wikidex-chunking keeps its default chunking);
  * stopwords     core/src/text/stopwords_en.txt (or bm25s's built-in "en" list with
                  --stopwords bm25s-en);
  * stemmer       Snowball English through PyStemmer (wikidex: rust-stemmers' English);
  * words         maximal runs of alphanumeric characters, lowercased, as wikidex's analyzer
                  splits them (regex (?u)[^\W_]+; bm25s's own default (?u)\b\w\w+\b drops
                  one-character words and keeps underscores: --token-pattern);
  * query terms   a term the query repeats counts once per occurrence, as bm25s does and as
                  wikidex weighs it (--query-terms distinct counts each term once in bm25s);
  * depth         top-100 per query, single thread.

bm25s timing covers tokenizing all evaluated queries + retrieving their top-100 (index building
excluded); one warm-up run, then the best of --repeats runs. Both bm25s backends ("numpy" and,
when numba is installed, "numba") are timed and the faster is reported, so wikidex is compared
against bm25s at its best. wikidex is run once as
`wikidex eval DIR --lanes lexical --json --repeat N+1 --chunk-tokens 4096 --overlap-tokens 0
[--k1 X --b Y]`: it runs its query loop N+1 times in one process (the first is the warm-up) and
reports the fastest.

Metrics follow trec_eval (relevance = qrels score > 0; nDCG with linear gain), see the
"Metrics" block below. Only queries with at least one relevant judgement are evaluated.

Usage (from the repo root):
    PY=$(scripts/py-env.sh)
    cargo build --release                                # builds target/release/wikidex
    "$PY" bench/compare_bm25s.py                         # both default collections
    "$PY" bench/compare_bm25s.py /work/shared/data/cacm --json
    "$PY" bench/compare_bm25s.py --bm25s-only --k1 0.9 --b 0.4   # no wikidex binary needed
"""

import os

# Single thread everywhere: set before numpy / scipy / numba are imported.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
             "NUMBA_NUM_THREADS", "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse
import gc
import importlib.metadata
import json
import logging
import math
import subprocess
import sys
import time
from pathlib import Path

import bm25s
import Stemmer

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_COLLECTIONS = ["/work/shared/data/cacm", "/work/shared/data/cranfield"]
DEFAULT_WIKIDEX = "target/release/wikidex"
WIKIDEX_STOPWORDS = REPO_ROOT / "core" / "src" / "text" / "stopwords_en.txt"
DEPTH = 100
# wikidex's analyzer: words are maximal runs of alphanumeric characters (`_` and `'` split).
WIKIDEX_TOKEN_PATTERN = r"(?u)[^\W_]+"
# `wikidex eval --chunk-tokens` maximum: with it (and no overlap) a document is one chunk.
WIKIDEX_MAX_CHUNK_TOKENS = 4096
# Used only with --bm25s-only when --k1/--b are not given (wikidex's documented defaults).
FALLBACK_K1, FALLBACK_B = 1.2, 0.75


# ----------------------------------------------------------------------------------------------
# Collection loading
# ----------------------------------------------------------------------------------------------

def read_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def load_collection(path):
    """Returns (doc_ids, doc_texts, eval_query_ids, eval_query_texts, qrels).

    qrels: {query_id: {doc_id: grade}} with every judgement (grades 0 included, for nDCG's
    ideal ranking only grades > 0 matter). Evaluated queries = those in queries.jsonl that have
    at least one judgement with grade > 0, in queries.jsonl order.
    """
    path = Path(path)
    corpus = read_jsonl(path / "corpus.jsonl")
    doc_ids = [str(d["_id"]) for d in corpus]
    doc_texts = [(d.get("title") or "") + " " + (d.get("text") or "") for d in corpus]

    qrels = {}
    with open(path / "qrels" / "test.tsv", encoding="utf-8") as f:
        for lineno, line in enumerate(f):
            parts = line.rstrip("\n").split("\t")
            if lineno == 0 and parts[0] == "query-id":
                continue
            if len(parts) < 3:
                continue
            qrels.setdefault(parts[0], {})[parts[1]] = int(parts[2])

    queries = read_jsonl(path / "queries.jsonl")
    eval_ids, eval_texts = [], []
    for q in queries:
        qid = str(q["_id"])
        if any(g > 0 for g in qrels.get(qid, {}).values()):
            eval_ids.append(qid)
            eval_texts.append(q["text"])
    return doc_ids, doc_texts, eval_ids, eval_texts, qrels


# ----------------------------------------------------------------------------------------------
# Metrics (trec_eval definitions; `ranked` = doc ids in rank order, `judged` = {doc_id: grade})
# ----------------------------------------------------------------------------------------------

def average_precision(ranked, judged):
    """AP: sum of precision@i over ranks i holding a relevant doc, / number of relevant docs."""
    n_relevant = sum(1 for g in judged.values() if g > 0)
    hits, total = 0, 0.0
    for i, doc in enumerate(ranked, start=1):
        if judged.get(doc, 0) > 0:
            hits += 1
            total += hits / i
    return total / n_relevant


def ndcg_at(ranked, judged, k=10):
    """nDCG@k, trec_eval ndcg_cut: linear gain grade / log2(rank + 1); ideal = qrels by grade."""
    dcg = sum(max(judged.get(doc, 0), 0) / math.log2(i + 1)
              for i, doc in enumerate(ranked[:k], start=1))
    ideal = sorted((g for g in judged.values() if g > 0), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 1) for i, g in enumerate(ideal, start=1))
    return dcg / idcg


def recall_at(ranked, judged, k=100):
    """recall@k: relevant docs in the top k / all relevant docs."""
    n_relevant = sum(1 for g in judged.values() if g > 0)
    return sum(1 for doc in ranked[:k] if judged.get(doc, 0) > 0) / n_relevant


def evaluate(runs, qrels):
    """runs: {query_id: [doc_id, ...]} for every evaluated query. Returns mean metrics."""
    n = len(runs)
    return {
        "map": sum(average_precision(r, qrels[q]) for q, r in runs.items()) / n,
        "ndcg@10": sum(ndcg_at(r, qrels[q], 10) for q, r in runs.items()) / n,
        "recall@100": sum(recall_at(r, qrels[q], DEPTH) for q, r in runs.items()) / n,
    }


# ----------------------------------------------------------------------------------------------
# wikidex side
# ----------------------------------------------------------------------------------------------

def run_wikidex(binary, collection, k1, b, whole_docs, repeats):
    """Runs `wikidex eval --repeat repeats+1`; returns its metrics, fastest query_seconds, config.

    whole_docs: index each document as one chunk (the largest chunk size wikidex accepts, no
    overlap), so BM25 sees the same documents and lengths as bm25s does.
    """
    cmd = [str(binary), "eval", str(collection), "--lanes", "lexical", "--json",
           "--repeat", str(repeats + 1)]
    if whole_docs:
        cmd += ["--chunk-tokens", str(WIKIDEX_MAX_CHUNK_TOKENS), "--overlap-tokens", "0"]
    if k1 is not None:
        cmd += ["--k1", repr(k1)]
    if b is not None:
        cmd += ["--b", repr(b)]
    outputs = []
    for _ in range(1):
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            sys.exit(f"error: `{' '.join(cmd)}` exited with {proc.returncode}:\n{proc.stderr.strip()}")
        outputs.append(parse_json_output(proc.stdout, cmd))
    lexical = [o["runs"]["lexical"] for o in outputs]
    best = min(lexical, key=lambda r: r["query_seconds"])
    first = outputs[0]
    return {
        "queries": first["queries"],
        "config": first.get("config", {}),
        "command": " ".join(cmd),
        "query_seconds": best["query_seconds"],
        "qps": first["queries"] / best["query_seconds"],
        "ms_per_query": 1000.0 * best["query_seconds"] / first["queries"],
        "documents": first.get("documents"),
        "chunks": first.get("chunks"),
        "build_seconds": first.get("build_seconds"),
        "map": best["map"],
        "ndcg@10": best["ndcg@10"],
        "recall@100": best["recall@100"],
    }


def wikidex_bm25_params(config):
    """(k1, b) from wikidex's output config: `config.bm25.{k1,b}` (or `config.{k1,b}`).

    wikidex stores them as f32, so 1.2 comes back as 1.2000000476837158: round to 6 digits.
    """
    src = config.get("bm25", config)
    try:
        return float(f"{float(src['k1']):.6g}"), float(f"{float(src['b']):.6g}")
    except (KeyError, TypeError, ValueError):
        sys.exit(f"error: no bm25 k1/b in wikidex's output config {config}; pass --k1 and --b")


def parse_json_output(stdout, cmd):
    try:
        return json.loads(stdout)
    except json.JSONDecodeError:
        # Tolerate log lines before the JSON document: take the last line that parses.
        for line in reversed(stdout.strip().splitlines()):
            if line.lstrip().startswith("{"):
                try:
                    return json.loads(line)
                except json.JSONDecodeError:
                    pass
    sys.exit(f"error: `{' '.join(cmd)}` printed no JSON document:\n{stdout[:2000]}")


def resolve_wikidex(path_arg):
    if path_arg is None:  # default: the repo's release build (honouring CARGO_TARGET_DIR)
        target = Path(os.environ.get("CARGO_TARGET_DIR") or REPO_ROOT / "target")
        path = (target if target.is_absolute() else REPO_ROOT / target) / "release" / "wikidex"
    else:
        path = Path(path_arg)
        if not path.is_absolute() and not path.exists():
            path = REPO_ROOT / path
    if not path.is_file() or not os.access(path, os.X_OK):
        sys.exit(
            f"error: wikidex binary not found at {path}\n"
            f"  build it first (e.g. `cargo build --release` in {REPO_ROOT}), pass --wikidex PATH,\n"
            f"  or run with --bm25s-only to measure bm25s alone."
        )
    return path


# ----------------------------------------------------------------------------------------------
# bm25s side
# ----------------------------------------------------------------------------------------------

def load_stopwords(choice):
    if choice == "wikidex":
        with open(WIKIDEX_STOPWORDS, encoding="utf-8") as f:
            return [w.strip() for w in f if w.strip() and not w.startswith("#")]
    return "en"  # bm25s's built-in English list


def available_backends(requested):
    if requested != "auto":
        return [requested]
    try:
        import numba  # noqa: F401
        return ["numpy", "numba"]
    except ImportError:
        return ["numpy"]


class Bm25sRunner:
    """bm25s index over one collection; `search` is the timed part (tokenize queries + top-k)."""

    def __init__(self, doc_texts, k1, b, backend, stopwords, stemmer, token_pattern,
                 distinct_query_terms=True):
        self.backend = backend
        self.distinct_query_terms = distinct_query_terms
        self.stopwords = stopwords
        self.stemmer = stemmer
        self.token_pattern = token_pattern
        corpus_tokens = bm25s.tokenize(doc_texts, stopwords=stopwords, stemmer=stemmer,
                                       token_pattern=token_pattern, show_progress=False)
        self.retriever = bm25s.BM25(method="lucene", k1=k1, b=b, backend=backend)
        self.retriever.index(corpus_tokens, show_progress=False)
        self.num_docs = len(doc_texts)

    def search(self, query_texts, k):
        tokens = bm25s.tokenize(query_texts, stopwords=self.stopwords, stemmer=self.stemmer,
                                token_pattern=self.token_pattern, return_ids=False,
                                show_progress=False)
        if self.distinct_query_terms:
            tokens = [list(dict.fromkeys(q)) for q in tokens]
        return self.retriever.retrieve(tokens, k=min(k, self.num_docs), n_threads=0,
                                       backend_selection=self.backend, show_progress=False)


def best_time(fn, repeats):
    """Warm up once, then the best wall time of `repeats` runs. Returns (seconds, last result).

    The garbage collector is paused while timing, as `timeit` does.
    """
    result = fn()
    best = float("inf")
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeats):
            t0 = time.perf_counter()
            result = fn()
            best = min(best, time.perf_counter() - t0)
    finally:
        if gc_was_enabled:
            gc.enable()
    return best, result


class Bm25sSide:
    """bm25s with each backend's index built once, timed in as many rounds as the caller asks
    (interleaved with wikidex's rounds, so both tools are sampled across the same stretches of a
    shared machine's load); each backend keeps its best time."""

    def __init__(self, coll, k1, b, backends, stopwords, stemmer, token_pattern, distinct):
        self.coll = coll
        self.runners = {backend: Bm25sRunner(coll[1], k1, b, backend, stopwords, stemmer,
                                             token_pattern, distinct)
                        for backend in backends}
        self.best = {backend: float("inf") for backend in backends}
        self.results = {}

    def time_round(self, repeats):
        q_texts = self.coll[3]
        for backend, runner in self.runners.items():
            seconds, result = best_time(lambda: runner.search(q_texts, DEPTH), repeats)
            self.best[backend] = min(self.best[backend], seconds)
            self.results[backend] = result

    def report(self):
        doc_ids, _, q_ids, _, qrels = self.coll
        per_backend = {}
        for backend, (docs, scores) in self.results.items():
            # Keep only documents that match at least one query term (score > 0): bm25s always
            # returns k documents, padding with arbitrary zero-score ones.
            runs = {qid: [doc_ids[d] for d, s in zip(docs[i], scores[i]) if s > 0]
                    for i, qid in enumerate(q_ids)}
            seconds = self.best[backend]
            per_backend[backend] = {
                "backend": backend,
                "queries": len(q_ids),
                "query_seconds": seconds,
                "qps": len(q_ids) / seconds,
                "ms_per_query": 1000.0 * seconds / len(q_ids),
                **evaluate(runs, qrels),
            }
        best = dict(min(per_backend.values(), key=lambda r: r["query_seconds"]))
        best["all_backends_qps"] = {name: r["qps"] for name, r in per_backend.items()}
        return best


# ----------------------------------------------------------------------------------------------
# Driver
# ----------------------------------------------------------------------------------------------

def versions():
    out = {"python": sys.version.split()[0]}
    for dist in ("bm25s", "PyStemmer", "numpy", "scipy", "numba"):
        try:
            out[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            pass
    return out


def fmt_row(cells, widths):
    return "  ".join(str(c).ljust(w) if i < 3 else str(c).rjust(w)
                     for i, (c, w) in enumerate(zip(cells, widths)))


def print_table(report):
    v = report["versions"]
    s = report["settings"]
    print(f"bm25s {v.get('bm25s')}, PyStemmer {v.get('PyStemmer')}, numpy {v.get('numpy')}, "
          f"numba {v.get('numba', 'not installed')}, python {v['python']}")
    print(f"stopwords={s['stopwords']}  token_pattern={s['token_pattern']!r}  "
          f"query_terms={s['query_terms']}  depth={DEPTH}  "
          f"single thread, best of {s['repeats']}")
    header = ["collection", "tool", "backend", "k1", "b", "queries", "qps", "ms/query",
              "MAP", "nDCG@10", "R@100"]
    widths = [11, 8, 8, 5, 5, 7, 10, 9, 7, 7, 7]
    print()
    print(fmt_row(header, widths))
    print(fmt_row(["-" * w for w in widths], widths))
    for name, res in report["collections"].items():
        for tool in ("wikidex", "bm25s"):
            r = res.get(tool)
            if r is None:
                continue
            print(fmt_row([name, tool, r.get("backend", "-"), res["k1"], res["b"], r["queries"],
                           f"{r['qps']:.1f}", f"{r['ms_per_query']:.3f}", f"{r['map']:.4f}",
                           f"{r['ndcg@10']:.4f}", f"{r['recall@100']:.4f}"], widths))
        if "qps_ratio" in res:
            print(f"{'':11}  qps ratio wikidex/bm25s({res['bm25s']['backend']}): "
                  f"{res['qps_ratio']:.2f}x")
        others = res["bm25s"]["all_backends_qps"]
        if len(others) > 1:
            print(f"{'':11}  bm25s qps by backend: "
                  + ", ".join(f"{k} {q:.1f}" for k, q in others.items()))
        for w in res.get("warnings", []):
            print(f"{'':11}  warning: {w}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("collections", nargs="*", default=DEFAULT_COLLECTIONS,
                    help="BEIR collection directories (default: %(default)s)")
    ap.add_argument("--wikidex", metavar="PATH",
                    help="wikidex binary; a relative PATH is tried from the cwd, then the repo "
                         f"root (default: <repo>/{DEFAULT_WIKIDEX}, or "
                         "$CARGO_TARGET_DIR/release/wikidex)")
    ap.add_argument("--k1", type=float, help="BM25 k1 for both tools (default: wikidex's)")
    ap.add_argument("--b", type=float, help="BM25 b for both tools (default: wikidex's)")
    ap.add_argument("--repeats", type=int, default=3, help="timed runs, best kept (default 3)")
    ap.add_argument("--rounds", type=int, default=3,
                    help="alternate the two tools this many times, best round kept (default 3)")
    ap.add_argument("--backend", choices=["auto", "numpy", "numba"], default="auto",
                    help="bm25s backend; auto times every installed one and keeps the faster")
    ap.add_argument("--stopwords", choices=["wikidex", "bm25s-en"], default="wikidex",
                    help="wikidex = core/src/text/stopwords_en.txt (default); "
                         "bm25s-en = bm25s's built-in English list")
    ap.add_argument("--token-pattern", default=WIKIDEX_TOKEN_PATTERN,
                    help="bm25s word regex (default: %(default)s, wikidex's word splitting; "
                         r"bm25s's own default is (?u)\b\w\w+\b)")
    ap.add_argument("--query-terms", choices=["distinct", "repeated"], default="repeated",
                    help="repeated = a query term counts once per occurrence, bm25s's own "
                         "behaviour and wikidex's weighting (default); distinct = once")
    ap.add_argument("--wikidex-chunking", action="store_true",
                    help="keep wikidex's default chunking (documents split into overlapping "
                         "chunks) instead of one chunk per document as bm25s indexes them")
    ap.add_argument("--bm25s-only", action="store_true",
                    help="measure bm25s alone (no wikidex binary needed; k1/b default to "
                         f"{FALLBACK_K1}/{FALLBACK_B})")
    ap.add_argument("--json", action="store_true", help="print one JSON document instead of a table")
    args = ap.parse_args()

    logging.getLogger("bm25s").setLevel(logging.ERROR)
    binary = None if args.bm25s_only else resolve_wikidex(args.wikidex)
    stopwords = load_stopwords(args.stopwords)
    stemmer = Stemmer.Stemmer("english")
    backends = available_backends(args.backend)

    report = {
        "versions": versions(),
        "settings": {"stopwords": args.stopwords, "token_pattern": args.token_pattern,
                     "query_terms": args.query_terms,
                     "depth": DEPTH, "repeats": args.repeats, "rounds": args.rounds,
                     "bm25_method": "lucene",
                     "stemmer": "PyStemmer english"},
        "collections": {},
    }
    for path in args.collections:
        path = Path(path)
        if not (path / "corpus.jsonl").is_file():
            sys.exit(f"error: {path} is not a BEIR collection (no corpus.jsonl)")
        coll = load_collection(path)
        name = path.name
        res, warnings = {}, []
        k1, b = args.k1, args.b
        wx = None
        if binary is not None:
            wx = run_wikidex(binary, path, k1, b, not args.wikidex_chunking, args.repeats)
            # wikidex's effective settings decide bm25s's, so both run the same k1/b.
            k1, b = wikidex_bm25_params(wx.pop("config"))
            if (args.k1 is not None and not math.isclose(k1, args.k1, rel_tol=1e-6)) or \
               (args.b is not None and not math.isclose(b, args.b, rel_tol=1e-6)):
                sys.exit(f"error: wikidex ran with k1={k1} b={b}, not the requested "
                         f"k1={args.k1} b={args.b}")
            if not args.wikidex_chunking and wx["chunks"] not in (None, wx["documents"]):
                warnings.append(f"wikidex split {wx['documents']} documents into {wx['chunks']} "
                                "chunks (some exceed the largest chunk size)")
            if wx["queries"] != len(coll[2]):
                warnings.append(f"wikidex evaluated {wx['queries']} queries, this script "
                                f"{len(coll[2])}")
        k1 = FALLBACK_K1 if k1 is None else k1
        b = FALLBACK_B if b is None else b
        bm = Bm25sSide(coll, k1, b, backends, stopwords, stemmer, args.token_pattern,
                       args.query_terms == "distinct")
        # Alternate the tools round by round; each keeps its best round.
        for round_no in range(args.rounds):
            if round_no > 0 and binary is not None:
                again = run_wikidex(binary, path, args.k1, args.b, not args.wikidex_chunking,
                                    args.repeats)
                if again["query_seconds"] < wx["query_seconds"]:
                    for key in ("query_seconds", "qps", "ms_per_query"):
                        wx[key] = again[key]
            bm.time_round(args.repeats)
        if wx is not None:
            res["wikidex"] = wx
        res["bm25s"] = bm.report()
        if "wikidex" in res:
            res["qps_ratio"] = res["wikidex"]["qps"] / res["bm25s"]["qps"]
        res["k1"], res["b"] = k1, b
        if warnings:
            res["warnings"] = warnings
        report["collections"][name] = res

    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print_table(report)


if __name__ == "__main__":
    main()
