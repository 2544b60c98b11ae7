"""Builds an index on a Ray cluster: the files are dealt into shards, each shard is built (and
embedded, the long part) by a Ray task, and the shards are merged into one index on the caller.
The files may also come as a wiki folder (each task reads its part of the folder, which must
be at the same path on every node), or as a Ray Dataset (columns ``path`` and ``text``): each
of its blocks is a shard, built where Ray Data runs it.

>>> import ray, wikidex
>>> from wikidex import distributed
>>> ray.init()                                           # doctest: +SKIP
>>> model = wikidex.Model("/path/to/all-MiniLM-L6-v2")   # doctest: +SKIP
>>> index = distributed.build(files, model=model)        # doctest: +SKIP

The index is the one :meth:`wikidex.Index.build` gives for the same files (or folder), byte for
byte: the
merge (:meth:`wikidex.Index.merge`) keeps every vector the shards made and makes the lexical
statistics, the link graph and the semantic floor again over all the pages. What scales with
workers is the shards' work: parsing, chunking and above all embedding. The merge reads every
page again on the caller, without embedding.

:func:`build_sharded` builds the same shards and keeps them apart: a
:class:`wikidex.ShardedIndex` searches them together and ranks as the merged index does.

>>> sharded = distributed.build_sharded(files, model=model)   # doctest: +SKIP
>>> sharded.rank("boundary layer transition")                  # doctest: +SKIP

For shards too large to hold together on one machine, :func:`serve` puts each in a Ray actor
(on any node) and returns a :class:`RemoteShardedIndex`, which ranks as the merged index does
while this process holds only the wiki's dictionary:

>>> remote = distributed.serve(["/shared/shard-0.wdx", "/shared/shard-1.wdx"], model=model)  # doctest: +SKIP
>>> remote.rank("boundary layer transition")                                               # doctest: +SKIP

Needs ``ray`` (``pip install "wikidex[ray]"``; a Dataset needs Ray Data: ``ray[data]``).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from typing import (
    Any, Callable, Dict, Iterable, List, Literal, NamedTuple, Optional, Sequence, Tuple, TypeVar,
    Union, cast,
)

from ._errors import NotFoundError
from . import (
    Index, Model, Progress, Ranking, Record, SearchResults, ShardedIndex, VectorLike, _array,
    _build_args, _options_for, _wikidex,
)

Files = Union[Mapping[str, str], Iterable[Tuple[str, str]]]
# A ray.data.Dataset with the columns path and text (Ray Data is imported by its user only).
Dataset = Any

__all__ = ["RemoteShardedIndex", "build", "build_sharded", "deal", "serve"]

_T = TypeVar("_T")


def deal(files: Files, shards: int) -> List[List[Tuple[str, str]]]:
    """``files`` (a mapping of path to text, or ``(path, text)`` pairs) dealt into ``shards``
    lists in turn, in sorted path order: each shard holds pages from all over the wiki, so
    shards take about as long as each other. Empty shards are left out."""
    pairs = files.items() if isinstance(files, Mapping) else files
    return _dealt(sorted(_checked(pairs)), shards)


def _dealt(listed: List[_T], shards: int) -> List[List[_T]]:
    """``listed`` dealt into ``shards`` lists in turn, empty ones left out."""
    if isinstance(shards, bool) or not isinstance(shards, int) or shards < 1:
        raise ValueError(f"shards must be a positive int, got {shards!r}")
    return [part for part in (listed[s::shards] for s in range(shards)) if part]


def _checked(pairs: Iterable[Any]) -> List[Tuple[str, str]]:
    """``pairs`` as a list, each checked to be a ``(path, text)`` tuple of two strs."""
    listed = []
    for pair in pairs:
        if not isinstance(pair, tuple) or len(pair) != 2:
            raise TypeError("files must be a mapping of path to text or (path, text) pairs")
        path, text = pair
        if not isinstance(path, str) or not isinstance(text, str):
            raise TypeError(
                "files must map str paths to str texts, got "
                f"{type(path).__name__} and {type(text).__name__}"
            )
        listed.append((path, text))
    return listed


class _Shard(NamedTuple):
    """How each shard is built (sent to every task): the build options' JSON, made once on the
    caller, and the model that embeds (``None``: no vectors)."""

    options: str
    model: Optional[Model]

    def build(self, files: Dict[str, str]) -> Index:
        """The shard of ``files`` (path to text, checked by :func:`_checked`)."""
        native = _wikidex.NativeIndex.build_files(
            list(files.items()), self.options, None, self.model
        )
        return Index(native)

    def build_part(self, root: str, files: Sequence[str]) -> Index:
        """The files ``files`` (as :func:`_wikidex.folder_files` lists them) of the folder
        ``root``, read where the task runs, with their modification times."""
        native = _wikidex.NativeIndex.build_folder_files(
            root, list(files), self.options, None, self.model
        )
        return Index(native)


def _build_shard(files: Sequence[Tuple[str, str]], shard: _Shard) -> Index:
    """One shard, built where Ray runs it (the index crosses back as its blob bytes)."""
    return shard.build(dict(files))


def _build_folder_part(root: str, files: Sequence[str], shard: _Shard) -> Index:
    """One part of a wiki folder, read and built where Ray runs it."""
    return shard.build_part(root, files)


def _build_block(batch: Dict[str, Any], shard: _Shard) -> Dict[str, List[bytes]]:
    """One block of a Dataset (a batch of its ``path`` and ``text`` columns) built into a
    shard where Ray Data runs it; the shard crosses back as its blob bytes."""
    files = dict(_checked(zip(batch["path"], batch["text"])))
    if not files:
        return {"blob": []}
    return {"blob": [shard.build(files).to_bytes()]}


def _dataset(files: Any) -> Any:
    """``files`` when it is a Ray Dataset (checked without importing Ray Data: a Dataset can
    only exist once ``ray.data`` is imported), else ``None``. A Dataset without the columns
    ``path`` and ``text`` is a ValueError, one whose columns are not strings a TypeError."""
    data = sys.modules.get("ray.data")
    dataset_type = getattr(data, "Dataset", None)
    if dataset_type is None or not isinstance(files, dataset_type):
        return None
    # Ray Data's own dependency.
    import pyarrow  # type: ignore[import-untyped,import-not-found,unused-ignore]

    schema = files.schema()
    columns = dict(zip(schema.names, schema.types)) if schema is not None else {}
    missing = [c for c in ("path", "text") if c not in columns]
    if missing:
        raise ValueError(
            f"a Dataset of files needs the columns path and text; it lacks {', '.join(missing)} "
            f"(it has: {', '.join(columns) or 'none'})"
        )
    for name in ("path", "text"):
        kind = columns[name]
        # A column of Python objects is not typed here: each shard's task checks its values.
        strings = pyarrow.types.is_string(kind) or pyarrow.types.is_large_string(kind)
        if isinstance(kind, pyarrow.DataType) and not strings:
            raise TypeError(f"a Dataset of files must hold str paths and texts; {name} is {kind}")
    return files


def build(
    files: Union[Files, str, "os.PathLike[str]", Dataset],
    *,
    model: Union[Model, Literal[False], None] = None,
    config: Optional[Mapping[str, Any]] = None,
    strict: bool = False,
    vectors: str = "f32",
    shards: Optional[int] = None,
    num_cpus: float = 1,
    progress: Union[bool, Progress, None] = None,
) -> Index:
    """Builds the index of ``files`` (a mapping of path to text, or ``(path, text)`` pairs, as
    :meth:`wikidex.Index.build` takes, a wiki folder's path, or a ``ray.data.Dataset`` with the
    columns ``path`` and ``text``) on the Ray cluster this process is connected to (a local
    one, started by ``ray.init()`` when none is; ``ray.init(address=...)`` or ``RAY_ADDRESS``
    first for a real cluster). The result is the index one :meth:`wikidex.Index.build` of the
    same files (or folder) gives.

    A folder is listed here (the files :meth:`wikidex.Index.build` would read) and its files
    dealt out by path; each task reads its own from the folder, so on a cluster the folder
    must be at the same path on every node (a shared file system), and the pages keep their
    files' modification times as a build of the folder records them.

    ``model`` (a :class:`wikidex.Model`) embeds every chunk; each worker loads it from the same
    folder, so on a cluster the folder must be at that path on every node (a model package
    installed in every node's environment is). ``model=None`` (the default) takes the default
    model as :meth:`wikidex.Index.build` does, chosen here by the languages of all the files
    (read once on this process before they are dealt out), so every shard embeds with the
    model one build would take (for a Dataset, its rows are read once on this process for
    that, and for a folder, its files). ``model=False`` builds without vectors.

    ``shards`` is how many Ray tasks build parts of the files (default: the cluster's CPUs
    divided by ``num_cpus``, the CPUs each task reserves; give a model's ``threads`` as
    ``num_cpus`` to stop tasks from crowding a node); a Dataset is repartitioned into that
    many blocks, each a shard (an empty block builds none). ``config``, ``strict`` and
    ``vectors`` are as in :meth:`wikidex.Index.build`. ``progress`` shows a bar (or calls
    ``callable(stage, done, total)``) for the stage ``shards``, then the merge's ``pages``.

    :raises ImportError: when ``ray`` is not installed.
    :raises TypeError: for a model that is not a :class:`wikidex.Model`, ``False`` or
        ``None``; for a Dataset whose ``path`` or ``text`` column is not of strings.
    :raises ValueError: for a Dataset without the columns ``path`` and ``text``.
    :raises wikidex.WikidexIOError: for a folder that cannot be read (``InvalidArgumentError``
        for a path that is not a folder).
    """
    options, report, _, candidates = _build_args(config, strict, vectors, progress, model)
    built, _ = _shards(files, model, options, candidates, shards, num_cpus, report)
    return Index.merge(
        built,
        config,
        strict=strict,
        vectors=vectors,
        progress=report,
        model=model,
    )


def build_sharded(
    files: Union[Files, str, "os.PathLike[str]", Dataset],
    *,
    model: Union[Model, Literal[False], None] = None,
    config: Optional[Mapping[str, Any]] = None,
    strict: bool = False,
    vectors: str = "f32",
    shards: Optional[int] = None,
    num_cpus: float = 1,
    progress: Union[bool, Progress, None] = None,
) -> ShardedIndex:
    """The shards :func:`build` builds on the Ray cluster, not merged: a
    :class:`wikidex.ShardedIndex` that searches them together, ranking as the merged index
    does (the same pages, order and scores), without the merge's pass over every page on
    this process. Its shards are :class:`wikidex.Index` objects (``.shards``): save each, and
    open them again into a :class:`wikidex.ShardedIndex` with the model they were embedded
    with. The arguments are :func:`build`'s; ``progress`` reports the stage ``shards``.

    Every shard analyzes its text in one language: ``config``'s ``language``, else the one a
    build of all the files would choose from their languages (each shard alone might choose
    another from its own pages, and shards analyzed apart cannot rank as one index). So the
    files are read once on this process for their languages, as they are for ``model=None``:
    a folder's files, a Dataset's rows.

    :raises ImportError: when ``ray`` is not installed.
    :raises TypeError: as :func:`build`.
    :raises ValueError: as :func:`build`.
    :raises wikidex.WikidexIOError: as :func:`build`.
    """
    options, report, _, candidates = _build_args(config, strict, vectors, progress, model)
    pin = config is None or "language" not in config
    built, shard_model = _shards(files, model, options, candidates, shards, num_cpus, report, pin)
    return ShardedIndex(built, model=shard_model)


def _shards(
    files: Union[Files, str, "os.PathLike[str]", Dataset],
    model: Union[Model, Literal[False], None],
    options: str,
    candidates: Optional[List[str]],
    shards: Optional[int],
    num_cpus: float,
    report: Optional[Progress],
    pin_language: bool = False,
) -> Tuple[List[Index], Optional[Model]]:
    """The shards of ``files`` built on the Ray cluster (started here when none is), and the
    model they were embedded with (``None``: no vectors). Arguments as :func:`build`'s, the
    options as ``_build_args`` made them; with ``pin_language``, every shard analyzes in the
    language one build of all the files would (read here once), as shards searched together
    must."""
    try:
        import ray
    except ImportError as e:
        raise ImportError('wikidex.distributed needs Ray: pip install "wikidex[ray]"') from e
    dataset = _dataset(files)
    folder = os.fspath(files) if isinstance(files, (str, os.PathLike)) else None
    # Listed before Ray starts: a folder that cannot be read fails at once.
    names = _wikidex.folder_files(folder, options) if folder is not None else []
    if not ray.is_initialized():
        ray.init()
    if shards is None:
        cpus = ray.cluster_resources().get("CPU", 1)
        shards = max(1, int(cpus // num_cpus))
    # Each task: a function Ray runs, and its arguments before the shard.
    build_one: Callable[..., Index] = _build_shard
    tasks: List[Tuple[Any, ...]] = []
    if folder is not None:
        build_one = _build_folder_part
        tasks = [(folder, part) for part in _dealt(names, shards)]
    elif dataset is None:
        tasks = [(part,) for part in deal(cast(Files, files), shards)]
    # The merge below resolves `model=None` again over all the pages, to the same folder, and
    # so keeps the shards' vectors (and says in its report which model and why).
    shard_model = model if isinstance(model, Model) else None
    if candidates is not None or pin_language:
        # model=None: the default model, by every page's language; shards searched together:
        # the analysis language of every page, for all of them.
        pairs: Any
        if folder is not None:
            pairs = folder  # read once here, by core, for the pages' languages
        elif dataset is None:
            pairs = [pair for (part,) in tasks for pair in part]
        else:
            # Read once: the shards' blocks come from the same materialized rows.
            dataset = dataset.materialize()
            pairs = [(row["path"], row["text"]) for row in dataset.iter_rows()]
        language, found = _wikidex.wiki_choices(pairs, options, candidates)
        if found is not None:
            shard_model = Model(found[0], onnx=os.path.relpath(found[1], found[0]))
        if pin_language:
            pinned = json.loads(options)
            pinned.setdefault("config", {})["language"] = language
            options = json.dumps(pinned)
    shard = _Shard(options, shard_model)
    if dataset is None:
        built = _run_tasks(build_one, tasks, shard, num_cpus, report)
    else:
        built = _run_dataset(dataset, shards, shard, num_cpus, report)
    return built, shard_model


def _run_tasks(
    build: Callable[..., Index],
    tasks: List[Tuple[Any, ...]],
    shard: _Shard,
    num_cpus: float,
    report: Optional[Progress],
) -> List[Index]:
    """The shards ``build(*task, shard)`` makes, each in a Ray task, in the tasks' order."""
    import ray

    task = ray.remote(num_cpus=num_cpus)(build)
    pending = [task.remote(*args, shard) for args in tasks]
    order = {ref: i for i, ref in enumerate(pending)}
    built: List[Optional[Index]] = [None] * len(pending)
    if report is not None:
        report("shards", 0, len(pending))
    while pending:
        done, pending = ray.wait(pending, num_returns=1)
        for ref in done:
            built[order[ref]] = ray.get(ref)
        if report is not None:
            report("shards", len(built) - len(pending), len(built))
    return [b for b in built if b is not None]


def _run_dataset(
    dataset: Any, shards: int, shard: _Shard, num_cpus: float, report: Optional[Progress]
) -> List[Index]:
    """The shards of a Dataset: its ``shards`` blocks each built where Ray Data runs it."""
    blobs = dataset.repartition(shards).map_batches(
        _build_block,
        batch_size=None,
        batch_format="numpy",
        num_cpus=num_cpus,
        fn_kwargs={"shard": shard},
    )
    built: List[Index] = []
    if report is not None:
        report("shards", 0, shards)
    for row in blobs.iter_rows():
        built.append(Index.from_bytes(row["blob"]))
        if report is not None:
            report("shards", len(built), max(shards, len(built)))
    if report is not None and len(built) < shards:  # empty blocks built nothing
        report("shards", len(built), len(built))
    return built


class _ShardHolder:
    """One shard held by a Ray actor where it runs: its index and its side of a sharded
    search (:class:`_wikidex.NativeShardSearcher`), answering the coordinator's requests."""

    def __init__(self, source: Union[Index, str]):
        self._index = source if isinstance(source, Index) else Index.open(source)
        self._searcher = _wikidex.NativeShardSearcher(self._index._native)

    def summary(self) -> bytes:
        """What the coordinator needs of the shard: its settings and dictionary."""
        return self._searcher.summary()

    def reply(self, request: bytes) -> bytes:
        """The reply to one of the coordinator's requests."""
        return self._searcher.reply(request)

    def page_record(self, key: str, scope: Optional[str]) -> Optional[Dict[str, Any]]:
        """The page's record, if this shard holds it."""
        try:
            return dict(self._index.page_record(key, scope))
        except NotFoundError:
            return None


class RemoteShardedIndex:
    """Shards held by Ray actors (one each, on any node of the cluster) searched as one from
    this process, which holds only the wiki's dictionary: :meth:`rank` gives what one index of
    all their pages gives, the same pages in the same order with the same scores, as
    :class:`wikidex.ShardedIndex` does in one process. Made by :func:`serve`.

    Each query takes one round trip to every actor (two for a ``scope`` of a user, whose pages
    in one shard hide global pages in another), and so does each batch of
    :meth:`rank_many`'s queries: the query is analyzed here against the
    wiki's dictionary, each actor scores its chunks with the wiki's statistics and returns
    its best candidates in each lane, and they are fused here. ``model`` embeds text queries
    for the semantic lane (and measured its floor over every shard); without one, only a
    ``query_vector`` ranks semantically. The actors live as long as this object (or until
    :meth:`close`).
    """

    __slots__ = ("_native", "_actors", "__weakref__")

    def __init__(self, native: Any, actors: List[Any]):
        self._native = native
        self._actors = actors

    def _ask(self, requests: List[bytes]) -> List[bytes]:
        """One round: each actor's request sent, every reply waited for."""
        import ray

        return ray.get([a.reply.remote(r) for a, r in zip(self._actors, requests)])

    @property
    def actors(self) -> Tuple[Any, ...]:
        """The Ray actors holding the shards, in the order given."""
        return tuple(self._actors)

    @property
    def page_count(self) -> int:
        """Pages over every shard."""
        return int(self._native.page_count)

    @property
    def chunk_count(self) -> int:
        """Chunks over every shard."""
        return int(self._native.chunk_count)

    def rank(
        self,
        query: str,
        *,
        limit: Optional[int] = None,
        lanes: Union[str, Sequence[str], None] = None,
        tags: Union[str, Sequence[str], None] = None,
        types: Union[str, Sequence[str], None] = None,
        scope: Optional[str] = None,
        chunks: bool = False,
        query_vector: Optional[VectorLike] = None,
        typos: bool = True,
    ) -> Ranking:
        """``(page id, fused score)`` per hit, as :meth:`wikidex.Index.rank` of one index of
        every shard's pages gives them.

        :raises wikidex.InvalidArgumentError: for bad options, or a shard whose reply failed
            (its error's code and message in the text).
        :raises ray.exceptions.RayActorError: when an actor is gone.
        """
        opts = _options_for(query, limit, lanes, tags, types, scope, chunks, bool(typos))
        vector = None if query_vector is None else _array(query_vector)
        return self._native.rank(query, self._ask, opts, vector)

    def search(
        self,
        query: str,
        *,
        limit: Optional[int] = None,
        lanes: Union[str, Sequence[str], None] = None,
        tags: Union[str, Sequence[str], None] = None,
        types: Union[str, Sequence[str], None] = None,
        scope: Optional[str] = None,
        usage_modes: Union[str, Sequence[str], None] = None,
        explain: bool = False,
        chunks: bool = False,
        always: Optional[str] = None,
        snippets: bool = True,
        query_vector: Optional[VectorLike] = None,
        facets: bool = False,
        since: Optional[str] = None,
        until: Optional[str] = None,
        typos: bool = True,
    ) -> SearchResults:
        """Searches as :meth:`wikidex.Index.search` of one index of every shard's pages does,
        with the same arguments and the same answers, record for record (the hits with their
        snippets, lanes and explanations, the ``always`` pages, facets and phrases): one round
        trip to every actor for the query, one more for the records of the hits each holds
        (and one before them for a ``scope`` of a user).

        :raises wikidex.InvalidArgumentError: as :meth:`rank`.
        :raises ray.exceptions.RayActorError: when an actor is gone.
        """
        opts = _options_for(
            query, limit, lanes, tags, types, scope, chunks,
            bool(typos), usage_modes, bool(explain), always, bool(snippets), bool(facets), since, until,
        )
        vector = None if query_vector is None else _array(query_vector)
        return SearchResults(json.loads(self._native.search(query, self._ask, opts, vector)))

    def rank_many(
        self,
        queries: Sequence[str],
        *,
        limit: Optional[int] = None,
        lanes: Union[str, Sequence[str], None] = None,
        tags: Union[str, Sequence[str], None] = None,
        types: Union[str, Sequence[str], None] = None,
        scope: Optional[str] = None,
        chunks: bool = False,
        typos: bool = True,
        batch_size: int = 256,
    ) -> List[Ranking]:
        """:meth:`rank` for many queries with the same options, one :class:`Ranking` per query
        in order, as :meth:`wikidex.Index.rank_many` gives them. The queries go to the actors
        ``batch_size`` at a time: one round trip to every actor a batch (two for a ``scope``
        of a user), each actor answering its batch on all of its node's cores. A batch's reply
        holds about ``3 × limit`` candidates a lane and a query (``limit`` 10: about 1.6 KB
        a query from each actor).

        :raises TypeError: for one ``str`` instead of a sequence of them.
        :raises ValueError: for a ``batch_size`` below 1.
        :raises wikidex.InvalidArgumentError: as :meth:`rank`.
        :raises ray.exceptions.RayActorError: when an actor is gone.
        """
        if isinstance(queries, str):
            raise TypeError("queries must be a sequence of str, not one str")
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive int, got {batch_size!r}")
        opts = _options_for("", limit, lanes, tags, types, scope, chunks, bool(typos))
        queries = list(queries)
        out: List[Ranking] = []
        for at in range(0, len(queries), batch_size):
            out.extend(self._native.rank_many(queries[at : at + batch_size], self._ask, opts))
        return out

    def page_record(self, key: str, scope: Optional[str] = None) -> Record:
        """A hit's page, as :meth:`wikidex.Index.page_record` gives it, from the shard that
        holds it (every actor is asked).

        :raises wikidex.NotFoundError: when no shard holds it.
        """
        import ray

        found = ray.get([a.page_record.remote(key, scope) for a in self._actors])
        for record in found:
            if record is not None:
                return Record(record)
        where = f" in scope {scope}" if scope else ""
        raise NotFoundError(f"no shard holds the page {key}{where}", "unknown_page")

    def close(self) -> None:
        """Ends the actors (the object cannot rank after)."""
        import ray

        for actor in self._actors:
            ray.kill(actor)
        self._actors = []

    def __enter__(self) -> "RemoteShardedIndex":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return (
            f"RemoteShardedIndex({len(self._actors)} shards, {self.page_count} pages, "
            f"{self.chunk_count} chunks)"
        )


def serve(
    shards: Sequence[Union[Index, str, "os.PathLike[str]"]],
    *,
    model: Optional[Model] = None,
    num_cpus: float = 0,
    max_restarts: int = 0,
) -> RemoteShardedIndex:
    """Puts each of ``shards`` in a Ray actor, on whichever node Ray places it, and returns the
    :class:`RemoteShardedIndex` that searches them together from this process. A shard is a
    :class:`wikidex.Index` (sent to its actor as its blob) or the path of a saved one (opened
    where its actor runs: on a cluster, a path every node can read, a shared file system).
    The shards are indexes built each from part of one wiki's files with the same settings,
    as :func:`build_sharded` builds them (save each with :meth:`wikidex.Index.save`).

    ``model`` (a :class:`wikidex.Model`, the one the shards' vectors were made with) embeds
    text queries here and measures the semantic floor over every shard; without it, the
    semantic lane ranks only a ``query_vector``. ``num_cpus`` is what each actor reserves for
    its lifetime (default 0, as Ray's own default for a running actor: the shards' actors share
    their nodes' CPUs; an actor that reserves one keeps it, so a cluster of two CPUs would
    place only two such actors and wait for the rest). ``max_restarts`` is how many times Ray
    starts an actor again after its process or node died (``-1``: always; default 0, Ray's
    own): the actor opens its shard again (from its path, or its blob in the object store), a
    query waiting on it is retried, and the coordinator gives it the wiki's statistics again
    (a shard whose pages changed is refused, not ranked with the old ones).

    :raises ImportError: when ``ray`` is not installed.
    :raises TypeError: for a shard that is neither an index nor a path, or a model that is not
        a :class:`wikidex.Model`.
    :raises ValueError: for ``max_restarts`` below -1.
    :raises wikidex.InvalidArgumentError: for no shards, shards built with different settings
        or whose vectors come from different models, or a page in two shards.
    """
    try:
        import ray
    except ImportError as e:
        raise ImportError('wikidex.distributed needs Ray: pip install "wikidex[ray]"') from e
    sources: List[Union[Index, str]] = []
    for shard in shards:
        if isinstance(shard, Index):
            sources.append(shard)
        elif isinstance(shard, (str, os.PathLike)):
            sources.append(os.fspath(shard))
        else:
            raise TypeError(
                f"shards must be wikidex.Index objects or paths, got {type(shard).__name__}"
            )
    if model is not None and not isinstance(model, Model):
        raise TypeError(f"model must be a wikidex.Model or None, got {type(model).__name__}")
    if isinstance(max_restarts, bool) or not isinstance(max_restarts, int) or max_restarts < -1:
        raise ValueError(f"max_restarts must be an int of -1 or more, got {max_restarts!r}")
    if not ray.is_initialized():
        ray.init()
    holder: Any = ray.remote(
        num_cpus=num_cpus, max_restarts=max_restarts, max_task_retries=max_restarts
    )(_ShardHolder)
    actors: List[Any] = [holder.remote(source) for source in sources]
    try:
        summaries = ray.get([a.summary.remote() for a in actors])
        remote = RemoteShardedIndex(None, actors)
        remote._native = _wikidex.NativeCoordinator(summaries, remote._ask, model)
    except BaseException:
        for actor in actors:
            ray.kill(actor)
        raise
    return remote
