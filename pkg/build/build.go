package build

import (
	"cmp"
	"errors"
	"fmt"
	goruntime "runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw"
)

// Labels, annotations and resource names Build reads (k8s-objects.md §2).
const (
	bldLabelDGD              = "nvidia.com/dynamo-graph-deployment-name"
	bldLabelComponent        = "nvidia.com/dynamo-component"
	bldLabelComponentType    = "nvidia.com/dynamo-component-type"
	bldLabelSubComponentType = "nvidia.com/dynamo-sub-component-type"
	bldLabelDynamoNamespace  = "nvidia.com/dynamo-namespace"
	bldLabelDiscoveryBackend = "nvidia.com/dynamo-discovery-backend"
	bldAnnDiscoveryBackend   = "nvidia.com/dynamo-discovery-backend"
	bldAnnTopologyLabelKey   = "nvidia.com/topology-label-key"
	bldAnnTopologyName       = "nvidia.com/topology-cluster-topology-name"
	bldAnnMainContainer      = "nvidia.com/dynamo-main-container-name"
	// bldPodTopologyPrefix is the pod label prefix of clusterTopologyName mode.
	bldPodTopologyPrefix = "nvidia.com/dynamo-topology."
	bldGPUResource       = "nvidia.com/gpu"
	bldMIGPrefix         = "nvidia.com/mig-"

	bldGroveLabelPCSG        = "grove.io/podcliquescalinggroup"
	bldGroveLabelPCSGReplica = "grove.io/podcliquescalinggroup-replica-index"
	bldGroveLabelClique      = "grove.io/podclique"
	bldLWSLabelName          = "leaderworkerset.sigs.k8s.io/name"
	bldLWSLabelGroupIndex    = "leaderworkerset.sigs.k8s.io/group-index"
	bldLWSLabelWorkerIndex   = "leaderworkerset.sigs.k8s.io/worker-index"
)

// bldWellKnownNodeLabels are the node labels copied into Worker.NodeLabels
// besides those the policy and topology object name (k8s-objects.md §6).
var bldWellKnownNodeLabels = []string{
	"topology.kubernetes.io/region",
	"topology.kubernetes.io/zone",
	"kubernetes.io/hostname",
	"topology.k8s.aws/zone-id",
	"topology.k8s.aws/network-node-layer-1",
	"topology.k8s.aws/network-node-layer-2",
	"topology.k8s.aws/network-node-layer-3",
	"topology.k8s.aws/network-node-layer-4",
	"topology.k8s.aws/ultraserver-id",
	"cloud.google.com/gce-topology-block",
	"cloud.google.com/gce-topology-subblock",
	"cloud.google.com/gce-topology-host",
	"kubernetes.azure.com/ppg",
	"oci.oraclecloud.com/host.network_block_id",
	"oci.oraclecloud.com/host.rack_id",
	"nvidia.com/gpu.clique",
	"network.topology.nvidia.com/accelerator",
	"nvidia.com/rack",
	"topology.kubernetes.io/rack",
	"kubernetes.io/rack",
	"kubernetes.io/block",
}

// bldNodeLabelPrefixes are node label prefixes whose every key is topology.
var bldNodeLabelPrefixes = []string{"network.topology.nvidia.com/"}

// Build turns a Bundle (raw Kubernetes objects, etcd key-values, frontend scrapes)
// into a Snapshot. It is the only place where wire formats become the model:
// DynamoGraphDeployments (nvidia.com v1beta1 or v1alpha1) become Deployments with
// their kvTransferPolicy, Grove topology object, components, conditions and
// discovery backend; the deployment's pods become Frontends and Workers (node,
// readiness, GPUs, multinode replica, role and the signal that decided it,
// topology labels and env); DynamoWorkerMetadata objects and etcd v1/instances
// and v1/mdc entries become the workers' Instances (runtime config, block size,
// worker type); the frontend's command line and env, its /busy_threshold answer
// and its /metrics scrape become the Router configuration and per-rank loads.
//
// Build never fails on malformed content: whatever cannot be read is skipped and
// explained in a Note (severity warning, with the source and deployment), so that
// a partly broken capture still shows what it can. It returns an error only when
// the bundle itself is missing. The result is deterministic: equal bundles give
// equal snapshots, whatever the order of the objects in them.
func Build(b *raw.Bundle) (s *model.Snapshot, err error) {
	if b == nil {
		return nil, errors.New("build snapshot: no data was collected (nil bundle)")
	}
	defer func() {
		if r := recover(); r != nil {
			s, err = nil, fmt.Errorf("build snapshot: internal error (please report it with the capture file): %v\n%s", r, debug.Stack())
		}
	}()
	bd := newBuilder(b)
	return bd.build(), nil
}

