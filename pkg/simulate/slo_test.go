package simulate

import (
	"reflect"
	"strings"
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/simulate/trace"
)

func TestParseSLOs(t *testing.T) {
	got, err := ParseSLOs("ttft=2s, e2e=30s,ttft-p99=4s,E2E-p99.9=1m")
	if err != nil {
		t.Fatal(err)
	}
	want := []SLO{
		{Spec: "ttft=2s", Metric: "ttft", Percentile: 100, TargetMs: 2000},
		{Spec: "e2e=30s", Metric: "e2e", Percentile: 100, TargetMs: 30000},
		{Spec: "ttft-p99=4s", Metric: "ttft", Percentile: 99, TargetMs: 4000},
		{Spec: "E2E-p99.9=1m", Metric: "e2e", Percentile: 99.9, TargetMs: 60000},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v", got)
	}
	for spec, wantErr := range map[string]string{
		"":                 "holds no objective",
		"ttft":             `"ttft" is not METRIC=DURATION`,
		"itl=2s":           "names no metric: ttft or e2e",
		"ttft=2":           "needs a positive duration with its unit",
		"ttft=-1s":         "needs a positive duration",
		"ttft-p100=1s":     "needs a percentile above 0 and below 100",
		"ttft-99=1s":       "needs a percentile",
		"ttft=1s,ttft=2s":  "repeats an objective",
		"ttft-p99=1s,x=1s": "names no metric",
	} {
		if _, err := ParseSLOs(spec); err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("%q: err = %v, want %q", spec, err, wantErr)
		}
	}
}

// TestSLOAllowed: how many of n requests a percentile lets miss the target
// (nearest rank): p99 of 100 lets 1, of 250 lets 2 (rank 248 must meet it),
// p50 of 3 lets 1; every request none.
func TestSLOAllowed(t *testing.T) {
	for _, tc := range []struct {
		p       float64
		n, want int
	}{{99, 100, 1}, {99, 250, 2}, {50, 3, 1}, {50, 2, 1}, {99.9, 1000, 1}, {90, 7, 0}, {100, 1000, 0}} {
		if got := (SLO{Percentile: tc.p}).allowed(tc.n); got != tc.want {
			t.Errorf("p%g of %d: %d allowed, want %d", tc.p, tc.n, got, tc.want)
		}
	}
}

// TestSLOsByHand: the two requests of TestEngineTimingsByHand have first
// tokens at 174.08 and 334.16 ms (the second queued behind the first).
// ttft=200ms: one breach of two (50 %), missed; ttft-p50=200ms: rank 1 of 2
// (174.08) meets it, one breach allowed, met. e2e=1s: both finish before
// 600 ms, met. A third request with an empty prompt fails: it breaches every
// objective.
func TestSLOsByHand(t *testing.T) {
	slos, err := ParseSLOs("ttft=200ms,ttft-p50=200ms,e2e=1s")
	if err != nil {
		t.Fatal(err)
	}
	reqs := []trace.Request{{Tokens: seqTokens(1600, 1), OutputTokens: 20}, {Tokens: seqTokens(1600, 100000), OutputTokens: 20}}
	r, err := runWith(syntheticDeployment(1, 1, []string{"z"}), DefaultEngine(), reqs, Options{SLOs: slos})
	if err != nil {
		t.Fatal(err)
	}
	v := r.Variants[0]
	want := []SLOResult{
		{SLO: "ttft=200ms", Breaches: 1, Share: 0.5, Allowed: 0, Met: false},
		{SLO: "ttft-p50=200ms", Breaches: 1, Share: 0.5, Allowed: 1, Met: true},
		{SLO: "e2e=1s", Breaches: 0, Share: 0, Allowed: 0, Met: true},
	}
	if !reflect.DeepEqual(v.SLOs, want) || v.SLOsMet {
		t.Errorf("slos %+v (met %v)\nwant %+v", v.SLOs, v.SLOsMet, want)
	}
	// The one domain holds both requests, with the same results and TTFTs.
	if d := v.Domains[0]; d.Requests != 2 || !reflect.DeepEqual(d.SLOs, want) || d.TTFTMs.Count != 2 || d.TTFTMs.Max != v.TTFTMs.Max {
		t.Errorf("domain %+v", d)
	}
	reqs = append(reqs, trace.Request{OutputTokens: 1}) // no tokens: fails
	r, err = runWith(syntheticDeployment(1, 1, []string{"z"}), DefaultEngine(), reqs, Options{SLOs: slos})
	if err != nil {
		t.Fatal(err)
	}
	v = r.Variants[0]
	if v.Failed != 1 || v.SLOs[0].Breaches != 2 || v.SLOs[1].Breaches != 2 || v.SLOs[1].Allowed != 1 || v.SLOs[1].Met || v.SLOs[2].Breaches != 1 || v.SLOs[2].Met {
		t.Errorf("with a failed request: %+v", v.SLOs)
	}
}

// TestMergeSeeds: the spread of 4, 1, 3 failures is 1 / 3 / 4; of 1, 4
// (an even count) 1 / 2.5 / 4; the figures stay the first run's.
func TestMergeSeeds(t *testing.T) {
	mk := func(seed uint64, failed ...int) *Report {
		r := &Report{Seed: seed}
		for _, f := range failed {
			r.Variants = append(r.Variants, VariantResult{Failed: f, HitRate: float64(f) / 10, SLOs: []SLOResult{{Breaches: 2 * f}}})
		}
		return r
	}
	out, err := MergeSeeds([]*Report{mk(7, 4, 1), mk(8, 1, 4), mk(9, 3, 4)})
	if err != nil {
		t.Fatal(err)
	}
	if out.Seeds != 3 || out.Seed != 7 || out.Variants[0].Failed != 4 {
		t.Errorf("merged %+v", out)
	}
	sp := out.Variants[0].Spread
	if sp.Failed != (Spread{1, 3, 4}) || sp.HitRate != (Spread{0.1, 0.3, 0.4}) || sp.SLOBreaches[0] != (Spread{2, 6, 8}) {
		t.Errorf("spread %+v", sp)
	}
	if sp := out.Variants[1].Spread; sp.Failed != (Spread{1, 4, 4}) {
		t.Errorf("second variant %+v", sp)
	}
	if got := spreadOf([]float64{4, 1}); got != (Spread{1, 2.5, 4}) {
		t.Errorf("even count: %+v", got)
	}
	if _, err := MergeSeeds([]*Report{mk(7, 1), mk(9, 1)}); err == nil {
		t.Errorf("runs of non-consecutive seeds merged")
	}
}
