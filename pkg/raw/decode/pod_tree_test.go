package decode

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/jsonscan"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw"
)

// The pod walker (pod_tree.go) must produce exactly what the converter
// produces whenever it says ok, and must say !ok whenever the converter fails.

// podWalkConvert is the reference: convertPodTree's converter path, a panic
// counting as an error.
func podWalkConvert(obj map[string]any) (w podWire, err error) {
	defer func() {
		if r := recover(); r != nil {
			w, err = podWire{}, fmt.Errorf("converter panicked: %v", r)
		}
	}()
	src := map[string]any{}
	for _, k := range []string{"metadata", "spec", "status"} {
		if v, ok := obj[k]; ok {
			src[k] = v
		}
	}
	err = runtime.DefaultUnstructuredConverter.FromUnstructured(src, &w)
	return w, err
}

// podWalkCheck compares the walker with the converter on obj and reports
// whether the walker accepted it.
func podWalkCheck(t testing.TB, name string, obj map[string]any) bool {
	t.Helper()
	want, err := podWalkConvert(obj)
	got, ok, panicked := func() (w podWire, ok bool, panicked any) {
		defer func() { panicked = recover() }()
		w, ok = walkPod(obj)
		return w, ok, nil
	}()
	switch {
	case panicked != nil:
		t.Errorf("%s: the walker panicked: %v", name, panicked)
	case ok && err != nil:
		t.Errorf("%s: the walker accepted what the converter rejects (%v)", name, err)
	case ok && !reflect.DeepEqual(got, want):
		t.Errorf("%s: the walker and the converter differ\nwalker:    %+v\nconverter: %+v", name, got, want)
	case !ok && !reflect.DeepEqual(got, podWire{}):
		t.Errorf("%s: the walker gave up but returned %+v", name, got)
	}
	return ok && panicked == nil
}

// podWalkDecode decodes JSON the way the capture reader does.
func podWalkDecode(t testing.TB, s string) map[string]any {
	t.Helper()
	m, err := JSONObject([]byte(s))
	if err != nil {
		t.Fatalf("%v in %s", err, s)
	}
	return m
}

// podWalkGPUWorker is a realistic Dynamo worker pod as an API server returns
// it: GPU and MIG resources as strings and numbers, every valueFrom form,
// envFrom, a native sidecar, dual-stack podIPs and conditions with times.
const podWalkGPUWorker = `{
 "apiVersion": "v1", "kind": "Pod",
 "metadata": {
  "name": "llama-0-vllmdecodeworker-7f9c4", "namespace": "dynamo", "uid": "5b0f8a7e-1c2d-4e5f-8a9b-0c1d2e3f4a5b",
  "resourceVersion": "123456", "generation": 1, "creationTimestamp": "2026-11-18T09:30:00Z",
  "labels": {
   "nvidia.com/dynamo-graph-deployment-name": "llama", "nvidia.com/dynamo-component": "VllmDecodeWorker",
   "nvidia.com/dynamo-component-type": "worker", "nvidia.com/dynamo-sub-component-type": "decode",
   "nvidia.com/dynamo-namespace": "dynamo-llama", "nvidia.com/dynamo-discovery-backend": "kubernetes",
   "topology.kubernetes.io/zone": "us-east-1a", "pod-template-hash": "7f9c4"
  },
  "annotations": {"nvidia.com/topology-label-key": "topology.kubernetes.io/zone", "nvidia.com/dynamo-main-container-name": "main", "empty": ""},
  "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "llama-0-vllmdecodeworker", "uid": "x", "controller": true, "blockOwnerDeletion": true}],
  "managedFields": [{"manager": "kubelet", "operation": "Update", "apiVersion": "v1", "time": "2026-11-18T09:35:00Z", "fieldsType": "FieldsV1", "fieldsV1": {"f:status": {"f:conditions": {}}}}]
 },
 "spec": {
  "nodeName": "gpu-node-07", "serviceAccountName": "dynamo", "restartPolicy": "Always", "terminationGracePeriodSeconds": 60,
  "initContainers": [
   {"name": "model-fetch", "image": "busybox", "command": ["sh", "-c"], "args": ["fetch --model x"], "resources": {"requests": {"cpu": "100m", "memory": "256Mi"}}},
   {"name": "nats-sidecar", "image": "nats", "restartPolicy": "Always", "resources": {"limits": {"cpu": "250m", "memory": "128Mi"}, "requests": {"cpu": "50m"}},
    "env": [{"name": "NATS_URL", "value": "nats://nats:4222"}]}
  ],
  "containers": [
   {"name": "main", "image": "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.9.0", "imagePullPolicy": "IfNotPresent",
    "command": ["python3", "-m", "dynamo.vllm"], "args": ["--model", "meta-llama/Llama-3.1-70B", "--is-decode-worker", "--tensor-parallel-size", "1"],
    "env": [
     {"name": "DYN_NAMESPACE", "value": "dynamo-llama"},
     {"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}},
     {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
     {"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf-token", "key": "token", "optional": false}}},
     {"name": "DYN_KV_TRANSFER_DOMAIN", "valueFrom": {"configMapKeyRef": {"name": "dynamo-topology", "key": "domain", "optional": true}}},
     {"name": "GPU_LIMIT", "valueFrom": {"resourceFieldRef": {"containerName": "main", "resource": "limits.nvidia.com/gpu", "divisor": "1"}}},
     {"name": "MEM_LIMIT_MI", "valueFrom": {"resourceFieldRef": {"resource": "limits.memory", "divisor": "1Mi"}}},
     {"name": "CPU_MILLIS", "valueFrom": {"resourceFieldRef": {"resource": "requests.cpu", "divisor": 1}}},
     {"name": "TOPOLOGY", "valueFrom": {"fileKeyRef": {"volumeName": "topology-labels", "path": "zone", "key": "zone", "optional": true}}},
     {"name": "EMPTY"},
     {"name": "DYN_SYSTEM_PORT", "value": "9090"}
    ],
    "envFrom": [{"configMapRef": {"name": "dynamo-env"}}, {"prefix": "S3_", "secretRef": {"name": "s3-creds", "optional": true}}],
    "resources": {"limits": {"nvidia.com/gpu": "1", "cpu": "8", "memory": "16Gi"}, "requests": {"nvidia.com/gpu": 1, "cpu": "500m", "memory": "16Gi", "ephemeral-storage": "10G"}},
    "ports": [{"name": "system", "containerPort": 9090, "protocol": "TCP"}],
    "livenessProbe": {"httpGet": {"path": "/live", "port": 9090, "scheme": "HTTP"}, "periodSeconds": 5, "failureThreshold": 3},
    "volumeMounts": [{"name": "topology-labels", "mountPath": "/etc/dynamo/topology", "readOnly": true}, {"name": "shm", "mountPath": "/dev/shm"}],
    "securityContext": {"capabilities": {"add": ["IPC_LOCK"]}}, "terminationMessagePath": "/dev/termination-log"},
   {"name": "mig-helper", "image": "helper", "restartPolicy": null,
    "resources": {"limits": {"nvidia.com/mig-1g.10gb": "1"}, "requests": {"nvidia.com/mig-1g.10gb": 1}, "claims": [{"name": "gpu-claim", "request": "gpu"}, {"name": "other"}]}}
  ],
  "volumes": [{"name": "shm", "emptyDir": {"medium": "Memory", "sizeLimit": "8Gi"}},
   {"name": "topology-labels", "downwardAPI": {"items": [{"path": "zone", "fieldRef": {"fieldPath": "metadata.labels['topology.kubernetes.io/zone']"}}]}}],
  "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
  "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [{"key": "nvidia.com/gpu.present", "operator": "In", "values": ["true"]}]}]}}}
 },
 "status": {
  "phase": "Running", "hostIP": "172.16.3.7", "podIP": "10.64.3.17", "podIPs": [{"ip": "10.64.3.17"}, {"ip": "fd00::17"}],
  "qosClass": "Burstable", "startTime": "2026-11-18T09:35:00Z",
  "conditions": [
   {"type": "PodReadyToStartContainers", "status": "True", "lastProbeTime": null, "lastTransitionTime": "2026-11-18T09:35:02Z"},
   {"type": "Initialized", "status": "True", "lastProbeTime": null, "lastTransitionTime": "2026-11-18T09:35:10Z", "observedGeneration": 1},
   {"type": "Ready", "status": "False", "lastProbeTime": null, "lastTransitionTime": "2026-11-18T11:36:00+02:00", "reason": "ContainersNotReady", "message": "containers with unready status: [main]"},
   {"type": "ContainersReady", "status": "False", "lastProbeTime": "2026-11-18T09:36:00.123456789Z", "lastTransitionTime": "2026-11-18T09:36:00Z", "reason": "ContainersNotReady"},
   {"type": "PodScheduled", "status": "True", "lastProbeTime": null, "lastTransitionTime": "2026-11-18T09:34:58Z"}
  ],
  "initContainerStatuses": [{"name": "nats-sidecar", "ready": true, "restartCount": 0, "started": true, "state": {"running": {"startedAt": "2026-11-18T09:35:05Z"}}}],
  "containerStatuses": [{"name": "main", "ready": false, "restartCount": 2, "image": "x", "imageID": "y", "started": true,
   "state": {"running": {"startedAt": "2026-11-18T09:35:30Z"}}, "lastState": {"terminated": {"exitCode": 137, "reason": "OOMKilled"}}}]
 }
}`