// bldBuilder holds the indexed bundle and the notes gathered while building.
type bldBuilder struct {
	b     *raw.Bundle
	notes []model.Note

	dgds []*unstructured.Unstructured
	// pods by namespace, then by DGD name (from the label).
	pods map[string]map[string][]*bldPod
	// nodes by name.
	nodes map[string]map[string]string
	// dwms by namespace.
	dwms map[string][]*unstructured.Unstructured
	// podConv and dwmFast hold work done ahead on every core: pod conversions
	// (index) and DWMs decoded by the fast path (buildPods).
	podConv map[*unstructured.Unstructured]bldPodConv
	dwmFast map[*unstructured.Unstructured][]*bldInstance
	// sliceReady by namespace/pod: the EndpointSlice readiness of the pod.
	sliceReady map[string]bool
	services   map[string][]*unstructured.Unstructured
	events     []*unstructured.Unstructured
	// topologies by kind then name.
	topologies map[string]map[string]*unstructured.Unstructured
	// etcd is the decoded etcd discovery state.
	etcd *bldEtcdState
	// operators are the Dynamo operator Deployments read.
	operators []model.Operator
}

// bldPod is a converted Pod with the facts derived from it.
type bldPod struct {
	pod  corev1.Pod
	main *corev1.Container
	// image is the main container's image ("" when it is not a string).
	image string
}

func newBuilder(b *raw.Bundle) *bldBuilder {
	return &bldBuilder{
		b:          b,
		pods:       map[string]map[string][]*bldPod{},
		nodes:      map[string]map[string]string{},
		dwms:       map[string][]*unstructured.Unstructured{},
		sliceReady: map[string]bool{},
		services:   map[string][]*unstructured.Unstructured{},
		topologies: map[string]map[string]*unstructured.Unstructured{},
	}
}

// note records a warning.
func (bd *bldBuilder) note(src model.SourceKind, dep, format string, args ...any) {
	bd.notes = append(bd.notes, model.Note{Severity: model.NoteWarning, Source: src, Deployment: dep, Message: fmt.Sprintf(format, args...)})
}

// info records an informational note.
func (bd *bldBuilder) info(src model.SourceKind, dep, format string, args ...any) {
	bd.notes = append(bd.notes, model.Note{Severity: model.NoteInfo, Source: src, Deployment: dep, Message: fmt.Sprintf(format, args...)})
}

// kubeSource is the source Kubernetes objects came from.
func (bd *bldBuilder) kubeSource() model.SourceKind {
	for _, s := range bd.b.Sources {
		if s.Kind == model.SourceKubernetes {
			return model.SourceKubernetes
		}
	}
	for _, s := range bd.b.Sources {
		if s.Kind == model.SourceCapture {
			return model.SourceCapture
		}
	}
	return model.SourceKubernetes
}

