package explain

import (
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/fusion"
)

// TestNoImplicitFusedMultiplyAdd: the dry run's own arithmetic (the chance a
// transfer ignores the constraint, summed over pairs of picks) must round on
// arm64 as on amd64, as routecore's does (internal/testutil/fusion). The
// package's code only: its tests compare with routecore, which checks its own.
func TestNoImplicitFusedMultiplyAdd(t *testing.T) {
	if testing.Short() {
		t.Skip("-short (the arm64 run under qemu): cross-compiles the package; the native run does it")
	}
	fusion.Check(t, ".", false, "arm64") // the shipped architecture; routecore adds s390x
}
