#!/usr/bin/env python3
"""Side-by-side benchmark: wikidex's ONNX embedder (tract) vs onnxruntime on the same model.

Both tools embed every document of a BEIR corpus (CACM by default; text = title + " " + text,
as bench/compare_bm25s.py indexes it) with the same ONNX file and tokenizer.json and the same
settings:

  * tokenization  the `tokenizers` package on the model folder's tokenizer.json, truncation at
                  --max-length tokens ([CLS] and [SEP] or <s> and </s> included; default: the
                  folder's sentence_bert_config.json max_seq_length, as wikidex and
                  sentence-transformers take it: 256 for all-MiniLM-L6-v2, 512 for
                  multilingual-e5-small), no padding from the file (all-MiniLM-L6-v2's
                  tokenizer.json asks for truncation and padding at 128: both are overridden,
                  as sentence-transformers does); no prompt on either side (e5's "passage: " is
                  the index's business, not the model runner's);
  * batching      texts sorted by token length (stable), cut into --batch-size batches, each
                  padded to its longest sequence;
  * model         inputs input_ids, attention_mask and token_type_ids (zeros) as int64;
                  output last_hidden_state, mean-pooled over the attention mask, L2-normalised;
  * threads       --threads: onnxruntime intra_op_num_threads=N, inter_op_num_threads=1,
                  sequential execution, and N rayon threads for the tokenizer
                  (RAYON_NUM_THREADS); wikidex `embed --threads N`.

Timed: tokenizing + embedding + pooling the whole corpus, wall clock, model load excluded. Each
round loads a fresh onnxruntime session (outside the timer) so that, like a wikidex process,
each timed pass includes the first-batch warm-up. The tools alternate for --rounds rounds (so
both are sampled across the same stretches of a shared machine's load) and each keeps its best
round. The result is sequences per second of each and the ratio wikidex / onnxruntime.

wikidex is run as
    wikidex embed --model DIR --onnx FILE --corpus CORPUS --batch-size B --threads N
                  --max-length L --json
and must print one JSON object {"sequences": N, "tokens": T, "seconds": S}; N and T are checked
against this script's own counts (the same tokenization gives the same T).

Before timing, the ONNX file's embeddings of the sentences in
core/tests/fixtures/embed/reference.json (sentence-transformers' own output) are computed with
onnxruntime and compared by cosine; the run stops if the lowest is under --min-cosine or the
tokenizer's ids differ from the reference's. The reference is all-MiniLM-L6-v2's: for another
model folder (multilingual-e5-small, checked against its own C engine by
bindings-py/tests/test_e5.py) the same sentences are embedded by onnxruntime and by
`wikidex embed` on the same file instead, and the run stops if those two disagree (lowest
cosine under --min-cosine), since then the two tools would not be computing the same thing.

Usage (from the repo root):
    scripts/fetch-model.sh                               # models/all-MiniLM-L6-v2/
    PY=$(scripts/py-env.sh bench/requirements-embed.txt)
    cargo build --release                                # builds target/release/wikidex
    "$PY" bench/compare_onnxruntime.py                   # fp32 model.onnx on CACM
    "$PY" bench/compare_onnxruntime.py --onnx model-int8.onnx --json
    "$PY" bench/compare_onnxruntime.py --only ort        # no wikidex binary needed
    "$PY" bench/compare_onnxruntime.py --model models/multilingual-e5-small --onnx model-int8.onnx
"""

import os
import sys


def _early_threads():
    """--threads, read before onnxruntime / tokenizers / numpy start their thread pools."""
    for i, arg in enumerate(sys.argv):
        if arg == "--threads" and i + 1 < len(sys.argv):
            return sys.argv[i + 1]
        if arg.startswith("--threads="):
            return arg.split("=", 1)[1]
    return "2"


# numpy's BLAS is not used on the timed path; keep it single-threaded so it never competes.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
             "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS"):
    os.environ[_var] = "1"
# The tokenizers crate batches with rayon's global pool (older rayon read RAYON_RS_NUM_CPUS).
os.environ["RAYON_NUM_THREADS"] = os.environ["RAYON_RS_NUM_CPUS"] = _early_threads()
os.environ["TOKENIZERS_PARALLELISM"] = "true"

import argparse  # noqa: E402
import gc  # noqa: E402
import importlib.metadata  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import onnxruntime as ort  # noqa: E402
from tokenizers import Tokenizer  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_MODEL = REPO_ROOT / "models" / "all-MiniLM-L6-v2"
DEFAULT_CORPUS = Path("/work/shared/data/cacm")
DEFAULT_REFERENCE = REPO_ROOT / "core" / "tests" / "fixtures" / "embed" / "reference.json"


