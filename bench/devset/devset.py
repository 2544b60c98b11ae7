#!/usr/bin/env python3
"""The development set (bench/devset/README.md): two real projects' docs as one wiki, 64
queries in four kinds, nDCG@10 and MAP per kind, lane and model.

    python3 bench/devset/devset.py [--bin target/release/wikidex] [--out target/devset]
                                   [--model all-MiniLM-L6-v2] [--model multilingual-e5-small]
                                   [--json FILE] [-- EXTRA EVAL FLAGS]

1. scripts/docs-project.sh fetches each project's PyPI sdist (pinned, sha256 checked; cached
   in target/docs-projects) and unpacks its Markdown docs.
2. Each Markdown file is a document of one BEIR collection (`_id`: the project's name and the
   file's path, `/` as `--`, without `.md`; `title`: the frontmatter's `title` or the first heading, `text`: the file
   without its frontmatter), written into OUT/all with every query, and into OUT/<kind> with
   that kind's queries (the corpus linked).
3. For each model in models/ (`make models`): `wikidex build --beir` once, then `wikidex eval
   --index` on every kind's folder (lexical, semantic, token alone, then fused). Flags after
   `--` go to both (e.g. `-- --chunk-tokens 128`).
"""

import argparse
import json
import os
import posixpath
import re
import shutil
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
PROJECTS = ["python-markdown", "pymdown-extensions"]
KINDS = ["keyword", "conceptual", "syntax", "language"]


def docs_folder(name: str, out: Path) -> Path:
    """The project's Markdown folder, as scripts/docs-project.sh prints it (`docs=...`)."""
    r = subprocess.run([str(ROOT / "scripts" / "docs-project.sh"), name, str(ROOT / "target" / "docs-projects" / name)],
                       check=True, capture_output=True, text=True)
    for line in r.stdout.splitlines():
        if line.startswith("docs="):
            return Path(line[len("docs="):])
    sys.exit(f"devset.py: scripts/docs-project.sh {name} printed no docs= line:\n{r.stdout}")


FRONTMATTER = re.compile(r"\A---\n(.*?)\n---\n", re.S)


LINK = re.compile(r"(\]\(\s*<?|^\s{0,3}\[[^\]]+\]:\s*<?)([^()\s<>#?]+\.md)(?=[#?)>\s]|$)", re.M)


def resolve_links(text: str, project: str, root: Path, path: Path, ids: set) -> str:
    """`text` with each relative link to a Markdown file of the project (inline or a reference
    definition) pointing at that file's `_id`, as a wiki's link to a page key does, so the
    pages link as they do in the project's docs (a link to no document stays as written)."""
    def swap(m: re.Match) -> str:
        dest = posixpath.normpath(posixpath.join(path.parent.relative_to(root).as_posix(), m.group(2)))
        target = doc_id(f"{project}/{dest}")
        return m.group(1) + f"{target}.md" if target in ids else m.group(0)
    return LINK.sub(swap, text)


def document(project: str, root: Path, path: Path) -> dict:
    text = path.read_text(encoding="utf-8")
    title = None
    m = FRONTMATTER.match(text)
    if m:
        t = re.search(r"^title:\s*(.+)$", m.group(1), re.M)
        title = t.group(1).strip().strip("'\"") if t else None
        text = text[m.end():]
    if not title:
        h = re.search(r"^#\s+(.+)$", text, re.M)
        title = h.group(1).strip() if h else path.stem
    return {"_id": doc_id(f"{project}/{path.relative_to(root).as_posix()}"), "title": title, "text": text}


def doc_id(path: str) -> str:
    """A judged path as a BEIR `_id` the page keys keep as it is: `python-markdown/cli.md` is
    `python-markdown--cli` (a key has no `/` or `.`)."""
    return path.removesuffix(".md").replace("/", "--").replace(".", "-")


def judgments() -> dict:
    """{query: (kind, {path: grade})} from queries.tsv."""
    out: dict = {}
    lines = (HERE / "queries.tsv").read_text(encoding="utf-8").splitlines()
    for line in lines[1:]:
        query, kind, path, grade = line.split("\t")
        if kind not in KINDS:
            sys.exit(f"devset.py: queries.tsv: kind {kind!r} (known: {', '.join(KINDS)})")
        out.setdefault(query, (kind, {}))[1][path] = int(grade)
    return out


