package main

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

const (
	// DefaultLimit is 75 minutes: CI kills a run at 90, and a run projected
	// past 75 is stopped while there is time left to say why.
	DefaultLimit = 75 * 60
	// Prior is how much budgeted work at budget pace the slowdown is weighted
	// with, in seconds (about the whole run's budget): the first phases alone
	// do not decide it.
	Prior = 30 * 60
)

// Phase is one planned foreground phase of the run.
type Phase struct {
	Name   string
	Budget int // seconds
	Took   int // seconds; meaningful when Done
	Done   bool
}

// Ledger is what hack/lib/phase.sh wrote about the run so far.
type Ledger struct {
	Start  time.Time
	Phases []Phase // in the order they were planned
}

// ParseLedger reads a ledger (see the package documentation for its lines).
// A phase may be planned more than once under one name; each "done" line
// completes the first of them still open.
func ParseLedger(r io.Reader) (*Ledger, error) {
	l := &Ledger{}
	sc := bufio.NewScanner(r)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			continue
		}
		f := strings.SplitN(line, "\t", 3)
		bad := func(why string) error { return fmt.Errorf("line %d (%q): %s", n, line, why) }
		switch f[0] {
		case "start":
			if len(f) != 2 {
				return nil, bad("want: start<TAB>UNIX-SECONDS")
			}
			s, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil || s <= 0 {
				return nil, bad("not a Unix time")
			}
			l.Start = time.Unix(s, 0)
		case "plan", "done":
			if len(f) != 3 || f[2] == "" {
				return nil, bad("want: " + f[0] + "<TAB>SECONDS<TAB>NAME")
			}
			secs, err := strconv.Atoi(f[1])
			if err != nil || secs < 0 {
				return nil, bad("not a number of seconds")
			}
			if f[0] == "plan" {
				if secs == 0 {
					return nil, bad("a planned phase needs a budget above 0")
				}
				l.Phases = append(l.Phases, Phase{Name: f[2], Budget: secs})
				continue
			}
			i := l.open(f[2])
			if i < 0 {
				return nil, bad("a phase that was not planned (or is done already)")
			}
			l.Phases[i].Took, l.Phases[i].Done = secs, true
		default:
			return nil, bad("unknown record (want start, plan or done)")
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if l.Start.IsZero() {
		return nil, fmt.Errorf("no start line: the run's start time is unknown")
	}
	return l, nil
}

func (l *Ledger) open(name string) int {
	for i, p := range l.Phases {
		if p.Name == name && !p.Done {
			return i
		}
	}
	return -1
}

// Projection is the judgement at one point of the run.
type Projection struct {
	Limit     int     // seconds
	Elapsed   int     // seconds since the run began
	DoneTook  int     // the completed phases' time, seconds
	DoneBudg  int     // the completed phases' budgets, seconds
	Left      int     // phases still to run
	LeftBudg  int     // their budgets, seconds
	Slowdown  float64 // applied to LeftBudg, at least 1
	Projected int     // seconds: Elapsed + Slowdown × LeftBudg, rounded up
}

// Project judges the run at now against limit seconds.
func (l *Ledger) Project(now time.Time, limit int) Projection {
	p := Projection{Limit: limit, Elapsed: int(now.Sub(l.Start) / time.Second)}
	if p.Elapsed < 0 {
		p.Elapsed = 0
	}
	for _, ph := range l.Phases {
		if ph.Done {
			p.DoneTook += ph.Took
			p.DoneBudg += ph.Budget
		} else {
			p.Left++
			p.LeftBudg += ph.Budget
		}
	}
	p.Slowdown = float64(p.DoneTook+Prior) / float64(p.DoneBudg+Prior)
	if p.Slowdown < 1 {
		p.Slowdown = 1
	}
	rest := p.Slowdown * float64(p.LeftBudg)
	p.Projected = p.Elapsed + int(rest)
	if float64(int(rest)) < rest {
		p.Projected++
	}
	return p
}

// Over reports whether the run is on course to pass the limit.
func (p Projection) Over() bool { return p.Projected > p.Limit }

func (p Projection) String() string {
	var b strings.Builder
	if p.Over() {
		b.WriteString("run clock: STOP: ")
	} else {
		b.WriteString("run clock: ")
	}
	fmt.Fprintf(&b, "%s in", minutes(p.Elapsed))
	if p.Left > 0 {
		fmt.Fprintf(&b, ", %d phase%s to go (%d s budgeted) × %.2f", p.Left, plural(p.Left), p.LeftBudg, p.Slowdown)
		if p.DoneBudg > 0 {
			fmt.Fprintf(&b, " (the phases so far took %d s of %d s budgeted)", p.DoneTook, p.DoneBudg)
		}
		fmt.Fprintf(&b, ": on course for %s", minutes(p.Projected))
	}
	if p.Over() {
		fmt.Fprintf(&b, ", past the %s limit (CI kills a run at 90 min). Stopped for time, not for a failure: this machine is too slow or too busy for CI, and the phases that ran long say where the time went (docs/development.md, \"Time budget\")", minutes(p.Limit))
	} else {
		fmt.Fprintf(&b, "; limit %s", minutes(p.Limit))
	}
	return b.String()
}

func minutes(s int) string {
	return fmt.Sprintf("%d s (%.1f min)", s, float64(s)/60)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