def fail(msg):
    sys.exit(f"error: {msg}")


# ----------------------------------------------------------------------------------------------
# Inputs
# ----------------------------------------------------------------------------------------------

def load_corpus_texts(corpus_dir):
    path = Path(corpus_dir) / "corpus.jsonl"
    if not path.is_file():
        fail(f"{corpus_dir} is not a BEIR collection (no corpus.jsonl)")
    texts = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                d = json.loads(line)
                texts.append((d.get("title") or "") + " " + (d.get("text") or ""))
    return texts


def resolve_onnx(model_dir, onnx_arg):
    """--onnx FILE: absolute, or relative to the cwd, or relative to the model folder."""
    if onnx_arg is None:
        path = model_dir / "model.onnx"
    else:
        path = Path(onnx_arg)
        if not path.is_absolute() and not path.exists():
            path = model_dir / path
    if not path.is_file():
        fail(f"ONNX file {path} not found (run scripts/fetch-model.sh, or pass --onnx FILE)")
    return path.resolve()


def model_max_length(model_dir):
    """The folder's sentence_bert_config.json max_seq_length (what wikidex truncates at), else
    256."""
    path = model_dir / "sentence_bert_config.json"
    if path.is_file():
        n = json.loads(path.read_text(encoding="utf-8")).get("max_seq_length")
        if isinstance(n, int) and n >= 3:
            return n
    return 256


def load_tokenizer(model_dir, max_length):
    path = model_dir / "tokenizer.json"
    if not path.is_file():
        fail(f"{path} not found (the model folder must hold the model's tokenizer.json)")
    tok = Tokenizer.from_file(str(path))
    tok.enable_truncation(max_length=max_length)  # overrides the file's own setting
    tok.no_padding()                               # each batch is padded to its longest below
    return tok


def resolve_wikidex(path_arg):
    if path_arg is None:  # default: the repo's release build (honouring CARGO_TARGET_DIR)
        target = Path(os.environ.get("CARGO_TARGET_DIR") or REPO_ROOT / "target")
        path = (target if target.is_absolute() else REPO_ROOT / target) / "release" / "wikidex"
    else:
        path = Path(path_arg)
        if not path.is_absolute() and not path.exists():
            path = REPO_ROOT / path
    if not path.is_file() or not os.access(path, os.X_OK):
        fail(f"wikidex binary not found at {path}\n"
             f"  build it first (e.g. `cargo build --release` in {REPO_ROOT}), pass --wikidex PATH,\n"
             f"  or run with --only ort to measure onnxruntime alone.")
    return path


# ----------------------------------------------------------------------------------------------
# onnxruntime side
# ----------------------------------------------------------------------------------------------

class OrtEmbedder:
    """One onnxruntime session + the tokenizer; `embed` is the timed part."""

    def __init__(self, onnx_path, tokenizer, threads, batch_size):
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self.session = ort.InferenceSession(str(onnx_path), sess_options=opts,
                                            providers=["CPUExecutionProvider"])
        self.input_names = {i.name for i in self.session.get_inputs()}
        for needed in ("input_ids", "attention_mask"):
            if needed not in self.input_names:
                fail(f"{onnx_path} has no input {needed!r} (inputs: {sorted(self.input_names)})")
        outputs = [o.name for o in self.session.get_outputs()]
        self.output = "last_hidden_state" if "last_hidden_state" in outputs else outputs[0]
        self.tokenizer = tokenizer
        self.batch_size = batch_size

    def embed(self, texts):
        """L2-normalised mean-pooled embeddings [len(texts), dim] (in input order), and the
        token count (special tokens included, after truncation)."""
        encodings = self.tokenizer.encode_batch(texts)
        ids = [e.ids for e in encodings]
        lengths = np.fromiter((len(x) for x in ids), dtype=np.int64, count=len(ids))
        order = np.argsort(lengths, kind="stable")
        out = None
        for start in range(0, len(order), self.batch_size):
            batch = order[start:start + self.batch_size]
            width = int(lengths[batch].max())
            input_ids = np.zeros((len(batch), width), dtype=np.int64)
            mask = np.zeros((len(batch), width), dtype=np.int64)
            for row, i in enumerate(batch):
                input_ids[row, :lengths[i]] = ids[i]
                mask[row, :lengths[i]] = 1
            feeds = {"input_ids": input_ids, "attention_mask": mask}
            if "token_type_ids" in self.input_names:
                feeds["token_type_ids"] = np.zeros_like(input_ids)
            hidden = self.session.run([self.output], feeds)[0]
            if hidden.ndim != 3:
                fail(f"output {self.output} has shape {hidden.shape}, expected "
                     "[batch, sequence, dim]")
            m = mask[:, :, None].astype(np.float32)
            pooled = (hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9)
            pooled /= np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
            if out is None:
                out = np.empty((len(texts), pooled.shape[1]), dtype=np.float32)
            out[batch] = pooled
        return out, int(lengths.sum())


