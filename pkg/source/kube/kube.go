package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/jsonscan"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw/decode"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/iolimit"
)

// Labels and annotations the collector selects on.
const (
	// SrcLabelDeploymentName is the operator's pod/service label naming the DGD.
	SrcLabelDeploymentName = "nvidia.com/dynamo-graph-deployment-name"
	// SrcLabelComponentType is the operator's component-type label (frontend, worker, prefill, decode, …).
	SrcLabelComponentType = "nvidia.com/dynamo-component-type"
	// SrcLabelDiscoveryEnabled marks the objects (Services, EndpointSlices) of the
	// Kubernetes discovery backend.
	SrcLabelDiscoveryEnabled = "nvidia.com/dynamo-discovery-enabled"
	// SrcAnnotationDiscoveryBackend is the DGD annotation selecting the discovery
	// backend ("etcd" opts out of Kubernetes-native discovery).
	SrcAnnotationDiscoveryBackend = "nvidia.com/dynamo-discovery-backend"
)

// DefaultPageSize is the LIST page size (kubectl's default chunk size).
const DefaultPageSize int64 = 500

// MaxListBytes bounds one LIST page's answer (500 objects: a few MiB for the
// largest pods).
const MaxListBytes int64 = 256 << 20

// The resources the Kubernetes source reads. All are read with list (and
// discovery with get); nothing else is ever requested.
var (
	GVRDynamoGraphDeploymentV1beta1  = schema.GroupVersionResource{Group: "nvidia.com", Version: "v1beta1", Resource: "dynamographdeployments"}
	GVRDynamoGraphDeploymentV1alpha1 = schema.GroupVersionResource{Group: "nvidia.com", Version: "v1alpha1", Resource: "dynamographdeployments"}
	GVRDynamoWorkerMetadata          = schema.GroupVersionResource{Group: "nvidia.com", Version: "v1alpha1", Resource: "dynamoworkermetadatas"}
	GVRClusterTopologyBinding        = schema.GroupVersionResource{Group: "grove.io", Version: "v1alpha1", Resource: "clustertopologybindings"}
	GVRClusterTopology               = schema.GroupVersionResource{Group: "grove.io", Version: "v1alpha1", Resource: "clustertopologies"}
	GVRPods                          = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	GVRServices                      = schema.GroupVersionResource{Version: "v1", Resource: "services"}
	GVREvents                        = schema.GroupVersionResource{Version: "v1", Resource: "events"}
	GVRNodes                         = schema.GroupVersionResource{Version: "v1", Resource: "nodes"}
	GVREndpointSlices                = schema.GroupVersionResource{Group: "discovery.k8s.io", Version: "v1", Resource: "endpointslices"}
	GVRDeployments                   = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
)

// API is the read-only surface of the Kubernetes API the collector uses. The
// implementation over client-go is NewAPI; tests substitute fakes. No method
// can change anything in the cluster.
type API interface {
	// ServedResources returns the plural names of the resources served in a
	// group-version ("nvidia.com/v1beta1"). An error satisfying
	// apierrors.IsNotFound means the group-version is not served at all.
	ServedResources(ctx context.Context, groupVersion string) ([]string, error)
	// List reads one page of a resource; namespace "" lists all namespaces (or a
	// cluster-scoped resource).
	List(ctx context.Context, gvr schema.GroupVersionResource, namespace string, opts metav1.ListOptions) (*unstructured.UnstructuredList, error)
	// ListJSON is List's answer as JSON, undecoded (Collect types the items one
	// by one, pkg/raw/decode): at most maxBytes of it (iolimit.ErrResponseTooLarge
	// beyond).
	ListJSON(ctx context.Context, gvr schema.GroupVersionResource, namespace string, opts metav1.ListOptions, maxBytes int64) ([]byte, error)
	// ServiceProxyGet GETs path from a Service through the API server's service
	// proxy (GET /api/v1/namespaces/NS/services/SVC:PORT/proxy/PATH) and reads at
	// most maxBytes of the answer (iolimit.ErrResponseTooLarge beyond).
	ServiceProxyGet(ctx context.Context, namespace, service, port, path string, maxBytes int64) ([]byte, error)
	// ServiceProxyPost POSTs a JSON body to path of a Service through the
	// service proxy (POST …/proxy/PATH, which RBAC authorizes as verb create on
	// services/proxy) and reads at most maxBytes of the answer
	// (iolimit.ErrResponseTooLarge beyond). It is used only for read-only computations
	// (the frontend's POST /tokenize); nothing in the cluster changes.
	ServiceProxyPost(ctx context.Context, namespace, service, port, path string, body []byte, maxBytes int64) ([]byte, error)
	// ServiceProxyStream GETs path from a Service through the service proxy and
	// returns the open answer body for the caller to read incrementally and
	// close (an NDJSON stream such as the frontend's KV placements). Cancelling
	// ctx aborts the read.
	ServiceProxyStream(ctx context.Context, namespace, service, port, path string) (io.ReadCloser, error)
}

// RequestLog counts the HTTP requests a client made. It is safe for concurrent use.
type RequestLog struct {
	mu   sync.Mutex
	reqs []string
}

// Add records one request ("GET /api/v1/pods").
func (l *RequestLog) Add(method, path string) {
	l.mu.Lock()
	l.reqs = append(l.reqs, method+" "+path)
	l.mu.Unlock()
}

// Total is the number of requests made.
func (l *RequestLog) Total() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.reqs)
}

// Requests returns "METHOD PATH" for every request made, in order.
func (l *RequestLog) Requests() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.reqs)
}

