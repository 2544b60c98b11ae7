#!/usr/bin/env bash
# Growth of a build without vectors: for each size, a synthetic corpus from CACM and Cranfield
# (../shared/tools/make_corpus.py), `wikidex build --beir --no-embed`, then a process that answers
# one query reading only the parts of the blob it needs (`wikidex search`), and one that loads the
# whole blob first (`--log`, which searches through a session, as Python, Node and MCP do); wall
# time and peak RSS from /usr/bin/time -v. Then, for each
# size, the queries of CACM and Cranfield asked of wikidex and of tantivy 0.27 side by side in
# one process (bench/tantivy, its own cargo project, built here on first use), and an upsert of
# one page in each.
#
#   bench/growth.sh [SIZES...]        # default: 10000 100000 (1000000 needs ~6 GB and ~5 min)
#
# Env: BIN (default target/release/wikidex), DATA (default ../shared/data), WORK (default
# target/growth: the corpora, about 720 bytes a page, and the blobs are kept there).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="${BIN:-$root/target/release/wikidex}"
data="${DATA:-$root/../shared/data}"
work="${WORK:-$root/target/growth}"
tool="$(dirname "$data")/tools/make_corpus.py"
[ -x "$bin" ] || { echo "growth: no CLI at $bin (cargo build --release -p wikidex-cli)" >&2; exit 1; }
[ -f "$tool" ] || { echo "growth: no $tool (set DATA to the shared data folder)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "growth: needs GNU time at /usr/bin/time (apt install time)" >&2; exit 1; }
mkdir -p "$work"

# Prints "<seconds> <peak MB>" of a command (its own output discarded).
measure() {
    local log
    log="$(mktemp)"
    if ! /usr/bin/time -v "$@" > /dev/null 2> "$log"; then
        echo "growth: failed: $*" >&2
        cat "$log" >&2
        exit 1
    fi
    awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, t, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + t[i] }
                /Maximum resident set size/ { mb = $2 / 1024 }
                END { printf "%.2f %.0f\n", s, mb }' "$log"
    rm -f "$log"
}

echo "| pages | build | build peak RSS | blob | 1 query, in parts | its peak RSS | whole load + 1 query | its peak RSS |"
echo "|---|---|---|---|---|---|---|---|"
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(10000 100000)
for n in "${sizes[@]}"; do
    dir="$work/c$n"
    mkdir -p "$dir"
    [ -s "$dir/corpus.jsonl" ] || python3 "$tool" "$data" "$n" "$dir/corpus.jsonl" > /dev/null
    read -r bs bmb < <(measure "$bin" build --beir "$dir" --no-embed -o "$dir/index.wdx")
    bytes=$(stat -c %s "$dir/index.wdx")
    read -r ps pmb < <(measure "$bin" search "$dir/index.wdx" "boundary layer transition" --lanes lexical)
    read -r ls lmb < <(measure "$bin" search "$dir/index.wdx" "boundary layer transition" --lanes lexical --log "$dir/queries.jsonl")
    printf "| %s | %s s | %s MB | %.1f MB | %s s | %s MB | %s s | %s MB |\n" "$n" "$bs" "$bmb" "$(awk "BEGIN { print $bytes / 1000000 }")" "$ps" "$pmb" "$ls" "$lmb"
done

# Queries, wikidex against tantivy (the tantivy index is built once, next to the blob).
(cd "$root" && CARGO_TARGET_DIR="$root/target" cargo build --release --quiet --manifest-path bench/tantivy/Cargo.toml)
for n in "${sizes[@]}"; do
    "$root/target/release/wikidex-bench-tantivy" "$work/c$n" "$work/c$n/index.wdx" "$data" 3 > "$work/c$n/tantivy.md"
done
echo
echo "| chunks | queries | wikidex lexical | tantivy | tantivy / wikidex | wikidex lexical + token | wikidex lexical, with hits | top-10 overlap |"
echo "|---|---|---|---|---|---|---|---|"
for n in "${sizes[@]}"; do grep -v '^| upsert |' "$work/c$n/tantivy.md"; done
echo
echo "| chunks | wikidex upsert of one page | tantivy delete, add, commit, reload | wikidex / tantivy |"
echo "|---|---|---|---|"
for n in "${sizes[@]}"; do grep '^| upsert |' "$work/c$n/tantivy.md" | sed 's/^| upsert //'; done
