#!/usr/bin/env bash
# The release packages, written into dist/ (`make dist`, after `make dist-models`), each built
# for this machine's platform; .github/workflows/release.yml runs the same steps per platform.
#
#   scripts/dist.sh                 # every step
#   scripts/dist.sh wheel node      # some of them: wheel, node, web, cli
#   scripts/dist.sh node-addon      # node's two halves, which CI runs apart: the addon
#   scripts/dist.sh node-pack       # (per platform), then the packages (once, all addons)
#
#   wheel  dist/wikidex-<v>-cp39-abi3-<manylinux tag>.whl: the Python binding, maturin build
#          --release --strip (abi3: one wheel for CPython 3.9+; maturin picks the oldest
#          manylinux tag the binary's symbols allow and checks it, as auditwheel does).
#   node   dist/wikidex-<v>.tgz and dist/wikidex-<platform>-<v>.tgz, in napi-rs's layout: the
#          main package (the loader native.js, index.js/.mjs, index.d.ts; no addon, no install
#          script) lists the platform package as an optionalDependency, and the platform
#          package holds the release addon (`napi build --release --strip`). Staged in
#          target/dist/node by napi's own commands: create-npm-dirs, artifacts, and pre-publish
#          (--skip-optional-publish --no-gh-release: it only writes optionalDependencies).
#          NAPI_TARGETS (default: this machine's triple) are the platforms staged.
#   web    dist/wikidex-web-<v>.tgz: the browser modules of `make wasm` (pkg/: the whole API,
#          pkg-search/: the search module, pkg-full/: with the model runner; each with its
#          .d.ts and ranged.js), the README, the licences. WEB_MODULES="lexical search" leaves
#          the full module out (its cold build is ~8 CPU minutes; the package ~4.5 MB more).
#   cli    dist/wikidex-<v>-<triple>.tar.gz: the release binary (stripped), cli/README.md and
#          the licences, in a folder of the same name.
#
# Each step skips itself when its output is newer than every input it is made from (the
# sources of what it compiles, its README, this script); a step that builds runs cargo, which
# itself skips what is up to date. The version is Cargo.toml's (scripts/version.py). Release
# builds: about 5 to 10 minutes each on 2 cores when cold (tract); they do not share units with
# `make test`'s dev builds. Progress on stderr; the last lines list dist/ with sizes.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

CARGO=${CARGO:-cargo}
out=${DIST:-dist}
stage=target/dist
version=$(python3 scripts/version.py)
triple=$(rustc -vV | sed -n 's/^host: //p')
epoch=${SOURCE_DATE_EPOCH:-1767225600}   # 2026-01-01, as scripts/model-packages.py
export SOURCE_DATE_EPOCH=$epoch
mkdir -p "$out" "$stage"
out=$(cd "$out" && pwd)
log() { echo "dist: $*" >&2; }

# stale OUTPUT INPUT...: true when OUTPUT is missing or some input file is newer than it
# (build leftovers in the sources, *.so / *.node / __pycache__, are not inputs).
stale() {
	local output=$1; shift
	[ -e "$output" ] || return 0
	[ -n "$(find "$@" scripts/dist.sh \( -name __pycache__ -o -name node_modules \) -prune -o \
		-type f ! -name '*.so' ! -name '*.node' ! -name '*.pyc' -newer "$output" -print -quit)" ]
}

RUST_INPUTS=(Cargo.toml Cargo.lock core/Cargo.toml core/src hack/Cargo.toml LICENSE-MIT LICENSE-APACHE)

do_wheel() {
	local have
	have=$(ls "$out"/wikidex-"$version"-cp*-abi3-*.whl 2>/dev/null | head -1 || true)
	if [ -n "$have" ] && ! stale "$have" "${RUST_INPUTS[@]}" bindings-py/Cargo.toml bindings-py/src \
		bindings-py/python bindings-py/pyproject.toml bindings-py/README.md; then
		log "wheel: $have is up to date"; return
	fi
	local PY
	PY=$(scripts/py-env.sh bindings-py/requirements-dev.txt)
	rm -rf "$stage/wheel"
	log "wheel: maturin build --release --strip (abi3, CPython 3.9+)"
	"$PY" -m maturin build --release --strip -m bindings-py/Cargo.toml --out "$stage/wheel" >&2
	rm -f "$out"/wikidex-*-cp*-abi3-*.whl
	mv "$stage"/wheel/wikidex-"$version"-*.whl "$out"/
	# What a user's pip installs: the stubs and py.typed beside the module, no stray build files.
	"$PY" - "$out"/wikidex-"$version"-*.whl <<'PY'
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
for need in ("wikidex/__init__.py", "wikidex/py.typed", "wikidex/_wikidex.pyi"):
    assert need in names, f"{need} is not in {sys.argv[1]}"
natives = [n for n in names if n.startswith("wikidex/_wikidex") and n.endswith(".so")]
assert natives == ["wikidex/_wikidex.abi3.so"], natives
assert not [n for n in names if "__pycache__" in n], "__pycache__ in the wheel"
PY
}

