package routecore

import (
	"fmt"
	"strings"
)

// This file ports Dynamo's conditional disaggregation decision: the policies of
// lib/kv-router/src/conditional_disagg.rs (IslBoundingPolicy, PrefillLoadPolicy,
// IslOrLoadPolicy) and the decode gate and busy signals of the frontend's
// prefill_router/conditional_bypass.rs
// (select_decode_worker_for_conditional_disagg, peek_prefill_chosen_worker_busy,
// decode_gate_allows_bypass).

// conditionalDefaultMaxBatchedTokens is DEFAULT_MAX_BATCHED_TOKENS, the prefill
// token capacity the router assumes when a worker publishes no
// max_num_batched_tokens; it effectively makes such a worker never busy.
const conditionalDefaultMaxBatchedTokens = 10_000_000

// Decode-gate decision codes: the values Dynamo logs as decode_gate_decision in
// select_decode_worker_for_conditional_disagg, plus GateConditionalOff for a
// decision made while conditional disaggregation is disabled.
const (
	GateDeclinedByPolicy  = "bypass_declined_by_policy"
	GateAllowedGateOff    = "bypass_allowed_decode_gate_disabled"
	GateDeniedBusyUnknown = "bypass_denied_decode_busy_unknown"
	GateDeniedDecodeBusy  = "bypass_denied_decode_busy"
	GateAllowedNotBusy    = "bypass_allowed_decode_not_busy"
	GateConditionalOff    = "conditional_disagg_disabled"
)

// Values of PrefillLoadEvidence.Signal.
const (
	prefillSignalUnset    = "threshold-unset"
	prefillSignalNoPeek   = "peek-unavailable"
	prefillSignalRejected = "queue-rejected"
	prefillSignalMeasured = "measured"
)

// PrefillPeek is what a no-admission peek of the prefill router reported for the
// prefill worker it would pick (peek_prefill_chosen_worker_busy). Ran is false
// when the peek failed or was not run, which Dynamo treats as "busy unknown".
type PrefillPeek struct {
	Ran bool `json:"ran"`
	// QueueRejected reports that the prefill router would have queued or rejected
	// the request; Dynamo counts that as busy.
	QueueRejected bool `json:"queueRejected,omitempty"`
	// Worker is the prefill candidate the peek picked and ActivePrefillTokens
	// its router-tracked active prefill tokens.
	Worker              WorkerWithDpRank `json:"worker"`
	ActivePrefillTokens uint64           `json:"activePrefillTokens"`
	// MaxNumBatchedTokens is the worker's max_num_batched_tokens; nil means the
	// router's default of 10,000,000.
	MaxNumBatchedTokens *uint64 `json:"maxNumBatchedTokens,omitempty"`
}

// ConditionalInput gathers the signals of one conditional-disaggregation
// decision: the prompt, the decode worker a no-admission peek of the decode
// router would pick with its cached tokens and projected load, and the prefill
// peek (read only by the prefill_load and isl_or_load policies).
type ConditionalInput struct {
	PromptTokens uint64 `json:"promptTokens"`
	// DecodeWorker is the decode worker the peek picked.
	DecodeWorker WorkerWithDpRank `json:"decodeWorker"`
	// DecodeCachedTokens is the peek's effective (weighted) cached tokens on it.
	DecodeCachedTokens uint64 `json:"decodeCachedTokens"`
	// DecodePotentialBlocks is its projected decode load including this request
	// (potential_decode_blocks).
	DecodePotentialBlocks uint64 `json:"decodePotentialBlocks"`
	// DecodeTotalKvBlocks is its total_kv_blocks; nil makes decode busy unknown.
	DecodeTotalKvBlocks *uint64 `json:"decodeTotalKvBlocks,omitempty"`
	// Prefill is the prefill peek.
	Prefill PrefillPeek `json:"prefill"`
}

// ConditionalCheck is one comparison evaluated by the decision, with both sides
// as the router computed them (integers widened to float64 as Rust's `as f64`).
type ConditionalCheck struct {
	Left  float64 `json:"left"`
	Op    string  `json:"op"`
	Right float64 `json:"right"`
	Holds bool    `json:"holds"`
	Text  string  `json:"text"`
}

func condCheck(left float64, op string, right float64, holds bool, format string, args ...any) ConditionalCheck {
	return ConditionalCheck{Left: left, Op: op, Right: right, Holds: holds, Text: fmt.Sprintf(format, args...)}
}

