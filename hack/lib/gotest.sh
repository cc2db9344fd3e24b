# gotest LABEL GO-TEST-ARGS... (source it): runs `go test -json ARGS` through
# hack/testsum, which prints failures, skips and a closing line, and appends the
# run's counts to $KDYN_TEST_RECORDS when it is set (hack/test.sh sums them up).
# The array GOTEST_ENV, when set, holds NAME=VALUE assignments for go test alone
# (hack/hostile-env.sh).
# Returns non-zero when go test or a test failed.
#
# go test's own vet pass is off (-vet=off): make verify runs go vet over every
# package and its tests, and the pass go test adds would repeat part of it in
# each build configuration it runs in (race, plain, arm64), facts of every
# dependency included — about 50 CPU-seconds per configuration on a fresh
# machine, for no finding verify does not make.
gotest() {
  local label=$1
  shift
  local testsum=${KDYN_TESTSUM:-}
  if [ -z "$testsum" ]; then
    testsum=$(mktemp -d)/testsum
    env -u GOOS -u GOARCH CGO_ENABLED=0 go build -o "$testsum" ./hack/testsum
  fi
  local rec=()
  [ -n "${KDYN_TEST_RECORDS:-}" ] && rec=(-record "$KDYN_TEST_RECORDS")
  local rc
  set +e
  env ${GOTEST_ENV[@]+"${GOTEST_ENV[@]}"} go test -json -vet=off "$@" 2>&1 | "$testsum" -label "$label" "${rec[@]}"
  rc=("${PIPESTATUS[@]}")
  set -e
  [ "${rc[0]}" -eq 0 ] && [ "${rc[1]}" -eq 0 ]
}
