package tui

import (
	"bytes"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/explain"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/capture"
)

const prefillOnly = "prefill-only-zone-required.yaml"

func special(t tea.KeyType) tea.KeyMsg { return tea.KeyMsg{Type: t} }

// TestUpdate drives the model with messages and checks the resulting state.
func TestUpdate(t *testing.T) {
	verdict := func(m *Model) string {
		x := m.Route().Explanation()
		if x == nil {
			return "none"
		}
		if x.Verdict.Routable {
			return "routable"
		}
		return "not routable: " + x.Verdict.Error
	}
	cases := []struct {
		name   string
		tokens bool
		msgs   []tea.Msg
		check  func(t *testing.T, m *Model)
	}{
		{"tab cycles forward and back", false, []tea.Msg{special(tea.KeyTab), special(tea.KeyTab), special(tea.KeyShiftTab)}, func(t *testing.T, m *Model) {
			if m.Tab() != TabWorkers {
				t.Errorf("tab = %v, want Workers", m.Tab())
			}
		}},
		{"shift+tab wraps to the route explorer", false, []tea.Msg{special(tea.KeyShiftTab)}, func(t *testing.T, m *Model) {
			if m.Tab() != TabRoute {
				t.Errorf("tab = %v", m.Tab())
			}
		}},
		{"number keys jump", false, []tea.Msg{keys("3")}, func(t *testing.T, m *Model) {
			if m.Tab() != TabFindings {
				t.Errorf("tab = %v", m.Tab())
			}
		}},
		{"? opens help and esc closes it", false, []tea.Msg{keys("?")}, func(t *testing.T, m *Model) {
			if !m.help || !strings.Contains(m.View(), "Route explorer") {
				t.Fatal("help not shown")
			}
			send(t, m, special(tea.KeyEsc))
			if m.help {
				t.Error("esc did not close help")
			}
		}},
		{"q quits", false, []tea.Msg{keys("q")}, func(t *testing.T, m *Model) {
			if !m.Quitting() {
				t.Error("not quitting")
			}
		}},
		{"ctrl+c quits while editing", false, []tea.Msg{keys("4"), keys("i"), special(tea.KeyCtrlC)}, func(t *testing.T, m *Model) {
			if !m.Quitting() {
				t.Error("not quitting")
			}
		}},
		{"q while editing is text", false, []tea.Msg{keys("4"), keys("i"), keys("q")}, func(t *testing.T, m *Model) {
			if m.Quitting() || m.Route().input.Value() != "q" {
				t.Errorf("quitting %v, input %q", m.Quitting(), m.Route().input.Value())
			}
		}},
		{"esc cancels the edit, enter keeps it", true, []tea.Msg{keys("4")}, func(t *testing.T, m *Model) {
			before := m.Route().input.Value()
			for _, k := range []tea.Msg{keys("i"), keys("q"), special(tea.KeyEsc)} {
				send(t, m, k)
			}
			if got := m.Route().input.Value(); got != before || m.Route().editing {
				t.Errorf("esc left the input %q (editing %v), want it as before the edit", got[max(0, len(got)-20):], m.Route().editing)
			}
			if x := m.Route().Explanation(); x == nil || len(m.Route().Tokens()) != 205 {
				t.Errorf("the request changed: %d tokens", len(m.Route().Tokens()))
			}
			send(t, m, keys("i"))
			send(t, m, special(tea.KeyBackspace))
			send(t, m, special(tea.KeyEnter))
			if got := m.Route().input.Value(); got == before {
				t.Error("enter did not keep the edit")
			}
		}},
		{"d with one deployment says so", false, []tea.Msg{keys("d")}, func(t *testing.T, m *Model) {
			if v := m.View(); !strings.Contains(v, "d: only one deployment is shown (serving/qwen3-32b)") {
				t.Errorf("no feedback for d:\n%s", v)
			}
			send(t, m, keys("2"))
			if strings.Contains(m.View(), "only one deployment") {
				t.Error("the feedback outlived the next key")
			}
		}},
		{"ctrl+r offline says there is nothing to reload", false, []tea.Msg{special(tea.KeyCtrlR)}, func(t *testing.T, m *Model) {
			if v := m.View(); !strings.Contains(v, "ctrl+r: nothing to reload") {
				t.Errorf("no feedback for ctrl+r offline:\n%s", v)
			}
		}},
		{"the w help follows the weights it cycles", false, nil, func(t *testing.T, m *Model) {
			big := newTestModel(t, prefillOnly, 160, 60, "")
			send(t, big, keys("?"))
			want := "preferred weight: 0.25→0.5→1→policy"
			if !strings.Contains(big.View(), want) {
				t.Errorf("help lacks %q:\n%s", want, big.View())
			}
			m2 := newTestModel(t, prefillOnly, 120, 40, exampleTokens(t))
			var seen []string
			for range weights {
				send(t, m2, keys("4"))
				send(t, m2, keys("w"))
				seen = append(seen, num(m2.Route().PreferredWeight()))
			}
			if got := strings.Join(seen, "→"); got != "0.25→0.5→1→0" {
				t.Errorf("w cycles %s", got)
			}
		}},
		{"resize", false, []tea.Msg{tea.WindowSizeMsg{Width: 100, Height: 30}}, func(t *testing.T, m *Model) {
			if m.c.width != 100 || m.c.height != 30 {
				t.Errorf("size %dx%d", m.c.width, m.c.height)
			}
		}},
		{"too small", false, []tea.Msg{tea.WindowSizeMsg{Width: 59, Height: 20}}, func(t *testing.T, m *Model) {
			if v := m.View(); !strings.Contains(v, "Terminal too small: 59×20") || !strings.Contains(v, "60×16") {
				t.Errorf("view:\n%s", v)
			}
		}},
		{"topology cursor and expand", false, []tea.Msg{keys("l"), keys("l"), keys("l"), special(tea.KeyEnter)}, func(t *testing.T, m *Model) {
			p := m.pages[TabTopology].(*topologyPage)
			if p.cursor != 2 || !p.expanded {
				t.Errorf("cursor %d expanded %v", p.cursor, p.expanded)
			}
			if v := m.View(); !strings.Contains(v, "zone us-east-1c") || !strings.Contains(v, "Hierarchy") {
				t.Errorf("no hierarchy:\n%s", v)
			}
		}},
		{"workers filter by role", false, []tea.Msg{keys("2"), keys("/"), keys("r"), keys("o"), keys("l"), keys("e"), keys(":"), keys("p"), keys("r"), keys("e"), keys("f"), keys("i"), keys("l"), keys("l"), special(tea.KeyEnter)}, func(t *testing.T, m *Model) {
			p := m.pages[TabWorkers].(*workersPage)
			if len(p.rows) != 4 || p.editing {
				t.Errorf("%d rows, editing %v", len(p.rows), p.editing)
			}
			for _, r := range p.rows {
				if r.Role != "prefill" {
					t.Errorf("row %s has role %s", r.Pod, r.Role)
				}
			}
			send(t, m, special(tea.KeyEsc))
			if len(p.rows) != 10 {
				t.Errorf("esc left %d rows", len(p.rows))
			}
		}},
		{"workers filter by domain and text", false, []tea.Msg{keys("2"), keys("/")}, func(t *testing.T, m *Model) {
			typeKeys(t, m, "domain:us-east-1b decode")
			p := m.pages[TabWorkers].(*workersPage)
			if len(p.rows) != 3 {
				t.Errorf("%d rows", len(p.rows))
			}
		}},
		{"workers sort by every column", false, []tea.Msg{keys("2")}, func(t *testing.T, m *Model) {
			p := m.pages[TabWorkers].(*workersPage)
			for range workerColumns {
				send(t, m, keys("s"))
				col := workerColumns[p.sortCol]
				if !slices.IsSortedFunc(p.rows, func(a, b workerRow) int { return col.less(&a, &b) }) {
					t.Errorf("not sorted by %s", col.title)
				}
			}
			send(t, m, keys("s")) // back to POD
			send(t, m, keys("S"))
			if p.rows[0].Pod < p.rows[len(p.rows)-1].Pod {
				t.Error("S did not reverse")
			}
		}},
		{"finding highlights its domain and workers", false, []tea.Msg{keys("3"), special(tea.KeyEnter)}, func(t *testing.T, m *Model) {
			hl := m.c.hl
			if !hl.active || hl.domain != "us-east-1c" || !hl.pods["qwen3-32b-0-prefill-us-east-1c-0"] || hl.pods["qwen3-32b-0-decode-us-east-1a-0"] {
				t.Errorf("highlight %+v", hl)
			}
			send(t, m, keys("1"))
			if !strings.Contains(m.View(), "◆ ✗ us-east-1c") {
				t.Errorf("topology does not mark the domain:\n%s", m.View())
			}
			send(t, m, keys("3"))
			send(t, m, keys("c"))
			if m.c.hl.active {
				t.Error("c did not clear")
			}
		}},
		{"route explorer: the example is not routable", true, []tea.Msg{keys("4")}, func(t *testing.T, m *Model) {
			if v := verdict(m); v != "not routable: NoEndpoints" {
				t.Errorf("verdict %s", v)
			}
			if !strings.Contains(m.View(), "NOT ROUTABLE") {
				t.Error("verdict not shown")
			}
		}},
		{"route explorer: preferred without a weight still fails, with a weight routes", true, []tea.Msg{keys("4"), keys("e")}, func(t *testing.T, m *Model) {
			if m.Route().Enforcement() != explain.EnforcementPreferred {
				t.Fatalf("enforcement %q", m.Route().Enforcement())
			}
			if v := verdict(m); v != "not routable: preferred-weight-missing" {
				t.Errorf("verdict %s", v)
			}
			send(t, m, keys("w"))
			if v := verdict(m); v != "routable" {
				t.Errorf("verdict with weight %s", v)
			}
		}},
		{"route explorer: enforcement off routes, r resets", true, []tea.Msg{keys("4"), keys("e"), keys("e")}, func(t *testing.T, m *Model) {
			if v := verdict(m); m.Route().Enforcement() != explain.EnforcementOff || v != "routable" {
				t.Errorf("%s: %s", m.Route().Enforcement(), v)
			}
			send(t, m, keys("r"))
			if v := verdict(m); m.Route().Enforcement() != "" || v != "not routable: NoEndpoints" {
				t.Errorf("after reset %s", v)
			}
		}},
		{"route explorer: zone us-east-1c down routes", true, []tea.Msg{keys("4"), keys("z"), keys("z"), keys("z")}, func(t *testing.T, m *Model) {
			x := m.Route().Explanation()
			if v := verdict(m); v != "routable" || !strings.Contains(m.View(), "z down ◆ zone=us-east-1c") {
				t.Errorf("verdict %s\n%s", v, m.View())
			}
			if x.Prefill.Pick == "qwen3-32b-0-prefill-us-east-1c-0" {
				t.Error("the down zone's worker was picked")
			}
		}},
		{"route explorer: excluding the picked prefill worker routes", true, []tea.Msg{keys("4"), keys("j"), keys("j"), keys("x")}, func(t *testing.T, m *Model) {
			r := m.Route()
			if !slices.Equal(r.excluded, []string{"qwen3-32b-0-prefill-us-east-1c-0"}) {
				t.Fatalf("excluded %v", r.excluded)
			}
			if r.Explanation().Prefill.Pick != "qwen3-32b-0-prefill-us-east-1a-0" {
				t.Errorf("pick %s", r.Explanation().Prefill.Pick)
			}
			// The excluded worker stays under the cursor's reach: x restores it.
			rows := r.rows()
			r.cursor = slices.Index(rows, "qwen3-32b-0-prefill-us-east-1c-0")
			send(t, m, keys("x"))
			if len(r.excluded) != 0 || verdict(m) != "not routable: NoEndpoints" {
				t.Errorf("restore: %v %s", r.excluded, verdict(m))
			}
		}},
		{"route explorer: temperature and matrix", true, []tea.Msg{keys("4"), keys("+"), keys("+"), keys("+"), keys("+"), keys("a")}, func(t *testing.T, m *Model) {
			x := m.Route().Explanation()
			if x.Prefill.Temperature != 1 || len(x.Matrix) != 4 {
				t.Fatalf("temperature %v, %d matrix rows", x.Prefill.Temperature, len(x.Matrix))
			}
			if !x.Verdict.DependsOnDraw && x.Verdict.FailureProbability == 0 {
				t.Errorf("at temperature 1 the outcome should depend on the draw: %+v", x.Verdict)
			}
			if v := m.View(); !strings.Contains(v, "All prefill landings") || !strings.Contains(v, "✗ NoEndpoints") {
				t.Errorf("matrix not shown:\n%s", v)
			}
			send(t, m, keys("-"))
			if m.Route().Explanation().Prefill.Temperature != 0.75 {
				t.Error("- did not lower the temperature")
			}
		}},
		{"route explorer: typing token ids runs the dry run", false, []tea.Msg{keys("4"), keys("i")}, func(t *testing.T, m *Model) {
			typeKeys(t, m, "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17")
			r := m.Route()
			if len(r.Tokens()) != 17 || r.Explanation() == nil || r.Explanation().Request.TokenCount != 17 {
				t.Fatalf("tokens %v", r.Tokens())
			}
			typeKeys(t, m, ",x")
			if r.inputErr == "" || !strings.Contains(m.View(), "needs a tokenizer") {
				t.Errorf("no error for a non-id without a tokenizer:\n%s", m.View())
			}
			send(t, m, special(tea.KeyEnter))
			if r.editing {
				t.Error("enter did not leave the input")
			}
		}},
		{"a failed refresh keeps the data and says so", false, []tea.Msg{DataMsg{Err: errors.New("connection refused")}}, func(t *testing.T, m *Model) {
			if m.Data() == nil || !strings.Contains(m.View(), "✗ refresh failed: connection refused") {
				t.Errorf("view:\n%s", m.View())
			}
		}},
		{"a stale tick is dropped", false, []tea.Msg{tickMsg{gen: 99}}, func(t *testing.T, m *Model) {
			if m.loading {
				t.Error("a stale tick started a load")
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tokens := ""
			if tc.tokens {
				tokens = exampleTokens(t)
			}
			m := newTestModel(t, prefillOnly, 120, 40, tokens)
			for _, msg := range tc.msgs {
				send(t, m, msg)
			}
			tc.check(t, m)
		})
	}
}

// TestRefresh: a live model loads on Init, schedules the next refresh, and
// shows the new data when it arrives.
func TestRefresh(t *testing.T) {
	d := exampleData(t, prefillOnly)
	loads := 0
	m := New(Options{Load: func(contextLike) (*Data, error) { loads++; return d, nil }, Refresh: 1, Now: nowAfter(d)})
	if v := m.View(); !strings.Contains(v, "Loading") {
		t.Errorf("before the first load:\n%s", v)
	}
	cmd := m.Init()
	run(t, m, cmd)
	if loads != 1 || m.Data() != d || m.gen != 1 {
		t.Fatalf("loads %d gen %d", loads, m.gen)
	}
	send(t, m, tickMsg{gen: 1})
	if loads != 2 || m.gen != 2 {
		t.Errorf("tick: loads %d gen %d", loads, m.gen)
	}
}

// TestDegradedSource: a degraded source is shown loudly, in words.
func TestDegradedSource(t *testing.T) {
	m := newTestModel(t, prefillOnly, 120, 40, "")
	m.c.data.Snapshot.Sources[0].Degraded = true
	m.c.data.Snapshot.Sources[0].Message = "etcd unreachable"
	if v := m.View(); !strings.Contains(v, "!! DEGRADED: capture (etcd unreachable)") || !strings.Contains(v, "✗ capture") {
		t.Errorf("view:\n%s", v)
	}
}

// TestMonochrome: colour off has no escape sequences at all; colour on has them.
func TestMonochrome(t *testing.T) {
	for _, color := range []bool{false, true} {
		d := exampleData(t, prefillOnly)
		m := New(Options{Initial: d, Color: color, Now: nowAfter(d), Tokens: exampleTokens(t)})
		send(t, m, tea.WindowSizeMsg{Width: 120, Height: 40})
		run(t, m, m.Init())
		var all strings.Builder
		for _, k := range []string{"1", "2", "3", "4", "?"} {
			send(t, m, keys(k))
			all.WriteString(m.View())
		}
		if got := strings.Contains(all.String(), "\x1b["); got != color {
			t.Errorf("color %v: escapes %v", color, got)
		}
	}
}

func TestParseTokenIDs(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []uint32
		err  bool
	}{
		{"1,2, 3", []uint32{1, 2, 3}, false},
		{"[1, 2]", []uint32{1, 2}, false},
		{"# comment\n4 5\n6", []uint32{4, 5, 6}, false},
		{"", nil, false},
		{"1 two", nil, true},
		{"4294967296", nil, true},
	} {
		got, err := ParseTokenIDs(tc.in)
		if (err != nil) != tc.err || !slices.Equal(got, tc.want) {
			t.Errorf("%q: %v %v", tc.in, got, err)
		}
	}
	if got := TokenText("# a\n1 2\n\n3\n"); got != "1 2 3" {
		t.Errorf("TokenText = %q", got)
	}
}

