#!/usr/bin/env bash
# Peak memory and time of the read commands on the upstream-shaped capture
# (issue 27): a 10,000-worker capture of Dynamo's vLLM disaggregated-router
# example, every object as an API server returns it (hack/gen-examples
# -upstream-scale, internal/testutil/upstreamscale), read by
#
#   topology --from-file X
#   topology --from-file X -o json
#   explain-route --from-file X --token-file prompt.tokens   (4,096 tokens)
#
# RUNS times each, interleaved; prints every run's wall time, CPU time (user +
# system) and peak RSS (GNU time's maximum resident set), then the medians.
#
#   hack/capture-bench.sh [RUNS] [BINARY]     (default 5 runs; BINARY: build this tree)
#
# KDYN_BENCH_DIR=DIR keeps the capture in DIR between runs (generated when
# DIR/capture.json is missing). Needs /usr/bin/time.
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-5}"
bin="${2:-}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
dir="${KDYN_BENCH_DIR:-$tmp}"
if [ -z "$bin" ]; then
  bin="$tmp/kubectl-dynamo"
  go build -o "$bin" ./cmd/kubectl-dynamo
fi
if [ ! -f "$dir/capture.json" ]; then
  go run ./hack/gen-examples -upstream-scale -out "$dir" >&2
fi
echo "# $("$bin" version 2>/dev/null | head -1); capture $(du -m "$dir/capture.json" | cut -f1) MiB; $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg)"

declare -A cmds=(
  [topology]="topology --from-file $dir/capture.json"
  [topology-json]="topology --from-file $dir/capture.json -o json"
  [explain-route]="explain-route --from-file $dir/capture.json --token-file $dir/prompt.tokens"
)
order=(topology topology-json explain-route)
for name in "${order[@]}"; do : >"$tmp/$name.tsv"; done
for i in $(seq "$runs"); do
  for name in "${order[@]}"; do
    # shellcheck disable=SC2086 # the command line is split on purpose
    /usr/bin/time -o "$tmp/t" -f "%e %U %S %M" "$bin" ${cmds[$name]} >/dev/null || {
      code=$?; [ "$code" -eq 2 ] || { echo "$name failed ($code)" >&2; exit 1; }; }
    read -r wall user sys rss <"$tmp/t"
    cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
    printf '%s\t%s\t%s\t%s\n' "$wall" "$cpu" "$rss" "$i" >>"$tmp/$name.tsv"
    printf 'run %d %-14s %6.2f s wall %6.2f s cpu %7d KiB\n' "$i" "$name" "$wall" "$cpu" "$rss"
  done
done
echo
printf '%-14s %12s %12s %14s %14s\n' command "wall median" "cpu median" "RSS median" "RSS max"
for name in "${order[@]}"; do
  med() { sort -g -k"$1" "$tmp/$name.tsv" | awk -v c="$1" '{ v[NR] = $c } END { print v[int((NR + 1) / 2)] }'; }
  max=$(sort -g -k3 "$tmp/$name.tsv" | tail -1 | cut -f3)
  printf '%-14s %10s s %10s s %10d MiB %10d MiB\n' "$name" "$(med 1)" "$(med 2)" $(($(med 3) / 1024)) $((max / 1024))
done
