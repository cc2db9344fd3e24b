package inspect

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
)

// fakeKube is an in-memory KubeAPI: objects per resource, errors per resource,
// label selectors honoured, pagination by index.
type fakeKube struct {
	mu      sync.Mutex
	served  map[string][]string // group-version → resources
	objs    map[string][]*unstructured.Unstructured
	errs    map[string]error // resource → error for List
	discErr error
	calls   []string
	proxy   func(ns, svc, port, path string) ([]byte, error)
	// proxyPost and proxyStream answer ServiceProxyPost and ServiceProxyStream.
	proxyPost   func(ns, svc, port, path string, body []byte, limit int64) ([]byte, error)
	proxyStream func(ctx context.Context, ns, svc, port, path string) (io.ReadCloser, error)
	// expireOnce makes the first request with a continue token fail with 410.
	expireOnce bool
}

func newFakeKube() *fakeKube {
	return &fakeKube{
		served: map[string][]string{
			"nvidia.com/v1beta1":  {"dynamographdeployments"},
			"nvidia.com/v1alpha1": {"dynamographdeployments", "dynamoworkermetadatas"},
			"grove.io/v1alpha1":   {"clustertopologybindings"},
		},
		objs: map[string][]*unstructured.Unstructured{},
		errs: map[string]error{},
	}
}

func (f *fakeKube) add(gvr schema.GroupVersionResource, objs ...*unstructured.Unstructured) {
	f.objs[gvr.Resource] = append(f.objs[gvr.Resource], objs...)
}

func (f *fakeKube) ServedResources(_ context.Context, gv string) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "GET /apis/"+gv)
	if f.discErr != nil {
		return nil, f.discErr
	}
	r, ok := f.served[gv]
	if !ok {
		return nil, apierrors.NewNotFound(schema.GroupResource{}, gv)
	}
	return r, nil
}

func (f *fakeKube) List(_ context.Context, gvr schema.GroupVersionResource, ns string, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, fmt.Sprintf("LIST %s/%s ns=%q sel=%q fs=%q cont=%q", gvr.GroupVersion(), gvr.Resource, ns, opts.LabelSelector, opts.FieldSelector, opts.Continue))
	if err := f.errs[gvr.Resource]; err != nil {
		return nil, err
	}
	if opts.Continue != "" && f.expireOnce {
		f.expireOnce = false
		return nil, apierrors.NewResourceExpired("continue token expired")
	}
	sel, err := labels.Parse(opts.LabelSelector)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	var match []*unstructured.Unstructured
	for _, o := range f.objs[gvr.Resource] {
		if ns != "" && o.GetNamespace() != ns {
			continue
		}
		if !sel.Matches(labels.Set(o.GetLabels())) {
			continue
		}
		if opts.FieldSelector == "type=Warning" {
			if t, _, _ := unstructured.NestedString(o.Object, "type"); t != "Warning" {
				continue
			}
		}
		match = append(match, o)
	}
	start := 0
	if opts.Continue != "" {
		fmt.Sscanf(opts.Continue, "%d", &start)
	}
	end := len(match)
	if opts.Limit > 0 && int64(end-start) > opts.Limit {
		end = start + int(opts.Limit)
	}
	list := &unstructured.UnstructuredList{}
	for _, o := range match[start:end] {
		list.Items = append(list.Items, *o.DeepCopy())
	}
	if end < len(match) {
		list.SetContinue(fmt.Sprint(end))
	}
	return list, nil
}

func (f *fakeKube) ServiceProxyGet(_ context.Context, ns, svc, port, path string, limit int64) ([]byte, error) {
	f.mu.Lock()
	f.calls = append(f.calls, "PROXY "+ns+"/"+svc+":"+port+path)
	f.mu.Unlock()
	if f.proxy == nil {
		return nil, apierrors.NewServiceUnavailable("no endpoints available for service")
	}
	return f.proxy(ns, svc, port, path)
}

func (f *fakeKube) ServiceProxyPost(_ context.Context, ns, svc, port, path string, body []byte, limit int64) ([]byte, error) {
	f.mu.Lock()
	f.calls = append(f.calls, "PROXY POST "+ns+"/"+svc+":"+port+path)
	f.mu.Unlock()
	if f.proxyPost == nil {
		return nil, apierrors.NewServiceUnavailable("no endpoints available for service")
	}
	return f.proxyPost(ns, svc, port, path, body, limit)
}

