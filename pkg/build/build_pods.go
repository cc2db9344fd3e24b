package build

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/cmdline"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw"
)

// bldWorker is a Worker being built.
type bldWorker struct {
	out  model.Worker
	p    *bldPod // nil for an etcd instance matched to no pod
	comp *bldComponent
	// ctype is the component type (label, else the DGD's declared type).
	ctype string
	// argv is the main container's command line, shell-split.
	argv []string
	// env is the main container's resolved env (with DGD fallbacks).
	env func(string) (string, bool)
	// candidate marks a pod with no known component type: it is kept only if it
	// published instances.
	candidate bool
	// insts are the instances before merging.
	insts []*bldInstance
}

// buildPods sorts the DGD's pods into frontends and workers.
func (bd *bldBuilder) buildPods(d *bldDeployment) {
	dwmByPod := bd.dwmsByPod(d)
	bd.decodeDWMsAhead(dwmByPod)
	for _, p := range d.pods {
		labels := p.pod.Labels
		comp := d.component(labels[bldLabelComponent])
		ctype := labels[bldLabelComponentType]
		if ctype == "" && comp != nil {
			ctype = comp.c.Type
		}
		ctype = strings.ToLower(ctype)
		switch {
		case ctype == "frontend":
			d.frontends = append(d.frontends, p)
			continue
		case model.IsWorkerType(ctype), ctype == "":
		default:
			continue // planner, epp, …: not capacity
		}
		w := &bldWorker{p: p, comp: comp, ctype: ctype, candidate: ctype == ""}
		w.out = model.Worker{
			Pod: p.pod.Name, Namespace: p.pod.Namespace, Node: p.pod.Spec.NodeName,
			Component: labels[bldLabelComponent], Phase: p.pod.Status.Phase, Image: p.image(),
			LabelKeyAnnotation: cmp.Or(p.pod.Annotations[bldAnnTopologyLabelKey], p.pod.Annotations[bldAnnTopologyName]),
		}
		if w.out.Component == "" && comp != nil {
			w.out.Component = comp.c.Name
		}
		w.out.Ready = bd.podReady(p)
		w.out.Pending = bldPodPending(p)
		bd.podGPUs(d, w)
		bd.podReplica(d, w)
		w.env = bd.workerEnv(d, w)
		if p.main != nil {
			w.argv = cmdline.Argv(p.main.Command, p.main.Args, w.env)
		} else if comp != nil {
			w.argv = cmdline.Argv(comp.command, comp.args, w.env)
		}
		w.out.Argv, w.out.Env = w.argv, bldDynEnv(d, p, comp)
		for _, u := range dwmByPod[p.pod.Name] {
			w.insts = append(w.insts, bd.decodeDWM(d, u)...)
		}
		d.workers = append(d.workers, w)
	}
	// Dynamo namespaces the deployment's processes use, for etcd matching.
	for _, p := range d.pods {
		if v := p.pod.Labels[bldLabelDynamoNamespace]; v != "" {
			d.dynNamespaces[v] = true
		}
		if p.main != nil {
			env, _ := p.mainEnv()
			if v := env["DYN_NAMESPACE"]; v != "" {
				d.dynNamespaces[v] = true
				if sfx := env["DYN_NAMESPACE_WORKER_SUFFIX"]; sfx != "" {
					d.dynNamespaces[v+"-"+sfx] = true
				}
			}
		}
	}
	if d.specDynNamespace != "" {
		d.dynNamespaces[d.specDynNamespace] = true
	}
}

// dwmsByPod maps pod names to the DynamoWorkerMetadata objects they published:
// by owner reference, else by name (<pod> or <pod>-<container>).
func (bd *bldBuilder) dwmsByPod(d *bldDeployment) map[string][]*bldDWM {
	out := map[string][]*bldDWM{}
	pods := map[string]*bldPod{}
	for _, p := range d.pods {
		pods[p.pod.Name] = p
	}
	for _, u := range bd.dwms[d.out.Namespace] {
		owner := ""
		for _, ref := range u.OwnerReferences {
			if ref.Kind == "Pod" && pods[ref.Name] != nil {
				owner = ref.Name
				break
			}
		}
		name := u.Name
		if owner == "" && pods[name] != nil {
			owner = name
		}
		if owner == "" {
			for _, p := range d.pods {
				for _, c := range p.pod.Spec.Containers {
					if name == p.pod.Name+"-"+c.Name {
						owner = p.pod.Name
					}
				}
			}
		}
		if owner != "" {
			out[owner] = append(out[owner], &bldDWM{u: u})
		}
	}
	return out
}

// podReady is the pod's Ready condition, and'ed with its EndpointSlice
// readiness when an EndpointSlice targets it.
func (bd *bldBuilder) podReady(p *bldPod) bool {
	ready := false
	for _, c := range p.pod.Status.Conditions {
		if c.Type == raw.PodReady {
			ready = c.Status == raw.ConditionTrue
		}
	}
	if r, ok := bd.sliceReady[p.pod.Namespace+"/"+p.pod.Name]; ok {
		ready = ready && r
	}
	return ready
}

