package audit_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/audit"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
)

func u64p(v uint64) *uint64 { return &v }

func num(t *testing.T, s string, exact bool) audit.Number {
	t.Helper()
	var n audit.Number
	if exact {
		n = audit.Debug(mustFloat(t, s))
	} else {
		n = audit.Printed(mustFloat(t, s), decimals(s))
	}
	if n.Text != s {
		t.Fatalf("number %q prints as %q", s, n.Text)
	}
	return n
}

func decimals(s string) int {
	if i := strings.IndexByte(s, '.'); i >= 0 {
		return len(s) - i - 1
	}
	return 0
}

func mustFloat(t *testing.T, s string) float64 {
	t.Helper()
	n, err := parseFloat(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func w(id uint64, rank uint32) routecore.WorkerWithDpRank {
	return routecore.WorkerWithDpRank{WorkerID: routecore.WorkerID(id), DpRank: rank}
}

// The lines below are written by hand exactly as the router's macros print
// them (see doc.go for each format string's file and commit), not by
// FormatLine: they pin the parser to the router, not to itself.
func TestParseLine(t *testing.T) {
	const uuid = "5f0c8f3e-6a1b-4c2d-9e8f-0a1b2c3d4e5f"
	const bigID = 18446744073709551615 // u64::MAX: no float64 holds it
	cases := []struct {
		name string
		line string
		want audit.Record
	}{
		{
			name: "structured Selected, prefill, text",
			line: `2026-11-20T12:04:00.000100Z  INFO dynamo_kv_router::scheduling::selector: Selected worker router_mode="kv" request_id="` + uuid + `" worker_id=18446744073709551615 worker_type=prefill dp_rank=0 logit=2.8125 effective_cached_blocks=10.0 host_pinned_blocks=0 disk_blocks=0 total_kv_blocks=Some(4096)`,
			want: audit.Record{Format: audit.FormatText, Kind: audit.KindSelected, Time: "2026-11-20T12:04:00.000100Z", Level: "INFO",
				RequestID: uuid, WorkerType: "prefill",
				Selection: &audit.Selection{Form: "structured", Worker: w(bigID, 0), Logit: num(t, "2.8125", true),
					EffectiveCachedBlocks: ptr(num(t, "10.0", true)), HostPinnedBlocks: u64p(0), DiskBlocks: u64p(0), TotalKvBlocks: u64p(4096), RouterMode: "kv"}},
		},
		{
			name: "structured Selected, decode, ANSI colour and a kubectl --prefix",
			line: "[pod/qwen-frontend-0/main] \x1b[2m2026-11-20T12:04:00.000200Z\x1b[0m \x1b[32m INFO\x1b[0m \x1b[2mdynamo_kv_router::scheduling::selector\x1b[0m\x1b[2m:\x1b[0m Selected worker \x1b[3mrouter_mode\x1b[0m\x1b[2m=\x1b[0m\"kv\" \x1b[3mrequest_id\x1b[0m\x1b[2m=\x1b[0m\"r-1\" \x1b[3mworker_id\x1b[0m\x1b[2m=\x1b[0m9007199254740993 \x1b[3mworker_type\x1b[0m\x1b[2m=\x1b[0mdecode \x1b[3mdp_rank\x1b[0m\x1b[2m=\x1b[0m1 \x1b[3mlogit\x1b[0m\x1b[2m=\x1b[0m41.0 \x1b[3mhost_pinned_blocks\x1b[0m\x1b[2m=\x1b[0m0 \x1b[3mdisk_blocks\x1b[0m\x1b[2m=\x1b[0m0",
			want: audit.Record{Format: audit.FormatANSI, Kind: audit.KindSelected, Time: "2026-11-20T12:04:00.000200Z", Level: "INFO",
				RequestID: "r-1", WorkerType: "decode",
				Selection: &audit.Selection{Form: "structured", Worker: w(9007199254740993, 1), Logit: num(t, "41.0", true),
					HostPinnedBlocks: u64p(0), DiskBlocks: u64p(0), RouterMode: "kv"}},
		},
		{
			name: "structured Selected, JSON, numeric request id parsed as JSON by record_str",
			line: `{"time":"2026-11-20T12:04:00.000300Z","level":"INFO","file":"lib/kv-router/src/scheduling/selector/mod.rs","line":258,"target":"dynamo_kv_router::scheduling::selector","message":"Selected worker","disk_blocks":0,"dp_rank":"0","effective_cached_blocks":3.5,"host_pinned_blocks":2,"logit":0.1,"request_id":42,"router_mode":"kv","total_kv_blocks":"None","worker_id":18446744073709551615,"worker_type":"prefill"}`,
			want: audit.Record{Format: audit.FormatJSON, Kind: audit.KindSelected, Time: "2026-11-20T12:04:00.000300Z", Level: "INFO",
				RequestID: "42", WorkerType: "prefill",
				Selection: &audit.Selection{Form: "structured", Worker: w(bigID, 0), Logit: num(t, "0.1", true),
					EffectiveCachedBlocks: ptr(num(t, "3.5", true)), HostPinnedBlocks: u64p(2), DiskBlocks: u64p(0), RouterMode: "kv"}},
		},
		{
			name: "pinned",
			line: `2026-11-20T12:04:01.000000Z  INFO dynamo_kv_router::scheduling::selector: Selected pinned worker: worker_type=decode, worker_id=7 dp_rank=0, logit: 12.000, effective cached blocks: 0.00 request_id="p-1"`,
			want: audit.Record{Format: audit.FormatText, Kind: audit.KindSelected, Time: "2026-11-20T12:04:01.000000Z", Level: "INFO",
				RequestID: "p-1", WorkerType: "decode",
				Selection: &audit.Selection{Form: "pinned", Worker: w(7, 0), Logit: num(t, "12.000", false), EffectiveCachedBlocks: ptr(num(t, "0.00", false))}},
		},
		{
			name: "older text Selected with tiers, tree size and total blocks",
			line: `2026-01-05T09:00:00.000000Z  INFO dynamo_kv_router::scheduling::selector: Selected worker: worker_type=prefill, worker_id=3 dp_rank=2, logit: 5.250, effective cached blocks: 4.75, host_pinned blocks: 1, disk blocks: 0, tree size: 120, total blocks: 2048`,
			want: audit.Record{Format: audit.FormatText, Kind: audit.KindSelected, Time: "2026-01-05T09:00:00.000000Z", Level: "INFO", WorkerType: "prefill",
				Selection: &audit.Selection{Form: "text", Worker: w(3, 2), Logit: num(t, "5.250", false), EffectiveCachedBlocks: ptr(num(t, "4.75", false)),
					HostPinnedBlocks: u64p(1), DiskBlocks: u64p(0), TreeSize: u64p(120), TotalKvBlocks: u64p(2048)}},
		},
		{
			name: "first-generation Selected without worker_type",
			line: `2025-06-01T00:00:00.000000Z  INFO dynamo_kv_router::scheduling::selector: Selected worker: worker_id=3 dp_rank=0, logit: 5.000, cached blocks: 2, tree size: 7`,
			want: audit.Record{Format: audit.FormatText, Kind: audit.KindSelected, Time: "2025-06-01T00:00:00.000000Z", Level: "INFO",
				Selection: &audit.Selection{Form: "text-v1", Worker: w(3, 0), Logit: num(t, "5.000", false), EffectiveCachedBlocks: ptr(num(t, "2", false)), TreeSize: u64p(7)}},
		},
		{
			name: "newest Formula",
			line: `2026-11-20T12:04:00.000050Z DEBUG dynamo_kv_router::scheduling::selector::default: Formula for worker_id=11 dp_rank=0 with 10.00 effective cached blocks: 2.812 = prefill_load_scale * adjusted_prefill_blocks + decode_blocks + active_request_cost_blocks = 1.000 * 2.812 + 0.000 + 0.000 (raw_prefill_blocks: 12.812, overlap_credit_blocks: 10.000, overlap_credit_decay: 1.000) request_id="` + uuid + `" worker_type="prefill"`,
			want: audit.Record{Format: audit.FormatText, Kind: audit.KindFormula, Time: "2026-11-20T12:04:00.000050Z", Level: "DEBUG", RequestID: uuid, WorkerType: "prefill",
				Formula: &audit.Formula{Name: "Formula", Shape: audit.ShapePrefill, Worker: w(11, 0), EffectiveBlocks: num(t, "10.00", false), Logit: num(t, "2.812", false),
					Scale: num(t, "1.000", false), Adjusted: num(t, "2.812", false), Decode: num(t, "0.000", false), RequestCost: num(t, "0.000", false),
					Raw: num(t, "12.812", false), Credit: num(t, "10.000", false), Decay: num(t, "1.000", false)}},
		},
		{
			name: "newest Formula with shared-cache hits, JSON",
			line: `{"time":"t","level":"DEBUG","file":"lib/kv-router/src/scheduling/selector/default.rs","line":356,"target":"dynamo_kv_router::scheduling::selector::default","message":"Pinned formula for worker_id=5 dp_rank=0 with 2.00 effective cached blocks, 2 shared blocks beyond device (multiplier=0.50): 3.000 = prefill_load_scale * adjusted_prefill_blocks + decode_blocks + active_request_cost_blocks = 1.000 * 3.000 + 0.000 + 0.000 (raw_prefill_blocks: 6.000, overlap_credit_blocks: 3.000, overlap_credit_decay: 1.000)","request_id":"x","worker_type":"prefill"}`,
			want: audit.Record{Format: audit.FormatJSON, Kind: audit.KindFormula, Time: "t", Level: "DEBUG", RequestID: "x", WorkerType: "prefill",
				Formula: &audit.Formula{Name: "Pinned formula", Shape: audit.ShapePrefill, Worker: w(5, 0), EffectiveBlocks: num(t, "2.00", false),
					SharedBeyond: u64p(2), SharedMultiplier: ptr(num(t, "0.50", false)), Logit: num(t, "3.000", false),
					Scale: num(t, "1.000", false), Adjusted: num(t, "3.000", false), Decode: num(t, "0.000", false), RequestCost: num(t, "0.000", false),
					Raw: num(t, "6.000", false), Credit: num(t, "3.000", false), Decay: num(t, "1.000", false)}},
		},
		{
			name: "decode branch without request_id (selector/default.rs @07a6c9ce)",
			line: `2026-11-20T12:04:02.000000Z DEBUG dynamo_kv_router::scheduling::selector::default: Formula for worker_id=21 dp_rank=0 with 3.00 effective cached blocks: 7.000 = max(0, decode_blocks - overlap_credit_blocks) + active_request_cost_blocks = max(0, 10.000 - 3.000) + 0.000`,
			want: audit.Record{Format: audit.FormatText, Kind: audit.KindFormula, Time: "2026-11-20T12:04:02.000000Z", Level: "DEBUG",
				Formula: &audit.Formula{Name: "Formula", Shape: audit.ShapeDecodeOverlap, Worker: w(21, 0), EffectiveBlocks: num(t, "3.00", false), Logit: num(t, "7.000", false),
					Decode: num(t, "10.000", false), Credit: num(t, "3.000", false), RequestCost: num(t, "0.000", false)}},
		},
		{
			name: "session affinity, weighted formula of older selectors",
			line: `2026-01-05T09:00:00.000000Z DEBUG dynamo_kv_router::scheduling::selector::default: Session affinity formula for worker_id=4 dp_rank=0 with 1.50 effective cached blocks: 6.500 = 1.0 * prefill_blocks + decode_blocks = 1.0 * 4.500 + 2.000`,
			want: audit.Record{Format: audit.FormatText, Kind: audit.KindFormula, Time: "2026-01-05T09:00:00.000000Z", Level: "DEBUG",
				Formula: &audit.Formula{Name: "Session affinity formula", Shape: audit.ShapeWeighted, Worker: w(4, 0), EffectiveBlocks: num(t, "1.50", false), Logit: num(t, "6.500", false),
					Weight: num(t, "1.0", false), PrefillBlocks: num(t, "4.500", false), Decode: num(t, "2.000", false)}},
		},
		{
			name: "older shared-cache form",
			line: `x DEBUG y: Formula for worker_id=0 dp_rank=0 with 2.00 effective device blocks, 2 shared blocks beyond device (multiplier=0.50): 3.000 = 1.0 * adjusted_prefill_blocks + decode_blocks = 1.0 * 3.000 + 0.000 (prefill_tokens: 4 -> 3)`,
			want: audit.Record{Format: audit.FormatText, Kind: audit.KindFormula, Level: "DEBUG",
				Formula: &audit.Formula{Name: "Formula", Shape: audit.ShapeWeighted, Worker: w(0, 0), EffectiveBlocks: num(t, "2.00", false),
					SharedBeyond: u64p(2), SharedMultiplier: ptr(num(t, "0.50", false)), Logit: num(t, "3.000", false),
					Weight: num(t, "1.0", false), PrefillBlocks: num(t, "3.000", false), Decode: num(t, "0.000", false), PrefillTokens: u64p(4), AdjustedTokens: u64p(3)}},
		},
		{
			name: "first-generation formula (selector.rs @ccd1706e)",
			line: `2025-06-01T00:00:00.000000Z  INFO dynamo_kv_router::scheduling::selector: Formula for worker_id=3 dp_rank=0 with 2 cached blocks: 5.000 = 1.0 * prefill_blocks + decode_blocks = 1.0 * 3.000 + 2.000`,
			want: audit.Record{Format: audit.FormatText, Kind: audit.KindFormula, Time: "2025-06-01T00:00:00.000000Z", Level: "INFO",
				Formula: &audit.Formula{Name: "Formula", Shape: audit.ShapeWeighted, Worker: w(3, 0), EffectiveBlocks: num(t, "2", false), Logit: num(t, "5.000", false),
					Weight: num(t, "1.0", false), PrefillBlocks: num(t, "3.000", false), Decode: num(t, "2.000", false)}},
		},
		{
			name: "[ROUTING] Best with its fields and span fields after them",
			line: `2026-11-20T12:04:00.000400Z DEBUG http-request: dynamo_llm::kv_router::push_router::selection: [ROUTING] Best: worker_18446744073709551615 dp_rank=0 with 10/13 blocks overlap request_id=` + uuid + ` worker_id=18446744073709551615 dp_rank=0 overlap_blocks=10 total_blocks=13 method=POST request_id=other`,
			want: audit.Record{Format: audit.FormatText, Kind: audit.KindBest, Time: "2026-11-20T12:04:00.000400Z", Level: "DEBUG", RequestID: uuid,
				Best: &audit.Best{Worker: w(bigID, 0), OverlapBlocks: 10, TotalBlocks: 13}},
		},
		{
			name: "[ROUTING] Best of an older router, no dp_rank, no fields",
			line: `DEBUG [ROUTING] Best: worker_7 with 3/5 blocks overlap`,
			want: audit.Record{Format: audit.FormatText, Kind: audit.KindBest, Level: "DEBUG", Best: &audit.Best{Worker: w(7, 0), OverlapBlocks: 3, TotalBlocks: 5}},
		},
		{
			name: "[ROUTING_INPUT], text, u64 hashes above 2^53",
			line: `2026-11-20T12:04:00.000010Z DEBUG dynamo_llm::kv_router: [ROUTING_INPUT] request local hashes request_id="r" isl_tokens=40 block_size=16 num_blocks=2 local_hashes=[14643705804678351452, 9007199254740993]`,
			want: audit.Record{Format: audit.FormatText, Kind: audit.KindInput, Time: "2026-11-20T12:04:00.000010Z", Level: "DEBUG", RequestID: "r",
				Input: &audit.RoutingInput{ISLTokens: 40, BlockSize: 16, NumBlocks: 2, LocalHashes: []uint64{14643705804678351452, 9007199254740993}}},
		},
		{
			name: "[ROUTING_INPUT], JSON behind kubectl --timestamps",
			line: `2026-11-20T12:04:00.5Z {"time":"t","level":"DEBUG","target":"dynamo_llm::kv_router","message":"[ROUTING_INPUT] request local hashes","block_size":16,"isl_tokens":16,"local_hashes":"[1]","num_blocks":1,"request_id":"r"}`,
			want: audit.Record{Format: audit.FormatJSON, Kind: audit.KindInput, Time: "t", Level: "DEBUG", RequestID: "r",
				Input: &audit.RoutingInput{ISLTokens: 16, BlockSize: 16, NumBlocks: 1, LocalHashes: []uint64{1}}},
		},
		{
			name: "request id with escapes and the '-' of a request without one",
			line: `t DEBUG x: Formula for worker_id=1 dp_rank=0 with 0.00 effective cached blocks: 1.000 = prefill_load_scale * adjusted_prefill_blocks + decode_blocks + active_request_cost_blocks = 1.000 * 1.000 + 0.000 + 0.000 (raw_prefill_blocks: 1.000, overlap_credit_blocks: 0.000, overlap_credit_decay: 1.000) request_id="a\"b\u{1b}" worker_type="prefill"`,
			want: audit.Record{Format: audit.FormatText, Kind: audit.KindFormula, Level: "DEBUG", RequestID: "a\"b\x1b", WorkerType: "prefill",
				Formula: &audit.Formula{Name: "Formula", Shape: audit.ShapePrefill, Worker: w(1, 0), EffectiveBlocks: num(t, "0.00", false), Logit: num(t, "1.000", false),
					Scale: num(t, "1.000", false), Adjusted: num(t, "1.000", false), Decode: num(t, "0.000", false), RequestCost: num(t, "0.000", false),
					Raw: num(t, "1.000", false), Credit: num(t, "0.000", false), Decay: num(t, "1.000", false)}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok, err := audit.ParseLine([]byte(tc.line))
			if err != nil || !ok {
				t.Fatalf("ParseLine: ok=%v err=%v", ok, err)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// TestParseLineRejects: lines that are not the router's, and router lines
// that are cut or mangled.
func TestParseLineRejects(t *testing.T) {
	cases := []struct {
		name      string
		line      string
		malformed bool
	}{
		{"another program", `2026-11-20 GET /v1/models 200`, false},
		{"the overload error shares a prefix", `ERROR Selected worker is overloaded, please retry later`, false},
		{"a sentence about a selected worker", `INFO Selected workers: 3`, false},
		{"a cut Formula line", `DEBUG x: Formula for worker_id=11 dp_rank=0 with 10.00 effective cached blocks: 2.812 = prefill_load_scale * adjusted_pre`, true},
		{"a Formula with a float worker id", `DEBUG x: Formula for worker_id=1.5e3 dp_rank=0 with 1.00 effective cached blocks: 1.000 = 1.0 * prefill_blocks + decode_blocks = 1.0 * 1.000 + 0.000`, true},
		{"a worker id above u64", `INFO x: Selected worker router_mode="kv" worker_id=18446744073709551616 logit=1.0`, true},
		{"JSON worker id as a float", `{"message":"Selected worker","worker_id":1.0,"logit":1.0}`, true},
		{"Selected without a logit", `INFO x: Selected worker worker_id=3 dp_rank=0`, true},
		{"a hash list cut short", `DEBUG x: [ROUTING_INPUT] request local hashes request_id="r" local_hashes=[1, 2`, true},
		{"a hash that is not a u64", `DEBUG x: [ROUTING_INPUT] request local hashes request_id="r" local_hashes=[1, -2]`, true},
		{"weights that disagree", `DEBUG x: Formula for worker_id=1 dp_rank=0 with 1.00 effective cached blocks: 1.000 = 1.0 * prefill_blocks + decode_blocks = 2.0 * 1.000 + 0.000`, true},
		{"infinity spelled out", `DEBUG x: Formula for worker_id=1 dp_rank=0 with infinity effective cached blocks: 1.000 = 1.0 * prefill_blocks + decode_blocks = 1.0 * 1.000 + 0.000`, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, ok, err := audit.ParseLine([]byte(tc.line))
			if tc.malformed {
				if !errors.Is(err, audit.ErrMalformed) || !ok {
					t.Fatalf("want a malformed router line, got ok=%v err=%v", ok, err)
				}
				return
			}
			if ok || err != nil {
				t.Fatalf("want not a router line, got ok=%v err=%v", ok, err)
			}
		})
	}
}

func parseFloat(s string) (float64, error) { return strconv.ParseFloat(s, 64) }
