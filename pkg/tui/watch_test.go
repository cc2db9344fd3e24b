package tui

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/analysis"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
)

// fakeWatch is an Options.Watch fed by the test.
type fakeWatch struct {
	ch    chan WatchUpdate
	mu    sync.Mutex
	calls int
}

func newFakeWatch() *fakeWatch { return &fakeWatch{ch: make(chan WatchUpdate, 10)} }

func (f *fakeWatch) watch(ctx context.Context) (WatchUpdate, bool) {
	f.mu.Lock()
	f.calls++
	f.mu.Unlock()
	select {
	case u, ok := <-f.ch:
		return u, ok
	case <-ctx.Done():
		return WatchUpdate{}, false
	}
}

// driver runs a model's commands concurrently, as the Bubble Tea runtime
// does, and hands their messages to the test one at a time.
type driver struct {
	t    *testing.T
	m    *Model
	msgs chan tea.Msg
}

func newDriver(t *testing.T, m *Model) *driver {
	return &driver{t: t, m: m, msgs: make(chan tea.Msg, 100)}
}

func (d *driver) start(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	go func() {
		switch msg := cmd().(type) {
		case nil:
		case tea.BatchMsg:
			for _, c := range msg {
				d.start(c)
			}
		default:
			d.msgs <- msg
		}
	}()
}

// next delivers the next message (bounded wait: a correctness bound) and
// returns it.
func (d *driver) next() tea.Msg {
	d.t.Helper()
	select {
	case msg := <-d.msgs:
		_, cmd := d.m.Update(msg)
		d.start(cmd)
		return msg
	case <-time.After(10 * time.Second):
		d.t.Fatal("no message")
		return nil
	}
}

// until delivers messages until one satisfies ok.
func (d *driver) until(ok func(tea.Msg) bool) {
	d.t.Helper()
	for !ok(d.next()) {
	}
}

// quiet delivers what is pending and asserts that nothing more arrives: the
// only command left is the blocked watch.
func (d *driver) quiet() {
	d.t.Helper()
	for {
		select {
		case msg := <-d.msgs:
			if _, tick := msg.(tickMsg); tick {
				d.t.Fatalf("a refresh tick while idle")
			}
			_, cmd := d.m.Update(msg)
			d.start(cmd)
		case <-time.After(200 * time.Millisecond):
			return
		}
	}
}

// TestWatchDrivenReload: with a watch and no refresh schedule, the model loads
// only when the watch reports a change; a status-only update changes the
// header and nothing else; changes during a load coalesce into one reload.
func TestWatchDrivenReload(t *testing.T) {
	data := exampleData(t, prefillOnly)
	var mu sync.Mutex
	loads := 0
	gate := make(chan struct{}, 10)
	fw := newFakeWatch()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m := New(Options{Initial: data, Now: nowAfter(data), Context: ctx, Watch: fw.watch,
		Load: func(contextLike) (*Data, error) {
			<-gate
			mu.Lock()
			loads++
			mu.Unlock()
			return data, nil
		}})
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 40})
	d := newDriver(t, m)
	d.start(m.Init())
	d.quiet()
	if loads != 0 || m.loading {
		t.Fatalf("idle: %d loads, loading %v", loads, m.loading)
	}
	if v := m.View(); !strings.Contains(v, "watch starting") {
		t.Errorf("header before the first update:\n%s", v)
	}

	fw.ch <- WatchUpdate{State: "watching"}
	d.until(func(msg tea.Msg) bool { _, ok := msg.(WatchMsg); return ok })
	d.quiet()
	if loads != 0 || m.loading || !strings.Contains(m.View(), "⟳ watching") {
		t.Fatalf("status-only update: loads %d loading %v\n%s", loads, m.loading, m.View())
	}

	// A change: one load.
	fw.ch <- WatchUpdate{Changed: true, State: "watching"}
	d.until(func(msg tea.Msg) bool { _, ok := msg.(WatchMsg); return ok })
	if !m.loading {
		t.Fatal("a change did not start a load")
	}
	// Two more changes while it runs: one reload after it, not two.
	fw.ch <- WatchUpdate{Changed: true, State: "re-listing", Detail: "pods"}
	d.until(func(msg tea.Msg) bool { _, ok := msg.(WatchMsg); return ok })
	fw.ch <- WatchUpdate{Changed: true, State: "watching"}
	d.until(func(msg tea.Msg) bool { _, ok := msg.(WatchMsg); return ok })
	if !m.reloadPending {
		t.Fatal("changes during a load were not kept")
	}
	gate <- struct{}{}
	d.until(func(msg tea.Msg) bool { _, ok := msg.(DataMsg); return ok })
	gate <- struct{}{}
	d.until(func(msg tea.Msg) bool { _, ok := msg.(DataMsg); return ok })
	d.quiet()
	mu.Lock()
	if loads != 2 || m.loading || m.reloadPending {
		t.Errorf("after a burst during a load: %d loads (want 2), loading %v, pending %v", loads, m.loading, m.reloadPending)
	}
	mu.Unlock()

	// Degraded is loud; the end of the watch is shown and not awaited again.
	fw.ch <- WatchUpdate{State: "degraded", Detail: "events forbidden"}
	d.until(func(msg tea.Msg) bool { _, ok := msg.(WatchMsg); return ok })
	if v := m.View(); !strings.Contains(v, "✗ watch degraded (events forbidden)") || !strings.Contains(v, "!! DEGRADED: watch (events forbidden") {
		t.Errorf("degraded watch:\n%s", v)
	}
	close(fw.ch)
	d.until(func(msg tea.Msg) bool { w, ok := msg.(WatchMsg); return ok && w.Ended })
	d.quiet()
	fw.mu.Lock()
	calls := fw.calls
	fw.mu.Unlock()
	if !strings.Contains(m.View(), "✗ watch stopped") || calls != 6 {
		t.Errorf("after the end: %d watch calls (want 6)\n%s", calls, m.View())
	}
}

