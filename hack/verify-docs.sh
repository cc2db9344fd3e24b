#!/usr/bin/env bash
# Fails when the generated documentation drifts from the code: the CLI reference
# in docs/reference/ and every `<!-- generated: kubectl dynamo … -->` block in
# README.md and docs/ (hack/gen-docs). Fix with `make docs`.
set -euo pipefail
cd "$(dirname "$0")/.."
go run ./hack/gen-docs -check
# The fuzz-target count in docs/reliability.md is the code's.
n=$(git grep -hoE '^func Fuzz[A-Za-z0-9_]+\(' -- '*_test.go' | sort -u | wc -l | tr -d ' ')
if ! grep -q "^| fuzz targets | \*\*$n\*\*" docs/reliability.md; then
  echo "docs/reliability.md: the 'fuzz targets' row does not say **$n** (the number of func FuzzXxx in the code)" >&2
  exit 1
fi
