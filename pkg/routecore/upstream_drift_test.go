package routecore

import (
	"encoding/json"
	"errors"
	"testing"
)

// Issue 21 item 5: the port agrees with the newest upstream code on a
// published data_parallel_size 0 and on the text of its failure messages.

// TestDataParallelSizeZero: ModelRuntimeConfig's serde default makes an omitted
// data_parallel_size 1 (default_data_parallel_size), but a published 0 stays
// 0. The router then has no rank for the worker (every candidate loop is
// start..start+data_parallel_size, empty), and validate_model_runtime_config
// rejects the config ("data_parallel_size must be at least 1",
// invalid_data_parallel_size): the worker cannot register
// (lib/llm/src/local_model/runtime_config.rs).
func TestDataParallelSizeZero(t *testing.T) {
	decode := func(s string) RuntimeConfig {
		t.Helper()
		var rc RuntimeConfig
		if err := json.Unmarshal([]byte(s), &rc); err != nil {
			t.Fatal(err)
		}
		return rc
	}
	for _, tt := range []struct {
		json       string
		start, end uint32
		invalid    string
	}{
		{`{}`, 0, 1, ""},
		{`{"data_parallel_size":null,"data_parallel_start_rank":4}`, 4, 5, ""},
		{`{"data_parallel_size":2,"data_parallel_start_rank":4}`, 4, 6, ""},
		{`{"data_parallel_size":0}`, 0, 0, "data_parallel_size: data_parallel_size must be at least 1"},
		{`{"data_parallel_size":0,"data_parallel_start_rank":3}`, 3, 3, "data_parallel_size: data_parallel_size must be at least 1"},
	} {
		rc := decode(tt.json)
		if s, e := rc.DpRange(); s != tt.start || e != tt.end {
			t.Errorf("%s: ranks [%d, %d), want [%d, %d)", tt.json, s, e, tt.start, tt.end)
		}
		err := ValidateTopology(rc)
		var tv *TopologyValidationError
		switch {
		case tt.invalid == "" && err != nil:
			t.Errorf("%s: %v", tt.json, err)
		case tt.invalid != "" && (!errors.As(err, &tv) || tv.Code != "invalid_data_parallel_size" || err.Error() != tt.invalid):
			t.Errorf("%s: %v (%+v), want %q", tt.json, err, tv, tt.invalid)
		}
	}
	// A Go literal without the flag keeps meaning "omitted".
	if s, e := (RuntimeConfig{}).DpRange(); s != 0 || e != 1 {
		t.Errorf("zero value: [%d, %d)", s, e)
	}

	// Select: the zero-rank worker is no candidate; alone, NoEndpoints.
	zero := Worker{ID: 9, Runtime: RuntimeConfig{DataParallelSizeSet: true}}
	req := Request{ISL: 32, BlockSize: 16}
	d, err := Select(selCfg(nil), BusyThresholds{}, []Worker{zero, {ID: 1}}, req, &ScriptedRand{})
	if err != nil || d.Selected != (WorkerWithDpRank{1, 0}) || len(d.Candidates) != 1 {
		t.Errorf("with a zero-rank worker: %s, %v, %d candidates", d.Selected, err, len(d.Candidates))
	}
	if _, err := Select(selCfg(nil), BusyThresholds{}, []Worker{zero}, req, &ScriptedRand{}); !errors.Is(err, ErrNoEndpoints) {
		t.Errorf("only a zero-rank worker: %v, want NoEndpoints", err)
	}
	if (Eligibility{}).ValidateWorkerRank([]Worker{zero}, WorkerWithDpRank{9, 0}) == nil {
		t.Error("rank 0 of a zero-rank worker is eligible")
	}
}

