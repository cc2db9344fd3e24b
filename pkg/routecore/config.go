package routecore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// ErrInvalidConfig is wrapped by every configuration validation error, so callers
// can tell a bad router configuration from a bad request with errors.Is.
var ErrInvalidConfig = errors.New("invalid router config")

// QueuePolicy is router_queue_policy: how the router orders requests it holds back
// while every worker is above router_queue_threshold.
type QueuePolicy string

// The queue policies Dynamo accepts (RouterQueuePolicy).
const (
	QueuePolicyFCFS QueuePolicy = "fcfs"
	QueuePolicyLCFS QueuePolicy = "lcfs"
	QueuePolicyWSPT QueuePolicy = "wspt"
)

// SharedCacheType is shared_cache_type: which external shared KV cache (if any) the
// router queries for hits beyond a worker's device prefix.
type SharedCacheType string

// The shared cache types Dynamo accepts (SharedCacheType).
const (
	SharedCacheNone    SharedCacheType = "none"
	SharedCacheHiCache SharedCacheType = "hicache"
)

// PrefillLoadModel is router_prefill_load_model: how the router models the decay
// of prompt-side load over time. It does not change the cost formula itself.
type PrefillLoadModel string

// The prefill load models Dynamo accepts (RouterPrefillLoadModel).
const (
	PrefillLoadModelNone PrefillLoadModel = "none"
	PrefillLoadModelAIC  PrefillLoadModel = "aic"
)

// ConditionalDisaggPolicy is conditional_disagg_policy: which rule decides whether
// a disaggregated request may skip remote prefill.
type ConditionalDisaggPolicy string

// The conditional-disaggregation policies Dynamo accepts (ConditionalDisaggPolicyKind).
const (
	ConditionalDisaggISLBounding ConditionalDisaggPolicy = "isl_bounding"
	ConditionalDisaggPrefillLoad ConditionalDisaggPolicy = "prefill_load"
	ConditionalDisaggISLOrLoad   ConditionalDisaggPolicy = "isl_or_load"
)

// KvRouterConfig mirrors Dynamo's KvRouterConfig (lib/kv-router/src/scheduling/config.rs)
// field for field, with the same defaults (see DefaultKvRouterConfig). It is a plain
// value: copy it freely. Only the weights and temperature influence a single routing
// decision; the other fields are kept so a dry run can report the effective
// configuration and check it with the same rules Dynamo applies at start-up.
//
// Profile is not a Dynamo field: it selects which Dynamo release's selector
// behaviour the port reproduces (see Profile). The zero value means ProfileLatest.
type KvRouterConfig struct {
	// OverlapScoreCredit multiplies the device-overlap blocks subtracted from a
	// candidate's prompt-side load. Finite and >= 0; above 1 gives extra credit.
	OverlapScoreCredit float64 `json:"overlap_score_credit"`
	// OverlapScoreCreditDecay shrinks that credit on candidates whose active prefill
	// exceeds the least-loaded eligible candidate's. 0 disables decay.
	OverlapScoreCreditDecay float64 `json:"overlap_score_credit_decay"`
	// PrefillLoadScale scales the adjusted prompt-side load after credits.
	PrefillLoadScale float64 `json:"prefill_load_scale"`
	// DecodeActiveRequestWeight is the block-equivalent cost per active request.
	DecodeActiveRequestWeight float64 `json:"decode_active_request_weight"`
	// HostCacheHitWeight credits host-pinned (CPU) tier overlap blocks, in [0,1].
	HostCacheHitWeight float64 `json:"host_cache_hit_weight"`
	// DiskCacheHitWeight credits disk tier overlap blocks, in [0,1].
	DiskCacheHitWeight float64 `json:"disk_cache_hit_weight"`
	// RouterTemperature is the softmax temperature; 0 picks the minimum cost.
	RouterTemperature float64 `json:"router_temperature"`

	UseKvEvents              bool             `json:"use_kv_events"`
	RouterReplicaSync        bool             `json:"router_replica_sync"`
	RouterTrackActiveBlocks  bool             `json:"router_track_active_blocks"`
	RouterTrackOutputBlocks  bool             `json:"router_track_output_blocks"`
	RouterAssumeKvReuse      bool             `json:"router_assume_kv_reuse"`
	RouterTrackPrefillTokens bool             `json:"router_track_prefill_tokens"`
	RouterPrefillLoadModel   PrefillLoadModel `json:"router_prefill_load_model"`
	RouterTTLSecs            float64          `json:"router_ttl_secs"`
	// RouterQueueThreshold is nil when queueing is off.
	RouterQueueThreshold *float64    `json:"router_queue_threshold"`
	RouterEventThreads   uint32      `json:"router_event_threads"`
	RouterQueuePolicy    QueuePolicy `json:"router_queue_policy"`
	UseRemoteIndexer     bool        `json:"use_remote_indexer"`
	ServeIndexer         bool        `json:"serve_indexer"`
	// SharedCacheMultiplier credits shared-cache hits beyond the device prefix, in [0,1].
	SharedCacheMultiplier  float64         `json:"shared_cache_multiplier"`
	SharedCacheType        SharedCacheType `json:"shared_cache_type"`
	RouterPredictedTTLSecs *float64        `json:"router_predicted_ttl_secs"`

	ConditionalDisaggEnabled              bool                    `json:"conditional_disagg_enabled"`
	ConditionalDisaggPolicy               ConditionalDisaggPolicy `json:"conditional_disagg_policy"`
	ConditionalDisaggEffISLThreshold      uint64                  `json:"conditional_disagg_eff_isl_threshold"`
	ConditionalDisaggEffISLRatioThreshold float64                 `json:"conditional_disagg_eff_isl_ratio_threshold"`
	ConditionalDisaggPrefillBusyThreshold *float64                `json:"conditional_disagg_prefill_busy_threshold"`
	ConditionalDisaggDecodeBusyThreshold  *float64                `json:"conditional_disagg_decode_busy_threshold"`
	SitaEnabled                           bool                    `json:"sita_enabled"`
	SitaBoundary1                         uint64                  `json:"sita_boundary_1"`
	SitaBoundary2                         uint64                  `json:"sita_boundary_2"`
	SitaOSLWeight                         float64                 `json:"sita_osl_weight"`
	SitaSmallBandShare                    float64                 `json:"sita_small_band_share"`
	SitaSpillThreshold                    float64                 `json:"sita_spill_threshold"`

	// Profile selects the Dynamo release whose selector behaviour is reproduced.
	// It is not part of Dynamo's configuration and is never serialised.
	Profile Profile `json:"-"`
}

