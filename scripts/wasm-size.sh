#!/usr/bin/env bash
# What the browser module's bytes are made of, per function and per crate.
#
#   scripts/wasm-size.sh          # or: make wasm-size
#
# 1. scripts/wasm-build.sh (the module exactly as shipped; its link also writes the linker's
#    map, target/wasm32-unknown-unknown/wasm/wikidex_wasm.map).
# 2. twiggy (pinned below), installed with `cargo install --locked` only when the installed one
#    differs (about 3 CPU minutes, once).
# 3. wasm-bindgen again with the function names kept (--keep-debug) into target/wasm-size/,
#    then `twiggy top` (the largest functions and data) and `twiggy garbage` (what nothing
#    reaches), and scripts/wasm-size.py: code and read-only data per crate, raw and gzipped.
set -euo pipefail
cd "$(dirname "$0")/.."

twiggy_version=0.8.0
cargo="${CARGO:-cargo}"
log() { echo "wasm-size: $*" >&2; }

CARGO="$cargo" scripts/wasm-build.sh

installed=$(twiggy --version 2>/dev/null | awk '{ print $2 }' || true)
if [ "$installed" != "$twiggy_version" ]; then
    log "cargo install twiggy $twiggy_version (installed: ${installed:-none})"
    "$cargo" install --locked twiggy --version "$twiggy_version"
fi

built=target/wasm32-unknown-unknown/wasm
out=target/wasm-size
mkdir -p "$out"
wasm-bindgen --target web --keep-debug --out-dir "$out" "$built/wikidex_wasm.wasm"
module="$out/wikidex_wasm_bg.wasm"

echo
echo "== twiggy top: the largest items (names kept, so the name section is one of them)"
twiggy top -n 30 "$module"
echo
echo "== twiggy garbage: items nothing reaches"
twiggy garbage -n 10 "$module"
echo
echo "== per crate (scripts/wasm-size.py)"
python3 scripts/wasm-size.py "$module" "$built/wikidex_wasm.map"
