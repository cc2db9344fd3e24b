package preflight_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/cmdtest"
	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/golden"
)

const (
	capture  = "examples/prefill-only-zone-required.yaml"
	capacity = "examples/preflight/capacity-third-zone-prefill.yaml"
	invalid  = "examples/preflight/invalid-policy.yaml"
	upstream = "internal/cmd/preflight/testdata/upstream/"
)

// TestPreflightGolden pins what users see, through the real command, offline.
func TestPreflightGolden(t *testing.T) {
	cases := map[string][]string{
		"capacity-third-zone/table":     {"-f", capacity, "--nodes-from", capture},
		"capacity-third-zone/wide":      {"-f", capacity, "--nodes-from", capture, "-o", "wide"},
		"capacity-third-zone/json":      {"-f", capacity, "--nodes-from", capture, "-o", "json"},
		"capacity-third-zone/yaml":      {"-f", capacity, "--nodes-from", capture, "-o", "yaml"},
		"capacity-third-zone/offline":   {"-f", capacity, "--no-cluster"},
		"capacity-third-zone/noheaders": {"-f", capacity, "--no-cluster", "--no-headers"},
		"unconstrained/table":           {"-f", capture, "--nodes-from", capture},
		"unconstrained/offline":         {"-f", capture, "--no-cluster"},
		"unconstrained/fail-on-warning": {"-f", capture, "--nodes-from", capture, "--fail-on", "warning"},
		"invalid-policy/table":          {"-f", invalid, "--no-cluster"},
		"invalid-policy/exit-zero":      {"-f", invalid, "--no-cluster", "--exit-zero"},
		"upstream/vllm-v1alpha1":        {"-f", upstream + "vllm-disagg-v1alpha1.yaml", "--no-cluster", "-o", "wide"},
		"upstream/vllm-v1beta1":         {"-f", upstream + "vllm-disagg-v1beta1.yaml", "--no-cluster", "-o", "wide"},
		"upstream/sglang-multinode":     {"-f", upstream + "sglang-disagg-multinode-v1alpha1.yaml", "--nodes-from", capture, "-o", "wide"},
		"upstream/trtllm-multinode":     {"-f", upstream + "trtllm-disagg-multinode-v1beta1.yaml", "--nodes-from", capture, "-o", "wide"},
		"upstream/directory":            {"-f", upstream, "--no-cluster", "--no-headers"},
		"stdin":                         {"-f", "-", "--no-cluster"},
		"errors/no-filename":            {"--no-cluster"},
		"errors/no-dgd":                 {"-f", "internal/cmd/preflight/testdata/upstream/README.md", "--no-cluster"},
		"errors/both-sources":           {"-f", capacity, "--no-cluster", "--nodes-from", capture},
		"strict/typos":                  {"-f", "internal/cmd/preflight/testdata/strict/typos.yaml", "--no-cluster"},
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			args := append([]string{"preflight"}, args...)
			stdin := ""
			if name == "stdin" {
				data, err := os.ReadFile("../../../" + upstream + "vllm-disagg-v1beta1.yaml")
				if err != nil {
					t.Fatal(err)
				}
				stdin = string(data)
			}
			r := runIn(t, stdin, args...)
			golden.Assert(t, cmdtest.Transcript(args, stdin, r))
		})
	}
}

