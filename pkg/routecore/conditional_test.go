package routecore

import (
	"errors"
	"strings"
	"testing"
)

func condU64(v uint64) *uint64 { return &v }

// condCfg mirrors IslBoundingPolicy::new(enabled, threshold, ratio) and friends.
func condCfg(enabled bool, policy ConditionalDisaggPolicy, threshold uint64, ratio float64) KvRouterConfig {
	c := DefaultKvRouterConfig()
	c.ConditionalDisaggEnabled = enabled
	c.ConditionalDisaggPolicy = policy
	c.ConditionalDisaggEffISLThreshold = threshold
	c.ConditionalDisaggEffISLRatioThreshold = ratio
	return c
}

// condFromBlocks mirrors input_from_blocks(prompt, overlap_blocks, block_size).
func condFromBlocks(prompt, overlapBlocks, blockSize uint64) ConditionalInput {
	return ConditionalInput{PromptTokens: prompt, DecodeCachedTokens: overlapBlocks * blockSize, DecodeWorker: WorkerWithDpRank{WorkerID: 5}}
}

func condDecide(t *testing.T, cfg KvRouterConfig, in ConditionalInput) ConditionalDecision {
	t.Helper()
	d, err := DecideConditional(cfg, in)
	if err != nil {
		t.Fatal(err)
	}
	if d.Explanation == "" {
		t.Error("empty explanation")
	}
	return d
}

// The seven IslBoundingPolicy tests of conditional_disagg.rs, plus the newer
// weighted-cache one.
func TestConditionalIslBoundingRustVectors(t *testing.T) {
	cases := []struct {
		name    string
		enabled bool
		ratio   float64
		in      ConditionalInput
		netNew  uint64
		bypass  bool
	}{
		{"disabled_never_bypasses", false, 0.7, condFromBlocks(100, 0, 64), 100, false},
		{"small_and_mostly_cached_bypasses", true, 0.7, condFromBlocks(1000, 14, 64), 104, true},
		{"large_eff_isl_does_not_bypass_even_if_ratio_low", true, 0.99, condFromBlocks(100_000, 1000, 64), 36_000, false},
		{"small_eff_isl_but_ratio_at_or_above_threshold_does_not_bypass", true, 0.7, condFromBlocks(200, 0, 64), 200, false},
		{"boundary_eff_isl_equals_threshold_does_not_bypass", true, 0.99, condFromBlocks(2048, 0, 64), 2048, false},
		{"zero_prompt_tokens_does_not_panic", true, 0.7, condFromBlocks(0, 0, 64), 0, true},
		{"overlap_exceeding_prompt_clamps_to_zero_eff_isl", true, 0.7, condFromBlocks(500, 10, 64), 0, true},
		{"weighted_cached_tokens_do_not_round_up_to_full_block", true, 0.99, ConditionalInput{PromptTokens: 2100, DecodeCachedTokens: 48}, 2052, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := condDecide(t, condCfg(tc.enabled, ConditionalDisaggISLBounding, 2048, tc.ratio), tc.in)
			if d.Bypass != tc.bypass || d.PolicySaysBypass != tc.bypass {
				t.Errorf("bypass = %v (policy %v), want %v: %s", d.Bypass, d.PolicySaysBypass, tc.bypass, d.Explanation)
			}
			if tc.enabled && d.NetNewTokens != tc.netNew {
				t.Errorf("net new = %d, want %d", d.NetNewTokens, tc.netNew)
			}
			if !tc.enabled && (d.IslBounding != nil || d.DecodeGate.Decision != GateConditionalOff) {
				t.Errorf("disabled decision evaluated the policy: %+v", d)
			}
		})
	}
}

func TestConditionalIslBoundingEvidence(t *testing.T) {
	d := condDecide(t, condCfg(true, ConditionalDisaggISLBounding, 2048, 0.7), condFromBlocks(200, 0, 64))
	e := d.IslBounding
	if e == nil || !e.NetNewBelowThreshold.Holds || e.RatioBelowThreshold.Holds || e.Ratio != 1 || e.RatioBelowThreshold.Right != 0.7 {
		t.Fatalf("evidence %+v", e)
	}
	if d.DecodeGate.Decision != GateDeclinedByPolicy || !strings.Contains(d.Explanation, "ratio") {
		t.Errorf("gate %q explanation %q", d.DecodeGate.Decision, d.Explanation)
	}
}

