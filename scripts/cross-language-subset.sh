#!/usr/bin/env bash
# The cross-language queries of a BEIR folder whose query and corpus ids start with a
# two-letter language code (tests/multilingual: `de-q05`, `zh03`), as a BEIR folder of their own.
#
#   scripts/cross-language-subset.sh tests/multilingual target/eval/multilingual-cross
#
# A query is cross-language when none of its judged pages is in its own language. OUT gets a
# copy of corpus.jsonl and queries.jsonl and the judgements of those queries only (`wikidex
# eval` scores only the queries that have judgements), so `wikidex eval OUT` measures them
# alone.
set -euo pipefail
src=${1:?usage: cross-language-subset.sh SRC OUT}
out=${2:?usage: cross-language-subset.sh SRC OUT}
rm -rf "$out"
mkdir -p "$out/qrels"
cp "$src/corpus.jsonl" "$src/queries.jsonl" "$out/"
awk -F'\t' '
	NR == 1 { print; next }
	{ line[NR] = $0; query[NR] = $1 }
	substr($1, 1, 2) == substr($2, 1, 2) { same[$1] = 1 }
	END { for (i = 2; i <= NR; i++) if (!(query[i] in same)) print line[i] }
' "$src/qrels/test.tsv" >"$out/qrels/test.tsv"
