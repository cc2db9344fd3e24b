package fakekube

import (
	"context"
	"encoding/json"
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

	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/iolimit"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/kube"
)

// FakeKube is an in-memory API: objects per resource, errors per resource,
// label selectors honoured, pagination by index.
type FakeKube struct {
	mu      sync.Mutex
	Served  map[string][]string // group-version → resources
	Objs    map[string][]*unstructured.Unstructured
	Errs    map[string]error // resource → error for List
	DiscErr error
	Calls   []string
	Proxy   func(ns, svc, port, path string) ([]byte, error)
	// ProxyPost and ProxyStream answer ServiceProxyPost and ServiceProxyStream.
	ProxyPost   func(ns, svc, port, path string, body []byte, limit int64) ([]byte, error)
	ProxyStream func(ctx context.Context, ns, svc, port, path string) (io.ReadCloser, error)
	// ExpireOnce makes the first request with a continue token fail with 410.
	ExpireOnce bool
}

// NewFakeKube returns an empty FakeKube serving the Dynamo and Grove CRDs.
func NewFakeKube() *FakeKube {
	return &FakeKube{
		Served: map[string][]string{
			"nvidia.com/v1beta1":  {"dynamographdeployments"},
			"nvidia.com/v1alpha1": {"dynamographdeployments", "dynamoworkermetadatas"},
			"grove.io/v1alpha1":   {"clustertopologybindings"},
		},
		Objs: map[string][]*unstructured.Unstructured{},
		Errs: map[string]error{},
	}
}

// Add adds objects of a resource.
func (f *FakeKube) Add(gvr schema.GroupVersionResource, objs ...*unstructured.Unstructured) {
	f.Objs[gvr.Resource] = append(f.Objs[gvr.Resource], objs...)
}

// ServedResources implements kube.API.
func (f *FakeKube) ServedResources(_ context.Context, gv string) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.Calls = append(f.Calls, "GET /apis/"+gv)
	if f.DiscErr != nil {
		return nil, f.DiscErr
	}
	r, ok := f.Served[gv]
	if !ok {
		return nil, apierrors.NewNotFound(schema.GroupResource{}, gv)
	}
	return r, nil
}

