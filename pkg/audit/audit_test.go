package audit_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/audit"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
)

// testModel is a small disaggregated deployment: prefill workers 1 (zone a)
// and 2 (zone b) with a required zone transfer policy (or preferred with
// weight 0.85), decode workers 10 and 11 in zone a and 12 in zone b, and a
// KV index where worker 1 holds the blocks with local hashes 1 and 2.
func testModel(t *testing.T, enforcement routecore.KvTransferEnforcement, temperature float64) *audit.Model {
	t.Helper()
	beh, err := routecore.ProfileLatest.Behavior()
	if err != nil {
		t.Fatal(err)
	}
	weight := 0.85
	prefill := func(id routecore.WorkerID, zone string) routecore.Worker {
		rc := routecore.RuntimeConfig{TopologyDomains: map[string]string{"zone": zone}, KvTransferDomain: "zone", KvTransferEnforcement: enforcement}
		if enforcement == routecore.EnforcementPreferred {
			rc.KvTransferPreferredWeight = &weight
		}
		return routecore.Worker{ID: id, WorkerType: "prefill", Runtime: rc}
	}
	decode := func(id routecore.WorkerID, zone string) routecore.Worker {
		return routecore.Worker{ID: id, WorkerType: "decode", Runtime: routecore.RuntimeConfig{TopologyDomains: map[string]string{"zone": zone}}}
	}
	cfg := routecore.DefaultKvRouterConfig()
	cfg.RouterTemperature = temperature
	ix := routecore.NewIndex()
	ev := routecore.RouterEvent{WorkerID: 1, Event: routecore.KvCacheEvent{EventID: 1, Data: routecore.KvCacheEventData{Stored: &routecore.KvCacheStoreData{
		Blocks: []routecore.KvCacheStoredBlock{{BlockHash: 100, TokensHash: 1}, {BlockHash: 200, TokensHash: 2}}}}}}
	if err := ix.ApplyEvent(ev); err != nil {
		t.Fatal(err)
	}
	return &audit.Model{Deployment: "ns/dep", Mode: routecore.RouterModeKV, ModeKnown: true, Behavior: beh, BlockSize: 16,
		Prefill: audit.Hop{Config: cfg, Workers: []routecore.Worker{prefill(1, "a"), prefill(2, "b")}},
		Decode:  audit.Hop{Config: cfg, Workers: []routecore.Worker{decode(10, "a"), decode(11, "a"), decode(12, "b")}},
		Index:   ix, IndexDetail: "test"}
}

// Line builders for the check tests.
func input(req string, isl int, hashes ...uint64) string {
	hs := make([]string, len(hashes))
	for i, h := range hashes {
		hs[i] = fmt.Sprint(h)
	}
	return fmt.Sprintf(`2026-11-20T12:00:00.000000Z DEBUG dynamo_llm::kv_router: [ROUTING_INPUT] request local hashes request_id=%q isl_tokens=%d block_size=16 num_blocks=%d local_hashes=[%s]`, req, isl, len(hashes), strings.Join(hs, ", "))
}

// formula is a newest-form Formula line: logit = scale·adjusted + decode + req.
func formula(req, hop string, id int, eff, logit, scale, adjusted, decode, reqCost, raw, credit string) string {
	return fmt.Sprintf(`2026-11-20T12:00:00.000000Z DEBUG dynamo_kv_router::scheduling::selector::default: Formula for worker_id=%d dp_rank=0 with %s effective cached blocks: %s = prefill_load_scale * adjusted_prefill_blocks + decode_blocks + active_request_cost_blocks = %s * %s + %s + %s (raw_prefill_blocks: %s, overlap_credit_blocks: %s, overlap_credit_decay: 1.000) request_id=%q worker_type=%q`,
		id, eff, logit, scale, adjusted, decode, reqCost, raw, credit, req, hop)
}

// simple is a Formula line whose logit is its adjusted prefill blocks alone.
func simple(req, hop string, id int, eff, logit string) string {
	return formula(req, hop, id, eff, logit, "1.000", logit, "0.000", "0.000", logit, "0.000")
}

