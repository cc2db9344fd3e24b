package explain

import (
	"strings"
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
)

// TestWorkerArgsGovernTheirHop: decode workers passing --router-mode kv on
// their own command line behind a round-robin frontend. From Dynamo 1.4 they
// publish it as their card's router_config (parse_worker_router_config,
// #13192), so the decode hop is KV and honours the required constraint: a
// prefill in the prefill-only zone fails with NoEndpoints. On 1.3 workers do
// not read router flags: the decode hop follows the frontend (round-robin),
// ignores the constraint, and nothing fails. The router-mode line names the
// worker's args as the source.
func TestWorkerArgsGovernTheirHop(t *testing.T) {
	toks := exampleTokens(t)
	for _, tc := range []struct {
		release    string
		decodeRule routecore.SelectionRule
		canFail    bool
		source     string
	}{
		{release: "1.4.0", decodeRule: "", canFail: true, source: "decode hop kv (router_config of worker set Decode)"},
		{release: "1.3.0", decodeRule: routecore.RuleRoundRobin, canFail: false, source: "round-robin (frontend args)"},
	} {
		t.Run(tc.release, func(t *testing.T) {
			s, dep := mixedDeployment(t, "round-robin", nil)
			var decodeComp string
			for _, w := range dep.Workers {
				if w.Role == model.RoleDecode {
					decodeComp = w.Component
					break
				}
			}
			dep.Router.WorkerArgs = []model.RouterOverride{{Component: decodeComp, Mode: "kv", Config: routecore.DefaultKvRouterConfig(), Source: "pod " + decodeComp + "-0 args"}}
			failed := 0
			for seed := range uint64(40) {
				x, err := Explain(Input{Snapshot: s, Deployment: dep, Request: Request{Tokens: toks}, Options: Options{Seed: seed, DynamoVersion: tc.release}})
				if err != nil {
					t.Fatal(err)
				}
				if !x.Verdict.Routable {
					if x.Verdict.Error != "NoEndpoints" || x.Verdict.Stage != "decode" || !strings.Contains(x.Prefill.Pick, "us-east-1c") {
						t.Fatalf("seed %d: prefill %s: %+v", seed, x.Prefill.Pick, x.Verdict)
					}
					failed++
					continue
				}
				if tc.decodeRule == routecore.RuleRoundRobin && x.Decode.Rule != routecore.RuleRoundRobin {
					t.Fatalf("seed %d: decode rule %s, want round-robin", seed, x.Decode.Rule)
				}
				if tc.decodeRule == "" && x.Decode.Rule == routecore.RuleRoundRobin {
					t.Fatalf("seed %d: decode hop round-robin, the workers' args say kv", seed)
				}
				if l := x.RouterModeLine(); !strings.Contains(l, tc.source) {
					t.Errorf("router mode line %q does not name %q", l, tc.source)
				}
			}
			if (failed > 0) != tc.canFail {
				t.Errorf("%d of 40 draws failed; want failures %v", failed, tc.canFail)
			}
		})
	}
}