// podGPUs sums nvidia.com/gpu and nvidia.com/mig-* over the pod's containers
// (and native sidecars): the request, else the limit.
func (bd *bldBuilder) podGPUs(d *bldDeployment, w *bldWorker) {
	cs := slices.Clone(w.p.pod.Spec.Containers)
	for _, c := range w.p.pod.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == raw.ContainerRestartPolicyAlways {
			cs = append(cs, c)
		}
	}
	res := map[string]int64{}
	for _, c := range cs {
		names := map[string]bool{}
		for n := range c.Resources.Requests {
			names[n] = true
		}
		for n := range c.Resources.Limits {
			names[n] = true
		}
		for n := range names {
			s := n
			if s != bldGPUResource && !strings.HasPrefix(s, bldMIGPrefix) {
				continue
			}
			qs, ok := c.Resources.Requests[n]
			if !ok {
				qs = c.Resources.Limits[n]
			}
			q := bldQuantity(qs)
			v := q.Value() // rounds up fractions
			if v < 0 {
				bd.note(d.src, d.out.Key(), "pod %s/%s: container %s requests a negative %s (%s); it is not counted", w.p.pod.Namespace, w.p.pod.Name, c.Name, s, q.String())
				continue
			}
			if res[s] > math.MaxInt64-v {
				res[s] = math.MaxInt64
			} else {
				res[s] += v
			}
		}
	}
	for _, k := range bldSortedKeys(res) {
		if res[k] == 0 {
			delete(res, k)
			continue
		}
		if w.out.GPUs > math.MaxInt64-res[k] {
			w.out.GPUs = math.MaxInt64
		} else {
			w.out.GPUs += res[k]
		}
	}
	if len(res) > 0 {
		w.out.GPUResources = res
	}
}

// podReplica groups multinode pods (Grove PCSG leader/worker cliques, or LWS
// groups) into replicas; a single-node pod is its own replica and leader.
func (bd *bldBuilder) podReplica(d *bldDeployment, w *bldWorker) {
	l := w.p.pod.Labels
	w.out.Replica, w.out.Leader = w.p.pod.Name, true
	multinode := w.comp != nil && w.comp.c.NodesPerReplica > 1
	clique := l[bldGroveLabelClique]
	for _, sfx := range []string{"-ldr", "-wkr", "-gms"} {
		if l[bldGroveLabelPCSG] != "" && strings.HasSuffix(clique, sfx) {
			w.out.Replica = strings.TrimSuffix(clique, sfx)
			w.out.Leader = sfx == "-ldr"
			return
		}
	}
	if l[bldLWSLabelName] != "" && l[bldLWSLabelGroupIndex] != "" {
		w.out.Replica = l[bldLWSLabelName] + "-" + l[bldLWSLabelGroupIndex]
		w.out.Leader = l[bldLWSLabelWorkerIndex] == "0"
		return
	}
	if multinode && l[bldGroveLabelPCSG] != "" && l[bldGroveLabelPCSGReplica] != "" {
		// A multinode component whose clique names carry no role suffix: group by
		// scaling-group replica; the leader is the pod that publishes (set later).
		w.out.Replica = l[bldGroveLabelPCSG] + "-" + l[bldGroveLabelPCSGReplica] + "-" + strings.ToLower(w.out.Component)
		w.out.Leader = false
	}
}

// workerEnv returns the worker's env lookup: the pod's main container first,
// then the component's and the DGD's env from the spec.
func (bd *bldBuilder) workerEnv(d *bldDeployment, w *bldWorker) func(string) (string, bool) {
	var podEnv, compEnv map[string]string
	if w.p != nil && w.p.main != nil {
		podEnv, _ = w.p.mainEnv()
	}
	if w.comp != nil {
		compEnv, _ = bldEnvMap(w.comp.env)
	}
	dgdEnv, _ := bldEnvMap(d.env)
	return bldLookup(podEnv, compEnv, dgdEnv)
}

// finishWorkers resolves roles, leaders, domain values and topology facts.
func (bd *bldBuilder) finishWorkers(d *bldDeployment) {
	// Multinode replicas without a role suffix: the publishing pod leads.
	byReplica := map[string][]*bldWorker{}
	for _, w := range d.workers {
		byReplica[w.out.Replica] = append(byReplica[w.out.Replica], w)
	}
	for _, rk := range bldSortedKeys(byReplica) {
		ws := byReplica[rk]
		if slices.ContainsFunc(ws, func(w *bldWorker) bool { return w.out.Leader }) {
			continue
		}
		for _, w := range ws {
			if len(w.out.Instances) > 0 {
				w.out.Leader = true
				break
			}
		}
	}
	d.workers = slices.DeleteFunc(d.workers, func(w *bldWorker) bool { return w.candidate && len(w.out.Instances) == 0 })

	bd.assignRoles(d)
	for _, w := range d.workers {
		bd.workerTopology(d, w)
	}
}

