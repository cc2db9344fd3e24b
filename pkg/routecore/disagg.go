package routecore

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
)

// This file ports the frontend PrefillRouter's generate path
// (lib/llm/src/kv_router/prefill_router/{mod,execution,conditional_bypass}.rs):
// aggregated fallback when no prefill worker exists, the conditional
// disaggregation peek and bypass, remote prefill selection, KV-transfer
// topology derivation from the selected prefill worker
// (get_kv_transfer_routing_constraints), the merge into the decode request
// (merge_decode_topology_constraints) and decode selection under the decode
// override (build_decode_router_override).

// DecodeOverride mirrors build_decode_router_override: the per-request override
// the frontend puts on the decode leg of a disaggregated request. It always sets
// assume_kv_reuse=false and track_prefill_tokens=false; it forces
// overlap_score_credit=0 unless conditional disaggregation is enabled, in which
// case the request's credit (or, when the request has none, the decode router's
// base credit) is kept. Every other field, such as router_temperature, is kept.
func DecodeOverride(base RouterConfigOverride, conditionalDisaggEnabled bool) RouterConfigOverride {
	out := base
	if !conditionalDisaggEnabled {
		zero := 0.0
		out.OverlapScoreCredit = &zero
	}
	no := false
	out.AssumeKvReuse = &no
	noTrack := false
	out.TrackPrefillTokens = &noTrack
	return out
}

// PrefillRouterConfig returns the configuration of the frontend's prefill KV
// router: the frontend KvRouterConfig with router_track_active_blocks=false (as
// the prefill-router activation code does). router_track_output_blocks is also
// cleared, because it has no effect without active-block tracking and would
// otherwise fail validation. A prefill worker's own model-card router_config
// replaces this in Dynamo; pass it as DisaggInput.PrefillConfig.
func PrefillRouterConfig(frontend KvRouterConfig) KvRouterConfig {
	c := frontend
	c.RouterTrackActiveBlocks = false
	c.RouterTrackOutputBlocks = false
	return c
}

// DisaggMode is how a request was (or would be) served.
type DisaggMode string

const (
	// DisaggModeAggregated means no prefill worker exists, so the prefill router is not
	// active and the request goes straight to the decode (aggregated) router.
	DisaggModeAggregated DisaggMode = "aggregated"
	// DisaggModeDisaggregated means remote prefill on a prefill worker, then decode.
	DisaggModeDisaggregated DisaggMode = "disaggregated"
	// DisaggModeBypassed means conditional disaggregation skipped remote prefill; the
	// peeked decode worker runs prefill and decode.
	DisaggModeBypassed DisaggMode = "bypassed"
)

// Stage names used in DisaggDecision.FailedStage.
const (
	StagePrefill  = "prefill"
	StageTransfer = "kv-transfer"
	StageDecode   = "decode"
)

