#!/usr/bin/env bash
# `npm install ./bindings-node` in an empty folder, then five lines of a user's script build
# the example wiki and must rank the same top pages as `wikidex search` (the debug CLI that
# `cargo test` built); then the same from the tarball `npm pack` makes (which carries the
# addon built in place; the package has no install script: the release packages of `make
# dist` carry it in a platform package instead). Run by `make test-node` after `make node`.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
npm init -y >/dev/null
npm install --no-audit --no-fund "$root/bindings-node" >/dev/null
cat > top.mjs <<'JS'
import { Index } from 'wikidex'
const index = await Index.build(process.argv[2])
const results = await index.search(process.argv[3], { limit: 5, lanes: ['lexical', 'token'] })
console.log(results.hits.map((h) => h.page_id).join('\n'))
JS
q="why did the nightly job crash"
node top.mjs "$root/examples/wiki" "$q" > node.txt
"$root/target/debug/wikidex" build "$root/examples/wiki" -o wiki.wdx --no-embed >/dev/null 2>&1
"$root/target/debug/wikidex" search wiki.wdx "$q" -n 5 --lanes lexical,token --json \
	| node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).hits.map(h=>h.page_id).join("\n")))' > cli.txt
if ! diff -u cli.txt node.txt; then
	echo "npm-install-check: the installed package and the CLI disagree"; exit 1
fi
echo "npm-install-check: npm install ./bindings-node in an empty folder answers as the CLI ($(wc -l < node.txt) hits)"

mkdir packed && cd packed
npm init -y >/dev/null
tarball=$(cd "$root/bindings-node" && npm pack --silent --pack-destination "$dir" 2>/dev/null | tail -1)
npm install --no-audit --no-fund "$dir/$tarball" >/dev/null
test ! -L node_modules/wikidex || { echo "npm-install-check: the tarball was linked, not unpacked"; exit 1; }
cp ../top.mjs .   # resolved from this folder's node_modules, the unpacked tarball
node top.mjs "$root/examples/wiki" "$q" > node.txt
if ! diff -u ../cli.txt node.txt; then
	echo "npm-install-check: the packed tarball and the CLI disagree"; exit 1
fi
echo "npm-install-check: the npm pack tarball installs and answers as the CLI"
