package audit_test

import (
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/hermetic"
)

// TestMain runs the tests in the hermetic environment (internal/testutil/hermetic).
func TestMain(m *testing.M) { hermetic.Main(m) }
