package routecore

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
)

func topoF64(v float64) *float64 { return &v }

// zoneConfig mirrors topology_runtime_config in model_manager.rs tests.
func topoZoneConfig(zone string, enf KvTransferEnforcement, weight *float64) RuntimeConfig {
	return RuntimeConfig{
		TopologyDomains:           map[string]string{"zone": zone},
		KvTransferDomain:          "zone",
		KvTransferEnforcement:     enf,
		KvTransferPreferredWeight: weight,
	}
}

func topoValidationCodes(err error) []string {
	var codes []string
	var walk func(error)
	walk = func(e error) {
		if e == nil {
			return
		}
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			for _, x := range j.Unwrap() {
				walk(x)
			}
			return
		}
		var tv *TopologyValidationError
		if errors.As(e, &tv) {
			codes = append(codes, tv.Code)
		}
	}
	walk(err)
	return codes
}

func TestValidateTopology(t *testing.T) {
	zone := map[string]string{"zone": "us-east-1a"}
	cases := []struct {
		name  string
		rc    RuntimeConfig
		codes []string // nil = valid
	}{
		{"empty config", RuntimeConfig{}, nil},
		// test_validate_config_accepts_kv_transfer_configs
		{"required", topoZoneConfig("us-east-1a", EnforcementRequired, nil), nil},
		{"preferred with weight", topoZoneConfig("us-east-1a", EnforcementPreferred, topoF64(0.5)), nil},
		{"domain with enforcement none passes", topoZoneConfig("us-east-1a", EnforcementNone, nil), nil},
		{"weight 0 and 1 are in range", topoZoneConfig("a", EnforcementPreferred, topoF64(1)), nil},
		{"weight that rounds to f32 1.0 passes", topoZoneConfig("a", EnforcementPreferred, topoF64(1.00000001)), nil},
		// test_validate_config_rejects_invalid_topology_components
		{"empty key", RuntimeConfig{TopologyDomains: map[string]string{"": "us-east-1a"}}, []string{"invalid_topology_domain"}},
		{"key with =", RuntimeConfig{TopologyDomains: map[string]string{"zone=primary": "us-east-1a"}}, []string{"invalid_topology_domain"}},
		{"key with whitespace", RuntimeConfig{TopologyDomains: map[string]string{" zone": "a"}}, []string{"invalid_topology_domain"}},
		{"empty value", RuntimeConfig{TopologyDomains: map[string]string{"zone": "  "}}, []string{"invalid_topology_value"}},
		{"value with =", RuntimeConfig{TopologyDomains: map[string]string{"zone": "a=b"}}, []string{"invalid_topology_value"}},
		{"value with whitespace", RuntimeConfig{TopologyDomains: map[string]string{"zone": "a\n"}}, []string{"invalid_topology_value"}},
		{"several field errors reported together", RuntimeConfig{
			TopologyDomains:           map[string]string{"": "x", "rack": " r"},
			KvTransferDomain:          "zone ",
			KvTransferEnforcement:     EnforcementPreferred,
			KvTransferPreferredWeight: topoF64(2),
		}, []string{"invalid_topology_domain", "invalid_kv_transfer_domain", "range"}},
		{"transfer domain whitespace only", RuntimeConfig{TopologyDomains: zone, KvTransferDomain: " "}, []string{"invalid_kv_transfer_domain"}},
		// test_validate_config_rejects_transfer_domain_mismatch
		{"domain mismatch", RuntimeConfig{TopologyDomains: zone, KvTransferDomain: "rack"}, []string{"missing_kv_transfer_domain"}},
		// test_validate_config_rejects_invalid_kv_transfer_combinations
		{"enforcement without domain", RuntimeConfig{KvTransferEnforcement: EnforcementRequired}, []string{"missing_kv_transfer_domain"}},
		{"preferred without weight", topoZoneConfig("us-east-1a", EnforcementPreferred, nil), []string{"missing_kv_transfer_preferred_weight"}},
		{"weight with required", topoZoneConfig("us-east-1a", EnforcementRequired, topoF64(0.5)), []string{"invalid_kv_transfer_preferred_weight"}},
		{"weight without enforcement", topoZoneConfig("us-east-1a", EnforcementNone, topoF64(0.5)), []string{"invalid_kv_transfer_preferred_weight"}},
		// test_serde_rejects_out_of_range_kv_transfer_preferred_weight / invalid enforcement
		{"weight 1.1 out of range", topoZoneConfig("a", EnforcementPreferred, topoF64(1.1)), []string{"range"}},
		{"negative weight", topoZoneConfig("a", EnforcementPreferred, topoF64(-0.25)), []string{"range"}},
		{"NaN weight", topoZoneConfig("a", EnforcementPreferred, topoF64(math.NaN())), []string{"range"}},
		{"fallback enforcement", topoZoneConfig("a", KvTransferEnforcement("fallback"), nil), []string{"unknown_variant"}},
		{"dp size above maximum", RuntimeConfig{DataParallelSize: 4097}, []string{"invalid_data_parallel_rank_range"}},
		{"dp range overflows u32", RuntimeConfig{DataParallelStartRank: math.MaxUint32, DataParallelSize: 1}, []string{"invalid_data_parallel_rank_range"}},
		{"dp size 0 reads as default 1", RuntimeConfig{DataParallelSize: 0, DataParallelStartRank: 7}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := ValidateTopology(tc.rc)
			if tc.codes == nil {
				if err != nil {
					t.Fatalf("want valid, got %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("want %v, got nil", tc.codes)
			}
			if !errors.Is(err, ErrInvalidTopology) {
				t.Errorf("error %v does not match ErrInvalidTopology", err)
			}
			if got := topoValidationCodes(err); !reflect.DeepEqual(got, tc.codes) {
				t.Errorf("codes = %v, want %v (err: %v)", got, tc.codes, err)
			}
			if msg := err.Error(); msg != strings.ToLower(msg[:1])+msg[1:] {
				t.Errorf("error should start lower-case: %q", msg)
			}
		})
	}
}

func TestValidateTopologyRejectsSerdeInvalidJSON(t *testing.T) {
	// test_serde_rejects_invalid_kv_transfer_fields: Dynamo rejects these at
	// parse time; RuntimeConfig accepts them, so ValidateTopology must.
	for _, js := range []string{
		`{"kv_transfer_enforcement":"fallback"}`,
		`{"kv_transfer_preferred_weight":1.1}`,
	} {
		var rc RuntimeConfig
		if err := json.Unmarshal([]byte(js), &rc); err != nil {
			t.Fatalf("%s: %v", js, err)
		}
		if err := ValidateTopology(rc); !errors.Is(err, ErrInvalidTopology) {
			t.Errorf("%s: want ErrInvalidTopology, got %v", js, err)
		}
	}
	if _, err := ParseKvTransferEnforcement("fallback"); err == nil {
		t.Error("ParseKvTransferEnforcement accepted fallback")
	}
}

func TestKvTransferConstraintsBuildRequiredAndPreferredConstraints(t *testing.T) {
	for _, tc := range []struct {
		id  WorkerID
		cfg RuntimeConfig
	}{
		{7, topoZoneConfig("us-east-1a", EnforcementRequired, nil)},
		{8, topoZoneConfig("us-east-1a", EnforcementPreferred, topoF64(0.85))},
	} {
		d, err := DeriveTransferConstraints(map[WorkerID]RuntimeConfig{tc.id: tc.cfg}, tc.id)
		if err != nil {
			t.Fatalf("worker %d: %v", tc.id, err)
		}
		const taint = "dynamo.topology/zone=us-east-1a"
		switch tc.id {
		case 7:
			if !reflect.DeepEqual(d.Constraints.RequiredTaints, []string{taint}) || len(d.Constraints.PreferredTaints) != 0 {
				t.Errorf("worker 7: %+v", d.Constraints)
			}
			if d.Rule != TransferRuleRequired || d.Weight != nil {
				t.Errorf("worker 7 evidence: %+v", d)
			}
		case 8:
			if len(d.Constraints.RequiredTaints) != 0 {
				t.Errorf("worker 8 required: %v", d.Constraints.RequiredTaints)
			}
			// The Rust map holds 0.85f32; compare bit for bit.
			if got := d.Constraints.PreferredTaints[taint]; got != float64(float32(0.85)) || got == 0.85 {
				t.Errorf("worker 8 weight = %.17g, want f32(0.85)", got)
			}
			if d.Rule != TransferRulePreferred || d.Weight == nil || *d.Weight != float64(float32(0.85)) {
				t.Errorf("worker 8 evidence: %+v", d)
			}
		}
		if d.Domain != "zone" || d.Value != "us-east-1a" || d.Taint != taint || !d.Constrained() {
			t.Errorf("worker %d evidence: %+v", tc.id, d)
		}
	}
}

func TestKvTransferRequiredPolicyPresenceIgnoresPreferredPolicy(t *testing.T) {
	pref := map[WorkerID]RuntimeConfig{7: topoZoneConfig("us-east-1a", EnforcementPreferred, topoF64(0.85))}
	if HasRequiredTransferPolicy(pref) || RequiredTransferPolicyWorkers(pref) != nil {
		t.Error("preferred policy counted as required")
	}
	req := map[WorkerID]RuntimeConfig{7: topoZoneConfig("us-east-1a", EnforcementRequired, nil)}
	if !HasRequiredTransferPolicy(req) || !reflect.DeepEqual(RequiredTransferPolicyWorkers(req), []WorkerID{7}) {
		t.Error("required policy not detected")
	}
}

func TestKvTransferConstraintsMissingSelectedWorkerFailsClosedForRequiredPolicy(t *testing.T) {
	const missing WorkerID = 99
	d, err := DeriveTransferConstraints(map[WorkerID]RuntimeConfig{7: topoZoneConfig("us-east-1a", EnforcementPreferred, topoF64(0.85))}, missing)
	if err != nil || d.Constrained() || d.Rule != TransferRuleSelectedMissing {
		t.Fatalf("preferred-only endpoint: %+v, %v", d, err)
	}
	d, err = DeriveTransferConstraints(map[WorkerID]RuntimeConfig{7: topoZoneConfig("us-east-1a", EnforcementRequired, nil)}, missing)
	if err == nil {
		t.Fatal("want error")
	}
	msg := err.Error()
	if !strings.Contains(msg, "selected prefill worker 99 missing from runtime configs") || !strings.Contains(msg, "required policy") {
		t.Errorf("message %q", msg)
	}
	if !errors.Is(err, ErrSelectedPrefillMissing) || !d.Failed || d.Rule != TransferRuleSelectedMissingRequired ||
		!reflect.DeepEqual(d.RequiredPolicyWorkers, []WorkerID{7}) {
		t.Errorf("evidence %+v err %v", d, err)
	}
	var te *TransferError
	if !errors.As(err, &te) || te.Worker != missing {
		t.Errorf("errors.As: %+v", te)
	}
}

func TestDeriveTransferConstraintsRules(t *testing.T) {
	cases := []struct {
		name     string
		configs  map[WorkerID]RuntimeConfig
		selected WorkerID
		rule     TransferRule
		sentinel error
		wantMsg  string
	}{
		{"no configs", nil, 1, TransferRuleNoRuntimeConfigs, nil, ""},
		{"empty configs", map[WorkerID]RuntimeConfig{}, 1, TransferRuleNoRuntimeConfigs, nil, ""},
		{"no transfer domain is unconstrained even if others require",
			map[WorkerID]RuntimeConfig{1: {TopologyDomains: map[string]string{"zone": "a"}}, 2: topoZoneConfig("b", EnforcementRequired, nil)},
			1, TransferRuleNoTransferDomain, nil, ""},
		{"domain not in topology",
			map[WorkerID]RuntimeConfig{1: {TopologyDomains: map[string]string{"rack": "r1"}, KvTransferDomain: "zone", KvTransferEnforcement: EnforcementRequired}},
			1, TransferRuleDomainNotInTopology, ErrTransferDomainNotInTopology, "topology_domains does not contain that domain"},
		{"preferred without weight",
			map[WorkerID]RuntimeConfig{1: topoZoneConfig("a", EnforcementPreferred, nil)},
			1, TransferRulePreferredWeightMissing, ErrPreferredWeightMissing, "kv_transfer_preferred_weight is missing"},
		{"enforcement missing",
			map[WorkerID]RuntimeConfig{1: topoZoneConfig("a", EnforcementNone, nil)},
			1, TransferRuleEnforcementMissing, ErrEnforcementMissing, "kv_transfer_enforcement is missing"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, err := DeriveTransferConstraints(tc.configs, tc.selected)
			if d.Rule != tc.rule {
				t.Errorf("rule = %s, want %s", d.Rule, tc.rule)
			}
			if tc.sentinel == nil {
				if err != nil || d.Constrained() || d.Failed {
					t.Errorf("want unconstrained success, got %+v %v", d, err)
				}
				return
			}
			if !errors.Is(err, tc.sentinel) || !d.Failed || d.Constrained() {
				t.Fatalf("got %+v, %v", d, err)
			}
			if !strings.Contains(err.Error(), tc.wantMsg) {
				t.Errorf("message %q lacks %q", err, tc.wantMsg)
			}
			if d.Explanation == "" {
				t.Error("no explanation")
			}
		})
	}
}

