package explainroute_test

// Rust selector tests reproduced end to end through the CLI: for each test of
// Dynamo's lib/kv-router (scheduling/selector/default.rs and filter.rs) and
// lib/llm (model_manager.rs, prefill_router) listed in router-semantics.md §7,
// a capture file carries the test's inputs the way a real deployment shows
// them — published runtime configs (taints, topology, dp ranks, router_config),
// the frontend's load metrics and busy thresholds, the router flags on the
// frontend pod and KvEvents for the device overlap — and `kubectl dynamo
// explain-route -o json` must report the test's numbers.
//
// Each case says which router leg reproduces the Rust inputs:
//   - prefill leg: the frontend's prefill router (the normal formula, with the
//     request's credit; active-block tracking off unless the prefill workers
//     publish a router_config turning it on);
//   - decode leg: the decode router of a disaggregated request (credit 0, no
//     prefill tracking, every request block counted as new);
//   - aggregated: only decode/aggregated workers, so the decode router runs the
//     full configuration (every full request block counted as new).
//
// Active requests are not in the metrics; they are set with --load
// POD=activeRequests:N. A Rust worker "with no load" is a worker the frontend
// reports no load for (the CLI assumes it idle: raw prefill tokens are then
// 0 + isl = isl, the same number Rust uses when has_load is false).

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/cmdtest"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/explain"
)

// rcID maps a Rust test's worker id to a published instance id above 2^53, so
// the cases also check that u64 ids survive the capture and the JSON output.
func rcID(rust uint64) uint64 { return 1<<53 + 1 + rust }

// rcRun is one command run on a case's capture.
type rcRun struct {
	// rust names the Rust test (and variant) this run reproduces.
	rust string
	args []string
	code int
	// wantErr is a substring of stderr (exit code 1 runs).
	wantErr string
	check   func(t *testing.T, x *explain.Explanation, raw string)
}

// rcCase is one capture and the runs made on it.
type rcCase struct {
	name string
	dep  rcDeployment
	runs []rcRun
}

// rcExplain runs explain-route -o json on a capture.
func rcExplain(t *testing.T, capture string, tokens []uint32, args ...string) (*explain.Explanation, cmdtest.Result) {
	t.Helper()
	argv := []string{"explain-route", "--from-file", capture}
	if len(tokens) > 0 {
		argv = append(argv, "--tokens", rcTokenArg(tokens))
	}
	argv = append(append(argv, args...), "-o", "json")
	r := cmdtest.Run(t, argv...)
	if strings.Contains(r.Stderr, "panic") || strings.Contains(r.Stderr, "goroutine ") {
		t.Fatalf("panic: %s", r.Stderr)
	}
	if r.ExitCode == 1 {
		return nil, r
	}
	var x explain.Explanation
	if err := json.Unmarshal([]byte(r.Stdout), &x); err != nil {
		t.Fatalf("exit %d, stdout is not JSON: %v\n%s\nstderr: %s", r.ExitCode, err, r.Stdout, r.Stderr)
	}
	return &x, r
}

// rcCand returns the candidate of a stage for a pod (and dp rank).
func rcCand(t *testing.T, s *explain.Stage, pod string, rank uint32) explain.Candidate {
	t.Helper()
	if s == nil {
		t.Fatalf("no stage for candidate %s", pod)
	}
	for _, c := range s.Candidates {
		if c.Worker == pod && c.DpRank == rank {
			return c
		}
	}
	t.Fatalf("no candidate %s:%d in %+v", pod, rank, s.Candidates)
	return explain.Candidate{}
}

func rcNear(got, want float64) bool { return math.Abs(got-want) <= 1e-9*math.Max(1, math.Abs(want)) }

// rcCost checks a candidate's cost (and that it was scored).
func rcCost(t *testing.T, s *explain.Stage, pod string, want float64) explain.Candidate {
	t.Helper()
	c := rcCand(t, s, pod, 0)
	if !c.Scored || !rcNear(c.Cost, want) || !rcNear(c.Terms.Cost, want) {
		t.Errorf("%s: cost %v (terms %v, scored %v), want %v; terms %+v", pod, c.Cost, c.Terms.Cost, c.Scored, want, c.Terms)
	}
	return c
}

func rcSelected(t *testing.T, s *explain.Stage, want ...string) {
	t.Helper()
	if s == nil || !slices.Equal(s.Selected, want) {
		var got []string
		if s != nil {
			got = s.Selected
		}
		t.Errorf("selected %v, want %v", got, want)
	}
}

func rcIneligible(t *testing.T, s *explain.Stage, pod, code string) {
	t.Helper()
	c := rcCand(t, s, pod, 0)
	if c.Eligible || c.Scored || string(c.ReasonCode) != code {
		t.Errorf("%s: eligible %v scored %v reason %s (%s), want ineligible %s", pod, c.Eligible, c.Scored, c.ReasonCode, c.Reason, code)
	}
}

func rcMode(t *testing.T, x *explain.Explanation, want string) {
	t.Helper()
	if string(x.Mode) != want {
		t.Errorf("mode %s, want %s", x.Mode, want)
	}
}

func rcFails(t *testing.T, x *explain.Explanation, stage, kind string) {
	t.Helper()
	v := x.Verdict
	if v.Routable || v.Stage != stage || v.Error != kind || v.FailureProbability != 1 || v.Cause == "" {
		t.Errorf("verdict %+v, want a failure %s at %s with a cause", v, kind, stage)
	}
}

// prefillTracking is the router_config a prefill worker set publishes to keep
// active-block tracking on in its prefill router, so its decode blocks count
// as in the Rust tests that give a prefill-formula worker decode load.
var prefillTracking = rcObj{"router_mode": "kv", "kv_router_config": rcObj{"router_track_active_blocks": true}}

// rcDisagg builds a disaggregated deployment: the prefill workers given and
// one idle decode worker.
func rcDisagg(tokens []uint32, prefill ...rcWorker) rcDeployment {
	for i := range prefill {
		prefill[i].Role = "prefill"
	}
	ws := append(slices.Clone(prefill), rcWorker{Pod: "vectors-decode-0", Role: "decode", ID: rcID(900), Loads: []rcLoad{{DecodeBlocks: 0}}})
	return rcDeployment{Tokens: tokens, Workers: ws}
}