func (f *fakeKube) ServiceProxyStream(ctx context.Context, ns, svc, port, path string) (io.ReadCloser, error) {
	f.mu.Lock()
	f.calls = append(f.calls, "PROXY STREAM "+ns+"/"+svc+":"+port+path)
	f.mu.Unlock()
	if f.proxyStream == nil {
		return nil, apierrors.NewServiceUnavailable("no endpoints available for service")
	}
	return f.proxyStream(ctx, ns, svc, port, path)
}

func (f *fakeKube) lists() []string {
	var out []string
	for _, c := range f.calls {
		if strings.HasPrefix(c, "LIST") {
			out = append(out, c)
		}
	}
	return out
}

func obj(apiVersion, kind, ns, name string, lbls map[string]string, fields map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	for k, v := range fields {
		u.Object[k] = v
	}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetNamespace(ns)
	u.SetName(name)
	if lbls != nil {
		u.SetLabels(lbls)
	}
	return u
}

func fakePod(ns, name, dgd, node string, extra map[string]string) *unstructured.Unstructured {
	l := map[string]string{srcLabelDeploymentName: dgd}
	for k, v := range extra {
		l[k] = v
	}
	return obj("v1", "Pod", ns, name, l, map[string]any{"spec": map[string]any{"nodeName": node}})
}

// fakeCluster is a small deployment "llama" in ns "inf" plus noise.
func fakeCluster(pods int) *fakeKube {
	f := newFakeKube()
	f.add(GVRDynamoGraphDeploymentV1beta1,
		obj("nvidia.com/v1beta1", "DynamoGraphDeployment", "inf", "llama", nil, nil),
		obj("nvidia.com/v1beta1", "DynamoGraphDeployment", "inf", "other", nil, nil),
		obj("nvidia.com/v1beta1", "DynamoGraphDeployment", "elsewhere", "x", nil, nil))
	for i := range pods {
		node := fmt.Sprintf("node-%d", i%4)
		f.add(GVRPods, fakePod("inf", fmt.Sprintf("llama-decode-%d", i), "llama", node, map[string]string{srcLabelComponentType: "decode"}))
		dwm := obj("nvidia.com/v1alpha1", "DynamoWorkerMetadata", "inf", fmt.Sprintf("llama-decode-%d", i), nil, map[string]any{"spec": map[string]any{"data": map[string]any{}}})
		f.add(GVRDynamoWorkerMetadata, dwm)
	}
	f.add(GVRPods, fakePod("inf", "llama-frontend-0", "llama", "node-0", map[string]string{srcLabelComponentType: "frontend"}))
	f.add(GVRPods, obj("v1", "Pod", "inf", "unrelated", nil, map[string]any{"spec": map[string]any{"nodeName": "node-9"}}))
	f.add(GVRDynamoWorkerMetadata, obj("nvidia.com/v1alpha1", "DynamoWorkerMetadata", "inf", "stale-dwm", nil, nil))
	f.add(GVRServices, obj("v1", "Service", "inf", "llama-frontend", map[string]string{srcLabelDeploymentName: "llama", srcLabelComponentType: "frontend"},
		map[string]any{"spec": map[string]any{"ports": []any{map[string]any{"name": "http", "port": int64(8000)}}}}))
	for i := range 10 {
		f.add(GVRNodes, obj("v1", "Node", "", fmt.Sprintf("node-%d", i), map[string]string{"topology.kubernetes.io/zone": fmt.Sprintf("z%d", i%2)}, nil))
	}
	f.add(GVREvents,
		obj("v1", "Event", "inf", "e1", nil, map[string]any{"type": "Warning", "reason": "TopologyLabelMissing", "involvedObject": map[string]any{"kind": "Pod", "name": "llama-decode-0", "namespace": "inf"}}),
		obj("v1", "Event", "inf", "e2", nil, map[string]any{"type": "Warning", "reason": "BackOff", "involvedObject": map[string]any{"kind": "Pod", "name": "unrelated", "namespace": "inf"}}),
		obj("v1", "Event", "inf", "e3", nil, map[string]any{"type": "Normal", "reason": "Scheduled", "involvedObject": map[string]any{"kind": "Pod", "name": "llama-decode-0", "namespace": "inf"}}))
	f.add(GVREndpointSlices,
		obj("discovery.k8s.io/v1", "EndpointSlice", "inf", "llama-x", map[string]string{srcLabelDiscoveryEnabled: "true"},
			map[string]any{"endpoints": []any{map[string]any{"targetRef": map[string]any{"kind": "Pod", "name": "llama-decode-1"}}}}),
		obj("discovery.k8s.io/v1", "EndpointSlice", "inf", "someone-else", map[string]string{srcLabelDiscoveryEnabled: "true"},
			map[string]any{"endpoints": []any{map[string]any{"targetRef": map[string]any{"kind": "Pod", "name": "nope"}}}}))
	f.add(GVRClusterTopologyBinding, obj("grove.io/v1alpha1", "ClusterTopologyBinding", "", "gpu-fabric", nil, nil))
	return f
}

