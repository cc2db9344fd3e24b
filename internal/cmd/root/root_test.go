package root_test

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/internal/buildinfo"
	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/cmdtest"
	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/golden"
)

func TestHelpReadsKubectlDynamo(t *testing.T) {
	r := cmdtest.Run(t, "--help")
	if r.ExitCode != 0 {
		t.Fatalf("exit %d: %s", r.ExitCode, r.Stderr)
	}
	if !strings.Contains(r.Stdout, "Usage:\n  kubectl dynamo [command]") {
		t.Errorf("help does not read as kubectl dynamo:\n%s", r.Stdout)
	}
	for _, flag := range []string{"--kubeconfig", "--context", "-n, --namespace", "--request-timeout", "--color"} {
		if !strings.Contains(r.Stdout, flag) {
			t.Errorf("root help lacks %s", flag)
		}
	}
	r = cmdtest.Run(t, "hash", "--help")
	if !strings.Contains(r.Stdout, "kubectl dynamo hash (--tokens IDS | --token-file FILE | --tokenizer TOK (--prompt TEXT | --prompt-file FILE))") {
		t.Errorf("subcommand usage does not read as kubectl dynamo:\n%s", r.Stdout)
	}
}

func TestErrorsAndExitCodes(t *testing.T) {
	cases := []struct {
		name     string
		args     []string
		wantCode int
		wantErr  string
	}{
		{"unknown command", []string{"frobnicate"}, 1, `unknown command "frobnicate"`},
		{"unknown flag", []string{"hash", "--nope"}, 1, "unknown flag: --nope"},
		{"bad color", []string{"version", "--color", "purple"}, 1, `invalid --color value "purple"`},
		{"version takes no args", []string{"version", "extra"}, 1, `unknown command "extra"`},
		{"bad output", []string{"version", "-o", "wide"}, 1, `unknown output format "wide": use one of table, json, yaml`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := cmdtest.Run(t, tc.args...)
			if r.ExitCode != tc.wantCode {
				t.Errorf("exit = %d, want %d", r.ExitCode, tc.wantCode)
			}
			if !strings.Contains(r.Stderr, tc.wantErr) {
				t.Errorf("stderr %q lacks %q", r.Stderr, tc.wantErr)
			}
			if n := strings.Count(r.Stderr, "error:"); n != 1 {
				t.Errorf("error printed %d times: %q", n, r.Stderr)
			}
		})
	}
}

func TestVersion(t *testing.T) {
	r := cmdtest.Run(t, "version", "-o", "json")
	if r.ExitCode != 0 {
		t.Fatalf("exit %d: %s", r.ExitCode, r.Stderr)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, r.Stdout)
	}
	for _, k := range []string{"apiVersion", "kind", "version", "goVersion", "platform"} {
		if doc[k] == nil || doc[k] == "" {
			t.Errorf("version JSON lacks %q: %s", k, r.Stdout)
		}
	}
	if doc["kind"] != "Version" || doc["version"] != "dev" {
		t.Errorf("unexpected kind/version: %v", doc)
	}
	// -o table is the default human form, as in every command; -o text, its
	// earlier name, still works.
	for _, args := range [][]string{{"version"}, {"version", "-o", "table"}, {"version", "-o", "text"}} {
		r = cmdtest.Run(t, args...)
		if r.ExitCode != 0 || !strings.HasPrefix(r.Stdout, "kubectl-dynamo dev (commit ") {
			t.Errorf("%v = %d %q %q", args, r.ExitCode, r.Stdout, r.Stderr)
		}
	}
	r = cmdtest.Run(t, "version", "-o", "yaml")
	if !strings.Contains(r.Stdout, "kind: Version\n") {
		t.Errorf("yaml version = %q", r.Stdout)
	}
}

