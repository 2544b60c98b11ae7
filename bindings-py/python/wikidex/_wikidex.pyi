"""The native module of wikidex (pyo3). Use the `wikidex` package: its `Index` wraps this one
and turns the JSON records into `wikidex.Record`s."""

from os import PathLike
from pathlib import PurePath
from typing import (
    Any, Callable, Dict, List, Literal, Optional, Sequence, Tuple, TypedDict, Union, final, overload,
    type_check_only,
)

import numpy
import numpy.typing
from typing_extensions import NotRequired

__all__ = ["HEADER_LEN", "Found", "FoundHit", "Model", "NativeIndex", "NativeIndexFile", "NativeCoordinator", "NativeShardSearcher", "NativeSharded", "Ranking", "folder_files", "parse_headers", "wiki_choices", "__version__"]

__version__: str
#: Bytes of a blob's header (magic, version, flags, length, checksum).
HEADER_LEN: int

_Path = Union[str, PathLike[str]]
_Progress = Callable[[str, int, int], None]
_F32 = numpy.typing.NDArray[numpy.float32]

@final
class Found:
    """A search ranked (``NativeIndex.find``), its hits made when read: the package's
    ``SearchResults`` reads it."""

    def head(self) -> str:
        """The SearchResults without their hits (JSON): ``hits`` and ``always`` empty."""
    def hits(self, always: bool = False) -> List[FoundHit]:
        """The hits of ``hits`` (or of ``always``), made now without their snippets."""

@final
class FoundHit:
    """One hit of a ``Found``: the core's record, each field converted when asked for."""

    #: The field names, in the order of the core's record (``Hit``'s keys).
    FIELDS: List[str]
    def field(self, name: str) -> Any:
        """Field ``name`` as ``json.loads`` of the record gives it; ``snippet`` is made now.
        Raises ``KeyError`` for a name that is no field."""

@final
class NativeIndexFile:
    """An index file searched in parts (the core's ``RangedFile``): the package's
    ``IndexFile`` wraps it."""

    @staticmethod
    def open(path: _Path) -> NativeIndexFile: ...
    def search(self, query: str, options: Optional[str] = None, query_vector: Optional[_F32] = None) -> str:
        """The whole SearchResults (JSON)."""
    def page_record(self, key: str, scope: Optional[str] = None) -> str: ...
    def chunk(self, id: str) -> str: ...
    def attach_model(self, model: Model) -> None: ...
    def loaded(self) -> Tuple[int, int]:
        """``(bytes read so far, the blob's length)``."""

@final
class Model:
    """An ONNX sentence model (all-MiniLM-L6-v2 or any sentence-transformers export) with its
    ``tokenizer.json``, run in process by the core (tract; no network, no Python ML stack).

    ``Model(dir)`` loads ``dir/model.onnx`` (or ``dir/<onnx>``) and ``dir/tokenizer.json``.
    ``max_length`` is the longest input in tokens (default: ``max_seq_length`` of
    ``sentence_bert_config.json`` in ``dir``, else the tokenizer's, else 512; at most the
    model's position count). A longer text is truncated, or, when ``dir`` has a
    ``wikidex-embed.json`` saying ``"long_texts": "windows"`` (multilingual-e5-small), embedded
    in windows of ``max_length`` less the special tokens whose vectors are averaged, weighted
    by their tokens. ``threads`` spreads batches over that
    many threads (default 2, at most the cores available). Raises ``WikidexIOError`` (``io``)
    when a file is missing and ``ModelError`` (``model``) when it is not a usable model.

    Pass it to ``Index.build(..., model=...)`` to embed every chunk, or attach it to a loaded
    index with ``Index.attach_model``. One model may serve many indexes and threads. It pickles
    as its folder and options (a Ray or multiprocessing worker loads it from the same path, once
    per process).

    A text's vector does not depend on the texts embedded with it: each is run padded to its
    own length rounded up to 8 tokens, in a batch of texts of that length only, so a shard built
    on another machine stores the same bits as one build of everything.
    """

    def __new__(
        cls, dir: _Path, *, onnx: str = "model.onnx", max_length: Optional[int] = None, threads: Optional[int] = None
    ) -> Model: ...
    @property
    def id(self) -> str:
        """The model id stored with an index's vectors (the folder's name, plus the file stem
        when the file is not ``model.onnx``)."""
    @property
    def fingerprint(self) -> str:
        """A hash of the model file; an index refuses a model with another fingerprint."""
    @property
    def dim(self) -> int:
        """The dimension of every vector (384 for all-MiniLM-L6-v2)."""
    @property
    def max_length(self) -> int:
        """The longest input in tokens."""
    @property
    def prompts(self) -> Dict[str, str]:
        """``{"query": ..., "passage": ...}``: what an index puts before the queries and the
        passages it has this model embed (the ``prompts`` of the folder's
        ``config_sentence_transformers.json``; ``""`` for none, as for all-MiniLM-L6-v2;
        ``"query: "`` and ``"passage: "`` for multilingual-e5-small)."""
    def embed(self, texts: Sequence[str], prompt: Optional[str] = None) -> _F32:
        """One L2-normalized vector per text, in order: a float32 array of shape
        ``(len(texts), dim)``. ``prompt`` (``"query"`` or ``"passage"``) puts the model's
        prompt of that kind before each text, as an index does; by default the texts are
        embedded as they are. The GIL is released while the model runs."""
    def __reduce__(self) -> Tuple[Any, Tuple[Any, ...]]: ...
    def tokenize(self, texts: Sequence[str], prompt: Optional[str] = None) -> List[List[int]]:
        """The token ids the model is fed for each text, after the model's ``prompt`` of that
        kind if given: special tokens included, truncated at ``max_length``, or, for a model
        that embeds long texts in windows, every window's ids one after the other (each with
        its own special tokens, so more than ``max_length`` for a long text)."""

