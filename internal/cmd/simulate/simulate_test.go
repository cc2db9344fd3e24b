package simulate_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/cmdtest"
	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/golden"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/simulate"
)

const (
	prefillOnly = "examples/prefill-only-zone-required.yaml"
	healthy     = "examples/healthy-three-zone-required.yaml"
	vllm        = "examples/vllm-disagg-default-router.yaml"
	drift       = "examples/preferred-rollout-drift.yaml"
	etcdEx      = "examples/etcd-discovery-v1alpha1.yaml"
	mooncake    = "examples/traces/mooncake-conversation-200.jsonl"
)

// runIn runs the command from the repository root so example paths read as
// users type them (and goldens show them so).
func runIn(t *testing.T, args ...string) cmdtest.Result {
	t.Helper()
	return runInWith(t, cmdtest.Options{}, args...)
}

func runInWith(t *testing.T, o cmdtest.Options, args ...string) cmdtest.Result {
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

// decodeReport decodes -o json strictly: every field of the document is a
// field of simulate.Report.
func decodeReport(t *testing.T, out string) *simulate.Report {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	var r simulate.Report
	if err := dec.Decode(&r); err != nil {
		t.Fatalf("-o json does not decode into simulate.Report: %v\n%.2000s", err, out)
	}
	if dec.More() {
		t.Fatalf("-o json holds more than one document")
	}
	if r.APIVersion != "kubectl-dynamo.io/v1alpha1" || r.Kind != "SimulationReport" {
		t.Fatalf("apiVersion/kind %q/%q", r.APIVersion, r.Kind)
	}
	return &r
}

// simJSON runs `simulate ARGS -o json` and decodes the report; exit codes 0
// and 2 are results.
func simJSON(t *testing.T, args ...string) (*simulate.Report, cmdtest.Result) {
	t.Helper()
	r := runIn(t, append(append([]string{"simulate"}, args...), "-o", "json")...)
	if r.ExitCode != 0 && r.ExitCode != 2 {
		t.Fatalf("simulate %s: exit %d: %s", strings.Join(args, " "), r.ExitCode, r.Stderr)
	}
	return decodeReport(t, r.Stdout), r
}

// TestSimulateGolden pins what users see, in every output format.
func TestSimulateGolden(t *testing.T) {
	trace := []string{"--from-file", prefillOnly, "--trace", mooncake, "--max-requests", "60", "--assume-idle", "--seed", "1",
		"--variant", "enforcement=preferred,weight=0.3", "--variant", "decode+1@us-east-1c"}
	// Structured output carries the time series: fewer requests, one variant.
	traceSmall := []string{"--from-file", prefillOnly, "--trace", mooncake, "--max-requests", "20", "--assume-idle", "--seed", "1"}
	synthetic := []string{"--from-file", healthy, "--synthetic", "rate=10,isl=256-1024,osl=16-64,prefix-share=0.5,prefixes=3,requests=40",
		"--seed", "7", "--variant", "down=us-east-1a"}
	syntheticSmall := []string{"--from-file", healthy, "--synthetic", "rate=20,isl=256-1024,osl=16-64,prefix-share=0.5,prefixes=3,requests=20",
		"--seed", "7", "--cold"}
	cases := []struct {
		name string
		args []string
		code int
	}{
		{"prefill-only-trace/table", trace, 2},
		{"prefill-only-trace/wide", append(slices.Clone(trace), "-o", "wide"), 2},
		{"prefill-only-trace/no-headers", append(slices.Clone(trace), "--no-headers"), 2},
		{"prefill-only-trace/no-headers-wide", append(slices.Clone(trace), "--no-headers", "-o", "wide"), 2},
		{"prefill-only-slo/table", append(slices.Clone(trace), "--slo", "ttft=2s,e2e=10s,ttft-p90=1s", "--seeds", "3"), 2},
		{"prefill-only-trace/json", append(slices.Clone(traceSmall), "-o", "json"), 2},
		{"prefill-only-slo/json", append(slices.Clone(traceSmall), "--slo", "ttft=2s,e2e-p50=6s", "--seeds", "2", "-o", "json"), 2},
		{"prefill-only-trace/yaml", append(slices.Clone(traceSmall), "-o", "yaml"), 2},
		{"healthy-synthetic/table", synthetic, 0},
		{"healthy-synthetic/wide", append(slices.Clone(synthetic), "-o", "wide"), 0},
		{"healthy-synthetic/no-headers", append(slices.Clone(synthetic), "--no-headers"), 0},
		{"healthy-synthetic/json", append(slices.Clone(syntheticSmall), "-o", "json"), 0},
		{"healthy-synthetic/yaml", append(slices.Clone(syntheticSmall), "-o", "yaml"), 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"simulate"}, tc.args...)
			r := runIn(t, args...)
			golden.Assert(t, cmdtest.Transcript(args, "", r))
			if r.ExitCode != tc.code {
				t.Fatalf("exit %d, want %d: %s", r.ExitCode, tc.code, r.Stderr)
			}
			switch {
			case strings.HasSuffix(tc.name, "/json"):
				rep := decodeReport(t, r.Stdout)
				checkGoldenReport(t, rep)
				if r.Stderr != "" {
					t.Errorf("-o json wrote to stderr: %q", r.Stderr)
				}
			case strings.HasSuffix(tc.name, "/yaml"):
				j, err := yaml.YAMLToJSON([]byte(r.Stdout))
				if err != nil {
					t.Fatalf("-o yaml does not parse: %v", err)
				}
				rep := decodeReport(t, string(j))
				checkGoldenReport(t, rep)
				// The YAML is the JSON document: the same report either way.
				jr := runIn(t, append(args[:len(args)-2:len(args)-2], "-o", "json")...)
				if want := decodeReport(t, jr.Stdout); !reflect.DeepEqual(rep, want) {
					t.Errorf("-o yaml and -o json differ")
				}
			case strings.Contains(tc.name, "no-headers"):
				lines := strings.Split(strings.TrimSuffix(r.Stdout, "\n"), "\n")
				wantRows := 1 + strings.Count(strings.Join(tc.args, " "), "--variant")
				if len(lines) != wantRows || !strings.HasPrefix(lines[0], "as deployed ") {
					t.Errorf("--no-headers: want %d comparison rows, the deployment as it is first, got:\n%s", wantRows, r.Stdout)
				}
				if strings.Contains(r.Stdout, "VARIANT") || strings.Contains(r.Stdout, "Deployment:") {
					t.Errorf("--no-headers printed headers:\n%s", r.Stdout)
				}
			default:
				for _, want := range []string{"Deployment: ", "VARIANT ", "as deployed: ", "Over time"} {
					if !strings.Contains(r.Stdout, want) {
						t.Errorf("the report lacks %q", want)
					}
				}
			}
		})
	}
}

