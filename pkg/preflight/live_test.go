package preflight_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/kubeenv"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/preflight"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/kube"
)

// TestLiveReadCluster runs the prediction against a real API server: nodes
// with zone labels, nvidia.com/gpu allocatable and a taint, a pod already
// holding a node's GPUs, and a Grove ClusterTopologyBinding. It checks the
// findings and that the reads were GETs and LISTs only (audit log).
func TestLiveReadCluster(t *testing.T) {
	e := kubeenv.Start(t, kubeenv.Options{AuditLog: true, CRDs: []string{"../../test/crds"}})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := e.Apply(ctx, objects(t, clusterYAML)...); err != nil {
		t.Fatal(err)
	}
	// The API server taints new nodes node.kubernetes.io/not-ready (there is no
	// kubelet to make them Ready); drop the taint as the node lifecycle
	// controller does once a node is Ready.
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
	if _, err := e.ApplyYAML(ctx, []byte("apiVersion: v1\nkind: Namespace\nmetadata: {name: other}\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Apply(ctx, objects(t, strings.Replace(busyPod, "status: {phase: Running}", "", 1))...); err != nil {
		t.Fatal(err)
	}
	offset, err := e.AuditOffset()
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := e.RESTConfigFor("preflight-reader", []string{"system:masters"})
	if err != nil {
		t.Fatal(err)
	}
	api, err := kube.NewAPI(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r, err := kube.ReadCluster(ctx, api, "live", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	cl := preflight.ClusterFrom(r, nil)
	if len(cl.Nodes) != 6 || !cl.GroveServed || !cl.PodsKnown || len(cl.Topologies) != 1 {
		t.Fatalf("nodes %d grove %v pods %v topologies %d notes %v", len(cl.Nodes), cl.GroveServed, cl.PodsKnown, len(cl.Topologies), cl.Notes)
	}
	if s := cl.Nodes[0]; s.Name != "a1" || s.Requested != 8 || s.Allocatable != 8 {
		t.Fatalf("a1: %+v", s)
	}
	pin := func(z string) string { return "nodeSelector: {topology.kubernetes.io/zone: " + z + "}," }
	for _, tc := range []struct {
		name     string
		manifest string
		want     want
	}{
		{"third zone only has prefill", dgd("d", zoneRequired, comp("pa", "prefill", 1, 1, pin("a")),
			comp("pc", "prefill", 1, 1, pin("c")+"tolerations: [{key: dedicated, operator: Exists}],"), comp("da", "decode", 1, 1, pin("a"))),
			want{"PrefillDomainWithoutDecode", "error", "c", preflight.Certain}},
		{"decode GPUs over a zone's free GPUs", dgd("d", zoneRequired, comp("pa", "prefill", 1, 1, pin("a")), comp("da", "decode", 2, 8, pin("a"))),
			want{"ReplicasUnschedulable", "error", "a", preflight.Certain}},
		{"labelKey on no node", dgd("d", "{labelKey: example.com/zone, domain: zone}", comp("p", "prefill", 1, 1, ""), comp("d", "decode", 1, 1, "")),
			want{"DomainLabelMissing", "error", "", preflight.Certain}},
		{"domain not a level", dgd("d", "{clusterTopologyName: fabric, domain: rack}", comp("p", "prefill", 1, 1, ""), comp("d", "decode", 1, 1, "")),
			want{"TopologyObjectMissing", "error", "", preflight.Certain}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := check(t, cl, tc.manifest)
			if !found(r, tc.want) {
				t.Errorf("want %+v, got:\n%s", tc.want, dump(r))
			}
		})
	}
	events, _, err := e.AuditEventsFrom(offset)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ev := range events {
		if ev.User != "preflight-reader" {
			continue
		}
		n++
		if ev.IsMutating() || (ev.Verb != "get" && ev.Verb != "list") {
			t.Errorf("preflight sent %s %s", ev.Verb, ev.RequestURI)
		}
	}
	if n == 0 {
		t.Error("no request of preflight-reader in the audit log")
	}
}
