package source

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/etcdfixture"
	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/fakefrontend"
	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/fakekube"
	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/kubeenv"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw/decode"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/kube"
)

// liveFixture reads a test/fixtures/live file with NAMESPACE replaced.
func liveFixture(t *testing.T, name, ns string) []byte {
	t.Helper()
	data, err := os.ReadFile("../../test/fixtures/live/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return []byte(strings.ReplaceAll(string(data), "NAMESPACE", ns))
}

// find is the whole object of kind and name among objs, nil when absent.
func find(objs []raw.Object, kind, name string) *unstructured.Unstructured {
	for _, m := range objs {
		if o := (&unstructured.Unstructured{Object: m}); o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	return nil
}

// typedNames lists the typed objects' names by kind, in order.
func typedNames(o raw.Objects) map[string][]string {
	got := map[string][]string{}
	add := func(kind, name string) { got[kind] = append(got[kind], name) }
	for _, x := range o.DGDs {
		add(x.Kind, x.Name)
	}
	for _, x := range o.Topologies {
		add(x.Kind, x.Name)
	}
	for _, x := range o.Deployments {
		add(x.Kind, x.Name)
	}
	for _, x := range o.Nodes {
		add(x.Kind, x.Name)
	}
	for _, x := range o.Services {
		add(x.Kind, x.Name)
	}
	for _, x := range o.Pods {
		add(x.Kind, x.Name)
	}
	for _, x := range o.DWMs {
		add(x.Kind, x.Name)
	}
	for _, x := range o.EndpointSlices {
		add(x.Kind, x.Name)
	}
	for _, x := range o.Events {
		add(x.Kind, x.Name)
	}
	return got
}

// TestLiveCollect runs the collector against a real kube-apiserver (RBAC and
// audit log on) with the Dynamo and Grove CRDs installed. Subtests share the
// control plane and run in order.
func TestLiveCollect(t *testing.T) {
	e := kubeenv.Start(t, kubeenv.Options{AuditLog: true, CRDs: []string{"../../test/crds"}})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns, err := e.NewNamespace(ctx, "inf")
	if err != nil {
		t.Fatal(err)
	}
	if err := applyYAML(ctx, e, liveFixture(t, "deployment.yaml", ns)); err != nil {
		t.Fatal(err)
	}
	if _, err := e.ApplyYAML(ctx, liveFixture(t, "rbac.yaml", ns)); err != nil {
		t.Fatal(err)
	}
	auditFrom, err := e.AuditOffset()
	if err != nil {
		t.Fatal(err)
	}
	restFor := func(user string) *rest.Config {
		cfg, err := e.RESTConfigFor(user, nil)
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	inspector := restFor("inspector")

	t.Run("full read with the reader ClusterRole", func(t *testing.T) {
		api, err := kube.NewAPI(inspector)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Collect(ctx, CollectOptions{Kube: api, Namespace: ns, Context: "kubeenv", NoFrontend: true, KeepObjects: true})
		if err != nil {
			t.Fatal(err)
		}
		got := typedNames(b.Objects)
		whole := map[string][]string{}
		for _, m := range b.AsRead {
			o := &unstructured.Unstructured{Object: m}
			whole[o.GetKind()] = append(whole[o.GetKind()], o.GetName())
		}
		if !reflect.DeepEqual(got, whole) {
			t.Errorf("typed %v, whole %v", got, whole)
		}
		want := map[string][]string{
			"DynamoGraphDeployment":  {"llama", "other"},
			"ClusterTopologyBinding": {"gpu-fabric"},
			"Node":                   {"cpu-x", "gpu-a1", "gpu-b1"},
			"Service":                {"llama-frontend"},
			"Pod":                    {"llama-decode-0", "llama-decode-1", "llama-frontend-0", "llama-prefill-0"},
			"DynamoWorkerMetadata":   {"llama-decode-0", "llama-prefill-0"},
			"EndpointSlice":          {"llama-workers-abcde"},
			"Event":                  {"llama-decode-1.topo"},
		}
		for k, v := range want {
			if !slices.Equal(got[k], v) {
				t.Errorf("%s = %v, want %v", k, got[k], v)
			}
		}
		if len(got) != len(want) {
			t.Errorf("kinds = %v", got)
		}
		if len(b.Notes) != 0 || len(b.Sources) != 1 || b.Sources[0].Degraded {
			t.Errorf("a full-permission read degraded: %+v\n%s", b.Sources, fakekube.NoteLines(b.Notes))
		}
		// The instance id above 2^53 is kept exactly, typed and whole (int64).
		dwm := find(b.AsRead, "DynamoWorkerMetadata", "llama-prefill-0")
		id, _, _ := unstructured.NestedFieldNoCopy(dwm.Object, "spec", "data", "model_cards", ns+"-llama/prefill/generate/694d98147d54be25", "instance_id")
		if id != int64(7587885012467105317) {
			t.Errorf("instance_id = %#v", id)
		}
		var ids []uint64
		for _, d := range b.Objects.DWMs {
			if d.Name == "llama-prefill-0" && d.Spec.Data != nil {
				for _, in := range d.Spec.Data.Instances {
					ids = append(ids, in.InstanceID)
				}
			}
		}
		if !slices.Contains(ids, 7587885012467105317) {
			t.Errorf("typed instance ids = %v", ids)
		}
		pol, _, _ := unstructured.NestedString(find(b.AsRead, "DynamoGraphDeployment", "llama").Object, "spec", "experimental", "kvTransferPolicy", "enforcement")
		tpol, _, _ := unstructured.NestedString(b.Objects.DGDs[0].Spec, "experimental", "kvTransferPolicy", "enforcement")
		if pol != "required" || tpol != "required" {
			t.Errorf("kvTransferPolicy not read: %q, typed %q", pol, tpol)
		}
		if _, ok, _ := unstructured.NestedFieldNoCopy(find(b.AsRead, "Pod", "llama-decode-0").Object, "metadata", "managedFields"); ok {
			t.Error("managedFields kept")
		}
		if b.Namespace != ns || b.Context != "kubeenv" || b.CollectedAt.IsZero() {
			t.Errorf("bundle header: %q %q %v", b.Namespace, b.Context, b.CollectedAt)
		}
		reqs := api.Log.Requests()
		t.Logf("requests (%d): %s", len(reqs), strings.Join(reqs, ", "))
		for _, r := range reqs {
			if !strings.HasPrefix(r, "GET ") {
				t.Errorf("non-GET request: %s", r)
			}
		}
	})

	t.Run("request count does not grow with pods", func(t *testing.T) {
		count := func(names []string) int {
			api, err := kube.NewAPI(inspector)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := Collect(ctx, CollectOptions{Kube: api, Namespace: ns, Names: names, NoFrontend: true}); err != nil {
				t.Fatal(err)
			}
			return api.Log.Total()
		}
		before, beforeNamed := count(nil), count([]string{"llama"})
		var extra strings.Builder
		for i := range 8 { // 4 workers → 12
			fmt.Fprintf(&extra, `---
apiVersion: v1
kind: Pod
metadata:
  name: llama-decode-extra-%d
  namespace: %s
  labels: {nvidia.com/dynamo-graph-deployment-name: llama, nvidia.com/dynamo-component-type: decode}
spec:
  nodeName: gpu-node-extra-%d
  containers: [{name: main, image: x}]
---
apiVersion: v1
kind: Node
metadata: {name: gpu-node-extra-%d, labels: {topology.kubernetes.io/zone: us-east-1c}}
---
apiVersion: nvidia.com/v1alpha1
kind: DynamoWorkerMetadata
metadata: {name: llama-decode-extra-%d, namespace: %s}
spec: {data: {}}
`, i, ns, i, i, i, ns)
		}
		if _, err := e.ApplyYAML(ctx, []byte(extra.String())); err != nil {
			t.Fatal(err)
		}
		after, afterNamed := count(nil), count([]string{"llama"})
		t.Logf("API requests: %d with 4 worker pods, %d with 12 (by name: %d, %d)", before, after, beforeNamed, afterNamed)
		if before != after || beforeNamed != afterNamed {
			t.Errorf("request count grew with pods: %d → %d, by name %d → %d", before, after, beforeNamed, afterNamed)
		}
		// 3 discovery GETs + 9 LISTs (the 9th: the operator's Deployment).
		if after != 12 {
			t.Errorf("requests = %d, want 12", after)
		}
	})

	t.Run("restricted role degrades", func(t *testing.T) {
		api, err := kube.NewAPI(restFor("restricted"))
		if err != nil {
			t.Fatal(err)
		}
		b, err := Collect(ctx, CollectOptions{Kube: api, Namespace: ns, Names: []string{"llama"}, NoFrontend: true})
		if err != nil {
			t.Fatalf("a restricted user must get a degraded read, not an error: %v", err)
		}
		if !b.Sources[0].Degraded {
			t.Error("source not degraded")
		}
		fakekube.WantNotes(t, b.Notes,
			"cannot list nodes at cluster scope (RBAC: needs list on nodes): node labels (zone, rack) are unknown, so TopologyLabelDrift cannot be checked",
			"cannot list dynamoworkermetadatas.nvidia.com in namespace "+ns+" (RBAC: needs list on dynamoworkermetadatas.nvidia.com)",
			"cannot list events in namespace "+ns+" (RBAC: needs list on events)",
			"cannot list clustertopologybindings.grove.io at cluster scope (RBAC: needs list on clustertopologybindings.grove.io)")
		if got := typedNames(b.Objects); !slices.Contains(got["DynamoGraphDeployment"], "llama") || !slices.Contains(got["Pod"], "llama-decode-0") {
			t.Error("the readable resources were lost")
		}
		t.Logf("notes:\n%s", fakekube.NoteLines(b.Notes))
	})

	t.Run("frontend through the API server's service proxy", func(t *testing.T) {
		ip := hostIP()
		if ip == "" {
			t.Skip("no non-loopback IPv4 address: the service proxy refuses loopback endpoints; covered by --frontend-url tests")
		}
		fs := &fakefrontend.FrontendServer{}
		l, err := net.Listen("tcp", ip+":0")
		if err != nil {
			t.Skipf("cannot listen on %s: %v", ip, err)
		}
		srv := httptest.NewUnstartedServer(fs.Handler("ok"))
		srv.Listener.Close()
		srv.Listener = l
		srv.Start()
		defer srv.Close()
		port := l.Addr().(*net.TCPAddr).Port
		// kube-apiserver 1.37 proxies only to EndpointSlice endpoints whose
		// targetRef is a pod with that IP; the IP must not be loopback.
		if _, err := e.ApplyYAML(ctx, fmt.Appendf(nil, `
apiVersion: v1
kind: Pod
metadata:
  name: frontend-endpoint
  namespace: %[1]s
spec:
  containers: [{name: main, image: x}]
status:
  phase: Running
  podIP: %[2]q
  podIPs: [{ip: %[2]q}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: llama-frontend-x
  namespace: %[1]s
  labels: {kubernetes.io/service-name: llama-frontend}
addressType: IPv4
endpoints:
- addresses: [%[2]q]
  conditions: {ready: true}
  targetRef: {kind: Pod, name: frontend-endpoint, namespace: %[1]s}
ports: [{name: http, port: %[3]d, protocol: TCP}]
`, ns, ip, port)); err != nil {
			t.Fatal(err)
		}
		var b *raw.Bundle
		for try := 0; ; try++ { // the apiserver reads EndpointSlices from an informer
			b, err = Collect(ctx, CollectOptions{RESTConfig: inspector, Namespace: ns, Names: []string{"llama"}})
			if err != nil {
				t.Fatal(err)
			}
			if len(b.Metrics) > 0 || try == 20 {
				break
			}
			time.Sleep(250 * time.Millisecond)
		}
		if len(b.Metrics) != 1 || b.Metrics[0].Text != fakefrontend.SampleMetrics || b.Metrics[0].Deployment != "llama" {
			t.Fatalf("metrics through the service proxy: %+v\n%s", b.Metrics, fakekube.NoteLines(b.Notes))
		}
		if len(b.BusyThresholds) != 1 || b.BusyThresholds[0].JSON != fakefrontend.SampleBusy {
			t.Errorf("busy thresholds: %+v", b.BusyThresholds)
		}
		if b.Metrics[0].Source != "service "+ns+"/llama-frontend:http" {
			t.Errorf("source = %q", b.Metrics[0].Source)
		}
		fs.Mu.Lock()
		if n := len(fs.Reqs); n < 2 || !slices.Equal(fs.Reqs[n-2:], []string{"GET /metrics", "GET /busy_threshold"}) {
			t.Errorf("frontend saw %v", fs.Reqs)
		}
		for _, r := range fs.Reqs {
			if !strings.HasPrefix(r, "GET ") {
				t.Errorf("non-GET request reached the frontend: %s", r)
			}
		}
		fs.Mu.Unlock()

		// The restricted user has no services/proxy: a note, not an error.
		b, err = Collect(ctx, CollectOptions{RESTConfig: restFor("restricted"), Namespace: ns, Names: []string{"llama"}})
		if err != nil {
			t.Fatal(err)
		}
		fakekube.WantNotes(t, b.Notes, "forbidden (RBAC: needs get on services/proxy in the namespace); pass --frontend-url after a port-forward")
	})

	t.Run("frontend URL and etcd detection", func(t *testing.T) {
		fs := &fakefrontend.FrontendServer{}
		srv := httptest.NewServer(fs.Handler("old"))
		defer srv.Close()
		et := kubeenv.StartEtcd(t)
		etcdfixture.PutAll(t, et.Endpoint, etcdfixture.EtcdFixture())
		if _, err := e.ApplyYAML(ctx, fmt.Appendf(nil, `
apiVersion: nvidia.com/v1beta1
kind: DynamoGraphDeployment
metadata:
  name: etcd-dgd
  namespace: %[1]s
  annotations: {nvidia.com/dynamo-discovery-backend: etcd}
spec: {backendFramework: vllm}
---
apiVersion: v1
kind: Pod
metadata:
  name: etcd-dgd-worker-0
  namespace: %[1]s
  labels: {nvidia.com/dynamo-graph-deployment-name: etcd-dgd}
spec:
  containers:
  - name: main
    image: x
    env:
    - {name: DYN_DISCOVERY_BACKEND, value: etcd}
    - {name: ETCD_ENDPOINTS, value: %[2]q}
---
apiVersion: v1
kind: Pod
metadata:
  name: far-worker-0
  namespace: %[1]s
  labels: {nvidia.com/dynamo-graph-deployment-name: far}
spec:
  containers:
  - name: main
    image: x
    env:
    - {name: DYN_DISCOVERY_BACKEND, value: etcd}
    - {name: ETCD_ENDPOINTS, value: "http://etcd.dynamo.svc.cluster.local:2379"}
`, ns, et.Endpoint)); err != nil {
			t.Fatal(err)
		}
		b, err := Collect(ctx, CollectOptions{RESTConfig: inspector, Namespace: ns, Names: []string{"etcd-dgd", "far"}, FrontendURL: srv.URL})
		if err != nil {
			t.Fatal(err)
		}
		if len(b.Etcd) != 6 {
			t.Errorf("etcd entries = %d, want 6 (auto-detected from ETCD_ENDPOINTS)", len(b.Etcd))
		}
		fakekube.WantNotes(t, b.Notes, ns+"/far uses etcd discovery (ETCD_ENDPOINTS=http://etcd.dynamo.svc.cluster.local:2379), which is not reachable from here",
			"pass --etcd-endpoints http://localhost:2379",
			// Only etcd-dgd is a DGD, so the URL is attributed to it.
			"has no GET /busy_threshold (older Dynamo")
		if len(b.Metrics) != 1 || b.Metrics[0].Deployment != "etcd-dgd" {
			t.Errorf("--frontend-url metrics: %+v", b.Metrics)
		}
		kinds := map[model.SourceKind]bool{}
		for _, s := range b.Sources {
			kinds[s.Kind] = true
		}
		if !kinds[model.SourceKubernetes] || !kinds[model.SourceEtcd] || !kinds[model.SourceFrontend] {
			t.Errorf("sources = %+v", b.Sources)
		}
	})

	t.Run("audit: only get, list and watch", func(t *testing.T) {
		var evs []kubeenv.AuditEvent
		var mu sync.Mutex
		// Audit events are written asynchronously: wait for the last subtest's.
		deadline := time.Now().Add(10 * time.Second)
		for {
			all, _, err := e.AuditEventsFrom(auditFrom)
			if err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			evs = evs[:0]
			for _, ev := range all {
				if ev.User == "inspector" || ev.User == "restricted" {
					evs = append(evs, ev)
				}
			}
			mu.Unlock()
			if slices.ContainsFunc(evs, func(ev kubeenv.AuditEvent) bool {
				return strings.Contains(ev.RequestURI, "etcd-dgd") || strings.Contains(ev.RequestURI, "nvidia.com%2Fdynamo-graph-deployment-name+in+%28etcd-dgd")
			}) || time.Now().After(deadline) {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		verbs := map[string]int{}
		for _, ev := range evs {
			verbs[ev.Verb]++
			if ev.IsMutating() || (ev.Verb != "get" && ev.Verb != "list" && ev.Verb != "watch") {
				t.Errorf("the collector issued %s %s", ev.Verb, ev.RequestURI)
			}
		}
		t.Logf("audited requests by the collector's users: %d %v", len(evs), verbs)
		if len(evs) < 40 {
			t.Errorf("only %d audited requests: is the audit log complete?", len(evs))
		}
	})
}

// applyYAML creates the fixture's objects (kubeenv.ApplyYAML keeps integers above
// 2^53 exact).
func applyYAML(ctx context.Context, e *kubeenv.Env, data []byte) error {
	_, err := e.ApplyYAML(ctx, data)
	return err
}

// hostIP is a non-loopback IPv4 address of this machine, or "".
func hostIP() string {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return ""
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() && !n.IP.IsLinkLocalUnicast() {
			return n.IP.String()
		}
	}
	return ""
}

func TestDetectEtcd(t *testing.T) {
	pod := func(ns, name, dgd string, env ...string) raw.Object {
		var es []any
		for i := 0; i+1 < len(env); i += 2 {
			es = append(es, map[string]any{"name": env[i], "value": env[i+1]})
		}
		return fakekube.Obj("v1", "Pod", ns, name, map[string]string{kube.SrcLabelDeploymentName: dgd},
			map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "main", "env": es}}}}).Object
	}
	dgd := fakekube.Obj("nvidia.com/v1beta1", "DynamoGraphDeployment", "a", "annotated", nil, nil)
	dgd.SetAnnotations(map[string]string{kube.SrcAnnotationDiscoveryBackend: "etcd"})
	objs := []raw.Object{
		dgd.Object,
		pod("a", "k8s-0", "kube", "DYN_DISCOVERY_BACKEND", "kubernetes", "ETCD_ENDPOINTS", "http://ignored:2379"),
		pod("a", "e-0", "etcd1", "DYN_DISCOVERY_BACKEND", "etcd", "ETCD_ENDPOINTS", "http://good:2379, http://bad:2379"),
		pod("a", "e-1", "etcd1", "DYN_DISCOVERY_BACKEND", "etcd", "ETCD_ENDPOINTS", "http://good:2379"),
		pod("a", "f-0", "etcd2", "DYN_DISCOVERY_BACKEND", "etcd", "ETCD_ENDPOINTS", "http://root:hunter2x@bad:2379"),
		pod("a", "g-0", "etcd3", "DYN_DISCOVERY_BACKEND", "etcd"),
	}
	var probed []string
	eps, notes := detectEtcd(context.Background(), decode.FromObjects(objs), func(_ context.Context, ep string) bool {
		probed = append(probed, ep)
		return strings.Contains(ep, "good")
	})
	if !slices.Equal(eps, []string{"http://good:2379"}) {
		t.Errorf("endpoints = %v", eps)
	}
	if slices.Contains(probed, "http://ignored:2379") {
		t.Error("probed the endpoint of a deployment using Kubernetes discovery")
	}
	fakekube.WantNotes(t, notes,
		"a/etcd2 uses etcd discovery (ETCD_ENDPOINTS=http://root:REDACTED@bad:2379), which is not reachable from here",
		"a/etcd3 uses etcd discovery but its pods name no ETCD_ENDPOINTS",
		"a/annotated uses etcd discovery but its pods name no ETCD_ENDPOINTS")
	if strings.Contains(fakekube.NoteLines(notes), "hunter2x") {
		t.Error("password leaked")
	}
}

