package build

import (
	"strings"
	"testing"
	"time"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
)

// upstreamKvEventsText is shaped like a KV-mode frontend's /metrics in the
// newest ai-dynamo/dynamo: RouterWorkerStatusMetrics in
// lib/llm/src/kv_router/metrics.rs (create_intgaugevec of
// router::KV_EVENT_SOURCE_MISMATCH_WORKERS on model, worker_type,
// target_namespace, target_component, target_endpoint, through the component
// hierarchy: dynamo_component_ prefix and the dynamo_namespace /
// dynamo_component labels), KvIndexerMetrics (kvrouter::KV_CACHE_EVENTS_APPLIED
// on event_type and status) and router_requests_total with router_id.
const upstreamKvEventsText = `# HELP dynamo_component_router_kv_event_source_mismatch_workers Number of serving workers with missing or ambiguous KV sources, explicitly disabled KV event publishing, or without an expected RecoveryTarget
# TYPE dynamo_component_router_kv_event_source_mismatch_workers gauge
dynamo_component_router_kv_event_source_mismatch_workers{dynamo_component="frontend",dynamo_namespace="dynamo",model="Qwen/Qwen3-0.6B",target_component="prefill",target_endpoint="generate",target_namespace="dynamo",worker_type="prefill"} 2
dynamo_component_router_kv_event_source_mismatch_workers{dynamo_component="frontend",dynamo_namespace="dynamo",model="Qwen/Qwen3-0.6B",target_component="backend",target_endpoint="generate",target_namespace="dynamo",worker_type="decode"} 0
# HELP dynamo_component_kv_cache_events_applied Total number of KV cache events applied to index
# TYPE dynamo_component_kv_cache_events_applied counter
dynamo_component_kv_cache_events_applied{dynamo_component="frontend",dynamo_namespace="dynamo",event_type="stored",status="ok"} 0
dynamo_component_kv_cache_events_applied{dynamo_component="frontend",dynamo_namespace="dynamo",event_type="removed",status="block_not_found"} 3
# HELP dynamo_component_router_requests_total Total number of requests processed by the router
# TYPE dynamo_component_router_requests_total counter
dynamo_component_router_requests_total{dynamo_component="frontend",dynamo_namespace="dynamo",router_id="7587889712474989333"} 4210
`

func parseKvEvents(t *testing.T, text string) (*model.KvEventsInfo, int) {
	t.Helper()
	res := bldParsePromText(text, bldIsKvEventsMetric)
	if res.errors > 0 {
		t.Fatalf("parse errors: %d (%s)", res.errors, res.firstError)
	}
	return bldKvEvents(res.samples, "frontend /metrics", time.Unix(0, 0))
}

func TestKvEventsUpstreamShape(t *testing.T) {
	k, bad := parseKvEvents(t, upstreamKvEventsText)
	if bad != 0 || k == nil {
		t.Fatalf("bad %d, k %v", bad, k)
	}
	if len(k.SourceMismatch) != 2 || k.SourceMismatch[0].TargetComponent != "backend" || k.SourceMismatch[0].Workers != 0 ||
		k.SourceMismatch[1].TargetComponent != "prefill" || k.SourceMismatch[1].Workers != 2 ||
		k.SourceMismatch[1].Model != "Qwen/Qwen3-0.6B" || k.SourceMismatch[1].WorkerType != "prefill" || k.SourceMismatch[1].TargetEndpoint != "generate" {
		t.Fatalf("mismatch %+v", k.SourceMismatch)
	}
	if n, ok := k.StoredOK(); !ok || n != 0 {
		t.Fatalf("stored ok %d %v", n, ok)
	}
	if k.RoutedRequests == nil || *k.RoutedRequests != 4210 {
		t.Fatalf("requests %v", k.RoutedRequests)
	}
}

