"""The Python API beyond the vectors: errors by code, bad arguments, threads, pickling, the
agent tools and progress (the docs' examples run in test_docs.py)."""

import collections.abc
import math
import os
import pickle
import re
import signal
import stat
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

import wikidex

ROOT = Path(__file__).resolve().parents[2]
WIKI = ROOT / "examples" / "wiki"


@pytest.fixture(scope="module")
def example():
    return wikidex.Index.build(WIKI)


def small():
    return wikidex.Index.build(
        {
            "global/oncall.md": "---\ntitle: On-call\ntags: [ops]\n---\nPage the on-call engineer for any outage of the nightly pipeline.",
            "global/revenue.md": "---\ntitle: Revenue\ntags: [finance]\n---\nRevenue is recognized monthly, see [[oncall]].",
        }
    )


def test_build_from_a_folder_matches_the_cli_top_hits(example):
    r = example.search("who do I page for an outage", limit=3, always="separate")
    assert [h.page_id for h in r.hits][:1] == ["runbook_oncall"]
    assert r.always and r.always[0].page_id == "rule_pii_handling"
    assert example.build_report().pages == 42


def test_records_are_frozen_and_convert_to_dicts(example):
    r = example.search("revenue", limit=2)
    with pytest.raises(AttributeError):
        r.query = "x"
    d = r.to_dict()
    assert isinstance(d["hits"], list) and isinstance(d["hits"][0], dict)
    assert "SearchResults(query='revenue'" in repr(r)
    page = example.page_record("revenue")
    assert page["title"] == page.title
    assert page.body[page.chunks[0].start : page.chunks[0].end].strip()


def test_search_records_are_made_when_read_from_the_index_as_it_was_searched():
    index = small()
    r = index.search("outage pipeline", always="first")
    unread = index.search("outage pipeline", always="first")
    # The results read after a write show the index they searched.
    index.upsert_page("global/oncall.md", "---\ntitle: Gone\n---\nNothing here.")
    assert index.search("outage pipeline").hits == ()
    first = r.hits[0]
    assert first.page_id == "oncall" and first.title == "On-call" and "outage" in first.snippet.text
    assert unread == r and unread.to_dict() == r.to_dict()
    again = pickle.loads(pickle.dumps(r))
    assert type(again) is wikidex.SearchResults and again == r and repr(again) == repr(r)


def test_hits_read_before_the_rest_of_the_results_are_the_ones_the_results_hold():
    index = small()
    both = {}
    for first in ["hits", "head"]:
        r = index.search("outage pipeline revenue", always="separate")
        if first == "hits":
            hits, always = r.hits, r.always
            assert r["hits"] is hits and r["always"] is always
        else:
            assert r.query == "outage pipeline revenue" and r.terms
            hits, always = r.hits, r.always
        assert r["hits"] is r.hits is hits and r.always is always
        assert [h.page_id for h in hits] == ["oncall", "revenue"] and always == ()
        assert sorted(r) == ["always", "facets", "hits", "lanes", "phrases", "query", "terms", "truncated"]
        both[first] = r.to_dict()
    assert both["hits"] == both["head"]
    assert both["hits"]["hits"] == [h.to_dict() for h in hits]
    # Results made from their fields (as unpickled) give the same hits.
    again = pickle.loads(pickle.dumps(r))
    assert again.hits == r.hits and again.hits is again["hits"] and again.always == ()