func TestMergeDecodeTopologyConstraintsCreatesAndPreservesConstraints(t *testing.T) {
	topo := RoutingConstraints{
		RequiredTaints:  []string{"dynamo.topology/zone=us-east-1a"},
		PreferredTaints: map[string]float64{"dynamo.topology/rack=rack-7": 0.85},
	}
	for _, tc := range []struct {
		user       RoutingConstraints
		expectUser bool
	}{
		{RoutingConstraints{}, false},
		{RoutingConstraints{RequiredTaints: []string{"user.required"}, PreferredTaints: map[string]float64{"user.preferred": 0.25}}, true},
	} {
		got := MergeFrontend(tc.user, topo)
		if !topoContains(got.RequiredTaints, "dynamo.topology/zone=us-east-1a") {
			t.Errorf("missing topology required: %+v", got)
		}
		if got.PreferredTaints["dynamo.topology/rack=rack-7"] != float64(float32(0.85)) {
			t.Errorf("topology preferred = %v", got.PreferredTaints)
		}
		if tc.expectUser && (!topoContains(got.RequiredTaints, "user.required") || got.PreferredTaints["user.preferred"] != 0.25) {
			t.Errorf("user constraints lost: %+v", got)
		}
		if tc.expectUser && !reflect.DeepEqual(got.RequiredTaints, []string{"dynamo.topology/zone=us-east-1a", "user.required"}) {
			t.Errorf("required not sorted: %v", got.RequiredTaints)
		}
	}
	// Inputs are not mutated.
	if len(topo.PreferredTaints) != 1 || len(topo.RequiredTaints) != 1 {
		t.Error("input mutated")
	}
}

func topoContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func TestMergeVariants(t *testing.T) {
	const tz = "dynamo.topology/zone=a"
	user := RoutingConstraints{RequiredTaints: []string{"gpu=h100"}, PreferredTaints: map[string]float64{tz: 0.25, "x": 0.1}}
	added := RoutingConstraints{PreferredTaints: map[string]float64{tz: 0.5}}

	// Frontend: HashMap::extend overwrites.
	if got := MergeFrontend(user, added); got.PreferredTaints[tz] != 0.5 || got.PreferredTaints["x"] != F32(0.1) {
		t.Errorf("frontend merge = %+v", got)
	}
	// Empty addition leaves the user constraints alone.
	if got := MergeFrontend(user, RoutingConstraints{}); !reflect.DeepEqual(got, user) {
		t.Errorf("empty frontend merge = %+v", got)
	}
	// Placement: weights add, in f32.
	if got := MergePlacement(user, added); got.PreferredTaints[tz] != 0.75 {
		t.Errorf("placement merge = %+v", got)
	}
	sum := MergePlacement(RoutingConstraints{PreferredTaints: map[string]float64{"t": 0.1}}, RoutingConstraints{PreferredTaints: map[string]float64{"t": 0.2}})
	if want := float64(float32(0.1) + float32(0.2)); sum.PreferredTaints["t"] != want || want == 0.1+0.2 {
		t.Errorf("f32 sum = %.17g, want %.17g", sum.PreferredTaints["t"], want)
	}
	// Engine handoff: weights add, required wins.
	base := RoutingConstraints{PreferredTaints: map[string]float64{tz: 0.25, "b": 0.5}}
	got := MergeEngineHandoff(base, RoutingConstraints{
		RequiredTaints:  []string{"b"},
		PreferredTaints: map[string]float64{tz: 0.5, "b": 0.3},
	})
	want := RoutingConstraints{RequiredTaints: []string{"b"}, PreferredTaints: map[string]float64{tz: 0.75}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("engine handoff merge = %+v, want %+v", got, want)
	}
}