def write_collection(folder: Path, corpus: Path, queries: dict) -> None:
    (folder / "qrels").mkdir(parents=True, exist_ok=True)
    link = folder / "corpus.jsonl"
    if link != corpus:
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(os.path.relpath(corpus, folder))
    with open(folder / "queries.jsonl", "w", encoding="utf-8") as q, open(folder / "qrels" / "test.tsv", "w", encoding="utf-8") as r:
        r.write("query-id\tcorpus-id\tscore\n")
        for i, (text, (_, judged)) in enumerate(queries.items(), 1):
            q.write(json.dumps({"_id": f"q{i}", "text": text}, ensure_ascii=False) + "\n")
            for path, grade in judged.items():
                r.write(f"q{i}\t{doc_id(path)}\t{grade}\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=str(ROOT / "target" / "release" / "wikidex"))
    ap.add_argument("--out", default=str(ROOT / "target" / "devset"))
    ap.add_argument("--model", action="append", dest="models")
    ap.add_argument("--json", dest="json_file")
    ap.add_argument("--links", action="store_true",
                    help="build the pages as a wiki folder whose links to other docs point at their ids, so the pages link (the graph)")
    ap.add_argument("extra", nargs="*", help="flags for wikidex build and eval (after --)")
    a = ap.parse_args()
    out = Path(a.out)
    models = a.models or ["all-MiniLM-L6-v2", "multilingual-e5-small"]
    queries = judgments()

    docs, sources = [], []
    for name in PROJECTS:
        root = docs_folder(name, out)
        for path in sorted(root.rglob("*.md")):
            docs.append(document(name, root, path))
            sources.append((name, root, path))
    ids = {d["_id"] for d in docs}
    if a.links:
        for d, (name, root, path) in zip(docs, sources):
            d["text"] = resolve_links(d["text"], name, root, path, ids)
    for text, (_, judged) in queries.items():
        for path in judged:
            if doc_id(path) not in ids:
                sys.exit(f"devset.py: queries.tsv judges {path} for {text!r}: no such document")
    every = out / "all"
    if every.exists():
        shutil.rmtree(every)
    every.mkdir(parents=True)
    corpus = every / "corpus.jsonl"
    with open(corpus, "w", encoding="utf-8") as f:
        for d in docs:
            f.write(json.dumps(d, ensure_ascii=False) + "\n")
    write_collection(every, corpus, queries)
    wiki = out / "wiki"
    if a.links:
        # A BEIR corpus has no links: the pages are written as a wiki, one file per `_id`.
        if wiki.exists():
            shutil.rmtree(wiki)
        wiki.mkdir()
        for d in docs:
            (wiki / f"{d['_id']}.md").write_text(f"---\ntitle: {json.dumps(d['title'], ensure_ascii=False)}\n---\n{d['text']}", encoding="utf-8")
    for kind in KINDS:
        write_collection(out / kind, corpus, {q: v for q, v in queries.items() if v[0] == kind})
    print(f"devset: {len(docs)} documents, {len(queries)} queries -> {out}", file=sys.stderr)

    report: dict = {"documents": len(docs), "queries": len(queries), "links": a.links, "extra": a.extra, "runs": {}}
    for model in models:
        folder = ROOT / "models" / model
        if not (folder / "tokenizer.json").is_file():
            print(f"devset: model {model} not in models/ (make models): skipped", file=sys.stderr)
            continue
        blob = out / f"{model}.wdx"
        source = [str(wiki)] if a.links else [str(every), "--beir"]
        subprocess.run([a.bin, "build", *source, "-o", str(blob), "--model", str(folder), *a.extra],
                       check=True, stdout=subprocess.DEVNULL)
        for kind in ["all", *KINDS]:
            r = subprocess.run([a.bin, "eval", str(out / kind), "--index", str(blob), "--model", str(folder), "--json"],
                               check=True, capture_output=True, text=True)
            report["runs"].setdefault(model, {})[kind] = json.loads(r.stdout)["runs"]
            print(f"devset: {model} {kind}", file=sys.stderr)
    if a.json_file:
        Path(a.json_file).write_text(json.dumps(report, indent=2) + "\n")
    for model, kinds in report["runs"].items():
        counts = defaultdict(int)
        for kind, _ in queries.values():
            counts[kind] += 1
        print(f"\n{model}: nDCG@10 (MAP)\n")
        lanes = ["lexical", "semantic", "token", "fused"]
        print("| queries | " + " | ".join(lanes) + " |")
        print("|---|" + "---:|" * len(lanes))
        for kind in ["all", *KINDS]:
            runs = kinds[kind]
            n = len(queries) if kind == "all" else counts[kind]
            cells = [f"{runs[l]['ndcg@10']:.3f} ({runs[l]['map']:.3f})" if l in runs else "–" for l in lanes]
            print(f"| {kind} ({n}) | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
