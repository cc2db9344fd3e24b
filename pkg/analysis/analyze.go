package analysis

import (
	"math"
	"slices"
	"strings"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/behavior"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
)

// ReportAPIVersion and ReportKind identify a Report in JSON and YAML output.
const (
	ReportAPIVersion = "kubectl-dynamo.io/v1alpha1"
	ReportKind       = "TopologyReport"
)

// DefaultSkewFactor is the CapacitySkew threshold used when
// AnalyzeOptions.SkewFactor is zero, negative or not a finite number.
const DefaultSkewFactor = 2.0

// AnalyzeTopology turns a Snapshot into the topology Report: per deployment the capacity
// of each value of the transfer domain (in replicas; a multinode replica counts
// once and is ready only when all its pods are), the prefill:decode ratios, the
// topology tree and the findings (see docs/findings.md), sorted by severity
// (most severe first), then namespace, deployment, id and domain value.
//
// AnalyzeTopology is pure and deterministic: it reads only s and opts, never the clock or
// any I/O, does not modify s, and returns equal reports for equal inputs. A nil
// Snapshot yields an empty report.
func AnalyzeTopology(s *model.Snapshot, opts AnalyzeOptions) *model.Report {
	r := &model.Report{
		APIVersion:  ReportAPIVersion,
		Kind:        ReportKind,
		Deployments: []model.DeploymentReport{},
		Findings:    []model.Finding{},
	}
	if s == nil {
		return r
	}
	r.Context, r.Namespace = s.Context, s.Namespace
	r.Sources = slices.Clone(s.Sources)
	r.Notes = slices.Clone(s.Notes)
	skew := opts.SkewFactor
	if !(skew > 0) || math.IsInf(skew, 0) {
		skew = DefaultSkewFactor
	}
	for i := range s.Deployments {
		a := anNewAnalysis(&s.Deployments[i], s.Notes, skew)
		a.rd = readDeployment(s, &s.Deployments[i], opts.DynamoVersion)
		r.Deployments = append(r.Deployments, a.run())
		r.Findings = append(r.Findings, a.findings...)
	}
	model.SortFindings(r.Findings)
	return r
}

// anReplica is one serving replica: a single-node worker pod, or the pods of one
// multinode replica (leader first).
type anReplica struct {
	leader *model.Worker
	pods   []*model.Worker
	role   model.Role
	ready  bool
	gpus   int64
	// value is the transfer-domain value the router sees for the replica ("" when
	// it has none, and always "" without a policy).
	value string
	// cards are the leader's (and any pod's) published instances that carry a model
	// card, one per instance id.
	cards []*model.Instance
	// pending are the replica's pods the scheduler has not placed (leader first).
	pending []*model.Worker
	// kvTokens is the KV capacity in tokens of the published instances.
	kvTokens uint64
	// loadActive/loadBlocks are active decode blocks and total KV blocks over the
	// dp ranks whose load is known; hasLoad says whether any is.
	loadActive, loadBlocks uint64
	hasLoad                bool
	// unregistered marks a replica whose pods run but which published no
	// Dynamo instance while discovery was read: the router does not know it,
	// so it is not counted ready.
	unregistered bool
}

// readDeployment reads d at the release the deployment runs (or the
// --dynamo-version override; an invalid one is the command's to refuse, and
// reads as detected here).
func readDeployment(s *model.Snapshot, d *model.Deployment, override string) *behavior.Reading {
	rd, err := behavior.ReadDeployment(s, d, override)
	if err != nil {
		rd, _ = behavior.ReadDeployment(s, d, "")
	}
	return rd
}

// published reports whether the replica published a model card (runtime config).
func (r *anReplica) published() bool { return len(r.cards) > 0 }

// unscheduled reports whether the replica's leader has no node: it has no domain
// value because it runs nowhere yet, not because a label is missing.
func (r *anReplica) unscheduled() bool { return r.leader.Pending != nil }