# The release addon of each of NAPI_TARGETS into target/dist/node/build/ (napi build --release
# --strip; NAPI_BUILD_FLAGS adds flags, e.g. -x to cross-compile in CI).
do_node_addon() {
	local napi="$root/bindings-node/node_modules/.bin/napi"
	[ -x "$napi" ] || { log "node: $napi is missing (make node-deps)"; exit 1; }
	mkdir -p "$stage/node/build"
	for t in ${NAPI_TARGETS:-$triple}; do
		log "node: napi build --release --strip --target $t"
		# --no-js: the loader is the committed native.js (make node generates it, test-node
		# diffs it); the declarations it writes are compared with the committed index.d.ts
		# (whose extra `__napiBindingTarget` comes with the loader).
		(cd bindings-node && "$napi" build --platform --release --strip --target "$t" --no-js \
			--output-dir "$root/$stage/node/build" --dts index.d.ts ${NAPI_BUILD_FLAGS:-} >&2)
	done
	if ! diff -q <(grep '^export' "$stage/node/build/index.d.ts") \
		<(grep '^export' bindings-node/index.d.ts | grep -v __napiBindingTarget) >/dev/null; then
		log "node: warning: the release build's index.d.ts differs from bindings-node/index.d.ts (make node regenerates it)"
	fi
}