func selected(req, hop string, id int, logit string) string {
	return fmt.Sprintf(`2026-11-20T12:00:00.000000Z  INFO dynamo_kv_router::scheduling::selector: Selected worker router_mode="kv" request_id=%q worker_id=%d worker_type=%s dp_rank=0 logit=%s host_pinned_blocks=0 disk_blocks=0`, req, id, hop, logit)
}

func best(req string, id, overlap, total int) string {
	return fmt.Sprintf(`2026-11-20T12:00:00.000000Z DEBUG dynamo_llm::kv_router::push_router::selection: [ROUTING] Best: worker_%d dp_rank=0 with %d/%d blocks overlap request_id=%s worker_id=%d dp_rank=0 overlap_blocks=%d total_blocks=%d`, id, overlap, total, req, id, overlap, total)
}

// A prefill decision of request r on worker 1 (zone a): the decode hop's
// transfer constraint comes from it.
var prefillOn1 = []string{
	input("r", 40, 1, 2),
	simple("r", "prefill", 1, "2.00", "0.500"),
	simple("r", "prefill", 2, "0.00", "2.500"),
	selected("r", "prefill", 1, "0.5"),
	best("r", 1, 2, 3),
}

func run(t *testing.T, m *audit.Model, lines []string) *audit.Report {
	t.Helper()
	recs, st, err := audit.ReadLogs(strings.NewReader(strings.Join(lines, "\n")+"\n"), "logs", audit.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Malformed > 0 {
		t.Fatalf("test lines do not parse: %v", st.MalformedExamples)
	}
	return audit.Audit(audit.Input{Records: recs, Streams: []audit.StreamStats{st}, Model: m}, audit.Options{})
}

type want struct {
	covered, agreed int
	// dis are the expected disagreements of the check: "field cause-kind worker".
	dis []string
	// reason is a not-covered reason the check must give.
	reason string
}

func checkReport(t *testing.T, rep *audit.Report, c audit.CheckName, w want) {
	t.Helper()
	got := rep.Check(c)
	if got.Covered != w.covered || got.Agreed != w.agreed {
		t.Errorf("%s: covered %d agreed %d, want %d and %d (reasons %+v)", c, got.Covered, got.Agreed, w.covered, w.agreed, got.Reasons)
	}
	var dis []string
	for _, d := range rep.Disagreements {
		if d.Check == c {
			dis = append(dis, fmt.Sprintf("%s %s %s", d.Field, d.CauseKind, d.Worker))
			if d.Cause == "" || d.Logged == "" || d.Expected == "" || len(d.Lines) == 0 {
				t.Errorf("%s: disagreement without cause, values or lines: %+v", c, d)
			}
		}
	}
	if strings.Join(dis, "; ") != strings.Join(w.dis, "; ") {
		t.Errorf("%s disagreements:\n got %q\nwant %q", c, dis, w.dis)
	}
	if w.reason != "" {
		found := false
		for _, r := range got.Reasons {
			found = found || strings.Contains(r.Reason, w.reason)
		}
		if !found {
			t.Errorf("%s: no not-covered reason containing %q in %+v", c, w.reason, got.Reasons)
		}
	}
}

func TestCheckArithmetic(t *testing.T) {
	cases := []struct {
		name  string
		lines []string
		want  want
	}{
		{"terms reproduce the logit exactly", []string{
			formula("r", "prefill", 1, "2.00", "3.250", "1.000", "1.250", "2.000", "0.000", "3.250", "2.000"),
			selected("r", "prefill", 1, "3.25")}, want{covered: 1, agreed: 1}},
		{"within the printed rounding (0.3335·3 prints 1.000 or 1.001)", []string{
			formula("r", "prefill", 1, "0.00", "1.001", "3.000", "0.334", "0.000", "0.000", "0.334", "0.000"),
			selected("r", "prefill", 1, "1.0005")}, want{covered: 1, agreed: 1}},
		{"a wrong logit", []string{
			formula("r", "prefill", 1, "2.00", "3.350", "1.000", "1.250", "2.000", "0.000", "3.250", "2.000"),
			selected("r", "prefill", 1, "3.35")}, want{covered: 1, dis: []string{"logit release-drift 1"}}},
		{"a negative adjusted cost: a router before the clamp", []string{
			formula("r", "prefill", 1, "5.00", "-1.000", "1.000", "-1.000", "0.000", "0.000", "4.000", "5.000"),
			selected("r", "prefill", 1, "-1.0")}, want{covered: 1, dis: []string{"adjusted_prefill_blocks release-drift 1"}}},
		{"the decode branch", []string{
			`2026-11-20T12:00:00.000000Z DEBUG x: Formula for worker_id=10 dp_rank=0 with 3.00 effective cached blocks: 7.000 = max(0, decode_blocks - overlap_credit_blocks) + active_request_cost_blocks = max(0, 10.000 - 3.000) + 0.000 request_id="r" worker_type="decode"`,
			`2026-11-20T12:00:00.000000Z DEBUG x: Formula for worker_id=11 dp_rank=0 with 3.00 effective cached blocks: 7.000 = max(0, decode_blocks - overlap_credit_blocks) + active_request_cost_blocks = max(0, 1.000 - 3.000) + 0.000 request_id="r" worker_type="decode"`,
			selected("r", "decode", 10, "7.0")}, want{covered: 1, dis: []string{"logit release-drift 11"}}},
		{"the weighted formula of older selectors", []string{
			`x DEBUG y: Formula for worker_id=1 dp_rank=0 with 2.00 effective cached blocks: 6.500 = 1.0 * prefill_blocks + decode_blocks = 1.0 * 4.500 + 2.000 request_id="r" worker_type="prefill"`,
			selected("r", "prefill", 1, "6.5")}, want{covered: 1, agreed: 1}},
		{"DEBUG off", []string{selected("r", "prefill", 1, "6.5")}, want{reason: "no Formula lines"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			checkReport(t, run(t, testModel(t, routecore.EnforcementRequired, 0), tc.lines), audit.CheckArithmetic, tc.want)
		})
	}
}

func TestCheckArithmeticIncompleteLines(t *testing.T) {
	rep := run(t, testModel(t, routecore.EnforcementRequired, 0), []string{
		formula("x", "prefill", 1, "2.00", "3.350", "1.000", "1.250", "2.000", "0.000", "3.250", "2.000"),
		simple("x", "prefill", 2, "0.00", "1.000"),
	})
	c := rep.Check(audit.CheckArithmetic)
	if c.Covered != 0 || c.Lines == nil || c.Lines.Checked != 2 || c.Lines.Agreed != 1 {
		t.Fatalf("lines of a decision without Selected line must still be checked: %+v", c)
	}
	if len(rep.Disagreements) != 1 || rep.Disagreements[0].RequestID != "x" {
		t.Fatalf("disagreements %+v", rep.Disagreements)
	}
}

func TestCheckChoice(t *testing.T) {
	cases := []struct {
		name        string
		temperature float64
		lines       []string
		want        want
		ties        int
	}{
		{"the minimum", 0, []string{simple("r", "prefill", 1, "2.00", "0.500"), simple("r", "prefill", 2, "0.00", "2.500"), selected("r", "prefill", 1, "0.5")},
			want{covered: 1, agreed: 1}, 0},
		{"a tie within rounding", 0, []string{simple("r", "prefill", 1, "0.00", "2.500"), simple("r", "prefill", 2, "0.00", "2.500"), selected("r", "prefill", 2, "2.5004")},
			want{covered: 1, agreed: 1}, 2},
		{"a pick that is not the minimum", 0, []string{simple("r", "prefill", 1, "2.00", "0.500"), simple("r", "prefill", 2, "0.00", "2.500"), selected("r", "prefill", 2, "2.5")},
			want{covered: 1, dis: []string{"cost unread-config 2"}}, 0},
		{"a pick no Formula line scored", 0, []string{simple("r", "prefill", 1, "2.00", "0.500"), selected("r", "prefill", 2, "2.5")},
			want{covered: 1, dis: []string{"worker missing-lines 2"}}, 0},
		{"a likely sample above temperature 0", 1, []string{simple("r", "prefill", 1, "2.00", "0.500"), simple("r", "prefill", 2, "0.00", "2.500"), selected("r", "prefill", 2, "2.5")},
			want{covered: 1, agreed: 1}, 0},
		{"an unlikely sample", 0.05, []string{simple("r", "prefill", 1, "2.00", "0.500"), simple("r", "prefill", 2, "0.00", "2.500"), selected("r", "prefill", 2, "2.5")},
			want{covered: 1, dis: []string{"probability unlikely-draw 2"}}, 0},
		{"a pinned pick", 0, []string{`t  INFO x: Selected pinned worker: worker_type=prefill, worker_id=2 dp_rank=0, logit: 2.500, effective cached blocks: 0.00 request_id="r"`},
			want{reason: "pinned"}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rep := run(t, testModel(t, routecore.EnforcementRequired, tc.temperature), tc.lines)
			checkReport(t, rep, audit.CheckChoice, tc.want)
			if len(rep.Decisions) != 1 || rep.Decisions[0].Ties != tc.ties {
				t.Errorf("ties: %+v, want %d", rep.Decisions, tc.ties)
			}
		})
	}
}

