"""Shards merged into one index (`Index.merge`), searched together (`ShardedIndex`), and the
sharded build on a local Ray cluster (`wikidex.distributed`): CACM in four shards gives the
single index's bytes and rankings, merged and searched together.

CACM is read from `$DATA/cacm` (default `../shared/data`, beside the repo, as `make eval`
reads it); the model is the all-MiniLM-L6-v2 that `make models` puts in models/."""

import json
import os
import pickle
from pathlib import Path

import pytest

import wikidex
from wikidex import distributed

ROOT = Path(__file__).resolve().parents[2]
WIKI = ROOT / "examples" / "wiki"
MODEL = ROOT / "models" / "all-MiniLM-L6-v2"
CACM = Path(os.environ.get("DATA", ROOT.parent / "shared" / "data")) / "cacm"


def _read_wiki() -> dict:
    return {p.relative_to(WIKI).as_posix(): p.read_text() for p in sorted(WIKI.rglob("*.md"))}


def _cacm():
    """CACM's documents as files (`<id>.md`: the title as a heading, then the text) and its
    queries."""
    if not (CACM / "corpus.jsonl").is_file():
        pytest.fail(f"no CACM at {CACM}: set DATA to the folder holding cacm/ (BEIR layout)")
    files = {}
    with open(CACM / "corpus.jsonl") as f:
        for line in f:
            doc = json.loads(line)
            files[f"{doc['_id']}.md"] = f"# {doc.get('title') or doc['_id']}\n\n{doc['text']}\n"
    with open(CACM / "queries.jsonl") as f:
        queries = [json.loads(line)["text"] for line in f]
    return files, queries


@pytest.fixture(scope="module")
def model():
    if not (MODEL / "model.onnx").is_file():
        pytest.fail(f"no model at {MODEL}: run `make models`")
    return wikidex.Model(MODEL)


@pytest.fixture(scope="module")
def ray_cluster():
    """A local Ray cluster of two workers, for this module's tests."""
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


# -- Index.merge, in process ---------------------------------------------------------------


def test_shards_merged_give_one_builds_bytes_with_their_vectors(model):
    files = _read_wiki()
    whole = wikidex.Index.build(files, model=model)
    shards = [wikidex.Index.build(dict(part), model=model) for part in distributed.deal(files, 3)]
    assert len(shards) == 3
    merged = wikidex.Index.merge(shards, model=model)
    assert merged.to_bytes() == whole.to_bytes()
    assert merged.build_report().pages == whole.build_report().pages


def test_a_merge_is_searched_with_the_model_it_was_given(model):
    files = _read_wiki()
    shards = [wikidex.Index.build(dict(part), model=model) for part in distributed.deal(files, 2)]
    merged = wikidex.Index.merge(shards, model=model)
    results = merged.search("who should I call when production is down", lanes=["semantic"])
    assert results.hits, results


def test_merge_refuses_what_is_not_an_index():
    with pytest.raises(TypeError, match="wikidex.Index"):
        wikidex.Index.merge([b"not an index"])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="model must be"):
        wikidex.Index.merge([], model="all-MiniLM-L6-v2")  # type: ignore[arg-type]


def test_a_merge_of_no_shards_is_an_empty_index():
    assert wikidex.Index.merge([], model=False).build_report().pages == 0


def test_a_model_pickles_as_its_folder_and_options(model, monkeypatch, tmp_path):
    monkeypatch.chdir(ROOT)
    data = pickle.dumps(wikidex.Model("models/all-MiniLM-L6-v2", max_length=64, threads=1))
    monkeypatch.chdir(tmp_path)  # a worker started elsewhere finds the same folder
    copy = pickle.loads(data)
    assert copy.fingerprint == model.fingerprint
    assert copy.max_length == 64
    # A process loads a folder once, however often it is unpickled.
    assert pickle.loads(pickle.dumps(copy)) is copy


def test_deal_spreads_sorted_files_in_turn_and_checks_its_input():
    parts = distributed.deal({"c.md": "3", "a.md": "1", "b.md": "2"}, 2)
    assert parts == [[("a.md", "1"), ("c.md", "3")], [("b.md", "2")]]
    assert distributed.deal([("a.md", "1")], 4) == [[("a.md", "1")]]
    with pytest.raises(ValueError, match="positive"):
        distributed.deal({}, 0)
    with pytest.raises(TypeError, match="str"):
        distributed.deal({"a.md": 1}, 2)  # type: ignore[dict-item]


