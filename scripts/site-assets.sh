#!/usr/bin/env bash
# The files of a site's search bundle besides the index (`wikidex site` writes them next to
# it): the browser's search module (bindings-wasm/pkg-search, from `make wasm`) and the search
# UI (bindings-wasm/ui, all but its .md and .d.ts), copied into DEST. The Node package ships
# them in its site/ folder for `npx wikidex site`; the CLI embeds the same files (cli/build.rs).
#
#   scripts/site-assets.sh DEST
set -euo pipefail
dest=${1:?usage: scripts/site-assets.sh DEST}
root=$(cd "$(dirname "$0")/.." && pwd)
module=$root/bindings-wasm/pkg-search
for f in wikidex_wasm.js wikidex_wasm_bg.wasm ranged.js; do
	[ -f "$module/$f" ] || { echo "site-assets.sh: $module/$f is missing: run make wasm" >&2; exit 1; }
done
rm -rf "$dest"
mkdir -p "$dest"
cp "$module/wikidex_wasm.js" "$module/wikidex_wasm_bg.wasm" "$module/ranged.js" "$dest/"
find "$root/bindings-wasm/ui" -maxdepth 1 -type f ! -name '.*' ! -name '*.md' ! -name '*.d.ts' -exec cp {} "$dest/" \;