// DefaultKvRouterConfig returns Dynamo's defaults (KvRouterConfig::default in
// scheduling/config.rs): credit 1, decay 0, scale 1, request weight 0, host 0.75,
// disk 0.25, temperature 0, KV events on, active-block tracking on, KV reuse
// assumed, prefill tracking on, TTL 120 s, 4 event threads, FCFS, no queueing,
// shared cache off, conditional disaggregation off (isl_bounding, 2048, 0.7) and
// SITA off (1024 / 8192 / share 0.5 / spill 0.85 / OSL weight 0).
func DefaultKvRouterConfig() KvRouterConfig {
	return KvRouterConfig{
		OverlapScoreCredit:                    1.0,
		OverlapScoreCreditDecay:               0.0,
		PrefillLoadScale:                      1.0,
		DecodeActiveRequestWeight:             0.0,
		HostCacheHitWeight:                    0.75,
		DiskCacheHitWeight:                    0.25,
		RouterTemperature:                     0.0,
		UseKvEvents:                           true,
		RouterTrackActiveBlocks:               true,
		RouterAssumeKvReuse:                   true,
		RouterTrackPrefillTokens:              true,
		RouterPrefillLoadModel:                PrefillLoadModelNone,
		RouterTTLSecs:                         120.0,
		RouterEventThreads:                    4,
		RouterQueuePolicy:                     QueuePolicyFCFS,
		SharedCacheType:                       SharedCacheNone,
		ConditionalDisaggPolicy:               ConditionalDisaggISLBounding,
		ConditionalDisaggEffISLThreshold:      2048,
		ConditionalDisaggEffISLRatioThreshold: 0.7,
		SitaBoundary1:                         1024,
		SitaBoundary2:                         8192,
		SitaOSLWeight:                         0.0,
		SitaSmallBandShare:                    0.5,
		SitaSpillThreshold:                    0.85,
	}
}

// Validate applies Dynamo's start-up checks (KvRouterConfig::validate and
// validate_kv_router_config) under the selected Profile's credit range. It is
// stricter than Dynamo in one way: every float must be finite, because Dynamo's
// "value >= min" checks let +Inf through and the cost formula then yields NaN.
// Checks that need files (tracking keys, policy YAML) are out of scope.
func (c KvRouterConfig) Validate() error {
	b, err := c.Profile.Behavior()
	if err != nil {
		return err
	}
	floats := []struct {
		name string
		v    float64
	}{
		{"overlap_score_credit", c.OverlapScoreCredit},
		{"overlap_score_credit_decay", c.OverlapScoreCreditDecay},
		{"prefill_load_scale", c.PrefillLoadScale},
		{"decode_active_request_weight", c.DecodeActiveRequestWeight},
		{"host_cache_hit_weight", c.HostCacheHitWeight},
		{"disk_cache_hit_weight", c.DiskCacheHitWeight},
		{"router_temperature", c.RouterTemperature},
		{"router_ttl_secs", c.RouterTTLSecs},
		{"shared_cache_multiplier", c.SharedCacheMultiplier},
		{"conditional_disagg_eff_isl_ratio_threshold", c.ConditionalDisaggEffISLRatioThreshold},
		{"sita_osl_weight", c.SitaOSLWeight},
		{"sita_small_band_share", c.SitaSmallBandShare},
		{"sita_spill_threshold", c.SitaSpillThreshold},
	}
	for _, f := range floats {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			return configErrorf("%s must be a finite number, got %v", f.name, f.v)
		}
	}
	if err := b.validateCredit(c.OverlapScoreCredit); err != nil {
		return err
	}
	checks := []error{
		cfgMinCheck("overlap_score_credit_decay", c.OverlapScoreCreditDecay, 0),
		cfgMinCheck("prefill_load_scale", c.PrefillLoadScale, 0),
		cfgMinCheck("decode_active_request_weight", c.DecodeActiveRequestWeight, 0),
		cfgRangeCheck("host_cache_hit_weight", c.HostCacheHitWeight, 0, 1),
		cfgRangeCheck("disk_cache_hit_weight", c.DiskCacheHitWeight, 0, 1),
		cfgMinCheck("router_temperature", c.RouterTemperature, 0),
		cfgMinCheck("router_ttl_secs", c.RouterTTLSecs, 0),
		cfgOptMinCheck("router_queue_threshold", c.RouterQueueThreshold, 0),
		cfgRangeCheck("shared_cache_multiplier", c.SharedCacheMultiplier, 0, 1),
		cfgOptMinCheck("router_predicted_ttl_secs", c.RouterPredictedTTLSecs, 0),
		cfgRangeCheck("conditional_disagg_eff_isl_ratio_threshold", c.ConditionalDisaggEffISLRatioThreshold, 0, 1),
		cfgOptMinCheck("conditional_disagg_prefill_busy_threshold", c.ConditionalDisaggPrefillBusyThreshold, 0),
		cfgOptMinCheck("conditional_disagg_decode_busy_threshold", c.ConditionalDisaggDecodeBusyThreshold, 0),
	}
	for _, e := range checks {
		if e != nil {
			return e
		}
	}
	if c.RouterEventThreads == 0 {
		return configErrorf("router_event_threads must be at least 1")
	}
	if err := c.validateEnums(); err != nil {
		return err
	}
	if err := c.validateSita(); err != nil {
		return err
	}
	return c.validateCombinations()
}

func (c KvRouterConfig) validateEnums() error {
	switch c.RouterQueuePolicy {
	case QueuePolicyFCFS, QueuePolicyLCFS, QueuePolicyWSPT:
	default:
		return configErrorf("unknown router_queue_policy %q: expected \"fcfs\", \"lcfs\" or \"wspt\"", c.RouterQueuePolicy)
	}
	switch c.SharedCacheType {
	case SharedCacheNone, SharedCacheHiCache:
	default:
		return configErrorf("unknown shared_cache_type %q: expected \"none\" or \"hicache\"", c.SharedCacheType)
	}
	switch c.RouterPrefillLoadModel {
	case PrefillLoadModelNone, PrefillLoadModelAIC:
	default:
		return configErrorf("unknown router_prefill_load_model %q: expected \"none\" or \"aic\"", c.RouterPrefillLoadModel)
	}
	switch c.ConditionalDisaggPolicy {
	case ConditionalDisaggISLBounding, ConditionalDisaggPrefillLoad, ConditionalDisaggISLOrLoad:
	default:
		return configErrorf("unknown conditional_disagg_policy %q: expected \"isl_bounding\", \"prefill_load\" or \"isl_or_load\"", c.ConditionalDisaggPolicy)
	}
	return nil
}

func (c KvRouterConfig) validateSita() error {
	if c.SitaBoundary1 == 0 {
		return configErrorf("sita_boundary_1 must be greater than 0")
	}
	if c.SitaBoundary2 != 0 && c.SitaBoundary2 <= c.SitaBoundary1 {
		return configErrorf("sita_boundary_2 must be 0 (two-band split) or greater than sita_boundary_1")
	}
	if !(c.SitaSmallBandShare > 0 && c.SitaSmallBandShare < 1) {
		return configErrorf("sita_small_band_share must be between 0 and 1, exclusive")
	}
	if err := cfgRangeCheck("sita_spill_threshold", c.SitaSpillThreshold, 0.5, 1); err != nil {
		return err
	}
	return cfgMinCheck("sita_osl_weight", c.SitaOSLWeight, 0)
}

