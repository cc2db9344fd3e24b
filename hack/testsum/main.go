// Command testsum reads the JSON event stream of one or more `go test -json`
// runs on stdin and turns it into what a person wants from a test run
// (`make test` pipes every go test through it):
//
//   - one line per package as it finishes (ok/FAIL, tests run, skipped, time);
//
//   - the full output of every failed test, build failure and failed package,
//     and nothing of the passing ones;
//
//   - at the end, every skipped test grouped by package and reason, the
//     slowest packages, and one closing line
//
//     tests: 2011 passed, 0 failed, 3 skipped
//
// It exits 1 when a test, a build or a package failed (including a package that
// failed outside any test, such as a TestMain that could not start its control
// plane), when the stream held no test at all, or when it was cut off before a
// package finished. Lines that are not JSON events pass through unchanged.
//
// Flags:
//
//	-label NAME          name the run in the closing line (default "tests")
//	-record FILE         append the summary (packages, counts, skips) as JSON lines to FILE,
//	                     so several runs can be summed up by -total
//	-total FILE          print the closing line of the runs recorded in FILE and exit
//	-slowest N           list the N slowest packages (default 5, 0 for none)
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"
)

// event is one line of `go test -json` (cmd/test2json), with the build events
// `go test -json` adds (build-output, build-fail).
type event struct {
	Time        time.Time
	Action      string
	Package     string
	ImportPath  string
	Test        string
	Elapsed     float64
	Output      string
	FailedBuild string
}

type testKey struct{ pkg, test string }

// pkgState is what is known about one package of the run.
type pkgState struct {
	name     string
	output   []string // output outside any test (TestMain, "ok" line, panics)
	passed   int
	failed   int
	skipped  int
	done     bool
	result   string // pass, fail, skip
	elapsed  float64
	buildErr string
}

// Skip is one skipped test, with the first line of its reason.
type Skip struct {
	Package string `json:"package"`
	Test    string `json:"test"`
	Reason  string `json:"reason"`
}

// Record is what -record appends for one run.
type Record struct {
	Label    string  `json:"label"`
	Passed   int     `json:"passed"`
	Failed   int     `json:"failed"`
	Skipped  int     `json:"skipped"`
	Packages int     `json:"packages"`
	Skips    []Skip  `json:"skips,omitempty"`
	Seconds  float64 `json:"seconds"`
}

type summary struct {
	out      io.Writer
	pkgs     map[string]*pkgState
	order    []string
	tests    map[testKey][]string // buffered output per running test
	skips    []Skip
	failures int
	builds   map[string][]string // build output per import path
	badBuild bool
}

func newSummary(out io.Writer) *summary {
	return &summary{out: out, pkgs: map[string]*pkgState{}, tests: map[testKey][]string{}, builds: map[string][]string{}}
}

func (s *summary) pkg(name string) *pkgState {
	p := s.pkgs[name]
	if p == nil {
		p = &pkgState{name: name}
		s.pkgs[name] = p
		s.order = append(s.order, name)
	}
	return p
}

// line handles one input line.
func (s *summary) line(raw string) {
	var ev event
	if !strings.HasPrefix(raw, "{") || json.Unmarshal([]byte(raw), &ev) != nil || ev.Action == "" {
		fmt.Fprintln(s.out, raw)
		return
	}
	switch ev.Action {
	case "build-output":
		s.builds[ev.ImportPath] = append(s.builds[ev.ImportPath], ev.Output)
		return
	case "build-fail":
		s.badBuild = true
		fmt.Fprintf(s.out, "BUILD FAIL %s\n%s", ev.ImportPath, strings.Join(s.builds[ev.ImportPath], ""))
		return
	}
	if ev.Package == "" {
		return
	}
	p := s.pkg(ev.Package)
	if ev.Test == "" {
		switch ev.Action {
		case "output":
			p.output = append(p.output, ev.Output)
		case "pass", "fail", "skip":
			p.done, p.result, p.elapsed = true, ev.Action, ev.Elapsed
			if ev.FailedBuild != "" {
				p.buildErr = ev.FailedBuild
			}
			s.finish(p)
		}
		return
	}
	k := testKey{ev.Package, ev.Test}
	switch ev.Action {
	case "output":
		s.tests[k] = append(s.tests[k], ev.Output)
	case "pass":
		p.passed++
		delete(s.tests, k)
	case "skip":
		p.skipped++
		s.skips = append(s.skips, Skip{Package: ev.Package, Test: ev.Test, Reason: skipReason(s.tests[k])})
		delete(s.tests, k)
	case "fail":
		p.failed++
		s.failures++
		fmt.Fprintf(s.out, "--- FAIL: %s %s (%.2fs)\n", ev.Package, ev.Test, ev.Elapsed)
		for _, o := range s.tests[k] {
			fmt.Fprint(s.out, indent(o))
		}
		delete(s.tests, k)
	}
}

