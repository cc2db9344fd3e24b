package routecore

import "fmt"

// Conditional prefill (conditional_prefill_* in a KvRouterConfig; Dynamo's
// lib/kv-router/src/conditional_prefill.rs) is the policy family some Dynamo
// builds use instead of conditional_disagg_*: it decides per request whether
// the cache-hot decode worker prefills locally (bypass) instead of a remote
// prefill worker. TokenCap is computed here from published state; the
// Regression kinds are computed as far as their fast path goes, and their slow
// path (an RPC to a cost-evaluation sidecar) is reported as not computable.

// ConditionalPrefillPolicy names a ConditionalPrefillPolicyKind.
type ConditionalPrefillPolicy string

// The kinds upstream accepts (ConditionalPrefillPolicyKind::as_str).
const (
	CondPrefillTokenCap            ConditionalPrefillPolicy = "token_cap"
	CondPrefillThresholdRegression ConditionalPrefillPolicy = "threshold_regression"
	CondPrefillThresholdOnly       ConditionalPrefillPolicy = "threshold_only"
	CondPrefillRegressionOnly      ConditionalPrefillPolicy = "regression_only"
	CondPrefillAlwaysBypass        ConditionalPrefillPolicy = "always_bypass"
	CondPrefillRandomBypass        ConditionalPrefillPolicy = "random_bypass"
)

// ConditionalPrefillConfig is the conditional_prefill_* subset of a router
// configuration, with upstream's defaults: disabled, token_cap, bypass at or
// below 5000 net-new tokens, Regression's large-prompt cutoff 16384, roomy at
// available ratio >= 0.5 and queued blocks <= 0.
type ConditionalPrefillConfig struct {
	Enabled bool                     `json:"enabled"`
	Policy  ConditionalPrefillPolicy `json:"policy"`
	// BypassBelowTokens is conditional_prefill_bypass_below_tokens (older
	// builds: conditional_prefill_max_new_tokens).
	BypassBelowTokens uint64 `json:"bypassBelowTokens"`
	// DisaggAboveTokens is conditional_prefill_disagg_above_tokens (older:
	// conditional_prefill_regression_large_prompt_threshold_tokens).
	DisaggAboveTokens   uint64  `json:"disaggAboveTokens"`
	RoomyAvailableRatio float64 `json:"roomyAvailableRatio"`
	RoomyQueuedBlocks   uint64  `json:"roomyQueuedBlocks"`
	// Present is true when any conditional_prefill_* field was published.
	Present bool `json:"-"`
}

// DefaultConditionalPrefillConfig returns upstream's defaults.
func DefaultConditionalPrefillConfig() ConditionalPrefillConfig {
	return ConditionalPrefillConfig{Policy: CondPrefillTokenCap, BypassBelowTokens: 5000, DisaggAboveTokens: 16384, RoomyAvailableRatio: 0.5}
}

// DecodeConditionalPrefillJSON reads the conditional_prefill_* fields of a
// router configuration (model-card wrapper or bare KvRouterConfig object).
func DecodeConditionalPrefillJSON(data []byte) (ConditionalPrefillConfig, error) {
	c := DefaultConditionalPrefillConfig()
	top, err := cfgDecodeObject(data, "router config")
	if err != nil {
		return c, err
	}
	obj := top
	if raw, ok := top["kv_router_config"]; ok {
		if obj, err = cfgDecodeObject(raw, "kv_router_config"); err != nil {
			obj = nil // null: no kv_router_config fields
		}
	}
	for _, k := range cfgSortedKeys(obj) {
		f := cfgJSONField{name: k, raw: obj[k]}
		var s string
		switch k {
		case "conditional_prefill_enabled":
			err = f.boolean(&c.Enabled)
		case "conditional_prefill_policy":
			err = f.str(&s)
			c.Policy = ConditionalPrefillPolicy(s)
		case "conditional_prefill_bypass_below_tokens", "conditional_prefill_max_new_tokens":
			err = f.uint(&c.BypassBelowTokens, 64)
		case "conditional_prefill_disagg_above_tokens", "conditional_prefill_regression_large_prompt_threshold_tokens":
			err = f.uint(&c.DisaggAboveTokens, 64)
		case "conditional_prefill_regression_roomy_available_ratio":
			err = f.float(&c.RoomyAvailableRatio)
		case "conditional_prefill_regression_roomy_queued_blocks":
			err = f.uint(&c.RoomyQueuedBlocks, 32)
		default:
			continue
		}
		if err != nil {
			return c, err
		}
		c.Present = true
	}
	switch c.Policy {
	case CondPrefillTokenCap, CondPrefillThresholdRegression, CondPrefillThresholdOnly, CondPrefillRegressionOnly, CondPrefillAlwaysBypass, CondPrefillRandomBypass:
	default:
		return c, configErrorf("unknown conditional_prefill_policy %q", c.Policy)
	}
	return c, nil
}

