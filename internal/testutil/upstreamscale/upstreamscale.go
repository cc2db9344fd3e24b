package upstreamscale

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// Options size the capture. Zero values take the defaults of the issue's
// measurement: 10,000 workers, 2,000 nodes, 10 zones.
type Options struct {
	// Workers is the number of worker pods (half prefill, half decode), each
	// with its DynamoWorkerMetadata.
	Workers int
	// Nodes is the number of GPU nodes (8 GPUs each); the workers are spread
	// over them in order, the nodes over the zones round-robin.
	Nodes int
	// Zones is the number of zones.
	Zones int
	// NoDWM leaves the DynamoWorkerMetadata objects out.
	NoDWM bool
}

func (o Options) withDefaults() Options {
	if o.Workers <= 0 {
		o.Workers = 10000
	}
	if o.Nodes <= 0 {
		o.Nodes = 2000
	}
	if o.Zones <= 0 {
		o.Zones = 10
	}
	return o
}

// The deployment's names: upstream's disagg_router example in namespace llm.
const (
	Namespace = "llm"
	DGDName   = "vllm-v1-disagg-router"
	dynNS     = Namespace + "-" + DGDName
	zoneKey   = "topology.kubernetes.io/zone"
	image     = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.2.0"
	imageID   = "nvcr.io/nvidia/ai-dynamo/vllm-runtime@sha256:"
	modelName = "Qwen/Qwen3-0.6B"
	// created is when every object was created; the pods started a minute later.
	created = "2026-11-18T09:30:00Z"
	started = "2026-11-18T09:31:12Z"
	ready   = "2026-11-18T09:34:40Z"
	// CollectedAt is the capture's collected-at annotation.
	CollectedAt = "2026-11-18T10:00:00Z"
)

type obj = map[string]any

// Zone is the name of zone i: us-east-1a, us-east-1b, us-east-1c, us-east-2a, …
func Zone(i int) string { return fmt.Sprintf("us-east-%d%c", 1+i/3, 'a'+i%3) }

// NodeName is the name of node i.
func NodeName(i int) string { return fmt.Sprintf("gpu-h100-%04d", i) }

// rng is a small deterministic generator (xorshift64*), seeded per object so
// that each object's random-looking parts do not depend on the others.
type rng uint64

func seed(parts ...string) *rng {
	h := uint64(14695981039346656037)
	for _, p := range parts {
		for i := 0; i < len(p); i++ {
			h ^= uint64(p[i])
			h *= 1099511628211
		}
		h ^= 0xff
		h *= 1099511628211
	}
	if h == 0 {
		h = 1
	}
	r := rng(h)
	return &r
}

func (r *rng) next() uint64 {
	x := uint64(*r)
	x ^= x >> 12
	x ^= x << 25
	x ^= x >> 27
	*r = rng(x)
	return x * 2685821657736338717
}

func (r *rng) hex(n int) string {
	const digits = "0123456789abcdef"
	b := make([]byte, n)
	for i := range b {
		b[i] = digits[r.next()>>60]
	}
	return string(b)
}

// suffix is a generateName suffix (Kubernetes' alphabet: no vowels, no
// look-alikes).
func (r *rng) suffix() string {
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	b := make([]byte, 5)
	for i := range b {
		b[i] = alphabet[r.next()%uint64(len(alphabet))]
	}
	return string(b)
}

func (r *rng) uid() string {
	return r.hex(8) + "-" + r.hex(4) + "-4" + r.hex(3) + "-" + string("89ab"[r.next()>>62]) + r.hex(3) + "-" + r.hex(12)
}

// Capture returns the capture as JSON: a v1 List with the kubectl-dynamo
// annotations, holding the DynamoGraphDeployment, its frontend pod and Service,
// the worker pods each followed by its DynamoWorkerMetadata, and the nodes.
// The same options always give the same bytes.
func Capture(o Options) []byte {
	o = o.withDefaults()
	var buf bytes.Buffer
	buf.WriteString(`{"apiVersion":"v1","kind":"List","metadata":{"annotations":{"kubectl-dynamo.io/collected-at":"` + CollectedAt +
		`","kubectl-dynamo.io/context":"upstream-scale"}},"items":[`)
	first := true
	Objects(o, func(item obj) {
		if !first {
			buf.WriteByte(',')
		}
		first = false
		j, err := json.Marshal(item)
		if err != nil {
			panic(err) // maps of strings, numbers and bools always encode
		}
		buf.Write(j)
	})
	buf.WriteString("]}\n")
	return buf.Bytes()
}

