package tui

import (
	"fmt"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/golden"
)

// sgrSeq matches an SGR sequence.
var sgrSeq = regexp.MustCompile(`\x1b\[[0-9;:]*m`)

// colourTerminal makes the process's default lipgloss renderer what it is on
// a real terminal: one with colour, whatever --color says (the hermetic
// TERM=dumb leaves it without). It is restored when the test ends.
func colourTerminal(t *testing.T) {
	t.Helper()
	old := lipgloss.DefaultRenderer()
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.ANSI256)
	lipgloss.SetDefaultRenderer(r)
	t.Cleanup(func() { lipgloss.SetDefaultRenderer(old) })
}

// tileCorners counts the tiles' top-left and bottom-left corners in a frame:
// a tile is whole on screen when it has both.
func tileCorners(v string) (top, bottom int) {
	return strings.Count(v, "╭") + strings.Count(v, "╔"), strings.Count(v, "╰") + strings.Count(v, "╚")
}

// checkFrame checks what every frame must be: height lines of at most width
// cells.
func checkFrame(t *testing.T, v string, width, height int) {
	t.Helper()
	lines := strings.Split(v, "\n")
	if len(lines) != height {
		t.Errorf("%d lines, want %d", len(lines), height)
	}
	for i, l := range lines {
		if w := lipgloss.Width(l); w > width {
			t.Errorf("line %d is %d cells wide: %q", i+1, w, l)
		}
	}
}

