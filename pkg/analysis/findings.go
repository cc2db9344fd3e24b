package analysis

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/behavior"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
)

// Finding ids. Each is documented in docs/findings.md (cause, what the router
// will do, how to check by hand, fix); the ids are stable and machine-readable.
const (
	// FindingPrefillDomainWithoutDecode: a domain value has ready prefill replicas
	// and no ready decode replica (error under required, warning under preferred).
	FindingPrefillDomainWithoutDecode = "PrefillDomainWithoutDecode"
	// FindingDecodeDomainWithoutPrefill: a domain value has ready decode replicas
	// and no ready prefill replica (warning).
	FindingDecodeDomainWithoutPrefill = "DecodeDomainWithoutPrefill"
	// FindingWorkerMissingDomain: prefill or decode replicas with no value for the
	// transfer domain (error under required, warning under preferred).
	FindingWorkerMissingDomain = "WorkerMissingDomain"
	// FindingTopologyLabelDrift: pod label ≠ node label, or published value ≠ pod
	// label (warning).
	FindingTopologyLabelDrift = "TopologyLabelDrift"
	// FindingEnforcementMissing: a worker publishes a transfer domain without an
	// enforcement (error for prefill workers, warning for others).
	FindingEnforcementMissing = "EnforcementMissing"
	// FindingTransferDomainNotPublished: kv_transfer_domain is not a key of the
	// worker's topology_domains (error).
	FindingTransferDomainNotPublished = "TransferDomainNotPublished"
	// FindingPolicyMismatch: workers disagree with the DGD policy or, without a
	// policy, with each other (error).
	FindingPolicyMismatch = "PolicyMismatch"
	// FindingTopologyObjectMissing: the Grove topology object the policy names is
	// absent or lacks the domain (error; warning when it could not be read).
	FindingTopologyObjectMissing = "TopologyObjectMissing"
	// FindingRouterNotKV: the router mode is known and is not kv (warning).
	FindingRouterNotKV = "RouterNotKV"
	// FindingSingleDecodeInDomain: exactly one ready decode replica in a domain
	// value with ready prefill (warning under required, info under preferred).
	FindingSingleDecodeInDomain = "SingleDecodeInDomain"
	// FindingCapacitySkew: a domain value's P:D ratio is off the deployment's by
	// more than the skew factor (warning).
	FindingCapacitySkew = "CapacitySkew"
	// FindingTopologyLabelMissingEvent: TopologyLabelMissing events (warning).
	FindingTopologyLabelMissingEvent = "TopologyLabelMissingEvent"
	// FindingTopologyLabelNotCopied: a scheduled worker pod whose node has the
	// label but the pod has not got it (warning).
	FindingTopologyLabelNotCopied = "TopologyLabelNotCopied"
	// FindingInvalidWorkerTopology: routecore.ValidateTopology rejects a published
	// runtime config (error).
	FindingInvalidWorkerTopology = "InvalidWorkerTopology"
	// FindingPolicyWithoutTopologyEnv: policy set but a worker pod lacks the
	// operator-injected env or annotation (warning).
	FindingPolicyWithoutTopologyEnv = "PolicyWithoutTopologyEnv"
	// FindingTopologyLevelsUnavailable: the DGD condition TopologyLevelsAvailable is
	// False (warning).
	FindingTopologyLevelsUnavailable = "TopologyLevelsUnavailable"
	// FindingWorkerRoleUnknown: worker replicas whose role could not be decided and
	// which are therefore not counted (warning).
	FindingWorkerRoleUnknown = "WorkerRoleUnknown"
	// FindingNotReadyWorkers: worker replicas that are not ready (info).
	FindingNotReadyWorkers = "NotReadyWorkers"
	// FindingWorkerRolesUndecided: worker pods exist but no signal says any of them
	// prefills or decodes (error under a transfer policy, else warning).
	FindingWorkerRolesUndecided = "WorkerRolesUndecided"
	// FindingWorkerPodsMissing: the DGD declares worker components but none of their
	// pods exists (error under a transfer policy, else warning).
	FindingWorkerPodsMissing = "WorkerPodsMissing"
	// FindingWorkerPodsPending: worker pods the scheduler has not placed, with its
	// reason (error when no decode capacity runs at all, else warning).
	FindingWorkerPodsPending = "WorkerPodsPending"
)

// TopologyFindingIDs returns every finding id AnalyzeTopology can report, sorted.
func TopologyFindingIDs() []string {
	ids := []string{
		FindingPrefillDomainWithoutDecode, FindingDecodeDomainWithoutPrefill, FindingWorkerMissingDomain,
		FindingTopologyLabelDrift, FindingEnforcementMissing, FindingTransferDomainNotPublished,
		FindingPolicyMismatch, FindingTopologyObjectMissing, FindingRouterNotKV, FindingSingleDecodeInDomain,
		FindingCapacitySkew, FindingTopologyLabelMissingEvent, FindingTopologyLabelNotCopied,
		FindingInvalidWorkerTopology, FindingPolicyWithoutTopologyEnv, FindingTopologyLevelsUnavailable,
		FindingWorkerRoleUnknown, FindingNotReadyWorkers,
		FindingWorkerRolesUndecided, FindingWorkerPodsMissing, FindingWorkerPodsPending,
		FindingModelNotReady, FindingWorkersNotRegistered, FindingMixedDynamoReleases, FindingNoDecodeWorkers,
	}
	slices.Sort(ids)
	return ids
}

func anItoa(n int) string { return strconv.Itoa(n) }

// anFmtRatio prints a ratio with up to three significant digits.
func anFmtRatio(v float64) string { return strconv.FormatFloat(v, 'g', 3, 64) }

// anSubj returns "1 <one> <verbOne>" or "n <many> <verbMany>": a counted subject
// with its verb in agreement.
func anSubj(n int, one, many, verbOne, verbMany string) string {
	if n == 1 {
		return "1 " + one + " " + verbOne
	}
	return anItoa(n) + " " + many + " " + verbMany
}

// anPlural returns "1 thing" or "n things".
func anPlural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return anItoa(n) + " " + many
}

// check runs every check on the deployment.
func (a *anAnalysis) check() {
	a.checkTopologyObject()
	a.checkRouterMode()
	a.checkConditions()
	a.checkTopologyWiring()
	a.checkDrift()
	a.checkPolicyMismatch()
	a.checkPublished()
	a.checkMissingDomain()
	a.checkCapacity()
	a.checkEvents()
	a.checkRolesAndReadiness()
	a.checkPending()
	a.checkUnclassified()
	a.checkBehavior()
}