func condBusyInput(prompt, overlapBlocks uint64, busy *bool) ConditionalInput {
	in := condFromBlocks(prompt, overlapBlocks, 64)
	if busy == nil {
		return in // peek did not run: unknown
	}
	in.Prefill = PrefillPeek{Ran: true, ActivePrefillTokens: 100, MaxNumBatchedTokens: condU64(1000)}
	if *busy {
		in.Prefill.ActivePrefillTokens = 900
	}
	return in
}

func TestConditionalPrefillLoadAndIslOrLoad(t *testing.T) {
	yes, no := true, false
	withThreshold := func(policy ConditionalDisaggPolicy, enabled bool) KvRouterConfig {
		c := condCfg(enabled, policy, 2048, 0.7)
		th := 0.5
		c.ConditionalDisaggPrefillBusyThreshold = &th
		return c
	}
	cases := []struct {
		name   string
		cfg    KvRouterConfig
		in     ConditionalInput
		bypass bool
	}{
		{"prefill_load_disabled_never_bypasses", withThreshold(ConditionalDisaggPrefillLoad, false), condBusyInput(1000, 0, &yes), false},
		{"prefill_load_signal_none_does_not_bypass", withThreshold(ConditionalDisaggPrefillLoad, true), condBusyInput(1000, 0, nil), false},
		{"prefill_load_worker_calm_does_not_bypass", withThreshold(ConditionalDisaggPrefillLoad, true), condBusyInput(1000, 0, &no), false},
		{"prefill_load_worker_busy_bypasses", withThreshold(ConditionalDisaggPrefillLoad, true), condBusyInput(1000, 0, &yes), true},
		{"prefill_load_independent_of_isl_fields busy", withThreshold(ConditionalDisaggPrefillLoad, true), condBusyInput(100_000, 0, &yes), true},
		{"prefill_load_independent_of_isl_fields calm", withThreshold(ConditionalDisaggPrefillLoad, true), condBusyInput(100_000, 0, &no), false},
		{"isl_or_load_small_and_calm_bypasses_via_isl", withThreshold(ConditionalDisaggISLOrLoad, true), condBusyInput(1000, 14, &no), true},
		{"isl_or_load_small_and_busy_bypasses", withThreshold(ConditionalDisaggISLOrLoad, true), condBusyInput(1000, 14, &yes), true},
		{"isl_or_load_large_and_calm_does_not_bypass", withThreshold(ConditionalDisaggISLOrLoad, true), condBusyInput(100_000, 0, &no), false},
		{"isl_or_load_large_and_busy_bypasses_via_load", withThreshold(ConditionalDisaggISLOrLoad, true), condBusyInput(100_000, 0, &yes), true},
		{"isl_or_load_disabled_never_bypasses", withThreshold(ConditionalDisaggISLOrLoad, false), condBusyInput(1000, 14, &yes), false},
		{"isl_or_load_signal_none_falls_back_to_isl_only small", withThreshold(ConditionalDisaggISLOrLoad, true), condBusyInput(1000, 14, nil), true},
		{"isl_or_load_signal_none_falls_back_to_isl_only large", withThreshold(ConditionalDisaggISLOrLoad, true), condBusyInput(100_000, 0, nil), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := condDecide(t, tc.cfg, tc.in)
			if d.Bypass != tc.bypass {
				t.Errorf("bypass = %v, want %v: %s", d.Bypass, tc.bypass, d.Explanation)
			}
		})
	}
}

