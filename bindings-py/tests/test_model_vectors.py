"""The model vector file (tests/vectors/model/minilm-int8.json) through the Python API.

Rust writes it (core/tests/it/model_vectors.rs, which says what it holds); this only reads
it: with the int8 model loaded from the file it names, every passage and query embeds
within the file's cosine tolerance of the native vectors, and the semantic lane ranks the
chunks as natively (two chunks may swap only when their native cosines are within the
file's score tolerance), as the wasm module does in Node and in Chromium.
"""

import json
import math
from pathlib import Path

import pytest

import wikidex

ROOT = Path(__file__).resolve().parents[2]
VECTOR = json.loads((ROOT / "tests" / "vectors" / "model" / "minilm-int8.json").read_text(encoding="utf-8"))
TOL = VECTOR["tolerance"]


def cosine(a, b):
    ab = sum(x * y for x, y in zip(a, b))
    return ab / math.sqrt(sum(x * x for x in a) * sum(y * y for y in b))


def ranking_differs(want, got, score):
    """None, or what differs (the rule of tests/vectors/model-runner.mjs)."""
    if len(want) != len(got):
        return f"{len(got)} hits, expected {len(want)}"
    want_score = {h["chunk"]: h["score"] for h in want}
    for i, (chunk, s) in enumerate(got):
        if chunk not in want_score:
            return f"unexpected chunk {chunk}"
        w = want_score[chunk]
        if abs(w - s) > score:
            return f"{chunk}: cosine {s}, expected {w}"
        if want[i]["chunk"] != chunk and abs(want[i]["score"] - w) > score:
            return f"rank {i + 1}: {chunk} ({w}), expected {want[i]['chunk']} ({want[i]['score']})"
    return None


@pytest.fixture(scope="module")
def model():
    path = ROOT / VECTOR["model"]
    assert path.is_file(), f"{path} is missing: run make models"
    return wikidex.Model(path.parent, onnx=path.name, max_length=VECTOR["max_length"])


@pytest.fixture(scope="module")
def index(model):
    index = wikidex.Index.build(VECTOR["files"])
    v = VECTOR["vectors"]
    index.set_vectors(v["model_id"], v["fingerprint"], v["values"], v["encoding"])
    index.attach_model(model)
    return index


def test_the_model_is_the_one_the_vectors_were_made_with(model):
    assert model.fingerprint == VECTOR["vectors"]["fingerprint"]
    assert model.dim == len(VECTOR["vectors"]["values"][0])


def test_every_passage_embeds_as_natively(model, index):
    passages = index.passages()
    assert passages == [p["text"] for p in VECTOR["passages"]]
    got = model.embed(passages, "passage")
    for p, v in zip(VECTOR["passages"], got):
        assert cosine(p["vector"], v.tolist()) >= TOL["cosine"]


@pytest.mark.parametrize("case", VECTOR["cases"], ids=[c["name"] for c in VECTOR["cases"]])
def test_each_query_embeds_and_ranks_as_natively(model, index, case):
    qv = model.embed([case["query"]], "query")[0].tolist()
    assert cosine(case["expect"]["query_vector"], qv) >= TOL["cosine"]
    r = index.search(case["query"], lanes=["semantic"], chunks=True, limit=100, snippets=False)
    got = [(h.chunk, next(l.score for l in h.lanes if l.lane == "semantic")) for h in r.hits]
    assert ranking_differs(case["expect"]["hits"], got, TOL["score"]) is None, got


def test_the_ranking_check_can_fail():
    want = [{"chunk": "a", "score": 0.9}, {"chunk": "b", "score": 0.5}]
    assert ranking_differs(want, [("b", 0.5), ("a", 0.9)], 0.002) is not None
    assert ranking_differs(want, [("a", 0.8), ("b", 0.5)], 0.002) is not None
    assert ranking_differs(want, [("a", 0.9), ("b", 0.5)], 0.002) is None
