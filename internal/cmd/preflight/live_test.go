package preflight_test

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/kubeenv"
)

// liveNodes are examples/gitops's production nodes: two 8-GPU nodes in each
// of us-east-1a and us-east-1b.
const liveNodes = `
apiVersion: v1
kind: Node
metadata: {name: gpu-a1, labels: {topology.kubernetes.io/zone: us-east-1a}}
status: {allocatable: {nvidia.com/gpu: "8", cpu: "96", memory: 1Ti, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: gpu-a2, labels: {topology.kubernetes.io/zone: us-east-1a}}
status: {allocatable: {nvidia.com/gpu: "8", cpu: "96", memory: 1Ti, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: gpu-b1, labels: {topology.kubernetes.io/zone: us-east-1b}}
status: {allocatable: {nvidia.com/gpu: "8", cpu: "96", memory: 1Ti, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: gpu-b2, labels: {topology.kubernetes.io/zone: us-east-1b}}
status: {allocatable: {nvidia.com/gpu: "8", cpu: "96", memory: 1Ti, pods: "110"}}
`

// TestLiveExistingDeployment (issue 30, item 5), against a real API server
// with the shipped read-only role (docs/rbac/clusterrole.yaml): preflight
// GETs the DynamoGraphDeployments the manifests would update and applies the
// webhook's update rules. The pull request of examples/gitops adds a prefill
// component to the running qwen3-disagg, which the webhook rejects on update;
// the fix it offers for the zone left without decode is one that works on
// update (and says that adding a component needs delete and recreate); the
// aggregated llama-agg does not exist yet, a create. Every request was a GET
// or a LIST (audit log).
func TestLiveExistingDeployment(t *testing.T) {
	e := kubeenv.Start(t, kubeenv.Options{AuditLog: true, CRDs: []string{"../../../test/crds"}})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	role, err := os.ReadFile("../../../docs/rbac/clusterrole.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.ApplyYAML(ctx, role); err != nil {
		t.Fatal(err)
	}
	if _, err := e.ApplyYAML(ctx, []byte(liveNodes+"---\napiVersion: v1\nkind: Namespace\nmetadata: {name: serving}\n")); err != nil {
		t.Fatal(err)
	}
	// No kubelet makes the nodes Ready: drop the not-ready taint as the node
	// lifecycle controller would.
	cs, err := e.Clientset()
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range nodes.Items {
		n := &nodes.Items[i]
		n.Spec.Taints = slices.DeleteFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.Key == corev1.TaintNodeNotReady })
		if _, err := cs.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// The running qwen3-disagg: the manifest before the pull request added
	// prefill-b, with the provider the operator materialized on create.
	manifest, err := os.ReadFile("../../../examples/gitops/deploy/dynamo/qwen3/dgd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	running := strings.Split(string(manifest), "  - name: prefill-b")[0]
	running = strings.Replace(running, "  namespace: serving\n", "  namespace: serving\n  annotations: {nvidia.com/workload-provider: grove}\n", 1)
	if _, err := e.ApplyYAML(ctx, []byte(running)); err != nil {
		t.Fatal(err)
	}
	kc, err := e.KubeconfigFor("gitops-ci", []string{"dynamo-readers"})
	if err != nil {
		t.Fatal(err)
	}
	offset, err := e.AuditOffset()
	if err != nil {
		t.Fatal(err)
	}

	r := runIn(t, "", "preflight", "--kubeconfig", kc, "-R", "-f", "examples/gitops/deploy/dynamo/", "-o", "json")
	var doc struct {
		Findings []struct {
			ID, Severity, Certainty, Deployment, Message, Hint string
		} `json:"findings"`
		Notes []struct{ Message string } `json:"notes"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
		t.Fatalf("%v (exit %d)\n%s%s", err, r.ExitCode, r.Stdout, r.Stderr)
	}
	var added, hint string
	for _, f := range doc.Findings {
		switch {
		case f.ID == "InvalidManifest" && f.Deployment == "qwen3-disagg":
			added = f.Message
		case f.ID == "PrefillDomainWithoutDecode" && f.Deployment == "qwen3-disagg":
			hint = f.Hint
		case f.Deployment == "llama-agg":
			t.Errorf("llama-agg, a create: %s %s", f.ID, f.Message)
		}
	}
	if added != "spec.components: component topology is immutable and cannot be modified after creation: components added: [prefill-b]: the webhook rejects this update of the existing DynamoGraphDeployment" {
		t.Errorf("the added component: %q\n%s", added, r.Stdout)
	}
	if !strings.HasPrefix(hint, "keep prefill out of zone us-east-1b, or widen an existing decode component's node affinity on topology.kubernetes.io/zone to include us-east-1b (both allowed on update); the DynamoGraphDeployment exists") {
		t.Errorf("the hint proposes what the webhook rejects on update: %q", hint)
	}
	if r.ExitCode != 2 {
		t.Errorf("exit %d", r.ExitCode)
	}
	for _, n := range doc.Notes {
		if strings.Contains(n.Message, "cannot read the existing") {
			t.Errorf("the shipped role does not allow the GET: %s", n.Message)
		}
	}

	events, _, err := e.AuditEventsFrom(offset)
	if err != nil {
		t.Fatal(err)
	}
	var gets []string
	for _, ev := range events {
		if ev.User != "gitops-ci" {
			continue
		}
		if ev.IsMutating() || (ev.Verb != "get" && ev.Verb != "list") {
			t.Errorf("preflight sent %s %s", ev.Verb, ev.RequestURI)
		}
		if ev.Verb == "get" && strings.Contains(ev.RequestURI, "/dynamographdeployments/") {
			gets = append(gets, ev.RequestURI)
		}
	}
	slices.Sort(gets)
	want := []string{
		"/apis/nvidia.com/v1beta1/namespaces/serving/dynamographdeployments/llama-agg",
		"/apis/nvidia.com/v1beta1/namespaces/serving/dynamographdeployments/qwen3-disagg",
	}
	if strings.Join(gets, " ") != strings.Join(want, " ") {
		t.Errorf("GETs of the DGDs: %v, want %v", gets, want)
	}
}
