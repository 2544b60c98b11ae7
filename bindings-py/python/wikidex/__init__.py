"""wikidex: in-process retrieval for LLM-maintained Markdown wikis.

Build an index from a wiki folder (or from strings), search it in three lanes fused by
reciprocal rank fusion, see why each page ranked, follow the wiki's links, and check the
citations of an LLM's answer, with the same results as the Rust core and the ``wikidex``
CLI (the cross-language vectors in ``tests/vectors`` hold every surface to them).

>>> import wikidex
>>> index = wikidex.Index.build({"global/oncall.md": "Page the on-call engineer for outages."})
>>> index.search("who do I page for an outage?").hits[0].page_id
'oncall'

With an ONNX sentence model (``Model``), the semantic lane joins the search: install one
(``pip install wikidex-model-minilm``: :meth:`Index.build` finds it), set ``WIKIDEX_MODEL`` to
a model folder, pass ``model=Model("models/all-MiniLM-L6-v2")`` to :meth:`Index.build`, or
attach the model to a loaded index with :meth:`Index.attach_model`. Vectors cross as numpy
float32 arrays.

Records are read-only :class:`Record` objects: attribute or key access, ``to_dict()``,
readable ``repr``; search results render as a table in notebooks. Offsets in records count
code points, so they index Python strings directly. Errors are :class:`WikidexError`
subclasses with ``code``, ``message`` and ``details``.
"""

from __future__ import annotations

import functools
import html
import json
import os
import sys
from collections.abc import Mapping
from collections.abc import Sequence as _Sequence
from typing import Any, Callable, Dict, Iterable, Iterator, List, Literal, Optional, Sequence, Tuple, Union

import numpy as np

from . import _wikidex
from ._wikidex import Model, Ranking
from ._errors import (
    IndexFormatError,
    InvalidArgumentError,
    ModelError,
    NotFoundError,
    PageError,
    WikidexError,
    WikidexIOError,
)

__version__ = _wikidex.__version__

__all__ = [
    "Index",
    "IndexFile",
    "Model",
    "Ranking",
    "Record",
    "SearchResults",
    "ShardedIndex",
    "parse_headers",
    "WikidexError",
    "InvalidArgumentError",
    "NotFoundError",
    "IndexFormatError",
    "PageError",
    "ModelError",
    "WikidexIOError",
]

Progress = Callable[[str, int, int], None]

_Sequence.register(Ranking)


def _freeze(value: Any) -> Any:
    if isinstance(value, dict):
        return Record(value)
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    return value


def _thaw(value: Any) -> Any:
    if isinstance(value, Record):
        return value.to_dict()
    if isinstance(value, (tuple, list)):
        return [_thaw(v) for v in value]
    if isinstance(value, dict):
        return {k: _thaw(v) for k, v in value.items()}
    return value


class Record(Mapping):
    """A read-only record from the core: ``r.title`` or ``r["title"]``; ``to_dict()`` gives
    plain dicts and lists (the core's JSON, field for field)."""

    __slots__ = ("_data", "_load")

    def __init__(self, data: Dict[str, Any]):
        # Nested values are wrapped when first read, so a record of 100 hits costs nothing
        # for the fields nobody looks at.
        object.__setattr__(self, "_data", dict(data))

    @classmethod
    def _later(cls, load: Callable[[], Dict[str, Any]]) -> Any:
        """A record whose fields ``load`` gives when one is first read (a search's records
        are made in the core only when read): its ``_data`` slot stays unset until then."""
        record = cls.__new__(cls)
        object.__setattr__(record, "_load", load)
        return record

    def __getattr__(self, name: str) -> Any:
        if name == "_data":  # only a record from _later, on its first read
            data = self._load()
            object.__setattr__(self, "_data", data)
            return data
        try:
            return self[name]
        except KeyError:
            raise AttributeError(f"{type(self).__name__} has no field {name!r}") from None

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is read-only")

    def __getitem__(self, key: str) -> Any:
        value = self._data[key]
        if isinstance(value, (dict, list)):
            value = _freeze(value)
            self._data[key] = value
        return value

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __hash__(self) -> int:
        return hash(json.dumps(self.to_dict(), sort_keys=True))

    def __dir__(self) -> Iterable[str]:
        return list(self._data)

    def to_dict(self) -> Dict[str, Any]:
        """The record as plain dicts and lists."""
        return {k: _thaw(v) for k, v in self._data.items()}

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Record):
            return self.to_dict() == other.to_dict()
        if isinstance(other, dict):
            return self.to_dict() == other
        return NotImplemented

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={_short(self[k])}" for k in self._data)
        return f"{type(self).__name__}({fields})"

    def __reduce__(self):
        return (type(self), (self.to_dict(),))