// required reports whether the policy's enforcement is required (the CRD default).
func (a *anAnalysis) required() bool {
	return a.pol != nil && a.pol.Enforcement != routecore.EnforcementPreferred
}

// enforcedRequired reports whether a required policy is enforced at the
// decode pick: required, and the decode hop honours the constraint (kv).
func (a *anAnalysis) enforcedRequired() bool {
	return a.required() && a.rd.Decode.Constraint != behavior.ConstraintIgnored
}

func (a *anAnalysis) enforcement() string {
	if a.required() {
		return string(routecore.EnforcementRequired)
	}
	return string(routecore.EnforcementPreferred)
}

// bySeverity returns error under required and warning under preferred.
func (a *anAnalysis) bySeverity() model.Severity {
	if a.required() {
		return model.SeverityError
	}
	return model.SeverityWarning
}

// dv names a domain value for messages ("zone us-east-1a"); kv for hints
// ("zone=us-east-1a").
func (a *anAnalysis) dv(v string) string { return a.domainName() + " " + v }
func (a *anAnalysis) kv(v string) string { return a.domainName() + "=" + v }

// taint is the routing taint of a domain value.
func (a *anAnalysis) taint(v string) string { return routecore.TopologyTaint(a.domainName(), v) }

// dgdObject is the deployment as an affected object.
func (a *anAnalysis) dgdObject() string { return "dynamographdeployment/" + a.d.Name }

// annotationKey is the topology annotation the operator puts on worker pods.
func (a *anAnalysis) annotationKey() (key, want string) {
	if a.pol.Mode == model.PolicyClusterTopologyName {
		return "nvidia.com/topology-cluster-topology-name", a.pol.ClusterTopologyName
	}
	return "nvidia.com/topology-label-key", a.pol.LabelKey
}

// unreadable reports whether a note says the named topology object (or topology
// objects in general) could not be read.
func (a *anAnalysis) unreadable(name string) bool {
	for _, n := range a.notes {
		if n.Deployment != "" && n.Deployment != a.d.Key() {
			continue
		}
		m := strings.ToLower(n.Message)
		if strings.Contains(m, "clustertopolog") || (name != "" && strings.Contains(m, strings.ToLower(name))) {
			return true
		}
	}
	return false
}

// checkTopologyObject: TopologyObjectMissing.
func (a *anAnalysis) checkTopologyObject() {
	p := a.pol
	if p == nil || p.Mode != model.PolicyClusterTopologyName {
		return
	}
	t := a.d.Topology
	kind := "ClusterTopologyBinding"
	if t != nil && t.Kind != "" {
		kind = t.Kind
	}
	name := p.ClusterTopologyName
	if t != nil && t.Name != "" {
		name = t.Name
	}
	objects := []string{a.dgdObject(), strings.ToLower(kind) + "/" + name}
	if t == nil || !t.Found {
		if a.unreadable(name) {
			a.add(model.Finding{ID: FindingTopologyObjectMissing, Severity: model.SeverityWarning, Objects: objects,
				Message: fmt.Sprintf("the kvTransferPolicy names %s %q, which could not be read (see notes): cannot check that it exists and has the level %q", kind, name, p.Domain),
				Hint:    fmt.Sprintf("grant get on %s (grove.io) or check by hand: kubectl get %s.grove.io %s -o yaml", anPlural2(kind), anPlural2(kind), name)}, false)
			return
		}
		a.add(model.Finding{ID: FindingTopologyObjectMissing, Severity: model.SeverityError, Objects: objects,
			Message: fmt.Sprintf("the kvTransferPolicy names %s %q, which does not exist: the operator cannot resolve %s to a node label, so new worker pods get no %s label and their workers exit at startup waiting for /etc/dynamo/topology/%s", kind, name, p.Domain, p.PodLabelKey, p.Domain),
			Hint:    fmt.Sprintf("create %s %s with a level for %s (Grove's topology CRD), then recreate the worker pods", kind, name, p.Domain)}, false)
		return
	}
	var levels []string
	for _, l := range t.Levels {
		if l.Domain == p.Domain {
			return
		}
		levels = append(levels, l.Domain)
	}
	a.add(model.Finding{ID: FindingTopologyObjectMissing, Severity: model.SeverityError, Objects: objects,
		Message: fmt.Sprintf("%s %q has no level %q (levels: %s): the operator cannot map the transfer domain to a node label, so pods rendered now fail with `domain %q does not exist` and get no topology", kind, name, p.Domain, anOrNone(levels), p.Domain),
		Hint:    fmt.Sprintf("add a level with domain %s to %s %s, or recreate the DGD with a domain among: %s", p.Domain, kind, name, anOrNone(levels))}, false)
}

func anPlural2(kind string) string { return strings.ToLower(kind) + "s" }

func anOrNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// checkRouterMode: RouterNotKV. Only the decode hop reads the transfer
// constraint; its mode (the frontend's, or the decode worker set's own
// router_config, pkg/behavior) decides whether the policy is honoured.
func (a *anAnalysis) checkRouterMode() {
	if a.pol == nil {
		return
	}
	h := a.rd.Decode
	if h.Constraint != behavior.ConstraintIgnored {
		return
	}
	var objs []string
	if h.Override != nil {
		for i := range a.d.Workers {
			if a.d.Workers[i].Component == h.Override.Component {
				objs = append(objs, "pod/"+a.d.Workers[i].Pod)
			}
		}
	} else {
		for _, f := range a.d.Frontends {
			objs = append(objs, "pod/"+f.Pod)
		}
	}
	if len(objs) == 0 {
		objs = []string{a.dgdObject()}
	}
	hint := "run the frontend with --router-mode kv (or DYN_ROUTER_MODE=kv)"
	if h.Override != nil {
		hint = fmt.Sprintf("set the decode worker set's router mode to kv (component %s: %s)", h.Override.Component, h.Override.Source)
	}
	a.add(model.Finding{ID: FindingRouterNotKV, Severity: model.SeverityWarning, Objects: objs,
		Message: fmt.Sprintf("the decode hop routes in %s mode (from %s), not kv: the prefill router still derives the decode constraint from the prefill worker it picks (a request still fails when that prefill worker publishes a constraint that cannot be derived, e.g. no value for the domain), but the %s decode pick does not read routing constraints, so decode workers are picked without regard to %s and the KV transfer may cross it", h.Mode, h.ModeSource, h.Mode, a.domainName()),
		Hint:    hint}, false)
}

