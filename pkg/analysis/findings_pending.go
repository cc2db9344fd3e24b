package analysis

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
)

// Pending workers (issue 17 item 3): a pod the scheduler has not placed has no
// node, so no node label and no domain value. That is a scheduling problem, not a
// labelling one: such replicas are reported by WorkerPodsPending with the
// scheduler's reason, left out of WorkerMissingDomain and NotReadyWorkers, and
// the domain findings say that the capacity is declared but not running.

// unscheduledOf returns the replicas of a role whose leader has no node.
func (a *anAnalysis) unscheduledOf(role model.Role) []*anReplica {
	var out []*anReplica
	for _, r := range a.replicas {
		if r.role == role && r.unscheduled() {
			out = append(out, r)
		}
	}
	return out
}

// anPendingPods returns the pending pods of the replicas.
func anPendingPods(rs []*anReplica) []*model.Worker {
	var out []*model.Worker
	for _, r := range rs {
		out = append(out, r.pending...)
	}
	return out
}

// anSchedulerSentence cuts a scheduler message to its first sentence ("0/12
// nodes are available: 4 Insufficient nvidia.com/gpu."), without the preemption
// report that follows.
func anSchedulerSentence(msg string) string {
	msg = strings.TrimSpace(msg)
	if i := strings.Index(msg, ". "); i >= 0 {
		return msg[:i+1]
	}
	return msg
}

// anPendingCauses groups pending pods by the scheduler's reason and message:
// `Unschedulable "0/9 nodes are available: …" (4 pods)`, the most frequent
// first, at most two and how many other reasons there are. full keeps the whole
// message; otherwise its first sentence.
func anPendingCauses(pods []*model.Worker, full bool) string {
	type cause struct {
		text string
		n    int
	}
	var cs []*cause
	idx := map[string]*cause{}
	for _, w := range pods {
		pp := w.Pending
		text := "not scheduled yet, no reason read (no PodScheduled condition or FailedScheduling event)"
		if pp.Source != "" {
			msg := pp.Message
			if !full {
				msg = anSchedulerSentence(msg)
			}
			text = strings.TrimSpace(fmt.Sprintf("%s %q", pp.Reason, msg))
			if msg == "" {
				text = pp.Reason
			}
		}
		c := idx[text]
		if c == nil {
			c = &cause{text: text}
			idx[text] = c
			cs = append(cs, c)
		}
		c.n++
	}
	// Stable: most pods first, then first seen.
	for i := 1; i < len(cs); i++ {
		for j := i; j > 0 && cs[j].n > cs[j-1].n; j-- {
			cs[j], cs[j-1] = cs[j-1], cs[j]
		}
	}
	var parts []string
	for i, c := range cs {
		if i == 2 {
			parts = append(parts, anPlural(len(cs)-2, "other reason", "other reasons"))
			break
		}
		t := c.text
		if len(cs) > 1 {
			t += " (" + anPlural(c.n, "pod", "pods") + ")"
		}
		parts = append(parts, t)
	}
	return strings.Join(parts, "; ")
}

var anInsufficient = regexp.MustCompile(`Insufficient ([A-Za-z0-9./_-]*[A-Za-z0-9_-])`)

// anSchedulingFix says what to change for the scheduler's reasons, most
// specific first; ns names the namespace in commands.
func anSchedulingFix(pods []*model.Worker, ns string) string {
	var fixes []string
	seen := map[string]bool{}
	add := func(key, fix string) {
		if !seen[key] {
			seen[key] = true
			fixes = append(fixes, fix)
		}
	}
	for _, w := range pods {
		pp := w.Pending
		m := strings.ToLower(pp.Message)
		if pp.Reason == "SchedulingGated" || strings.Contains(m, "scheduling gate") {
			add("gated", fmt.Sprintf("Grove holds the pods behind a scheduling gate until their whole gang can be placed: check kubectl get podgangs -n %s and the gang scheduler's logs", ns))
		}
		for _, sm := range anInsufficient.FindAllStringSubmatch(pp.Message, -1) {
			add("res/"+sm[1], fmt.Sprintf("free or add %s on the nodes the component may use (kubectl describe nodes: Allocated resources), or lower its replicas or %s per pod", sm[1], sm[1]))
		}
		if strings.Contains(m, "node affinity") || strings.Contains(m, "node selector") || strings.Contains(m, "affinity/selector") {
			add("affinity", "the component's nodeSelector or node affinity leaves too few nodes: check it against kubectl get nodes --show-labels")
		}
		if strings.Contains(m, "topology spread") || strings.Contains(m, "pod affinity") || strings.Contains(m, "anti-affinity") || strings.Contains(m, "topology") {
			add("topology", "its topology constraint (Grove pack domain, topologySpreadConstraints, pod affinity) leaves no domain with room for the replica: relax it or add room in one domain")
		}
		if strings.Contains(m, "untolerated taint") || strings.Contains(m, "had taint") {
			add("taint", "the nodes with room carry taints the pods do not tolerate: add the tolerations to the component")
		}
		if strings.Contains(m, "persistentvolumeclaim") {
			add("pvc", fmt.Sprintf("a PersistentVolumeClaim is not bound: kubectl get pvc -n %s", ns))
		}
	}
	if len(fixes) == 0 {
		fixes = append(fixes, fmt.Sprintf("read the scheduler's reason: kubectl get events -n %s --field-selector reason=FailedScheduling", ns))
	}
	return strings.Join(fixes, "; ")
}