// podWalkScaleWorker is the worker pod hack/gen-examples writes (main.go pod,
// the shape of the 10,000-pod scale capture).
const podWalkScaleWorker = `{"apiVersion": "v1", "kind": "Pod",
 "metadata": {"name": "scale-0-prefill-zone-03-00412", "namespace": "bench", "uid": "0a1b2c3d-0000-4000-8000-000000000412",
  "labels": {"nvidia.com/dynamo-graph-deployment-name": "scale", "nvidia.com/dynamo-component": "Prefill", "nvidia.com/dynamo-component-type": "worker",
   "nvidia.com/dynamo-namespace": "bench-scale", "nvidia.com/dynamo-discovery-backend": "kubernetes", "nvidia.com/dynamo-discovery-enabled": "true",
   "topology.kubernetes.io/zone": "zone-03"},
  "annotations": {"nvidia.com/topology-label-key": "topology.kubernetes.io/zone"}},
 "spec": {"nodeName": "gpu-zone-03-0051", "containers": [{"name": "main", "image": "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.9.0",
   "command": ["python3", "-m", "dynamo.vllm"], "args": ["--model", "Qwen/Qwen3-32B", "--is-prefill-worker"],
   "env": [{"name": "DYN_NAMESPACE", "value": "bench-scale"}, {"name": "DYN_COMPONENT", "value": "prefill"},
    {"name": "DYN_PARENT_DGD_K8S_NAME", "value": "scale"}, {"name": "DYN_PARENT_DGD_K8S_NAMESPACE", "value": "bench"},
    {"name": "DYN_DISCOVERY_BACKEND", "value": "kubernetes"}, {"name": "DYN_SYSTEM_PORT", "value": "9090"},
    {"name": "DYN_KV_TRANSFER_DOMAIN", "value": "zone"}, {"name": "DYN_KV_TRANSFER_ENFORCEMENT", "value": "required"},
    {"name": "DYN_TOPOLOGY_ENABLED", "value": "true"}, {"name": "DYN_TOPOLOGY_MOUNT_PATH", "value": "/etc/dynamo/topology"},
    {"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf-token", "key": "token"}}}],
   "resources": {"limits": {"nvidia.com/gpu": "8"}, "requests": {"nvidia.com/gpu": "8", "cpu": "16", "memory": "200Gi"}},
   "volumeMounts": [{"name": "topology-labels", "mountPath": "/etc/dynamo/topology", "readOnly": true}]}],
  "volumes": [{"name": "topology-labels", "downwardAPI": {"items": [{"path": "zone", "fieldRef": {"fieldPath": "metadata.labels['topology.kubernetes.io/zone']"}}]}}]},
 "status": {"phase": "Running", "podIP": "10.64.1.156", "startTime": "2026-11-18T09:35:00Z",
  "conditions": [{"type": "PodScheduled", "status": "True"}, {"type": "Initialized", "status": "True"}, {"type": "ContainersReady", "status": "True"}, {"type": "Ready", "status": "True"}],
  "containerStatuses": [{"name": "main", "ready": true, "restartCount": 0, "image": "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.9.0", "started": true}]}}`