// DisaggInput is everything one disaggregated routing decision reads.
type DisaggInput struct {
	// Go, when set, lets large selections use several cores (see Selector.Go).
	Go func(f func()) `json:"-"`
	// Config is the frontend KvRouterConfig; the decode router uses it as is.
	Config KvRouterConfig `json:"config"`
	// PrefillConfig replaces PrefillRouterConfig(Config) for the prefill router
	// (Dynamo uses a prefill worker's model-card router_config when present).
	PrefillConfig *KvRouterConfig `json:"prefillConfig,omitempty"`
	// Thresholds are the frontend's busy thresholds (overload), used by both legs.
	Thresholds BusyThresholds `json:"thresholds"`
	// PrefillWorkers and DecodeWorkers are the two pools. Their WorkerType is set
	// from the pool ("prefill" / "decode"), because in Dynamo it is the router's
	// role, not a worker property.
	PrefillWorkers []Worker `json:"prefillWorkers"`
	DecodeWorkers  []Worker `json:"decodeWorkers"`
	// PrefillRuntimeConfigs are the runtime configs the frontend has discovered for
	// the prefill endpoint. Nil means "built from PrefillWorkers"; set it to model
	// discovery lag (a selected prefill worker missing from the configs).
	PrefillRuntimeConfigs map[WorkerID]RuntimeConfig `json:"prefillRuntimeConfigs,omitempty"`
	// Request is the user's request. Its Constraints, Override, AllowedWorkers and
	// Overlap apply to both legs (Overlap maps are keyed by candidate, so one map
	// can hold both pools); SessionAffinity applies to the decode leg only.
	// Request.Pinned is ignored: use PrefillPin and DecodePin.
	Request Request `json:"request"`
	// PrefillPin is the request's prefill_worker_id (it also disables the
	// conditional-disaggregation peek). DecodePin is its decode_worker_id.
	PrefillPin *WorkerWithDpRank `json:"prefillPin,omitempty"`
	DecodePin  *WorkerWithDpRank `json:"decodePin,omitempty"`
	// SkipAlternatives leaves PrefillAlternatives and OutcomeDependsOnDraw
	// out when the prefill pick is random. They are evidence for a reader and
	// draw nothing, so the decision is the same; a caller deciding many
	// requests (a simulation) skips their cost.
	SkipAlternatives bool `json:"-"`
	// PrefillOnly stops after the transfer derivation: the decode hop is
	// routed by another router mode (since Dynamo #13192/#13197 each worker
	// set's router_config governs its own hop). Conditional disaggregation
	// and the alternatives, which need the KV decode router, are skipped.
	PrefillOnly bool `json:"-"`
	// ApplySita confines each KV hop's selection to its SITA size band
	// (sita_enabled in that hop's configuration), computed as
	// pick_default_worker does inside the hop: over the hop's pool with the
	// hop's own constraints, so the decode band is taken among the decode
	// workers the transfer constraint leaves. The bands are in
	// DisaggDecision.PrefillSita / DecodeSita.
	ApplySita bool `json:"-"`
	// sitaSink receives the bands (set by RouteDisaggregated).
	sitaSink *sitaBands
}

// PrefillOutcome is what happens to a request if remote prefill lands on one
// particular prefill candidate: the transfer derivation from that worker, the
// decode constraints after the merge, and the decode selection.
type PrefillOutcome struct {
	// Prefill is the prefill candidate remote prefill lands on.
	Prefill WorkerWithDpRank `json:"prefill"`
	// Probability is the chance the production prefill router picks this
	// candidate (its tie share or softmax probability); 0 for a candidate only
	// reachable by pinning.
	Probability float64 `json:"probability"`
	// Transfer is the derivation from that worker; DecodeConstraints the user's
	// constraints merged with it.
	Transfer          TransferDerivation `json:"transfer"`
	DecodeConstraints RoutingConstraints `json:"decodeConstraints"`
	// Decode is the decode selection (nil when the transfer derivation failed).
	// It is evaluated with draw 0, so a decode tie resolves to its first member.
	Decode *Decision `json:"decode,omitempty"`
	// Routable reports that the request would be served.
	Routable bool `json:"routable"`
	// Err is why it would fail; Error is its text.
	Err   error  `json:"-"`
	Error string `json:"error,omitempty"`
}

// DisaggDecision is the evidence of one disaggregated routing decision.
type DisaggDecision struct {
	// Mode is how the request is served; Explanation says why in one sentence.
	Mode        DisaggMode `json:"mode"`
	Explanation string     `json:"explanation"`
	// Conditional is the conditional-disaggregation decision, when it ran.
	// ConditionalSkipped says why it did not run although enabled.
	Conditional        *ConditionalDecision `json:"conditional,omitempty"`
	ConditionalSkipped string               `json:"conditionalSkipped,omitempty"`
	// DecodePeek and PrefillPeek are the no-admission selections behind the
	// conditional decision.
	DecodePeek  *Decision `json:"decodePeek,omitempty"`
	PrefillPeek *Decision `json:"prefillPeek,omitempty"`
	// Prefill is the remote prefill selection.
	Prefill *Decision `json:"prefill,omitempty"`
	// Transfer is the KV-transfer derivation from the selected prefill worker.
	Transfer *TransferDerivation `json:"transfer,omitempty"`
	// DecodeConstraints are the user's constraints merged with Transfer's.
	DecodeConstraints RoutingConstraints `json:"decodeConstraints"`
	// DecodeOverride is the override the decode leg ran with.
	DecodeOverride RouterConfigOverride `json:"decodeOverride"`
	// Decode is the decode (or aggregated, or bypass) selection.
	Decode *Decision `json:"decode,omitempty"`
	// PrefillAlternatives lists, when the prefill pick is random (a T=0 tie or
	// T>0 sampling), the outcome for every prefill candidate production could
	// pick, in canonical order: a required-transfer request may succeed or fail
	// depending on the draw.
	PrefillAlternatives []PrefillOutcome `json:"prefillAlternatives,omitempty"`
	// OutcomeDependsOnDraw reports that PrefillAlternatives disagree on whether
	// the request is routable.
	OutcomeDependsOnDraw bool `json:"outcomeDependsOnDraw,omitempty"`
	// PrefillSita and DecodeSita are the hops' SITA bands (ApplySita), the
	// decode one of the selection that ran last.
	PrefillSita *SitaBand `json:"prefillSita,omitempty"`
	DecodeSita  *SitaBand `json:"decodeSita,omitempty"`
	// FailedStage is StagePrefill, StageTransfer or StageDecode when Err is set.
	FailedStage string `json:"failedStage,omitempty"`
	Err         error  `json:"-"`
	Error       string `json:"error,omitempty"`
}

