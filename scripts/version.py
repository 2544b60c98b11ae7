#!/usr/bin/env python3
"""The release version, kept in one place: `version` of `[workspace.package]` in Cargo.toml.

    python3 scripts/version.py            # print it
    python3 scripts/version.py check      # every other copy agrees (make lint runs this)
    python3 scripts/version.py set 0.2.0  # write it everywhere, then run `make node`

Every crate of the workspace inherits it (`version.workspace = true`), and the Python wheel
reads it from the binding's crate (pyproject.toml: `dynamic = ["version"]`, maturin). The
copies this script checks, and `set` rewrites, are the ones a manifest format or a generated
file forces: the path dependencies' `version =`, bindings-node's package.json and its lock
file, the version napi bakes into native.js (the loader's check of the platform package),
scripts/model-packages.py's VERSION (the model packages), the file names the model-package
tests install, and a `## <version>` section in CHANGELOG.md (checked, never written). The
release packages scripts/dist.sh stages (the npm platform package, wikidex-web) take theirs
from this file when they are made. Python 3.8+, standard library only.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SEMVER = r"\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?"
# Up to the opening quote of `version = "` in Cargo.toml's [workspace.package] table.
WORKSPACE_VERSION = r'^\[workspace\.package\]\n(?:[^\[\n][^\n]*\n)*?version = "'

# (file, pattern): group 1 of each match is a copy of the version. `count` is how many matches
# the file must have (a pattern that stops matching is an error, not a silent pass).
COPIES = [
    ("Cargo.toml", r'^wikidex = \{ path = "core", version = "(' + SEMVER + r')" \}$', 1),
    ("bindings-wasm/Cargo.toml", r'^wikidex = \{ path = "\.\./core", version = "(' + SEMVER + r')"', 1),
    ("bindings-node/package.json", r'^  "version": "(' + SEMVER + r')",$', 1),
    # The lock file's own entry and its root package's (the first two "version" lines).
    ("bindings-node/package-lock.json", r'\A\{\n  "name": "wikidex",\n  "version": "(' + SEMVER + r')",', 1),
    ("bindings-node/package-lock.json", r'^    "": \{\n      "name": "wikidex",\n      "version": "(' + SEMVER + r')",', 1),
    ("bindings-node/native.js", r"bindingPackageVersion !== '(" + SEMVER + r")'", None),
    ("bindings-node/native.js", r"expected (" + SEMVER + r") but got", None),
    ("scripts/model-packages.py", r'^VERSION = "(' + SEMVER + r')"$', 1),
    ("bindings-py/tests/test_model_package.py", r'wikidex_model_minilm-(' + SEMVER + r')-py3-none-any\.whl', 1),
    ("bindings-node/test/model-package.test.mjs", r"wikidex-model-minilm-(" + SEMVER + r")\.tgz", 1),
]


def current() -> str:
    text = (ROOT / "Cargo.toml").read_text(encoding="utf-8")
    m = re.search(WORKSPACE_VERSION + '(' + SEMVER + r')"$', text, re.M)
    if not m:
        sys.exit("version: no `version = \"X.Y.Z\"` in [workspace.package] of Cargo.toml")
    return m.group(1)


def problems(version: str) -> list:
    out = []
    for rel, pattern, count in COPIES:
        text = (ROOT / rel).read_text(encoding="utf-8")
        found = re.findall(pattern, text, re.M)
        if not found or (count is not None and len(found) != count):
            out.append(f"{rel}: expected {count or 'some'} match(es) of /{pattern}/, found {len(found)}")
        out += [f"{rel}: {v} (Cargo.toml says {version})" for v in found if v != version]
    # Every workspace member inherits the version instead of writing its own.
    for manifest in sorted(ROOT.glob("*/Cargo.toml")):
        text = manifest.read_text(encoding="utf-8")
        rel = manifest.relative_to(ROOT).as_posix()
        if rel.startswith("fuzz/") or "[package]" not in text:
            continue
        if not re.search(r"^version\.workspace = true$", text, re.M):
            out.append(f"{rel}: [package] must say `version.workspace = true`")
    pyproject = (ROOT / "bindings-py/pyproject.toml").read_text(encoding="utf-8")
    if not re.search(r'^dynamic = \[[^\]]*"version"', pyproject, re.M):
        out.append('bindings-py/pyproject.toml: the version must be `dynamic` (maturin reads the crate\'s)')
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    if not re.search(r"^## " + re.escape(version) + r"\b", changelog, re.M):
        out.append(f"CHANGELOG.md: no `## {version}` section")
    return out


def set_version(new: str) -> None:
    if not re.fullmatch(SEMVER, new):
        sys.exit(f"version: {new!r} is not X.Y.Z")
    old = current()
    cargo = ROOT / "Cargo.toml"
    text = cargo.read_text(encoding="utf-8")
    text = re.sub('(' + WORKSPACE_VERSION + ')' + re.escape(old) + '"',
                  lambda m: m.group(1) + new + '"', text, count=1, flags=re.M)
    cargo.write_text(text, encoding="utf-8")
    for rel, pattern, _ in COPIES:
        path = ROOT / rel
        text = path.read_text(encoding="utf-8")

        def swap(m: re.Match) -> str:
            s, e = m.span(1)
            return m.group(0)[: s - m.start()] + new + m.group(0)[e - m.start():]

        path.write_text(re.sub(pattern, swap, text, flags=re.M), encoding="utf-8")
    print(f"version: {old} -> {new}. Now: add `## {new}` to CHANGELOG.md, run `cargo update -w` "
          "(Cargo.lock) and `make node` (native.js), then `python3 scripts/version.py check`.")


def main(argv: list) -> int:
    if not argv:
        print(current())
        return 0
    if argv[0] == "check" and len(argv) == 1:
        version = current()
        bad = problems(version)
        if bad:
            print("version: copies that disagree with Cargo.toml's [workspace.package] version "
                  f"({version}); `python3 scripts/version.py set {version}` rewrites them:", file=sys.stderr)
            for line in bad:
                print(f"  {line}", file=sys.stderr)
            return 1
        print(f"version: {version} everywhere ({len(COPIES)} copies, every crate, pyproject, CHANGELOG)")
        return 0
    if argv[0] == "set" and len(argv) == 2:
        set_version(argv[1])
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
