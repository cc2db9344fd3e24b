package routecore

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
)

func TestDecodeRouterOverrideDisablesOverlapAndPrefillTracking(t *testing.T) {
	credit, temp := 0.5, 0.7
	o := DecodeOverride(RouterConfigOverride{OverlapScoreCredit: &credit, RouterTemperature: &temp}, false)
	if o.OverlapScoreCredit == nil || *o.OverlapScoreCredit != 0 || o.AssumeKvReuse == nil || *o.AssumeKvReuse ||
		o.TrackPrefillTokens == nil || *o.TrackPrefillTokens || o.RouterTemperature == nil || *o.RouterTemperature != 0.7 {
		t.Errorf("override %+v", o)
	}
	if credit != 0.5 {
		t.Error("input mutated")
	}
}

func TestDecodeRouterOverrideInheritsBaseOverlapWhenConditionalDisaggAllowsIt(t *testing.T) {
	o := DecodeOverride(RouterConfigOverride{}, true)
	if o.OverlapScoreCredit != nil || o.AssumeKvReuse == nil || *o.AssumeKvReuse || o.TrackPrefillTokens == nil || *o.TrackPrefillTokens {
		t.Errorf("override %+v", o)
	}
}

func TestDecodeRouterOverridePreservesRequestOverlapWhenConditionalDisaggAllowsIt(t *testing.T) {
	credit, temp := 0.25, 0.7
	o := DecodeOverride(RouterConfigOverride{OverlapScoreCredit: &credit, RouterTemperature: &temp}, true)
	if o.OverlapScoreCredit == nil || *o.OverlapScoreCredit != 0.25 || *o.AssumeKvReuse || *o.TrackPrefillTokens || *o.RouterTemperature != 0.7 {
		t.Errorf("override %+v", o)
	}
}

func TestPrefillRouterConfigDisablesActiveBlockTracking(t *testing.T) {
	c := DefaultKvRouterConfig()
	c.RouterTrackOutputBlocks = true
	p := PrefillRouterConfig(c)
	if p.RouterTrackActiveBlocks || p.RouterTrackOutputBlocks || !c.RouterTrackActiveBlocks {
		t.Errorf("prefill config %+v", p)
	}
	if err := p.Validate(); err != nil {
		t.Errorf("prefill config invalid: %v", err)
	}
}

// --- end-to-end fixtures -------------------------------------------------

const (
	dzA = "us-east-1a"
	dzB = "us-east-1b"
	dzC = "us-east-1c"
)

func dgRuntime(zone string, enf KvTransferEnforcement, weight *float64) RuntimeConfig {
	kv := uint64(1000)
	rc := RuntimeConfig{TotalKvBlocks: &kv, TopologyDomains: map[string]string{"zone": zone}}
	if enf != EnforcementNone || weight != nil {
		rc.KvTransferDomain, rc.KvTransferEnforcement, rc.KvTransferPreferredWeight = "zone", enf, weight
	}
	return rc
}

func dgPrefill(id WorkerID, zone string, enf KvTransferEnforcement, activePrefill uint64) Worker {
	return Worker{ID: id, Runtime: dgRuntime(zone, enf, nil), Loads: map[uint32]RankLoad{0: {ActivePrefillTokens: activePrefill}}}
}

func dgDecode(id WorkerID, zone string, activeDecodeBlocks uint64) Worker {
	return Worker{ID: id, Runtime: dgRuntime(zone, EnforcementNone, nil), Loads: map[uint32]RankLoad{0: {ActiveDecodeBlocks: activeDecodeBlocks}}}
}

func dgInput(prefill, decode []Worker) DisaggInput {
	return DisaggInput{
		Config:         DefaultKvRouterConfig(),
		PrefillWorkers: prefill,
		DecodeWorkers:  decode,
		Request:        Request{ISL: 64, BlockSize: 16},
	}
}

