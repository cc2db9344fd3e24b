package routecore

import (
	"os"
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/hermetic"
)

// TestMain lets every selection in the package's tests take the parallel path
// (from selParallelMin items on) without injecting Go at each call; tests of
// the injection itself clear selDefaultGo.
func TestMain(m *testing.M) {
	selDefaultGo = func(f func()) { go f() }
	os.Exit(hermetic.Run(m))
}
