package simulate_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestSimulateSLOs (issue 31, item 4): objectives are counted per variant
// and per domain, --fail-on slo gates on them, the comparison shows each
// variant's change against the deployment as it is, and --seeds reports the
// spread of the headline figures with the first seed's figures unchanged.
func TestSimulateSLOs(t *testing.T) {
	base := []string{"--from-file", prefillOnly, "--trace", mooncake, "--max-requests", "60", "--assume-idle", "--seed", "1",
		"--variant", "decode+1@us-east-1c", "--slo", "ttft=2s,e2e-p50=6s"}
	rep, _ := simJSON(t, append(slices.Clone(base), "--fail-on", "none")...)
	checkInvariants(t, rep, 60)
	as, added := rep.Variants[0], rep.Variants[1]
	// As deployed, 32 of 60 fail (see TestSimulateFailOn): each misses both
	// objectives; the p50 objective allows 60 − ⌈30⌉ = 30 breaches.
	if len(as.SLOs) != 2 || as.SLOs[0].SLO != "ttft=2s" || as.SLOs[0].Breaches < 32 || as.SLOs[1].Allowed != 30 || as.SLOs[1].Breaches < 32 || as.SLOs[1].Met || as.SLOsMet {
		t.Errorf("as deployed: %+v", as.SLOs)
	}
	// The zone without decode: its 23 failed requests are its breaches.
	for _, d := range as.Domains {
		if d.Value == "us-east-1c" && (d.Requests != 23 || d.Failed != 23 || d.SLOs[0].Breaches != 23 || d.TTFTMs.Count != 0) {
			t.Errorf("us-east-1c as deployed: %+v", d)
		}
		if d.Value == "us-east-1a" && (d.TTFTMs.Count != d.Requests || d.TTFTMs.Count == 0) {
			t.Errorf("us-east-1a as deployed: %+v", d)
		}
	}
	if added.SLOs[1].Breaches >= as.SLOs[1].Breaches {
		t.Errorf("one more decode worker in us-east-1c does not reduce the breaches: %+v vs %+v", added.SLOs, as.SLOs)
	}

	r := runIn(t, append([]string{"simulate"}, append(slices.Clone(base), "--fail-on", "slo")...)...)
	if r.ExitCode != 2 || !strings.HasPrefix(r.Stderr, "the deployment as it is misses ttft=2s: ") || !strings.Contains(r.Stderr, "e2e-p50=6s: ") {
		t.Errorf("--fail-on slo: exit %d, stderr %q", r.ExitCode, r.Stderr)
	}
	// The change against the deployment as it is: 9 failed instead of 32.
	for _, w := range []string{"SLOS MET   Δ VS AS DEPLOYED", "failed −23 · cross 0 · hit ", "SLOs: 1. ttft=2s, 2. e2e-p50=6s"} {
		if !strings.Contains(r.Stdout, w) {
			t.Errorf("the report lacks %q:\n%s", w, r.Stdout)
		}
	}

	// Three seeds: the figures are the first seed's; the spread holds them.
	seeds, _ := simJSON(t, append(slices.Clone(base), "--fail-on", "none", "--seeds", "3")...)
	if seeds.Seeds != 3 || seeds.Seed != 1 {
		t.Fatalf("seeds %d from %d", seeds.Seeds, seeds.Seed)
	}
	for i, v := range seeds.Variants {
		sp := v.Spread
		if sp == nil {
			t.Fatalf("variant %s has no spread", v.Name)
		}
		want := rep.Variants[i]
		want.Spread = sp
		if !reflect.DeepEqual(v, want) {
			t.Errorf("variant %s: the figures of a --seeds run are not the first seed's", v.Name)
		}
		f := float64(v.Failed)
		if !(sp.Failed.Min <= f && f <= sp.Failed.Max && sp.Failed.Min <= sp.Failed.Median && sp.Failed.Median <= sp.Failed.Max) ||
			len(sp.SLOBreaches) != 2 || sp.TTFTP50.Min > v.TTFTMs.P50 || sp.TTFTP50.Max < v.TTFTMs.P50 {
			t.Errorf("variant %s: spread %+v", v.Name, sp)
		}
	}
	other, _ := simJSON(t, append(slices.Clone(base), "--fail-on", "none", "--seed", "2")...)
	if seeds.Variants[0].Spread.Failed.Min > float64(other.Variants[0].Failed) || seeds.Variants[0].Spread.Failed.Max < float64(other.Variants[0].Failed) {
		t.Errorf("seed 2's %d failures are outside the spread %+v", other.Variants[0].Failed, seeds.Variants[0].Spread.Failed)
	}
}