# The npm packages from the addons in target/dist/node/build/ (one per platform of
# NAPI_TARGETS; CI gathers every platform's there), staged by napi's own commands.
do_node_pack() {
	local napi="$root/bindings-node/node_modules/.bin/napi"
	local pkg="$stage/node/wikidex" build="$stage/node/build"
	rm -rf "$pkg"
	mkdir -p "$pkg"
	cp bindings-node/package.json bindings-node/README.md bindings-node/index.js bindings-node/index.mjs \
		bindings-node/index.d.ts bindings-node/native.js LICENSE-MIT LICENSE-APACHE "$pkg/"
	mkdir -p "$pkg/bin"
	cp bindings-node/bin/wikidex.js "$pkg/bin/"
	# `npx wikidex site`'s bundle files (the search module built by do_node first).
	scripts/site-assets.sh "$pkg/site"
	# The published manifest: the platforms staged here, the addon out of the main package,
	# no scripts, no development dependencies.
	NAPI_TARGETS="${NAPI_TARGETS:-$triple}" node -e '
		const fs = require("fs"); const file = process.argv[1]
		const p = JSON.parse(fs.readFileSync(file, "utf8"))
		p.napi.targets = process.env.NAPI_TARGETS.split(/\s+/).filter(Boolean)
		p.files = [...p.files.filter((f) => f !== "*.node"), "LICENSE-MIT", "LICENSE-APACHE"]
		delete p.scripts; delete p.devDependencies
		fs.writeFileSync(file, JSON.stringify(p, null, 2) + "\n")' "$pkg/package.json"
	"$napi" create-npm-dirs --cwd "$pkg" >&2
	"$napi" artifacts --cwd "$pkg" --output-dir "$root/$build" >&2
	rm -f "$pkg"/*.node
	# Only writes optionalDependencies (the platform packages, at this version) here; in CI,
	# without --skip-optional-publish, it also publishes them.
	"$napi" pre-publish --cwd "$pkg" --no-gh-release --skip-optional-publish -t npm >&2
	rm -f "$out"/wikidex-"$version".tgz
	for dir in "$pkg"/npm/*/; do
		ls "$dir"/*.node >/dev/null 2>&1 || { log "node: no addon for $(basename "$dir") in $build"; exit 1; }
		cp LICENSE-MIT LICENSE-APACHE "$dir"
		node -e '
			const fs = require("fs"); const file = process.argv[1]
			const p = JSON.parse(fs.readFileSync(file, "utf8"))
			p.files.push("LICENSE-MIT", "LICENSE-APACHE")
			fs.writeFileSync(file, JSON.stringify(p, null, 2) + "\n")' "$dir/package.json"
		local name
		name=$(node -p 'require(process.argv[1]).name' "$root/$dir/package.json")
		rm -f "$out/$name"-*.tgz
		(cd "$dir" && npm pack --silent --pack-destination "$out" >/dev/null)
		log "node: $out/$name-$version.tgz"
	done
	(cd "$pkg" && npm pack --silent --pack-destination "$out" >/dev/null)
	log "node: $out/wikidex-$version.tgz (optionalDependencies: $(node -p 'Object.keys(require(process.argv[1]).optionalDependencies).join(", ")' "$root/$pkg/package.json"))"
}

do_node() {
	# The package ships the search module and the model runner's (`npx wikidex site`, with
	# --model): built before the freshness check, so that a change to them makes it stale.
	WASM_MODULES="search full" CARGO="$CARGO" scripts/wasm-build.sh >&2
	local inputs=("${RUST_INPUTS[@]}" bindings-node/Cargo.toml bindings-node/build.rs bindings-node/src
		bindings-node/package.json bindings-node/README.md bindings-node/index.js bindings-node/index.mjs
		bindings-node/index.d.ts bindings-node/native.js bindings-node/types.d.ts bindings-node/bin
		bindings-wasm/ui bindings-wasm/pkg-search/wikidex_wasm.js bindings-wasm/pkg-search/wikidex_wasm_bg.wasm
		bindings-wasm/pkg-full/wikidex_wasm.js bindings-wasm/pkg-full/wikidex_wasm_bg.wasm)
	if ! stale "$out/wikidex-$version.tgz" "${inputs[@]}" \
		&& [ -n "$(find "$out" -maxdepth 1 \( -name "wikidex-linux-*-$version.tgz" -o -name "wikidex-darwin-*-$version.tgz" \
			-o -name "wikidex-win32-*-$version.tgz" \) -print -quit)" ]; then
		log "node: $out/wikidex-$version.tgz and its platform package are up to date"; return
	fi
	rm -rf "$stage/node"
	do_node_addon
	do_node_pack
}

do_web() {
	local modules=${WEB_MODULES:-lexical search full}
	local tarball="$out/wikidex-web-$version.tgz"
	# `make wasm` first: cargo and wasm-bindgen skip what is up to date.
	WASM_MODULES="$modules" CARGO="$CARGO" scripts/wasm-build.sh >&2
	local dirs=()
	for m in $modules; do
		case $m in lexical) dirs+=(pkg) ;; search) dirs+=(pkg-search) ;; full) dirs+=(pkg-full) ;;
			*) log "web: unknown module $m"; exit 1 ;; esac
	done
	# wasm-build.sh copies ranged.js into each module every time: its source is the input.
	local srcs=(bindings-wasm/README.md bindings-wasm/js bindings-wasm/ui LICENSE-MIT LICENSE-APACHE)
	for d in "${dirs[@]}"; do srcs+=("bindings-wasm/$d/wikidex_wasm.js" "bindings-wasm/$d/wikidex_wasm.d.ts"
		"bindings-wasm/$d/wikidex_wasm_bg.wasm" "bindings-wasm/$d/wikidex_wasm_bg.wasm.d.ts"); done
	if ! stale "$tarball" "${srcs[@]}"; then log "web: $tarball is up to date"; return; fi
	local pkg="$stage/web"
	rm -rf "$pkg"
	mkdir -p "$pkg"
	for d in "${dirs[@]}"; do
		mkdir -p "$pkg/$d"
		for f in wikidex_wasm.js wikidex_wasm.d.ts wikidex_wasm_bg.wasm wikidex_wasm_bg.wasm.d.ts ranged.js ranged.d.ts; do
			cp "bindings-wasm/$d/$f" "$pkg/$d/$f"
		done
	done
	# The search UI (`wikidex site` writes the same files into a site's bundle).
	mkdir -p "$pkg/ui"
	cp bindings-wasm/ui/*.js bindings-wasm/ui/*.css bindings-wasm/ui/*.d.ts "$pkg/ui/"
	cp bindings-wasm/README.md LICENSE-MIT LICENSE-APACHE "$pkg/"
	VERSION="$version" DIRS="${dirs[*]}" node -e '
		const fs = require("fs")
		const dirs = process.env.DIRS.split(" ")
		const entry = (d, f) => ({ types: `./${d}/${f}.d.ts`, default: `./${d}/${f}.js` })
		const exports = {}
		if (dirs.includes("pkg")) exports["."] = entry("pkg", "wikidex_wasm")
		if (dirs.includes("pkg-search")) exports["./search"] = entry("pkg-search", "wikidex_wasm")
		if (dirs.includes("pkg-full")) exports["./full"] = entry("pkg-full", "wikidex_wasm")
		exports["./ranged"] = entry(dirs.includes("pkg-search") ? "pkg-search" : dirs[0], "ranged")
		for (const d of dirs) exports[`./${d}/*`] = `./${d}/*`
		exports["./ui"] = { types: "./ui/ui.d.ts", default: "./ui/ui.js" }
		exports["./ui/*"] = "./ui/*"
		exports["./package.json"] = "./package.json"
		const main = dirs.includes("pkg") ? "pkg" : dirs[0]
		const p = {
			name: "wikidex-web",
			version: process.env.VERSION,
			description: "wikidex in the browser (WebAssembly): search a wiki index blob in a page or a Web Worker, with no server; HTTP range requests read only what a search needs.",
			keywords: ["search", "wiki", "markdown", "bm25", "wasm", "webassembly", "static-site", "range-requests"],
			license: "MIT OR Apache-2.0",
			homepage: "https://example.invalid/wikidex",
			repository: { type: "git", url: "https://example.invalid/wikidex", directory: "bindings-wasm" },
			type: "module",
			main: `./${main}/wikidex_wasm.js`,
			types: `./${main}/wikidex_wasm.d.ts`,
			exports,
			files: [...dirs.map((d) => `${d}/`), "ui/", "README.md", "LICENSE-MIT", "LICENSE-APACHE"],
			engines: { node: ">=18" },
		}
		fs.writeFileSync(process.argv[1], JSON.stringify(p, null, 2) + "\n")' "$pkg/package.json"
	rm -f "$out"/wikidex-web-*.tgz
	(cd "$pkg" && npm pack --silent --pack-destination "$out" >/dev/null)
	log "web: $tarball (${dirs[*]})"
}

do_cli() {
	local name="wikidex-$version-$triple"
	local archive="$out/$name.tar.gz"
	# The binary carries `wikidex site`'s bundle: the search module, the UI and the model
	# runner's module (cli/build.rs).
	WASM_MODULES="search full" CARGO="$CARGO" scripts/wasm-build.sh >&2
	if ! stale "$archive" "${RUST_INPUTS[@]}" cli/Cargo.toml cli/build.rs cli/src cli/README.md \
		bindings-wasm/ui bindings-wasm/pkg-search/wikidex_wasm_bg.wasm bindings-wasm/pkg-search/wikidex_wasm.js \
		bindings-wasm/pkg-full/wikidex_wasm_bg.wasm bindings-wasm/pkg-full/wikidex_wasm.js; then
		log "cli: $archive is up to date"; return
	fi
	log "cli: cargo build --release -p wikidex-cli"
	WIKIDEX_REQUIRE_SITE_BUNDLE=1 "$CARGO" build --release -p wikidex-cli >&2
	local dir="$stage/cli/$name"
	rm -rf "$stage/cli"
	mkdir -p "$dir"
	strip -o "$dir/wikidex" target/release/wikidex
	cp cli/README.md LICENSE-MIT LICENSE-APACHE "$dir/"
	rm -f "$out"/wikidex-*-"$triple".tar.gz
	tar -C "$stage/cli" --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$epoch" \
		-cf - "$name" | gzip -9n > "$archive"
	log "cli: $archive (glibc $(objdump -T "$dir/wikidex" | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1 | cut -d_ -f2) or newer)"
}

steps=("$@")
[ ${#steps[@]} -gt 0 ] || steps=(wheel node web cli)
for s in "${steps[@]}"; do
	case $s in wheel|node|web|cli) "do_$s" ;; node-addon) do_node_addon ;; node-pack) do_node_pack ;;
		*) log "unknown step $s (wheel, node, web, cli; node-addon, node-pack)"; exit 2 ;; esac
done
echo "dist: $out/"
ls -l "$out" | tail -n +2 | awk '{printf "  %12d  %s\n", $5, $9}'