func TestConditionalPrefillBusySignals(t *testing.T) {
	cfg := condCfg(true, ConditionalDisaggPrefillLoad, 2048, 0.7)
	// No dedicated threshold and no queue threshold: unknown, never busy.
	d := condDecide(t, cfg, condBusyInput(100_000, 0, func() *bool { b := true; return &b }()))
	if d.Bypass || d.PrefillLoad.Signal != "threshold-unset" || d.PrefillLoad.Busy != nil || NeedsPrefillPeek(cfg) {
		t.Errorf("unset threshold: %+v", d.PrefillLoad)
	}
	// Falls back to router_queue_threshold.
	q := 0.8
	cfg.RouterQueueThreshold = &q
	if !NeedsPrefillPeek(cfg) {
		t.Error("queue threshold fallback not used")
	}
	in := condFromBlocks(100_000, 0, 64)
	in.Prefill = PrefillPeek{Ran: true, ActivePrefillTokens: 801, MaxNumBatchedTokens: condU64(1000)}
	d = condDecide(t, cfg, in)
	if !d.Bypass || d.PrefillLoad.Check == nil || d.PrefillLoad.Check.Right != 800 || *d.PrefillLoad.Threshold != 0.8 {
		t.Errorf("fallback threshold: %+v", d.PrefillLoad)
	}
	// Exactly at the line is not busy (strict >).
	in.Prefill.ActivePrefillTokens = 800
	if d = condDecide(t, cfg, in); d.Bypass {
		t.Error("at-threshold counted as busy")
	}
	// Unknown capacity defaults to 10,000,000.
	in.Prefill = PrefillPeek{Ran: true, ActivePrefillTokens: 8_000_001}
	if d = condDecide(t, cfg, in); !d.Bypass || d.PrefillLoad.Capacity != 10_000_000 {
		t.Errorf("default capacity: %+v", d.PrefillLoad)
	}
	// A queue rejection counts as busy.
	in.Prefill = PrefillPeek{Ran: true, QueueRejected: true}
	if d = condDecide(t, cfg, in); !d.Bypass || d.PrefillLoad.Signal != "queue-rejected" {
		t.Errorf("queue rejected: %+v", d.PrefillLoad)
	}
}

func TestConditionalDecodeGate(t *testing.T) {
	// decode_gate_matches_the_frontend_rules, driven through the signals.
	th := 0.9
	base := condCfg(true, ConditionalDisaggISLBounding, 2048, 0.7)
	gated := base
	gated.ConditionalDisaggDecodeBusyThreshold = &th
	small := condFromBlocks(1000, 14, 64) // policy says bypass
	large := condFromBlocks(100_000, 0, 64)
	with := func(in ConditionalInput, potential uint64, total *uint64) ConditionalInput {
		in.DecodePotentialBlocks, in.DecodeTotalKvBlocks = potential, total
		return in
	}
	cases := []struct {
		name     string
		cfg      KvRouterConfig
		in       ConditionalInput
		decision string
		bypass   bool
	}{
		{"gate on, decode not busy", gated, with(small, 90, condU64(100)), GateAllowedNotBusy, true},
		{"gate on, at the line is not busy", gated, with(small, 90, condU64(100)), GateAllowedNotBusy, true},
		{"gate on, decode busy", gated, with(small, 91, condU64(100)), GateDeniedDecodeBusy, false},
		{"gate on, decode busy unknown", gated, with(small, 10, nil), GateDeniedBusyUnknown, false},
		{"gate off, unknown", base, with(small, 10, nil), GateAllowedGateOff, true},
		{"gate off, busy", base, with(small, 1000, condU64(100)), GateAllowedGateOff, true},
		{"policy declines", gated, with(large, 0, condU64(100)), GateDeclinedByPolicy, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := condDecide(t, tc.cfg, tc.in)
			if d.DecodeGate.Decision != tc.decision || d.Bypass != tc.bypass {
				t.Errorf("gate %q bypass %v, want %q %v: %s", d.DecodeGate.Decision, d.Bypass, tc.decision, tc.bypass, d.Explanation)
			}
			if tc.decision == GateDeclinedByPolicy && d.DecodeGate.Busy != nil {
				t.Error("decode busy computed although the policy declined")
			}
		})
	}
	if b := ConditionalDecodeBusy(90, condU64(100), 0.8); b == nil || !*b {
		t.Error("signals_report_load_thresholds_only_when_known: 90 > 80")
	}
	if b := ConditionalDecodeBusy(90, condU64(100), 0.95); b == nil || *b {
		t.Error("90 > 95 reported busy")
	}
	if ConditionalDecodeBusy(90, nil, 0.5) != nil {
		t.Error("unknown capacity not reported as unknown")
	}
}

func TestConditionalUnknownPolicy(t *testing.T) {
	_, err := DecideConditional(condCfg(true, "fallback", 2048, 0.7), ConditionalInput{})
	if !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("got %v", err)
	}
}
