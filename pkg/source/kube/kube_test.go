package kube_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/kube"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/fakekube"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source"
)

// names lists the typed objects of kind, in order.
func names(objs raw.Objects, kind string) []string {
	var out []string
	add := func(k, name string) {
		if k == kind {
			out = append(out, name)
		}
	}
	for _, x := range objs.DGDs {
		add(x.Kind, x.Name)
	}
	for _, x := range objs.DWMs {
		add(x.Kind, x.Name)
	}
	for _, x := range objs.Pods {
		add(x.Kind, x.Name)
	}
	for _, x := range objs.Nodes {
		add(x.Kind, x.Name)
	}
	for _, x := range objs.Services {
		add(x.Kind, x.Name)
	}
	for _, x := range objs.EndpointSlices {
		add(x.Kind, x.Name)
	}
	for _, x := range objs.Events {
		add(x.Kind, x.Name)
	}
	for _, x := range objs.Topologies {
		add(x.Kind, x.Name)
	}
	for _, x := range objs.Deployments {
		add(x.Kind, x.Name)
	}
	return out
}

// wholeNames lists the whole objects of kind, in order.
func wholeNames(objs []raw.Object, kind string) []string {
	var out []string
	for _, m := range objs {
		if o := (&unstructured.Unstructured{Object: m}); o.GetKind() == kind {
			out = append(out, o.GetName())
		}
	}
	return out
}

func TestCollectKubernetesFiltersAndConstantRequests(t *testing.T) {
	ctx := context.Background()
	counts := map[int]int{}
	for _, pods := range []int{3, 12} {
		f := fakekube.FakeCluster(pods)
		r, err := kube.Collect(ctx, kube.Options{API: f, Namespace: "inf", Names: []string{"llama"}, PageSize: 2})
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
		// Keeping the objects whole keeps the same ones, in the same order.
		w, err := kube.Collect(ctx, kube.Options{API: f, Namespace: "inf", Names: []string{"llama"}, PageSize: 2, KeepObjects: true})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(w.Objects, r.Objects) {
			t.Error("keeping the objects whole changed the typed objects")
		}
		for _, kind := range []string{"DynamoGraphDeployment", "Pod", "DynamoWorkerMetadata", "Node", "Event", "EndpointSlice", "ClusterTopologyBinding", "Service"} {
			if got, want := wholeNames(w.AsRead, kind), names(r.Objects, kind); !slices.Equal(got, want) {
				t.Errorf("whole %s = %v, typed %v", kind, got, want)
			}
		}
		// Non-paginated request count: one LIST per resource.
		distinct := map[string]bool{}
		for _, c := range f.Lists() {
			distinct[strings.SplitN(c, " cont=", 2)[0]] = true
		}
		counts[pods] = len(distinct)
		for _, c := range f.Lists() {
			if strings.Contains(c, "/pods") && !strings.Contains(c, `sel="nvidia.com/dynamo-graph-deployment-name in (llama)"`) {
				t.Errorf("pods not label-scoped: %s", c)
			}
		}
	}
	if counts[3] != counts[12] || counts[3] != 9 {
		t.Errorf("distinct LIST requests = %v, want 9 for both sizes", counts)
	}
}

func TestCollectKubernetesFallbacks(t *testing.T) {
	f := fakekube.FakeCluster(2)
	f.Served = map[string][]string{"nvidia.com/v1alpha1": {"dynamographdeployments"}, "grove.io/v1alpha1": {"clustertopologies"}}
	f.Objs["dynamographdeployments"] = []*unstructured.Unstructured{fakekube.Obj("nvidia.com/v1alpha1", "DynamoGraphDeployment", "inf", "llama", nil, nil)}
	f.Add(kube.GVRClusterTopology, fakekube.Obj("grove.io/v1alpha1", "ClusterTopology", "", "grove-topology", nil, nil))
	r, err := kube.Collect(context.Background(), kube.Options{API: f, Namespace: "inf"})
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
	fakekube.WantNotes(t, r.Notes, "read nvidia.com/v1alpha1", "DynamoWorkerMetadata CRD (dynamoworkermetadatas.nvidia.com/v1alpha1) is not installed")
	for _, c := range f.Lists() {
		if strings.Contains(c, "dynamoworkermetadatas") || strings.Contains(c, "clustertopologybindings") || strings.Contains(c, "v1beta1") {
			t.Errorf("read an unserved resource: %s", c)
		}
	}
}

