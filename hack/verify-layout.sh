#!/usr/bin/env bash
# The layout rules of docs/development.md ("Layout"), checked on the import
# graph (go list; tests excluded, they may use internal/testutil):
#   - pkg/model imports only the standard library and pkg/routecore;
#   - pkg/routecore, pkg/model, pkg/explain, pkg/simulate and pkg/audit never
#     reach k8s.io/client-go, not even through another package;
#   - pkg/raw (the typed objects the sources return), pkg/explain,
#     pkg/simulate and pkg/audit reach no k8s.io package at all;
#   - pkg/build reaches neither client-go nor apimachinery's unstructured
#     objects, and only the sources and preflight decode (pkg/raw/decode);
#   - nothing under pkg/ reaches internal/;
#   - pkg/build, pkg/analysis, pkg/explain, pkg/simulate, pkg/preflight,
#     pkg/audit and pkg/tui never reach a source (pkg/source/...): they read
#     the model.
# Prints every violation with the import chain that causes it, and fails.
set -euo pipefail
cd "$(dirname "$0")/.."
module=$(go list -m)
fail=0

# deps PKGPATTERN: every non-test package PKGPATTERN depends on, one per line,
# prefixed with the package that was asked for.
deps() { go list -deps -f '{{.ImportPath}}' "$@" 2>/dev/null; }

# why TARGET FROM...: the first import chain from a package to TARGET.
why() {
  local target=$1; shift
  go list -f '{{.ImportPath}}: {{join .Imports " "}}' $(go list -deps "$@") 2>/dev/null |
    awk -v t="$target" -F': ' '{ n=split($2, a, " "); for (i=1;i<=n;i++) if (a[i]==t) print $1 " → " t }' | head -3
}

check_none() { # DESCRIPTION REGEX PACKAGES...
  local what=$1 re=$2; shift 2
  for p in "$@"; do
    local bad
    bad=$(deps "$p" | grep -E "$re" || true)
    if [ -n "$bad" ]; then
      echo "✗ $p $what:"
      for b in $(echo "$bad" | head -5); do echo "    $b (via $(why "$b" "$p" | head -1))"; done
      fail=1
    fi
  done
}

# The model: standard library and routecore only (direct imports).
model_imports=$(go list -f '{{join .Imports "\n"}}' ./pkg/model | grep '\.' | grep -v "^$module/pkg/routecore\$" || true)
if [ -n "$model_imports" ]; then
  echo "✗ pkg/model imports more than the standard library and pkg/routecore:"
  echo "$model_imports" | sed 's/^/    /'
  fail=1
fi

check_none "reaches k8s.io/client-go" '^k8s\.io/client-go(/|$)' \
  ./pkg/routecore/... ./pkg/model/... ./pkg/explain/... ./pkg/simulate/... ./pkg/audit/...
check_none "reaches a k8s.io package" '^k8s\.io/' ./pkg/raw ./pkg/explain/... ./pkg/simulate/... ./pkg/audit/...
check_none "reaches k8s.io/client-go or unstructured objects" '^k8s\.io/(client-go(/|$)|apimachinery/pkg/apis/meta/v1/unstructured$)' ./pkg/build/...
check_none "reaches pkg/raw/decode (it reads typed objects; the sources and preflight decode)" "^$module/pkg/raw/decode\$" \
  ./pkg/model/... ./pkg/build/... ./pkg/analysis/... ./pkg/explain/... ./pkg/simulate/... ./pkg/audit/... ./pkg/tui/...
check_none "reaches internal/" "^$module/internal/" ./pkg/...
check_none "reaches a source (pkg/source/...)" "^$module/pkg/source(/|\$)" \
  ./pkg/build/... ./pkg/analysis/... ./pkg/explain/... ./pkg/simulate/... ./pkg/preflight/... ./pkg/audit/... ./pkg/tui/... \
  ./pkg/model/... ./pkg/raw/...

if [ "$fail" = 0 ]; then
  echo "✓ layout: the model at the bottom, no k8s.io under raw/explain/simulate/audit, typed objects into build, no internal/ under pkg/, no source under the readers"
fi
exit $fail
