"""The exceptions of wikidex: one per kind of failure, each carrying the core's error record.

Every failure of the core has a stable ``code`` (the same in Rust, the CLI, Python, Node and
the browser), a ``message`` for people and ``details`` (a dict) for programs. The classes
also derive from the Python built-in that fits, so ``except ValueError`` and ``except
OSError`` catch what they would expect.
"""

from __future__ import annotations

import json
from typing import Any, Dict


class WikidexError(Exception):
    """A failure of the wikidex core, with its stable ``code``, ``message`` and ``details``."""

    code: str
    message: str
    details: Dict[str, Any]

    def __init__(self, message: str, code: str = "internal", details: Dict[str, Any] | None = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = dict(details or {})

    def __str__(self) -> str:
        return f"[{self.code}] {self.message}"

    def __reduce__(self):  # keep code and details across pickling (multiprocessing)
        return (_rebuild, (type(self).__name__, self.code, self.message, self.details))


class InvalidArgumentError(WikidexError, ValueError):
    """A bad argument: out of range, malformed, too large (``invalid_argument``,
    ``too_large``, ``invalid_input``)."""


class NotFoundError(WikidexError, LookupError):
    """No such page or chunk (``unknown_page``, ``unknown_chunk``)."""


class IndexFormatError(WikidexError, ValueError):
    """Bytes that are not a loadable index (``not_an_index``, ``incompatible_format``,
    ``corrupt_index``, ``unsupported_language``: a language this build has no stemmer for,
    which a wheel built with the core's default features never raises)."""


class PageError(WikidexError, ValueError):
    """A page that cannot be written or used (``invalid_page``, ``duplicate_key``,
    ``dangling_links``, ``immutable_chunk``)."""


class ModelError(WikidexError):
    """The embedding model or the vectors (``model``, ``model_mismatch``, ``no_embedder``,
    ``encode``)."""


class WikidexIOError(WikidexError, OSError):
    """A file-system operation failed (``io``)."""


CLASSES = {
    "invalid_argument": InvalidArgumentError,
    "too_large": InvalidArgumentError,
    "invalid_input": InvalidArgumentError,
    "unknown_page": NotFoundError,
    "unknown_chunk": NotFoundError,
    "not_an_index": IndexFormatError,
    "incompatible_format": IndexFormatError,
    "corrupt_index": IndexFormatError,
    "unsupported_language": IndexFormatError,
    "invalid_page": PageError,
    "duplicate_key": PageError,
    "dangling_links": PageError,
    "immutable_chunk": PageError,
    "model": ModelError,
    "model_mismatch": ModelError,
    "no_embedder": ModelError,
    "encode": ModelError,
    "io": WikidexIOError,
}


def from_record(code: str, message: str, details: str) -> WikidexError:
    """The exception for a core error record (called by the native module)."""
    cls = CLASSES.get(code, WikidexError)
    return cls(message, code, json.loads(details) if details else {})


def _rebuild(name: str, code: str, message: str, details: Dict[str, Any]) -> WikidexError:
    cls = next((c for c in set(CLASSES.values()) if c.__name__ == name), WikidexError)
    return cls(message, code, details)