// pendingClause is the sentence of a domain finding that says the role's
// capacity exists but is not running: " The decode capacity exists but is not
// running: 2 decode replicas are Pending (Unschedulable "…"), with no zone
// until they are scheduled." "" when the role has no unscheduled replica.
func (a *anAnalysis) pendingClause(role model.Role) string {
	rs := a.unscheduledOf(role)
	if len(rs) == 0 {
		return ""
	}
	return fmt.Sprintf(" The %s capacity exists but is not running: %s Pending, not scheduled (%s), with no %s until they are.",
		role, anSubj(len(rs), string(role)+" replica", string(role)+" replicas", "is", "are"), anPendingCauses(anPendingPods(rs), false), a.domainName())
}

// pendingFix is the hint of a domain finding when the role has unscheduled
// replicas: get them scheduled into the value, naming the scheduler's reason.
func (a *anAnalysis) pendingFix(role model.Role, v string) string {
	rs := a.unscheduledOf(role)
	if len(rs) == 0 {
		return ""
	}
	return fmt.Sprintf("get the Pending %s replicas scheduled in %s: %s", role, a.kv(v), anSchedulingFix(anPendingPods(rs), a.d.Namespace))
}

// checkPending: WorkerPodsPending, one finding per role.
func (a *anAnalysis) checkPending() {
	readyServing := 0 // ready decode or aggregated replicas
	byRole := map[model.Role][]*anReplica{}
	var roles []model.Role
	for _, r := range a.replicas {
		if r.ready && (r.role == model.RoleDecode || r.role == model.RoleAggregated) {
			readyServing++
		}
		if len(r.pending) == 0 {
			continue
		}
		if byRole[r.role] == nil {
			roles = append(roles, r.role)
		}
		byRole[r.role] = append(byRole[r.role], r)
	}
	for _, role := range roles {
		rs := byRole[role]
		pods := anPendingPods(rs)
		var gpus int64
		for _, w := range pods {
			gpus += w.GPUs
		}
		sev := model.SeverityWarning
		effect := "the router does not see them"
		if (role == model.RoleDecode || role == model.RoleAggregated) && readyServing == 0 {
			sev = model.SeverityError
			effect = "no decode capacity runs at all, so requests cannot be served"
		}
		what := string(role) + " replica"
		if role == model.RoleUnknown {
			what = "worker replica of unknown role"
		}
		capacity := fmt.Sprintf("their %s capacity is", role)
		if gpus > 0 {
			capacity = fmt.Sprintf("their %s of %s capacity %s", anPlural(int(gpus), "GPU", "GPUs"), role, map[bool]string{true: "is", false: "are"}[gpus == 1])
		}
		where := "no node, hence no node label"
		if a.pol != nil {
			where = fmt.Sprintf("no node, hence no %s value yet (not a labelling problem)", a.pol.Domain)
		}
		a.add(model.Finding{ID: FindingWorkerPodsPending, Severity: sev, Objects: anPodObjects(pods),
			Message: fmt.Sprintf("%s Pending: the scheduler has not placed %s (%s). They have %s, and %s declared but not running: %s (%s)",
				anSubj(len(rs), what, what+"s", "is", "are"), anPlural(len(pods), "pod", "pods"), anPendingCauses(pods, true), where,
				capacity, effect, anExamples(anReplicaNames(rs))),
			Hint: "this is a scheduling problem, not a label one: " + anSchedulingFix(pods, a.d.Namespace) + "; kubectl describe pod POD shows the scheduler's events"}, a.pol != nil)
	}
}
