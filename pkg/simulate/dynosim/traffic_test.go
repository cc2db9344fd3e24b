package dynosim

import (
	"strings"
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
)

func minimalScenario() Scenario {
	return Scenario{Model: "org/m", Backend: "vllm", BlockSize: 16, RouterMode: "round-robin",
		Aggregated: []WorkerSet{{Component: "w", Replicas: 2, TensorParallel: 1}}}
}

// TestSyntheticTrafficExport (issue 31): --synthetic traffic becomes
// DynoSim's synthetic source under poisson load, not DynoSim's default
// traffic: rate=10 at --speedup 2 is 20 requests/s; prompts of 256–1024
// tokens are written as their middle, 256 + 768/2 = 640, outputs of 16–64 as
// 40; 40 requests stop it, and --duration, when shorter than the spec's, too.
func TestSyntheticTrafficExport(t *testing.T) {
	s := minimalScenario()
	s.Seed = 7
	s.Trace = TraceSettings{Speedup: 2, MaxVirtualSeconds: 3, Synthetic: &SyntheticTraffic{Rate: 10, ISLMin: 256, ISLMax: 1024, OSLMin: 16, OSLMax: 64, PrefixShare: 0.5, Prefixes: 3, Requests: 40, DurationSeconds: 60}}
	spec, notes, err := ToSpec(s)
	if err != nil {
		t.Fatal(err)
	}
	tr := spec.Traffic
	if tr == nil || tr.Source.Type != "synthetic" || *tr.Source.InputTokens != 640 || *tr.Source.OutputTokens != 40 ||
		tr.Load.Type != "poisson" || *tr.Load.RequestsPerSecond != 20 || *tr.Load.Seed != 7 ||
		*tr.Stop.Requests != 40 || *tr.Stop.MaxVirtualTimeSeconds != 3 {
		t.Fatalf("traffic %+v / %+v / %+v / %+v", tr, tr.Source, tr.Load, tr.Stop)
	}
	all := strings.Join(notes, "\n")
	for _, w := range []string{"the middle of kubectl-dynamo's uniform ranges is written (input 256–1024 → 640, output 16–64 → 40)",
		"prefix-share=0.5 over 3 shared prefixes has no counterpart", "traffic.load.seed: 7"} {
		if !strings.Contains(all, w) {
			t.Errorf("notes lack %q:\n%s", w, all)
		}
	}
	if strings.Contains(all, "DynoSim's default synthetic traffic applies") {
		t.Errorf("the synthetic traffic is noted as not carried:\n%s", all)
	}
	// A trace file with --duration: the run ends then.
	s.Trace = TraceSettings{Path: "t.jsonl", Format: "mooncake", TraceBlockSize: 512, Speedup: 1, MaxVirtualSeconds: 600}
	spec, _, err = ToSpec(s)
	if err != nil {
		t.Fatal(err)
	}
	if st := spec.Traffic.Stop; st == nil || *st.MaxVirtualTimeSeconds != 600 {
		t.Errorf("stop %+v", st)
	}
}

// TestTopologyCaveats (issue 31): every domain value of a component's
// replicas is named, not only those of components within one domain, and a
// policy over a Grove topology says so.
func TestTopologyCaveats(t *testing.T) {
	w := func(pod, role, zone string) model.Worker {
		return model.Worker{Pod: pod, Role: model.Role(role), Component: role, Replica: pod, Leader: true, GPUs: 1,
			Domain:    model.DomainValues{Published: zone},
			Instances: []model.Instance{{ID: 1, Model: "org/m", BlockSize: 16}},
			Argv:      []string{"python3", "-m", "dynamo.vllm", "--model", "org/m"}}
	}
	dep := &model.Deployment{Name: "d", Namespace: "n", Router: model.RouterInfo{Mode: "kv", Config: routecore.DefaultKvRouterConfig()},
		Policy:  &model.TransferPolicy{Domain: "rack", ClusterTopologyName: "gb200-topo", NodeLabelKey: "nvidia.com/gpu.clique", Enforcement: "required"},
		Workers: []model.Worker{w("p0", "prefill", "rack-1"), w("p1", "prefill", "rack-2"), w("d0", "decode", "rack-1"), w("d1", "decode", "rack-2")}}
	s, notes := ScenarioFromDeployment(dep)
	s.Notes = notes
	_, all, err := ToSpec(s)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(all, "\n")
	for _, want := range []string{"the kvTransferPolicy (domain rack from the Grove topology gb200-topo (node label nvidia.com/gpu.clique), enforcement required) has no DynoSim counterpart",
		"transfer domains (rack-1, rack-2)"} {
		if !strings.Contains(text, want) {
			t.Errorf("notes lack %q:\n%s", want, text)
		}
	}
}