def test_a_hit_read_field_by_field_is_a_record_of_the_index_as_it_was_searched():
    index = small()
    hit = index.search("outage pipeline", limit=1).hits[0]
    # Read for its title first: the snippet, made later, still shows the index searched.
    assert hit.title == "On-call" and hit["page_id"] == "oncall"
    index.upsert_page("global/oncall.md", "---\ntitle: Gone\n---\nNothing here.")
    text = "the on-call engineer for any outage of the nightly pipeline."
    assert hit.snippet.text == text
    assert [text[m.start : m.end] for m in hit.snippet.highlights] == ["outage", "pipeline"]
    fields = list(hit)
    assert fields[:5] == ["key", "page_id", "scope", "path", "title"] and len(hit) == len(fields) == 20
    assert "snippet" in hit and "nope" not in hit and hit.get("nope") is None and hit.get(0) is None
    for key in ["nope", 0]:
        with pytest.raises(KeyError):
            hit[key]
    with pytest.raises(AttributeError, match="Record has no field 'nope'"):
        hit.nope
    with pytest.raises(AttributeError):
        hit.title = "x"
    assert hit.tags == ("ops",) and hit.lanes[0].lane == "lexical" and hit.lanes[0].rank == 1
    assert repr(hit).startswith("Record(key='oncall', page_id='oncall', scope='global'")
    again = pickle.loads(pickle.dumps(hit))
    assert type(again) is wikidex.Record and again == hit and again.to_dict() == hit.to_dict()
    assert hash(again) == hash(hit) and dict(hit) == {k: hit[k] for k in fields}
    # Its snippet is a record too, read by attribute or key, shown and pickled as one.
    snippet = hit.snippet
    assert isinstance(snippet, wikidex.Record) and snippet is hit["snippet"]
    assert snippet["text"] == snippet.text and snippet.offset == snippet["offset"] >= 0
    assert snippet.highlights == snippet["highlights"] and snippet.highlights[0].start >= 0
    assert list(snippet) == ["text", "highlights", "offset"] and len(snippet) == 3
    assert repr(snippet).startswith("Record(text='the on-call engineer")
    highlights = [m.to_dict() for m in snippet.highlights]
    assert snippet.to_dict() == {"text": text, "highlights": highlights, "offset": snippet.offset}
    with pytest.raises(AttributeError):
        snippet.text = "x"
    with pytest.raises(AttributeError, match="Record has no field 'nope'"):
        snippet.nope
    again = pickle.loads(pickle.dumps(snippet))
    assert type(again) is wikidex.Record and again == snippet and hash(again) == hash(snippet)


def test_search_results_render_as_an_html_table_with_marked_snippets(example):
    html = example.search("nightly job crash", limit=3)._repr_html_()
    assert html.count("<tr>") == 5  # header, the always page (its own list, shown first), 3 hits
    assert "<mark>" in html
    assert "<script" not in html


@pytest.mark.parametrize(
    "call,code,cls",
    [
        (lambda i: i.page_record("no_such_page"), "unknown_page", LookupError),
        (lambda i: i.chunk("revenue::chunk_99"), "unknown_chunk", LookupError),
        (lambda i: wikidex.Index.from_bytes(b"not an index"), "not_an_index", ValueError),
        (lambda i: wikidex.Index.from_bytes(i.to_bytes()[:40]), "corrupt_index", ValueError),
        (lambda i: i.copy().upsert_page("global/x.md", "See [[nowhere]]."), "dangling_links", ValueError),
        (lambda i: i.copy().upsert_page("global/x.md", "---\ntitle: [unclosed\n---\nx"), "invalid_page", ValueError),
        (lambda i: i.neighbors("oncall", depth=7), "invalid_argument", ValueError),
        (lambda i: i.verify("x" * (2 << 20), ["oncall::chunk_0"]), "too_large", ValueError),
        (lambda i: wikidex.Index.open("/nonexistent/index.wdx"), "io", OSError),
        (lambda i: i.search("x", lanes=["nope"]), "invalid_argument", ValueError),
        (lambda i: i.search("x", scope=""), "invalid_argument", ValueError),
        (lambda i: wikidex.Index.build({"a.md": "x"}, {"bm25": {"k1": -1}}), "invalid_argument", ValueError),
        (lambda i: i.set_vectors("m", "f", [[1.0]], "f32"), "invalid_argument", ValueError),
        (lambda i: i.set_vectors("m", "f", [[math.nan], [1.0]], "f32"), "invalid_argument", ValueError),
        (lambda i: i.copy().upsert_page("raw/log.txt", "changed"), "immutable_chunk", ValueError),
    ],
)
def test_every_error_has_its_code_details_and_builtin(call, code, cls):
    index = small()
    with pytest.raises(wikidex.WikidexError) as info:
        call(index)
    e = info.value
    assert e.code == code, (e.code, e.message)
    assert isinstance(e, cls)
    assert isinstance(e.details, dict) and e.message
    again = pickle.loads(pickle.dumps(e))
    assert (type(again), again.code, again.details) == (type(e), e.code, e.details)


def test_dangling_links_details_name_the_missing_targets():
    with pytest.raises(wikidex.PageError) as info:
        small().upsert_page("global/x.md", "See [[nowhere]] and [[oncall]].")
    assert info.value.details["missing"] == ["nowhere"]


