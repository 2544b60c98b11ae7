#!/usr/bin/env bash
# The files of a site's search bundle besides the index (`wikidex site` writes them next to
# it): the browser's search module (bindings-wasm/pkg-search, from `make wasm`), the search
# UI (bindings-wasm/ui, all but its .md and .d.ts), and in semantic/ the module with the model
# runner (bindings-wasm/pkg-full: written by `wikidex site --model` only), copied into DEST.
# The Node package ships them in its site/ folder for `npx wikidex site`; the CLI embeds the
# same files (cli/build.rs).
#
#   scripts/site-assets.sh DEST
set -euo pipefail
dest=${1:?usage: scripts/site-assets.sh DEST}
root=$(cd "$(dirname "$0")/.." && pwd)
module=$root/bindings-wasm/pkg-search
full=$root/bindings-wasm/pkg-full
for f in "$module"/{wikidex_wasm.js,wikidex_wasm_bg.wasm,ranged.js} "$full"/{wikidex_wasm.js,wikidex_wasm_bg.wasm}; do
	[ -f "$f" ] || { echo "site-assets.sh: $f is missing: run make wasm" >&2; exit 1; }
done
rm -rf "$dest"
mkdir -p "$dest/semantic"
cp "$module/wikidex_wasm.js" "$module/wikidex_wasm_bg.wasm" "$module/ranged.js" "$dest/"
cp "$full/wikidex_wasm.js" "$full/wikidex_wasm_bg.wasm" "$dest/semantic/"
find "$root/bindings-wasm/ui" -maxdepth 1 -type f ! -name '.*' ! -name '*.md' ! -name '*.d.ts' -exec cp {} "$dest/" \;
