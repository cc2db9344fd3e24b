package preflight_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPreflightUpstreamExamples: preflight on the DGD alone of each of Dynamo's
// example deployments (test/fixtures/upstream/manifest-*, the DGDs of
// examples/backends/*/deploy as upstream writes them): the roles it decides
// without pods or cards, its findings and its exit code. The aggregated
// examples' only worker component is aggregated, whatever its name
// (VllmDecodeWorker, decode): never a decode component without prefill.
func TestPreflightUpstreamExamples(t *testing.T) {
	const dir = "test/fixtures/upstream/manifest-"
	const (
		agg     = "aggregated (only worker component, no role flag)"
		arg     = "(arg --disaggregation-mode)"
		sub     = "(label nvidia.com/dynamo-sub-component-type)"
		typ     = "(label nvidia.com/dynamo-component-type)"
		noFinds = ""
	)
	tests := []struct {
		file, roles, findings string
		exit                  int
	}{
		{"vllm-agg-v1alpha1.yaml", "VllmDecodeWorker " + agg, noFinds, 0},
		{"vllm-agg-v1beta1.yaml", "VllmDecodeWorker " + agg, noFinds, 0},
		{"vllm-agg-router-v1alpha1.yaml", "VllmDecodeWorker " + agg, noFinds, 0},
		{"vllm-agg-router-v1beta1.yaml", "VllmDecodeWorker " + agg, noFinds, 0},
		{"vllm-disagg-v1alpha1.yaml", "VllmDecodeWorker decode " + sub + ", VllmPrefillWorker prefill " + sub, noFinds, 0},
		{"vllm-disagg-v1beta1.yaml", "VllmDecodeWorker decode " + typ + ", VllmPrefillWorker prefill " + typ, noFinds, 0},
		{"vllm-disagg-router-v1alpha1.yaml", "VllmDecodeWorker decode " + arg + ", VllmPrefillWorker prefill " + arg, noFinds, 0},
		{"vllm-disagg-router-v1beta1.yaml", "VllmDecodeWorker decode " + arg + ", VllmPrefillWorker prefill " + arg, noFinds, 0},
		{"sglang-agg-v1alpha1.yaml", "decode " + agg, noFinds, 0},
		{"sglang-agg-v1beta1.yaml", "decode " + agg, noFinds, 0},
		{"sglang-agg-router-v1alpha1.yaml", "decode " + agg, noFinds, 0},
		{"sglang-agg-router-v1beta1.yaml", "decode " + agg, noFinds, 0},
		{"sglang-disagg-v1alpha1.yaml", "decode decode " + sub + ", prefill prefill " + sub, noFinds, 0},
		{"sglang-disagg-v1beta1.yaml", "decode decode " + typ + ", prefill prefill " + typ, noFinds, 0},
		{"trtllm-agg-v1alpha1.yaml", "TRTLLMWorker " + agg, noFinds, 0},
		{"trtllm-agg-v1beta1.yaml", "TRTLLMWorker " + agg, noFinds, 0},
		{"trtllm-agg-router-v1alpha1.yaml", "TRTLLMWorker " + agg, noFinds, 0},
		{"trtllm-agg-router-v1beta1.yaml", "TRTLLMWorker " + agg, noFinds, 0},
		{"trtllm-disagg-v1alpha1.yaml", "TRTLLMDecodeWorker decode " + sub + ", TRTLLMPrefillWorker prefill " + sub, noFinds, 0},
		{"trtllm-disagg-v1beta1.yaml", "decode decode " + typ + ", prefill prefill " + typ, noFinds, 0},
		{"trtllm-disagg-router-v1alpha1.yaml", "TRTLLMDecodeWorker decode " + arg + ", TRTLLMPrefillWorker prefill " + arg, noFinds, 0},
		{"trtllm-disagg-router-v1beta1.yaml", "decode decode " + arg + ", prefill prefill " + arg, noFinds, 0},
		// The multinode rebuilds: a KV router over prefill workers that publish no KV
		// events; under the zone policy, placement that may leave a zone without decode.
		{"trtllm-disagg-multinode-v1alpha1.yaml", "ctx prefill " + arg + ", gen decode " + arg, "KvEventsNotPublished warning certain", 0},
		{"trtllm-disagg-multinode-v1beta1-zone-required.yaml", "ctx prefill " + arg + ", gen decode " + arg,
			"KvEventsNotPublished warning certain, PrefillDomainWithoutDecode warning possible", 0},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			r := runIn(t, "", "preflight", "-f", dir+tt.file, "--no-cluster", "-o", "json")
			var out struct {
				Deployments []struct {
					Components []struct {
						Name, Role, RoleSignal string
					} `json:"components"`
				} `json:"deployments"`
				Findings []struct {
					ID, Severity, Certainty string
				} `json:"findings"`
			}
			if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil || len(out.Deployments) != 1 {
				t.Fatalf("%v (exit %d)\n%s%s", err, r.ExitCode, r.Stdout, r.Stderr)
			}
			var roles, finds []string
			for _, c := range out.Deployments[0].Components {
				if c.Role != "frontend" {
					roles = append(roles, fmt.Sprintf("%s %s (%s)", c.Name, c.Role, c.RoleSignal))
				}
			}
			for _, f := range out.Findings {
				finds = append(finds, f.ID+" "+f.Severity+" "+f.Certainty)
			}
			if got := strings.Join(roles, ", "); got != tt.roles {
				t.Errorf("roles %q\nwant  %q", got, tt.roles)
			}
			if got := strings.Join(finds, ", "); got != tt.findings {
				t.Errorf("findings %q, want %q", got, tt.findings)
			}
			if r.ExitCode != tt.exit {
				t.Errorf("exit %d, want %d", r.ExitCode, tt.exit)
			}
		})
	}
}

