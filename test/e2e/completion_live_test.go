package e2e

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/kubeenv"
)

// completeThroughKubectl runs `kubectl __complete dynamo args…`, which kubectl
// (≥ 1.26) hands to kubectl_complete-dynamo on PATH, and returns the candidates
// (without descriptions) and the directive line.
func completeThroughKubectl(t *testing.T, kubeconfig string, args ...string) ([]string, string) {
	t.Helper()
	out, errOut, code := kubectlWith(t, kubeconfig, append([]string{"__complete", "dynamo"}, args...)...)
	if code != 0 {
		t.Fatalf("kubectl __complete dynamo %v: exit %d: %s", args, code, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	directive := lines[len(lines)-1]
	var names []string
	for _, l := range lines[:len(lines)-1] {
		name, _, _ := strings.Cut(l, "\t")
		names = append(names, name)
	}
	return names, directive
}

// TestCompletionLiveThroughKubectl: `kubectl dynamo <TAB>` completes deployment
// names and namespaces from a real API server, as a read-only user, through
// kubectl's plugin completion; it sends only get/list requests, and an
// unreachable cluster completes nothing without an error.
func TestCompletionLiveThroughKubectl(t *testing.T) {
	e := kubeenv.Require(t, env)
	loadExample(t, e, "prefill-only-zone-required.yaml")
	ctx := context.Background()
	rbac, err := os.ReadFile("../../test/fixtures/live/rbac.yaml")
	if err != nil {
		t.Fatal(err)
	}
	clusterRole, _, _ := strings.Cut(string(rbac), "\n---")
	binding := `
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: kubectl-dynamo-reader-completer}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: kubectl-dynamo-reader}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: completer}
`
	if _, err := e.ApplyYAML(ctx, []byte(clusterRole+binding)); err != nil {
		t.Fatal(err)
	}
	kc, err := e.KubeconfigFor("completer", nil)
	if err != nil {
		t.Fatal(err)
	}
	offset, err := e.AuditOffset()
	if err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"topology", "-n", "serving", ""}, "qwen3-32b"},
		{[]string{"topology", "--namespace=serving", "qwen"}, "qwen3-32b"},
		{[]string{"capture", "-n", "serving", ""}, "qwen3-32b"},
		{[]string{"topology", "-n", ""}, "serving"},
		{[]string{"topology", "-o", ""}, "wide"},
	} {
		got, directive := completeThroughKubectl(t, kc, tc.args...)
		if !slices.Contains(got, tc.want) || !strings.HasPrefix(directive, ":") {
			t.Errorf("kubectl __complete dynamo %v = %q (directive %s), want %s among them", tc.args, got, directive, tc.want)
		}
	}
	if got, _ := completeThroughKubectl(t, kc, "topology", "-n", "serving", "qwen3-32b", ""); slices.Contains(got, "qwen3-32b") {
		t.Errorf("a deployment already named is offered again: %q", got)
	}

	events, _, err := e.AuditEventsFrom(offset)
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, ev := range events {
		if ev.User != "completer" {
			continue
		}
		seen++
		if ev.IsMutating() || (ev.Verb != "get" && ev.Verb != "list") {
			t.Errorf("completion sent %s %s", ev.Verb, ev.RequestURI)
		}
	}
	if seen == 0 {
		t.Error("no audited request from the completion user: completion did not reach the API server")
	}

	// Nothing listens on port 1: no candidates, no error, no file names (:4).
	dead := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(dead, []byte(`apiVersion: v1
kind: Config
current-context: dead
clusters: [{name: dead, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: x}}]
contexts: [{name: dead, context: {cluster: dead, user: u, namespace: serving}}]
`), 0o600); err != nil {
		t.Fatal(err)
	}
	got, directive := completeThroughKubectl(t, dead, "topology", "")
	if len(got) != 0 || directive != ":4" {
		t.Errorf("unreachable cluster: %q, directive %s", got, directive)
	}
}