type countingTransport struct {
	next http.RoundTripper
	log  *RequestLog
}

func (t *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	t.log.Add(r.Method, r.URL.Path)
	return t.next.RoundTrip(r)
}

// WrappedRoundTripper lets client-go reach the transport underneath (to cancel
// requests on timeout).
func (t *countingTransport) WrappedRoundTripper() http.RoundTripper { return t.next }

// RESTAPI is API over client-go. Every HTTP request it makes is counted
// in Log.
type RESTAPI struct {
	dyn  dynamic.Interface
	Rest rest.Interface // core/v1 REST client (service proxy)
	disc rest.Interface // discovery REST client (and LISTs read as JSON)
	raw  rest.Interface // WATCHes whose objects stay JSON (watch.go)
	// Log counts the requests made.
	Log *RequestLog
}

// NewAPI builds a RESTAPI from a REST config (e.g. ConfigFlags.ToRESTConfig,
// which carries --request-timeout). The config is copied; client-side rate limits
// left at zero are raised to QPS 50 / burst 100 so that a paginated read of a big
// cluster is not throttled to client-go's default of 5 requests a second.
func NewAPI(cfg *rest.Config) (*RESTAPI, error) {
	c := rest.CopyConfig(cfg)
	if c.QPS == 0 {
		c.QPS = 50
	}
	if c.Burst == 0 {
		c.Burst = 100
	}
	log := &RequestLog{}
	c.Wrap(func(rt http.RoundTripper) http.RoundTripper { return &bodyLimitTransport{next: rt} })
	c.Wrap(func(rt http.RoundTripper) http.RoundTripper { return &countingTransport{next: rt, log: log} })
	// Outermost: only GET and the two service-proxy POSTs leave the process,
	// and a redirect is never followed (guard.go).
	c.Wrap(guardAPIServer)
	dyn, err := dynamic.NewForConfig(c)
	if err != nil {
		return nil, fmt.Errorf("build the Kubernetes client: %w", err)
	}
	cs, err := kubernetes.NewForConfig(c)
	if err != nil {
		return nil, fmt.Errorf("build the Kubernetes client: %w", err)
	}
	raw, err := rest.UnversionedRESTClientFor(rawConfig(c))
	if err != nil {
		return nil, fmt.Errorf("build the Kubernetes client: %w", err)
	}
	return &RESTAPI{dyn: dyn, Rest: cs.CoreV1().RESTClient(), disc: cs.Discovery().RESTClient(), raw: raw, Log: log}, nil
}

// ServedResources implements API with one discovery GET.
func (k *RESTAPI) ServedResources(ctx context.Context, groupVersion string) ([]string, error) {
	path := "/apis/" + groupVersion
	if groupVersion == "v1" {
		path = "/api/v1"
	}
	var list metav1.APIResourceList
	if err := k.disc.Get().AbsPath(path).Do(ctx).Into(&list); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(list.APIResources))
	for _, r := range list.APIResources {
		if !strings.Contains(r.Name, "/") && slices.Contains(r.Verbs, "list") {
			names = append(names, r.Name)
		}
	}
	return names, nil
}

// List implements API with one LIST request.
func (k *RESTAPI) List(ctx context.Context, gvr schema.GroupVersionResource, namespace string, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	if namespace == "" {
		return k.dyn.Resource(gvr).List(ctx, opts)
	}
	return k.dyn.Resource(gvr).Namespace(namespace).List(ctx, opts)
}

// ListJSON implements API with one LIST request whose answer is read as JSON,
// at most maxBytes of it. The request is made as the dynamic client makes it
// (Do: a GET whose connection closes or resets before the answer is retried);
// bodyLimitTransport cuts the answer one byte past maxBytes, so it is never
// read whole.
func (k *RESTAPI) ListJSON(ctx context.Context, gvr schema.GroupVersionResource, namespace string, opts metav1.ListOptions, maxBytes int64) ([]byte, error) {
	res := k.disc.Get().AbsPath(ListPath(gvr, namespace)).
		SpecificallyVersionedParams(&opts, metav1.ParameterCodec, metav1.SchemeGroupVersion).
		SetHeader("Accept", "application/json").Do(withBodyLimit(ctx, maxBytes))
	data, err := res.Raw()
	if err != nil {
		// Raw keeps the bare "status code 410" error; Error decodes the
		// answer's Status (reason and message: an expired continue token is
		// then told as such, and restarted).
		if e := res.Error(); e != nil {
			err = e
		}
		return nil, err
	}
	if int64(len(data)) > maxBytes {
		return nil, fmt.Errorf("%w: more than %s", iolimit.ErrResponseTooLarge, iolimit.ByteSize(maxBytes))
	}
	return data, nil
}

// bodyLimitKey carries, in a request's context, the most bytes of its answer
// the caller reads.
type bodyLimitKey struct{}

// withBodyLimit makes the answers to requests made with ctx end one byte past
// limit (bodyLimitTransport).
func withBodyLimit(ctx context.Context, limit int64) context.Context {
	return context.WithValue(ctx, bodyLimitKey{}, limit)
}

// bodyLimitTransport ends the body of an answer one byte past the limit its
// request's context carries (withBodyLimit), so that a reader that reads it
// all (client-go's Do) holds at most limit+1 bytes and can tell it was cut.
type bodyLimitTransport struct{ next http.RoundTripper }

// RoundTrip implements http.RoundTripper.
func (t *bodyLimitTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	limit, ok := req.Context().Value(bodyLimitKey{}).(int64)
	if err != nil || !ok || resp == nil || resp.Body == nil {
		return resp, err
	}
	resp.Body = limitedBody{Reader: io.LimitReader(resp.Body, limit+1), Closer: resp.Body}
	return resp, nil
}

