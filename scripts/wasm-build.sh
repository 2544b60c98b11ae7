#!/usr/bin/env bash
# Build the browser modules (bindings-wasm): ES modules (`--target web`: `init`/`initSync`
# take the .wasm bytes or a URL) with their .d.ts.
#   bindings-wasm/pkg/         `lexical`: the whole API without a model (features `write`,
#                              `agent`, the defaults)
#   bindings-wasm/pkg-search/  `search`: `RangedIndex` alone (no default features: no `Index`
#                              class, no writes, no page records, no agent side), for a
#                              site that loads a blob the CLI built (a quarter of `lexical`
#                              gzipped)
#   bindings-wasm/pkg-full/    `full`: `lexical` plus the model runner (feature `model`: tract
#                              and tokenizers; `Model.fromBytes`, `Index.attachModel`), built
#                              in the `wasm-full` profile (opt-level 2, no LTO, 16 codegen
#                              units: 7.5 CPU minutes cold, against ~20 for tract at "z"
#                              with full LTO; 4.4 MB gzipped) with wasm SIMD (simd128),
#                              which tract's matrix kernels need
#
#   scripts/wasm-build.sh                         # or: make wasm
#   WASM_MODULES="lexical search" scripts/wasm-build.sh   # some of them
#   WASM_SEARCH_LANGUAGES="english french" scripts/wasm-build.sh
#                              # the stemmers the search module has (default: english; the
#                              # other modules have all twelve); a blob in a language the
#                              # module lacks is `unsupported_language`
#
# 1. The wasm32 toolchain from scripts/wasm-toolchain.sh (with rustup, the target and
#    rust-src; skips itself when installed); the
#    records (types/records.d.ts) copied into bindings-wasm/types.d.ts, the module's TypeScript
#    section, by scripts/records.py (only when they differ: cargo sees no change otherwise).
# 2. cargo build (as `cargo rustc`) of wikidex-wasm for wasm32-unknown-unknown in the
#    workspace's `wasm` profile (the full module: `wasm-full`, above) (release with opt-level "z", full LTO, one codegen unit; cargo
#    skips it when nothing changed), once per module, each as a cdylib alone: built in one
#    rustc session with the rlib that Cargo.toml also asks for (for the workspace's native
#    builds), the same LTO left a module 143 KB larger raw, 12 KB larger gzipped. With rustup, std is rebuilt with the
#    module (-Zbuild-std, which RUSTC_BOOTSTRAP=1 allows on stable; the `rust-src` component
#    that wasm-toolchain.sh adds) so that it is optimized for size and LTO'd with it, and with two
#    flags that only change what a panic leaves behind: -Cpanic=immediate-abort (a panic traps at once instead of formatting a message
#    that wasm32-unknown-unknown has nowhere to write; either way JavaScript sees
#    `RuntimeError: unreachable`) and -Zlocation-detail=none (no file names and lines for
#    panic messages nobody sees). 452,275 -> 423,343 bytes gzipped (wasm + js). A toolchain
#    without them (no rust-src, a rustc older than -Cpanic=immediate-abort) builds without
#    them and says so; WASM_BUILD_STD=0 asks for that. The linker writes each module's
#    map beside it (scripts/wasm-size.sh reads it).
# 3. wasm-bindgen-cli of exactly the wasm-bindgen version in Cargo.lock (the two must match),
#    installed with `cargo install` only when the installed one differs, without its default
#    features (a TLS stack for the test runner, which this project does not use), its
#    `wasm-bindgen` binary alone, unoptimized and without debug info (a cold install took
#    1m32s against 3m35s for the optimized three binaries; it turns the full module into the
#    same bytes in 16 s against 4 s, the others in under 2 s). `--locked` first; when the
#    index no longer has a locked dependency (a yanked crate), without it. `--force`: cargo's
#    own record may still list a version whose binary is gone.
# 4. wasm-bindgen --target web, skipped when the output is newer than the .wasm; its .d.ts
#    checked to hold the records once (scripts/records.py shipped); then
#    bindings-wasm/js/ranged.js (and its .d.ts: HTTP range requests for RangedIndex) copied in.
# Prints the sizes of each .wasm and .js, raw and gzipped (gzip -9). No wasm-opt pass: binaryen
# 132's makes the module larger gzipped (the 231 KB search module: -Oz 231,364 -> 235,488 bytes).
set -euo pipefail
cd "$(dirname "$0")/.."

cargo="${CARGO:-cargo}"
target=wasm32-unknown-unknown
log() { echo "wasm-build: $*" >&2; }

WASM_CARGO=$(CARGO="$cargo" scripts/wasm-toolchain.sh)
python3 scripts/records.py write
rustflags=()
build_std=()
size_flags=(-Zunstable-options -Cpanic=immediate-abort -Zlocation-detail=none)
if [ "${WASM_BUILD_STD:-1}" = 0 ]; then
    log "WASM_BUILD_STD=0: the toolchain's prebuilt std (to measure what rebuilding it saves)"
elif [ "$WASM_CARGO" = "$cargo" ]; then
    # rustup's toolchain: its std for wasm32 is prebuilt (opt-level 3, panics with messages);
    # wasm-toolchain.sh added rust-src, its sources, when it could.
    if ! rustup component list --installed 2>/dev/null | grep -q '^rust-src'; then
        log "WARNING: no rust-src component: std is not rebuilt for size (about 30 KB more gzipped)"
    elif ! RUSTC_BOOTSTRAP=1 rustc "${size_flags[@]}" --target "$target" --print cfg >/dev/null 2>&1; then
        log "WARNING: $(rustc --version) lacks ${size_flags[*]}: std is not rebuilt for size (about 30 KB more gzipped)"
    else
        build_std=(-Zbuild-std=std,panic_abort)
        rustflags+=("${size_flags[@]}")
    fi
