package routecore

import (
	"errors"
	"reflect"
	"slices"
	"testing"
)

// selWorker7 is filter.rs's fixture: worker 7, dp ranks [2,5), taint zone-a.
func selWorker7() Worker {
	return Worker{ID: 7, Runtime: RuntimeConfig{DataParallelStartRank: 2, DataParallelSize: 3, Taints: []string{"zone-a"}}}
}

// selAllRanksBusy gives every rank of w more active prefill than the threshold 10.
func selAllRanksBusy(w Worker) Worker {
	w.Loads = map[uint32]RankLoad{}
	start, end, _ := eligDpRange(w.Runtime)
	for r := start; r < end; r++ {
		w.Loads[uint32(r)] = RankLoad{ActivePrefillTokens: 11}
	}
	return w
}

func TestValidateWorkerRank(t *testing.T) {
	busyTh := BusyThresholds{ActivePrefillTokensThreshold: selU(10)}
	w7 := selWorker7()
	fenced := selWorker7()
	fenced.Fenced = true
	tests := []struct {
		name    string
		e       Eligibility
		workers []Worker
		c       WorkerWithDpRank
		want    ReasonCode // "" = eligible
		check   func(t *testing.T, e *EligibilityError)
	}{
		{"accepts allowed rank matching constraints",
			Eligibility{AllowedWorkers: []WorkerID{7}, Constraints: RoutingConstraints{RequiredTaints: []string{"zone-a"}}},
			[]Worker{w7}, WorkerWithDpRank{7, 3}, "", nil},
		{"rejects disallowed worker", Eligibility{AllowedWorkers: []WorkerID{8}},
			[]Worker{w7}, WorkerWithDpRank{7, 3}, ReasonWorkerNotAllowed, nil},
		{"rejects overloaded worker", Eligibility{Thresholds: busyTh},
			[]Worker{selAllRanksBusy(w7)}, WorkerWithDpRank{7, 3}, ReasonWorkerOverloaded,
			func(t *testing.T, e *EligibilityError) {
				if e.Overload == nil || len(e.Overload.Ranks) != 3 || e.Overload.Ranks[0].Trips[0].Threshold != ThresholdActivePrefillTokens {
					t.Errorf("overload report %+v", e.Overload)
				}
			}},
		{"rejects fenced worker", Eligibility{}, []Worker{fenced}, WorkerWithDpRank{7, 3}, ReasonWorkerFenced, nil},
		{"prefers allow-list error before overload", Eligibility{AllowedWorkers: []WorkerID{8}, Thresholds: busyTh},
			[]Worker{selAllRanksBusy(w7)}, WorkerWithDpRank{7, 3}, ReasonWorkerNotAllowed, nil},
		{"fence wins over overload", Eligibility{Thresholds: busyTh},
			[]Worker{selAllRanksBusy(fenced)}, WorkerWithDpRank{7, 3}, ReasonWorkerFenced, nil},
		{"rejects out-of-range dp rank", Eligibility{}, []Worker{w7}, WorkerWithDpRank{7, 5}, ReasonDpRankUnavailable,
			func(t *testing.T, e *EligibilityError) {
				if e.DpStart != 2 || e.DpEnd != 5 || e.Text != "worker 7 dp_rank 5 is outside [2, 5)" {
					t.Errorf("got %+v", e.Ineligibility)
				}
			}},
		{"rejects unsatisfied required taints", Eligibility{Constraints: RoutingConstraints{RequiredTaints: []string{"zone-b"}}},
			[]Worker{w7}, WorkerWithDpRank{7, 3}, ReasonRoutingConstraintsUnsatisfied,
			func(t *testing.T, e *EligibilityError) {
				if !slices.Equal(e.MissingTaints, []string{"zone-b"}) {
					t.Errorf("missing %v", e.MissingTaints)
				}
			}},
		{"unknown worker is unavailable", Eligibility{}, []Worker{w7}, WorkerWithDpRank{8, 0}, ReasonWorkerUnavailable, nil},
		{"topology taints count as taints",
			Eligibility{Constraints: RoutingConstraints{RequiredTaints: []string{TopologyTaint("zone", "us-east-1a")}}},
			[]Worker{{ID: 1, Runtime: RuntimeConfig{TopologyDomains: map[string]string{"zone": "us-east-1a"}}}},
			WorkerWithDpRank{1, 0}, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.e.ValidateWorkerRank(tt.workers, tt.c)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("unexpected %v", err)
				}
				return
			}
			var ee *EligibilityError
			if !errors.As(err, &ee) || ee.Code != tt.want {
				t.Fatalf("error %v, want %s", err, tt.want)
			}
			if tt.check != nil {
				tt.check(t, ee)
			}
		})
	}
}

