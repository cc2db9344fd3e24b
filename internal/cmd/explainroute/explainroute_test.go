package explainroute_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/cmdtest"
	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/golden"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/explain"
)

const prompt = "examples/prompts/support-chat.tokens"

// runIn runs the command from the repository root so example paths read as
// users type them.
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

// TestExplainRouteGolden pins what users see for every example.
func TestExplainRouteGolden(t *testing.T) {
	files, err := filepath.Glob("../../../examples/*.yaml")
	if err != nil || len(files) < 4 {
		t.Fatalf("examples: %v %v", files, err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		for _, format := range []string{"table", "wide", "json", "yaml", "all-prefill"} {
			t.Run(name+"/"+format, func(t *testing.T) {
				args := []string{"explain-route", "--from-file", "examples/" + filepath.Base(f), "--token-file", prompt}
				if format == "all-prefill" {
					args = append(args, "--all-prefill")
				} else {
					args = append(args, "-o", format)
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

func explainJSON(t *testing.T, args ...string) (*explain.Explanation, cmdtest.Result) {
	t.Helper()
	r := runIn(t, append(append([]string{"explain-route"}, args...), "-o", "json")...)
	if r.ExitCode != 0 && r.ExitCode != 2 {
		t.Fatalf("exit %d: %s", r.ExitCode, r.Stderr)
	}
	var x explain.Explanation
	if err := json.Unmarshal([]byte(r.Stdout), &x); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, r.Stdout)
	}
	return &x, r
}

// TestExplainRouteVerdicts checks the outcomes the examples are built to show.
func TestExplainRouteVerdicts(t *testing.T) {
	const prefillOnly = "examples/prefill-only-zone-required.yaml"
	const healthy = "examples/healthy-three-zone-required.yaml"
	tests := []struct {
		name  string
		args  []string
		code  int
		check func(t *testing.T, x *explain.Explanation)
	}{
		{"cached prefix steers prefill into the zone without decode", []string{"--from-file", prefillOnly, "--token-file", prompt}, 2, func(t *testing.T, x *explain.Explanation) {
			if x.Verdict.Routable || x.Verdict.Stage != "decode" || x.Verdict.Error != "NoEndpoints" {
				t.Errorf("verdict %+v", x.Verdict)
			}
			if got := x.Prefill.Selected; !slices.Equal(got, []string{"qwen3-32b-0-prefill-us-east-1c-0"}) {
				t.Errorf("prefill pick %v", got)
			}
			if !strings.Contains(x.Verdict.Cause, "us-east-1c has 2 prefill and 0 decode workers") || !strings.Contains(x.Verdict.Fix, "preferred") {
				t.Errorf("cause/fix %q / %q", x.Verdict.Cause, x.Verdict.Fix)
			}
			if x.Transfer == nil || !slices.Equal(x.Transfer.RequiredTaints, []string{"dynamo.topology/zone=us-east-1c"}) {
				t.Errorf("transfer %+v", x.Transfer)
			}
			if x.Prefill.Candidates[0].OverlapBlocks != 10 && x.Prefill.Candidates[2].OverlapBlocks != 10 {
				overlaps := map[string]float64{}
				for _, c := range x.Prefill.Candidates {
					overlaps[c.Worker] = c.OverlapBlocks
				}
				if overlaps["qwen3-32b-0-prefill-us-east-1c-0"] != 10 || overlaps["qwen3-32b-0-prefill-us-east-1a-0"] != 3 {
					t.Errorf("overlaps %v", overlaps)
				}
			}
		}},
		{"cold cache: a third of the picks fail", []string{"--from-file", prefillOnly, "--token-file", prompt, "--cold", "--assume-idle"}, 2, func(t *testing.T, x *explain.Explanation) {
			if !x.Verdict.DependsOnDraw || len(x.Alternatives) != 4 {
				t.Fatalf("verdict %+v alternatives %d", x.Verdict, len(x.Alternatives))
			}
			if x.Verdict.FailureProbability != 0.5 {
				t.Errorf("failure probability %v, want 0.5 (2 of 4 idle prefill workers are in us-east-1c)", x.Verdict.FailureProbability)
			}
			if !slices.Equal(x.Verdict.FailingPrefill, []string{"qwen3-32b-0-prefill-us-east-1c-0", "qwen3-32b-0-prefill-us-east-1c-1"}) {
				t.Errorf("failing %v", x.Verdict.FailingPrefill)
			}
		}},
		{"preferred enforcement makes it routable", []string{"--from-file", prefillOnly, "--token-file", prompt, "--enforcement", "preferred", "--preferred-weight", "0.5", "--all-prefill"}, 0, func(t *testing.T, x *explain.Explanation) {
			if !x.Verdict.Routable || len(x.Verdict.FailingPrefill) != 0 {
				t.Errorf("verdict %+v", x.Verdict)
			}
			if x.Transfer.Enforcement != "preferred" || x.Transfer.PreferredTaints["dynamo.topology/zone=us-east-1c"] != 0.5 {
				t.Errorf("transfer %+v", x.Transfer)
			}
			if len(x.Matrix) != 4 {
				t.Errorf("matrix %d rows", len(x.Matrix))
			}
		}},
		{"forcing prefill into a healthy zone", []string{"--from-file", prefillOnly, "--token-file", prompt, "--prefill", "qwen3-32b-0-prefill-us-east-1b-0"}, 0, func(t *testing.T, x *explain.Explanation) {
			if !x.Verdict.Routable || x.Prefill.Rule != "pinned" || x.Transfer.Value != "us-east-1b" {
				t.Errorf("verdict %+v rule %s transfer %+v", x.Verdict, x.Prefill.Rule, x.Transfer)
			}
		}},
		{"excluding the warm worker moves prefill", []string{"--from-file", healthy, "--token-file", prompt, "--exclude-worker", "llama3-70b-0-prefill-us-east-1b-0"}, 0, func(t *testing.T, x *explain.Explanation) {
			for _, c := range x.Prefill.Candidates {
				if c.Worker == "llama3-70b-0-prefill-us-east-1b-0" {
					t.Errorf("excluded worker is a candidate")
				}
			}
			if len(x.Excluded) != 1 || !strings.Contains(x.Excluded[0].Reason, "--exclude-worker") {
				t.Errorf("excluded %+v", x.Excluded)
			}
		}},
		{"a zone down removes its workers", []string{"--from-file", healthy, "--token-file", prompt, "--domain-down", "zone=us-east-1b", "--all-prefill"}, 0, func(t *testing.T, x *explain.Explanation) {
			for _, r := range x.Matrix {
				if r.Domain == "us-east-1b" {
					t.Errorf("matrix row in the downed zone: %+v", r)
				}
			}
			if len(x.Matrix) != 4 || len(x.Excluded) != 4 {
				t.Errorf("matrix %d excluded %d", len(x.Matrix), len(x.Excluded))
			}
		}},
		{"overloaded decode zone fails with the overload named", []string{"--from-file", healthy, "--token-file", prompt,
			"--load", "llama3-70b-0-decode-us-east-1b-0=decodeBlocks:60000", "--load", "llama3-70b-0-decode-us-east-1b-1=decodeBlocks:60000"}, 2, func(t *testing.T, x *explain.Explanation) {
			if x.Verdict.Routable || !strings.Contains(x.Verdict.Cause, "overloaded") {
				t.Errorf("verdict %+v", x.Verdict)
			}
		}},
		{"temperature samples with every probability", []string{"--from-file", healthy, "--token-file", prompt, "--temperature", "1", "--seed", "7"}, 0, func(t *testing.T, x *explain.Explanation) {
			sum := 0.0
			for _, c := range x.Prefill.Candidates {
				sum += c.Probability
				if c.Probability <= 0 {
					t.Errorf("%s has probability %v", c.Worker, c.Probability)
				}
			}
			if sum < 0.999999 || sum > 1.000001 || x.Prefill.Rule != "softmax-sample" || !x.Router.SeedGiven || x.Router.Seed != 7 {
				t.Errorf("sum %v rule %s seed %d/%v", sum, x.Prefill.Rule, x.Router.Seed, x.Router.SeedGiven)
			}
		}},
		{"legacy profile", []string{"--from-file", healthy, "--token-file", prompt, "--dynamo-version", "1.1.0"}, 0, func(t *testing.T, x *explain.Explanation) {
			if x.Router.Profile != "legacy-v1.1" {
				t.Errorf("profile %s", x.Router.Profile)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x, r := explainJSON(t, tt.args...)
			if r.ExitCode != tt.code {
				t.Errorf("exit %d, want %d; stderr %s", r.ExitCode, tt.code, r.Stderr)
			}
			if x.APIVersion != "kubectl-dynamo.io/v1alpha1" || x.Kind != "RouteExplanation" {
				t.Errorf("apiVersion/kind %s/%s", x.APIVersion, x.Kind)
			}
			tt.check(t, x)
		})
	}
}

// TestExplainRouteBadInput: clear errors, the right exit code, never a panic.
func TestExplainRouteBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	bad := write("bad.tokens", "1 2 x3")
	empty := write("empty.txt", "  \n")
	msgs := write("msgs.json", `[{"role":"user","content":"hi"}]`)
	const ex = "examples/prefill-only-zone-required.yaml"
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no request", []string{"--from-file", ex}, 1, "give the request"},
		{"two requests", []string{"--from-file", ex, "--tokens", "1", "--prompt", "x"}, 1, "cannot be combined"},
		{"empty prompt", []string{"--from-file", ex, "--prompt", ""}, 1, "--prompt is empty"},
		{"empty prompt file", []string{"--from-file", ex, "--prompt-file", empty}, 1, "is empty"},
		{"malformed token file", []string{"--from-file", ex, "--token-file", bad}, 1, ", token 3: token id \"x3\""},
		{"token positions count from 1", []string{"--from-file", ex, "--tokens", "1,2,abc"}, 1, "--tokens, token 3: token id \"abc\""},
		{"stdin twice", []string{"-f", "-", "--token-file", "-"}, 1, "--from-file - and --token-file - both read standard input, which can be read only once"},
		{"stdin three times", []string{"-f", "-", "--prompt-file", "-", "--routing-constraints", "@-"}, 1, "--from-file -, --prompt-file -, --routing-constraints @- all read standard input"},
		{"context offline", []string{"--from-file", ex, "--tokens", "1,2", "--context", "prod"}, 1, "--context reads a live deployment and cannot be used with --from-file"},
		{"unknown exclude", []string{"--from-file", ex, "--tokens", "1,2", "--exclude-worker", "nope"}, 1, "--exclude-worker nope: no worker pod"},
		{"unknown prefill pin", []string{"--from-file", ex, "--tokens", "1,2", "--prefill", "nope"}, 1, "--prefill nope"},
		{"pin a decode worker", []string{"--from-file", ex, "--tokens", "1,2", "--prefill", "qwen3-32b-0-decode-us-east-1a-0"}, 1, "not a routable prefill worker"},
		{"unknown domain", []string{"--from-file", ex, "--tokens", "1,2", "--domain-down", "zone=mars"}, 1, "known values: zone=us-east-1a"},
		{"bad domain syntax", []string{"--from-file", ex, "--tokens", "1,2", "--domain-down", "zone"}, 1, "KEY=VALUE"},
		{"domain key typo", []string{"--from-file", ex, "--tokens", "1,2", "--domain-down", "zon=us-east-1a"}, 1,
			"has no topology domain \"zon\"; did you mean zone=us-east-1a? (its domains: zone; a node or pod label key also works)\nTry: kubectl dynamo topology --from-file " + ex + " -n serving qwen3-32b --tree"},
		{"unknown domain key", []string{"--from-file", ex, "--tokens", "1,2", "--domain-down", "region=x"}, 1, "has no topology domain \"region\" (its domains: zone;"},
		{"bad load", []string{"--from-file", ex, "--tokens", "1,2", "--load", "x=decodeBlocks:-1"}, 1, "non-negative integer"},
		{"bad enforcement", []string{"--from-file", ex, "--tokens", "1,2", "--enforcement", "fallback"}, 1, "required, preferred or off"},
		{"bad version", []string{"--from-file", ex, "--tokens", "1,2", "--dynamo-version", "banana"}, 1, "neither a Dynamo version"},
		{"invalid knob", []string{"--from-file", ex, "--tokens", "1,2", "--temperature", "-1"}, 1, "invalid"},
		{"messages offline", []string{"--from-file", ex, "--messages", msgs}, 1, "chat template"},
		{"block size contradicts cards", []string{"--from-file", ex, "--tokens", "1,2", "--block-size", "32"}, 1, "contradicts"},
		{"unknown deployment", []string{"nope", "--from-file", ex, "--tokens", "1,2"}, 1, "no DynamoGraphDeployment named nope"},
		{"bad constraints", []string{"--from-file", ex, "--tokens", "1,2", "--routing-constraints", "{"}, 1, "--routing-constraints"},
		{"tokenizer with tokens", []string{"--from-file", ex, "--tokens", "1,2", "--tokenizer", "x.json"}, 1, "already gives token ids"},
		{"no tokenizer for the model", []string{"--from-file", ex, "--prompt", "hi"}, 1, "Hugging Face cache"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// An empty Hugging Face cache: the model's tokenizer is not found.
			for _, k := range []string{"HF_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME", "HOME"} {
				t.Setenv(k, dir)
			}
			r := runIn(t, append([]string{"explain-route"}, tt.args...)...)
			if r.ExitCode != tt.code || !strings.Contains(r.Stderr, tt.want) {
				t.Errorf("exit %d stderr %q, want %d and %q", r.ExitCode, r.Stderr, tt.code, tt.want)
			}
			if strings.Contains(r.Stderr, "panic") || strings.Contains(r.Stderr, "goroutine ") {
				t.Errorf("panic: %s", r.Stderr)
			}
		})
	}
}

// TestExplainRouteModelNameIsNeverAPath: the model name comes from the
// workers' cards (cluster data). Named "/dev/zero", it was opened as a
// tokenizer file and read without end; now only a Hugging Face cache id
// resolves.
func TestExplainRouteModelNameIsNeverAPath(t *testing.T) {
	data, err := os.ReadFile("../../../examples/prefill-only-zone-required.yaml")
	if err != nil {
		t.Fatal(err)
	}
	capture := filepath.Join(t.TempDir(), "capture.yaml")
	if err := os.WriteFile(capture, []byte(strings.ReplaceAll(string(data), "Qwen/Qwen3-32B", "/dev/zero")), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HF_HUB_CACHE", t.TempDir())
	r := cmdtest.Run(t, "explain-route", "--from-file", capture, "--prompt", "hello")
	if r.ExitCode != 1 || !strings.Contains(r.Stderr, `model name "/dev/zero" is not a Hugging Face model id`) ||
		!strings.Contains(r.Stderr, "never read as a file path") {
		t.Errorf("exit %d\nstderr: %s", r.ExitCode, r.Stderr)
	}
}

// TestExplainRouteSelectionGolden: the rule every data command follows
// (docs/exit-codes.md) — a namespace or name that matches nothing, or an input
// without Dynamo deployments, exits 1 listing what exists, with a next step
// that keeps the user's own source flags.
func TestExplainRouteSelectionGolden(t *testing.T) {
	const ex = "examples/prefill-only-zone-required.yaml"
	two, err := os.ReadFile("../../../examples/healthy-three-zone-required.yaml")
	if err != nil {
		t.Fatal(err)
	}
	one, err := os.ReadFile("../../../" + ex)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		args  []string
		stdin string
	}{
		{"wrong_namespace", []string{"explain-route", "--from-file", ex, "-n", "wrongns", "--tokens", "1,2"}, ""},
		{"unknown_name", []string{"explain-route", "nope", "--from-file", ex, "--tokens", "1,2"}, ""},
		{"name_in_other_namespace", []string{"explain-route", "qwen3-32b", "--from-file", ex, "-n", "default", "--tokens", "1,2"}, ""},
		{"pod_manifest", []string{"explain-route", "--from-file", "-", "--tokens", "1,2"}, "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  namespace: default\n"},
		{"two_deployments", []string{"explain-route", "--from-file", "-", "--tokens", "1,2"}, string(one) + "\n---\n" + string(two)},
		{"no_kubeconfig", []string{"explain-route", "--tokens", "1,2"}, ""},
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
				stdin = "(two example captures, " + strconv.Itoa(len(stdin)) + " bytes)\n"
			}
			golden.Assert(t, cmdtest.Transcript(tc.args, stdin, r))
			if r.ExitCode != 1 || r.Stdout != "" || !strings.HasPrefix(r.Stderr, "error: ") {
				t.Errorf("want exit 1, one error and no report, got %d: %q %q", r.ExitCode, r.Stdout, r.Stderr)
			}
		})
	}
}

