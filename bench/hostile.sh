#!/usr/bin/env bash
# Re-runs the reproductions of the hardening issue against the release CLI and prints, for
# each, the exit code, the wall time and the peak memory (from /usr/bin/time -v), so the
# bounds the book states (docs/reference/errors.md) can be checked on any machine.
#
#   make release && bench/hostile.sh [path/to/wikidex]
#
# Inputs are generated into a temporary folder (removed at the end). Each command runs under
# `timeout 120` and `ulimit -v` of 4 GiB, so a regression shows as a time-out or an abort
# instead of taking the machine down.
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="${1:-$root/target/release/wikidex}"
[ -x "$bin" ] || { echo "hostile.sh: $bin not found (run make release)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "hostile.sh: /usr/bin/time not found (apt-get install time)" >&2; exit 1; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# alias_bomb LEVELS FAN: frontmatter whose anchors each name the one before FAN times.
alias_bomb() {
    local levels=$1 fan=$2 i prev refs
    echo "---"
    echo "a0: &a0 [$(printf 'lol,%.0s' $(seq 1 "$fan") | sed 's/,$//')]"
    for ((i = 1; i < levels; i++)); do
        prev="*a$((i - 1))"
        refs="$(printf "$prev,%.0s" $(seq 1 "$fan") | sed 's/,$//')"
        echo "a$i: &a$i [$refs]"
    done
    echo "---"
    echo "body"
}

# links_page N PER_LINE: an index page of N [[pageK]] links, PER_LINE to a line (0: one line).
links_page() {
    local n=$1 per=$2
    echo "# Index"
    echo
    if [ "$per" -eq 0 ]; then
        seq 1 "$n" | sed 's/.*/[[page&]]/' | tr '\n' ' '
        echo
    else
        seq 1 "$n" | sed 's/.*/- [[page&]]/'
    fi
}

printf '%-44s %5s %9s %10s\n' "reproduction" "exit" "seconds" "peak RSS"
run() {
    local name=$1
    shift
    local out="$tmp/time.txt"
    (ulimit -v 4194304; timeout 120 /usr/bin/time -v -o "$out" "$@" >/dev/null 2>"$tmp/stderr.txt")
    local code=$?
    local secs rss
    secs="$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$out" 2>/dev/null)"
    rss="$(awk -F': ' '/Maximum resident set size/ {printf "%.0f MB", $2 / 1024}' "$out" 2>/dev/null)"
    printf '%-44s %5s %9s %10s\n' "$name" "$code" "${secs:-?}" "${rss:-?}"
}

# A small wiki to put each hostile page in (the build goes on past a bad page).
mkwiki() {
    local dir="$tmp/$1"
    rm -rf "$dir"
    mkdir -p "$dir/global"
    printf -- '---\ntitle: Revenue\n---\nRevenue is recognized monthly.\n' >"$dir/global/revenue.md"
    echo "$dir"
}

w="$(mkwiki bomb9)"; alias_bomb 9 9 >"$w/global/bomb.md"
run "build: alias bomb 9x9 (~300 bytes)" "$bin" build --no-embed "$w" -o "$tmp/bomb9.wdx"
run "lint: alias bomb 9x9" "$bin" lint "$w"
w="$(mkwiki bomb8)"; alias_bomb 8 8 >"$w/global/bomb.md"
run "build: alias bomb 8x8 (~275 bytes)" "$bin" build --no-embed "$w" -o "$tmp/bomb8.wdx"
w="$(mkwiki bomb30)"; alias_bomb 30 2 >"$w/global/bomb.md"
run "build: alias bomb 30x2 (2^30 nodes)" "$bin" build --no-embed "$w" -o "$tmp/bomb30.wdx"

for n in 5000 20000; do
    w="$(mkwiki "links$n")"; links_page "$n" 1 >"$w/global/index.md"
    run "build: $n links, one per line" "$bin" build --no-embed "$w" -o "$tmp/links.wdx"
    run "lint: $n links, one per line" "$bin" lint "$w"
done
w="$(mkwiki links100k)"; links_page 100000 0 >"$w/global/index.md"
run "build: 100000 links on one line" "$bin" build --no-embed "$w" -o "$tmp/links.wdx"

# verify: an answer naming 20,000 chunk ids, one of 20 MB, and one just under the caps.
w="$(mkwiki verify)"
for i in $(seq 1 200); do
    printf -- '---\ntitle: Page %s\n---\nPage %s says the nightly job %s crashed at %s.\n' \
        "$i" "$i" "$i" "$i" >"$w/global/p$i.md"
done
"$bin" build --no-embed "$w" -o "$tmp/verify.wdx" >/dev/null 2>&1
seq 1 20000 | awk '{printf "The job crashed [p%d::chunk_0]. ", ($1 % 200) + 1}' >"$tmp/ids.txt"
run "verify: 20000 ids in the answer" "$bin" verify "$tmp/verify.wdx" --answer "$tmp/ids.txt"
seq 1 60000 | awk '{printf "[p%d::chunk_0]", $1}' >"$tmp/ids60k.txt"
run "verify: 60000 distinct ids (over the id cap)" "$bin" verify "$tmp/verify.wdx" --answer "$tmp/ids60k.txt"
head -c 20000000 /dev/zero | tr '\0' 'a' | fold -w 80 | sed 's/$/ crashed. /' >"$tmp/big.txt"
run "verify: 20 MB answer (over the cap)" "$bin" verify "$tmp/verify.wdx" --answer "$tmp/big.txt"
head -c 1000000 /dev/zero | tr '\0' 'a' | fold -w 80 | sed 's/$/ the job crashed. /' | head -c 1040000 >"$tmp/1m.txt"
run "verify: 1 MB answer (under the cap)" "$bin" verify "$tmp/verify.wdx" --answer "$tmp/1m.txt"
