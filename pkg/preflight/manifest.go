package preflight

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Manifest is one DynamoGraphDeployment read from a file.
type Manifest struct {
	Object *unstructured.Unstructured
	// Source names the file ("-" for stdin).
	Source string
	// Line is the 1-based line where the object starts in Source (0:
	// unknown); Fields maps field paths to the lines of their keys.
	Line   int
	Fields map[string]int
	// Existing is the DynamoGraphDeployment of the same namespace and name in
	// the cluster (read live, at the manifest's apiVersion), nil when there
	// is none; ExistingChecked says whether the cluster was asked.
	Existing        *unstructured.Unstructured
	ExistingChecked bool
}

// lineOf is the line of the field at path, or of its nearest parent the file
// shows, else of the object.
func (m *Manifest) lineOf(path string) int {
	for p := path; p != ""; {
		if l, ok := m.Fields[p]; ok {
			return l
		}
		i := strings.LastIndexAny(p, ".[")
		if i < 0 {
			break
		}
		p = p[:i]
	}
	return m.Line
}

// component is one DGD component as the scheduler will see its pods.
type component struct {
	name, ctype, subType string
	replicas             int32
	// nodes is the number of pods of one replica (multinode nodeCount, else 1).
	nodes     int32
	multinode bool
	pod       corev1.PodSpec
	// packDomain is the component's topologyConstraint.packDomain;
	// constrained is true when the component has a topologyConstraint at all
	// (an empty one included, which the schema rejects).
	packDomain  string
	constrained bool
	// grove is what decides the component's Grove names.
	grove groveShape
	// gpus is the pod's nvidia.com/gpu request.
	gpus int64
	// minAvailable is set in the manifest (Grove only); minAvailableN is its
	// value when it is a number; replicasSet says replicas was written.
	minAvailable  bool
	minAvailableN *int64
	replicasSet   bool
	// gms and failover are the GPU memory service and failover blocks when
	// they opt the component in (v1beta1: present; v1alpha1: enabled).
	gms      *gmsWire
	failover *failoverWire
	// forceScalingGroupSet: experimental.grove.forceScalingGroup is true.
	forceScalingGroupSet bool
	// epp is the eppConfig block as written (nil when absent); roles the
	// number of roles entries; providerOverride the component's and its
	// roles' providerOverride values.
	epp              map[string]any
	roles            int
	providerOverride []any
	// mainGPULimit is the main container's nvidia.com/gpu limit (-1: none).
	mainGPULimit int64
	// scalingAdapter: a DynamoGraphDeploymentScalingAdapter owns replicas
	// (v1beta1: the block is present; v1alpha1: enabled: true).
	scalingAdapter bool
	// path is the component's field path in the manifest.
	path string
}

// componentWire accepts the v1beta1 component and the v1alpha1 service.
type componentWire struct {
	Name             string `json:"name"`
	Type             string `json:"type"`
	ComponentType    string `json:"componentType"`
	SubComponentType string `json:"subComponentType"`
	Replicas         *int32 `json:"replicas"`
	Multinode        *struct {
		NodeCount *int32 `json:"nodeCount"`
	} `json:"multinode"`
	PodTemplate    *corev1.PodTemplateSpec `json:"podTemplate"`
	ExtraPodSpec   json.RawMessage         `json:"extraPodSpec"`
	Resources      *alphaResources         `json:"resources"`
	MinAvailable   json.RawMessage         `json:"minAvailable"`
	EPPConfig      map[string]any          `json:"eppConfig"`
	ScalingAdapter *struct {
		Enabled *bool `json:"enabled"`
	} `json:"scalingAdapter"`
	Roles []struct {
		ProviderOverride *struct {
			Value any `json:"value"`
		} `json:"providerOverride"`
	} `json:"roles"`
	ProviderOverride *struct {
		Value any `json:"value"`
	} `json:"providerOverride"`
	TopologyConstraint *struct {
		PackDomain string `json:"packDomain"`
	} `json:"topologyConstraint"`
	// Experimental is the v1beta1 component's experimental block.
	Experimental *struct {
		GPUMemoryService *gmsWire      `json:"gpuMemoryService"`
		Failover         *failoverWire `json:"failover"`
		Grove            *struct {
			ForceScalingGroup *bool `json:"forceScalingGroup"`
		} `json:"grove"`
	} `json:"experimental"`
	// GPUMemoryService and Failover are the v1alpha1 service's (with an
	// enabled flag).
	GPUMemoryService *gmsWire      `json:"gpuMemoryService"`
	Failover         *failoverWire `json:"failover"`
}

