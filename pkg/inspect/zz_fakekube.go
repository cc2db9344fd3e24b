package inspect

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
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
