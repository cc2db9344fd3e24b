package auditroutes_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ai-dynamo/kubectl-dynamo/internal/cmdutil"
	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/cmdtest"
	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/golden"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/audit"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/capture"
)

// runIn runs the command from the repository root so paths read as users
// type them.
func runIn(t *testing.T, o cmdtest.Options, args ...string) cmdtest.Result {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chdir("../../.."); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = os.Chdir(wd) }()
	return cmdtest.RunWith(t, o, args...)
}

// TestAuditRoutesGolden pins the agreement report of every example capture
// against its fixture logs, in every output format, and of the older
// selector generation and the planted disagreements.
func TestAuditRoutesGolden(t *testing.T) {
	type tc struct {
		name string
		args []string
	}
	var cases []tc
	for _, capture := range examples(t) {
		base := []string{"audit-routes", "--from-file", "examples/" + capture + ".yaml", "--logs", "examples/router-logs/" + capture + ".log"}
		for _, format := range []string{"table", "wide", "json", "yaml"} {
			cases = append(cases, tc{capture + "/" + format, append(append([]string{}, base...), "-o", format)})
		}
	}
	cases = append(cases,
		tc{"older-selector/table", []string{"audit-routes", "--from-file", "examples/" + olderFrom + ".yaml", "--logs", "examples/router-logs/" + olderFrom + ".dynamo-1.1.log", "--dynamo-version", "1.1.0"}},
		tc{"several-replicas/table", []string{"audit-routes", "--from-file", "examples/" + plantedFrom + ".yaml",
			"--logs", "examples/router-logs/" + plantedFrom + ".color.log", "--logs", "examples/router-logs/" + plantedFrom + ".jsonl"}},
		tc{"fail-on/table", []string{"audit-routes", "--from-file", "examples/" + plantedFrom + ".yaml", "--logs", "test/fixtures/router-logs/not-minimum.log", "--fail-on", "99%"}},
		tc{"fail-on-nothing-audited/table", []string{"audit-routes", "--from-file", "examples/vllm-disagg-default-router.yaml", "--logs", "examples/router-logs/vllm-disagg-default-router.log", "--fail-on", "0.9"}},
		tc{"no-headers/table", []string{"audit-routes", "--from-file", "examples/" + plantedFrom + ".yaml", "--logs", "test/fixtures/router-logs/wrong-logit.log", "--no-headers"}},
	)
	for _, p := range planted {
		cases = append(cases, tc{"planted-" + p.name + "/table", []string{"audit-routes", "--from-file", "examples/" + plantedFrom + ".yaml", "--logs", "test/fixtures/router-logs/" + p.name + ".log"}})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := runIn(t, cmdtest.Options{}, c.args...)
			golden.Assert(t, cmdtest.Transcript(c.args, "", r))
			if r.ExitCode != 0 && r.ExitCode != 2 {
				t.Fatalf("exit %d: %s", r.ExitCode, r.Stderr)
			}
		})
	}
}

// report decodes -o json.
func report(t *testing.T, r cmdtest.Result) audit.Report {
	t.Helper()
	var rep audit.Report
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
		t.Fatalf("-o json: %v\n%s%s", err, r.Stdout, r.Stderr)
	}
	return rep
}