func (c KvRouterConfig) validateCombinations() error {
	switch {
	case c.RouterTrackOutputBlocks && !c.RouterTrackActiveBlocks:
		return configErrorf("router_track_output_blocks requires router_track_active_blocks=true")
	case c.RouterPrefillLoadModel == PrefillLoadModelAIC && !c.RouterTrackPrefillTokens:
		return configErrorf("router_prefill_load_model requires router_track_prefill_tokens=true")
	case c.UseRemoteIndexer && c.ServeIndexer:
		return configErrorf("use_remote_indexer and serve_indexer are mutually exclusive")
	case c.ServeIndexer && c.OverlapScoreCredit == 0:
		return configErrorf("serve_indexer requires overlap_score_credit > 0")
	case c.RouterPredictedTTLSecs != nil && !c.UseKvEvents:
		return configErrorf("router_predicted_ttl_secs requires use_kv_events=true")
	}
	if c.ConditionalDisaggEnabled &&
		(c.ConditionalDisaggPolicy == ConditionalDisaggPrefillLoad || c.ConditionalDisaggPolicy == ConditionalDisaggISLOrLoad) &&
		c.ConditionalDisaggPrefillBusyThreshold == nil && c.RouterQueueThreshold == nil {
		return configErrorf("conditional_disagg policy=%s needs prefill_busy_threshold, but neither conditional_disagg_prefill_busy_threshold nor router_queue_threshold is set", c.ConditionalDisaggPolicy)
	}
	return nil
}

// EffectiveConditionalDisaggPrefillBusyThreshold returns the prefill busy line used by
// the prefill_load conditional-disaggregation policies: the explicit threshold, else
// router_queue_threshold (the frontend's apply_conditional_disagg_config fallback).
func (c KvRouterConfig) EffectiveConditionalDisaggPrefillBusyThreshold() *float64 {
	if c.ConditionalDisaggPrefillBusyThreshold != nil {
		return c.ConditionalDisaggPrefillBusyThreshold
	}
	return c.RouterQueueThreshold
}

// ShouldSubscribeToKvEvents mirrors should_subscribe_to_kv_events: the router only
// builds an overlap index when KV events are on and the overlap credit is positive.
func (c KvRouterConfig) ShouldSubscribeToKvEvents() bool {
	return c.UseKvEvents && c.OverlapScoreCredit > 0
}

func configErrorf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidConfig, fmt.Sprintf(format, args...))
}

func cfgMinCheck(name string, v, lo float64) error {
	if v >= lo {
		return nil
	}
	return configErrorf("%s must be greater than or equal to %v, got %v", name, lo, v)
}

func cfgOptMinCheck(name string, v *float64, lo float64) error {
	if v == nil {
		return nil
	}
	if math.IsNaN(*v) || math.IsInf(*v, 0) {
		return configErrorf("%s must be a finite number, got %v", name, *v)
	}
	return cfgMinCheck(name, *v, lo)
}

func cfgRangeCheck(name string, v, lo, hi float64) error {
	if v >= lo && v <= hi {
		return nil
	}
	return configErrorf("%s must be between %v and %v, got %v", name, lo, hi, v)
}

// BusyThresholds mirrors the frontend's LoadThresholdConfig (worker_monitor.rs): the
// opt-in limits that mark a worker overloaded and remove it from routing. A nil field
// disables its check; with all three nil no worker is ever overloaded. They come from
// --active-decode-blocks-threshold, --active-prefill-tokens-threshold and
// --active-prefill-tokens-threshold-frac (or GET /busy_threshold at runtime).
type BusyThresholds struct {
	// ActiveDecodeBlocksThreshold is a fraction in [0,1] of total_kv_blocks.
	ActiveDecodeBlocksThreshold *float64 `json:"active_decode_blocks_threshold,omitempty"`
	// ActivePrefillTokensThreshold is an absolute token count.
	ActivePrefillTokensThreshold *uint64 `json:"active_prefill_tokens_threshold,omitempty"`
	// ActivePrefillTokensThresholdFrac is a fraction (>= 0) of max_num_batched_tokens.
	ActivePrefillTokensThresholdFrac *float64 `json:"active_prefill_tokens_threshold_frac,omitempty"`
}

// IsConfigured reports whether any threshold is set (LoadThresholdConfig::is_configured).
func (t BusyThresholds) IsConfigured() bool {
	return t.ActiveDecodeBlocksThreshold != nil || t.ActivePrefillTokensThreshold != nil ||
		t.ActivePrefillTokensThresholdFrac != nil
}

// Validate applies LoadThresholdConfig::validate: the decode fraction must be finite
// and in [0,1]; the prefill fraction finite and >= 0.
func (t BusyThresholds) Validate() error {
	if v := t.ActiveDecodeBlocksThreshold; v != nil && (math.IsNaN(*v) || math.IsInf(*v, 0) || *v < 0 || *v > 1) {
		return configErrorf("active_decode_blocks_threshold must be between 0.0 and 1.0, got %v", *v)
	}
	if v := t.ActivePrefillTokensThresholdFrac; v != nil && (math.IsNaN(*v) || math.IsInf(*v, 0) || *v < 0) {
		return configErrorf("active_prefill_tokens_threshold_frac must be a finite value greater than or equal to 0.0, got %v", *v)
	}
	return nil
}

// Profile names a Dynamo release line whose selector behaviour the port reproduces.
// Dynamo's selector changed in ways that alter decisions (router-semantics.md §0);
// a dry run against an older cluster should pick the matching profile. The zero
// value is ProfileLatest.
type Profile string

const (
	// ProfileLatest is the newest selector (v1.2+ with the 2026 default.rs):
	// adjusted prefill clamped at 0, overlap_score_credit any finite value >= 0,
	// the conditional-disaggregation decode branch, T=0 ties broken uniformly at
	// random, and multimodal requests hashed with the pad-value scheme
	// (MmSchemePadValue, Dynamo #10328, 1.3 and later).
	ProfileLatest Profile = "latest"
	// ProfileLegacyV1_1 is the pre-clamp selector of the overlap_score_weight era
	// (before about v1.2): a negative adjusted prefill is kept (the old
	// test_worker_logit_does_not_clamp_negative_prefill_cost expects −7.0 where the
	// newest code gives 5.0), overlap_score_credit is limited to [0,1], there is no
	// decode overlap branch, and request_blocks is not floored at 1. Ties at T=0
	// go to the smallest radix tree (TieSmallestTreeThenRandom): Dynamo #4257
	// (merged 2025-11-13) broke them by tree size, #6253 (2026-02-12) drew at
	// random when all tied tree sizes are equal, and #9516 (2026-05-13) replaced
	// the rule with reservoir sampling on main only; the v1.1.2 branch kept it
	// (#9975: "smaller routing tree wins, with random only as a sub-tie-breaker").
	ProfileLegacyV1_1 Profile = "legacy-v1.1"
	// ProfileLegacyTreeSize names the tree-size tie rule explicitly; it behaves
	// exactly as ProfileLegacyV1_1 (kept so existing --dynamo-version values and
	// scripts keep working).
	ProfileLegacyTreeSize Profile = "legacy-tree-size"
	// ProfileLegacyV1_2 is the Dynamo 1.2 line: the latest selector, but a
	// multimodal request hashed with the mm_hash append scheme
	// (MmSchemeMmHash). Dynamo #10328 (merged 2026-06-04, after 1.2.0 of
	// 2026-06-02; first released in 1.3) moved the frontend to the pad-value
	// scheme for every backend; #9561, SGLang only, was still in review on
	// 2026-06-02.
	ProfileLegacyV1_2 Profile = "legacy-v1.2"
)

// TieBreak names how a temperature-0 tie between equal minimum costs is resolved.
type TieBreak string

