package topology_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/cmdtest"
	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/golden"
)

// routingQualityMetrics are the frontend's router decision-quality series,
// shaped as ai-dynamo/dynamo exports them (lib/llm/src/kv_router/metrics.rs at
// 01690d42e3b9436ab3a6a365fc9beabf58c105c6 for router_kv_hit_rate and its
// labels; the decision counters of #14776 and avoidable_prefill_tokens_total of
// #13987 as their descriptions name them). The example's frontend has routed
// 4210 requests at a 12% predicted hit rate where 60% was reachable.
var routingQualityMetrics = map[string]string{
	"gives-away": `# TYPE dynamo_component_router_kv_hit_rate histogram
dynamo_component_router_kv_hit_rate_sum{dynamo_component="router",dynamo_endpoint="generate",dynamo_namespace="dynamo",router_id="7587889712474989333"} 505.2
dynamo_component_router_kv_hit_rate_count{dynamo_component="router",dynamo_endpoint="generate",dynamo_namespace="dynamo",router_id="7587889712474989333"} 4210
# TYPE dynamo_component_router_decisions_total counter
dynamo_component_router_decisions_total{dynamo_component="router",dynamo_endpoint="generate",dynamo_namespace="dynamo",router_id="7587889712474989333",worker_type="prefill"} 4210
# TYPE dynamo_component_router_decision_kv_optimal_total counter
dynamo_component_router_decision_kv_optimal_total{dynamo_component="router",dynamo_endpoint="generate",dynamo_namespace="dynamo",router_id="7587889712474989333",worker_type="prefill"} 2560
# TYPE dynamo_component_router_input_f0_total counter
dynamo_component_router_input_f0_total{dynamo_component="router",dynamo_endpoint="generate",dynamo_namespace="dynamo",router_id="7587889712474989333",worker_type="prefill"} 10480000
# TYPE dynamo_component_router_input_f1_total counter
dynamo_component_router_input_f1_total{dynamo_component="router",dynamo_endpoint="generate",dynamo_namespace="dynamo",router_id="7587889712474989333",worker_type="prefill"} 6288000
# TYPE dynamo_component_router_avoidable_prefill_tokens_total counter
dynamo_component_router_avoidable_prefill_tokens_total{dynamo_component="router",dynamo_endpoint="generate",dynamo_namespace="dynamo",router_id="7587889712474989333",worker_type="prefill"} 3100000
`,
	// A released frontend: the hit-rate histogram only.
	"hit-rate-only": `# TYPE dynamo_component_router_kv_hit_rate histogram
dynamo_component_router_kv_hit_rate_sum{dynamo_component="router",dynamo_endpoint="generate",dynamo_namespace="dynamo",router_id="7587889712474989333"} 2736.5
dynamo_component_router_kv_hit_rate_count{dynamo_component="router",dynamo_endpoint="generate",dynamo_namespace="dynamo",router_id="7587889712474989333"} 4210
`,
}

// TestTopologyRoutingQuality pins the KV routing line of -o wide, the JSON
// report's routingQuality and KvRoutingGivesAwayCache on the healthy example
// with decision-quality series added to its frontend scrape.
func TestTopologyRoutingQuality(t *testing.T) {
	data, err := os.ReadFile(examples + "healthy-three-zone-required.yaml")
	if err != nil {
		t.Fatal(err)
	}
	const at = "    # HELP dynamo_frontend_worker_active_decode_blocks"
	if strings.Count(string(data), at) != 1 {
		t.Fatalf("the example has %d frontend scrapes", strings.Count(string(data), at))
	}
	for _, name := range []string{"gives-away", "hit-rate-only"} {
		metrics := "    " + strings.ReplaceAll(strings.TrimSuffix(routingQualityMetrics[name], "\n"), "\n", "\n    ") + "\n"
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "routing-quality.yaml"), []byte(strings.Replace(string(data), at, metrics+at, 1)), 0o600); err != nil {
			t.Fatal(err)
		}
		for _, format := range []string{"table", "wide", "json"} {
			t.Run(name+"/"+format, func(t *testing.T) {
				args := []string{"topology", "--from-file", "routing-quality.yaml", "-o", format}
				wd, err := os.Getwd()
				if err != nil {
					t.Fatal(err)
				}
				if err := os.Chdir(dir); err != nil {
					t.Fatal(err)
				}
				r := cmdtest.Run(t, args...)
				if err := os.Chdir(wd); err != nil {
					t.Fatal(err)
				}
				golden.Assert(t, cmdtest.Transcript(args, "", r))
			})
		}
	}
}