// TestRouteRouterMode: on upstream's vLLM disaggregated example without
// --router-mode the route page says the frontend routes round-robin, gives
// each eligible worker its pick probability, warns that the decode pick
// ignores the zone constraint, and `m` switches the dry run to kv.
func TestRouteRouterMode(t *testing.T) {
	m := newTestModel(t, "vllm-disagg-default-router.yaml", 140, 50, "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33")
	send(t, m, keys("4"))
	v := m.View()
	for _, want := range []string{"Router mode: round-robin (", "not kv", "m mode frontend's", "50%", "! decode lands outside the prefill worker's domain"} {
		if !strings.Contains(v, want) {
			t.Errorf("round-robin view lacks %q:\n%s", want, v)
		}
	}
	send(t, m, keys("m"))
	v = m.View()
	if x := m.Route().Explanation(); x == nil || x.Router.Mode != "kv" {
		t.Fatalf("m did not switch the dry run to kv: %+v", x)
	}
	if !strings.Contains(v, "Router mode: kv") || !strings.Contains(v, "m mode ◆ kv") || strings.Contains(v, "decode lands outside") {
		t.Errorf("kv view:\n%s", v)
	}
}

// TestOldCaptureWarns: the dashboard gives the same old-data warning as
// topology and explain-route, under the sources line.
func TestOldCaptureWarns(t *testing.T) {
	d := exampleData(t, prefillOnly)
	m := New(Options{Initial: d, Mode: "capture", Now: func() time.Time { return d.Snapshot.CollectedAt.Add(48 * time.Hour) }})
	send(t, m, tea.WindowSizeMsg{Width: 160, Height: 48})
	run(t, m, m.Init())
	v := m.View()
	if !strings.Contains(v, "capture (2026-11-20 12:03, 2d ago)") || !strings.Contains(v, "! the capture is 2d old") {
		t.Errorf("no age or old-data warning:\n%s", v)
	}
}