func TestRouteDisaggregatedHealthyThreeZoneRequired(t *testing.T) {
	in := dgInput(
		[]Worker{dgPrefill(1, dzA, EnforcementRequired, 0), dgPrefill(2, dzB, EnforcementRequired, 100), dgPrefill(3, dzC, EnforcementRequired, 200)},
		[]Worker{dgDecode(11, dzA, 50), dgDecode(12, dzB, 0), dgDecode(13, dzC, 0)},
	)
	d, err := RouteDisaggregated(in, nil)
	if err != nil {
		t.Fatalf("%v\n%+v", err, d)
	}
	if d.Mode != DisaggModeDisaggregated || d.Prefill.Selected.WorkerID != 1 || d.Decode.Selected.WorkerID != 11 {
		t.Fatalf("mode %s prefill %v decode %v", d.Mode, d.Prefill.Selected, d.Decode.Selected)
	}
	if d.Transfer.Rule != TransferRuleRequired || !reflect.DeepEqual(d.DecodeConstraints.RequiredTaints, []string{"dynamo.topology/zone=us-east-1a"}) {
		t.Errorf("transfer %+v constraints %+v", d.Transfer, d.DecodeConstraints)
	}
	// Decode 11 is the busiest decode worker but the only one in the domain.
	for _, c := range d.Decode.Candidates {
		if c.Candidate.WorkerID != 11 && (c.Eligible || c.Reason == nil || c.Reason.Code != ReasonRoutingConstraintsUnsatisfied) {
			t.Errorf("candidate %v should be excluded by the transfer taint: %+v", c.Candidate, c.Reason)
		}
	}
	// The decode leg ran with the decode override.
	o := d.DecodeOverride
	if *o.OverlapScoreCredit != 0 || *o.AssumeKvReuse || *o.TrackPrefillTokens {
		t.Errorf("decode override %+v", o)
	}
	if d.Decode.Weights.OverlapScoreCredit != 0 || d.Decode.Weights.TrackPrefillTokens {
		t.Errorf("decode weights %+v", d.Decode.Weights)
	}
	if len(d.PrefillAlternatives) != 0 || d.Explanation == "" {
		t.Errorf("alternatives %v explanation %q", d.PrefillAlternatives, d.Explanation)
	}
}

