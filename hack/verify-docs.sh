#!/usr/bin/env bash
# Fails when the generated documentation drifts from the code: the CLI reference
# in docs/reference/ and every `<!-- generated: kubectl dynamo … -->` block in
# README.md and docs/ (hack/gen-docs). Fix with `make docs`.
set -euo pipefail
cd "$(dirname "$0")/.."
go run ./hack/gen-docs -check