// podWalkScaleFixturePod is the pod internal/testutil/scalefixture creates
// (CreatePod, with the status it sets and what the API server adds).
func podWalkScaleFixturePod() *corev1.Pod {
	start := metav1.NewTime(time.Date(2026, 11, 18, 9, 35, 0, 0, time.UTC))
	gpu := corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("4")}
	req := corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("4"), corev1.ResourceCPU: resource.MustParse("16"), corev1.ResourceMemory: resource.MustParse("200Gi")}
	return &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "scale-0-prefill-00042", Namespace: "scale-bench", UID: "uid-42", ResourceVersion: "42", CreationTimestamp: start,
			Annotations: map[string]string{"nvidia.com/topology-label-key": "topology.kubernetes.io/zone"},
			Labels: map[string]string{
				"app.kubernetes.io/part-of": "scale", "nvidia.com/dynamo-component": "Prefill", "nvidia.com/dynamo-component-type": "prefill",
				"nvidia.com/dynamo-discovery-backend": "kubernetes", "nvidia.com/dynamo-discovery-enabled": "true",
				"nvidia.com/dynamo-graph-deployment-name": "scale", "nvidia.com/dynamo-namespace": "scale-bench-scale",
				"topology.kubernetes.io/zone": "zone-a",
			},
		},
		Spec: corev1.PodSpec{
			NodeName: "gpu-zone-a-0042",
			Containers: []corev1.Container{{
				Name: "main", Image: "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.9.0",
				Command: []string{"python3", "-m", "dynamo.vllm"}, Args: []string{"--model", "Qwen/Qwen3-0.6B"},
				Env: []corev1.EnvVar{
					{Name: "DYN_NAMESPACE", Value: "scale-bench-scale"}, {Name: "DYN_COMPONENT", Value: "prefill"},
					{Name: "DYN_PARENT_DGD_K8S_NAME", Value: "scale"}, {Name: "DYN_PARENT_DGD_K8S_NAMESPACE", Value: "scale-bench"},
					{Name: "DYN_DISCOVERY_BACKEND", Value: "kubernetes"}, {Name: "DYN_SYSTEM_PORT", Value: "9090"},
					{Name: "DYN_KV_TRANSFER_DOMAIN", Value: "zone"}, {Name: "DYN_KV_TRANSFER_ENFORCEMENT", Value: "required"},
				},
				Resources:                corev1.ResourceRequirements{Limits: gpu, Requests: req},
				TerminationMessagePath:   "/dev/termination-log",
				TerminationMessagePolicy: corev1.TerminationMessageReadFile, ImagePullPolicy: corev1.PullIfNotPresent,
			}},
			RestartPolicy: corev1.RestartPolicyAlways, DNSPolicy: corev1.DNSClusterFirst, SchedulerName: "default-scheduler",
		},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning, PodIP: "10.64.0.42", PodIPs: []corev1.PodIP{{IP: "10.64.0.42"}}, StartTime: &start,
			Conditions: []corev1.PodCondition{
				{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: start},
				{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: start},
				{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: start},
				{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: start, ObservedGeneration: 3},
			},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "main", Ready: true, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: start}}}},
		},
	}
}

// podWalkFixtures are the realistic pods: as our decoder reads them from a
// capture and as client-go's converter builds them from typed objects.
func podWalkFixtures(t testing.TB) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{
		"gpu worker":       podWalkDecode(t, podWalkGPUWorker),
		"gen-examples pod": podWalkDecode(t, podWalkScaleWorker),
	}
	pod := podWalkScaleFixturePod()
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(pod)
	if err != nil {
		t.Fatal(err)
	}
	out["scalefixture pod (client-go)"] = u
	j, err := json.Marshal(pod)
	if err != nil {
		t.Fatal(err)
	}
	out["scalefixture pod (capture)"] = podWalkDecode(t, string(j))
	var typed corev1.Pod
	if err := json.Unmarshal([]byte(podWalkGPUWorker), &typed); err != nil {
		t.Fatal(err)
	}
	if out["gpu worker (client-go)"], err = runtime.DefaultUnstructuredConverter.ToUnstructured(&typed); err != nil {
		t.Fatal(err)
	}
	return out
}

