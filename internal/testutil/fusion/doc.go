// Package fusion finds the fused multiply-add instructions Go's compiler
// chose by itself in a package's code, for the tests of the packages whose
// arithmetic must round as the router's does.
//
// Rust never fuses a multiplication and an addition into one FMA instruction
// (one rounding instead of two); the Go spec allows it, and Go's compilers do
// it on arm64, ppc64le, s390x, riscv64 and loong64 — across statements too —
// unless a product is converted explicitly (float64(a*b)). kubectl-dynamo
// ships arm64 binaries, where a fused term differs from the amd64 result in
// the last bit: a cost, a tie set, a probability shown or an audit verdict
// could then differ by platform. Check compiles a package for arm64 and s390x
// with the assembly listing (go build -gcflags=-S) and fails the test on every
// fused instruction the source does not ask for with math.FMA.
//
// A static check sees every fused site, where a run under qemu only sees the
// ones its inputs happen to make discriminate (a fused sum in pkg/explain went
// through the arm64 goldens unnoticed).
package fusion
