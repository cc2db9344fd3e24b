package explainroute_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/cmdtest"
	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/golden"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/audit"
)

// The requests of the router log fixtures (examples/router-logs): the first
// is prefilled on the worker holding the support-chat system prompt; the
// third ties at prefill and is decoded; the planted one's pick is not the
// cheapest.
const (
	loggedQwen      = "9d2617fd-7d3c-4e1a-9b2f-000000000001"
	loggedQwenTie   = "9d2617fd-7d3c-4e1a-9b2f-000000000003"
	loggedPreferred = "ff88ea78-7d3c-4e1a-9b2f-000000000001"
)

// TestExplainRouteRequestIDGolden pins explain-route --request-id: the
// logged decisions beside the model's, why, and the checks.
func TestExplainRouteRequestIDGolden(t *testing.T) {
	cases := []struct {
		name string
		args []string
	}{
		{"cached-prefix/table", []string{"--from-file", "examples/prefill-only-zone-required.yaml", "--logs", "examples/router-logs/prefill-only-zone-required.log", "--request-id", loggedQwen}},
		{"tie-then-decode/wide", []string{"--from-file", "examples/prefill-only-zone-required.yaml", "--logs", "examples/router-logs/prefill-only-zone-required.jsonl", "--request-id", loggedQwenTie, "-o", "wide"}},
		{"preferred-multiplier/table", []string{"--from-file", "examples/preferred-rollout-drift.yaml", "--logs", "examples/router-logs/preferred-rollout-drift.color.log", "--request-id", loggedPreferred}},
		{"planted-not-minimum/table", []string{"--from-file", "examples/prefill-only-zone-required.yaml", "--logs", "test/fixtures/router-logs/not-minimum.log", "--request-id", loggedQwen}},
		{"unknown-request/table", []string{"--from-file", "examples/prefill-only-zone-required.yaml", "--logs", "examples/router-logs/prefill-only-zone-required.log", "--request-id", "nope"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"explain-route"}, tc.args...)
			r := runIn(t, args...)
			golden.Assert(t, cmdtest.Transcript(args, "", r))
		})
	}
}

// TestExplainRouteRequestIDJSON: -o json is a LoggedRoute document whose
// hops carry the router's and the model's picks.
func TestExplainRouteRequestIDJSON(t *testing.T) {
	r := runIn(t, "explain-route", "--from-file", "examples/prefill-only-zone-required.yaml", "--logs", "examples/router-logs/prefill-only-zone-required.log",
		"--request-id", loggedQwen, "-o", "json")
	var tr audit.Trace
	if err := json.Unmarshal([]byte(r.Stdout), &tr); err != nil || r.ExitCode != 0 {
		t.Fatalf("exit %d, %v\n%s%s", r.ExitCode, err, r.Stdout, r.Stderr)
	}
	if tr.Kind != audit.TraceKind || tr.APIVersion != audit.APIVersion || len(tr.Hops) != 1 || tr.Hops[0].Model == nil ||
		tr.Hops[0].Model.WorkerID != tr.Hops[0].Logged.WorkerID {
		t.Fatalf("trace %+v", tr)
	}
	// The request prefilled in us-east-1c has no decode decision: its
	// decode selection failed, as explain-route predicts.
	if len(tr.Notes) == 0 || !strings.Contains(tr.Notes[0], "no decode decision") {
		t.Errorf("notes %q", tr.Notes)
	}
}

func TestExplainRouteRequestIDErrors(t *testing.T) {
	capture := "examples/prefill-only-zone-required.yaml"
	logs := "examples/router-logs/prefill-only-zone-required.log"
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"with a prompt", []string{"--from-file", capture, "--logs", logs, "--request-id", loggedQwen, "--tokens", "1,2"}, "drop --tokens"},
		{"without logs", []string{"--request-id", loggedQwen}, "needs the router's logs"},
		{"logs without a request id", []string{"--from-file", capture, "--logs", logs, "--tokens", "1,2"}, "--logs goes with --request-id"},
		{"a capture without an excerpt", []string{"--from-file", capture, "--request-id", loggedQwen}, "holds no router log excerpt"},
		{"two readers of stdin", []string{"--from-file", "-", "--logs", "-", "--request-id", loggedQwen}, "both read standard input"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runIn(t, append([]string{"explain-route"}, tc.args...)...)
			if r.ExitCode != 1 || !strings.Contains(r.Stderr, tc.want) {
				t.Fatalf("exit %d, stderr %q; want exit 1 and %q", r.ExitCode, r.Stderr, tc.want)
			}
		})
	}
}
