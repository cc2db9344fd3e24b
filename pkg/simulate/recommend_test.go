package simulate

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/explain"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/simulate/trace"
)

// TestRecommendAZoneWithoutDecode: prefill workers in zones a and b, the
// decode worker in a only, required enforcement: the requests whose prefill
// lands in b fail at the decode hop. The policy switch routes them across
// zones without adding a GPU — the smallest change, recommended; one decode
// worker in b meets the goal too, with 1 GPU, and is the alternative. The
// first step of the replica path is decode in b, where the failures landed.
func TestRecommendAZoneWithoutDecode(t *testing.T) {
	dep := syntheticDeployment(2, 1, []string{"a", "b"})
	o := Options{Deployment: dep, Base: explain.Options{Seed: 1, AssumeIdle: true}, Engine: DefaultEngine(), Open: opener(everySecond(6, 1000, 2))}
	as := run(t, dep, DefaultEngine(), everySecond(6, 1000, 2)).Variants[0]
	if as.Failed == 0 {
		t.Fatalf("as deployed nothing fails: %+v", as.Domains)
	}
	rec, err := Recommend(context.Background(), o, RecommendOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := rec.Recommended
	if r == nil || r.Spec != "enforcement=preferred,weight=0.1" || r.AddedGPUs != 0 || r.Result.Failed != 0 || !r.MeetsGoal || r.Result.CrossDomainTransfers == 0 {
		t.Fatalf("recommended %+v", r)
	}
	if len(rec.Alternatives) != 1 {
		t.Fatalf("alternatives %+v", rec.Alternatives)
	}
	a := rec.Alternatives[0]
	if a.Spec != "decode+1@b" || a.AddedWorkers != 1 || a.AddedGPUs != 1 || !a.MeetsGoal || a.Result.CrossDomainTransfers != 0 ||
		len(a.Steps) != 1 || a.Steps[0] != (Step{Change: "decode+1@b", Failed: 0}) {
		t.Errorf("alternative %+v", a)
	}
	// 1 as deployed + 1 replica step + 5 weights (the first already meets
	// the goal: no step after it).
	if rec.Runs != 7 || rec.Stopped != "" || rec.NoChangeNeeded {
		t.Errorf("runs %d, stopped %q", rec.Runs, rec.Stopped)
	}
}

// TestRecommendPrefillCapacityByHand: one prefill worker of 10,000 tok/s
// and ten prompts of 12,000 tokens one second apart (133 %, as in
// TestSaturationOfAPoolByHand). Each prefill takes 1.2 s, so request i waits
// 0.2·i s: its first token comes 1,200 + 200·i + 15 (750 blocks' transfer)
// + 12.08 ms after it arrives, and ttft=1.5s is missed by requests 2 to 9 (8
// breaches). One more prefill worker takes every other prompt: no wait, every
// first token at 1,227.08 ms — met. The policy switch cannot help (one zone);
// on a tie of GPUs the change without it is recommended.
func TestRecommendPrefillCapacityByHand(t *testing.T) {
	slos, err := ParseSLOs("ttft=1.5s")
	if err != nil {
		t.Fatal(err)
	}
	dep := syntheticDeployment(1, 1, []string{"z"})
	o := Options{Deployment: dep, Base: explain.Options{Seed: 1, AssumeIdle: true}, Engine: DefaultEngine(), Open: opener(everySecond(10, 12000, 10)), SLOs: slos}
	rec, err := Recommend(context.Background(), o, RecommendOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := rec.Recommended
	if r == nil || r.Spec != "prefill+1@z" || r.AddedGPUs != 1 || r.Enforcement != "" || !r.MeetsGoal {
		t.Fatalf("recommended %+v", r)
	}
	if got := r.Result.TTFTMs.Max; !near(got, 1227.08) {
		t.Errorf("the slowest first token %v ms, want 1,227.08", got)
	}
	if len(rec.Alternatives) != 1 || rec.Alternatives[0].Spec != "enforcement=preferred,weight=0.1,prefill+1@z" {
		t.Errorf("alternatives %+v", rec.Alternatives)
	}
	// As deployed, the steps' starting point: 8 breaches.
	base, err := runWith(dep, DefaultEngine(), everySecond(10, 12000, 10), Options{SLOs: slos})
	if err != nil {
		t.Fatal(err)
	}
	if b := base.Variants[0].SLOs[0]; b.Breaches != 8 || b.Met {
		t.Errorf("as deployed: %+v", b)
	}
}

// TestRecommendBounds: the run bound stops the search and says so; a
// deployment that meets the goal needs no change.
func TestRecommendBounds(t *testing.T) {
	dep := syntheticDeployment(2, 1, []string{"a", "b"})
	o := Options{Deployment: dep, Base: explain.Options{Seed: 1, AssumeIdle: true}, Engine: DefaultEngine(), Open: opener(everySecond(6, 1000, 2))}
	rec, err := Recommend(context.Background(), o, RecommendOptions{MaxRuns: 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Runs != 2 || rec.Stopped != "the search reached its bound of 2 runs" {
		t.Errorf("runs %d, stopped %q", rec.Runs, rec.Stopped)
	}
	ok := syntheticDeployment(1, 1, []string{"a"})
	rec, err = Recommend(context.Background(), Options{Deployment: ok, Base: explain.Options{Seed: 1, AssumeIdle: true}, Engine: DefaultEngine(), Open: opener(everySecond(3, 100, 2))}, RecommendOptions{}, nil)
	if err != nil || !rec.NoChangeNeeded || rec.Runs != 1 || rec.Recommended != nil {
		t.Errorf("a deployment that meets the goal: %+v, %v", rec, err)
	}
}

// TestRecommendPrefillOnlyZoneExample: the worked example of the docs —
// the embedded prefill-only-zone example under the Mooncake excerpt — is
// recommended decode in us-east-1c, or preferred enforcement with a weight,
// each with the prefill workers the excerpt's bursts need.
func TestRecommendPrefillOnlyZoneExample(t *testing.T) {
	snap, dep, _ := example(t, "prefill-only-zone-required.yaml")
	data, err := os.ReadFile("../../examples/traces/mooncake-conversation-200.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	open := func() (trace.Reader, error) {
		return trace.Open(bytes.NewReader(data), trace.Mooncake, trace.Options{})
	}
	rec, err := Recommend(context.Background(), Options{Snapshot: snap, Deployment: dep, Base: explain.Options{Seed: 0, AssumeIdle: true}, Engine: DefaultEngine(), Open: open},
		RecommendOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, c := range append([]Candidate{*rec.Recommended}, rec.Alternatives...) {
		if !c.MeetsGoal || c.Result.Failed != 0 {
			t.Errorf("%s does not meet the goal: %d failed", c.Spec, c.Result.Failed)
		}
		switch {
		case c.Enforcement == "preferred" && c.PreferredWeight != nil:
			found["policy"] = true
		case len(c.Add) > 0 && c.Add[0].Role == "decode" && c.Add[0].Value == "us-east-1c":
			found["decode in us-east-1c"] = true
		}
	}
	if !found["policy"] || !found["decode in us-east-1c"] {
		t.Errorf("recommended %s, alternatives %+v: want decode in us-east-1c and the policy switch", rec.Recommended.Spec, rec.Alternatives)
	}
}
