"""The native module of wikidex (pyo3). Use the `wikidex` package: its `Index` wraps this one
and turns the JSON records into `wikidex.Record`s."""

from os import PathLike
from typing import Callable, List, Optional, Sequence, Tuple, Union, final

__all__ = ["NativeIndex", "parse_headers", "__version__"]

__version__: str

_Path = Union[str, PathLike[str]]
_Progress = Callable[[str, int, int], None]

@final
class NativeIndex:
    """A built or loaded index: the current snapshot, the build report, the agent tools."""

    @staticmethod
    def build_files(
        files: Sequence[Tuple[str, str]], config: Optional[str] = None, progress: Optional[_Progress] = None
    ) -> NativeIndex:
        """Builds from (path, text) pairs; `config` is the core's Config as JSON."""
    @staticmethod
    def build_dir(path: _Path, config: Optional[str] = None, progress: Optional[_Progress] = None) -> NativeIndex:
        """Builds from a wiki folder."""
    @staticmethod
    def from_bytes(data: bytes) -> NativeIndex:
        """Loads blob bytes."""
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
    def page_count(self) -> int:
        """Number of pages."""
    def chunk_count(self) -> int:
        """Number of chunks."""
    def search(self, query: str, options: Optional[str] = None) -> str:
        """SearchResults (JSON) for `query` with SearchOptions (JSON)."""
    def rank(self, query: str, options: Optional[str] = None) -> List[Tuple[str, float]]:
        """(page id, score) of the ranked hits, no records."""
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
    def set_vectors(self, model_id: str, fingerprint: str, vectors: Sequence[Sequence[float]], encoding: str) -> None:
        """Stores vectors, one per passage."""
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