// Objects calls emit with every object of the capture, in the capture's order,
// as it is written (maps of JSON values). Server-set status is included; the
// live benchmarks create the objects and then set it.
func Objects(o Options, emit func(map[string]any)) {
	o = o.withDefaults()
	emit(dgd(o))
	nodeOf := func(w int) int { return w * o.Nodes / o.Workers }
	emit(frontendService())
	emit(frontendPod(o))
	names := map[string]bool{}
	for w := 0; w < o.Workers; w++ {
		p := workerPod(o, w, nodeOf(w), names)
		emit(p)
		if !o.NoDWM {
			emit(dwm(p, w))
		}
	}
	for n := 0; n < o.Nodes; n++ {
		emit(node(o, n))
	}
}

// role is the worker's role: even workers prefill, odd decode.
func role(w int) (component, mode string) {
	if w%2 == 0 {
		return "VllmPrefillWorker", "prefill"
	}
	return "VllmDecodeWorker", "decode"
}

func prefillArgs() []any {
	return []any{"--model", modelName, "--disaggregation-mode", "prefill",
		"--kv-transfer-config", `{"kv_connector":"NixlConnector","kv_role":"kv_both"}`,
		"--kv-events-config", `{"publisher":"zmq","topic":"kv-events","endpoint":"tcp://*:20080","enable_kv_cache_events":true}`}
}

func decodeArgs() []any {
	return []any{"--model", modelName, "--disaggregation-mode", "decode",
		"--kv-transfer-config", `{"kv_connector":"NixlConnector","kv_role":"kv_both"}`}
}

func dgd(o Options) obj {
	worker := func(name string, args []any) obj {
		return obj{"name": name, "type": "worker", "replicas": o.Workers / 2,
			"podTemplate": obj{"spec": obj{"containers": []any{obj{"name": "main", "image": image,
				"command": []any{"python3", "-m", "dynamo.vllm"}, "args": args,
				"resources": obj{"limits": obj{"nvidia.com/gpu": "1"}}}}}}}
	}
	return obj{"apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment",
		"metadata": obj{"name": DGDName, "namespace": Namespace, "generation": 1, "uid": "5d7e1c0a-3f4b-4c1d-9a3e-2b8f6e0d4c21",
			"resourceVersion": "1048576", "creationTimestamp": created,
			"annotations": obj{"kubectl.kubernetes.io/last-applied-configuration": ""},
			"finalizers":  []any{"nvidia.com/finalizer"}},
		"spec": obj{
			"components": []any{
				obj{"name": "Frontend", "type": "frontend", "replicas": 1,
					"podTemplate": obj{"spec": obj{"containers": []any{obj{"name": "main", "image": image,
						"command": []any{"python3", "-m", "dynamo.frontend"},
						"env":     []any{obj{"name": "DYN_ROUTER_MODE", "value": "kv"}}}}}}},
				worker("VllmDecodeWorker", decodeArgs()),
				worker("VllmPrefillWorker", prefillArgs()),
			},
			"experimental": obj{"kvTransferPolicy": obj{"labelKey": zoneKey, "domain": "zone", "enforcement": "required"}},
		},
		"status": obj{"state": "successful", "observedGeneration": 1,
			"conditions": []any{obj{"type": "Ready", "status": "True", "reason": "AllResourcesReady",
				"message": "All resources are ready", "lastTransitionTime": ready}}},
	}
}

