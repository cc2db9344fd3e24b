package health

import (
	"github.com/ai-dynamo/kubectl-dynamo/pkg/behavior"
)

// Options tune FindingsWith.
type Options struct {
	// DynamoVersion overrides the Dynamo release the deployment runs
	// (--dynamo-version: 1.3.0, v1.2, or a profile name); "" reads it from
	// the deployment (pkg/behavior.Detect), the newest when nothing tells.
	DynamoVersion string
}

// ParseRelease checks a --dynamo-version value: a version (1.3.0, v1.2,
// 1.4.0-dev.1) or a profile name (behavior.ParseRelease).
func ParseRelease(s string) error {
	_, err := behavior.ParseRelease(s)
	return err
}

// relName is "Dynamo 1.3.0" for a known release, "" otherwise.
func relName(r behavior.Release) string {
	if !r.Known() {
		return ""
	}
	return "Dynamo " + r.String()
}
