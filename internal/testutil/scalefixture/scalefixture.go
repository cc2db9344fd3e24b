package scalefixture

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/kubeenv"
)

const (
	// Namespace is the deployment's namespace.
	Namespace = "inference"
	// DGDName is the DynamoGraphDeployment's name.
	DGDName = "llama3-70b"
	dynNS   = Namespace + "-" + DGDName
	zoneKey = "topology.kubernetes.io/zone"
	model   = "meta-llama/Llama-3.3-70B-Instruct"
	image   = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.3.0"
)

var (
	zones  = []string{"us-east-1a", "us-east-1b", "us-east-1c"}
	dwmGVR = schema.GroupVersionResource{Group: "nvidia.com", Version: "v1alpha1", Resource: "dynamoworkermetadatas"}
)

// NodeName is the name of node i (zones round-robin).
func NodeName(i int) string    { return fmt.Sprintf("gpu-%s-%04d", zones[i%len(zones)], i) }
func podNode(i, nodes int) int { return i % nodes }
func compType(i int) string {
	if i%2 == 0 {
		return "prefill"
	}
	return "decode"
}

// PodName is the name of worker pod i (even: prefill, odd: decode).
func PodName(i int) string { return fmt.Sprintf("%s-0-%s-%05d", DGDName, compType(i), i) }

// CreateNode creates node i: Ready, 8 GPUs, its zone label.
func CreateNode(ctx context.Context, cs kubernetes.Interface, i int) error {
	res := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("96"),
		corev1.ResourceMemory: resource.MustParse("1056Gi"),
		"nvidia.com/gpu":      resource.MustParse("8"),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	name := NodeName(i)
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			"kubernetes.io/hostname":                name,
			"kubernetes.io/os":                      "linux",
			"nvidia.com/gpu.present":                "true",
			"nvidia.com/gpu.product":                "NVIDIA-H100-80GB-HBM3",
			"topology.kubernetes.io/region":         "us-east-1",
			zoneKey:                                 zones[i%len(zones)],
			"topology.k8s.aws/network-node-layer-3": fmt.Sprintf("rack-%d", i/32),
		}},
	}
	got, err := cs.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	got.Status = corev1.NodeStatus{
		Capacity: res, Allocatable: res,
		Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", Message: "kubelet is posting ready status"}},
	}
	_, err = cs.CoreV1().Nodes().UpdateStatus(ctx, got, metav1.UpdateOptions{})
	return err
}

func podIP(i int) string { return fmt.Sprintf("10.%d.%d.%d", 64+i/65536, (i/256)%256, i%256) }