func frontendService() obj {
	return obj{"apiVersion": "v1", "kind": "Service",
		"metadata": obj{"name": DGDName + "-frontend", "namespace": Namespace, "uid": "0c6f2a5e-8b1d-4e7a-b3c2-9d4e1f0a6b37",
			"resourceVersion": "1048580", "creationTimestamp": created,
			"labels": obj{"nvidia.com/dynamo-graph-deployment-name": DGDName, "nvidia.com/dynamo-component-type": "frontend",
				"nvidia.com/dynamo-component": "Frontend", "app.kubernetes.io/managed-by": "dynamo-operator"}},
		"spec": obj{"clusterIP": "10.96.12.34", "clusterIPs": []any{"10.96.12.34"}, "internalTrafficPolicy": "Cluster",
			"ipFamilies": []any{"IPv4"}, "ipFamilyPolicy": "SingleStack", "sessionAffinity": "None", "type": "ClusterIP",
			"ports":    []any{obj{"name": "http", "port": 8000, "protocol": "TCP", "targetPort": 8000}},
			"selector": obj{"nvidia.com/dynamo-graph-deployment-name": DGDName, "nvidia.com/dynamo-component-type": "frontend"}},
		"status": obj{"loadBalancer": obj{}}}
}

// podIP is worker w's pod IP (the frontend is w = -1).
func podIP(w int) string {
	w++
	return fmt.Sprintf("10.%d.%d.%d", 64+w/65024, (w/254)%256, 1+w%254)
}

func nodeIP(n int) string { return fmt.Sprintf("172.16.%d.%d", n/250, 1+n%250) }

func frontendPod(o Options) obj {
	r := seed("frontend")
	clique := DGDName + "-0-frontend"
	name := clique + "-" + r.suffix()
	env := baseEnv("frontend", clique)
	env = append(env, obj{"name": "DYN_ROUTER_MODE", "value": "kv"}, obj{"name": "DYN_HTTP_PORT", "value": "8000"})
	c := container("main", []any{"python3", "-m", "dynamo.frontend"}, nil, env,
		obj{"limits": obj{"cpu": "8", "memory": "16Gi"}, "requests": obj{"cpu": "4", "memory": "8Gi"}},
		[]any{obj{"name": "http", "containerPort": 8000, "protocol": "TCP"}}, "http", false)
	return pod(r, name, clique, "Frontend", "frontend", 0, -1, 0, o, c, false)
}

func baseEnv(ctype, clique string) []any {
	env := []any{
		obj{"name": "DYN_NAMESPACE", "value": dynNS},
		obj{"name": "DYN_COMPONENT", "value": ctype},
		obj{"name": "DYN_PARENT_DGD_K8S_NAME", "value": DGDName},
		obj{"name": "DYN_PARENT_DGD_K8S_NAMESPACE", "value": Namespace},
		obj{"name": "DYN_DISCOVERY_BACKEND", "value": "kubernetes"},
		obj{"name": "POD_NAME", "valueFrom": obj{"fieldRef": obj{"apiVersion": "v1", "fieldPath": "metadata.name"}}},
		obj{"name": "GROVE_PCLQ_NAME", "value": clique},
	}
	if ctype != "frontend" {
		env = append(env,
			obj{"name": "DYN_SYSTEM_ENABLED", "value": "true"},
			obj{"name": "DYN_SYSTEM_PORT", "value": "9090"},
			obj{"name": "DYN_KV_TRANSFER_DOMAIN", "value": "zone"},
			obj{"name": "DYN_KV_TRANSFER_ENFORCEMENT", "value": "required"},
			obj{"name": "DYN_TOPOLOGY_ENABLED", "value": "true"},
			obj{"name": "DYN_TOPOLOGY_MOUNT_PATH", "value": "/etc/dynamo/topology"},
			obj{"name": "HF_HOME", "value": "/opt/models"},
		)
	}
	return env
}

// container is a container as the API server returns it (defaults filled).
func container(name string, command, args, env []any, resources obj, ports []any, probePort string, worker bool) obj {
	c := obj{"name": name, "image": image, "imagePullPolicy": "IfNotPresent", "command": command, "env": env,
		"resources": resources, "ports": ports, "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
		"volumeMounts": []any{
			obj{"name": "shared-memory", "mountPath": "/dev/shm"},
		}}
	if args != nil {
		c["args"] = args
	}
	probe := func(path string, period, failures int) obj {
		return obj{"httpGet": obj{"path": path, "port": probePort, "scheme": "HTTP"}, "periodSeconds": period,
			"timeoutSeconds": 5, "successThreshold": 1, "failureThreshold": failures}
	}
	c["livenessProbe"] = probe("/live", 5, 1)
	return c
}