// podWalkCases are decoded JSON pods with whether the walker must accept them
// ("yes"), must give up ("no": the converter fails, or a form the walker
// leaves to it), or either.
var podWalkCases = []struct {
	name, json, ok string
}{
	{"empty", `{}`, "yes"},
	{"not a pod", `{"kind":"Node","other":[1,2,{"x":null}]}`, "yes"},
	{"nulls at the top", `{"metadata":null,"spec":null,"status":null}`, "yes"},
	{"nulls everywhere", `{"metadata":{"name":null,"namespace":null,"labels":null,"annotations":{"a":null,"b":"x"}},
		"spec":{"nodeName":null,"containers":[null,{"name":null,"command":null,"args":[null,"x"],"env":[null,{"name":"A","value":null,"valueFrom":null}],
		"envFrom":[null,{"prefix":null,"configMapRef":null,"secretRef":{"name":null,"optional":null}}],
		"resources":{"limits":null,"requests":{"cpu":null},"claims":[null]},"restartPolicy":null}],"initContainers":null},
		"status":{"phase":null,"podIP":null,"podIPs":[null,{"ip":null}],"conditions":[null,{"type":null,"observedGeneration":null,"lastProbeTime":null,"lastTransitionTime":null}]}}`, "yes"},
	{"empty lists and maps", `{"metadata":{"labels":{},"annotations":{}},"spec":{"containers":[],"initContainers":[{"command":[],"args":[],"env":[],"envFrom":[],
		"resources":{"limits":{},"requests":{},"claims":[]}}]},"status":{"podIPs":[],"conditions":[]}}`, "yes"},
	{"empty objects", `{"metadata":{},"spec":{"containers":[{}, {"resources":{}, "env":[{"valueFrom":{}}], "envFrom":[{"configMapRef":{},"secretRef":{}}]}]},"status":{"podIPs":[{}],"conditions":[{}]}}`, "yes"},
	{"unknown keys", `{"metadata":{"x":1,"name":"p","labels":{"a":"b"}},"spec":{"x":[1],"containers":[{"name":"main","x":{"y":2},
		"env":[{"name":"A","valueFrom":{"futureRef":{"a":1},"fieldRef":{"fieldPath":"x","extra":true}}}]}]},"status":{"x":null,"conditions":[{"type":"Ready","x":1}]},"extra":5}`, "yes"},
	{"valueFrom of an unknown form only", `{"spec":{"containers":[{"env":[{"name":"A","valueFrom":{"futureRef":{"name":"x"}}}]}]}}`, "yes"},
	{"case-variant keys", `{"Metadata":{"name":"x"},"metadata":{"Name":"y","name":"z","LABELS":{"a":1},"Labels":5},
		"spec":{"Containers":"bogus","containers":[{"Name":5,"name":"q","ENV":5,"Env":[1],"Resources":3,"resources":{"Limits":7,"limits":{"CPU":"1","cpu":"2"}}}]},
		"status":{"Phase":3,"phase":"Running","PodIPs":"x","conditions":[{"Type":1,"type":"Ready","LastTransitionTime":5}]}}`, "yes"},
	{"huge integer observedGeneration", `{"status":{"conditions":[{"observedGeneration":123456789012345678901234}]}}`, "no"},
	{"max int64 observedGeneration", `{"status":{"conditions":[{"observedGeneration":9223372036854775807}]}}`, "yes"},
	{"negative observedGeneration", `{"status":{"conditions":[{"observedGeneration":-5}]}}`, "yes"},
	{"whole float observedGeneration", `{"status":{"conditions":[{"observedGeneration":2.0}]}}`, "yes"},
	{"exponent observedGeneration", `{"status":{"conditions":[{"observedGeneration":1e3}]}}`, "yes"},
	{"fractional observedGeneration", `{"status":{"conditions":[{"observedGeneration":2.5}]}}`, "no"},
	{"out of range float observedGeneration", `{"status":{"conditions":[{"observedGeneration":1e30}]}}`, "no"},
	{"string observedGeneration", `{"status":{"conditions":[{"observedGeneration":"3"}]}}`, "no"},
	{"huge integer quantity", `{"spec":{"containers":[{"resources":{"limits":{"nvidia.com/gpu":123456789012345678901234}}}]}}`, "no"},
	{"float quantity", `{"spec":{"containers":[{"resources":{"limits":{"nvidia.com/gpu":1.5}}}]}}`, "no"},
	{"negative quantity", `{"spec":{"containers":[{"resources":{"limits":{"cpu":-2, "memory":"-1Gi"}}}]}}`, "yes"},
	{"max int64 quantity", `{"spec":{"containers":[{"resources":{"limits":{"cpu":9223372036854775807,"memory":"9223372036854775807"}}}]}}`, "yes"},
	{"quantity forms", `{"spec":{"containers":[{"resources":{"limits":{"a":"1","b":"500m","c":"16Gi","d":" 2 ","e":"1e3","f":"0.1m","g":"1.0","h":"+1","i":"0",
		"j":"100M","k":"1Ki","l":"1.5Gi","m":"1E3",".n":".5","o":"0.000001","p":"12345678901234567890123","q":"1.23456789e-5","r":"10n","s":"1e-9","t":"1Ei"}}}]}}`, "yes"},
	{"bad quantity", `{"spec":{"containers":[{"resources":{"limits":{"cpu":"abc"}}}]}}`, "no"},
	{"empty quantity", `{"spec":{"containers":[{"resources":{"requests":{"cpu":""}}}]}}`, "no"},
	{"quantity with an HTML character", `{"spec":{"containers":[{"resources":{"requests":{"cpu":"1<"}}}]}}`, "no"},
	{"quantity with a tab", `{"spec":{"containers":[{"resources":{"requests":{"cpu":"\t1"}}}]}}`, "no"},
	{"bool quantity", `{"spec":{"containers":[{"resources":{"requests":{"cpu":true}}}]}}`, "no"},
	{"divisor forms", `{"spec":{"containers":[{"env":[{"valueFrom":{"resourceFieldRef":{"divisor":"1m"}}},{"valueFrom":{"resourceFieldRef":{"divisor":1}}},
		{"valueFrom":{"resourceFieldRef":{"divisor":null}}}]}]}}`, "yes"},
	{"bad divisor", `{"spec":{"containers":[{"env":[{"valueFrom":{"resourceFieldRef":{"divisor":"x"}}}]}]}}`, "no"},
	{"time forms", `{"status":{"conditions":[{"lastTransitionTime":"2026-11-18T09:35:00+02:00","lastProbeTime":"2026-11-18T09:35:00.5Z"},
		{"lastTransitionTime":"2026-11-18T09:35:00-07:30"},{"lastTransitionTime":"1970-01-01T00:00:00Z"}]}}`, "yes"},
	{"bad time", `{"status":{"conditions":[{"lastTransitionTime":"yesterday"}]}}`, "no"},
	{"empty time", `{"status":{"conditions":[{"lastTransitionTime":""}]}}`, "no"},
	{"numeric time", `{"status":{"conditions":[{"lastTransitionTime":5}]}}`, "no"},
	{"time with invalid UTF-8", "{\"status\":{\"conditions\":[{\"lastTransitionTime\":\"2026-11-18T09:35:00Z\xff\"}]}}", "no"},
	{"numeric name", `{"metadata":{"name":5}}`, "no"},
	{"float name", `{"metadata":{"name":1.5}}`, "no"},
	{"bool namespace", `{"metadata":{"namespace":true}}`, "no"},
	{"numeric label", `{"metadata":{"labels":{"a":"b","c":1}}}`, "no"},
	{"bool label", `{"metadata":{"labels":{"a":false}}}`, "no"},
	{"object label", `{"metadata":{"labels":{"a":{}}}}`, "no"},
	{"list annotation", `{"metadata":{"annotations":{"a":[]}}}`, "no"},
	{"string labels", `{"metadata":{"labels":"a=b"}}`, "no"},
	{"list metadata", `{"metadata":[]}`, "no"},
	{"string spec", `{"spec":"x"}`, "no"},
	{"object containers", `{"spec":{"containers":{}}}`, "no"},
	{"string container", `{"spec":{"containers":["main"]}}`, "no"},
	{"string command", `{"spec":{"containers":[{"command":"python3"}]}}`, "no"},
	{"numeric arg", `{"spec":{"containers":[{"args":["--port",8000]}]}}`, "no"},
	{"numeric env entry", `{"spec":{"containers":[{"env":[5]}]}}`, "no"},
	{"numeric env value", `{"spec":{"containers":[{"env":[{"name":"PORT","value":8000}]}]}}`, "no"},
	{"string valueFrom", `{"spec":{"containers":[{"env":[{"name":"A","valueFrom":"x"}]}]}}`, "no"},
	{"string optional", `{"spec":{"containers":[{"env":[{"name":"A","valueFrom":{"secretKeyRef":{"name":"s","optional":"true"}}}]}]}}`, "no"},
	{"list fieldRef", `{"spec":{"containers":[{"env":[{"name":"A","valueFrom":{"fieldRef":[]}}]}]}}`, "no"},
	{"numeric restartPolicy", `{"spec":{"initContainers":[{"restartPolicy":1}]}}`, "no"},
	{"string resources", `{"spec":{"containers":[{"resources":"x"}]}}`, "no"},
	{"list limits", `{"spec":{"containers":[{"resources":{"limits":[]}}]}}`, "no"},
	{"string claims", `{"spec":{"containers":[{"resources":{"claims":"x"}}]}}`, "no"},
	{"numeric phase", `{"status":{"phase":1}}`, "no"},
	{"string podIPs", `{"status":{"podIPs":"10.0.0.1"}}`, "no"},
	{"numeric podIP", `{"status":{"podIPs":[{"ip":10}]}}`, "no"},
	{"string conditions", `{"status":{"conditions":"Ready"}}`, "no"},
	{"numeric envFrom prefix", `{"spec":{"containers":[{"envFrom":[{"prefix":1}]}]}}`, "no"},
	{"native sidecar", `{"spec":{"initContainers":[{"name":"sidecar","restartPolicy":"Always"},{"name":"init","restartPolicy":"OnFailure"},{"name":"plain"}]}}`, "yes"},
	{"escaped and unicode strings", `{"metadata":{"name":"a\"b\\c\u003c\u2028é","labels":{"k\u00e9":"v\n"}},"spec":{"containers":[{"name":"\ud83d\ude00","command":["\u0000"]}]}}`, "yes"},
	{"invalid UTF-8 strings", "{\"metadata\":{\"name\":\"a\xffb\",\"labels\":{\"\xfe\":\"\xff\"}}}", "yes"},
}

