#!/usr/bin/env bash
# Build the browser module (bindings-wasm, the lexical build) into bindings-wasm/pkg: an ES
# module (`--target web`: `init`/`initSync` take the .wasm bytes or a URL) with its .d.ts.
#
#   scripts/wasm-build.sh          # or: make wasm
#
# 1. The wasm32 toolchain from scripts/wasm-toolchain.sh (skips itself when installed).
# 2. cargo build -p wikidex-wasm for wasm32-unknown-unknown in the workspace's `wasm` profile
#    (release with opt-level "z", full LTO, one codegen unit; cargo skips it when nothing
#    changed). The linker writes its map beside the module (scripts/wasm-size.sh reads it).
# 3. wasm-bindgen-cli of exactly the wasm-bindgen version in Cargo.lock (the two must match),
#    installed with `cargo install` only when the installed one differs. `--locked` first; when
#    the index no longer has a locked dependency (a yanked crate), without it.
# 4. wasm-bindgen --target web, skipped when pkg/ is newer than the .wasm.
# Prints the sizes of the .wasm and the .js, raw and gzipped (gzip -9). No wasm-opt pass yet
# (and not Debian's binaryen, which lags the features rustc emits).
set -euo pipefail
cd "$(dirname "$0")/.."

cargo="${CARGO:-cargo}"
target=wasm32-unknown-unknown
out=bindings-wasm/pkg
log() { echo "wasm-build: $*" >&2; }

WASM_CARGO=$(CARGO="$cargo" scripts/wasm-toolchain.sh)
wasm="target/$target/wasm/wikidex_wasm.wasm"
rustflags=(-Clink-arg=--Map="$PWD/${wasm%.wasm}.map")
# shellcheck disable=SC2086 # WASM_CARGO is a command line, word-split on purpose
CARGO_ENCODED_RUSTFLAGS=$(IFS=$'\x1f'; echo "${rustflags[*]}") \
    env $WASM_CARGO build -p wikidex-wasm --target "$target" --profile wasm

version=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/[^0-9.]/, ""); print; exit }' Cargo.lock)
[ -n "$version" ] || { log "no wasm-bindgen in Cargo.lock"; exit 1; }
installed=$(wasm-bindgen --version 2>/dev/null | awk '{ print $2 }' || true)
if [ "$installed" != "$version" ]; then
    log "cargo install wasm-bindgen-cli $version (installed: ${installed:-none})"
    "$cargo" install --locked wasm-bindgen-cli --version "$version" ||
        { log "--locked failed; installing without it"; "$cargo" install wasm-bindgen-cli --version "$version"; }
fi

if [ ! -f "$out/wikidex_wasm_bg.wasm" ] || [ "$wasm" -nt "$out/wikidex_wasm_bg.wasm" ]; then
    wasm-bindgen --target web --remove-name-section --remove-producers-section --out-dir "$out" "$wasm"
fi

size() {
    printf '%-28s %8d bytes raw %8d gzipped\n' "$(basename "$1")" "$(wc -c <"$1")" "$(gzip -9 <"$1" | wc -c)"
}
size "$out/wikidex_wasm_bg.wasm"
size "$out/wikidex_wasm.js"
total=$(cat "$out/wikidex_wasm_bg.wasm" "$out/wikidex_wasm.js" | wc -c)
gz=$(( $(gzip -9 <"$out/wikidex_wasm_bg.wasm" | wc -c) + $(gzip -9 <"$out/wikidex_wasm.js" | wc -c) ))
printf '%-28s %8d bytes raw %8d gzipped\n' "wasm + js" "$total" "$gz"
