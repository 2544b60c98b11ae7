#!/usr/bin/env bash
# `make dist-check`: the packages in dist/ (`make dist`) installed as a user installs them, on a
# machine without Rust and without network, and the README's quickstarts run from them.
#
# 1. Prepare (may use PyPI): numpy, the wheel's one dependency, downloaded once into
#    target/dist-check/wheels (pip download; a user's pip gets it from PyPI).
# 2. The rest runs offline: in a network namespace with no interface (`unshare -n`, when this
#    machine allows it; otherwise pip --no-index and npm --offline with the registry pointed at
#    a closed port), with PATH stripped of every folder holding cargo or rustc (checked:
#    `command -v cargo` must fail), without WIKIDEX_MODEL, from empty folders under a temporary
#    directory holding a copy of examples/ only:
#    - Python: a fresh virtualenv; `pip install --no-index --find-links dist/ wikidex
#      wikidex-model-minilm`; the README's python blocks, extracted by scripts/docblocks.py as
#      bindings-py/tests/test_docs.py does, run as written; then the semantic lane of their
#      search must be `ok` (the model package found by itself).
#    - Node: `npm install --offline` of dist/wikidex-<v>.tgz, the platform package's tarball and
#      the model tarball into an empty folder; none of them has an install script, the main one
#      carries no addon; the README's js blocks (scripts/docblocks.mjs, as docs.test.mjs gathers
#      them) run as one module; the semantic lane `ok`.
#    - Browser: dist/wikidex-web-<v>.tgz installed the same way; in Node, each module it
#      exports instantiated from its bytes, and the whole module searches the CLI's blob.
#    - CLI: the archive unpacked; `wikidex build examples/wiki` and `wikidex search`, semantic
#      `ok` (the model: the folder the Python model package installed, through WIKIDEX_MODEL,
#      as a user of the archive sets it: a release binary looks for models/ in the current
#      folder only).
#    - Site: `wikidex site examples/wiki` from the archive and `npx wikidex site` from the
#      installed npm package write the same bundle, file for file.
# 3. The size of every artifact in dist/; the Python wheel must stay under WHEEL_MAX_BYTES
#    (15 MB, the issue's goal).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
dist="$root/dist"
WHEEL_MAX_BYTES=${WHEEL_MAX_BYTES:-15000000}
log() { echo "dist-check: $*" >&2; }
fail() { echo "dist-check: FAILED: $*" >&2; exit 1; }

version=$(python3 scripts/version.py)

if [ -z "${DIST_CHECK_PHASE:-}" ]; then
	# ---- 1. prepare (network allowed: PyPI) ----
	triple=$(rustc -vV | sed -n 's/^host: //p')
	base_python=$(python3 -c 'import sys; print(getattr(sys, "_base_executable", sys.executable))')
	wheels="$root/target/dist-check/wheels"
	mkdir -p "$wheels"
	if ! ls "$wheels"/numpy-*.whl >/dev/null 2>&1; then
		log "pip download numpy (the wheel's dependency) into $wheels"
		"$base_python" -m pip download --quiet --disable-pip-version-check --only-binary :all: \
			--dest "$wheels" "numpy>=1.21"
	fi
	for f in "wikidex-$version.tgz" "wikidex-web-$version.tgz" "wikidex-model-minilm-$version.tgz" \
		"wikidex_model_minilm-$version-py3-none-any.whl" "wikidex-$version-$triple.tar.gz"; do
		[ -f "$dist/$f" ] || fail "dist/$f is missing (make dist)"
	done
	ls "$dist"/wikidex-"$version"-cp*-abi3-*.whl >/dev/null 2>&1 || fail "no wikidex wheel in dist/ (make dist)"
	# PATH without cargo and rustc; python, node, npm, tar stay.
	stripped=""
	IFS=: read -r -a parts <<< "$PATH"
	for d in "${parts[@]}"; do
		[ -n "$d" ] && [ ! -e "$d/cargo" ] && [ ! -e "$d/rustc" ] && stripped="${stripped:+$stripped:}$d"
	done
	export DIST_CHECK_TRIPLE=$triple DIST_CHECK_PYTHON=$base_python DIST_CHECK_WHEELS=$wheels
	# As root, a network namespace; as a user, inside a user namespace too (-r), where allowed.
	for flags in -n -rn; do
		if unshare "$flags" true 2>/dev/null; then
			log "running offline in a network namespace with no interface (unshare $flags)"
			exec unshare "$flags" env -u WIKIDEX_MODEL DIST_CHECK_PHASE=namespace PATH="$stripped" bash "$0"
		fi
	done
	log "unshare is not allowed here: offline by pip --no-index and npm --offline only"
	exec env -u WIKIDEX_MODEL DIST_CHECK_PHASE=flags PATH="$stripped" bash "$0"
