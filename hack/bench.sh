#!/usr/bin/env bash
# Runs the benchmarks whose numbers are reported in docs/performance.md.
# Usage: hack/bench.sh [extra go test flags]; BENCH_COUNT (default 5) repetitions.
set -euo pipefail
cd "$(dirname "$0")/.."
count=${BENCH_COUNT:-5}
echo "# $(go version) on $(nproc) cores, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
grep -m1 'model name' /proc/cpuinfo 2>/dev/null || true
for pkg in ./pkg/routecore/ ./pkg/tokenizer/; do
  [ -d "$pkg" ] || continue
  go test -run '^$' -bench . -benchmem -count "$count" "$@" "$pkg"
done