// TestPodWalkMatchesConverter: the walker agrees with the converter on the
// realistic pods and the edge cases, and accepts or gives up as expected.
func TestPodWalkMatchesConverter(t *testing.T) {
	for name, obj := range podWalkFixtures(t) {
		if !podWalkCheck(t, name, obj) {
			t.Errorf("%s: the walker gave up on a realistic pod", name)
		}
	}
	for _, tc := range podWalkCases {
		obj := podWalkDecode(t, tc.json)
		ok := podWalkCheck(t, tc.name, obj)
		if (tc.ok == "yes" && !ok) || (tc.ok == "no" && ok) {
			t.Errorf("%s: walker ok %v, want %s", tc.name, ok, tc.ok)
		}
	}
}

// TestPodWalkGoTypes: values our decoder never makes but client-go's
// unstructured objects may hold (other numeric types, typed nil maps and
// slices, maps of other types).
func TestPodWalkGoTypes(t *testing.T) {
	type obj = map[string]any
	cont := func(c obj) obj { return obj{"spec": obj{"containers": []any{c}}} }
	cases := []struct {
		name string
		pod  obj
		ok   string
	}{
		{"nil map spec", obj{"spec": map[string]any(nil)}, "yes"},
		{"nil map labels", obj{"metadata": obj{"labels": map[string]any(nil)}}, "yes"},
		{"nil slice containers", obj{"spec": obj{"containers": []any(nil)}}, "yes"},
		{"nil map container", obj{"spec": obj{"containers": []any{map[string]any(nil)}}}, "yes"},
		{"nil map valueFrom", cont(obj{"env": []any{obj{"name": "A", "valueFrom": map[string]any(nil)}}}), "yes"},
		{"nil map secretKeyRef", cont(obj{"env": []any{obj{"valueFrom": obj{"secretKeyRef": map[string]any(nil)}}}}), "yes"},
		{"nil map limits", cont(obj{"resources": obj{"limits": map[string]any(nil)}}), "yes"},
		{"nil slice command", cont(obj{"command": []any(nil)}), "yes"},
		{"json.Number name", obj{"metadata": obj{"name": json.Number("12")}}, "no"},
		{"int32 label", obj{"metadata": obj{"labels": obj{"a": int32(1)}}}, "no"},
		{"int quantity", cont(obj{"resources": obj{"limits": obj{"cpu": 2}}}), "no"},
		{"int32 observedGeneration", obj{"status": obj{"conditions": []any{obj{"observedGeneration": int32(3)}}}}, "no"},
		{"uint64 observedGeneration", obj{"status": obj{"conditions": []any{obj{"observedGeneration": uint64(math.MaxUint64)}}}}, "no"},
		{"NaN observedGeneration", obj{"status": obj{"conditions": []any{obj{"observedGeneration": math.NaN()}}}}, "no"},
		{"Inf observedGeneration", obj{"status": obj{"conditions": []any{obj{"observedGeneration": math.Inf(1)}}}}, "no"},
		{"-0 observedGeneration", obj{"status": obj{"conditions": []any{obj{"observedGeneration": math.Copysign(0, -1)}}}}, "yes"},
		{"min int64 float observedGeneration", obj{"status": obj{"conditions": []any{obj{"observedGeneration": -9223372036854775808.0}}}}, "yes"},
		{"2^63 float observedGeneration", obj{"status": obj{"conditions": []any{obj{"observedGeneration": 9223372036854775808.0}}}}, "no"},
		{"NaN quantity", cont(obj{"resources": obj{"limits": obj{"cpu": math.NaN()}}}), "no"},
		{"map[string]string labels", obj{"metadata": obj{"labels": map[string]string{"a": "b"}}}, "no"},
		{"[]string command", cont(obj{"command": []string{"a"}}), "no"},
		{"[]map containers", obj{"spec": obj{"containers": []map[string]any{{"name": "a"}}}}, "no"},
		{"map[int]any metadata", obj{"metadata": map[int]any{1: "a"}}, "no"},
		{"named string phase", obj{"status": obj{"phase": corev1.PodRunning}}, "no"},
		{"typed Quantity", cont(obj{"resources": obj{"limits": obj{"cpu": resource.MustParse("1")}}}), "no"},
		{"pointer name", obj{"metadata": obj{"name": new(string)}}, "no"},
	}
	for _, tc := range cases {
		ok := podWalkCheck(t, tc.name, tc.pod)
		if (tc.ok == "yes" && !ok) || (tc.ok == "no" && ok) {
			t.Errorf("%s: walker ok %v, want %s", tc.name, ok, tc.ok)
		}
	}
	// A nil object, and a nil map as a present pointer target.
	podWalkCheck(t, "nil object", nil)
	w, ok := walkPod(obj{"spec": obj{"containers": []any{obj{"env": []any{obj{"valueFrom": map[string]any(nil)}}}}}})
	if !ok || w.Spec.Containers[0].Env[0].ValueFrom == nil {
		t.Errorf("a nil valueFrom map must allocate the source, as the converter does: %+v", w)
	}
}

