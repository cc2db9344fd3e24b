package audit_test

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/audit"
)

// TestFormatLineReproducesTheRouter: FormatLine writes back, byte for byte,
// lines written by hand as the router prints them.
func TestFormatLineReproducesTheRouter(t *testing.T) {
	lines := []struct {
		format audit.Format
		line   string
	}{
		{audit.FormatText, `2026-11-20T12:04:00.000050Z DEBUG dynamo_kv_router::scheduling::selector::default: Formula for worker_id=11 dp_rank=0 with 10.00 effective cached blocks: 2.812 = prefill_load_scale * adjusted_prefill_blocks + decode_blocks + active_request_cost_blocks = 1.000 * 2.812 + 0.000 + 0.000 (raw_prefill_blocks: 12.812, overlap_credit_blocks: 10.000, overlap_credit_decay: 1.000) request_id="5f0c8f3e" worker_type="prefill"`},
		{audit.FormatText, `2026-11-20T12:04:00.000100Z  INFO dynamo_kv_router::scheduling::selector: Selected worker router_mode="kv" request_id="5f0c8f3e" worker_id=18446744073709551615 worker_type=prefill dp_rank=0 logit=2.8125 effective_cached_blocks=10.0 host_pinned_blocks=0 disk_blocks=0 total_kv_blocks=Some(4096)`},
		{audit.FormatText, `2026-11-20T12:04:00.000100Z  INFO dynamo_kv_router::scheduling::selector: Selected worker router_mode="kv" request_id="r" worker_id=3 worker_type=decode dp_rank=1 logit=41.0 host_pinned_blocks=0 disk_blocks=0`},
		{audit.FormatText, `2026-11-20T12:04:00.000400Z DEBUG dynamo_llm::kv_router::push_router::selection: [ROUTING] Best: worker_3 dp_rank=0 with 10/13 blocks overlap request_id=5f0c8f3e worker_id=3 dp_rank=0 overlap_blocks=10 total_blocks=13`},
		{audit.FormatText, `2026-11-20T12:04:00.000010Z DEBUG dynamo_llm::kv_router: [ROUTING_INPUT] request local hashes request_id="r" isl_tokens=40 block_size=16 num_blocks=2 local_hashes=[14643705804678351452, 9007199254740993]`},
		{audit.FormatText, `2026-11-20T12:04:02.000000Z DEBUG dynamo_kv_router::scheduling::selector::default: Formula for worker_id=21 dp_rank=0 with 3.00 effective cached blocks: 7.000 = max(0, decode_blocks - overlap_credit_blocks) + active_request_cost_blocks = max(0, 10.000 - 3.000) + 0.000 request_id="r" worker_type="decode"`},
		{audit.FormatJSON, `{"time":"2026-11-20T12:04:00.000300Z","level":"INFO","file":"lib/kv-router/src/scheduling/selector/mod.rs","line":258,"target":"dynamo_kv_router::scheduling::selector","message":"Selected worker","disk_blocks":0,"dp_rank":"0","effective_cached_blocks":3.5,"host_pinned_blocks":2,"logit":0.1,"request_id":42,"router_mode":"kv","total_kv_blocks":"None","worker_id":18446744073709551615,"worker_type":"prefill"}`},
		{audit.FormatANSI, "\x1b[2m2026-11-20T12:04:00.000200Z\x1b[0m \x1b[32m INFO\x1b[0m \x1b[2mdynamo_kv_router::scheduling::selector\x1b[0m\x1b[2m:\x1b[0m Selected worker \x1b[3mrouter_mode\x1b[0m\x1b[2m=\x1b[0m\"kv\" \x1b[3mrequest_id\x1b[0m\x1b[2m=\x1b[0m\"r-1\" \x1b[3mworker_id\x1b[0m\x1b[2m=\x1b[0m9007199254740993 \x1b[3mworker_type\x1b[0m\x1b[2m=\x1b[0mdecode \x1b[3mdp_rank\x1b[0m\x1b[2m=\x1b[0m1 \x1b[3mlogit\x1b[0m\x1b[2m=\x1b[0m41.0 \x1b[3mhost_pinned_blocks\x1b[0m\x1b[2m=\x1b[0m0 \x1b[3mdisk_blocks\x1b[0m\x1b[2m=\x1b[0m0"},
	}
	for _, tc := range lines {
		rec, ok, err := audit.ParseLine([]byte(tc.line))
		if !ok || err != nil {
			t.Fatalf("ParseLine(%q): ok=%v err=%v", tc.line, ok, err)
		}
		got, err := audit.FormatLine(rec, tc.format)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != tc.line {
			t.Errorf("FormatLine differs from the router's line:\n got %q\nwant %q", got, tc.line)
		}
	}
}