func TestKvEventsCases(t *testing.T) {
	const g = "dynamo_component_router_kv_event_source_mismatch_workers"
	cases := []struct {
		name  string
		text  string
		nilK  bool
		bad   int
		check func(t *testing.T, k *model.KvEventsInfo)
	}{
		{name: "none", text: "dynamo_frontend_requests_total 3\n", nilK: true},
		// The first gauge (#11194) had no label: one deployment-wide entry.
		{name: "unlabelled gauge", text: g + " 1\n", check: func(t *testing.T, k *model.KvEventsInfo) {
			if len(k.SourceMismatch) != 1 || k.SourceMismatch[0].Workers != 1 || k.SourceMismatch[0].TargetComponent != "" {
				t.Fatalf("%+v", k.SourceMismatch)
			}
			if _, ok := k.StoredOK(); ok {
				t.Fatal("applied not exported")
			}
		}},
		// The middle version had no target_endpoint.
		{name: "no endpoint label", text: g + `{model="m",target_component="prefill",target_namespace="dyn",worker_type="prefill"} 3` + "\n",
			check: func(t *testing.T, k *model.KvEventsInfo) {
				if k.SourceMismatch[0].TargetEndpoint != "" || k.SourceMismatch[0].Workers != 3 {
					t.Fatalf("%+v", k.SourceMismatch)
				}
			}},
		{name: "standalone applied name", text: `dynamo_kvrouter_kv_cache_events_applied{event_type="stored",status="ok"} 12` + "\n",
			check: func(t *testing.T, k *model.KvEventsInfo) {
				if n, ok := k.StoredOK(); !ok || n != 12 {
					t.Fatalf("%d %v", n, ok)
				}
			}},
		{name: "same set twice sums", text: g + `{target_component="p"} 1` + "\n" + g + `{target_component="p"} 2` + "\n",
			check: func(t *testing.T, k *model.KvEventsInfo) {
				if len(k.SourceMismatch) != 1 || k.SourceMismatch[0].Workers != 3 {
					t.Fatalf("%+v", k.SourceMismatch)
				}
			}},
		// Hostile input: no float reading of counts, bounded labels.
		{name: "fraction", text: g + " 1.5\n", nilK: true, bad: 1},
		{name: "negative", text: g + " -1\n", nilK: true, bad: 1},
		{name: "NaN", text: g + " NaN\n", nilK: true, bad: 1},
		{name: "overflow", text: g + `{target_component="p"} 18446744073709551615` + "\n" + g + `{target_component="p"} 1` + "\n", bad: 1,
			check: func(t *testing.T, k *model.KvEventsInfo) {
				if k.SourceMismatch[0].Workers != 18446744073709551615 {
					t.Fatalf("%+v", k.SourceMismatch)
				}
			}},
		{name: "long label", text: g + `{target_component="` + strings.Repeat("x", 300) + `"} 1` + "\n", nilK: true, bad: 1},
		{name: "control char", text: g + "{model=\"a\x01b\"} 1\n", nilK: true, bad: 1},
		{name: "odd worker type", text: g + `{worker_type="pre fill"} 1` + "\n", nilK: true, bad: 1},
		{name: "odd status", text: `dynamo_component_kv_cache_events_applied{event_type="stored",status="o k"} 1` + "\n", nilK: true, bad: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			k, bad := parseKvEvents(t, tc.text)
			if bad != tc.bad || (k == nil) != tc.nilK {
				t.Fatalf("bad %d (want %d), k %+v", bad, tc.bad, k)
			}
			if tc.check != nil {
				tc.check(t, k)
			}
		})
	}
}

func TestKvEventsSeriesBound(t *testing.T) {
	var b strings.Builder
	for i := range bldMaxSourceSets + 10 {
		b.WriteString("dynamo_component_router_kv_event_source_mismatch_workers{target_component=\"c")
		b.WriteString(strings.Repeat("x", i%7) + string(rune('a'+i%26)) + strings.Repeat("y", i/26))
		b.WriteString("\"} 1\n")
	}
	k, bad := parseKvEvents(t, b.String())
	if len(k.SourceMismatch) != bldMaxSourceSets || bad != 10 {
		t.Fatalf("kept %d, bad %d", len(k.SourceMismatch), bad)
	}
}