// TestPodWalkQuantityStrings: the walker's quantities are the converter's,
// cached canonical string included.
func TestPodWalkQuantityStrings(t *testing.T) {
	for _, s := range []any{"1", "500m", "16Gi", "200Gi", " 2 ", "1e3", "0.1m", "1.0", "+1", "-1", "0", "100M", "1Ki", "1.5Gi", "1E3", ".5",
		"0.000001", "1n", "12345678901234567890123", "9223372036854775807", "1.000", "010", "5e-1",
		int64(0), int64(1), int64(-1), int64(4), int64(math.MaxInt64), int64(math.MinInt64)} {
		pod := map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"resources": map[string]any{"limits": map[string]any{"x": s}}}}}}
		if !podWalkCheck(t, fmt.Sprintf("quantity %q", s), pod) {
			t.Errorf("quantity %#v: the walker gave up", s)
			continue
		}
		w, _ := walkPod(pod)
		want, _ := podWalkConvert(pod)
		q, wq := w.Spec.Containers[0].Resources.Limits["x"], want.Spec.Containers[0].Resources.Limits["x"]
		if q.String() != wq.String() || q.Format != wq.Format {
			t.Errorf("quantity %#v: walker %s (%s), converter %s (%s)", s, q.String(), q.Format, wq.String(), wq.Format)
		}
	}
}

// jsonValueCopy deep-copies a decoded JSON value (typed nils stay typed).
func jsonValueCopy(v any) any {
	switch v := v.(type) {
	case map[string]any:
		if v == nil {
			return map[string]any(nil) // stays a typed nil
		}
		m := make(map[string]any, len(v))
		for k, e := range v {
			m[k] = jsonValueCopy(e)
		}
		return m
	case []any:
		if v == nil {
			return []any(nil) // stays a typed nil
		}
		l := make([]any, len(v))
		for i, e := range v {
			l[i] = jsonValueCopy(e)
		}
		return l
	}
	return v
}

// podWalkAlternatives are the values put in place of each value in
// TestPodWalkMutations.
var podWalkAlternatives = []any{
	nil, "", "x", "500m", "16Gi", "Always", "2026-11-18T09:35:00Z", " 1 ",
	int64(0), int64(1), int64(-1), int64(math.MaxInt64), float64(1), 1.5, 1e300, true, false,
	[]any{}, []any{nil}, []any{"a"}, []any{int64(1)}, []any{map[string]any{"name": "n"}},
	map[string]any{}, map[string]any{"name": "n", "key": "k"}, map[string]any{"a": int64(1)},
	map[string]any(nil), []any(nil), json.Number("123456789012345678901234"), int32(1),
	map[string]string{"a": "b"}, []string{"a"}, map[int]any{1: "a"},
}

