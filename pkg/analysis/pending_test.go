package analysis

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
)

// TestPendingWorkers (issue 17 item 3): worker pods the scheduler has not placed
// are reported as Pending with the scheduler's reason (PodScheduled condition,
// else a FailedScheduling event), never as a label problem; the domain findings
// say the capacity exists but is not running, and the fix points at scheduling.
// The deployments are upstream-shaped (upShapes).
func TestPendingWorkers(t *testing.T) {
	shape := func(file string, edit func(*upShape)) upShape {
		for _, sh := range upShapes() {
			if sh.file == file {
				sh.registered = true // the running leaders publish their cards
				sh.comps = append([]upComp{}, sh.comps...)
				if edit != nil {
					edit(&sh)
				}
				return sh
			}
		}
		t.Fatalf("no shape %s", file)
		return upShape{}
	}
	pend := func(comp string, pending ...bool) func(*upShape) {
		return func(sh *upShape) {
			for i := range sh.comps {
				if sh.comps[i].name == comp {
					sh.comps[i].pending = pending
				}
			}
		}
	}
	// setPending rewrites the status of every pending pod (no nodeName).
	setPending := func(status func(name string) map[string]any, events func(name string) []map[string]any) func([]map[string]any) []map[string]any {
		return func(objs []map[string]any) []map[string]any {
			var extra []map[string]any
			for _, o := range objs {
				if o["kind"] != "Pod" || o["spec"].(map[string]any)["nodeName"] != nil {
					continue
				}
				name := o["metadata"].(map[string]any)["name"].(string)
				if o["metadata"].(map[string]any)["labels"].(map[string]any)["nvidia.com/dynamo-component-type"] == "frontend" {
					continue
				}
				o["status"] = status(name)
				if events != nil {
					extra = append(extra, events(name)...)
				}
			}
			return append(objs, extra...)
		}
	}
	event := func(pod, ts, msg string) map[string]any {
		return map[string]any{"apiVersion": "v1", "kind": "Event", "metadata": map[string]any{"name": pod + "." + ts, "namespace": "llm"},
			"involvedObject": map[string]any{"kind": "Pod", "name": pod, "namespace": "llm"}, "reason": "FailedScheduling", "type": "Warning",
			"message": msg, "lastTimestamp": "2026-11-20T12:0" + ts + ":00Z", "count": 3}
	}
	const affinity = "0/6 nodes are available: 2 node(s) didn't match Pod's node affinity/selector, 4 Insufficient nvidia.com/gpu. preemption: 0/6 nodes are available: 6 Preemption is not helpful for scheduling."
	type want struct {
		id, sev, domain string
		contains        []string
	}
	tests := []struct {
		name   string
		shape  upShape
		edit   func([]map[string]any) []map[string]any
		wants  []want   // findings at warning or above, in report order
		absent []string // ids that must not be raised
		info   []string // the NotReadyWorkers message must contain these ("" : no NotReadyWorkers)
	}{
		{"every decode replica pending, zone required", shape("trtllm-disagg-multinode-v1beta1-zone-required-gen-pending.yaml", nil), nil,
			[]want{
				{"PrefillDomainWithoutDecode", "error", "us-east-1a", []string{"The decode capacity exists but is not running: 2 decode replicas are Pending, not scheduled (Unschedulable \"0/5 nodes are available: 5 Insufficient nvidia.com/gpu.\")",
					"Until then, under required enforcement every request prefilled there fails with NoEndpoints",
					"fix: get the Pending decode replicas scheduled in zone=us-east-1a: free or add nvidia.com/gpu on the nodes"}},
				{"PrefillDomainWithoutDecode", "error", "us-east-1b", nil},
				{"WorkerPodsPending", "error", "", []string{"2 decode replicas are Pending: the scheduler has not placed 4 pods (Unschedulable \"0/5 nodes are available: 5 Insufficient nvidia.com/gpu. preemption:",
					"no zone value yet (not a labelling problem)", "16 GPUs of decode capacity are declared but not running", "no decode capacity runs at all",
					"fix: this is a scheduling problem, not a label one: free or add nvidia.com/gpu"}},
			}, []string{"WorkerMissingDomain", "NotReadyWorkers"}, nil},
		{"one decode replica pending, zone required", shape("vllm-disagg-multinode-v1beta1.yaml", pend("gen", false, true)), nil,
			[]want{
				{"PrefillDomainWithoutDecode", "error", "us-east-1b", []string{"zone us-east-1b has 1 ready prefill and 0 ready decode replicas. The decode capacity exists but is not running: 1 decode replica is Pending",
					"get the Pending decode replicas scheduled in zone=us-east-1b"}},
				{"SingleDecodeInDomain", "warning", "us-east-1a", nil},
				{"WorkerPodsPending", "warning", "", []string{"1 decode replica is Pending: the scheduler has not placed 2 pods", "their 2 GPUs of decode capacity are declared but not running: the router does not see them"}},
			}, []string{"WorkerMissingDomain"}, nil},
		{"one prefill replica pending", shape("vllm-disagg-multinode-v1beta1.yaml", pend("ctx", false, true)), nil,
			[]want{
				{"DecodeDomainWithoutPrefill", "warning", "us-east-1b", []string{"zone us-east-1b has 1 ready decode and 0 ready prefill replicas. The prefill capacity exists but is not running: 1 prefill replica is Pending",
					"Until then, under required enforcement the router sends them only requests prefilled in zone us-east-1b", "get the Pending prefill replicas scheduled in zone=us-east-1b"}},
				{"SingleDecodeInDomain", "warning", "us-east-1a", nil},
				{"WorkerPodsPending", "warning", "", []string{"1 prefill replica is Pending"}},
			}, []string{"WorkerMissingDomain"}, nil},
		{"reason from FailedScheduling events, no condition", shape("trtllm-disagg-multinode-v1beta1-zone-required-gen-pending.yaml", nil),
			setPending(func(string) map[string]any { return map[string]any{"phase": "Pending"} },
				func(pod string) []map[string]any {
					return []map[string]any{event(pod, "1", "0/5 nodes are available: 5 Insufficient nvidia.com/gpu."), event(pod, "2", affinity)}
				}),
			[]want{
				{"PrefillDomainWithoutDecode", "error", "us-east-1a", []string{"(FailedScheduling \"0/6 nodes are available: 2 node(s) didn't match Pod's node affinity/selector, 4 Insufficient nvidia.com/gpu.\")"}},
				{"PrefillDomainWithoutDecode", "error", "us-east-1b", nil},
				{"WorkerPodsPending", "error", "", []string{"FailedScheduling \"" + affinity + "\"", "free or add nvidia.com/gpu", "nodeSelector or node affinity leaves too few nodes"}},
			}, []string{"WorkerMissingDomain"}, nil},
		{"Grove scheduling gate", shape("trtllm-disagg-multinode-v1beta1-zone-required-gen-pending.yaml", nil),
			setPending(func(string) map[string]any {
				return map[string]any{"phase": "Pending", "conditions": []any{map[string]any{"type": "PodScheduled", "status": "False", "reason": "SchedulingGated", "message": "Scheduling is blocked due to non-empty scheduling gates"}}}
			}, nil),
			[]want{
				{"PrefillDomainWithoutDecode", "error", "us-east-1a", []string{"SchedulingGated", "kubectl get podgangs -n llm"}},
				{"PrefillDomainWithoutDecode", "error", "us-east-1b", nil},
				{"WorkerPodsPending", "error", "", []string{"SchedulingGated \"Scheduling is blocked due to non-empty scheduling gates\"", "Grove holds the pods behind a scheduling gate"}},
			}, []string{"WorkerMissingDomain"}, nil},
		{"no reason readable", shape("trtllm-disagg-multinode-v1beta1-zone-required-gen-pending.yaml", nil),
			setPending(func(string) map[string]any { return map[string]any{"phase": "Pending"} }, nil),
			[]want{
				{"PrefillDomainWithoutDecode", "error", "us-east-1a", nil},
				{"PrefillDomainWithoutDecode", "error", "us-east-1b", nil},
				{"WorkerPodsPending", "error", "", []string{"not scheduled yet, no reason read (no PodScheduled condition or FailedScheduling event)", "kubectl get events -n llm --field-selector reason=FailedScheduling"}},
			}, []string{"WorkerMissingDomain"}, nil},
		{"pending without a policy", shape("vllm-disagg-multinode-v1alpha1.yaml", pend("gen", true)), nil,
			[]want{{"WorkerPodsPending", "error", "", []string{"1 decode replica is Pending", "They have no node, hence no node label"}}},
			[]string{"WorkerMissingDomain", "NotReadyWorkers"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := tt.shape.objects()
			if tt.edit != nil {
				objs = tt.edit(objs)
			}
			r := upAnalyzeObjects(t, objs)
			var got []string
			texts := map[int]string{}
			for _, f := range r.Findings {
				for _, a := range tt.absent {
					if f.ID == a {
						t.Errorf("unexpected %s: %s", f.ID, f.Message)
					}
				}
				if f.Severity.Rank() < model.SeverityWarning.Rank() {
					continue
				}
				texts[len(got)] = f.Message + " fix: " + f.Hint
				got = append(got, fmt.Sprintf("%s %s %s", f.ID, f.Severity, f.Domain))
			}
			var wantIDs []string
			for _, w := range tt.wants {
				wantIDs = append(wantIDs, fmt.Sprintf("%s %s %s", w.id, w.sev, w.domain))
			}
			if strings.Join(got, "\n") != strings.Join(wantIDs, "\n") {
				t.Fatalf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantIDs, "\n"))
			}
			for i, w := range tt.wants {
				for _, c := range w.contains {
					if !strings.Contains(texts[i], c) {
						t.Errorf("%s %s: %q lacks %q", w.id, w.domain, texts[i], c)
					}
				}
			}
			for _, wr := range r.Deployments[0].Workers {
				if (wr.Pending != nil) == wr.Ready {
					t.Errorf("worker %s: ready %v, pending %+v", wr.Leader, wr.Ready, wr.Pending)
				}
			}
		})
	}
}