// limitedBody is a response body read through a limit.
type limitedBody struct {
	io.Reader
	io.Closer
}

// ListPath is the URL path of a LIST: /api/v1[/namespaces/NS]/RESOURCE for the
// core group, /apis/GROUP/VERSION[/namespaces/NS]/RESOURCE otherwise.
func ListPath(gvr schema.GroupVersionResource, namespace string) string {
	p := "/apis/" + gvr.Group + "/" + gvr.Version
	if gvr.Group == "" {
		p = "/api/" + gvr.Version
	}
	if namespace != "" {
		p += "/namespaces/" + namespace
	}
	return p + "/" + gvr.Resource
}

// ServiceProxyGet implements API with one GET through the service proxy.
func (k *RESTAPI) ServiceProxyGet(ctx context.Context, namespace, service, port, path string, maxBytes int64) ([]byte, error) {
	rc, err := k.Rest.Get().Namespace(namespace).Resource("services").Name(proxyName(service, port)).SubResource("proxy").Suffix(path).Stream(ctx)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return iolimit.ReadAtMost(rc, maxBytes)
}

// ServiceProxyPost implements API with one POST through the service proxy.
func (k *RESTAPI) ServiceProxyPost(ctx context.Context, namespace, service, port, path string, body []byte, maxBytes int64) ([]byte, error) {
	rc, err := k.Rest.Post().Namespace(namespace).Resource("services").Name(proxyName(service, port)).SubResource("proxy").Suffix(path).
		Body(body).SetHeader("Content-Type", "application/json").SetHeader("Accept", "application/json").Stream(ctx)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return iolimit.ReadAtMost(rc, maxBytes)
}

// ServiceProxyStream implements API with one streaming GET through the
// service proxy.
func (k *RESTAPI) ServiceProxyStream(ctx context.Context, namespace, service, port, path string) (io.ReadCloser, error) {
	return k.Rest.Get().Namespace(namespace).Resource("services").Name(proxyName(service, port)).SubResource("proxy").Suffix(path).
		SetHeader("Accept", "application/x-ndjson, application/json;q=0.9").Stream(ctx)
}

// proxyName is the service-proxy name "SERVICE:PORT" (or SERVICE alone).
func proxyName(service, port string) string {
	if port != "" {
		return service + ":" + port
	}
	return service
}

// Options select what the Kubernetes source reads.
type Options struct {
	// API is the client; required.
	API API
	// Namespace is the namespace read; ignored with AllNamespaces.
	Namespace string
	// AllNamespaces reads every namespace (-A).
	AllNamespaces bool
	// Names restricts the read to these DynamoGraphDeployments (in Namespace).
	Names []string
	// NodeSelector is an optional label selector for the single Node LIST (only
	// the Nodes the pods run on are kept either way).
	NodeSelector string
	// PageSize is the LIST page size; DefaultPageSize when 0.
	PageSize int64
	// Detail names the cluster for SourceStatus (e.g. the kubeconfig context).
	Detail string
	// Now returns the current time; time.Now when nil.
	Now func() time.Time
	// KeepObjects also keeps every object whole, as read (Result.AsRead: the
	// capture command writes them).
	KeepObjects bool
}

// Result is what the Kubernetes source read.
type Result struct {
	// Objects are the objects read, typed (pkg/raw/decode), each kind sorted
	// by namespace and name.
	Objects raw.Objects
	// AsRead are the same objects whole, managedFields dropped, in a stable
	// order (kind, namespace, name), when Options.KeepObjects asked for them.
	AsRead []raw.Object
	// Source is the source's status.
	Source model.SourceStatus
	// Notes explain every resource that could not be read and its consequence.
	Notes []model.Note
	// DGDVersion is the DynamoGraphDeployment version read ("v1beta1" or
	// "v1alpha1"), "" when none is served.
	DGDVersion string
}

// kubeRead is one resource read by the Kubernetes source.
type kubeRead struct {
	gvr         schema.GroupVersionResource
	kind        string
	namespace   string // "" for all namespaces or cluster scope
	cluster     bool   // cluster-scoped resource
	opts        metav1.ListOptions
	consequence string
	// severity of a failure note; warning unless set.
	severity model.NoteSeverity
	// trim, when set, is applied to each object kept whole (KeepObjects),
	// before anything else sees it.
	trim func(raw.Object) raw.Object
}

// resourceName is "pods" or "dynamoworkermetadatas.nvidia.com".
func (r *kubeRead) resourceName() string {
	if r.gvr.Group == "" {
		return r.gvr.Resource
	}
	return r.gvr.Resource + "." + r.gvr.Group
}

// scope is "in namespace X", "in all namespaces" or "at cluster scope".
func (r *kubeRead) scope() string {
	switch {
	case r.cluster:
		return "at cluster scope"
	case r.namespace == "":
		return "in all namespaces"
	}
	return "in namespace " + r.namespace
}

// kubeCollector holds the state of one Collect run.
type kubeCollector struct {
	o     Options
	ns    string
	mu    sync.Mutex
	notes []model.Note
	// failed lists "resource: reason" for the SourceStatus message.
	failed []string
	// unreach holds the reads that failed because the API server could not be
	// reached; noteUnreachable turns them into notes once all reads are done,
	// so that one outage is reported once, not once per resource.
	unreach []kubeUnreach
	// unreachable is SourceStatus.Unreachable, set by noteUnreachable.
	unreachable string
}