// checkConditions: TopologyLevelsUnavailable.
func (a *anAnalysis) checkConditions() {
	for _, c := range a.d.Conditions {
		if c.Type != "TopologyLevelsAvailable" || !strings.EqualFold(c.Status, "False") {
			continue
		}
		why := c.Reason
		if c.Message != "" {
			why = strings.TrimSpace(why + ": " + c.Message)
		}
		a.add(model.Finding{ID: FindingTopologyLevelsUnavailable, Severity: model.SeverityWarning, Objects: []string{a.dgdObject()},
			Message: fmt.Sprintf("the DGD reports TopologyLevelsAvailable=False (%s): topology levels it relies on are gone from the topology object, so pods rendered now cannot get their topology labels", why),
			Hint:    "restore the missing levels in the Grove topology object, or recreate the DGD against levels that exist"}, false)
	}
}

// anTruthy mirrors the runtime's DYN_TOPOLOGY_ENABLED parsing (Python accepts
// "true" only; the Rust twin also 1/on/yes).
func anTruthy(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "1", "yes", "on":
		return true
	}
	return false
}

// workersByValue iterates every worker pod with the router value of its replica.
func (a *anAnalysis) workersByValue(fn func(w *model.Worker, r *anReplica)) {
	for _, r := range a.replicas {
		for _, w := range r.pods {
			fn(w, r)
		}
	}
}

// checkTopologyWiring: PolicyWithoutTopologyEnv and TopologyLabelNotCopied.
func (a *anAnalysis) checkTopologyWiring() {
	p := a.pol
	if p == nil {
		return
	}
	annKey, _ := a.annotationKey()
	var noEnv, noAnn []*model.Worker
	notCopied := map[string][]*model.Worker{}
	a.workersByValue(func(w *model.Worker, r *anReplica) {
		if w.Domain.Published != "" && w.Domain.PublishedDomain == p.Domain {
			return // it published the domain: its wiring worked
		}
		switch {
		case !anTruthy(w.TopologyEnv.Enabled) || strings.TrimSpace(w.TopologyEnv.TransferDomain) == "":
			noEnv = append(noEnv, w)
		case w.LabelKeyAnnotation == "":
			noAnn = append(noAnn, w)
		case w.Node != "" && w.Domain.Pod == "" && w.Domain.Published == "" && w.Domain.Node != "":
			notCopied[w.Domain.Node] = append(notCopied[w.Domain.Node], w)
		}
	})
	if len(noEnv) > 0 {
		a.add(model.Finding{ID: FindingPolicyWithoutTopologyEnv, Severity: model.SeverityWarning, Objects: anPodObjects(noEnv),
			Message: fmt.Sprintf("%s the operator-injected topology environment (DYN_TOPOLOGY_ENABLED=true, DYN_KV_TRANSFER_DOMAIN=%s) although the DGD sets a kvTransferPolicy: they will not publish a %s, so the router treats them as workers without one (%s)",
				anSubj(len(noEnv), "worker pod", "worker pods", "lacks", "lack"), p.Domain, p.Domain, anExamples(anPodNames(noEnv))),
			Hint: "recreate the pods with a Dynamo operator that supports kvTransferPolicy (kubectl get pod POD -o jsonpath='{.spec.containers[0].env}')"}, false)
	}
	if len(noAnn) > 0 {
		a.add(model.Finding{ID: FindingPolicyWithoutTopologyEnv, Severity: model.SeverityWarning, Objects: anPodObjects(noAnn),
			Message: fmt.Sprintf("%s the %s annotation: the operator's topology-label controller skips them, so %s is never copied, /etc/dynamo/topology/%s stays empty and the worker exits after 30 s (%s)",
				anSubj(len(noAnn), "worker pod", "worker pods", "lacks", "lack"), annKey, p.PodLabelKey, p.Domain, anExamples(anPodNames(noAnn))),
			Hint: fmt.Sprintf("recreate the pods with an operator that sets %s (kubectl get pod POD -o jsonpath='{.metadata.annotations}')", annKey)}, false)
	}
	for _, v := range anSortedKeys(notCopied) {
		ws := notCopied[v]
		objs := anPodObjects(ws)
		for _, w := range ws {
			objs = append(objs, "node/"+w.Node)
		}
		a.add(model.Finding{ID: FindingTopologyLabelNotCopied, Severity: model.SeverityWarning, Domain: v, Objects: objs,
			Message: fmt.Sprintf("%s no %s pod label although its node is labelled %s: the operator's topology-label controller has not copied it, so the worker waits for /etc/dynamo/topology/%s and exits after 30 s instead of registering (%s)",
				anSubj(len(ws), "scheduled worker pod", "scheduled worker pods", "has", "have"), p.PodLabelKey, a.kv(v), p.Domain, anExamples(anPodNames(ws))),
			Hint: "check the Dynamo operator's topology-label controller: its logs, and its RBAC to get nodes and patch pods"}, true)
	}
}

func anPodNames(ws []*model.Worker) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.Pod
	}
	return out
}

