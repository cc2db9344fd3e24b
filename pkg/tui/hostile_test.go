package tui

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/golden"
	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/hostile"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/capture"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/termsafe"
)

// TestViewHostileClusterText (issue 29, item 9): the frame filter keeps the
// SGR sequences the dashboard's own styles produce, so cluster text carrying
// one of them — the dashboard's green and a reset after a failing zone's name,
// "(healthy ✓)" — reached the terminal raw and painted the failing tile's
// title healthy; and text escaped only at the end of the frame was measured
// before it grew (an escape sequence has no width), so a long label was not
// cut to its tile and, once escaped, pushed the tiles beside it — the failing
// zone's ✗ among them — off the screen. Cluster text is now escaped where it
// enters the frame and cut to its cell.
//
// The prefill-only example's zone values (and so its pod and node names), its
// deployment name, label key and model name carry the dashboard's own green,
// bold and resets and a run of bidi and zero-width runes that escapes to 240
// cells. Every tab (topology and its hierarchy, workers, findings, the route
// explorer with what-ifs and its matrix) at 80×24 and 120×40: colour off, no
// ESC at all reaches the frame and nothing a terminal interprets; colour on,
// the frame is the plain one plus SGR (no sequence from the cluster survives);
// the forgery is shown escaped; the topology tab has its three tiles whole,
// each title on screen with the failing zone's ✗. The plain frames are
// golden.
func TestViewHostileClusterText(t *testing.T) {
	st := NewStyles(ThemeDark, true, nil)
	green, bold := sgrSeq.FindString(st.Good.Render("x")), sgrSeq.FindString(st.Bold.Render("x"))
	if green == "" || bold == "" || !st.sgr[green] || !st.sgr[bold] {
		t.Fatalf("the dashboard's own sequences: green %q bold %q", green, bold)
	}
	forgery := "\x1b[0m" + green + " (healthy ✓)\x1b[m" + bold
	payload := forgery + strings.Repeat("\u202e\u200b", 20)
	zone := regexp.MustCompile(`us-east-1[abc]`)
	file := hostile.Capture(t, "../../examples/prefill-only-zone-required.yaml", hostile.CaptureOptions{
		Replace: func(s string) string {
			s = zone.ReplaceAllString(s, "${0}"+strings.ReplaceAll(payload, "$", "$$"))
			s = strings.ReplaceAll(s, "qwen3-32b", "qwen3-32b"+payload)
			s = strings.ReplaceAll(s, "topology.kubernetes.io/zone", "topology.kubernetes.io/zone"+payload)
			return strings.ReplaceAll(s, "Qwen/", "Qwen/"+payload)
		},
		Context: "example" + payload,
	})
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name string
		keys []tea.KeyMsg
	}{
		{"topology", []tea.KeyMsg{keys("1")}},
		{"topology-hierarchy", []tea.KeyMsg{{Type: tea.KeyRight}, {Type: tea.KeyRight}, {Type: tea.KeyEnter}}},
		{"workers", []tea.KeyMsg{{Type: tea.KeyEsc}, {Type: tea.KeyLeft}, {Type: tea.KeyLeft}, keys("2")}},
		{"findings", []tea.KeyMsg{keys("3")}},
		{"route", []tea.KeyMsg{keys("4")}},
		{"route-what-ifs", []tea.KeyMsg{keys("z"), keys("z"), keys("z"), {Type: tea.KeyDown}, keys("x")}},
		{"route-matrix", []tea.KeyMsg{keys("a")}},
	}
	escapedForgery := termsafe.Escape(green) + " (healthy ✓)"
	shown := false
	for _, sz := range [][2]int{{80, 24}, {120, 40}} {
		frames := map[bool][]string{}
		for _, color := range []bool{false, true} {
			b, err := capture.Read(bytes.NewReader(raw), "hostile.json")
			if err != nil {
				t.Fatal(err)
			}
			d, err := NewData(b, DataOptions{})
			if err != nil {
				t.Fatal(err)
			}
			m := New(Options{Initial: d, Mode: "capture", Now: nowAfter(d), Tokens: exampleTokens(t), Color: color})
			send(t, m, tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
			run(t, m, m.Init())
			for _, s := range steps {
				for _, k := range s.keys {
					send(t, m, k)
				}
				frames[color] = append(frames[color], m.View())
			}
		}
		for i, s := range steps {
			t.Run(fmt.Sprintf("%dx%d/%s", sz[0], sz[1], s.name), func(t *testing.T) {
				plain, colour := frames[false][i], frames[true][i]
				checkFrame(t, plain, sz[0], sz[1])
				checkFrame(t, colour, sz[0], sz[1])
				if j := strings.IndexByte(plain, 0x1b); j >= 0 {
					t.Errorf("colour off, yet an escape sequence reached the frame: %q", plain[max(0, j-30):min(len(plain), j+20)])
				}
				if at, ok := hostile.ControlFree(plain); !ok {
					t.Errorf("colour off: a control character reached the frame near %q", at)
				}
				if strings.Contains(colour, green+" (healthy") {
					t.Error("colour on: the cluster's forged green reached the frame raw")
				}
				if stripped := sgrSeq.ReplaceAllString(colour, ""); stripped != plain {
					t.Errorf("colour on: the frame is not the plain one plus the dashboard's SGR (a sequence from the cluster survived):\n%s\n---\n%s", stripped, plain)
				}
				shown = shown || strings.Contains(plain, escapedForgery)
				if s.name == "topology" {
					top, bottom := tileCorners(plain)
					if top != 3 || bottom != 3 {
						t.Errorf("%d top and %d bottom tile corners, want 3 whole tiles:\n%s", top, bottom, plain)
					}
					for _, title := range []string{"▶ us-east-1a", "│ us-east-1b", "│ ✗ us-east-1c"} {
						if !strings.Contains(plain, title) {
							t.Errorf("the tile title %q is not on screen:\n%s", title, plain)
						}
					}
				}
				golden.Assert(t, []byte(plain+"\n"))
			})
		}
	}
	if !shown {
		t.Errorf("no frame shows the forgery escaped (%q)", escapedForgery)
	}
}
