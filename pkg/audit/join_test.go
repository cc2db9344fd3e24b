package audit_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/audit"
)

// Line builders for the join tests, in the newest router's forms.
func fInput(req string) string {
	return fmt.Sprintf(`2026-11-20T12:00:00.000000Z DEBUG dynamo_llm::kv_router: [ROUTING_INPUT] request local hashes request_id=%q isl_tokens=32 block_size=16 num_blocks=2 local_hashes=[1, 2]`, req)
}

func fFormula(req, hop string, id int, logit string) string {
	s := fmt.Sprintf(`2026-11-20T12:00:00.000000Z DEBUG dynamo_kv_router::scheduling::selector::default: Formula for worker_id=%d dp_rank=0 with 0.00 effective cached blocks: %s = prefill_load_scale * adjusted_prefill_blocks + decode_blocks + active_request_cost_blocks = 1.000 * %s + 0.000 + 0.000 (raw_prefill_blocks: %s, overlap_credit_blocks: 0.000, overlap_credit_decay: 1.000)`, id, logit, logit, logit)
	if req != "" {
		s += fmt.Sprintf(` request_id=%q worker_type=%q`, req, hop)
	}
	return s
}

func fSelected(req, hop string, id int, logit string) string {
	if req == "" {
		return fmt.Sprintf(`2026-11-20T12:00:00.000000Z  INFO dynamo_kv_router::scheduling::selector: Selected worker: worker_type=%s, worker_id=%d dp_rank=0, logit: %s, host_pinned blocks: 0, disk blocks: 0`, hop, id, logit)
	}
	return fmt.Sprintf(`2026-11-20T12:00:00.000000Z  INFO dynamo_kv_router::scheduling::selector: Selected worker router_mode="kv" request_id=%q worker_id=%d worker_type=%s dp_rank=0 logit=%s host_pinned_blocks=0 disk_blocks=0`, req, id, hop, logit)
}

func fBest(req string, id int) string {
	return fmt.Sprintf(`2026-11-20T12:00:00.000000Z DEBUG dynamo_llm::kv_router::push_router::selection: [ROUTING] Best: worker_%d dp_rank=0 with 0/2 blocks overlap request_id=%s worker_id=%d dp_rank=0 overlap_blocks=0 total_blocks=2`, id, req, id)
}

// joined is a decision in short: "req/hop sel=N formulas=[lines] input=L best=L".
func joined(d *audit.Decision) string {
	var fl []string
	for _, f := range d.Formulas {
		fl = append(fl, fmt.Sprint(f.Pos.Line))
	}
	s := fmt.Sprintf("%s/%s by %s", d.RequestID, d.Hop, d.JoinedBy)
	if d.Selected != nil {
		s += fmt.Sprintf(" sel@%d=%d", d.Selected.Pos.Line, d.Selected.Selection.Worker.WorkerID)
	}
	s += " formulas=[" + strings.Join(fl, ",") + "]"
	if d.Input != nil {
		s += fmt.Sprintf(" input@%d", d.Input.Pos.Line)
	}
	if d.Best != nil {
		s += fmt.Sprintf(" best@%d", d.Best.Pos.Line)
	}
	return s
}

func TestJoin(t *testing.T) {
	cases := []struct {
		name       string
		lines      []string
		want       []string
		incomplete int
		stats      audit.JoinStats
	}{
		{
			name: "two disaggregated requests interleaved",
			lines: []string{
				fInput("a"),                          // 1
				fInput("b"),                          // 2
				fFormula("a", "prefill", 1, "2.000"), // 3
				fFormula("b", "prefill", 1, "3.000"), // 4
				fFormula("a", "prefill", 2, "1.000"), // 5
				fSelected("a", "prefill", 2, "1.0"),  // 6
				fFormula("b", "prefill", 2, "4.000"), // 7
				fBest("a", 2),                        // 8
				fInput("a"),                          // 9
				fSelected("b", "prefill", 1, "3.0"),  // 10
				fFormula("a", "decode", 10, "5.000"), // 11
				fFormula("a", "decode", 11, "6.000"), // 12
				fBest("b", 1),                        // 13
				fSelected("a", "decode", 10, "5.0"),  // 14
				fBest("a", 10),                       // 15
			},
			want: []string{
				"a/prefill by request-id sel@6=2 formulas=[3,5] input@1 best@8",
				"b/prefill by request-id sel@10=1 formulas=[4,7] input@2 best@13",
				"a/decode by request-id sel@14=10 formulas=[11,12] input@9 best@15",
			},
			stats: audit.JoinStats{Decisions: 3},
		},
		{
			name:  "DEBUG off: Selected lines alone",
			lines: []string{lineOther, fSelected("a", "prefill", 2, "1.0"), fSelected("a", "decode", 10, "5.0")},
			want:  []string{"a/prefill by request-id sel@2=2 formulas=[]", "a/decode by request-id sel@3=10 formulas=[]"},
			stats: audit.JoinStats{Decisions: 2},
		},
		{
			name: "a failed selection leaves an incomplete group; the retry is a new decision",
			lines: []string{
				fFormula("a", "decode", 10, "5.000"), // 1
				fFormula("a", "decode", 11, "6.000"), // 2
				fFormula("a", "decode", 10, "5.000"), // 3: the same candidate again
				fSelected("a", "decode", 10, "5.0"),  // 4
				fFormula("c", "prefill", 1, "1.000"), // 5: never selected
			},
			want:       []string{"a/decode by request-id sel@4=10 formulas=[3]"},
			incomplete: 2,
			stats:      audit.JoinStats{Decisions: 1, Incomplete: 2},
		},
		{
			name: "lines without request ids join by position",
			lines: []string{
				fFormula("", "", 1, "2.000"),         // 1
				fFormula("", "", 2, "1.000"),         // 2
				fSelected("", "prefill", 2, "1.000"), // 3
				fFormula("", "", 3, "1.000"),         // 4: never closed
			},
			want:       []string{"/prefill by position sel@3=2 formulas=[1,2]"},
			incomplete: 1,
			stats:      audit.JoinStats{Decisions: 1, Incomplete: 1, OrphanFormulas: 1},
		},
		{
			name:  "a Best line without its Selected line stands for the decision",
			lines: []string{fInput("a"), fBest("a", 4), fInput("z")},
			want:  []string{"a/ by request-id formulas=[] input@1 best@2"},
			stats: audit.JoinStats{Decisions: 1, OrphanInputs: 1},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var recs []audit.Record
			for i, l := range tc.lines {
				r, ok, err := audit.ParseLine([]byte(l))
				if err != nil {
					t.Fatalf("line %d: %v", i+1, err)
				}
				if ok {
					r.Pos = audit.Position{Source: "f", Line: i + 1}
					recs = append(recs, r)
				}
			}
			ds, inc, st := audit.Join(recs)
			var got []string
			for _, d := range ds {
				got = append(got, joined(d))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("decisions (-want +got):\n%s", diff)
			}
			if len(inc) != tc.incomplete {
				t.Errorf("%d incomplete groups, want %d", len(inc), tc.incomplete)
			}
			if st != tc.stats {
				t.Errorf("stats %+v, want %+v", st, tc.stats)
			}
		})
	}
}