fi

# ---- 2. offline ----
export npm_config_offline=true npm_config_audit=false npm_config_fund=false \
	npm_config_update_notifier=false npm_config_registry=http://127.0.0.1:9/ \
	PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1
if command -v cargo >/dev/null || command -v rustc >/dev/null; then
	fail "cargo or rustc is still on PATH ($(command -v cargo rustc | tr '\n' ' '))"
fi
log "no cargo, no rustc on PATH; network: $DIST_CHECK_PHASE"
if [ "$DIST_CHECK_PHASE" = namespace ] && python3 - <<'PY' 2>/dev/null; then
import socket
socket.create_connection(("pypi.org", 443), timeout=3)
PY
	fail "the network namespace reaches pypi.org"
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
work() { mkdir -p "$tmp/$1" && cp -r "$root/examples" "$tmp/$1/" && echo "$tmp/$1"; }
summary=()

# Python
py=$(work python)
"$DIST_CHECK_PYTHON" -m venv "$tmp/venv"
"$tmp/venv/bin/python" -m pip install --quiet --no-index --find-links "$dist" --find-links "$DIST_CHECK_WHEELS" \
	wikidex wikidex-model-minilm
{
	# The README's runnable python blocks, as bindings-py/tests/test_docs.py runs them.
	"$tmp/venv/bin/python" "$root/scripts/docblocks.py" python "$root/README.md"
	cat <<'PY'
lanes = {l.lane: l.status for l in results.lanes}
assert lanes["semantic"] == "ok", lanes
import wikidex_model_minilm; print("semantic lane:", lanes["semantic"], "| wikidex", wikidex.__version__, "from", wikidex.__file__)
PY
} > "$py/quickstart.py"
(cd "$py" && "$tmp/venv/bin/python" quickstart.py) > "$tmp/python.out" || { cat "$tmp/python.out"; fail "the README's Python quickstart"; }
cat "$tmp/python.out"
case $(grep '^semantic lane:' "$tmp/python.out") in *"from $tmp/venv/"*) ;; *) fail "wikidex was not imported from the virtualenv" ;; esac
summary+=("python: pip install --no-index wikidex wikidex-model-minilm into a fresh venv; README quickstart ran; semantic lane ok")

# Node
nd=$(work node)
(cd "$nd" && echo '{"private": true, "type": "module"}' > package.json)
platform_tgz=$(find "$dist" -maxdepth 1 \( -name "wikidex-linux-*-$version.tgz" -o -name "wikidex-darwin-*-$version.tgz" \
	-o -name "wikidex-win32-*-$version.tgz" \) -print -quit)
[ -n "$platform_tgz" ] || fail "no platform package (wikidex-<platform>-$version.tgz) in dist/"
(cd "$nd" && npm install --offline --no-audit --no-fund "$dist/wikidex-$version.tgz" "$platform_tgz" \
	"$dist/wikidex-model-minilm-$version.tgz" >&2)
