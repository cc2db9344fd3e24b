package fusion

import (
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/hermetic"
)

func TestMain(m *testing.M) { hermetic.Main(m) }