// anHasCard reports whether an instance carries model-card data (as opposed to a
// bare endpoint registration).
func anHasCard(in *model.Instance) bool {
	rc := &in.Runtime
	return in.WorkerType != "" || in.BlockSize > 0 || rc.TotalKvBlocks != nil || rc.MaxNumSeqs != nil ||
		rc.MaxNumBatchedTokens != nil || len(rc.TopologyDomains) > 0 || rc.KvTransferDomain != "" ||
		rc.KvTransferEnforcement != "" || rc.KvTransferPreferredWeight != nil || len(rc.Taints) > 0
}

// anAnalysis is the per-deployment state of AnalyzeTopology.
type anAnalysis struct {
	d *model.Deployment
	// rd is how Dynamo treats the deployment at its release (pkg/behavior).
	rd       *behavior.Reading
	pol      *model.TransferPolicy
	notes    []model.Note
	skew     float64
	replicas []*anReplica
	// domains are the domain reports, sorted by value.
	domains  []model.DomainReport
	findings []model.Finding
	// scoped marks the findings (by index) that flag their domain row.
	scoped map[int]bool
}

func anNewAnalysis(d *model.Deployment, notes []model.Note, skew float64) *anAnalysis {
	return &anAnalysis{d: d, pol: d.Policy, notes: notes, skew: skew, scoped: map[int]bool{}}
}

// domainName is the policy's domain ("domain" without a policy).
func (a *anAnalysis) domainName() string {
	if a.pol != nil && a.pol.Domain != "" {
		return a.pol.Domain
	}
	return "domain"
}

func (a *anAnalysis) run() model.DeploymentReport {
	d := a.d
	dr := model.DeploymentReport{Name: d.Name, Namespace: d.Namespace, RouterMode: d.Router.Mode, RoutingQuality: d.RoutingQuality,
		Dynamo: a.rd.Release.Model()}
	if p := a.pol; p != nil {
		dr.Policy = &model.PolicySummary{
			Domain: p.Domain, Enforcement: string(p.Enforcement), Mode: string(p.Mode),
			LabelKey: p.LabelKey, ClusterTopologyName: p.ClusterTopologyName,
		}
		if p.PreferredWeight != nil {
			w := *p.PreferredWeight
			dr.Policy.PreferredWeight = &w
		}
	}
	a.replicas = anBuildReplicas(d.Workers, a.pol != nil)
	for _, r := range a.replicas {
		// The router serves from registered workers only: a ready pod that
		// published no instance (discovery read) is not capacity. A pod that
		// is not ready stays NotReadyWorkers' (it cannot have registered).
		if st, ok := a.rd.State(r.leader.Pod); ok && r.ready && (st.Registered == behavior.NotRegistered || st.Registered == behavior.Rejected) {
			r.ready, r.unregistered = false, true
		}
	}
	a.domains = a.buildDomains()
	dr.PrefillToDecode = a.deploymentRatio()
	dr.Tree = anBuildTree(d, a.replicas)
	dr.Workers = anWorkerReports(a.replicas)
	dr.NotDeployed = NotDeployed(d)

	a.check()

	for i := range a.domains {
		dom := &a.domains[i]
		for j, f := range a.findings {
			if a.scoped[j] && f.Domain == dom.Value && !slices.Contains(dom.Flags, f.ID) {
				dom.Flags = append(dom.Flags, f.ID)
			}
		}
		slices.Sort(dom.Flags)
	}
	dr.Domains = a.domains
	return dr
}

