package watch

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/fakekube"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/kube"
)

// fakeWatchKube is FakeKube plus WATCH: every Watch call opens a FakeWatcher
// the test drives, or fails with watchErrs[resource].
type fakeWatchKube struct {
	*fakekube.FakeKube
	wmu       sync.Mutex
	watchers  map[string][]*watch.FakeWatcher
	watchErrs map[string]error
	watchRVs  map[string][]string
	opened    chan string
	pending   map[string]int // opened, not yet waited for (test goroutine only)
}

func newFakeWatchKube() *fakeWatchKube {
	return &fakeWatchKube{FakeKube: fakekube.NewFakeKube(), watchers: map[string][]*watch.FakeWatcher{},
		watchErrs: map[string]error{}, watchRVs: map[string][]string{}, opened: make(chan string, 100), pending: map[string]int{}}
}

func (f *fakeWatchKube) open(_ context.Context, gvr schema.GroupVersionResource, _ string, opts metav1.ListOptions) (watch.Interface, error) {
	f.wmu.Lock()
	defer f.wmu.Unlock()
	f.watchRVs[gvr.Resource] = append(f.watchRVs[gvr.Resource], opts.ResourceVersion)
	if err := f.watchErrs[gvr.Resource]; err != nil {
		return nil, err
	}
	fw := watch.NewFakeWithChanSize(10, false)
	f.watchers[gvr.Resource] = append(f.watchers[gvr.Resource], fw)
	f.opened <- gvr.Resource
	return fw, nil
}

// Watch is open as the API server answers: each event's Unstructured object
// as its JSON (kube.RawObject), the FakeWatcher the test drives behind it.
// Like client-go's watch, it stops forwarding when stopped or when ctx ends,
// even with an event in hand (watch.Filter would wait for a reader forever).
func (f *fakeWatchKube) Watch(ctx context.Context, gvr schema.GroupVersionResource, ns string, opts metav1.ListOptions) (watch.Interface, error) {
	fw, err := f.open(ctx, gvr, ns, opts)
	if err != nil {
		return nil, err
	}
	rw := &rawWatch{fw: fw, out: make(chan watch.Event), done: make(chan struct{})}
	go rw.loop(ctx)
	return rw, nil
}

// rawWatch forwards a FakeWatcher's events with their objects as JSON.
type rawWatch struct {
	fw   watch.Interface
	out  chan watch.Event
	done chan struct{}
	once sync.Once
}

// Stop implements watch.Interface.
func (w *rawWatch) Stop() {
	w.once.Do(func() {
		close(w.done)
		w.fw.Stop()
	})
}

// ResultChan implements watch.Interface.
func (w *rawWatch) ResultChan() <-chan watch.Event { return w.out }

func (w *rawWatch) loop(ctx context.Context) {
	defer close(w.out)
	defer w.Stop()
	for {
		var ev watch.Event
		var ok bool
		select {
		case ev, ok = <-w.fw.ResultChan():
			if !ok {
				return
			}
		case <-w.done:
			return
		case <-ctx.Done():
			return
		}
		if u, isU := ev.Object.(*unstructured.Unstructured); isU {
			data, err := json.Marshal(u.Object)
			if err != nil {
				panic(err) // the tests' objects always encode
			}
			ev.Object = &kube.RawObject{JSON: data}
		}
		select {
		case w.out <- ev:
		case <-w.done:
			return
		case <-ctx.Done():
			return
		}
	}
}

// current is the latest watch opened on resource.
func (f *fakeWatchKube) current(resource string) *watch.FakeWatcher {
	f.wmu.Lock()
	defer f.wmu.Unlock()
	ws := f.watchers[resource]
	return ws[len(ws)-1]
}

// waitOpened waits for a watch on resource to be opened.
func (f *fakeWatchKube) waitOpened(t *testing.T, resource string) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for f.pending[resource] == 0 {
		select {
		case r := <-f.opened:
			f.pending[r]++
		case <-deadline:
			t.Fatalf("no watch on %s was opened", resource)
		}
	}
	f.pending[resource]--
}

func startTestWatch(t *testing.T, f *fakeWatchKube, o source.CollectOptions) (*Watcher, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	o.Kube = f
	w, err := Start(ctx, o, Options{Debounce: 20 * time.Millisecond, RetryDelay: 10 * time.Millisecond})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		select {
		case <-w.Done():
		case <-time.After(10 * time.Second):
			t.Error("the watcher did not stop after cancel")
		}
	})
	return w, cancel
}

// next waits for a notice (bounded, for correctness only).
func next(t *testing.T, w *Watcher) Notice {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	n, ok := w.Next(ctx)
	if !ok {
		t.Fatal("no watch notice")
	}
	return n
}

