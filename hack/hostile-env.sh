#!/usr/bin/env bash
# Runs the packages that print or resolve paths under a hostile environment, to
# prove that their tests are hermetic (internal/testutil/hermetic): every
# variable a test could depend on is set to an odd value -- a kubeconfig and a
# home directory of someone else's pointing at a dead server, Hugging Face and
# XDG caches elsewhere, NO_COLOR and CLICOLOR_FORCE both set, 40 columns, a
# 256-colour terminal, a time zone 14 hours ahead of UTC, a Turkish locale, a
# dead HTTPS proxy, etcd credentials. A test that reads any of them instead of
# setting what it depends on fails here. Part of `make test`.
#
#   hack/hostile-env.sh [PACKAGES...]   (default: all but test/e2e, pkg/routecore
#                                        and internal/testutil/kubeenv, which
#                                        neither print nor resolve paths)
set -euo pipefail
cd "$(dirname "$0")/.."
. hack/lib/gotest.sh

# The Go toolchain's own locations first, so the hostile XDG_CACHE_HOME and HOME
# do not send go to an empty build cache; KDYN_CACHE keeps the provisioned data.
GOCACHE=$(go env GOCACHE) GOMODCACHE=$(go env GOMODCACHE) GOPATH=$(go env GOPATH) GOENV=$(go env GOENV)
export GOCACHE GOMODCACHE GOPATH GOENV
export KDYN_CACHE="${KDYN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-dynamo}"

if [ $# -gt 0 ]; then
  pkgs=("$@")
else
  mapfile -t pkgs < <(go list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}}{{end}}' ./... |
    grep -vE '/(test/e2e|pkg/routecore|internal/testutil/kubeenv)$')
fi

h=$(mktemp -d "${TMPDIR:-/tmp}/kdyn-hostile.XXXXXX")
trap 'rm -rf "$h"' EXIT
mkdir -p "$h/home/.kube" "$h/xdg cache/huggingface/hub/models--Qwen--Qwen3-0.6B" "$h/hf home/hub"
cat >"$h/kubeconfig" <<'KC'
apiVersion: v1
kind: Config
current-context: hostile-context
contexts:
- name: hostile-context
  context: {cluster: hostile, user: hostile, namespace: hostile-namespace}
clusters:
- name: hostile
  cluster: {server: "https://127.0.0.1:1"}
users:
- name: hostile
  user: {token: hostile-token}
KC
cp "$h/kubeconfig" "$h/home/.kube/config"

GOTEST_ENV=(
  HOME="$h/home"
  XDG_CACHE_HOME="$h/xdg cache" XDG_CONFIG_HOME="$h/xdg config" XDG_DATA_HOME="$h/xdg data"
  HF_HOME="$h/hf home" HF_HUB_CACHE="$h/hf home/hub" HF_HUB_OFFLINE=1
  KUBECONFIG="$h/kubeconfig"
  NO_COLOR=1 CLICOLOR_FORCE=1 FORCE_COLOR=3 COLORTERM=truecolor TERM=xterm-256color
  COLUMNS=40 LINES=5
  TZ=Pacific/Kiritimati LANG=tr_TR.UTF-8 LC_ALL=tr_TR.UTF-8
  HTTPS_PROXY=http://127.0.0.1:9 HTTP_PROXY=http://127.0.0.1:9
  KDYN_ETCD_USERNAME=hostile KDYN_ETCD_PASSWORD=hostile ETCD_ENDPOINTS=http://127.0.0.1:9
  PAGER=false
)
gotest hostile-env -count=1 -shuffle=on "${pkgs[@]}"