func TestCollectKubernetesDegrades(t *testing.T) {
	forbidden := func(res string) error {
		return apierrors.NewForbidden(schema.GroupResource{Resource: res}, "", errors.New("RBAC"))
	}
	f := fakekube.FakeCluster(2)
	f.Errs["nodes"] = forbidden("nodes")
	f.Errs["dynamoworkermetadatas"] = forbidden("dynamoworkermetadatas")
	f.Errs["events"] = apierrors.NewTimeoutError("slow", 1)
	f.Errs["clustertopologybindings"] = apierrors.NewNotFound(schema.GroupResource{}, "")
	f.Errs["endpointslices"] = errors.New("boom")
	r, err := kube.Collect(context.Background(), kube.Options{API: f, Namespace: "inf"})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Source.Degraded {
		t.Error("source not degraded")
	}
	fakekube.WantNotes(t, r.Notes,
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
	f := fakekube.FakeCluster(1)
	f.Served = map[string][]string{}
	r, err := kube.Collect(context.Background(), kube.Options{API: f, Namespace: "inf"})
	if err != nil {
		t.Fatal(err)
	}
	fakekube.WantNotes(t, r.Notes, "is the Dynamo operator installed", "Grove is not installed")
	if len(names(r.Objects, "Pod")) != 2 {
		t.Errorf("pods still expected")
	}

	f = fakekube.FakeCluster(1)
	r, err = kube.Collect(context.Background(), kube.Options{API: f, Namespace: "inf", Names: []string{"llama", "ghost"}})
	if err != nil {
		t.Fatal(err)
	}
	fakekube.WantNotes(t, r.Notes, `DynamoGraphDeployment "ghost" not found in namespace inf`)
}

func TestCollectKubernetesAllNamespacesAndUnreachable(t *testing.T) {
	f := fakekube.FakeCluster(1)
	r, err := kube.Collect(context.Background(), kube.Options{API: f, Namespace: "inf", AllNamespaces: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(r.Objects, "DynamoGraphDeployment"); len(got) != 3 {
		t.Errorf("-A DGDs = %v", got)
	}
	for _, c := range f.Lists() {
		if strings.Contains(c, `ns="inf"`) {
			t.Errorf("-A read one namespace: %s", c)
		}
	}

	f = fakekube.FakeCluster(1)
	f.DiscErr = errors.New("dial tcp 127.0.0.1:1: connect: connection refused")
	if _, err := kube.Collect(context.Background(), kube.Options{API: f, Namespace: "inf"}); err == nil || !strings.Contains(err.Error(), "check the cluster is reachable") {
		t.Errorf("unreachable API server: err = %v", err)
	}

	// Discovery forbidden is not fatal: the LISTs decide.
	f = fakekube.FakeCluster(1)
	f.DiscErr = apierrors.NewForbidden(schema.GroupResource{}, "", errors.New("no discovery"))
	r, err = kube.Collect(context.Background(), kube.Options{API: f, Namespace: "inf"})
	if err != nil || len(names(r.Objects, "DynamoGraphDeployment")) != 2 {
		t.Errorf("discovery forbidden: err=%v objects=%d", err, r.Objects.Len())
	}
}

func TestCollectKubernetesExpiredContinue(t *testing.T) {
	f := fakekube.FakeCluster(5)
	f.ExpireOnce = true
	r, err := kube.Collect(context.Background(), kube.Options{API: f, Namespace: "inf", PageSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(names(r.Objects, "Pod")); got != 6 {
		t.Errorf("pods after a restarted list = %d, want 6", got)
	}
	if len(r.Notes) != 0 {
		t.Errorf("notes: %s", fakekube.NoteLines(r.Notes))
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
	_, err := source.Collect(context.Background(), source.CollectOptions{RESTConfig: &rest.Config{Host: srv.URL, Timeout: 300 * time.Millisecond}, Namespace: "inf", NoFrontend: true})
	if err == nil || !strings.Contains(err.Error(), "check the cluster is reachable") {
		t.Errorf("err = %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("--request-timeout not honoured: took %v", d)
	}

	// Only the pod LIST hangs: a note naming the resource and the flag.
	srv = slowAPIServer(t, "pods")
	api, err := kube.NewAPI(&rest.Config{Host: srv.URL, Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	b, err := source.Collect(context.Background(), source.CollectOptions{Kube: api, Namespace: "inf", NoFrontend: true})
	if err != nil {
		t.Fatal(err)
	}
	fakekube.WantNotes(t, b.Notes, "listing pods in namespace inf timed out", "raise --request-timeout")
	if !b.Sources[0].Degraded {
		t.Error("not degraded")
	}
	// 3 discovery GETs, DGDs, pods, services (no nodes: no pod was read).
	if got := api.Log.Total(); got < 6 || got > 9 {
		t.Errorf("requests = %d: %v", got, api.Log.Requests())
	}
}