func rcRustCases() []rcCase {
	t16, t64, t128 := rcTokens(16), rcTokens(64), rcTokens(128)
	const (
		w0, w1   = "vectors-prefill-0", "vectors-prefill-1"
		agg10    = "vectors-worker-10"
		agg20    = "vectors-worker-20"
		decode0  = "vectors-decode-0"
		busyJSON = `{"thresholds":[{"model":"rust/selector-vectors","active_decode_blocks_threshold":null,"active_prefill_tokens_threshold":100,"active_prefill_tokens_threshold_frac":null}]}`
	)
	var cases []rcCase

	// test_worker_logit_can_charge_active_requests: decode 100 with 4 active
	// requests costs 100.0, and 228.0 with decode_active_request_weight 32.
	// Decode leg: credit 0 and no prefill tracking leave no prefill term, and a
	// request of 8 tokens (< one block) adds no new block, so the cost is
	// active_decode + weight·active_requests, as worker_logit with isl 0.
	{
		d := rcDeployment{Tokens: rcTokens(8), Workers: []rcWorker{
			{Pod: w0, Role: "prefill", ID: rcID(100)},
			{Pod: decode0, Role: "decode", ID: rcID(0), Loads: []rcLoad{{DecodeBlocks: 100}}},
		}}
		check := func(reqCost, cost float64) func(t *testing.T, x *explain.Explanation, raw string) {
			return func(t *testing.T, x *explain.Explanation, raw string) {
				rcMode(t, x, "disaggregated")
				c := rcCost(t, x.Decode, decode0, cost)
				if c.Terms.ActiveRequests != 4 || c.Terms.RequestCost != reqCost || c.DecodeBlocks != 100 || c.Terms.AdditionalActiveBlocks != 0 || c.PrefillBlocks != 0 {
					t.Errorf("terms %+v, want 4 requests costing %v on 100 decode blocks", c.Terms, reqCost)
				}
				rcSelected(t, x.Decode, decode0)
			}
		}
		cases = append(cases, rcCase{name: "active requests", dep: d, runs: []rcRun{
			{rust: "test_worker_logit_can_charge_active_requests/default weight",
				args: []string{"--load", decode0 + "=activeRequests:4"}, check: check(0, 100)},
			{rust: "test_worker_logit_can_charge_active_requests/weight 32",
				args: []string{"--load", decode0 + "=activeRequests:4", "--decode-active-request-weight", "32"}, check: check(128, 228)},
		}})
	}

	// test_decode_worker_logit_credits_overlap_without_prefill_tracking: a
	// decode worker with prefill tracking off, device overlap 3 and 10 decode
	// blocks costs max(0, 10 − 3) = 7. Aggregated: the decode router keeps the
	// credit; --track-prefill-tokens=false selects the decode branch. isl 64 adds
	// 4 new blocks to the 6 active ones the frontend reports (10 in all).
	{
		d := rcDeployment{Tokens: t64, Workers: []rcWorker{
			{Pod: agg10, ID: rcID(0), Loads: []rcLoad{{DecodeBlocks: 6}}},
		}, Cached: []rcCached{{Pod: agg10, Blocks: 3}}}
		cases = append(cases, rcCase{name: "decode overlap branch", dep: d, runs: []rcRun{
			{rust: "test_decode_worker_logit_credits_overlap_without_prefill_tracking",
				args: []string{"--track-prefill-tokens=false"}, check: func(t *testing.T, x *explain.Explanation, raw string) {
					rcMode(t, x, "aggregated")
					c := rcCost(t, x.Decode, agg10, 7)
					if c.Terms.Formula != "decode-overlap" || c.DecodeBlocks != 10 || c.Credit != 3 || c.OverlapBlocks != 3 || c.Terms.Logit != 7 {
						t.Errorf("terms %+v, want the decode-overlap formula: max(0, 10 − 3)", c.Terms)
					}
				}},
			// The same worker with prefill tracking on takes the normal formula:
			// 64/16 − 3 = 1 prefill block + 10 decode blocks.
			{rust: "test_decode_worker_logit_credits_overlap_without_prefill_tracking/tracking on (control)",
				check: func(t *testing.T, x *explain.Explanation, raw string) {
					c := rcCost(t, x.Decode, agg10, 11)
					if c.Terms.Formula != "prefill" || c.PrefillBlocks != 1 {
						t.Errorf("terms %+v, want the normal formula", c.Terms)
					}
				}},
		}})
	}

	// test_prefill_load_scale_applies_after_overlap_credits: isl 64; w0 has 2
	// device blocks (32 cached tokens) and 3 decode blocks, w1 none; scale 2:
	// w0 = 2·(4 − 2) + 3 = 7, w1 = 2·4 + 0 = 8. Prefill leg, the prefill workers
	// publishing a router_config with active-block tracking on (so w0's decode
	// blocks count; the prefill router adds no request block).
	{
		d := rcDisagg(t64,
			rcWorker{Pod: w0, ID: rcID(0), RouterConfig: prefillTracking, Loads: []rcLoad{{DecodeBlocks: 3}}},
			rcWorker{Pod: w1, ID: rcID(1), RouterConfig: prefillTracking, Loads: []rcLoad{{DecodeBlocks: 0}}})
		d.Cached = []rcCached{{Pod: w0, Blocks: 2}}
		cases = append(cases, rcCase{name: "prefill load scale", dep: d, runs: []rcRun{
			{rust: "test_prefill_load_scale_applies_after_overlap_credits",
				args: []string{"--prefill-load-scale", "2"}, check: func(t *testing.T, x *explain.Explanation, raw string) {
					if !x.Router.PrefillConfig.RouterTrackActiveBlocks || x.Router.PrefillConfig.PrefillLoadScale != 2 {
						t.Errorf("prefill config %+v", x.Router.PrefillConfig)
					}
					c := rcCost(t, x.Prefill, w0, 7)
					if c.CachedTokens != 32 || c.Credit != 2 || c.Terms.RawPrefillBlocks != 4 || c.PrefillBlocks != 2 || c.Terms.PrefillCost != 4 || c.DecodeBlocks != 3 {
						t.Errorf("w0 terms %+v, want 2·(4 − 2) + 3", c.Terms)
					}
					c = rcCost(t, x.Prefill, w1, 8)
					if c.Terms.PrefillCost != 8 || c.DecodeBlocks != 0 {
						t.Errorf("w1 terms %+v, want 2·4 + 0", c.Terms)
					}
					rcSelected(t, x.Prefill, w0)
				}},
		}})
	}

	// test_overlap_credit_above_one_can_prefer_colocated_worker: isl 128; the
	// warm worker has 4 device blocks (64 cached) and 5 decode blocks, the cold
	// one no load. Credit 1: warm 8 − 4 + 5 = 9 > cold 8; credit 1.5: warm
	// 8 − 6 + 5 = 7 < 8. Prefill leg with active-block tracking (router_config).
	{
		d := rcDisagg(t128,
			rcWorker{Pod: w0, ID: rcID(0), RouterConfig: prefillTracking, Loads: []rcLoad{{DecodeBlocks: 5}}},
			rcWorker{Pod: w1, ID: rcID(1), RouterConfig: prefillTracking})
		d.Cached = []rcCached{{Pod: w0, Blocks: 4}}
		cases = append(cases, rcCase{name: "credit above one", dep: d, runs: []rcRun{
			{rust: "test_overlap_credit_above_one_can_prefer_colocated_worker/credit 1",
				check: func(t *testing.T, x *explain.Explanation, raw string) {
					if c := rcCost(t, x.Prefill, w0, 9); c.CachedTokens != 64 || c.Credit != 4 {
						t.Errorf("warm terms %+v", c.Terms)
					}
					rcCost(t, x.Prefill, w1, 8)
					rcSelected(t, x.Prefill, w1)
				}},
			{rust: "test_overlap_credit_above_one_can_prefer_colocated_worker/credit 1.5",
				args: []string{"--overlap-score-credit", "1.5"}, check: func(t *testing.T, x *explain.Explanation, raw string) {
					if c := rcCost(t, x.Prefill, w0, 7); c.Credit != 6 {
						t.Errorf("warm terms %+v", c.Terms)
					}
					rcCost(t, x.Prefill, w1, 8)
					rcSelected(t, x.Prefill, w0)
				}},
		}})
	}

	// test_overlap_credit_decay_can_prefer_less_loaded_cold_worker: isl 64; the
	// warm worker has 4 device blocks (64 cached) and 48 active prefill tokens,
	// the cold one no load. No decay: warm (48 + 64)/16 − 4 = 3 < cold 4. Decay 1:
	// min active prefill 0, excess 3 blocks over 4 request blocks, factor
	// 1/1.75, warm 7 − 4/1.75 = 33/7 > 4. Prefill leg (plain).
	{
		d := rcDisagg(t64,
			rcWorker{Pod: w0, ID: rcID(0), Loads: []rcLoad{{PrefillTokens: 48}}},
			rcWorker{Pod: w1, ID: rcID(1)})
		d.Cached = []rcCached{{Pod: w0, Blocks: 4}}
		cases = append(cases, rcCase{name: "credit decay", dep: d, runs: []rcRun{
			{rust: "test_overlap_credit_decay_can_prefer_less_loaded_cold_worker/no decay",
				check: func(t *testing.T, x *explain.Explanation, raw string) {
					if c := rcCost(t, x.Prefill, w0, 3); c.Terms.ActivePrefillTokens != 48 || c.Terms.RawPrefillTokens != 112 || c.Terms.DecayFactor != 1 {
						t.Errorf("warm terms %+v", c.Terms)
					}
					rcCost(t, x.Prefill, w1, 4)
					rcSelected(t, x.Prefill, w0)
				}},
			{rust: "test_overlap_credit_decay_can_prefer_less_loaded_cold_worker/decay 1",
				args: []string{"--overlap-score-credit-decay", "1"}, check: func(t *testing.T, x *explain.Explanation, raw string) {
					c := rcCost(t, x.Prefill, w0, 7-4*(1/1.75))
					if !rcNear(c.Terms.DecayFactor, 1/1.75) || !rcNear(c.Credit, 4/1.75) {
						t.Errorf("warm terms %+v, want decay factor 1/1.75", c.Terms)
					}
					if c := rcCost(t, x.Prefill, w1, 4); c.Terms.DecayFactor != 1 {
						t.Errorf("cold terms %+v", c.Terms)
					}
					rcSelected(t, x.Prefill, w1)
				}},
		}})
	}

	// Overload, prefill leg: the frontend's /busy_threshold says 100 active
	// prefill tokens mark a worker busy.
	{
		// test_overloaded_high_overlap_worker_is_skipped: w0 holds the request
		// (4 blocks) but has 1000 active prefill tokens; w1 is picked.
		// test_overloaded_pinned_worker_is_not_rerouted: pinning w0
		// (prefill_worker_id, --prefill) fails with PinnedWorkerOverloaded.
		d := rcDisagg(t64,
			rcWorker{Pod: w0, ID: rcID(0), Loads: []rcLoad{{PrefillTokens: 1000}}},
			rcWorker{Pod: w1, ID: rcID(1)})
		d.Cached = []rcCached{{Pod: w0, Blocks: 4}}
		d.BusyThreshold = busyJSON
		cases = append(cases, rcCase{name: "overloaded warm worker", dep: d, runs: []rcRun{
			{rust: "test_overloaded_high_overlap_worker_is_skipped",
				check: func(t *testing.T, x *explain.Explanation, raw string) {
					if th := x.Router.Thresholds.ActivePrefillTokensThreshold; th == nil || *th != 100 {
						t.Errorf("thresholds %+v, want 100 prefill tokens from /busy_threshold", x.Router.Thresholds)
					}
					rcIneligible(t, x.Prefill, w0, "WorkerOverloaded")
					if c := rcCand(t, x.Prefill, w0, 0); c.OverlapBlocks != 4 {
						t.Errorf("w0 overlap %v, want 4 (it holds the request)", c.OverlapBlocks)
					}
					rcCost(t, x.Prefill, w1, 4)
					rcSelected(t, x.Prefill, w1)
					if !x.Verdict.Routable {
						t.Errorf("verdict %+v", x.Verdict)
					}
				}},
			{rust: "test_overloaded_pinned_worker_is_not_rerouted",
				args: []string{"--prefill", w0}, code: 2, check: func(t *testing.T, x *explain.Explanation, raw string) {
					rcFails(t, x, "prefill", "PinnedWorkerOverloaded")
					if x.Prefill.ErrorKind != "PinnedWorkerOverloaded" || len(x.Prefill.Selected) != 0 || x.Decode != nil {
						t.Errorf("prefill stage %+v decode %+v: the pinned worker must not be rerouted", x.Prefill, x.Decode)
					}
				}},
		}})
	}
	{
		// test_all_eligible_workers_overloaded_returns_overload_error (decay 1 as
		// in the Rust config): both prefill workers are busy.
		d := rcDisagg(t16,
			rcWorker{Pod: w0, ID: rcID(0), Loads: []rcLoad{{PrefillTokens: 1000}}},
			rcWorker{Pod: w1, ID: rcID(1), Loads: []rcLoad{{PrefillTokens: 1000}}})
		d.BusyThreshold = busyJSON
		d.RouterArgs = []string{"--router-kv-overlap-score-credit-decay", "1"}
		cases = append(cases, rcCase{name: "all overloaded", dep: d, runs: []rcRun{
			{rust: "test_all_eligible_workers_overloaded_returns_overload_error", code: 2,
				check: func(t *testing.T, x *explain.Explanation, raw string) {
					if x.Router.PrefillConfig.OverlapScoreCreditDecay != 1 {
						t.Errorf("decay %v, want 1 from the frontend args", x.Router.PrefillConfig.OverlapScoreCreditDecay)
					}
					rcFails(t, x, "prefill", "AllEligibleWorkersOverloaded")
					rcIneligible(t, x.Prefill, w0, "WorkerOverloaded")
					rcIneligible(t, x.Prefill, w1, "WorkerOverloaded")
				}},
		}})
	}

	// default_scoring_context_only_computes_minimum_when_decay_uses_it: active
	// prefill 7 and 11; the minimum (7) is taken only when decay is on and
	// prefill tracking too, and only over eligible workers (11 once worker 0 is
	// overloaded: 90 of its 100 KV blocks in use, threshold 0.5). The minimum is
	// not in the JSON; it shows in worker 1's decay factor, 1/(1 + decay·excess)
	// with excess (11 − min)/16 blocks over 4 request blocks. Prefill leg with
	// active-block tracking (router_config), so worker 0's decode blocks count.
	{
		d := rcDisagg(t64,
			rcWorker{Pod: w0, ID: rcID(0), RouterConfig: prefillTracking, TotalKvBlocks: 100, Loads: []rcLoad{{PrefillTokens: 7, DecodeBlocks: 90}}},
			rcWorker{Pod: w1, ID: rcID(1), RouterConfig: prefillTracking, TotalKvBlocks: 100, Loads: []rcLoad{{PrefillTokens: 11}}})
		factors := func(f0, f1 float64) func(t *testing.T, x *explain.Explanation, raw string) {
			return func(t *testing.T, x *explain.Explanation, raw string) {
				if c := rcCand(t, x.Prefill, w0, 0); !rcNear(c.Terms.DecayFactor, f0) {
					t.Errorf("w0 decay factor %v, want %v", c.Terms.DecayFactor, f0)
				}
				if c := rcCand(t, x.Prefill, w1, 0); !rcNear(c.Terms.DecayFactor, f1) {
					t.Errorf("w1 decay factor %v, want %v", c.Terms.DecayFactor, f1)
				}
			}
		}
		overloaded := d
		overloaded.BusyThreshold = `{"thresholds":[{"model":"rust/selector-vectors","active_decode_blocks_threshold":0.5,"active_prefill_tokens_threshold":null,"active_prefill_tokens_threshold_frac":null}]}`
		name := "default_scoring_context_only_computes_minimum_when_decay_uses_it"
		cases = append(cases,
			rcCase{name: "decay minimum", dep: d, runs: []rcRun{
				{rust: name + "/decay 1", args: []string{"--overlap-score-credit-decay", "1"}, check: factors(1, 1/1.0625)},
				{rust: name + "/decay 0", check: factors(1, 1)},
				{rust: name + "/tracking off", args: []string{"--overlap-score-credit-decay", "1", "--track-prefill-tokens=false"}, check: factors(1, 1)},
			}},
			rcCase{name: "decay minimum over eligible workers", dep: overloaded, runs: []rcRun{
				{rust: name + "/minimum over eligible", args: []string{"--overlap-score-credit-decay", "1"}, check: func(t *testing.T, x *explain.Explanation, raw string) {
					rcIneligible(t, x.Prefill, w0, "WorkerOverloaded")
					if c := rcCost(t, x.Prefill, w1, (11.0+64)/16); c.Terms.DecayFactor != 1 {
						t.Errorf("w1 decay factor %v, want 1 (the minimum is its own 11)", c.Terms.DecayFactor)
					}
				}},
			}})
	}

	// Eligibility (scheduling/filter.rs): worker 7 has dp ranks [2, 5) and taint
	// zone-a. Each rank is a candidate with its own load (the metrics' dp_rank
	// label). A pinned rank goes through validate_worker_rank: rank 3 with
	// required zone-a is accepted; required zone-b is unsatisfied (a pinned
	// worker failing its taints is NoEndpoints). Prefill leg (--prefill POD:RANK
	// is prefill_worker_id with a dp rank). Every worker carries zone-a so the
	// decode leg, which inherits the user's constraints, stays routable.
	{
		const p7 = "vectors-prefill-7"
		d := rcDeployment{Tokens: t16, Workers: []rcWorker{
			{Pod: p7, Role: "prefill", ID: rcID(7), DpStart: 2, DpSize: 3, Taints: []string{"zone-a"},
				Loads: []rcLoad{{Rank: 2, PrefillTokens: 160}, {Rank: 3, PrefillTokens: 0}, {Rank: 4, PrefillTokens: 320}}},
			{Pod: decode0, Role: "decode", ID: rcID(900), Taints: []string{"zone-a"}, Loads: []rcLoad{{DecodeBlocks: 0}}},
		}}
		zoneA := `{"required_taints":["zone-a"]}`
		cases = append(cases, rcCase{name: "dp ranks", dep: d, runs: []rcRun{
			{rust: "routing_eligibility_accepts_allowed_rank_matching_constraints",
				args: []string{"--prefill", p7 + ":3", "--routing-constraints", zoneA}, check: func(t *testing.T, x *explain.Explanation, raw string) {
					if x.Prefill.Pick != p7+":3" || string(x.Prefill.Rule) != "pinned" || !x.Verdict.Routable {
						t.Errorf("prefill pick %q rule %s verdict %+v, want %s:3 pinned", x.Prefill.Pick, x.Prefill.Rule, x.Verdict, p7)
					}
					if c := rcCand(t, x.Prefill, p7, 3); !c.Eligible || !c.Selected || c.Cost != 1 {
						t.Errorf("rank 3: %+v", c)
					}
				}},
			// Unpinned, the three ranks are scored separately: (160 + 16)/16 = 11,
			// 16/16 = 1 and (320 + 16)/16 = 21.
			{rust: "routing_eligibility_accepts_allowed_rank_matching_constraints/each rank a candidate",
				check: func(t *testing.T, x *explain.Explanation, raw string) {
					for rank, want := range map[uint32]float64{2: 11, 3: 1, 4: 21} {
						if c := rcCand(t, x.Prefill, p7, rank); !c.Scored || c.Cost != want {
							t.Errorf("rank %d cost %v, want %v", rank, c.Cost, want)
						}
					}
					if len(x.Prefill.Candidates) != 3 || x.Prefill.Pick != p7+":3" {
						t.Errorf("%d candidates, pick %q", len(x.Prefill.Candidates), x.Prefill.Pick)
					}
				}},
			{rust: "routing_eligibility_rejects_unsatisfied_required_taints", code: 2,
				args: []string{"--prefill", p7 + ":3", "--routing-constraints", `{"required_taints":["zone-b"]}`}, check: func(t *testing.T, x *explain.Explanation, raw string) {
					rcFails(t, x, "prefill", "NoEndpoints")
					if c := rcCand(t, x.Prefill, p7, 3); c.Eligible || c.ReasonCode != "RoutingConstraintsUnsatisfied" {
						t.Errorf("rank 3: eligible %v reason %s", c.Eligible, c.ReasonCode)
					}
				}},
			// DpRankUnavailable{start 2, end 5}: the CLI refuses the pin up front.
			{rust: "routing_eligibility_rejects_out_of_range_dp_rank", code: 1,
				args: []string{"--prefill", p7 + ":5"}, wantErr: "--prefill " + p7 + ":5: dp rank must be in [2, 5)"},
		}})
	}

	// Required taints, aggregated (the user's required_taints filter the decode
	// router's workers).
	{
		// test_required_taints_filter_out_incompatible_workers
		d := rcDeployment{Tokens: t16, Workers: []rcWorker{
			{Pod: agg10, ID: rcID(10), Taints: []string{"mdc-a"}},
			{Pod: agg20, ID: rcID(20), Taints: []string{"mdc-b"}},
		}}
		cases = append(cases, rcCase{name: "required taints filter", dep: d, runs: []rcRun{
			{rust: "test_required_taints_filter_out_incompatible_workers",
				args: []string{"--routing-constraints", `{"required_taints":["mdc-b"]}`}, check: func(t *testing.T, x *explain.Explanation, raw string) {
					rcMode(t, x, "aggregated")
					rcIneligible(t, x.Decode, agg10, "RoutingConstraintsUnsatisfied")
					rcSelected(t, x.Decode, agg20)
				}},
		}})
	}
	{
		// test_required_taints_return_no_endpoints_when_no_worker_matches
		d := rcDeployment{Tokens: t16, Workers: []rcWorker{{Pod: agg10, ID: rcID(10), Taints: []string{"mdc-a"}}}}
		cases = append(cases, rcCase{name: "required taints no match", dep: d, runs: []rcRun{
			{rust: "test_required_taints_return_no_endpoints_when_no_worker_matches", code: 2,
				args: []string{"--routing-constraints", `{"required_taints":["mdc-b"]}`}, check: func(t *testing.T, x *explain.Explanation, raw string) {
					rcMode(t, x, "aggregated")
					rcFails(t, x, "decode", "NoEndpoints")
					if x.Decode.ErrorKind != "NoEndpoints" {
						t.Errorf("decode error kind %q", x.Decode.ErrorKind)
					}
					rcIneligible(t, x.Decode, agg10, "RoutingConstraintsUnsatisfied")
				}},
		}})
	}
	{
		// test_required_taints_switch_matching_worker_sets_by_label: three label
		// groups of two; in each the worker with 0 decode blocks beats the one
		// with 400,000 (loads from the frontend's metrics).
		var ws []rcWorker
		for _, g := range []string{"a", "b", "c"} {
			base := uint64(10 * (1 + strings.Index("abc", g)))
			ws = append(ws,
				rcWorker{Pod: fmt.Sprintf("vectors-worker-%d", base), ID: rcID(base), Taints: []string{"mdc-" + g}, Loads: []rcLoad{{DecodeBlocks: 0}}},
				rcWorker{Pod: fmt.Sprintf("vectors-worker-%d", base+1), ID: rcID(base + 1), Taints: []string{"mdc-" + g}, Loads: []rcLoad{{DecodeBlocks: 400_000}}})
		}
		var runs []rcRun
		for i, g := range []string{"a", "b", "c"} {
			winner := fmt.Sprintf("vectors-worker-%d", 10*(i+1))
			runs = append(runs, rcRun{rust: "test_required_taints_switch_matching_worker_sets_by_label/mdc-" + g,
				args: []string{"--routing-constraints", `{"required_taints":["mdc-` + g + `"]}`},
				check: func(t *testing.T, x *explain.Explanation, raw string) {
					rcSelected(t, x.Decode, winner)
					eligible := 0
					for _, c := range x.Decode.Candidates {
						switch {
						case c.Eligible:
							eligible++
						case c.ReasonCode != "RoutingConstraintsUnsatisfied" || !strings.Contains(c.Reason, "mdc-"+g):
							t.Errorf("%s: reason %s %q", c.Worker, c.ReasonCode, c.Reason)
						}
					}
					if eligible != 2 {
						t.Errorf("%d eligible, want 2", eligible)
					}
				}})
		}
		cases = append(cases, rcCase{name: "required taints switch", dep: rcDeployment{Tokens: t16, Workers: ws}, runs: runs})
	}

	// Preferred taints, aggregated: isl 16 is one prefill block and one new
	// decode block, so the Rust test's 100 and 90 decode blocks are 99 and 89
	// active blocks in the frontend's metrics (or --load) plus the request's.
	{
		d := rcDeployment{Tokens: t16, Workers: []rcWorker{
			{Pod: agg10, ID: rcID(10), Taints: []string{"mdc-a"}, Loads: []rcLoad{{DecodeBlocks: 99}}},
			{Pod: agg20, ID: rcID(20), Taints: []string{"mdc-b"}, Loads: []rcLoad{{DecodeBlocks: 89}}},
		}}
		cases = append(cases, rcCase{name: "preferred taints", dep: d, runs: []rcRun{
			// test_preferred_taints_prefer_matching_worker: (1 + 100)·e^−tanh(0.85)
			// ≈ 50.6 for worker 10 against 91 for worker 20.
			{rust: "test_preferred_taints_prefer_matching_worker",
				args: []string{"--routing-constraints", `{"preferred_taints":{"mdc-a":0.85}}`}, check: func(t *testing.T, x *explain.Explanation, raw string) {
					rcMode(t, x, "aggregated")
					c := rcCost(t, x.Decode, agg10, 101*math.Exp(-math.Tanh(float64(float32(0.85)))))
					if math.Abs(c.Cost-50.6) > 0.05 || c.Terms.Logit != 101 || c.PrefillBlocks != 1 || c.DecodeBlocks != 100 || !slices.Equal(c.Terms.PreferredMatched, []string{"mdc-a"}) {
						t.Errorf("worker 10 terms %+v, want (1 + 100)·0.501 ≈ 50.6", c.Terms)
					}
					if c := rcCost(t, x.Decode, agg20, 91); !c.Terms.HasMultiplier || c.Terms.Multiplier != 1 {
						t.Errorf("worker 20 terms %+v, want multiplier 1", c.Terms)
					}
					rcSelected(t, x.Decode, agg10)
					// u64 ids above 2^53 are decimal strings in the JSON.
					if !strings.Contains(raw, fmt.Sprintf(`"instanceId": "%d"`, rcID(10))) {
						t.Errorf("instance id %d not printed as a decimal string", rcID(10))
					}
				}},
			// test_negative_preferred_taints_avoid_matching_worker: loads swapped
			// (90 and 100); 91·e^−tanh(−0.25) ≈ 116.3 for worker 10 against 101.
			{rust: "test_negative_preferred_taints_avoid_matching_worker",
				args: []string{"--routing-constraints", `{"preferred_taints":{"mdc-a":-0.25}}`,
					"--load", agg10 + "=decodeBlocks:89", "--load", agg20 + "=decodeBlocks:99"},
				check: func(t *testing.T, x *explain.Explanation, raw string) {
					c := rcCost(t, x.Decode, agg10, 91*math.Exp(-math.Tanh(float64(float32(-0.25)))))
					if math.Abs(c.Cost-116.3) > 0.05 || c.Terms.Logit != 91 {
						t.Errorf("worker 10 terms %+v, want 91·1.2775 ≈ 116.3", c.Terms)
					}
					rcCost(t, x.Decode, agg20, 101)
					rcSelected(t, x.Decode, agg20)
				}},
		}})
	}

	// test_default_selector_randomizes_zero_temperature_ties: three identical
	// idle workers at temperature 0 are all in the tie set (1/3 each), and the
	// pick varies with the draw. Aggregated, --assume-idle.
	{
		d := rcDeployment{Tokens: t16, Workers: []rcWorker{
			{Pod: "vectors-worker-30", ID: rcID(30), Loads: []rcLoad{{DecodeBlocks: 700}}},
			{Pod: agg10, ID: rcID(10), Loads: []rcLoad{{DecodeBlocks: 5}}},
			{Pod: agg20, ID: rcID(20)},
		}}
		ties := []string{agg10, agg20, "vectors-worker-30"}
		cases = append(cases, rcCase{name: "zero temperature ties", dep: d, runs: []rcRun{
			{rust: "test_default_selector_randomizes_zero_temperature_ties",
				args: []string{"--assume-idle", "--seed", "1"}, check: func(t *testing.T, x *explain.Explanation, raw string) {
					s := x.Decode
					if !s.RandomTie || string(s.Rule) != "minimum-cost-tie-random" || !slices.Equal(s.Selected, ties) || !slices.Contains(ties, s.Pick) {
						t.Errorf("stage rule %s tie %v selected %v pick %s, want a random pick among %v", s.Rule, s.RandomTie, s.Selected, s.Pick, ties)
					}
					for _, c := range s.Candidates {
						if !c.InTieSet || !rcNear(c.Probability, 1.0/3) || c.Cost != 2 {
							t.Errorf("%s: in tie %v probability %v cost %v, want 1/3 at cost 2", c.Worker, c.InTieSet, c.Probability, c.Cost)
						}
					}
				}},
		}})
	}

	// per_request_overrides_change_selection: block size 1, isl 4; the warm
	// worker has 2 device blocks (2 cached tokens) and 1 decode block, the cold
	// one no load. No override: warm 3 < cold 4; overlap_score_credit 0: 5 > 4;
	// prefill_load_scale 0: 1 > 0; legacy overlap_score_weight 0 (scale 0,
	// credit 0): 1 > 0; router_temperature 1: p(warm) = 1/(1 + e^−1). Prefill
	// leg with active-block tracking (router_config); the override comes from
	// --router-config-override, as nvext would carry it.
	{
		toks := rcTokens(4)
		d := rcDisagg(toks,
			rcWorker{Pod: w0, ID: rcID(0), RouterConfig: prefillTracking, Loads: []rcLoad{{DecodeBlocks: 1}}},
			rcWorker{Pod: w1, ID: rcID(1), RouterConfig: prefillTracking})
		d.BlockSize = 1
		d.Cached = []rcCached{{Pod: w0, Blocks: 2}}
		costs := func(warm, cold float64, pick string) func(t *testing.T, x *explain.Explanation, raw string) {
			return func(t *testing.T, x *explain.Explanation, raw string) {
				if x.Request.BlockSize != 1 {
					t.Errorf("block size %d", x.Request.BlockSize)
				}
				rcCost(t, x.Prefill, w0, warm)
				rcCost(t, x.Prefill, w1, cold)
				rcSelected(t, x.Prefill, pick)
			}
		}
		cases = append(cases, rcCase{name: "per-request overrides", dep: d, runs: []rcRun{
			{rust: "per_request_overrides_change_selection/no override", check: costs(3, 4, w0)},
			{rust: "per_request_overrides_change_selection/overlap_score_credit",
				args: []string{"--router-config-override", `{"overlap_score_credit":0}`}, check: costs(5, 4, w1)},
			{rust: "per_request_overrides_change_selection/prefill_load_scale",
				args: []string{"--router-config-override", `{"prefill_load_scale":0}`}, check: costs(1, 0, w1)},
			{rust: "per_request_overrides_change_selection/legacy overlap_score_weight 0",
				args: []string{"--router-config-override", `{"overlap_score_weight":0}`}, check: costs(1, 0, w1)},
			{rust: "per_request_overrides_change_selection/router_temperature",
				args: []string{"--router-config-override", `{"router_temperature":1}`, "--seed", "3"},
				check: func(t *testing.T, x *explain.Explanation, raw string) {
					s := x.Prefill
					warm, cold := rcCost(t, s, w0, 3), rcCost(t, s, w1, 4)
					if string(s.Rule) != "softmax-sample" || s.Temperature != 1 || !rcNear(warm.Probability, 1/(1+math.Exp(-1))) || !rcNear(cold.Probability, 1-1/(1+math.Exp(-1))) {
						t.Errorf("rule %s T %v p(warm) %v p(cold) %v, want softmax at T=1 with p(warm) = 1/(1+e^-1)", s.Rule, s.Temperature, warm.Probability, cold.Probability)
					}
				}},
		}})
	}

	// Topology (lib/llm model_manager.rs and prefill_router): prefill p7
	// publishes zone us-east-1a with required enforcement, p8 zone us-east-1b
	// preferred 0.85; one decode worker per zone. Every worker carries gpu=h100
	// so the user's required taint leaves them eligible.
	{
		const p7, p8, da, db = "vectors-prefill-7", "vectors-prefill-8", "vectors-decode-a", "vectors-decode-b"
		zone := func(z string) map[string]string { return map[string]string{"zone": z} }
		d := rcDeployment{Tokens: t16, Workers: []rcWorker{
			{Pod: p7, Role: "prefill", ID: rcID(7), Taints: []string{"gpu=h100"}, Topology: zone("us-east-1a"), TransferDomain: "zone", Enforcement: "required"},
			{Pod: p8, Role: "prefill", ID: rcID(8), Taints: []string{"gpu=h100"}, Topology: zone("us-east-1b"), TransferDomain: "zone", Enforcement: "preferred", PreferredWeight: rcF(0.85)},
			{Pod: da, Role: "decode", ID: rcID(20), Taints: []string{"gpu=h100"}, Topology: zone("us-east-1a"), Loads: []rcLoad{{DecodeBlocks: 50}}},
			{Pod: db, Role: "decode", ID: rcID(21), Taints: []string{"gpu=h100"}, Topology: zone("us-east-1b"), Loads: []rcLoad{{DecodeBlocks: 10}}},
		}}
		const taintA, taintB = "dynamo.topology/zone=us-east-1a", "dynamo.topology/zone=us-east-1b"
		user := `{"required_taints":["gpu=h100"],"preferred_taints":{"tier=gold":0.5}}`
		cases = append(cases, rcCase{name: "kv transfer constraints", dep: d, runs: []rcRun{
			// kv_transfer_constraints_build_required_and_preferred_constraints,
			// worker 7: required → required taint; decode only in us-east-1a.
			{rust: "kv_transfer_constraints_build_required_and_preferred_constraints/required",
				args: []string{"--prefill", p7}, check: func(t *testing.T, x *explain.Explanation, raw string) {
					tr := x.Transfer
					if tr == nil || string(tr.Rule) != "required" || !slices.Equal(tr.RequiredTaints, []string{taintA}) || len(tr.PreferredTaints) != 0 {
						t.Fatalf("transfer %+v, want required %s", tr, taintA)
					}
					rcIneligible(t, x.Decode, db, "RoutingConstraintsUnsatisfied")
					rcSelected(t, x.Decode, da)
				}},
			// worker 8: preferred 0.85 → preferred taint; both decode workers
			// stay eligible and the matching one gets the multiplier.
			{rust: "kv_transfer_constraints_build_required_and_preferred_constraints/preferred",
				args: []string{"--prefill", p8}, check: func(t *testing.T, x *explain.Explanation, raw string) {
					tr := x.Transfer
					if tr == nil || string(tr.Rule) != "preferred" || len(tr.RequiredTaints) != 0 || len(tr.PreferredTaints) != 1 || math.Abs(tr.PreferredTaints[taintB]-0.85) > 1e-6 {
						t.Fatalf("transfer %+v, want preferred %s: 0.85", tr, taintB)
					}
					if c := rcCand(t, x.Decode, da, 0); !c.Eligible || c.Terms.Multiplier != 1 {
						t.Errorf("%s: eligible %v multiplier %v", da, c.Eligible, c.Terms.Multiplier)
					}
					if c := rcCand(t, x.Decode, db, 0); !c.Eligible || !rcNear(c.Terms.Multiplier, math.Exp(-math.Tanh(float64(float32(0.85))))) {
						t.Errorf("%s: eligible %v multiplier %v", db, c.Eligible, c.Terms.Multiplier)
					}
				}},
			// merge_decode_topology_constraints_creates_and_preserves_constraints:
			// the user's required and preferred taints and the topology ones
			// coexist on the decode leg.
			{rust: "merge_decode_topology_constraints_creates_and_preserves_constraints/required",
				args: []string{"--prefill", p7, "--routing-constraints", user}, check: func(t *testing.T, x *explain.Explanation, raw string) {
					c := x.Decode.Constraints
					req := slices.Sorted(slices.Values(c.RequiredTaints))
					if !slices.Equal(req, []string{taintA, "gpu=h100"}) || len(c.PreferredTaints) != 1 || c.PreferredTaints["tier=gold"] != 0.5 {
						t.Errorf("decode constraints %+v, want the user's and the topology's", c)
					}
					if pc := x.Prefill.Constraints; !slices.Equal(pc.RequiredTaints, []string{"gpu=h100"}) {
						t.Errorf("prefill constraints %+v, want the user's only", pc)
					}
				}},
			{rust: "merge_decode_topology_constraints_creates_and_preserves_constraints/preferred",
				args: []string{"--prefill", p8, "--routing-constraints", user}, check: func(t *testing.T, x *explain.Explanation, raw string) {
					c := x.Decode.Constraints
					if !slices.Equal(c.RequiredTaints, []string{"gpu=h100"}) || len(c.PreferredTaints) != 2 || c.PreferredTaints["tier=gold"] != 0.5 || math.Abs(c.PreferredTaints[taintB]-0.85) > 1e-6 {
						t.Errorf("decode constraints %+v, want the user's and the topology's", c)
					}
				}},
		}})
	}

	// decode_router_override_disables_overlap_and_prefill_tracking: the decode
	// leg runs with credit 0, assume_kv_reuse false and track_prefill_tokens
	// false, and keeps the temperature. The decode worker holding 3 of the 4
	// request blocks gets no credit, no prefill term, and all 4 request blocks
	// as new decode load; the frontend's --router-temperature 0.5 still applies.
	{
		d := rcDisagg(t64, rcWorker{Pod: w0, ID: rcID(0)})
		d.Workers = append(d.Workers, rcWorker{Pod: "vectors-decode-1", Role: "decode", ID: rcID(901), Loads: []rcLoad{{DecodeBlocks: 2}}})
		d.Workers[1].Loads = []rcLoad{{DecodeBlocks: 3}}
		d.Cached = []rcCached{{Pod: decode0, Blocks: 3}}
		d.RouterArgs = []string{"--router-temperature", "0.5"}
		cases = append(cases, rcCase{name: "decode override", dep: d, runs: []rcRun{
			{rust: "decode_router_override_disables_overlap_and_prefill_tracking",
				args: []string{"--seed", "11"}, check: func(t *testing.T, x *explain.Explanation, raw string) {
					c := rcCost(t, x.Decode, decode0, 7)
					if c.OverlapBlocks != 3 || c.Credit != 0 || c.Terms.RawPrefillTokens != 0 || c.PrefillBlocks != 0 || c.Terms.AdditionalActiveBlocks != 4 || c.DecodeBlocks != 7 {
						t.Errorf("decode terms %+v, want no credit for 3 cached blocks, no prefill term, 3 + 4 decode blocks", c.Terms)
					}
					rcCost(t, x.Decode, "vectors-decode-1", 6)
					if x.Decode.Temperature != 0.5 || string(x.Decode.Rule) != "softmax-sample" {
						t.Errorf("decode temperature %v rule %s, want 0.5 kept", x.Decode.Temperature, x.Decode.Rule)
					}
				}},
		}})
	}
	return cases
}

