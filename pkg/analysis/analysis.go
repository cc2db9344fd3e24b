package analysis

import (
	"slices"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/analysis/health"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
)

// Analyze returns AnalyzeTopology's report for s with the routing-health
// findings (health.Findings) added, all findings in report order
// (model.SortFindings): severity first, so exit codes decided from the most
// severe finding are unchanged in kind. Health findings concern a deployment,
// never one domain value, so they flag no domain row. Analyze is pure and
// deterministic, as AnalyzeTopology is; a nil Snapshot yields an empty report.
// o.DynamoVersion and o.Profile select the release the version-dependent health
// rules follow (the newest when empty).
func Analyze(s *model.Snapshot, o AnalyzeOptions) *model.Report {
	r := AnalyzeTopology(s, o)
	if s == nil {
		return r
	}
	r.Findings = append(r.Findings, health.FindingsWith(s, health.Options{DynamoVersion: o.DynamoVersion})...)
	model.SortFindings(r.Findings)
	return r
}

// FindingIDs returns every finding id Analyze can report, sorted: the topology
// ids and the routing-health ids.
func FindingIDs() []string {
	ids := append(TopologyFindingIDs(), health.FindingIDs()...)
	slices.Sort(ids)
	return ids
}