// podWalkMutate calls f with a copy of v in which the value at each position
// is replaced by each alternative, deleted, or given a case-variant sibling.
func podWalkMutate(v any, f func(name string, mutated func(any) any)) {
	// Positions are paths of keys and indexes, applied to a fresh copy.
	type step struct {
		key   string
		index int
	}
	var paths [][]step
	var collect func(p []step, v any)
	collect = func(p []step, v any) {
		paths = append(paths, slices.Clone(p))
		switch v := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(v))
			for k := range v {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				collect(append(p, step{key: k, index: -1}), v[k])
			}
		case []any:
			for i, e := range v {
				collect(append(p, step{index: i}), e)
			}
		}
	}
	collect(nil, v)
	// apply copies root and calls g on the parent of the position p.
	apply := func(root any, p []step, g func(parent any, s step)) any {
		root = jsonValueCopy(root)
		cur := root
		for _, s := range p[:len(p)-1] {
			if s.index < 0 {
				cur = cur.(map[string]any)[s.key]
			} else {
				cur = cur.([]any)[s.index]
			}
		}
		g(cur, p[len(p)-1])
		return root
	}
	pathName := func(p []step) string {
		var b strings.Builder
		for _, s := range p {
			if s.index < 0 {
				b.WriteString("." + s.key)
			} else {
				fmt.Fprintf(&b, "[%d]", s.index)
			}
		}
		return b.String()
	}
	for _, p := range paths {
		if len(p) == 0 {
			continue
		}
		name := pathName(p)
		for i, alt := range podWalkAlternatives {
			f(fmt.Sprintf("%s = alternative %d (%#v)", name, i, alt), func(root any) any {
				return apply(root, p, func(parent any, s step) {
					if s.index < 0 {
						parent.(map[string]any)[s.key] = alt
					} else {
						parent.([]any)[s.index] = alt
					}
				})
			})
		}
		last := p[len(p)-1]
		if last.index >= 0 {
			continue
		}
		f(name+" deleted", func(root any) any {
			return apply(root, p, func(parent any, s step) { delete(parent.(map[string]any), s.key) })
		})
		for _, variant := range []string{strings.ToUpper(last.key), strings.ToUpper(last.key[:min(1, len(last.key))]) + last.key[min(1, len(last.key)):]} {
			if variant == last.key {
				continue
			}
			f(name+" with sibling "+variant, func(root any) any {
				return apply(root, p, func(parent any, s step) {
					m := parent.(map[string]any)
					m[variant] = int64(7)
				})
			})
			f(name+" renamed "+variant, func(root any) any {
				return apply(root, p, func(parent any, s step) {
					m := parent.(map[string]any)
					m[variant] = m[s.key]
					delete(m, s.key)
				})
			})
		}
	}
}

// TestPodWalkMutations replaces every value of the realistic pods by values
// of every kind, deletes every key and adds case variants of it, and checks
// the walker against the converter each time.
func TestPodWalkMutations(t *testing.T) {
	fixtures := podWalkFixtures(t)
	for _, name := range []string{"gpu worker", "scalefixture pod (client-go)"} {
		root := fixtures[name]
		walked, readable, total := 0, 0, 0
		podWalkMutate(root, func(desc string, mutated func(any) any) {
			total++
			m := mutated(root).(map[string]any)
			if podWalkCheck(t, name+desc, m) {
				walked++
			}
			if _, err := podWalkConvert(m); err == nil {
				readable++
			}
		})
		t.Logf("%s: %d mutations, %d readable by the converter, %d of them by the walker", name, total, readable, walked)
		if walked < readable*9/10 {
			t.Errorf("%s: the walker read only %d of %d readable mutations", name, walked, readable)
		}
	}
}

// TestPodWalkCaptures: the walker reads every Pod of the example and fixture
// captures, exactly as the converter does.
func TestPodWalkCaptures(t *testing.T) {
	n := 0
	for _, f := range captureFiles(t) {
		for _, obj := range captureObjects(t, f) {
			u := &unstructured.Unstructured{Object: obj}
			if u.GetKind() != "Pod" {
				continue
			}
			n++
			if !podWalkCheck(t, f+": "+u.GetName(), u.Object) {
				t.Errorf("%s: the walker gave up on pod %s", f, u.GetName())
			}
		}
	}
	if n < 20 {
		t.Errorf("found only %d pods", n)
	}
}

// TestPodWalkSameObjects: FromObjects types every capture the same with the
// walker and with the converter alone.
func TestPodWalkSameObjects(t *testing.T) {
	defer func(v bool) { podWalkEnabled = v }(podWalkEnabled)
	for _, f := range captureFiles(t) {
		objs := captureObjects(t, f)
		podWalkEnabled = true
		walked := FromObjects(objs)
		podWalkEnabled = false
		converted := FromObjects(objs)
		if !reflect.DeepEqual(walked, converted) {
			wj, _ := json.Marshal(walked)
			cj, _ := json.Marshal(converted)
			t.Errorf("%s: with and without the walker differ\nwalker:    %s\nconverter: %s", f, wj, cj)
		}
	}
}

// TestPodWalkUnreadContainerFields: malformed container fields nothing reads
// (ports, probes, image, …) do not make the pod unreadable, with or without
// the walker, nor on the JSON path.
func TestPodWalkUnreadContainerFields(t *testing.T) {
	defer func(v bool) { podWalkEnabled = v }(podWalkEnabled)
	u := &unstructured.Unstructured{Object: podWalkDecode(t, `{"apiVersion":"v1","kind":"Pod",
		"metadata":{"name":"w","namespace":"ns","labels":{"nvidia.com/dynamo-graph-deployment-name":"d"}},
		"spec":{"volumes":"bogus","containers":[{"name":"main","image":5,"ports":"bogus","livenessProbe":3,"readinessProbe":[1],
			"volumeMounts":{"a":1},"securityContext":[],"imagePullPolicy":false,"workingDir":{},
			"command":["python3","-m","dynamo.vllm"],"env":[{"name":"A","value":"1"}],
			"resources":{"limits":{"nvidia.com/gpu":"2"}}}]},
		"status":{"phase":"Running","containerStatuses":"bogus","hostIP":7}}`)}
	if _, ok := walkPod(u.Object); !ok {
		t.Error("the walker gave up on a pod with malformed unread fields")
	}
	var pods [3]*raw.Pod
	for i, walk := range []bool{true, false} {
		podWalkEnabled = walk
		pods[i] = FromObject(u.Object).Pods[0]
	}
	data, err := json.Marshal(u.Object)
	if err != nil {
		t.Fatal(err)
	}
	pods[2] = jsonObjects(t, data).Pods[0]
	for i, p := range pods {
		if p.Invalid != "" {
			t.Fatalf("path %d: %s", i, p.Invalid)
		}
		if c := p.Spec.Containers; len(c) != 1 || c[0].Name != "main" || len(c[0].Command) != 3 || len(c[0].Env) != 1 || c[0].Resources.Limits["nvidia.com/gpu"] != "2" {
			t.Fatalf("path %d: containers %+v", i, c)
		}
		if !reflect.DeepEqual(p, pods[0]) {
			t.Errorf("path %d differs:\n%+v\n%+v", i, p, pods[0])
		}
	}
}

