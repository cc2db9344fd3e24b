package analysis

// AnalyzeOptions tune Analyze and AnalyzeTopology.
type AnalyzeOptions struct {
	// SkewFactor is how far a domain's prefill:decode ratio may be from the
	// deployment's before CapacitySkew fires (default 2).
	SkewFactor float64
	// DynamoVersion overrides the Dynamo release each deployment is read at
	// (--dynamo-version: a version such as 1.3.0, or a profile name); ""
	// detects it (pkg/behavior.Detect). Every rule that changed across
	// releases follows it (docs/compatibility.md).
	DynamoVersion string
}