// kubeUnreach is one read that failed because the API server was unreachable.
type kubeUnreach struct {
	read  *kubeRead
	cause string
}

func (c *kubeCollector) note(sev model.NoteSeverity, msg string) {
	c.mu.Lock()
	c.notes = append(c.notes, model.Note{Severity: sev, Source: model.SourceKubernetes, Message: msg})
	c.mu.Unlock()
}

func (c *kubeCollector) degrade(what string) {
	c.mu.Lock()
	c.failed = append(c.failed, what)
	c.mu.Unlock()
}

// Collect reads the Dynamo deployments in scope and the objects around
// them with a constant number of label-scoped, paginated LIST requests (plus three
// discovery GETs), whatever the number of pods or nodes:
//
//   - discovery of nvidia.com/v1beta1, nvidia.com/v1alpha1 and grove.io/v1alpha1;
//   - DynamoGraphDeployments (v1beta1, else v1alpha1), filtered by Names;
//   - Pods and Services labelled nvidia.com/dynamo-graph-deployment-name;
//   - DynamoWorkerMetadatas, EndpointSlices (discovery label), Warning Events and
//     Nodes (one cluster-wide LIST), each kept only when it belongs to a pod,
//     deployment or node read;
//   - ClusterTopologyBindings, else the legacy ClusterTopologies;
//   - the Dynamo operator's controller-manager Deployments (OperatorSelector,
//     every namespace), trimmed to what tells their release (operator.go).
//
// A resource that cannot be read (CRD missing, 403, timeout) becomes a Note naming
// the resource, the missing permission and the consequence, and marks the source
// degraded. The error is reserved for an API server that cannot be used at all
// (unreachable, credentials rejected), reported by the first discovery request.
func Collect(ctx context.Context, o Options) (*Result, error) {
	if o.API == nil {
		return nil, errors.New("no Kubernetes client configured")
	}
	if o.PageSize <= 0 {
		o.PageSize = DefaultPageSize
	}
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	c := &kubeCollector{o: o}
	if !o.AllNamespaces {
		c.ns = o.Namespace
	}
	res := &Result{Source: model.SourceStatus{Kind: model.SourceKubernetes, Detail: o.Detail, At: now().UTC()}}

	// Discovery: which versions and CRDs are served (three GETs, concurrently).
	gvs := []string{"nvidia.com/v1beta1", "nvidia.com/v1alpha1", "grove.io/v1alpha1"}
	served := make([][]string, len(gvs))
	errs := make([]error, len(gvs))
	var wg sync.WaitGroup
	for i, gv := range gvs {
		wg.Go(func() { served[i], errs[i] = o.API.ServedResources(ctx, gv) })
	}
	wg.Wait()
	for i, err := range errs {
		if err == nil || apierrors.IsNotFound(err) {
			continue
		}
		if fatalKubeError(err) {
			if cause, ok := unreachableCause(ctx, err); ok {
				return nil, fmt.Errorf("read API discovery for %s: %s is unreachable, %s: %s", gvs[i], apiServerName(o.Detail), cause, unreachableAdvice)
			}
			if iolimit.IsTimeout(ctx, err) && !errors.Is(ctx.Err(), context.Canceled) {
				// Name the flag that bounds the wait (or its absence).
				return nil, fmt.Errorf("read API discovery for %s: the API server did not answer in time (%w): it is overloaded or unreachable; raise --request-timeout, or check the cluster is reachable with this kubeconfig (kubectl get --raw /apis/%s)", gvs[i], err, gvs[i])
			}
			return nil, fmt.Errorf("read API discovery for %s: %w: check the cluster is reachable with this kubeconfig (kubectl get --raw /apis/%s)", gvs[i], err, gvs[i])
		}
		// Discovery forbidden or flaky: assume served and let the LISTs tell.
		served[i] = []string{"dynamographdeployments", "dynamoworkermetadatas", "clustertopologybindings", "clustertopologies"}
	}
	has := func(i int, res string) bool { return slices.Contains(served[i], res) }

	// Phase 1: deployments, pods and services.
	var dgdRead *kubeRead
	switch {
	case has(0, "dynamographdeployments"):
		dgdRead = &kubeRead{gvr: GVRDynamoGraphDeploymentV1beta1, kind: "DynamoGraphDeployment"}
	case has(1, "dynamographdeployments"):
		dgdRead = &kubeRead{gvr: GVRDynamoGraphDeploymentV1alpha1, kind: "DynamoGraphDeployment"}
		c.note(model.NoteInfo, "nvidia.com/v1beta1 DynamoGraphDeployments are not served: read nvidia.com/v1alpha1 (an older Dynamo operator)")
	default:
		c.note(model.NoteWarning, "no DynamoGraphDeployment CRD is served (neither nvidia.com/v1beta1 nor v1alpha1 dynamographdeployments): is the Dynamo operator installed in this cluster? Deployments are known only from their pods' labels")
		c.degrade("DynamoGraphDeployment CRD not installed")
	}
	if dgdRead != nil {
		res.DGDVersion = dgdRead.gvr.Version
		dgdRead.namespace = c.ns
		dgdRead.consequence = "the deployments, their kvTransferPolicy and router settings are unknown; only their pods are shown"
	}
	podSel := SrcLabelDeploymentName
	if len(o.Names) > 0 {
		podSel = SrcLabelDeploymentName + " in (" + strings.Join(o.Names, ",") + ")"
	}
	podRead := &kubeRead{gvr: GVRPods, kind: "Pod", namespace: c.ns, opts: metav1.ListOptions{LabelSelector: podSel},
		consequence: "the workers, their nodes, readiness and domain labels are unknown; only the deployments' specs are shown"}
	svcRead := &kubeRead{gvr: GVRServices, kind: "Service", namespace: c.ns, opts: metav1.ListOptions{LabelSelector: podSel},
		consequence: "the frontend Service is unknown, so the frontend cannot be reached through the service proxy (pass --frontend-url after a port-forward)"}

	var dgds, pods, svcs []kubeItem
	var dgdOK, podsOK bool
	wg.Go(func() {
		if dgdRead != nil {
			dgds, dgdOK = c.list(ctx, dgdRead, func(v any) bool {
				return len(o.Names) == 0 || slices.Contains(o.Names, itemMeta(v).Name)
			})
		}
	})
	wg.Go(func() { pods, podsOK = c.list(ctx, podRead, nil) })
	wg.Go(func() { svcs, _ = c.list(ctx, svcRead, nil) })
	wg.Wait()
	if dgdOK {
		for _, n := range o.Names {
			if !slices.ContainsFunc(dgds, func(it kubeItem) bool { return itemMeta(it.obj).Name == n }) {
				c.note(model.NoteWarning, fmt.Sprintf("DynamoGraphDeployment %q not found %s", n, dgdRead.scope()))
			}
		}
	}

	// What belongs to the deployments read.
	podNames := map[string]bool{} // ns/name
	nodeNames := map[string]bool{}
	dgdNames := map[string]bool{}
	for _, it := range dgds {
		m := itemMeta(it.obj)
		dgdNames[m.Namespace+"/"+m.Name] = true
	}
	for _, it := range pods {
		m := itemMeta(it.obj)
		podNames[m.Namespace+"/"+m.Name] = true
		dgdNames[m.Namespace+"/"+m.Labels[SrcLabelDeploymentName]] = true
		if p, ok := it.obj.(*raw.Pod); ok && p.Spec.NodeName != "" {
			nodeNames[p.Spec.NodeName] = true
		}
	}
	ownsPod := func(v any) bool {
		if !podsOK {
			return true // cannot tell: keep everything in scope
		}
		m := itemMeta(v)
		if podNames[m.Namespace+"/"+m.Name] {
			return true
		}
		for _, ref := range m.OwnerReferences {
			if ref.Kind == "Pod" && podNames[m.Namespace+"/"+ref.Name] {
				return true
			}
		}
		return false
	}

	// Phase 2: everything else, concurrently.
	var reads []*kubeRead
	var keeps []func(any) bool
	add := func(r *kubeRead, keep func(any) bool) {
		reads = append(reads, r)
		keeps = append(keeps, keep)
	}
	if has(1, "dynamoworkermetadatas") {
		add(&kubeRead{gvr: GVRDynamoWorkerMetadata, kind: "DynamoWorkerMetadata", namespace: c.ns,
			consequence: "the workers' published runtime config (role, instance ids, KV capacity, topology_domains, kv_transfer_*) is unknown; roles come from pod labels and args, and published-vs-label drift cannot be checked"},
			ownsPod)
	} else {
		c.note(model.NoteInfo, "the DynamoWorkerMetadata CRD (dynamoworkermetadatas.nvidia.com/v1alpha1) is not installed: workers' published runtime config is read only from etcd (--etcd-endpoints), for deployments using etcd discovery")
	}
	add(&kubeRead{gvr: GVREndpointSlices, kind: "EndpointSlice", namespace: c.ns,
		opts:        metav1.ListOptions{LabelSelector: SrcLabelDiscoveryEnabled + "=true"},
		consequence: "discovery readiness is taken from pod conditions only"},
		func(v any) bool {
			s, _ := v.(*raw.EndpointSlice)
			if s == nil {
				return !podsOK
			}
			if dgdNames[s.Namespace+"/"+s.Labels[SrcLabelDeploymentName]] {
				return true
			}
			for _, e := range s.Endpoints {
				if podNames[s.Namespace+"/"+e.TargetRef.Name] {
					return true
				}
			}
			return !podsOK
		})
	add(&kubeRead{gvr: GVREvents, kind: "Event", namespace: c.ns,
		opts:        metav1.ListOptions{FieldSelector: "type=Warning"},
		consequence: "warning events such as TopologyLabelMissing are not shown", severity: model.NoteInfo},
		func(v any) bool {
			e, _ := v.(*raw.Event)
			if e == nil {
				return false
			}
			kind, name, ns := e.InvolvedObject.Kind, e.InvolvedObject.Name, e.InvolvedObject.Namespace
			if ns == "" {
				ns = e.Namespace
			}
			switch kind {
			case "Pod":
				return podNames[ns+"/"+name]
			case "DynamoGraphDeployment":
				return dgdNames[ns+"/"+name]
			case "Node":
				return nodeNames[name]
			}
			return false
		})
	if len(nodeNames) > 0 {
		add(&kubeRead{gvr: GVRNodes, kind: "Node", cluster: true, opts: metav1.ListOptions{LabelSelector: o.NodeSelector},
			consequence: "node labels (zone, rack) are unknown, so TopologyLabelDrift cannot be checked against the nodes and workers without a pod label have no domain"},
			func(v any) bool { return nodeNames[itemMeta(v).Name] })
	}
	// The Dynamo operator's controller manager, in whatever namespace it runs:
	// its release (--operator-version) is one of the signals of the release the
	// deployments run (pkg/behavior).
	add(&kubeRead{gvr: GVRDeployments, kind: "Deployment", opts: metav1.ListOptions{LabelSelector: OperatorSelector},
		consequence: "the Dynamo operator's release is unknown (the release is told from the runtime images alone)", severity: model.NoteInfo,
		trim: trimOperator},
		func(v any) bool {
			d, ok := v.(*raw.Deployment)
			if ok {
				trimOperatorTyped(d)
			}
			return ok
		})
	switch {
	case has(2, "clustertopologybindings"):
		add(&kubeRead{gvr: GVRClusterTopologyBinding, kind: "ClusterTopologyBinding", cluster: true,
			consequence: "the Grove topology levels are unknown, so policies naming a clusterTopologyName cannot be checked and --tree falls back to well-known node labels", severity: model.NoteWarning}, nil)
	case has(2, "clustertopologies"):
		add(&kubeRead{gvr: GVRClusterTopology, kind: "ClusterTopology", cluster: true,
			consequence: "the Grove topology levels are unknown, so policies naming a clusterTopologyName cannot be checked and --tree falls back to well-known node labels", severity: model.NoteWarning}, nil)
	default:
		c.note(model.NoteInfo, "Grove is not installed (neither clustertopologybindings.grove.io nor clustertopologies.grove.io is served): topology levels come from well-known node labels")
	}
	results := make([][]kubeItem, len(reads))
	for i := range reads {
		wg.Go(func() { results[i], _ = c.list(ctx, reads[i], keeps[i]) })
	}
	wg.Wait()

	items := slices.Concat(dgds, pods, svcs)
	for _, r := range results {
		items = append(items, r...)
	}
	for _, it := range items {
		decode.Add(&res.Objects, it.obj)
		if o.KeepObjects {
			res.AsRead = append(res.AsRead, it.whole)
		}
	}
	SortObjects(&res.Objects)
	sortCollected(res.AsRead)
	c.noteUnreachable()
	res.Notes = c.notes
	SortCollectedNotes(res.Notes)
	if len(c.failed) > 0 {
		sort.Strings(c.failed)
		res.Source.Degraded = true
		res.Source.Message = strings.Join(c.failed, "; ")
	}
	res.Source.Unreachable = c.unreachable
	return res, nil
}