// TestEligibilityCombined is routing_eligibility_applies_allowed_overloaded_and_taints.
func TestEligibilityCombined(t *testing.T) {
	busy := map[uint32]RankLoad{0: {ActivePrefillTokens: 11}}
	ws := []Worker{
		selTainted(1, "mdc-a"),
		{ID: 2, Runtime: RuntimeConfig{Taints: []string{"mdc-a"}}, Loads: busy},
		selTainted(3, "mdc-a"),
		selTainted(4, "mdc-b"),
	}
	req := Request{ISL: 1, BlockSize: 1, AllowedWorkers: []WorkerID{1, 2, 4},
		Constraints: RoutingConstraints{RequiredTaints: []string{"mdc-a"}}}
	d := selMustSelect(t, selCfg(nil), BusyThresholds{ActivePrefillTokensThreshold: selU(10)}, ws, req, 0)
	var got []ReasonCode
	for _, ev := range d.Candidates {
		if ev.Eligible {
			got = append(got, "eligible")
		} else {
			got = append(got, ev.Reason.Code)
		}
	}
	want := []ReasonCode{"eligible", ReasonWorkerOverloaded, ReasonWorkerNotAllowed, ReasonRoutingConstraintsUnsatisfied}
	if !slices.Equal(got, want) || d.Selected != selW(1) {
		t.Errorf("reasons %v selected %s, want %v and 1", got, d.Selected, want)
	}
}

func TestWorkerOverload(t *testing.T) {
	total := selU(100)
	tests := []struct {
		name string
		th   BusyThresholds
		w    Worker
		want bool
		trip Threshold
	}{
		{"no thresholds never overloads", BusyThresholds{},
			Worker{Loads: map[uint32]RankLoad{0: {ActivePrefillTokens: 1 << 40}}}, false, ""},
		{"absolute threshold is strict", BusyThresholds{ActivePrefillTokensThreshold: selU(10)},
			Worker{Loads: map[uint32]RankLoad{0: {ActivePrefillTokens: 10}}}, false, ""},
		{"absolute threshold trips", BusyThresholds{ActivePrefillTokensThreshold: selU(10)},
			Worker{Loads: map[uint32]RankLoad{0: {ActivePrefillTokens: 11}}}, true, ThresholdActivePrefillTokens},
		{"frac floors the limit: 0.5·101 → 50", BusyThresholds{ActivePrefillTokensThresholdFrac: selF(0.5)},
			Worker{Runtime: RuntimeConfig{MaxNumBatchedTokens: selU(101)}, Loads: map[uint32]RankLoad{0: {ActivePrefillTokens: 51}}}, true, ThresholdActivePrefillTokensFrac},
		{"frac at the floored limit is free", BusyThresholds{ActivePrefillTokensThresholdFrac: selF(0.5)},
			Worker{Runtime: RuntimeConfig{MaxNumBatchedTokens: selU(101)}, Loads: map[uint32]RankLoad{0: {ActivePrefillTokens: 50}}}, false, ""},
		{"frac defaults max batched to 10M", BusyThresholds{ActivePrefillTokensThresholdFrac: selF(0.5)},
			Worker{Loads: map[uint32]RankLoad{0: {ActivePrefillTokens: 5_000_000}}}, false, ""},
		{"frac default max batched trips above 5M", BusyThresholds{ActivePrefillTokensThresholdFrac: selF(0.5)},
			Worker{Loads: map[uint32]RankLoad{0: {ActivePrefillTokens: 5_000_001}}}, true, ThresholdActivePrefillTokensFrac},
		{"decode via kv_used_blocks", BusyThresholds{ActiveDecodeBlocksThreshold: selF(0.8)},
			Worker{Runtime: RuntimeConfig{TotalKvBlocks: total}, Loads: map[uint32]RankLoad{0: {KvUsedBlocks: selU(81)}}}, true, ThresholdActiveDecodeBlocks},
		{"decode via active_decode_blocks", BusyThresholds{ActiveDecodeBlocksThreshold: selF(0.8)},
			Worker{Runtime: RuntimeConfig{TotalKvBlocks: total}, Loads: map[uint32]RankLoad{0: {ActiveDecodeBlocks: 81, KvUsedBlocks: selU(10)}}}, true, ThresholdActiveDecodeBlocks},
		{"decode at the line is free", BusyThresholds{ActiveDecodeBlocksThreshold: selF(0.8)},
			Worker{Runtime: RuntimeConfig{TotalKvBlocks: total}, Loads: map[uint32]RankLoad{0: {ActiveDecodeBlocks: 80}}}, false, ""},
		{"decode needs total_kv_blocks > 0", BusyThresholds{ActiveDecodeBlocksThreshold: selF(0.8)},
			Worker{Runtime: RuntimeConfig{TotalKvBlocks: selU(0)}, Loads: map[uint32]RankLoad{0: {ActiveDecodeBlocks: 81}}}, false, ""},
		{"decode needs total_kv_blocks", BusyThresholds{ActiveDecodeBlocksThreshold: selF(0.8)},
			Worker{Loads: map[uint32]RankLoad{0: {ActiveDecodeBlocks: 81}}}, false, ""},
		{"explicit latch wins", BusyThresholds{ActiveDecodeBlocksThreshold: selF(0.8)},
			Worker{Runtime: RuntimeConfig{TotalKvBlocks: total}, Loads: map[uint32]RankLoad{0: {ActiveDecodeBlocks: 0, DecodeOverloadLatched: selB(true)}}}, true, ThresholdActiveDecodeBlocks},
		{"one free rank keeps the worker", BusyThresholds{ActivePrefillTokensThreshold: selU(10)},
			Worker{Runtime: RuntimeConfig{DataParallelSize: 2}, Loads: map[uint32]RankLoad{0: {ActivePrefillTokens: 11}}}, false, ""},
		{"every rank busy", BusyThresholds{ActivePrefillTokensThreshold: selU(10)},
			Worker{Runtime: RuntimeConfig{DataParallelSize: 2}, Loads: map[uint32]RankLoad{0: {ActivePrefillTokens: 11}, 1: {ActivePrefillTokens: 12}}}, true, ThresholdActivePrefillTokens},
		{"loads outside the declared ranks are ignored", BusyThresholds{ActivePrefillTokensThreshold: selU(10)},
			Worker{Loads: map[uint32]RankLoad{0: {}, 1: {ActivePrefillTokens: 99}}}, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := WorkerOverload(tt.th, tt.w)
			if rep.Overloaded != tt.want {
				t.Fatalf("overloaded %v, want %v (%+v)", rep.Overloaded, tt.want, rep)
			}
			if tt.trip != "" && rep.Ranks[0].Trips[0].Threshold != tt.trip {
				t.Errorf("trip %+v, want %s", rep.Ranks[0].Trips, tt.trip)
			}
		})
	}
}