func TestCollectNeedsConfig(t *testing.T) {
	if _, err := Collect(context.Background(), CollectOptions{}); err == nil || !strings.Contains(err.Error(), "--from-file") {
		t.Errorf("err = %v", err)
	}
	// A refused connection is an error with the next step.
	_, err := Collect(context.Background(), CollectOptions{RESTConfig: &rest.Config{Host: "https://127.0.0.1:1", Timeout: time.Second}, Namespace: "x"})
	if err == nil || !strings.Contains(err.Error(), "check the cluster is reachable") {
		t.Errorf("err = %v", err)
	}
	_ = http.StatusOK
}

func TestFrontendURLAttribution(t *testing.T) {
	one := []raw.Object{fakekube.Obj("nvidia.com/v1beta1", "DynamoGraphDeployment", "inf", "llama", nil, nil).Object}
	ts, notes := URLTarget(decode.FromObjects(one), "http://localhost:8000")
	if len(ts) != 1 || ts[0].Deployment != "llama" || len(notes) != 0 {
		t.Errorf("one deployment: %+v %v", ts, notes)
	}
	two := append(slices.Clone(one), fakekube.Obj("nvidia.com/v1beta1", "DynamoGraphDeployment", "inf", "other", nil, nil).Object)
	ts, notes = URLTarget(decode.FromObjects(two), "http://u:pw123456@localhost:8000")
	if len(ts) != 0 {
		t.Errorf("two deployments: %+v", ts)
	}
	fakekube.WantNotes(t, notes, "2 deployments are in scope (inf/llama, inf/other); name the deployment", "http://u:REDACTED@localhost:8000")
}