// noteUnreachable reports the reads that failed because the API server could
// not be reached: one note per read when a single read failed, else one note
// per cause that names the server, the cause and the advice once and lists
// every read with what its loss means (an API server that went away after
// discovery fails every LIST the same way).
func (c *kubeCollector) noteUnreachable() {
	byCause := map[string][]*kubeRead{}
	var causes []string
	for _, u := range c.unreach {
		if _, ok := byCause[u.cause]; !ok {
			causes = append(causes, u.cause)
		}
		byCause[u.cause] = append(byCause[u.cause], u.read)
	}
	sort.Strings(causes)
	server := apiServerName(c.o.Detail)
	if len(causes) > 0 {
		c.unreachable = server + " is unreachable, " + strings.Join(causes, "; ")
	}
	for _, cause := range causes {
		reads := byCause[cause]
		sort.Slice(reads, func(i, j int) bool {
			a, b := reads[i], reads[j]
			if a.resourceName() != b.resourceName() {
				return a.resourceName() < b.resourceName()
			}
			return a.scope() < b.scope()
		})
		sev := model.NoteInfo
		for _, r := range reads {
			if r.severity == "" || r.severity == model.NoteWarning {
				sev = model.NoteWarning
			}
		}
		if len(reads) == 1 {
			r := reads[0]
			c.note(sev, fmt.Sprintf("listing %s %s failed: %s is unreachable, %s: %s; %s",
				r.resourceName(), r.scope(), server, cause, r.consequence, unreachableAdvice))
			continue
		}
		parts := make([]string, len(reads))
		for i, r := range reads {
			parts[i] = fmt.Sprintf("%s %s (%s)", r.resourceName(), r.scope(), r.consequence)
		}
		c.note(sev, fmt.Sprintf("%s is unreachable, %s: none of %d reads succeeded: %s; %s",
			server, cause, len(reads), strings.Join(parts, "; "), unreachableAdvice))
	}
}