// TestExplainRouteHeadlineIndependentOfSeed: with a random prefill pick (a
// 4-way tie, 2 of the 4 in the zone without decode) the verdict states the risk
// of the decision — the same headline, cause, fix, JSON outcome and exit code
// for every seed — and only the Draw line shows what this run's seed drew.
func TestExplainRouteHeadlineIndependentOfSeed(t *testing.T) {
	base := []string{"explain-route", "--from-file", "examples/prefill-only-zone-required.yaml", "--token-file", prompt, "--cold", "--assume-idle"}
	var first string
	draws := map[bool]bool{}
	for seed := range 8 {
		args := append(slices.Clone(base), "--seed", strconv.Itoa(seed))
		r := runIn(t, args...)
		if r.ExitCode != 2 {
			t.Fatalf("seed %d: exit %d, want 2 (the request can fail)", seed, r.ExitCode)
		}
		var verdict []string
		for _, line := range strings.Split(r.Stdout, "\n") {
			switch {
			case strings.HasPrefix(line, "  Draw:"):
				draws[strings.Contains(line, "✓ routes")] = true
				if !strings.Contains(line, "(seed "+strconv.Itoa(seed)+")") {
					t.Errorf("seed %d: the draw line does not name the seed: %q", seed, line)
				}
			case strings.HasPrefix(line, "Verdict:"), strings.HasPrefix(line, "  Cause:"), strings.HasPrefix(line, "  Fix:"):
				verdict = append(verdict, line)
			}
		}
		got := strings.Join(verdict, "\n")
		if !strings.HasPrefix(got, "Verdict: ! CAN FAIL — 50% of prefill picks fail (NoEndpoints)") {
			t.Errorf("seed %d: headline %q", seed, got)
		}
		if seed == 0 {
			first = got
		} else if got != first {
			t.Errorf("seed %d: the verdict depends on the draw:\n%s\nseed 0:\n%s", seed, got, first)
		}
		x, _ := explainJSON(t, append(base[1:], "--seed", strconv.Itoa(seed))...)
		if x.Verdict.Outcome != explain.OutcomeCanFail || x.Verdict.FailureProbability != 0.5 {
			t.Errorf("seed %d: outcome %q, failure probability %v", seed, x.Verdict.Outcome, x.Verdict.FailureProbability)
		}
	}
	if !draws[true] || !draws[false] {
		t.Errorf("8 seeds drew only one outcome (%v): the test does not exercise both draws", draws)
	}
}

