package preflight_test

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/cmdtest"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/cmdline"
)

// recipeSteps are the `kubectl-dynamo preflight` steps of the GitHub
// workflow in docs/commands/preflight.md, as written there: the argv after
// kubectl-dynamo and the file stdout is redirected to ("" for none).
func recipeSteps(t *testing.T) [][2][]string {
	t.Helper()
	doc, err := os.ReadFile("../../../docs/commands/preflight.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```yaml\n(# .github/workflows/dynamo-preflight.yaml\n.*?)```").FindSubmatch(doc)
	if m == nil {
		t.Fatal("docs/commands/preflight.md has no ```yaml block starting with # .github/workflows/dynamo-preflight.yaml")
	}
	var wf struct {
		Jobs map[string]struct {
			Steps []struct {
				Run  string         `json:"run"`
				Uses string         `json:"uses"`
				With map[string]any `json:"with"`
			} `json:"steps"`
		} `json:"jobs"`
	}
	if err := yaml.Unmarshal(m[1], &wf); err != nil {
		t.Fatalf("the workflow is not valid YAML: %v", err)
	}
	var out [][2][]string
	uploads := 0
	for _, job := range wf.Jobs {
		for _, s := range job.Steps {
			if strings.HasPrefix(s.Uses, "github/codeql-action/upload-sarif") {
				uploads++
				if s.With["sarif_file"] != "preflight.sarif" {
					t.Errorf("the upload reads %v, not preflight.sarif", s.With["sarif_file"])
				}
			}
			words := cmdline.Words(s.Run, nil)
			if len(words) < 2 || words[0] != "kubectl-dynamo" || words[1] != "preflight" {
				continue
			}
			var redirect []string
			if i := len(words) - 2; i > 0 && words[i] == ">" {
				redirect, words = words[i+1:], words[:i]
			}
			out = append(out, [2][]string{words[1:], redirect})
		}
	}
	if len(out) != 2 || uploads != 1 {
		t.Fatalf("want the two preflight steps and the SARIF upload, got %d steps, %d uploads", len(out), uploads)
	}
	return out
}

// TestGitOpsRecipe runs the CI recipe of docs/commands/preflight.md as
// written (issue 30): its kubectl-dynamo steps, from examples/gitops, whose
// deploy/dynamo/ tree holds the DGDs (one in a subdirectory, so -R matters),
// a kustomization, an empty file and the capture of the nodes. The capture is
// not read as a manifest (no finding twice, none at it), the annotation step
// fails the job on the error and points at its file and line, the SARIF step
// succeeds and reports the same finding.
func TestGitOpsRecipe(t *testing.T) {
	steps := recipeSteps(t)
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chdir("../../../examples/gitops"); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = os.Chdir(wd) }()

	annotate := cmdtest.Run(t, steps[0][0]...)
	lines := strings.Split(strings.TrimSpace(annotate.Stdout), "\n")
	want := "::error file=deploy/dynamo/qwen3/dgd.yaml,line=49,title=PrefillDomainWithoutDecode (certain) serving/qwen3-disagg us-east-1b::zone us-east-1b: prefill (prefill-b) lands there"
	if annotate.ExitCode != 2 || len(lines) != 1 || !strings.HasPrefix(lines[0], want) || annotate.Stderr != "" {
		t.Errorf("step 1: exit %d, want 2 and one annotation starting %q; stdout:\n%s\nstderr:\n%s", annotate.ExitCode, want, annotate.Stdout, annotate.Stderr)
	}
	if len(steps[1][1]) != 1 || steps[1][1][0] != "preflight.sarif" {
		t.Fatalf("step 2 does not write preflight.sarif: %v", steps[1])
	}
	report := cmdtest.Run(t, steps[1][0]...)
	if report.ExitCode != 0 || report.Stderr != "" {
		t.Fatalf("step 2: exit %d, stderr %q", report.ExitCode, report.Stderr)
	}
	results := checkSARIF(t, []byte(report.Stdout))
	if len(results) != 1 || results[0] != "PrefillDomainWithoutDecode error deploy/dynamo/qwen3/dgd.yaml:49" {
		t.Errorf("SARIF results %q", results)
	}
}