// TestPreflightCatches checks, on the JSON report, the cases the command must
// catch and their certainty.
func TestPreflightCatches(t *testing.T) {
	type finding struct {
		ID, Severity, Domain, Certainty string
	}
	report := func(args ...string) ([]finding, int) {
		r := runIn(t, "", append([]string{"preflight", "-o", "json"}, args...)...)
		var doc struct {
			Kind     string    `json:"kind"`
			Findings []finding `json:"findings"`
		}
		if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil || doc.Kind != "PreflightReport" {
			t.Fatalf("%v: %v\n%s%s", args, err, r.Stdout, r.Stderr)
		}
		return doc.Findings, r.ExitCode
	}
	has := func(fs []finding, want finding) bool {
		for _, f := range fs {
			if f == want {
				return true
			}
		}
		return false
	}
	fs, code := report("-f", capacity, "--nodes-from", capture)
	if !has(fs, finding{"PrefillDomainWithoutDecode", "error", "us-east-1c", "certain"}) || code != 2 {
		t.Errorf("third zone with prefill only: %+v exit %d", fs, code)
	}
	fs, code = report("-f", capacity, "--no-cluster")
	if !has(fs, finding{"PrefillDomainWithoutDecode", "error", "us-east-1c", "certain"}) || code != 2 {
		t.Errorf("third zone with prefill only, offline: %+v exit %d", fs, code)
	}
	fs, code = report("-f", capture, "--nodes-from", capture)
	if !has(fs, finding{"PrefillDomainWithoutDecode", "warning", "", "possible"}) || code != 0 {
		t.Errorf("unconstrained placement under required: %+v exit %d", fs, code)
	}
	fs, _ = report("-f", invalid, "--no-cluster")
	if n := strings.Count(strings.Join(func() []string {
		var s []string
		for _, f := range fs {
			s = append(s, f.ID)
		}
		return s
	}(), ","), "InvalidPolicy"); n != 2 {
		t.Errorf("preferred without weight and weight 1.5: want 2 InvalidPolicy, got %+v", fs)
	}
}

// runIn runs the command from the repository root so paths read as users type
// them.
func runIn(t *testing.T, stdin string, args ...string) cmdtest.Result {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chdir("../../.."); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = os.Chdir(wd) }()
	return cmdtest.RunWith(t, cmdtest.Options{Stdin: stdin}, args...)
}

// TestNodesFromCertainty (issue 30, item 7): a capture holds only the nodes
// its deployments' pods ran on, so "none of the N nodes can run its pods" is
// possible against a capture and certain against a full node list (kubectl
// get nodes -o yaml); a --nodes-from file without a Node is an error (exit 1)
// that says what to give instead.
func TestNodesFromCertainty(t *testing.T) {
	const dir = "internal/cmd/preflight/testdata/nodes/"
	type finding struct{ ID, Severity, Certainty, Message string }
	run := func(nodes string) ([]finding, cmdtest.Result) {
		r := runIn(t, "", "preflight", "-f", dir+"unschedulable.yaml", "--nodes-from", nodes, "-o", "json")
		var doc struct {
			Findings []finding `json:"findings"`
		}
		if r.ExitCode != 1 {
			if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
				t.Fatalf("%v\n%s%s", err, r.Stdout, r.Stderr)
			}
		}
		return doc.Findings, r
	}
	for _, tc := range []struct {
		name, nodes, certainty, phrase string
	}{
		{"a capture", capture, "possible", "none of the 11 nodes the capture holds can run its pods"},
		{"a full node list", dir + "nodes-list.yaml", "certain", "none of the 2 nodes can run its pods"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs, r := run(tc.nodes)
			var got []finding
			for _, f := range fs {
				if f.ID == "ReplicasUnschedulable" {
					got = append(got, f)
				}
			}
			if len(got) != 1 || got[0].Certainty != tc.certainty || !strings.Contains(got[0].Message, tc.phrase) || r.ExitCode != 2 {
				t.Errorf("want one ReplicasUnschedulable %s containing %q and exit 2, got %+v exit %d", tc.certainty, tc.phrase, got, r.ExitCode)
			}
		})
	}
	t.Run("no node", func(t *testing.T) {
		_, r := run(dir + "no-node.yaml")
		if r.ExitCode != 1 || !strings.Contains(r.Stderr, "holds no Node") || !strings.Contains(r.Stderr, "kubectl get nodes -o yaml") || r.Stdout != "" {
			t.Errorf("want exit 1 and an error naming the missing Nodes, got exit %d\n%s%s", r.ExitCode, r.Stdout, r.Stderr)
		}
	})
}