// TestExplainRouteOutcome: the JSON outcome for a certain failure, a certain
// success and a fixed pick whose other landings fail.
func TestExplainRouteOutcome(t *testing.T) {
	const ex = "examples/prefill-only-zone-required.yaml"
	tests := []struct {
		args []string
		want explain.Outcome
	}{
		{[]string{"--from-file", ex, "--token-file", prompt}, explain.OutcomeFails},
		{[]string{"--from-file", ex, "--token-file", prompt, "--prefill", "qwen3-32b-0-prefill-us-east-1b-0"}, explain.OutcomeRoutable},
		{[]string{"--from-file", ex, "--token-file", prompt, "--enforcement", "preferred", "--preferred-weight", "0.5"}, explain.OutcomeRoutable},
	}
	for _, tt := range tests {
		x, r := explainJSON(t, tt.args...)
		if x.Verdict.Outcome != tt.want {
			t.Errorf("%v: outcome %q, want %q", tt.args, x.Verdict.Outcome, tt.want)
		}
		want := 2
		if tt.want == explain.OutcomeRoutable {
			want = 0
		}
		if r.ExitCode != want {
			t.Errorf("%v: exit %d, want %d", tt.args, r.ExitCode, want)
		}
	}
}

// TestExplainRouteNoHeaders: --no-headers prints the candidate rows only,
// each led by its stage, so `awk '{print $1, $2}'` reads stage and worker.
func TestExplainRouteNoHeaders(t *testing.T) {
	for _, format := range []string{"table", "wide"} {
		t.Run(format, func(t *testing.T) {
			args := []string{"explain-route", "--from-file", "examples/prefill-only-zone-required.yaml", "--token-file", prompt, "--no-headers", "-o", format}
			r := runIn(t, args...)
			golden.Assert(t, cmdtest.Transcript(args, "", r))
			if r.ExitCode != 2 {
				t.Errorf("exit %d, want 2: --no-headers changes the output, not the verdict", r.ExitCode)
			}
			lines := strings.Split(strings.TrimSuffix(r.Stdout, "\n"), "\n")
			if len(lines) != 10 {
				t.Errorf("%d lines, want the 4 prefill and 6 decode candidates", len(lines))
			}
			for _, line := range lines {
				f := strings.Fields(line)
				if len(f) < 2 || (f[0] != "prefill" && f[0] != "decode") || !strings.HasPrefix(f[1], "qwen3-32b-0-") {
					t.Errorf("not a candidate row: %q", line)
				}
			}
		})
	}
}