// TestAuditRoutesCleanFixtures: on every example capture the plugin's own
// decisions, read back from the router's line formats, agree with the model on
// every check that covered them, in text, colour and JSON alike, and the
// three formats give the same report.
func TestAuditRoutesCleanFixtures(t *testing.T) {
	for _, capture := range examples(t) {
		t.Run(capture, func(t *testing.T) {
			var reports []audit.Report
			for _, ext := range []string{".log", ".color.log", ".jsonl"} {
				rep := report(t, runIn(t, cmdtest.Options{}, "audit-routes", "--from-file", "examples/"+capture+".yaml", "--logs", "examples/router-logs/"+capture+ext, "-o", "json"))
				for _, c := range rep.Checks {
					if c.Disagreed != 0 {
						t.Errorf("%s%s: %s disagrees on %d decisions: %+v", capture, ext, c.Check, c.Disagreed, rep.Disagreements)
					}
				}
				if capture != "vllm-disagg-default-router" && rep.Check(audit.CheckChoice).Covered == 0 {
					t.Errorf("%s%s: no decision was audited", capture, ext)
				}
				reports = append(reports, rep)
			}
			for i := range reports {
				reports[i].Logs.Streams = nil
				for j := range reports[i].Decisions {
					reports[i].Decisions[j].Source, reports[i].Decisions[j].Lines = "", nil
				}
			}
			if diff := cmp.Diff(reports[0], reports[1]); diff != "" {
				t.Errorf("text and colour reports differ (-text +colour):\n%s", diff)
			}
			if diff := cmp.Diff(reports[0], reports[2]); diff != "" {
				t.Errorf("text and JSON reports differ (-text +json):\n%s", diff)
			}
		})
	}
}

// TestAuditRoutesPlanted: each planted disagreement is found by its check,
// and by no other, with the worker, the field and a cause.
func TestAuditRoutesPlanted(t *testing.T) {
	for _, p := range planted {
		t.Run(p.name, func(t *testing.T) {
			rep := report(t, runIn(t, cmdtest.Options{}, "audit-routes", "--from-file", "examples/"+plantedFrom+".yaml", "--logs", "test/fixtures/router-logs/"+p.name+".log", "-o", "json"))
			if len(rep.Disagreements) != 1 {
				t.Fatalf("%d disagreements, want 1: %+v", len(rep.Disagreements), rep.Disagreements)
			}
			d := rep.Disagreements[0]
			if d.Check != p.check || d.Field != p.field || d.Worker == "" || d.Cause == "" || d.CauseKind == "" || len(d.Lines) == 0 {
				t.Errorf("disagreement %+v, want check %s field %s", d, p.check, p.field)
			}
			for _, c := range rep.Checks {
				want := 0
				if c.Check == p.check {
					want = 1
				}
				if c.Disagreed != want {
					t.Errorf("%s disagrees on %d decisions, want %d", c.Check, c.Disagreed, want)
				}
			}
		})
	}
}