// Plan placement tests (placement.rs).
func topoZoned(zone string) RuntimeConfig {
	return RuntimeConfig{TopologyDomains: map[string]string{"zone": zone}}
}

func TestPlacementTransferCompatibleFollowsSelectedWorkersMetadata(t *testing.T) {
	rules := []PlacementRule{{TransferCompatible: true}}
	deriveOne := func(id WorkerID, rc RuntimeConfig) (RoutingConstraints, error) {
		return DerivePlacement(rules, []PlacedWorker{{Stage: "prefill", Worker: id, Config: rc}}, "decode")
	}
	if c, err := deriveOne(1, topoZoneConfig("a", EnforcementRequired, nil)); err != nil || !reflect.DeepEqual(c.RequiredTaints, []string{TopologyTaint("zone", "a")}) {
		t.Errorf("required: %+v %v", c, err)
	}
	if c, err := deriveOne(2, topoZoneConfig("b", EnforcementPreferred, topoF64(0.85))); err != nil || c.PreferredTaints[TopologyTaint("zone", "b")] != F32(0.85) {
		t.Errorf("preferred: %+v %v", c, err)
	}
	if c, err := deriveOne(3, topoZoned("c")); err != nil || !c.IsEmpty() {
		t.Errorf("no domain: %+v %v", c, err)
	}
	for _, rc := range []RuntimeConfig{
		topoZoneConfig("d", EnforcementNone, nil),
		topoZoneConfig("e", EnforcementPreferred, nil),
		{KvTransferDomain: "zone", KvTransferEnforcement: EnforcementRequired},
	} {
		if _, err := deriveOne(4, rc); !errors.Is(err, ErrPlacementConflict) {
			t.Errorf("%+v: want placement conflict, got %v", rc, err)
		}
	}
	// The stage's own selection never constrains itself.
	if c, err := DerivePlacement(rules, []PlacedWorker{{Stage: "prefill", Worker: 1, Config: topoZoneConfig("a", EnforcementRequired, nil)}}, "prefill"); err != nil || !c.IsEmpty() {
		t.Errorf("self: %+v %v", c, err)
	}
}

