package build

import (
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw"
)

// bldPodPending says why a pod is not scheduled (no node, and phase Pending or
// PodScheduled False): its PodScheduled condition's reason and message as the
// scheduler wrote them, else an empty PodPending that pendingFromEvents may
// fill. nil for any other pod.
func bldPodPending(p *bldPod) *model.PodPending {
	if p.pod.Spec.NodeName != "" {
		return nil
	}
	var sched *raw.PodCondition
	for i, c := range p.pod.Status.Conditions {
		if c.Type == raw.PodScheduled && c.Status == raw.ConditionFalse {
			sched = &p.pod.Status.Conditions[i]
		}
	}
	switch {
	case sched != nil && (sched.Reason != "" || sched.Message != ""):
		return &model.PodPending{Reason: sched.Reason, Message: sched.Message, Source: "condition PodScheduled"}
	case sched != nil || p.pod.Status.Phase == raw.PodPending:
		return &model.PodPending{}
	}
	return nil
}

// pendingFromEvents gives the pending pods whose PodScheduled condition said
// nothing the latest FailedScheduling event about them (events are sorted
// oldest first).
func (bd *bldBuilder) pendingFromEvents(d *bldDeployment) {
	for _, w := range d.workers {
		pp := w.out.Pending
		if pp == nil || pp.Source != "" {
			continue
		}
		for i := len(d.out.Events) - 1; i >= 0; i-- {
			e := &d.out.Events[i]
			if e.Reason == "FailedScheduling" && e.Object == "pod/"+w.out.Pod {
				pp.Reason, pp.Message, pp.Source = e.Reason, e.Message, "event FailedScheduling"
				break
			}
		}
	}
}