func TestRouteDisaggregatedPrefillOnlyZoneUnderRequiredFailsDecode(t *testing.T) {
	in := dgInput(
		[]Worker{dgPrefill(1, dzA, EnforcementRequired, 500), dgPrefill(3, dzC, EnforcementRequired, 0)},
		[]Worker{dgDecode(11, dzA, 0), dgDecode(12, dzB, 0)},
	)
	d, err := RouteDisaggregated(in, nil)
	if !errors.Is(err, ErrNoEndpoints) || d.Err != err || //nolint:errorlint // identity: the decision must carry the very error returned
		d.FailedStage != StageDecode {
		t.Fatalf("err %v stage %q", err, d.FailedStage)
	}
	var te *DecodeTransferError
	if !errors.As(err, &te) || te.Transfer.Domain != "zone" || te.Transfer.Value != dzC || len(te.DomainDecodeWorkers) != 0 {
		t.Fatalf("transfer error %+v", te)
	}
	msg := err.Error()
	for _, want := range []string{"zone=us-east-1c", "prefill worker 3", "add decode workers to zone=us-east-1c or use preferred enforcement with a preferred weight"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	if d.Decode == nil || d.Decode.ErrorKind != "NoEndpoints" || d.Error != msg {
		t.Errorf("decode evidence %+v", d.Decode)
	}
}

func TestRouteDisaggregatedPreferredFavoursSameZone(t *testing.T) {
	w := 1.0
	pre := Worker{ID: 1, Runtime: dgRuntime(dzA, EnforcementPreferred, &w), Loads: map[uint32]RankLoad{0: {}}}
	for _, tc := range []struct {
		sameZoneLoad uint64
		want         WorkerID
	}{
		// (100+4)·exp(−tanh 1) ≈ 48.6 < 60+4: the same-zone worker wins despite more load.
		{100, 11},
		// (200+4)·0.4669 ≈ 95.2 > 64: the other zone is still eligible and wins.
		{200, 12},
	} {
		in := dgInput([]Worker{pre}, []Worker{dgDecode(11, dzA, tc.sameZoneLoad), dgDecode(12, dzB, 60)})
		d, err := RouteDisaggregated(in, nil)
		if err != nil {
			t.Fatal(err)
		}
		if d.Decode.Selected.WorkerID != tc.want {
			t.Errorf("same-zone load %d: decode %v, want %d", tc.sameZoneLoad, d.Decode.Selected, tc.want)
		}
		if d.Transfer.Rule != TransferRulePreferred || d.DecodeConstraints.PreferredTaints["dynamo.topology/zone=us-east-1a"] != 1 {
			t.Errorf("constraints %+v", d.DecodeConstraints)
		}
		for _, c := range d.Decode.Candidates {
			wantMult := 1.0
			if c.Candidate.WorkerID == 11 {
				wantMult = libmExp(-libmTanh(1))
			}
			if !c.Eligible || math.Abs(c.Terms.Multiplier-wantMult) > 1e-12 {
				t.Errorf("candidate %v eligible %v multiplier %v want %v", c.Candidate, c.Eligible, c.Terms.Multiplier, wantMult)
			}
		}
	}
}

func TestRouteDisaggregatedNoTransferDomainIsUnconstrained(t *testing.T) {
	pre := Worker{ID: 1, Runtime: RuntimeConfig{TopologyDomains: map[string]string{"zone": dzC}}}
	in := dgInput([]Worker{pre}, []Worker{dgDecode(11, dzA, 0)})
	in.Request.Constraints = RoutingConstraints{PreferredTaints: map[string]float64{"gpu=h100": 0.5}}
	d, err := RouteDisaggregated(in, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d.Transfer.Rule != TransferRuleNoTransferDomain || d.Transfer.Constrained() || d.Decode.Selected.WorkerID != 11 {
		t.Errorf("transfer %+v decode %v", d.Transfer, d.Decode.Selected)
	}
	if !reflect.DeepEqual(d.DecodeConstraints, in.Request.Constraints) {
		t.Errorf("user constraints changed: %+v", d.DecodeConstraints)
	}
}

func TestRouteDisaggregatedEnforcementMissingFails(t *testing.T) {
	pre := Worker{ID: 1, Runtime: RuntimeConfig{TopologyDomains: map[string]string{"zone": dzA}, KvTransferDomain: "zone"}}
	d, err := RouteDisaggregated(dgInput([]Worker{pre}, []Worker{dgDecode(11, dzA, 0)}), nil)
	if !errors.Is(err, ErrEnforcementMissing) || d.FailedStage != StageTransfer || d.Decode != nil {
		t.Fatalf("err %v stage %q decode %v", err, d.FailedStage, d.Decode)
	}
	if !strings.Contains(err.Error(), "kv_transfer_enforcement is missing") || d.Transfer == nil || !d.Transfer.Failed {
		t.Errorf("evidence %+v", d.Transfer)
	}
}

func TestRouteDisaggregatedSelectedPrefillMissingFromConfigs(t *testing.T) {
	in := dgInput([]Worker{dgPrefill(1, dzA, EnforcementRequired, 0)}, []Worker{dgDecode(11, dzA, 0)})
	in.PrefillRuntimeConfigs = map[WorkerID]RuntimeConfig{2: dgRuntime(dzB, EnforcementRequired, nil)}
	d, err := RouteDisaggregated(in, nil)
	if !errors.Is(err, ErrSelectedPrefillMissing) || d.FailedStage != StageTransfer {
		t.Fatalf("err %v stage %q", err, d.FailedStage)
	}
}

func TestRouteDisaggregatedPrefillTieExposesEveryLanding(t *testing.T) {
	prefill := []Worker{dgPrefill(1, dzA, EnforcementRequired, 0), dgPrefill(2, dzB, EnforcementRequired, 0), dgPrefill(3, dzC, EnforcementRequired, 0)}
	decode := []Worker{dgDecode(11, dzA, 0), dgDecode(12, dzB, 0)}
	for _, tc := range []struct {
		draw    float64
		prefill WorkerID
		ok      bool
	}{{0, 1, true}, {0.5, 2, true}, {0.9, 3, false}} {
		d, err := RouteDisaggregated(dgInput(prefill, decode), &ScriptedRand{Draws: []float64{tc.draw}})
		if d.Prefill == nil || d.Prefill.Selected.WorkerID != tc.prefill || (err == nil) != tc.ok {
			t.Fatalf("draw %v: prefill %v err %v", tc.draw, d.Prefill.Selected, err)
		}
		if !d.OutcomeDependsOnDraw || len(d.PrefillAlternatives) != 3 {
			t.Fatalf("draw %v: alternatives %+v", tc.draw, d.PrefillAlternatives)
		}
		for _, o := range d.PrefillAlternatives {
			if math.Abs(o.Probability-1.0/3) > 1e-12 || o.Routable != (o.Prefill.WorkerID != 3) {
				t.Errorf("alternative %v p=%v routable=%v (%s)", o.Prefill, o.Probability, o.Routable, o.Error)
			}
		}
	}
}

// TestSkipAlternativesKeepsTheDecision: skipping the alternatives changes
// nothing but the alternatives: the same draws give the same prefill and
// decode picks, errors and explanation, with random ties on both legs and at
// T>0.
func TestSkipAlternativesKeepsTheDecision(t *testing.T) {
	prefill := []Worker{dgPrefill(1, dzA, EnforcementRequired, 0), dgPrefill(2, dzB, EnforcementRequired, 0), dgPrefill(3, dzC, EnforcementRequired, 0), dgPrefill(4, dzA, EnforcementRequired, 0)}
	decode := []Worker{dgDecode(11, dzA, 0), dgDecode(12, dzB, 0), dgDecode(13, dzA, 0)}
	for _, temp := range []float64{0, 0.7} {
		for _, draws := range [][]float64{{0, 0}, {0.3, 0.9}, {0.6, 0.1}, {0.99, 0.5}, {0.2, 0.2}} {
			in := dgInput(prefill, decode)
			in.Config.RouterTemperature = temp
			full, errFull := RouteDisaggregated(in, &ScriptedRand{Draws: draws})
			in.SkipAlternatives = true
			skip, errSkip := RouteDisaggregated(in, &ScriptedRand{Draws: draws})
			if len(full.PrefillAlternatives) < 2 {
				t.Fatalf("T=%v draws %v: the case must have a random prefill pick, got %d alternatives", temp, draws, len(full.PrefillAlternatives))
			}
			if skip.PrefillAlternatives != nil || skip.OutcomeDependsOnDraw {
				t.Errorf("T=%v draws %v: alternatives kept", temp, draws)
			}
			if (errFull == nil) != (errSkip == nil) || full.Prefill.Selected != skip.Prefill.Selected || full.Error != skip.Error ||
				(full.Decode == nil) != (skip.Decode == nil) || (full.Decode != nil && full.Decode.Selected != skip.Decode.Selected) {
				t.Errorf("T=%v draws %v: decision differs: %v/%v %q/%q", temp, draws, full.Prefill.Selected, skip.Prefill.Selected, full.Error, skip.Error)
			}
			if strings.TrimSuffix(full.Explanation, "; other equally likely prefill picks would fail (see prefillAlternatives)") != skip.Explanation {
				t.Errorf("T=%v draws %v: explanation %q vs %q", temp, draws, full.Explanation, skip.Explanation)
			}
		}
	}
}

func TestEvaluateAllPrefillMarksExactlyTheFailingWorkers(t *testing.T) {
	w := 0.5
	prefill := []Worker{
		dgPrefill(1, dzA, EnforcementRequired, 0),
		dgPrefill(2, dzB, EnforcementRequired, 10),
		dgPrefill(3, dzC, EnforcementRequired, 20),
		{ID: 4, Runtime: dgRuntime(dzC, EnforcementPreferred, &w)},                                                 // preferred: never fails
		{ID: 5, Runtime: RuntimeConfig{TopologyDomains: map[string]string{"zone": dzC}}},                           // no domain
		{ID: 6, Runtime: RuntimeConfig{TopologyDomains: map[string]string{"zone": dzC}, KvTransferDomain: "zone"}}, // enforcement missing
	}
	decode := []Worker{dgDecode(11, dzA, 0), dgDecode(12, dzB, 0)}
	outs, err := EvaluateAllPrefill(dgInput(prefill, decode))
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 6 {
		t.Fatalf("%d outcomes", len(outs))
	}
	if got := FailingPrefillWorkers(outs); !reflect.DeepEqual(got, []WorkerID{3, 6}) {
		t.Errorf("failing = %v, want [3 6]", got)
	}
	if !errors.Is(outs[2].Err, ErrNoEndpoints) || !errors.Is(outs[5].Err, ErrEnforcementMissing) {
		t.Errorf("errors: %v / %v", outs[2].Err, outs[5].Err)
	}
	if outs[0].Decode.Selected.WorkerID != 11 || outs[1].Decode.Selected.WorkerID != 12 {
		t.Errorf("decode picks %v %v", outs[0].Decode.Selected, outs[1].Decode.Selected)
	}
	// Unpinned, workers 1, 4, 5 and 6 (no or zero prefill load) tie; the shares sum to 1.
	var total float64
	for _, o := range outs {
		total += o.Probability
	}
	if math.Abs(total-1) > 1e-12 {
		t.Errorf("probabilities sum to %v", total)
	}
}

func TestRouteDisaggregatedAggregatedWithoutPrefillWorkers(t *testing.T) {
	in := dgInput(nil, []Worker{dgDecode(11, dzA, 5), dgDecode(12, dzB, 0)})
	d, err := RouteDisaggregated(in, nil)
	if err != nil || d.Mode != DisaggModeAggregated || d.Decode.Selected.WorkerID != 12 || d.Prefill != nil || d.Transfer != nil {
		t.Fatalf("%+v %v", d, err)
	}
	if d.Decode.Weights.OverlapScoreCredit != 1 || !d.Decode.Weights.TrackPrefillTokens {
		t.Errorf("aggregated must not use the decode override: %+v", d.Decode.Weights)
	}
	if _, err := EvaluateAllPrefill(in); !errors.Is(err, ErrNoEndpoints) {
		t.Errorf("EvaluateAllPrefill without prefill workers: %v", err)
	}
}

func dgConditionalInput() DisaggInput {
	in := dgInput(
		[]Worker{dgPrefill(1, dzA, EnforcementRequired, 0)},
		[]Worker{dgDecode(11, dzA, 0), dgDecode(12, dzB, 0)},
	)
	in.Config.ConditionalDisaggEnabled = true
	d11 := WorkerWithDpRank{WorkerID: 11}
	in.Request = Request{
		ISL: 1000, BlockSize: 64,
		Overlap: OverlapInput{
			DeviceBlocks: map[WorkerWithDpRank]uint64{d11: 14},
			CachedTokens: map[WorkerWithDpRank]uint64{d11: 14 * 64},
		},
	}
	return in
}

func TestRouteDisaggregatedConditionalBypass(t *testing.T) {
	in := dgConditionalInput()
	d, err := RouteDisaggregated(in, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d.Mode != DisaggModeBypassed || d.Conditional == nil || !d.Conditional.Bypass || d.Prefill != nil || d.Transfer != nil {
		t.Fatalf("mode %s conditional %+v", d.Mode, d.Conditional)
	}
	if d.Conditional.NetNewTokens != 104 || d.Conditional.Input.DecodeWorker.WorkerID != 11 {
		t.Errorf("conditional %+v", d.Conditional)
	}
	if d.Decode.Selected.WorkerID != 11 || d.Decode.SelectionRule != RulePinned {
		t.Errorf("decode %v rule %s", d.Decode.Selected, d.Decode.SelectionRule)
	}
	// A prefill pin skips conditional disaggregation.
	pin := WorkerWithDpRank{WorkerID: 1}
	in.PrefillPin = &pin
	d, err = RouteDisaggregated(in, nil)
	if err != nil || d.Mode != DisaggModeDisaggregated || d.Conditional != nil || d.ConditionalSkipped == "" {
		t.Errorf("pinned prefill: mode %s skipped %q err %v", d.Mode, d.ConditionalSkipped, err)
	}
	// Conditional disaggregation keeps the decode overlap credit.
	if d.DecodeOverride.OverlapScoreCredit != nil || d.Decode.Weights.OverlapScoreCredit != 1 {
		t.Errorf("decode override under conditional disagg: %+v", d.DecodeOverride)
	}
}

func TestRouteDisaggregatedConditionalDecodeGateUnknownFallsBackToRemotePrefill(t *testing.T) {
	in := dgConditionalInput()
	th := 0.9
	in.Config.ConditionalDisaggDecodeBusyThreshold = &th
	in.DecodeWorkers[0].Runtime.TotalKvBlocks = nil
	d, err := RouteDisaggregated(in, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d.Mode != DisaggModeDisaggregated || d.Conditional.DecodeGate.Decision != GateDeniedBusyUnknown || d.Conditional.Bypass {
		t.Errorf("mode %s gate %+v", d.Mode, d.Conditional.DecodeGate)
	}
	if d.Decode.Selected.WorkerID != 11 {
		t.Errorf("decode %v, want the zone-a worker", d.Decode.Selected)
	}
}

func TestRouteDisaggregatedConditionalPrefillLoadPeek(t *testing.T) {
	in := dgConditionalInput()
	in.Config.ConditionalDisaggPolicy = ConditionalDisaggPrefillLoad
	th := 0.5
	in.Config.ConditionalDisaggPrefillBusyThreshold = &th
	mnbt := uint64(1000)
	in.PrefillWorkers[0].Runtime.MaxNumBatchedTokens = &mnbt
	in.PrefillWorkers[0].Loads = map[uint32]RankLoad{0: {ActivePrefillTokens: 501}}
	d, err := RouteDisaggregated(in, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d.PrefillPeek == nil || d.Mode != DisaggModeBypassed || d.Conditional.PrefillLoad.Signal != "measured" {
		t.Fatalf("mode %s prefill load %+v", d.Mode, d.Conditional.PrefillLoad)
	}
	in.PrefillWorkers[0].Loads = map[uint32]RankLoad{0: {ActivePrefillTokens: 500}}
	if d, _ = RouteDisaggregated(in, nil); d.Mode != DisaggModeDisaggregated {
		t.Errorf("prefill at the line bypassed: %+v", d.Conditional.PrefillLoad)
	}
}

// TestDecodeMemoMatchesFreshSelections: outcomes evaluated with the shared
// decode memo equal those evaluated one by one without it.
func TestDecodeMemoMatchesFreshSelections(t *testing.T) {
	w := 0.25
	prefill := []Worker{
		dgPrefill(1, dzA, EnforcementRequired, 0), dgPrefill(2, dzA, EnforcementRequired, 5),
		dgPrefill(3, dzB, EnforcementRequired, 0), dgPrefill(7, dzC, EnforcementRequired, 0),
		{ID: 4, Runtime: dgRuntime(dzB, EnforcementPreferred, &w)}, {ID: 5, Runtime: dgRuntime(dzA, EnforcementPreferred, &w)},
	}
	decode := []Worker{dgDecode(11, dzA, 3), dgDecode(12, dzB, 0), dgDecode(13, dzA, 1)}
	in := dgInput(prefill, decode)
	memoed, err := EvaluateAllPrefill(in)
	if err != nil {
		t.Fatal(err)
	}
	configs := in.prefillRuntimeConfigs()
	for _, o := range memoed {
		fresh := in.outcomeFor(configs, o.Prefill, o.Probability, nil)
		if fresh.Routable != o.Routable || fresh.Error != o.Error || !reflect.DeepEqual(fresh.Decode, o.Decode) ||
			!reflect.DeepEqual(fresh.DecodeConstraints, o.DecodeConstraints) {
			t.Errorf("prefill %v: memo %+v, fresh %+v", o.Prefill, o, fresh)
		}
	}
}