// anBuildReplicas groups a deployment's worker pods (sorted by pod name) into
// replicas, in order of their first pod.
func anBuildReplicas(workers []model.Worker, withPolicy bool) []*anReplica {
	var out []*anReplica
	idx := make(map[string]int, len(workers))
	for i := range workers {
		w := &workers[i]
		key := w.Replica
		if key == "" {
			key = w.Pod
		}
		j, ok := idx[key]
		if !ok {
			j = len(out)
			idx[key] = j
			out = append(out, &anReplica{})
		}
		out[j].pods = append(out[j].pods, w)
	}
	for _, r := range out {
		r.leader = r.pods[0]
		for _, p := range r.pods {
			if p.Leader {
				r.leader = p
				break
			}
		}
		r.role = r.leader.Role
		if r.role == "" {
			r.role = model.RoleUnknown
		}
		r.ready = true
		for _, p := range r.pods {
			r.ready = r.ready && p.Ready
			r.gpus += p.GPUs
		}
		if r.leader.Pending != nil {
			r.pending = append(r.pending, r.leader)
		}
		for _, p := range r.pods {
			if p != r.leader && p.Pending != nil {
				r.pending = append(r.pending, p)
			}
		}
		r.cards = anDistinctCards(r)
		if withPolicy {
			r.value = anRouterValue(r.leader, r.published())
		}
		for _, in := range r.cards {
			rc := &in.Runtime
			if rc.TotalKvBlocks == nil {
				continue
			}
			ranks := uint64(rc.DpSize())
			r.kvTokens = anSatAdd(r.kvTokens, anSatMul(anSatMul(*rc.TotalKvBlocks, uint64(max(in.BlockSize, 0))), ranks))
			if *rc.TotalKvBlocks == 0 {
				continue
			}
			for _, l := range in.Load {
				r.hasLoad = true
				r.loadActive = anSatAdd(r.loadActive, l.ActiveDecodeBlocks)
				r.loadBlocks = anSatAdd(r.loadBlocks, *rc.TotalKvBlocks)
			}
		}
	}
	return out
}

// anWorkerReports lists the replicas with their roles and the signals behind them.
func anWorkerReports(rs []*anReplica) []model.WorkerReport {
	out := make([]model.WorkerReport, 0, len(rs))
	for _, r := range rs {
		wr := model.WorkerReport{Leader: r.leader.Pod, Component: r.leader.Component, Role: r.role, RoleSignal: r.leader.RoleSignal,
			Pods: []string{r.leader.Pod}, Ready: r.ready, Unregistered: r.unregistered, GPUs: r.gpus, Value: r.value}
		if len(r.pending) > 0 {
			pp := *r.pending[0].Pending
			wr.Pending = &pp
		}
		for _, p := range r.pods {
			if p != r.leader {
				wr.Pods = append(wr.Pods, p.Pod)
			}
		}
		out = append(out, wr)
	}
	return out
}

// anRouterValue is the transfer-domain value the router will see for a worker: the
// published topology_domains value once the worker published its runtime config
// (even when that is empty: the router then sees no value), else the value it
// will publish (the pod label, else the node label it is copied from).
func anRouterValue(w *model.Worker, published bool) string {
	if published {
		return w.Domain.Published
	}
	return w.Domain.Effective()
}

// anDistinctCards returns the replica's instances that carry a model card, one per
// instance id (the first seen), the leader's first.
func anDistinctCards(r *anReplica) []*model.Instance {
	var out []*model.Instance
	add := func(w *model.Worker) {
		for i := range w.Instances {
			in := &w.Instances[i]
			if !anHasCard(in) || slices.ContainsFunc(out, func(o *model.Instance) bool { return o.ID == in.ID }) {
				continue
			}
			out = append(out, in)
		}
	}
	add(r.leader)
	for _, p := range r.pods {
		if p != r.leader {
			add(p)
		}
	}
	return out
}

func anSatAdd(a, b uint64) uint64 {
	if s := a + b; s >= a {
		return s
	}
	return math.MaxUint64
}

func anSatMul(a, b uint64) uint64 {
	if a == 0 || b == 0 {
		return 0
	}
	if a > math.MaxUint64/b {
		return math.MaxUint64
	}
	return a * b
}

// anCapacity returns the role capacity slot of a domain report (nil for roles that
// are not counted: encode and unknown).
func anCapacity(dom *model.DomainReport, role model.Role) *model.RoleCapacity {
	switch role {
	case model.RolePrefill:
		return &dom.Prefill
	case model.RoleDecode:
		return &dom.Decode
	case model.RoleAggregated:
		return &dom.Aggregated
	}
	return nil
}

