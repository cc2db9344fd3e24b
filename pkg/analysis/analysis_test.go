package analysis

import (
	"os"
	"slices"
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/hermetic"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/inspect"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/inspect/health"
)

func TestMain(m *testing.M) { hermetic.Main(m) }

// TestAnalyzeMergesHealth: the report is inspect.Analyze's with the health
// findings added, in report order; everything else is unchanged.
func TestAnalyzeMergesHealth(t *testing.T) {
	data, err := os.ReadFile("../inspect/testdata/upstream/vllm-disagg-multinode-v1beta1.yaml")
	if err != nil {
		t.Fatal(err)
	}
	b, err := inspect.ParseCapture(data, "vllm")
	if err != nil {
		t.Fatal(err)
	}
	s, err := inspect.Build(b)
	if err != nil {
		t.Fatal(err)
	}
	base := inspect.Analyze(s, inspect.AnalyzeOptions{})
	got := Analyze(s, inspect.AnalyzeOptions{})
	hf := health.Findings(s)
	if len(hf) == 0 {
		t.Fatal("no health findings on upstream's vllm disagg-multinode shape")
	}
	if len(got.Findings) != len(base.Findings)+len(hf) {
		t.Fatalf("%d findings, want %d + %d", len(got.Findings), len(base.Findings), len(hf))
	}
	sorted := slices.Clone(got.Findings)
	inspect.SortFindings(sorted)
	if !slices.EqualFunc(sorted, got.Findings, func(a, b inspect.Finding) bool { return a.ID == b.ID && a.Message == b.Message }) {
		t.Error("findings are not in report order")
	}
	if !slices.EqualFunc(got.Deployments, base.Deployments, func(a, b inspect.DeploymentReport) bool { return a.Name == b.Name && len(a.Domains) == len(b.Domains) }) {
		t.Error("deployments differ from inspect.Analyze's")
	}
	if r := Analyze(nil, inspect.AnalyzeOptions{}); r == nil || len(r.Findings) != 0 {
		t.Errorf("Analyze(nil) = %+v", r)
	}
	ids := FindingIDs()
	if !slices.IsSorted(ids) || !slices.Contains(ids, health.FindingKvEventsNotPublished) || !slices.Contains(ids, inspect.FindingRouterNotKV) {
		t.Errorf("FindingIDs = %v", ids)
	}
}