// TestRustSelectorCasesCLI reproduces Dynamo's Rust selector tests end to end.
func TestRustSelectorCasesCLI(t *testing.T) {
	reproduced := map[string]bool{}
	for _, c := range rcRustCases() {
		t.Run(c.name, func(t *testing.T) {
			capture := c.dep.Write(t)
			for _, r := range c.runs {
				base, _, _ := strings.Cut(r.rust, "/")
				reproduced[base] = true
				t.Run(strings.ReplaceAll(r.rust, "/", ": "), func(t *testing.T) {
					x, res := rcExplain(t, capture, c.dep.Tokens, r.args...)
					if res.ExitCode != r.code {
						t.Fatalf("exit %d, want %d; stderr: %s", res.ExitCode, r.code, res.Stderr)
					}
					if r.code == 1 {
						if !strings.Contains(res.Stderr, r.wantErr) {
							t.Errorf("stderr %q, want %q", res.Stderr, r.wantErr)
						}
						return
					}
					for _, n := range x.Notes {
						if n.Severity == "warning" {
							t.Errorf("the capture draws a warning: %s", n.Message)
						}
					}
					r.check(t, x, res.Stdout)
				})
			}
		})
	}
	if len(reproduced) < 8 {
		t.Errorf("only %d Rust tests reproduced", len(reproduced))
	}
}