@pytest.mark.parametrize(
    "kwargs,exc",
    [
        ({"limit": "ten"}, wikidex.InvalidArgumentError),
        ({"limit": -1}, wikidex.InvalidArgumentError),
        ({"limit": float("nan")}, wikidex.InvalidArgumentError),
        ({"tags": [1, 2]}, TypeError),
        ({"scope": 3}, wikidex.InvalidArgumentError),
        ({"always": "sometimes"}, wikidex.InvalidArgumentError),
    ],
)
def test_bad_search_arguments_are_errors_not_crashes(kwargs, exc):
    with pytest.raises(exc):
        small().search("outage", **kwargs)


def test_a_non_finite_query_vector_is_an_invalid_argument():
    index = small()
    index.set_vectors("m", "f", np.eye(index._native.chunk_count(), 2, dtype=np.float32))
    for bad in ([math.nan, 1.0], np.array([1.0, math.inf], dtype=np.float32), [1e39, 0.0]):
        with pytest.raises(wikidex.InvalidArgumentError):
            index.search("outage", query_vector=bad)


def test_bad_argument_types_raise_type_errors():
    index = small()
    for call in (
        lambda: index.search(None),
        lambda: index.search(42),
        lambda: index.page_record(None),
        lambda: index.chunk(3),
        lambda: wikidex.Index.build(42),
        lambda: wikidex.Index.build({"a.md": 3}),
        lambda: index.prompt_block({"hits": []}),
        lambda: index.verify("answer", [1]),
    ):
        with pytest.raises(TypeError):
            call()


def test_a_huge_limit_is_capped_not_an_error():
    r = small().search("outage", limit=10**9)
    assert len(r.hits) <= 100


def test_eight_threads_search_alike_while_a_page_is_written(example):
    # A write changes the corpus statistics every global search sees, so each answer must be
    # exactly the one of the snapshot before or after some write: never a mix of the two.
    index = example.copy()
    queries = ["nightly job crash", "who do I page", "PII in exports", "revenue definition"] * 6
    texts = ["Scratch notes about lunch menus.", "Scratch notes: the nightly job crash, again."]
    answers = []
    for text in texts:
        index.upsert_page("user/bob/scratch.md", text)
        answers.append({q: index.search(q, limit=5).to_dict() for q in set(queries)})
    assert answers[0] != answers[1]
    stop = threading.Event()
    writes = []

    def writer():
        n = 0
        while not stop.is_set():
            index.upsert_page("user/bob/scratch.md", texts[n % 2])
            n += 1
        writes.append(n)

    w = threading.Thread(target=writer)
    w.start()
    try:
        with ThreadPoolExecutor(8) as pool:
            got = list(pool.map(lambda q: (q, index.search(q, limit=5).to_dict()), queries * 4))
    finally:
        stop.set()
        w.join()
    assert writes[0] > 0
    for q, result in got:
        assert result in (answers[0][q], answers[1][q]), q


def test_pickle_round_trip_keeps_the_answers(example):
    again = pickle.loads(pickle.dumps(example))
    assert again.to_bytes() == example.to_bytes()
    assert again.search("outage").to_dict() == example.search("outage").to_dict()


def test_the_blob_is_format_1_and_loads_back_with_the_same_answers(example):
    blob = example.to_bytes()
    assert blob[:8] == b"WIKIDEX\0"
    assert int.from_bytes(blob[8:12], "little") == 1
    again = wikidex.Index.from_bytes(blob)
    for q in ["who do I page for an outage", "nightly job crash", "PII in exports", "revenue"]:
        assert again.search(q, limit=5).to_dict() == example.search(q, limit=5).to_dict(), q
    assert again.to_bytes() == blob


def test_save_writes_the_blob(example, tmp_path):
    path = tmp_path / "wiki.wdx"
    example.save(path)
    assert path.read_bytes() == example.to_bytes()
    assert wikidex.Index.open(path).search("outage").to_dict() == example.search("outage").to_dict()
    example.save(str(path))
    assert path.read_bytes() == example.to_bytes()
    with pytest.raises(wikidex.WikidexIOError) as info:
        example.save(tmp_path / "no_such_dir" / "wiki.wdx")
    assert info.value.code == "io"


