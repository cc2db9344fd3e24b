# gotest LABEL GO-TEST-ARGS... (source it): runs `go test -json ARGS` through
# hack/testsum, which prints failures, skips and a closing line, and appends the
# run's counts to $KDYN_TEST_RECORDS when it is set (hack/test.sh sums them up).
# The array GOTEST_ENV, when set, holds NAME=VALUE assignments for go test alone
# (hack/hostile-env.sh).
# Returns non-zero when go test or a test failed.
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
  env ${GOTEST_ENV[@]+"${GOTEST_ENV[@]}"} go test -json "$@" 2>&1 | "$testsum" -label "$label" "${rec[@]}"
  rc=("${PIPESTATUS[@]}")
  set -e
  [ "${rc[0]}" -eq 0 ] && [ "${rc[1]}" -eq 0 ]
}
