"""A linked wiki from a BEIR corpus.jsonl, so writes meet a graph like a real wiki's.

Page i is document i, with `refs` to 3 pages and 5 `[[links]]` put into its text at random
places (a fixed seed). Usage: linked-wiki.py CORPUS.jsonl OUT_DIR PAGES; then
`wikidex build OUT_DIR --no-embed`. See docs/benchmarks/speed.md.
"""

import json
import os
import random
import sys


def main(corpus: str, out: str, pages: int) -> None:
    rng = random.Random(7)
    os.makedirs(f"{out}/global", exist_ok=True)
    with open(corpus) as f:
        for i, line in enumerate(f):
            if i >= pages:
                break
            doc = json.loads(line)
            words = doc["text"].split()
            refs = ", ".join(f"p{rng.randrange(pages)}" for _ in range(3))
            for _ in range(5):
                words.insert(rng.randrange(len(words) + 1), f"[[p{rng.randrange(pages)}]]")
            title = (doc.get("title") or f"Page {i}").replace(":", " ").replace("\n", " ")
            with open(f"{out}/global/p{i}.md", "w") as page:
                page.write(f"---\ntitle: {json.dumps(title)}\nrefs: [{refs}]\n---\n\n")
                page.write(" ".join(words) + "\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