else
    # Debian's rustc-web already rebuilds std (wasm-toolchain.sh); its 1.85 has neither flag.
    log "WARNING: $WASM_CARGO: std is rebuilt without ${size_flags[*]} (about 30 KB more gzipped)"
fi
version=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/[^0-9.]/, ""); print; exit }' Cargo.lock)
[ -n "$version" ] || { log "no wasm-bindgen in Cargo.lock"; exit 1; }
installed=$(wasm-bindgen --version 2>/dev/null | awk '{ print $2 }' || true)
if [ "$installed" != "$version" ]; then
    log "cargo install wasm-bindgen-cli $version (installed: ${installed:-none})"
    install=(--config profile.dev.debug=false install --force --debug --bin wasm-bindgen
             --no-default-features wasm-bindgen-cli --version "$version")
    "$cargo" "${install[@]}" --locked ||
        { log "--locked failed; installing without it"; "$cargo" "${install[@]}"; }
fi

size() {
    printf '%-28s %8d bytes raw %8d gzipped\n' "$1" "$(wc -c <"$2")" "$(gzip -9 <"$2" | wc -c)"
}
modules=(${WASM_MODULES:-lexical search full})
for module in "${modules[@]}"; do
    profile=wasm module_flags=()
    case $module in
        lexical) features=() out=bindings-wasm/pkg ;;
        search) out=bindings-wasm/pkg-search
                features=(--no-default-features)
                for language in ${WASM_SEARCH_LANGUAGES:-english}; do
                    case $language in
                        english | french | german | spanish | italian | portuguese | dutch | \
                        swedish | norwegian | danish | finnish | russian)
                            features+=(--features "wikidex/stem-$language") ;;
                        *) log "WASM_SEARCH_LANGUAGES: no stemmer for '$language'"; exit 2 ;;
                    esac
                done ;;
        # The model runner's matrix kernels in tract are wasm SIMD (simd128: every browser
        # since 2021, Node 16.4); without it tract falls back to scalar code.
        full) features=(--features model) out=bindings-wasm/pkg-full profile=wasm-full
              module_flags=(-Ctarget-feature=+simd128)
              if [ "$WASM_CARGO" != "$cargo" ]; then
                  log "the full module needs rustup's wasm32 target: tract needs rustc 1.91, $WASM_CARGO is older"
                  exit 1
              fi ;;
        *) log "unknown module $module (lexical, search, full)"; exit 2 ;;
    esac
    built="target/$target/$profile"
    # `cargo rustc` passes the map flag to the module's link only (the dependencies' units stay
    # shared by both modules); each module has its own map.
    # shellcheck disable=SC2086 # WASM_CARGO is a command line, word-split on purpose
    flags=("${rustflags[@]}" "${module_flags[@]}")
    RUSTC_BOOTSTRAP=1 CARGO_ENCODED_RUSTFLAGS=$(IFS=$'\x1f'; echo "${flags[*]}") \
        env $WASM_CARGO rustc -p wikidex-wasm --lib --crate-type cdylib --target "$target" \
        --profile "$profile" "${build_std[@]}" "${features[@]}" \
        -- -Clink-arg=--Map="$PWD/$built/wikidex_wasm-$module.map"
    # Both builds write target/.../wasm/wikidex_wasm.wasm (and deps/wikidex_wasm.wasm: a cdylib's
    # file name has no hash, so cargo sees the other module's file there and links this one
    # again, about 10 s each). Keep each module's own copy, copied only when it changed, so
    # that wasm-bindgen is skipped when nothing did.
    wasm="$built/$module/wikidex_wasm.wasm"
    mkdir -p "$built/$module"
    cmp -s "$built/wikidex_wasm.wasm" "$wasm" || cp "$built/wikidex_wasm.wasm" "$wasm"
    if [ ! -f "$out/wikidex_wasm_bg.wasm" ] || [ "$wasm" -nt "$out/wikidex_wasm_bg.wasm" ]; then
        wasm-bindgen --target web --remove-name-section --remove-producers-section --out-dir "$out" "$wasm"
    fi
    python3 scripts/records.py shipped "$out/wikidex_wasm.d.ts"
    # The fetching side of RangedIndex, beside every module (plain JS, no build step).
    cp bindings-wasm/js/ranged.js bindings-wasm/js/ranged.d.ts "$out/"
    echo "$out ($module module):"
    size "  wikidex_wasm_bg.wasm" "$out/wikidex_wasm_bg.wasm"
    size "  wikidex_wasm.js" "$out/wikidex_wasm.js"
    total=$(cat "$out/wikidex_wasm_bg.wasm" "$out/wikidex_wasm.js" | wc -c)
    gz=$(( $(gzip -9 <"$out/wikidex_wasm_bg.wasm" | wc -c) + $(gzip -9 <"$out/wikidex_wasm.js" | wc -c) ))
    printf '%-28s %8d bytes raw %8d gzipped\n' "  wasm + js" "$total" "$gz"
    size "  ranged.js (when used)" "$out/ranged.js"
done
