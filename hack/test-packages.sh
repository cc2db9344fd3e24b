#!/usr/bin/env bash
# Prints the packages `make test` runs with the race detector (race) or without
# (plain), space-separated. A package with tests is a race package when its own
# code or its tests run concurrently: a go statement, a channel, package sync
# or sync/atomic, or an errgroup in any of its .go files. The race detector
# finds nothing in the others that their plain run does not, and costs them
# 2-10x in run time. Every package with tests is in exactly one list.
#
#   hack/test-packages.sh race|plain|all
set -euo pipefail
cd "$(dirname "$0")/.."
want=${1:?usage: hack/test-packages.sh race|plain|all}
race=() plain=()
while read -r pkg dir files; do
  [ -n "$files" ] || continue
  paths=()
  for f in $files; do paths+=("$dir/$f"); done
  if grep -qE '(^|[^A-Za-z0-9_."])go (func\b|[A-Za-z_][A-Za-z0-9_.]*\()|\bchan\b|<-|"sync"|"sync/atomic"|errgroup\.' "${paths[@]}"; then
    race+=("$pkg")
  else
    plain+=("$pkg")
  fi
done < <(go list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}} {{.Dir}} {{join .GoFiles " "}} {{join .TestGoFiles " "}} {{join .XTestGoFiles " "}}{{end}}' ./...)
case $want in
  race) echo "${race[*]}" ;;
  plain) echo "${plain[*]}" ;;
  all) echo "race: ${race[*]}"; echo "plain: ${plain[*]}" ;;
  *) echo "usage: hack/test-packages.sh race|plain|all" >&2; exit 2 ;;
esac
