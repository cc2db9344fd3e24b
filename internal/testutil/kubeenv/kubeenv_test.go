package kubeenv_test

import (
	"bufio"
	"context"
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/kubeenv"
)

// env is shared by the tests of this package: one control plane, one start.
var env *kubeenv.Env

const crdDir = "../../../test/crds"

func TestMain(m *testing.M) {
	os.Exit(kubeenv.RunTests(m, kubeenv.Options{AuditLog: true, CRDs: []string{crdDir}}, &env))
}

var (
	dgdV1beta1  = schema.GroupVersionResource{Group: "nvidia.com", Version: "v1beta1", Resource: "dynamographdeployments"}
	dgdV1alpha1 = schema.GroupVersionResource{Group: "nvidia.com", Version: "v1alpha1", Resource: "dynamographdeployments"}
	dwmGVR      = schema.GroupVersionResource{Group: "nvidia.com", Version: "v1alpha1", Resource: "dynamoworkermetadatas"}
	ctbGVR      = schema.GroupVersionResource{Group: "grove.io", Version: "v1alpha1", Resource: "clustertopologybindings"}
)

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(t.Context(), time.Minute)
	t.Cleanup(cancel)
	return c
}

// TestVersionsMatchProvisionScript keeps the Go constants (which locate the
// default binary directory) in sync with hack/testbin/versions.env.
func TestVersionsMatchProvisionScript(t *testing.T) {
	f, err := os.Open("../../../hack/testbin/versions.env")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok && !strings.HasPrefix(k, "#") {
			got[k] = v
		}
	}
	if got["K8S_VERSION"] != kubeenv.KubernetesVersion || got["ETCD_VERSION"] != kubeenv.EtcdVersion {
		t.Fatalf("versions.env has %v; kubeenv has K8S_VERSION=%s ETCD_VERSION=%s", got, kubeenv.KubernetesVersion, kubeenv.EtcdVersion)
	}
}