func TestCompletion(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		t.Run(shell, func(t *testing.T) {
			r := cmdtest.Run(t, "completion", shell)
			if r.ExitCode != 0 || len(r.Stdout) < 500 {
				t.Fatalf("exit %d, %d bytes: %s", r.ExitCode, len(r.Stdout), r.Stderr)
			}
			if !strings.Contains(r.Stdout, "kubectl-dynamo") {
				t.Errorf("%s completion does not mention the binary", shell)
			}
		})
	}
	// Dynamic completion goes through cobra's __complete, as kubectl's plugin
	// completion (kubectl_complete-dynamo) does.
	r := cmdtest.Run(t, "__complete", "hash", "-o", "")
	golden.Assert(t, []byte(r.Stdout))
	r = cmdtest.Run(t, "__complete", "")
	for _, c := range []string{"hash", "version", "completion"} {
		if !strings.Contains(r.Stdout, c+"\t") {
			t.Errorf("top-level completion lacks %s: %q", c, r.Stdout)
		}
	}
	r = cmdtest.Run(t, "__complete", "hash", "--color", "")
	if !strings.Contains(r.Stdout, "never\n") {
		t.Errorf("--color completion = %q", r.Stdout)
	}
}

// TestHelpShowsTheMainJobsFirst: the root help's examples start with the main
// jobs (topology, explain-route, dashboard), and every example runs as a
// command this binary has.
func TestHelpShowsTheMainJobsFirst(t *testing.T) {
	r := cmdtest.Run(t, "--help")
	i := strings.Index(r.Stdout, "Examples:")
	if i < 0 {
		t.Fatalf("no Examples: in the root help:\n%s", r.Stdout)
	}
	ex := r.Stdout[i:]
	var cmds []string
	for _, line := range strings.Split(ex, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "kubectl dynamo "); ok {
			cmds = append(cmds, strings.Fields(rest)[0])
		}
	}
	if len(cmds) < 3 || cmds[0] != "topology" || !strings.Contains(strings.Join(cmds[:5], " "), "explain-route") ||
		!strings.Contains(strings.Join(cmds[:5], " "), "dashboard") {
		t.Errorf("examples run %v; want topology, explain-route and dashboard first", cmds)
	}
	for _, c := range cmds {
		if h := cmdtest.Run(t, c, "--help"); h.ExitCode != 0 {
			t.Errorf("example command %q: exit %d", c, h.ExitCode)
		}
	}
}

// TestVersionDocTranscript: docs/commands/version.md shows the version
// command's real output, but for the build's own values (version, commit,
// date, Go version, platform), which differ per build.
func TestVersionDocTranscript(t *testing.T) {
	data, err := os.ReadFile("../../../docs/commands/version.md")
	if err != nil {
		t.Fatal(err)
	}
	block := string(data)
	start := strings.Index(block, "```console\n")
	end := strings.Index(block[start+11:], "```")
	if start < 0 || end < 0 {
		t.Fatal("no console block in docs/commands/version.md")
	}
	block = block[start+11 : start+11+end]
	// A release build's stamp (-ldflags -X), as the doc shows one.
	v, c, d := buildinfo.Version, buildinfo.Commit, buildinfo.Date
	buildinfo.Version, buildinfo.Commit, buildinfo.Date = "v0.1.0", "3f2a9c1", "2026-11-22T10:00:00Z"
	t.Cleanup(func() { buildinfo.Version, buildinfo.Commit, buildinfo.Date = v, c, d })
	var got strings.Builder
	for _, args := range [][]string{{"version"}, {"version", "-o", "json"}} {
		r := cmdtest.Run(t, args...)
		if r.ExitCode != 0 {
			t.Fatalf("%v: exit %d", args, r.ExitCode)
		}
		got.WriteString("$ kubectl dynamo " + strings.Join(args, " ") + "\n" + r.Stdout)
	}
	norm := func(s string) string {
		s = regexp.MustCompile(`kubectl-dynamo \S+ \(commit \S+, built \S+, go\S+, \S+\)`).ReplaceAllString(s, "kubectl-dynamo V (commit C, built D, GO, P)")
		return regexp.MustCompile(`"(version|commit|date|goVersion|platform)": "[^"]*"`).ReplaceAllString(s, `"$1": "…"`)
	}
	if norm(got.String()) != norm(block) {
		t.Errorf("docs/commands/version.md differs from the command beyond the build's own values:\n--- doc\n%s--- now\n%s", block, got.String())
	}
}