def test_distributed_build_refuses_a_model_by_name():
    with pytest.raises(TypeError, match="model must be"):
        distributed.build({"a.md": "x"}, model="all-MiniLM-L6-v2")  # type: ignore[arg-type]


# -- ShardedIndex, in process --------------------------------------------------------------


def test_shards_searched_together_rank_as_one_index(model):
    files = _read_wiki()
    whole = wikidex.Index.build(files, model=model)
    shards = [wikidex.Index.build(dict(part), model=model) for part in distributed.deal(files, 3)]
    sharded = wikidex.ShardedIndex(shards, model=model)
    assert (sharded.page_count, sharded.chunk_count) == (
        whole.build_report().pages,
        whole.build_report().chunks,
    )
    queries = [
        "who should I call when production is down",
        "revenue retention",
        "nightly pipline",  # a typo
        "warehou",  # a word being typed
        '"data retention"',
        "zzqx",  # nothing known: the semantic floor decides
    ]
    for q in queries:
        for options in ({}, {"lanes": ["semantic"]}, {"chunks": True}, {"scope": "bob"}, {"tags": "pii"}):
            assert sharded.rank(q, limit=20, **options) == whole.rank(q, limit=20, **options), (q, options)
    assert sharded.rank_many(queries, limit=5) == whole.rank_many(queries, limit=5)
    # The whole answer, record for record: snippets (offsets in code points), lanes,
    # explanations, the always pages, facets and phrases.
    searched = 0
    for q in queries:
        for options in (
            {},
            {"explain": True, "facets": True},
            {"always": "first", "limit": 3},
            {"chunks": True, "lanes": ["lexical", "token"]},
            {"scope": "bob"},
            {"tags": "pii", "snippets": False},
        ):
            got = sharded.search(q, **options)
            assert got == whole.search(q, **options), (q, options)
            searched += len(got.hits)
    assert searched > 50
    assert "3 shards" in repr(sharded)
    for page_id, _ in sharded.rank("revenue retention", limit=5):
        shard = sharded.shard_of(page_id)
        assert shard is not None and shard.page(page_id).title == whole.page(page_id).title
    assert sharded.shard_of("no-such-page") is None
    # An answer's citations, verified where their chunks are: quotes of the top hits' chunks,
    # a page named by key, a chunk no shard has, and a hash the model saw that has changed.
    hits = whole.search("who should I call when production is down", limit=4).hits
    answer = " ".join(whole.chunk(h.chunk).text for h in hits[:2])
    cited = [h.chunk for h in hits[:3]] + [hits[0].page_id, "nowhere::chunk_0", hits[3].chunk + "@" + "0" * 32]
    for offered in ((), [hits[0].chunk, hits[2].chunk]):
        verified = sharded.verify(answer, cited, offered)
        assert verified == whole.verify(answer, cited, offered), offered
        checked = sharded.check_answer(answer + " Revenue is recognized monthly.", cited, offered)
        assert checked == whole.check_answer(answer + " Revenue is recognized monthly.", cited, offered)
    assert sharded.uncited_support(answer) == whole.uncited_support(answer)
    assert sharded.uncited_support(answer).uncited, "the quoted chunks support the answer"
    statuses = [v.status for v in sharded.verify(answer, cited).citations]
    assert {"quote", "none", "unknown", "drifted"} <= set(statuses), statuses
    copy = pickle.loads(pickle.dumps(sharded))
    assert copy.rank(queries[0], lanes="semantic") == sharded.rank(queries[0], lanes="semantic")
    assert copy.page_count == sharded.page_count


def test_a_sharded_index_refuses_what_cannot_be_one_wiki():
    files = _read_wiki()
    one = wikidex.Index.build(files, model=False)
    with pytest.raises(TypeError, match="wikidex.Index"):
        wikidex.ShardedIndex([b"not an index"])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="model must be"):
        wikidex.ShardedIndex([one], model="all-MiniLM-L6-v2")  # type: ignore[arg-type]
    with pytest.raises(wikidex.InvalidArgumentError, match="at least one shard"):
        wikidex.ShardedIndex([])
    with pytest.raises(wikidex.InvalidArgumentError, match="is in shard 0 and in shard 1"):
        wikidex.ShardedIndex([one, one])
    other = wikidex.Index.build({"a.md": "x"}, {"chunk": {"max_tokens": 64, "overlap_tokens": 8}}, model=False)
    with pytest.raises(wikidex.InvalidArgumentError, match="other settings"):
        wikidex.ShardedIndex([one, other])


# -- on a local Ray cluster ----------------------------------------------------------------


