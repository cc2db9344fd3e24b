package watch

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/kube"
)

// API is the read-only watch surface the Watcher uses on top of kube.API's
// ListJSON. kube.RESTAPI implements it; tests substitute fakes. A watch is
// verb watch: it changes nothing in the cluster.
type API interface {
	// Watch opens a WATCH of a resource; namespace "" watches all namespaces (or
	// a cluster-scoped resource). The objects of its events are
	// *kube.RawObject (their JSON), a Status for an ERROR event.
	Watch(ctx context.Context, gvr schema.GroupVersionResource, namespace string, opts metav1.ListOptions) (watch.Interface, error)
}

// State is the state of a Watcher as a whole.
type State string

// Watcher states.
const (
	// Watching: every resource that can be read is watched.
	Watching State = "watching"
	// Relisting: a watch expired (410 Gone) or broke and its resource is
	// being re-listed; changes in between are reported as one change.
	Relisting State = "re-listing"
	// Degraded: some resources cannot be watched (forbidden, failing,
	// unreachable); changes to them are seen only at the next full refresh (an
	// unreachable etcd is re-read when it answers again).
	Degraded State = "degraded"
	// Stopped: the context ended.
	Stopped State = "stopped"
)

// Status is the Watcher's state and, when degraded, what is not watched.
type Status struct {
	State State
	// Detail names the resources re-listing or not watched ("pods forbidden").
	Detail string
	// Watched is the number of resources watched.
	Watched int
	// Stale are the watched sources that stopped answering (the discovery etcd
	// unreachable): the data last read from them may be out of date until they
	// answer again, when they are re-read. They are degraded too.
	Stale []model.StaleSource
}

// Notice is what Watcher.Next returns: whether the watched objects changed
// since the last notice, and the current status.
type Notice struct {
	Changed bool
	Status  Status
}

// DefaultDebounce coalesces a burst of watch events into one change.
const DefaultDebounce = 200 * time.Millisecond

// Options tune a Watcher.
type Options struct {
	// Debounce is how long after the first event of a burst the change is
	// reported (DefaultDebounce when 0).
	Debounce time.Duration
	// RetryDelay is the first wait before retrying a failed watch; it doubles up
	// to 30 s (1 s when 0).
	RetryDelay time.Duration
}

// Watcher watches the Kubernetes objects Collect lists and reports, debounced,
// that they changed. It only LISTs (one small page, to learn the
// resourceVersion to watch from) and WATCHes; it keeps no objects, and reads
// of each one it sees only what its filters need (watchObject: a name, a
// resourceVersion, a Node's fingerprint), straight from the JSON. Everything it
// starts stops when the context given to Start ends.
type Watcher struct {
	o      Options
	notify chan struct{}
	done   chan struct{}

	mu      sync.Mutex
	changed bool
	timer   *time.Timer
	targets []*watchTarget
	stopped bool
}

// watchTarget is one resource the Watcher follows.
type watchTarget struct {
	// name is the resource as users know it ("pods").
	name string
	// gvrs are alternatives (DGD v1beta1, else v1alpha1); the first served wins.
	gvrs      []schema.GroupVersionResource
	namespace string
	opts      metav1.ListOptions
	// filter, when set, tells whether an event matters; seed makes the first
	// LIST read every object through filter (so that it knows them).
	filter func(watch.EventType, watchObject) bool
	seed   bool

	// Guarded by Watcher.mu.
	state  string // "", "watching", "re-listing", "not served", "forbidden", "failing", "unreachable"
	reason string
	// since is when an unreachable target stopped answering.
	since time.Time
}