func names(objs []*unstructured.Unstructured, kind string) []string {
	var out []string
	for _, o := range objs {
		if o.GetKind() == kind {
			out = append(out, o.GetName())
		}
	}
	return out
}

func TestCollectKubernetesFiltersAndConstantRequests(t *testing.T) {
	ctx := context.Background()
	counts := map[int]int{}
	for _, pods := range []int{3, 12} {
		f := fakeCluster(pods)
		r, err := CollectKubernetes(ctx, KubeOptions{API: f, Namespace: "inf", Names: []string{"llama"}, PageSize: 2})
		if err != nil {
			t.Fatal(err)
		}
		if got := names(r.Objects, "DynamoGraphDeployment"); !slices.Equal(got, []string{"llama"}) {
			t.Errorf("DGDs = %v", got)
		}
		if got := len(names(r.Objects, "Pod")); got != pods+1 {
			t.Errorf("pods = %d, want %d", got, pods+1)
		}
		if got := names(r.Objects, "DynamoWorkerMetadata"); len(got) != pods || slices.Contains(got, "stale-dwm") {
			t.Errorf("DWMs = %v", got)
		}
		if got := names(r.Objects, "Node"); !slices.Equal(got, []string{"node-0", "node-1", "node-2", "node-3"}[:min(4, pods)]) {
			t.Errorf("nodes = %v", got)
		}
		if got := names(r.Objects, "Event"); !slices.Equal(got, []string{"e1"}) {
			t.Errorf("events = %v", got)
		}
		if got := names(r.Objects, "EndpointSlice"); !slices.Equal(got, []string{"llama-x"}) {
			t.Errorf("endpointslices = %v", got)
		}
		if got := names(r.Objects, "ClusterTopologyBinding"); !slices.Equal(got, []string{"gpu-fabric"}) {
			t.Errorf("topologies = %v", got)
		}
		if r.Source.Degraded || len(r.Notes) != 0 {
			t.Errorf("unexpected degradation: %+v %v", r.Source, r.Notes)
		}
		if r.DGDVersion != "v1beta1" {
			t.Errorf("DGDVersion = %q", r.DGDVersion)
		}
		// Non-paginated request count: one LIST per resource.
		distinct := map[string]bool{}
		for _, c := range f.lists() {
			distinct[strings.SplitN(c, " cont=", 2)[0]] = true
		}
		counts[pods] = len(distinct)
		for _, c := range f.lists() {
			if strings.Contains(c, "/pods") && !strings.Contains(c, `sel="nvidia.com/dynamo-graph-deployment-name in (llama)"`) {
				t.Errorf("pods not label-scoped: %s", c)
			}
		}
	}
	if counts[3] != counts[12] || counts[3] != 8 {
		t.Errorf("distinct LIST requests = %v, want 8 for both sizes", counts)
	}
}

