#!/usr/bin/env bash
# End-to-end explain-route benchmark: a 10,000-worker capture with a 1M-block KV
# snapshot and a 32k-token prompt (hack/gen-examples -scale), run through the
# built binary; prints the wall time and peak RSS of each run, then the time per
# phase from the Go benchmarks in pkg/explain (BenchmarkExplainScale*).
#
#   hack/explain-bench.sh [RUNS]        (default 3 runs; needs /usr/bin/time)
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-3}"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
go build -o "$dir/kubectl-dynamo" ./cmd/kubectl-dynamo
go run ./hack/gen-examples -scale -out "$dir" -workers 10000 -blocks 1000000 -tokens 32768
echo "capture: $(du -h "$dir/capture.json" | cut -f1)"
for i in $(seq "$runs"); do
  /usr/bin/time -f "run $i: %e s wall, %M KiB peak RSS" \
    "$dir/kubectl-dynamo" explain-route --from-file "$dir/capture.json" --token-file "$dir/prompt.tokens" -o json >"$dir/out.json" || {
      code=$?; [ "$code" -eq 2 ] || exit "$code"; }
done
KDYN_SCALE_DIR="$dir" go test ./pkg/explain/ -run '^$' -bench 'BenchmarkExplainScale' -benchtime 3x -count 1