func TestCheckTransfer(t *testing.T) {
	cases := []struct {
		name        string
		enforcement routecore.KvTransferEnforcement
		lines       []string
		want        want
	}{
		{"required: every scored decode worker in the prefill pick's zone", routecore.EnforcementRequired,
			append(append([]string{}, prefillOn1...), simple("r", "decode", 10, "0.00", "3.000"), simple("r", "decode", 11, "0.00", "4.000"), selected("r", "decode", 10, "3.0")),
			want{covered: 2, agreed: 2}},
		{"required: a scored decode worker in another zone", routecore.EnforcementRequired,
			append(append([]string{}, prefillOn1...), simple("r", "decode", 10, "0.00", "3.000"), simple("r", "decode", 12, "0.00", "4.000"), selected("r", "decode", 10, "3.0")),
			want{covered: 2, agreed: 1, dis: []string{"domain domain-drift 12"}}},
		{"preferred: the pick's cost carries exp(−tanh(0.85))", routecore.EnforcementPreferred,
			append(append([]string{}, prefillOn1...), simple("r", "decode", 10, "0.00", "100.000"), simple("r", "decode", 12, "0.00", "90.000"), selected("r", "decode", 10, "50.10404")),
			want{covered: 2, agreed: 2}},
		{"preferred: no multiplier where the policy gives one", routecore.EnforcementPreferred,
			append(append([]string{}, prefillOn1...), simple("r", "decode", 12, "0.00", "90.000"), simple("r", "decode", 10, "0.00", "100.000"), selected("r", "decode", 10, "100.0")),
			want{covered: 2, agreed: 1, dis: []string{"multiplier domain-drift 10"}}},
		{"a multiplier on the prefill hop, which the policy never biases", routecore.EnforcementPreferred,
			[]string{simple("r", "prefill", 1, "0.00", "2.000"), selected("r", "prefill", 1, "1.0")},
			want{covered: 1, dis: []string{"multiplier unread-config 1"}}},
		{"a decode decision whose prefill decision is not in the logs", routecore.EnforcementRequired,
			[]string{simple("q", "decode", 10, "0.00", "3.000"), selected("q", "decode", 10, "3.0")},
			want{reason: "prefill decision is not in the logs"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			checkReport(t, run(t, testModel(t, tc.enforcement, 0), tc.lines), audit.CheckTransfer, tc.want)
		})
	}
}

