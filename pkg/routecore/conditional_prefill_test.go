package routecore

import (
	"encoding/json"
	"testing"
)

func conditionalPrefillFieldsJSON(fields map[string]any) []byte {
	b, _ := json.Marshal(fields)
	return b
}

// The cases mirror the tests of Dynamo's lib/kv-router/src/conditional_prefill.rs.

func TestConditionalPrefillTokenCap(t *testing.T) {
	c := DefaultConditionalPrefillConfig()
	if d := DecideConditionalPrefill(c, ConditionalPrefillInput{PromptTokens: 1, BlockSize: 16}); d.Bypass || !d.Known {
		t.Errorf("disabled by default (token_cap_policy_is_disabled_by_default): %+v", d)
	}
	c.Enabled, c.BypassBelowTokens = true, 160
	for _, tc := range []struct {
		prompt, overlap uint64
		bypass          bool
	}{
		{240, 5, true},  // token_cap_policy_bypasses_at_or_below_cap: 240 − 80 = 160 <= 160
		{256, 5, false}, // 256 − 80 = 176 > 160
		{160, 0, true},  // token_cap_policy_allows_no_overlap
	} {
		d := DecideConditionalPrefill(c, ConditionalPrefillInput{PromptTokens: tc.prompt, BlockSize: 16, DecodeOverlapBlocks: tc.overlap})
		if d.Bypass != tc.bypass || !d.Known {
			t.Errorf("prompt %d overlap %d: %+v, want bypass=%v", tc.prompt, tc.overlap, d, tc.bypass)
		}
	}
}

func TestConditionalPrefillRegressionFastPath(t *testing.T) {
	u := func(v uint64) *uint64 { return &v }
	roomy := CondPrefillWorker{LoadBlocks: u(100), MaxBlocks: u(1000), QueuedBlocks: u(0)}
	busy := CondPrefillWorker{LoadBlocks: u(900), MaxBlocks: u(1000), QueuedBlocks: u(0)}
	c := DefaultConditionalPrefillConfig()
	c.Enabled = true
	for _, tc := range []struct {
		name            string
		policy          ConditionalPrefillPolicy
		prompt          uint64
		decode, prefill CondPrefillWorker
		known, bypass   bool
	}{
		{"roomy prefill: remote prefill", CondPrefillThresholdRegression, 1000, roomy, roomy, true, false},
		{"large prompt: remote prefill", CondPrefillThresholdRegression, 20000, roomy, busy, true, false},
		{"roomy decode, busy prefill: bypass", CondPrefillThresholdRegression, 1000, roomy, busy, true, true},
		{"neither roomy: the sidecar decides", CondPrefillThresholdRegression, 1000, busy, busy, false, false},
		{"threshold_only without a fast answer: remote prefill", CondPrefillThresholdOnly, 1000, busy, busy, true, false},
		{"regression_only always asks the sidecar", CondPrefillRegressionOnly, 1000, roomy, busy, false, false},
		{"unknown signals are not roomy", CondPrefillThresholdOnly, 1000, CondPrefillWorker{}, busy, true, false},
	} {
		c.Policy = tc.policy
		d := DecideConditionalPrefill(c, ConditionalPrefillInput{PromptTokens: tc.prompt, BlockSize: 16, Decode: tc.decode, Prefill: tc.prefill})
		if d.Known != tc.known || d.Bypass != tc.bypass {
			t.Errorf("%s: %+v", tc.name, d)
		}
	}
	if CondPrefillRoomy(CondPrefillWorker{LoadBlocks: u(0), MaxBlocks: u(0), QueuedBlocks: u(0)}, 0.5, 0) {
		t.Error("zero capacity must not be roomy")
	}
}

func TestDecodeConditionalPrefillJSON(t *testing.T) {
	c, err := DecodeConditionalPrefillJSON(conditionalPrefillFieldsJSON(map[string]any{"router_mode": "kv", "kv_router_config": map[string]any{
		"conditional_prefill_enabled": true, "conditional_prefill_policy": "threshold_regression", "conditional_prefill_max_new_tokens": 300,
	}}))
	if err != nil || !c.Present || !c.Enabled || c.Policy != CondPrefillThresholdRegression || c.BypassBelowTokens != 300 || c.DisaggAboveTokens != 16384 {
		t.Errorf("decoded %+v, %v", c, err)
	}
	if c, err := DecodeConditionalPrefillJSON([]byte(`{"overlap_score_credit": 1}`)); err != nil || c.Present {
		t.Errorf("no conditional_prefill fields: %+v, %v", c, err)
	}
	if _, err := DecodeConditionalPrefillJSON([]byte(`{"conditional_prefill_policy": "nonsense"}`)); err == nil {
		t.Error("unknown policy accepted")
	}
}