// checkGoldenReport: what a structured report of the golden runs must say,
// independently of the golden file.
func checkGoldenReport(t *testing.T, r *simulate.Report) {
	t.Helper()
	if len(r.Variants) == 0 || r.Variants[0].Name != "as deployed" {
		t.Fatalf("variants %d, first %q", len(r.Variants), r.Variants[0].Name)
	}
	switch r.Deployment {
	case "qwen3-32b":
		if r.Namespace != "serving" || r.DomainKey != "zone" || r.Trace.Format != "mooncake" || r.Trace.Requests != 20 ||
			r.Trace.TraceBlockSize != 512 || r.Trace.RouterBlockSize != 16 || r.Seed != 1 || r.Model != "Qwen/Qwen3-32B" {
			t.Errorf("header %+v", r)
		}
	case "llama3-70b":
		if r.Namespace != "inference" || r.Trace.Format != "synthetic" || r.Trace.Requests != 20 || r.Seed != 7 {
			t.Errorf("header %+v", r)
		}
	default:
		t.Errorf("deployment %s/%s", r.Namespace, r.Deployment)
	}
	checkInvariants(t, r, r.Trace.Requests)
}

// TestSimulateDeterministic: one seed, one report, byte for byte; another
// seed draws other ties on a cold, idle deployment where every prefill
// worker ties.
func TestSimulateDeterministic(t *testing.T) {
	cases := [][]string{
		{"--from-file", prefillOnly, "--trace", mooncake, "--max-requests", "60", "--cold", "--assume-idle", "--variant", "router-mode=random", "--variant", "enforcement=preferred,weight=0.5"},
		{"--from-file", healthy, "--synthetic", "rate=30,isl=64-2048,osl=8-128,prefix-share=0.3,prefixes=5,requests=80", "--variant", "router-mode=power-of-two", "--variant", "decode+2@us-east-1c"},
	}
	for _, base := range cases {
		run := func(seed string) string {
			args := append(append([]string{"simulate"}, base...), "--seed", seed, "-o", "json")
			r := runIn(t, args...)
			if r.ExitCode != 0 && r.ExitCode != 2 {
				t.Fatalf("exit %d: %s", r.ExitCode, r.Stderr)
			}
			return r.Stdout
		}
		a, b := run("1"), run("1")
		if a != b {
			t.Errorf("%v: the same seed gave two reports", base)
		}
		c := run("2")
		ra, rc := decodeReport(t, a), decodeReport(t, c)
		if rc.Seed != 2 || ra.Seed != 1 {
			t.Errorf("seeds %d/%d", ra.Seed, rc.Seed)
		}
		// Another seed: other picks (the worker tables differ), the same traffic
		// when it comes from a trace.
		if reflect.DeepEqual(ra.Variants[0].Workers, rc.Variants[0].Workers) {
			t.Errorf("%v: seeds 1 and 2 picked the same workers for every request: the seed is not used", base)
		}
		if base[2] == "--trace" && (ra.Trace.InputTokens != rc.Trace.InputTokens || ra.Trace.Requests != rc.Trace.Requests) {
			t.Errorf("the seed changed the trace: %+v vs %+v", ra.Trace, rc.Trace)
		}
	}
}

