package inspect

import (
	"strings"
	"testing"
	"time"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/kubeenv"
)

// TestWatchEtcdRealServer: with --etcd-endpoints the watcher follows the
// Dynamo discovery prefixes of a real etcd with Watch requests only, reports a
// change under them (debounced) and ignores keys outside them.
func TestWatchEtcdRealServer(t *testing.T) {
	e := kubeenv.StartEtcd(t)
	before := grpcCalls(t, e.Endpoint)
	f := newFakeWatchKube()
	w, _ := startTestWatch(t, f, CollectOptions{Namespace: "ns", Etcd: EtcdOptions{Endpoints: []string{e.Endpoint}, DialTimeout: 5 * time.Second}})
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(etcdWatchState(w), "watching") {
		if time.Now().After(deadline) {
			t.Fatalf("the etcd watch never started: %+v", w.Status())
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The watch requests are open once etcd counts them.
	for grpcCalls(t, e.Endpoint)["etcdserverpb.Watch/Watch"] == before["etcdserverpb.Watch/Watch"] {
		if time.Now().After(deadline) {
			t.Fatal("etcd saw no Watch request")
		}
		time.Sleep(20 * time.Millisecond)
	}

	putAll(t, e.Endpoint, map[string]string{"unrelated/key": "x"})
	idle(t, w, 300*time.Millisecond)
	putAll(t, e.Endpoint, map[string]string{"v1/mdc/dynamo/backend/generate/1f": `{"x":1}`})
	if n := nextChange(t, w); n.Status.State == WatchStopped {
		t.Fatalf("notice %+v", n)
	}

	after := grpcCalls(t, e.Endpoint)
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
	w, _ := startTestWatch(t, f, CollectOptions{Namespace: "ns", Etcd: EtcdOptions{Endpoints: []string{"http://127.0.0.1:1"}, DialTimeout: 50 * time.Millisecond}})
	deadline := time.Now().Add(10 * time.Second)
	for w.Status().State != WatchDegraded {
		if time.Now().After(deadline) {
			t.Fatalf("status %+v, want degraded", w.Status())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if s := w.Status(); !strings.Contains(s.Detail, "etcd http://127.0.0.1:1 failing") {
		t.Errorf("detail %q", s.Detail)
	}
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
