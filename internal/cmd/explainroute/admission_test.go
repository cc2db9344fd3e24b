package explainroute_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/cmdtest"
	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/golden"
)

// admissionArgs loads the healthy example's prefill workers above a busy
// threshold of 2000 active prefill tokens: all six, or all but the last.
func admissionArgs(mode string, free bool) []string {
	args := []string{"--from-file", "examples/healthy-three-zone-required.yaml", "--token-file", prompt,
		"--router-mode", mode, "--active-prefill-tokens-threshold", "2000"}
	n := 0
	for _, zone := range []string{"1a", "1b", "1c"} {
		for i := range 2 {
			n++
			if free && n == 6 {
				continue
			}
			args = append(args, "--load", fmt.Sprintf("llama3-70b-0-prefill-us-east-%s-%d=prefillTokens:5000", zone, i))
		}
	}
	return args
}

// TestAdmissionAllWorkersBusy: in every router mode the frontend admits a
// request only when a worker of the hop is free (PushRouter's
// empty_free_pool_error, the KV router's AllEligibleWorkersOverloaded); with
// every prefill worker over the threshold the verdict names the refusal, its
// message and status, the threshold and the loads, and points at the
// thresholds or capacity. With one worker free the request is routed there.
func TestAdmissionAllWorkersBusy(t *testing.T) {
	for _, mode := range []string{"round-robin", "power-of-two", "least-loaded", "kv"} {
		t.Run(mode+"/all busy", func(t *testing.T) {
			x, r := explainJSON(t, admissionArgs(mode, false)...)
			if r.ExitCode != 2 || x.Verdict.Routable || x.Verdict.Stage != "prefill" {
				t.Fatalf("exit %d verdict %+v", r.ExitCode, x.Verdict)
			}
			for _, want := range []string{"all workers busy", `"All workers are busy, please retry later"`, "HTTP 529", "503",
				"active_prefill_tokens_threshold 2000", "5000"} {
				if !strings.Contains(x.Verdict.Cause, want) {
					t.Errorf("cause lacks %q: %s", want, x.Verdict.Cause)
				}
			}
			if !strings.Contains(x.Verdict.Fix, "--active-prefill-tokens-threshold") || !strings.Contains(x.Verdict.Fix, "capacity") {
				t.Errorf("fix %q", x.Verdict.Fix)
			}
		})
		t.Run(mode+"/one free", func(t *testing.T) {
			x, r := explainJSON(t, admissionArgs(mode, true)...)
			if r.ExitCode != 0 || !x.Verdict.Routable || x.Prefill == nil || x.Prefill.Pick != "llama3-70b-0-prefill-us-east-1c-1" {
				t.Fatalf("exit %d verdict %+v pick %v", r.ExitCode, x.Verdict, x.Prefill)
			}
		})
	}
}

// TestAdmissionGolden pins the all-busy verdict through the real command.
func TestAdmissionGolden(t *testing.T) {
	for _, mode := range []string{"round-robin", "kv"} {
		t.Run(mode, func(t *testing.T) {
			args := append([]string{"explain-route"}, admissionArgs(mode, false)...)
			r := runIn(t, args...)
			golden.Assert(t, cmdtest.Transcript(args, "", r))
			if r.ExitCode != 2 {
				t.Fatalf("exit %d: %s", r.ExitCode, r.Stderr)
			}
		})
	}
}