// TestSimulateFailOn: exit 2 when the deployment as it is fails more than
// --fail-on allows; the one-line reason on stderr in table output only.
func TestSimulateFailOn(t *testing.T) {
	// As deployed, 32 of these 60 requests fail (53%): see the golden.
	base := []string{"simulate", "--from-file", prefillOnly, "--trace", mooncake, "--max-requests", "60", "--assume-idle", "--seed", "1"}
	rep, _ := simJSON(t, base[1:]...)
	if v := rep.Variants[0]; v.Failed != 32 || v.Requests != 60 {
		t.Fatalf("as deployed fails %d of %d, the test expects 32 of 60", v.Failed, v.Requests)
	}
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string // exact
	}{
		{"default any", nil, 2, "the deployment as it is fails 32 of 60 requests (53%; --fail-on any, exit code 2)\n"},
		{"any", []string{"--fail-on", "any"}, 2, "the deployment as it is fails 32 of 60 requests (53%; --fail-on any, exit code 2)\n"},
		{"any json", []string{"--fail-on", "any", "-o", "json"}, 2, ""},
		{"any yaml", []string{"-o", "yaml"}, 2, ""},
		{"none", []string{"--fail-on", "none"}, 0, ""},
		{"above the share", []string{"--fail-on", "60%"}, 0, ""},
		{"saturated only, failures do not count", []string{"--fail-on", "saturated"}, 0, ""},
		{"above the share or saturated", []string{"--fail-on", "60%,saturated"}, 0, ""},
		{"any or saturated", []string{"--fail-on", "any,saturated"}, 2, "the deployment as it is fails 32 of 60 requests (53%; --fail-on any,saturated, exit code 2)\n"},
		{"below the share", []string{"--fail-on", "40%"}, 2, "the deployment as it is fails 32 of 60 requests (53%; --fail-on 40%, exit code 2)\n"},
		{"below the share json", []string{"--fail-on", "40%", "-o", "json"}, 2, ""},
		{"0%", []string{"--fail-on", "0%"}, 2, "the deployment as it is fails 32 of 60 requests (53%; --fail-on 0%, exit code 2)\n"},
		{"100%", []string{"--fail-on", "100%"}, 0, ""},
		// Only the deployment as it is counts: a variant that fails everything does not.
		{"a failing variant", []string{"--fail-on", "60%", "--variant", "enforcement=preferred"}, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runIn(t, append(slices.Clone(base), tt.args...)...)
			if r.ExitCode != tt.code || r.Stderr != tt.stderr {
				t.Errorf("exit %d stderr %q, want %d and %q", r.ExitCode, r.Stderr, tt.code, tt.stderr)
			}
			if r.Stdout == "" {
				t.Errorf("no report")
			}
		})
	}
	// A deployment that routes everything exits 0 under --fail-on any.
	if r := runIn(t, "simulate", "--from-file", healthy, "--synthetic", "rate=5,isl=100-500,osl=10,requests=20", "--fail-on", "any"); r.ExitCode != 0 || r.Stderr != "" {
		t.Errorf("healthy deployment: exit %d stderr %q", r.ExitCode, r.Stderr)
	}
	// A variant failing requests (preferred without a weight) is reported, not an exit code.
	rep, _ = simJSON(t, append(base[1:], "--fail-on", "none", "--variant", "enforcement=preferred")...)
	if v := rep.Variants[1]; v.Failed != 60 || len(v.Failures) != 1 || v.Failures[0].Kind != "preferred-weight-missing" {
		t.Errorf("enforcement=preferred without a weight: %d failed, %+v", v.Failed, v.Failures)
	}
}

