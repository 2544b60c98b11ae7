"""The cross-language vectors (tests/vectors/*.json) run through the Python API.

Rust writes the expectations; this file only reads them. Each case is one call of the
binding, projected the way core/tests/it/vectors.rs projects it, with offsets sliced as
Python slices its strings (code points).
"""

import json
import math
from pathlib import Path

import pytest

import wikidex

VECTORS = Path(__file__).resolve().parents[2] / "tests" / "vectors"
FILES = sorted(VECTORS.glob("*.json"))
TOLERANCE = 1e-5


def load(path):
    return json.loads(path.read_text(encoding="utf-8"))


def build(vector):
    index = wikidex.Index.build(vector["files"], vector.get("config"))
    v = vector.get("vectors")
    if v:
        index.set_vectors(v["model_id"], v["fingerprint"], v["values"], v.get("encoding", "f32"))
    return index


def error(e):
    return {"error": e.code, "details": e.details}


def project_search(index, r):
    def hit(h):
        v = {"page_id": h.page_id, "chunk": h.chunk, "score": h.score}
        for lane in h.lanes:
            if lane.get("rank") is not None:
                v[f"{lane.lane}_rank"] = lane.rank
        s = h.get("snippet")
        if s is not None:
            v["snippet"] = s.text
            v["highlighted"] = [s.text[m.start : m.end] for m in s.highlights]
            body = index.page_record(h.page_id).body
            first = s.text.split(" ")[0]
            v["at_offset"] = body[s.offset : min(s.offset + len(first), len(body))]
        e = h.get("explain")
        if e is not None:
            v["explain"] = [{"term": t.term, "tf": t.tf, "df": t.df, "score": t.score} for t in e.lexical]
        return v

    out = {
        "terms": list(r.terms),
        "truncated": r.truncated,
        "lanes": {l.lane: l.status["status"] if isinstance(l.status, wikidex.Record) else l.status for l in r.lanes},
        "hits": [hit(h) for h in r.hits],
        "always": [hit(h) for h in r.always],
    }
    if r.get("facets") is not None:
        out["facets"] = r.facets.to_dict()
    if r.get("phrases") is not None:
        out["phrases"] = r.phrases.to_dict()
    return out


def project_verification(index, answer, v):
    def quoted_in_chunk(c):
        q = c.get("quote")
        if q is None:
            return None
        return index.chunk(c.id).text[q.chunk_start : q.chunk_end]

    return {
        "passed": v.passed,
        "citations": [
            {
                "id": c.id,
                "status": c.status,
                "quoted": None if c.get("quote") is None else answer[c.quote.answer_start : c.quote.answer_end],
                "quoted_in_chunk": quoted_in_chunk(c),
            }
            for c in v.citations
        ],
    }


def project_support(answer, s):
    def rows(v):
        return [{"text": r.text, "at_span": answer[r.start : r.end], "best_chunk": r.best_chunk} for r in v]

    return {"uncited": rows(s.uncited), "unsupported": rows(s.unsupported)}


def cited(case):
    out = []
    for c in case["cited"]:
        out.append(c["id"] + ("@" + c["hash"] if c.get("hash") else ""))
    return out


