package topology_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/cmdtest"
	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/golden"
)

const examples = "../../../examples/"

// TestTopologyGolden pins what users see for every example in every format.
func TestTopologyGolden(t *testing.T) {
	files, err := filepath.Glob(examples + "*.yaml")
	if err != nil || len(files) < 4 {
		t.Fatalf("examples: %v %v", files, err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		for _, format := range []string{"table", "wide", "json", "yaml", "tree"} {
			t.Run(name+"/"+format, func(t *testing.T) {
				args := []string{"topology", "--from-file", "examples/" + filepath.Base(f), "-o", format}
				if format == "tree" {
					args = []string{"topology", "--from-file", "examples/" + filepath.Base(f), "--tree"}
				}
				r := runIn(t, args...)
				golden.Assert(t, cmdtest.Transcript(args, "", r))
				if r.ExitCode != 0 && r.ExitCode != 2 {
					t.Fatalf("exit %d: %s", r.ExitCode, r.Stderr)
				}
			})
		}
	}
}

// runIn runs the command from the repository root so example paths read as users
// type them.
func runIn(t *testing.T, args ...string) cmdtest.Result {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chdir("../../.."); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = os.Chdir(wd) }()
	return cmdtest.Run(t, args...)
}

type report struct {
	Kind        string `json:"kind"`
	Deployments []struct {
		Name    string `json:"name"`
		Domains []struct {
			Value   string `json:"value"`
			Prefill struct{ Ready, Total int }
			Decode  struct{ Ready, Total int }
		} `json:"domains"`
	} `json:"deployments"`
	Findings []struct {
		ID       string `json:"id"`
		Severity string `json:"severity"`
		Domain   string `json:"domain"`
	} `json:"findings"`
}

func TestTopologyExitCodesAndFindings(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantCode int
		check    func(t *testing.T, r report)
	}{
		{"healthy is clean", []string{"--from-file", "examples/healthy-three-zone-required.yaml"}, 0, func(t *testing.T, r report) {
			for _, f := range r.Findings {
				if f.Severity == "error" || f.Severity == "warning" {
					t.Errorf("unexpected finding %+v", f)
				}
			}
			if len(r.Deployments) != 1 || len(r.Deployments[0].Domains) != 3 {
				t.Fatalf("want 1 deployment with 3 zones: %+v", r.Deployments)
			}
		}},
		{"prefill-only zone fails required", []string{"--from-file", "examples/prefill-only-zone-required.yaml"}, 2, func(t *testing.T, r report) {
			found := false
			for _, f := range r.Findings {
				if f.ID == "PrefillDomainWithoutDecode" && f.Domain == "us-east-1c" && f.Severity == "error" {
					found = true
				}
			}
			if !found {
				t.Errorf("PrefillDomainWithoutDecode on us-east-1c missing: %+v", r.Findings)
			}
		}},
		{"exit-zero reports only", []string{"--from-file", "examples/prefill-only-zone-required.yaml", "--exit-zero"}, 0, nil},
		{"fail-on warning", []string{"--from-file", "examples/preferred-rollout-drift.yaml", "--fail-on", "warning"}, 2, func(t *testing.T, r report) {
			ids := map[string]bool{}
			for _, f := range r.Findings {
				ids[f.ID] = true
			}
			for _, want := range []string{"TopologyLabelDrift", "WorkerMissingDomain", "TopologyLabelMissingEvent"} {
				if !ids[want] {
					t.Errorf("finding %s missing: %v", want, ids)
				}
			}
		}},
		{"etcd example builds instances", []string{"--from-file", "examples/etcd-discovery-v1alpha1.yaml", "--fail-on", "error"}, 0, func(t *testing.T, r report) {
			if len(r.Deployments) != 1 || len(r.Deployments[0].Domains) != 2 {
				t.Fatalf("want 2 racks: %+v", r.Deployments)
			}
		}},
		{"name filter", []string{"--from-file", "examples/healthy-three-zone-required.yaml", "llama3-70b"}, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"topology", "-o", "json"}, tt.args...)
			r := runIn(t, args...)
			if r.ExitCode != tt.wantCode {
				t.Fatalf("exit %d, want %d; stderr %s", r.ExitCode, tt.wantCode, r.Stderr)
			}
			var rep report
			if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
				t.Fatalf("not JSON: %v\n%s", err, r.Stdout)
			}
			if rep.Kind != "TopologyReport" {
				t.Errorf("kind = %q", rep.Kind)
			}
			if tt.check != nil {
				tt.check(t, rep)
			}
		})
	}
}

