#!/usr/bin/env bash
# Runs the router core's tests and the dry run's (pkg/explain: costs, ties and
# probabilities on fixtures and captures) as arm64 binaries: natively on an
# arm64 machine, else under qemu user-mode emulation (hack/qemu/provision.sh).
# arm64 is where Go may fuse a multiply and an add into one instruction (Rust
# never does) and where Go's own math.Exp differs from amd64's, so this is where
# a cost, tie set or probability could stop matching the router bit for bit
# (docs/routing.md, "Floating point"). Neither package reaches client-go, so the
# arm64 build is small; the commands above them add printing, not arithmetic,
# and every package with router arithmetic (routecore, explain, audit) is
# checked for fused instructions on arm64 statically by its
# TestNoImplicitFusedMultiplyAdd (internal/testutil/fusion) in the native run.
# Tests that need a control plane or kubectl skip under -short.
set -euo pipefail
cd "$(dirname "$0")/.."
. hack/lib/gotest.sh
pkgs=(./pkg/routecore ./pkg/explain)
# --compile: only compile them for arm64, into the build cache (make test does
# this in the background while verify and lint run), without qemu.
if [ "${1:-}" = --compile ]; then
  [ "$(go env GOHOSTARCH)" = arm64 ] && exit 0 # the native run shares the plain build
  # (compiles the packages and their tests as go test does, without linking)
  GOARCH=arm64 CGO_ENABLED=0 go list -export -deps -test "${pkgs[@]}" >/dev/null
  exit
fi
if [ "$(go env GOHOSTARCH)" = arm64 ]; then
  gotest arm64 -count=1 -short "${pkgs[@]}"
  exit
fi
if ! qemu=$(hack/qemu/provision.sh aarch64); then
  if [ "${CI:-}" = true ]; then
    echo "test-arm64: no arm64 emulator (see above)" >&2
    exit 1
  fi
  echo "test-arm64: SKIPPED: no arm64 emulator (see above); TestNoImplicitFusedMultiplyAdd still checks the arm64 build" >&2
  exit 0
fi
echo "test-arm64: GOARCH=arm64 under $qemu"
GOARCH=arm64 CGO_ENABLED=0 gotest arm64-qemu -count=1 -short -exec "$qemu" "${pkgs[@]}"
