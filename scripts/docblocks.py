"""The fenced code blocks of a Markdown file, with the `<!-- not run: reason -->` marker above
each, if any: what bindings-py/tests/test_docs.py runs (and checks), and what
scripts/dist-check.sh takes from the README.

    python3 scripts/docblocks.py LANG FILE   # the runnable LANG blocks of FILE, in order,
                                             # each after a `# FILE:LINE` comment
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

MARKER = re.compile(r"^\s*<!--\s*not run:\s*(\S.*?)\s*-->\s*$")
FENCE = re.compile(r"^(\s*)(```+|~~~+)\s*([^\s`]*)")


@dataclass
class Block:
    path: Path
    line: int  # 1-based line of the opening fence
    lang: str
    code: str
    not_run: str | None  # the marker's reason

    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def blocks(path: Path) -> list[Block]:
    """The fenced code blocks of a Markdown file, with the marker above each, if any."""
    lines = path.read_text(encoding="utf-8").split("\n")
    out = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, lang = m.group(1), m.group(2), m.group(3).lower()
        start = i
        body = []
        i += 1
        while i < len(lines) and not lines[i].strip().startswith(fence):
            line = lines[i]
            body.append(line[len(indent):] if line.startswith(indent) else line.lstrip())
            i += 1
        i += 1  # the closing fence
        prev = start - 1
        while prev >= 0 and not lines[prev].strip():
            prev -= 1
        marker = MARKER.match(lines[prev]) if prev >= 0 else None
        out.append(Block(path, start + 1, lang, "\n".join(body) + "\n", marker.group(1) if marker else None))
    return out


if __name__ == "__main__":
    lang, path = sys.argv[1], Path(sys.argv[2])
    runnable = [b for b in blocks(path) if b.lang == lang and b.not_run is None]
    if not runnable:
        sys.exit(f"docblocks: no runnable {lang} block in {path}")
    for b in runnable:
        print(f"# {path.name}:{b.line}\n{b.code}", end="")