def run_case(index, case):
    op = case["op"]
    try:
        if op == "build_report":
            r = index.build_report()
            return {
                "pages": r.pages,
                "chunks": r.chunks,
                "skipped": [{"path": s.path, "code": s.code, "line": s.line} for s in r.skipped],
            }
        if op == "search":
            return project_search(index, search(index, case["query"], case.get("options", {})))
        if op == "page_record":
            p = index.page_record(case["key"], case.get("scope"))
            return {
                "id": p.id,
                "title": p.title,
                "summary": p.summary,
                "scope": p.scope,
                "tags": list(p.tags),
                "type": p.type,
                "refs": list(p.refs),
                "links": list(p.links),
                "usage_mode": p.usage_mode,
                "extra": p.extra.to_dict(),
                "body": p.body,
                "chunks": [{"id": c.id, "hash": c.hash, "text": p.body[c.start : c.end]} for c in p.chunks],
                "resolved_from": p.resolved_from,
            }
        if op == "call_tool":
            r = index.call_tool(case["tool"], case["args"])
            return {"text": r["text"], "data": r["data"]}
        if op == "chunk":
            c = index.chunk(case["id"])
            return {
                "id": c.id,
                "hash": c.hash,
                "text": c.text,
                "raw": c.raw,
                "lines": [c.line_start, c.line_end],
                "headings": list(c.headings),
                "table_header": c.table_header,
            }
        if op == "from_bytes":
            data = bytearray(index.to_bytes())
            m = case["mutate"]
            if "truncate" in m:
                del data[m["truncate"] :]
            if "flip" in m:
                data[m["flip"]] ^= 0xFF
            if "version" in m:
                data[8:12] = int(m["version"]).to_bytes(4, "little")
            if "append" in m:
                data.extend(bytes(m["append"]))
            if "replace_utf8" in m:
                data = bytearray(m["replace_utf8"].encode())
            return {"pages": wikidex.Index.from_bytes(bytes(data))._native.page_count()}
        if op == "lint":
            r = index.lint()
            return {
                "errors": r.errors,
                "warnings": r.warnings,
                "issues": [{"page_id": i.page_id, "code": i.code, "target": i.target, "severity": i.severity} for i in r.issues],
            }
        if op == "neighbors":
            g = index.neighbors(case["seeds"], **case.get("options", {}))
            return {
                "seeds": list(g.seeds),
                "unknown_seeds": list(g.unknown_seeds),
                "nodes": [
                    {"id": n.id, "depth": n.depth, "confidence": n.confidence, "via": n.via, "sources": [p.chunk for p in n.sources]}
                    for n in g.nodes
                ],
                "edges": [
                    {"from": e["from"], "to": e.to, "type": e.type, "confidence": e.confidence, "evidence": e.evidence, "chunk": e.chunk}
                    for e in g.edges
                ],
                "chain": list(g.chain),
                "truncated": g.truncated,
            }
        if op in ("verify", "check_answer"):
            answer = case["answer"]
            if op == "verify":
                return project_verification(index, answer, index.verify(answer, cited(case), case.get("offered", [])))
            c = index.check_answer(answer, cited(case), case.get("offered", []))
            return {
                "verification": project_verification(index, answer, c.verification),
                "support": project_support(answer, c.support),
            }
        if op == "uncited_support":
            return project_support(case["answer"], index.uncited_support(case["answer"]))
        if op == "parse_headers":
            return [h.to_dict() for h in wikidex.parse_headers(case["text"])]
        if op == "pointers":
            return [{"chunk": p.chunk, "weight": p.weight} for p in index.pointers(case["key"], case.get("scope"))]
        if op in ("upsert_page", "delete_page", "rename_page"):
            copy = index.copy()
            before = copy.to_bytes()
            try:
                if op == "upsert_page":
                    r = copy.upsert_page(case["path"], case["text"], **case.get("options", {}))
                    v = {"page_id": r.page_id, "replaced": r.replaced, "chunks": r.chunks, "dangling": list(r.dangling)}
                elif op == "delete_page":
                    r = copy.delete_page(case["key"], case.get("scope"))
                    v = {"page": page_id(r.page), "broken": list(r.broken)}
                else:
                    r = copy.rename_page(case["key"], case["new_key"], case.get("scope"))
                    v = {"from": r["from"], "to": r.to, "path": r.path, "text": r.text}
            except wikidex.WikidexError as e:
                v = error(e)
            v["unchanged"] = copy.to_bytes() == before
            return v
        raise AssertionError(f"unknown vector op {op!r}")
    except wikidex.WikidexError as e:
        return error(e)


def page_id(page):
    scope = page.scope
    return page.key if scope == "global" else f"{scope}/{page.key}"


def search(index, query, options):
    kw = dict(options)
    return index.search(query, **kw)


def same(a, b):
    if isinstance(a, bool) or isinstance(b, bool):
        return a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return abs(a - b) <= TOLERANCE * max(abs(a), abs(b), 1e-12)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return a == b


CASES = [(path, i) for path in FILES for i in range(len(load(path)["cases"]))]
BUILT = {}


def index_for(path):
    if path not in BUILT:
        BUILT[path] = build(load(path))
    return BUILT[path]


@pytest.mark.parametrize("path,i", CASES, ids=[f"{p.stem}-{i}" for p, i in CASES])
def test_vector_case(path, i):
    case = load(path)["cases"][i]
    actual = json.loads(json.dumps(run_case(index_for(path), case)))
    assert same(case["expect"], actual), f"{case['name']}\nexpected {json.dumps(case['expect'])}\nactual   {json.dumps(actual)}"


def test_every_vector_file_and_op_is_run():
    ops = {c["op"] for p in FILES for c in load(p)["cases"]}
    assert len(FILES) >= 10
    assert {"search", "page_record", "verify", "check_answer", "lint", "neighbors", "from_bytes"} <= ops
