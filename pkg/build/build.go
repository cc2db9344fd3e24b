package build

import (
	"cmp"
	"errors"
	"fmt"
	goruntime "runtime"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"

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

	dgds []*raw.DGD
	// pods by namespace, then by DGD name (from the label).
	pods map[string]map[string][]*bldPod
	// nodes by name.
	nodes map[string]map[string]string
	// dwms by namespace.
	dwms map[string][]*raw.DWM
	// dwmFast holds DWMs decoded ahead on every core by the fast path
	// (buildPods): those whose spec.data stayed JSON.
	dwmFast map[*raw.DWM][]*bldInstance
	// sliceReady by namespace/pod: the EndpointSlice readiness of the pod.
	sliceReady map[string]bool
	services   map[string][]*raw.Service
	events     []*raw.Event
	// topologies by kind then name.
	topologies map[string]map[string]*raw.ClusterTopology
	// etcd is the decoded etcd discovery state.
	etcd *bldEtcdState
	// operators are the Dynamo operator Deployments read.
	operators []model.Operator
}

// bldPod is a Pod with the facts derived from it.
type bldPod struct {
	pod  *raw.Pod
	main *raw.Container
	// env and envUnknown are bldEnvMap of the main container's env, resolved
	// once by mainEnv (several passes read it).
	env        map[string]string
	envUnknown []string
	envDone    bool
}

// bldMaxImageRef bounds an image reference read from the cluster (registry
// host, path and tag or digest stay far below it).
const bldMaxImageRef = 512

// image is the main container's image: "" when there is none, it is not a
// string (raw.Container.Image) or longer than bldMaxImageRef. It is read only
// to tell the Dynamo release.
func (p *bldPod) image() string {
	if p.main == nil || len(p.main.Image) > bldMaxImageRef {
		return ""
	}
	return p.main.Image
}

// mainEnv is bldEnvMap(p.main.Env), resolved on first use; p.main must be
// set. Its map is shared: read it, never write it (unknown is clipped, so
// appending to it copies).
func (p *bldPod) mainEnv() (vals map[string]string, unknown []string) {
	if !p.envDone {
		p.env, p.envUnknown = bldEnvMap(p.main.Env)
		p.envDone = true
	}
	return p.env, slices.Clip(p.envUnknown)
}

func newBuilder(b *raw.Bundle) *bldBuilder {
	return &bldBuilder{
		b:          b,
		pods:       map[string]map[string][]*bldPod{},
		nodes:      map[string]map[string]string{},
		dwms:       map[string][]*raw.DWM{},
		sliceReady: map[string]bool{},
		services:   map[string][]*raw.Service{},
		topologies: map[string]map[string]*raw.ClusterTopology{},
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

// index sorts the bundle's objects by kind (raw.Objects: lists already
// flattened, objects of other kinds left out); DGDs read at both versions are
// kept once (v1beta1 preferred).
func (bd *bldBuilder) index() {
	src := bd.kubeSource()
	objs := &bd.b.Objects
	dgdByKey := map[string]*raw.DGD{}
	for _, u := range objs.DGDs {
		key := u.Namespace + "/" + u.Name
		if prev, ok := dgdByKey[key]; ok {
			// Keep the newer API version (v1beta1 over v1alpha1).
			if prev.APIVersion >= u.APIVersion {
				continue
			}
		}
		dgdByKey[key] = u
	}
	for _, u := range objs.DWMs {
		bd.dwms[u.Namespace] = append(bd.dwms[u.Namespace], u)
	}
	for _, u := range objs.Pods {
		ns, name := u.Namespace, u.Name
		dgd := u.Labels[bldLabelDGD]
		if dgd == "" {
			continue
		}
		if u.Invalid != "" {
			bd.note(src, ns+"/"+dgd, "pod %s/%s could not be read (%s); skipped: it is not counted as a frontend or worker", ns, name, u.Invalid)
			continue
		}
		if bd.pods[ns] == nil {
			bd.pods[ns] = map[string][]*bldPod{}
		}
		bd.pods[ns][dgd] = append(bd.pods[ns][dgd], &bldPod{pod: u, main: bldMainContainer(u.Spec.Containers, u.Annotations[bldAnnMainContainer])})
	}
	for _, u := range objs.Nodes {
		bd.nodes[u.Name] = u.Labels
		if bd.nodes[u.Name] == nil {
			bd.nodes[u.Name] = map[string]string{}
		}
	}
	for _, u := range objs.EndpointSlices {
		bd.indexSlice(u)
	}
	for _, u := range objs.Services {
		bd.services[u.Namespace] = append(bd.services[u.Namespace], u)
	}
	bd.events = objs.Events
	for _, u := range objs.Deployments {
		if bldIsOperator(u) {
			bd.operators = append(bd.operators, bldOperator(u))
		}
	}
	for _, u := range objs.Topologies {
		if bd.topologies[u.Kind] == nil {
			bd.topologies[u.Kind] = map[string]*raw.ClusterTopology{}
		}
		bd.topologies[u.Kind][u.Name] = u
	}
	for _, k := range bldSortedKeys(dgdByKey) {
		bd.dgds = append(bd.dgds, dgdByKey[k])
	}
	for ns := range bd.pods {
		for dgd := range bd.pods[ns] {
			slices.SortFunc(bd.pods[ns][dgd], func(a, b *bldPod) int { return cmp.Compare(a.pod.Name, b.pod.Name) })
		}
	}
	for ns := range bd.dwms {
		bldSortByName(bd.dwms[ns], func(u *raw.DWM) string { return u.Name })
	}
	for ns := range bd.services {
		bldSortByName(bd.services[ns], func(u *raw.Service) string { return u.Name })
	}
}

// bldSortByName sorts objects by name like slices.SortFunc with a name
// comparison (the same comparisons, so the same order, ties included),
// reading each name once instead of twice per comparison.
func bldSortByName[T any](objs []T, name func(T) string) {
	type named struct {
		name string
		u    T
	}
	ns := make([]named, len(objs))
	for i, u := range objs {
		ns[i] = named{name(u), u}
	}
	slices.SortFunc(ns, func(a, b named) int { return cmp.Compare(a.name, b.name) })
	for i := range ns {
		objs[i] = ns[i].u
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
func (bd *bldBuilder) indexSlice(u *raw.EndpointSlice) {
	for _, e := range u.Endpoints {
		kind, name := e.TargetRef.Kind, e.TargetRef.Name
		if name == "" || (kind != "" && kind != "Pod") {
			continue
		}
		ns := e.TargetRef.Namespace
		if ns == "" {
			ns = u.Namespace
		}
		ready := true // an absent ready condition means ready (EndpointConditions)
		if r := e.Conditions.Ready; r != nil {
			ready = *r
		}
		key := ns + "/" + name
		bd.sliceReady[key] = bd.sliceReady[key] || ready
	}
}

// bldMainContainer returns the container named name (default "main"), else the
// first container; nil when there is none.
func bldMainContainer(cs []raw.Container, name string) *raw.Container {
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
