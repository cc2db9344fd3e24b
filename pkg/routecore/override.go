package routecore

import (
	"errors"
	"fmt"
	"math"
)

// ErrInvalidOverride is wrapped by every per-request override validation error.
var ErrInvalidOverride = errors.New("invalid router config override")

// RouterConfigOverride mirrors Dynamo's per-request RouterConfigOverride
// (scheduling/config.rs): each non-nil field replaces the router's configured value
// for one request. The disaggregated decode path uses it to force credit 0, no KV
// reuse and no prefill tracking.
//
// OverlapScoreWeight is the deprecated knob; Resolve maps it the way
// apply_deprecated_overlap_score_weight_override_option does (prefill_load_scale = w,
// and overlap_score_credit = 0 when w == 0), after which it is cleared.
type RouterConfigOverride struct {
	OverlapScoreCredit    *float64 `json:"overlap_score_credit,omitempty"`
	PrefillLoadScale      *float64 `json:"prefill_load_scale,omitempty"`
	RouterTemperature     *float64 `json:"router_temperature,omitempty"`
	AssumeKvReuse         *bool    `json:"assume_kv_reuse,omitempty"`
	TrackPrefillTokens    *bool    `json:"track_prefill_tokens,omitempty"`
	SharedCacheMultiplier *float64 `json:"shared_cache_multiplier,omitempty"`
	// OverlapScoreWeight is the legacy overlap_score_weight (deprecated).
	OverlapScoreWeight *float64 `json:"overlap_score_weight,omitempty"`
}

// IsEmpty reports whether the override changes nothing.
func (o RouterConfigOverride) IsEmpty() bool {
	return o.OverlapScoreCredit == nil && o.PrefillLoadScale == nil && o.RouterTemperature == nil &&
		o.AssumeKvReuse == nil && o.TrackPrefillTokens == nil && o.SharedCacheMultiplier == nil &&
		o.OverlapScoreWeight == nil
}

// Normalized applies the legacy overlap_score_weight mapping (the serde TryFrom in
// Dynamo) and returns an override without OverlapScoreWeight. The legacy weight wins
// over an explicit prefill_load_scale in the same override, as in Dynamo.
func (o RouterConfigOverride) Normalized() RouterConfigOverride {
	if o.OverlapScoreWeight == nil {
		return o
	}
	w := *o.OverlapScoreWeight
	o.PrefillLoadScale = &w
	if w == 0 {
		zero := 0.0
		o.OverlapScoreCredit = &zero
	}
	o.OverlapScoreWeight = nil
	return o
}

// Validate applies RouterConfigOverride::validate after the legacy mapping: credit
// finite and >= 0 (and within the profile's range), scale >= 0, temperature >= 0,
// shared multiplier in [0,1]. Unlike Dynamo it also rejects a non-finite scale or
// temperature, which would turn costs into NaN.
func (o RouterConfigOverride) Validate(p Profile) error {
	b, err := p.Behavior()
	if err != nil {
		return err
	}
	n := o.Normalized()
	if v := n.OverlapScoreCredit; v != nil {
		if err := b.validateCredit(*v); err != nil {
			return fmt.Errorf("%w: %w", ErrInvalidOverride, err)
		}
	}
	check := func(name string, v *float64, lo, hi float64) error {
		if v == nil {
			return nil
		}
		if math.IsNaN(*v) || math.IsInf(*v, 0) || *v < lo || *v > hi {
			if math.IsInf(hi, 1) {
				return fmt.Errorf("%w: %s must be a finite number greater than or equal to %v, got %v", ErrInvalidOverride, name, lo, *v)
			}
			return fmt.Errorf("%w: %s must be between %v and %v, got %v", ErrInvalidOverride, name, lo, hi, *v)
		}
		return nil
	}
	if err := check("prefill_load_scale", n.PrefillLoadScale, 0, math.Inf(1)); err != nil {
		return err
	}
	if err := check("router_temperature", n.RouterTemperature, 0, math.Inf(1)); err != nil {
		return err
	}
	return check("shared_cache_multiplier", n.SharedCacheMultiplier, 0, 1)
}

// ResolvedWeights are the values one decision actually uses, after the per-request
// override was laid over the router config (selection_weights in default.rs and
// KvRouterConfig::track_prefill_tokens / assume_kv_reuse).
type ResolvedWeights struct {
	OverlapScoreCredit        float64 `json:"overlapScoreCredit"`
	OverlapScoreCreditDecay   float64 `json:"overlapScoreCreditDecay"`
	PrefillLoadScale          float64 `json:"prefillLoadScale"`
	SharedCacheMultiplier     float64 `json:"sharedCacheMultiplier"`
	HostCacheHitWeight        float64 `json:"hostCacheHitWeight"`
	DiskCacheHitWeight        float64 `json:"diskCacheHitWeight"`
	DecodeActiveRequestWeight float64 `json:"decodeActiveRequestWeight"`
	Temperature               float64 `json:"temperature"`
	TrackPrefillTokens        bool    `json:"trackPrefillTokens"`
	AssumeKvReuse             bool    `json:"assumeKvReuse"`
}

// Resolve lays the override over the config. Decay, host, disk and request weights
// have no per-request override in Dynamo and always come from the config.
func (o RouterConfigOverride) Resolve(c KvRouterConfig) ResolvedWeights {
	n := o.Normalized()
	w := ResolvedWeights{
		OverlapScoreCredit:        c.OverlapScoreCredit,
		OverlapScoreCreditDecay:   c.OverlapScoreCreditDecay,
		PrefillLoadScale:          c.PrefillLoadScale,
		SharedCacheMultiplier:     c.SharedCacheMultiplier,
		HostCacheHitWeight:        c.HostCacheHitWeight,
		DiskCacheHitWeight:        c.DiskCacheHitWeight,
		DecodeActiveRequestWeight: c.DecodeActiveRequestWeight,
		Temperature:               c.RouterTemperature,
		TrackPrefillTokens:        c.RouterTrackPrefillTokens,
		AssumeKvReuse:             c.RouterAssumeKvReuse,
	}
	if n.OverlapScoreCredit != nil {
		w.OverlapScoreCredit = *n.OverlapScoreCredit
	}
	if n.PrefillLoadScale != nil {
		w.PrefillLoadScale = *n.PrefillLoadScale
	}
	if n.SharedCacheMultiplier != nil {
		w.SharedCacheMultiplier = *n.SharedCacheMultiplier
	}
	if n.RouterTemperature != nil {
		w.Temperature = *n.RouterTemperature
	}
	if n.TrackPrefillTokens != nil {
		w.TrackPrefillTokens = *n.TrackPrefillTokens
	}
	if n.AssumeKvReuse != nil {
		w.AssumeKvReuse = *n.AssumeKvReuse
	}
	return w
}

// ApplyLegacyOverlapScoreWeight applies the deprecated overlap_score_weight to a
// config (apply_deprecated_overlap_score_weight_override): prefill_load_scale = w,
// and overlap_score_credit = 0 when w == 0.
func (c *KvRouterConfig) ApplyLegacyOverlapScoreWeight(w float64) {
	c.PrefillLoadScale = w
	if w == 0 {
		c.OverlapScoreCredit = 0
	}
}