func TestTopologyErrors(t *testing.T) {
	cases := []struct {
		name  string
		args  []string
		stdin string
	}{
		{"unknown_deployment", []string{"topology", "--from-file", "examples/healthy-three-zone-required.yaml", "nope"}, ""},
		{"missing_file", []string{"topology", "--from-file", "examples/does-not-exist.yaml"}, ""},
		{"not_a_capture", []string{"topology", "--from-file", "-"}, "hello: [unterminated"},
		{"bad_fail_on", []string{"topology", "--from-file", "x", "--fail-on", "fatal"}, ""},
		{"bad_skew", []string{"topology", "--from-file", "x", "--skew-factor", "0.5"}, ""},
		{"bad_dynamo_version", []string{"topology", "--from-file", "x", "--dynamo-version", "banana"}, ""},
		{"watch_offline", []string{"topology", "--from-file", "x", "--watch"}, ""},
		{"names_with_all_namespaces", []string{"topology", "-A", "a"}, ""},
		{"bad_output", []string{"topology", "--from-file", "x", "-o", "xml"}, ""},
		{"empty_capture", []string{"topology", "--from-file", "-"}, "apiVersion: v1\nkind: List\nitems: []\n"},
		// One rule for a selection that matches nothing (docs/exit-codes.md):
		// exit 1, naming what exists and the command that reads it.
		{"wrong_namespace", []string{"topology", "--from-file", "examples/prefill-only-zone-required.yaml", "-n", "wrongns"}, ""},
		{"wrong_namespace_json", []string{"topology", "--from-file", "examples/prefill-only-zone-required.yaml", "-n", "wrongns", "-o", "json"}, ""},
		{"name_in_other_namespace", []string{"topology", "--from-file", "examples/prefill-only-zone-required.yaml", "-n", "default", "qwen3-32b"}, ""},
		{"some_names_missing", []string{"topology", "--from-file", "examples/prefill-only-zone-required.yaml", "qwen3-32b", "nope", "nada"}, ""},
		{"pod_manifest", []string{"topology", "--from-file", "-"}, "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  namespace: default\nspec:\n  containers:\n  - name: web\n    image: nginx\n"},
		{"no_kubeconfig", []string{"topology"}, ""},
		{"no_kubeconfig_all_namespaces", []string{"topology", "-A", "-o", "json"}, ""},
		{"live_flags_offline", []string{"topology", "--from-file", "x", "--etcd-endpoints", "http://etcd:2379", "--no-frontend"}, ""},
		{"context_offline", []string{"topology", "--from-file", "examples/prefill-only-zone-required.yaml", "--context", "prod"}, ""},
		{"kubeconfig_and_context_offline", []string{"topology", "--from-file", "examples/prefill-only-zone-required.yaml", "--kubeconfig", "k.yaml", "--context", "prod"}, ""},
		{"no_etcd_with_endpoints", []string{"topology", "--no-etcd", "--etcd-endpoints", "http://etcd:2379"}, ""},
		// A kubeconfig that cannot be used: the hint reads the same kubeconfig
		// and offers the offline mode.
		{"unknown_context", []string{"topology", "--kubeconfig", "internal/cmd/topology/testdata/kubeconfig.yaml", "--context", "nope"}, ""},
		{"unknown_context_all_namespaces", []string{"topology", "-A", "--kubeconfig", "internal/cmd/topology/testdata/kubeconfig.yaml", "--context", "nope"}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wd, _ := os.Getwd()
			if err := os.Chdir("../../.."); err != nil {
				t.Fatal(err)
			}
			r := cmdtest.RunWith(t, cmdtest.Options{Stdin: tc.stdin}, tc.args...)
			_ = os.Chdir(wd)
			golden.Assert(t, cmdtest.Transcript(tc.args, tc.stdin, r))
			if r.Stdout != "" {
				t.Errorf("an error must print no report on stdout, got %q", r.Stdout)
			}
			if r.ExitCode != 1 || !strings.HasPrefix(r.Stderr, "error: ") {
				t.Errorf("want exit 1 with one error, got %d: %q", r.ExitCode, r.Stderr)
			}
		})
	}
}

