package simulate

import (
	"context"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/explain"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/simulate/trace"
)

func run(t *testing.T, dep *model.Deployment, eng Engine, reqs []trace.Request, variants ...string) *Report {
	t.Helper()
	var vs []Variant
	for _, s := range variants {
		v, err := ParseVariant(s)
		if err != nil {
			t.Fatal(err)
		}
		vs = append(vs, v)
	}
	r, err := Run(context.Background(), Options{Deployment: dep, Base: explain.Options{Seed: 5, AssumeIdle: true}, Variants: vs, Engine: eng, Open: opener(reqs)})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestEngineTimingsByHand: one prefill and one decode worker (1 GPU each),
// default engine. A 1,600-token prompt prefills in 1600/10000 s = 160 ms, its
// 100 blocks transfer in 100 × 0.02 = 2 ms (same zone), and 10 output tokens
// decode at 12 + 0.08·1 = 12.08 ms a step: TTFT 174.08 ms, end to end
// 282.8 ms. Two identical requests at once: the second prefill queues behind
// the first (FIFO), and while both decode a step is 12.16 ms.
func TestEngineTimingsByHand(t *testing.T) {
	dep := syntheticDeployment(1, 1, []string{"z"})
	eng := DefaultEngine()
	one := []trace.Request{{Tokens: seqTokens(1600, 1), OutputTokens: 10}}
	r := run(t, dep, eng, one)
	v := r.Variants[0]
	if v.Routed != 1 || math.Abs(v.TTFTMs.Mean-174.08) > 1e-9 || math.Abs(v.E2EMs.Mean-282.8) > 1e-9 {
		t.Fatalf("routed %d ttft %v e2e %v", v.Routed, v.TTFTMs.Mean, v.E2EMs.Mean)
	}
	if math.Abs(r.Trace.DurationMs-282.8) > 1e-9 {
		t.Errorf("duration %v", r.Trace.DurationMs)
	}
	two := []trace.Request{{Tokens: seqTokens(1600, 1), OutputTokens: 20}, {Tokens: seqTokens(1600, 100000), OutputTokens: 20}}
	v = run(t, dep, eng, two).Variants[0]
	// First: prefill 0–160, transfer to 162, decodes alone (12.08 ms a
	// token) until the second joins at 322, then shares (12.16 ms a token).
	// Second: prefill 160–320 (queued behind the first), transfer to 322.
	const join = 322.0
	doneAlone := (join - 162) / 12.08
	e2e1 := join + (20-doneAlone)*12.16
	e2e2 := e2e1 + (20-(e2e1-join)/12.16)*12.08
	ttft1, ttft2 := 162+12.08, join+12.16
	if math.Abs(v.TTFTMs.Mean-(ttft1+ttft2)/2) > 1e-9 {
		t.Errorf("ttft mean %v, want %v", v.TTFTMs.Mean, (ttft1+ttft2)/2)
	}
	if math.Abs(v.E2EMs.Mean-(e2e1+e2e2)/2) > 1e-6 || math.Abs(v.E2EMs.Max-e2e2) > 1e-6 {
		t.Errorf("e2e mean %v max %v, want %v %v", v.E2EMs.Mean, v.E2EMs.Max, (e2e1+e2e2)/2, e2e2)
	}
	// The prefill worker held 2 requests at once (one prefilling, one queued).
	for _, w := range v.Workers {
		if w.Role == "prefill" && w.Load.Peak != 2 {
			t.Errorf("prefill peak %v, want 2", w.Load.Peak)
		}
		if w.Role == "decode" && w.Load.Peak != 2 {
			t.Errorf("decode peak %v, want 2", w.Load.Peak)
		}
	}
}

// TestCacheHitsAndEvictionByHand: a repeated prompt hits the prefill
// worker's cache the second time (its 100 blocks), and prefills only the
// partial tail; with a cache of 150 blocks a third, different prompt evicts
// the first prompt's tail blocks, so a fourth repetition of it hits only its
// leading 50 blocks.
func TestCacheHitsAndEvictionByHand(t *testing.T) {
	dep := syntheticDeployment(1, 1, []string{"z"})
	eng := DefaultEngine()
	eng.KvCapacityBlocks = 150
	a := seqTokens(1600, 1)
	b := seqTokens(1600, 500000)
	at := func(s int) time.Duration { return time.Duration(s) * time.Second }
	r := run(t, dep, eng, []trace.Request{
		{Arrival: at(0), Tokens: a, OutputTokens: 2},
		{Arrival: at(10), Tokens: a, OutputTokens: 2},
		{Arrival: at(20), Tokens: b, OutputTokens: 2},
		{Arrival: at(30), Tokens: a, OutputTokens: 2},
	})
	v := r.Variants[0]
	if v.PromptBlocks != 400 || v.CachedBlocks != 100+50 {
		t.Fatalf("prompt blocks %d cached %d, want 400 and 150", v.PromptBlocks, v.CachedBlocks)
	}
	if v.EvictedBlocks != 50+50 {
		// b evicts 50 of a's blocks; a again evicts 50 of b's.
		t.Errorf("evicted %d, want 100", v.EvictedBlocks)
	}
	if v.HitRate != 150.0/400 {
		t.Errorf("hit rate %v", v.HitRate)
	}
}

// TestAccountingAndDeterminism: over the example deployments, router modes
// and variants, every request is accounted for exactly once, the router's
// ledger is empty at the end, and the same seed gives the same report.
func TestAccountingAndDeterminism(t *testing.T) {
	reqs := make([]trace.Request, 0, 300)
	for i := range 300 {
		n := 200 + (i*37)%900
		toks := seqTokens(n, uint32(1+(i%7)*100000)) // 7 prompt families sharing prefixes
		reqs = append(reqs, trace.Request{Arrival: time.Duration(i) * 40 * time.Millisecond, Tokens: toks, OutputTokens: 20 + i%50})
	}
	for _, ex := range []string{"healthy-three-zone-required.yaml", "prefill-only-zone-required.yaml", "preferred-rollout-drift.yaml", "vllm-disagg-default-router.yaml"} {
		snap, dep, b := example(t, ex)
		sets := explain.BundleEventSets(b, dep)
		for _, mode := range []string{"kv", "round-robin", "random", "power-of-two", "least-loaded"} {
			other := "preferred"
			if dep.Policy != nil && dep.Policy.Enforcement == "preferred" {
				other = "required"
			}
			variants := []string{"router-mode=" + mode + ",temperature=0.5", "router-mode=" + mode + ",enforcement=" + other}
			if mode != dep.Router.Mode {
				// (The deployment's own mode is the as-deployed run: as a variant it changes nothing, an error.)
				variants = append([]string{"router-mode=" + mode}, variants...)
			}
			var vs []Variant
			for _, s := range variants {
				v, err := ParseVariant(s)
				if err != nil {
					t.Fatal(err)
				}
				vs = append(vs, v)
			}
			o := Options{Snapshot: snap, Deployment: dep, Base: explain.Options{Seed: 11}, KV: sets, Variants: vs, Engine: DefaultEngine(), Open: opener(reqs)}
			var ledgers []int
			r1, err := runChecked(o, &ledgers)
			if err != nil {
				t.Fatal(err)
			}
			for i, n := range ledgers {
				if n != 0 {
					t.Errorf("%s %s variant %d: %d bookings left in the router's ledger at the end", ex, mode, i, n)
				}
			}
			r2, err := Run(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			j1, _ := json.Marshal(r1)
			j2, _ := json.Marshal(r2)
			if string(j1) != string(j2) {
				t.Errorf("%s %s: the same seed gave different reports", ex, mode)
			}
			for _, v := range r1.Variants {
				checkAccounting(t, ex+" "+mode+" "+v.Name, v, len(reqs))
			}
		}
	}
}

// runChecked runs and reports each variant's ledger size after its run.
func runChecked(o Options, ledgers *[]int) (*Report, error) {
	testHookEnd = func(s *state) { *ledgers = append(*ledgers, s.ledger.Len()) }
	defer func() { testHookEnd = nil }()
	return Run(context.Background(), o)
}

func checkAccounting(t *testing.T, name string, v VariantResult, n int) {
	t.Helper()
	sumFail := 0
	for _, f := range v.Failures {
		sumFail += f.Count
	}
	transfers := v.SameDomainTransfers + v.CrossDomainTransfers + v.UnknownDomainTransfers
	picks, prefillPicks, domFailed := 0, 0, 0
	for _, d := range v.Domains {
		prefillPicks += d.PrefillPicks
		domFailed += d.Failed
	}
	for _, w := range v.Workers {
		picks += w.Picks
	}
	switch {
	case v.Requests != n || v.Routed+v.Failed != n:
		t.Errorf("%s: requests %d routed %d failed %d, want %d", name, v.Requests, v.Routed, v.Failed, n)
	case sumFail != v.Failed:
		t.Errorf("%s: failures sum to %d, failed %d", name, sumFail, v.Failed)
	case v.Disaggregated+v.Aggregated+v.Bypassed != v.Routed:
		t.Errorf("%s: served %d+%d+%d != routed %d", name, v.Disaggregated, v.Aggregated, v.Bypassed, v.Routed)
	case transfers != v.Disaggregated:
		t.Errorf("%s: transfers %d != disaggregated %d", name, transfers, v.Disaggregated)
	case v.TTFTMs.Count != v.Routed || v.E2EMs.Count != v.Routed:
		t.Errorf("%s: %d TTFTs and %d latencies for %d routed", name, v.TTFTMs.Count, v.E2EMs.Count, v.Routed)
	case prefillPicks != v.Routed+v.WastedPrefills:
		t.Errorf("%s: prefill picks %d != routed %d + wasted %d", name, prefillPicks, v.Routed, v.WastedPrefills)
	case picks != v.Disaggregated*2+v.Aggregated+v.Bypassed+v.WastedPrefills:
		t.Errorf("%s: worker picks %d", name, picks)
	case domFailed > v.Failed:
		t.Errorf("%s: domains count %d failures of %d", name, domFailed, v.Failed)
	case v.PromptBlocks > 0 && v.HitRate != float64(v.CachedBlocks)/float64(v.PromptBlocks):
		t.Errorf("%s: hit rate %v", name, v.HitRate)
	}
	// The series holds every routed and failed-with-landing request.
	routed, failed := 0, 0
	for _, b := range v.Series.Buckets {
		if len(b.Domains) != len(v.Domains) {
			t.Fatalf("%s: bucket with %d domains, want %d", name, len(b.Domains), len(v.Domains))
		}
		for _, d := range b.Domains {
			routed += d.Routed
			failed += d.Failed
		}
	}
	if routed != v.Routed || failed != domFailed {
		t.Errorf("%s: series routed %d failed %d, want %d %d", name, routed, failed, v.Routed, domFailed)
	}
}

// TestVariantLeavesTheDeploymentAlone: decode+N works on a copy.
func TestVariantLeavesTheDeploymentAlone(t *testing.T) {
	_, dep, _ := example(t, "prefill-only-zone-required.yaml")
	before, _ := json.Marshal(dep)
	v, err := ParseVariant("decode+3@us-east-1c,enforcement=preferred")
	if err != nil {
		t.Fatal(err)
	}
	d2, _, err := v.apply(dep, explain.Options{})
	if err != nil {
		t.Fatal(err)
	}
	after, _ := json.Marshal(dep)
	if string(before) != string(after) || len(d2.Workers) != len(dep.Workers)+3 {
		t.Fatalf("the input changed, or %d workers", len(d2.Workers))
	}
	ids := map[uint64]bool{}
	for _, w := range d2.Workers {
		for _, in := range w.Instances {
			if ids[uint64(in.ID)] {
				t.Errorf("instance id %d twice", in.ID)
			}
			ids[uint64(in.ID)] = true
		}
	}
	added := d2.Workers[len(d2.Workers)-1]
	if added.Role != model.RoleDecode || added.Domain.Effective() != "us-east-1c" || added.Instances[0].Runtime.TopologyDomains["zone"] != "us-east-1c" {
		t.Errorf("added worker %+v", added)
	}
	if !reflect.DeepEqual(dep.Workers[0].Instances, d2.Workers[0].Instances) {
		t.Error("existing workers changed")
	}
}

// TestParseVariantErrors: every malformed variant is refused with the
// accepted keys in the message.
func TestParseVariantErrors(t *testing.T) {
	for _, s := range []string{"", ",", "bogus=1", "enforcement=maybe", "weight=2", "weight=NaN", "decode+0@z", "decode+x@z", "decode+2", "decode+2@",
		"router-mode=fastest", "temperature=-1", "down=", "dynamo-version=banana", "decode+1001@z"} {
		if _, err := ParseVariant(s); err == nil {
			t.Errorf("%q: no error", s)
		}
	}
	v, err := ParseVariant(" enforcement=preferred , weight=0.3 ,down=zone=us-east-1a, decode+2@us-east-1c")
	if err != nil || *v.Knobs.Enforcement != explain.EnforcementPreferred || *v.Knobs.PreferredWeight != 0.3 ||
		len(v.DomainDown) != 1 || v.DomainDown[0].Value != "us-east-1a" || len(v.Add) != 1 || v.Add[0].Count != 2 || len(v.Changes) != 4 {
		t.Fatalf("%+v %v", v, err)
	}
}

// TestVariantsThatChangeNothing (issue 31): a variant whose every what-if
// changes nothing is refused before anything is replayed; a what-if that
// changes nothing beside others that do is noted, as is a domain value an
// added worker makes new.
func TestVariantsThatChangeNothing(t *testing.T) {
	snap, dep, _ := example(t, "healthy-three-zone-required.yaml") // required, kv
	reqs := []trace.Request{{Tokens: seqTokens(64, 1), OutputTokens: 1}}
	for _, tc := range []struct {
		spec    string
		err     string
		notes   []string
		noNotes bool
	}{
		{spec: "weight=0.3", err: `--variant "weight=0.3" changes nothing — weight=0.3: the preferred weight applies to prefill workers under preferred enforcement, and none is (they run 6 required); add enforcement=preferred to the variant`},
		{spec: "enforcement=required", err: `--variant "enforcement=required" changes nothing — enforcement=required: every prefill worker already runs it`},
		{spec: "router-mode=kv", err: `changes nothing — router-mode=kv: the frontend already runs it`},
		{spec: "weight=0.3,decode+1@us-east-1a", notes: []string{"weight=0.3 changes nothing: the preferred weight applies"}},
		{spec: "decode+2@us-east-9z", notes: []string{"decode+2@us-east-9z: us-east-9z is a new zone value (the deployment's are us-east-1a, us-east-1b, us-east-1c): the added workers form a zone of their own"}},
		{spec: "decode+1@us-east-1c", noNotes: true},
		{spec: "enforcement=preferred,weight=0.3", noNotes: true},
		{spec: "enforcement=off", noNotes: true},
	} {
		v, err := ParseVariant(tc.spec)
		if err != nil {
			t.Fatal(err)
		}
		replayed := false
		r, err := Run(context.Background(), Options{Snapshot: snap, Deployment: dep, Base: explain.Options{Seed: 1}, Variants: []Variant{v}, Engine: DefaultEngine(),
			Open: func() (trace.Reader, error) { replayed = true; return opener(reqs)() }})
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: err = %v, want %q", tc.spec, err, tc.err)
			}
			if replayed {
				t.Errorf("%s: the trace was replayed before the variant was refused", tc.spec)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.spec, err)
		}
		got := r.Variants[1].Notes
		if tc.noNotes && len(got) != 0 {
			t.Errorf("%s: notes %q", tc.spec, got)
		}
		for i, w := range tc.notes {
			if i >= len(got) || !strings.HasPrefix(got[i], w) {
				t.Errorf("%s: notes %q, want %q", tc.spec, got, tc.notes)
			}
		}
		if len(r.Variants[0].Notes) != 0 {
			t.Errorf("%s: the deployment as it is has notes %q", tc.spec, r.Variants[0].Notes)
		}
	}
}