def _rankings(index, queries, **options):
    return [[(h.chunk, h.score) for h in index.search(q, limit=20, **options).hits] for q in queries]


def test_the_default_model_is_chosen_once_for_all_the_shards(ray_cluster, monkeypatch):
    monkeypatch.setenv("WIKIDEX_MODEL", str(MODEL))
    files = _read_wiki()
    single = wikidex.Index.build(files)
    built = distributed.build(files, shards=3)
    assert built.to_bytes() == single.to_bytes()
    assert "WIKIDEX_MODEL" in built.build_report().model_reason


def test_cacm_in_four_shards_on_ray_gives_the_single_index(ray_cluster):
    files, queries = _cacm()
    single = wikidex.Index.build(files, model=False)
    stages = []
    built = distributed.build(
        files, model=False, shards=4, progress=lambda s, d, t: stages.append((s, d, t))
    )
    assert built.to_bytes() == single.to_bytes()
    assert built.rank_many(queries, limit=100) == single.rank_many(queries, limit=100)
    assert _rankings(built, queries) == _rankings(single, queries)
    assert ("shards", 4, 4) in stages
    assert stages[-1][0] == "pages"


def test_cacm_in_four_shards_on_ray_searched_together_ranks_as_the_single_index(ray_cluster):
    files, queries = _cacm()
    single = wikidex.Index.build(files, model=False)
    stages = []
    sharded = distributed.build_sharded(
        files, model=False, shards=4, progress=lambda s, d, t: stages.append((s, d, t))
    )
    assert len(sharded.shards) == 4
    assert sharded.page_count == single.build_report().pages
    assert sharded.rank_many(queries, limit=100) == single.rank_many(queries, limit=100)
    for options in ({"lanes": "lexical"}, {"lanes": "token"}, {"chunks": True}, {"typos": False}):
        assert sharded.rank_many(queries, limit=20, **options) == single.rank_many(
            queries, limit=20, **options
        ), options
    assert stages[-1] == ("shards", 4, 4)


