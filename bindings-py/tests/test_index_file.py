"""`wikidex.IndexFile`: an index file searched in parts answers as the whole index does,
reads only part of the file for it, and refuses what `Index.open` refuses."""

from pathlib import Path

import numpy as np
import pytest

import wikidex

ROOT = Path(__file__).resolve().parents[2]
WIKI = ROOT / "examples" / "wiki"
MODEL = ROOT / "models" / "all-MiniLM-L6-v2"

QUERIES = ["who do I page for an outage", "nightly job crash", "PII in exports", "revenu", "zzzz", ""]
OPTIONS = [
    {},
    {"limit": 3, "explain": True, "facets": True},
    {"chunks": True, "snippets": False},
    {"lanes": "token", "typos": False},
    {"tags": "ops", "always": "first"},
    {"scope": "global"},
]


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    path = tmp_path_factory.mktemp("file") / "wiki.wdx"
    index = wikidex.Index.build(WIKI)
    index.save(path)
    return wikidex.Index.open(path), path


@pytest.mark.parametrize("opts", OPTIONS, ids=lambda o: ",".join(o) or "default")
def test_a_search_of_the_file_answers_as_the_whole_index(saved, opts):
    whole, path = saved
    file = wikidex.IndexFile.open(path)
    for q in QUERIES:
        assert file.search(q, **opts).to_dict() == whole.search(q, **opts).to_dict(), q


def test_a_first_search_reads_part_of_the_file_and_pages_come_as_the_whole_index_gives_them(saved):
    whole, path = saved
    file = wikidex.IndexFile.open(path)
    head, length = file.loaded
    assert length == path.stat().st_size and 0 < head < length
    hits = file.search("outage", limit=1).hits
    read, _ = file.loaded
    assert head < read < length, "the query's parts and its hit's page, not the whole file"
    key = hits[0].key
    assert file.page_record(key).to_dict() == whole.page_record(key).to_dict()
    for chunk in ["raw/slack_2024_03_12::chunk_0", hits[0].chunk]:
        assert wikidex.IndexFile.open(path).chunk(chunk).to_dict() == whole.chunk(chunk).to_dict()
    assert repr(file) == f"IndexFile({file.loaded[0]} of {length} bytes read)"


def test_what_open_refuses_the_file_refuses(tmp_path, saved):
    with pytest.raises(wikidex.WikidexIOError) as info:
        wikidex.IndexFile.open(tmp_path / "missing.wdx")
    assert info.value.code == "io"
    note = tmp_path / "note.md"
    note.write_text("# not an index\n")
    with pytest.raises(wikidex.IndexFormatError) as info:
        wikidex.IndexFile.open(note)
    assert info.value.code == "not_an_index"
    _, path = saved
    cut = tmp_path / "cut.wdx"
    cut.write_bytes(path.read_bytes()[:-1])
    with pytest.raises(wikidex.IndexFormatError) as info:
        wikidex.IndexFile.open(cut)
    assert info.value.code == "corrupt_index"
    file = wikidex.IndexFile.open(path)
    with pytest.raises(wikidex.NotFoundError):
        file.page_record("no-such-page")
    with pytest.raises(wikidex.NotFoundError) as info:
        file.chunk("no-such-page::chunk_0")
    assert info.value.code == "unknown_chunk"
    with pytest.raises(TypeError):
        file.search(3)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        wikidex.IndexFile(None)  # type: ignore[arg-type]


@pytest.mark.skipif(not (MODEL / "model.onnx").is_file(), reason=f"no model at {MODEL}: run `make models`")
def test_with_the_model_attached_the_semantic_lane_answers_as_the_whole_index(tmp_path):
    model = wikidex.Model(MODEL)
    path = tmp_path / "wiki.wdx"
    wikidex.Index.build(WIKI, model=model).save(path)
    whole = wikidex.Index.open(path)
    whole.attach_model(model)
    file = wikidex.IndexFile.open(path)
    query = "who should I call when production is down"
    assert {l.lane: l.status for l in file.search(query).lanes}["semantic"] == "skipped"
    file.attach_model(model)
    for lanes in [None, "semantic"]:
        assert file.search(query, lanes=lanes).to_dict() == whole.search(query, lanes=lanes).to_dict()
    vector = np.asarray(model.embed([query])[0], dtype=np.float32)
    assert (
        wikidex.IndexFile.open(path).search(query, query_vector=vector, lanes="semantic").to_dict()
        == whole.search(query, query_vector=vector, lanes="semantic").to_dict()
    )
    with pytest.raises(wikidex.ModelError) as info:
        wikidex.IndexFile.open(path).attach_model(wikidex.Model(MODEL, onnx="model-int8.onnx"))
    assert info.value.code == "model_mismatch"