class _Fields(Record):
    """A core record whose fields are properties (set on each subclass below): another name
    is no field, without the failed attribute look-up a :class:`Record` takes first. It
    shows and pickles as a plain :class:`Record` of its fields."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        # Every field is a property: only other names come here.
        raise AttributeError(f"Record has no field {name!r}")

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={_short(self[k])}" for k in self)
        return f"Record({fields})"

    def __reduce__(self):
        return (Record, (self.to_dict(),))


class _Hit(_Fields):
    """A hit of :class:`SearchResults`, a :class:`Record` like the others: each field is
    converted from the core's record when first read, and the snippet made then, so reading a
    hit's title costs no snippet. Like its results, it holds the index as it was searched
    (for its snippet). It pickles as a plain :class:`Record` of its fields."""

    __slots__ = ("_hit",)

    def __init__(self, hit: Any):
        object.__setattr__(self, "_hit", hit)
        object.__setattr__(self, "_data", {})

    def __getitem__(self, key: str) -> Any:
        data = self._data
        value = data.get(key, _UNSET)
        if value is _UNSET:
            if key not in _HIT_FIELD_SET:
                raise KeyError(key)
            value = self._hit.field(key)
            value = data[key] = _Snippet(value) if key == "snippet" and value else _freeze(value)
        return value

    def __iter__(self) -> Iterator[str]:
        return iter(_HIT_FIELDS)

    def __len__(self) -> int:
        return len(_HIT_FIELDS)

    def __contains__(self, key: object) -> bool:
        return key in _HIT_FIELD_SET

    def __dir__(self) -> Iterable[str]:
        return list(_HIT_FIELDS)

    def to_dict(self) -> Dict[str, Any]:
        """The hit as plain dicts and lists (every field converted, the snippet made)."""
        return {k: _thaw(self[k]) for k in _HIT_FIELDS}


class _Snippet(_Fields):
    """A hit's snippet (``text``, ``highlights``, ``offset``), over the binding's own dict
    (not copied)."""

    __slots__ = ()

    def __init__(self, data: Dict[str, Any]):
        object.__setattr__(self, "_data", data)


_UNSET = object()
_HIT_FIELDS: Tuple[str, ...] = tuple(_wikidex.FoundHit.FIELDS)
_HIT_FIELD_SET = frozenset(_HIT_FIELDS)


def _field(name: str) -> property:
    return property(lambda self: self[name])


# Each field a property, so `hit.title` skips the failed attribute look-up `__getattr__` needs.
for _name in _HIT_FIELDS:
    setattr(_Hit, _name, _field(_name))
for _name in ("text", "highlights", "offset"):
    setattr(_Snippet, _name, _field(_name))


def _short(v: Any) -> str:
    if isinstance(v, tuple):
        return f"[{len(v)} items]" if len(v) > 3 else repr(list(v))
    if isinstance(v, Record):
        return "{…}"
    text = repr(v)
    return text if len(text) <= 60 else text[:57] + "…'"


class SearchResults(Record):
    """The answer to :meth:`Index.search`: ``hits`` (ranked), ``always`` (pages marked
    ``usage_mode: always``, when kept apart), ``terms``, ``lanes`` (each lane's status),
    ``facets`` (with ``facets=True``, else ``None``), ``phrases`` (when the query quotes a
    phrase: ``{phrases, matched, reason}``, the first ``matched`` hits holding every phrase;
    ``reason`` says why phrases were searched as words, for an index without positions; else
    ``None``).
    In a notebook it shows as a table of hits with their lane ranks and snippets.

    The search itself only ranks: the hits are made in the core when ``hits`` (or ``always``)
    is first read, the other fields when one of them is, each hit's fields become Python
    objects when first read, and its snippet is made then, so a caller that keeps only some
    results, or reads none, or reads hits without their snippets, does not pay for the rest. They are made from the index as it was
    searched: a later write does not change them."""

    __slots__ = ("_lists",)

    @classmethod
    def _of(cls, found: Any) -> "SearchResults":
        """The results that the core's ``Found`` (``NativeIndex.find``) holds: ``hits`` and
        ``always`` made when first read, without their snippets (each hit's fields converted,
        its snippet made, when read); the rest of the fields read when one of them is."""
        lists: Dict[str, Any] = {"found": found}

        def load() -> Dict[str, Any]:
            data: Dict[str, Any] = json.loads(found.head())
            data["hits"] = _hit_list(lists, "hits")
            data["always"] = _hit_list(lists, "always")
            return data

        results: SearchResults = cls._later(load)
        object.__setattr__(results, "_lists", lists)
        return results

    @property
    def hits(self) -> Tuple["_Hit", ...]:
        """The ranked hits (made without reading the rest of the results)."""
        return self._list("hits")

    @property
    def always(self) -> Tuple["_Hit", ...]:
        """The ``usage_mode: always`` pages, when kept apart (made without reading the rest)."""
        return self._list("always")

    def _list(self, name: str) -> Tuple["_Hit", ...]:
        try:
            lists = object.__getattribute__(self, "_lists")
        except AttributeError:  # results made from their fields (a pickle, IndexFile)
            hits: Tuple["_Hit", ...] = self[name]
            return hits
        return _hit_list(lists, name)

    def __repr__(self) -> str:
        lines = [f"SearchResults(query={self.query!r}, {len(self.hits)} hits)"]
        for i, h in enumerate(self.always + self.hits, 1):
            lines.append(f"  {i:>2}. {h.score:.4f}  {h.page_id}  {h.chunk}  {h.title!r}")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        lanes = [lane.lane for lane in self.lanes]
        head = "".join(f"<th>{html.escape(l)}</th>" for l in lanes)
        rows = []
        for i, h in enumerate(self.always + self.hits, 1):
            ranks = {lh.lane: lh.rank for lh in h.lanes}
            cells = "".join(
                f"<td>{'' if ranks.get(l) is None else ranks[l]}</td>" for l in lanes
            )
            snippet = _marked(h.snippet) if h.get("snippet") else ""
            rows.append(
                f"<tr><td>{i}</td><td><b>{html.escape(h.title)}</b><br><code>{html.escape(h.page_id)}</code></td>"
                f"<td>{h.score:.4f}</td>{cells}<td>{snippet}</td></tr>"
            )
        return (
            f"<p>{len(self.hits)} hits for <code>{html.escape(self.query)}</code></p>"
            f"<table><thead><tr><th>#</th><th>page</th><th>score</th>{head}<th>snippet</th></tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table>"
        )


def _hit_list(lists: Dict[str, Any], name: str) -> Tuple["_Hit", ...]:
    """The hits ``name`` (``hits`` or ``always``) of a search's ``Found``, made once."""
    hits = lists.get(name)
    if hits is None:
        # Two threads may make the list at once (the core call releases the GIL): the first
        # one kept is the one every read gets.
        made = tuple(map(_Hit, lists["found"].hits(always=name == "always")))
        hits = lists.setdefault(name, made)
    return hits


def _marked(snippet: Record) -> str:
    text = snippet.text
    out, at = [], 0
    for m in snippet.highlights:
        out.append(html.escape(text[at : m.start]))
        out.append(f"<mark>{html.escape(text[m.start : m.end])}</mark>")
        at = m.end
    out.append(html.escape(text[at:]))
    return "".join(out)


def _tqdm_progress() -> Optional[Progress]:
    try:
        from tqdm.auto import tqdm  # type: ignore[import-untyped,import-not-found,unused-ignore]
    except ImportError:
        return None
    bars: Dict[str, Any] = {}

    def update(stage: str, done: int, total: int) -> None:
        bar = bars.get(stage)
        if bar is None:
            unit = {"pages": "page", "shards": "shard"}.get(stage, "chunk")
            bar = bars[stage] = tqdm(total=total, desc=stage, unit=unit)
        bar.total = total
        bar.n = done
        bar.refresh()
        if done >= total:
            bar.close()

    return update


def _progress(progress: Union[bool, Progress, None]) -> Optional[Progress]:
    if progress is True:
        bar = _tqdm_progress()
        if bar is None:
            return lambda stage, done, total: print(f"\r{stage}: {done}/{total}", end="\n" if done >= total else "", flush=True)
        return bar
    if progress is False or progress is None:
        return None
    if not callable(progress):
        raise TypeError("progress must be True, False, None or a callable(stage, done, total)")
    return progress


def _options(**kw: Any) -> Optional[str]:
    """The options set (not None) as the core's JSON; NaN and infinities are refused."""
    set_ = {k: v for k, v in kw.items() if v is not None}
    if not set_:
        return None
    try:
        return json.dumps(set_, allow_nan=False)
    except ValueError as e:
        raise InvalidArgumentError(f"options: {e}", "invalid_argument", {"detail": str(e)}) from None


def _strings(name: str, value: Union[str, Sequence[str], None]) -> Optional[List[str]]:
    if value is None:
        return None
    if isinstance(value, str):
        return [value]
    out = list(value)
    for v in out:
        if not isinstance(v, str):
            raise TypeError(f"{name} must be strings, got {type(v).__name__}")
    return out


def _search_options(
    query: Any,
    limit: Optional[int],
    lanes: Union[str, Sequence[str], None],
    tags: Union[str, Sequence[str], None],
    types: Union[str, Sequence[str], None],
    scope: Optional[str],
    chunks: bool,
    **more: Any,
) -> Optional[str]:
    """The SearchOptions JSON shared by :meth:`Index.search` and :meth:`Index.rank`."""
    if not isinstance(query, str):
        raise TypeError(f"query must be a str, got {type(query).__name__}")
    return _options(
        limit=limit,
        lanes=_strings("lanes", lanes),
        tags=_strings("tags", tags),
        types=_strings("types", types),
        scope=scope,
        chunks=chunks or None,
        **more,
    )


@functools.lru_cache(maxsize=256, typed=True)
def _cached_options(
    limit: Optional[int],
    lanes: Union[str, Sequence[str], None],
    tags: Union[str, Sequence[str], None],
    types: Union[str, Sequence[str], None],
    scope: Optional[str],
    chunks: bool,
    typos: bool = True,
    usage_modes: Union[str, Sequence[str], None] = None,
    explain: bool = False,
    always: Optional[str] = None,
    snippets: bool = True,
    facets: bool = False,
    since: Optional[str] = None,
    until: Optional[str] = None,
) -> Optional[str]:
    """:func:`_search_options` for hashable arguments, made once: :meth:`Index.search` and
    :meth:`Index.rank` are called per query in loops, where building the JSON cost a fifth
    of a ranking."""
    return _search_options(
        "", limit, lanes, tags, types, scope, chunks,
        usage_modes=_strings("usage_modes", usage_modes),
        explain=explain or None,
        always=always,
        snippets=None if snippets else False,
        facets=facets or None,
        since=since,
        until=until,
        typos=None if typos else False,
    )


def _options_for(query: Any, *args: Any) -> Optional[str]:
    """The options of :meth:`Index.search` and :meth:`Index.rank` (``args`` as
    :func:`_cached_options` takes them): cached when every argument is hashable."""
    if not isinstance(query, str):
        raise TypeError(f"query must be a str, got {type(query).__name__}")
    try:
        return _cached_options(*args)
    except TypeError:  # lists (unhashable), or a wrong type: said by the uncached call
        return _cached_options.__wrapped__(*args)


VectorLike = Union["np.ndarray", Sequence[float]]


def _array(value: Any) -> Any:
    """A numpy array as it is (the native module checks its dtype and shape), a sequence of
    floats as a float32 array."""
    if value is None or isinstance(value, np.ndarray):
        return value
    if isinstance(value, (str, bytes)):
        raise TypeError("vectors must be numpy arrays or sequences of floats")
    with np.errstate(over="ignore"):  # too large for float32 becomes inf, which core refuses
        return np.asarray(value, dtype=np.float32)


def _model_candidates() -> List[str]:
    """The model folders of the installed model packages (entry point group
    ``wikidex.models``, each a ``path()`` function), for the core's default-model rule, which
    picks among them. A package that fails to import is left out, as the core leaves out a
    folder it cannot use."""
    # Reading every installed distribution's metadata takes tens of milliseconds in a large
    # environment; it is done again only when sys.path or one of its folders changed (an
    # install adds a .dist-info folder, which changes its parent's mtime).
    key = tuple((p, _mtime(p)) for p in sys.path)
    if _CANDIDATES and _CANDIDATES[0] == key:
        return list(_CANDIDATES[1])
    from importlib.metadata import entry_points

    if sys.version_info >= (3, 10):
        group = entry_points(group="wikidex.models")
    else:  # Python 3.9: a dict of group to entry points
        group = entry_points().get("wikidex.models", ())
    out = []
    for ep in group:
        try:
            out.append(os.fspath(ep.load()()))
        except Exception:  # noqa: BLE001 (a broken package must not break every build)
            continue
    _CANDIDATES[:] = [key, tuple(out)]
    return out


_CANDIDATES: List[Any] = []


def _mtime(path: str) -> int:
    try:
        return os.stat(path or ".").st_mtime_ns
    except OSError:
        return -1


def _build_args(
    config: Optional[Mapping[str, Any]],
    strict: bool,
    vectors: str,
    progress: Union[bool, Progress, None],
    model: Union[Model, Literal[False], None],
) -> Tuple[str, Optional[Progress], Optional[Model], Optional[List[str]]]:
    """The native build's arguments: the options' JSON, the progress callback, the model
    given, and the installed model folders when the default model is asked for."""
    options: dict = {"strict": strict, "vectors": vectors}
    if config is not None:
        options["config"] = dict(config)
    if model is not None and model is not False and not isinstance(model, Model):
        raise TypeError(f"model must be a wikidex.Model, False or None, got {type(model).__name__}")
    given = model if isinstance(model, Model) else None
    candidates = _model_candidates() if model is None else None
    return json.dumps(options, allow_nan=False), _progress(progress), given, candidates


@functools.lru_cache(maxsize=4)
def _load_model(dir: str, onnx: str, max_length: Optional[int], threads: Optional[int]) -> Model:
    """The model a pickled :class:`Model` names, loaded once per process (a Ray or
    multiprocessing worker unpickles it for every task)."""
    return Model(dir, onnx=onnx, max_length=max_length, threads=threads)


class Index:
    """A wikidex index: build it from a wiki (:meth:`build`), load it (:meth:`open`,
    :meth:`from_bytes`), search it, walk its links, check answers, and write pages.

    Safe to search from many threads at once (the GIL is released during the work); a write
    builds the next snapshot beside the current one, so searches never see half of it.
    Pickles through its blob bytes, so it crosses ``multiprocessing`` and joblib workers.
    """

    __slots__ = ("_native",)

    def __init__(self, native: "_wikidex.NativeIndex"):
        if not isinstance(native, _wikidex.NativeIndex):
            raise TypeError("use Index.build, Index.open or Index.from_bytes")
        self._native = native

    # -- making one ------------------------------------------------------------------

    @classmethod
    def build(
        cls,
        source: Union[str, os.PathLike, Mapping[str, str]],
        config: Optional[Mapping[str, Any]] = None,
        *,
        strict: bool = False,
        vectors: str = "f32",
        progress: Union[bool, Progress, None] = None,
        model: Union[Model, Literal[False], None] = None,
    ) -> "Index":
        """Builds an index from a wiki folder, or from a mapping of path (relative to the
        wiki root; ``raw/...`` for raw documents) to page text. ``config`` is the core's
        configuration (``{"bm25": {"k1": 1.2}, "fusion": {...}}``). ``strict=True`` fails
        the build on a broken page instead of skipping it. ``progress=True`` shows
        a progress bar (tqdm when installed), or pass ``callable(stage, done, total)``;
        stages are ``pages`` then, with a model, ``embeddings``. ``model`` (a :class:`Model`)
        embeds every chunk for the semantic lane (stored as ``vectors``: ``"f32"`` or
        ``"int8"``) and stays attached for queries. ``model=None`` (the default) takes the
        default model: the folder in ``$WIKIDEX_MODEL``, else an installed model package
        (``pip install wikidex-model-minilm``; any package registered in the
        ``wikidex.models`` entry point group) chosen by the wiki's languages
        (``wikidex-model-e5-small`` when one page in five or more is not in English, else
        MiniLM first; :meth:`build_report`'s ``model_reason`` says which and why, and
        ``model_notice`` which package to install when the wiki wanted e5), else none, and then
        ``semantic_off`` says that the semantic lane is off and how to turn it on. Without a
        ``language`` in ``config``, pages are analyzed in the wiki's main language when the
        analyzer stems it (``language_reason`` says which).
        ``model=False`` builds without a model and without that note.
        Pages that cannot be used are skipped and listed in :meth:`build_report`."""
        opts, cb, given, candidates = _build_args(config, strict, vectors, progress, model)
        if isinstance(source, Mapping):
            files = []
            for path, text in source.items():  # core adds them in sorted path order
                if not isinstance(path, str) or not isinstance(text, str):
                    raise TypeError("files must map str paths to str texts")
                files.append((path, text))
            return cls(_wikidex.NativeIndex.build_files(files, opts, cb, given, candidates))
        if isinstance(source, (str, os.PathLike)):
            return cls(_wikidex.NativeIndex.build_dir(os.fspath(source), opts, cb, given, candidates))
        raise TypeError("source must be a folder path or a mapping of path to text")

    @classmethod
    def merge(
        cls,
        shards: Iterable["Index"],
        config: Optional[Mapping[str, Any]] = None,
        *,
        strict: bool = False,
        vectors: str = "f32",
        progress: Union[bool, Progress, None] = None,
        model: Union[Model, Literal[False], None] = None,
    ) -> "Index":
        """Merges shards, indexes built each from part of a wiki's files (on other processes
        or machines: :func:`wikidex.distributed.build`), into the index of all their pages.
        Pages and raw documents are taken as the shards indexed them; a passage a shard
        embedded with ``model`` keeps its vector, so nothing is embedded again; the lexical
        statistics, the link graph and the semantic floor are made again over all pages. With
        the ``config``, ``vectors`` and ``model`` the shards were built with, the result is
        the index one :meth:`build` of all the files gives, byte for byte. ``model`` is as in
        :meth:`build` (``None`` takes the default model, chosen by the languages of all the
        pages; shards embedded with another model are embedded again). A page key in two
        shards is kept once, as in one build (``duplicate_key`` in :meth:`build_report`); the
        shards' own warnings and skipped files are in their reports."""
        natives = []
        for shard in shards:
            if not isinstance(shard, Index):
                raise TypeError(f"shards must be wikidex.Index objects, got {type(shard).__name__}")
            natives.append(shard._native)
        opts, cb, given, candidates = _build_args(config, strict, vectors, progress, model)
        return cls(_wikidex.NativeIndex.merge(natives, opts, cb, given, candidates))

    @classmethod
    def open(cls, path: Union[str, os.PathLike]) -> "Index":
        """Loads an index blob from a file."""
        return cls(_wikidex.NativeIndex.open(os.fspath(path)))

    @classmethod
    def sync(
        cls,
        folder: Union[str, os.PathLike],
        path: Union[str, os.PathLike],
        *,
        model: Optional[Model] = None,
        drop_vectors: bool = False,
        progress: Union[bool, Progress, None] = None,
    ) -> Tuple["Index", Record]:
        """Brings the index file at ``path`` up to date with the wiki ``folder``, as
        ``wikidex sync`` does: builds on the file when there is one (only changed files are
        read again, only new chunks embedded), else indexes every file; writes the file only
        when something changed. Anything at ``path`` that is not an index is never replaced.
        An index with embeddings needs ``model`` (else ``NoEmbedderError``) unless
        ``drop_vectors=True``. Returns the index and what changed (``added``, ``changed``,
        ``removed``, ``unchanged``, ``embedded``, ``build``, ``full``, ``written``)."""
        if model is not None and not isinstance(model, Model):
            raise TypeError(f"model must be a wikidex.Model, got {type(model).__name__}")
        native = _wikidex.NativeIndex.sync_file(
            os.fspath(folder), os.fspath(path), None, _progress(progress), model, drop_vectors
        )
        return cls(native), Record(json.loads(native.sync_record() or "{}"))

    @classmethod
    def from_bytes(cls, data: Union[bytes, bytearray, memoryview]) -> "Index":
        """Loads an index from blob bytes (``bytes``, ``bytearray`` or ``memoryview``). The
        header is checked before a mutable buffer is copied, so foreign bytes cost nothing.

        :raises TypeError: for anything else (an ``int`` is not a size here)."""
        if isinstance(data, bytes):
            return cls(_wikidex.NativeIndex.from_bytes(data))
        if not isinstance(data, (bytearray, memoryview)):
            raise TypeError(f"from_bytes takes bytes, bytearray or memoryview, not {type(data).__name__}")
        view = memoryview(data)
        if view.format != "B" or view.ndim != 1:
            view = view.cast("B")
        _wikidex.NativeIndex.check_header(bytes(view[: _wikidex.HEADER_LEN]))
        return cls(_wikidex.NativeIndex.from_bytes(view.tobytes()))

    def to_bytes(self) -> bytes:
        """The index as one portable blob (the same bytes for the same index), which
        :meth:`from_bytes` loads and a browser also reads in parts by HTTP range requests."""
        return self._native.to_bytes()

    def save(self, path: Union[str, os.PathLike]) -> None:
        """Saves the blob atomically (readers see the old file or the new one)."""
        self._native.save(os.fspath(path))

    def copy(self) -> "Index":
        """An independent copy (writes to it leave this index unchanged)."""
        return Index(self._native.copy())

    def __reduce__(self):
        return (Index.from_bytes, (self.to_bytes(),))

    def __copy__(self) -> "Index":
        return self.copy()

    def __repr__(self) -> str:
        return f"<wikidex.Index: {self._native.page_count()} pages, {self._native.chunk_count()} chunks>"

    def build_report(self) -> Optional[Record]:
        """What the build did (pages, chunks, skipped files with their codes, the pages'
        ``languages``, ``language_reason`` and ``model_reason``: which analysis language and
        model and why, ``model_notice``: which model package to install when the wiki wanted
        the multilingual one, and ``semantic_off``: when no model was given or found, that the
        semantic lane is off and how to turn it on, else ``None``), when this index was built
        in this process."""
        r = self._native.build_report()
        return None if r is None else Record(json.loads(r))

    # -- reading ---------------------------------------------------------------------

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
        """Searches the index. ``limit`` hits (default 20, at most 100); ``lanes`` to run
        (``lexical``, ``semantic``, ``token``; default all available); only pages with one
        of ``tags`` / ``types``; ``scope`` (``"global"`` or ``"user/<name>"``); ``explain``
        adds per-term BM25 scores; ``chunks`` returns chunks instead of pages; pages marked
        ``usage_mode: always`` come in ``always`` (``always="separate"``, the default) or
        first among the hits (``"first"``), and never take a slot of ``limit``;
        ``query_vector`` is the query embedded yourself, for vectors you stored with
        :meth:`set_vectors` (a 1-D float32 numpy array, or a sequence of floats); without it
        an attached :class:`Model` embeds the query. ``facets`` counts the tags and types of
        every matching page (not only the hits) into ``results.facets``: ``{pages, tags: [{value,
        count}], types: [...]}``. A query with no searchable word (empty, only stopwords)
        returns no hits, each lane skipped with the reason "the query has no searchable words
        (empty or only stopwords)". ``since`` / ``until`` (``"2024-03-12"`` or
        ``"2024-03-12T09:30:00Z"``; ``until`` with a date alone keeps that whole day) keep
        pages whose frontmatter ``updated``, ``last_updated`` or ``date`` (else the page file's
        modification time, when the index was built from a folder) is in range; pages
        without a date are left out while a date filter is set. ``typos`` (default on): a
        query word of 5 or more letters that the index does not contain also matches the words
        of the text one edit away (two for 9 letters or more; the first letter fixed), below
        exact matches, in the lexical and token lanes; ``typos=False`` matches every word
        exactly."""
        opts = _options_for(
            query, limit, lanes, tags, types, scope, chunks,
            bool(typos), usage_modes, bool(explain), always, bool(snippets), bool(facets), since, until,
        )
        return SearchResults._of(self._native.find(query, opts, _array(query_vector)))

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
        """The ranking alone: ``(page id, fused score)`` per hit, in the order of
        :meth:`search`'s ranked hits (no ``always`` pages, snippets or records), as a
        :class:`Ranking` (a sequence of those tuples, made as they are read; ``.ids`` and
        ``.scores`` give the columns). For evaluation and pipelines that only need ids; much
        cheaper per call. ``typos`` as in :meth:`search`."""
        opts = _options_for(query, limit, lanes, tags, types, scope, chunks, bool(typos))
        return self._native.rank(query, opts, None if query_vector is None else _array(query_vector))

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
        threads: Optional[int] = None,
        typos: bool = True,
    ) -> List[Ranking]:
        """:meth:`rank` for many queries with the same options, one :class:`Ranking` per
        query in order. One call releases the GIL once and spreads the queries over
        ``threads`` threads (default: every core; at most 64), so a batch scales with the
        cores where Python threads calling :meth:`rank` would queue for the GIL. Takes no
        query vector (the semantic lane embeds each query with the attached model)."""
        if isinstance(queries, str):
            raise TypeError("queries must be a sequence of str, not one str")
        opts = _search_options(
            "", limit, lanes, tags, types, scope, chunks, typos=None if typos else False
        )
        return self._native.rank_many(list(queries), opts, threads)

    def prompt_block(self, results: SearchResults) -> Record:
        """A compact block for an agent's context (citation headers, summaries, best chunks,
        sources) and the chunk ids it offers (``offered``, for :meth:`verify`)."""
        if not isinstance(results, SearchResults):
            raise TypeError("prompt_block takes the SearchResults of Index.search")
        return Record(json.loads(self._native.prompt_block(json.dumps(results.to_dict()))))

    def page_record(self, key: str, scope: Optional[str] = None) -> Record:
        """A page: frontmatter fields, ``body`` and ``chunks`` (spans into the body)."""
        return Record(json.loads(self._native.page_record(key, scope)))

    page = page_record

    def chunk(self, id: str) -> Record:
        """A chunk by id (``<page>::chunk_<n>`` or ``raw/<doc>::chunk_<n>``)."""
        return Record(json.loads(self._native.chunk(id)))

    def lint(self) -> Record:
        """What to fix in the wiki: ``issues`` (code, page, target, severity, message),
        ``errors`` and ``warnings`` (counts)."""
        return Record(json.loads(self._native.lint()))

    def neighbors(
        self,
        seeds: Union[str, Sequence[str]],
        *,
        depth: Optional[int] = None,
        min_confidence: Optional[float] = None,
        max_nodes: Optional[int] = None,
        scope: Optional[str] = None,
    ) -> Record:
        """The pages linked from ``seeds`` to ``depth`` (≤ 2), with each edge's type,
        confidence and evidence, and the chain from the seeds."""
        opts = _options(depth=depth, min_confidence=min_confidence, max_nodes=max_nodes, scope=scope)
        return Record(json.loads(self._native.neighbors(_strings("seeds", seeds) or [], opts)))

    def query_with_evidence(self, query: str, **options: Any) -> Record:
        """A search expanded along the graph, with the supporting chunks."""
        return Record(json.loads(self._native.query_with_evidence(query, _options(**options))))

    def pointers(self, key: str, scope: Optional[str] = None) -> tuple:
        """A page's raw-source pointers (``chunk``, ``weight``)."""
        return _freeze(json.loads(self._native.pointers(key, scope)))

    def verify(self, answer: str, cited: Sequence[str] = (), offered: Sequence[str] = ()) -> Record:
        """Each citation's verdict: ``quote``, ``paraphrase``, ``drifted``, ``unknown``, ...
        (``id@hash`` carries the hash the model saw)."""
        return Record(json.loads(self._native.verify(answer, _strings("cited", cited) or [], _strings("offered", offered) or [])))

    def check_answer(self, answer: str, cited: Sequence[str] = (), offered: Sequence[str] = ()) -> Record:
        """:meth:`verify` with the ids written in the answer merged in, plus the sentences
        that cite nothing (``support.uncited``) or that nothing supports."""
        return Record(json.loads(self._native.check_answer(answer, _strings("cited", cited) or [], _strings("offered", offered) or [])))

    def uncited_support(self, answer: str) -> Record:
        """The answer's sentences that a chunk supports but that cite nothing, and those no
        chunk supports."""
        return Record(json.loads(self._native.uncited_support(answer)))

    # -- writing ---------------------------------------------------------------------

    def upsert_page(self, path: str, text: str, *, allow_dangling: bool = False) -> Record:
        """Adds or replaces the page at ``path``; refuses links to missing pages unless
        ``allow_dangling``. The index is unchanged after an error."""
        return Record(json.loads(self._native.upsert_page(path, text, _options(allow_dangling=allow_dangling or None))))

    def delete_page(self, key: str, scope: Optional[str] = None) -> Record:
        """Removes a page; reports the pages whose links it breaks."""
        return Record(json.loads(self._native.delete_page(key, scope)))

    def rename_page(self, key: str, new_key: str, scope: Optional[str] = None) -> Record:
        """Renames a page (its old key becomes a redirect); returns the new path and text."""
        return Record(json.loads(self._native.rename_page(key, new_key, scope)))

    # -- vectors ---------------------------------------------------------------------

    def passages(self) -> List[str]:
        """The text each chunk's vector is made from, in chunk order."""
        return self._native.passages()

    def set_vectors(
        self, model_id: str, fingerprint: str, vectors: Union["np.ndarray", Sequence[Sequence[float]]], encoding: str = "f32"
    ) -> None:
        """Stores your own vectors, one row per passage of :meth:`passages`, as ``f32`` or
        ``int8`` (rows are normalized; queries then need ``query_vector``, or a
        :class:`Model` with this ``fingerprint``). ``vectors`` is a 2-D C-contiguous
        ``numpy.float32`` array of shape ``(len(passages()), dim)``, read without a copy per
        row, or a list of lists of floats. Another dtype, ndim or shape, or a value that is
        not finite, raises :class:`InvalidArgumentError` (``invalid_argument``)."""
        self._native.set_vectors(model_id, fingerprint, _array(vectors), encoding)

    def attach_model(self, model: Model) -> None:
        """Attaches the model that embeds queries (and the chunks of pages written later),
        for an index loaded from a blob built with it: the semantic lane then runs on plain
        text queries. Raises :class:`ModelError` (``model_mismatch``) when the index holds
        vectors of another model. A pickled or saved index does not carry its model."""
        if not isinstance(model, Model):
            raise TypeError(f"model must be a wikidex.Model, got {type(model).__name__}")
        self._native.attach_model(model)

    # -- query log -------------------------------------------------------------------

    def set_query_log(
        self,
        target: Union[str, os.PathLike, Callable[[Dict[str, Any]], None], None],
        *,
        origin: str = "python",
    ) -> None:
        """Logs every search and citation check: to a JSON Lines file (a path; read it back
        with ``wikidex insights FILE``), or to ``callback(entry)`` with each entry as a dict
        (time, origin, query, filters, results, top ids, lane statuses, ms, verdicts).
        ``None`` stops logging. Off by default; the file is written from a background thread,
        and a callback runs in the searching thread (keep it quick)."""
        if target is None:
            self._native.set_query_log(None, None, origin)
        elif isinstance(target, (str, os.PathLike)):
            self._native.set_query_log(os.fspath(target), None, origin)
        elif callable(target):
            fn = target
            self._native.set_query_log(None, lambda entry: fn(json.loads(entry)), origin)
        else:
            raise TypeError("target must be a path, a callable or None")

    # -- agent tools -----------------------------------------------------------------

    def tools(self) -> List[Dict[str, Any]]:
        """The agent tools (``search``, ``read_pages``, ``read_chunks``, ``neighbors``,
        ``verify``): name, description and JSON Schema of the arguments, as an LLM API takes
        them."""
        return json.loads(self._native.tools())

    def call_tool(self, name: str, args: Union[Mapping[str, Any], str, None] = None) -> Dict[str, Any]:
        """Runs an agent tool: ``{"text": ... for the model, "data": ... structured}``."""
        if args is None:
            args = {}
        payload = args if isinstance(args, str) else json.dumps(dict(args), allow_nan=False)
        return json.loads(self._native.call_tool(name, payload))

    def reset_turn(self) -> None:
        """Starts a new agent turn (the drill-down count of the tools goes back to 0)."""
        self._native.reset_turn()

    def set_tool_limits(self, *, max_results: int = 10, max_drilldowns: int = 20, max_chars: int = 8000) -> None:
        """The agent tools' limits: hits per search, drill-down calls per turn, characters
        of a result's text."""
        self._native.set_tool_limits(json.dumps({"max_results": max_results, "max_drilldowns": max_drilldowns, "max_chars": max_chars}))


