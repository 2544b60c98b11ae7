"""Builds an index on a Ray cluster: the files are dealt into shards, each shard is built (and
embedded, the long part) by a Ray task, and the shards are merged into one index on the caller.

>>> import ray, wikidex
>>> from wikidex import distributed
>>> ray.init()                                           # doctest: +SKIP
>>> model = wikidex.Model("/path/to/all-MiniLM-L6-v2")   # doctest: +SKIP
>>> index = distributed.build(files, model=model)        # doctest: +SKIP

The index is the one :meth:`wikidex.Index.build` gives for the same files, byte for byte: the
merge (:meth:`wikidex.Index.merge`) keeps every vector the shards made and makes the lexical
statistics, the link graph and the semantic floor again over all the pages. What scales with
workers is the shards' work: parsing, chunking and above all embedding. The merge reads every
page again on the caller, without embedding.

Needs ``ray`` (``pip install "wikidex[ray]"``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Iterable, List, Literal, Optional, Sequence, Tuple, Union

from . import Index, Model, Progress, _build_args, _wikidex

Files = Union[Mapping[str, str], Iterable[Tuple[str, str]]]

__all__ = ["build", "deal"]


def deal(files: Files, shards: int) -> List[List[Tuple[str, str]]]:
    """``files`` (a mapping of path to text, or ``(path, text)`` pairs) dealt into ``shards``
    lists in turn, in sorted path order: each shard holds pages from all over the wiki, so
    shards take about as long as each other. Empty shards are left out."""
    if isinstance(shards, bool) or not isinstance(shards, int) or shards < 1:
        raise ValueError(f"shards must be a positive int, got {shards!r}")
    pairs = files.items() if isinstance(files, Mapping) else files
    listed = []
    for pair in pairs:
        if not isinstance(pair, tuple) or len(pair) != 2:
            raise TypeError("files must be a mapping of path to text or (path, text) pairs")
        path, text = pair
        if not isinstance(path, str) or not isinstance(text, str):
            raise TypeError("files must map str paths to str texts")
        listed.append((path, text))
    listed.sort()
    return [part for part in (listed[s::shards] for s in range(shards)) if part]


def _build_shard(
    files: Sequence[Tuple[str, str]],
    config: Optional[Mapping[str, Any]],
    strict: bool,
    vectors: str,
    model: Union[Model, Literal[False]],
) -> Index:
    """One shard, built where Ray runs it (the index crosses back as its blob bytes)."""
    return Index.build(dict(files), config, strict=strict, vectors=vectors, model=model)


def build(
    files: Files,
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
    :meth:`wikidex.Index.build` takes) on the Ray cluster this process is connected to (a
    local one, started by ``ray.init()`` when none is; ``ray.init(address=...)`` or
    ``RAY_ADDRESS`` first for a real cluster).

    ``model`` (a :class:`wikidex.Model`) embeds every chunk; each worker loads it from the same
    folder, so on a cluster the folder must be at that path on every node (a model package
    installed in every node's environment is). ``model=None`` (the default) takes the default
    model as :meth:`wikidex.Index.build` does, chosen here by the languages of all the files
    (read once on this process before they are dealt out), so every shard embeds with the
    model one build would take. ``model=False`` builds without vectors.

    ``shards`` is how many Ray tasks build parts of the files (default: the cluster's CPUs
    divided by ``num_cpus``, the CPUs each task reserves; give a model's ``threads`` as
    ``num_cpus`` to stop tasks from crowding a node). ``config``, ``strict`` and ``vectors`` are
    as in :meth:`wikidex.Index.build`. ``progress`` shows a bar (or calls ``callable(stage,
    done, total)``) for the stage ``shards``, then the merge's ``pages``.

    :raises ImportError: when ``ray`` is not installed.
    :raises TypeError: for a model that is not a :class:`wikidex.Model`, ``False`` or ``None``.
    """
    try:
        import ray
    except ImportError as e:
        raise ImportError('wikidex.distributed needs Ray: pip install "wikidex[ray]"') from e
    options, report, _, candidates = _build_args(config, strict, vectors, progress, model)
    if not ray.is_initialized():
        ray.init()
    if shards is None:
        cpus = ray.cluster_resources().get("CPU", 1)
        shards = max(1, int(cpus // num_cpus))
    parts = deal(files, shards)
    # The merge below resolves `model=None` again over all the pages, to the same folder, and
    # so keeps the shards' vectors (and says in its report which model and why).
    shard_model: Union[Model, Literal[False]] = False if model is None else model
    if candidates is not None:  # model=None: the default model, by every page's language
        pairs = [pair for part in parts for pair in part]
        found = _wikidex.default_model(pairs, options, candidates)
        if found is not None:
            shard_model = Model(found[0], onnx=os.path.relpath(found[1], found[0]))
    task = ray.remote(num_cpus=num_cpus)(_build_shard)
    config = dict(config) if config is not None else None
    pending = [task.remote(part, config, strict, vectors, shard_model) for part in parts]
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
    return Index.merge(
        [b for b in built if b is not None],
        config,
        strict=strict,
        vectors=vectors,
        progress=report,
        model=model,
    )

