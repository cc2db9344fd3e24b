package audit

import (
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/fusion"
)

// TestNoImplicitFusedMultiplyAdd: the audit compares the router's logged
// costs with routecore's within a tolerance; the tolerance and the interval
// bounds must round on arm64 as on amd64, or a verdict could differ by
// platform (internal/testutil/fusion).
func TestNoImplicitFusedMultiplyAdd(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: cross-compiles the package; the native run does it")
	}
	fusion.Check(t, ".", false, "arm64") // the shipped architecture; routecore adds s390x
}