// DecodeTransferError reports a decode selection that failed while the decode
// request carried a required KV-transfer taint derived from the prefill worker
// (there is no cross-domain fallback in Dynamo). It unwraps to the selection
// error (for example ErrNoEndpoints).
type DecodeTransferError struct {
	// Transfer is the derivation that produced the required taint.
	Transfer TransferDerivation
	// DomainDecodeWorkers are the decode workers that carry the transfer taint,
	// eligible or not.
	DomainDecodeWorkers []WorkerID
	// Err is the decode selection error.
	Err error
}

// Error names the domain and says how to fix the deployment.
func (e *DecodeTransferError) Error() string {
	t := e.Transfer
	where := t.Domain + "=" + t.Value
	var b strings.Builder
	fmt.Fprintf(&b, "decode selection failed: %v: kv transfer from prefill worker %s requires decode in %s (taint %s)",
		e.Err, t.PrefillWorker, where, t.Taint)
	if len(e.DomainDecodeWorkers) == 0 {
		fmt.Fprintf(&b, " and no decode worker is in %s: add decode workers to %s or use preferred enforcement with a preferred weight", where, where)
	} else {
		fmt.Fprintf(&b, " and decode workers %s in %s are not eligible (see the decode candidates): free capacity there, add decode workers to %s or use preferred enforcement with a preferred weight",
			topoJoinIDs(e.DomainDecodeWorkers), where, where)
	}
	return b.String()
}

// Unwrap returns the selection error.
func (e *DecodeTransferError) Unwrap() error { return e.Err }

// disaggStage prepares the workers and request of one router leg. role is the
// router's worker type. With router_track_active_blocks off the router keeps no
// block ledger, so active decode blocks read 0 and the request adds none; with
// assume_kv_reuse resolved false every request block counts as new
// (AdditionalBlocksAllNew).
func disaggStage(cfg KvRouterConfig, workers []Worker, role string, req Request) ([]Worker, Request) {
	out := make([]Worker, len(workers))
	for i, w := range workers {
		w.WorkerType = role
		if !cfg.RouterTrackActiveBlocks && disaggHasDecodeBlocks(w.Loads) {
			loads := make(map[uint32]RankLoad, len(w.Loads))
			for r, l := range w.Loads {
				l.ActiveDecodeBlocks = 0
				loads[r] = l
			}
			w.Loads = loads
		}
		out[i] = w
	}
	switch {
	case !cfg.RouterTrackActiveBlocks:
		req.AdditionalActiveBlocks, req.AdditionalBlocksRule = nil, AdditionalBlocksNone
	case !req.Override.Resolve(cfg).AssumeKvReuse:
		req.AdditionalActiveBlocks, req.AdditionalBlocksRule = nil, AdditionalBlocksAllNew
	}
	return out, req
}

// disaggHasDecodeBlocks reports whether a rank has active decode blocks to
// zero (a worker without any keeps its map: nothing would change).
func disaggHasDecodeBlocks(loads map[uint32]RankLoad) bool {
	for _, l := range loads {
		if l.ActiveDecodeBlocks != 0 {
			return true
		}
	}
	return false
}

func (in DisaggInput) prefillConfig() KvRouterConfig {
	if in.PrefillConfig != nil {
		return *in.PrefillConfig
	}
	return PrefillRouterConfig(in.Config)
}