// kubeItem is one object a LIST returned: typed (a *raw.Pod, …; nil for a
// kind nothing reads), and whole when the read keeps objects.
type kubeItem struct {
	obj   any
	whole raw.Object
}

// itemMeta is a typed object's metadata (empty for another kind).
func itemMeta(v any) *raw.ObjectMeta {
	switch o := v.(type) {
	case *raw.DGD:
		return &o.ObjectMeta
	case *raw.DWM:
		return &o.ObjectMeta
	case *raw.Pod:
		return &o.ObjectMeta
	case *raw.Node:
		return &o.ObjectMeta
	case *raw.Service:
		return &o.ObjectMeta
	case *raw.EndpointSlice:
		return &o.ObjectMeta
	case *raw.Event:
		return &o.ObjectMeta
	case *raw.ClusterTopology:
		return &o.ObjectMeta
	case *raw.Deployment:
		return &o.ObjectMeta
	}
	return &raw.ObjectMeta{}
}

// list reads every page of r, typing each item as it is read
// (pkg/raw/decode) and keeping those keep accepts (all when nil; an item of a
// kind nothing reads only then). A page is held while its items are typed,
// never the whole list. A failure becomes a note and ok=false.
func (c *kubeCollector) list(ctx context.Context, r *kubeRead, keep func(any) bool) (out []kubeItem, ok bool) {
	opts := r.opts
	opts.Limit = c.o.PageSize
	restarted := false
	for {
		data, err := c.o.API.ListJSON(ctx, r.gvr, r.namespace, opts, MaxListBytes)
		var page *decode.Page
		if err == nil {
			if page, err = decode.ListPage(data); err != nil {
				err = fmt.Errorf("read the LIST answer: %w", err)
			}
		}
		if err != nil {
			if apierrors.IsResourceExpired(err) && opts.Continue != "" && !restarted {
				// The continue token expired (410 Gone): start over once.
				restarted = true
				out, opts.Continue = nil, ""
				continue
			}
			c.failure(ctx, r, err)
			return nil, false
		}
		d := decode.NewDecoder(page.B, page.Ends)
		def := &decode.Defaults{ListAPIVersion: page.APIVersion, ListKind: page.Kind, APIVersion: r.gvr.GroupVersion().String(), Kind: r.kind}
		var tree jsonscan.Decoder
		if c.o.KeepObjects {
			tree = jsonscan.Decoder{B: page.B}
		}
		for _, i := range page.Items {
			it := kubeItem{obj: d.ListItem(i, def)}
			switch it.obj.(type) {
			case nil, []any:
				if keep != nil {
					continue
				}
			default:
				if keep != nil && !keep(it.obj) {
					continue
				}
			}
			if c.o.KeepObjects {
				it.whole = wholeItem(&tree, i, def)
				if it.whole == nil {
					continue // not an object: client-go's list would have failed on it
				}
				if r.trim != nil {
					it.whole = r.trim(it.whole)
				}
			}
			out = append(out, it)
		}
		opts.Continue = page.Continue
		if opts.Continue == "" {
			return out, true
		}
	}
}