// anAddReplica counts one replica into a role capacity.
func anAddReplica(c *model.RoleCapacity, r *anReplica, withWorkers bool) {
	c.Total++
	c.GPUs += r.gpus
	if len(r.pending) > 0 {
		c.Pending++
	}
	if r.ready {
		c.Ready++
		c.KvTokens = anSatAdd(c.KvTokens, r.kvTokens)
	}
	if withWorkers {
		c.Workers = append(c.Workers, r.leader.Pod)
	}
}

// buildDomains computes one DomainReport per transfer-domain value (sorted; ""
// first), or a single "" entry without a policy.
func (a *anAnalysis) buildDomains() []model.DomainReport {
	byValue := map[string]*model.DomainReport{}
	if a.pol == nil {
		byValue[""] = &model.DomainReport{}
	}
	type load struct{ active, blocks uint64 }
	loads := map[string]*load{}
	for _, r := range a.replicas {
		if r.role != model.RolePrefill && r.role != model.RoleDecode && r.role != model.RoleAggregated {
			continue
		}
		dom := byValue[r.value]
		if dom == nil {
			dom = &model.DomainReport{Value: r.value}
			byValue[r.value] = dom
		}
		anAddReplica(anCapacity(dom, r.role), r, true)
		if r.role == model.RoleDecode && r.ready && r.hasLoad {
			l := loads[r.value]
			if l == nil {
				l = &load{}
				loads[r.value] = l
			}
			l.active = anSatAdd(l.active, r.loadActive)
			l.blocks = anSatAdd(l.blocks, r.loadBlocks)
		}
	}
	out := make([]model.DomainReport, 0, len(byValue))
	for _, v := range anSortedKeys(byValue) {
		dom := *byValue[v]
		dom.Value = v
		for _, c := range []*model.RoleCapacity{&dom.Prefill, &dom.Decode, &dom.Aggregated} {
			slices.Sort(c.Workers)
		}
		dom.PrefillToDecode = anRatio(dom.Prefill.Ready, dom.Decode.Ready)
		if l := loads[v]; l != nil && l.blocks > 0 {
			p := float64(l.active) / float64(l.blocks) * 100
			dom.DecodeLoadPercent = &p
		}
		out = append(out, dom)
	}
	return out
}

// deploymentRatio is ready prefill over ready decode replicas, deployment-wide.
func (a *anAnalysis) deploymentRatio() *float64 {
	var p, d int
	for _, dom := range a.domains {
		p += dom.Prefill.Ready
		d += dom.Decode.Ready
	}
	return anRatio(p, d)
}

// anRatio returns p/d, or nil when d is 0.
func anRatio(p, d int) *float64 {
	if d == 0 {
		return nil
	}
	v := float64(p) / float64(d)
	return &v
}

func anSortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// add records a finding for this deployment; scoped findings flag the domain row
// whose value is f.Domain.
func (a *anAnalysis) add(f model.Finding, scoped bool) {
	f.Deployment, f.Namespace = a.d.Name, a.d.Namespace
	f.Objects = anSortedUnique(f.Objects)
	if scoped {
		a.scoped[len(a.findings)] = true
	}
	a.findings = append(a.findings, f)
}

func anSortedUnique(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	s = slices.Clone(s)
	slices.Sort(s)
	return slices.Compact(s)
}

// anPodObjects returns pod/<name> for each pod.
func anPodObjects(ws []*model.Worker) []string {
	out := make([]string, 0, len(ws))
	for _, w := range ws {
		out = append(out, "pod/"+w.Pod)
	}
	return out
}

// anLeaderObjects returns pod/<leader> for each replica.
func anLeaderObjects(rs []*anReplica) []string {
	out := make([]string, 0, len(rs))
	for _, r := range rs {
		out = append(out, "pod/"+r.leader.Pod)
	}
	return out
}

// anExamples joins up to three items and says how many more there are.
func anExamples(items []string) string {
	items = anSortedUnique(items)
	if len(items) <= 3 {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:3], ", ") + ", … (" + anItoa(len(items)-3) + " more)"
}
