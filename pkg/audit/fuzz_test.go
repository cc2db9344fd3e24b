package audit_test

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/audit"
)

// FuzzParseLine: any line either is not the router's, is a malformed router
// line (ErrMalformed), or is a record that FormatLine can write back as JSON
// and that reads back the same (kind, worker, request id, numbers' text); no
// line panics, and reading a stream of such lines never keeps a line longer
// than the bound.
func FuzzParseLine(f *testing.F) {
	for _, s := range []string{lineSel, lineInput, lineOther,
		`2026-11-20T12:04:00.000050Z DEBUG dynamo_kv_router::scheduling::selector::default: Formula for worker_id=11 dp_rank=0 with 10.00 effective cached blocks: 2.812 = prefill_load_scale * adjusted_prefill_blocks + decode_blocks + active_request_cost_blocks = 1.000 * 2.812 + 0.000 + 0.000 (raw_prefill_blocks: 12.812, overlap_credit_blocks: 10.000, overlap_credit_decay: 1.000) request_id="r" worker_type="prefill"`,
		`x DEBUG y: Formula for worker_id=0 dp_rank=0 with 2.00 effective device blocks, 2 shared blocks beyond device (multiplier=0.50): 3.000 = 1.0 * adjusted_prefill_blocks + decode_blocks = 1.0 * 3.000 + 0.000 (prefill_tokens: 4 -> 3)`,
		`2026-11-20T12:04:02.000000Z DEBUG x: Formula for worker_id=21 dp_rank=0 with 3.00 effective cached blocks: 7.000 = max(0, decode_blocks - overlap_credit_blocks) + active_request_cost_blocks = max(0, 10.000 - 3.000) + 0.000`,
		`DEBUG [ROUTING] Best: worker_7 dp_rank=1 with 3/5 blocks overlap request_id=abc overlap_blocks=3 total_blocks=5`,
		`{"time":"t","level":"INFO","message":"Selected worker","dp_rank":"0","logit":0.1,"request_id":42,"worker_id":18446744073709551615,"worker_type":"prefill"}`,
		`INFO x: Selected worker: worker_type=prefill, worker_id=3 dp_rank=2, logit: 5.250, effective cached blocks: 4.75, host_pinned blocks: 1, disk blocks: 0, tree size: 120, total blocks: 2048`,
		"\x1b[2mt\x1b[0m Selected pinned worker: worker_type=decode, worker_id=7 dp_rank=0, logit: 12.000, effective cached blocks: 0.00 \x1b]0;title\x07 request_id=\"p\"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		rec, ok, err := audit.ParseLine(line)
		if err != nil {
			if !errors.Is(err, audit.ErrMalformed) || !ok {
				t.Fatalf("error %v (ok=%v) is not a malformed router line", err, ok)
			}
			return
		}
		if !ok {
			return
		}
		if len(rec.RequestID) > audit.MaxRequestIDBytes {
			t.Fatalf("request id of %d bytes", len(rec.RequestID))
		}
		if rec.Input != nil && len(rec.Input.LocalHashes) > len(line) {
			t.Fatalf("%d hashes from a %d-byte line", len(rec.Input.LocalHashes), len(line))
		}
		out, err := audit.FormatLine(rec, audit.FormatJSON)
		if err != nil {
			t.Fatalf("FormatLine: %v", err)
		}
		back, ok, err := audit.ParseLine(out)
		if !ok || err != nil {
			t.Fatalf("the written record does not read back: ok=%v err=%v\n%s", ok, err, out)
		}
		w1, _ := rec.Worker()
		w2, _ := back.Worker()
		if back.Kind != rec.Kind || w1 != w2 {
			t.Fatalf("read back %s %v, wrote %s %v", back.Kind, w2, rec.Kind, w1)
		}
		if rec.Formula != nil && (back.Formula.Logit.Text != rec.Formula.Logit.Text || back.Formula.Shape != rec.Formula.Shape) {
			t.Fatalf("formula read back as %+v, wrote %+v", back.Formula, rec.Formula)
		}
		if rec.Selection != nil && rec.Selection.Form == "structured" && !math.IsNaN(rec.Selection.Logit.Value) &&
			!math.IsInf(rec.Selection.Logit.Value, 0) && back.Selection.Logit.Value != rec.Selection.Logit.Value {
			t.Fatalf("logit read back as %v, wrote %v", back.Selection.Logit.Value, rec.Selection.Logit.Value)
		}
		// The same line inside a stream, cut by the line bound, never yields
		// a record longer than the bound.
		stream := append(append([]byte(strings.Repeat("x", 10)+"\n"), line...), '\n')
		recs, st, err := audit.ReadLogs(bytes.NewReader(stream), "fuzz", audit.Limits{MaxLineBytes: 64})
		if err != nil {
			t.Fatal(err)
		}
		if len(line) > 64 && (len(recs) != 0 || st.Overlong == 0) && !bytes.ContainsAny(line, "\n") {
			t.Fatalf("a %d-byte line passed a 64-byte bound", len(line))
		}
	})
}
