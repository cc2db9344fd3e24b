#!/usr/bin/env bash
# Runs every fuzz target in the module for a short time each, and prints a
# summary line per target (executions, new corpus entries) at the end.
# Usage: hack/fuzz.sh [DURATION]   (default 10s per target)
# The targets are found from the source (func FuzzXxx in *_test.go), which is much
# faster than `go test -list` over every package. A failing target stops the run
# with its reproducer in testdata/fuzz/<target>/ (commit it once fixed).
set -euo pipefail
cd "$(dirname "$0")/.."
d=${1:-10s}
summary=()
began=$(date +%s)
while IFS=: read -r file target; do
  pkg="./$(dirname "$file")"
  echo "== $pkg $target ($d)"
  log=$(mktemp)
  if ! go test -run '^$' -fuzz "^${target}\$" -fuzztime "$d" "$pkg" 2>&1 | tee "$log"; then
    rm -f "$log"
    echo "FAIL: $pkg $target" >&2
    exit 1
  fi
  last=$(grep -E '^fuzz: elapsed' "$log" | tail -1 || true)
  execs=$(sed -nE 's/.*execs: ([0-9]+).*/\1/p' <<<"$last")
  summary+=("$(printf '%-48s %-34s %10s execs' "$pkg" "$target" "${execs:-?}")")
  rm -f "$log"
done < <(grep -rhoE --include='*_test.go' '^func (Fuzz[A-Za-z0-9_]+)\(' --with-filename . |
  sed -E 's/^\.\///; s/:func (Fuzz[A-Za-z0-9_]+)\(/:\1/' | grep -v '^dist/' | sort)
echo
echo "== fuzz summary ($d per target, $(($(date +%s) - began))s in all)"
printf '%s\n' "${summary[@]}"