// CondPrefillWorker is a worker's state as the Regression fast path reads it:
// projected active blocks, advertised total_kv_blocks and pending prefill in
// blocks; nil when unknown (then the worker is not roomy).
type CondPrefillWorker struct {
	LoadBlocks   *uint64
	MaxBlocks    *uint64
	QueuedBlocks *uint64
}

// ConditionalPrefillInput mirrors ConditionalPrefillDecisionInput.
type ConditionalPrefillInput struct {
	PromptTokens uint64
	BlockSize    uint64
	// DecodeOverlapBlocks is the device-prefix overlap on the cache-hot decode worker.
	DecodeOverlapBlocks uint64
	Decode, Prefill     CondPrefillWorker
}

// NetNewTokens is prompt tokens minus the decode-side device hit (net_new_tokens).
func (in ConditionalPrefillInput) NetNewTokens() uint64 {
	hit := in.DecodeOverlapBlocks * in.BlockSize
	if in.BlockSize != 0 && hit/in.BlockSize != in.DecodeOverlapBlocks {
		hit = ^uint64(0)
	}
	return in.PromptTokens - min(in.PromptTokens, hit)
}

// ConditionalPrefillDecision is a policy's answer. Known is false when the
// answer depends on what a dry run cannot see (the Regression slow path's
// sidecar, random_bypass's draw); Bypass then is upstream's answer when that
// part is unavailable, if any (conservative disaggregation).
type ConditionalPrefillDecision struct {
	Policy      ConditionalPrefillPolicy `json:"policy"`
	Known       bool                     `json:"known"`
	Bypass      bool                     `json:"bypass"`
	Explanation string                   `json:"explanation"`
}

// CondPrefillRoomy mirrors worker_is_roomy: all three signals known, capacity
// non-zero, (max − load)/max >= ratio and queued <= the queued threshold.
func CondPrefillRoomy(w CondPrefillWorker, ratio float64, queued uint64) bool {
	if w.LoadBlocks == nil || w.MaxBlocks == nil || w.QueuedBlocks == nil || *w.MaxBlocks == 0 {
		return false
	}
	avail := float64(*w.MaxBlocks - min(*w.MaxBlocks, *w.LoadBlocks))
	return avail/float64(*w.MaxBlocks) >= ratio && *w.QueuedBlocks <= queued
}

// DecideConditionalPrefill mirrors should_bypass_remote_prefill of the policy
// the configuration selects.
func DecideConditionalPrefill(c ConditionalPrefillConfig, in ConditionalPrefillInput) ConditionalPrefillDecision {
	d := ConditionalPrefillDecision{Policy: c.Policy, Known: true}
	if !c.Enabled {
		d.Explanation = "conditional prefill is off"
		return d
	}
	nn := in.NetNewTokens()
	switch c.Policy {
	case CondPrefillTokenCap:
		d.Bypass = nn <= c.BypassBelowTokens
		d.Explanation = fmt.Sprintf("token_cap: %d net-new tokens (%d prompt − %d cached on the cache-hot decode worker) %s %d",
			nn, in.PromptTokens, in.PromptTokens-nn, map[bool]string{true: "<=", false: ">"}[d.Bypass], c.BypassBelowTokens)
	case CondPrefillAlwaysBypass:
		d.Bypass, d.Explanation = true, "always_bypass (a test policy): every request bypasses remote prefill"
	case CondPrefillRandomBypass:
		d.Known, d.Explanation = false, "random_bypass (a test policy): each request bypasses with probability 0.5"
	default:
		fast := c.Policy != CondPrefillRegressionOnly
		slow := c.Policy != CondPrefillThresholdOnly
		if fast {
			if CondPrefillRoomy(in.Prefill, c.RoomyAvailableRatio, c.RoomyQueuedBlocks) {
				d.Explanation = fmt.Sprintf("%s fast path: the chosen prefill worker is roomy, so remote prefill", c.Policy)
				return d
			}
			if nn > c.DisaggAboveTokens {
				d.Explanation = fmt.Sprintf("%s fast path: %d net-new tokens > %d, so remote prefill", c.Policy, nn, c.DisaggAboveTokens)
				return d
			}
			if CondPrefillRoomy(in.Decode, c.RoomyAvailableRatio, c.RoomyQueuedBlocks) {
				d.Bypass = true
				d.Explanation = fmt.Sprintf("%s fast path: the cache-hot decode worker is roomy, so it prefills locally", c.Policy)
				return d
			}
		}
		if !slow {
			d.Explanation = fmt.Sprintf("%s: the fast path did not decide, so remote prefill (no slow path)", c.Policy)
			return d
		}
		d.Known = false
		d.Explanation = fmt.Sprintf("%s: the decision goes to the cost-evaluation sidecar (regression TTFT models, not visible); remote prefill if it is unreachable or cold", c.Policy)
	}
	return d
}
