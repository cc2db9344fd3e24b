#!/usr/bin/env bash
# Measures encoding throughput (MB/s of UTF-8 text, one core, warm caches) of
# pkg/tokenizer and of the reference implementation @huggingface/tokenizers on
# Node, on the same deterministic corpus (bench-corpus.mjs, ~4 MiB of mixed
# English prose, code and CJK), and prints both and the ratio.
#
#   hack/tokenizer/bench.sh [NAME...]    # default: qwen3 llama3
#
# Needs the cache filled by hack/tokenizer/fetch.sh.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
CACHE="${KDYN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-dynamo}/tokenizers"
NAMES=("$@")
[[ ${#NAMES[@]} -gt 0 ]] || NAMES=(qwen3 llama3)

TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
node "$HERE/bench-corpus.mjs" >"$TMP/corpus.txt"
BYTES=$(wc -c <"$TMP/corpus.txt")

(cd "$ROOT" && go test -c -o "$TMP/tokenizer.test" ./pkg/tokenizer/)

printf '%-12s %12s %12s %8s   (corpus %s bytes, GOMAXPROCS=1, node %s)\n' tokenizer go_MB/s ref_MB/s ratio "$BYTES" "$(node --version)"
for name in "${NAMES[@]}"; do
  file="$CACHE/$name/tokenizer.json"
  [[ -f "$file" ]] || { echo "$file is missing: run hack/tokenizer/fetch.sh" >&2; exit 1; }
  go_mbs=$(cd "$ROOT/pkg/tokenizer" && KDYN_BENCH_CORPUS="$TMP/corpus.txt" GOMAXPROCS=1 \
    "$TMP/tokenizer.test" -test.run '^$' -test.bench "^BenchmarkEncode/$name\$" -test.benchtime 5x -test.cpu 1 |
    awk '/^BenchmarkEncode/ { for (i = 1; i <= NF; i++) if ($(i+1) == "MB/s") print $i }')
  ref_mbs=$(taskset -c 0 node "$HERE/bench.mjs" "$file" "$TMP/corpus.txt" 3 2>/dev/null ||
    node "$HERE/bench.mjs" "$file" "$TMP/corpus.txt" 3)
  ref_mbs=$(node -e 'console.log(JSON.parse(process.argv[1]).mb_per_s.toFixed(2))' "$ref_mbs")
  ratio=$(awk -v a="$go_mbs" -v b="$ref_mbs" 'BEGIN { printf "%.1fx", a / b }')
  printf '%-12s %12s %12s %8s\n' "$name" "$go_mbs" "$ref_mbs" "$ratio"
done
