package simulate

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"testing"
	"time"

	"github.com/ai-dynamo/kubectl-dynamo/internal/cmdutil"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/build"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/explain"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/simulate/trace"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/capture"
)

// example loads an embedded example capture and its one deployment.
func example(t testing.TB, name string) (*model.Snapshot, *model.Deployment, *raw.Bundle) {
	t.Helper()
	data, err := os.ReadFile("../../examples/" + name)
	if err != nil {
		t.Fatal(err)
	}
	b, err := capture.Read(bytes.NewReader(data), "examples/"+name)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := build.Build(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Deployments) != 1 {
		t.Fatalf("%s: %d deployments", name, len(snap.Deployments))
	}
	return snap, &snap.Deployments[0], b
}

// sliceTrace replays fixed requests.
type sliceTrace struct {
	reqs []trace.Request
	i    int
}

func (s *sliceTrace) Next() (trace.Request, error) {
	if s.i >= len(s.reqs) {
		return trace.Request{}, io.EOF
	}
	s.i++
	return s.reqs[s.i-1], nil
}

func opener(reqs []trace.Request) func() (trace.Reader, error) {
	return func() (trace.Reader, error) { return &sliceTrace{reqs: reqs}, nil }
}

func seqTokens(n int, base uint32) []uint32 {
	out := make([]uint32, n)
	for i := range out {
		out[i] = base + uint32(i)
	}
	return out
}

// TestOneRequestIsExplainRoute: a one-request trace makes exactly the
// decision explain-route makes for the same request, deployment, KV contents
// and seed — prefill pick, decode pick, every candidate's cost and
// probability — in every router mode.
func TestOneRequestIsExplainRoute(t *testing.T) {
	for _, ex := range []string{"healthy-three-zone-required.yaml", "prefill-only-zone-required.yaml", "vllm-disagg-default-router.yaml", "preferred-rollout-drift.yaml"} {
		snap, dep, b := example(t, ex)
		sets := explain.BundleEventSets(b, dep)
		tokens, err := os.ReadFile("../../examples/prompts/support-chat.tokens")
		if err != nil {
			t.Fatal(err)
		}
		toks, err := cmdutil.ParseTokenList(tokens, "support-chat.tokens")
		if err != nil {
			t.Fatal(err)
		}
		modes := []string{"", "kv", "round-robin", "random", "power-of-two", "least-loaded"}
		for _, mode := range modes {
			for _, seed := range []uint64{1, 7, 12345} {
				t.Run(fmt.Sprintf("%s/%s/seed%d", ex, cmp.Or(mode, "as-deployed"), seed), func(t *testing.T) {
					base := explain.Options{Seed: seed, SeedGiven: true}
					if mode != "" {
						m := routecore.RouterMode(mode)
						base.Knobs.RouterMode = &m
					}
					plan, err := explain.NewPlan(explain.Input{Snapshot: snap, Deployment: dep, Options: base})
					if err != nil {
						t.Fatal(err)
					}
					ix, _ := explain.IndexEvents(sets, plan.BlockSize())
					x, err := explain.Explain(explain.Input{Snapshot: snap, Deployment: dep, Options: base,
						Request: explain.Request{Tokens: toks}, KV: explain.IndexCache(ix, "capture", time.Time{})})
					if err != nil {
						t.Fatal(err)
					}
					var got *explain.CoreDecision
					_, err = Run(context.Background(), Options{
						Snapshot: snap, Deployment: dep, Base: base, KV: sets, Engine: DefaultEngine(),
						Open: opener([]trace.Request{{Tokens: toks, OutputTokens: 10}}),
						OnDecision: func(_, _ int, d explain.CoreDecision) {
							if got == nil {
								got = &d
							}
						},
					})
					if err != nil {
						t.Fatal(err)
					}
					compareWithExplanation(t, x, got)
				})
			}
		}
	}
}