// TestUpstreamExamplesAccepted is the gate's first promise (issue 30): no
// finding that blocks the gate — a certain error, or any InvalidManifest or
// InvalidPolicy — on any of Dynamo's example manifests, which the newest
// operator accepts. Every file of test/fixtures/upstream/manifest-* and
// testdata/upstream (both API versions; a new fixture is picked up by the
// glob) is checked at the release its images tell and at the newest.
func TestUpstreamExamplesAccepted(t *testing.T) {
	root := "../../../"
	files, err := filepath.Glob(root + "test/fixtures/upstream/manifest-*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	more, err := filepath.Glob(root + upstream + "*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, more...)
	versions := map[string]int{}
	for _, f := range files {
		f = strings.TrimPrefix(f, root)
		data, err := os.ReadFile(root + f)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range []string{"nvidia.com/v1alpha1", "nvidia.com/v1beta1"} {
			if strings.Contains(string(data), "apiVersion: "+v) {
				versions[v]++
			}
		}
		for _, release := range []string{"", "latest"} {
			t.Run(f+" "+release, func(t *testing.T) {
				args := []string{"preflight", "-f", f, "--no-cluster", "-o", "json"}
				if release != "" {
					args = append(args, "--dynamo-version", release)
				}
				r := runIn(t, "", args...)
				var out struct {
					Findings []struct {
						ID, Severity, Certainty, Message string
					} `json:"findings"`
				}
				if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil {
					t.Fatalf("%v (exit %d)\n%s%s", err, r.ExitCode, r.Stdout, r.Stderr)
				}
				for _, f := range out.Findings {
					if f.Severity == "error" && f.Certainty == "certain" || f.ID == "InvalidManifest" || f.ID == "InvalidPolicy" {
						t.Errorf("%s %s %s: %s", f.ID, f.Severity, f.Certainty, f.Message)
					}
				}
				if r.ExitCode != 0 {
					t.Errorf("exit %d, want 0", r.ExitCode)
				}
			})
		}
	}
	if versions["nvidia.com/v1alpha1"] == 0 || versions["nvidia.com/v1beta1"] == 0 || len(files) < 30 {
		t.Errorf("want both API versions among the %d examples, got %v", len(files), versions)
	}
}