// nextChange skips status-only notices until a change.
func nextChange(t *testing.T, w *Watcher) Notice {
	t.Helper()
	for {
		if n := next(t, w); n.Changed {
			return n
		}
	}
}

// idle asserts that no change is reported for a while.
func idle(t *testing.T, w *Watcher, d time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	for {
		n, ok := w.Next(ctx)
		if !ok {
			return
		}
		if n.Changed {
			t.Fatalf("unexpected change notice: %+v", n)
		}
	}
}

func TestWatchCoalescesBurst(t *testing.T) {
	f := newFakeWatchKube()
	w, _ := startTestWatch(t, f, source.CollectOptions{Namespace: "ns"})
	f.waitOpened(t, "pods")
	if st := w.Status(); st.State != Watching {
		// Other watches may still be opening; wait for them.
		for w.Status().State != Watching {
			next(t, w)
		}
	}
	fw := f.current("pods")
	for i := range 5 {
		p := fakekube.FakePod("ns", fmt.Sprintf("p%d", i), "d", "n1", nil)
		p.SetResourceVersion(fmt.Sprint(10 + i))
		fw.Add(p)
	}
	if n := nextChange(t, w); n.Status.State != Watching {
		t.Errorf("status %+v", n.Status)
	}
	idle(t, w, 150*time.Millisecond)
	// Watched with the pod label selector, from the LIST's resourceVersion.
	f.wmu.Lock()
	rvs := f.watchRVs["pods"]
	f.wmu.Unlock()
	if len(rvs) != 1 || rvs[0] != "0" {
		t.Errorf("pod watch resourceVersions %v", rvs)
	}
	for _, c := range f.Lists() {
		if strings.Contains(c, "/pods ") && !strings.Contains(c, kube.SrcLabelDeploymentName) {
			t.Errorf("pod list without the deployment selector: %s", c)
		}
	}
}

func TestWatchResumesAndRelistsOnGone(t *testing.T) {
	f := newFakeWatchKube()
	w, _ := startTestWatch(t, f, source.CollectOptions{Namespace: "ns"})
	f.waitOpened(t, "services")
	svc := fakekube.Obj("v1", "Service", "ns", "s", map[string]string{kube.SrcLabelDeploymentName: "d"}, nil)
	svc.SetResourceVersion("42")
	f.current("services").Modify(svc)
	nextChange(t, w)

	// The server closes the watch: resume from the last resourceVersion, no re-list.
	f.current("services").Stop()
	f.waitOpened(t, "services")
	f.wmu.Lock()
	if rvs := f.watchRVs["services"]; rvs[len(rvs)-1] != "42" {
		t.Errorf("resumed from %v, want 42", rvs)
	}
	f.wmu.Unlock()

	// 410 Gone as a watch event: re-list, report a change (events may be lost).
	before := len(f.Lists())
	f.current("services").Error(&apierrors.NewResourceExpired("too old resource version").ErrStatus)
	f.waitOpened(t, "services")
	nextChange(t, w)
	if after := f.Lists(); len(after) <= before || !strings.Contains(after[len(after)-1], "/services") {
		t.Errorf("no re-list after 410: %v", after[before:])
	}

	// 410 Gone when opening the watch: same.
	f.wmu.Lock()
	f.watchErrs["services"] = apierrors.NewResourceExpired("too old resource version")
	f.wmu.Unlock()
	f.current("services").Stop()
	for {
		if n := next(t, w); n.Status.State == Relisting {
			break
		}
	}
	f.wmu.Lock()
	delete(f.watchErrs, "services")
	f.wmu.Unlock()
	nextChange(t, w)
	for w.Status().State != Watching {
		next(t, w)
	}
}

func TestWatchDegradesOnForbidden(t *testing.T) {
	f := newFakeWatchKube()
	f.Errs["nodes"] = apierrors.NewForbidden(schema.GroupResource{Resource: "nodes"}, "", fmt.Errorf("no"))
	f.watchErrs["events"] = apierrors.NewForbidden(schema.GroupResource{Resource: "events"}, "", fmt.Errorf("no"))
	w, _ := startTestWatch(t, f, source.CollectOptions{Namespace: "ns"})
	f.waitOpened(t, "pods")
	var st Status
	for st = w.Status(); !strings.Contains(st.Detail, "events"); st = w.Status() {
		next(t, w)
	}
	if st.State != Degraded || st.Detail != "events forbidden, nodes forbidden" {
		t.Errorf("status %+v", st)
	}
	// The other resources are still watched.
	p := fakekube.FakePod("ns", "p", "d", "n1", nil)
	f.current("pods").Delete(p)
	if n := nextChange(t, w); n.Status.State != Degraded {
		t.Errorf("notice %+v", n)
	}
}