@final
class Ranking(Sequence[Tuple[str, float]]):
    """What ``Index.rank`` returns: a read-only sequence of ``(page id, score)`` tuples, best
    first. The hits stay native until read, so a call makes one object, not one tuple per
    hit; ``ids`` and ``scores`` give the two columns at once. Equal to another ``Ranking``
    or to a list of the same tuples; pickles as that list."""

    def __len__(self) -> int: ...
    @overload
    def __getitem__(self, key: int) -> Tuple[str, float]: ...
    @overload
    def __getitem__(self, key: slice) -> List[Tuple[str, float]]: ...
    @property
    def ids(self) -> List[str]:
        """The page ids, best first."""
    @property
    def scores(self) -> _F32:
        """The fused scores, best first (1-D float32)."""
    def to_list(self) -> List[Tuple[str, float]]:
        """The hits as a list of ``(page id, score)`` tuples."""
    def __eq__(self, other: object) -> bool: ...
    def __reduce__(self) -> Tuple[Any, Tuple[List[Tuple[str, float]]]]: ...

@final
class NativeSharded:
    """Indexes of parts of one wiki searched as one (the core's ShardedIndex): its rankings
    are one index's of every shard's pages."""
    def __new__(cls, shards: Sequence[NativeIndex], model: Optional[Model] = None) -> "NativeSharded": ...
    def rank(
        self, query: str, options: Optional[str] = None, query_vector: Optional[_F32] = None
    ) -> Ranking:
        """(page id, score) of the ranked hits, as one index of every shard's pages gives them."""
    def rank_many(
        self, queries: Sequence[str], options: Optional[str] = None, threads: Optional[int] = None
    ) -> List[Ranking]:
        """rank for each query, answers in query order, over ``threads`` threads."""
    def search(
        self, query: str, options: Optional[str] = None, query_vector: Optional[_F32] = None
    ) -> str:
        """The whole SearchResults (JSON) one index of every shard's pages gives."""
    def verify(self, answer: str, cited: Sequence[str], offered: Sequence[str]) -> str:
        """The citations' verdicts (JSON) one index of every shard's pages gives."""
    def check_answer(self, answer: str, cited: Sequence[str], offered: Sequence[str]) -> str:
        """The answer's check (JSON) one index of every shard's pages gives."""
    def uncited_support(self, answer: str) -> str:
        """The answer's sentences' support (JSON) one index of every shard's chunks gives."""
    def shard_of(self, page_id: str) -> Optional[int]:
        """The position of the shard holding the page with this id."""
    @property
    def page_count(self) -> int:
        """Pages over every shard."""
    @property
    def chunk_count(self) -> int:
        """Chunks over every shard."""

@final
class NativeShardSearcher:
    """One shard's side of a sharded search held apart from its coordinator (the core's
    ShardSearcher): requests and replies as bytes."""
    def __new__(cls, index: NativeIndex) -> "NativeShardSearcher": ...
    def summary(self) -> bytes:
        """What the coordinator needs of the shard: its settings and dictionary."""
    def reply(self, request: bytes) -> bytes:
        """The reply to one of the coordinator's requests (a failure is a reply too)."""

