#!/usr/bin/env bash
# Prints the packages `make test` runs with the race detector (race) or without
# (plain), space-separated. A package with tests is a race package when its own
# code or its tests run concurrently: a go statement, a channel, package sync
# or sync/atomic, or an errgroup in any of its .go files. The race detector
# finds nothing in the others that their plain run does not, and costs them
# 2-10x in run time. Every package with tests is in exactly one list.
#
# Three packages run plain although their tests start goroutines: the race
# detector compares memory that two goroutines share, and there the goroutines
# share none (each is listed in plain_by_reason below, with why). Under -race
# they were 300 of the run's 590 test-seconds.
#
# Each list splits again by what its tests need: a live package's tests start a
# real control plane (they import internal/testutil/kubeenv, which needs the
# kube-apiserver, etcd and kubectl that make test builds in the background); an
# offline package's do not, so make test runs them while that build goes on.
#
#   hack/test-packages.sh race|plain|all
#   hack/test-packages.sh race-offline|race-live|plain-offline|plain-live
#   hack/test-packages.sh offline|live     (both lists)
set -euo pipefail
cd "$(dirname "$0")/.."
want=${1:?usage: hack/test-packages.sh race|plain|all|race-offline|race-live|plain-offline|plain-live|offline|live}
declare -A list=()
module=github.com/ai-dynamo/kubectl-dynamo
declare -A plain_by_reason=(
  # Its tests run the command in a goroutine under a watchdog and take the
  # result over a channel, and feed a FIFO through the file system; the
  # simulation is single-threaded (pkg/build's parallel build, which it reads
  # captures with, runs under -race in its own package).
  [$module/internal/cmd/simulate]=1
  # The same watchdog around the single-threaded simulation.
  [$module/pkg/simulate]=1
  # The code under test runs in other processes (the plugin through kubectl,
  # the API server, etcd); the harness's goroutines read their output, and
  # kubeenv, which starts them, runs under -race in its own package.
  [$module/test/e2e]=1
)
add() { list[$1]="${list[$1]:+${list[$1]} }$2"; }
while read -r pkg dir files; do
  [ -n "$files" ] || continue
  paths=() tests=()
  for f in $files; do
    paths+=("$dir/$f")
    case $f in *_test.go) tests+=("$dir/$f") ;; esac
  done
  kind=plain
  if [ -z "${plain_by_reason[$pkg]:-}" ] && grep -qE '(^|[^A-Za-z0-9_."])go (func\b|[A-Za-z_][A-Za-z0-9_.]*\()|\bchan\b|<-|"sync"|"sync/atomic"|errgroup\.' "${paths[@]}"; then
    kind=race
  fi
  where=offline
  if [ "$pkg" = github.com/ai-dynamo/kubectl-dynamo/internal/testutil/kubeenv ] ||
    grep -qF '"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/kubeenv"' "${tests[@]}"; then
    where=live
  fi
  add "$kind" "$pkg"
  add "$kind-$where" "$pkg"
  add "$where" "$pkg"
done < <(go list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}} {{.Dir}} {{join .GoFiles " "}} {{join .TestGoFiles " "}} {{join .XTestGoFiles " "}}{{end}}' ./...)
case $want in
  race | plain | race-offline | race-live | plain-offline | plain-live | offline | live) echo "${list[$want]:-}" ;;
  all) echo "race: ${list[race]:-}"; echo "plain: ${list[plain]:-}" ;;
  *) echo "usage: hack/test-packages.sh race|plain|all|race-offline|race-live|plain-offline|plain-live|offline|live" >&2; exit 2 ;;
esac
