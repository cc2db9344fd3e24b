package watch

import (
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/etcdfixture"
	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/kubeenv"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/etcd"
)

// TestWatchEtcdRealServer: with --etcd-endpoints the watcher follows the
// Dynamo discovery prefixes of a real etcd with Watch requests only, reports a
// change under them (debounced) and ignores keys outside them.
func TestWatchEtcdRealServer(t *testing.T) {
	e := kubeenv.StartEtcd(t)
	before := etcdfixture.GrpcCalls(t, e.Endpoint)
	f := newFakeWatchKube()
	w, _ := startTestWatch(t, f, source.CollectOptions{Namespace: "ns", Etcd: etcd.Options{Endpoints: []string{e.Endpoint}, DialTimeout: 5 * time.Second}})
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(etcdWatchState(w), "watching") {
		if time.Now().After(deadline) {
			t.Fatalf("the etcd watch never started: %+v", w.Status())
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The watch requests are open once etcd counts them.
	for etcdfixture.GrpcCalls(t, e.Endpoint)["etcdserverpb.Watch/Watch"] == before["etcdserverpb.Watch/Watch"] {
		if time.Now().After(deadline) {
			t.Fatal("etcd saw no Watch request")
		}
		time.Sleep(20 * time.Millisecond)
	}

	etcdfixture.PutAll(t, e.Endpoint, map[string]string{"unrelated/key": "x"})
	idle(t, w, 300*time.Millisecond)
	etcdfixture.PutAll(t, e.Endpoint, map[string]string{"v1/mdc/dynamo/backend/generate/1f": `{"x":1}`})
	if n := nextChange(t, w); n.Status.State == Stopped {
		t.Fatalf("notice %+v", n)
	}

	after := etcdfixture.GrpcCalls(t, e.Endpoint)
	for m, n := range after {
		d := n - before[m]
		switch m {
		case "etcdserverpb.KV/Put":
			if d != 2 { // the test's own two puts
				t.Errorf("%d Put calls, want the test's 2", d)
			}
		case "etcdserverpb.Watch/Watch", "etcdserverpb.KV/Range":
		default:
			if d > 0 && !strings.HasPrefix(m, "grpc.health") {
				t.Errorf("the watcher sent %d %s", d, m)
			}
		}
	}
}

// TestWatchEtcdUnreachableDegrades: an etcd that does not answer degrades the
// watcher (named in the status) instead of failing it.
func TestWatchEtcdUnreachableDegrades(t *testing.T) {
	f := newFakeWatchKube()
	w, _ := startTestWatch(t, f, source.CollectOptions{Namespace: "ns", Etcd: etcd.Options{Endpoints: []string{"http://127.0.0.1:1"}, DialTimeout: 50 * time.Millisecond}})
	deadline := time.Now().Add(10 * time.Second)
	for w.Status().State != Degraded {
		if time.Now().After(deadline) {
			t.Fatalf("status %+v, want degraded", w.Status())
		}
		time.Sleep(20 * time.Millisecond)
	}
	s := w.Status()
	if !strings.Contains(s.Detail, "etcd http://127.0.0.1:1 unreachable") {
		t.Errorf("detail %q", s.Detail)
	}
	if len(s.Stale) != 1 || s.Stale[0].Kind != model.SourceEtcd || s.Stale[0].Name != "etcd http://127.0.0.1:1" ||
		s.Stale[0].Reason != "no connection within --etcd-dial-timeout 50ms" || s.Stale[0].Since.IsZero() {
		t.Errorf("stale %+v", s.Stale)
	}
}

// TestWatchEtcdStaleWhileUnreachableThenRecovers: the connection to a real
// etcd is cut mid-watch (through a proxy, so that it can come back on the same
// address): the watcher reports etcd unreachable and stale, with the reason and
// the time; a key changed meanwhile is not seen by the watch, but when etcd
// answers again the watch restarts and reports one change (the collection
// re-reads the keys), and later changes are watched again.
func TestWatchEtcdStaleWhileUnreachableThenRecovers(t *testing.T) {
	e := kubeenv.StartEtcd(t)
	p := newFlakyProxy(t, strings.TrimPrefix(e.Endpoint, "http://"))
	f := newFakeWatchKube()
	w, _ := startTestWatch(t, f, source.CollectOptions{Namespace: "ns", Etcd: etcd.Options{Endpoints: []string{"http://" + p.addr}, DialTimeout: 300 * time.Millisecond}})
	waitStatus(t, w, "the etcd watch", func(s Status) bool { return s.State == Watching && etcdWatchState(w) == "watching" })

	p.down()
	cut := time.Now()
	s := waitStatus(t, w, "etcd unreachable", func(s Status) bool { return len(s.Stale) > 0 })
	name := "etcd http://" + p.addr
	if s.State != Degraded || !strings.Contains(s.Detail, name+" unreachable") {
		t.Errorf("status %+v, want degraded naming %s unreachable", s, name)
	}
	st := s.Stale[0]
	if st.Kind != model.SourceEtcd || st.Name != name || st.Reason != "connection lost, not back within --etcd-dial-timeout 300ms" ||
		st.Since.Before(cut) {
		t.Errorf("stale %+v (cut at %s)", st, cut)
	}
	// Changed while unreachable: nothing can report it yet.
	etcdfixture.PutAll(t, e.Endpoint, map[string]string{"v1/mdc/dynamo/backend/generate/2a": `{"changed":"while down"}`})
	idle(t, w, 500*time.Millisecond)

	p.up(t)
	n := nextChange(t, w) // the re-read after the return
	s = waitStatus(t, w, "the watch back", func(s Status) bool { return s.State == Watching })
	if len(s.Stale) != 0 || s.Detail != "" {
		t.Errorf("after the return: %+v (notice %+v)", s, n)
	}
	etcdfixture.PutAll(t, e.Endpoint, map[string]string{"v1/instances/dynamo/backend/generate/2a": `{"after":"return"}`})
	nextChange(t, w)
}

// waitStatus polls the watcher's status until ok (bounded, for correctness only).
func waitStatus(t *testing.T, w *Watcher, what string, ok func(Status) bool) Status {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if s := w.Status(); ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: status %+v", what, w.Status())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// flakyProxy forwards TCP connections to target; down closes its listener and
// every connection (the endpoint is unreachable), up listens again on the same
// address.
type flakyProxy struct {
	addr, target string
	mu           sync.Mutex
	ln           net.Listener
	conns        []net.Conn
	wg           sync.WaitGroup
}

func newFlakyProxy(t *testing.T, target string) *flakyProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &flakyProxy{addr: ln.Addr().String(), target: target}
	p.serve(ln)
	t.Cleanup(func() { p.down(); p.wg.Wait() })
	return p
}

func (p *flakyProxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	p.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", p.target)
			if err != nil {
				_ = c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, up)
			p.mu.Unlock()
			p.wg.Go(func() { _, _ = io.Copy(up, c); _ = up.Close() })
			p.wg.Go(func() { _, _ = io.Copy(c, up); _ = c.Close() })
		}
	})
}

func (p *flakyProxy) down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		_ = p.ln.Close()
		p.ln = nil
	}
	for _, c := range p.conns {
		_ = c.Close()
	}
	p.conns = nil
}

func (p *flakyProxy) up(t *testing.T) {
	t.Helper()
	var ln net.Listener
	var err error
	for range 50 { // the closed port may linger a moment
		if ln, err = net.Listen("tcp", p.addr); err == nil {
			p.serve(ln)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("listen again on %s: %v", p.addr, err)
}

func etcdWatchState(w *Watcher) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, t := range w.targets {
		if strings.HasPrefix(t.name, "etcd ") {
			return t.state
		}
	}
	return ""
}