// workerTopology fills the domain values, topology env, node and pod labels.
func (bd *bldBuilder) workerTopology(d *bldDeployment, w *bldWorker) {
	pol := d.out.Policy
	// Published values come from the first instance with a runtime config.
	for _, in := range w.out.Instances {
		rc := in.Runtime
		if len(rc.TopologyDomains) == 0 && rc.KvTransferDomain == "" {
			continue
		}
		w.out.Domain.PublishedDomain = rc.KvTransferDomain
		dom := rc.KvTransferDomain
		if pol != nil && pol.Domain != "" {
			dom = pol.Domain
		}
		w.out.Domain.Published = rc.TopologyDomains[dom]
		break
	}
	get := func(k string) string { v, _ := w.env(k); return v }
	w.out.TopologyEnv = model.TopologyEnv{
		Enabled: get("DYN_TOPOLOGY_ENABLED"), TransferDomain: get("DYN_KV_TRANSFER_DOMAIN"),
		Enforcement: get("DYN_KV_TRANSFER_ENFORCEMENT"), PreferredWeight: get("DYN_KV_TRANSFER_PREFERRED_WEIGHT"),
		MountPath: get("DYN_TOPOLOGY_MOUNT_PATH"),
	}
	if w.p == nil {
		return
	}
	podLabels := w.p.pod.Labels
	nodeLabels, nodeKnown := bd.nodes[w.out.Node]
	if pol != nil {
		if pol.PodLabelKey != "" {
			w.out.Domain.Pod = podLabels[pol.PodLabelKey]
		}
		if pol.NodeLabelKey != "" && nodeKnown {
			w.out.Domain.Node = nodeLabels[pol.NodeLabelKey]
		}
	}
	// Node labels: well-known topology keys and every key the policy or topology
	// object names.
	keys := slices.Clone(bldWellKnownNodeLabels)
	if pol != nil {
		keys = append(keys, pol.LabelKey, pol.NodeLabelKey)
	}
	if t := d.out.Topology; t != nil {
		for _, l := range t.Levels {
			keys = append(keys, l.NodeLabelKey)
		}
	}
	if nodeKnown {
		nl := map[string]string{}
		for _, k := range keys {
			if v, ok := nodeLabels[k]; ok && k != "" {
				nl[k] = v
			}
		}
		for k, v := range nodeLabels {
			for _, p := range bldNodeLabelPrefixes {
				if strings.HasPrefix(k, p) {
					nl[k] = v
				}
			}
		}
		if len(nl) > 0 {
			w.out.NodeLabels = nl
		}
	}
	pl := map[string]string{}
	for k, v := range podLabels {
		if strings.HasPrefix(k, bldPodTopologyPrefix) {
			pl[k] = v
		}
	}
	if pol != nil {
		for _, k := range []string{pol.PodLabelKey, pol.LabelKey} {
			if v, ok := podLabels[k]; ok && k != "" {
				pl[k] = v
			}
		}
	}
	if len(pl) > 0 {
		w.out.PodLabels = pl
	}
}

// bldWorkerRef names a worker in messages.
func bldWorkerRef(w *bldWorker) string {
	if w.p != nil {
		return "pod " + w.out.Namespace + "/" + w.out.Pod
	}
	return "worker " + w.out.Replica
}

// buildFrontends converts the frontend pods.
func (bd *bldBuilder) buildFrontends(d *bldDeployment) {
	for _, p := range d.frontends {
		f := model.Frontend{Pod: p.pod.Name, Node: p.pod.Spec.NodeName, Ready: bd.podReady(p), Service: bd.serviceFor(p), Image: p.image()}
		f.Argv, f.Env = bldFrontendEngine(d, p)
		if p.main != nil {
			f.Container = p.main.Name
		}
		d.out.Frontends = append(d.out.Frontends, f)
	}
}

// serviceFor returns "name:port" of the first Service (by name) in the pod's
// namespace whose selector matches the pod, preferring the port named http.
func (bd *bldBuilder) serviceFor(p *bldPod) string {
	for _, u := range bd.services[p.pod.Namespace] {
		var spec corev1.ServiceSpec
		if u.Spec == nil || bldRecode(u.Spec, &spec) != nil || len(spec.Selector) == 0 || len(spec.Ports) == 0 {
			continue
		}
		match := true
		for k, v := range spec.Selector {
			if p.pod.Labels[k] != v {
				match = false
				break
			}
		}
		if !match {
			continue
		}
		port := spec.Ports[0]
		for _, sp := range spec.Ports {
			if sp.Name == "http" {
				port = sp
				break
			}
		}
		return u.Name + ":" + strconv.Itoa(int(port.Port))
	}
	return ""
}

// bldQuantity parses a pod's quantity (raw.Quantity is always one
// resource.ParseQuantity accepts; a zero quantity otherwise).
func bldQuantity(q raw.Quantity) resource.Quantity {
	v, err := resource.ParseQuantity(string(q))
	if err != nil {
		return resource.Quantity{}
	}
	return v
}
