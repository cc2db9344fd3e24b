package e2e

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/kubeenv"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/capture"
)

// liveReport is the part of a TopologyReport the live tests compare.
type liveReport struct {
	Deployments []struct {
		Name    string `json:"name"`
		Domains []struct {
			Value   string             `json:"value"`
			Prefill model.RoleCapacity `json:"prefill"`
			Decode  model.RoleCapacity `json:"decode"`
		} `json:"domains"`
	} `json:"deployments"`
	Findings []model.Finding      `json:"findings"`
	Notes    []model.Note         `json:"notes"`
	Sources  []model.SourceStatus `json:"sources"`
}

// loadExample creates an example capture's Kubernetes objects in the real API
// server (as a test fixture; the plugin itself never writes) and returns the
// namespace they live in.
func loadExample(t *testing.T, e *kubeenv.Env, file string) {
	t.Helper()
	data, err := os.ReadFile("../../examples/" + file)
	if err != nil {
		t.Fatal(err)
	}
	b, err := capture.ParseWhole(data, file)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	namespaces := map[string]bool{}
	var objs []*unstructured.Unstructured
	for _, m := range b.AsRead {
		u := (&unstructured.Unstructured{Object: m}).DeepCopy()
		// Server-assigned fields of the captured objects.
		for _, f := range []string{"uid", "resourceVersion", "creationTimestamp", "generation"} {
			unstructured.RemoveNestedField(u.Object, "metadata", f)
		}
		if u.GetKind() == "Service" {
			unstructured.RemoveNestedField(u.Object, "spec", "clusterIP")
			unstructured.RemoveNestedField(u.Object, "spec", "clusterIPs")
		}
		if ns := u.GetNamespace(); ns != "" {
			namespaces[ns] = true
		}
		objs = append(objs, u)
	}
	for ns := range namespaces {
		nsObj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}
		if _, err := e.Apply(ctx, nsObj); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.Apply(ctx, objs...); err != nil {
		t.Fatal(err)
	}
}

func runTopology(t *testing.T, kubeconfig string, args ...string) (liveReport, string, int) {
	t.Helper()
	out, errOut, code := kubectlWith(t, kubeconfig, append([]string{"dynamo", "topology", "-o", "json"}, args...)...)
	var r liveReport
	if code == 0 || code == 2 {
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("not JSON (exit %d): %v\n%s\n%s", code, err, out, errOut)
		}
	}
	return r, errOut, code
}

func findingIDs(r liveReport) []string {
	var ids []string
	for _, f := range r.Findings {
		ids = append(ids, f.ID+"@"+f.Domain)
	}
	slices.Sort(ids)
	return ids
}

// TestTopologyLiveMatchesCapture runs `kubectl dynamo topology` through the real
// kubectl against a real API server holding the prefill-only-zone example, as a
// least-privilege user, and checks that it reports what the offline capture
// reports, exits 2 for the required-policy failure, and sends no mutating request.
func TestTopologyLiveMatchesCapture(t *testing.T) {
	e := kubeenv.Require(t, env)
	loadExample(t, e, "prefill-only-zone-required.yaml")
	ctx := context.Background()
	rbac, err := os.ReadFile("../../test/fixtures/live/rbac.yaml")
	if err != nil {
		t.Fatal(err)
	}
	clusterRole := strings.SplitN(string(rbac), "\n---", 3)
	if _, err := e.ApplyYAML(ctx, []byte(clusterRole[0]+"\n---"+clusterRole[1])); err != nil {
		t.Fatal(err)
	}
	kc, err := e.KubeconfigFor("inspector", nil)
	if err != nil {
		t.Fatal(err)
	}
	offset, err := e.AuditOffset()
	if err != nil {
		t.Fatal(err)
	}

	live, stderr, code := runTopology(t, kc, "-n", "serving", "--no-frontend")
	if code != 2 {
		t.Fatalf("exit %d, want 2 (a required-policy failure); stderr %s", code, stderr)
	}
	offline, _, ocode := runTopology(t, kc, "--from-file", "../../examples/prefill-only-zone-required.yaml")
	if ocode != 2 {
		t.Fatalf("offline exit %d", ocode)
	}
	if len(live.Deployments) != 1 || len(offline.Deployments) != 1 {
		t.Fatalf("deployments: live %d, offline %d", len(live.Deployments), len(offline.Deployments))
	}
	ld, od := live.Deployments[0], offline.Deployments[0]
	if len(ld.Domains) != len(od.Domains) {
		t.Fatalf("domains: live %+v, offline %+v", ld.Domains, od.Domains)
	}
	for i := range ld.Domains {
		l, o := ld.Domains[i], od.Domains[i]
		if l.Value != o.Value || l.Prefill.Ready != o.Prefill.Ready || l.Prefill.Total != o.Prefill.Total ||
			l.Decode.Ready != o.Decode.Ready || l.Decode.Total != o.Decode.Total || l.Prefill.GPUs != o.Prefill.GPUs || l.Decode.GPUs != o.Decode.GPUs {
			t.Errorf("domain %d: live %+v, offline %+v", i, l, o)
		}
	}
	if got, want := findingIDs(live), findingIDs(offline); !slices.Equal(got, want) {
		t.Errorf("findings: live %v, offline %v", got, want)
	}
	if !slices.Contains(findingIDs(live), "PrefillDomainWithoutDecode@us-east-1c") {
		t.Errorf("live run misses the prefill-only zone: %v", findingIDs(live))
	}

	events, _, err := e.AuditEventsFrom(offset)
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, ev := range events {
		if ev.User != "inspector" {
			continue
		}
		seen++
		if ev.IsMutating() || (ev.Verb != "get" && ev.Verb != "list" && ev.Verb != "watch") {
			t.Errorf("plugin sent %s %s", ev.Verb, ev.RequestURI)
		}
	}
	if seen == 0 {
		t.Error("no audited request from the plugin's user: the audit check is not looking at the right user")
	}
}