func TestControlPlane(t *testing.T) {
	e := kubeenv.Require(t, env)
	ctx := ctx(t)
	cs, err := e.Clientset()
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := e.Dynamic()
	if err != nil {
		t.Fatal(err)
	}
	ns, err := e.NewNamespace(ctx, t.Name())
	if err != nil {
		t.Fatal(err)
	}
	audit0, err := e.AuditOffset()
	if err != nil {
		t.Fatal(err)
	}

	t.Run("version", func(t *testing.T) {
		v, err := cs.Discovery().ServerVersion()
		if err != nil {
			t.Fatal(err)
		}
		if v.GitVersion != kubeenv.KubernetesVersion {
			t.Errorf("server version %s, want %s", v.GitVersion, kubeenv.KubernetesVersion)
		}
	})

	// Typed creates: a labelled GPU node and a pod bound to it.
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{
		Name:   "gpu-node-0",
		Labels: map[string]string{"nvidia.com/gpu.present": "true", "topology.kubernetes.io/zone": "zone-a"},
	}}
	if _, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "worker-0", Namespace: ns, Labels: map[string]string{"nvidia.com/dynamo-component-type": "decode"}},
		Spec: corev1.PodSpec{
			NodeName:   "gpu-node-0",
			Containers: []corev1.Container{{Name: "main", Image: "example.invalid/worker"}},
		},
	}
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// Apply: custom resources, with status through the status subresource.
	objs, err := e.ApplyYAML(ctx, []byte(`
apiVersion: nvidia.com/v1beta1
kind: DynamoGraphDeployment
metadata:
  name: llm
  namespace: `+ns+`
spec:
  backendFramework: vllm
  components:
  - name: Frontend
    type: frontend
  - name: VllmDecodeWorker
    type: decode
    replicas: 2
status:
  state: successful
  conditions:
  - type: Ready
    status: "True"
    reason: all_resources_are_ready
    message: ok
    lastTransitionTime: "2026-08-01T00:00:00Z"
---
apiVersion: nvidia.com/v1alpha1
kind: DynamoWorkerMetadata
metadata:
  name: worker-0
  namespace: `+ns+`
spec:
  data:
    endpoints: {}
    model_cards: {}
---
apiVersion: grove.io/v1alpha1
kind: ClusterTopologyBinding
metadata:
  name: gpu-fabric
spec:
  levels:
  - domain: zone
    key: topology.kubernetes.io/zone
  - domain: host
    key: kubernetes.io/hostname
---
apiVersion: v1
kind: Pod
metadata:
  name: worker-0
  namespace: `+ns+`
status:
  phase: Running
  podIP: 10.1.2.3
`))
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 4 {
		t.Fatalf("applied %d objects, want 4", len(objs))
	}

	t.Run("client-go", func(t *testing.T) {
		nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "nvidia.com/gpu.present=true"})
		if err != nil {
			t.Fatal(err)
		}
		if len(nodes.Items) != 1 || nodes.Items[0].Labels["topology.kubernetes.io/zone"] != "zone-a" {
			t.Errorf("nodes by label: %+v", nodes.Items)
		}
		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=gpu-node-0"})
		if err != nil {
			t.Fatal(err)
		}
		if len(pods.Items) != 1 || pods.Items[0].Status.Phase != corev1.PodRunning || pods.Items[0].Status.PodIP != "10.1.2.3" {
			t.Errorf("pods on gpu-node-0: %+v", pods.Items)
		}
	})

	t.Run("dynamic", func(t *testing.T) {
		l, err := dyn.Resource(dgdV1beta1).Namespace("").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Items) != 1 || l.Items[0].GetName() != "llm" {
			t.Fatalf("DGDs: %v", l.Items)
		}
		state, _, _ := unstructuredString(l.Items[0].Object, "status", "state")
		if state != "successful" {
			t.Errorf("DGD status.state = %q, want successful (status subresource apply)", state)
		}
		// Both versions are served; without a conversion webhook only apiVersion changes.
		a, err := dyn.Resource(dgdV1alpha1).Namespace(ns).Get(ctx, "llm", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if a.GetAPIVersion() != "nvidia.com/v1alpha1" {
			t.Errorf("v1alpha1 read returned apiVersion %s", a.GetAPIVersion())
		}
		if _, err := dyn.Resource(dwmGVR).Namespace(ns).Get(ctx, "worker-0", metav1.GetOptions{}); err != nil {
			t.Error(err)
		}
		if _, err := dyn.Resource(ctbGVR).Get(ctx, "gpu-fabric", metav1.GetOptions{}); err != nil {
			t.Error(err)
		}
		// The CRD schema is enforced (v1beta1 component type enum).
		_, err = e.ApplyYAML(ctx, []byte("apiVersion: nvidia.com/v1beta1\nkind: DynamoGraphDeployment\nmetadata: {name: bad, namespace: "+ns+"}\nspec:\n  components: [{name: x, type: bogus}]\n"))
		if !apierrors.IsInvalid(err) {
			t.Errorf("invalid DGD: err = %v, want Invalid", err)
		}
	})

	t.Run("kubectl", func(t *testing.T) {
		out, err := e.Kubectl(ctx, "", "get", "dgd", "-A").CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl get dgd -A: %v\n%s", err, out)
		}
		// Printer columns: NAMESPACE NAME READY BACKEND AGE.
		if !strings.Contains(string(out), ns) || !strings.Contains(string(out), "llm") || !strings.Contains(string(out), "vllm") {
			t.Errorf("kubectl get dgd -A:\n%s", out)
		}
		out, err = e.Kubectl(ctx, "", "get", "dwm", "-n", ns, "-o", "name").CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != "dynamoworkermetadata.nvidia.com/worker-0" {
			t.Errorf("kubectl get dwm: %v\n%s", err, out)
		}
	})

	t.Run("rbac", func(t *testing.T) {
		kc, err := e.KubeconfigFor("alice", []string{"dynamo-readers"})
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := clientcmd.BuildConfigFromFlags("", kc)
		if err != nil {
			t.Fatal(err)
		}
		alice, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		_, err = alice.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		var st apierrors.APIStatus
		if !apierrors.IsForbidden(err) || !errors.As(err, &st) || st.Status().Code != 403 {
			t.Fatalf("alice listing nodes: err = %v, want 403 Forbidden", err)
		}
		out, err := e.Kubectl(ctx, kc, "get", "nodes").CombinedOutput()
		if err == nil || !strings.Contains(string(out), "Forbidden") {
			t.Errorf("kubectl get nodes as alice: err=%v\n%s", err, out)
		}
		// Grant the group read access to nodes; RBAC picks it up within moments.
		if _, err := e.ApplyYAML(ctx, []byte(`
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: node-reader}
rules:
- apiGroups: [""]
  resources: [nodes]
  verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: dynamo-readers-node-reader}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: node-reader}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: Group, name: dynamo-readers}
`)); err != nil {
			t.Fatal(err)
		}
		c, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		err = kubeenv.WaitFor(c, "alice to be allowed to list nodes", func(ctx context.Context) (bool, error) {
			_, err := alice.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
			return err == nil, err
		})
		if err != nil {
			t.Error(err)
		}
	})

	t.Run("audit", func(t *testing.T) {
		wait := func(desc string, match func(kubeenv.AuditEvent) bool) kubeenv.AuditEvent {
			t.Helper()
			c, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			ev, err := e.WaitForAuditEvent(c, audit0, match)
			if err != nil {
				t.Errorf("no audit event for %s: %v", desc, err)
			}
			return ev
		}
		for _, r := range []struct{ resource, ns, name string }{{"nodes", "", "gpu-node-0"}, {"pods", ns, "worker-0"}} {
			wait("create "+r.resource, func(ev kubeenv.AuditEvent) bool {
				return ev.Verb == "create" && ev.ObjectRef != nil && ev.ObjectRef.Resource == r.resource &&
					ev.ObjectRef.Namespace == r.ns && ev.User == kubeenv.AdminUser && ev.Code == 201 && ev.IsMutating()
			})
		}
		wait("apply DGD status", func(ev kubeenv.AuditEvent) bool {
			return ev.Verb == "patch" && ev.ObjectRef != nil && ev.ObjectRef.Resource == "dynamographdeployments" &&
				ev.ObjectRef.Subresource == "status" && ev.ObjectRef.Name == "llm" && ev.Code == 200
		})
		wait("alice's forbidden list", func(ev kubeenv.AuditEvent) bool {
			return ev.User == "alice" && ev.Verb == "list" && ev.ObjectRef != nil && ev.ObjectRef.Resource == "nodes" &&
				ev.Code == 403 && !ev.IsMutating()
		})
		all, err := e.AuditEvents()
		if err != nil || len(all) == 0 {
			t.Errorf("AuditEvents: %d events, err %v", len(all), err)
		}
	})
}