// gmsWire is a GPU memory service block: v1beta1 opts in by its presence,
// v1alpha1 by enabled: true. Modes are IntraPod/InterPod (older releases
// wrote intraPod/interPod; compared ignoring case).
type gmsWire struct {
	Enabled *bool  `json:"enabled"`
	Mode    string `json:"mode"`
}

// failoverWire is a failover block, shaped like gmsWire plus numShadows.
type failoverWire struct {
	Enabled    *bool  `json:"enabled"`
	Mode       string `json:"mode"`
	NumShadows int32  `json:"numShadows"`
}

// on reports whether a v1beta1 (present) or v1alpha1 (enabled: true) block
// opts the component in.
func (g *gmsWire) on(alpha bool) bool {
	return g != nil && (!alpha || g.Enabled != nil && *g.Enabled)
}

func (f *failoverWire) on(alpha bool) bool {
	return f != nil && (!alpha || f.Enabled != nil && *f.Enabled)
}

// interPod reports whether a mode names the inter-pod layout. The CRD
// defaults an empty mode to IntraPod.
func interPod(mode string) bool { return strings.EqualFold(mode, "InterPod") }

// alphaResources is the v1alpha1 resources block ({requests,limits}: {cpu,
// memory, gpu, custom}); gpu becomes nvidia.com/gpu on the main container.
type alphaResources struct {
	Requests *alphaResourceItem `json:"requests"`
	Limits   *alphaResourceItem `json:"limits"`
}

type alphaResourceItem struct {
	CPU    string            `json:"cpu"`
	Memory string            `json:"memory"`
	GPU    string            `json:"gpu"`
	Custom map[string]string `json:"custom"`
}

// alphaExtraPodSpec is the v1alpha1 extraPodSpec: a PodSpec inline plus the
// main container.
type alphaExtraPodSpec struct {
	corev1.PodSpec `json:",inline"`
	MainContainer  *corev1.Container `json:"mainContainer"`
}

const gpuResource corev1.ResourceName = "nvidia.com/gpu"

// components reads the DGD's components in manifest order (v1alpha1 services
// sorted by name). Parts that cannot be read into their shape go to bad.
func components(u *unstructured.Unstructured, bad func(path, msg string)) []*component {
	spec, _ := u.Object["spec"].(map[string]any)
	alpha := strings.HasSuffix(u.GetAPIVersion(), "/v1alpha1")
	var out []*component
	add := func(name, path string, raw any) {
		var w componentWire
		if raw != nil {
			data, _ := json.Marshal(raw)
			if err := json.Unmarshal(data, &w); err != nil {
				bad(path, decodeError(err))
				return
			}
		}
		c := &component{name: cmp.Or(name, w.Name), ctype: strings.ToLower(cmp.Or(w.Type, w.ComponentType)), subType: strings.ToLower(w.SubComponentType), replicas: 1, nodes: 1, path: path}
		if w.Replicas != nil {
			c.replicas = *w.Replicas
		}
		if w.Multinode != nil {
			c.multinode, c.nodes = true, 2
			if w.Multinode.NodeCount != nil {
				c.nodes = *w.Multinode.NodeCount
			}
		}
		c.minAvailable = len(w.MinAvailable) > 0 && string(w.MinAvailable) != "null"
		if n, err := strconv.ParseInt(string(w.MinAvailable), 10, 64); err == nil {
			c.minAvailableN = &n
		}
		c.replicasSet = w.Replicas != nil
		c.scalingAdapter = w.ScalingAdapter != nil && (!alpha || w.ScalingAdapter.Enabled != nil && *w.ScalingAdapter.Enabled)
		c.epp, c.roles = w.EPPConfig, len(w.Roles)
		if w.ProviderOverride != nil {
			c.providerOverride = append(c.providerOverride, w.ProviderOverride.Value)
		}
		for _, r := range w.Roles {
			if r.ProviderOverride != nil {
				c.providerOverride = append(c.providerOverride, r.ProviderOverride.Value)
			}
		}
		if w.TopologyConstraint != nil {
			c.packDomain, c.constrained = w.TopologyConstraint.PackDomain, true
		}
		c.grove = groveShapeOf(c, &w, alpha)
		if w.PodTemplate != nil {
			c.pod = *w.PodTemplate.Spec.DeepCopy()
		}
		if len(w.ExtraPodSpec) > 0 && string(w.ExtraPodSpec) != "null" {
			var x alphaExtraPodSpec
			if err := json.Unmarshal(w.ExtraPodSpec, &x); err != nil {
				bad(path+".extraPodSpec", decodeError(err))
			} else {
				c.pod = x.PodSpec
				if x.MainContainer != nil {
					main := *x.MainContainer
					main.Name = "main"
					c.pod.Containers = append([]corev1.Container{main}, slices.DeleteFunc(c.pod.Containers, func(k corev1.Container) bool { return k.Name == "main" })...)
				}
			}
		}
		if w.Resources != nil {
			applyAlphaResources(c, w.Resources, path, bad)
		}
		c.gpus = podGPURequest(&c.pod)
		c.mainGPULimit = -1
		for i := range c.pod.Containers {
			if k := &c.pod.Containers[i]; k.Name == "main" {
				if q, ok := k.Resources.Limits[gpuResource]; ok {
					c.mainGPULimit = q.Value()
				}
			}
		}
		out = append(out, c)
	}
	if list, ok := spec["components"].([]any); ok {
		for i, item := range list {
			add("", fmt.Sprintf("spec.components[%d]", i), item)
		}
	}
	if m, ok := spec["services"].(map[string]any); ok {
		names := make([]string, 0, len(m))
		for k := range m {
			names = append(names, k)
		}
		slices.Sort(names)
		for _, k := range names {
			add(k, "spec.services."+k, m[k])
		}
	}
	return out
}