// Start starts watching what source.Collect(ctx, o) reads from Kubernetes:
// DynamoGraphDeployments, Pods and Services of the deployments,
// DynamoWorkerMetadatas, discovery EndpointSlices, Warning Events, Nodes (label,
// schedulability, capacity and readiness changes only) and the Grove topology.
// It returns once every resource has been listed, so a Collect started after it
// misses nothing. A resource that is forbidden or failing degrades the watcher
// (Status); the error is reserved for a client that cannot watch at all.
func Start(ctx context.Context, o source.CollectOptions, wo Options) (*Watcher, error) {
	api := o.Kube
	if api == nil {
		if o.RESTConfig == nil {
			return nil, errors.New("no Kubernetes configuration to watch")
		}
		k, err := kube.NewAPI(o.RESTConfig)
		if err != nil {
			return nil, err
		}
		api = k
	}
	wa, ok := api.(API)
	if !ok {
		return nil, errors.New("the Kubernetes client cannot watch")
	}
	if wo.Debounce <= 0 {
		wo.Debounce = DefaultDebounce
	}
	if wo.RetryDelay <= 0 {
		wo.RetryDelay = time.Second
	}
	w := &Watcher{o: wo, notify: make(chan struct{}, 1), done: make(chan struct{}), targets: watchTargets(o)}
	var wg sync.WaitGroup
	rvs := make([]string, len(w.targets))
	gvrs := make([]schema.GroupVersionResource, len(w.targets))
	for i, t := range w.targets {
		wg.Go(func() { gvrs[i], rvs[i] = w.list(ctx, api, t) })
	}
	wg.Wait()
	var loops sync.WaitGroup
	for i, t := range w.targets {
		if rvs[i] == "" {
			continue // not served, forbidden (a note) or failing: retried below
		}
		loops.Go(func() { w.run(ctx, api, wa, t, gvrs[i], rvs[i]) })
	}
	for i, t := range w.targets {
		if rvs[i] == "" && w.targetState(t) == "failing" {
			loops.Go(func() { w.run(ctx, api, wa, t, schema.GroupVersionResource{}, "") })
		}
	}
	// The Dynamo discovery etcd, when given (--etcd-endpoints): auto-detected
	// endpoints are found by Collect and re-read with each collection.
	if !o.NoEtcd && len(o.Etcd.Endpoints) > 0 {
		et := &watchTarget{name: etcdTargetName(o.Etcd)}
		w.mu.Lock()
		w.targets = append(w.targets, et)
		w.mu.Unlock()
		loops.Go(func() { w.watchEtcd(ctx, o.Etcd, et) })
	}
	go func() {
		loops.Wait()
		<-ctx.Done()
		w.mu.Lock()
		w.stopped = true
		if w.timer != nil {
			w.timer.Stop()
		}
		w.mu.Unlock()
		close(w.done)
	}()
	return w, nil
}

// watchTargets are the resources Collect reads, with the same selectors.
func watchTargets(o source.CollectOptions) []*watchTarget {
	ns := o.Namespace
	if o.AllNamespaces {
		ns = ""
	}
	sel := kube.SrcLabelDeploymentName
	if len(o.Names) > 0 {
		sel = kube.SrcLabelDeploymentName + " in (" + strings.Join(o.Names, ",") + ")"
	}
	var dgdFilter func(watch.EventType, watchObject) bool
	if len(o.Names) > 0 {
		dgdFilter = func(_ watch.EventType, u watchObject) bool {
			for _, n := range o.Names {
				if u.Name == n {
					return true
				}
			}
			return false
		}
	}
	nodes := map[string]uint64{}
	var nodesMu sync.Mutex
	return []*watchTarget{
		{name: "dynamographdeployments", gvrs: []schema.GroupVersionResource{kube.GVRDynamoGraphDeploymentV1beta1, kube.GVRDynamoGraphDeploymentV1alpha1}, namespace: ns, filter: dgdFilter},
		{name: "pods", gvrs: []schema.GroupVersionResource{kube.GVRPods}, namespace: ns, opts: metav1.ListOptions{LabelSelector: sel}},
		{name: "services", gvrs: []schema.GroupVersionResource{kube.GVRServices}, namespace: ns, opts: metav1.ListOptions{LabelSelector: sel}},
		{name: "dynamoworkermetadatas", gvrs: []schema.GroupVersionResource{kube.GVRDynamoWorkerMetadata}, namespace: ns},
		{name: "endpointslices", gvrs: []schema.GroupVersionResource{kube.GVREndpointSlices}, namespace: ns,
			opts: metav1.ListOptions{LabelSelector: kube.SrcLabelDiscoveryEnabled + "=true"}},
		{name: "events", gvrs: []schema.GroupVersionResource{kube.GVREvents}, namespace: ns, opts: metav1.ListOptions{FieldSelector: "type=Warning"},
			filter: func(_ watch.EventType, u watchObject) bool {
				kind := u.InvolvedKind
				return kind == "Pod" || kind == "DynamoGraphDeployment" || kind == "Node"
			}},
		{name: "nodes", gvrs: []schema.GroupVersionResource{kube.GVRNodes}, opts: metav1.ListOptions{LabelSelector: o.NodeSelector}, seed: true,
			// Nodes report status all the time; only what the model reads counts.
			filter: func(t watch.EventType, u watchObject) bool {
				nodesMu.Lock()
				defer nodesMu.Unlock()
				if t == watch.Deleted {
					delete(nodes, u.Name)
					return true
				}
				old, known := nodes[u.Name]
				nodes[u.Name] = u.Fingerprint
				return !known || old != u.Fingerprint
			}},
		{name: "clustertopologybindings", gvrs: []schema.GroupVersionResource{kube.GVRClusterTopologyBinding}},
		{name: "clustertopologies", gvrs: []schema.GroupVersionResource{kube.GVRClusterTopology}},
	}
}