// TestSimulateBadInput: exit 1, no report, one error naming what to do.
func TestSimulateBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	malformed := write("malformed.jsonl", `{"timestamp": 0, "input_length": 600, "output_length": 5, "hash_ids": [1, 2]}`+"\n"+
		`{"timestamp": 10, "input_length": 600, "output_length": 5, "hash_ids": [1, 3]}`+"\n"+`{"timestamp": 20, "input_length": oops}`+"\n")
	empty := write("empty.jsonl", "")
	blank := write("blank.jsonl", "\n\n")
	tokens := write("tokens.jsonl", `{"timestamp": 0, "tokens": [1, 2, 3], "output_length": 4}`+"\n")
	// The vLLM example without its kvTransferPolicy: no transfer domain.
	data, err := os.ReadFile("../../../" + vllm)
	if err != nil {
		t.Fatal(err)
	}
	const policy = "\n    experimental:\n      kvTransferPolicy:\n        domain: zone\n        enforcement: required\n        labelKey: topology.kubernetes.io/zone"
	if !strings.Contains(string(data), policy) {
		t.Fatalf("%s no longer holds the policy this test removes", vllm)
	}
	noPolicy := write("no-policy.yaml", strings.Replace(string(data), policy, "", 1))
	// Numbers that made the engine model's times infinite (issue 29: each
	// panicked, with Go's exit status 2).
	tinyThpt := write("planner-cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: profile}\ndata:\n  prefill_raw_data.json: '{\"prefill_isl\": [1000], \"prefill_thpt_per_gpu\": [1e-300]}'\n")
	hugeMs := write("dynosim.yaml", "engine:\n  mode: aggregated\n  model: m\n  hardware: h\n  workers:\n    aggregated:\n      parallelism: {replicas: 1, tensor: 1, pipeline: 1, attention_data: 1, moe_tensor: 1, moe_expert: 1}\n      timing: {type: fixed, prefill_ms: 1e300, decode_ms: 1}\n")
	profileBomb := write("bomb.yaml", "prefill_isl: [1000]\nprefill_thpt_per_gpu: [10000]\nnote: &big "+strings.Repeat("A", 100_000)+"\nrefs:\n"+strings.Repeat("  - *big\n", 10_000))
	syn := []string{"--from-file", prefillOnly, "--synthetic", "rate=5,isl=100,osl=5,requests=5"}

	const ex = prefillOnly
	tr := []string{"--from-file", ex, "--trace", mooncake, "--max-requests", "5"}
	tests := []struct {
		name  string
		args  []string
		stdin string
		want  []string
	}{
		{"no traffic", []string{"--from-file", ex}, "", []string{"give the traffic: --trace FILE", "--synthetic rate=R"}},
		{"trace and synthetic", []string{"--from-file", ex, "--trace", mooncake, "--synthetic", "rate=1,requests=5"}, "", []string{"--trace and --synthetic cannot be combined"}},
		{"missing trace", []string{"--from-file", ex, "--trace", filepath.Join(dir, "nope.jsonl")}, "", []string{"--trace: open ", "nope.jsonl: no such file", "Give the path of a trace file"}},
		{"missing trace, format given", []string{"--from-file", ex, "--trace", filepath.Join(dir, "nope.jsonl"), "--trace-format", "mooncake"}, "", []string{"nope.jsonl: no such file"}},
		{"malformed line", []string{"--from-file", ex, "--trace", malformed}, "", []string{"the trace: line 3:", "invalid JSON", "Check --trace-format and --trace-block-size"}},
		{"malformed line, format given", []string{"--from-file", ex, "--trace", malformed, "--trace-format", "mooncake"}, "", []string{"the trace: line 3:"}},
		{"empty trace", []string{"--from-file", ex, "--trace", empty}, "", []string{"the trace is empty", "--trace-format"}},
		{"empty trace, format given", []string{"--from-file", ex, "--trace", empty, "--trace-format", "mooncake"}, "", []string{"the trace holds no request", "at least one request"}},
		{"blank trace, format given", []string{"--from-file", ex, "--trace", blank, "--trace-format", "mooncake"}, "", []string{"the trace holds no request"}},
		{"empty stdin trace", []string{"--from-file", ex, "--trace", "-", "--trace-format", "mooncake"}, "", []string{"the trace holds no request"}},
		{"format mismatch", []string{"--from-file", ex, "--trace", tokens, "--trace-format", "mooncake"}, "", []string{"the trace: line 1"}},
		{"unknown trace format", append(slices.Clone(tr), "--trace-format", "csv"), "", []string{`--trace-format: unknown trace format "csv"`, "mooncake"}},
		{"unknown variant key", append(slices.Clone(tr), "--variant", "replicas=3"), "", []string{`--variant "replicas=3": "replicas=3" has an unknown key (accepted: enforcement=`}},
		{"empty variant", append(slices.Clone(tr), "--variant", " "), "", []string{"empty --variant"}},
		{"decode+0", append(slices.Clone(tr), "--variant", "decode+0@x"), "", []string{`"decode+0@x" is not ROLE+N@VALUE with 1 ≤ N ≤ 1000, e.g. decode+2@us-east-1c`}},
		{"decode+N without value", append(slices.Clone(tr), "--variant", "decode+2@"), "", []string{"is not ROLE+N@VALUE"}},
		{"bad weight", append(slices.Clone(tr), "--variant", "enforcement=preferred,weight=2"), "", []string{`"weight=2" needs a number between 0 and 1`}},
		{"bad enforcement", append(slices.Clone(tr), "--variant", "enforcement=fallback"), "", []string{"must be required, preferred or off"}},
		{"bad router mode variant", append(slices.Clone(tr), "--variant", "router-mode=nope"), "", []string{`"router-mode=nope"`}},
		{"down in an unknown domain", append(slices.Clone(tr), "--variant", "down=mars"), "", []string{`variant "down=mars"`, "zone=mars", "known values: zone=us-east-1a, zone=us-east-1b, zone=us-east-1c"}},
		{"exclude an unknown pod", append(slices.Clone(tr), "--variant", "exclude=nope"), "", []string{`variant "exclude=nope"`, "no worker pod of serving/qwen3-32b has that name"}},
		{"down=VALUE without a policy", []string{"--from-file", noPolicy, "--synthetic", "rate=5,isl=100,osl=10,requests=5", "--variant", "down=us-west-2a"}, "", []string{"has no kvTransferPolicy", "down=KEY=us-west-2a"}},
		{"speedup 0", append(slices.Clone(tr), "--speedup", "0"), "", []string{"--speedup must be a positive number from 1e-6 to 1e9, got 0"}},
		{"speedup negative", append(slices.Clone(tr), "--speedup", "-2"), "", []string{"--speedup must be a positive number from 1e-6 to 1e9, got -2"}},
		{"speedup NaN", append(slices.Clone(tr), "--speedup", "NaN"), "", []string{"--speedup must be a positive number"}},
		{"speedup 1e-300", append(slices.Clone(tr), "--speedup", "1e-300"), "", []string{"--speedup must be a positive number from 1e-6 to 1e9, got 1e-300"}},
		{"planner ConfigMap of 1e-300 tokens/s", append(slices.Clone(syn), "--engine-profile", tinyThpt), "", []string{"--engine-profile " + tinyThpt + ": engine model: prefillTokensPerSecondPerGPU must be a number from 1 to 1e9, got 1e-300"}},
		{"DynoSim spec of a 1e300 ms prefill", append(slices.Clone(syn), "--engine-profile", hugeMs), "", []string{"--engine-profile " + hugeMs + ": engine model: prefillTokensPerSecondPerGPU must be a number from 1 to 1e9"}},
		{"an alias bomb as --engine-profile", append(slices.Clone(syn), "--engine-profile", profileBomb), "", []string{"--engine-profile: " + profileBomb + ": the YAML expands its anchors and aliases to more than"}},
		{"synthetic rate 1e-11", []string{"--from-file", ex, "--synthetic", "rate=1e-11,isl=100,duration=1h"}, "", []string{`synthetic: rate="1e-11": want requests per second, a number from 0.000001`}},
		{"added workers over 1000 in one variant", append(slices.Clone(tr), "--variant", strings.TrimSuffix(strings.Repeat("decode+1000@us-east-1c,", 100), ",")), "", []string{"adds 2000 workers in all: a variant adds at most 1000"}},
		{"stdin twice, with the profile", []string{"--from-file", "-", "--engine-profile", "-", "--synthetic", "rate=5,isl=100,requests=5"}, "", []string{"--from-file - and --engine-profile - both read standard input, which can be read only once"}},
		{"speedup not a number", append(slices.Clone(tr), "--speedup", "fast"), "", []string{`invalid argument "fast" for "--speedup"`}},
		{"negative max requests", append(slices.Clone(tr), "--max-requests", "-1"), "", []string{"--max-requests must not be negative"}},
		{"rate and speedup", append(slices.Clone(tr), "--rate", "2", "--speedup", "2"), "", []string{"--rate and --speedup cannot be combined"}},
		{"rate 0", append(slices.Clone(tr), "--rate", "0"), "", []string{"--rate must be a number of requests per second from 1e-6 to 1e6, got 0"}},
		{"rate of a burst", []string{"--from-file", ex, "--trace", tokens, "--rate", "2"}, "", []string{"--rate 2: the trace's 1 request(s) arrive at one instant", "--synthetic rate=2"}},
		{"negative duration", append(slices.Clone(tr), "--duration", "-1s"), "", []string{"--duration must not be negative, got -1s"}},
		{"bad trace block size", append(slices.Clone(tr), "--trace-block-size", "0"), "", []string{"--trace-block-size must be positive"}},
		{"bad fail-on", append(slices.Clone(tr), "--fail-on", "some"), "", []string{`--fail-on "some": "some" is not a condition; use any (one failed request), none, a share with its percent sign such as 1%, saturated`}},
		{"fail-on without its percent sign", append(slices.Clone(tr), "--fail-on", "30"), "", []string{`--fail-on "30": 30 is a number without its unit: write a share of failed requests as 30%`}},
		{"fail-on none and more", append(slices.Clone(tr), "--fail-on", "none,saturated"), "", []string{`none cannot be combined`}},
		{"fail-on above 100", append(slices.Clone(tr), "--fail-on", "150%"), "", []string{`--fail-on "150%"`}},
		{"fail-on negative", append(slices.Clone(tr), "--fail-on", "-1%"), "", []string{`--fail-on "-1%"`}},
		{"bad progress", append(slices.Clone(tr), "--progress", "sometimes"), "", []string{`--progress "sometimes": use auto, always or never`}},
		{"bad slo", append(slices.Clone(tr), "--slo", "ttft=2"), "", []string{`--slo "ttft=2": "ttft=2" needs a positive duration with its unit, such as 500ms or 2s`}},
		{"fail-on slo without slos", append(slices.Clone(tr), "--fail-on", "slo"), "", []string{"--fail-on slo needs objectives: give --slo"}},
		{"seeds 0", append(slices.Clone(tr), "--seeds", "0"), "", []string{"--seeds must be from 1 to 100, got 0"}},
		{"bad router mode", append(slices.Clone(tr), "--router-mode", "nope"), "", []string{"--router-mode"}},
		{"bad synthetic", []string{"--from-file", ex, "--synthetic", "rate=x"}, "", []string{"--synthetic: synthetic: rate=\"x\""}},
		{"stdin twice", []string{"--from-file", "-", "--trace", "-"}, "", []string{"--from-file - and --trace - both read standard input, which can be read only once: give one of them as a file"}},
		{"two args", []string{"a", "b", "--from-file", ex, "--trace", mooncake}, "", []string{"accepts at most 1 arg"}},
		{"unknown deployment", []string{"nope", "--from-file", ex, "--trace", mooncake}, "", []string{"no DynamoGraphDeployment named nope"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runInWith(t, cmdtest.Options{Stdin: tt.stdin}, append([]string{"simulate"}, tt.args...)...)
			if r.ExitCode != 1 || r.Stdout != "" || !strings.HasPrefix(r.Stderr, "error: ") {
				t.Errorf("want exit 1, no report and an error, got %d: stdout %q stderr %q", r.ExitCode, r.Stdout, r.Stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(r.Stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, r.Stderr)
				}
			}
			if strings.Contains(r.Stderr, "panic") || strings.Contains(r.Stderr, "goroutine ") {
				t.Errorf("panic: %s", r.Stderr)
			}
		})
	}
}