const (
	// TieUniformRandom picks uniformly among the tied candidates (newest Dynamo:
	// reservoir sampling with fastrand over HashMap order).
	TieUniformRandom TieBreak = "uniform-random"
	// TieSmallestTreeThenRandom first keeps the tied candidates with the smallest
	// radix-tree size (OverlapInput.TreeSizes; a candidate without an entry
	// counts 0, as upstream's tree_sizes.get(w).unwrap_or(0)), then picks
	// uniformly among those. Upstream's pick among equal smallest trees was
	// min_by_key's first in HashMap order when some tied sizes differ (and, before
	// #6253, always): fixed per router process but not knowable from outside, so
	// 1/n each is the honest probability.
	TieSmallestTreeThenRandom TieBreak = "smallest-tree-then-random"
)

// ProfileBehavior lists, field by field, what a Profile changes.
type ProfileBehavior struct {
	// Name is the canonical profile name.
	Name Profile
	// ClampAdjustedPrefill floors raw_blocks − credit_blocks at 0.
	ClampAdjustedPrefill bool
	// RequestBlocksAtLeastOne divides the decay's excess load by max(request_blocks,1)
	// instead of request_blocks. Select requires ISL > 0, so this only shows in
	// CandidateCost computed directly with ISL 0.
	RequestBlocksAtLeastOne bool
	// MaxOverlapScoreCredit is the largest accepted overlap_score_credit
	// (+Inf for "any finite value").
	MaxOverlapScoreCredit float64
	// DecodeOverlapBranch enables the conditional-disaggregation decode formula
	// max(0, decode − credit_blocks) + request cost.
	DecodeOverlapBranch bool
	// TieBreak resolves T=0 ties.
	TieBreak TieBreak
	// MmScheme is how the frontend folds a request's multimodal objects into
	// its block hashes (see MmScheme).
	MmScheme MmScheme
}

// Profiles returns every supported profile name, newest first.
func Profiles() []Profile {
	return []Profile{ProfileLatest, ProfileLegacyV1_2, ProfileLegacyV1_1, ProfileLegacyTreeSize}
}

// ParseProfile accepts a profile name; "" and "pre-clamp" are aliases for
// "latest" and "legacy-v1.1".
func ParseProfile(s string) (Profile, error) {
	switch strings.TrimSpace(strings.ToLower(s)) {
	case "", string(ProfileLatest):
		return ProfileLatest, nil
	case string(ProfileLegacyV1_1), "pre-clamp":
		return ProfileLegacyV1_1, nil
	case string(ProfileLegacyTreeSize):
		return ProfileLegacyTreeSize, nil
	case string(ProfileLegacyV1_2):
		return ProfileLegacyV1_2, nil
	}
	return "", fmt.Errorf("%w: unknown profile %q: expected one of latest, legacy-v1.2, legacy-v1.1 (alias pre-clamp), legacy-tree-size", ErrInvalidConfig, s)
}

// Behavior returns the behaviour table for the profile.
func (p Profile) Behavior() (ProfileBehavior, error) {
	name, err := ParseProfile(string(p))
	if err != nil {
		return ProfileBehavior{}, err
	}
	switch name {
	case ProfileLegacyV1_1:
		return ProfileBehavior{Name: name, MaxOverlapScoreCredit: 1, TieBreak: TieSmallestTreeThenRandom, MmScheme: MmSchemeMmHash}, nil
	case ProfileLegacyTreeSize:
		return ProfileBehavior{Name: name, MaxOverlapScoreCredit: 1, TieBreak: TieSmallestTreeThenRandom, MmScheme: MmSchemeMmHash}, nil
	}
	b := ProfileBehavior{
		Name:                    ProfileLatest,
		ClampAdjustedPrefill:    true,
		RequestBlocksAtLeastOne: true,
		MaxOverlapScoreCredit:   math.Inf(1),
		DecodeOverlapBranch:     true,
		TieBreak:                TieUniformRandom,
		MmScheme:                MmSchemePadValue,
	}
	if name == ProfileLegacyV1_2 {
		b.Name, b.MmScheme = name, MmSchemeMmHash
	}
	return b, nil
}

func (b ProfileBehavior) validateCredit(v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return configErrorf("overlap_score_credit must be a finite, non-negative number, got %v", v)
	}
	if v > b.MaxOverlapScoreCredit {
		return configErrorf("overlap_score_credit must be between 0.0 and %v under profile %s, got %v; to weigh prefill load more heavily use prefill_load_scale", b.MaxOverlapScoreCredit, b.Name, v)
	}
	return nil
}

// RouterConfigDoc is a router configuration decoded from a worker model card's
// router_config (or a bare kv_router_config object): the effective KvRouterConfig,
// the router mode and busy thresholds when present, and what was not understood.
type RouterConfigDoc struct {
	// RouterMode is router_mode when the wrapper shape was used ("" otherwise).
	RouterMode string
	// Config is the decoded KvRouterConfig, defaults filled in, legacy weight applied.
	Config KvRouterConfig
	// HasKvRouterConfig is false when the wrapper shape had no kv_router_config.
	HasKvRouterConfig bool
	// Thresholds is load_threshold_config when present.
	Thresholds BusyThresholds
	// Ignored lists fields that older or newer Dynamo releases accept but that do not
	// affect routing decisions (e.g. router_snapshot_threshold), sorted.
	Ignored []string
	// Unknown lists fields this port does not know, sorted. Dynamo's own decoder
	// rejects unknown fields (deny_unknown_fields); a dry run reports them instead,
	// because the field set changes between releases.
	Unknown []string
}

// cfgIgnoredFields are accepted but have no effect on a routing decision.
var cfgIgnoredFields = map[string]bool{
	"durable_kv_events": true, "router_snapshot_threshold": true, "router_reset_states": true,
	"router_max_tree_size": true, "router_prune_target_ratio": true, "router_enable_cache_control": true,
	"router_tracking_hash": true, "router_tracking_key_file": true, "router_tracking_key_id": true,
	"router_policy_config": true, "skip_initial_worker_wait": true, "enable_session_prefix_index": true,
	"router_approximate_cache_policy": true, "router_prefill_policy": true, "router_decode_policy": true,
}

// DecodeRouterConfigJSON decodes a router configuration in Dynamo's snake_case field
// names. Both shapes are accepted: the model card's RouterConfig wrapper
// {"router_mode":…, "kv_router_config":{…}, "load_threshold_config":{…}} and a bare
// KvRouterConfig object. Missing fields take Dynamo's defaults (serde(default)); the
// legacy overlap_score_weight is mapped as in KvRouterConfig's TryFrom; null is
// accepted only for optional fields. The result is validated.
func DecodeRouterConfigJSON(data []byte) (RouterConfigDoc, error) {
	var doc RouterConfigDoc
	top, err := cfgDecodeObject(data, "router config")
	if err != nil {
		return doc, err
	}
	_, hasKv := top["kv_router_config"]
	_, hasMode := top["router_mode"]
	_, hasLoad := top["load_threshold_config"]
	if !hasKv && !hasMode && !hasLoad {
		doc.Config, err = cfgDecodeKvRouterConfig(top, "", &doc)
		doc.HasKvRouterConfig = true
		return doc, err
	}
	doc.Config = DefaultKvRouterConfig()
	for _, k := range cfgSortedKeys(top) {
		raw := top[k]
		switch k {
		case "router_mode":
			if err := json.Unmarshal(raw, &doc.RouterMode); err != nil {
				return doc, configErrorf("router_mode must be a string: %v", err)
			}
		case "kv_router_config":
			if string(bytes.TrimSpace(raw)) == "null" {
				continue
			}
			obj, err := cfgDecodeObject(raw, "kv_router_config")
			if err != nil {
				return doc, err
			}
			doc.HasKvRouterConfig = true
			if doc.Config, err = cfgDecodeKvRouterConfig(obj, "kv_router_config.", &doc); err != nil {
				return doc, err
			}
		case "load_threshold_config":
			if string(bytes.TrimSpace(raw)) == "null" {
				continue
			}
			obj, err := cfgDecodeObject(raw, "load_threshold_config")
			if err != nil {
				return doc, err
			}
			if doc.Thresholds, err = cfgDecodeThresholds(obj, &doc); err != nil {
				return doc, err
			}
		default:
			doc.Unknown = append(doc.Unknown, k)
		}
	}
	return doc, nil
}