// TestWatchPollsMetricsOnSchedule: with a watch, the refresh tick runs Poll,
// not Load, and a tick during a load is dropped (the load reschedules).
func TestWatchPollsMetricsOnSchedule(t *testing.T) {
	data := exampleData(t, prefillOnly)
	loads, polls := 0, 0
	m := New(Options{Initial: data, Now: nowAfter(data), Refresh: time.Nanosecond,
		Watch: func(context.Context) (WatchUpdate, bool) { return WatchUpdate{}, false },
		Load:  func(contextLike) (*Data, error) { loads++; return data, nil },
		Poll:  func(contextLike) (*Data, error) { polls++; return data, nil }})
	send(t, m, tea.WindowSizeMsg{Width: 160, Height: 40})
	run(t, m, m.Init())
	if !strings.Contains(m.View(), "metrics every 1ns") {
		t.Errorf("header:\n%s", m.View())
	}
	send(t, m, tickMsg{gen: m.gen})
	if loads != 0 || polls != 1 {
		t.Errorf("tick: loads %d polls %d", loads, polls)
	}
	m.loading = true
	_, cmd := m.Update(tickMsg{gen: m.gen})
	if cmd != nil || polls != 1 {
		t.Errorf("a tick during a load was not dropped")
	}
}

// TestWatchStaleSource: a watched source that stopped answering (the
// discovery etcd unreachable) is marked STALE in the sources line, and the
// DEGRADED line says which endpoint, since when, why, and when the data shown
// was read; when it answers again the watch reports a change, the data is
// reloaded and the marks go.
func TestWatchStaleSource(t *testing.T) {
	data := exampleData(t, "etcd-discovery-v1alpha1.yaml")
	// As read live: a Kubernetes and an etcd source.
	etcdAt := data.Snapshot.CollectedAt
	data.Snapshot.Sources = []model.SourceStatus{{Kind: model.SourceKubernetes, At: etcdAt}, {Kind: model.SourceEtcd, At: etcdAt}}
	var mu sync.Mutex
	loads := 0
	fw := newFakeWatch()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m := New(Options{Initial: data, Now: nowAfter(data), Context: ctx, Watch: fw.watch,
		Load: func(contextLike) (*Data, error) { mu.Lock(); loads++; mu.Unlock(); return data, nil }})
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 40})
	d := newDriver(t, m)
	d.start(m.Init())
	isWatch := func(msg tea.Msg) bool { _, ok := msg.(WatchMsg); return ok }
	isData := func(msg tea.Msg) bool { _, ok := msg.(DataMsg); return ok }
	since := etcdAt.Add(3 * time.Second)
	const name = "etcd http://10.0.0.5:2379"
	fw.ch <- WatchUpdate{State: "degraded", Detail: name + " unreachable",
		Stale: []model.StaleSource{{Kind: model.SourceEtcd, Name: name, Reason: "connection lost, not back within --etcd-dial-timeout 5s", Since: since}}}
	d.until(isWatch)
	d.quiet()
	v := m.View()
	flat := strings.Join(strings.Fields(v), " ")
	for _, want := range []string{
		"✗ etcd (" + analysis.Stamp(etcdAt, etcdAt.Add(5*time.Second)) + ") STALE",
		"✗ watch degraded (" + name + " unreachable)",
		"!! DEGRADED: " + name + " unreachable since " + since.UTC().Format(time.TimeOnly) +
			" (connection lost, not back within --etcd-dial-timeout 5s): the discovery data (etcd) shown was read at " +
			etcdAt.UTC().Format(time.TimeOnly) + " and may be stale; it is re-read when etcd answers again",
	} {
		if !strings.Contains(flat, want) {
			t.Errorf("view lacks %q:\n%s", want, v)
		}
	}
	if strings.Contains(v, "those changes show only on a refresh") {
		t.Errorf("the stale source is also reported as an unwatched resource:\n%s", v)
	}
	mu.Lock()
	if loads != 0 {
		t.Errorf("%d loads while etcd is unreachable (the data shown is kept)", loads)
	}
	mu.Unlock()

	// Back: a change (the keys are re-read), no stale mark.
	fw.ch <- WatchUpdate{Changed: true, State: "watching"}
	d.until(isData)
	d.quiet()
	mu.Lock()
	defer mu.Unlock()
	if v := m.View(); loads != 1 || strings.Contains(v, "STALE") || strings.Contains(v, "DEGRADED") || !strings.Contains(v, "⟳ watching") {
		t.Errorf("after etcd answered again: %d loads (want 1)\n%s", loads, v)
	}

	// Another unwatched resource next to the stale source is still reported.
	fw.ch <- WatchUpdate{State: "degraded", Detail: "events forbidden, " + name + " unreachable",
		Stale: []model.StaleSource{{Kind: model.SourceEtcd, Name: name, Since: since}}}
	d.until(isWatch)
	if flat := strings.Join(strings.Fields(m.View()), " "); !strings.Contains(flat, "watch (events forbidden; those changes show only on a refresh, r)") ||
		strings.Contains(flat, "watch (events forbidden, "+name) {
		t.Errorf("mixed degradation:\n%s", m.View())
	}
}