// TestAuditRoutesInputs: standard input, gzip, and the byte bound.
func TestAuditRoutesInputs(t *testing.T) {
	text, err := os.ReadFile(logsDir + plantedFrom + ".log")
	if err != nil {
		t.Fatal(err)
	}
	var gzBuf bytes.Buffer
	zw := gzip.NewWriter(&gzBuf)
	_, _ = zw.Write(text)
	_ = zw.Close()
	dir := t.TempDir()
	gzPath := filepath.Join(dir, "router.log.gz")
	if err := os.WriteFile(gzPath, gzBuf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	decisions := func(r cmdtest.Result) int { return report(t, r).Logs.Join.Decisions }
	capture := "examples/" + plantedFrom + ".yaml"
	want := decisions(runIn(t, cmdtest.Options{}, "audit-routes", "--from-file", capture, "--logs", "examples/router-logs/"+plantedFrom+".log", "-o", "json"))
	if got := decisions(runIn(t, cmdtest.Options{Stdin: string(text)}, "audit-routes", "--from-file", capture, "--logs", "-", "-o", "json")); got != want {
		t.Errorf("standard input: %d decisions, want %d", got, want)
	}
	r := runIn(t, cmdtest.Options{}, "audit-routes", "--from-file", capture, "--logs", gzPath, "-o", "json")
	if got := decisions(r); got != want || !report(t, r).Logs.Streams[0].Gzip {
		t.Errorf("gzip: %d decisions, want %d", got, want)
	}
	rep := report(t, runIn(t, cmdtest.Options{}, "audit-routes", "--from-file", capture, "--logs", gzPath, "--max-log-bytes", "4096", "-o", "json"))
	if s := rep.Logs.Streams[0]; !s.Truncated || s.Bytes != 4096 || rep.Logs.Join.Decisions >= want {
		t.Errorf("--max-log-bytes 4096: stream %+v, %d decisions", s, rep.Logs.Join.Decisions)
	}
	if !strings.Contains(strings.Join(rep.Notes, "\n"), "stopped at its bound") {
		t.Errorf("a truncated read must be noted: %q", rep.Notes)
	}
}

func TestAuditRoutesErrors(t *testing.T) {
	capture := "examples/" + plantedFrom + ".yaml"
	cases := []struct {
		name  string
		args  []string
		stdin string
		want  string
	}{
		{"no logs and no excerpt in the capture", []string{"audit-routes", "--from-file", capture}, "", "give the router's logs with --logs FILE"},
		{"a missing log file", []string{"audit-routes", "--from-file", capture, "--logs", "nope.log"}, "", "nope.log"},
		{"a directory", []string{"audit-routes", "--from-file", capture, "--logs", "examples"}, "", "directory"},
		{"two readers of stdin", []string{"audit-routes", "--from-file", "-", "--logs", "-"}, "", "both read standard input"},
		{"a bad rate", []string{"audit-routes", "--from-file", capture, "--logs", "x", "--fail-on", "lots"}, "", "--fail-on"},
		{"a rate above 100%", []string{"audit-routes", "--from-file", capture, "--logs", "x", "--fail-on", "120%"}, "", "outside 0..1"},
		{"a probability of 1", []string{"audit-routes", "--from-file", capture, "--logs", "x", "--min-probability", "1"}, "", "--min-probability"},
		{"a tiny byte bound", []string{"audit-routes", "--from-file", capture, "--logs", "x", "--max-log-bytes", "10"}, "", "--max-log-bytes"},
		{"a live-only flag offline", []string{"audit-routes", "--from-file", capture, "--logs", "x", "--context", "prod"}, "", "cannot be used with --from-file"},
		{"a deployment the capture lacks", []string{"audit-routes", "nope", "--from-file", capture, "--logs", "examples/router-logs/" + plantedFrom + ".log"}, "", "nope"},
		{"a broken gzip stream", []string{"audit-routes", "--from-file", capture, "--logs", "-"}, "\x1f\x8b\x08\x00garbage", "gzip"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := runIn(t, cmdtest.Options{Stdin: tc.stdin}, tc.args...)
			if r.ExitCode != 1 || !strings.Contains(r.Stderr, tc.want) {
				t.Fatalf("exit %d, stderr %q; want exit 1 and %q", r.ExitCode, r.Stderr, tc.want)
			}
		})
	}
}

// TestAuditRoutesFailOn: the exit code gates on the lowest check rate.
func TestAuditRoutesFailOn(t *testing.T) {
	capture := "examples/" + plantedFrom + ".yaml"
	cases := []struct {
		logs, failOn string
		code         int
	}{
		{"examples/router-logs/" + plantedFrom + ".log", "100%", 0},
		{"test/fixtures/router-logs/not-minimum.log", "", 0},
		{"test/fixtures/router-logs/not-minimum.log", "0.8", 0},
		{"test/fixtures/router-logs/not-minimum.log", "0.9", 2},
		{"examples/router-logs/vllm-disagg-default-router.log", "0", 2},
	}
	for _, tc := range cases {
		args := []string{"audit-routes", "--from-file", capture, "--logs", tc.logs, "-o", "json"}
		if tc.failOn != "" {
			args = append(args, "--fail-on", tc.failOn)
		}
		r := runIn(t, cmdtest.Options{}, args...)
		if r.ExitCode != tc.code || r.Stderr != "" {
			t.Errorf("%s --fail-on %q: exit %d (stderr %q), want %d and a clean stderr", tc.logs, tc.failOn, r.ExitCode, r.Stderr, tc.code)
		}
	}
}

