package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The foreground phases of .ci/run and their budgets, as the cases below use
// them (the real budgets are in hack/test.sh and .ci/run; these are the ones
// of the runs the cases replay).
var plan = []Phase{
	{Name: "verify", Budget: 300},
	{Name: "lint", Budget: 300},
	{Name: "background wait", Budget: 180},
	{Name: "test-race", Budget: 600},
	{Name: "test-plain", Budget: 120},
	{Name: "test-arm64", Budget: 180},
	{Name: "hostile-env", Budget: 120},
	{Name: "make fuzz", Budget: 270},
	{Name: "make release-check", Budget: 120},
}

// replay runs the rule after every phase of a run whose phases took took[i]
// seconds (plus glue seconds between phases), and returns the phase after
// which it stopped the run ("" for none) and the highest projection made.
func replay(t *testing.T, took []int, glue int) (stoppedAfter string, highest Projection) {
	t.Helper()
	if len(took) != len(plan) {
		t.Fatalf("%d phase times for %d phases", len(took), len(plan))
	}
	start := time.Unix(1_800_000_000, 0)
	var ledger strings.Builder
	fmt.Fprintf(&ledger, "start\t%d\n", start.Unix())
	for _, p := range plan {
		fmt.Fprintf(&ledger, "plan\t%d\t%s\n", p.Budget, p.Name)
	}
	elapsed := 0
	for i, p := range plan {
		elapsed += glue + took[i]
		fmt.Fprintf(&ledger, "done\t%d\t%s\n", took[i], p.Name)
		l, err := ParseLedger(strings.NewReader(ledger.String()))
		if err != nil {
			t.Fatal(err)
		}
		pr := l.Project(start.Add(time.Duration(elapsed)*time.Second), DefaultLimit)
		if pr.Projected > highest.Projected {
			highest = pr
		}
		if pr.Over() {
			return p.Name, highest
		}
	}
	return "", highest
}

func TestRunsThatMustPass(t *testing.T) {
	for _, tc := range []struct {
		name string
		took []int
	}{
		// Issue 33's run: a fresh machine at load 9-16 for its first 20
		// minutes (verify 2.45x its budget), every test passing. Its total
		// was about 40 minutes; it must not be stopped.
		{"fresh machine under load (issue 33)", []int{736, 383, 118, 492, 59, 176, 110, 300, 10}},
		// Session 8's fresh idle machine (docs/development.md).
		{"fresh idle machine (session 8)", []int{277, 346, 118, 428, 38, 99, 51, 233, 6}},
		// A developer's machine with every cache warm: below every budget.
		{"warm caches", []int{5, 15, 0, 170, 10, 15, 40, 95, 7}},
		// One phase at 5x (a stalled download, say), the rest on budget.
		{"one phase at 5x", []int{1500, 300, 180, 600, 120, 180, 120, 270, 120}},
		// Twice every budget: 73 minutes in all, inside the limit.
		{"twice every budget", []int{600, 600, 360, 1200, 240, 360, 240, 540, 240}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stopped, hi := replay(t, tc.took, 5)
			if stopped != "" {
				t.Fatalf("stopped after %s: %v", stopped, hi)
			}
			t.Logf("highest projection: %v", hi)
		})
	}
}

func TestRunsThatMustStop(t *testing.T) {
	for _, tc := range []struct {
		name  string
		took  []int
		after string // the phase after which the rule stops the run
	}{
		// 2.2x every budget would end at 81 minutes: stopped 62 minutes in.
		{"2.2x every budget", []int{660, 660, 396, 1320, 264, 396, 264, 594, 264}, "test-arm64"},
		// 2.5x would end at 92 minutes, past CI's hard limit: stopped after
		// test-race, 58 minutes in, with time to say why.
		{"2.5x every budget", []int{750, 750, 450, 1500, 300, 450, 300, 675, 300}, "test-race"},
		// 3x: stopped after the wait for provisioning, 39 minutes in.
		{"3x every budget", []int{900, 900, 540, 1800, 360, 540, 360, 810, 360}, "background wait"},
		// A machine that falls to 4x after a normal start: stopped 61 minutes in.
		{"slows down late", []int{300, 300, 180, 2400, 480, 720, 480, 1080, 480}, "test-plain"},
		// On budget until fuzz hangs for 50 minutes: it ends past 75. (The rule
		// judges at the end of each phase; a phase that hangs is stopped by
		// its own timeouts or, at worst, by CI at 90 minutes.)
		{"passes the limit in the last phases", []int{300, 300, 180, 600, 120, 180, 120, 3000, 120}, "make fuzz"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stopped, hi := replay(t, tc.took, 5)
			if stopped != tc.after {
				t.Fatalf("stopped after %q, want %q; highest projection: %v", stopped, tc.after, hi)
			}
			if !strings.Contains(hi.String(), "run clock: STOP: ") || !strings.Contains(hi.String(), "past the 4500 s (75.0 min) limit") {
				t.Errorf("the message does not say the run stops and why: %v", hi)
			}
		})
	}
}