func (in DisaggInput) prefillRuntimeConfigs() map[WorkerID]RuntimeConfig {
	if in.PrefillRuntimeConfigs != nil {
		return in.PrefillRuntimeConfigs
	}
	m := make(map[WorkerID]RuntimeConfig, len(in.PrefillWorkers))
	for _, w := range in.PrefillWorkers {
		m[w.ID] = w.Runtime
	}
	return m
}

// baseRequest is the user's request with the per-leg fields cleared.
func (in DisaggInput) baseRequest() Request {
	r := in.Request
	r.Pinned, r.SessionAffinity = nil, nil
	return r
}

func (in DisaggInput) selectPrefill(r Rand, pin *WorkerWithDpRank, withDraw bool, u float64) (Decision, error) {
	cfg := in.prefillConfig()
	req := in.baseRequest()
	req.Pinned = pin
	workers, req := disaggStage(cfg, in.PrefillWorkers, WorkerTypePrefill, req)
	if in.ApplySita {
		b := sitaRestrict(cfg, in.Thresholds, workers, &req)
		in.sitaOut(&b, true)
	}
	sel := Selector{Go: in.Go}
	if withDraw {
		return sel.SelectWithDraw(cfg, in.Thresholds, workers, req, u)
	}
	return sel.Select(cfg, in.Thresholds, workers, req, r)
}

func (in DisaggInput) selectDecode(r Rand, c RoutingConstraints, o RouterConfigOverride, pin *WorkerWithDpRank, withDraw bool, u float64) (Decision, error) {
	req := in.baseRequest()
	req.Constraints, req.Override = c, o
	req.Pinned, req.SessionAffinity = pin, in.Request.SessionAffinity
	workers, req := disaggStage(in.Config, in.DecodeWorkers, WorkerTypeDecode, req)
	if in.ApplySita {
		b := sitaRestrict(in.Config, in.Thresholds, workers, &req)
		in.sitaOut(&b, false)
	}
	sel := Selector{Go: in.Go}
	if withDraw {
		return sel.SelectWithDraw(in.Config, in.Thresholds, workers, req, u)
	}
	return sel.Select(in.Config, in.Thresholds, workers, req, r)
}

// sitaOut records a hop's SITA band where RouteDisaggregated reads it.
func (in DisaggInput) sitaOut(b *SitaBand, prefill bool) {
	if in.sitaSink == nil {
		return
	}
	if prefill {
		in.sitaSink.prefill = b
	} else {
		in.sitaSink.decode = b
	}
}

// sitaBands collects the bands of one RouteDisaggregated call.
type sitaBands struct{ prefill, decode *SitaBand }

func disaggCandidate(d Decision, c WorkerWithDpRank) (CandidateEvidence, bool) {
	for _, e := range d.Candidates {
		if e.Candidate == c {
			return e, true
		}
	}
	return CandidateEvidence{}, false
}

func disaggWorker(ws []Worker, id WorkerID) (Worker, bool) {
	for _, w := range ws {
		if w.ID == id {
			return w, true
		}
	}
	return Worker{}, false
}

// disaggInvalid reports errors that mean the inputs, not the cluster, are wrong.
func disaggInvalid(err error) bool {
	return errors.Is(err, ErrInvalidRequest) || errors.Is(err, ErrInvalidConfig) || errors.Is(err, ErrInvalidOverride)
}

// decodeAfterTransfer runs the decode leg for one prefill landing and wraps a
// failure under transfer constraints in a DecodeTransferError.
func (in DisaggInput) decodeAfterTransfer(r Rand, t TransferDerivation, withDraw bool, u float64) (RoutingConstraints, RouterConfigOverride, Decision, error) {
	merged, override, dec, err := in.decodeUnder(r, t, withDraw, u, nil)
	return merged, override, *dec, err
}

// decodeMemo caches deterministic decode legs (draw 0) by their merged
// constraints: every prefill landing in the same domain leads to the same decode
// selection, so evaluating all landings costs one decode selection per distinct
// constraint set instead of one per prefill candidate.
type decodeMemo struct {
	dec      map[string]*Decision
	err      map[string]error
	inDomain map[string][]WorkerID
}

func newDecodeMemo() *decodeMemo {
	return &decodeMemo{dec: map[string]*Decision{}, err: map[string]error{}, inDomain: map[string][]WorkerID{}}
}