(cd "$nd" && node -e '
	const fs = require("fs")
	for (const name of fs.readdirSync("node_modules").filter((n) => n.startsWith("wikidex"))) {
		const p = require(`./node_modules/${name}/package.json`)
		for (const s of ["preinstall", "install", "postinstall"]) {
			if (p.scripts && p.scripts[s]) throw new Error(`${name} has an ${s} script`)
		}
	}
	if (fs.readdirSync("node_modules/wikidex").some((f) => f.endsWith(".node"))) throw new Error("the main package carries an addon")
	const main = require("./node_modules/wikidex/package.json")
	for (const dep of Object.keys(main.optionalDependencies || {})) {
		if (fs.existsSync(`node_modules/${dep}`)) console.log(`platform package: ${dep} ${require(`./node_modules/${dep}/package.json`).version}`)
	}')
{
	# The README's runnable js blocks as one module, as bindings-node/test/docs.test.mjs runs them.
	node "$root/scripts/docblocks.mjs" "$root/README.md"
	cat <<'JS'
const semantic = results.lanes.find((l) => l.lane === 'semantic').status
if (semantic !== 'ok') throw new Error(`semantic lane: ${semantic}`)
console.log('semantic lane:', semantic)
JS
} > "$nd/quickstart.mjs"
(cd "$nd" && node quickstart.mjs) > "$tmp/node.out" || { cat "$tmp/node.out"; fail "the README's Node quickstart"; }
cat "$tmp/node.out"
grep -q '^semantic lane: ok' "$tmp/node.out" || fail "the Node quickstart's semantic lane"
summary+=("node: npm install --offline of wikidex, $(basename "$platform_tgz"), the model tarball; README quickstart ran; semantic lane ok")

# CLI
cl=$(work cli)
tar -xzf "$dist/wikidex-$version-$DIST_CHECK_TRIPLE.tar.gz" -C "$tmp"
exe="$tmp/wikidex-$version-$DIST_CHECK_TRIPLE/wikidex"
for f in README.md LICENSE-MIT LICENSE-APACHE; do
	[ -f "$tmp/wikidex-$version-$DIST_CHECK_TRIPLE/$f" ] || fail "the CLI archive lacks $f"
done
model=$("$tmp/venv/bin/python" -c 'import wikidex_model_minilm as m; print(m.path())')
(cd "$cl" && WIKIDEX_MODEL="$model" "$exe" build examples/wiki -o wiki.wdx >&2)
(cd "$cl" && WIKIDEX_MODEL="$model" "$exe" search wiki.wdx "why did the nightly job crash" -n 3 --json) > "$tmp/cli.json"
node -e '
	const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"))
	const semantic = r.lanes.find((l) => l.lane === "semantic").status
	if (semantic !== "ok" || r.hits.length === 0) throw new Error(`semantic ${semantic}, ${r.hits.length} hits`)
	console.log(`cli: ${r.hits.length} hits, top ${r.hits[0].page_id}, semantic lane ${semantic}`)' "$tmp/cli.json"
summary+=("cli: archive unpacked; wikidex $("$exe" --version | awk '{print $2}') build + search; semantic lane ok")

# Search for a docs site: `wikidex site` from the archive and `npx wikidex site` from the npm
# package (its bin, the bundle's files in its site/) write the same bundle.
(cd "$cl" && "$exe" site examples/wiki --out site-cli --layout mkdocs --json >/dev/null)
(cd "$nd" && npx --offline wikidex site "$cl/examples/wiki" --out site-npx --layout mkdocs --json >/dev/null)
diff -r "$cl/site-cli/wikidex" "$nd/site-npx/wikidex" >&2 || fail "wikidex site and npx wikidex site wrote different bundles"
summary+=("site: wikidex site (archive) and npx wikidex site (npm) wrote the same bundle")

# Browser package, in Node: each module instantiated from its bytes; the whole one reads the blob.
(cd "$nd" && npm install --offline --no-audit --no-fund "$dist/wikidex-web-$version.tgz" >&2)
cp "$cl/wiki.wdx" "$nd/"
cat > "$nd/web.mjs" <<'JS'
import { readFileSync, existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
const require = createRequire(import.meta.url)
const dir = dirname(require.resolve('wikidex-web/package.json'))
const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))
const done = []
for (const [spec, sub] of [['wikidex-web', 'pkg'], ['wikidex-web/search', 'pkg-search'], ['wikidex-web/full', 'pkg-full']]) {
  if (!existsSync(join(dir, sub))) continue
  const mod = await import(spec)
  mod.initSync({ module: readFileSync(join(dir, sub, 'wikidex_wasm_bg.wasm')) })
  done.push(sub)
  if (sub === 'pkg') {
    const { hits } = mod.Index.fromBytes(new Uint8Array(readFileSync('wiki.wdx'))).search('why did the nightly job crash', { limit: 5 })
    if (hits.length === 0) throw new Error('wikidex-web: no hits')
  }
}
const ranged = await import('wikidex-web/ranged')
if (typeof ranged.openBlob !== 'function') throw new Error('wikidex-web/ranged has no openBlob')
console.log(`web: ${pkg.name} ${pkg.version}: ${done.join(', ')} instantiated; the whole module searched the CLI's blob`)
JS
(cd "$nd" && node web.mjs) | tee "$tmp/web.out"
summary+=("$(cat "$tmp/web.out")")

# ---- 3. sizes ----
echo
echo "dist-check: artifacts in dist/"
for f in "$dist"/*; do
	stat -c '%s %n' "$f" | awk '{ n = split($2, p, "/"); printf "  %12d bytes  %7.1f MB  %s\n", $1, $1 / 1e6, p[n] }'
done
wheel=$(ls "$dist"/wikidex-"$version"-cp*-abi3-*.whl | head -1)
wheel_bytes=$(stat -c %s "$wheel")
[ "$wheel_bytes" -lt "$WHEEL_MAX_BYTES" ] || fail "$(basename "$wheel") is $wheel_bytes bytes, over the goal of $WHEEL_MAX_BYTES"
summary+=("wheel: $(basename "$wheel") $wheel_bytes bytes (< $WHEEL_MAX_BYTES)")
echo
echo "dist-check: passed (no cargo/rustc on PATH, network: $DIST_CHECK_PHASE)"
for s in "${summary[@]}"; do echo "  - $s"; done