func (bd *bldBuilder) build() *model.Snapshot {
	s := &model.Snapshot{
		Context:     bd.b.Context,
		Namespace:   bd.b.Namespace,
		CollectedAt: bd.b.CollectedAt,
		Sources:     slices.Clone(bd.b.Sources),
		Deployments: []model.Deployment{},
	}
	if s.Sources == nil {
		s.Sources = []model.SourceStatus{}
	}
	bd.index()
	bd.etcd = bd.decodeEtcd()
	deps := make([]*bldDeployment, 0, len(bd.dgds))
	for _, u := range bd.dgds {
		deps = append(deps, bd.deployment(u))
	}
	bd.attachEtcd(deps)
	for _, d := range deps {
		bd.finishDeployment(d)
		s.Deployments = append(s.Deployments, d.out)
	}
	slices.SortFunc(s.Deployments, func(a, b model.Deployment) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	bd.noteOrphanScrapes(deps)
	sortOperators(bd.operators)
	s.Operators = bd.operators
	slices.SortStableFunc(bd.notes, func(a, b model.Note) int {
		return cmp.Or(cmp.Compare(a.Deployment, b.Deployment), cmp.Compare(a.Source, b.Source), cmp.Compare(a.Message, b.Message))
	})
	bd.notes = slices.CompactFunc(bd.notes, func(a, b model.Note) bool { return a == b })
	s.Notes = append(slices.Clone(bd.b.Notes), bd.notes...)
	if len(s.Notes) == 0 {
		s.Notes = nil
	}
	return s
}

// bldGroup returns the API group of an apiVersion ("" for core).
func bldGroup(apiVersion string) string {
	g, _, ok := strings.Cut(apiVersion, "/")
	if !ok {
		return ""
	}
	return g
}

// index sorts the bundle's objects by kind. Lists nested in Objects are
// flattened; DGDs read at both versions are kept once (v1beta1 preferred).
func (bd *bldBuilder) index() {
	src := bd.kubeSource()
	dgdByKey := map[string]*unstructured.Unstructured{}
	var walk func(objs []*unstructured.Unstructured, depth int)
	walk = func(objs []*unstructured.Unstructured, depth int) {
		for _, u := range objs {
			if u == nil || u.Object == nil {
				continue
			}
			kind, group := u.GetKind(), bldGroup(u.GetAPIVersion())
			if u.IsList() && depth < 2 {
				var items []*unstructured.Unstructured
				_ = u.EachListItem(func(o runtime.Object) error {
					if it, ok := o.(*unstructured.Unstructured); ok {
						items = append(items, it)
					}
					return nil
				})
				walk(items, depth+1)
				continue
			}
			ns, name := u.GetNamespace(), u.GetName()
			switch {
			case kind == "DynamoGraphDeployment" && group == "nvidia.com":
				key := ns + "/" + name
				if prev, ok := dgdByKey[key]; ok {
					// Keep the newer API version (v1beta1 over v1alpha1).
					if prev.GetAPIVersion() >= u.GetAPIVersion() {
						continue
					}
				}
				dgdByKey[key] = u
			case kind == "DynamoWorkerMetadata" && group == "nvidia.com":
				bd.dwms[ns] = append(bd.dwms[ns], u)
			case kind == "Pod" && group == "":
				dgd := u.GetLabels()[bldLabelDGD]
				if dgd == "" {
					continue
				}
				c, ok := bd.podConv[u]
				if !ok {
					c.p, c.err = bldConvertPod(u)
				}
				p, err := c.p, c.err
				if err != nil {
					bd.note(src, ns+"/"+dgd, "pod %s/%s could not be read (%v); skipped: it is not counted as a frontend or worker", ns, name, err)
					continue
				}
				if bd.pods[ns] == nil {
					bd.pods[ns] = map[string][]*bldPod{}
				}
				bd.pods[ns][dgd] = append(bd.pods[ns][dgd], p)
			case kind == "Node" && group == "":
				bd.nodes[name] = u.GetLabels()
				if bd.nodes[name] == nil {
					bd.nodes[name] = map[string]string{}
				}
			case kind == "EndpointSlice" && group == "discovery.k8s.io":
				bd.indexSlice(u)
			case kind == "Service" && group == "":
				bd.services[ns] = append(bd.services[ns], u)
			case kind == "Event" && (group == "" || group == "events.k8s.io"):
				bd.events = append(bd.events, u)
			case kind == "Deployment" && group == "apps" && bldIsOperator(u):
				bd.operators = append(bd.operators, bldOperator(u))
			case (kind == "ClusterTopologyBinding" || kind == "ClusterTopology") && group == "grove.io":
				if bd.topologies[kind] == nil {
					bd.topologies[kind] = map[string]*unstructured.Unstructured{}
				}
				bd.topologies[kind][name] = u
			}
		}
	}
	bd.convertPodsAhead(bd.b.Objects)
	walk(bd.b.Objects, 0)
	bd.podConv = nil
	for _, k := range bldSortedKeys(dgdByKey) {
		bd.dgds = append(bd.dgds, dgdByKey[k])
	}
	for ns := range bd.pods {
		for dgd := range bd.pods[ns] {
			slices.SortFunc(bd.pods[ns][dgd], func(a, b *bldPod) int { return cmp.Compare(a.pod.Name, b.pod.Name) })
		}
	}
	for ns := range bd.dwms {
		bldSortByName(bd.dwms[ns])
	}
	for ns := range bd.services {
		bldSortByName(bd.services[ns])
	}
}

// bldSortByName sorts objects by name like slices.SortFunc with a GetName
// comparison (the same comparisons, so the same order, ties included), reading
// each name once instead of twice per comparison.
func bldSortByName(objs []*unstructured.Unstructured) {
	type named struct {
		name string
		u    *unstructured.Unstructured
	}
	ns := make([]named, len(objs))
	for i, u := range objs {
		ns[i] = named{u.GetName(), u}
	}
	slices.SortFunc(ns, func(a, b named) int { return cmp.Compare(a.name, b.name) })
	for i := range ns {
		objs[i] = ns[i].u
	}
}

// bldPodConv is the result of bldConvertPod.
type bldPodConv struct {
	p   *bldPod
	err error
}

// convertPodsAhead converts the deployments' pods among objs on every core
// (the conversion is the bulk of indexing a large bundle).
func (bd *bldBuilder) convertPodsAhead(objs []*unstructured.Unstructured) {
	var pods []*unstructured.Unstructured
	for _, u := range objs {
		if u != nil && u.Object != nil && u.GetKind() == "Pod" && bldGroup(u.GetAPIVersion()) == "" && u.GetLabels()[bldLabelDGD] != "" {
			pods = append(pods, u)
		}
	}
	if len(pods) < bldParallelMin {
		return
	}
	conv := make([]bldPodConv, len(pods))
	bldParallel(len(pods), func(i int) {
		conv[i].p, conv[i].err = bldConvertPod(pods[i])
	})
	bd.podConv = make(map[*unstructured.Unstructured]bldPodConv, len(pods))
	for i, u := range pods {
		bd.podConv[u] = conv[i]
	}
}

// bldParallelMin is the fewest items worth spreading over the cores.
var bldParallelMin = 256

// bldParallel calls fn(i) for every i in [0, n) on every core; fn must only
// write state of its own i. A panic in fn is raised again in the caller (where
// Build recovers it), never left to crash the process from another goroutine.
func bldParallel(n int, fn func(i int)) {
	var next atomic.Int64
	var panicked atomic.Pointer[any]
	const batch = 16
	work := func() {
		defer func() {
			if r := recover(); r != nil {
				panicked.CompareAndSwap(nil, &r)
				next.Store(int64(n)) // stop the others
			}
		}()
		for {
			lo := int(next.Add(batch)) - batch
			if lo >= n {
				return
			}
			for i := lo; i < min(lo+batch, n); i++ {
				fn(i)
			}
		}
	}
	var wg sync.WaitGroup
	for range min(goruntime.GOMAXPROCS(0), (n+batch-1)/batch) - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
	if r := panicked.Load(); r != nil {
		panic(*r)
	}
}

// indexSlice records the readiness of every pod an EndpointSlice targets: a
// pod is ready when any endpoint that targets it is ready.
func (bd *bldBuilder) indexSlice(u *unstructured.Unstructured) {
	eps, _, _ := unstructured.NestedSlice(u.Object, "endpoints")
	for _, e := range eps {
		m, ok := e.(map[string]any)
		if !ok {
			continue
		}
		kind, _, _ := unstructured.NestedString(m, "targetRef", "kind")
		name, _, _ := unstructured.NestedString(m, "targetRef", "name")
		if name == "" || (kind != "" && kind != "Pod") {
			continue
		}
		ns, _, _ := unstructured.NestedString(m, "targetRef", "namespace")
		if ns == "" {
			ns = u.GetNamespace()
		}
		ready := true // an absent ready condition means ready (EndpointConditions)
		if r, found, err := unstructured.NestedBool(m, "conditions", "ready"); found && err == nil {
			ready = r
		}
		key := ns + "/" + name
		bd.sliceReady[key] = bd.sliceReady[key] || ready
	}
}

// bldPodWire is the part of a Pod Build reads; converting only these fields
// (not managedFields, volumes, container statuses, …) keeps Build fast on
// deployments with thousands of pods.
type bldPodWire struct {
	Metadata struct {
		Name        string            `json:"name"`
		Namespace   string            `json:"namespace"`
		Labels      map[string]string `json:"labels"`
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
	Spec struct {
		NodeName       string             `json:"nodeName"`
		Containers     []bldContainerWire `json:"containers"`
		InitContainers []bldContainerWire `json:"initContainers"`
	} `json:"spec"`
	Status struct {
		Phase      corev1.PodPhase       `json:"phase"`
		PodIP      string                `json:"podIP"`
		PodIPs     []corev1.PodIP        `json:"podIPs"`
		Conditions []corev1.PodCondition `json:"conditions"`
	} `json:"status"`
}

// bldContainerWire is the part of a container Build reads (the main
// container's command, args and environment; every container's GPU resources
// and restart policy; names for DWM ownership). Ports, probes, volume mounts
// and the like are not converted, so a malformed field Build never reads does
// not make the pod unreadable.
type bldContainerWire struct {
	Name          string                         `json:"name"`
	Command       []string                       `json:"command"`
	Args          []string                       `json:"args"`
	Env           []corev1.EnvVar                `json:"env"`
	EnvFrom       []corev1.EnvFromSource         `json:"envFrom"`
	Resources     corev1.ResourceRequirements    `json:"resources"`
	RestartPolicy *corev1.ContainerRestartPolicy `json:"restartPolicy"`
}

// container is the typed container holding the fields bldContainerWire read.
func (c *bldContainerWire) container() corev1.Container {
	return corev1.Container{Name: c.Name, Command: c.Command, Args: c.Args, Env: c.Env, EnvFrom: c.EnvFrom, Resources: c.Resources, RestartPolicy: c.RestartPolicy}
}

func bldContainers(ws []bldContainerWire) []corev1.Container {
	if ws == nil {
		return nil
	}
	out := make([]corev1.Container, len(ws))
	for i := range ws {
		out[i] = ws[i].container()
	}
	return out
}

// bldConvertPod converts an unstructured Pod, never panicking.
func bldConvertPod(u *unstructured.Unstructured) (p *bldPod, err error) {
	defer func() {
		if r := recover(); r != nil {
			p, err = nil, fmt.Errorf("malformed pod: %v", r)
		}
	}()
	var w bldPodWire
	walked := false
	if bldPodWalkEnabled {
		w, walked = bldWalkPod(u.Object) // the fast path (build_pod_walk.go)
	}
	if !walked {
		w = bldPodWire{}
		src := map[string]any{}
		for _, k := range []string{"metadata", "spec", "status"} {
			if v, ok := u.Object[k]; ok {
				src[k] = v
			}
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(src, &w); err != nil {
			return nil, err
		}
	}
	p = &bldPod{}
	p.pod.Name, p.pod.Namespace = w.Metadata.Name, w.Metadata.Namespace
	p.pod.Labels, p.pod.Annotations = w.Metadata.Labels, w.Metadata.Annotations
	p.pod.Spec.NodeName, p.pod.Spec.Containers, p.pod.Spec.InitContainers = w.Spec.NodeName, bldContainers(w.Spec.Containers), bldContainers(w.Spec.InitContainers)
	p.pod.Status.Phase, p.pod.Status.PodIP, p.pod.Status.PodIPs, p.pod.Status.Conditions = w.Status.Phase, w.Status.PodIP, w.Status.PodIPs, w.Status.Conditions
	p.main = bldMainContainer(p.pod.Spec.Containers, p.pod.Annotations[bldAnnMainContainer])
	if p.main != nil {
		p.image = bldContainerImage(u.Object, p.main.Name)
	}
	return p, nil
}

// bldMaxImageRef bounds an image reference read from the cluster (registry
// host, path and tag or digest stay far below it).
const bldMaxImageRef = 512

// bldContainerImage reads spec.containers[name].image leniently: the image is
// read only to tell the Dynamo release, so a missing or malformed one (not a
// string, too long) reads as "" instead of making the pod unreadable.
func bldContainerImage(obj map[string]any, name string) string {
	spec, _ := obj["spec"].(map[string]any)
	cs, _ := spec["containers"].([]any)
	for _, c := range cs {
		m, _ := c.(map[string]any)
		if n, _ := m["name"].(string); n != name {
			continue
		}
		if img, _ := m["image"].(string); len(img) <= bldMaxImageRef {
			return img
		}
		return ""
	}
	return ""
}

// bldMainContainer returns the container named name (default "main"), else the
// first container; nil when there is none.
func bldMainContainer(cs []corev1.Container, name string) *corev1.Container {
	if name == "" {
		name = "main"
	}
	for i := range cs {
		if cs[i].Name == name {
			return &cs[i]
		}
	}
	if len(cs) > 0 {
		return &cs[0]
	}
	return nil
}

func bldSortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
