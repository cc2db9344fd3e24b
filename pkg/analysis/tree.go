package analysis

import (
	"slices"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
)

// HostnameLabel is the well-known node label holding the node's host name.
const HostnameLabel = "kubernetes.io/hostname"

// wellKnownLevels are the node labels AnalyzeTopology uses, broadest first, to
// build the topology tree when the deployment has no Grove topology object (or it
// has no levels). For each level the first key present on any of the
// deployment's worker nodes is used; levels with no key present are left out.
var wellKnownLevels = []struct {
	// Domain is the level's name (region, zone, …).
	Domain string
	// Keys are candidate node labels for the level, in order of preference.
	Keys []string
}{
	{"region", []string{"topology.kubernetes.io/region"}},
	{"zone", []string{"topology.kubernetes.io/zone", "topology.k8s.aws/zone-id"}},
	{"block", []string{"cloud.google.com/gce-topology-block", "oci.oraclecloud.com/host.network_block_id", "kubernetes.io/block"}},
	{"subblock", []string{"cloud.google.com/gce-topology-subblock"}},
	{"rack", []string{"nvidia.com/rack", "topology.kubernetes.io/rack", "kubernetes.io/rack", "oci.oraclecloud.com/host.rack_id"}},
	{"nvlink", []string{"nvidia.com/gpu.clique", "network.topology.nvidia.com/accelerator", "topology.k8s.aws/ultraserver-id"}},
	{"host", []string{HostnameLabel}},
}

// wellKnownKeys is the set of wellKnownLevels keys.
var wellKnownKeys = func() map[string]bool {
	m := map[string]bool{}
	for _, l := range wellKnownLevels {
		for _, k := range l.Keys {
			m[k] = true
		}
	}
	return m
}()

// anTreeLevels returns the tree's levels: the Grove topology object's when it was
// found with levels, else the well-known labels present on the workers' nodes,
// plus the policy's own label key (before host) when it is not one of them.
func anTreeLevels(d *model.Deployment) []model.TopologyLevel {
	if t := d.Topology; t != nil && t.Found && len(t.Levels) > 0 {
		return slices.Clone(t.Levels)
	}
	present := map[string]bool{}
	policyValues := false
	for i := range d.Workers {
		w := &d.Workers[i]
		for k := range w.NodeLabels {
			if wellKnownKeys[k] || (d.Policy != nil && k == d.Policy.NodeLabelKey) {
				present[k] = true
			}
		}
		if w.Node != "" {
			present[HostnameLabel] = true
		}
		policyValues = policyValues || w.Domain.Node != "" || w.Domain.Pod != ""
	}
	withPolicy := d.Policy != nil && (present[d.Policy.NodeLabelKey] || policyValues)
	var out []model.TopologyLevel
	used := map[string]bool{}
	for _, l := range wellKnownLevels {
		for _, k := range l.Keys {
			if present[k] {
				if l.Domain == "host" {
					out = anAppendPolicyLevel(out, d.Policy, used, withPolicy)
				}
				domain := l.Domain
				if d.Policy != nil && k == d.Policy.NodeLabelKey && d.Policy.Domain != "" {
					// The deployment names this level itself (e.g. rack for
					// nvidia.com/gpu.clique): use its name.
					domain = d.Policy.Domain
				}
				out = append(out, model.TopologyLevel{Domain: domain, NodeLabelKey: k})
				used[k] = true
				break
			}
		}
	}
	if len(out) == 0 || out[len(out)-1].Domain != "host" {
		out = anAppendPolicyLevel(out, d.Policy, used, withPolicy)
	}
	return out
}

// anAppendPolicyLevel adds the policy's label key as a level named after the policy
// domain when it is not already a level.
func anAppendPolicyLevel(out []model.TopologyLevel, p *model.TransferPolicy, used map[string]bool, ok bool) []model.TopologyLevel {
	if !ok || p == nil || p.NodeLabelKey == "" || used[p.NodeLabelKey] {
		return out
	}
	used[p.NodeLabelKey] = true
	return append(out, model.TopologyLevel{Domain: p.Domain, NodeLabelKey: p.NodeLabelKey})
}

// anLevelValue is a worker's value at one level: its node's label, falling back to
// the node name for the host label and to the copied transfer-domain value for
// the policy's own label.
func anLevelValue(w *model.Worker, l model.TopologyLevel, p *model.TransferPolicy) string {
	if v := w.NodeLabels[l.NodeLabelKey]; v != "" {
		return v
	}
	switch {
	case l.NodeLabelKey == HostnameLabel:
		return w.Node
	case p != nil && (l.NodeLabelKey == p.NodeLabelKey || l.Domain == p.Domain):
		if w.Domain.Node != "" {
			return w.Domain.Node
		}
		return w.Domain.Pod
	}
	return ""
}

// anTreeBuilder is a TreeNode with its children by value while the tree is built.
type anTreeBuilder struct {
	node     *model.TreeNode
	children map[string]*anTreeBuilder
}

// anBuildTree places every prefill and decode replica (by its leader's node) in the
// hierarchy and sums capacity at each level. It returns nil when no level is
// known. Replicas are counted as in DomainReport; pod names are listed at the
// leaves only.
func anBuildTree(d *model.Deployment, reps []*anReplica) *model.TreeNode {
	levels := anTreeLevels(d)
	if len(levels) == 0 {
		return nil
	}
	root := &anTreeBuilder{node: &model.TreeNode{}, children: map[string]*anTreeBuilder{}}
	for _, r := range reps {
		if r.role != model.RolePrefill && r.role != model.RoleDecode {
			continue
		}
		cur := root
		anAddTreeReplica(cur.node, r, false)
		for i, l := range levels {
			v := anLevelValue(r.leader, l, d.Policy)
			next := cur.children[v]
			if next == nil {
				next = &anTreeBuilder{node: &model.TreeNode{Domain: l.Domain, Value: v}, children: map[string]*anTreeBuilder{}}
				cur.children[v] = next
			}
			cur = next
			anAddTreeReplica(cur.node, r, i == len(levels)-1)
		}
	}
	return anFinishTree(root)
}

func anAddTreeReplica(n *model.TreeNode, r *anReplica, leaf bool) {
	if r.role == model.RolePrefill {
		anAddReplica(&n.Prefill, r, leaf)
	} else {
		anAddReplica(&n.Decode, r, leaf)
	}
}

func anFinishTree(b *anTreeBuilder) *model.TreeNode {
	slices.Sort(b.node.Prefill.Workers)
	slices.Sort(b.node.Decode.Workers)
	for _, v := range anSortedKeys(b.children) {
		b.node.Children = append(b.node.Children, anFinishTree(b.children[v]))
	}
	return b.node
}
