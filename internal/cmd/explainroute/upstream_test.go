package explainroute_test

import (
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/explain"
)

// TestExplainRouteUpstreamExamples: one request through each of Dynamo's
// single-node example deployments as rebuilt in test/fixtures/upstream
// (with their DynamoWorkerMetadata): the aggregated ones serve it aggregated on
// their only worker component (VllmDecodeWorker and SGLang's decode included),
// the disaggregated ones prefill on a prefill worker and decode on a decode
// worker, in the router mode their frontend declares (kv for the *_router
// examples, round-robin for the others). The multinode rebuilds publish no
// DynamoWorkerMetadata, so no worker is known to the router: NoEndpoints at
// decode under kv (docs/upstream-shapes.md).
func TestExplainRouteUpstreamExamples(t *testing.T) {
	const dir = "test/fixtures/upstream/"
	tests := []struct {
		file                 string
		router, mode         string
		prefillComp, decComp string // component prefix of the picks ("" for none)
		fails                string // verdict error when not routable
	}{
		{"vllm-agg-v1alpha1.yaml", "round-robin", "aggregated", "", "vllm-agg-0-vllmdecodeworker-", ""},
		{"vllm-agg-v1beta1.yaml", "round-robin", "aggregated", "", "vllm-agg-0-vllmdecodeworker-", ""},
		{"vllm-agg-router-v1alpha1.yaml", "kv", "aggregated", "", "vllm-agg-router-0-vllmdecodeworker-", ""},
		{"vllm-agg-router-v1beta1.yaml", "kv", "aggregated", "", "vllm-agg-router-0-vllmdecodeworker-", ""},
		{"vllm-disagg-v1alpha1.yaml", "round-robin", "disaggregated", "vllm-disagg-0-vllmprefillworker-", "vllm-disagg-0-vllmdecodeworker-", ""},
		{"vllm-disagg-v1beta1.yaml", "round-robin", "disaggregated", "vllm-disagg-0-vllmprefillworker-", "vllm-disagg-0-vllmdecodeworker-", ""},
		{"vllm-disagg-router-v1alpha1.yaml", "kv", "disaggregated", "vllm-v1-disagg-router-0-vllmprefillworker-", "vllm-v1-disagg-router-0-vllmdecodeworker-", ""},
		{"vllm-disagg-router-v1beta1.yaml", "kv", "disaggregated", "vllm-v1-disagg-router-0-vllmprefillworker-", "vllm-v1-disagg-router-0-vllmdecodeworker-", ""},
		{"sglang-agg-v1alpha1.yaml", "round-robin", "aggregated", "", "sglang-agg-0-decode-", ""},
		{"sglang-agg-v1beta1.yaml", "round-robin", "aggregated", "", "sglang-agg-0-decode-", ""},
		{"sglang-agg-router-v1alpha1.yaml", "kv", "aggregated", "", "sglang-agg-router-0-decode-", ""},
		{"sglang-agg-router-v1beta1.yaml", "kv", "aggregated", "", "sglang-agg-router-0-decode-", ""},
		{"sglang-disagg-v1alpha1.yaml", "round-robin", "disaggregated", "sglang-disagg-0-prefill-", "sglang-disagg-0-decode-", ""},
		{"sglang-disagg-v1beta1.yaml", "round-robin", "disaggregated", "sglang-disagg-0-prefill-", "sglang-disagg-0-decode-", ""},
		{"trtllm-agg-v1alpha1.yaml", "round-robin", "aggregated", "", "trtllm-agg-0-trtllmworker-", ""},
		{"trtllm-agg-v1beta1.yaml", "round-robin", "aggregated", "", "trtllm-agg-0-trtllmworker-", ""},
		{"trtllm-agg-router-v1alpha1.yaml", "kv", "aggregated", "", "trtllm-agg-router-0-trtllmworker-", ""},
		{"trtllm-agg-router-v1beta1.yaml", "kv", "aggregated", "", "trtllm-agg-router-0-trtllmworker-", ""},
		{"trtllm-disagg-v1alpha1.yaml", "round-robin", "disaggregated", "trtllm-disagg-0-trtllmprefillworker-", "trtllm-disagg-0-trtllmdecodeworker-", ""},
		{"trtllm-disagg-v1beta1.yaml", "round-robin", "disaggregated", "trtllm-disagg-0-prefill-", "trtllm-disagg-0-decode-", ""},
		{"trtllm-disagg-router-v1alpha1.yaml", "kv", "disaggregated", "trtllm-v1-disagg-router-0-trtllmprefillworker-", "trtllm-v1-disagg-router-0-trtllmdecodeworker-", ""},
		{"trtllm-disagg-router-v1beta1.yaml", "kv", "disaggregated", "trtllm-v1-disagg-router-0-prefill-", "trtllm-v1-disagg-router-0-decode-", ""},
		// Before the workers register, the frontend has no instance and does not
		// serve the model; once they have, requests route disaggregated.
		{"vllm-disagg-multinode-v1alpha1.yaml", "kv", "", "", "", "ModelNotReady"},
		{"trtllm-disagg-multinode-v1beta1-zone-required.yaml", "kv", "", "", "", "ModelNotReady"},
		{"vllm-disagg-multinode-v1alpha1-registered.yaml", "kv", "disaggregated", "vllm-disagg-0-ctx-0-ctx-ldr-", "vllm-disagg-0-gen-0-gen-ldr-", ""},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			x, r := explainJSON(t, "--from-file", dir+tt.file, "--tokens", upTokens)
			if string(x.Router.Mode) != tt.router || string(x.Mode) != tt.mode {
				t.Errorf("router %s, mode %s; want %s, %s", x.Router.Mode, x.Mode, tt.router, tt.mode)
			}
			if tt.fails != "" {
				if x.Verdict.Outcome != explain.OutcomeFails || x.Verdict.Error != tt.fails || r.ExitCode != 2 {
					t.Errorf("verdict %+v exit %d, want fails %s exit 2", x.Verdict, r.ExitCode, tt.fails)
				}
				return
			}
			if x.Verdict.Outcome != explain.OutcomeRoutable || r.ExitCode != 0 {
				t.Fatalf("verdict %+v exit %d, want routable exit 0", x.Verdict, r.ExitCode)
			}
			pick := func(s *explain.Stage) string {
				if s == nil || len(s.Selected) == 0 {
					return ""
				}
				return s.Selected[0]
			}
			if got := pick(x.Prefill); (tt.prefillComp == "") != (got == "") || len(got) < len(tt.prefillComp) || got[:len(tt.prefillComp)] != tt.prefillComp {
				t.Errorf("prefill pick %q, want one of %s*", got, tt.prefillComp)
			}
			if got := pick(x.Decode); len(got) < len(tt.decComp) || got[:len(tt.decComp)] != tt.decComp {
				t.Errorf("decode pick %q, want one of %s*", got, tt.decComp)
			}
		})
	}
}

// upTokens is the request sent through the upstream shapes: two full blocks of
// 16 and a partial one.
const upTokens = "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33,34,35"