// TestFailureMessagesAreUpstreams: Error() is upstream's text word for word;
// what the port adds is a separate Detail / Remedy.
func TestFailureMessagesAreUpstreams(t *testing.T) {
	// WorkerEligibilityError (lib/kv-router/src/scheduling/filter.rs).
	fenced := Worker{ID: 7, Fenced: true}
	tainted := Worker{ID: 7}
	busy := selAllRanksBusy(Worker{ID: 7})
	th := BusyThresholds{ActivePrefillTokensThreshold: selU(10)}
	for _, tt := range []struct {
		e            Eligibility
		w            Worker
		c            WorkerWithDpRank
		text, detail string
	}{
		{Eligibility{}, tainted, WorkerWithDpRank{8, 0}, "worker 8 is unavailable", "not among the known workers"},
		{Eligibility{AllowedWorkers: []WorkerID{8}}, tainted, WorkerWithDpRank{7, 0}, "worker 7 is not in allowed worker set", ""},
		{Eligibility{}, fenced, WorkerWithDpRank{7, 0}, "worker 7 is not routable", "fenced: dead or deregistered"},
		{Eligibility{}, tainted, WorkerWithDpRank{7, 1}, "worker 7 dp_rank 1 is outside [0, 1)", ""},
		{Eligibility{Constraints: RoutingConstraints{RequiredTaints: []string{"dynamo.topology/zone=b"}}}, tainted, WorkerWithDpRank{7, 0},
			"worker 7 does not satisfy routing constraints", "missing required taints dynamo.topology/zone=b"},
		{Eligibility{Thresholds: th}, busy, WorkerWithDpRank{7, 0}, "worker 7 is overloaded",
			"rank 0: active_prefill_tokens 11 > active_prefill_tokens_threshold limit 10"},
	} {
		err := tt.e.ValidateWorkerRank([]Worker{tt.w}, tt.c)
		var ee *EligibilityError
		if !errors.As(err, &ee) || ee.Error() != tt.text || ee.Detail != tt.detail {
			t.Errorf("%v: got %q / %q, want %q / %q", tt.c, err, detailOf(ee), tt.text, tt.detail)
			continue
		}
		want := tt.text
		if tt.detail != "" {
			want += " (" + tt.detail + ")"
		}
		if ee.Full() != want {
			t.Errorf("Full %q, want %q", ee.Full(), want)
		}
	}

	// ModelManager::get_kv_transfer_routing_constraints
	// (lib/llm/src/discovery/model_manager.rs); the missing-worker message
	// without " for endpoint …", which a dry run does not know.
	w := func(f float64) *float64 { return &f }
	req := RuntimeConfig{KvTransferDomain: "zone", KvTransferEnforcement: EnforcementRequired, TopologyDomains: map[string]string{"zone": "a"}}
	for _, tt := range []struct {
		configs map[WorkerID]RuntimeConfig
		msg     string
	}{
		{map[WorkerID]RuntimeConfig{7: req}, "selected prefill worker 99 missing from runtime configs; cannot derive KV transfer topology constraints for required policy"},
		{map[WorkerID]RuntimeConfig{99: {KvTransferDomain: "zone", KvTransferEnforcement: EnforcementRequired}},
			`selected prefill worker 99 configured kv_transfer_domain="zone", but topology_domains does not contain that domain`},
		{map[WorkerID]RuntimeConfig{99: {KvTransferDomain: "zone", KvTransferEnforcement: EnforcementPreferred, TopologyDomains: map[string]string{"zone": "a"}}},
			`selected prefill worker 99 configured preferred KV transfer enforcement for domain "zone", but kv_transfer_preferred_weight is missing`},
		{map[WorkerID]RuntimeConfig{99: {KvTransferDomain: "zone", TopologyDomains: map[string]string{"zone": "a"}}},
			`selected prefill worker 99 configured kv_transfer_domain="zone", but kv_transfer_enforcement is missing`},
	} {
		_, err := DeriveTransferConstraints(tt.configs, 99)
		var te *TransferError
		if !errors.As(err, &te) || err.Error() != tt.msg || te.Remedy == "" {
			t.Errorf("got %v (remedy %q), want %q", err, remedyOf(te), tt.msg)
		}
	}
	if _, err := DeriveTransferConstraints(map[WorkerID]RuntimeConfig{99: {KvTransferDomain: "zone", KvTransferEnforcement: EnforcementPreferred,
		KvTransferPreferredWeight: w(0.5), TopologyDomains: map[string]string{"zone": "a"}}}, 99); err != nil {
		t.Error(err)
	}
}

func detailOf(e *EligibilityError) string {
	if e == nil {
		return ""
	}
	return e.Detail
}

func remedyOf(e *TransferError) string {
	if e == nil {
		return ""
	}
	return e.Remedy
}