// finish prints a package's result line, and its own output when it failed.
func (s *summary) finish(p *pkgState) {
	switch {
	case p.result == "fail":
		fmt.Fprintf(s.out, "FAIL  %-60s %7.1fs  %d passed, %d failed, %d skipped\n", p.name, p.elapsed, p.passed, p.failed, p.skipped)
		if p.buildErr != "" {
			fmt.Fprintf(s.out, "      build failed: %s\n", p.buildErr)
		}
		if p.failed == 0 {
			s.failures++ // failed outside any test: TestMain, a panic, a timeout
		}
		for _, o := range p.output {
			if strings.HasPrefix(o, "FAIL") || strings.HasPrefix(o, "ok ") {
				continue
			}
			fmt.Fprint(s.out, indent(o))
		}
	case p.passed+p.failed+p.skipped == 0:
		// no test files or no tests: say nothing, as go test's own "?" line is noise here
	default:
		fmt.Fprintf(s.out, "ok    %-60s %7.1fs  %d passed, %d skipped\n", p.name, p.elapsed, p.passed, p.skipped)
	}
}

// skipReason is the first line the test logged with t.Skip (the last output
// lines before the "--- SKIP" line), trimmed of the file:line prefix.
func skipReason(out []string) string {
	var lines []string
	for _, o := range out {
		t := strings.TrimSpace(o)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- SKIP") {
			continue
		}
		lines = append(lines, t)
	}
	if len(lines) == 0 {
		return "(no reason given)"
	}
	// t.Skipf("...") prints "file_test.go:NN: reason"; keep the reason.
	r := lines[len(lines)-1]
	for i, l := range lines {
		if strings.Contains(l, "_test.go:") || strings.Contains(l, ".go:") {
			r = strings.Join(lines[i:], " ")
		}
	}
	if i := strings.Index(r, ".go:"); i >= 0 {
		if j := strings.Index(r[i+4:], ": "); j >= 0 && j < 6 {
			r = r[i+4+j+2:]
		}
	}
	if len(r) > 160 {
		r = r[:157] + "..."
	}
	return r
}

func indent(s string) string {
	if s == "" {
		return s
	}
	return "    " + s
}