func TestCheckState(t *testing.T) {
	cases := []struct {
		name  string
		lines []string
		want  want
	}{
		{"the index gives the logged overlap", prefillOn1, want{covered: 1, agreed: 1}},
		{"the router saw more than the index holds", []string{input("r", 40, 1, 2), simple("r", "prefill", 2, "1.00", "1.500"), selected("r", "prefill", 2, "1.5")},
			want{covered: 1, dis: []string{"effective_cached_blocks missing-events 2"}}},
		{"the index holds more than the router saw", []string{input("r", 40, 1, 2), simple("r", "prefill", 1, "1.00", "1.500"), selected("r", "prefill", 1, "1.5"), best("r", 1, 1, 3)},
			want{covered: 1, dis: []string{"effective_cached_blocks stale-index 1", "overlap_blocks stale-index 1"}}},
		{"another block size", []string{strings.Replace(input("r", 40, 1, 2), "block_size=16", "block_size=32", 1), simple("r", "prefill", 1, "2.00", "0.500"), selected("r", "prefill", 1, "0.5")},
			want{covered: 1, dis: []string{"block_size hash-space 1"}}},
		{"no [ROUTING_INPUT] line", []string{simple("r", "prefill", 1, "2.00", "0.500"), selected("r", "prefill", 1, "0.5")},
			want{reason: "no [ROUTING_INPUT]"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			checkReport(t, run(t, testModel(t, routecore.EnforcementRequired, 0), tc.lines), audit.CheckState, tc.want)
		})
	}
}

