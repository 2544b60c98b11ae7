#!/usr/bin/env bash
# Create/refresh the Python environment used by bench/*.py and scripts/*.py.
#
#   PY=$(scripts/py-env.sh)            # sets up <repo>/.venv if needed, prints its python
#   "$PY" bench/compare_bm25s.py --help
#   PY=$(scripts/py-env.sh scripts/model-requirements.txt)   # same venv, another requirements file
#
# The optional argument is a requirements file (relative to the current directory or to the repo
# root; default bench/requirements.txt). Every file installs into the same <repo>/.venv, so files
# must agree on shared pins (numpy).
#
# Idempotent: the venv is created only when missing, and a requirements file is installed only
# when its content (or the venv's Python) changed since its last successful install (one stamp
# file per requirements file: .venv/.req-<path with / as _>.sha256). Progress and errors go to
# stderr; the last (only) line on stdout is the absolute path of the venv's python. Override the
# base interpreter with PYTHON=...
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/.venv"
req="${1:-$root/bench/requirements.txt}"
if [ ! -f "$req" ] && [ -f "$root/$req" ]; then
    req="$root/$req"
fi
if [ ! -f "$req" ]; then
    echo "py-env: requirements file '$req' not found (from $(pwd) or $root)" >&2
    exit 1
fi
req="$(cd "$(dirname "$req")" && pwd)/$(basename "$req")"
req_name="${req#"$root"/}"
stamp="$venv/.req-${req_name//\//_}.sha256"
base_python="${PYTHON:-python3}"

# One of these at a time per checkout (make test runs two jobs at once, and pip must not
# install into one venv twice at once): the others wait here. flock is util-linux's; where it
# is missing (macOS), calls are not serialized.
if command -v flock >/dev/null 2>&1; then
    mkdir -p "$root/target"
    exec 9>"$root/target/py-env.lock"
    flock 9
fi

if ! command -v "$base_python" >/dev/null 2>&1; then
    echo "py-env: '$base_python' not found; install Python 3 (3.10+) or set PYTHON=/path/to/python3" >&2
    exit 1
fi

if [ ! -x "$venv/bin/python" ]; then
    echo "py-env: creating $venv" >&2
    if ! "$base_python" -m venv "$venv" >&2; then
        rm -rf "$venv"
        echo "py-env: '$base_python -m venv' failed. On Debian/Ubuntu: apt-get install python3-venv" >&2
        exit 1
    fi
fi
# Keep the venv out of git without touching the repo's .gitignore (as Python 3.13's venv does).
[ -f "$venv/.gitignore" ] || echo '*' >"$venv/.gitignore"
py="$venv/bin/python"

want="$( { cat "$req"; "$py" -c 'import sys; print(sys.version)'; } | sha256sum | cut -d' ' -f1)"
have="$(cat "$stamp" 2>/dev/null || true)"
if [ "$want" != "$have" ]; then
    echo "py-env: installing $req_name into $venv" >&2
    "$py" -m pip install --quiet --disable-pip-version-check --no-input -r "$req" >&2
    echo "$want" >"$stamp"
fi

echo "$py"