// IslBoundingEvidence records the isl_bounding policy: bypass iff net-new tokens
// are strictly below the absolute threshold and net_new/max(prompt,1) strictly
// below the ratio threshold.
type IslBoundingEvidence struct {
	EffIslThreshold      uint64           `json:"effIslThreshold"`
	RatioThreshold       float64          `json:"ratioThreshold"`
	Ratio                float64          `json:"ratio"`
	NetNewBelowThreshold ConditionalCheck `json:"netNewBelowThreshold"`
	RatioBelowThreshold  ConditionalCheck `json:"ratioBelowThreshold"`
	Bypass               bool             `json:"bypass"`
}

// PrefillLoadEvidence records the prefill_load policy: bypass iff the prefill
// worker the router would pick is busy. Signal says where the busy value came
// from: "threshold-unset" and "peek-unavailable" leave it unknown (not busy),
// "queue-rejected" means busy, "measured" means Check decided it.
type PrefillLoadEvidence struct {
	Threshold *float64          `json:"threshold,omitempty"`
	Signal    string            `json:"signal"`
	Busy      *bool             `json:"busy,omitempty"`
	Capacity  uint64            `json:"capacity,omitempty"`
	Check     *ConditionalCheck `json:"check,omitempty"`
	Bypass    bool              `json:"bypass"`
}

// DecodeGateEvidence records the decode gate: with
// conditional_disagg_decode_busy_threshold set, a bypass stands only when the
// peeked decode worker is known not busy. Decision is one of the Gate* codes.
type DecodeGateEvidence struct {
	Configured bool              `json:"configured"`
	Threshold  *float64          `json:"threshold,omitempty"`
	Busy       *bool             `json:"busy,omitempty"`
	Check      *ConditionalCheck `json:"check,omitempty"`
	Decision   string            `json:"decision"`
}

// ConditionalDecision is the evidence of one conditional-disaggregation
// decision: the inputs, every comparison, the policy verdict, the decode gate
// and whether remote prefill is bypassed.
type ConditionalDecision struct {
	// Enabled and Policy echo conditional_disagg_enabled and
	// conditional_disagg_policy; Input is the evaluated signals.
	Enabled bool                    `json:"enabled"`
	Policy  ConditionalDisaggPolicy `json:"policy,omitempty"`
	Input   ConditionalInput        `json:"input"`
	// NetNewTokens is max(0, prompt − decode cached tokens).
	NetNewTokens uint64 `json:"netNewTokens"`
	// IslBounding and PrefillLoad are the evidence of the policies that ran;
	// PolicySaysBypass is their OR; DecodeGate is the gate applied after it.
	IslBounding      *IslBoundingEvidence `json:"islBounding,omitempty"`
	PrefillLoad      *PrefillLoadEvidence `json:"prefillLoad,omitempty"`
	PolicySaysBypass bool                 `json:"policySaysBypass"`
	DecodeGate       DecodeGateEvidence   `json:"decodeGate"`
	// Bypass reports that remote prefill is skipped and the request runs prefill
	// and decode on Input.DecodeWorker.
	Bypass      bool   `json:"bypass"`
	Explanation string `json:"explanation"`
}

// NetNewTokens mirrors ConditionalDisaggDecisionInput::net_new_tokens: the prompt
// tokens not covered by the decode worker's cache, max(0, prompt − cached).
func NetNewTokens(promptTokens, cachedTokens uint64) uint64 {
	return promptTokens - min(cachedTokens, promptTokens)
}

// ConditionalPrefillBusy mirrors AdvisoryWorkerLoad::prefill_load_exceeds: a
// prefill worker is busy iff active_prefill_tokens > threshold ·
// max_num_batched_tokens, with 10,000,000 standing in for an unknown capacity.
// It returns the verdict and the capacity used.
func ConditionalPrefillBusy(activePrefillTokens uint64, maxNumBatchedTokens *uint64, threshold float64) (busy bool, capacity uint64) {
	capacity = conditionalDefaultMaxBatchedTokens
	if maxNumBatchedTokens != nil {
		capacity = *maxNumBatchedTokens
	}
	return float64(activePrefillTokens) > threshold*float64(capacity), capacity
}