// constraintsKey is a canonical text form of c (weights by their bits).
func constraintsKey(c RoutingConstraints) string {
	var b strings.Builder
	req := slices.Clone(c.RequiredTaints)
	slices.Sort(req)
	for _, t := range req {
		b.WriteString(t)
		b.WriteByte(0)
	}
	b.WriteByte(1)
	for _, k := range c.SortedPreferred() {
		fmt.Fprintf(&b, "%s\x00%x\x00", k, math.Float64bits(c.PreferredTaints[k]))
	}
	return b.String()
}

// decodeUnder runs the decode leg under the constraints derived in t; with a
// memo (deterministic draws only) identical constraint sets are selected once.
func (in DisaggInput) decodeUnder(r Rand, t TransferDerivation, withDraw bool, u float64, memo *decodeMemo) (RoutingConstraints, RouterConfigOverride, *Decision, error) {
	merged := MergeFrontend(in.Request.Constraints, t.Constraints)
	override := DecodeOverride(in.Request.Override, in.Config.ConditionalDisaggEnabled)
	var dec *Decision
	var err error
	key := ""
	if memo != nil {
		key = constraintsKey(merged)
		dec, err = memo.dec[key], memo.err[key]
	}
	if dec == nil {
		var d Decision
		d, err = in.selectDecode(r, merged, override, in.DecodePin, withDraw, u)
		dec = &d
		if memo != nil {
			memo.dec[key], memo.err[key] = dec, err
		}
	}
	if err != nil && t.Rule == TransferRuleRequired && !disaggInvalid(err) {
		inDomain, ok := []WorkerID(nil), false
		if memo != nil {
			inDomain, ok = memo.inDomain[t.Taint]
		}
		if !ok {
			for i := range in.DecodeWorkers {
				w := &in.DecodeWorkers[i]
				if _, found := slices.BinarySearch(w.effectiveTaints(), t.Taint); found {
					inDomain = append(inDomain, w.ID)
				}
			}
			slices.Sort(inDomain)
			if memo != nil {
				memo.inDomain[t.Taint] = inDomain
			}
		}
		err = &DecodeTransferError{Transfer: t, DomainDecodeWorkers: inDomain, Err: err}
	}
	return merged, override, dec, err
}

// outcomeFor evaluates one prefill landing with deterministic draws. Outcomes
// evaluated with the same memo may share their Decode decision.
func (in DisaggInput) outcomeFor(configs map[WorkerID]RuntimeConfig, c WorkerWithDpRank, p float64, memo *decodeMemo) PrefillOutcome {
	o := PrefillOutcome{Prefill: c, Probability: p}
	t, err := DeriveTransferConstraints(configs, c.WorkerID)
	o.Transfer = t
	if err == nil {
		o.DecodeConstraints, _, o.Decode, err = in.decodeUnder(nil, t, true, 0, memo)
	}
	o.Routable = err == nil
	if err != nil {
		o.Err, o.Error = err, err.Error()
	}
	return o
}

// RouteDisaggregated mirrors the frontend PrefillRouter's generate path for one
// request and returns the evidence of every step:
//
//  1. no prefill workers → the prefill router is not active and the request is
//     routed by the decode router alone (aggregated), with its own override;
//  2. conditional disaggregation (when enabled, the request has tokens and no
//     prefill pin): a no-admission peek of the decode router with the request's
//     own override and constraints, a prefill peek when the policy needs the
//     prefill-busy signal, then DecideConditional; on bypass the decode leg is
//     pinned to the peeked decode worker and no remote prefill happens; a peek
//     error falls back to remote prefill, as in Dynamo;
//  3. remote prefill: the prefill router (PrefillRouterConfig) selects with the
//     user's constraints and override; a failure fails the request;
//  4. DeriveTransferConstraints from the selected prefill worker; a failure
//     fails the request before dispatch;
//  5. MergeFrontend(user constraints, derived) and decode selection with
//     DecodeOverride.
//
// When the prefill pick is random (several tied candidates at T=0, or T>0),
// PrefillAlternatives gives the outcome for every candidate production could
// pick. Draws come from r in the order decode peek, prefill peek, prefill,
// decode, and only when a selection is random; r may be nil when no selection
// is. The returned error is DisaggDecision.Err, except that invalid inputs
// (ErrInvalidRequest, ErrInvalidConfig, ErrInvalidOverride) are returned as is.
func RouteDisaggregated(in DisaggInput, r Rand) (DisaggDecision, error) {
	if !in.ApplySita {
		return routeDisaggregated(in, r)
	}
	sink := &sitaBands{}
	in.sitaSink = sink
	d, err := routeDisaggregated(in, r)
	d.PrefillSita, d.DecodeSita = sink.prefill, sink.decode
	return d, err
}