class IndexFile:
    """An index file searched in parts: :meth:`open` reads only the blob's head, and each
    :meth:`search`, :meth:`page_record` or :meth:`chunk` reads from the open file the parts it needs (the
    dictionary shards and postings of the query's words, the vectors' section for the
    semantic lane, then the pages of the hits), which stay loaded for the next. The answers
    are those of :meth:`Index.open`'s index; a first search of a large index comes long before
    a whole load would finish (a million chunks: 0.4 s, against 7 s). For
    searching and reading pages only: walk links, check answers or write pages with
    :class:`Index`.

    The file stays open; a save that replaces it meanwhile (by renaming, as
    :meth:`Index.save` does) leaves this reader on the blob it opened. Calls from several
    threads take turns (one that waits holds no GIL)."""

    __slots__ = ("_native",)

    def __init__(self, native: "_wikidex.NativeIndexFile"):
        if not isinstance(native, _wikidex.NativeIndexFile):
            raise TypeError("use IndexFile.open")
        self._native = native

    @classmethod
    def open(cls, path: Union[str, os.PathLike]) -> "IndexFile":
        """Opens the index file at ``path`` and reads its head."""
        return cls(_wikidex.NativeIndexFile.open(os.fspath(path)))

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
        """Searches as :meth:`Index.search` does, with the same arguments and answers,
        reading the parts of the file the search needs first. The semantic lane runs with an
        attached :class:`Model` (:meth:`attach_model`) or a ``query_vector``."""
        opts = _options_for(
            query, limit, lanes, tags, types, scope, chunks,
            bool(typos), usage_modes, bool(explain), always, bool(snippets), bool(facets), since, until,
        )
        return SearchResults(json.loads(self._native.search(query, opts, _array(query_vector))))

    def page_record(self, key: str, scope: Optional[str] = None) -> Record:
        """A page, as :meth:`Index.page_record` gives it, reading its part of the file first."""
        return Record(json.loads(self._native.page_record(key, scope)))

    def chunk(self, id: str) -> Record:
        """A chunk by id, as :meth:`Index.chunk` gives it, reading its page's part of the
        file (or the raw layer) first."""
        return Record(json.loads(self._native.chunk(id)))

    def attach_model(self, model: Model) -> None:
        """Attaches the model that embeds queries, as :meth:`Index.attach_model` does: a
        search of a file with vectors then reads their section. Raises :class:`ModelError`
        (``model_mismatch``) when the file holds vectors of another model."""
        if not isinstance(model, Model):
            raise TypeError(f"model must be a wikidex.Model, got {type(model).__name__}")
        self._native.attach_model(model)

    @property
    def loaded(self) -> Tuple[int, int]:
        """``(bytes read so far, the file's length)``."""
        return self._native.loaded()

    def __repr__(self) -> str:
        read, length = self.loaded
        return f"IndexFile({read} of {length} bytes read)"