func TestCollectKubernetesFallbacks(t *testing.T) {
	f := fakeCluster(2)
	f.served = map[string][]string{"nvidia.com/v1alpha1": {"dynamographdeployments"}, "grove.io/v1alpha1": {"clustertopologies"}}
	f.objs["dynamographdeployments"] = []*unstructured.Unstructured{obj("nvidia.com/v1alpha1", "DynamoGraphDeployment", "inf", "llama", nil, nil)}
	f.add(GVRClusterTopology, obj("grove.io/v1alpha1", "ClusterTopology", "", "grove-topology", nil, nil))
	r, err := CollectKubernetes(context.Background(), KubeOptions{API: f, Namespace: "inf"})
	if err != nil {
		t.Fatal(err)
	}
	if r.DGDVersion != "v1alpha1" {
		t.Errorf("DGDVersion = %q", r.DGDVersion)
	}
	if got := names(r.Objects, "ClusterTopology"); !slices.Equal(got, []string{"grove-topology"}) {
		t.Errorf("legacy topologies = %v", got)
	}
	if len(names(r.Objects, "DynamoWorkerMetadata")) != 0 {
		t.Error("DWMs read although the CRD is not served")
	}
	wantNotes(t, r.Notes, "read nvidia.com/v1alpha1", "DynamoWorkerMetadata CRD (dynamoworkermetadatas.nvidia.com/v1alpha1) is not installed")
	for _, c := range f.lists() {
		if strings.Contains(c, "dynamoworkermetadatas") || strings.Contains(c, "clustertopologybindings") || strings.Contains(c, "v1beta1") {
			t.Errorf("read an unserved resource: %s", c)
		}
	}
}

func wantNotes(t *testing.T, notes []Note, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if !slices.ContainsFunc(notes, func(n Note) bool { return strings.Contains(n.Message, s) }) {
			t.Errorf("no note contains %q; notes:\n%s", s, noteLines(notes))
		}
	}
}

func noteLines(notes []Note) string {
	var b strings.Builder
	for _, n := range notes {
		fmt.Fprintf(&b, "  [%s %s] %s\n", n.Severity, n.Source, n.Message)
	}
	return b.String()
}

func TestCollectKubernetesDegrades(t *testing.T) {
	forbidden := func(res string) error {
		return apierrors.NewForbidden(schema.GroupResource{Resource: res}, "", errors.New("RBAC"))
	}
	f := fakeCluster(2)
	f.errs["nodes"] = forbidden("nodes")
	f.errs["dynamoworkermetadatas"] = forbidden("dynamoworkermetadatas")
	f.errs["events"] = apierrors.NewTimeoutError("slow", 1)
	f.errs["clustertopologybindings"] = apierrors.NewNotFound(schema.GroupResource{}, "")
	f.errs["endpointslices"] = errors.New("boom")
	r, err := CollectKubernetes(context.Background(), KubeOptions{API: f, Namespace: "inf"})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Source.Degraded {
		t.Error("source not degraded")
	}
	wantNotes(t, r.Notes,
		"cannot list nodes at cluster scope (RBAC: needs list on nodes): node labels (zone, rack) are unknown, so TopologyLabelDrift cannot be checked",
		"cannot list dynamoworkermetadatas.nvidia.com in namespace inf (RBAC: needs list on dynamoworkermetadatas.nvidia.com): the workers' published runtime config",
		"listing events in namespace inf timed out",
		"clustertopologybindings.grove.io is not served",
		"listing endpointslices.discovery.k8s.io in namespace inf failed: boom")
	if got := len(names(r.Objects, "Pod")); got != 3 {
		t.Errorf("pods = %d: a failure elsewhere must not lose them", got)
	}
	for _, want := range []string{"nodes forbidden", "dynamoworkermetadatas.nvidia.com forbidden", "events timed out"} {
		if !strings.Contains(r.Source.Message, want) {
			t.Errorf("source message %q lacks %q", r.Source.Message, want)
		}
	}
}

func TestCollectKubernetesNoOperatorAndMissingNames(t *testing.T) {
	f := fakeCluster(1)
	f.served = map[string][]string{}
	r, err := CollectKubernetes(context.Background(), KubeOptions{API: f, Namespace: "inf"})
	if err != nil {
		t.Fatal(err)
	}
	wantNotes(t, r.Notes, "is the Dynamo operator installed", "Grove is not installed")
	if len(names(r.Objects, "Pod")) != 2 {
		t.Errorf("pods still expected")
	}

	f = fakeCluster(1)
	r, err = CollectKubernetes(context.Background(), KubeOptions{API: f, Namespace: "inf", Names: []string{"llama", "ghost"}})
	if err != nil {
		t.Fatal(err)
	}
	wantNotes(t, r.Notes, `DynamoGraphDeployment "ghost" not found in namespace inf`)
}