func routeDisaggregated(in DisaggInput, r Rand) (DisaggDecision, error) {
	var d DisaggDecision
	fail := func(stage string, err error) (DisaggDecision, error) {
		d.FailedStage, d.Err, d.Error = stage, err, err.Error()
		if d.Explanation == "" {
			d.Explanation = fmt.Sprintf("the request fails at the %s stage: %v", stage, err)
		}
		return d, err
	}

	// 1. Prefill router not active.
	if len(in.PrefillWorkers) == 0 {
		d.Mode = DisaggModeAggregated
		d.DecodeConstraints = in.Request.Constraints.Clone()
		d.DecodeOverride = in.Request.Override
		dec, err := in.selectDecode(r, d.DecodeConstraints, d.DecodeOverride, in.DecodePin, false, 0)
		d.Decode = &dec
		if err != nil {
			return fail(StageDecode, err)
		}
		d.Explanation = fmt.Sprintf("no prefill workers are registered, so the prefill router is inactive and the request is served aggregated on %s", dec.Selected)
		return d, nil
	}

	// 2. Conditional disaggregation.
	if in.Config.ConditionalDisaggEnabled && !in.PrefillOnly {
		switch {
		case in.PrefillPin != nil:
			d.ConditionalSkipped = "the request pins a prefill worker"
		case in.Request.ISL <= 0:
			d.ConditionalSkipped = "the request has no tokens"
		default:
			bypassed, err := in.conditional(&d, r)
			if err != nil {
				if disaggInvalid(err) {
					return d, err
				}
				d.ConditionalSkipped = "the decode peek failed (" + err.Error() + "); Dynamo logs this and falls back to remote prefill"
			} else if bypassed {
				return d, d.Err
			}
		}
	}

	// 3. Remote prefill.
	d.Mode = DisaggModeDisaggregated
	pre, err := in.selectPrefill(r, in.PrefillPin, false, 0)
	d.Prefill = &pre
	if err != nil {
		if disaggInvalid(err) {
			return d, err
		}
		return fail(StagePrefill, fmt.Errorf("prefill selection failed (the request is not retried as aggregated): %w", err))
	}
	configs := in.prefillRuntimeConfigs()
	if alts := prefillAlternatives(pre); len(alts) > 1 && !in.SkipAlternatives && !in.PrefillOnly {
		routable := 0
		memo := newDecodeMemo()
		for _, c := range alts {
			o := in.outcomeFor(configs, c.Candidate, c.Probability, memo)
			if o.Routable {
				routable++
			}
			d.PrefillAlternatives = append(d.PrefillAlternatives, o)
		}
		d.OutcomeDependsOnDraw = routable > 0 && routable < len(alts)
	}

	// 4. Transfer constraints from the selected prefill worker.
	t, err := DeriveTransferConstraints(configs, pre.Selected.WorkerID)
	d.Transfer = &t
	if err != nil {
		return fail(StageTransfer, err)
	}

	if in.PrefillOnly {
		d.DecodeConstraints = MergeFrontend(in.Request.Constraints, t.Constraints)
		d.Explanation = fmt.Sprintf("remote prefill on %s; %s; the decode hop is routed by its own router mode", pre.Selected, t.Explanation)
		return d, nil
	}

	// 5. Decode.
	merged, override, dec, err := in.decodeAfterTransfer(r, t, false, 0)
	d.DecodeConstraints, d.DecodeOverride, d.Decode = merged, override, &dec
	if err != nil {
		if disaggInvalid(err) {
			return d, err
		}
		return fail(StageDecode, err)
	}
	d.Explanation = fmt.Sprintf("remote prefill on %s, then decode on %s; %s", pre.Selected, dec.Selected, t.Explanation)
	if d.OutcomeDependsOnDraw {
		d.Explanation += "; other equally likely prefill picks would fail (see prefillAlternatives)"
	}
	return d, nil
}