// wholeItem decodes a LIST item whole, with the apiVersion and kind client-go
// and the collector give it, and without its managedFields.
func wholeItem(d *jsonscan.Decoder, i int, def *decode.Defaults) raw.Object {
	v, _ := d.Value(i)
	m, _ := v.(map[string]any)
	if m == nil {
		return nil
	}
	u := &unstructured.Unstructured{Object: m}
	if u.GetKind() == "" && u.GetAPIVersion() == "" {
		u.SetKind(strings.TrimSuffix(def.ListKind, "List"))
		u.SetAPIVersion(def.ListAPIVersion)
	}
	if u.GetKind() == "" {
		u.SetAPIVersion(def.APIVersion)
		u.SetKind(def.Kind)
	}
	unstructured.RemoveNestedField(u.Object, "metadata", "managedFields")
	return u.Object
}

// failure turns a LIST error into a note and a degraded source.
func (c *kubeCollector) failure(ctx context.Context, r *kubeRead, err error) {
	sev := r.severity
	if sev == "" {
		sev = model.NoteWarning
	}
	res := r.resourceName()
	var msg, short string
	switch {
	case apierrors.IsForbidden(err):
		msg = fmt.Sprintf("cannot list %s %s (RBAC: needs list on %s): %s", res, r.scope(), res, r.consequence)
		short = res + " forbidden"
	case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
		msg = fmt.Sprintf("%s is not served (CRD not installed?): %s", res, r.consequence)
		short = res + " not served"
	case isUnreachable(ctx, err):
		cause, _ := unreachableCause(ctx, err)
		c.mu.Lock()
		c.unreach = append(c.unreach, kubeUnreach{read: r, cause: cause})
		c.mu.Unlock()
		c.degrade(res + " unreachable")
		return
	case iolimit.IsTimeout(ctx, err):
		msg = fmt.Sprintf("listing %s %s timed out (%v): %s; raise --request-timeout", res, r.scope(), err, r.consequence)
		short = res + " timed out"
	default:
		msg = fmt.Sprintf("listing %s %s failed: %v: %s", res, r.scope(), err, r.consequence)
		short = res + " failed"
	}
	c.note(sev, msg)
	c.degrade(short)
}

// unreachableAdvice is the next step when the API server cannot be reached.
const unreachableAdvice = "check the cluster is reachable with this kubeconfig and that its current context is the intended cluster (kubectl cluster-info)"

// apiServerName names the API server for a message from Options.Detail
// ("CONTEXT (URL)", "(URL)" or "").
func apiServerName(detail string) string {
	switch {
	case detail == "":
		return "the API server"
	case strings.HasPrefix(detail, "("):
		return "the API server " + detail
	}
	return "the API server of context " + detail
}

func isUnreachable(ctx context.Context, err error) bool {
	_, ok := unreachableCause(ctx, err)
	return ok
}

// previousAttempt is how client-go appends the error of an earlier attempt of
// a retried request to the last one ("context deadline exceeded - error from a
// previous attempt: EOF"); the earlier error is not reachable with errors.As.
const previousAttempt = " - error from a previous attempt: "

// unreachableCause reports whether err means the API server could not be
// reached at all, as opposed to answering slowly: no connection (refused, no
// route, unknown host, dial timeout), or a connection closed or reset without
// an answer, including when client-go retried that until the request timeout.
// It returns the cause in a few words. A cancelled ctx (Ctrl-C) is not a cause.
func unreachableCause(ctx context.Context, err error) (string, bool) {
	if err == nil || ctx.Err() != nil {
		return "", false
	}
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		return "", false // the server answered
	}
	msg := err.Error()
	if i := strings.LastIndex(msg, previousAttempt); i >= 0 {
		// Retried until the request timeout or the retry limit: the cause is
		// what the attempts met.
		if cause, ok := connCause(nil, msg[i+len(previousAttempt):]); ok {
			return cause + " on every attempt until the request timed out", true
		}
		return "", false
	}
	return connCause(err, msg)
}