// ConditionalDecodeBusy mirrors decode_load_exceeds: a decode worker is busy iff
// its projected decode blocks (including this request) exceed threshold ·
// total_kv_blocks; it returns nil (unknown) when total_kv_blocks is unknown.
func ConditionalDecodeBusy(potentialDecodeBlocks uint64, totalKvBlocks *uint64, threshold float64) *bool {
	if totalKvBlocks == nil {
		return nil
	}
	b := float64(potentialDecodeBlocks) > threshold*float64(*totalKvBlocks)
	return &b
}

// NeedsPrefillPeek mirrors needs_prefill_worker_busy plus the threshold check in
// peek_prefill_chosen_worker_busy: whether the decision reads the prefill peek
// at all (an enabled prefill_load or isl_or_load policy with a resolved
// prefill-busy threshold).
func NeedsPrefillPeek(cfg KvRouterConfig) bool {
	if !cfg.ConditionalDisaggEnabled {
		return false
	}
	switch cfg.ConditionalDisaggPolicy {
	case ConditionalDisaggPrefillLoad, ConditionalDisaggISLOrLoad:
		return cfg.EffectiveConditionalDisaggPrefillBusyThreshold() != nil
	}
	return false
}

// DecideConditional mirrors the decision half of
// select_decode_worker_for_conditional_disagg: it evaluates the configured
// policy (isl_bounding, prefill_load or isl_or_load) on the peeked signals, then
// applies the decode gate (decode_gate_allows_bypass). A disabled configuration
// never bypasses. The prefill-busy threshold is the dedicated
// conditional_disagg_prefill_busy_threshold, else router_queue_threshold; the
// decode gate uses conditional_disagg_decode_busy_threshold only. An unknown
// policy name is a configuration error (ErrInvalidConfig).
func DecideConditional(cfg KvRouterConfig, in ConditionalInput) (ConditionalDecision, error) {
	d := ConditionalDecision{
		Enabled:      cfg.ConditionalDisaggEnabled,
		Policy:       cfg.ConditionalDisaggPolicy,
		Input:        in,
		NetNewTokens: NetNewTokens(in.PromptTokens, in.DecodeCachedTokens),
	}
	var useIsl, useLoad bool
	switch cfg.ConditionalDisaggPolicy {
	case ConditionalDisaggISLBounding:
		useIsl = true
	case ConditionalDisaggPrefillLoad:
		useLoad = true
	case ConditionalDisaggISLOrLoad:
		useIsl, useLoad = true, true
	default:
		return d, configErrorf("unknown conditional_disagg_policy %q: expected \"isl_bounding\", \"prefill_load\" or \"isl_or_load\"", cfg.ConditionalDisaggPolicy)
	}
	if !d.Enabled {
		d.DecodeGate.Decision = GateConditionalOff
		d.Explanation = "conditional disaggregation is disabled (conditional_disagg_enabled=false), so every request takes remote prefill"
		return d, nil
	}

	if useIsl {
		e := &IslBoundingEvidence{
			EffIslThreshold: cfg.ConditionalDisaggEffISLThreshold,
			RatioThreshold:  cfg.ConditionalDisaggEffISLRatioThreshold,
			Ratio:           float64(d.NetNewTokens) / float64(max(in.PromptTokens, 1)),
		}
		below := d.NetNewTokens < e.EffIslThreshold
		e.NetNewBelowThreshold = condCheck(float64(d.NetNewTokens), "<", float64(e.EffIslThreshold), below,
			"net-new tokens %d (prompt %d − cached %d) %s eff_isl_threshold %d",
			d.NetNewTokens, in.PromptTokens, min(in.DecodeCachedTokens, in.PromptTokens), condLtWord(below), e.EffIslThreshold)
		ratioBelow := e.Ratio < e.RatioThreshold
		e.RatioBelowThreshold = condCheck(e.Ratio, "<", e.RatioThreshold, ratioBelow,
			"net-new ratio %d/%d = %.4g %s eff_isl_ratio_threshold %g",
			d.NetNewTokens, max(in.PromptTokens, 1), e.Ratio, condLtWord(ratioBelow), e.RatioThreshold)
		e.Bypass = below && ratioBelow
		d.IslBounding = e
	}
	if useLoad {
		e := &PrefillLoadEvidence{Threshold: cfg.EffectiveConditionalDisaggPrefillBusyThreshold()}
		switch {
		case e.Threshold == nil:
			e.Signal = prefillSignalUnset
		case !in.Prefill.Ran:
			e.Signal = prefillSignalNoPeek
		case in.Prefill.QueueRejected:
			e.Signal = prefillSignalRejected
			busy := true
			e.Busy = &busy
		default:
			e.Signal = prefillSignalMeasured
			busy, capacity := ConditionalPrefillBusy(in.Prefill.ActivePrefillTokens, in.Prefill.MaxNumBatchedTokens, *e.Threshold)
			e.Busy, e.Capacity = &busy, capacity
			c := condCheck(float64(in.Prefill.ActivePrefillTokens), ">", *e.Threshold*float64(capacity), busy,
				"prefill worker %s active prefill tokens %d %s %g × max_num_batched_tokens %d = %g",
				in.Prefill.Worker, in.Prefill.ActivePrefillTokens, condGtWord(busy), *e.Threshold, capacity, *e.Threshold*float64(capacity))
			e.Check = &c
		}
		e.Bypass = e.Busy != nil && *e.Busy
		d.PrefillLoad = e
	}
	d.PolicySaysBypass = (d.IslBounding != nil && d.IslBounding.Bypass) || (d.PrefillLoad != nil && d.PrefillLoad.Bypass)

	g := &d.DecodeGate
	g.Threshold = cfg.ConditionalDisaggDecodeBusyThreshold
	g.Configured = g.Threshold != nil
	if d.PolicySaysBypass && g.Configured {
		g.Busy = ConditionalDecodeBusy(in.DecodePotentialBlocks, in.DecodeTotalKvBlocks, *g.Threshold)
		if g.Busy != nil {
			limit := *g.Threshold * float64(*in.DecodeTotalKvBlocks)
			c := condCheck(float64(in.DecodePotentialBlocks), ">", limit, *g.Busy,
				"decode worker %s projected decode blocks %d %s %g × total_kv_blocks %d = %g",
				in.DecodeWorker, in.DecodePotentialBlocks, condGtWord(*g.Busy), *g.Threshold, *in.DecodeTotalKvBlocks, limit)
			g.Check = &c
		}
	}
	switch {
	case !d.PolicySaysBypass:
		g.Decision = GateDeclinedByPolicy
	case !g.Configured:
		g.Decision, d.Bypass = GateAllowedGateOff, true
	case g.Busy == nil:
		g.Decision = GateDeniedBusyUnknown
	case *g.Busy:
		g.Decision = GateDeniedDecodeBusy
	default:
		g.Decision, d.Bypass = GateAllowedNotBusy, true
	}
	d.Explanation = condExplain(d)
	return d, nil
}