func TestProject(t *testing.T) {
	start := time.Unix(1_800_000_000, 0)
	for _, tc := range []struct {
		name      string
		phases    []Phase
		elapsed   int
		slowdown  float64
		projected int
		over      bool
	}{
		{"nothing done yet: budgets at face value", []Phase{{Name: "a", Budget: 300}, {Name: "b", Budget: 600}}, 10, 1, 910, false},
		{"one phase at 2x, weighted with 30 min on budget", []Phase{{Name: "a", Budget: 300, Took: 600, Done: true}, {Name: "b", Budget: 2100}}, 600, 2400.0 / 2100, 600 + 2400, false},
		{"faster than budget counts as 1", []Phase{{Name: "a", Budget: 300, Took: 30, Done: true}, {Name: "b", Budget: 600}}, 30, 1, 630, false},
		{"nothing left: projected is elapsed", []Phase{{Name: "a", Budget: 300, Took: 4400, Done: true}}, 4501, 6200.0 / 2100, 4501, true},
		{"exactly at the limit is inside it", []Phase{{Name: "a", Budget: 600, Took: 600, Done: true}, {Name: "b", Budget: 3900}}, 600, 1, 4500, false},
		{"one second past it is not", []Phase{{Name: "a", Budget: 600, Took: 600, Done: true}, {Name: "b", Budget: 3900}}, 601, 1, 4501, true},
		{"fractions round up", []Phase{{Name: "a", Budget: 100, Took: 1000, Done: true}, {Name: "b", Budget: 1}}, 1000, 2800.0 / 1900, 1002, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := &Ledger{Start: start, Phases: tc.phases}
			p := l.Project(start.Add(time.Duration(tc.elapsed)*time.Second), DefaultLimit)
			if p.Slowdown != tc.slowdown || p.Projected != tc.projected || p.Over() != tc.over {
				t.Errorf("slowdown %v, projected %d, over %v; want %v, %d, %v", p.Slowdown, p.Projected, p.Over(), tc.slowdown, tc.projected, tc.over)
			}
		})
	}
}

func TestParseLedger(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []Phase // nil: an error is wanted
		errPart  string
	}{
		{"plan and done, a name with spaces", "start\t100\nplan\t300\tverify\nplan\t120\tmake release-check\ndone\t290\tverify\n\n",
			[]Phase{{Name: "verify", Budget: 300, Took: 290, Done: true}, {Name: "make release-check", Budget: 120}}, ""},
		{"a name planned twice is completed in order", "start\t100\nplan\t10\tx\nplan\t20\tx\ndone\t5\tx\n",
			[]Phase{{Name: "x", Budget: 10, Took: 5, Done: true}, {Name: "x", Budget: 20}}, ""},
		{"done for an unplanned phase", "start\t100\nplan\t10\tx\ndone\t5\ty\n", nil, "not planned"},
		{"done twice", "start\t100\nplan\t10\tx\ndone\t5\tx\ndone\t5\tx\n", nil, "not planned (or is done already)"},
		{"no start", "plan\t10\tx\n", nil, "no start line"},
		{"a budget of 0", "start\t100\nplan\t0\tx\n", nil, "budget above 0"},
		{"negative seconds", "start\t100\nplan\t10\tx\ndone\t-1\tx\n", nil, "not a number of seconds"},
		{"spaces instead of tabs", "start\t100\nplan 10 x\n", nil, "unknown record"},
		{"missing name", "start\t100\nplan\t10\n", nil, "want: plan<TAB>SECONDS<TAB>NAME"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := ParseLedger(strings.NewReader(tc.in))
			if tc.want == nil {
				if err == nil || !strings.Contains(err.Error(), tc.errPart) {
					t.Fatalf("error %v, want one containing %q", err, tc.errPart)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(l.Phases) != fmt.Sprint(tc.want) {
				t.Errorf("phases %v, want %v", l.Phases, tc.want)
			}
		})
	}
}

// TestCommand drives the command as .ci/run does: exit 0 and a projection on
// course, 1 and a stop message past the limit, 2 for a ledger it cannot read.
func TestCommand(t *testing.T) {
	dir := t.TempDir()
	ledger := filepath.Join(dir, "ledger")
	write := func(s string) {
		if err := os.WriteFile(ledger, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	body := "start\t1000\nplan\t300\tverify\nplan\t600\ttest-race\ndone\t900\tverify\n"
	for _, tc := range []struct {
		name, ledger string
		args         []string
		code         int
		out          string
	}{
		{"on course", body, []string{"-now", "1900"}, 0,
			"run clock: 900 s (15.0 min) in, 1 phase to go (600 s budgeted) × 1.29 (the phases so far took 900 s of 300 s budgeted): on course for 1672 s (27.9 min); limit 4500 s (75.0 min)\n"},
		{"a lower limit stops it", body, []string{"-now", "1900", "-limit", "1600"}, 1, "run clock: STOP: 900 s (15.0 min) in"},
		{"unreadable ledger", "start\tsoon\n", []string{"-now", "1900"}, 2, ""},
		{"no ledger flag", body, []string{}, 2, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			write(tc.ledger)
			args := tc.args
			if tc.name != "no ledger flag" {
				args = append([]string{"-ledger", ledger}, args...)
			}
			var stdout, stderr bytes.Buffer
			code := run(args, &stdout, &stderr, time.Unix(0, 0))
			if code != tc.code || !strings.HasPrefix(stdout.String(), tc.out) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d, stdout starting %q", code, stdout.String(), stderr.String(), tc.code, tc.out)
			}
			if tc.code == 2 && stderr.Len() == 0 {
				t.Error("exit 2 without a word on stderr")
			}
		})
	}
}