// checkDrift: TopologyLabelDrift.
func (a *anAnalysis) checkDrift() {
	p := a.pol
	if p == nil {
		return
	}
	type drift struct {
		ws  []*model.Worker
		ex  []string
		obj []string
	}
	nodeDrift, pubDrift := map[string]*drift{}, map[string]*drift{}
	get := func(m map[string]*drift, v string) *drift {
		if m[v] == nil {
			m[v] = &drift{}
		}
		return m[v]
	}
	a.workersByValue(func(w *model.Worker, r *anReplica) {
		d := w.Domain
		if d.Pod != "" && d.Node != "" && d.Pod != d.Node {
			g := get(nodeDrift, r.value)
			g.ws = append(g.ws, w)
			g.obj = append(g.obj, "pod/"+w.Pod, "node/"+w.Node)
			g.ex = append(g.ex, fmt.Sprintf("pod/%s: pod %s, node %s", w.Pod, d.Pod, d.Node))
		}
		if d.Published != "" && d.Pod != "" && d.Published != d.Pod {
			g := get(pubDrift, r.value)
			g.ws = append(g.ws, w)
			g.obj = append(g.obj, "pod/"+w.Pod)
			g.ex = append(g.ex, fmt.Sprintf("pod/%s: published %s, pod label %s", w.Pod, d.Published, d.Pod))
		}
	})
	for _, v := range anSortedKeys(nodeDrift) {
		g := nodeDrift[v]
		a.add(model.Finding{ID: FindingTopologyLabelDrift, Severity: model.SeverityWarning, Domain: v, Objects: g.obj,
			Message: fmt.Sprintf("%s on nodes whose %s label no longer matches the pod's (%s): the runtime read the value at startup, so the router keeps treating them as %s",
				anSubj(len(g.ws), "worker pod", "worker pods", "runs", "run"), anNodeKey(p), anExamples(g.ex), a.dv(v)),
			Hint: "restore the node labels, or delete the pods so that new ones copy the current node label (labels are copied once)"}, true)
	}
	for _, v := range anSortedKeys(pubDrift) {
		g := pubDrift[v]
		a.add(model.Finding{ID: FindingTopologyLabelDrift, Severity: model.SeverityWarning, Domain: v, Objects: g.obj,
			Message: fmt.Sprintf("%s a %s value that differs from the %s pod label (%s): the router uses the published value",
				anSubj(len(g.ws), "worker", "workers", "published", "published"), p.Domain, p.PodLabelKey, anExamples(g.ex)),
			Hint: "restart the workers so they re-read /etc/dynamo/topology, or fix the pod label"}, true)
	}
}

// anNodeKey returns the node label key the policy copies from, or the pod label
// key when the node key is unknown (e.g. the topology object is missing).
func anNodeKey(p *model.TransferPolicy) string {
	if p.NodeLabelKey != "" {
		return p.NodeLabelKey
	}
	return p.PodLabelKey
}

// anGroup accumulates objects for one finding while a check walks the workers.
type anGroup struct {
	key     string
	domain  string
	n       int
	objects []string
	ex      []string
}

// anGroups keeps groups in first-seen order, looked up by key.
type anGroups struct {
	order []*anGroup
	byKey map[string]*anGroup
}

func (g *anGroups) get(key, domain string) *anGroup {
	if g.byKey == nil {
		g.byKey = map[string]*anGroup{}
	}
	k := key + "\x00" + domain
	if x := g.byKey[k]; x != nil {
		return x
	}
	x := &anGroup{key: key, domain: domain}
	g.byKey[k] = x
	g.order = append(g.order, x)
	return x
}

func (g *anGroup) addReplica(r *anReplica) {
	g.n++
	g.objects = append(g.objects, "pod/"+r.leader.Pod)
	g.ex = append(g.ex, r.leader.Pod)
}

func (g *anGroup) addPod(w *model.Worker) {
	g.n++
	g.objects = append(g.objects, "pod/"+w.Pod)
	g.ex = append(g.ex, w.Pod)
}

func anF32eq(a, b float64) bool { return float32(a) == float32(b) }

func anFmtWeight(w *float64) string {
	if w == nil {
		return "none"
	}
	return strconv.FormatFloat(float64(float32(*w)), 'g', -1, 32)
}

// checkPolicyMismatch: PolicyMismatch.
func (a *anAnalysis) checkPolicyMismatch() {
	if a.pol == nil {
		a.checkWorkerAgreement()
		return
	}
	p := a.pol
	want := a.enforcement()
	var gs anGroups
	type text struct{ one, many, rest string }
	msgs := map[string]text{}
	hints := map[string]string{}
	// note records the message of a group: the verb in both numbers and the rest.
	note := func(key, one, many, rest, hint string) {
		if _, ok := msgs[key]; !ok {
			msgs[key], hints[key] = text{one, many, rest}, hint
		}
	}
	restart := "the operator derives worker settings from the DGD policy: recreate the worker pods (kubectl delete pod …) so they start with the policy's values"
	for _, r := range a.replicas {
		var seen map[string]bool
		for _, in := range r.cards {
			rc := &in.Runtime
			var keys []string
			switch {
			case rc.KvTransferDomain != "" && rc.KvTransferDomain != p.Domain:
				k := "pub-domain/" + rc.KvTransferDomain
				note(k, "publishes", "publish", fmt.Sprintf("kv_transfer_domain %q but the DGD policy says %q: the router derives their decode constraints from %q", rc.KvTransferDomain, p.Domain, rc.KvTransferDomain), restart)
				keys = append(keys, k)
			case rc.KvTransferDomain == "" && len(rc.TopologyDomains) > 0:
				k := "pub-domain-none"
				note(k, "publishes", "publish", fmt.Sprintf("topology_domains but no kv_transfer_domain although the DGD policy sets %q: the router derives no decode constraint from them, so KV transfers they prefill may cross %ss", p.Domain, p.Domain), restart)
				keys = append(keys, k)
			}
			if e := string(rc.KvTransferEnforcement); e != "" && e != want {
				k := "pub-enf/" + e
				effect := "decode is restricted to their own " + p.Domain
				if e == string(routecore.EnforcementPreferred) {
					effect = "decode is only biased towards their own " + p.Domain
				}
				note(k, "publishes", "publish", fmt.Sprintf("kv_transfer_enforcement %s but the DGD policy says %s: the router follows the published value, so %s", e, want, effect), restart)
				keys = append(keys, k)
			}
			if rc.KvTransferEnforcement == routecore.EnforcementPreferred && want == string(routecore.EnforcementPreferred) &&
				rc.KvTransferPreferredWeight != nil && p.PreferredWeight != nil && !anF32eq(*rc.KvTransferPreferredWeight, *p.PreferredWeight) {
				k := "pub-weight/" + anFmtWeight(rc.KvTransferPreferredWeight)
				note(k, "publishes", "publish", fmt.Sprintf("kv_transfer_preferred_weight %s but the DGD policy says %s: the router uses the published weight", anFmtWeight(rc.KvTransferPreferredWeight), anFmtWeight(p.PreferredWeight)), restart)
				keys = append(keys, k)
			}
			for _, k := range keys {
				if seen == nil {
					seen = map[string]bool{}
				}
				if !seen[k] {
					seen[k] = true
					gs.get(k, "").addReplica(r)
				}
			}
		}
	}
	annKey, annWant := a.annotationKey()
	a.workersByValue(func(w *model.Worker, r *anReplica) {
		env := w.TopologyEnv
		if v := strings.TrimSpace(env.TransferDomain); v != "" && v != p.Domain {
			k := "env-domain/" + v
			note(k, "has", "have", fmt.Sprintf("DYN_KV_TRANSFER_DOMAIN=%s but the DGD policy says %s: they publish %s as their transfer domain", v, p.Domain, v), restart)
			gs.get(k, "").addPod(w)
		}
		if v := strings.TrimSpace(env.Enforcement); v != "" && v != want {
			k := "env-enf/" + v
			note(k, "has", "have", fmt.Sprintf("DYN_KV_TRANSFER_ENFORCEMENT=%s but the DGD policy says %s: they publish %s", v, want, v), restart)
			gs.get(k, "").addPod(w)
		}
		if v := strings.TrimSpace(env.PreferredWeight); v != "" {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || p.PreferredWeight == nil || !anF32eq(f, *p.PreferredWeight) {
				k := "env-weight/" + v
				note(k, "has", "have", fmt.Sprintf("DYN_KV_TRANSFER_PREFERRED_WEIGHT=%s but the DGD policy's weight is %s: they publish a different weight (or fail to start)", v, anFmtWeight(p.PreferredWeight)), restart)
				gs.get(k, "").addPod(w)
			}
		}
		if v := w.LabelKeyAnnotation; v != "" && annWant != "" && v != annWant {
			k := "ann/" + v
			note(k, "carries", "carry", fmt.Sprintf("%s=%s but the DGD policy names %s: the topology-label controller copies the wrong label", annKey, v, annWant), restart)
			gs.get(k, "").addPod(w)
		}
	})
	for _, g := range gs.order {
		a.add(model.Finding{ID: FindingPolicyMismatch, Severity: model.SeverityError, Objects: g.objects,
			Message: fmt.Sprintf("%s %s (%s)", anSubj(g.n, "worker", "workers", msgs[g.key].one, msgs[g.key].many), msgs[g.key].rest, anExamples(g.ex)),
			Hint:    hints[g.key]}, false)
	}
}

