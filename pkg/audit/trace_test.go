package audit_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/audit"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
)

// TestTraceRequest: a logged request's decisions beside the model's, per
// hop, with the why in the logged numbers and the checks' outcomes.
func TestTraceRequest(t *testing.T) {
	m := testModel(t, routecore.EnforcementRequired, 0)
	lines := append(append([]string{}, prefillOn1...),
		input("r", 40, 1, 2),
		simple("r", "decode", 10, "0.00", "3.000"), simple("r", "decode", 11, "0.00", "3.000"),
		selected("r", "decode", 11, "3.0"), best("r", 11, 0, 3),
		input("other", 16, 9), simple("other", "prefill", 2, "0.00", "1.000"), selected("other", "prefill", 2, "1.0"))
	recs, st, err := audit.ReadLogs(strings.NewReader(strings.Join(lines, "\n")), "logs", audit.Limits{})
	if err != nil || st.Malformed != 0 {
		t.Fatal(err, st.MalformedExamples)
	}
	in := audit.Input{Records: recs, Streams: []audit.StreamStats{st}, Model: m}
	tr, err := audit.TraceRequest(in, "r", audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Kind != audit.TraceKind || tr.RequestID != "r" || len(tr.Hops) != 2 || tr.Hops[0].Hop != "prefill" || tr.Hops[1].Hop != "decode" {
		t.Fatalf("trace %+v", tr)
	}
	p, d := tr.Hops[0], tr.Hops[1]
	if p.Logged.WorkerID != 1 || p.Model == nil || p.Model.WorkerID != 1 || p.ISL != 40 || p.Blocks != 2 {
		t.Errorf("prefill: logged %+v, model %+v, isl %d blocks %d", p.Logged, p.Model, p.ISL, p.Blocks)
	}
	for _, want := range []string{"1 had the lowest cost, 0.500 blocks, against 2.500 for 2", "holds 2.00 effective cached blocks of the request's 2"} {
		if !strings.Contains(p.Why, want) {
			t.Errorf("prefill why %q lacks %q", p.Why, want)
		}
	}
	// The model routes decode with the logged prefill pick (zone a): 10 and
	// 11 tie at cost 0 (idle), 12 (zone b) is excluded by the required
	// taint.
	if len(d.ModelTies) != 2 || d.Logged.WorkerID != 11 {
		t.Errorf("decode: logged %+v, model ties %+v", d.Logged, d.ModelTies)
	}
	if !strings.Contains(d.Why, "level with 10's 3.000 within the printed rounding") {
		t.Errorf("decode why %q", d.Why)
	}
	var excluded bool
	for _, c := range d.Candidates {
		if c.WorkerID == 12 {
			excluded = c.ModelCost == nil && c.ModelReason == string(routecore.ReasonRoutingConstraintsUnsatisfied)
		}
	}
	if excluded {
		t.Errorf("an ineligible worker the router did not log is listed: %+v", d.Candidates)
	}
	if d.Checks[audit.CheckChoice] != audit.OutcomeAgree || p.Checks[audit.CheckState] != audit.OutcomeAgree {
		t.Errorf("checks: prefill %v, decode %v", p.Checks, d.Checks)
	}
	if _, err := audit.TraceRequest(in, "nope", audit.Options{}); !errors.Is(err, audit.ErrRequestNotLogged) {
		t.Errorf("an unknown request: %v", err)
	}
	if ids := audit.RequestIDs(recs); strings.Join(ids, ",") != "r,other" {
		t.Errorf("request ids %q", ids)
	}
	if _, err := audit.TraceRequest(audit.Input{Records: recs}, "r", audit.Options{}); err == nil {
		t.Error("a trace without a model must fail")
	}
}
