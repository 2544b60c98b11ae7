#!/usr/bin/env bash
# What the browser module's bytes are made of, per function and per crate.
#
#   scripts/wasm-size.sh [lexical|search|full]     # or: make wasm-size [WASM_MODULE=search]
#
# 1. scripts/wasm-build.sh (the modules exactly as shipped; each link also writes the linker's
#    map, target/wasm32-unknown-unknown/<profile>/wikidex_wasm-<module>.map). `lexical` (the
#    default) is bindings-wasm/pkg, `search` bindings-wasm/pkg-search, `full` (the model
#    runner, profile wasm-full) bindings-wasm/pkg-full.
# 2. twiggy (pinned below), installed with `cargo install --locked` only when the installed one
#    differs (about 3 CPU minutes, once).
# 3. wasm-bindgen again with the function names kept (--keep-debug) into target/wasm-size/,
#    then `twiggy top` (the largest functions and data) and `twiggy garbage` (what nothing
#    reaches), and scripts/wasm-size.py: code and read-only data per crate, raw and gzipped.
set -euo pipefail
cd "$(dirname "$0")/.."

module=${1:-lexical}
case $module in
    lexical | search) profile=wasm ;;
    full) profile=wasm-full ;;
    *) echo "usage: $0 [lexical|search|full]" >&2; exit 2 ;;
esac
twiggy_version=0.8.0
cargo="${CARGO:-cargo}"
log() { echo "wasm-size: $*" >&2; }

CARGO="$cargo" WASM_MODULES=$module scripts/wasm-build.sh

installed=$(twiggy --version 2>/dev/null | awk '{ print $2 }' || true)
if [ "$installed" != "$twiggy_version" ]; then
    log "cargo install twiggy $twiggy_version (installed: ${installed:-none})"
    "$cargo" install --locked twiggy --version "$twiggy_version"
fi

built=target/wasm32-unknown-unknown/$profile
out=target/wasm-size/$module
mkdir -p "$out"
wasm-bindgen --target web --keep-debug --out-dir "$out" "$built/$module/wikidex_wasm.wasm"
named="$out/wikidex_wasm_bg.wasm"

echo
echo "== twiggy top: the largest items (names kept, so the name section is one of them)"
twiggy top -n 30 "$named"
echo
echo "== twiggy garbage: items nothing reaches"
twiggy garbage -n 10 "$named"
echo
echo "== per crate (scripts/wasm-size.py)"
python3 scripts/wasm-size.py "$named" "$built/wikidex_wasm-$module.map"