func cfgDecodeObject(data []byte, what string) (map[string]json.RawMessage, error) {
	var obj map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&obj); err != nil {
		return nil, configErrorf("%s must be a JSON object: %v", what, err)
	}
	if obj == nil {
		return nil, configErrorf("%s must be a JSON object, got null", what)
	}
	return obj, nil
}

func cfgSortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// cfgJSONField decodes one JSON value into a typed destination with a field-named error.
type cfgJSONField struct {
	name string
	raw  json.RawMessage
}

func (f cfgJSONField) isNull() bool { return string(bytes.TrimSpace(f.raw)) == "null" }

func (f cfgJSONField) float(dst *float64) error {
	var n json.Number
	if err := json.Unmarshal(f.raw, &n); err != nil || f.isNull() {
		return configErrorf("%s must be a number, got %s", f.name, bytes.TrimSpace(f.raw))
	}
	v, err := n.Float64()
	if err != nil {
		return configErrorf("%s must be a number, got %s", f.name, n)
	}
	*dst = v
	return nil
}

func (f cfgJSONField) optFloat(dst **float64) error {
	if f.isNull() {
		*dst = nil
		return nil
	}
	var v float64
	if err := f.float(&v); err != nil {
		return err
	}
	*dst = &v
	return nil
}

func (f cfgJSONField) uint(dst *uint64, bits int) error {
	var n json.Number
	if err := json.Unmarshal(f.raw, &n); err != nil || f.isNull() {
		return configErrorf("%s must be a non-negative integer, got %s", f.name, bytes.TrimSpace(f.raw))
	}
	v, err := strconv.ParseUint(n.String(), 10, bits)
	if err != nil {
		return configErrorf("%s must be a non-negative integer that fits %d bits, got %s", f.name, bits, n)
	}
	*dst = v
	return nil
}

func (f cfgJSONField) boolean(dst *bool) error {
	if err := json.Unmarshal(f.raw, dst); err != nil || f.isNull() {
		return configErrorf("%s must be true or false, got %s", f.name, bytes.TrimSpace(f.raw))
	}
	return nil
}

func (f cfgJSONField) str(dst *string) error {
	if err := json.Unmarshal(f.raw, dst); err != nil || f.isNull() {
		return configErrorf("%s must be a string, got %s", f.name, bytes.TrimSpace(f.raw))
	}
	return nil
}

func cfgDecodeKvRouterConfig(obj map[string]json.RawMessage, prefix string, doc *RouterConfigDoc) (KvRouterConfig, error) {
	c := DefaultKvRouterConfig()
	var legacyWeight *float64
	for _, k := range cfgSortedKeys(obj) {
		f := cfgJSONField{name: prefix + k, raw: obj[k]}
		var err error
		var s string
		var u uint64
		switch k {
		case "overlap_score_credit":
			err = f.float(&c.OverlapScoreCredit)
		case "overlap_score_credit_decay":
			err = f.float(&c.OverlapScoreCreditDecay)
		case "prefill_load_scale":
			err = f.float(&c.PrefillLoadScale)
		case "decode_active_request_weight":
			err = f.float(&c.DecodeActiveRequestWeight)
		case "overlap_score_weight":
			err = f.optFloat(&legacyWeight)
		case "host_cache_hit_weight":
			err = f.float(&c.HostCacheHitWeight)
		case "disk_cache_hit_weight":
			err = f.float(&c.DiskCacheHitWeight)
		case "router_temperature":
			err = f.float(&c.RouterTemperature)
		case "use_kv_events":
			err = f.boolean(&c.UseKvEvents)
		case "router_replica_sync":
			err = f.boolean(&c.RouterReplicaSync)
		case "router_track_active_blocks":
			err = f.boolean(&c.RouterTrackActiveBlocks)
		case "router_track_output_blocks":
			err = f.boolean(&c.RouterTrackOutputBlocks)
		case "router_assume_kv_reuse":
			err = f.boolean(&c.RouterAssumeKvReuse)
		case "router_track_prefill_tokens":
			err = f.boolean(&c.RouterTrackPrefillTokens)
		case "router_prefill_load_model":
			err = f.str(&s)
			c.RouterPrefillLoadModel = PrefillLoadModel(s)
		case "router_ttl_secs":
			err = f.float(&c.RouterTTLSecs)
		case "router_queue_threshold":
			err = f.optFloat(&c.RouterQueueThreshold)
		case "router_event_threads":
			err = f.uint(&u, 32)
			c.RouterEventThreads = uint32(u)
		case "router_queue_policy":
			err = f.str(&s)
			c.RouterQueuePolicy = QueuePolicy(s)
		case "use_remote_indexer":
			err = f.boolean(&c.UseRemoteIndexer)
		case "serve_indexer":
			err = f.boolean(&c.ServeIndexer)
		case "shared_cache_multiplier":
			err = f.float(&c.SharedCacheMultiplier)
		case "shared_cache_type":
			err = f.str(&s)
			c.SharedCacheType = SharedCacheType(s)
		case "router_predicted_ttl_secs":
			err = f.optFloat(&c.RouterPredictedTTLSecs)
		case "conditional_disagg_enabled":
			err = f.boolean(&c.ConditionalDisaggEnabled)
		case "conditional_disagg_policy":
			err = f.str(&s)
			c.ConditionalDisaggPolicy = ConditionalDisaggPolicy(s)
		case "conditional_disagg_eff_isl_threshold":
			err = f.uint(&c.ConditionalDisaggEffISLThreshold, 64)
		case "conditional_disagg_eff_isl_ratio_threshold":
			err = f.float(&c.ConditionalDisaggEffISLRatioThreshold)
		case "conditional_disagg_prefill_busy_threshold":
			err = f.optFloat(&c.ConditionalDisaggPrefillBusyThreshold)
		case "conditional_disagg_decode_busy_threshold":
			err = f.optFloat(&c.ConditionalDisaggDecodeBusyThreshold)
		case "sita_enabled":
			err = f.boolean(&c.SitaEnabled)
		case "sita_boundary_1":
			err = f.uint(&c.SitaBoundary1, 64)
		case "sita_boundary_2":
			err = f.uint(&c.SitaBoundary2, 64)
		case "sita_osl_weight":
			err = f.float(&c.SitaOSLWeight)
		case "sita_small_band_share":
			err = f.float(&c.SitaSmallBandShare)
		case "sita_spill_threshold":
			err = f.float(&c.SitaSpillThreshold)
		default:
			if cfgIgnoredFields[k] {
				doc.Ignored = append(doc.Ignored, prefix+k)
			} else {
				doc.Unknown = append(doc.Unknown, prefix+k)
			}
		}
		if err != nil {
			return c, err
		}
	}
	if legacyWeight != nil {
		c.ApplyLegacyOverlapScoreWeight(*legacyWeight)
	}
	return c, c.Validate()
}