// TestTopologyNoHeaders: --no-headers prints data rows only (kubectl's
// meaning), so the first field of every line is a domain value, or the
// deployment when there are several.
func TestTopologyNoHeaders(t *testing.T) {
	one, err := os.ReadFile(examples + "prefill-only-zone-required.yaml")
	if err != nil {
		t.Fatal(err)
	}
	two, err := os.ReadFile(examples + "healthy-three-zone-required.yaml")
	if err != nil {
		t.Fatal(err)
	}
	const ex = "examples/prefill-only-zone-required.yaml"
	cases := []struct {
		name       string
		args       []string
		stdin      string
		firstField []string
	}{
		{"table", []string{"topology", "--from-file", ex, "--no-headers"}, "", []string{"us-east-1a", "us-east-1b", "us-east-1c"}},
		{"wide", []string{"topology", "--from-file", ex, "--no-headers", "-o", "wide"}, "", []string{"us-east-1a", "us-east-1b", "us-east-1c"}},
		{"tree", []string{"topology", "--from-file", ex, "--no-headers", "--tree"}, "", nil},
		{"two_deployments", []string{"topology", "--from-file", "-", "--no-headers"}, string(one) + "\n---\n" + string(two),
			[]string{"inference/llama3-70b", "inference/llama3-70b", "inference/llama3-70b", "serving/qwen3-32b", "serving/qwen3-32b", "serving/qwen3-32b"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wd, _ := os.Getwd()
			if err := os.Chdir("../../.."); err != nil {
				t.Fatal(err)
			}
			r := cmdtest.RunWith(t, cmdtest.Options{Stdin: tc.stdin}, tc.args...)
			_ = os.Chdir(wd)
			stdin := tc.stdin
			if len(stdin) > 200 {
				stdin = "(two example captures)\n"
			}
			golden.Assert(t, cmdtest.Transcript(tc.args, stdin, r))
			if r.ExitCode != 2 {
				t.Errorf("exit %d, want 2: --no-headers changes the output, not the verdict", r.ExitCode)
			}
			for _, line := range strings.Split(strings.TrimSuffix(r.Stdout, "\n"), "\n") {
				for _, label := range []string{"Context:", "Deployment:", "Findings:", "Notes:", "No findings", "ZONE", "PREFILL"} {
					if strings.Contains(line, label) {
						t.Errorf("--no-headers printed %q: %q", label, line)
					}
				}
			}
			if tc.firstField != nil {
				var got []string
				for _, line := range strings.Split(strings.TrimSuffix(r.Stdout, "\n"), "\n") {
					got = append(got, strings.Fields(line)[0])
				}
				if strings.Join(got, " ") != strings.Join(tc.firstField, " ") {
					t.Errorf("first fields %v, want %v", got, tc.firstField)
				}
			}
		})
	}
}

// TestTopologyDataAge: every source shows its date and age, and old data is
// a warning note first among the notes (stderr with --no-headers): a capture
// older than 24h, loads scraped more than 5m before the capture was taken
// (pkg/analysis.FreshnessNotes). The clock is 2026-11-22 12:00 UTC.
func TestTopologyDataAge(t *testing.T) {
	example, err := os.ReadFile(examples + "prefill-only-zone-required.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// retime sets when the capture was taken and when its loads were scraped.
	retime := func(capturedAt, scrapedAt string) string {
		s := strings.Replace(string(example), `kubectl-dynamo.io/collected-at: "2026-11-20T12:03:11Z"`, `kubectl-dynamo.io/collected-at: "`+capturedAt+`"`, 1)
		s = strings.Replace(s, "\n  collectedAt: \"2026-11-20T12:03:11Z\"\n", "\n  collectedAt: \""+scrapedAt+"\"\n", 1)
		if s == string(example) {
			t.Fatal("the example's times moved: update retime")
		}
		return s
	}
	cases := []struct {
		name, stdin, shown string
		args               []string
		notes              int
	}{
		{"fresh_capture", retime("2026-11-22T11:00:00Z", "2026-11-22T11:00:00Z"), "(the example taken 2026-11-22T11:00:00Z)\n",
			[]string{"topology", "--from-file", "-", "--exit-zero"}, 0},
		{"loads_older_than_capture", retime("2026-11-22T11:58:00Z", "2026-11-22T11:30:00Z"), "(the example taken 2026-11-22T11:58:00Z, loads scraped 11:30:00)\n",
			[]string{"topology", "--from-file", "-", "--exit-zero"}, 1},
		{"old_capture_no_headers", string(example), "(the example, taken 2026-11-20T12:03:11Z)\n",
			[]string{"topology", "--from-file", "-", "--exit-zero", "--no-headers"}, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := cmdtest.RunWith(t, cmdtest.Options{Stdin: tc.stdin}, tc.args...)
			golden.Assert(t, cmdtest.Transcript(tc.args, tc.shown, r))
			if r.ExitCode != 0 {
				t.Fatalf("exit %d: %s", r.ExitCode, r.Stderr)
			}
			if got := strings.Count(r.Stdout+r.Stderr, "UTC, "); got != tc.notes {
				t.Errorf("%d age warnings, want %d", got, tc.notes)
			}
			r = cmdtest.RunWith(t, cmdtest.Options{Stdin: tc.stdin}, "topology", "--from-file", "-", "-o", "json")
			var rep struct {
				Sources []struct{ At string }
				Notes   []struct{ Severity, Message string }
			}
			if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
				t.Fatal(err)
			}
			if len(rep.Sources) == 0 || rep.Sources[0].At == "" {
				t.Errorf("-o json has no source time: %+v", rep.Sources)
			}
			n := 0
			for _, note := range rep.Notes {
				if strings.Contains(note.Message, "UTC, ") {
					n++
				}
			}
			if n != tc.notes {
				t.Errorf("-o json: %d age notes, want %d: %+v", n, tc.notes, rep.Notes)
			}
		})
	}
}
