#!/usr/bin/env bash
# Runs every fuzz target in the module for a short time each.
# Usage: hack/fuzz.sh [DURATION]   (default 10s per target)
set -euo pipefail
cd "$(dirname "$0")/.."
d=${1:-10s}
for pkg in $(go list ./...); do
  for target in $(go test -list '^Fuzz' "$pkg" 2>/dev/null | grep '^Fuzz' || true); do
    echo "== $pkg $target ($d)"
    go test -run '^$' -fuzz "^${target}\$" -fuzztime "$d" "$pkg"
  done
done
