"""The default model on the Python surface: the wikidex-model-minilm wheel (dist/, or built here
by scripts/model-packages.py from models/), installed into a temporary folder, is what
``Index.build("examples/wiki")`` embeds with when no model is named; without it (and without
$WIKIDEX_MODEL) the build says that the semantic lane is off and how to turn it on.

Each case runs in a child Python whose ``sys.path`` has the temporary folder or not, so what is
installed is the test's choice, not the environment's. Skipped when models/ has no MiniLM
(`make models`)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
WIKI = ROOT / "examples" / "wiki"
WHEEL = "wikidex_model_minilm-0.1.0-py3-none-any.whl"
SOURCE = ROOT / "models" / "all-MiniLM-L6-v2" / "model-int8.onnx"

# What the child reports: the semantic lane's status on a search, the model the index was
# built with, and the build report's note.
PROBE = """
import json, sys, wikidex
model = json.loads(sys.argv[1])
index = wikidex.Index.build(sys.argv[2], **({} if model is None else {"model": model}))
lanes = {l.lane: l.status for l in index.search("who do I page for an outage").lanes}
print(json.dumps({
    "semantic": lanes["semantic"],
    "semantic_off": index.build_report().semantic_off,
}))
"""


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    built = ROOT / "dist" / WHEEL
    if built.is_file():
        return built
    if not SOURCE.is_file():
        pytest.skip("models/all-MiniLM-L6-v2 is missing (make models)")
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "model-packages.py"), "--only", "minilm", "--out", str(out)],
        check=True,
    )
    return out / WHEEL


@pytest.fixture(scope="module")
def site(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel installed by pip, offline, into a folder of its own."""
    target = tmp_path_factory.mktemp("site")
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index",
         "--disable-pip-version-check", "--target", str(target), str(wheel)],
        check=True,
    )
    return target


def probe(site, model=None, env=None):
    child = {k: v for k, v in os.environ.items() if k not in ("WIKIDEX_MODEL", "PYTHONPATH")}
    if site is not None:
        child["PYTHONPATH"] = str(site)
    child.update(env or {})
    done = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(model), str(WIKI)],
        env=child, capture_output=True, text=True,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_installed_model_package_gives_the_semantic_lane_with_no_model_named(site):
    assert probe(site) == {"semantic": "ok", "semantic_off": None}


def test_without_a_model_package_the_build_says_how_to_turn_the_lane_on():
    got = probe(None)
    assert got["semantic"] == "skipped"
    assert "semantic lane is off" in got["semantic_off"]
    assert "pip install wikidex-model-minilm" in got["semantic_off"]
    assert "WIKIDEX_MODEL" in got["semantic_off"]


def test_model_false_builds_without_the_package_and_without_the_note(site):
    assert probe(site, model=False) == {"semantic": "skipped", "semantic_off": None}


def test_wikidex_model_wins_over_the_package_and_must_load(site, tmp_path):
    done = subprocess.run(
        [sys.executable, "-c", PROBE, "null", str(WIKI)],
        env={**os.environ, "PYTHONPATH": str(site), "WIKIDEX_MODEL": str(tmp_path / "nothing")},
        capture_output=True, text=True,
    )
    assert done.returncode != 0 and "nothing" in done.stderr


def test_the_package_is_the_model_make_models_writes(site):
    """Same file, same id: an index built with the package is searched by a checkout's CLI
    with models/all-MiniLM-L6-v2, and the manifest's fingerprint is the core's."""
    import wikidex

    folder = site / "wikidex_model_minilm" / "all-MiniLM-L6-v2"
    manifest = json.loads((folder / "wikidex-model.json").read_text())
    model = wikidex.Model(str(folder), onnx=manifest["onnx"])
    assert model.id == "all-MiniLM-L6-v2/model-int8"
    assert model.fingerprint == manifest["fingerprint"]
    if SOURCE.is_file():
        assert wikidex.Model(str(SOURCE.parent), onnx="model-int8.onnx").fingerprint == model.fingerprint
