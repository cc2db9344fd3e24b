package preflight_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/preflight"
)

// jointNodes: zones a and b with two 8-GPU nodes each, zone c with one
// 12-GPU node: 44 GPUs, none requested.
const jointNodes = `
apiVersion: v1
kind: Node
metadata: {name: a1, labels: {topology.kubernetes.io/zone: a}}
status: {allocatable: {nvidia.com/gpu: "8"}}
---
apiVersion: v1
kind: Node
metadata: {name: a2, labels: {topology.kubernetes.io/zone: a}}
status: {allocatable: {nvidia.com/gpu: "8"}}
---
apiVersion: v1
kind: Node
metadata: {name: b1, labels: {topology.kubernetes.io/zone: b}}
status: {allocatable: {nvidia.com/gpu: "8"}}
---
apiVersion: v1
kind: Node
metadata: {name: b2, labels: {topology.kubernetes.io/zone: b}}
status: {allocatable: {nvidia.com/gpu: "8"}}
---
apiVersion: v1
kind: Node
metadata: {name: c1, labels: {topology.kubernetes.io/zone: c}}
status: {allocatable: {nvidia.com/gpu: "12"}}
`

// fragmentedNodes: two nodes with 3 GPUs each.
const fragmentedNodes = `
apiVersion: v1
kind: Node
metadata: {name: f1}
status: {allocatable: {nvidia.com/gpu: "3"}}
---
apiVersion: v1
kind: Node
metadata: {name: f2}
status: {allocatable: {nvidia.com/gpu: "3"}}
`

// TestJointPlacement (issue 30, item 4): all replicas of all components
// against the free GPUs of the nodes they may use. Where the components that
// can only use a set of nodes need more GPUs than it has free, no placement
// fits them: a certain error with the shortfall, per value of the domain when
// they are pinned to one. A shortage that only a fragmentation of the free
// GPUs causes stays possible.
func TestJointPlacement(t *testing.T) {
	pin := func(z string) string { return fmt.Sprintf("nodeSelector: {topology.kubernetes.io/zone: %s},", z) }
	policyless := func(components ...string) string {
		return strings.Replace(dgd("d", "null", components...), "  experimental:\n    kvTransferPolicy: null\n", "", 1)
	}
	type want struct {
		severity  string
		certainty preflight.Certainty
		domain    string
		message   string
	}
	cases := []struct {
		name     string
		nodes    string
		partial  bool
		manifest string
		want     []want
	}{
		{"44 + 44 one-GPU replicas on 44 free GPUs", jointNodes, false,
			policyless(comp("p", "prefill", 44, 1, ""), comp("dec", "decode", 44, 1, "")),
			[]want{{"error", preflight.Certain, "", "p and dec need 88 nvidia.com/gpu together (p 44 × 1 GPU, dec 44 × 1 GPU), and the 5 nodes they may use (topology.kubernetes.io/zone: a 16 free, b 16 free, c 12 free) have 44 free (allocatable minus what running pods request): 44 short"}}},
		{"30 + 30", jointNodes, false,
			policyless(comp("p", "prefill", 30, 1, ""), comp("dec", "decode", 30, 1, "")),
			[]want{{"error", preflight.Certain, "", "p and dec need 60 nvidia.com/gpu together (p 30 × 1 GPU, dec 30 × 1 GPU), and the 5 nodes they may use (topology.kubernetes.io/zone: a 16 free, b 16 free, c 12 free) have 44 free (allocatable minus what running pods request): 16 short"}}},
		{"22 + 22 fit exactly", jointNodes, false,
			policyless(comp("p", "prefill", 22, 1, ""), comp("dec", "decode", 22, 1, "")), nil},
		{"per zone: a is short, b is not", jointNodes, false,
			dgd("d", zoneRequired, comp("pa", "prefill", 10, 1, pin("a")), comp("da", "decode", 10, 1, pin("a")),
				comp("pb", "prefill", 5, 1, pin("b")), comp("db", "decode", 5, 1, pin("b"))),
			[]want{{"error", preflight.Certain, "a", "pa and da need 20 nvidia.com/gpu together (pa 10 × 1 GPU, da 10 × 1 GPU), and the 2 nodes they may use, all in zone a have 16 free (allocatable minus what running pods request): 4 short"}}},
		{"per zone, against a capture: possible", jointNodes, true,
			dgd("d", zoneRequired, comp("pa", "prefill", 10, 1, pin("a")), comp("da", "decode", 10, 1, pin("a"))),
			[]want{{"error", preflight.Possible, "a", "4 short, so replicas stay Pending whatever the scheduler does (possible: a capture holds only the nodes"}}},
		{"fragmentation only: possible", fragmentedNodes, false,
			policyless(comp("p", "prefill", 1, 2, ""), comp("dec", "decode", 2, 2, "")),
			[]want{{"warning", preflight.Possible, "", "each component fits alone, but not all together"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cl := preflight.NewCluster(objects(t, tc.nodes), nil)
			cl.NodesComplete = !tc.partial
			r := check(t, cl, tc.manifest)
			var got []preflight.Finding
			for _, f := range r.Findings {
				if f.ID == preflight.FindingReplicasUnschedulable {
					got = append(got, f)
				}
			}
			if len(got) != len(tc.want) {
				t.Fatalf("want %d ReplicasUnschedulable, got:\n%s", len(tc.want), dump(r))
			}
			for i, w := range tc.want {
				f := got[i]
				if string(f.Severity) != w.severity || f.Certainty != w.certainty || f.Domain != w.domain || !strings.Contains(f.Message, w.message) {
					t.Errorf("got %s %s %q %q\nwant %s %s %q containing %q", f.Severity, f.Certainty, f.Domain, f.Message, w.severity, w.certainty, w.domain, w.message)
				}
			}
		})
	}
}
