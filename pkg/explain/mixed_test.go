package explain

import (
	"bytes"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/build"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/capture"
)

// mixedDeployment is the prefill-only-zone example with the frontend in
// frontendMode and the named worker sets publishing their own router mode in
// their router_config (as since Dynamo #13192).
// perHop is a release with per-hop router configurations: a worker set's
// router_config routes its own hop (#13197, Dynamo 1.4; before, the prefill
// hop followed the decode set's).
const perHop = "1.4.0"

func mixedDeployment(t *testing.T, frontendMode string, sets map[string]string) (*model.Snapshot, *model.Deployment) {
	t.Helper()
	data, err := os.ReadFile("../../examples/prefill-only-zone-required.yaml")
	if err != nil {
		t.Fatal(err)
	}
	b, err := capture.Read(bytes.NewReader(data), "prefill-only")
	if err != nil {
		t.Fatal(err)
	}
	s, err := build.Build(b)
	if err != nil {
		t.Fatal(err)
	}
	dep := &s.Deployments[0]
	dep.Router.Mode, dep.Router.ModeSource = frontendMode, "frontend args"
	for comp, mode := range sets {
		dep.Router.WorkerSetOverrides = append(dep.Router.WorkerSetOverrides, model.RouterOverride{Component: comp, Mode: mode, Config: routecore.DefaultKvRouterConfig()})
	}
	return s, dep
}

// TestMixedHopModes: since Dynamo #13192/#13197 each worker set's
// router_config governs its own hop. A KV prefill hop with a round-robin
// decode hop: the prefill is costed, the required zone constraint is derived,
// and the decode pick ignores it (so the prefill-only zone does not fail, the
// KV cache crosses zones instead). A round-robin prefill hop with a KV decode
// hop: the prefill rotates over all four workers, the KV decode honours the
// derived constraint, and a landing in the prefill-only zone fails with
// NoEndpoints.
func TestMixedHopModes(t *testing.T) {
	toks := exampleTokens(t)
	t.Run("kv prefill, round-robin decode", func(t *testing.T) {
		s, dep := mixedDeployment(t, "round-robin", map[string]string{"Prefill": "kv"})
		for seed := range uint64(8) {
			x, err := Explain(Input{Snapshot: s, Deployment: dep, Request: Request{Tokens: toks}, Options: Options{Seed: seed, DynamoVersion: perHop}})
			if err != nil {
				t.Fatal(err)
			}
			if x.Prefill == nil || x.Prefill.ModeExplanation != "" || x.Prefill.Rule == routecore.RuleRoundRobin {
				t.Fatalf("prefill stage %+v: want the KV cost model", x.Prefill)
			}
			if x.Decode == nil || x.Decode.Rule != routecore.RuleRoundRobin || x.Transfer == nil || !x.Transfer.Ignored {
				t.Fatalf("decode %+v transfer %+v", x.Decode, x.Transfer)
			}
			if !x.Verdict.Routable {
				t.Errorf("seed %d: %+v", seed, x.Verdict)
			}
			if strings.HasSuffix(x.Prefill.Pick, "us-east-1c-0") || strings.HasSuffix(x.Prefill.Pick, "us-east-1c-1") {
				if math.Abs(x.Verdict.ConstraintIgnoredProbability-1) > 1e-9 || !strings.Contains(x.Verdict.Cause, "round-robin mode") {
					t.Errorf("seed %d: 1c prefill: the decode pick must cross zones: %+v", seed, x.Verdict)
				}
			}
			if !strings.Contains(strings.Join(x.Assumptions, "\n"), "the prefill hop runs kv and the decode hop round-robin") {
				t.Errorf("assumptions %v", x.Assumptions)
			}
			if l := x.RouterModeLine(); !strings.Contains(l, "prefill hop kv (router_config of worker set Prefill)") || !strings.Contains(l, "decode hop round-robin (frontend args)") {
				t.Errorf("router mode line %q", l)
			}
		}
	})
	t.Run("round-robin prefill, kv decode", func(t *testing.T) {
		s, dep := mixedDeployment(t, "round-robin", map[string]string{"Decode": "kv"})
		fails, picks := 0, map[string]bool{}
		for seed := range uint64(40) {
			x, err := Explain(Input{Snapshot: s, Deployment: dep, Request: Request{Tokens: toks}, Options: Options{Seed: seed, DynamoVersion: perHop}})
			if err != nil {
				t.Fatal(err)
			}
			if x.Prefill == nil || x.Prefill.Rule != routecore.RuleRoundRobin {
				t.Fatalf("prefill %+v", x.Prefill)
			}
			picks[x.Prefill.Pick] = true
			in1c := strings.Contains(x.Prefill.Pick, "us-east-1c")
			if in1c {
				fails++
				if x.Verdict.Routable || x.Verdict.Error != "NoEndpoints" || x.Verdict.Stage != "decode" {
					t.Errorf("seed %d: prefill in 1c must fail at the KV decode hop: %+v", seed, x.Verdict)
				}
				continue
			}
			if !x.Verdict.Routable || x.Decode == nil || x.Decode.ModeExplanation != "" || x.Transfer == nil || x.Transfer.Ignored {
				t.Errorf("seed %d: %+v decode %+v", seed, x.Verdict, x.Decode)
			}
			if d := x.Decode; d != nil && !strings.Contains(d.Pick, strings.TrimPrefix(x.Transfer.Value, "")) {
				t.Errorf("seed %d: decode %s outside the prefill's zone %s", seed, d.Pick, x.Transfer.Value)
			}
		}
		if len(picks) != 4 || fails == 0 {
			t.Errorf("round-robin prefill picks %v, %d failures", picks, fails)
		}
	})
	t.Run("what-if replaces every hop", func(t *testing.T) {
		s, dep := mixedDeployment(t, "round-robin", map[string]string{"Prefill": "kv"})
		m := routecore.RouterModeRandom
		x, err := Explain(Input{Snapshot: s, Deployment: dep, Request: Request{Tokens: toks}, Options: Options{Knobs: Knobs{RouterMode: &m}, DynamoVersion: perHop}})
		if err != nil {
			t.Fatal(err)
		}
		if x.Prefill.Rule != routecore.RuleRandom || x.Decode.Rule != routecore.RuleRandom {
			t.Errorf("rules %s / %s", x.Prefill.Rule, x.Decode.Rule)
		}
	})
}