// TestPodWalkCoversTypes: the walker reads every field of the types
// podWire converts into, so that a new field in k8s.io/api (read by the
// converter) fails here instead of being silently dropped. Update the walker,
// the JSON reader (pod_json.go) and this list together.
func TestPodWalkCoversTypes(t *testing.T) {
	var w podWire
	read := map[reflect.Type][]string{
		reflect.TypeOf(w):                              {"metadata", "spec", "status"},
		reflect.TypeOf(w.Metadata):                     {"name", "namespace", "labels", "annotations"},
		reflect.TypeOf(w.Spec):                         {"nodeName", "containers", "initContainers"},
		reflect.TypeOf(w.Status):                       {"phase", "podIP", "podIPs", "conditions"},
		reflect.TypeOf(containerWire{}):                {"name", "command", "args", "env", "envFrom", "resources", "restartPolicy"},
		reflect.TypeOf(corev1.EnvVar{}):                {"name", "value", "valueFrom"},
		reflect.TypeOf(corev1.EnvVarSource{}):          {"fieldRef", "resourceFieldRef", "configMapKeyRef", "secretKeyRef", "fileKeyRef"},
		reflect.TypeOf(corev1.ObjectFieldSelector{}):   {"apiVersion", "fieldPath"},
		reflect.TypeOf(corev1.ResourceFieldSelector{}): {"containerName", "resource", "divisor"},
		reflect.TypeOf(corev1.ConfigMapKeySelector{}):  {"", "key", "optional"},
		reflect.TypeOf(corev1.SecretKeySelector{}):     {"", "key", "optional"},
		reflect.TypeOf(corev1.FileKeySelector{}):       {"volumeName", "path", "key", "optional"},
		reflect.TypeOf(corev1.LocalObjectReference{}):  {"name"},
		reflect.TypeOf(corev1.EnvFromSource{}):         {"prefix", "configMapRef", "secretRef"},
		reflect.TypeOf(corev1.ConfigMapEnvSource{}):    {"", "optional"},
		reflect.TypeOf(corev1.SecretEnvSource{}):       {"", "optional"},
		reflect.TypeOf(corev1.ResourceRequirements{}):  {"limits", "requests", "claims"},
		reflect.TypeOf(corev1.ResourceClaim{}):         {"name", "request"},
		reflect.TypeOf(corev1.PodIP{}):                 {"ip"},
		reflect.TypeOf(corev1.PodCondition{}):          {"type", "observedGeneration", "status", "lastProbeTime", "lastTransitionTime", "reason", "message"},
	}
	leaves := map[reflect.Type]bool{reflect.TypeOf(resource.Quantity{}): true, reflect.TypeOf(metav1.Time{}): true}
	seen := map[reflect.Type]bool{}
	var visit func(ty reflect.Type)
	visit = func(ty reflect.Type) {
		switch ty.Kind() {
		case reflect.Pointer, reflect.Slice:
			visit(ty.Elem())
			return
		case reflect.Map:
			if ty.Key().Kind() != reflect.String {
				t.Errorf("%v: map keys must be strings", ty)
			}
			visit(ty.Elem())
			return
		case reflect.String, reflect.Bool, reflect.Int64:
			return
		case reflect.Struct:
		default:
			t.Errorf("%v: a kind the walker does not read", ty)
			return
		}
		if leaves[ty] || seen[ty] {
			return
		}
		seen[ty] = true
		want, ok := read[ty]
		if !ok {
			t.Errorf("%v: a struct the walker does not know", ty)
			return
		}
		var got []string
		for i := range ty.NumField() {
			f := ty.Field(i)
			got = append(got, strings.Split(f.Tag.Get("json"), ",")[0])
			visit(f.Type)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%v: fields %q, the walker reads %q", ty, got, want)
		}
	}
	visit(reflect.TypeOf(w))
	if len(seen) != len(read) {
		t.Errorf("visited %d structs, listed %d", len(seen), len(read))
	}
}

// FuzzPodWalkMatchesConverter: on any JSON object (decoded by both capture
// decoders) the walker never panics, agrees with the converter whenever it
// accepts, and gives up whenever the converter fails; convertPodTree gives
// the same result with and without it.
func FuzzPodWalkMatchesConverter(f *testing.F) {
	f.Add([]byte(podWalkGPUWorker))
	f.Add([]byte(podWalkScaleWorker))
	for _, tc := range podWalkCases {
		f.Add([]byte(tc.json))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var objs []map[string]any
		if m, err := JSONObject(data); err == nil {
			objs = append(objs, m)
		}
		if end, ok := jsonscan.Validate(data, 0); ok && jsonscan.SkipWS(data, end) == len(data) {
			d := jsonscan.Decoder{B: data}
			if m, ok := jsonValueCopy(func() any { v, _ := d.Value(jsonscan.SkipWS(data, 0)); return v }()).(map[string]any); ok && m != nil {
				objs = append(objs, m)
			}
		}
		defer func(v bool) { podWalkEnabled = v }(podWalkEnabled)
		for _, m := range objs {
			podWalkCheck(t, "fuzz", m)
			podWalkEnabled = true
			p1, err1 := convertPodTree(m)
			podWalkEnabled = false
			p2, err2 := convertPodTree(m)
			// Only whether it fails: the converter's message may name any of
			// several bad values (it ranges over maps).
			if !reflect.DeepEqual(p1, p2) || (err1 == nil) != (err2 == nil) {
				t.Errorf("convertPodTree differs with the walker: %+v (%v) vs %+v (%v)", p1, err1, p2, err2)
			}
		}
	})
}

// BenchmarkPodConvert compares the walker with the converter on the scale
// capture's worker pod and on a realistic GPU worker pod.
func BenchmarkPodConvert(b *testing.B) {
	pods := []struct {
		name string
		obj  map[string]any
	}{{"scale", podWalkDecode(b, podWalkScaleWorker)}, {"gpu-worker", podWalkDecode(b, podWalkGPUWorker)}}
	for _, p := range pods {
		b.Run(p.name+"/walker", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, ok := walkPod(p.obj); !ok {
					b.Fatal("the walker gave up")
				}
			}
		})
		b.Run(p.name+"/converter", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := podWalkConvert(p.obj); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