def time_ort_round(onnx_path, tokenizer, threads, batch_size, texts):
    """Load a fresh session (untimed), then time one pass over `texts`."""
    embedder = OrtEmbedder(onnx_path, tokenizer, threads, batch_size)
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        t0 = time.perf_counter()
        emb, tokens = embedder.embed(texts)
        seconds = time.perf_counter() - t0
    finally:
        if gc_was_enabled:
            gc.enable()
    if not np.all(np.isfinite(emb)):
        fail(f"{onnx_path} produced non-finite embeddings")
    return {"sequences": len(texts), "tokens": tokens, "seconds": seconds}


def check_reference(onnx_path, tokenizer, threads, batch_size, reference_path, max_length):
    """Cosines between this ONNX file's embeddings and sentence-transformers' (reference.json)."""
    ref = json.loads(Path(reference_path).read_text(encoding="utf-8"))
    if ref.get("max_length") != max_length:
        fail(f"{reference_path} was made with max_length {ref.get('max_length')}, "
             f"not --max-length {max_length}")
    sentences = ref["sentences"]
    for s, want in zip(sentences, ref["input_ids"]):
        got = tokenizer.encode(s).ids
        if got != want:
            fail(f"tokenizer ids differ from the reference for {s[:60]!r}:\n"
                 f"  got  {got[:20]}...\n  want {want[:20]}...")
    embedder = OrtEmbedder(onnx_path, tokenizer, threads, batch_size)
    emb, _ = embedder.embed(sentences)
    want = np.asarray(ref["embeddings"], dtype=np.float64)
    return cosine_report("sentence-transformers (reference.json)", sentences, emb, want)


def cosine_report(against, sentences, got, want):
    """Lowest and mean cosine of each row of `got` to the same row of `want` (both
    L2-normalized here), the worst sentence and the largest coordinate difference."""
    def unit(v):
        return v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)

    got, want = unit(np.asarray(got, dtype=np.float64)), unit(np.asarray(want, dtype=np.float64))
    cos = (got * want).sum(axis=1)
    worst = int(np.argmin(cos))
    return {"against": against, "sentences": len(sentences),
            "min_cosine": float(cos.min()), "mean_cosine": float(cos.mean()),
            "worst_sentence": sentences[worst][:80],
            "max_abs_diff": float(np.abs(got - want).max())}


def reference_model(reference_path):
    """The model folder name the reference was made with (`all-MiniLM-L6-v2`)."""
    ref = json.loads(Path(reference_path).read_text(encoding="utf-8"))
    return str(ref.get("model", "")).rsplit("/", 1)[-1]


def check_parity(binary, model_dir, onnx_path, tokenizer, args):
    """Cosines between onnxruntime's and wikidex's embeddings of the reference sentences on
    the same ONNX file (for a model the reference was not made with)."""
    sentences = json.loads(Path(args.reference).read_text(encoding="utf-8"))["sentences"]
    embedder = OrtEmbedder(onnx_path, tokenizer, args.threads, args.batch_size)
    emb, _ = embedder.embed(sentences)
    cmd = [str(binary), "embed", "--model", str(model_dir), "--onnx", str(onnx_path),
           "--batch-size", str(args.batch_size), "--threads", str(args.threads),
           "--max-length", str(args.max_length), "--json", "--", *sentences]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        fail(f"`wikidex embed` exited with {proc.returncode}:\n{proc.stderr[-2000:]}")
    theirs = np.asarray(parse_json_output(proc.stdout, cmd[:8])["vectors"], dtype=np.float64)
    if theirs.shape != emb.shape:
        fail(f"wikidex gave vectors of shape {theirs.shape}, onnxruntime {emb.shape}")
    return cosine_report("wikidex embed (same file)", sentences, emb, theirs)


