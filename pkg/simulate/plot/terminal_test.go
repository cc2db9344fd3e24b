package plot

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/golden"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/simulate"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/termsafe"
)

func renderTerminal(t *testing.T, r *simulate.Report, width int) string {
	t.Helper()
	var b bytes.Buffer
	if err := Terminal(&b, r, width); err != nil {
		t.Fatalf("Terminal: %v", err)
	}
	return b.String()
}

// TestTerminal compares each case at 80 and 160 columns (and the usual
// report at the narrowest, 40) with its golden file, and checks what must
// hold of any output: every line fits the width, nothing a terminal would
// act on (termsafe.Safe), no trailing spaces, the same text every time.
func TestTerminal(t *testing.T) {
	for _, tc := range cases {
		widths := []int{80, 160}
		if tc.name == "three-variants" || tc.name == "hostile-names" {
			widths = append(widths, 40)
		}
		for _, width := range widths {
			t.Run(fmt.Sprintf("%s/w%d", tc.name, width), func(t *testing.T) {
				got := renderTerminal(t, tc.report(), width)
				golden.Assert(t, []byte(got))
				if again := renderTerminal(t, tc.report(), width); again != got {
					t.Error("two renderings of the same report differ")
				}
				checkTerminal(t, got, width)
			})
		}
	}
}

func checkTerminal(t *testing.T, out string, width int) {
	t.Helper()
	if !strings.HasSuffix(out, "\n") {
		t.Error("output does not end in a newline")
	}
	for i, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if w := ansi.StringWidth(line); w > width {
			t.Errorf("line %d is %d columns wide, over %d: %q", i+1, w, width, line)
		}
		if !termsafe.Safe(line) {
			t.Errorf("line %d is not safe for a terminal: %q", i+1, line)
		}
		if strings.HasSuffix(line, " ") {
			t.Errorf("line %d ends in a space: %q", i+1, line)
		}
	}
}

// TestTerminalRows checks the rows' content beyond the goldens.
func TestTerminalRows(t *testing.T) {
	tests := []struct {
		name    string
		report  *simulate.Report
		width   int
		want    []string
		notWant []string
	}{
		{"the scale and the time axis", threeVariants(), 80, []string{
			"decode load per zone: █ = 41.25 active sequences on every row",
			"0–60 s of virtual time, 2 s a column; failed: · none  ▪ some  █ half or more",
		}, nil},
		{"an idle zone is blank, its peak 0", threeVariants(), 80, []string{
			"  us-east-1a                                     0",
		}, nil},
		{"failures marked, none as dots", twoVariants(), 80, []string{
			"  failed     ······························      0",
			"  failed     ·▪▪▪▪▪▪▪▪▪▪▪▪▪▪▪▪▪▪▪▪▪▪▪▪▪▪▪▪·    194",
		}, nil},
		{"failure marks by share", failureShares(), 80, []string{"  failed     ·▪██"}, nil},
		{"headline", twoVariants(), 80, []string{"  routed 93.4% of 2,954 · failed 194 (6.6%) · cross-domain 345 · KV hit 37.5%"}, nil},
		{"columns merge buckets past the width", threeVariants(), 40, []string{"0–60 s of virtual time, 3 s a column"}, nil},
		{"below the minimum width", threeVariants(), 10, nil, nil},
		{"names cut in the middle", hostile(), 80, []string{"very-long-zone-na…name-end", "(none)"}, []string{"\x1b", "\u202e"}},
		{"1,000 domains", manyDomains(), 80, []string{"+989 more, none busier than those shown"}, nil},
		{"no buckets", noBuckets(), 80, []string{"no time series (no buckets)"}, nil},
		{"no variants", report(), 80, []string{"no variants to plot"}, nil},
		{"non-finite", nonFinite(), 80, []string{"KV hit –"}, []string{"NaN", "Inf"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := renderTerminal(t, tc.report, tc.width)
			checkTerminal(t, got, max(tc.width, MinWidth))
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("missing %q in\n%s", w, got)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(got, w) {
					t.Errorf("unexpected %q in\n%s", w, got)
				}
			}
		})
	}
}

func TestTerminalNilReport(t *testing.T) {
	if err := Terminal(io.Discard, nil, 80); err == nil {
		t.Error("no error for a nil report")
	}
}