def test_bad_arguments_to_the_blob_writers_raise_type_errors(example):
    for call in (
        lambda: example.save(42),
        lambda: example.save(None),
        lambda: example.save("/tmp/wiki.wdx", True),  # save takes the path alone
        lambda: example.to_bytes("x"),
        lambda: example._native.save(42),
    ):
        with pytest.raises(TypeError):
            call()


def test_progress_is_reported_per_stage():
    seen = []
    wikidex.Index.build(WIKI, progress=lambda stage, done, total: seen.append((stage, done, total)))
    assert seen[-1] == ("pages", 42, 42)
    with pytest.raises(TypeError):
        wikidex.Index.build(WIKI, progress="yes")


def test_an_exception_in_progress_stops_the_build_and_is_raised():
    seen = []

    def progress(stage, done, total):
        seen.append(done)
        if done == 3:
            raise ValueError("stop here")

    with pytest.raises(ValueError, match="stop here"):
        wikidex.Index.build(WIKI, progress=progress)
    assert seen == [1, 2, 3]


def test_ctrl_c_during_a_build_raises_keyboard_interrupt():
    # What the notebook's stop button and Ctrl-C do: SIGINT while the build runs (here raised
    # from the progress callback, so the moment is the same in every run).
    # Python installs its KeyboardInterrupt handler only where SIGINT was not ignored at start
    # (a background job of a non-interactive shell starts with it ignored, as some CI runners
    # do): install it here, so the test does not depend on how `make test` was started.
    def progress(stage, done, total):
        if done == 2:
            signal.raise_signal(signal.SIGINT)

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            wikidex.Index.build(WIKI, progress=progress)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert wikidex.Index.build(WIKI).search("outage").hits


def test_the_agent_tools_answer_with_headers_and_mark_fabricated_ids(example):
    names = [t["name"] for t in example.tools()]
    assert names == ["search", "read_pages", "read_chunks", "neighbors", "verify"]
    r = example.call_tool("search", {"query": "who do I page for an outage", "limit": 2})
    assert re.search(r"\[page runbook_oncall · chunk runbook_oncall::chunk_0 · score [0-9.]+\]", r["text"])
    r = example.call_tool("read_chunks", {"ids": ["runbook_oncall::chunk_0", "made_up::chunk_3"]})
    assert r["data"]["unknown"] == ["made_up::chunk_3"]
    with pytest.raises(wikidex.InvalidArgumentError):
        example.call_tool("search", {"query": 1})
    index = example.copy()
    index.set_tool_limits(max_drilldowns=1)
    index.call_tool("read_pages", {"keys": ["revenue"]})
    with pytest.raises(wikidex.WikidexError) as info:
        index.call_tool("read_pages", {"keys": ["revenue"]})
    assert info.value.code == "too_large"
    index.reset_turn()
    index.call_tool("read_pages", {"keys": ["revenue"]})


def test_offsets_index_python_strings():
    index = wikidex.Index.build({"global/cafe.md": "---\ntitle: Café\n---\nLe café crème 天気 est servi. Coffee is served hot."})
    h = index.search("coffee").hits[0]
    s = h.snippet
    assert [s.text[m.start : m.end].lower() for m in s.highlights] == ["coffee"]
    body = index.page_record("cafe").body
    assert body[s.offset :].startswith(s.text.split(" ")[0])


def test_a_partial_config_takes_the_defaults_for_the_rest():
    index = wikidex.Index.build(
        {"global/a.md": "word " * 600}, {"chunk": {"max_tokens": 4096, "overlap_tokens": 0}}
    )
    assert index.build_report().chunks == 1


def test_rank_gives_the_search_order_without_records(example):
    for q in ["nightly job crash", "who do I page", "PII in exports"]:
        ranked = example.rank(q, limit=5)
        hits = example.search(q, limit=5, always="separate").hits
        assert [p for p, _ in ranked] == [h.page_id for h in hits]
        assert [round(s, 5) for _, s in ranked] == [round(h.score, 5) for h in hits]