// Next blocks until the watched objects changed or the status changed, and
// returns the notice; ok is false once the watcher stopped (context ended).
func (w *Watcher) Next(ctx context.Context) (n Notice, ok bool) {
	select {
	case <-w.done:
		return Notice{Status: w.Status()}, false
	default:
	}
	select {
	case <-w.notify:
	case <-w.done:
		return Notice{Status: w.Status()}, false
	case <-ctx.Done():
		return Notice{Status: w.Status()}, false
	}
	w.mu.Lock()
	n.Changed, w.changed = w.changed, false
	w.mu.Unlock()
	n.Status = w.Status()
	return n, true
}

// Done is closed once every goroutine of the watcher has ended.
func (w *Watcher) Done() <-chan struct{} { return w.done }

// Status is the current state.
func (w *Watcher) Status() Status {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		return Status{State: Stopped}
	}
	var relisting, bad []string
	var stale []model.StaleSource
	n := 0
	for _, t := range w.targets {
		switch t.state {
		case "watching":
			n++
		case "re-listing":
			relisting = append(relisting, t.name)
		case "forbidden", "failing":
			bad = append(bad, t.name+" "+t.state)
		case "unreachable":
			bad = append(bad, t.name+" unreachable")
			stale = append(stale, t.staleSource())
		}
	}
	switch {
	case len(bad) > 0:
		return Status{State: Degraded, Detail: strings.Join(bad, ", "), Watched: n, Stale: stale}
	case len(relisting) > 0:
		return Status{State: Relisting, Detail: strings.Join(relisting, ", "), Watched: n}
	}
	return Status{State: Watching, Watched: n}
}

// poke wakes Next (non-blocking; one pending wake is enough).
func (w *Watcher) poke() {
	select {
	case w.notify <- struct{}{}:
	default:
	}
}

// change records a change and reports it once the debounce delay has passed
// since the first event of the burst.
func (w *Watcher) change() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped || w.timer != nil {
		return
	}
	w.timer = time.AfterFunc(w.o.Debounce, func() {
		w.mu.Lock()
		w.timer = nil
		w.changed = true
		w.mu.Unlock()
		w.poke()
	})
}

func (w *Watcher) targetState(t *watchTarget) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return t.state
}

// setState records a target's state and wakes Next when the overall status
// changed.
func (w *Watcher) setState(t *watchTarget, state, reason string) {
	w.mu.Lock()
	if t.state == state && t.reason == reason {
		w.mu.Unlock()
		return
	}
	t.state, t.reason = state, reason
	w.mu.Unlock()
	w.poke()
}

