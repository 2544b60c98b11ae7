"""Every code block of README.md, the book (docs/) and the package READMEs is run.

- ```python blocks run here, each file's blocks in order in one namespace, from the repo root;
- ```sh / ```bash / ```console blocks run here too, with bash, in a scratch folder holding a
  copy of examples/ (and models/ linked), `wikidex` being the debug CLI (WIKIDEX_BIN, else
  target/debug/wikidex); each file's blocks in order in one folder;
- ```js / ```javascript blocks run in bindings-node/test/docs.test.mjs;
- ```rust blocks are doc tests of the wikidex crate (`pub mod book` in core/src/lib.rs);
- data blocks (json, yaml, toml, markdown, text) are shown, not run.

A block that cannot run here says why on the line just above it: `<!-- not run: reason -->`.
Any other block (no language, html, ...) without that marker fails
`test_every_block_is_run_or_marked_not_run`.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
from docblocks import Block, blocks  # noqa: E402

PYTHON = {"python", "py"}
SHELL = {"sh", "bash", "console", "shell"}
JS = {"js", "javascript", "mjs"}
RUST = {"rust"}
DATA = {"json", "jsonl", "yaml", "yml", "toml", "markdown", "md", "text", "txt"}


def doc_files() -> list[Path]:
    """The Markdown files whose code blocks must run."""
    files = [ROOT / "README.md"]
    files += sorted((ROOT / "docs").rglob("*.md"))
    files += [ROOT / p / "README.md" for p in ("bindings-py", "bindings-node", "bindings-wasm", "cli")]
    files += sorted((ROOT / "packages").glob("*/README.md"))
    return [f for f in files if f.exists()]


def all_blocks() -> list[Block]:
    return [b for f in doc_files() for b in blocks(f)]


def files_with(langs: set[str]) -> list[Path]:
    return [f for f in doc_files() if any(b.lang in langs and b.not_run is None for b in blocks(f))]


def test_every_block_is_run_or_marked_not_run():
    bad = [
        f"{b.where()}: ```{b.lang or '(no language)'}"
        for b in all_blocks()
        if b.not_run is None and b.lang not in PYTHON | SHELL | JS | RUST | DATA
    ]
    assert not bad, "code blocks no runner runs and no `<!-- not run: reason -->` marks:\n" + "\n".join(bad)


def test_the_parser_sees_the_blocks_and_the_markers():
    found = blocks(ROOT / "README.md")
    assert any(b.lang == "python" and b.not_run is None for b in found)
    assert any(b.lang == "sh" and b.not_run for b in found), "the make demo / make test block is marked"


@pytest.mark.parametrize("path", files_with(PYTHON), ids=lambda p: str(p.relative_to(ROOT)))
def test_python_blocks_run(path: Path, monkeypatch):
    todo = [b for b in blocks(path) if b.lang in PYTHON and b.not_run is None]
    model = ROOT / "models" / "all-MiniLM-L6-v2" / "tokenizer.json"
    if any("wikidex.Model(" in b.code for b in todo) and not model.exists():
        pytest.skip("models/all-MiniLM-L6-v2 is missing: run `make models`")
    monkeypatch.chdir(ROOT)
    namespace: dict = {"__name__": "__docs__"}
    for b in todo:
        # Line numbers in tracebacks point into the Markdown file.
        code = "\n" * b.line + b.code
        try:
            exec(compile(code, str(b.path), "exec"), namespace)
        except Exception as e:  # noqa: BLE001 - say which block failed, then fail
            raise AssertionError(f"the python block at {b.where()} failed: {e!r}") from e


def wikidex_bin() -> Path:
    return Path(os.environ.get("WIKIDEX_BIN", ROOT / "target" / "debug" / "wikidex"))


def shell_code(b: Block) -> str:
    if b.lang != "console":
        return b.code
    # A console block: the commands are the lines after a `$ ` prompt.
    return "\n".join(line[2:] for line in b.code.split("\n") if line.startswith("$ ")) + "\n"


@pytest.mark.parametrize("path", files_with(SHELL), ids=lambda p: str(p.relative_to(ROOT)))
def test_shell_blocks_run(path: Path, tmp_path: Path):
    exe = wikidex_bin()
    if not exe.exists():
        pytest.skip(f"{exe} is missing: `cargo build -p wikidex-cli -p workspace-hack` (or set WIKIDEX_BIN)")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "wikidex").symlink_to(exe)
    work = tmp_path / "work"
    work.mkdir()
    shutil.copytree(ROOT / "examples", work / "examples", ignore=shutil.ignore_patterns("node_modules"))
    if (ROOT / "models").is_dir():
        (work / "models").symlink_to(ROOT / "models")
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    env.pop("WIKIDEX_MODEL", None)
    for b in blocks(path):
        if b.lang not in SHELL or b.not_run is not None:
            continue
        r = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", shell_code(b)],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert r.returncode == 0, (
            f"the shell block at {b.where()} exited {r.returncode}\n--- block\n{b.code}"
            f"--- stdout\n{r.stdout[-4000:]}\n--- stderr\n{r.stderr[-4000:]}"
        )


def test_every_page_of_the_book_is_a_doc_test_of_the_crate():
    lib = (ROOT / "core" / "src" / "lib.rs").read_text(encoding="utf-8")
    missing = [
        str(p.relative_to(ROOT))
        for p in sorted((ROOT / "docs").rglob("*.md"))
        if f'include_str!("../../{p.relative_to(ROOT)}")' not in lib
    ]
    assert '#[doc = include_str!("../../README.md")]' in lib
    assert not missing, "pages whose Rust blocks no doc test runs (add them to `pub mod book`):\n" + "\n".join(missing)


LINK = re.compile(r"\]\(([^)\s]+)\)")


def test_relative_links_of_the_readmes_resolve():
    """The book's links are checked by `mkdocs build --strict`; these files are outside it."""
    files = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", ROOT / "CHANGELOG.md"]
    files += [ROOT / p / "README.md" for p in ("bindings-py", "bindings-node", "bindings-wasm", "cli")]
    files += sorted((ROOT / "packages").glob("*/README.md"))
    broken = []
    for f in files:
        if not f.exists():
            continue
        for target in LINK.findall(f.read_text(encoding="utf-8")):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue
            path = target.split("#")[0]
            if path and not (f.parent / path).exists():
                broken.append(f"{f.relative_to(ROOT)}: {target}")
    assert not broken, "links to files that do not exist:\n" + "\n".join(broken)