// checkSARIF checks a log against what SARIF 2.1.0 requires (the OASIS
// schema's required properties, enums and bounds) and what GitHub code
// scanning needs on top (tool.driver.name and rules, ruleId, message.text, a
// physical location with a relative URI and startLine >= 1). The official JSON
// schema is not a dependency of this module, so the rules are encoded here;
// the output was also validated once against the official schema
// (sarif-schema-2.1.0.json) with a JSON-schema validator. It returns each
// result as "ruleId level uri:line".
func checkSARIF(t *testing.T, data []byte) []string {
	t.Helper()
	var log map[string]any
	if err := json.Unmarshal(data, &log); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, data)
	}
	obj := func(v any, what string) map[string]any {
		m, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("%s: want an object, got %T", what, v)
		}
		return m
	}
	list := func(v any, what string) []any {
		l, ok := v.([]any)
		if !ok {
			t.Fatalf("%s: want an array, got %T", what, v)
		}
		return l
	}
	str := func(m map[string]any, key, what string) string {
		s, ok := m[key].(string)
		if !ok || s == "" {
			t.Fatalf("%s.%s: want a non-empty string, got %v", what, key, m[key])
		}
		return s
	}
	if v := str(log, "version", "log"); v != "2.1.0" {
		t.Fatalf("version %q", v)
	}
	runs := list(log["runs"], "runs")
	if len(runs) != 1 {
		t.Fatalf("%d runs", len(runs))
	}
	run := obj(runs[0], "runs[0]")
	driver := obj(obj(run["tool"], "tool")["driver"], "tool.driver")
	str(driver, "name", "tool.driver")
	rules := list(driver["rules"], "tool.driver.rules")
	ruleIDs := map[string]int{}
	for i, r := range rules {
		rule := obj(r, "rule")
		id := str(rule, "id", fmt.Sprintf("rules[%d]", i))
		ruleIDs[id] = i
		str(obj(rule["shortDescription"], "shortDescription"), "text", "shortDescription")
		if lvl := str(obj(rule["defaultConfiguration"], "defaultConfiguration"), "level", "defaultConfiguration"); !levelOK(lvl) {
			t.Errorf("rule %s: level %q", id, lvl)
		}
	}
	var out []string
	for i, r := range list(run["results"], "results") {
		res := obj(r, "result")
		what := fmt.Sprintf("results[%d]", i)
		id := str(res, "ruleId", what)
		idx, known := ruleIDs[id]
		if !known {
			t.Errorf("%s: ruleId %s is not among the rules", what, id)
		}
		if ri, ok := res["ruleIndex"].(float64); !ok || int(ri) != idx {
			t.Errorf("%s: ruleIndex %v, want %d", what, res["ruleIndex"], idx)
		}
		level := str(res, "level", what)
		if !levelOK(level) {
			t.Errorf("%s: level %q", what, level)
		}
		str(obj(res["message"], what+".message"), "text", what+".message")
		locs := list(res["locations"], what+".locations")
		if len(locs) == 0 {
			t.Fatalf("%s: no location", what)
		}
		phys := obj(obj(locs[0], "location")["physicalLocation"], "physicalLocation")
		uri := str(obj(phys["artifactLocation"], "artifactLocation"), "uri", "artifactLocation")
		if strings.HasPrefix(uri, "/") || strings.Contains(uri, `\`) || strings.Contains(uri, "://") {
			t.Errorf("%s: uri %q is not relative to the checkout", what, uri)
		}
		line, ok := obj(phys["region"], "region")["startLine"].(float64)
		if !ok || line < 1 || line != float64(int(line)) {
			t.Errorf("%s: startLine %v", what, line)
		}
		out = append(out, fmt.Sprintf("%s %s %s:%d", id, level, uri, int(line)))
	}
	return out
}

func levelOK(l string) bool { return l == "none" || l == "note" || l == "warning" || l == "error" }

// TestGitHubAnnotations: one workflow command per finding, the severity
// mapped (error, warning, notice), and the message and properties escaped
// as the runner reads them (a newline or a percent sign in the message, a
// colon or a comma in a title).
func TestGitHubAnnotations(t *testing.T) {
	r := runIn(t, "", "preflight", "-f", capture, "--nodes-from", capture, "-o", "github", "--fail-on", "info")
	lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	if r.ExitCode != 2 || len(lines) == 0 {
		t.Fatalf("exit %d\n%s%s", r.ExitCode, r.Stdout, r.Stderr)
	}
	re := regexp.MustCompile(`^::(error|warning|notice) file=[^,:]+,line=[0-9]+,title=[^:]+::[^\n\r]+$`)
	for _, l := range lines {
		if !re.MatchString(l) {
			t.Errorf("not a workflow command: %q", l)
		}
		if !strings.Contains(l, "%0Afix: ") {
			t.Errorf("the hint is not on its own (escaped) line: %q", l)
		}
	}
	typos := runIn(t, "", "preflight", "-f", "internal/cmd/preflight/testdata/strict/typos.yaml", "--no-cluster", "-o", "github")
	if !strings.Contains(typos.Stdout, "::error file=internal/cmd/preflight/testdata/strict/typos.yaml,line=8,title=InvalidPolicy (certain) serving/typo::spec.experimental.kvTransferPolicy.enforcment: unknown field") {
		t.Errorf("got %s", typos.Stdout)
	}
}

// TestSARIFReport: the SARIF of a report with several findings passes the
// structure checks; every finding is a result at its file and line.
func TestSARIFReport(t *testing.T) {
	r := runIn(t, "", "preflight", "-f", invalid, "--no-cluster", "-o", "sarif")
	got := checkSARIF(t, []byte(r.Stdout))
	want := []string{
		"InvalidPolicy error examples/preflight/invalid-policy.yaml:12",
		"InvalidPolicy error examples/preflight/invalid-policy.yaml:40",
		"RouterNotKV warning examples/preflight/invalid-policy.yaml:36",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") || r.ExitCode != 2 || r.Stderr != "" {
		t.Errorf("got exit %d, stderr %q, results:\n%s\nwant:\n%s", r.ExitCode, r.Stderr, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestManifestInputs: -R reads subdirectories, and without it a directory's
// own files only; empty files, YAML that is no Kubernetes object and a
// capture met in a directory are noted and skipped, and an invalid file says
// where, not "capture".
func TestManifestInputs(t *testing.T) {
	const dir = "examples/gitops/deploy/dynamo/"
	notes := func(args ...string) (string, cmdtest.Result) {
		r := runIn(t, "", append([]string{"preflight", "--no-cluster", "-o", "json"}, args...)...)
		var doc struct {
			Notes []struct {
				Message string `json:"message"`
			} `json:"notes"`
			Deployments []struct {
				Name string `json:"name"`
			} `json:"deployments"`
		}
		_ = json.Unmarshal([]byte(r.Stdout), &doc)
		var s []string
		for _, n := range doc.Notes {
			s = append(s, n.Message)
		}
		for _, d := range doc.Deployments {
			s = append(s, "DGD "+d.Name)
		}
		return strings.Join(s, "\n"), r
	}
	got, r := notes("-R", "-f", dir)
	for _, want := range []string{
		"examples/gitops/deploy/dynamo/llama/placeholder.yaml is empty: skipped",
		"examples/gitops/deploy/dynamo/nodes.capture.yaml is a kubectl dynamo capture, not manifests: skipped (give it with --nodes-from to predict against its nodes)",
		"not checked (not a DynamoGraphDeployment): 1 Kustomization",
		"DGD llama-agg", "DGD qwen3-disagg",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("-R: want %q in:\n%s", want, got)
		}
	}
	if r.ExitCode != 2 {
		t.Errorf("-R: exit %d", r.ExitCode)
	}
	r = runIn(t, "", "preflight", "--no-cluster", "-f", dir)
	if r.ExitCode != 1 || !strings.Contains(r.Stderr, "no DynamoGraphDeployment in "+dir) {
		t.Errorf("without -R the DGDs in subdirectories must not be read: exit %d %s", r.ExitCode, r.Stderr)
	}
	dirTmp := t.TempDir()
	for name, body := range map[string]string{
		"values.yaml": "replicaCount: 2\n",
		"dgd.yaml":    mustRead(t, "../../../"+dir+"llama/dgd.yaml"),
	} {
		if err := os.WriteFile(dirTmp+"/"+name, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	got, r = notes("-f", dirTmp)
	if !strings.Contains(got, dirTmp+"/values.yaml:1: not a Kubernetes object (no apiVersion and kind): skipped") || r.ExitCode != 0 {
		t.Errorf("Helm values: exit %d\n%s", r.ExitCode, got)
	}
	if err := os.WriteFile(dirTmp+"/broken.yaml", []byte("apiVersion: v1\nkind: ConfigMap\n---\nkey: [unclosed\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r = runIn(t, "", "preflight", "--no-cluster", "-f", dirTmp)
	if r.ExitCode != 1 || !strings.Contains(r.Stderr, "broken.yaml: invalid YAML in the document at line 4") || strings.Contains(r.Stderr, "capture") {
		t.Errorf("invalid YAML: exit %d %s", r.ExitCode, r.Stderr)
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestRefusedConnection: an API server that refuses connections is a
// connection problem, not a permission one.
func TestRefusedConnection(t *testing.T) {
	r := runIn(t, "", "preflight", "-f", invalid, "--server", "https://127.0.0.1:1", "--insecure-skip-tls-verify", "--request-timeout", "2s")
	if r.ExitCode != 1 || !strings.Contains(r.Stderr, "list nodes: the API server (https://127.0.0.1:1) is unreachable, connection refused") ||
		strings.Contains(r.Stderr, "RBAC") || strings.Contains(r.Stderr, "rbac") {
		t.Errorf("exit %d\n%s", r.ExitCode, r.Stderr)
	}
}