func unstructuredString(obj map[string]any, fields ...string) (string, bool, error) {
	var cur any = obj
	for _, f := range fields {
		m, ok := cur.(map[string]any)
		if !ok {
			return "", false, nil
		}
		cur = m[f]
	}
	s, ok := cur.(string)
	return s, ok, nil
}

// TestStopLeavesNoProcesses starts a private control plane and a separate etcd
// and checks that stopping them leaves no process behind.
func TestStopLeavesNoProcesses(t *testing.T) {
	t.Parallel()
	// A private Env, also used to check the legacy Grove CRD, which cannot share
	// a cluster with ClusterTopologyBinding (both claim the short name "ct").
	e := kubeenv.Start(t, kubeenv.Options{CRDs: []string{crdDir + "/legacy"}})
	if _, err := e.ApplyYAML(ctx(t), []byte(`
apiVersion: grove.io/v1alpha1
kind: ClusterTopology
metadata: {name: grove-topology}
spec:
  levels:
  - {domain: zone, key: topology.kubernetes.io/zone}
  - {domain: rack, key: nvidia.com/rack}
`)); err != nil {
		t.Fatal(err)
	}
	etcd := kubeenv.StartEtcd(t)
	pids := append(e.PIDs(), etcd.PID())
	if len(pids) != 3 {
		t.Fatalf("PIDs = %v, want apiserver, etcd, etcd", pids)
	}
	for _, pid := range pids {
		if !alive(pid) {
			t.Fatalf("process group %d not running before Stop", pid)
		}
	}
	if err := e.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := etcd.Stop(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("process group %d still alive after Stop", pid)
		}
	}
	if _, err := os.Stat(e.Dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Env.Dir %s not removed: %v", e.Dir, err)
	}
	if err := e.Stop(); err != nil { // idempotent
		t.Errorf("second Stop: %v", err)
	}
}

// alive reports whether any process is in process group pgid.
func alive(pgid int) bool {
	err := syscall.Kill(-pgid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// TestDecodeKeepsLargeIntegers guards against float64 rounding of ids above 2^53
// in YAML and JSON documents.
func TestDecodeKeepsLargeIntegers(t *testing.T) {
	for _, doc := range []string{
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {}\nspec: {id: 7587885012467105317}\n",
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"spec":{"id":7587885012467105317}}`,
	} {
		objs, err := kubeenv.Decode([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		got, found, err := unstructured.NestedFieldNoCopy(objs[0].Object, "spec", "id")
		if err != nil || !found {
			t.Fatalf("spec.id: %v %v", found, err)
		}
		if v, ok := got.(int64); !ok || v != 7587885012467105317 {
			t.Errorf("spec.id = %v (%T), want int64 7587885012467105317", got, got)
		}
	}
}