// report prints the skip groups, the slowest packages and the closing line; it
// returns the run's record.
func (s *summary) report(label string, slowest int, took time.Duration) Record {
	rec := Record{Label: label, Skips: s.skips, Seconds: took.Seconds()}
	var unfinished []string
	for _, name := range s.order {
		p := s.pkgs[name]
		rec.Passed += p.passed
		rec.Failed += p.failed
		rec.Skipped += p.skipped
		if p.passed+p.failed+p.skipped > 0 || p.result == "fail" {
			rec.Packages++
		}
		if !p.done {
			unfinished = append(unfinished, name)
		}
	}
	if len(s.skips) > 0 {
		fmt.Fprintf(s.out, "\nskipped (%d):\n", len(s.skips))
		type group struct {
			pkg, reason string
			tests       []string
		}
		var groups []*group
		idx := map[[2]string]*group{}
		for _, sk := range s.skips {
			k := [2]string{sk.Package, sk.Reason}
			g := idx[k]
			if g == nil {
				g = &group{pkg: sk.Package, reason: sk.Reason}
				idx[k] = g
				groups = append(groups, g)
			}
			g.tests = append(g.tests, sk.Test)
		}
		for _, g := range groups {
			names := g.tests
			if len(names) > 3 {
				names = append(names[:3:3], fmt.Sprintf("and %d more", len(g.tests)-3))
			}
			fmt.Fprintf(s.out, "  %-44s %3d  %s  [%s]\n", g.pkg, len(g.tests), g.reason, strings.Join(names, ", "))
		}
	}
	if slowest > 0 {
		var done []*pkgState
		for _, p := range s.pkgs {
			if p.done && p.passed+p.failed+p.skipped > 0 {
				done = append(done, p)
			}
		}
		sort.Slice(done, func(i, j int) bool { return done[i].elapsed > done[j].elapsed })
		if len(done) > slowest {
			done = done[:slowest]
		}
		if len(done) > 0 {
			parts := make([]string, len(done))
			for i, p := range done {
				parts[i] = fmt.Sprintf("%s %.0fs", strings.TrimPrefix(p.name, "github.com/ai-dynamo/kubectl-dynamo/"), p.elapsed)
			}
			fmt.Fprintf(s.out, "slowest packages: %s\n", strings.Join(parts, ", "))
		}
	}
	for _, name := range unfinished {
		fmt.Fprintf(s.out, "FAIL  %s: the run ended before the package finished (killed or timed out); its last output:\n", name)
		p := s.pkgs[name]
		from := max(0, len(p.output)-20)
		for _, o := range p.output[from:] {
			fmt.Fprint(s.out, indent(o))
		}
		for k, out := range s.tests {
			if k.pkg == name {
				fmt.Fprintf(s.out, "    (running: %s)\n", k.test)
				from := max(0, len(out)-20)
				for _, o := range out[from:] {
					fmt.Fprint(s.out, indent(indent(o)))
				}
			}
		}
		s.failures++
	}
	if s.badBuild {
		s.failures++
	}
	fmt.Fprintf(s.out, "%s: %d passed, %d failed, %d skipped\n", label, rec.Passed, rec.Failed, rec.Skipped)
	return rec
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("testsum", flag.ContinueOnError)
	fs.SetOutput(stderr)
	label := fs.String("label", "tests", "name of the run in the closing line")
	record := fs.String("record", "", "append the run's summary as a JSON line to this file")
	total := fs.String("total", "", "print the closing line of the runs recorded in this file and exit")
	slowest := fs.Int("slowest", 5, "list this many of the slowest packages")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *total != "" {
		return printTotal(*total, *label, stdout, stderr)
	}
	began := time.Now()
	s := newSummary(stdout)
	r := bufio.NewReaderSize(stdin, 1<<20)
	for {
		line, err := r.ReadString('\n')
		if line != "" {
			s.line(strings.TrimRight(line, "\r\n"))
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				fmt.Fprintf(stderr, "testsum: reading the test output: %v\n", err)
				return 1
			}
			break
		}
	}
	rec := s.report(*label, *slowest, time.Since(began))
	if *record != "" {
		if err := appendRecord(*record, rec); err != nil {
			fmt.Fprintf(stderr, "testsum: %v\n", err)
			return 1
		}
	}
	if s.failures > 0 || rec.Failed > 0 {
		return 1
	}
	if rec.Passed+rec.Failed+rec.Skipped == 0 {
		fmt.Fprintf(stdout, "%s: FAIL: no test ran\n", *label)
		return 1
	}
	return 0
}

func appendRecord(path string, rec Record) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("record: %w", err)
	}
	b, err := json.Marshal(rec)
	if err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("record: %w", err)
	}
	return f.Close()
}

// printTotal sums the runs recorded in path: one line per run, the skips of
// all runs grouped by package and reason, and the closing line.
func printTotal(path, label string, stdout, stderr io.Writer) int {
	f, err := os.Open(path)
	if err != nil {
		fmt.Fprintf(stderr, "testsum: %v\n", err)
		return 1
	}
	defer f.Close()
	var all Record
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	n := 0
	for sc.Scan() {
		var r Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			fmt.Fprintf(stderr, "testsum: %s: %v\n", path, err)
			return 1
		}
		n++
		fmt.Fprintf(stdout, "  %-28s %5d passed, %d failed, %d skipped in %d packages (%.0fs)\n", r.Label+":", r.Passed, r.Failed, r.Skipped, r.Packages, r.Seconds)
		all.Passed += r.Passed
		all.Failed += r.Failed
		all.Skipped += r.Skipped
		all.Skips = append(all.Skips, r.Skips...)
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintf(stderr, "testsum: %s: %v\n", path, err)
		return 1
	}
	if n == 0 {
		fmt.Fprintf(stderr, "testsum: %s holds no run\n", path)
		return 1
	}
	counts := map[string]int{}
	var keys []string
	for _, sk := range all.Skips {
		k := sk.Package + ": " + sk.Reason
		if counts[k] == 0 {
			keys = append(keys, k)
		}
		counts[k]++
	}
	if len(keys) > 0 {
		fmt.Fprintln(stdout, "  skipped, by package and reason:")
		for _, k := range keys {
			fmt.Fprintf(stdout, "    %3d  %s\n", counts[k], strings.TrimPrefix(k, "github.com/ai-dynamo/kubectl-dynamo/"))
		}
	}
	fmt.Fprintf(stdout, "%s: %d passed, %d failed, %d skipped\n", label, all.Passed, all.Failed, all.Skipped)
	if all.Failed > 0 {
		return 1
	}
	return 0
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