# ----------------------------------------------------------------------------------------------
# wikidex side
# ----------------------------------------------------------------------------------------------

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
    fail(f"`{' '.join(cmd)}` printed no JSON document:\n{stdout[:2000]}")


def run_wikidex(binary, model_dir, onnx_path, corpus, args):
    cmd = [str(binary), "embed", "--model", str(model_dir), "--onnx", str(onnx_path),
           "--corpus", str(corpus), "--batch-size", str(args.batch_size),
           "--threads", str(args.threads), "--max-length", str(args.max_length), "--json"]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        hint = ""
        if "unrecognized subcommand" in proc.stderr or "unexpected argument" in proc.stderr:
            hint = ("\n  this wikidex build lacks `embed` or one of its flags; rebuild it, or run "
                    "with --only ort to measure onnxruntime alone.")
        fail(f"`{' '.join(cmd)}` exited with {proc.returncode}:\n{proc.stderr[-2000:]}{hint}")
    out = parse_json_output(proc.stdout, cmd)
    for key in ("sequences", "tokens", "seconds"):
        if key not in out:
            fail(f"`{' '.join(cmd)}` printed no {key!r}: {out}")
    return {"sequences": int(out["sequences"]), "tokens": int(out["tokens"]),
            "seconds": float(out["seconds"])}


# ----------------------------------------------------------------------------------------------
# Driver
# ----------------------------------------------------------------------------------------------

