#!/usr/bin/env bash
# The Chromium the browser tests drive (through playwright-core): Debian's `chromium` from apt,
# installed only when /usr/bin/chromium is missing. Prints its path.
#
#   scripts/chromium.sh          # make test-wasm, make test-site call it
#
# Not `npx playwright install`: it downloads a browser build from a website, which this
# project never does (only package registries). The tests launch it with
# `executablePath: '/usr/bin/chromium'` (bindings-wasm/tests/browser/chromium.mjs).
set -euo pipefail

bin=/usr/bin/chromium
log() { echo "chromium: $*" >&2; }

if [ ! -x "$bin" ]; then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    log "installing Debian's chromium with apt-get"
    $sudo apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends chromium >&2
fi
[ -x "$bin" ] || { log "$bin is still missing after apt-get install chromium"; exit 1; }
echo "$bin"