// TestMixedHopsConditionalDisaggMayDiffer: a non-KV prefill hop with a KV
// decode router running conditional disaggregation is listed under May
// differ (the pinned prefill skips the decode peek).
func TestMixedHopsConditionalDisaggMayDiffer(t *testing.T) {
	s, dep := mixedDeployment(t, "round-robin", map[string]string{"Decode": "kv"})
	cfg := routecore.DefaultKvRouterConfig()
	cfg.ConditionalDisaggEnabled = true
	dep.Router.Config = cfg
	for i := range dep.Router.WorkerSetOverrides {
		dep.Router.WorkerSetOverrides[i].Config.ConditionalDisaggEnabled = true
	}
	x, err := Explain(Input{Snapshot: s, Deployment: dep, Request: Request{Tokens: exampleTokens(t)}, Options: Options{DynamoVersion: perHop}})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, d := range x.Verdict.MayDiffer {
		found = found || d.Feature == "conditional-disagg" && strings.Contains(d.Detail, "round-robin")
	}
	if !found {
		t.Errorf("mayDiffer %+v", x.Verdict.MayDiffer)
	}
	// Without conditional disaggregation nothing is listed.
	s, dep = mixedDeployment(t, "round-robin", map[string]string{"Decode": "kv"})
	x, err = Explain(Input{Snapshot: s, Deployment: dep, Request: Request{Tokens: exampleTokens(t)}, Options: Options{DynamoVersion: perHop}})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range x.Verdict.MayDiffer {
		if d.Feature == "conditional-disagg" {
			t.Errorf("listed without conditional disaggregation: %+v", d)
		}
	}
}