// list reads one page of the first served alternative of t (all pages when t
// seeds its filter) and returns it and the list's resourceVersion, "" when the
// resource cannot be read (its state says why).
func (w *Watcher) list(ctx context.Context, api kube.API, t *watchTarget) (schema.GroupVersionResource, string) {
	var last error
	for _, gvr := range t.gvrs {
		opts := t.opts
		opts.Limit = 1
		if t.seed {
			opts.Limit = kube.DefaultPageSize
		}
		for {
			data, err := api.ListJSON(ctx, gvr, t.namespace, opts, kube.MaxListBytes)
			var rv, cont string
			var items []watchObject
			if err == nil {
				rv, cont, items, err = listPage(data)
			}
			if err != nil {
				last = err
				break
			}
			if t.seed && t.filter != nil {
				for _, it := range items {
					t.filter(watch.Added, it)
				}
			}
			if !t.seed || cont == "" {
				// A paginated list's pages share the first page's resourceVersion.
				if rv == "" {
					rv = "0"
				}
				return gvr, rv
			}
			opts.Continue = cont
		}
		if apierrors.IsNotFound(last) || meta.IsNoMatchError(last) {
			continue
		}
		break
	}
	switch {
	case last == nil || apierrors.IsNotFound(last) || meta.IsNoMatchError(last):
		w.setState(t, "not served", "")
	case apierrors.IsForbidden(last):
		w.setState(t, "forbidden", last.Error())
	case ctx.Err() != nil:
	default:
		w.setState(t, "failing", last.Error())
	}
	return schema.GroupVersionResource{}, ""
}

// run watches t from rv until ctx ends, re-watching when the server closes the
// watch and re-listing when the resourceVersion expired.
func (w *Watcher) run(ctx context.Context, api kube.API, wa API, t *watchTarget, gvr schema.GroupVersionResource, rv string) {
	delay := w.o.RetryDelay
	sleep := func() bool {
		tm := time.NewTimer(delay)
		defer tm.Stop()
		delay = min(2*delay, 30*time.Second)
		select {
		case <-ctx.Done():
			return false
		case <-tm.C:
			return true
		}
	}
	for ctx.Err() == nil {
		fresh := rv == ""
		if rv == "" {
			// (Re-)list: changes since the last event may have been missed.
			if gvr, rv = w.list(ctx, api, t); rv == "" {
				if s := w.targetState(t); s == "forbidden" || s == "not served" || !sleep() {
					return
				}
				continue
			}
			w.change()
		}
		opts := t.opts
		opts.ResourceVersion = rv
		opts.AllowWatchBookmarks = true
		wi, err := wa.Watch(ctx, gvr, t.namespace, opts)
		if err != nil {
			switch {
			case ctx.Err() != nil:
				return
			case apierrors.IsResourceExpired(err) || apierrors.IsGone(err):
				w.setState(t, "re-listing", "")
				rv = ""
				if fresh && !sleep() { // expired right after a LIST: do not spin
					return
				}
			case apierrors.IsForbidden(err):
				w.setState(t, "forbidden", err.Error())
				return
			default:
				w.setState(t, "failing", err.Error())
				if !sleep() {
					return
				}
			}
			continue
		}
		w.setState(t, "watching", "")
		delay = w.o.RetryDelay
		rv = w.consume(ctx, wi, t, rv)
		wi.Stop()
		if rv == "" {
			w.setState(t, "re-listing", "")
		}
	}
}

// consume reads events until the watch ends; it returns the resourceVersion to
// resume from, "" to re-list (an error event such as 410 Gone).
func (w *Watcher) consume(ctx context.Context, wi watch.Interface, t *watchTarget, rv string) string {
	for {
		select {
		case <-ctx.Done():
			return rv
		case ev, ok := <-wi.ResultChan():
			if !ok {
				return rv // closed by the server (timeout): resume
			}
			switch ev.Type {
			case watch.Error:
				return ""
			case watch.Bookmark:
				if r, isRaw := ev.Object.(*kube.RawObject); isRaw {
					rv = readRawObject(r.JSON).ResourceVersion
				} else if m, err := meta.Accessor(ev.Object); err == nil {
					rv = m.GetResourceVersion()
				}
			case watch.Added, watch.Modified, watch.Deleted:
				r, isRaw := ev.Object.(*kube.RawObject)
				if !isRaw {
					w.change()
					continue
				}
				o := readRawObject(r.JSON)
				rv = o.ResourceVersion
				if t.filter == nil || t.filter(ev.Type, o) {
					w.change()
				}
			}
		}
	}
}
