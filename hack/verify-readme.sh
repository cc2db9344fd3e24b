#!/usr/bin/env bash
# Runs the README's first set-up command (the offline main job) and fails if it
# does not succeed, so the README's promise keeps working.
set -euo pipefail
cd "$(dirname "$0")/.."
first=$(awk '/^```/{n++; next} n==1 {print; exit}' README.md | sed 's/[[:space:]]*#.*$//')
case "$first" in
  "go run ./cmd/kubectl-dynamo "*) ;;
  *) echo "README's first command is not a kubectl-dynamo run: $first" >&2; exit 1 ;;
esac
echo "+ $first"
out=$(bash -c "$first")
echo "$out" | head -5
[ -n "$out" ] || { echo "README's first command printed nothing" >&2; exit 1; }
