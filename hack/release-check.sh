#!/usr/bin/env bash
# Checks the release configuration without publishing anything (`make release-check`,
# run by CI through .ci/run):
#
#   1. `goreleaser check` on .goreleaser.yaml (all six platforms, archives,
#      checksums, the krews: section).
#   2. A snapshot release (`goreleaser release --snapshot --clean --skip=publish`)
#      into dist/ of the host platform only: the same builds, ldflags, archive and
#      krew sections with `goos`/`goarch` narrowed to this machine's, because
#      cross-compiling all six targets takes about 14 minutes on CI's 2 cores.
#      `make release-snapshot` builds all six.
#   3. The generated krew manifest (dist/krew/dynamo.yaml) through krew's own
#      validate-krew-manifest (structure, selectors; -skip-install, as it would
#      download from the release URL).
#   4. A real `kubectl krew install --manifest … --archive …` of the snapshot
#      archive into a throwaway KREW_ROOT (checksum, extraction, the bin link), then
#      `kubectl dynamo version` through the krew-installed plugin (the version must
#      be the manifest's), the LICENSE and kubectl_complete-dynamo next to it, and
#      `kubectl __complete dynamo` after following the caveat's completion step.
#
# goreleaser, validate-krew-manifest and krew are built once from the Go module
# proxy into $KDYN_CACHE/tools (hack/install-go-tool.sh), pinned below.
#
# `hack/release-check.sh --tools-only` (make release-tools) only builds the tools.
#
# Environment: RELEASE_CHECK_ALL=1 builds all six platforms in step 2 (and validates
# the six-platform manifest). KDYN_TESTBIN's kubectl is used when set, else the
# kubectl on PATH; without one, step 4 fails under CI and is skipped otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."

GORELEASER_VERSION=v2.16.0 # v2.17+ needs a newer Go than go.mod's, or modules the proxy refuses
KREW_VERSION=v0.5.0
tools=${KDYN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-dynamo}/tools
goreleaser=$tools/goreleaser-$GORELEASER_VERSION
validate=$tools/validate-krew-manifest-$KREW_VERSION
krew=$tools/krew-$KREW_VERSION

step() { echo "== release-check: $*"; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

step "tools"
hack/install-go-tool.sh "github.com/goreleaser/goreleaser/v2@$GORELEASER_VERSION" github.com/goreleaser/goreleaser/v2 "$goreleaser"
hack/install-go-tool.sh "sigs.k8s.io/krew@$KREW_VERSION" sigs.k8s.io/krew/cmd/validate-krew-manifest "$validate"
hack/install-go-tool.sh "sigs.k8s.io/krew@$KREW_VERSION" sigs.k8s.io/krew/cmd/krew "$krew"
if [ "${1:-}" = --tools-only ]; then exit 0; fi

step "goreleaser check"
"$goreleaser" check .goreleaser.yaml

config=.goreleaser.yaml
if [ "${RELEASE_CHECK_ALL:-}" != 1 ]; then
  goos=$(go env GOOS)
  goarch=$(go env GOARCH)
  config=$work/goreleaser-host.yaml
  # The one place the host config differs: the build matrix.
  sed -e "s/^    goos: \[linux, darwin, windows\]$/    goos: [$goos]/" \
      -e "s/^    goarch: \[amd64, arm64\]$/    goarch: [$goarch]/" .goreleaser.yaml > "$config"
  if [ "$(grep -c "^    goos: \[$goos\]$\|^    goarch: \[$goarch\]$" "$config")" != 2 ]; then
    echo "release-check: .goreleaser.yaml's build matrix is no longer 'goos: [linux, darwin, windows]' / 'goarch: [amd64, arm64]'; update $0" >&2
    exit 1
  fi
  step "snapshot release for $goos/$goarch (RELEASE_CHECK_ALL=1 for all six platforms)"
else
  step "snapshot release for all six platforms"
fi
start=$SECONDS
"$goreleaser" release --config "$config" --snapshot --clean --skip=publish
echo "   (snapshot took $((SECONDS - start))s)"

manifest=dist/krew/dynamo.yaml
[ -f "$manifest" ] || { echo "release-check: goreleaser did not write $manifest" >&2; exit 1; }
for f in dist/checksums.txt; do [ -s "$f" ] || { echo "release-check: $f missing" >&2; exit 1; }; done

step "validate-krew-manifest $manifest"
"$validate" -manifest "$manifest" -skip-install

step "krew install from the snapshot archive"
kubectl=${KDYN_TESTBIN:+$KDYN_TESTBIN/kubectl}
if [ -z "$kubectl" ] || [ ! -x "$kubectl" ]; then kubectl=$(command -v kubectl || true); fi
if [ -z "$kubectl" ]; then
  if [ -n "${CI:-}" ]; then echo "release-check: no kubectl to install the plugin with" >&2; exit 1; fi
  echo "   skipped: no kubectl on PATH (CI fails here)"
  exit 0
fi
goos=$(go env GOOS)
goarch=$(go env GOARCH)
archive=$(ls dist/kubectl-dynamo_"${goos}"_"${goarch}".tar.gz)
root=$work
mkdir -p "$root/path"
ln -s "$krew" "$root/path/kubectl-krew"
ln -s "$kubectl" "$root/path/kubectl"
export KREW_ROOT="$root/krew" KREW_OS=$goos KREW_ARCH=$goarch
export PATH="$root/path:$KREW_ROOT/bin:/usr/bin:/bin" HOME="$root" KUBECONFIG=/dev/null
kubectl krew install --manifest="$manifest" --archive="$archive" < /dev/null > "$root/install.log" 2>&1 ||
  { cat "$root/install.log" >&2; exit 1; }
version=$(sed -n 's/^  version: //p' "$manifest")
out=$(kubectl dynamo version -o json)
echo "$out" | grep -q "\"version\": \"$version\"" ||
  { echo "release-check: kubectl dynamo version through krew printed $out, want version $version (the manifest's)" >&2; exit 1; }
echo "   kubectl dynamo version through krew: $version"
installed=$KREW_ROOT/store/dynamo/$version
for f in LICENSE README.md kubectl_complete-dynamo kubectl-dynamo; do
  [ -f "$installed/$f" ] || { echo "release-check: krew did not install $f (in $installed)" >&2; exit 1; }
done
# The caveat's completion command must name a file that exists.
link=$(grep -o '"${KREW_ROOT:-$HOME/.krew}"/store/dynamo/[^ ]*kubectl_complete-dynamo' "$manifest" | head -1)
[ -n "$link" ] && [ -f "$KREW_ROOT/store/${link#*/store/}" ] ||
  { echo "release-check: the caveats' completion path ($link) does not exist after install" >&2; exit 1; }
# Follow the caveat, then complete through kubectl as a user would.
ln -s "$KREW_ROOT/store/${link#*/store/}" "$KREW_ROOT/bin/kubectl_complete-dynamo"
kubectl __complete dynamo "" 2>/dev/null | grep -q '^topology' ||
  { echo "release-check: kubectl __complete dynamo does not reach the krew-installed plugin" >&2; exit 1; }
echo "   installed: $(cd "$installed" && echo *); kubectl dynamo <TAB> completes"
echo "release-check: ok"