// prefillAlternatives lists the prefill candidates production could pick, with
// their probability: the T=0 tie set, or every candidate with a positive
// softmax probability. A pinned or affinity pick has no alternative.
func prefillAlternatives(pre Decision) []CandidateEvidence {
	if pre.SelectionRule == RulePinned || pre.SelectionRule == RuleSessionAffinity {
		return nil
	}
	var out []CandidateEvidence
	for _, c := range pre.Candidates {
		if c.Scored && c.Eligible && c.Probability > 0 {
			out = append(out, c)
		}
	}
	return out
}

// conditional runs the peeks and the decision; it returns true when the request
// is bypassed (d is then complete).
func (in DisaggInput) conditional(d *DisaggDecision, r Rand) (bool, error) {
	peek, err := in.selectDecode(r, in.Request.Constraints, in.Request.Override, in.DecodePin, false, 0)
	d.DecodePeek = &peek
	if err != nil {
		return false, err
	}
	ev, _ := disaggCandidate(peek, peek.Selected)
	input := ConditionalInput{
		PromptTokens:          uint64(in.Request.ISL),
		DecodeWorker:          peek.Selected,
		DecodeCachedTokens:    ev.Terms.CachedTokens,
		DecodePotentialBlocks: uint64(ev.Terms.DecodeBlocks),
	}
	if w, ok := disaggWorker(in.DecodeWorkers, peek.Selected.WorkerID); ok {
		input.DecodeTotalKvBlocks = w.Runtime.TotalKvBlocks
	}
	if NeedsPrefillPeek(in.Config) {
		pp, perr := in.selectPrefill(r, nil, false, 0)
		d.PrefillPeek = &pp
		switch {
		case disaggInvalid(perr):
			return false, perr
		case perr == nil:
			pev, _ := disaggCandidate(pp, pp.Selected)
			input.Prefill = PrefillPeek{Ran: true, Worker: pp.Selected, ActivePrefillTokens: pev.Terms.ActivePrefillTokens}
			if w, ok := disaggWorker(in.PrefillWorkers, pp.Selected.WorkerID); ok {
				input.Prefill.MaxNumBatchedTokens = w.Runtime.MaxNumBatchedTokens
			}
		}
	}
	cd, err := DecideConditional(in.Config, input)
	if err != nil {
		return false, err
	}
	d.Conditional = &cd
	if !cd.Bypass {
		return false, nil
	}
	d.Mode = DisaggModeBypassed
	d.DecodeConstraints = in.Request.Constraints.Clone()
	d.DecodeOverride = in.Request.Override
	pin := peek.Selected
	dec, err := in.selectDecode(r, d.DecodeConstraints, d.DecodeOverride, &pin, false, 0)
	d.Decode = &dec
	if err != nil {
		d.FailedStage, d.Err, d.Error = StageDecode, err, err.Error()
		d.Explanation = fmt.Sprintf("conditional disaggregation pinned decode worker %s, which then failed: %v", pin, err)
		return true, nil
	}
	d.Explanation = cd.Explanation
	return true, nil
}

// EvaluateAllPrefill answers "can any prefill landing make this request fail":
// for every prefill candidate that is eligible under the user's constraints
// (in canonical order), it pins remote prefill there (as a request with
// prefill_worker_id would, which also skips conditional disaggregation), derives
// the transfer constraints and runs the decode leg with draw 0. Probability is
// the chance the unpinned prefill router picks the candidate. If the prefill
// pool is empty or no candidate is eligible it returns nil and the prefill
// selection error; invalid inputs are returned as errors too.
func EvaluateAllPrefill(in DisaggInput) ([]PrefillOutcome, error) {
	if len(in.PrefillWorkers) == 0 {
		return nil, fmt.Errorf("%w: no prefill workers: the request would be served aggregated", ErrNoEndpoints)
	}
	pre, err := in.selectPrefill(nil, nil, true, 0)
	if err != nil {
		return nil, err
	}
	configs := in.prefillRuntimeConfigs()
	var out []PrefillOutcome
	memo := newDecodeMemo()
	for _, c := range pre.Candidates {
		if !c.Eligible {
			continue
		}
		out = append(out, in.outcomeFor(configs, c.Candidate, c.Probability, memo))
	}
	return out, nil
}

// FailingPrefillWorkers returns, sorted and de-duplicated, the prefill workers
// whose outcome is not routable.
func FailingPrefillWorkers(outcomes []PrefillOutcome) []WorkerID {
	set := map[WorkerID]bool{}
	for _, o := range outcomes {
		if !o.Routable {
			set[o.Prefill.WorkerID] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}