@final
class NativeCoordinator:
    """The coordinator of shards held apart (the core's Coordinator): each round of requests
    goes through ``ask``, which takes one request per shard and returns one reply per shard."""
    def __new__(
        cls,
        summaries: Sequence[bytes],
        ask: Callable[[List[bytes]], Sequence[bytes]],
        model: Optional[Model] = None,
    ) -> "NativeCoordinator": ...
    def rank(
        self,
        query: str,
        ask: Callable[[List[bytes]], Sequence[bytes]],
        options: Optional[str] = None,
        query_vector: Optional[_F32] = None,
    ) -> Ranking:
        """(page id, score) of the ranked hits, as one index of every shard's pages gives them."""
    def rank_many(
        self,
        queries: Sequence[str],
        ask: Callable[[List[bytes]], Sequence[bytes]],
        options: Optional[str] = None,
    ) -> List[Ranking]:
        """``rank`` for many queries with one set of options, in one round through ``ask``."""
    def search(
        self,
        query: str,
        ask: Callable[[List[bytes]], Sequence[bytes]],
        options: Optional[str] = None,
        query_vector: Optional[_F32] = None,
    ) -> str:
        """The whole SearchResults (JSON) one index of every shard's pages gives, in two rounds
        through ``ask`` (three for a user's scope)."""
    @property
    def shard_count(self) -> int:
        """Shards."""
    @property
    def page_count(self) -> int:
        """Pages over every shard."""
    @property
    def chunk_count(self) -> int:
        """Chunks over every shard."""