func cfgDecodeThresholds(obj map[string]json.RawMessage, doc *RouterConfigDoc) (BusyThresholds, error) {
	var t BusyThresholds
	for _, k := range cfgSortedKeys(obj) {
		f := cfgJSONField{name: "load_threshold_config." + k, raw: obj[k]}
		var err error
		switch k {
		case "active_decode_blocks_threshold":
			err = f.optFloat(&t.ActiveDecodeBlocksThreshold)
		case "active_prefill_tokens_threshold":
			if !f.isNull() {
				var u uint64
				err = f.uint(&u, 64)
				t.ActivePrefillTokensThreshold = &u
			}
		case "active_prefill_tokens_threshold_frac":
			err = f.optFloat(&t.ActivePrefillTokensThresholdFrac)
		default:
			doc.Unknown = append(doc.Unknown, f.name)
		}
		if err != nil {
			return t, err
		}
	}
	return t, t.Validate()
}

// FrontendSettings is the routing configuration of a dynamo.frontend process as read
// from its command line and environment.
type FrontendSettings struct {
	// RouterMode is --router-mode / DYN_ROUTER_MODE (default "round-robin"; the
	// load-aware preset implies "kv").
	RouterMode string
	Config     KvRouterConfig
	Thresholds BusyThresholds
	// Warnings lists values that were ignored (unparsable numbers or booleans, as
	// Dynamo's env reader ignores them) and deprecated spellings, in input order.
	Warnings []string
}

type cfgSettingKind uint8

const (
	cfgKindFloat cfgSettingKind = iota
	cfgKindOptFloat
	cfgKindUint
	cfgKindBool
	cfgKindString
)

// cfgFrontendSetting is one flag with its environment variables (first found wins).
type cfgFrontendSetting struct {
	flag    string
	aliases []string
	env     []string
	kind    cfgSettingKind
	set     func(s *cfgFrontendState, v cfgSettingValue) error
}

type cfgSettingValue struct {
	f    float64
	null bool
	u    uint64
	b    bool
	s    string
}

type cfgFrontendState struct {
	FrontendSettings
	legacyWeight     *float64
	sharedMultSet    bool
	loadAware        bool
	condDisaggConfig *string
}

func cfgFset(f func(c *KvRouterConfig) *float64) func(*cfgFrontendState, cfgSettingValue) error {
	return func(s *cfgFrontendState, v cfgSettingValue) error { *f(&s.Config) = v.f; return nil }
}

func cfgFoptset(f func(s *cfgFrontendState) **float64) func(*cfgFrontendState, cfgSettingValue) error {
	return func(s *cfgFrontendState, v cfgSettingValue) error {
		if v.null {
			*f(s) = nil
			return nil
		}
		x := v.f
		*f(s) = &x
		return nil
	}
}

func cfgBset(f func(c *KvRouterConfig) *bool) func(*cfgFrontendState, cfgSettingValue) error {
	return func(s *cfgFrontendState, v cfgSettingValue) error { *f(&s.Config) = v.b; return nil }
}