def test_cacm_in_four_shards_held_by_ray_actors_ranks_as_the_single_index(
    ray_cluster, tmp_path, monkeypatch
):
    files, queries = _cacm()
    single = wikidex.Index.build(files, model=False)
    sharded = distributed.build_sharded(files, model=False, shards=4)
    # Two shards sent to their actors as blobs, two opened by their actors from saved files.
    paths = []
    for i, shard in enumerate(sharded.shards[2:]):
        shard.save(tmp_path / f"shard-{i}.wdx")
        paths.append(tmp_path / f"shard-{i}.wdx")
    with distributed.serve([*sharded.shards[:2], *paths]) as remote:
        assert len(remote.actors) == 4
        assert (remote.page_count, remote.chunk_count) == (
            single.build_report().pages,
            single.build_report().chunks,
        )
        assert "4 shards" in repr(remote)
        for q in queries:
            assert remote.rank(q, limit=100) == single.rank(q, limit=100), q
        for options in ({"lanes": "lexical"}, {"lanes": "token"}, {"chunks": True}, {"typos": False}):
            for q in queries[:16]:
                assert remote.rank(q, limit=20, **options) == single.rank(q, limit=20, **options), (q, options)
        # Batches of queries: one round trip to each actor a batch, the same rankings.
        rounds = []
        ask = distributed.RemoteShardedIndex._ask

        def counted(self: distributed.RemoteShardedIndex, requests: list) -> list:
            rounds.append(len(requests))
            return ask(self, requests)

        monkeypatch.setattr(distributed.RemoteShardedIndex, "_ask", counted)
        expected = single.rank_many(queries, limit=100)
        assert remote.rank_many(queries, limit=100, batch_size=20) == expected
        assert len(rounds) == -(-len(queries) // 20)
        assert remote.rank_many(queries, limit=100) == expected
        assert remote.rank_many(queries[:16], lanes="token", scope="global") == single.rank_many(
            queries[:16], lanes="token", scope="global"
        )
        assert remote.rank_many([]) == []
        with pytest.raises(TypeError, match="not one str"):
            remote.rank_many("one query")
        with pytest.raises(ValueError, match="batch_size"):
            remote.rank_many(queries, batch_size=0)
        with pytest.raises(wikidex.InvalidArgumentError, match="limit"):
            remote.rank_many(queries, limit=0)
        # Whole answers: one round for the query, one for the records of the hits.
        rounds.clear()
        for q in queries[:8]:
            assert remote.search(q, explain=True, facets=True) == single.search(q, explain=True, facets=True), q
        assert len(rounds) == 16
        page_id = remote.rank(queries[0], limit=1).ids[0]
        assert remote.page_record(page_id)["title"] == single.page_record(page_id)["title"]
        with pytest.raises(wikidex.NotFoundError, match="no shard holds the page nowhere"):
            remote.page_record("nowhere")
        with pytest.raises(wikidex.InvalidArgumentError, match="limit"):
            remote.rank("x", limit=0)
        actors = remote.actors
    # Closed: the actors are gone, and a query says so.
    import ray

    with pytest.raises(ray.exceptions.RayActorError):
        ray.get(actors[0].summary.remote())


def test_shards_held_by_ray_actors_rank_the_example_wiki_in_every_lane(ray_cluster, model):
    files = _read_wiki()
    whole = wikidex.Index.build(files, model=model)
    shards = [wikidex.Index.build(dict(part), model=model) for part in distributed.deal(files, 3)]
    with distributed.serve(shards, model=model) as remote:
        for q in ("who should I call when production is down", "nightly pipline", '"data retention"', "zzqx"):
            for options in ({}, {"lanes": ["semantic"]}, {"scope": "bob"}, {"tags": "pii"}):
                assert remote.rank(q, limit=20, **options) == whole.rank(q, limit=20, **options), (q, options)
        asked = ["who should I call when production is down", "nightly pipline", "zzqx", ""]
        for options in ({}, {"lanes": ["semantic"]}, {"scope": "bob"}):
            assert remote.rank_many(asked, limit=20, **options) == whole.rank_many(
                asked, limit=20, **options
            ), options
        for q in asked:
            for options in ({}, {"scope": "bob", "facets": True}, {"always": "first", "explain": True}):
                assert remote.search(q, **options) == whole.search(q, **options), (q, options)
        vector = model.embed(["who should I call when production is down"])[0]
        assert remote.rank("", query_vector=vector, lanes="semantic") == whole.rank(
            "", query_vector=vector, lanes="semantic"
        )
    # Without the model, a text query does not rank semantically: the lane says why.
    with distributed.serve(shards) as remote:
        assert remote.rank("production is down", lanes="semantic").ids == []


def test_an_actor_started_again_ranks_as_before(ray_cluster):
    import ray

    files = _read_wiki()
    whole = wikidex.Index.build(files, model=False)
    shards = [wikidex.Index.build(dict(part), model=False) for part in distributed.deal(files, 2)]
    asked = ["who should I call when production is down", "nightly pipline", "data retention"]
    with distributed.serve(shards, max_restarts=1) as remote:
        expected = whole.rank_many(asked)
        assert remote.rank_many(asked) == expected
        # Its process killed: Ray starts it again, with its blob, and it is prepared again.
        ray.kill(remote.actors[1], no_restart=False)
        assert remote.rank_many(asked) == expected
        assert remote.rank(asked[0]) == expected[0]
    with pytest.raises(ValueError, match="max_restarts"):
        distributed.serve(shards, max_restarts=-2)


def test_serve_refuses_what_cannot_be_one_wiki(ray_cluster, tmp_path):
    files = _read_wiki()
    one = wikidex.Index.build(files, model=False)
    with pytest.raises(TypeError, match="Index objects or paths"):
        distributed.serve([b"not an index"])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="model must be"):
        distributed.serve([one], model="all-MiniLM-L6-v2")  # type: ignore[arg-type]
    with pytest.raises(wikidex.InvalidArgumentError, match="at least one shard"):
        distributed.serve([])
    with pytest.raises(wikidex.InvalidArgumentError, match="is in shard 0 and in shard 1"):
        distributed.serve([one, one])
    import ray

    # A path its actor cannot open fails where the actor runs.
    with pytest.raises(ray.exceptions.RayActorError):
        distributed.serve([tmp_path / "missing.wdx"])