func TestCheckCandidates(t *testing.T) {
	cases := []struct {
		name  string
		lines []string
		want  want
	}{
		{"the router scored the eligible pool", prefillOn1, want{covered: 1, agreed: 1}},
		{"an eligible worker never scored", []string{simple("r", "prefill", 1, "2.00", "0.500"), selected("r", "prefill", 1, "0.5")},
			want{covered: 1, dis: []string{"candidate registration 2"}}},
		{"a worker the model does not know", []string{simple("r", "prefill", 1, "2.00", "0.500"), simple("r", "prefill", 2, "0.00", "2.500"), simple("r", "prefill", 99, "0.00", "2.500"), selected("r", "prefill", 1, "0.5")},
			want{covered: 1, dis: []string{"worker unknown-worker 99"}}},
		{"decode under required: only the prefill pick's zone is eligible", append(append([]string{}, prefillOn1...),
			simple("r", "decode", 10, "0.00", "3.000"), simple("r", "decode", 11, "0.00", "4.000"), selected("r", "decode", 10, "3.0")),
			want{covered: 2, agreed: 2}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			checkReport(t, run(t, testModel(t, routecore.EnforcementRequired, 0), tc.lines), audit.CheckCandidates, tc.want)
		})
	}
}

// TestAuditWithoutModel: the parser-only checks still run; the rest say why
// not.
func TestAuditWithoutModel(t *testing.T) {
	rep := run(t, nil, prefillOn1)
	checkReport(t, rep, audit.CheckArithmetic, want{covered: 1, agreed: 1})
	checkReport(t, rep, audit.CheckChoice, want{covered: 1, agreed: 1})
	for _, c := range []audit.CheckName{audit.CheckTransfer, audit.CheckState, audit.CheckCandidates} {
		checkReport(t, rep, c, want{reason: "no model"})
	}
	if len(rep.Notes) == 0 || !strings.Contains(rep.Notes[0], "no model") {
		t.Errorf("notes %q", rep.Notes)
	}
}

func TestRates(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want float64
		err  bool
	}{{"0.99", 0.99, false}, {"99%", 0.99, false}, {"99.5", 0.995, false}, {"1", 1, false}, {"0", 0, false}, {"101%", 0, true}, {"-1", 0, true}, {"x", 0, true}, {"NaN", 0, true}} {
		got, err := audit.ParseRate(tc.in)
		if (err != nil) != tc.err || (!tc.err && got != tc.want) {
			t.Errorf("ParseRate(%q) = %v, %v", tc.in, got, err)
		}
	}
	r := func(v float64) *float64 { return &v }
	for _, tc := range []struct {
		r    *float64
		want string
	}{{nil, "-"}, {r(1), "100%"}, {r(0.5), "50%"}, {r(0.9995), "99.9%"}, {r(0.99999), "99.9%"}, {r(0.123), "12.3%"}} {
		if got := audit.FormatRate(tc.r); got != tc.want {
			t.Errorf("FormatRate(%v) = %q, want %q", tc.r, got, tc.want)
		}
	}
}