// TestOneRequestMixedHopModes: with a worker set publishing its own router
// mode (a KV prefill hop under a round-robin frontend, or the other way
// round), a one-request trace still makes explain-route's decision.
func TestOneRequestMixedHopModes(t *testing.T) {
	tokens, err := os.ReadFile("../../examples/prompts/support-chat.tokens")
	if err != nil {
		t.Fatal(err)
	}
	toks, err := cmdutil.ParseTokenList(tokens, "support-chat.tokens")
	if err != nil {
		t.Fatal(err)
	}
	for _, set := range []string{"Prefill", "Decode"} {
		for seed := range uint64(6) {
			snap, dep, _ := example(t, "prefill-only-zone-required.yaml")
			dep.Router.Mode = "round-robin"
			dep.Router.WorkerSetOverrides = []model.RouterOverride{{Component: set, Mode: "kv", Config: routecore.DefaultKvRouterConfig()}}
			// 1.4.0: a worker set's own router configuration holds per hop.
			base := explain.Options{Seed: seed, AssumeIdle: true, DynamoVersion: "1.4.0"}
			x, err := explain.Explain(explain.Input{Snapshot: snap, Deployment: dep, Options: base, Request: explain.Request{Tokens: toks}})
			if err != nil {
				t.Fatal(err)
			}
			var got *explain.CoreDecision
			if _, err := Run(context.Background(), Options{Snapshot: snap, Deployment: dep, Base: base, Engine: DefaultEngine(),
				Open: opener([]trace.Request{{Tokens: toks, OutputTokens: 10}}),
				OnDecision: func(_, _ int, d explain.CoreDecision) {
					if got == nil {
						got = &d
					}
				}}); err != nil {
				t.Fatal(err)
			}
			if (set == "Prefill") != (got.Decode != nil && got.Prefill == nil) {
				t.Fatalf("%s kv: decision shape %+v", set, got)
			}
			compareWithExplanation(t, x, got)
		}
	}
}

func compareWithExplanation(t *testing.T, x *explain.Explanation, d *explain.CoreDecision) {
	t.Helper()
	if d == nil {
		t.Fatal("no decision")
	}
	type leg struct {
		name  string
		stage *explain.Stage
		pick  routecore.WorkerID
		ok    bool
		probs map[routecore.WorkerID]float64
		costs map[routecore.WorkerID]float64
	}
	var legs []leg
	kvLeg := func(name string, st *explain.Stage, dd *routecore.Decision) {
		if (st == nil) != (dd == nil) {
			t.Fatalf("%s: explanation stage %v, simulation decision %v", name, st != nil, dd != nil)
		}
		if dd == nil {
			return
		}
		lg := leg{name: name, stage: st, pick: dd.Selected.WorkerID, ok: dd.ErrorKind == "", probs: map[routecore.WorkerID]float64{}, costs: map[routecore.WorkerID]float64{}}
		for _, c := range dd.Candidates {
			lg.probs[c.Candidate.WorkerID] += c.Probability
			lg.costs[c.Candidate.WorkerID] = c.Terms.Cost
		}
		legs = append(legs, lg)
	}
	modeLeg := func(name string, st *explain.Stage, md *routecore.ModeDecision) {
		if st == nil {
			if name == "decode" && x.Transfer != nil && x.Transfer.Failed {
				return
			}
			t.Fatalf("%s: no explanation stage for the simulation's pick", name)
		}
		lg := leg{name: name, stage: st, pick: md.Selected, ok: md.ErrorKind == "", probs: map[routecore.WorkerID]float64{}}
		for _, c := range md.Candidates {
			lg.probs[c.Worker.ID] += c.Probability
		}
		legs = append(legs, lg)
	}
	kd := d.KV
	switch {
	case d.Prefill != nil:
		modeLeg("prefill", x.Prefill, d.Prefill)
	case kd != nil:
		kvLeg("prefill", x.Prefill, kd.Prefill)
	}
	switch {
	case d.Decode != nil:
		modeLeg("decode", x.Decode, d.Decode)
	case kd != nil:
		kvLeg("decode", x.Decode, kd.Decode)
	}
	if kd != nil && d.Prefill == nil && d.Decode == nil && x.Mode != kd.Mode {
		t.Errorf("mode: explain %s, simulation %s", x.Mode, kd.Mode)
	}
	for _, lg := range legs {
		if !lg.ok {
			if lg.stage.ErrorKind == "" {
				t.Errorf("%s: the simulation failed, explain did not", lg.name)
			}
			continue
		}
		var pick routecore.WorkerID
		probs := map[routecore.WorkerID]float64{}
		for _, c := range lg.stage.Candidates {
			probs[c.InstanceID] += c.Probability
			if c.Selected {
				pick = c.InstanceID
			}
			if lg.costs != nil && c.Scored && c.Cost != lg.costs[c.InstanceID] {
				t.Errorf("%s %s: cost explain %v, simulation %v", lg.name, c.Worker, c.Cost, lg.costs[c.InstanceID])
			}
		}
		if pick != lg.pick {
			t.Errorf("%s pick: explain %d, simulation %d", lg.name, pick, lg.pick)
		}
		for id, p := range probs {
			if p != lg.probs[id] {
				t.Errorf("%s probability of %d: explain %v, simulation %v", lg.name, id, p, lg.probs[id])
			}
		}
	}
}