// TestDashboardShowsRoutingHealth: the dashboard's report is topology's
// (analysis.Analyze): on upstream's TRT-LLM multinode example, whose prefill
// workers publish no KV events under the KV router, the findings tab lists
// KvEventsNotPublished.
func TestDashboardShowsRoutingHealth(t *testing.T) {
	data, err := os.ReadFile("../../test/fixtures/upstream/trtllm-disagg-multinode-v1beta1-zone-required.yaml")
	if err != nil {
		t.Fatal(err)
	}
	b, err := capture.Read(bytes.NewReader(data), "trtllm")
	if err != nil {
		t.Fatal(err)
	}
	d, err := NewData(b, DataOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m := New(Options{Initial: d, Mode: "capture", Now: nowAfter(d)})
	send(t, m, tea.WindowSizeMsg{Width: 160, Height: 48})
	run(t, m, m.Init())
	send(t, m, keys("3"))
	if v := m.View(); !strings.Contains(v, "KvEventsNotPublished") {
		t.Errorf("the findings tab lacks the routing-health finding:\n%s", v)
	}
}

// TestRouteMayDiffer: what the dry run cannot model (explain's
// verdict.mayDiffer) shows under the verdict, as explain-route prints it.
func TestRouteMayDiffer(t *testing.T) {
	m := newTestModel(t, prefillOnly, 160, 48, exampleTokens(t))
	send(t, m, keys("4"))
	x := m.Route().Explanation()
	if x == nil {
		t.Fatal("no explanation")
	}
	x.Verdict.MayDiffer = []explain.Divergence{{Feature: "selection-policy", Hop: "prefill", Detail: "the prefill hop runs a custom worker-selection policy"}}
	v := m.View()
	if !strings.Contains(v, "May differ: the router may decide otherwise") || !strings.Contains(v, "- the prefill hop runs a custom worker-selection policy") {
		t.Errorf("no May differ lines:\n%s", v)
	}
}