class ShardedIndex:
    """Indexes of parts of one wiki (shards, each built from some of its files, as
    :func:`wikidex.distributed.build_sharded` builds them on a Ray cluster) searched as one,
    without merging them: :meth:`rank` gives what one index of all their pages gives, the same
    pages in the same order with the same scores. A query is analyzed against the wiki's
    dictionary (every shard's words, with their frequencies summed), each shard scores its
    chunks with the wiki's statistics, and the lanes' candidates of every shard are fused once.

    It searches the shards as they were when it was made (a later write to one is not seen).
    It pickles as its shards and the model given, so it crosses to Ray workers and
    ``multiprocessing`` as an :class:`Index` does.
    ``model`` (default: the first shard's) embeds text queries for the semantic lane and
    measures the lane's relevance floor over every shard's vectors. The semantic lane is exact
    while each shard holds fewer than 50,000 vectors; above, each shard's binary codes choose
    which vectors it scores, as one index's do, so candidates may differ where scores nearly
    tie.

    :raises TypeError: for a shard that is not a :class:`wikidex.Index`, or a model that is not
        a :class:`wikidex.Model`.
    :raises wikidex.InvalidArgumentError: for no shards, shards built with different settings
        or whose vectors come from different models, or a page in two shards.
    """

    __slots__ = ("_native", "_shards", "_model")

    def __init__(self, shards: Sequence[Index], *, model: Optional[Model] = None):
        shards = tuple(shards)
        for shard in shards:
            if not isinstance(shard, Index):
                raise TypeError(f"shards must be wikidex.Index objects, got {type(shard).__name__}")
        if model is not None and not isinstance(model, Model):
            raise TypeError(f"model must be a wikidex.Model or None, got {type(model).__name__}")
        self._native = _wikidex.NativeSharded([s._native for s in shards], model)
        self._shards = shards
        self._model = model

    def __reduce__(self):
        # As its shards (their blobs) and the model given (its folder and options): it
        # crosses to Ray workers, multiprocessing and joblib as an Index does.
        return (_sharded, (self._shards, self._model))

    @property
    def shards(self) -> Tuple[Index, ...]:
        """The shards, in the order given."""
        return self._shards

    def shard_of(self, page_id: str) -> Optional[Index]:
        """The shard holding the page with this id (``key`` or ``user/<name>/<key>``, as
        :meth:`rank` gives it), or ``None``: where to read a hit's page
        (``shard.page(page_id)``), its chunks or its links."""
        at = self._native.shard_of(page_id)
        return None if at is None else self._shards[at]

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
        """``(page id, fused score)`` per hit, as :meth:`Index.rank` of one index of every
        shard's pages gives them."""
        opts = _options_for(query, limit, lanes, tags, types, scope, chunks, bool(typos))
        return self._native.rank(query, opts, None if query_vector is None else _array(query_vector))

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
        """Searches as :meth:`Index.search` of one index of every shard's pages does, with the
        same arguments and the same answers, record for record: the hits with their snippets,
        lanes and explanations, the ``always`` pages, facets and phrases. Each hit's record is
        made by the shard holding its page."""
        opts = _options_for(
            query, limit, lanes, tags, types, scope, chunks,
            bool(typos), usage_modes, bool(explain), always, bool(snippets), bool(facets), since, until,
        )
        vector = None if query_vector is None else _array(query_vector)
        return SearchResults(json.loads(self._native.search(query, opts, vector)))

    def verify(self, answer: str, cited: Sequence[str] = (), offered: Sequence[str] = ()) -> Record:
        """Each citation's verdict, as :meth:`Index.verify` of one index of every shard's pages
        gives them: each cited or offered id read from the shard holding its chunk or page."""
        return Record(json.loads(self._native.verify(answer, _strings("cited", cited) or [], _strings("offered", offered) or [])))

    def check_answer(self, answer: str, cited: Sequence[str] = (), offered: Sequence[str] = ()) -> Record:
        """:meth:`verify` with the ids written in the answer merged in, plus the sentences that
        cite nothing or that nothing supports, as :meth:`Index.check_answer` of one index of
        every shard's pages gives them."""
        return Record(json.loads(self._native.check_answer(answer, _strings("cited", cited) or [], _strings("offered", offered) or [])))

    def uncited_support(self, answer: str) -> Record:
        """The answer's sentences that a chunk supports but that cite nothing, and those no
        chunk supports, as :meth:`Index.uncited_support` of one index of every shard's chunks
        finds them (each sentence's best support the best over the shards)."""
        return Record(json.loads(self._native.uncited_support(answer)))

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
        threads: Optional[int] = None,
        typos: bool = True,
    ) -> List[Ranking]:
        """:meth:`rank` for many queries with the same options, as :meth:`Index.rank_many`."""
        if isinstance(queries, str):
            raise TypeError("queries must be a sequence of str, not one str")
        opts = _search_options(
            "", limit, lanes, tags, types, scope, chunks, typos=None if typos else False
        )
        return self._native.rank_many(list(queries), opts, threads)

    def __repr__(self) -> str:
        return (
            f"ShardedIndex({len(self._shards)} shards, {self.page_count} pages, "
            f"{self.chunk_count} chunks)"
        )


def _sharded(shards: Sequence[Index], model: Optional[Model]) -> ShardedIndex:
    """A :class:`ShardedIndex` unpickled."""
    return ShardedIndex(shards, model=model)


def parse_headers(text: str) -> tuple:
    """The citation headers (``[page <key> · chunk <id> · score <s>] <title>``) in ``text``."""
    return _freeze(json.loads(_wikidex.parse_headers(text)))