func TestPlacementSameDomainRequiresTheDomainOnlyWhenRequired(t *testing.T) {
	unzoned := []PlacedWorker{{Stage: "prefill", Worker: 1}}
	if _, err := DerivePlacement([]PlacementRule{{Domain: "zone", Mode: PlacementMode{Required: true}}}, unzoned, "decode"); !errors.Is(err, ErrPlacementConflict) {
		t.Errorf("required: %v", err)
	}
	if c, err := DerivePlacement([]PlacementRule{{Domain: "zone", Mode: PlacementMode{Weight: 1}}}, unzoned, "decode"); err != nil || !c.IsEmpty() {
		t.Errorf("preferred: %+v %v", c, err)
	}
}

func TestPlacementConstraintsFromSeveralSelectionsCombine(t *testing.T) {
	rules := []PlacementRule{{Domain: "zone", Mode: PlacementMode{Weight: 0.5}}, {TransferCompatible: true}}
	selected := []PlacedWorker{
		{Stage: "encode", Worker: 1, Config: topoZoned("a")},
		{Stage: "prefill", Worker: 2, Config: topoZoneConfig("a", EnforcementPreferred, topoF64(0.25))},
	}
	c, err := DerivePlacement(rules, selected, "decode")
	if err != nil || c.PreferredTaints[TopologyTaint("zone", "a")] != 1.25 || len(c.RequiredTaints) != 0 {
		t.Errorf("got %+v %v, want zone=a 1.25", c, err)
	}
}

func TestPlacementPairValidationChecksBothDirections(t *testing.T) {
	rules := []PlacementRule{{TransferCompatible: true}}
	prefill := PlacedWorker{Stage: "prefill", Worker: 1, Config: topoZoneConfig("a", EnforcementRequired, nil)}
	decodeSame := PlacedWorker{Stage: "decode", Worker: 2, Config: topoZoned("a")}
	decodeOther := PlacedWorker{Stage: "decode", Worker: 3, Config: topoZoned("b")}
	for _, pair := range [][2]PlacedWorker{{prefill, decodeSame}, {decodeSame, prefill}} {
		if err := ValidatePlacementPair(rules, pair[0], pair[1]); err != nil {
			t.Errorf("same zone: %v", err)
		}
	}
	for _, pair := range [][2]PlacedWorker{{prefill, decodeOther}, {decodeOther, prefill}} {
		err := ValidatePlacementPair(rules, pair[0], pair[1])
		var pe *PlacementError
		if !errors.As(err, &pe) || pe.First != "prefill" || pe.Second != "decode" {
			t.Errorf("other zone: %v", err)
		}
	}
	// A decode-side requirement constrains prefill too (decode-first order).
	strictDecode := PlacedWorker{Stage: "decode", Worker: 4, Config: topoZoneConfig("b", EnforcementRequired, nil)}
	loosePrefill := PlacedWorker{Stage: "prefill", Worker: 5, Config: topoZoned("a")}
	var pe *PlacementError
	if err := ValidatePlacementPair(rules, loosePrefill, strictDecode); !errors.As(err, &pe) || pe.First != "decode" || pe.Second != "prefill" {
		t.Errorf("decode-side requirement: %v", err)
	}
	sameZone := []PlacementRule{{Domain: "zone", Mode: PlacementMode{Required: true}}}
	if err := ValidatePlacementPair(sameZone, loosePrefill, decodeSame); err != nil {
		t.Errorf("same-domain same zone: %v", err)
	}
	if err := ValidatePlacementPair(sameZone, loosePrefill, decodeOther); err == nil {
		t.Error("same-domain other zone accepted")
	}
}