@final
class NativeIndex:
    """A built or loaded index: the current snapshot, the build report, the agent tools."""

    @staticmethod
    def build_files(
        files: Sequence[Tuple[str, str]],
        options: Optional[str] = None,
        progress: Optional[_Progress] = None,
        model: Optional[Model] = None,
        candidates: Optional[Sequence[_Path]] = None,
    ) -> NativeIndex:
        """Builds from (path, text) pairs; `options` is the core's BuildOptions as JSON; `model`
        embeds every chunk; without it, `candidates` (model folders of installed packages)
        asks for the default model by the core's rule ($WIKIDEX_MODEL, else the first usable
        candidate, else none, said in the build report's `semantic_off`); neither: no model."""
    @staticmethod
    def build_folder_files(
        root: _Path,
        files: Sequence[str],
        options: Optional[str] = None,
        progress: Optional[_Progress] = None,
        model: Optional[Model] = None,
        candidates: Optional[Sequence[_Path]] = None,
    ) -> NativeIndex:
        """Builds from the files `files` (relative paths, as `folder_files` lists them) of the
        wiki folder `root`: one part of a folder built in parts; `model` and `candidates` as
        in `build_files`. A path the folder's walk does not list is skipped and reported."""
    @staticmethod
    def build_dir(
        path: _Path,
        options: Optional[str] = None,
        progress: Optional[_Progress] = None,
        model: Optional[Model] = None,
        candidates: Optional[Sequence[_Path]] = None,
    ) -> NativeIndex:
        """Builds from a wiki folder; `model` and `candidates` as in `build_files`."""
    @staticmethod
    def merge(
        shards: Sequence[NativeIndex],
        options: Optional[str] = None,
        progress: Optional[_Progress] = None,
        model: Optional[Model] = None,
        candidates: Optional[Sequence[_Path]] = None,
    ) -> NativeIndex:
        """Merges shards (indexes built each from part of the files) into the index of all
        their pages, keeping the vectors `model` made; `model` and `candidates` as in
        `build_files`."""
    @staticmethod
    def sync_file(
        dir: _Path,
        path: _Path,
        options: Optional[str] = None,
        progress: Optional[_Progress] = None,
        model: Optional[Model] = None,
        drop_vectors: bool = False,
    ) -> NativeIndex:
        """Syncs the blob at `path` with the folder `dir`."""
    @staticmethod
    def from_bytes(data: bytes) -> NativeIndex:
        """Loads blob bytes."""
    @staticmethod
    def check_header(head: bytes) -> None:
        """Checks a blob's header (its first bytes)."""
    @staticmethod
    def open(path: _Path) -> NativeIndex:
        """Loads a blob file."""
    def to_bytes(self) -> bytes:
        """The blob."""
    def save(self, path: _Path) -> None:
        """Saves the blob atomically."""
    def copy(self) -> NativeIndex:
        """A copy of the current snapshot."""
    def build_report(self) -> Optional[str]:
        """The build report (JSON), when built in this process."""
    def sync_record(self) -> Optional[str]:
        """What the sync that made this index changed (JSON), when it was synced."""
    def page_count(self) -> int:
        """Number of pages."""
    def chunk_count(self) -> int:
        """Number of chunks."""
    def find(self, query: str, options: Optional[str] = None, query_vector: Optional[_F32] = None) -> Found:
        """The search for `query` with SearchOptions (JSON) and a 1-D float32 query vector,
        ranked; its hits are made when read (``Found.hits``, each field of a ``FoundHit``)."""
    def rank(
        self, query: str, options: Optional[str] = None, query_vector: Optional[_F32] = None
    ) -> Ranking:
        """(page id, score) of the ranked hits, no records."""
    def rank_many(
        self, queries: Sequence[str], options: Optional[str] = None, threads: Optional[int] = None
    ) -> List[Ranking]:
        """rank for each query, answers in query order, over ``threads`` threads."""
    def prompt_block(self, results: str) -> str:
        """PromptBlock (JSON) for SearchResults (JSON)."""
    def page_record(self, key: str, scope: Optional[str] = None) -> str:
        """PageRecord (JSON)."""
    def chunk(self, id: str) -> str:
        """Chunk (JSON)."""
    def lint(self) -> str:
        """LintReport (JSON)."""
    def neighbors(self, seeds: Sequence[str], options: Optional[str] = None) -> str:
        """Subgraph (JSON) with TraverseOptions (JSON)."""
    def query_with_evidence(self, query: str, options: Optional[str] = None) -> str:
        """Evidence (JSON) with EvidenceOptions (JSON)."""
    def pointers(self, key: str, scope: Optional[str] = None) -> str:
        """Pointers (JSON list)."""
    def verify(self, answer: str, cited: Sequence[str], offered: Sequence[str]) -> str:
        """Verification (JSON)."""
    def check_answer(self, answer: str, cited: Sequence[str], offered: Sequence[str]) -> str:
        """AnswerCheck (JSON)."""
    def uncited_support(self, answer: str) -> str:
        """Support (JSON)."""
    def upsert_page(self, path: str, text: str, options: Optional[str] = None) -> str:
        """UpsertReport (JSON) with WriteOptions (JSON)."""
    def delete_page(self, key: str, scope: Optional[str] = None) -> str:
        """DeleteReport (JSON)."""
    def rename_page(self, key: str, new_key: str, scope: Optional[str] = None) -> str:
        """RenameReport (JSON)."""
    def passages(self) -> List[str]:
        """The text of each chunk's vector."""
    def set_vectors(self, model_id: str, fingerprint: str, vectors: _F32, encoding: str) -> None:
        """Stores vectors, one row per passage, from a 2-D C-contiguous float32 array."""
    def attach_model(self, model: Model) -> None:
        """Attaches the model that embeds queries and new chunks."""
    def tools(self) -> str:
        """The agent tools' definitions (JSON)."""
    def call_tool(self, name: str, args: str) -> str:
        """ToolResult (JSON) of one agent tool."""
    def set_query_log(
        self, path: Optional[_Path] = None, callback: Optional[Callable[[str], None]] = None, origin: str = "python"
    ) -> None:
        """Logs searches and verifies to a JSON Lines file or a callback(json)."""
    def reset_turn(self) -> None:
        """Starts a new agent turn."""
    def set_tool_limits(self, limits: str) -> None:
        """Sets ToolLimits (JSON)."""

def parse_headers(text: str) -> str:
    """The citation headers in `text` (JSON list)."""

def wiki_choices(
    files: Union[Sequence[Tuple[str, str]], _Path],
    options: Optional[str],
    candidates: Optional[Sequence[_Path]] = None,
) -> Tuple[str, Optional[Tuple[PurePath, PurePath]]]:
    """What a build of `files` (`(path, text)` pairs, or a wiki folder) with `options`
    (BuildOptions JSON) decides from all its pages: the analysis language's name (the config's,
    else by the pages' languages) and, with `candidates`, the model folder and ONNX file it
    takes by default ($WIKIDEX_MODEL, else by the pages' languages; else None)."""