func workerPod(o Options, w, n int, names map[string]bool) obj {
	comp, mode := role(w)
	r := seed("worker", strconv.Itoa(w))
	clique := DGDName + "-0-" + lower(comp)
	var name string
	for {
		name = clique + "-" + r.suffix()
		if !names[name] {
			break
		}
	}
	names[name] = true
	args := decodeArgs()
	if mode == "prefill" {
		args = prefillArgs()
	}
	env := baseEnv("worker", clique)
	res := obj{"limits": obj{"nvidia.com/gpu": "1", "cpu": "10", "memory": "80Gi"},
		"requests": obj{"nvidia.com/gpu": "1", "cpu": "10", "memory": "80Gi"}}
	ports := []any{obj{"name": "system", "containerPort": 9090, "protocol": "TCP"}}
	c := container("main", []any{"python3", "-m", "dynamo.vllm"}, args, env, res, ports, "system", true)
	return pod(r, name, clique, comp, "worker", w/2, w, n, o, c, true)
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// pod is a pod as the API server returns it once the kubelet has started it.
func pod(r *rng, name, clique, comp, ctype string, index, w, n int, o Options, c obj, worker bool) obj {
	uid := r.uid()
	zone := Zone(n % o.Zones)
	labels := obj{
		"app.kubernetes.io/managed-by":            "grove-operator",
		"app.kubernetes.io/part-of":               DGDName,
		"grove.io/podclique":                      clique,
		"grove.io/podclique-pod-index":            strconv.Itoa(index),
		"grove.io/podcliqueset-replica-index":     "0",
		"nvidia.com/dynamo-component":             comp,
		"nvidia.com/dynamo-component-type":        ctype,
		"nvidia.com/dynamo-discovery-backend":     "kubernetes",
		"nvidia.com/dynamo-discovery-enabled":     "true",
		"nvidia.com/dynamo-graph-deployment-name": DGDName,
		"nvidia.com/dynamo-namespace":             dynNS,
	}
	md := obj{"name": name, "generateName": clique + "-", "namespace": Namespace, "uid": uid,
		"resourceVersion": strconv.Itoa(2000000 + 3*(w+1)), "creationTimestamp": created, "labels": labels,
		"ownerReferences": []any{obj{"apiVersion": "grove.io/v1alpha1", "kind": "PodClique", "name": clique,
			"uid": seed("clique", clique).uid(), "controller": true, "blockOwnerDeletion": true}}}
	if worker {
		labels[zoneKey] = zone
		md["annotations"] = obj{"nvidia.com/topology-label-key": zoneKey}
	}
	volumes := []any{
		obj{"name": "shared-memory", "emptyDir": obj{"medium": "Memory", "sizeLimit": "10Gi"}},
	}
	node := NodeName(n)
	spec := obj{"containers": []any{c}, "volumes": volumes, "nodeName": node,
		"dnsPolicy": "ClusterFirst", "enableServiceLinks": true, "restartPolicy": "Always",
		"schedulerName": "kai-scheduler", "serviceAccountName": "default",
		"terminationGracePeriodSeconds": 60,
		"tolerations": []any{
			obj{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
			obj{"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
		}}
	ip := podIP(w)
	cond := func(t string) obj {
		return obj{"type": t, "status": "True", "lastTransitionTime": ready}
	}
	status := obj{"phase": "Running", "hostIP": nodeIP(n), "hostIPs": []any{obj{"ip": nodeIP(n)}},
		"podIP": ip, "podIPs": []any{obj{"ip": ip}}, "qosClass": "Burstable", "startTime": started,
		"conditions": []any{cond("Initialized"), cond("Ready"), cond("ContainersReady"), cond("PodScheduled")},
		"containerStatuses": []any{obj{"name": "main", "image": image, "imageID": imageID + seed("image").hex(64),
			"containerID": "containerd://" + r.hex(64), "ready": true, "started": true, "restartCount": 0,
			"lastState": obj{}, "state": obj{"running": obj{"startedAt": started}}}}}
	return obj{"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec, "status": status}
}

// instanceID is worker w's Dynamo instance id (52 bits, as the fixtures').
func instanceID(w int) uint64 {
	r := seed("instance", strconv.Itoa(w))
	return r.next() >> 12
}

func dwm(p obj, w int) obj {
	md := p["metadata"].(obj)
	name := md["name"].(string)
	ip := p["status"].(obj)["podIP"].(string)
	_, mode := role(w)
	comp := "backend"
	needs := []any{}
	if mode == "prefill" {
		comp, needs = "prefill", []any{[]any{"decode"}}
	}
	id := instanceID(w)
	hexID := strconv.FormatUint(id, 16)
	key := dynNS + "/" + comp + "/generate/" + hexID
	idNum := json.Number(strconv.FormatUint(id, 10))
	zone := p["metadata"].(obj)["labels"].(obj)[zoneKey]
	channels := obj{}
	if mode == "prefill" {
		kid := instanceID(w + 1<<30)
		channels[fmt.Sprintf("namespace/%s/component/%s/topic/kv-events/%x", dynNS, comp, kid)] = obj{
			"type": "EventChannel", "scope": obj{"kind": "component", "namespace": dynNS, "component": comp},
			"topic": "kv-events", "instance_id": json.Number(strconv.FormatUint(kid, 10)),
			"transport": obj{"kind": "Zmq", "config": obj{"endpoint": "tcp://" + ip + ":20080"}}}
	}
	card := obj{
		"display_name": modelName, "slug": "qwen--qwen3-0_6b",
		"kv_cache_block_size": 16, "migration_limit": 0, "context_length": 40960,
		"model_type": "Chat | Completions", "model_input": "Tokens", "worker_type": mode, "needs": needs,
		"runtime_config": obj{"total_kv_blocks": 20000, "max_num_seqs": 256, "max_num_batched_tokens": 8192,
			"data_parallel_start_rank": 0, "data_parallel_size": 1, "enable_local_indexer": true, "enable_eagle": false,
			"topology_domains": obj{"zone": zone}, "kv_transfer_domain": "zone", "kv_transfer_enforcement": "required",
			"stable_routing_id": name, "kv_event_publishing_enabled": mode == "prefill"},
	}
	entry := func(typ string) obj {
		return obj{"type": typ, "namespace": dynNS, "component": comp, "endpoint": "generate", "instance_id": idNum}
	}
	ep := entry("Endpoint")
	ep["transport"] = obj{"tcp": ip + ":41200/" + hexID + "/generate"}
	mc := entry("Model")
	mc["card_json"] = card
	return obj{"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoWorkerMetadata",
		"metadata": obj{"name": name, "namespace": Namespace, "uid": seed("dwm", name).uid(),
			"resourceVersion": strconv.Itoa(2000001 + 3*(w+1)), "creationTimestamp": started, "generation": 1,
			"ownerReferences": []any{obj{"apiVersion": "v1", "kind": "Pod", "name": name, "uid": md["uid"]}}},
		"spec": obj{"data": obj{
			"endpoints":      obj{key: ep},
			"model_cards":    obj{key: mc},
			"event_channels": channels,
			"event_sources":  obj{},
		}}}
}

// node is a GPU node as the API server returns it (GPU feature discovery
// labels, the kubelet's status).
func node(o Options, n int) obj {
	name := NodeName(n)
	zone := Zone(n % o.Zones)
	r := seed("node", name)
	labels := obj{
		"beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64", "kubernetes.io/os": "linux",
		"kubernetes.io/hostname": name, "node.kubernetes.io/instance-type": "p5.48xlarge",
		"topology.kubernetes.io/region": "us-east-" + zone[len("us-east-"):len("us-east-")+1], zoneKey: zone,
		"topology.k8s.aws/zone-id":              "use1-az" + strconv.Itoa(1+n%o.Zones),
		"topology.k8s.aws/network-node-layer-1": "nn-" + seed("l1", zone).hex(17),
		"topology.k8s.aws/network-node-layer-2": "nn-" + seed("l2", zone, strconv.Itoa(n/100)).hex(17),
		"topology.k8s.aws/network-node-layer-3": "nn-" + seed("l3", zone, strconv.Itoa(n/20)).hex(17),
		"nvidia.com/gpu.present":                "true", "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3", "nvidia.com/gpu.count": "8",
		"nvidia.com/gpu.memory": "81559", "nvidia.com/gpu.family": "hopper", "nvidia.com/gpu.machine": "p5.48xlarge",
		"nvidia.com/gpu.compute.major": "9", "nvidia.com/gpu.compute.minor": "0", "nvidia.com/gpu.replicas": "1",
		"nvidia.com/gpu.sharing-strategy": "none", "nvidia.com/gpu.mode": "compute", "nvidia.com/mig.capable": "true",
		"nvidia.com/mig.strategy": "single", "nvidia.com/cuda.driver.major": "570", "nvidia.com/cuda.driver.minor": "133",
		"nvidia.com/gfd.timestamp": "1763458200", "nvidia.com/gpu.deploy.device-plugin": "true",
	}
	res := func(gpus string) obj {
		return obj{"cpu": "191450m", "ephemeral-storage": "3758096384Ki", "hugepages-1Gi": "0", "hugepages-2Mi": "0",
			"memory": "2097152000Ki", "nvidia.com/gpu": gpus, "pods": "110", "vpc.amazonaws.com/efa": "32"}
	}
	cond := func(t, status, reason, msg string) obj {
		return obj{"type": t, "status": status, "reason": reason, "message": msg,
			"lastHeartbeatTime": "2026-11-18T09:59:31Z", "lastTransitionTime": created}
	}
	images := []any{}
	for i, img := range []string{image, "602401143452.dkr.ecr.us-east-1.amazonaws.com/eks/kube-proxy:v1.33.0-eksbuild.2"} {
		d := seed("img", img).hex(64)
		images = append(images, obj{"names": []any{img[:indexByte(img, ':')] + "@sha256:" + d, img}, "sizeBytes": 1000000 * (i + 1) * 37})
	}
	return obj{"apiVersion": "v1", "kind": "Node",
		"metadata": obj{"name": name, "uid": r.uid(), "resourceVersion": strconv.Itoa(1000000 + n), "creationTimestamp": created, "labels": labels,
			"annotations": obj{"alpha.kubernetes.io/provided-node-ip": nodeIP(n), "node.alpha.kubernetes.io/ttl": "0",
				"volumes.kubernetes.io/controller-managed-attach-detach": "true"}},
		"spec": obj{"providerID": "aws:///" + zone + "/i-0" + r.hex(16), "podCIDR": fmt.Sprintf("10.%d.%d.0/24", 128+n/256, n%256),
			"podCIDRs": []any{fmt.Sprintf("10.%d.%d.0/24", 128+n/256, n%256)}},
		"status": obj{
			"addresses": []any{obj{"type": "InternalIP", "address": nodeIP(n)}, obj{"type": "Hostname", "address": name},
				obj{"type": "InternalDNS", "address": "ip-" + nodeIP(n) + ".ec2.internal"}},
			"allocatable": res("8"), "capacity": res("8"),
			"conditions": []any{
				cond("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
				cond("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
				cond("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
				cond("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
			},
			"daemonEndpoints": obj{"kubeletEndpoint": obj{"Port": 10250}},
			"images":          images,
			"nodeInfo": obj{"architecture": "amd64", "bootID": r.uid(), "containerRuntimeVersion": "containerd://1.7.27",
				"kernelVersion": "6.1.132-147.221.amzn2023.x86_64", "kubeProxyVersion": "", "kubeletVersion": "v1.33.0-eks-802817d",
				"machineID": r.hex(32), "operatingSystem": "linux", "osImage": "Amazon Linux 2023.7.20250414", "systemUUID": "ec2" + r.hex(29)},
		}}
}

func indexByte(s string, c byte) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == c {
			return i
		}
	}
	return len(s)
}

// Prompt is a deterministic prompt of n token ids (for explain-route).
func Prompt(n int) []uint32 {
	out := make([]uint32, n)
	r := seed("prompt")
	for i := range out {
		out[i] = uint32(1000 + r.next()%150000)
	}
	return out
}