// checkWorkerAgreement is PolicyMismatch without a DGD policy: prefill and decode
// workers that publish different KV-transfer settings.
func (a *anAnalysis) checkWorkerAgreement() {
	type tuple struct {
		n    int
		objs []string
	}
	settings := map[string]*tuple{}
	anyDomain := false
	for _, r := range a.replicas {
		if (r.role != model.RolePrefill && r.role != model.RoleDecode) || !r.published() {
			continue
		}
		rc := &r.cards[0].Runtime
		s := "none"
		if rc.KvTransferDomain != "" || rc.KvTransferEnforcement != "" {
			anyDomain = true
			s = rc.KvTransferDomain + "/" + string(rc.KvTransferEnforcement)
			if rc.KvTransferPreferredWeight != nil {
				s += "/" + anFmtWeight(rc.KvTransferPreferredWeight)
			}
		}
		t := settings[s]
		if t == nil {
			t = &tuple{}
			settings[s] = t
		}
		t.n++
		t.objs = append(t.objs, "pod/"+r.leader.Pod)
	}
	if len(settings) < 2 || !anyDomain {
		return
	}
	var parts, objs []string
	for _, s := range anSortedKeys(settings) {
		parts = append(parts, fmt.Sprintf("%d × %s", settings[s].n, s))
		objs = append(objs, settings[s].objs...)
	}
	a.add(model.Finding{ID: FindingPolicyMismatch, Severity: model.SeverityError, Objects: objs,
		Message: fmt.Sprintf("workers publish different KV-transfer settings (%s) and the DGD sets no kvTransferPolicy: the router derives each request's decode constraint from whichever prefill worker it picked, so placement depends on the worker", strings.Join(parts, ", ")),
		Hint:    "set spec.experimental.kvTransferPolicy on the DGD so the operator configures every worker alike, or remove the DYN_KV_TRANSFER_* env from the workers"}, false)
}

// anValidationMemo caches validationMessages by the topology fields of a runtime
// config: workers of a deployment publish few distinct combinations.
type anValidationMemo map[string][]string

func (m anValidationMemo) messages(rc *routecore.RuntimeConfig) []string {
	var b strings.Builder
	for _, k := range anSortedKeys(rc.TopologyDomains) {
		b.WriteString(k)
		b.WriteByte(0)
		b.WriteString(rc.TopologyDomains[k])
		b.WriteByte(0)
	}
	b.WriteByte(1)
	b.WriteString(rc.KvTransferDomain)
	b.WriteByte(0)
	b.WriteString(string(rc.KvTransferEnforcement))
	b.WriteByte(0)
	if w := rc.KvTransferPreferredWeight; w != nil {
		b.WriteString(strconv.FormatFloat(*w, 'g', -1, 64))
	}
	b.WriteByte(0)
	b.WriteString(strconv.FormatUint(uint64(rc.DataParallelStartRank), 10))
	b.WriteByte(0)
	b.WriteString(strconv.FormatUint(uint64(rc.DataParallelSize), 10))
	b.WriteString(strconv.FormatBool(rc.DataParallelSizeSet))
	key := b.String()
	if msgs, ok := m[key]; ok {
		return msgs
	}
	msgs := behavior.RegistrationErrors(*rc)
	m[key] = msgs
	return msgs
}

