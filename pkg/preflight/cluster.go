package preflight

import (
	"cmp"
	"encoding/json"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw"
)

// Cluster is what preflight knows of the cluster: its nodes with their free
// GPUs, and the Grove topology objects.
type Cluster struct {
	// Source says where it came from (kubernetes or capture).
	Source model.SourceStatus
	Nodes  []*Node
	// Topologies are the Grove ClusterTopologyBinding / ClusterTopology objects.
	Topologies []*unstructured.Unstructured
	// TopologiesKnown is false when the topology objects could not be read (a
	// policy naming one is then not checked against it).
	TopologiesKnown bool
	// GroveServed is false when neither Grove topology CRD is served.
	GroveServed bool
	// PodsKnown is false when the pods could not be read: requested GPUs are
	// then unknown and counted as zero.
	PodsKnown bool
	// NodesComplete is false when Nodes may be only some of the cluster's (a
	// kubectl dynamo capture holds the nodes its deployments' pods ran on): a
	// finding that rests on a node being absent is then possible, not certain.
	NodesComplete bool
	Notes         []model.Note
}

// Node is a node as the scheduler sees it for GPU pods.
type Node struct {
	Name          string
	Labels        map[string]string
	Taints        []corev1.Taint
	Unschedulable bool
	// Allocatable and Requested count nvidia.com/gpu.
	Allocatable int64
	Requested   int64
	// planned is what this prediction placed on it.
	planned int64
}

// Free is the allocatable GPUs not yet requested.
func (n *Node) Free() int64 { return max(0, n.Allocatable-n.Requested-n.planned) }

// NewCluster builds a Cluster from Nodes, Pods and Grove topology objects (as
// read live or from a capture). Pods bound to a node and not finished count as
// requesting their nvidia.com/gpu; pods of the deployments in exclude
// ("namespace/name") do not, since applying the manifest replaces them.
func NewCluster(objs []*unstructured.Unstructured, exclude []string) *Cluster {
	c := &Cluster{PodsKnown: true, TopologiesKnown: true, GroveServed: true, NodesComplete: true}
	skip := map[string]bool{}
	for _, k := range exclude {
		skip[k] = true
	}
	byName := map[string]*Node{}
	var pods []*corev1.Pod
	for _, u := range objs {
		switch {
		case u.GetKind() == "Node" && u.GetAPIVersion() == "v1":
			var n corev1.Node
			if convert(u, &n) != nil {
				continue
			}
			node := &Node{Name: n.Name, Labels: n.Labels, Taints: n.Spec.Taints, Unschedulable: n.Spec.Unschedulable}
			if q, ok := n.Status.Allocatable[gpuResource]; ok {
				node.Allocatable = q.Value()
			}
			if node.Labels == nil {
				node.Labels = map[string]string{}
			}
			byName[n.Name] = node
			c.Nodes = append(c.Nodes, node)
		case u.GetKind() == "Pod" && u.GetAPIVersion() == "v1":
			var p corev1.Pod
			if convert(u, &p) != nil {
				continue
			}
			if skip[p.Namespace+"/"+p.Labels[labelDGD]] {
				continue
			}
			pods = append(pods, &p)
		case (u.GetKind() == "ClusterTopologyBinding" || u.GetKind() == "ClusterTopology") && bundleGroup(u.GetAPIVersion()) == "grove.io":
			c.Topologies = append(c.Topologies, u)
		}
	}
	for _, p := range pods {
		if p.Spec.NodeName == "" || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		if n := byName[p.Spec.NodeName]; n != nil {
			n.Requested += podGPURequest(&p.Spec)
		}
	}
	slices.SortFunc(c.Nodes, func(a, b *Node) int { return cmp.Compare(a.Name, b.Name) })
	return c
}

func bundleGroup(apiVersion string) string {
	for i := 0; i < len(apiVersion); i++ {
		if apiVersion[i] == '/' {
			return apiVersion[:i]
		}
	}
	return ""
}

func convert(u *unstructured.Unstructured, dst any) error {
	data, err := json.Marshal(u.Object)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, dst)
}

// summary sums the cluster for the report.
func (c *Cluster) summary() *ClusterSummary {
	s := &ClusterSummary{Source: string(c.Source.Kind), Nodes: len(c.Nodes), Partial: !c.NodesComplete}
	if c.Source.Kind == model.SourceCapture {
		s.Detail = c.Source.Detail
	}
	for _, n := range c.Nodes {
		if n.Allocatable > 0 {
			s.GPUNodes++
		}
		s.AllocatableGPUs += n.Allocatable
		s.RequestedGPUs += n.Requested
	}
	return s
}

// reset forgets what a previous prediction placed.
func (c *Cluster) reset() {
	for _, n := range c.Nodes {
		n.planned = 0
	}
}

// ClusterFrom builds a Cluster from a live read of the cluster (kube.ReadCluster):
// NewCluster over its objects, with what the read could not see.
func ClusterFrom(r *raw.ClusterObjects, exclude []string) *Cluster {
	objs := make([]*unstructured.Unstructured, len(r.Objects))
	for i, m := range r.Objects {
		objs[i] = &unstructured.Unstructured{Object: m}
	}
	c := NewCluster(objs, exclude)
	c.Source, c.Notes, c.PodsKnown, c.GroveServed, c.TopologiesKnown = r.Source, r.Notes, r.PodsKnown, r.GroveServed, r.TopologiesKnown
	return c
}
