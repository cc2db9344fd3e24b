#!/usr/bin/env bash
# Builds the integration-test control plane -- kube-apiserver, kubectl (both from
# k8s.io/kubernetes) and the etcd server -- from the Go module proxy, installs them
# into a versioned cache directory outside the repository and prints that directory
# on stdout (all progress output goes to stderr).
#
#   export KDYN_TESTBIN="$(hack/testbin/provision.sh)"
#   go test -timeout 20m ./...
#
# Idempotent: when the binaries are already installed it prints the directory and
# exits at once. Concurrent runs serialize on a lock file. The builds happen in
# throwaway main modules in a temp dir with their own GOFLAGS, so the repository's
# go.mod/go.sum are never touched and nothing built lands in the repository.
#
# Environment:
#   KDYN_TESTBIN        install into exactly this directory instead of the default
#                       ${KDYN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-dynamo}/testbin/k8s-<v>-etcd-<v>
#   K8S_VERSION         override the pinned k8s.io/kubernetes version (versions.env)
#   ETCD_VERSION        override the pinned etcd version (versions.env)
#   TESTBIN_GOCACHE     GOCACHE for the build (default: the user's GOCACHE)
#   TESTBIN_GOMODCACHE  GOMODCACHE for the build (default: the user's GOMODCACHE)
#   TESTBIN_ALIGN=0     build kube-apiserver and kubectl with Kubernetes' own
#                       dependency versions only (see "Shared compilation" below)
#   TESTBIN_OPTIMIZE=1  compile every package with the compiler's optimizations
#                       (see "Unoptimized" below; the installed directory's
#                       name says which, so the two never mix)
#
# Cold cost (2 cores): roughly 4-6 minutes, ~2.2 GB peak RSS, ~3 GB of GOCACHE;
# the installed binaries take ~200 MB. Warm GOCACHE: ~20 s. Installed: ~0 s.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
env_k8s=${K8S_VERSION:-}
env_etcd=${ETCD_VERSION:-}
# shellcheck source=versions.env
. "$here/versions.env"
K8S_VERSION=${env_k8s:-$K8S_VERSION}
ETCD_VERSION=${env_etcd:-$ETCD_VERSION}

cache_root=${KDYN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-dynamo}/testbin
optimize=${TESTBIN_OPTIMIZE:-0}
case "$optimize" in 0) opt_suffix= ;; 1) opt_suffix=-optimized ;; *) echo "provision: TESTBIN_OPTIMIZE is 0 or 1, not $optimize" >&2; exit 1 ;; esac
OUT=${KDYN_TESTBIN:-$cache_root/k8s-$K8S_VERSION-etcd-$ETCD_VERSION$opt_suffix}
STAMP="k8s=$K8S_VERSION etcd=$ETCD_VERSION${opt_suffix:+ optimized}"

ready() {
  [ -x "$OUT/kube-apiserver" ] && [ -x "$OUT/kubectl" ] && [ -x "$OUT/etcd" ] &&
    [ "$(cat "$OUT/VERSIONS" 2>/dev/null)" = "$STAMP" ]
}

if ready; then echo "$OUT"; exit 0; fi

parent=$(dirname "$OUT")
mkdir -p "$parent"
if command -v flock >/dev/null 2>&1; then
  exec 9>"$OUT.lock"
  flock 9
  if ready; then echo "$OUT"; exit 0; fi # another run finished while we waited
fi

log() { printf 'provision: %s\n' "$*" >&2; }
command -v go >/dev/null 2>&1 || { log "go not found on PATH"; exit 1; }

# Our own Go environment: never the repository's module, workspace or flags.
[ -n "${TESTBIN_GOCACHE:-}" ] && export GOCACHE="$TESTBIN_GOCACHE"
[ -n "${TESTBIN_GOMODCACHE:-}" ] && export GOMODCACHE="$TESTBIN_GOMODCACHE"
export GOFLAGS="-mod=mod -buildvcs=false" GOWORK=off GOTOOLCHAIN=local CGO_ENABLED=0 GO111MODULE=on
unset GOOS GOARCH GOEXPERIMENT