// checkPublished: EnforcementMissing, TransferDomainNotPublished and
// InvalidWorkerTopology, from the published runtime configs (with or without a
// policy).
func (a *anAnalysis) checkPublished() {
	var enf, notPub, invalid anGroups
	memo := anValidationMemo{}
	for _, r := range a.replicas {
		var seen map[string]bool
		once := func(gs *anGroups, key, domain string) {
			if seen == nil {
				seen = map[string]bool{}
			}
			if k := key + "\x00" + domain; !seen[k] {
				seen[k] = true
				gs.get(key, domain).addReplica(r)
			}
		}
		for _, in := range r.cards {
			rc := in.Runtime
			var err error
			if rc.KvTransferDomain != "" {
				// Only configs that can fail are handed to routecore, which
				// formats an explanation for every call.
				if _, ok := rc.TopologyDomains[rc.KvTransferDomain]; !ok || rc.KvTransferEnforcement == routecore.EnforcementNone {
					_, err = routecore.TransferConstraintFor(in.ID, rc)
				}
			}
			switch {
			case errors.Is(err, routecore.ErrTransferDomainNotInTopology):
				once(&notPub, rc.KvTransferDomain, r.value)
			case errors.Is(err, routecore.ErrEnforcementMissing):
				key := "other"
				if r.role == model.RolePrefill {
					key = "prefill"
				}
				once(&enf, key+"\x00"+rc.KvTransferDomain, r.value)
			}
			if msgs := memo.messages(&rc); len(msgs) > 0 {
				once(&invalid, strings.Join(msgs, "; "), r.value)
			}
		}
	}
	for _, g := range notPub.order {
		a.add(model.Finding{ID: FindingTransferDomainNotPublished, Severity: model.SeverityError, Domain: g.domain, Objects: g.objects,
			Message: fmt.Sprintf("%s kv_transfer_domain %q but no topology_domains.%s: the router fails every request prefilled on such a worker (kv_transfer_domain not in topology_domains) (%s)",
				anSubj(g.n, "worker", "workers", "publishes", "publish"), g.key, g.key, anExamples(g.ex)),
			Hint: fmt.Sprintf("make sure /etc/dynamo/topology/%s is projected and non-empty on those pods (kubectl exec POD -- ls /etc/dynamo/topology), then restart them", g.key)}, true)
	}
	for _, g := range enf.order {
		role, domain, _ := strings.Cut(g.key, "\x00")
		f := model.Finding{ID: FindingEnforcementMissing, Domain: g.domain, Objects: g.objects,
			Hint: "set DYN_KV_TRANSFER_ENFORCEMENT to required or preferred (the operator does this for DGDs with a kvTransferPolicy) and restart the workers"}
		if role == "prefill" {
			f.Severity = model.SeverityError
			f.Message = fmt.Sprintf("%s kv_transfer_domain %q without kv_transfer_enforcement: the router fails every request it prefills on them (kv_transfer_enforcement is missing) (%s)",
				anSubj(g.n, "prefill worker", "prefill workers", "publishes", "publish"), domain, anExamples(g.ex))
		} else {
			f.Severity = model.SeverityWarning
			f.Message = fmt.Sprintf("%s kv_transfer_domain %q without kv_transfer_enforcement: the frontend ignores a decode worker's enforcement, but decode-anchored routing paths fail on it (%s)",
				anSubj(g.n, "non-prefill worker", "non-prefill workers", "publishes", "publish"), domain, anExamples(g.ex))
		}
		a.add(f, true)
	}
	for _, g := range invalid.order {
		a.add(model.Finding{ID: FindingInvalidWorkerTopology, Severity: model.SeverityError, Domain: g.domain, Objects: g.objects,
			Message: fmt.Sprintf("%s a runtime config that Dynamo's validator rejects (%s): the worker cannot register it, and the router fails requests whose decode constraint it cannot derive (%s)",
				anSubj(g.n, "worker", "workers", "publishes", "publish"), g.key, anExamples(g.ex)),
			Hint: "fix the worker's DYN_KV_TRANSFER_* environment and topology files (normally set by the operator from the DGD kvTransferPolicy) and restart it"}, true)
	}
}

// checkMissingDomain: WorkerMissingDomain.
func (a *anAnalysis) checkMissingDomain() {
	p := a.pol
	if p == nil {
		return
	}
	var prefill, decode []*anReplica
	for _, r := range a.replicas {
		if r.value != "" || r.unscheduled() {
			continue // an unscheduled replica has no value because it has no node: WorkerPodsPending
		}
		switch r.role {
		case model.RolePrefill:
			prefill = append(prefill, r)
		case model.RoleDecode:
			decode = append(decode, r)
		}
	}
	hint := fmt.Sprintf("make sure the nodes carry %s and the pods the %s label (kubectl get pods -L %s), then restart the workers so they publish topology_domains.%s", anNodeKey(p), p.PodLabelKey, p.PodLabelKey, p.Domain)
	if len(prefill) > 0 {
		a.add(model.Finding{ID: FindingWorkerMissingDomain, Severity: a.bySeverity(), Objects: anLeaderObjects(prefill),
			Message: fmt.Sprintf("%s no %s value: the router derives no decode constraint for requests they prefill, so those KV transfers may cross %ss and the %s policy is bypassed (%s)",
				anSubj(len(prefill), "prefill replica", "prefill replicas", "has", "have"), p.Domain, p.Domain, a.enforcement(), anExamples(anReplicaNames(prefill))),
			Hint: hint}, true)
	}
	if len(decode) > 0 {
		msg := fmt.Sprintf("%s no %s value: under required enforcement they carry no %s taint and are never chosen for requests prefilled in a %s, so their capacity is unused (%s)",
			anSubj(len(decode), "decode replica", "decode replicas", "has", "have"), p.Domain, routecore.TopologyTaintPrefix+p.Domain, p.Domain, anExamples(anReplicaNames(decode)))
		if !a.required() {
			msg = fmt.Sprintf("%s no %s value: under preferred enforcement they never get the same-%s preference (%s)",
				anSubj(len(decode), "decode replica", "decode replicas", "has", "have"), p.Domain, p.Domain, anExamples(anReplicaNames(decode)))
		}
		a.add(model.Finding{ID: FindingWorkerMissingDomain, Severity: a.bySeverity(), Objects: anLeaderObjects(decode), Message: msg, Hint: hint}, true)
	}
}

func anReplicaNames(rs []*anReplica) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.leader.Pod
	}
	return out
}

// prefillMode is how the router derives decode constraints for requests
// prefilled on a replica: from its published runtime config when it published
// one, else from the policy it will publish.
func (a *anAnalysis) prefillMode(r *anReplica) routecore.KvTransferEnforcement {
	if !r.published() {
		return routecore.KvTransferEnforcement(a.enforcement())
	}
	rc := &r.cards[0].Runtime
	if rc.KvTransferDomain == "" {
		return "unconstrained"
	}
	if _, ok := rc.TopologyDomains[rc.KvTransferDomain]; !ok {
		return "failing"
	}
	return rc.KvTransferEnforcement
}

// domainObjects lists the leader pods of a domain value's replicas of a role
// (ready ones only when readyOnly).
func (a *anAnalysis) domainObjects(v string, readyOnly bool, roles ...model.Role) []string {
	var out []string
	for _, r := range a.replicas {
		if r.value == v && slices.Contains(roles, r.role) && (r.ready || !readyOnly) {
			out = append(out, "pod/"+r.leader.Pod)
		}
	}
	return out
}