def folder_files(root: _Path, options: Optional[str] = None) -> List[str]:
    """The files a build of the wiki folder `root` with `options` (BuildOptions JSON) reads:
    paths relative to it, sorted."""

# -- records ---------------------------------------------------------------------------------
# The JSON the methods above return as strings (what `json.loads` gives, and
# `wikidex.Record.to_dict()`): the core's serde records, as types/records.d.ts declares them
# for JavaScript; `scripts/records.py check` (make lint) holds these TypedDicts to that file,
# field for field. Offsets count code points here. For type checkers only: the module defines
# none of them.

_Lane = Literal["lexical", "semantic", "token"]
_UsageMode = Literal["always", "auto", "never"]
_Severity = Literal["error", "warning"]
_CitationStatus = Literal["quote", "paraphrase", "drifted", "uncited", "none", "unknown"]
_LaneStatusKind = Literal["ok", "skipped", "failed"]

@type_check_only
class Highlight(TypedDict):
    start: int
    end: int

@type_check_only
class Snippet(TypedDict):
    text: str
    highlights: List[Highlight]
    offset: int

@type_check_only
class LaneHit(TypedDict):
    lane: _Lane
    status: _LaneStatusKind
    rank: Optional[int]
    score: Optional[float]
    contribution: Optional[float]
    chunk: Optional[str]

@type_check_only
class TermScore(TypedDict):
    term: str
    weight: float
    tf: int
    df: int
    idf: float
    score: float
    matched: Optional[str]
    edits: int

@type_check_only
class Explanation(TypedDict):
    lexical: List[TermScore]
    k: float

@type_check_only
class Hit(TypedDict):
    key: str
    page_id: str
    scope: str
    path: str
    title: str
    summary: Optional[str]
    type: Optional[str]
    tags: List[str]
    score: float
    chunk: str
    chunk_hash: str
    line_start: int
    line_end: int
    headings: List[str]
    snippet: Optional[Snippet]
    lanes: List[LaneHit]
    always: bool
    stale_since: Optional[str]
    date: Optional[str]
    explain: Optional[Explanation]

@type_check_only
class LaneReport(TypedDict):
    lane: _Lane
    status: _LaneStatusKind
    reason: NotRequired[str]
    code: NotRequired[str]
    candidates: int
    weight: float
    known: Optional[float]

@type_check_only
class PhraseReport(TypedDict):
    phrases: List[str]
    matched: int
    reason: Optional[str]

@type_check_only
class FacetCount(TypedDict):
    value: str
    count: int

@type_check_only
class Facets(TypedDict):
    pages: int
    tags: List[FacetCount]
    types: List[FacetCount]

@type_check_only
class SearchResults(TypedDict):
    query: str
    truncated: bool
    terms: List[str]
    lanes: List[LaneReport]
    hits: List[Hit]
    always: List[Hit]
    facets: Optional[Facets]
    phrases: Optional[PhraseReport]

@type_check_only
class PromptBlock(TypedDict):
    text: str
    offered: List[str]

@type_check_only
class Relation(TypedDict):
    target: str
    type: str
    confidence: float
    evidence: Optional[str]
    chunk: Optional[str]

@type_check_only
class SourceRef(TypedDict):
    chunk: str
    weight: float
    hash: Optional[str]

@type_check_only
class ChunkSpan(TypedDict):
    id: str
    hash: str
    start: int
    end: int

@type_check_only
class PageRecord(TypedDict):
    id: str
    key: str
    scope: str
    path: str
    title: str
    summary: Optional[str]
    type: Optional[str]
    tags: List[str]
    refs: List[str]
    links: List[str]
    sl_refs: List[str]
    relations: List[Relation]
    usage_mode: _UsageMode
    source: Optional[str]
    sources: List[SourceRef]
    aliases: List[str]
    redirect_from: List[str]
    stale_since: Optional[str]
    archived_since: Optional[str]
    provenance: List[str]
    extra: Dict[str, Any]
    body: str
    chunks: List[ChunkSpan]
    resolved_from: Optional[str]

@type_check_only
class Chunk(TypedDict):
    id: str
    key: str
    scope: str
    path: str
    ordinal: int
    start: int
    end: int
    hash: str
    text: str
    raw: bool
    line_start: int
    line_end: int
    headings: List[str]
    table_header: Optional[str]

@type_check_only
class LintIssue(TypedDict):
    page_id: str
    code: str
    target: Optional[str]
    severity: _Severity
    message: str