work=$(mktemp -d "${TMPDIR:-/tmp}/kdyn-testbin.XXXXXX")
tmp="$OUT.tmp.$$"
# (etcd builds in the background, below: never leave it writing into removed
# directories)
cleanup() {
  [ -z "${etcd_pid:-}" ] || wait "$etcd_pid" 2>/dev/null || true
  rm -rf "$work" "$tmp"
}
trap cleanup EXIT
mkdir -p "$tmp"
start=$SECONDS

# --- kube-apiserver + kubectl -------------------------------------------------
# k8s.io/kubernetes requires its staging modules (k8s.io/api, ...) at v0.0.0 and
# replaces them with ./staging paths; `go install pkg@version` refuses modules with
# replace directives, so build from a throwaway main module that replaces every
# such k8s.io/X v0.0.0 with the published k8s.io/X v0.<minor>.<patch>.
log "resolving k8s.io/kubernetes@$K8S_VERSION"
mkdir "$work/k8s"
cd "$work/k8s"
staging="v0.${K8S_VERSION#v1.}"
# Download the whole module (not just its go.mod): the proxy here serves the .mod
# of some versions but answers 403 for their .zip (v1.37.2 at the time of writing).
dl=$(go mod download -json "k8s.io/kubernetes@$K8S_VERSION" 2>&1) || true
modfile=$(printf '%s\n' "$dl" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
if printf '%s\n' "$dl" | grep -q '"Error"' || [ -z "$modfile" ] || [ ! -f "$modfile" ]; then
  printf '%s\n' "$dl" >&2
  log "cannot download k8s.io/kubernetes@$K8S_VERSION from the module proxy"
  log "pick another version (K8S_VERSION=..., or edit hack/testbin/versions.env) and check it with:"
  log "  go mod download -json k8s.io/kubernetes@vX.Y.Z   # must show a Zip and no Error"
  exit 1
fi
# Shared compilation: the repository's own build (make test's vet, lint and
# tests, built CGO_ENABLED=0 -trimpath as here) compiles client-go, the API
# types, apimachinery, cli-runtime, grpc, protobuf and the golang.org/x modules:
# about 560 of its 720 dependency packages are also in kube-apiserver and
# kubectl. Go's build cache shares a compiled package between the two builds
# only when its version, and its dependencies' versions, are the same; so the
# throwaway module also requires the repository's go.mod versions (Go takes the
# higher of the two for each module), and takes the repository's version of a
# staging module (k8s.io/api, apimachinery, client-go, cli-runtime) when it is
# of the same minor release. On a fresh machine that saves the compilation of
# those packages once (about 100 CPU-seconds of the 570 this script takes).
# Should that combination not compile (a later bump on either side), the build
# falls back to Kubernetes' own versions. TESTBIN_ALIGN=0 skips it.
repo_gomod=$here/../../go.mod
k8s_gomod() { # ALIGN(0|1): the throwaway module's go.mod on stdout
  printf 'module kdyn.testbin/k8s\n\ngo %s\n\nrequire k8s.io/kubernetes %s\n' \
    "$(go env GOVERSION | sed 's/^go//; s/^\([0-9]*\.[0-9]*\).*/\1.0/')" "$K8S_VERSION"
  if [ "$1" = 1 ]; then
    printf '\n// the repository'"'"'s versions (shared compilation)\nrequire (\n'
    awk '/^require \(/ {r = 1; next} r && /^\)/ {r = 0} r && NF >= 2 {print "\t" $1 " " $2}' "$repo_gomod"
    echo ")"
  fi
  printf '\nreplace (\n'
  awk -v v="$staging" -v align="$1" -v ours="$repo_gomod" '
    BEGIN {
      split(v, sv, ".")
      while (align == 1 && (getline l < ours) > 0) {
        n = split(l, f, " ")
        if (n >= 2 && f[1] ~ /^k8s\.io\//) { split(f[2], ov, "."); if (ov[1] == sv[1] && ov[2] == sv[2]) mine[f[1]] = f[2] }
      }
    }
    $1 ~ /^k8s\.io\// && $2 == "v0.0.0" {print "\t" $1 " => " $1 " " (($1 in mine) ? mine[$1] : v)}' "$modfile" | sort -u
  echo ")"
}
align=1
if [ "${TESTBIN_ALIGN:-1}" = 0 ] || [ ! -f "$repo_gomod" ]; then align=0; fi
k8s_gomod "$align" >go.mod
minor=${K8S_VERSION#v1.}
minor=${minor%%.*}
ld="-s -w"
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ld="$ld -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean"
  ld="$ld -X $p.gitCommit=0000000000000000000000000000000000000000 -X $p.buildDate=1970-01-01T00:00:00Z"
done
# Unoptimized: these binaries are test equipment, started a few dozen times per
# run for seconds each, and compiling them is most of a fresh machine's test
# time. Packages the repository's own build compiles too (`go list -deps -test
# ./...` there, and the standard library) keep the compiler's defaults, so that
# the build cache shares them (above); every other package (Kubernetes' own,
# apiserver, kubectl, cel-go, the informers...) is compiled with -N -l, no
# optimizations and no inlining: the same code, the same behaviour. Measured on
# a 2-core machine from the same cache state (after the repository's `go vet
# ./...`), back to back: this script 561 CPU-seconds with TESTBIN_OPTIMIZE=1,
# 476 without (304 s → 263 s); the live tests took the same CPU time against
# either control plane (97 and 90 CPU-seconds).
# TESTBIN_OPTIMIZE=1 compiles everything with the defaults.
gcflags=()
if [ "$optimize" = 0 ]; then
  gcflags=("-gcflags=all=-N -l" "-gcflags=std=")
  if [ -f "$repo_gomod" ] && shared=$(cd "$(dirname "$repo_gomod")" && GOFLAGS=-mod=readonly go list -deps -test \
    -f '{{if and .Module (not .ForTest) (not .Standard)}}{{.ImportPath}}{{end}}' ./... 2>/dev/null); then
    for p in $shared; do gcflags+=("-gcflags=$p="); done
  else
    log "could not list the repository's packages: compiling them unoptimized here too (nothing shared)"
  fi
fi
# --- etcd ---------------------------------------------------------------------
# Built beside kube-apiserver and kubectl, not after them: their build ends on a
# chain of large packages and two links that keep one core at most, which etcd's
# build fills (under make test this is the time the live tests wait for).
# The root package of go.etcd.io/etcd/server/v3 is the etcd main package.
build_etcd() {
  log "building etcd $ETCD_VERSION"
  mkdir "$work/etcd"
  cd "$work/etcd"
  printf 'module kdyn.testbin/etcd\n\ngo 1.26.0\n' >go.mod
  go get "go.etcd.io/etcd/server/v3@$ETCD_VERSION" >&2
  local etcd_ld="-s -w"
  # etcd stamps its git SHA here; the semantic version is a constant in its source.
  etcd_ld="$etcd_ld -X go.etcd.io/etcd/api/v3/version.GitSHA=$ETCD_VERSION"
  go build -trimpath ${gcflags[@]+"${gcflags[@]}"} -ldflags "$etcd_ld" -o "$tmp/etcd" go.etcd.io/etcd/server/v3 >&2
  log "etcd built after $((SECONDS - start)) s"
}
(build_etcd) &
etcd_pid=$!

log "building kube-apiserver and kubectl $K8S_VERSION (the slow part: several minutes cold)"
build_k8s() {
  go get "k8s.io/kubernetes/cmd/kube-apiserver@$K8S_VERSION" "k8s.io/kubernetes/cmd/kubectl@$K8S_VERSION" >&2 &&
    go build -trimpath ${gcflags[@]+"${gcflags[@]}"} -ldflags "$ld" -o "$tmp/" \
      k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kubectl >&2
}
if ! build_k8s; then
  [ "$align" = 1 ] || exit 1
  log "kube-apiserver and kubectl do not build with the repository's dependency versions; building with Kubernetes' own"
  k8s_gomod 0 >go.mod
  rm -f go.sum
  build_k8s
fi
log "k8s built after $((SECONDS - start)) s"
wait "$etcd_pid" || { log "etcd $ETCD_VERSION did not build (above)"; exit 1; }

# --- verify and install -------------------------------------------------------
"$tmp/kube-apiserver" --version >&2
"$tmp/kubectl" version --client=true >&2 2>/dev/null || true
"$tmp/etcd" --version >&2
echo "$STAMP" >"$tmp/VERSIONS"
rm -rf "$OUT"
mv "$tmp" "$OUT"
log "installed into $OUT in $((SECONDS - start)) s"
echo "$OUT"