// CreatePod creates worker pod i on node i mod nodes and marks it Running and Ready.
func CreatePod(ctx context.Context, cs kubernetes.Interface, i, nodes int) (types.UID, error) {
	ni := podNode(i, nodes)
	zone := zones[ni%len(zones)]
	ct := compType(i)
	comp := strings.ToUpper(ct[:1]) + ct[1:]
	gpu := corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("4")}
	req := corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("4"), corev1.ResourceCPU: resource.MustParse("16"), corev1.ResourceMemory: resource.MustParse("200Gi")}
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: PodName(i), Namespace: Namespace,
			Annotations: map[string]string{"nvidia.com/topology-label-key": zoneKey},
			Labels: map[string]string{
				"app.kubernetes.io/part-of":               DGDName,
				"nvidia.com/dynamo-component":             comp,
				"nvidia.com/dynamo-component-type":        ct,
				"nvidia.com/dynamo-discovery-backend":     "kubernetes",
				"nvidia.com/dynamo-discovery-enabled":     "true",
				"nvidia.com/dynamo-graph-deployment-name": DGDName,
				"nvidia.com/dynamo-namespace":             dynNS,
				zoneKey:                                   zone,
			},
		},
		Spec: corev1.PodSpec{
			NodeName: NodeName(ni),
			Containers: []corev1.Container{{
				Name: "main", Image: image,
				Command: []string{"python3", "-m", "dynamo.vllm"},
				Args:    []string{"--model", model},
				Env: []corev1.EnvVar{
					{Name: "DYN_NAMESPACE", Value: dynNS},
					{Name: "DYN_COMPONENT", Value: ct},
					{Name: "DYN_PARENT_DGD_K8S_NAME", Value: DGDName},
					{Name: "DYN_PARENT_DGD_K8S_NAMESPACE", Value: Namespace},
					{Name: "DYN_DISCOVERY_BACKEND", Value: "kubernetes"},
					{Name: "DYN_SYSTEM_PORT", Value: "9090"},
					{Name: "DYN_KV_TRANSFER_DOMAIN", Value: "zone"},
					{Name: "DYN_KV_TRANSFER_ENFORCEMENT", Value: "required"},
				},
				Resources: corev1.ResourceRequirements{Limits: gpu, Requests: req},
			}},
		},
	}
	got, err := cs.CoreV1().Pods(Namespace).Create(ctx, p, metav1.CreateOptions{})
	if err != nil {
		return "", err
	}
	start := metav1.NewTime(time.Date(2026, 11, 18, 9, 35, 0, 0, time.UTC))
	got.Status = corev1.PodStatus{
		Phase: corev1.PodRunning, PodIP: podIP(i), PodIPs: []corev1.PodIP{{IP: podIP(i)}}, StartTime: &start,
		Conditions: []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
			{Type: corev1.PodInitialized, Status: corev1.ConditionTrue},
			{Type: corev1.ContainersReady, Status: corev1.ConditionTrue},
			{Type: corev1.PodReady, Status: corev1.ConditionTrue},
		},
		ContainerStatuses: []corev1.ContainerStatus{{
			Name: "main", Image: image, Ready: true, Started: ptr(true),
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: start}},
		}},
	}
	if _, err := cs.CoreV1().Pods(Namespace).UpdateStatus(ctx, got, metav1.UpdateOptions{}); err != nil {
		return "", err
	}
	return got.UID, nil
}

// CreateDWM creates pod i's DynamoWorkerMetadata (endpoint and model card), owned by the pod.
func CreateDWM(ctx context.Context, dyn dynamic.Interface, i int, podUID types.UID, nodes int) error {
	zone := zones[podNode(i, nodes)%len(zones)]
	ct := compType(i)
	name := PodName(i)
	inst := int64(6245565840000000 + i)
	hex := strconv.FormatInt(inst, 16)
	key := fmt.Sprintf("%s/%s/generate/%s", dynNS, ct, hex)
	needs := "decode"
	if ct == "decode" {
		needs = "prefill"
	}
	o := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "nvidia.com/v1alpha1",
		"kind":       "DynamoWorkerMetadata",
		"metadata": map[string]any{
			"name": name, "namespace": Namespace,
			"ownerReferences": []any{map[string]any{
				"apiVersion": "v1", "kind": "Pod", "name": name, "uid": string(podUID),
				"controller": false, "blockOwnerDeletion": false,
			}},
		},
		"spec": map[string]any{"data": map[string]any{
			"endpoints": map[string]any{key: map[string]any{
				"component": ct, "endpoint": "generate", "instance_id": inst, "namespace": dynNS,
				"transport": map[string]any{"tcp": fmt.Sprintf("%s:41233/%s/generate", podIP(i), hex)},
				"type":      "Endpoint",
			}},
			"event_channels": map[string]any{},
			"event_sources":  map[string]any{},
			"model_cards": map[string]any{key: map[string]any{
				"card_json": map[string]any{
					"context_length":      int64(131072),
					"display_name":        model,
					"kv_cache_block_size": int64(16),
					"migration_limit":     int64(0),
					"model_input":         "Tokens",
					"model_type":          "Chat | Completions",
					"needs":               []any{[]any{needs}},
					"runtime_config": map[string]any{
						"data_parallel_size":       int64(1),
						"data_parallel_start_rank": int64(0),
						"enable_local_indexer":     true,
						"kv_transfer_domain":       "zone",
						"kv_transfer_enforcement":  "required",
						"max_num_batched_tokens":   int64(16384),
						"max_num_seqs":             int64(256),
						"stable_routing_id":        name,
						"taints":                   []any{"dynamo.topology/zone=" + zone},
						"topology_domains":         map[string]any{"zone": zone},
						"total_kv_blocks":          int64(61034),
					},
					"slug":        "meta-llama_llama-3_3-70b-instruct",
					"worker_type": ct,
				},
				"component": ct, "endpoint": "generate", "instance_id": inst, "namespace": dynNS,
				"type": "Model",
			}},
		}},
	}}
	_, err := dyn.Resource(dwmGVR).Namespace(Namespace).Create(ctx, o, metav1.CreateOptions{})
	return err
}