func TestWatchFiltersNodeHeartbeatsAndEvents(t *testing.T) {
	f := newFakeWatchKube()
	node := func(zone, hb string) *unstructured.Unstructured {
		return fakekube.Obj("v1", "Node", "", "n1", map[string]string{"topology.kubernetes.io/zone": zone},
			map[string]any{"status": map[string]any{"conditions": []any{
				map[string]any{"type": "Ready", "status": "True", "lastHeartbeatTime": hb}}}})
	}
	f.Add(kube.GVRNodes, node("a", "t0"))
	w, _ := startTestWatch(t, f, source.CollectOptions{Namespace: "ns"})
	f.waitOpened(t, "nodes")
	f.waitOpened(t, "events")
	f.current("nodes").Modify(node("a", "t1")) // heartbeat only
	ev := fakekube.Obj("v1", "Event", "ns", "e", nil, map[string]any{"involvedObject": map[string]any{"kind": "ConfigMap", "name": "x"}})
	f.current("events").Add(ev) // not about a pod, deployment or node
	idle(t, w, 150*time.Millisecond)
	f.current("nodes").Modify(node("b", "t2")) // relabelled
	nextChange(t, w)
}

func TestWatchNamesFilterDeployments(t *testing.T) {
	f := newFakeWatchKube()
	w, _ := startTestWatch(t, f, source.CollectOptions{Namespace: "ns", Names: []string{"mine"}})
	f.waitOpened(t, "dynamographdeployments")
	f.current("dynamographdeployments").Modify(fakekube.Obj("nvidia.com/v1beta1", "DynamoGraphDeployment", "ns", "other", nil, nil))
	idle(t, w, 150*time.Millisecond)
	f.current("dynamographdeployments").Modify(fakekube.Obj("nvidia.com/v1beta1", "DynamoGraphDeployment", "ns", "mine", nil, nil))
	nextChange(t, w)
}

func TestWatchStopsOnCancel(t *testing.T) {
	before := runtime.NumGoroutine()
	f := newFakeWatchKube()
	f.watchErrs["endpointslices"] = fmt.Errorf("connection refused") // a retrying loop too
	ctx, cancel := context.WithCancel(context.Background())
	w, err := Start(ctx, source.CollectOptions{Kube: f, Namespace: "ns"}, Options{Debounce: time.Millisecond, RetryDelay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	f.waitOpened(t, "pods")
	f.current("pods").Add(fakekube.FakePod("ns", "p", "d", "n", nil))
	cancel()
	select {
	case <-w.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the watcher did not stop")
	}
	if _, ok := w.Next(context.Background()); ok {
		t.Error("Next after stop reported ok")
	}
	if st := w.Status(); st.State != Stopped {
		t.Errorf("status %+v", st)
	}
	f.wmu.Lock()
	for r, ws := range f.watchers {
		for _, fw := range ws {
			if !fw.IsStopped() {
				t.Errorf("a %s watch was left open", r)
			}
		}
	}
	f.wmu.Unlock()
	// Every goroutine ended (allow the runtime a moment to reap them).
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines before, %d after the watcher stopped", before, n)
	}
}

func TestStartWatchNeedsAWatchingClient(t *testing.T) {
	if _, err := Start(context.Background(), source.CollectOptions{Kube: fakekube.NewFakeKube()}, Options{}); err == nil {
		t.Error("a KubeAPI without Watch was accepted")
	}
	if _, err := Start(context.Background(), source.CollectOptions{}, Options{}); err == nil {
		t.Error("no configuration was accepted")
	}
}

// BenchmarkWatchEventToNotice is the Watcher's own latency from a watch event
// to the notice Next returns, with the debounce delay made negligible (1 µs):
// the live figure is this plus the debounce (200 ms by default).
func BenchmarkWatchEventToNotice(b *testing.B) {
	f := newFakeWatchKube()
	f.opened = make(chan string, 1000)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w, err := Start(ctx, source.CollectOptions{Kube: f, Namespace: "ns"}, Options{Debounce: time.Microsecond})
	if err != nil {
		b.Fatal(err)
	}
	for w.Status().Watched < 7 {
		w.Next(ctx)
	}
	fw := f.current("pods")
	p := fakekube.FakePod("ns", "p", "d", "n", nil)
	b.ResetTimer()
	for b.Loop() {
		fw.Modify(p)
		for {
			if n, _ := w.Next(ctx); n.Changed {
				break
			}
		}
	}
}
