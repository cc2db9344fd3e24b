#!/usr/bin/env bash
# Builds a pinned Go tool from the Go module proxy into DEST (release-check:
# $KDYN_CACHE/tools), once. The
# destination's name carries the version, so a version bump installs anew and an
# installed one is reused (CI on a fresh machine builds it; later runs find it).
#
# Usage: hack/install-go-tool.sh MODULE@VERSION PACKAGE DEST
#   hack/install-go-tool.sh github.com/goreleaser/goreleaser/v2@v2.16.0 \
#     github.com/goreleaser/goreleaser/v2 ~/.cache/kubectl-dynamo/tools/goreleaser-v2.16.0
#
# The tool is built inside a throwaway module that requires MODULE at VERSION,
# rather than with `go install PACKAGE@VERSION`: the latter also asks the proxy for
# the module's version list (to report deprecation), which some modules' proxy
# entries refuse (sigs.k8s.io/krew answers 403), while the pinned version itself
# downloads fine. Dependencies resolve from MODULE's own go.mod, checked against
# the checksum database as usual.
set -euo pipefail
spec=$1
pkg=$2
dest=$3
if [ -x "$dest" ]; then exit 0; fi
module=${spec%@*}
version=${spec#*@}
case "$version" in
  v[0-9]*) ;;
  *) echo "install-go-tool: $spec is not pinned (MODULE@vX.Y.Z)" >&2; exit 1 ;;
esac
case "$dest" in /*) ;; *) dest="$PWD/$dest" ;; esac
mkdir -p "$(dirname "$dest")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gover=$(go env GOVERSION | sed -E 's/^go([0-9]+\.[0-9]+).*/\1/')
printf 'module kubectl-dynamo-tools\n\ngo %s\n\nrequire %s %s\n' "$gover" "$module" "$version" > "$tmp/go.mod"
echo "building $pkg ($module $version) into ${dest#"$PWD/"} from the Go module proxy (a few minutes the first time)"
start=$SECONDS
# Unoptimized (-N -l) but for the standard library, which the repository's
# build shares, and without a symbol table: these tools run for seconds, and
# goreleaser's 1,800 packages compile in about 45 CPU-seconds less (272 → 213
# CPU-seconds from an empty cache with the standard library compiled
# unoptimized too; 180 with it compiled as the repository's build does).
(cd "$tmp" && GOFLAGS=-mod=mod CGO_ENABLED=0 GOWORK=off go build -trimpath -gcflags='all=-N -l' -gcflags='std=' \
  -ldflags='-s -w' -o "$tmp/tool" "$pkg")
mv "$tmp/tool" "$dest"
echo "built $(basename "$dest") in $((SECONDS - start))s"