// TestAuditRoutesHostileLogs: log text reaches the terminal escaped, and a
// line that looks like a router line but is not is counted, not trusted.
func TestAuditRoutesHostileLogs(t *testing.T) {
	lines := strings.Join([]string{
		`2026-11-20T12:05:00.000000Z DEBUG x: Formula for worker_id=6245565840786367 dp_rank=0 with 0.00 effective cached blocks: 9.000 = prefill_load_scale * adjusted_prefill_blocks + decode_blocks + active_request_cost_blocks = 1.000 * 1.000 + 0.000 + 0.000 (raw_prefill_blocks: 1.000, overlap_credit_blocks: 0.000, overlap_credit_decay: 1.000) request_id="evil\u{1b}]0;owned\u{7}\u{1b}[2J" worker_type="prefill"`,
		`2026-11-20T12:05:00.000000Z DEBUG x: Formula for worker_id=1 dp_rank=0 with 0.00 effective cached blocks: 1.000 = prefill_load_scale * adjusted_pre`,
	}, "\n") + "\n"
	r := runIn(t, cmdtest.Options{Stdin: lines, TTY: true}, "audit-routes", "--from-file", "examples/"+plantedFrom+".yaml", "--logs", "-")
	if strings.Contains(r.Stdout+r.Stderr, "\x1b]0;") || strings.Contains(r.Stdout+r.Stderr, "\x1b[2J") {
		t.Fatalf("a request id drove the terminal:\n%q", r.Stdout)
	}
	if !strings.Contains(r.Stdout, `evil\x1b]0;owned`) {
		t.Errorf("the request id is not shown escaped:\n%s", r.Stdout)
	}
	if !strings.Contains(r.Stdout, "1 router lines could not be read") {
		t.Errorf("the cut line is not counted:\n%s", r.Stdout)
	}
}

// TestAuditRoutesCaptureExcerpt: a capture written with a router log excerpt
// (capture --logs) is audited offline without --logs, with the same verdict
// as the original log.
func TestAuditRoutesCaptureExcerpt(t *testing.T) {
	b, err := cmdutil.ReadCaptureFileWhole(nil, examplesDir+plantedFrom+".yaml", "--from-file") // whole: capture.Write writes b.AsRead
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"examples/router-logs/" + plantedFrom + ".jsonl", "test/fixtures/router-logs/not-minimum.log"} {
		t.Run(filepath.Base(name), func(t *testing.T) {
			f, err := os.Open("../../../" + name)
			if err != nil {
				t.Fatal(err)
			}
			recs, _, err := audit.ReadLogs(f, name, audit.Limits{})
			_ = f.Close()
			if err != nil {
				t.Fatal(err)
			}
			lines, _, err := audit.Excerpt(recs, 0, &audit.Pseudonyms{})
			if err != nil {
				t.Fatal(err)
			}
			c := *b
			c.RouterLogs = []raw.RouterLogs{{Namespace: "serving", Deployment: "qwen3-32b", Source: "pod/qwen3-32b-0-frontend-7c9f5/main", Lines: lines}}
			path := filepath.Join(t.TempDir(), "capture.yaml")
			out, err := os.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := capture.Write(out, &c); err != nil {
				t.Fatal(err)
			}
			_ = out.Close()
			fromCapture := report(t, runIn(t, cmdtest.Options{}, "audit-routes", "--from-file", path, "-o", "json"))
			fromLog := report(t, runIn(t, cmdtest.Options{}, "audit-routes", "--from-file", "examples/"+plantedFrom+".yaml", "--logs", name, "-o", "json"))
			if len(fromCapture.Logs.Streams) != 1 || fromCapture.Logs.Streams[0].Name != "capture:pod/qwen3-32b-0-frontend-7c9f5/main" {
				t.Errorf("streams %+v", fromCapture.Logs.Streams)
			}
			if diff := cmp.Diff(fromLog.Checks, fromCapture.Checks); diff != "" {
				t.Errorf("the excerpt audits otherwise than the log (-log +excerpt):\n%s", diff)
			}
		})
	}
	r := runIn(t, cmdtest.Options{}, "audit-routes", "--from-file", "examples/"+plantedFrom+".yaml")
	if r.ExitCode != 1 || !strings.Contains(r.Stderr, "holds no router log excerpt") || !strings.Contains(r.Stderr, "capture --logs") {
		t.Errorf("a capture without an excerpt and no --logs: exit %d, %q", r.ExitCode, r.Stderr)
	}
}