// upstreamFunnelText is the cache-reuse funnel of the newest
// RouterRequestMetrics (lib/llm/src/kv_router/metrics.rs: input_sequence_tokens
// a HistogramVec on phase and model, kv_best_eligible_cached_prefix_tokens_total,
// kv_selected_cached_prefix_tokens_total and kv_worker_reused_tokens_total
// IntCounterVecs on the same labels, all with router_id), as its test
// router_request_metrics_register_with_component_labels exposes them.
const upstreamFunnelText = `dynamo_component_router_input_sequence_tokens_sum{dynamo_component="frontend",dynamo_namespace="dynamo",model="m",phase="prefill",router_id="291"} 2000000
dynamo_component_router_input_sequence_tokens_count{dynamo_component="frontend",dynamo_namespace="dynamo",model="m",phase="prefill",router_id="291"} 2000
dynamo_component_router_input_sequence_tokens_sum{dynamo_component="frontend",dynamo_namespace="dynamo",model="other",phase="prefill",router_id="291"} 1e+06
dynamo_component_router_input_sequence_tokens_count{dynamo_component="frontend",dynamo_namespace="dynamo",model="other",phase="prefill",router_id="291"} 1000
dynamo_component_router_kv_best_eligible_cached_prefix_tokens_total{dynamo_component="frontend",dynamo_namespace="dynamo",model="m",phase="prefill",router_id="291"} 1500000
dynamo_component_router_kv_selected_cached_prefix_tokens_total{dynamo_component="frontend",dynamo_namespace="dynamo",model="m",phase="prefill",router_id="291"} 300000
dynamo_component_router_kv_worker_reused_tokens_total{dynamo_component="frontend",dynamo_namespace="dynamo",model="m",phase="prefill",router_id="291"} 290000
dynamo_component_router_kv_best_eligible_cached_prefix_tokens_total{dynamo_component="frontend",dynamo_namespace="dynamo",model="other",phase="prefill",router_id="291"} 0
dynamo_component_router_kv_selected_cached_prefix_tokens_total{dynamo_component="frontend",dynamo_namespace="dynamo",model="other",phase="prefill",router_id="291"} 0
dynamo_component_router_kv_worker_reused_tokens_total{dynamo_component="frontend",dynamo_namespace="dynamo",model="other",phase="prefill",router_id="291"} 0
`

func TestRoutingFunnel(t *testing.T) {
	q, bad := parseQuality(t, upstreamFunnelText)
	if bad != 0 || q == nil || len(q.Funnel) != 1 {
		t.Fatalf("bad %d q %+v", bad, q)
	}
	f := q.Funnel[0]
	if f.Phase != "prefill" || f.Attempts != 3000 || f.InputTokens != 3000000 || f.BestEligibleCachedTokens != 1500000 ||
		f.SelectedCachedTokens != 300000 || f.WorkerReusedTokens == nil || *f.WorkerReusedTokens != 290000 {
		t.Fatalf("%+v", f)
	}
	if got := q.Line(); !strings.HasPrefix(got, "cached prefix 10% of 50% reachable (3000 prefill routing attempts") {
		t.Fatalf("line %q", got)
	}
	// Older frontends: input_sequence_tokens without a phase, no funnel.
	q, bad = parseQuality(t, "dynamo_component_router_input_sequence_tokens_sum{router_id=\"1\"} 5\ndynamo_component_router_input_sequence_tokens_count{router_id=\"1\"} 1\n")
	if bad != 0 || q != nil {
		t.Fatalf("old shape: bad %d q %+v", bad, q)
	}
	// Out of order (more selected than best) or not exact: dropped, counted.
	for _, text := range []string{
		strings.Replace(upstreamFunnelText, "} 300000", "} 1600000", 1),
		strings.Replace(upstreamFunnelText, "} 300000", "} 3.5", 1),
		strings.Replace(upstreamFunnelText, "} 1500000", "} 3500000", 1),
	} {
		q, bad = parseQuality(t, text)
		if bad != 1 || q != nil {
			t.Fatalf("bad %d q %+v", bad, q)
		}
	}
}
