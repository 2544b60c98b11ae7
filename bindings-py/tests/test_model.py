"""The ONNX sentence model in Python (`wikidex.Model`): embedding to numpy, building with it,
attaching it to a loaded index, query vectors as numpy arrays, and its errors by code.

Runs on the real all-MiniLM-L6-v2 that `make models` puts in models/ (`make test` fetches it
first, so in CI it is there)."""

import pickle
import shutil
from pathlib import Path

import numpy as np
import pytest

import wikidex

ROOT = Path(__file__).resolve().parents[2]
WIKI = ROOT / "examples" / "wiki"
MODEL = ROOT / "models" / "all-MiniLM-L6-v2"

pytestmark = pytest.mark.skipif(
    not (MODEL / "model.onnx").is_file(),
    reason=f"no model at {MODEL}: run `make models` (scripts/fetch-model.sh) to fetch it",
)

QUERY = "who should I call when production is down"


@pytest.fixture(scope="module")
def model():
    return wikidex.Model(MODEL)


@pytest.fixture(scope="module")
def built(model):
    stages = []
    index = wikidex.Index.build(WIKI, model=model, progress=lambda s, d, t: stages.append((s, d, t)))
    return index, stages


def test_a_model_loads_with_its_id_dimension_and_input_length(model):
    assert model.id == "all-MiniLM-L6-v2"
    assert model.dim == 384
    assert model.max_length == 256  # max_seq_length of sentence_bert_config.json
    assert model.fingerprint.startswith("blake3:")
    assert "all-MiniLM-L6-v2" in repr(model)
    assert wikidex.Model(MODEL, max_length=64, threads=1).max_length == 64


def test_embed_gives_a_float32_array_of_unit_rows(model):
    v = model.embed(["who do I page for an outage", "call the on-call engineer", "revenue is recognized monthly"])
    assert isinstance(v, np.ndarray) and v.dtype == np.float32 and v.shape == (3, 384)
    assert v.flags["C_CONTIGUOUS"] and v.flags["WRITEABLE"]
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    sims = v @ v.T
    assert sims[0, 1] > sims[0, 2]  # paging for an outage is nearer on-call than revenue
    assert model.embed([]).shape == (0, 384)


def test_embedding_is_deterministic_and_independent_of_the_batch(model):
    one = model.embed([QUERY])[0]
    many = model.embed(["something else entirely", QUERY, "x"])[1]
    np.testing.assert_allclose(one, many, atol=1e-5)


def test_embed_takes_a_sequence_of_strings(model):
    with pytest.raises(TypeError):
        model.embed("a single string")
    with pytest.raises(TypeError):
        model.embed([1, 2])


def test_a_build_with_a_model_embeds_every_chunk_and_reports_the_stage(built):
    index, stages = built
    chunks = index._native.chunk_count()
    embedded = [(d, t) for s, d, t in stages if s == "embeddings"]
    assert [s for s, _, _ in stages][0] == "pages"
    assert embedded and embedded[-1] == (chunks, chunks)
    r = index.search(QUERY, limit=5)
    assert {l.lane: l.status for l in r.lanes}["semantic"] == "ok"
    assert any(lh.lane == "semantic" for h in r.hits for lh in h.lanes)


def test_the_semantic_lane_finds_a_page_by_meaning(built):
    index, _ = built
    hits = index.search(QUERY, lanes="semantic", limit=3).hits
    assert "runbook_oncall" in [h.page_id for h in hits]


def test_a_numpy_query_vector_ranks_as_the_attached_model_does(built, model):
    index, _ = built
    vector = model.embed([QUERY])[0]
    by_model = index.search(QUERY, lanes="semantic", limit=10).to_dict()["hits"]
    by_vector = index.search(QUERY, lanes="semantic", limit=10, query_vector=vector).to_dict()["hits"]
    assert by_model == by_vector
    assert index.rank(QUERY, lanes="semantic", query_vector=vector) == index.rank(QUERY, lanes="semantic")
    # A list of floats is taken too.
    assert index.rank(QUERY, lanes="semantic", query_vector=vector.tolist()) == index.rank(QUERY, lanes="semantic")


@pytest.mark.parametrize(
    "bad",
    [
        np.zeros((1, 384), dtype=np.float32),  # 2-D
        np.zeros(384, dtype=np.float64),  # dtype
        np.zeros(10, dtype=np.float32),  # length
        np.full(384, np.nan, dtype=np.float32),  # not finite
        np.zeros(768, dtype=np.float32)[::2],  # not contiguous
    ],
)
def test_bad_query_vectors_are_invalid_arguments(built, bad):
    index, _ = built
    with pytest.raises(wikidex.InvalidArgumentError) as info:
        index.search(QUERY, query_vector=bad)
    assert info.value.code == "invalid_argument"


def test_a_loaded_index_needs_its_model_attached_for_text_queries(built, model, tmp_path):
    index, _ = built
    path = tmp_path / "wiki.wdx"
    index.save(path)
    loaded = wikidex.Index.open(path)
    statuses = {l.lane: l.status for l in loaded.search(QUERY).lanes}
    assert statuses["semantic"] == "skipped"
    loaded.attach_model(model)
    assert loaded.search(QUERY).to_dict() == index.search(QUERY).to_dict()
    # pickling goes through the blob: the model is not carried
    again = pickle.loads(pickle.dumps(index))
    assert {l.lane: l.status for l in again.search(QUERY).lanes}["semantic"] == "skipped"


def test_attaching_another_model_is_a_model_mismatch(built):
    index, _ = built
    other = wikidex.Model(MODEL, onnx="model-int8.onnx")
    assert other.id == "all-MiniLM-L6-v2/model-int8" and other.fingerprint != index_fingerprint(index)
    with pytest.raises(wikidex.ModelError) as info:
        index.copy().attach_model(other)
    assert info.value.code == "model_mismatch"
    assert info.value.details


def index_fingerprint(index):
    return wikidex.Model(MODEL).fingerprint


def test_a_write_with_new_text_and_no_model_is_no_embedder(built):
    index, _ = built
    loaded = wikidex.Index.from_bytes(index.to_bytes())
    with pytest.raises(wikidex.ModelError) as info:
        loaded.upsert_page("global/new_page.md", "# New page\nA page whose text no vector was made from.")
    assert info.value.code == "no_embedder"


def test_a_write_with_the_model_attached_embeds_the_new_chunks(built, model):
    index = built[0].copy()
    index.attach_model(model)
    index.upsert_page("global/pager_duty.md", "# Pager duty\nWhen production is down, ring the duty phone.")
    hits = index.search(QUERY, lanes="semantic", limit=3).hits
    assert "pager_duty" in [h.page_id for h in hits]


def test_a_model_folder_that_is_not_a_model_is_a_model_error(tmp_path):
    (tmp_path / "model.onnx").write_bytes(b"not an onnx model")
    shutil.copy(MODEL / "tokenizer.json", tmp_path / "tokenizer.json")
    with pytest.raises(wikidex.ModelError) as info:
        wikidex.Model(tmp_path)
    assert info.value.code == "model"
    with pytest.raises(wikidex.WikidexIOError) as info:
        wikidex.Model(tmp_path / "missing")
    assert info.value.code == "io"
    with pytest.raises(wikidex.InvalidArgumentError):
        wikidex.Model(MODEL, threads=0)


def test_build_refuses_a_model_that_is_not_one():
    with pytest.raises(TypeError):
        wikidex.Index.build({"a.md": "x"}, model="models/all-MiniLM-L6-v2")
