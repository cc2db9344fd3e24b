package simulate

import (
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/fusion"
)

// TestNoImplicitFusedMultiplyAdd: the simulation's virtual clock, service
// times and sums must round on arm64 as on amd64, so that a trace simulates to
// the same report on every platform the release ships
// (internal/testutil/fusion).
func TestNoImplicitFusedMultiplyAdd(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: cross-compiles the package; the native run does it")
	}
	fusion.Check(t, ".", false, "arm64") // the shipped architecture; routecore adds s390x
}