func TestCollectKubernetesAllNamespacesAndUnreachable(t *testing.T) {
	f := fakeCluster(1)
	r, err := CollectKubernetes(context.Background(), KubeOptions{API: f, Namespace: "inf", AllNamespaces: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(r.Objects, "DynamoGraphDeployment"); len(got) != 3 {
		t.Errorf("-A DGDs = %v", got)
	}
	for _, c := range f.lists() {
		if strings.Contains(c, `ns="inf"`) {
			t.Errorf("-A read one namespace: %s", c)
		}
	}

	f = fakeCluster(1)
	f.discErr = errors.New("dial tcp 127.0.0.1:1: connect: connection refused")
	if _, err := CollectKubernetes(context.Background(), KubeOptions{API: f, Namespace: "inf"}); err == nil || !strings.Contains(err.Error(), "check the cluster is reachable") {
		t.Errorf("unreachable API server: err = %v", err)
	}

	// Discovery forbidden is not fatal: the LISTs decide.
	f = fakeCluster(1)
	f.discErr = apierrors.NewForbidden(schema.GroupResource{}, "", errors.New("no discovery"))
	r, err = CollectKubernetes(context.Background(), KubeOptions{API: f, Namespace: "inf"})
	if err != nil || len(names(r.Objects, "DynamoGraphDeployment")) != 2 {
		t.Errorf("discovery forbidden: err=%v objects=%d", err, len(r.Objects))
	}
}

func TestCollectKubernetesExpiredContinue(t *testing.T) {
	f := fakeCluster(5)
	f.expireOnce = true
	r, err := CollectKubernetes(context.Background(), KubeOptions{API: f, Namespace: "inf", PageSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(names(r.Objects, "Pod")); got != 6 {
		t.Errorf("pods after a restarted list = %d, want 6", got)
	}
	if len(r.Notes) != 0 {
		t.Errorf("notes: %s", noteLines(r.Notes))
	}
}

func TestReadAtMost(t *testing.T) {
	if _, err := readAtMost(strings.NewReader("12345"), 4); !errors.Is(err, ErrResponseTooLarge) {
		t.Errorf("err = %v", err)
	}
	if b, err := readAtMost(strings.NewReader("1234"), 4); err != nil || string(b) != "1234" {
		t.Errorf("got %q %v", b, err)
	}
}

// slowAPIServer answers discovery and LISTs like an empty cluster, except that
// LISTs of the resources in slow hang until the client gives up.
func slowAPIServer(t *testing.T, slow ...string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, s := range slow {
			if strings.HasSuffix(r.URL.Path, "/"+s) {
				select {
				case <-r.Context().Done():
				case <-time.After(10 * time.Second):
				}
				return
			}
		}
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/apis/nvidia.com/v1beta1":
			fmt.Fprint(w, `{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"nvidia.com/v1beta1","resources":[{"name":"dynamographdeployments","namespaced":true,"kind":"DynamoGraphDeployment","verbs":["get","list","watch"]}]}`)
		case "/apis/nvidia.com/v1alpha1", "/apis/grove.io/v1alpha1":
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`)
		default:
			fmt.Fprint(w, `{"kind":"List","apiVersion":"v1","metadata":{},"items":[]}`)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestRequestTimeoutHonoured(t *testing.T) {
	// Every request hangs: discovery times out, which is fatal, quickly.
	srv := slowAPIServer(t, "v1beta1")
	start := time.Now()
	_, err := Collect(context.Background(), CollectOptions{RESTConfig: &rest.Config{Host: srv.URL, Timeout: 300 * time.Millisecond}, Namespace: "inf", NoFrontend: true})
	if err == nil || !strings.Contains(err.Error(), "check the cluster is reachable") {
		t.Errorf("err = %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("--request-timeout not honoured: took %v", d)
	}

	// Only the pod LIST hangs: a note naming the resource and the flag.
	srv = slowAPIServer(t, "pods")
	api, err := NewKubeAPI(&rest.Config{Host: srv.URL, Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Collect(context.Background(), CollectOptions{Kube: api, Namespace: "inf", NoFrontend: true})
	if err != nil {
		t.Fatal(err)
	}
	wantNotes(t, b.Notes, "listing pods in namespace inf timed out", "raise --request-timeout")
	if !b.Sources[0].Degraded {
		t.Error("not degraded")
	}
	// 3 discovery GETs, DGDs, pods, services (no nodes: no pod was read).
	if got := api.Log.Total(); got < 6 || got > 9 {
		t.Errorf("requests = %d: %v", got, api.Log.Requests())
	}
}