// TestFormatRoundTrip: every record kind survives FormatLine and ParseLine in
// every format.
func TestFormatRoundTrip(t *testing.T) {
	recs := []audit.Record{
		{Kind: audit.KindSelected, Time: "2026-11-20T12:00:01.000000Z", RequestID: "id with \"quotes\"", WorkerType: "prefill",
			Selection: &audit.Selection{Form: "structured", Worker: w(18446744073709551615, 3), Logit: audit.Debug(1e-7),
				EffectiveCachedBlocks: ptr(audit.Debug(2.5)), HostPinnedBlocks: u64p(1), DiskBlocks: u64p(2), TotalKvBlocks: u64p(9), RouterMode: "kv"}},
		{Kind: audit.KindSelected, Time: "2026-11-20T12:00:02.000000Z", RequestID: "r", WorkerType: "decode",
			Selection: &audit.Selection{Form: "pinned", Worker: w(5, 0), Logit: audit.Printed(3, 3), EffectiveCachedBlocks: ptr(audit.Printed(0, 2))}},
		{Kind: audit.KindSelected, Time: "2026-11-20T12:00:03.000000Z", WorkerType: "prefill",
			Selection: &audit.Selection{Form: "text", Worker: w(5, 0), Logit: audit.Printed(3, 3), EffectiveCachedBlocks: ptr(audit.Printed(1, 2)), HostPinnedBlocks: u64p(0), DiskBlocks: u64p(0), TreeSize: u64p(4)}},
		{Kind: audit.KindFormula, Time: "2026-11-20T12:00:04.000000Z", RequestID: "r", WorkerType: "prefill",
			Formula: &audit.Formula{Name: "Formula", Shape: audit.ShapePrefill, Worker: w(1, 0), EffectiveBlocks: audit.Printed(2, 2),
				SharedBeyond: u64p(3), SharedMultiplier: ptr(audit.Printed(0.5, 2)), Logit: audit.Printed(1.5, 3),
				Scale: audit.Printed(1, 3), Adjusted: audit.Printed(1.5, 3), Decode: audit.Printed(0, 3), RequestCost: audit.Printed(0, 3),
				Raw: audit.Printed(4, 3), Credit: audit.Printed(2.5, 3), Decay: audit.Printed(1, 3)}},
		{Kind: audit.KindFormula, Time: "2026-11-20T12:00:05.000000Z", RequestID: "r", WorkerType: "decode",
			Formula: &audit.Formula{Name: "Formula", Shape: audit.ShapeDecodeOverlap, Worker: w(2, 1), EffectiveBlocks: audit.Printed(3, 2), Logit: audit.Printed(7, 3),
				Decode: audit.Printed(10, 3), Credit: audit.Printed(3, 3), RequestCost: audit.Printed(0, 3)}},
		{Kind: audit.KindFormula, Time: "2026-11-20T12:00:06.000000Z",
			Formula: &audit.Formula{Name: "Formula", Shape: audit.ShapeWeighted, Worker: w(2, 0), EffectiveBlocks: audit.Printed(3, 2), Logit: audit.Printed(7, 3),
				Weight: audit.Printed(1, 1), PrefillBlocks: audit.Printed(5, 3), Decode: audit.Printed(2, 3)}},
		{Kind: audit.KindBest, Time: "2026-11-20T12:00:07.000000Z", RequestID: "r", Best: &audit.Best{Worker: w(2, 0), OverlapBlocks: 1, TotalBlocks: 2}},
		{Kind: audit.KindInput, Time: "2026-11-20T12:00:08.000000Z", RequestID: "r", Input: &audit.RoutingInput{ISLTokens: 33, BlockSize: 16, NumBlocks: 2, LocalHashes: []uint64{math.MaxUint64, 0}}},
	}
	for _, rec := range recs {
		for _, f := range []audit.Format{audit.FormatText, audit.FormatANSI, audit.FormatJSON} {
			line, err := audit.FormatLine(rec, f)
			if err != nil {
				t.Fatal(err)
			}
			got, ok, err := audit.ParseLine(line)
			if !ok || err != nil {
				t.Fatalf("%s %s: ParseLine(%q): ok=%v err=%v", rec.Kind, f, line, ok, err)
			}
			want := rec
			want.Format = f
			want.Level = map[audit.LineKind]string{audit.KindSelected: "INFO"}[rec.Kind]
			if want.Level == "" {
				want.Level = "DEBUG"
			}
			if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s %s round trip (-want +got):\n%s\nline: %s", rec.Kind, f, diff, strings.ToValidUTF8(string(line), "?"))
			}
		}
	}
}

// TestNumberForms: Rust's {:.N} and Debug forms, and how precise each is.
func TestNumberForms(t *testing.T) {
	cases := []struct {
		got      audit.Number
		text     string
		decimals int
		half     float64
	}{
		{audit.Printed(2.8125, 3), "2.812", 3, 0.0005}, // ties to even, as Rust
		{audit.Printed(math.Copysign(0, -1), 3), "-0.000", 3, 0.0005},
		{audit.Printed(math.Inf(1), 3), "inf", -1, 0},
		{audit.Printed(math.NaN(), 3), "NaN", -1, 0},
		{audit.Debug(5), "5.0", 1, 0},
		{audit.Debug(0.1), "0.1", 1, 0},
		{audit.Debug(1e-5), "1e-5", -1, 0},
		{audit.Debug(1.5e16), "1.5e16", -1, 0},
		{audit.Debug(123456.789), "123456.789", 3, 0},
	}
	for _, tc := range cases {
		if tc.got.Text != tc.text || tc.got.Decimals != tc.decimals || tc.got.Half() != tc.half {
			t.Errorf("%q: decimals %d half %g, want %q %d %g", tc.got.Text, tc.got.Decimals, tc.got.Half(), tc.text, tc.decimals, tc.half)
		}
	}
}
