"""Times `wikidex.Model.embed` over a BEIR collection's documents (title and text), as an
index build embeds them, in whatever wikidex is importable (the dev binding, or another build
on PYTHONPATH, to compare two versions alternately).

    python bench/embed_cacm.py ../shared/data/cacm --model models/all-MiniLM-L6-v2 --rounds 3
"""

import argparse
import json
import time
from pathlib import Path

import wikidex


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("collection", type=Path, help="a BEIR folder holding corpus.jsonl")
    ap.add_argument("--model", type=Path, default=Path("models/all-MiniLM-L6-v2"))
    ap.add_argument("--rounds", type=int, default=1)
    args = ap.parse_args()
    model = wikidex.Model(args.model)
    with open(args.collection / "corpus.jsonl") as f:
        docs = [json.loads(line) for line in f]
    texts = [f"{d.get('title', '')}\n{d['text']}" for d in docs]
    model.embed(texts[:64])  # warm up: the plan's buffers, the allocator
    for r in range(args.rounds):
        start = time.perf_counter()
        model.embed(texts)
        print(f"round {r + 1}: {len(texts)} texts in {time.perf_counter() - start:.2f} s", flush=True)


if __name__ == "__main__":
    main()