// checkCapacity: PrefillDomainWithoutDecode, DecodeDomainWithoutPrefill,
// SingleDecodeInDomain and CapacitySkew, per domain value.
func (a *anAnalysis) checkCapacity() {
	p := a.pol
	if p == nil {
		return
	}
	anyPrefill := false
	for _, dom := range a.domains {
		anyPrefill = anyPrefill || dom.Prefill.Ready > 0
	}
	dep := a.deploymentRatio()
	for _, dom := range a.domains {
		v := dom.Value
		if v == "" {
			continue // reported as WorkerMissingDomain
		}
		pr, dc := dom.Prefill.Ready, dom.Decode.Ready
		if pr > 0 && dc == 0 {
			a.checkPrefillWithoutDecode(dom)
		}
		if dc > 0 && pr == 0 && anyPrefill {
			effect := fmt.Sprintf("under required enforcement the router sends them only requests prefilled in %s, so this decode capacity stays idle", a.dv(v))
			if a.rd.Decode.Constraint == behavior.ConstraintIgnored {
				effect = fmt.Sprintf("the decode hop routes in %s mode and ignores the constraint, so they serve requests prefilled anywhere and every transfer to them crosses %ss", a.rd.Decode.Mode, p.Domain)
			} else if !a.required() {
				effect = fmt.Sprintf("under preferred enforcement they never get a same-%s transfer and serve only cross-%s ones", p.Domain, p.Domain)
			}
			hint := fmt.Sprintf("add prefill capacity in %s, or move these decode replicas to a %s with prefill", a.kv(v), p.Domain)
			objs := a.domainObjects(v, false, model.RolePrefill, model.RoleDecode)
			if f := a.pendingFix(model.RolePrefill, v); f != "" {
				hint = f + fmt.Sprintf("; or move these decode replicas to a %s with prefill", p.Domain)
				objs = append(objs, anLeaderObjects(a.unscheduledOf(model.RolePrefill))...)
			}
			a.add(model.Finding{ID: FindingDecodeDomainWithoutPrefill, Severity: model.SeverityWarning, Domain: v, Objects: objs,
				Message: anUntilThen(fmt.Sprintf("%s has %d ready decode and 0 ready prefill replicas", a.dv(v), dc), a.pendingClause(model.RolePrefill), effect),
				Hint:    hint}, true)
		}
		if dc == 1 && pr > 0 {
			f := model.Finding{ID: FindingSingleDecodeInDomain, Domain: v, Objects: a.domainObjects(v, true, model.RoleDecode),
				Hint: fmt.Sprintf("run at least two decode replicas in %s", a.kv(v))}
			if a.enforcedRequired() {
				f.Severity = model.SeverityWarning
				f.Message = fmt.Sprintf("%s has 1 ready decode replica for %d ready prefill: if it fails or drains, required enforcement fails every request prefilled in %s (no cross-%s failover)", a.dv(v), pr, a.dv(v), p.Domain)
			} else {
				f.Severity = model.SeverityInfo
				why := "preferred enforcement"
				if a.required() {
					why = fmt.Sprintf("the decode hop routes in %s mode and ignores the required constraint", a.rd.Decode.Mode)
				}
				f.Message = fmt.Sprintf("%s has 1 ready decode replica for %d ready prefill: if it fails or drains, requests prefilled there decode in another %s (%s)", a.dv(v), pr, p.Domain, why)
			}
			a.add(f, true)
		}
		if pr > 0 && dc > 0 && dep != nil && *dep > 0 {
			r := float64(pr) / float64(dc)
			if r/(*dep) > a.skew || (*dep)/r > a.skew {
				effect := fmt.Sprintf("decode is short there: each decode replica takes the transfers of %s prefill replicas", anFmtRatio(r))
				if a.enforcedRequired() {
					effect += fmt.Sprintf(", and required enforcement cannot move the excess to another %s", p.Domain)
				}
				if r < *dep {
					effect = "decode is in excess there"
					if a.enforcedRequired() {
						effect += fmt.Sprintf(": required enforcement only sends it requests prefilled in the same %s, so part of it sits idle", p.Domain)
					}
				}
				a.add(model.Finding{ID: FindingCapacitySkew, Severity: model.SeverityWarning, Domain: v,
					Objects: a.domainObjects(v, true, model.RolePrefill, model.RoleDecode),
					Message: fmt.Sprintf("%s has a P:D ratio of %s (%d:%d ready replicas) against %s deployment-wide, more than %s× off: %s",
						a.dv(v), anFmtRatio(r), pr, dc, anFmtRatio(*dep), anFmtRatio(a.skew), effect),
					Hint: fmt.Sprintf("rebalance prefill and decode replicas so that each %s's P:D ratio is near %s", p.Domain, anFmtRatio(*dep))}, true)
			}
		}
	}
}

// anUntilThen joins a domain's counts, a pending clause and the router's effect:
// "<counts>: <effect>", or "<counts>. <clause> Until then, <effect>".
func anUntilThen(counts, clause, effect string) string {
	if clause == "" {
		return counts + ": " + effect
	}
	return counts + "." + clause + " Until then, " + effect
}

