package tui

import (
	"fmt"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/analysis"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/explain"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
)

// scaledData is the prefill-only example grown to n workers over 10 zones:
// the example's workers copied with new pod names, nodes, zones and instance ids.
func scaledData(b *testing.B, n int) *Data {
	b.Helper()
	base := exampleData(b, prefillOnly)
	snap := *base.Snapshot
	dep := snap.Deployments[0]
	tmpl := dep.Workers
	dep.Workers = make([]model.Worker, 0, n)
	for i := range n {
		w := tmpl[i%len(tmpl)]
		zone := fmt.Sprintf("zone-%02d", i%10)
		w.Pod = fmt.Sprintf("%s-%04d", w.Pod, i)
		w.Replica = w.Pod
		w.Node = fmt.Sprintf("gpu-node-%04d", i)
		w.Domain = model.DomainValues{Published: zone, Pod: zone, Node: zone}
		w.Instances = append([]model.Instance(nil), w.Instances...)
		for j := range w.Instances {
			in := &w.Instances[j]
			in.ID = routecore.WorkerID(1_000_000 + i)
			rc := in.Runtime
			rc.TopologyDomains = map[string]string{"zone": zone}
			in.Runtime = rc
		}
		dep.Workers = append(dep.Workers, w)
	}
	snap.Deployments = []model.Deployment{dep}
	return &Data{
		Snapshot: &snap,
		Report:   analysis.AnalyzeTopology(&snap, analysis.AnalyzeOptions{}),
		KV:       map[string]explain.KVCache{dep.Key(): {Kind: explain.KVCold, Detail: "cold"}},
	}
}

// BenchmarkView is the render time of one frame per tab for a deployment of
// 1,000 workers at 200×60 (goal: well under 16 ms).
func BenchmarkView(b *testing.B) {
	d := scaledData(b, 1000)
	for _, tab := range []struct{ name, key string }{{"topology", "1"}, {"workers", "2"}, {"findings", "3"}, {"route", "4"}} {
		b.Run(tab.name, func(b *testing.B) {
			m := New(Options{Initial: d, Now: nowAfter(d), Tokens: "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33"})
			send(b, m, tea.WindowSizeMsg{Width: 200, Height: 60})
			run(b, m, m.Init())
			send(b, m, keys(tab.key))
			if m.Route().Explanation() == nil {
				b.Fatal("no explanation")
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				_ = m.View()
			}
		})
	}
}

// BenchmarkDataToFrame is the time from new data arriving (a DataMsg after a
// refresh) to the next frame on the workers tab: re-deriving, filtering and
// sorting 1,000 rows, then rendering. The route explorer's dry run runs
// asynchronously and is not included (see BenchmarkExplainScale in pkg/explain).
func BenchmarkDataToFrame(b *testing.B) {
	d := scaledData(b, 1000)
	m := New(Options{Initial: d, Now: nowAfter(d)})
	send(b, m, tea.WindowSizeMsg{Width: 200, Height: 60})
	send(b, m, keys("2"))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		m.Update(DataMsg{Data: d})
		_ = m.View()
	}
}

// BenchmarkWatchToRedraw is the dashboard's share of the latency from a watch
// event to a redraw, for a deployment of 1,000 workers on the workers tab: the
// WatchMsg, the reload command (its Load returns prebuilt data here; the live
// Collect is measured by TestDashboardLiveWatch and the watcher by
// BenchmarkWatchEventToNotice in pkg/source/watch), the DataMsg and the frame.
func BenchmarkWatchToRedraw(b *testing.B) {
	d := scaledData(b, 1000)
	m := New(Options{Initial: d, Now: nowAfter(d),
		Load:  func(contextLike) (*Data, error) { return d, nil },
		Watch: func(contextLike) (WatchUpdate, bool) { return WatchUpdate{}, false }})
	send(b, m, tea.WindowSizeMsg{Width: 200, Height: 60})
	send(b, m, keys("2"))
	var exec func(cmd tea.Cmd)
	exec = func(cmd tea.Cmd) {
		if cmd == nil {
			return
		}
		switch msg := cmd().(type) {
		case tea.BatchMsg:
			for _, c := range msg {
				exec(c)
			}
		case DataMsg:
			_, next := m.Update(msg)
			_ = next // the pages' follow-ups (the route explorer's dry run) run asynchronously
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		_, cmd := m.Update(WatchMsg{Update: WatchUpdate{Changed: true, State: "watching"}})
		exec(cmd)
		_ = m.View()
	}
}