// distinct returns n requests at time 0 with distinct prompts of isl tokens.
func distinct(n, isl int, at time.Duration) []trace.Request {
	out := make([]trace.Request, n)
	for i := range out {
		out[i] = trace.Request{Arrival: at, Tokens: seqTokens(isl, uint32(i*isl)+1), OutputTokens: 20}
	}
	return out
}

// TestRequiredPrefillOnlyZoneByHand: required zone policy, one zone with
// prefill and no decode (us-east-1c: 2 of the 4 prefill workers), idle
// workers, distinct prompts (no overlap) all arriving at once. The prefill
// router books each pick's prompt tokens, so the KV picks rotate evenly over
// the 4 prefill workers: exactly half the requests land in us-east-1c and
// fail at the decode hop with NoEndpoints, and every other one is routed in
// its own zone with no cross-zone transfer. Under preferred enforcement none
// fails and the 1c half crosses zones; in round-robin mode the decode pick
// ignores the constraint, so none fails either.
func TestRequiredPrefillOnlyZoneByHand(t *testing.T) {
	snap, dep, _ := example(t, "prefill-only-zone-required.yaml")
	const n = 400
	run := func(t *testing.T, vs ...string) *Report {
		var variants []Variant
		for _, s := range vs {
			v, err := ParseVariant(s)
			if err != nil {
				t.Fatal(err)
			}
			variants = append(variants, v)
		}
		r, err := Run(context.Background(), Options{Snapshot: snap, Deployment: dep, Base: explain.Options{Seed: 3, AssumeIdle: true},
			Variants: variants, Engine: DefaultEngine(), Open: opener(distinct(n, 160, 0))})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	r := run(t, "enforcement=preferred,weight=1", "router-mode=round-robin")
	as, pref, rr := r.Variants[0], r.Variants[1], r.Variants[2]
	if as.Requests != n || as.Failed != n/2 || as.Routed != n/2 || as.WastedPrefills != n/2 {
		t.Fatalf("as deployed: requests %d failed %d routed %d wasted %d, want %d/%d/%d/%d", as.Requests, as.Failed, as.Routed, as.WastedPrefills, n, n/2, n/2, n/2)
	}
	if len(as.Failures) != 1 || as.Failures[0].Kind != "NoEndpoints" || as.Failures[0].Stage != "decode" || as.Failures[0].Count != n/2 {
		t.Errorf("failures %+v", as.Failures)
	}
	if as.CrossDomainTransfers != 0 || as.SameDomainTransfers != n/2 {
		t.Errorf("transfers same %d cross %d", as.SameDomainTransfers, as.CrossDomainTransfers)
	}
	byZone := map[string]DomainResult{}
	for _, d := range as.Domains {
		byZone[d.Value] = d
	}
	if byZone["us-east-1c"].Failed != n/2 || byZone["us-east-1a"].PrefillPicks != n/4 || byZone["us-east-1b"].PrefillPicks != n/4 {
		t.Errorf("per zone %+v", byZone)
	}
	if pref.Failed != 0 || pref.Routed != n || pref.CrossDomainTransfers != n/2 {
		t.Errorf("preferred: failed %d routed %d cross %d", pref.Failed, pref.Routed, pref.CrossDomainTransfers)
	}
	if rr.RouterMode != routecore.RouterModeRoundRobin || rr.Failed != 0 || rr.Routed != n {
		t.Errorf("round-robin: mode %s failed %d routed %d", rr.RouterMode, rr.Failed, rr.Routed)
	}
	// Round-robin rotates over the 4 prefill workers and the 6 decode workers.
	for _, w := range rr.Workers {
		want := n / 4
		if w.Role == "decode" {
			if w.Picks < n/6 || w.Picks > n/6+1 {
				t.Errorf("round-robin decode %s: %d picks, want %d or %d", w.Worker, w.Picks, n/6, n/6+1)
			}
			continue
		}
		if w.Picks != want {
			t.Errorf("round-robin prefill %s: %d picks, want %d", w.Worker, w.Picks, want)
		}
	}
}