// checkPrefillWithoutDecode: PrefillDomainWithoutDecode for one domain value.
func (a *anAnalysis) checkPrefillWithoutDecode(dom model.DomainReport) {
	v := dom.Value
	var req, pref int
	for _, r := range a.replicas {
		if r.value != v || r.role != model.RolePrefill || !r.ready {
			continue
		}
		switch a.prefillMode(r) {
		case routecore.EnforcementRequired:
			req++
		case routecore.EnforcementPreferred:
			pref++
		}
	}
	notReady := ""
	if n := dom.Decode.Total - dom.Decode.Ready; n > 0 {
		notReady = fmt.Sprintf(" (%d not ready)", n)
	}
	head := fmt.Sprintf("%s has %d ready prefill and 0 ready decode replicas%s", a.dv(v), dom.Prefill.Ready, notReady)
	clause := a.pendingClause(model.RoleDecode)
	objs := a.domainObjects(v, false, model.RolePrefill, model.RoleDecode)
	fixReq := fmt.Sprintf("add decode capacity in %s or set kvTransferPolicy.enforcement: preferred with a preferredWeight", a.kv(v))
	fixPref := fmt.Sprintf("add decode capacity in %s", a.kv(v))
	if f := a.pendingFix(model.RoleDecode, v); f != "" {
		fixReq, fixPref = f+"; or set kvTransferPolicy.enforcement: preferred with a preferredWeight", f
		objs = append(objs, anLeaderObjects(a.unscheduledOf(model.RoleDecode))...)
	}
	ignored := a.rd.Decode.Constraint == behavior.ConstraintIgnored
	switch {
	case req > 0 && !ignored:
		a.add(model.Finding{ID: FindingPrefillDomainWithoutDecode, Severity: model.SeverityError, Domain: v, Objects: objs,
			Message: anUntilThen(head, clause, fmt.Sprintf("under required enforcement every request prefilled there fails with NoEndpoints, because no ready decode worker carries %s", a.taint(v))),
			Hint:    fixReq}, true)
	case a.noLiveDecode():
		// No decode instance anywhere: no mode or enforcement finds one.
		outcome := "so every request prefilled there fails at the decode hop (no decode instance) whatever the enforcement and router mode"
		if !a.rd.Readiness.Ready {
			outcome = "so the frontend refuses every request before routing it (ModelNotReady) whatever the enforcement and router mode"
		}
		a.add(model.Finding{ID: FindingPrefillDomainWithoutDecode, Severity: model.SeverityError, Domain: v, Objects: objs,
			Message: anUntilThen(head, clause, "no decode worker is live anywhere in the deployment either, "+outcome),
			Hint:    fixPref}, true)
	case req > 0:
		a.add(model.Finding{ID: FindingPrefillDomainWithoutDecode, Severity: model.SeverityWarning, Domain: v, Objects: objs,
			Message: anUntilThen(head, clause, fmt.Sprintf("the decode hop routes in %s mode, which ignores the required constraint (RouterNotKV): requests prefilled there do not fail but decode in another %s, so every such KV transfer crosses %ss", a.rd.Decode.Mode, a.domainName(), a.domainName())),
			Hint:    fixPref}, true)
	case pref > 0:
		a.add(model.Finding{ID: FindingPrefillDomainWithoutDecode, Severity: model.SeverityWarning, Domain: v, Objects: objs,
			Message: anUntilThen(head, clause, fmt.Sprintf("under preferred enforcement requests prefilled there decode in another %s, so every such KV transfer crosses %ss", a.domainName(), a.domainName())),
			Hint:    fixPref}, true)
	}
}

// anEventObject normalizes an event's involved object to kind/name.
func anEventObject(o string) string {
	if kind, name, ok := strings.Cut(o, "/"); ok {
		return strings.ToLower(kind) + "/" + name
	}
	return "pod/" + o
}

// checkEvents: TopologyLabelMissingEvent.
func (a *anAnalysis) checkEvents() {
	var objs []string
	count := 0
	latest := ""
	for _, e := range a.d.Events {
		if e.Reason != "TopologyLabelMissing" {
			continue
		}
		objs = append(objs, anEventObject(e.Object))
		count += max(int(e.Count), 1)
		latest = e.Message
	}
	if len(objs) == 0 {
		return
	}
	what := "topology value"
	if a.pol != nil {
		what = a.pol.PodLabelKey + " label"
	}
	a.add(model.Finding{ID: FindingTopologyLabelMissingEvent, Severity: model.SeverityWarning, Objects: objs,
		Message: fmt.Sprintf("%s about %s (latest: %q): their nodes lack the topology label, so the pods get no %s and their workers exit after 30 s waiting for it",
			anPlural(count, "TopologyLabelMissing event", "TopologyLabelMissing events"), anPlural(len(anSortedUnique(objs)), "object", "objects"), latest, what),
		Hint: "label the nodes (kubectl label node NODE KEY=VALUE) or keep the workers off unlabelled nodes; list them with kubectl get events --field-selector reason=TopologyLabelMissing"}, false)
}

// checkRolesAndReadiness: WorkerRoleUnknown and NotReadyWorkers.
func (a *anAnalysis) checkRolesAndReadiness() {
	var unknown, notReady []*anReplica
	var pods []string
	total, pending := 0, 0
	byRole := map[model.Role]int{}
	for _, r := range a.replicas {
		switch r.role {
		case model.RoleUnknown:
			unknown = append(unknown, r)
			continue
		case model.RoleEncode:
			continue
		}
		total++
		if len(r.pending) > 0 {
			pending++ // WorkerPodsPending says why
			continue
		}
		if !r.ready && !r.unregistered {
			notReady = append(notReady, r)
			byRole[r.role]++
			for _, w := range r.pods {
				if !w.Ready {
					pods = append(pods, "pod/"+w.Pod)
				}
			}
		}
	}
	if len(unknown) > 0 {
		a.add(model.Finding{ID: FindingWorkerRoleUnknown, Severity: model.SeverityWarning, Objects: anLeaderObjects(unknown),
			Message: fmt.Sprintf("the role of %s could not be decided (no card worker_type, component-type label or --disaggregation-mode arg): they are not counted as prefill or decode capacity (%s)",
				anPlural(len(unknown), "worker replica", "worker replicas"), anExamples(anReplicaNames(unknown))),
			Hint: "set the component type (prefill/decode) in the DGD, or pass --disaggregation-mode to the engine"}, false)
	}
	if len(notReady) > 0 {
		var parts []string
		for _, role := range []model.Role{model.RolePrefill, model.RoleDecode, model.RoleAggregated} {
			if n := byRole[role]; n > 0 {
				parts = append(parts, fmt.Sprintf("%s %d", role, n))
			}
		}
		more := ""
		if pending > 0 {
			more = fmt.Sprintf("; %d more %s Pending (WorkerPodsPending)", pending, map[bool]string{true: "is", false: "are"}[pending == 1])
		}
		a.add(model.Finding{ID: FindingNotReadyWorkers, Severity: model.SeverityInfo, Objects: pods,
			Message: fmt.Sprintf("%d of %d worker replicas are not ready (%s): the router does not route to them and they are not counted as ready capacity (%s)%s",
				len(notReady), total, strings.Join(parts, ", "), anExamples(anReplicaNames(notReady)), more),
			Hint: "kubectl describe pod POD (and the worker's logs) to see why it is not ready"}, false)
	}
}