// TestRustZeroTemperatureTiesVaryWithSeed: test_default_selector_randomizes_zero_temperature_ties
// draws 120 times and wants more than one distinct worker; here every --seed
// picks within the tie set, the same seed picks the same worker, and the seeds
// together pick more than one.
func TestRustZeroTemperatureTiesVaryWithSeed(t *testing.T) {
	d := rcDeployment{Tokens: rcTokens(16), Workers: []rcWorker{
		{Pod: "vectors-worker-30", ID: rcID(30)}, {Pod: "vectors-worker-10", ID: rcID(10)}, {Pod: "vectors-worker-20", ID: rcID(20)},
	}}
	capture := d.Write(t)
	picks := map[string]int{}
	for seed := range 24 {
		x, r := rcExplain(t, capture, d.Tokens, "--seed", fmt.Sprint(seed))
		if r.ExitCode != 0 || len(x.Decode.Selected) != 3 || !slices.Contains(x.Decode.Selected, x.Decode.Pick) {
			t.Fatalf("seed %d: exit %d selected %v pick %q", seed, r.ExitCode, x.Decode.Selected, x.Decode.Pick)
		}
		picks[x.Decode.Pick]++
		if seed == 5 {
			again, _ := rcExplain(t, capture, d.Tokens, "--seed", "5")
			if again.Decode.Pick != x.Decode.Pick {
				t.Errorf("seed 5 picked %s then %s", x.Decode.Pick, again.Decode.Pick)
			}
		}
	}
	if len(picks) < 2 {
		t.Errorf("24 seeds all picked the same worker: %v", picks)
	}
}