func condLtWord(holds bool) string {
	if holds {
		return "is below"
	}
	return "is not below"
}

func condGtWord(holds bool) string {
	if holds {
		return "exceeds"
	}
	return "does not exceed"
}

func condExplain(d ConditionalDecision) string {
	var why []string
	if e := d.IslBounding; e != nil {
		if e.Bypass {
			why = append(why, fmt.Sprintf("isl_bounding: %d net-new tokens (ratio %.4g) are under %d and %g", d.NetNewTokens, e.Ratio, e.EffIslThreshold, e.RatioThreshold))
		} else {
			failed := e.NetNewBelowThreshold.Text
			if e.NetNewBelowThreshold.Holds {
				failed = e.RatioBelowThreshold.Text
			}
			why = append(why, "isl_bounding declines: "+failed)
		}
	}
	if e := d.PrefillLoad; e != nil {
		switch e.Signal {
		case prefillSignalUnset:
			why = append(why, "prefill_load: no prefill-busy threshold (set conditional_disagg_prefill_busy_threshold or router_queue_threshold), so prefill counts as not busy")
		case prefillSignalNoPeek:
			why = append(why, "prefill_load: the prefill peek gave no answer, so prefill counts as not busy")
		case prefillSignalRejected:
			why = append(why, "prefill_load: the prefill router would queue the request, which counts as busy")
		default:
			why = append(why, "prefill_load: "+e.Check.Text)
		}
	}
	verdict := "remote prefill"
	if d.Bypass {
		verdict = fmt.Sprintf("bypass remote prefill and run prefill on decode worker %s", d.Input.DecodeWorker)
	}
	gate := ""
	switch d.DecodeGate.Decision {
	case GateDeniedBusyUnknown:
		gate = "; decode gate denies the bypass because the decode worker's total_kv_blocks is unknown"
	case GateDeniedDecodeBusy, GateAllowedNotBusy:
		gate = "; decode gate: " + d.DecodeGate.Check.Text
	}
	return verdict + ": " + strings.Join(why, "; ") + gate
}