// TestTopologyLiveDegradesWithoutPermissions runs as a user who may read only the
// deployment's namespace (no nodes, no DWM, no events, no Grove): the command must
// still report, with notes naming what it could not read.
func TestTopologyLiveDegradesWithoutPermissions(t *testing.T) {
	e := kubeenv.Require(t, env)
	loadExample(t, e, "healthy-three-zone-required.yaml")
	ctx := context.Background()
	if _, err := e.ApplyYAML(ctx, []byte(narrowRole)); err != nil {
		t.Fatal(err)
	}
	kc, err := e.KubeconfigFor("narrow", nil)
	if err != nil {
		t.Fatal(err)
	}
	r, stderr, code := runTopology(t, kc, "-n", "inference", "--no-frontend")
	if code != 0 && code != 2 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if len(r.Deployments) != 1 || len(r.Deployments[0].Domains) == 0 {
		t.Fatalf("no report: %+v", r)
	}
	var all strings.Builder
	for _, n := range r.Notes {
		all.WriteString(n.Message + "\n")
	}
	for _, want := range []string{"nodes", "dynamoworkermetadatas"} {
		if !strings.Contains(all.String(), want) {
			t.Errorf("no note about %s; notes:\n%s", want, all.String())
		}
	}
	degraded := false
	for _, s := range r.Sources {
		degraded = degraded || s.Degraded
	}
	if !degraded {
		t.Errorf("the Kubernetes source is not marked degraded: %+v", r.Sources)
	}
	// Human output shows the notes too.
	out, _, _ := kubectlWith(t, kc, "dynamo", "topology", "-n", "inference", "--no-frontend")
	if !strings.Contains(out, "Notes:") || !strings.Contains(out, "DEGRADED") {
		t.Errorf("table output hides the degradation:\n%s", out)
	}
}

// TestTopologyLiveNoPermissionsFails: a user who may read nothing must not get a
// clean, empty report that passes a CI gate; it gets exit 1 and the reason.
func TestTopologyLiveNoPermissionsFails(t *testing.T) {
	e := kubeenv.Require(t, env)
	kc, err := e.KubeconfigFor("nobody", nil)
	if err != nil {
		t.Fatal(err)
	}
	_, stderr, code := kubectlWith(t, kc, "dynamo", "topology", "-n", "inference", "--no-frontend", "--no-etcd")
	if code != 1 || !strings.Contains(stderr, "no DynamoGraphDeployment could be read") || !strings.Contains(stderr, "dynamographdeployments") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

// TestLiveSelectionMatchingNothingFails: live as offline, a namespace or name
// that matches nothing exits 1 (never an empty report that passes a CI gate),
// listing the deployments of the other namespaces (cmdutil's TestScopeSelect
// covers a user who may not list them); topology and explain-route alike. Other
// tests share the control plane and load deployments of their own, so a hint
// for an empty namespace may name any of them.
func TestLiveSelectionMatchingNothingFails(t *testing.T) {
	e := kubeenv.Require(t, env)
	loadExample(t, e, "prefill-only-zone-required.yaml")
	ctx := context.Background()
	rbac, err := os.ReadFile("../../test/fixtures/live/rbac.yaml")
	if err != nil {
		t.Fatal(err)
	}
	clusterRole := strings.SplitN(string(rbac), "\n---", 3)
	if _, err := e.ApplyYAML(ctx, []byte(clusterRole[0]+"\n---"+clusterRole[1])); err != nil {
		t.Fatal(err)
	}
	inspector, err := e.KubeconfigFor("inspector", nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		kubeconfig string
		args       []string
		want       []string
	}{
		{"empty namespace", inspector, []string{"topology", "-n", "kube-public", "--no-frontend", "--no-etcd"},
			[]string{"error: no DynamoGraphDeployment in namespace kube-public of context ", "serving/qwen3-32b", "Try: kubectl dynamo topology -n ", ", or -A for every namespace"}},
		{"empty namespace, json", inspector, []string{"topology", "-n", "kube-public", "--no-frontend", "--no-etcd", "-o", "json"},
			[]string{"serving/qwen3-32b"}},
		{"unknown name", inspector, []string{"topology", "-n", "serving", "nope", "--no-frontend", "--no-etcd"},
			[]string{"no DynamoGraphDeployment named nope in namespace serving", "Try: kubectl dynamo topology -n serving qwen3-32b"}},
		{"explain-route, empty namespace", inspector, []string{"explain-route", "-n", "kube-public", "--tokens", "1,2", "--no-frontend", "--no-etcd"},
			[]string{"no DynamoGraphDeployment in namespace kube-public", "serving/qwen3-32b", "Try: kubectl dynamo explain-route -n ", " with the same request flags"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, stderr, code := kubectlWith(t, tt.kubeconfig, append([]string{"dynamo"}, tt.args...)...)
			if code != 1 || out != "" {
				t.Errorf("exit %d, stdout %q; want exit 1 and no report", code, out)
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
		})
	}
}
