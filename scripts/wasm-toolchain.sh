#!/usr/bin/env bash
# Make sure a Rust toolchain can build for wasm32-unknown-unknown, and print how to call it.
#
#   WASM_CARGO=$(scripts/wasm-toolchain.sh)     # or: make wasm-check
#   env $WASM_CARGO build -p wikidex --no-default-features --target wasm32-unknown-unknown
#
# The last (only) line on stdout is the command that replaces `cargo`; it may start with
# `env VAR=...`, so call it as `env $WASM_CARGO ...` (word-split, not quoted). Progress and errors
# go to stderr; the exit status is not 0 when no toolchain could be set up.
#
# 1. rustup (the usual case): `rustup target add wasm32-unknown-unknown`, skipped when
#    `rustup target list --installed` already lists it, and the `rust-src` component, which
#    scripts/wasm-build.sh rebuilds std from (it builds without when rust-src cannot be had).
#    Prints `$CARGO` (default `cargo`).
# 2. Fallback, when there is no rustup or it cannot add the target (offline mirror, a distro
#    Rust): Debian's rustc-web 1.85 with its std sources (rust-web-src), cargo-web, and lld-19
#    for wasm-ld, from apt (root; `apt-get update` runs first only when apt does not know the
#    packages; each package is skipped when `dpkg -s` says it is installed). Debian ships no
#    wasm32 std for rustc-web, so std is built from those sources with -Zbuild-std, which
#    RUSTC_BOOTSTRAP=1 allows on a stable compiler. Prints:
#      env RUSTC=/usr/bin/rustc RUSTC_BOOTSTRAP=1
#          CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_LINKER=wasm-ld-19
#          /usr/bin/cargo -Zbuild-std=std,panic_abort           (one line)
#    Debian's rustc 1.85 is the workspace's rust-version; dependencies that need a newer one
#    will not build with it.
#
# WASM_TOOLCHAIN=debian skips step 1 (to try the fallback on a machine that has rustup).
set -euo pipefail

target=wasm32-unknown-unknown
cargo="${CARGO:-cargo}"

log() { echo "wasm-toolchain: $*" >&2; }

if [ "${WASM_TOOLCHAIN:-}" != debian ] && command -v rustup >/dev/null 2>&1; then
    if ! rustup component list --installed 2>/dev/null | grep -q '^rust-src'; then
        log "rustup component add rust-src"
        rustup component add rust-src >&2 || log "rustup could not add rust-src"
    fi
    if rustup target list --installed 2>/dev/null | grep -qx "$target"; then
        echo "$cargo"
        exit 0
    fi
    log "rustup target add $target"
    if rustup target add "$target" >&2; then
        echo "$cargo"
        exit 0
    fi
    log "rustup could not add $target; falling back to Debian's rustc-web"
fi

if ! command -v apt-get >/dev/null 2>&1; then
    log "no rustup target and no apt-get: install Rust with rustup (https://rustup.rs), then"
    log "  rustup target add $target"
    exit 1
fi
pkgs=(rustc-web cargo-web rust-web-src lld-19)
missing=()
for p in "${pkgs[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
    sudo=()
    [ "$(id -u)" -eq 0 ] || sudo=(sudo)
    # A fresh container has no package lists; update once, only when apt lacks a package.
    for p in "${missing[@]}"; do
        if ! apt-cache show "$p" >/dev/null 2>&1; then
            log "apt-get update"
            "${sudo[@]}" apt-get update >&2
            break
        fi
    done
    log "apt-get install ${missing[*]}"
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y --no-install-recommends "${missing[@]}" >&2
fi
for f in /usr/bin/rustc /usr/bin/cargo; do
    [ -x "$f" ] || { log "$f missing after installing ${pkgs[*]}"; exit 1; }
done
command -v wasm-ld-19 >/dev/null || { log "wasm-ld-19 missing after installing lld-19"; exit 1; }

echo "env RUSTC=/usr/bin/rustc RUSTC_BOOTSTRAP=1" \
    "CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_LINKER=wasm-ld-19" \
    "/usr/bin/cargo -Zbuild-std=std,panic_abort"