func TestBusyThresholdsValidate(t *testing.T) {
	for _, tc := range []struct {
		th BusyThresholds
		ok bool
	}{
		{BusyThresholds{}, true},
		{BusyThresholds{ActiveDecodeBlocksThreshold: selF(1)}, true},
		{BusyThresholds{ActiveDecodeBlocksThreshold: selF(1.01)}, false},
		{BusyThresholds{ActiveDecodeBlocksThreshold: selF(-0.1)}, false},
		{BusyThresholds{ActivePrefillTokensThresholdFrac: selF(16)}, true},
		{BusyThresholds{ActivePrefillTokensThresholdFrac: selF(-1)}, false},
	} {
		if err := tc.th.Validate(); (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrInvalidConfig)) {
			t.Errorf("%+v: error %v, want ok=%v", tc.th, err, tc.ok)
		}
	}
}

// TestPrecomputedTaintsDecideTheSame: a worker's precomputed EffectiveTaints
// give the same decision and evidence as computing them on each selection.
func TestPrecomputedTaintsDecideTheSame(t *testing.T) {
	rc := func(zone string, taints ...string) RuntimeConfig {
		return RuntimeConfig{TopologyDomains: map[string]string{"zone": zone}, Taints: taints}
	}
	workers := []Worker{
		{ID: 1, Runtime: rc("a", "gpu=h100")}, {ID: 2, Runtime: rc("b")}, {ID: 3, Runtime: rc("a", "gpu=a100")}, {ID: 4, Runtime: rc("c", "dynamo.topology/zone=x")},
	}
	for _, c := range []RoutingConstraints{
		{RequiredTaints: []string{"dynamo.topology/zone=a"}},
		{RequiredTaints: []string{"gpu=h100"}, PreferredTaints: map[string]float64{"dynamo.topology/zone=b": 0.5}},
		{PreferredTaints: map[string]float64{"dynamo.topology/zone=c": 1}},
		{RequiredTaints: []string{"dynamo.topology/zone=x"}},
	} {
		req := Request{ISL: 64, BlockSize: 16, Constraints: c}
		plain, errPlain := Select(DefaultKvRouterConfig(), BusyThresholds{}, workers, req, nil)
		pre := slices.Clone(workers)
		for i := range pre {
			pre[i].EffectiveTaints = pre[i].Runtime.EffectiveTaints()
		}
		got, errGot := Select(DefaultKvRouterConfig(), BusyThresholds{}, pre, req, nil)
		if (errPlain == nil) != (errGot == nil) || !reflect.DeepEqual(plain.Candidates, got.Candidates) || plain.Selected != got.Selected {
			t.Errorf("%+v: decisions differ", c)
		}
	}
}
