#!/usr/bin/env bash
# Installs a pinned golangci-lint from the Go module proxy into $KDYN_CACHE/tools (make lint).
# Usage: hack/install-golangci-lint.sh VERSION DEST
set -euo pipefail
version=$1
dest=$2
if [ -x "$dest" ]; then exit 0; fi
mkdir -p "$(dirname "$dest")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "installing golangci-lint $version (built from the Go module proxy; takes a few minutes the first time)"
# -trimpath and CGO_ENABLED=0, as make test builds: the standard library and the
# modules both use at the same versions are compiled once between them.
GOBIN="$tmp" GOFLAGS="-mod=mod -trimpath" CGO_ENABLED=0 go install "github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$version"
mv "$tmp/golangci-lint" "$dest"