// TestRustCasesBadInput: bad inputs through the CLI give a clear error or
// verdict with exit code 1 or 2, never a panic.
func TestRustCasesBadInput(t *testing.T) {
	dir := t.TempDir()
	negative := filepath.Join(dir, "negative.tokens")
	if err := os.WriteFile(negative, []byte("# a negative id\n11 12 -3 14\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	withWorkers := rcDeployment{Tokens: rcTokens(16), Workers: []rcWorker{{Pod: "vectors-worker-10", ID: rcID(10)}}}.Write(t)
	noWorkers := rcDeployment{Name: "empty"}.Write(t)
	tests := []struct {
		name    string
		args    []string
		code    int
		wantErr string
		check   func(t *testing.T, x *explain.Explanation)
	}{
		{name: "token file with a negative id", args: []string{"--from-file", withWorkers, "--token-file", negative},
			code: 1, wantErr: `token 3: token id "-3" is not a non-negative integer`},
		{name: "exclude-worker names a pod that is not a worker (the frontend)",
			args: []string{"--from-file", withWorkers, "--tokens", "1,2,3", "--exclude-worker", "vectors-0-frontend-5d8f7"},
			code: 1, wantErr: "--exclude-worker vectors-0-frontend-5d8f7: no worker pod of rust/vectors has that name (workers: vectors-worker-10)"},
		{name: "deployment with no workers", args: []string{"--from-file", noWorkers, "--tokens", "1,2,3"},
			code: 2, check: func(t *testing.T, x *explain.Explanation) {
				// No worker live: the frontend does not serve the model at all.
				if x.Deployment != "empty" || x.Verdict.Routable || x.Verdict.Stage != explain.StageFrontend || x.Verdict.Error != "ModelNotReady" || x.Verdict.Cause == "" || x.Verdict.Fix == "" {
					t.Errorf("verdict %+v, want ModelNotReady at the frontend with a cause and a fix", x.Verdict)
				}
				if x.Prefill != nil || x.Decode != nil {
					t.Errorf("stages prefill %+v decode %+v", x.Prefill, x.Decode)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			argv := append(append([]string{"explain-route"}, tt.args...), "-o", "json")
			r := cmdtest.Run(t, argv...)
			if strings.Contains(r.Stderr, "panic") || strings.Contains(r.Stderr, "goroutine ") {
				t.Fatalf("panic: %s", r.Stderr)
			}
			if r.ExitCode != tt.code {
				t.Fatalf("exit %d, want %d; stderr %q", r.ExitCode, tt.code, r.Stderr)
			}
			if tt.code == 1 {
				if !strings.Contains(r.Stderr, tt.wantErr) || r.Stdout != "" {
					t.Errorf("stderr %q stdout %q, want %q and no output", r.Stderr, r.Stdout, tt.wantErr)
				}
				return
			}
			var x explain.Explanation
			if err := json.Unmarshal([]byte(r.Stdout), &x); err != nil {
				t.Fatalf("not JSON: %v\n%s", err, r.Stdout)
			}
			tt.check(t, &x)
		})
	}
}