// connCause classifies a connection-level error (from its type when err is
// set, else from its text).
func connCause(err error, msg string) (string, bool) {
	var op *net.OpError
	var dns *net.DNSError
	switch {
	case errors.As(err, &dns):
		if dns.IsNotFound {
			return "host " + dns.Name + " not found", true
		}
		return "DNS lookup of " + dns.Name + " failed", true
	case errors.As(err, &op) && op.Op == "dial":
		if op.Timeout() {
			return "no connection before the timeout", true
		}
		if c, ok := connCause(nil, op.Err.Error()); ok {
			return c, true
		}
		return "cannot connect (" + op.Err.Error() + ")", true
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "connection closed without an answer (EOF)", true
	}
	low := strings.ToLower(msg)
	for _, k := range []struct{ text, cause string }{
		{"connection refused", "connection refused"},
		{"no route to host", "no route to host"},
		{"network is unreachable", "network unreachable"},
		{"connection reset by peer", "connection reset"},
		{"broken pipe", "connection closed (broken pipe)"},
		{"http2: client connection lost", "connection lost"},
		{"use of closed network connection", "connection closed"},
		{"server sent goaway", "connection closed by the server (GOAWAY)"},
	} {
		if strings.Contains(low, k.text) {
			return k.cause, true
		}
	}
	if t := strings.TrimSpace(msg); t == "EOF" || strings.HasSuffix(t, ": EOF") || t == "unexpected EOF" || strings.HasSuffix(t, ": unexpected EOF") {
		return "connection closed without an answer (EOF)", true
	}
	return "", false
}

// fatalKubeError reports whether err means the API server cannot be used at all:
// not an answer from it (connection refused, TLS, timeout) or credentials rejected.
func fatalKubeError(err error) bool {
	if apierrors.IsUnauthorized(err) {
		return true
	}
	var st apierrors.APIStatus
	return !errors.As(err, &st)
}

// collectKindOrder ranks kinds for a stable, readable object order.
var collectKindOrder = map[string]int{
	"DynamoGraphDeployment": 0, "ClusterTopologyBinding": 1, "ClusterTopology": 1, "Node": 2, "Service": 3,
	"Pod": 4, "DynamoWorkerMetadata": 5, "EndpointSlice": 6, "Event": 7, "Deployment": 8,
}

// sortCollected orders whole objects by kind, namespace, name.
func sortCollected(objs []raw.Object) {
	type key struct {
		rank                  int
		kind, namespace, name string
	}
	keyOf := func(m raw.Object) key {
		u := &unstructured.Unstructured{Object: m}
		r, ok := collectKindOrder[u.GetKind()]
		if !ok {
			r = len(collectKindOrder)
		}
		return key{r, u.GetKind(), u.GetNamespace(), u.GetName()}
	}
	ks := make([]key, len(objs))
	for i, m := range objs {
		ks[i] = keyOf(m)
	}
	idx := make([]int, len(objs))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(i, j int) bool {
		a, b := ks[idx[i]], ks[idx[j]]
		if a.rank != b.rank {
			return a.rank < b.rank
		}
		if a.kind != b.kind {
			return a.kind < b.kind
		}
		if a.namespace != b.namespace {
			return a.namespace < b.namespace
		}
		return a.name < b.name
	})
	sorted := make([]raw.Object, len(objs))
	for i, k := range idx {
		sorted[i] = objs[k]
	}
	copy(objs, sorted)
}

// SortObjects orders each kind's objects by namespace and name (topologies
// by kind first), keeping the order of equal ones: the order Collect gives
// them.
func SortObjects(o *raw.Objects) {
	sortKind(o.DGDs, func(x *raw.DGD) (string, *raw.ObjectMeta) { return x.Kind, &x.ObjectMeta })
	sortKind(o.DWMs, func(x *raw.DWM) (string, *raw.ObjectMeta) { return x.Kind, &x.ObjectMeta })
	sortKind(o.Pods, func(x *raw.Pod) (string, *raw.ObjectMeta) { return x.Kind, &x.ObjectMeta })
	sortKind(o.Nodes, func(x *raw.Node) (string, *raw.ObjectMeta) { return x.Kind, &x.ObjectMeta })
	sortKind(o.Services, func(x *raw.Service) (string, *raw.ObjectMeta) { return x.Kind, &x.ObjectMeta })
	sortKind(o.EndpointSlices, func(x *raw.EndpointSlice) (string, *raw.ObjectMeta) { return x.Kind, &x.ObjectMeta })
	sortKind(o.Events, func(x *raw.Event) (string, *raw.ObjectMeta) { return x.Kind, &x.ObjectMeta })
	sortKind(o.Topologies, func(x *raw.ClusterTopology) (string, *raw.ObjectMeta) { return x.Kind, &x.ObjectMeta })
	sortKind(o.Deployments, func(x *raw.Deployment) (string, *raw.ObjectMeta) { return x.Kind, &x.ObjectMeta })
}

func sortKind[T any](objs []T, meta func(T) (string, *raw.ObjectMeta)) {
	sort.SliceStable(objs, func(i, j int) bool {
		ka, a := meta(objs[i])
		kb, b := meta(objs[j])
		if ka != kb {
			return ka < kb
		}
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})
}

// SortCollectedNotes orders notes by severity (warnings first), then message.
func SortCollectedNotes(notes []model.Note) {
	sort.SliceStable(notes, func(i, j int) bool {
		if notes[i].Severity != notes[j].Severity {
			return notes[i].Severity == model.NoteWarning
		}
		if notes[i].Deployment != notes[j].Deployment {
			return notes[i].Deployment < notes[j].Deployment
		}
		return notes[i].Message < notes[j].Message
	})
}
