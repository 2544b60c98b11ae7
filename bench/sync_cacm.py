#!/usr/bin/env python3
"""`wikidex sync` on a real collection: CACM written as a wiki folder, synced once from
scratch (every chunk embedded), then again after one page is edited.

    python3 bench/sync_cacm.py ../shared/data/cacm [--wikidex target/release/wikidex] [--json]

Each document of the BEIR corpus becomes `pages/<_id>.md` (its title in the frontmatter, its
text as the body, as `wikidex build --beir` makes a page of it). Reports, for the full sync and
for the sync after the edit: files added, changed and unchanged, chunks embedded, seconds
(wall clock, model load included), and the ratio of the two times.
"""

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def run(cmd):
    started = time.perf_counter()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return json.loads(out.stdout), time.perf_counter() - started


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("collection", type=Path)
    ap.add_argument("--wikidex", default="target/release/wikidex")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="wikidex-sync-"))
    try:
        wiki = tmp / "wiki" / "pages"
        wiki.mkdir(parents=True)
        docs = 0
        for line in (a.collection / "corpus.jsonl").read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            d = json.loads(line)
            title = json.dumps(d.get("title") or d["_id"], ensure_ascii=False)
            (wiki / f"{d['_id']}.md").write_text(f"---\ntitle: {title}\n---\n{d['text']}\n", encoding="utf-8")
            docs += 1
        blob = tmp / "cacm.wdx"
        sync = [a.wikidex, "sync", str(tmp / "wiki"), "-o", str(blob), "--json"]
        full, full_s = run(sync)
        files = sorted(wiki.iterdir())
        edited = files[len(files) // 2]
        with edited.open("a", encoding="utf-8") as f:
            f.write("\nAn added sentence about incremental indexing of edited pages.\n")
        after, after_s = run(sync)
        result = {
            "documents": docs,
            "chunks": full["chunks"],
            "model": (full["embeddings"] or {}).get("model"),
            "full": {"added": len(full["added"]), "embedded": full["embedded"], "seconds": round(full_s, 2)},
            "after_one_edit": {
                "edited": f"pages/{edited.name}",
                "changed": after["changed"],
                "unchanged": after["unchanged"],
                "embedded": after["embedded"],
                "chunks_of_the_page": None,
                "seconds": round(after_s, 2),
            },
            "speedup": round(full_s / after_s, 1),
        }
        chunks = subprocess.run(
            [a.wikidex, "page", str(blob), edited.stem, "--json"], check=True, capture_output=True, text=True
        )
        result["after_one_edit"]["chunks_of_the_page"] = len(json.loads(chunks.stdout)["chunks"])
        if a.json:
            print(json.dumps(result, indent=2))
        else:
            f, e = result["full"], result["after_one_edit"]
            print(f"CACM as a wiki folder: {docs} pages, {result['chunks']} chunks, model {result['model']}")
            print(f"  sync from scratch:  {f['added']} files added, {f['embedded']} chunks embedded, {f['seconds']} s")
            print(
                f"  after editing {e['edited']} ({e['chunks_of_the_page']} chunks): {len(e['changed'])} changed, "
                f"{e['unchanged']} unchanged, {e['embedded']} chunks embedded, {e['seconds']} s"
            )
            print(f"  the edit's sync takes 1/{result['speedup']} of the full one")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
