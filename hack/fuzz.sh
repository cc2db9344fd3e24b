#!/usr/bin/env bash
# Runs every fuzz target in the module for a short time each, and prints a
# summary line per target (executions, new corpus entries) at the end.
# Usage: hack/fuzz.sh [DURATION]   (default 10s per target)
#        hack/fuzz.sh --compile      only compile the instrumented test binaries,
#                                    into the build cache (.ci/run does it in the
#                                    background while make test runs)
# FUZZ_BINS=DIR keeps the linked binaries in DIR: --compile leaves them there
# and a run then uses them instead of linking them again (.ci/run sets it for
# both, within one checkout; unset, each run links its own).
# The targets are found from the source (func FuzzXxx in *_test.go), which is much
# faster than `go test -list` over every package. A failing target stops the run
# with its reproducer in testdata/fuzz/<target>/ (commit it once fixed).
set -euo pipefail
cd "$(dirname "$0")/.."
d=${1:-10s}
compile_only=
if [ "$d" = --compile ]; then compile_only=1; fi
summary=()
began=$(date +%s)
if [ -n "${FUZZ_BINS:-}" ]; then
  bins=$FUZZ_BINS
  mkdir -p "$bins"
else
  bins=$(mktemp -d)
  trap 'rm -rf "$bins"' EXIT
fi
root=$PWD
# make test's build configuration (hack/test.sh): the packages the fuzzing
# engine leaves uninstrumented (runtime, reflect, sync, time, testing...) are
# then the same compilation as the tests', and no cgo is compiled.
export CGO_ENABLED=0
case " ${GOFLAGS:-} " in *" -trimpath "*) ;; *) export GOFLAGS="${GOFLAGS:+$GOFLAGS }-trimpath" ;; esac
gocache=$(go env GOCACHE)
module=$(go list -m)
# The module's own packages and the standard library compiled as usual, every
# other dependency (client-go, the API types, cli-runtime...) with -N -l: the
# fuzzing engine instruments all of them for coverage, which makes them a
# build configuration of their own that nothing else shares; without
# optimizations they compile in less time, and the code being fuzzed, the
# module's, runs at full speed.
gcflags=("-gcflags=all=-N -l" "-gcflags=std=" "-gcflags=$module/...=")
# One instrumented test binary per package (go test -c -fuzz), run once per
# target from the package directory: linking a binary per target was most of
# the time (about 9 s of a 12 s run of a 3 s target in what was pkg/inspect).
built=""
while IFS=: read -r file target; do
  pkg="./$(dirname "$file")"
  bin="$bins/$(echo "$pkg" | tr '/.' '__').test"
  if [ "$built" != "$pkg" ]; then
    if [ -n "$compile_only" ] || [ -z "${FUZZ_BINS:-}" ] || [ ! -x "$bin" ]; then
      go test -c -vet=off -fuzz "^${target}\$" "${gcflags[@]}" -o "$bin.tmp" "$pkg"
      mv "$bin.tmp" "$bin" # (whole, or not there: a run reuses what it finds)
    fi
    built=$pkg
  fi
  [ -z "$compile_only" ] || continue
  echo "== $pkg $target ($d)"
  log=$(mktemp)
  corpus="$pkg/testdata/fuzz/$target"
  before=$(ls "$corpus" 2>/dev/null | sort || true)
  for attempt in 1 2; do
    if (cd "$pkg" && "$bin" -test.run '^$' -test.fuzz "^${target}\$" -test.fuzztime "$d" \
      -test.fuzzcachedir "$gocache/fuzz/$module/${pkg#./}") 2>&1 | tee "$log"; then
      break
    fi
    # Go's fuzzing engine sometimes reports its own deadline ("context
    # deadline exceeded") as a failure when -fuzztime ends while a worker is
    # still busy, with no failing input: no reproducer is written. Run such a
    # target once more; a real failure writes a reproducer and fails again.
    after=$(ls "$corpus" 2>/dev/null | sort || true)
    if [ "$attempt" = 1 ] && [ "$before" = "$after" ] && grep -q 'context deadline exceeded' "$log" &&
      ! grep -qE 'Failing input written to|panic:' "$log"; then
      echo "retry: $pkg $target: the fuzzing engine hit its deadline without a failing input (no reproducer written); running it once more" >&2
      continue
    fi
    rm -f "$log"
    echo "FAIL: $pkg $target (its reproducer is under $corpus/)" >&2
    exit 1
  done
  last=$(grep -E '^fuzz: elapsed' "$log" | tail -1 || true)
  execs=$(sed -nE 's/.*execs: ([0-9]+).*/\1/p' <<<"$last")
  summary+=("$(printf '%-48s %-34s %10s execs' "$pkg" "$target" "${execs:-?}")")
  rm -f "$log"
done < <(grep -rhoE --include='*_test.go' '^func (Fuzz[A-Za-z0-9_]+)\(' --with-filename . |
  sed -E 's/^\.\///; s/:func (Fuzz[A-Za-z0-9_]+)\(/:\1/' | grep -v '^dist/' | sort)
cd "$root"
if [ -n "$compile_only" ]; then
  echo "fuzz: compiled the instrumented test binaries in $(($(date +%s) - began))s"
  exit 0
fi
echo
echo "== fuzz summary ($d per target, $(($(date +%s) - began))s in all)"
printf '%s\n' "${summary[@]}"