def test_rank_returns_a_read_only_sequence_of_tuples(example):
    ranked = example.rank("nightly job crash", limit=5)
    as_list = [(h.page_id, h.score) for h in example.search("nightly job crash", limit=5, always="separate").hits]
    assert isinstance(ranked, wikidex.Ranking) and isinstance(ranked, collections.abc.Sequence)
    assert len(ranked) == len(as_list) > 1
    assert ranked[0][0] == as_list[0][0] and ranked[-1][0] == as_list[-1][0]
    assert [p for p, _ in ranked[1:3]] == [p for p, _ in as_list[1:3]]
    assert ranked[::-1] == list(reversed(ranked.to_list()))
    assert ranked.ids == [p for p, _ in as_list]
    assert ranked.scores.dtype == np.float32 and ranked.scores.shape == (len(as_list),)
    assert ranked == ranked.to_list() == list(ranked) and ranked == example.rank("nightly job crash", limit=5)
    assert ranked != ranked.to_list()[:-1] and ranked != "not a ranking"
    assert pickle.loads(pickle.dumps(ranked)) == ranked.to_list()
    assert repr(ranked).startswith("Ranking([('")
    for bad in (len(ranked), -len(ranked) - 1):
        with pytest.raises(IndexError):
            ranked[bad]
    with pytest.raises(TypeError):
        ranked["first"]
    with pytest.raises(TypeError):
        ranked[0] = ("x", 1.0)


def test_rank_many_answers_each_query_as_rank_does(example):
    queries = ["nightly job crash", "who do I page", "PII in exports", "xqzvbnm", ""]
    one_by_one = [example.rank(q, limit=7, lanes=["lexical", "token"]) for q in queries]
    assert any(len(r) > 1 for r in one_by_one) and len(one_by_one[3]) == 0
    for threads in (None, 1, 2, 3, 100):
        many = example.rank_many(queries, limit=7, lanes=["lexical", "token"], threads=threads)
        assert many == one_by_one
        assert all(isinstance(r, wikidex.Ranking) for r in many)
    assert example.rank_many(tuple(queries[:2]), tags="ops") == [example.rank(q, tags="ops") for q in queries[:2]]
    assert example.rank_many([]) == []
    with pytest.raises(wikidex.InvalidArgumentError) as e:
        example.rank_many(queries, threads=0)
    assert e.value.code == "invalid_argument"
    for bad in ("one string", [1, 2], None):
        with pytest.raises(TypeError):
            example.rank_many(bad)
    with pytest.raises(TypeError):
        example.rank_many(queries, threads="two")


def test_the_query_log_records_searches_and_verdicts(tmp_path):
    index = small()
    seen = []
    index.set_query_log(seen.append)
    index.search("outage", tags=["ops"])
    index.search("xqzvbnm")
    index.verify("Revenue is recognized monthly.", ["revenue::chunk_0", "made_up::chunk_0"])
    assert [e["kind"] for e in seen] == ["search", "search", "verify"]
    assert seen[0]["origin"] == "python" and seen[0]["filters"]["tags"] == ["ops"]
    assert seen[1]["results"] == 0
    assert [v["status"] for v in seen[2]["verdicts"]] == ["paraphrase", "unknown"]
    index.set_query_log(None)
    index.search("outage")
    assert len(seen) == 3
    log = tmp_path / "q.jsonl"
    index.set_query_log(log, origin="notebook")
    index.search("outage")
    index.set_query_log(None)  # closes the file
    lines = log.read_text().splitlines()
    assert len(lines) == 1 and '"origin":"notebook"' in lines[0]


def test_rank_names_the_pages_of_the_snapshot_it_ranked_after_writes():
    index = small()
    assert [p for p, _ in index.rank("outage")] == ["oncall"]
    index.rename_page("oncall", "on_call")
    assert [p for p, _ in index.rank("outage")] == ["on_call"]
    index.upsert_page("global/outage_log.md", "---\ntitle: Outage log\n---\nEvery outage, listed.")
    assert sorted(p for p, _ in index.rank("outage")) == ["on_call", "outage_log"]
    index.delete_page("outage_log")
    assert [p for p, _ in index.rank("outage")] == ["on_call"]


def test_rank_takes_the_same_options_as_lists_or_strings():
    index = small()
    assert index.rank("outage", lanes="lexical") == index.rank("outage", lanes=["lexical"])
    assert index.rank("revenue", tags=["finance"]) == index.rank("revenue", tags="finance")
    assert index.rank("outage", tags="finance") == []
    with pytest.raises(TypeError):
        index.rank(42)
    with pytest.raises(TypeError):
        index.rank("outage", tags=[1])
    with pytest.raises(wikidex.InvalidArgumentError):
        index.rank("outage", lanes="nope")