// TestSimulateTraceFromStdin: --trace - is read once and replayed for every
// variant: the same report as from the file.
func TestSimulateTraceFromStdin(t *testing.T) {
	data, err := os.ReadFile("../../../" + mooncake)
	if err != nil {
		t.Fatal(err)
	}
	variants := []string{"--max-requests", "40", "--assume-idle", "--seed", "3", "--fail-on", "none",
		"--variant", "enforcement=preferred,weight=0.3", "--variant", "decode+1@us-east-1c", "--variant", "router-mode=round-robin", "-o", "json"}
	fromStdin := runInWith(t, cmdtest.Options{Stdin: string(data)}, append([]string{"simulate", "--from-file", prefillOnly, "--trace", "-"}, variants...)...)
	fromFile := runIn(t, append([]string{"simulate", "--from-file", prefillOnly, "--trace", mooncake}, variants...)...)
	if fromStdin.ExitCode != 0 || fromFile.ExitCode != 0 {
		t.Fatalf("exit %d / %d: %s %s", fromStdin.ExitCode, fromFile.ExitCode, fromStdin.Stderr, fromFile.Stderr)
	}
	a, b := decodeReport(t, fromStdin.Stdout), decodeReport(t, fromFile.Stdout)
	if a.Trace.Source != "-" || a.Trace.Format != "mooncake" || b.Trace.Source != mooncake {
		t.Errorf("trace sources %q (%s) / %q", a.Trace.Source, a.Trace.Format, b.Trace.Source)
	}
	if len(a.Variants) != 4 {
		t.Fatalf("%d variants, want 4", len(a.Variants))
	}
	for i, v := range a.Variants {
		if v.Requests != 40 || v.Routed == 0 {
			t.Errorf("variant %s replayed %d requests, routed %d: the trace was not re-read", v.Name, v.Requests, v.Routed)
		}
		if !reflect.DeepEqual(v, b.Variants[i]) {
			t.Errorf("variant %s differs between stdin and the file", v.Name)
		}
	}
	a.Trace.Source = b.Trace.Source
	if !reflect.DeepEqual(a, b) {
		t.Errorf("the reports differ beyond the trace source")
	}
	// A gzipped trace on stdin.
	var gz bytes.Buffer
	gzipTo(t, &gz, data)
	zipped := runInWith(t, cmdtest.Options{Stdin: gz.String()}, append([]string{"simulate", "--from-file", prefillOnly, "--trace", "-"}, variants...)...)
	if zipped.ExitCode != 0 {
		t.Fatalf("gzipped stdin: exit %d: %s", zipped.ExitCode, zipped.Stderr)
	}
	if z := decodeReport(t, zipped.Stdout); !reflect.DeepEqual(z.Variants, b.Variants) {
		t.Errorf("a gzipped trace on stdin gives another report")
	}
}
