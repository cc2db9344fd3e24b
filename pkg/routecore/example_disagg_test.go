package routecore_test

import (
	"fmt"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
)

// ExampleRouteDisaggregated dry-runs a disaggregated request on a deployment
// whose prefill workers use required KV-transfer enforcement per zone, then
// checks every possible prefill landing: zone us-east-1c has prefill capacity
// but no decode worker, so a request prefilled there cannot be decoded.
func ExampleRouteDisaggregated() {
	kvBlocks := uint64(1000)
	runtime := func(zone string, required bool) routecore.RuntimeConfig {
		rc := routecore.RuntimeConfig{TotalKvBlocks: &kvBlocks, TopologyDomains: map[string]string{"zone": zone}}
		if required {
			rc.KvTransferDomain, rc.KvTransferEnforcement = "zone", routecore.EnforcementRequired
		}
		return rc
	}
	prefill := func(id routecore.WorkerID, zone string, active uint64) routecore.Worker {
		return routecore.Worker{ID: id, Runtime: runtime(zone, true),
			Loads: map[uint32]routecore.RankLoad{0: {ActivePrefillTokens: active}}}
	}
	decode := func(id routecore.WorkerID, zone string, blocks uint64) routecore.Worker {
		return routecore.Worker{ID: id, Runtime: runtime(zone, false),
			Loads: map[uint32]routecore.RankLoad{0: {ActiveDecodeBlocks: blocks}}}
	}
	in := routecore.DisaggInput{
		Config: routecore.DefaultKvRouterConfig(),
		PrefillWorkers: []routecore.Worker{
			prefill(1, "us-east-1a", 0), prefill(2, "us-east-1b", 256), prefill(3, "us-east-1c", 512),
		},
		DecodeWorkers: []routecore.Worker{
			decode(11, "us-east-1a", 40), decode(12, "us-east-1b", 0),
		},
		Request: routecore.Request{ISL: 128, BlockSize: 16},
	}

	d, err := routecore.RouteDisaggregated(in, nil)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println("mode:", d.Mode)
	fmt.Println("prefill:", d.Prefill.Selected)
	fmt.Println("transfer:", d.Transfer.Rule, d.DecodeConstraints.RequiredTaints)
	fmt.Println("decode:", d.Decode.Selected)

	outcomes, err := routecore.EvaluateAllPrefill(in)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	for _, o := range outcomes {
		if o.Routable {
			fmt.Printf("prefill %s -> decode %s\n", o.Prefill, o.Decode.Selected)
		} else {
			fmt.Printf("prefill %s -> fails: %v\n", o.Prefill, o.Err)
		}
	}
	fmt.Println("failing prefill workers:", routecore.FailingPrefillWorkers(outcomes))
	// Output:
	// mode: disaggregated
	// prefill: 1/0
	// transfer: required [dynamo.topology/zone=us-east-1a]
	// decode: 11/0
	// prefill 1/0 -> decode 11/0
	// prefill 2/0 -> decode 12/0
	// prefill 3/0 -> fails: decode selection failed: no endpoints available to route work: kv transfer from prefill worker 3 requires decode in zone=us-east-1c (taint dynamo.topology/zone=us-east-1c) and no decode worker is in zone=us-east-1c: add decode workers to zone=us-east-1c or use preferred enforcement with a preferred weight
	// failing prefill workers: [3]
}