def test_shards_built_to_be_searched_together_analyze_in_the_wikis_language(ray_cluster):
    german = (
        "Die Datenbank wird jede Nacht gesichert, und die Sicherungen werden dreißig Tage lang "
        "aufbewahrt. Wer eine Sicherung wiederherstellen muss, fragt das Betriebsteam."
    )
    english = (
        "The warehouse is backed up every night, and the backups are kept for thirty days. "
        "Whoever needs a backup restored asks the operations team on call."
    )
    # Dealt in turn by path: one shard holds only the German pages, the other the English.
    files = {"a.md": german, "b.md": english, "c.md": german + " Noch einmal.", "d.md": english + " Again."}
    alone = [wikidex.Index.build(dict(part), model=False) for part in distributed.deal(files, 2)]
    with pytest.raises(wikidex.InvalidArgumentError, match="other settings"):
        wikidex.ShardedIndex(alone)
    single = wikidex.Index.build(files, model=False)
    sharded = distributed.build_sharded(files, model=False, shards=2)
    for q in ("Sicherungen wiederherstellen", "backups restored", "nacht backup"):
        assert sharded.rank(q) == single.rank(q), q
    german_config = {"language": "german"}
    pinned = distributed.build_sharded(files, model=False, shards=2, config=german_config)
    assert pinned.rank("Sicherungen") == wikidex.Index.build(files, german_config, model=False).rank("Sicherungen")


def test_cacm_embedded_in_shards_on_ray_keeps_every_vector(ray_cluster, model):
    files, queries = _cacm()
    files = dict(sorted(files.items())[:400])
    single = wikidex.Index.build(files, model=model)
    built = distributed.build(files, model=model, shards=4)
    assert built.to_bytes() == single.to_bytes()
    assert _rankings(built, queries) == _rankings(single, queries)
    assert _rankings(built, queries, lanes=["semantic"]) == _rankings(single, queries, lanes=["semantic"])
    sharded = distributed.build_sharded(files, model=model, shards=4)
    for q in queries[:20]:
        assert sharded.rank(q, limit=20) == single.rank(q, limit=20), q
        assert sharded.rank(q, limit=20, lanes="semantic") == single.rank(q, limit=20, lanes="semantic"), q


def test_a_folder_in_shards_on_ray_gives_the_folders_index(ray_cluster, tmp_path):
    files, queries = _cacm()
    folder = tmp_path / "wiki"
    for i, (path, text) in enumerate(sorted(files.items())[:500]):
        (folder / f"part{i % 7}").mkdir(parents=True, exist_ok=True)
        page = folder / f"part{i % 7}" / path
        page.write_text(text)
        os.utime(page, (1_700_000_000 + i, 1_700_000_000 + i))
    (folder / ".hidden.md").write_text("# Hidden\n\nNot a page of the wiki.\n")
    single = wikidex.Index.build(folder, model=False)
    stages = []
    built = distributed.build(
        folder, model=False, shards=3, progress=lambda s, d, t: stages.append((s, d, t))
    )
    assert built.to_bytes() == single.to_bytes()
    assert _rankings(built, queries) == _rankings(single, queries)
    assert ("shards", 3, 3) in stages
    assert built.build_report().pages == 500


def test_a_folder_that_cannot_be_read_fails_before_anything_runs(ray_cluster, tmp_path):
    with pytest.raises(wikidex.WikidexIOError):
        distributed.build(tmp_path / "missing", model=False)
    (tmp_path / "page.md").write_text("# A page\n")
    with pytest.raises(wikidex.InvalidArgumentError, match="not a folder"):
        distributed.build(str(tmp_path / "page.md"), model=False)


def test_a_folders_default_model_is_chosen_from_its_files(ray_cluster, monkeypatch):
    monkeypatch.setenv("WIKIDEX_MODEL", str(MODEL))
    single = wikidex.Index.build(WIKI)
    built = distributed.build(WIKI, shards=2)
    assert built.to_bytes() == single.to_bytes()
    assert "WIKIDEX_MODEL" in built.build_report().model_reason


def test_cacm_from_a_ray_dataset_gives_the_single_index(ray_cluster):
    import ray.data

    files, queries = _cacm()
    files = dict(sorted(files.items())[:600])
    single = wikidex.Index.build(files, model=False)
    rows = [{"path": path, "text": text} for path, text in files.items()]
    stages = []
    built = distributed.build(
        ray.data.from_items(rows),
        model=False,
        shards=3,
        progress=lambda s, d, t: stages.append((s, d, t)),
    )
    assert built.to_bytes() == single.to_bytes()
    assert _rankings(built, queries) == _rankings(single, queries)
    assert ("shards", 3, 3) in stages
    assert stages[-1][0] == "pages"


def test_a_ray_dataset_needs_path_and_text_columns_of_str(ray_cluster):
    import ray.data

    with pytest.raises(ValueError, match="lacks text"):
        distributed.build(ray.data.from_items([{"path": "a.md", "body": "x"}]), model=False)
    with pytest.raises(TypeError, match="str paths and texts"):
        distributed.build(ray.data.from_items([{"path": "a.md", "text": 7}]), model=False)