// groveShapeOf reads what decides a component's Grove names.
func groveShapeOf(c *component, w *componentWire, alpha bool) groveShape {
	g := groveShape{name: c.name, nodes: 1}
	if c.multinode {
		g.nodes = c.nodes
	}
	gms, failover := w.GPUMemoryService, w.Failover
	if !alpha {
		gms, failover = nil, nil
		if x := w.Experimental; x != nil {
			gms, failover = x.GPUMemoryService, x.Failover
			g.forceScalingGroup = x.Grove != nil && x.Grove.ForceScalingGroup != nil && *x.Grove.ForceScalingGroup
		}
	}
	if gms.on(alpha) {
		c.gms = gms
	}
	if failover.on(alpha) {
		c.failover = failover
	}
	c.forceScalingGroupSet = g.forceScalingGroup
	g.interPodGMS = gms.on(alpha) && interPod(gms.Mode)
	return g
}

// applyAlphaResources puts the v1alpha1 gpu request/limit on the main container.
func applyAlphaResources(c *component, r *alphaResources, path string, bad func(path, msg string)) {
	if len(c.pod.Containers) == 0 {
		c.pod.Containers = []corev1.Container{{Name: "main"}}
	}
	main := &c.pod.Containers[0]
	for i := range c.pod.Containers {
		if c.pod.Containers[i].Name == "main" {
			main = &c.pod.Containers[i]
		}
	}
	set := func(item *alphaResourceItem, field string, dst *corev1.ResourceList) {
		if item == nil || item.GPU == "" {
			return
		}
		q, err := resource.ParseQuantity(item.GPU)
		if err != nil {
			bad(path+".resources."+field+".gpu", fmt.Sprintf("%q is not a quantity", item.GPU))
			return
		}
		if *dst == nil {
			*dst = corev1.ResourceList{}
		}
		(*dst)[gpuResource] = q
	}
	set(r.Requests, "requests", &main.Resources.Requests)
	set(r.Limits, "limits", &main.Resources.Limits)
}

// podGPURequest is what the scheduler counts for a pod: the larger of the sum
// over containers (and restartable init containers) and the largest init
// container; a container's request, else its limit (extended resources default
// their request to the limit).
func podGPURequest(p *corev1.PodSpec) int64 {
	req := func(c *corev1.Container) int64 {
		if q, ok := c.Resources.Requests[gpuResource]; ok {
			return q.Value()
		}
		if q, ok := c.Resources.Limits[gpuResource]; ok {
			return q.Value()
		}
		return 0
	}
	var sum, initMax int64
	for i := range p.Containers {
		sum += req(&p.Containers[i])
	}
	for i := range p.InitContainers {
		c := &p.InitContainers[i]
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			sum += req(c)
			continue
		}
		initMax = max(initMax, req(c))
	}
	return max(sum, initMax)
}