// cfgFrontendSettings is the routing subset of kv_router_args.py / router_args.py and
// the frontend flag table (discovery-state.md §5), with the env names Dynamo reads.
var cfgFrontendSettings = []cfgFrontendSetting{
	{flag: "--router-mode", env: []string{"DYN_ROUTER_MODE"}, kind: cfgKindString,
		set: func(s *cfgFrontendState, v cfgSettingValue) error { s.RouterMode = v.s; return nil }},
	{flag: "--load-aware", env: []string{"DYN_ROUTER_LOAD_AWARE"}, kind: cfgKindBool,
		set: func(s *cfgFrontendState, v cfgSettingValue) error { s.loadAware = v.b; return nil }},
	{flag: "--router-kv-overlap-score-credit", env: []string{"DYN_ROUTER_KV_OVERLAP_SCORE_CREDIT"}, kind: cfgKindFloat,
		set: cfgFset(func(c *KvRouterConfig) *float64 { return &c.OverlapScoreCredit })},
	{flag: "--router-kv-overlap-score-credit-decay", env: []string{"DYN_ROUTER_KV_OVERLAP_SCORE_CREDIT_DECAY"}, kind: cfgKindFloat,
		set: cfgFset(func(c *KvRouterConfig) *float64 { return &c.OverlapScoreCreditDecay })},
	{flag: "--router-kv-overlap-score-weight", aliases: []string{"--kv-overlap-score-weight"},
		env: []string{"DYN_ROUTER_KV_OVERLAP_SCORE_WEIGHT", "DYN_OVERLAP_SCORE_WEIGHT"}, kind: cfgKindOptFloat,
		set: cfgFoptset(func(s *cfgFrontendState) **float64 { return &s.legacyWeight })},
	{flag: "--router-prefill-load-scale", env: []string{"DYN_ROUTER_PREFILL_LOAD_SCALE"}, kind: cfgKindFloat,
		set: cfgFset(func(c *KvRouterConfig) *float64 { return &c.PrefillLoadScale })},
	{flag: "--router-decode-active-request-weight", env: []string{"DYN_ROUTER_DECODE_ACTIVE_REQUEST_WEIGHT"}, kind: cfgKindFloat,
		set: cfgFset(func(c *KvRouterConfig) *float64 { return &c.DecodeActiveRequestWeight })},
	{flag: "--router-host-cache-hit-weight", env: []string{"DYN_ROUTER_HOST_CACHE_HIT_WEIGHT"}, kind: cfgKindFloat,
		set: cfgFset(func(c *KvRouterConfig) *float64 { return &c.HostCacheHitWeight })},
	{flag: "--router-disk-cache-hit-weight", env: []string{"DYN_ROUTER_DISK_CACHE_HIT_WEIGHT"}, kind: cfgKindFloat,
		set: cfgFset(func(c *KvRouterConfig) *float64 { return &c.DiskCacheHitWeight })},
	{flag: "--router-temperature", env: []string{"DYN_ROUTER_TEMPERATURE"}, kind: cfgKindFloat,
		set: cfgFset(func(c *KvRouterConfig) *float64 { return &c.RouterTemperature })},
	{flag: "--router-kv-events", aliases: []string{"--kv-events"}, env: []string{"DYN_ROUTER_USE_KV_EVENTS", "DYN_USE_KV_EVENTS"}, kind: cfgKindBool,
		set: cfgBset(func(c *KvRouterConfig) *bool { return &c.UseKvEvents })},
	{flag: "--router-replica-sync", env: []string{"DYN_ROUTER_REPLICA_SYNC"}, kind: cfgKindBool,
		set: cfgBset(func(c *KvRouterConfig) *bool { return &c.RouterReplicaSync })},
	{flag: "--router-track-active-blocks", aliases: []string{"--track-active-blocks"}, env: []string{"DYN_ROUTER_TRACK_ACTIVE_BLOCKS"}, kind: cfgKindBool,
		set: cfgBset(func(c *KvRouterConfig) *bool { return &c.RouterTrackActiveBlocks })},
	{flag: "--router-track-output-blocks", aliases: []string{"--track-output-blocks"}, env: []string{"DYN_ROUTER_TRACK_OUTPUT_BLOCKS"}, kind: cfgKindBool,
		set: cfgBset(func(c *KvRouterConfig) *bool { return &c.RouterTrackOutputBlocks })},
	{flag: "--router-assume-kv-reuse", aliases: []string{"--assume-kv-reuse"}, env: []string{"DYN_ROUTER_ASSUME_KV_REUSE"}, kind: cfgKindBool,
		set: cfgBset(func(c *KvRouterConfig) *bool { return &c.RouterAssumeKvReuse })},
	{flag: "--router-track-prefill-tokens", env: []string{"DYN_ROUTER_TRACK_PREFILL_TOKENS"}, kind: cfgKindBool,
		set: cfgBset(func(c *KvRouterConfig) *bool { return &c.RouterTrackPrefillTokens })},
	{flag: "--router-prefill-load-model", env: []string{"DYN_ROUTER_PREFILL_LOAD_MODEL"}, kind: cfgKindString,
		set: func(s *cfgFrontendState, v cfgSettingValue) error {
			s.Config.RouterPrefillLoadModel = PrefillLoadModel(v.s)
			return nil
		}},
	{flag: "--router-ttl-secs", env: []string{"DYN_ROUTER_TTL_SECS"}, kind: cfgKindFloat,
		set: cfgFset(func(c *KvRouterConfig) *float64 { return &c.RouterTTLSecs })},
	{flag: "--router-queue-threshold", env: []string{"DYN_ROUTER_QUEUE_THRESHOLD"}, kind: cfgKindOptFloat,
		set: cfgFoptset(func(s *cfgFrontendState) **float64 { return &s.Config.RouterQueueThreshold })},
	{flag: "--router-event-threads", env: []string{"DYN_ROUTER_EVENT_THREADS"}, kind: cfgKindUint,
		set: func(s *cfgFrontendState, v cfgSettingValue) error {
			if v.u > math.MaxUint32 {
				return configErrorf("router_event_threads %d does not fit u32", v.u)
			}
			s.Config.RouterEventThreads = uint32(v.u)
			return nil
		}},
	{flag: "--router-queue-policy", env: []string{"DYN_ROUTER_QUEUE_POLICY"}, kind: cfgKindString,
		set: func(s *cfgFrontendState, v cfgSettingValue) error {
			s.Config.RouterQueuePolicy = QueuePolicy(v.s)
			return nil
		}},
	{flag: "--use-remote-indexer", env: []string{"DYN_USE_REMOTE_INDEXER"}, kind: cfgKindBool,
		set: cfgBset(func(c *KvRouterConfig) *bool { return &c.UseRemoteIndexer })},
	{flag: "--serve-indexer", kind: cfgKindBool,
		set: cfgBset(func(c *KvRouterConfig) *bool { return &c.ServeIndexer })},
	{flag: "--shared-cache-multiplier", env: []string{"DYN_SHARED_CACHE_MULTIPLIER"}, kind: cfgKindFloat,
		set: func(s *cfgFrontendState, v cfgSettingValue) error {
			s.Config.SharedCacheMultiplier, s.sharedMultSet = v.f, true
			return nil
		}},
	{flag: "--shared-cache-type", env: []string{"DYN_SHARED_CACHE_TYPE"}, kind: cfgKindString,
		set: func(s *cfgFrontendState, v cfgSettingValue) error {
			s.Config.SharedCacheType = SharedCacheType(v.s)
			return nil
		}},
	{flag: "--router-predicted-ttl-secs", env: []string{"DYN_ROUTER_PREDICTED_TTL_SECS"}, kind: cfgKindOptFloat,
		set: cfgFoptset(func(s *cfgFrontendState) **float64 { return &s.Config.RouterPredictedTTLSecs })},
	{flag: "--router-conditional-disagg", env: []string{"DYN_ROUTER_CONDITIONAL_DISAGG"}, kind: cfgKindBool,
		set: cfgBset(func(c *KvRouterConfig) *bool { return &c.ConditionalDisaggEnabled })},
	{flag: "--router-conditional-disagg-config", env: []string{"DYN_ROUTER_CONDITIONAL_DISAGG_CONFIG"}, kind: cfgKindString,
		set: func(s *cfgFrontendState, v cfgSettingValue) error { x := v.s; s.condDisaggConfig = &x; return nil }},
	{flag: "--active-decode-blocks-threshold", env: []string{"DYN_ACTIVE_DECODE_BLOCKS_THRESHOLD"}, kind: cfgKindOptFloat,
		set: cfgFoptset(func(s *cfgFrontendState) **float64 { return &s.Thresholds.ActiveDecodeBlocksThreshold })},
	{flag: "--active-prefill-tokens-threshold", env: []string{"DYN_ACTIVE_PREFILL_TOKENS_THRESHOLD"}, kind: cfgKindUint,
		set: func(s *cfgFrontendState, v cfgSettingValue) error {
			x := v.u
			s.Thresholds.ActivePrefillTokensThreshold = &x
			return nil
		}},
	{flag: "--active-prefill-tokens-threshold-frac", env: []string{"DYN_ACTIVE_PREFILL_TOKENS_THRESHOLD_FRAC"}, kind: cfgKindOptFloat,
		set: cfgFoptset(func(s *cfgFrontendState) **float64 { return &s.Thresholds.ActivePrefillTokensThresholdFrac })},
}

// ParseFrontendSettings reads the routing configuration of a dynamo.frontend from its
// argument list (args, e.g. the container's command and args with "sh -c" already
// split) and environment (lookup; nil means empty). Precedence is Dynamo's: defaults,
// then environment variables, then command-line flags. Afterwards, in the frontend's
// order: the deprecated overlap_score_weight mapping, the --load-aware preset, the
// --router-conditional-disagg-config JSON, and shared_cache_multiplier = 0.5 when a
// shared cache type is set without an explicit multiplier.
//
// Flags may be written "--flag value" or "--flag=value"; boolean flags as "--flag",
// "--no-flag" or "--flag=<bool>". Unrelated arguments are skipped. Environment values
// that do not parse are ignored with a warning, as Dynamo's env reader ignores them;
// a command-line value that does not parse is an error, as argparse rejects it. The
// result is validated.
func ParseFrontendSettings(args []string, lookup func(string) (string, bool)) (FrontendSettings, error) {
	st := &cfgFrontendState{FrontendSettings: FrontendSettings{RouterMode: "round-robin", Config: DefaultKvRouterConfig()}}
	if lookup != nil {
		for _, fs := range cfgFrontendSettings {
			for _, name := range fs.env {
				raw, ok := lookup(name)
				if !ok {
					continue
				}
				v, err := cfgParseSettingValue(fs.kind, raw, true)
				if err != nil {
					st.Warnings = append(st.Warnings, fmt.Sprintf("ignored %s=%q: %v", name, raw, err))
					continue
				}
				if err := fs.set(st, v); err != nil {
					return st.FrontendSettings, err
				}
				break
			}
		}
	}
	if err := st.applyArgs(args); err != nil {
		return st.FrontendSettings, err
	}
	if err := st.finish(); err != nil {
		return st.FrontendSettings, err
	}
	return st.FrontendSettings, nil
}