def versions():
    out = {"python": sys.version.split()[0]}
    for dist in ("onnxruntime", "tokenizers", "numpy"):
        try:
            out[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            pass
    return out


def summarize(rounds):
    best = min(rounds, key=lambda r: r["seconds"])
    return {"sequences": best["sequences"], "tokens": best["tokens"], "seconds": best["seconds"],
            "sequences_per_second": best["sequences"] / best["seconds"],
            "tokens_per_second": best["tokens"] / best["seconds"],
            "round_seconds": [r["seconds"] for r in rounds]}


def print_table(report):
    v, s = report["versions"], report["settings"]
    print(f"onnxruntime {v.get('onnxruntime')}, tokenizers {v.get('tokenizers')}, "
          f"numpy {v.get('numpy')}, python {v['python']}")
    print(f"model {s['onnx']}")
    print(f"corpus {s['corpus']}: batch {s['batch_size']}, {s['threads']} threads, "
          f"max length {s['max_length']}, best of {s['rounds']} rounds")
    r = report["reference"]
    if r is None:
        print("reference check: none (no reference for this model, and --only ort runs no "
              "wikidex to compare with)")
    else:
        print(f"reference check against {r['against']}: min cosine {r['min_cosine']:.6f}, "
              f"mean {r['mean_cosine']:.6f} over {r['sentences']} sentences "
              f"(threshold {s['min_cosine']})")
    print()
    print(f"{'tool':12}  {'sequences':>9}  {'tokens':>8}  {'seconds':>8}  {'seq/s':>8}  {'tok/s':>9}")
    for tool in ("wikidex", "onnxruntime"):
        t = report.get(tool)
        if t is None:
            continue
        print(f"{tool:12}  {t['sequences']:>9}  {t['tokens']:>8}  {t['seconds']:>8.2f}  "
              f"{t['sequences_per_second']:>8.1f}  {t['tokens_per_second']:>9.0f}")
    if "ratio" in report:
        print(f"seq/s ratio wikidex/onnxruntime: {report['ratio']:.2f}x")
    for w in report.get("warnings", []):
        print(f"warning: {w}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", type=Path, default=DEFAULT_MODEL,
                    help="model folder with tokenizer.json and model.onnx (default: %(default)s)")
    ap.add_argument("--onnx", metavar="FILE",
                    help="ONNX file: absolute, relative to the cwd, or relative to --model "
                         "(default: <model>/model.onnx), e.g. model-int8.onnx")
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS,
                    help="BEIR collection directory (default: %(default)s)")
    ap.add_argument("--batch-size", type=int, default=32, help="default: %(default)s")
    ap.add_argument("--threads", type=int, default=2, help="default: %(default)s")
    ap.add_argument("--max-length", type=int,
                    help="truncation length in tokens (default: the model folder's "
                         "max_seq_length, else 256)")
    ap.add_argument("--rounds", type=int, default=3,
                    help="alternate the two tools this many times, best round kept (default 3)")
    ap.add_argument("--only", choices=["ort", "wikidex"],
                    help="run one side only (ort needs no wikidex binary)")
    ap.add_argument("--wikidex", metavar="PATH",
                    help="wikidex binary (default: <repo>/target/release/wikidex, or "
                         "$CARGO_TARGET_DIR/release/wikidex)")
    ap.add_argument("--reference", type=Path, default=DEFAULT_REFERENCE,
                    help="sentence-transformers reference embeddings (default: %(default)s); "
                         "for another model only its sentences are used, to compare "
                         "onnxruntime with wikidex")
    ap.add_argument("--min-cosine", type=float, default=0.995,
                    help="lowest accepted cosine against the reference (default %(default)s; "
                         "fp32 exports reach 0.9999)")
    ap.add_argument("--check-only", action="store_true",
                    help="run the reference check, print it, and stop")
    ap.add_argument("--json", action="store_true", help="print one JSON document instead of a table")
    args = ap.parse_args()
    model_dir = args.model.resolve()
    if args.max_length is None:
        args.max_length = model_max_length(model_dir)
    if args.batch_size < 1 or args.threads < 1 or args.rounds < 1 or args.max_length < 3:
        fail("--batch-size, --threads and --rounds must be >= 1, --max-length >= 3")

    onnx_path = resolve_onnx(model_dir, args.onnx)
    tokenizer = load_tokenizer(model_dir, args.max_length)

    if reference_model(args.reference) == model_dir.name:
        binary = None if args.only == "ort" or args.check_only else resolve_wikidex(args.wikidex)
        reference = check_reference(onnx_path, tokenizer, args.threads, args.batch_size,
                                    args.reference, args.max_length)
    else:  # no reference for this model: wikidex and onnxruntime must agree with each other
        binary = None if args.only == "ort" else resolve_wikidex(args.wikidex)
        reference = None if binary is None else check_parity(binary, model_dir, onnx_path,
                                                             tokenizer, args)
    report = {
        "versions": versions(),
        "settings": {"onnx": str(onnx_path), "model": str(model_dir), "corpus": str(args.corpus),
                     "batch_size": args.batch_size, "threads": args.threads,
                     "max_length": args.max_length, "rounds": args.rounds,
                     "min_cosine": args.min_cosine},
        "reference": reference,
    }
    if reference is not None and reference["min_cosine"] < args.min_cosine:
        print(json.dumps(report, indent=2), file=sys.stderr)
        fail(f"{onnx_path.name}: min cosine {reference['min_cosine']:.6f} against "
             f"{reference['against']} is under --min-cosine {args.min_cosine}")
    if args.check_only:
        if reference is None:
            fail(f"no reference for {model_dir.name}: --check-only compares onnxruntime with "
                 "wikidex, so it needs the wikidex binary (drop --only ort)")
        print(json.dumps(report, indent=2) if args.json else
              f"{onnx_path}: min cosine {reference['min_cosine']:.6f} against "
              f"{reference['against']}, mean {reference['mean_cosine']:.6f} "
              f"({reference['sentences']} sentences)")
        return

    texts = load_corpus_texts(args.corpus)
    ort_rounds, wx_rounds = [], []
    for _ in range(args.rounds):
        if args.only != "ort":
            wx_rounds.append(run_wikidex(binary, model_dir, onnx_path, args.corpus, args))
        if args.only != "wikidex":
            ort_rounds.append(time_ort_round(onnx_path, tokenizer, args.threads,
                                             args.batch_size, texts))
        print(f"round {len(ort_rounds or wx_rounds)}/{args.rounds}: "
              + ", ".join(f"{name} {rs[-1]['seconds']:.2f} s"
                          for name, rs in (("wikidex", wx_rounds), ("onnxruntime", ort_rounds))
                          if rs), file=sys.stderr)

    warnings = []
    if wx_rounds:
        report["wikidex"] = summarize(wx_rounds)
    if ort_rounds:
        report["onnxruntime"] = summarize(ort_rounds)
    if wx_rounds and ort_rounds:
        wx, ox = report["wikidex"], report["onnxruntime"]
        report["ratio"] = wx["sequences_per_second"] / ox["sequences_per_second"]
        if wx["sequences"] != ox["sequences"]:
            warnings.append(f"wikidex embedded {wx['sequences']} sequences, onnxruntime "
                            f"{ox['sequences']}")
        if wx["tokens"] != ox["tokens"]:
            warnings.append(f"wikidex counted {wx['tokens']} tokens, onnxruntime {ox['tokens']} "
                            "(tokenization or truncation differs)")
    if warnings:
        report["warnings"] = warnings

    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print_table(report)


if __name__ == "__main__":
    main()
