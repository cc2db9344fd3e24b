#!/usr/bin/env bash
# House rules that a linter does not express. Each rule prints the offending lines.
set -euo pipefail
cd "$(dirname "$0")/.."
fail=0
rule() { # rule "message" grep-args...
  local msg=$1; shift
  local hits
  hits=$(git grep -n "$@" -- ':!hack/verify-code-patterns.sh' 2>/dev/null || true)
  if [ -n "$hits" ]; then echo "✗ $msg"; echo "$hits"; fail=1; fi
}
# pkg/routecore is pure: standard library plus the XXH3 package only.
imports=$(go list -f '{{join .Imports "\n"}}' ./pkg/routecore/ | grep '\.' | grep -v '^github.com/zeebo/xxh3$' || true)
if [ -n "$imports" ]; then echo "✗ pkg/routecore imports non-stdlib packages:"; echo "$imports"; fail=1; fi
# ...and deterministic: no clock, no global randomness, no goroutines, no logging.
rule "pkg/routecore must not read the clock" -E 'time\.(Now|Since|Until)\(' -- 'pkg/routecore/*.go' ':!pkg/routecore/*_test.go'
rule "pkg/routecore must not use global randomness" -E '"math/rand"|rand\.(Int|Float|Intn|Shuffle|Perm)' -- 'pkg/routecore/*.go' ':!pkg/routecore/*_test.go' ':!pkg/routecore/rand.go'
rule "pkg/routecore must not start goroutines (concurrency is injected: Selector.Go)" -E '^\s*go [a-zA-Z_(]|\.Go\(' -- 'pkg/routecore/*.go' ':!pkg/routecore/*_test.go'
rule "pkg/routecore must not log" -E '"log"|"log/slog"|fmt\.Print' -- 'pkg/routecore/*.go' ':!pkg/routecore/*_test.go' ':!pkg/routecore/example_*'
# Commands write through injected streams.
rule "write through IOStreams, not os.Stdout/os.Stderr" -E 'os\.(Stdout|Stderr)' -- '*.go' ':!internal/iostreams/*' ':!*_test.go' ':!hack/*'
# The plugin is read-only: no mutating verbs on clients.
rule "kubectl-dynamo never mutates the cluster" -E '\.(Create|Update|UpdateStatus|Patch|Delete|DeleteCollection|Apply)\(ctx' -- '*.go' ':!*_test.go' ':!internal/testutil/*' ':!test/*' ':!hack/*'
# Every package has a doc.go.
for d in $(go list -f '{{.Dir}}' ./... ); do
  rel=${d#"$PWD/"}
  if ls "$d"/*.go >/dev/null 2>&1 && [ ! -f "$d/doc.go" ] && ! grep -qs '^// Package\|^// Command' "$d"/*.go; then
    echo "✗ $rel has no package documentation (doc.go)"; fail=1
  fi
done
# Every test binary runs in the hermetic environment (internal/testutil/hermetic):
# a TestMain that calls hermetic.Main/Run/Apply, or kubeenv.RunTests (which does).
for d in $(go list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.Dir}}{{end}}' ./...); do
  rel=${d#"$PWD/"}
  [ "$rel" = internal/testutil/hermetic ] && continue # its own TestMain calls Main
  # CI's run clock imports nothing of the module (it is built before anything
  # else, and judges the run's time apart from the code under test); its tests
  # are pure arithmetic and read no environment.
  [ "$rel" = hack/runclock ] && continue
  if ! grep -qsE 'hermetic\.(Main|Run|Apply)\(|kubeenv\.RunTests\(' "$d"/*_test.go; then
    echo "✗ $rel: its tests do not run in the hermetic environment; add: func TestMain(m *testing.M) { hermetic.Main(m) }"; fail=1
  fi
done
exit $fail