// TestExplainRouteDynamoVersionSaysWhy: a version given to --dynamo-version
// names the profile it selects and why, as an assumption; the rule stated
// agrees with behavior.Release.Profile on both sides of its boundary.
func TestExplainRouteDynamoVersionSaysWhy(t *testing.T) {
	tests := []struct{ version, profile, why string }{
		{"9.9", "latest", "--dynamo-version 9.9 selects profile latest: Dynamo 1.3 and later route with the latest selector and hash multimodal placeholders as pad values (#10328), and a release newer than this build knows is assumed to keep it (or name a profile: latest, legacy-v1.2, legacy-v1.1, legacy-tree-size)"},
		{"1.3.0", "latest", "--dynamo-version 1.3.0 selects profile latest: Dynamo 1.3 and later"},
		{"v1.2.0", "legacy-v1.2", "--dynamo-version v1.2.0 selects profile legacy-v1.2: Dynamo 1.2 routes with the latest selector but hashes a multimodal block with its mm_hashes appended"},
		{"1.1.9", "legacy-v1.1", "--dynamo-version 1.1.9 selects profile legacy-v1.1: releases before Dynamo 1.2 route with the pre-clamp selector"},
		{"0.4.0", "legacy-v1.1", "--dynamo-version 0.4.0 selects profile legacy-v1.1: releases before Dynamo 1.2"},
		{"legacy-tree-size", "legacy-tree-size", ""},
	}
	for _, tt := range tests {
		t.Run(tt.version, func(t *testing.T) {
			r := runIn(t, "explain-route", "--from-file", "examples/prefill-only-zone-required.yaml", "--tokens", "1,2,3",
				"--dynamo-version", tt.version, "-o", "json", "--exit-zero")
			var x struct {
				Router      struct{ Profile string }
				Assumptions []string
			}
			if err := json.Unmarshal([]byte(r.Stdout), &x); err != nil {
				t.Fatalf("exit %d: %v: %s", r.ExitCode, err, r.Stderr)
			}
			if x.Router.Profile != tt.profile {
				t.Errorf("profile %q, want %q", x.Router.Profile, tt.profile)
			}
			found := ""
			for _, a := range x.Assumptions {
				if strings.HasPrefix(a, "--dynamo-version") {
					found = a
				}
			}
			if tt.why == "" && found != "" || !strings.HasPrefix(found, tt.why) {
				t.Errorf("assumption %q, want %q", found, tt.why)
			}
		})
	}
}