// List implements kube.API: label selectors honoured, pagination by index.
func (f *FakeKube) List(_ context.Context, gvr schema.GroupVersionResource, ns string, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.Calls = append(f.Calls, fmt.Sprintf("LIST %s/%s ns=%q sel=%q fs=%q cont=%q", gvr.GroupVersion(), gvr.Resource, ns, opts.LabelSelector, opts.FieldSelector, opts.Continue))
	if err := f.Errs[gvr.Resource]; err != nil {
		return nil, err
	}
	if opts.Continue != "" && f.ExpireOnce {
		f.ExpireOnce = false
		return nil, apierrors.NewResourceExpired("continue token expired")
	}
	sel, err := labels.Parse(opts.LabelSelector)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	var match []*unstructured.Unstructured
	for _, o := range f.Objs[gvr.Resource] {
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
		_, _ = fmt.Sscanf(opts.Continue, "%d", &start)
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

// ListJSON implements kube.API: List's page, encoded as the API server
// encodes a list (apiVersion, kind, metadata.continue, items).
func (f *FakeKube) ListJSON(ctx context.Context, gvr schema.GroupVersionResource, ns string, opts metav1.ListOptions, maxBytes int64) ([]byte, error) {
	l, err := f.List(ctx, gvr, ns, opts)
	if err != nil {
		return nil, err
	}
	return ListBody(gvr, l, maxBytes)
}

// ListBody encodes a page of a list as an API server does: the list's
// apiVersion and kind, its continue token, the items as they are. More than
// maxBytes is iolimit.ErrResponseTooLarge.
func ListBody(gvr schema.GroupVersionResource, l *unstructured.UnstructuredList, maxBytes int64) ([]byte, error) {
	items := make([]any, len(l.Items))
	for i := range l.Items {
		items[i] = l.Items[i].Object
	}
	kind := strings.ToUpper(gvr.Resource[:1]) + strings.TrimSuffix(gvr.Resource[1:], "s") + "List"
	md := map[string]any{}
	if c := l.GetContinue(); c != "" {
		md["continue"] = c
	}
	data, err := json.Marshal(map[string]any{"apiVersion": gvr.GroupVersion().String(), "kind": kind, "metadata": md, "items": items})
	if err != nil {
		return nil, err
	}
	if maxBytes > 0 && int64(len(data)) > maxBytes {
		return nil, fmt.Errorf("%w: more than %d bytes", iolimit.ErrResponseTooLarge, maxBytes)
	}
	return data, nil
}

// ServiceProxyGet implements kube.API through Proxy.
func (f *FakeKube) ServiceProxyGet(_ context.Context, ns, svc, port, path string, limit int64) ([]byte, error) {
	f.mu.Lock()
	f.Calls = append(f.Calls, "PROXY "+ns+"/"+svc+":"+port+path)
	f.mu.Unlock()
	if f.Proxy == nil {
		return nil, apierrors.NewServiceUnavailable("no endpoints available for service")
	}
	return f.Proxy(ns, svc, port, path)
}

// ServiceProxyPost implements kube.API through ProxyPost.
func (f *FakeKube) ServiceProxyPost(_ context.Context, ns, svc, port, path string, body []byte, limit int64) ([]byte, error) {
	f.mu.Lock()
	f.Calls = append(f.Calls, "PROXY POST "+ns+"/"+svc+":"+port+path)
	f.mu.Unlock()
	if f.ProxyPost == nil {
		return nil, apierrors.NewServiceUnavailable("no endpoints available for service")
	}
	return f.ProxyPost(ns, svc, port, path, body, limit)
}

// ServiceProxyStream implements kube.API through ProxyStream.
func (f *FakeKube) ServiceProxyStream(ctx context.Context, ns, svc, port, path string) (io.ReadCloser, error) {
	f.mu.Lock()
	f.Calls = append(f.Calls, "PROXY STREAM "+ns+"/"+svc+":"+port+path)
	f.mu.Unlock()
	if f.ProxyStream == nil {
		return nil, apierrors.NewServiceUnavailable("no endpoints available for service")
	}
	return f.ProxyStream(ctx, ns, svc, port, path)
}

// Lists returns the resources listed so far, in order.
func (f *FakeKube) Lists() []string {
	var out []string
	for _, c := range f.Calls {
		if strings.HasPrefix(c, "LIST") {
			out = append(out, c)
		}
	}
	return out
}

// Obj builds an unstructured object with labels and extra top-level fields.
func Obj(apiVersion, kind, ns, name string, lbls map[string]string, fields map[string]any) *unstructured.Unstructured {
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

// FakePod builds a pod of DGD dgd on node with the operator's labels.
func FakePod(ns, name, dgd, node string, extra map[string]string) *unstructured.Unstructured {
	l := map[string]string{kube.SrcLabelDeploymentName: dgd}
	for k, v := range extra {
		l[k] = v
	}
	return Obj("v1", "Pod", ns, name, l, map[string]any{"spec": map[string]any{"nodeName": node}})
}

// FakeCluster is a small deployment "llama" in ns "inf" plus noise.
func FakeCluster(pods int) *FakeKube {
	f := NewFakeKube()
	f.Add(kube.GVRDynamoGraphDeploymentV1beta1,
		Obj("nvidia.com/v1beta1", "DynamoGraphDeployment", "inf", "llama", nil, nil),
		Obj("nvidia.com/v1beta1", "DynamoGraphDeployment", "inf", "other", nil, nil),
		Obj("nvidia.com/v1beta1", "DynamoGraphDeployment", "elsewhere", "x", nil, nil))
	for i := range pods {
		node := fmt.Sprintf("node-%d", i%4)
		f.Add(kube.GVRPods, FakePod("inf", fmt.Sprintf("llama-decode-%d", i), "llama", node, map[string]string{kube.SrcLabelComponentType: "decode"}))
		dwm := Obj("nvidia.com/v1alpha1", "DynamoWorkerMetadata", "inf", fmt.Sprintf("llama-decode-%d", i), nil, map[string]any{"spec": map[string]any{"data": map[string]any{}}})
		f.Add(kube.GVRDynamoWorkerMetadata, dwm)
	}
	f.Add(kube.GVRPods, FakePod("inf", "llama-frontend-0", "llama", "node-0", map[string]string{kube.SrcLabelComponentType: "frontend"}))
	f.Add(kube.GVRPods, Obj("v1", "Pod", "inf", "unrelated", nil, map[string]any{"spec": map[string]any{"nodeName": "node-9"}}))
	f.Add(kube.GVRDynamoWorkerMetadata, Obj("nvidia.com/v1alpha1", "DynamoWorkerMetadata", "inf", "stale-dwm", nil, nil))
	f.Add(kube.GVRServices, Obj("v1", "Service", "inf", "llama-frontend", map[string]string{kube.SrcLabelDeploymentName: "llama", kube.SrcLabelComponentType: "frontend"},
		map[string]any{"spec": map[string]any{"ports": []any{map[string]any{"name": "http", "port": int64(8000)}}}}))
	for i := range 10 {
		f.Add(kube.GVRNodes, Obj("v1", "Node", "", fmt.Sprintf("node-%d", i), map[string]string{"topology.kubernetes.io/zone": fmt.Sprintf("z%d", i%2)}, nil))
	}
	f.Add(kube.GVREvents,
		Obj("v1", "Event", "inf", "e1", nil, map[string]any{"type": "Warning", "reason": "TopologyLabelMissing", "involvedObject": map[string]any{"kind": "Pod", "name": "llama-decode-0", "namespace": "inf"}}),
		Obj("v1", "Event", "inf", "e2", nil, map[string]any{"type": "Warning", "reason": "BackOff", "involvedObject": map[string]any{"kind": "Pod", "name": "unrelated", "namespace": "inf"}}),
		Obj("v1", "Event", "inf", "e3", nil, map[string]any{"type": "Normal", "reason": "Scheduled", "involvedObject": map[string]any{"kind": "Pod", "name": "llama-decode-0", "namespace": "inf"}}))
	f.Add(kube.GVREndpointSlices,
		Obj("discovery.k8s.io/v1", "EndpointSlice", "inf", "llama-x", map[string]string{kube.SrcLabelDiscoveryEnabled: "true"},
			map[string]any{"endpoints": []any{map[string]any{"targetRef": map[string]any{"kind": "Pod", "name": "llama-decode-1"}}}}),
		Obj("discovery.k8s.io/v1", "EndpointSlice", "inf", "someone-else", map[string]string{kube.SrcLabelDiscoveryEnabled: "true"},
			map[string]any{"endpoints": []any{map[string]any{"targetRef": map[string]any{"kind": "Pod", "name": "nope"}}}}))
	f.Add(kube.GVRClusterTopologyBinding, Obj("grove.io/v1alpha1", "ClusterTopologyBinding", "", "gpu-fabric", nil, nil))
	return f
}

// WantNotes fails t unless every sub is part of some note's message.
func WantNotes(t *testing.T, notes []model.Note, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if !slices.ContainsFunc(notes, func(n model.Note) bool { return strings.Contains(n.Message, s) }) {
			t.Errorf("no note contains %q; notes:\n%s", s, NoteLines(notes))
		}
	}
}

// NoteLines prints notes one per line, for failure messages.
func NoteLines(notes []model.Note) string {
	var b strings.Builder
	for _, n := range notes {
		fmt.Fprintf(&b, "  [%s %s] %s\n", n.Severity, n.Source, n.Message)
	}
	return b.String()
}