// TestViewOnATerminal (issue 28) renders the views as a terminal gets them.
// On a terminal the process's default lipgloss renderer has colour (whatever
// --color says), and the text inputs' placeholder and cursor were drawn with
// bubbles' default styles, built on it: their SGR sequences (colour 240,
// reverse) are not the dashboard's own, so the frame filter showed them as
// text — `\x1b[38;5;240m…` in the route explorer's empty input, on every run —
// and let their resets through raw even with colour off. The tests, under
// TERM=dumb, never saw it. Here the default renderer has colour and the clock
// is a week after the capture (the examples as they are read in practice: the
// header carries the capture's age warning, a line more than in
// TestViewGolden). For every case, with colour off and on: nothing the
// dashboard draws for the benign example is escaped (no `\x1b` as text, no ESC
// at all with colour off), the colour frame is the plain one plus SGR, every
// tile is whole (one top and one bottom corner per domain value, each title
// shown), and the What-ifs lines name every what-if key (e w +/- z m x a r).
// The plain frames are pinned at 80×24 and 120×40; UPDATE_GOLDEN=1 rewrites
// them.
func TestViewOnATerminal(t *testing.T) {
	colourTerminal(t)
	const example = "prefill-only-zone-required.yaml"
	tokens := exampleTokens(t)
	cases := []struct {
		name   string
		tokens string
		keys   []tea.KeyMsg
	}{
		{"topology", "", nil},
		{"route-empty", "", []tea.KeyMsg{keys("4")}},
		{"route-empty-editing", "", []tea.KeyMsg{keys("4"), keys("i")}},
		{"route-tokens", tokens, []tea.KeyMsg{keys("4")}},
		{"route-tokens-editing", tokens, []tea.KeyMsg{keys("4"), keys("i")}},
		{"route-what-ifs", tokens, []tea.KeyMsg{keys("4"), keys("e"), keys("w"), keys("+"), keys("z"), keys("m"), keys("x"), keys("a")}},
		{"workers-filter-editing", "", []tea.KeyMsg{keys("2"), keys("/")}},
	}
	for _, sz := range [][2]int{{80, 24}, {120, 40}} {
		for _, tc := range cases {
			t.Run(fmt.Sprintf("%dx%d/%s", sz[0], sz[1], tc.name), func(t *testing.T) {
				frames := map[bool]string{}
				var domains []string
				for _, color := range []bool{false, true} {
					d := exampleData(t, example)
					weekOld := func() time.Time { return d.Snapshot.CollectedAt.Add(7 * 24 * time.Hour) }
					m := New(Options{Initial: d, Mode: "capture", Now: weekOld, Tokens: tc.tokens, Color: color})
					send(t, m, tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
					run(t, m, m.Init())
					for _, k := range tc.keys {
						send(t, m, k)
					}
					frames[color] = m.View()
					domains = nil
					for _, dom := range d.Report.Deployments[0].Domains {
						domains = append(domains, dom.Value)
					}
				}
				plain, colour := frames[false], frames[true]
				checkFrame(t, plain, sz[0], sz[1])
				checkFrame(t, colour, sz[0], sz[1])
				if i := strings.IndexByte(plain, 0x1b); i >= 0 {
					t.Errorf("colour off, but the frame has an escape sequence: %q", plain[i:min(len(plain), i+20)])
				}
				for name, v := range frames {
					if i := strings.Index(v, `\x1b`); i >= 0 {
						t.Errorf("colour %v: the dashboard's own drawing was escaped into text: %q", name, v[max(0, i-20):min(len(v), i+30)])
					}
				}
				if stripped := sgrSeq.ReplaceAllString(colour, ""); stripped != plain {
					t.Errorf("the colour frame is not the plain one plus SGR:\n%s\n---\n%s", stripped, plain)
				}
				if !strings.Contains(plain, "! the capture is 7d old") {
					t.Errorf("the header lacks the capture's age warning:\n%s", plain)
				}
				switch {
				case tc.name == "topology":
					top, bottom := tileCorners(plain)
					if top != len(domains) || bottom != len(domains) {
						t.Errorf("%d top and %d bottom tile corners for %d domain values: a tile is cut\n%s", top, bottom, len(domains), plain)
					}
					for _, title := range []string{"▶ us-east-1a", "│ us-east-1b", "│ ✗ us-east-1c"} {
						if !strings.Contains(plain, title) {
							t.Errorf("no tile title %q:\n%s", title, plain)
						}
					}
				case strings.HasPrefix(tc.name, "route"):
					for _, k := range []string{"e enforcement", "w weight", "+/- temperature", "z down", "m mode", "x exclude", "a matrix", "r reset"} {
						if !strings.Contains(plain, k) {
							t.Errorf("the What-ifs lines do not show %q:\n%s", k, plain)
						}
					}
				}
				golden.Assert(t, []byte(plain+"\n"))
			})
		}
	}
}

// TestTopologyTilesAreNeverCut: however many domain values and however small
// the terminal, the topology tab shows whole tiles — the most detail at which
// every row fits (P:D goes first, then the KV and load bars, then the counts),
// else the least detail and whole rows that scroll with the cursor, the
// heading saying which — and the tile under the cursor is always on screen.
func TestTopologyTilesAreNeverCut(t *testing.T) {
	for _, tc := range []struct {
		values, width, height int
		wantLines             []string // in every tile
		noLines               []string // in no tile
		scrolls               bool
	}{
		{3, 120, 40, []string{"P:D", "KV", "load"}, nil, false},
		{3, 80, 24, []string{"P:D", "KV", "load"}, nil, false},
		{3, 60, 16, nil, []string{"prefill", "P:D", "KV", "load"}, true},
		{4, 80, 24, []string{"P:D", "KV", "load"}, nil, false},
		{5, 80, 24, []string{"prefill", "decode"}, []string{"P:D", "KV", "load"}, false},
		{7, 80, 24, nil, []string{"prefill", "P:D", "KV", "load"}, false},
		{20, 80, 24, nil, []string{"prefill", "P:D", "KV", "load"}, true},
		{12, 120, 40, []string{"prefill", "decode", "KV", "load"}, []string{"P:D"}, false},
		{15, 120, 40, []string{"prefill", "decode"}, []string{"P:D", "KV", "load"}, false},
		{20, 120, 40, nil, []string{"prefill", "P:D", "KV", "load"}, false},
		{40, 120, 40, nil, []string{"prefill", "P:D", "KV", "load"}, true},
	} {
		t.Run(fmt.Sprintf("%d values at %dx%d", tc.values, tc.width, tc.height), func(t *testing.T) {
			d := exampleData(t, "healthy-three-zone-required.yaml")
			r := &d.Report.Deployments[0]
			base := r.Domains[0]
			r.Domains = nil
			for i := range tc.values {
				dom := base
				dom.Value = fmt.Sprintf("zone-%02d", i+1)
				r.Domains = append(r.Domains, dom)
			}
			m := New(Options{Initial: d, Mode: "capture", Now: nowAfter(d)})
			send(t, m, tea.WindowSizeMsg{Width: tc.width, Height: tc.height})
			run(t, m, m.Init())
			for cursor := 0; cursor < tc.values; cursor++ {
				v := m.View()
				checkFrame(t, v, tc.width, tc.height)
				top, bottom := tileCorners(v)
				if top != bottom || top == 0 {
					t.Fatalf("cursor on tile %d: %d top and %d bottom corners: a tile is cut\n%s", cursor+1, top, bottom, v)
				}
				if !tc.scrolls && top != tc.values {
					t.Fatalf("%d tiles shown of %d, all fit\n%s", top, tc.values, v)
				}
				if want := fmt.Sprintf("▶ zone-%02d", cursor+1); !strings.Contains(v, want) {
					t.Fatalf("the tile under the cursor (%q) is not on screen\n%s", want, v)
				}
				if got := strings.Contains(v, "value(s), rows "); got != tc.scrolls {
					t.Errorf("the heading says rows are scrolled: %v, want %v\n%s", got, tc.scrolls, v)
				}
				for _, l := range tc.wantLines {
					if n := strings.Count(v, "│ "+l) + strings.Count(v, "║ "+l); n != top {
						t.Errorf("%q in %d of %d tiles\n%s", l, n, top, v)
					}
				}
				for _, l := range tc.noLines {
					if strings.Contains(v, "│ "+l) || strings.Contains(v, "║ "+l) {
						t.Errorf("%q shown, the tiles should have dropped it\n%s", l, v)
					}
				}
				send(t, m, tea.KeyMsg{Type: tea.KeyRight})
			}
		})
	}
}