// KvRouterConfigFromEnv mirrors kv_router_config_from_lookup (scheduling/config.rs):
// Dynamo's defaults overlaid with DYN_* environment variables, unparsable values
// ignored (reported as warnings).
func KvRouterConfigFromEnv(lookup func(string) (string, bool)) (KvRouterConfig, []string, error) {
	s, err := ParseFrontendSettings(nil, lookup)
	return s.Config, s.Warnings, err
}

func (st *cfgFrontendState) applyArgs(args []string) error {
	byFlag := make(map[string]*cfgFrontendSetting, 2*len(cfgFrontendSettings))
	for i := range cfgFrontendSettings {
		fs := &cfgFrontendSettings[i]
		byFlag[fs.flag] = fs
		for _, a := range fs.aliases {
			byFlag[a] = fs
		}
	}
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if !strings.HasPrefix(arg, "--") {
			continue
		}
		name, val, hasVal := strings.Cut(arg, "=")
		fs, negated := byFlag[name], false
		if fs == nil && strings.HasPrefix(name, "--no-") {
			if cand := byFlag["--"+strings.TrimPrefix(name, "--no-")]; cand != nil && cand.kind == cfgKindBool {
				fs, negated = cand, true
			}
		}
		if fs == nil {
			continue
		}
		var v cfgSettingValue
		switch {
		case fs.kind == cfgKindBool && negated:
			if hasVal {
				return configErrorf("%s does not take a value", name)
			}
			v.b = false
		case fs.kind == cfgKindBool && !hasVal:
			v.b = true
		default:
			if !hasVal {
				if i+1 >= len(args) {
					return configErrorf("%s needs a value", name)
				}
				i++
				val = args[i]
			}
			var err error
			if v, err = cfgParseSettingValue(fs.kind, val, false); err != nil {
				return configErrorf("%s: %v", name, err)
			}
		}
		if err := fs.set(st, v); err != nil {
			return err
		}
	}
	return nil
}

func (st *cfgFrontendState) finish() error {
	if st.legacyWeight != nil {
		st.Warnings = append(st.Warnings, "overlap_score_weight is deprecated; mapped to prefill_load_scale (and overlap_score_credit=0 when it is 0)")
		st.Config.ApplyLegacyOverlapScoreWeight(*st.legacyWeight)
	}
	if st.loadAware {
		st.RouterMode = "kv"
		c := &st.Config
		c.OverlapScoreCredit = 0
		c.UseKvEvents = false
		c.RouterTrackActiveBlocks = true
		c.RouterAssumeKvReuse = false
		c.RouterTrackPrefillTokens = true
		c.UseRemoteIndexer = false
		c.ServeIndexer = false
		c.SharedCacheMultiplier, st.sharedMultSet = 0, true
		c.SharedCacheType = SharedCacheNone
		c.RouterPredictedTTLSecs = nil
	}
	if st.condDisaggConfig != nil {
		if !st.Config.ConditionalDisaggEnabled {
			return configErrorf("--router-conditional-disagg-config requires --router-conditional-disagg")
		}
		if err := cfgApplyCondDisaggJSON(&st.Config, *st.condDisaggConfig); err != nil {
			return err
		}
	}
	if st.Config.SharedCacheType != SharedCacheNone && !st.sharedMultSet {
		st.Config.SharedCacheMultiplier = 0.5
	}
	if err := st.Config.Validate(); err != nil {
		return err
	}
	return st.Thresholds.Validate()
}

// cfgApplyCondDisaggJSON applies --router-conditional-disagg-config: a JSON
// object with policy, eff_isl_threshold, eff_isl_ratio_threshold,
// prefill_busy_threshold and decode_busy_threshold (unknown fields rejected).
func cfgApplyCondDisaggJSON(c *KvRouterConfig, s string) error {
	obj, err := cfgDecodeObject([]byte(s), "--router-conditional-disagg-config")
	if err != nil {
		return err
	}
	for _, k := range cfgSortedKeys(obj) {
		f := cfgJSONField{name: "--router-conditional-disagg-config " + k, raw: obj[k]}
		var str string
		switch k {
		case "policy":
			err = f.str(&str)
			c.ConditionalDisaggPolicy = ConditionalDisaggPolicy(str)
		case "eff_isl_threshold":
			err = f.uint(&c.ConditionalDisaggEffISLThreshold, 64)
		case "eff_isl_ratio_threshold":
			err = f.float(&c.ConditionalDisaggEffISLRatioThreshold)
		case "prefill_busy_threshold":
			err = f.optFloat(&c.ConditionalDisaggPrefillBusyThreshold)
		case "decode_busy_threshold":
			err = f.optFloat(&c.ConditionalDisaggDecodeBusyThreshold)
		default:
			err = configErrorf("--router-conditional-disagg-config has unknown field %q", k)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// cfgParseSettingValue parses one flag or env value. Numbers follow Rust's f64/u64
// FromStr (decimal with optional exponent, inf, nan; no hex, no underscores).
// Booleans follow dynamo_truthy: 1/true/on/yes and 0/false/off/no, any case,
// surrounding space ignored; from the environment an empty value means unset.
// "None" (any case) clears an optional float, as the frontend's nullable_float does.
func cfgParseSettingValue(kind cfgSettingKind, raw string, fromEnv bool) (cfgSettingValue, error) {
	var v cfgSettingValue
	switch kind {
	case cfgKindString:
		v.s = raw
	case cfgKindBool:
		switch strings.ToLower(strings.TrimSpace(raw)) {
		case "1", "true", "on", "yes":
			v.b = true
		case "0", "false", "off", "no":
			v.b = false
		case "":
			if fromEnv {
				return v, errors.New("empty value leaves the default")
			}
			return v, errors.New("expected a boolean (true/false, 1/0, on/off, yes/no)")
		default:
			return v, fmt.Errorf("expected a boolean (true/false, 1/0, on/off, yes/no), got %q", raw)
		}
	case cfgKindUint:
		s := strings.TrimPrefix(raw, "+")
		u, err := strconv.ParseUint(s, 10, 64)
		if err != nil || s != raw && strings.HasPrefix(s, "+") {
			return v, fmt.Errorf("expected a non-negative integer, got %q", raw)
		}
		v.u = u
	case cfgKindFloat, cfgKindOptFloat:
		if kind == cfgKindOptFloat && strings.EqualFold(strings.TrimSpace(raw), "none") {
			v.null = true
			return v, nil
		}
		f, err := cfgParseRustFloat(raw)
		if err != nil {
			return v, err
		}
		v.f = f
	}
	return v, nil
}

func cfgParseRustFloat(raw string) (float64, error) {
	body := strings.TrimLeft(raw, "+-")
	if raw == "" || strings.ContainsAny(raw, "_ \t\n") || strings.HasPrefix(strings.ToLower(body), "0x") {
		return 0, fmt.Errorf("expected a number, got %q", raw)
	}
	f, err := strconv.ParseFloat(raw, 64)
	if err != nil {
		return 0, fmt.Errorf("expected a number, got %q", raw)
	}
	return f, nil
}
