package analysis

import (
	"os"
	"slices"
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/hermetic"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/analysis/health"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/build"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/capture"
)

func TestMain(m *testing.M) { hermetic.Main(m) }

// TestAnalyzeMergesHealth: the report is analysis.AnalyzeTopology's with the health
// findings added, in report order; everything else is unchanged.
func TestAnalyzeMergesHealth(t *testing.T) {
	data, err := os.ReadFile("../../test/fixtures/upstream/vllm-disagg-multinode-v1beta1.yaml")
	if err != nil {
		t.Fatal(err)
	}
	b, err := capture.Parse(data, "vllm")
	if err != nil {
		t.Fatal(err)
	}
	s, err := build.Build(b)
	if err != nil {
		t.Fatal(err)
	}
	base := AnalyzeTopology(s, AnalyzeOptions{})
	got := Analyze(s, AnalyzeOptions{})
	hf := health.Findings(s)
	if len(hf) == 0 {
		t.Fatal("no health findings on upstream's vllm disagg-multinode shape")
	}
	if len(got.Findings) != len(base.Findings)+len(hf) {
		t.Fatalf("%d findings, want %d + %d", len(got.Findings), len(base.Findings), len(hf))
	}
	sorted := slices.Clone(got.Findings)
	model.SortFindings(sorted)
	if !slices.EqualFunc(sorted, got.Findings, func(a, b model.Finding) bool { return a.ID == b.ID && a.Message == b.Message }) {
		t.Error("findings are not in report order")
	}
	if !slices.EqualFunc(got.Deployments, base.Deployments, func(a, b model.DeploymentReport) bool { return a.Name == b.Name && len(a.Domains) == len(b.Domains) }) {
		t.Error("deployments differ from AnalyzeTopology's")
	}
	if r := Analyze(nil, AnalyzeOptions{}); r == nil || len(r.Findings) != 0 {
		t.Errorf("Analyze(nil) = %+v", r)
	}
	ids := FindingIDs()
	if !slices.IsSorted(ids) || !slices.Contains(ids, health.FindingKvEventsNotPublished) || !slices.Contains(ids, FindingRouterNotKV) {
		t.Errorf("FindingIDs = %v", ids)
	}
}
