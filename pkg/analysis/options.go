package analysis

import "github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"

// AnalyzeOptions tune Analyze and AnalyzeTopology.
type AnalyzeOptions struct {
	// SkewFactor is how far a domain's prefill:decode ratio may be from the
	// deployment's before CapacitySkew fires (default 2).
	SkewFactor float64
	// DynamoVersion is the Dynamo release the deployment runs (--dynamo-version:
	// a version such as 1.3.0, or a profile name); "" is the newest. The
	// routing-health rules whose truth changed across releases follow it.
	DynamoVersion string
	// Profile is the compatibility profile DynamoVersion selects
	// (routecore.Profile), when the caller resolved one.
	Profile routecore.Profile
}