# ---- issue 26: hardening, round two ----


def test_from_bytes_takes_bytes_like_objects_only():
    with pytest.raises(TypeError):
        wikidex.Index.from_bytes(10**9)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        wikidex.Index.from_bytes("WIKIDEX")  # type: ignore[arg-type]
    blob = small().to_bytes()
    for data in (blob, bytearray(blob), memoryview(blob)):
        assert wikidex.Index.from_bytes(data).search("outage").hits


def test_a_large_foreign_buffer_is_refused_on_its_header_before_a_copy():
    # 256 MiB of zeros: refused after its first bytes, never copied (the old path copied it
    # twice before looking).
    junk = bytearray(256 << 20)
    with pytest.raises(wikidex.IndexFormatError) as refused:
        wikidex.Index.from_bytes(junk)
    assert refused.value.code == "not_an_index"
    newer = bytearray(small().to_bytes())
    newer[8:12] = (999).to_bytes(4, "little")
    with pytest.raises(wikidex.IndexFormatError) as refused:
        wikidex.Index.from_bytes(memoryview(newer))
    assert refused.value.code == "incompatible_format"


def test_unknown_option_keys_are_refused_with_the_nearest_known_one():
    with pytest.raises(wikidex.InvalidArgumentError, match=r"unknown key `langauge`.*did you mean `language`"):
        wikidex.Index.build({"global/a.md": "alpha"}, config={"langauge": "german"})
    with pytest.raises(wikidex.InvalidArgumentError, match="unknown key `k`"):
        wikidex.Index.build({"global/a.md": "alpha"}, config={"bm25": {"k": 1.0}})


def test_a_limit_of_zero_is_refused_as_on_every_surface():
    with pytest.raises(wikidex.InvalidArgumentError, match="limit must be at least 1"):
        small().search("outage", limit=0)
    assert len(small().search("outage", limit=1).hits) == 1


def test_a_fifo_or_a_device_is_refused_as_a_blob_without_blocking(tmp_path):
    fifo = tmp_path / "blob.fifo"
    os.mkfifo(fifo)
    for path in (fifo, "/dev/zero"):
        with pytest.raises(wikidex.InvalidArgumentError, match="not a regular file"):
            wikidex.Index.open(path)
        with pytest.raises(wikidex.InvalidArgumentError, match="not a regular file"):
            small().save(path)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_sync_builds_then_reads_only_what_changed_and_never_replaces_a_page(tmp_path):
    wiki = tmp_path / "wiki" / "global"
    wiki.mkdir(parents=True)
    (wiki / "a.md").write_text("Alpha pages the on-call engineer.")
    (wiki / "b.md").write_text("Beta is about revenue.")
    blob = tmp_path / "wiki.wdx"
    index, first = wikidex.Index.sync(tmp_path / "wiki", blob)
    assert first.full and first.written and sorted(first.added) == ["global/a.md", "global/b.md"]
    assert blob.exists() and index.search("revenue").hits[0].key == "b"
    again, second = wikidex.Index.sync(tmp_path / "wiki", blob)
    assert second.full is None and not second.written and second.unchanged == 2
    (wiki / "b.md").write_text("Beta is about churn now.")
    (wiki / "c.md").write_text("Gamma is new.")
    _, third = wikidex.Index.sync(tmp_path / "wiki", blob)
    assert (list(third.changed), list(third.added), third.unchanged) == (["global/b.md"], ["global/c.md"], 1)
    assert wikidex.Index.open(blob).search("churn").hits[0].key == "b"
    page = tmp_path / "note.md"
    page.write_text("not an index")
    with pytest.raises(wikidex.InvalidArgumentError):
        wikidex.Index.sync(tmp_path / "wiki", page)
    assert page.read_text() == "not an index"


def test_build_options_strict_and_an_unknown_vector_encoding():
    files = {"global/ok.md": "fine", "global/bad.md": "---\na: [\n---\n"}
    assert wikidex.Index.build(files).build_report().skipped[0].path == "global/bad.md"
    with pytest.raises(wikidex.PageError) as e:
        wikidex.Index.build(files, strict=True)
    assert e.value.code == "invalid_page"
    with pytest.raises(wikidex.InvalidArgumentError, match="f16"):
        wikidex.Index.build({"global/ok.md": "fine"}, vectors="f16")