// ApplyDGD applies the DynamoGraphDeployment with pods replicas split over prefill and decode.
func ApplyDGD(ctx context.Context, env *kubeenv.Env, pods int) error {
	worker := func(name, typ string, replicas int) map[string]any {
		return map[string]any{
			"name": name, "type": typ, "replicas": int64(replicas),
			"podTemplate": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{
				"name": "main", "image": image,
				"command": []any{"python3", "-m", "dynamo.vllm"}, "args": []any{"--model", model},
				"resources": map[string]any{"limits": map[string]any{"nvidia.com/gpu": "4"}},
			}}}},
		}
	}
	o := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "nvidia.com/v1beta1",
		"kind":       "DynamoGraphDeployment",
		"metadata":   map[string]any{"name": DGDName, "namespace": Namespace},
		"spec": map[string]any{
			"backendFramework": "vllm",
			"components": []any{
				worker("Prefill", "prefill", (pods+1)/2),
				worker("Decode", "decode", pods/2),
			},
			"experimental": map[string]any{"kvTransferPolicy": map[string]any{
				"domain": "zone", "enforcement": "required", "labelKey": zoneKey,
			}},
		},
		"status": map[string]any{
			"conditions": []any{map[string]any{
				"type": "Ready", "status": "True", "reason": "all_resources_are_ready", "message": "",
				"lastTransitionTime": "2026-11-18T09:41:00Z",
			}},
			"state": "successful",
		},
	}}
	_, err := env.Apply(ctx, o)
	return err
}

// Parallel runs f(0..n-1) on workers goroutines and returns the first error.
func Parallel(n, workers int, f func(i int) error) error {
	ch := make(chan int)
	var (
		wg      sync.WaitGroup
		once    sync.Once
		firstEr error
		failed  atomic.Bool
	)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range ch {
				if failed.Load() {
					continue
				}
				if err := f(i); err != nil {
					once.Do(func() { firstEr = err })
					failed.Store(true)
				}
			}
		}()
	}
	for i := 0; i < n; i++ {
		ch <- i
	}
	close(ch)
	wg.Wait()
	return firstEr
}

func ptr[T any](v T) *T { return &v }

// ModuleRoot is the directory of the kubectl-dynamo module the harness runs in.
func ModuleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", err
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("run from inside the kubectl-dynamo module")
	}
	return filepath.Dir(mod), nil
}

// Logf prints a time-stamped progress line to w (the harnesses' standard error).
func Logf(w io.Writer, format string, args ...any) {
	fmt.Fprintf(w, time.Now().Format("15:04:05 ")+format+"\n", args...)
}

// Clients returns fast clients for creating the objects: QPS 500 / burst 1000,
// protobuf for the core types.
func Clients(env *kubeenv.Env) (kubernetes.Interface, dynamic.Interface, error) {
	rc := rest.CopyConfig(env.RESTConfig)
	rc.QPS, rc.Burst = 500, 1000
	pcfg := rest.CopyConfig(rc)
	pcfg.ContentType = "application/vnd.kubernetes.protobuf"
	pcfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	cs, err := kubernetes.NewForConfig(pcfg)
	if err != nil {
		return nil, nil, err
	}
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		return nil, nil, err
	}
	return cs, dyn, nil
}
