#!/usr/bin/env bash
# Runs packages' tests under a hostile environment (hack/lib/hostile.sh), to
# prove that they are hermetic (internal/testutil/hermetic): a test that reads
# any variable it does not set itself fails here. `make test` runs every one of
# its go test runs but the arm64 one under this environment; this script is
# the same on its own (make test-hostile).
#
#   hack/hostile-env.sh [PACKAGES...]   (default: every package with tests)
set -euo pipefail
cd "$(dirname "$0")/.."
. hack/lib/gotest.sh
. hack/lib/hostile.sh

if [ $# -gt 0 ]; then
  pkgs=("$@")
else
  mapfile -t pkgs < <(go list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}}{{end}}' ./...)
fi
hostile_env_init
trap 'rm -rf "$HOSTILE_DIR"' EXIT
GOTEST_ENV=("${HOSTILE_ENV[@]}")
gotest hostile-env -count=1 -shuffle=on "${pkgs[@]}"
