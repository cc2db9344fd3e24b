package simulate_test

import (
	"slices"
	"strings"
	"testing"
)

// TestSimulateRecommend (issue 31, item 5): on the example whose zone
// us-east-1c has prefill workers and no decode, under the Mooncake excerpt,
// --recommend finds the changes that route every request — preferred
// enforcement with a weight, or decode in us-east-1c, each with the prefill
// workers the excerpt's bursts need — shows their figures beside the
// deployment as it is, and prints the recommended one as a DGD patch.
func TestSimulateRecommend(t *testing.T) {
	base := []string{"--from-file", prefillOnly, "--trace", mooncake, "--assume-idle", "--fail-on", "none", "--recommend"}
	r := runIn(t, append([]string{"simulate"}, base...)...)
	if r.ExitCode != 0 {
		t.Fatalf("exit %d: %s", r.ExitCode, r.Stderr)
	}
	for _, w := range []string{
		"Recommendation: ✓ enforcement=preferred,weight=",
		"  searched 17 candidate(s): one more decode or prefill worker in one domain a step",
		"  as deployed   -   ",
		"  alternative   decode+1@us-east-1c,",
		"The recommended change as a DGD patch (review it and apply it yourself",
		"--- serving/qwen3-32b (as deployed)\n+++ serving/qwen3-32b (recommended)\n",
		"-      enforcement: required\n+      enforcement: preferred\n",
		"+        nodeSelector:\n+          topology.kubernetes.io/zone: us-east-1",
	} {
		if !strings.Contains(r.Stdout, w) {
			t.Errorf("the report lacks %q:\n%s", w, r.Stdout)
		}
	}
	rep, _ := simJSON(t, base...)
	rec := rep.Recommendation
	if rec == nil || rec.Recommended == nil || !rec.Recommended.MeetsGoal || rec.Recommended.Result.Failed != 0 || rec.Patch == "" || rec.Runs > rec.MaxRuns {
		t.Fatalf("recommendation %+v", rec)
	}
	if len(rec.Alternatives) != 1 || !rec.Alternatives[0].MeetsGoal || rec.Alternatives[0].Add[0].Role != "decode" || rec.Alternatives[0].Add[0].Value != "us-east-1c" {
		t.Errorf("alternatives %+v", rec.Alternatives)
	}
	if rec.Recommended.AddedGPUs > rec.Alternatives[0].AddedGPUs {
		t.Errorf("the recommended change adds %d GPUs, the alternative %d", rec.Recommended.AddedGPUs, rec.Alternatives[0].AddedGPUs)
	}
	// The bound on runs stops the search and says so.
	short := runIn(t, append(append([]string{"simulate"}, base...), "--recommend-max-runs", "3")...)
	if !strings.Contains(short.Stdout, "stopped early: the search reached its bound of 3 runs") {
		t.Errorf("--recommend-max-runs 3:\n%s", short.Stdout)
	}
	// With objectives, the goal names them.
	slo, _ := simJSON(t, append(slices.Clone(base), "--slo", "ttft-p99=30s")...)
	if g := slo.Recommendation.Goal; g != "no failed request and every objective met (ttft-p99=30s)" {
		t.Errorf("goal %q", g)
	}
	for _, bad := range [][]string{{"--recommend-max-runs", "0"}, {"--recommend-timeout", "0s"}} {
		if r := runIn(t, append(append([]string{"simulate"}, base...), bad...)...); r.ExitCode != 1 {
			t.Errorf("%v: exit %d", bad, r.ExitCode)
		}
	}
}