@type_check_only
class LintReport(TypedDict):
    issues: List[LintIssue]
    errors: int
    warnings: int

@type_check_only
class Pointer(TypedDict):
    chunk: str
    weight: float
    hash: str

@type_check_only
class GraphNode(TypedDict):
    id: str
    key: str
    title: str
    summary: Optional[str]
    path: str
    depth: int
    confidence: float
    via: Optional[str]
    stale_since: Optional[str]
    sources: List[Pointer]
    external: List[str]

# `from` is a keyword: the field is declared in the functional syntax, the rest in a class.
_GraphEdgeFrom = TypedDict("_GraphEdgeFrom", {"from": str})

@type_check_only
class GraphEdge(_GraphEdgeFrom):
    to: str
    target: str
    type: str
    confidence: float
    written: str
    evidence: Optional[str]
    chunk: Optional[str]

@type_check_only
class Subgraph(TypedDict):
    seeds: List[str]
    unknown_seeds: List[str]
    nodes: List[GraphNode]
    edges: List[GraphEdge]
    chain: List[str]
    truncated: bool

@type_check_only
class SupportingChunk(TypedDict):
    id: str
    why: str
    hash: str
    text: str

@type_check_only
class Evidence(TypedDict):
    query: str
    graph: Subgraph
    chunks: List[SupportingChunk]

@type_check_only
class QuoteSpan(TypedDict):
    answer_start: int
    answer_end: int
    chunk_start: int
    chunk_end: int
    words: int

@type_check_only
class Verdict(TypedDict):
    id: str
    status: _CitationStatus
    page_id: Optional[str]
    hash: Optional[str]
    quote: Optional[QuoteSpan]

@type_check_only
class Verification(TypedDict):
    citations: List[Verdict]
    passed: bool

@type_check_only
class SentenceSupport(TypedDict):
    start: int
    end: int
    text: str
    cites: List[str]
    best_chunk: Optional[str]
    score: float

@type_check_only
class Support(TypedDict):
    uncited: List[SentenceSupport]
    unsupported: List[SentenceSupport]

@type_check_only
class AnswerCheck(TypedDict):
    verification: Verification
    support: Support

@type_check_only
class CitationHeader(TypedDict):
    page_id: str
    chunk: str
    score: Optional[float]
    title: str

@type_check_only
class UpsertReport(TypedDict):
    page_id: str
    replaced: bool
    chunks: int
    warnings: List[str]
    dangling: List[str]

@type_check_only
class DeleteReport(TypedDict):
    page: Dict[str, Any]
    broken: List[str]

_RenameReportFrom = TypedDict("_RenameReportFrom", {"from": str})

@type_check_only
class RenameReport(_RenameReportFrom):
    to: str
    path: str
    text: str

@type_check_only
class Skipped(TypedDict):
    path: str
    line: Optional[int]
    code: str
    reason: str

@type_check_only
class BuildWarning(TypedDict):
    """An item of `BuildReport.warnings` (the core's `record::Warning`)."""

    path: str
    message: str

@type_check_only
class LanguagePages(TypedDict):
    """An item of `LanguageMix.languages`: a language's ISO 639-3 code and its pages."""

    language: str
    pages: int

@type_check_only
class LanguageMix(TypedDict):
    """The languages of the pages (`BuildReport.languages`), most pages first."""

    languages: List[LanguagePages]
    undetected: int

@type_check_only
class BuildReport(TypedDict):
    pages: int
    chunks: int
    raw_documents: int
    raw_chunks: int
    skipped: List[Skipped]
    warnings: List[BuildWarning]
    semantic_off: Optional[str]
    languages: LanguageMix
    language_reason: Optional[str]
    model_reason: Optional[str]
    model_notice: Optional[str]

@type_check_only
class SyncRecord(TypedDict):
    full: Optional[str]
    written: bool
    added: List[str]
    changed: List[str]
    removed: List[str]
    unchanged: int
    embedded: int
    build: BuildReport

@type_check_only
class ToolDef(TypedDict):
    name: str
    description: str
    input_schema: Dict[str, Any]

@type_check_only
class ToolResult(TypedDict):
    text: str
    data: Any

@type_check_only
class LogEntry(TypedDict):
    time_ms: NotRequired[int]
    origin: str
    kind: str
    query: NotRequired[str]
    filters: Any
    results: int
    top: List[str]
    lanes: Dict[str, str]
    ms: NotRequired[float]
    verdicts: NotRequired[List[Any]]
