package e2e

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ai-dynamo/kubectl-dynamo/internal/cmd/dashboard"
	"github.com/ai-dynamo/kubectl-dynamo/internal/cmdutil"
	"github.com/ai-dynamo/kubectl-dynamo/internal/iostreams"
	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/fakefrontend"
	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/kubeenv"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/explain"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/tui"
)

// TestDashboardLiveRefresh: the dashboard reads a deployment from the real API
// server, and after a pod is deleted the next reload (the command's live
// loader, source.Collect, which a watch event or ctrl+r runs) shows it gone from the workers table and the
// topology tiles.
func TestDashboardLiveRefresh(t *testing.T) {
	e := kubeenv.Require(t, env)
	loadExample(t, e, "prefill-only-zone-required.yaml")
	// Put the deleted pod back for the other live tests on this API server.
	t.Cleanup(func() { loadExample(t, e, "prefill-only-zone-required.yaml") })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rbac, err := os.ReadFile("../../test/fixtures/live/rbac.yaml")
	if err != nil {
		t.Fatal(err)
	}
	clusterRole := strings.SplitN(string(rbac), "\n---", 3)
	if _, err := e.ApplyYAML(ctx, []byte(clusterRole[0]+"\n---"+clusterRole[1])); err != nil {
		t.Fatal(err)
	}
	kc, err := e.KubeconfigFor("inspector", nil) // the read-only role of docs/rbac.md
	if err != nil {
		t.Fatal(err)
	}
	streams, _, _, _ := iostreams.Test()
	streams.SetStdoutTTY(true)
	f := cmdutil.NewFactory(streams)
	var o *dashboard.Options
	cmd := dashboard.NewCmdDashboard(f, func(got *dashboard.Options) error { o = got; return nil })
	f.ConfigFlags.AddFlags(cmd.PersistentFlags())
	cmd.SetArgs([]string{"qwen3-32b", "--kubeconfig", kc, "-n", "serving", "--no-frontend", "--refresh", "1s"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	to, err := o.TUIOptions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Everything is watched (--no-frontend): no schedule; Load is the reload a
	// watch event (or ctrl+r) runs.
	if to.Load == nil || to.Refresh != 0 {
		t.Fatalf("live options: load %v refresh %v", to.Load != nil, to.Refresh)
	}
	to.Color = false
	m := tui.New(to)
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("2")})
	const victim = "qwen3-32b-0-decode-us-east-1b-2"
	if v := m.View(); !strings.Contains(v, victim) || !strings.Contains(v, "10 of 10 worker(s)") {
		t.Fatalf("before: workers view lacks %s:\n%s", victim, v)
	}

	cs, err := e.Clientset()
	if err != nil {
		t.Fatal(err)
	}
	zero := int64(0)
	if err := cs.CoreV1().Pods("serving").Delete(ctx, victim, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	// The API server has no kubelet: without a finalizer the pod is gone at once.
	d, err := to.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	m.Update(tui.DataMsg{Data: d, At: time.Now()})
	if v := m.View(); strings.Contains(v, victim) || !strings.Contains(v, "9 of 9 worker(s)") {
		t.Errorf("after the delete and a refresh, the workers view still shows %s:\n%s", victim, v)
	}
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("1")})
	if v := m.View(); !strings.Contains(v, "decode  2/2 ready") {
		t.Errorf("the us-east-1b tile does not show 2 decode replicas:\n%s", v)
	}
}

// liveDriver runs a dashboard model's commands concurrently, as the Bubble Tea
// runtime does, and delivers their messages in the test goroutine.
type liveDriver struct {
	m    *tui.Model
	msgs chan tea.Msg
}

func (d *liveDriver) start(cmd tea.Cmd) {
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

// until delivers messages until ok holds for the model, for at most limit (a
// correctness bound, not a speed assertion); it returns when the last message
// delivered arrived.
func (d *liveDriver) until(t *testing.T, limit time.Duration, what string, ok func(*tui.Model) bool) time.Time {
	t.Helper()
	deadline := time.After(limit)
	for {
		select {
		case msg := <-d.msgs:
			_, cmd := d.m.Update(msg)
			d.start(cmd)
			if ok(d.m) {
				return time.Now()
			}
		case <-deadline:
			t.Fatalf("%s: not shown within %s; watch state %+v", what, limit, d.m.WatchState())
		}
	}
}

func workerByPod(m *tui.Model, pod string) *model.Worker {
	if m.Data() == nil || len(m.Data().Snapshot.Deployments) == 0 {
		return nil
	}
	ws := m.Data().Snapshot.Deployments[0].Workers
	for i := range ws {
		if ws[i].Pod == pod {
			return &ws[i]
		}
	}
	return nil
}

// TestDashboardLiveWatch: with --refresh 10m (so only the watch can explain an
// update), the dashboard run as the read-only user shows a pod's relabelled
// topology domain and a deleted pod within a bounded wait, and the user only
// sent get, list and watch requests.
func TestDashboardLiveWatch(t *testing.T) {
	e := kubeenv.Require(t, env)
	loadExample(t, e, "prefill-only-zone-required.yaml")
	// Restore the relabelled and the deleted pod for the other live tests.
	t.Cleanup(func() { loadExample(t, e, "prefill-only-zone-required.yaml") })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rbac, err := os.ReadFile("../../test/fixtures/live/rbac.yaml")
	if err != nil {
		t.Fatal(err)
	}
	clusterRole := strings.SplitN(string(rbac), "\n---", 3)
	if _, err := e.ApplyYAML(ctx, []byte(clusterRole[0]+"\n---"+clusterRole[1])); err != nil {
		t.Fatal(err)
	}
	kc, err := e.KubeconfigFor("inspector", nil)
	if err != nil {
		t.Fatal(err)
	}
	offset, err := e.AuditOffset()
	if err != nil {
		t.Fatal(err)
	}
	streams, _, _, _ := iostreams.Test()
	streams.SetStdoutTTY(true)
	f := cmdutil.NewFactory(streams)
	var o *dashboard.Options
	cmd := dashboard.NewCmdDashboard(f, func(got *dashboard.Options) error { o = got; return nil })
	f.ConfigFlags.AddFlags(cmd.PersistentFlags())
	cmd.SetArgs([]string{"qwen3-32b", "--kubeconfig", kc, "-n", "serving", "--no-frontend", "--refresh", "10m"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	to, err := o.TUIOptions(runCtx)
	if err != nil {
		t.Fatal(err)
	}
	if to.Watch == nil || to.Poll == nil || to.Refresh != 0 {
		t.Fatalf("live options: watch %v poll %v refresh %v (want a watch and no schedule: everything is watched)", to.Watch != nil, to.Poll != nil, to.Refresh)
	}
	to.Color = false
	m := tui.New(to)
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 40})
	d := &liveDriver{m: m, msgs: make(chan tea.Msg, 100)}
	d.start(m.Init())
	d.until(t, 10*time.Second, "the watch state", func(m *tui.Model) bool { return m.WatchState().State == "watching" })
	if v := m.View(); !strings.Contains(v, "⟳ watching") {
		t.Errorf("header lacks the watch state:\n%s", v)
	}

	cs, err := e.Clientset()
	if err != nil {
		t.Fatal(err)
	}
	// 1. Relabel a pod's topology domain.
	const relabelled, victim = "qwen3-32b-0-prefill-us-east-1a-0", "qwen3-32b-0-decode-us-east-1b-2"
	if w := workerByPod(m, relabelled); w == nil || w.Domain.Pod != "us-east-1a" {
		t.Fatalf("before: %s is %+v", relabelled, w)
	}
	patch := []byte(`{"metadata":{"labels":{"topology.kubernetes.io/zone":"us-east-1z"}}}`)
	changed := time.Now()
	if _, err := cs.CoreV1().Pods("serving").Patch(ctx, relabelled, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	shown := d.until(t, 10*time.Second, "the relabelled pod", func(m *tui.Model) bool {
		w := workerByPod(m, relabelled)
		return w != nil && w.Domain.Pod == "us-east-1z"
	})
	t.Logf("label change → model: %s", shown.Sub(changed))

	// 2. Delete a pod (no kubelet: without a finalizer it is gone at once).
	zero := int64(0)
	deleted := time.Now()
	if err := cs.CoreV1().Pods("serving").Delete(ctx, victim, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	shown = d.until(t, 10*time.Second, "the deleted pod", func(m *tui.Model) bool { return m.Data() != nil && workerByPod(m, victim) == nil })
	t.Logf("pod delete → model: %s", shown.Sub(deleted))
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("2")})
	if v := m.View(); strings.Contains(v, victim) || !strings.Contains(v, "9 of 9 worker(s)") {
		t.Errorf("after the delete the workers view still shows %s:\n%s", victim, v)
	}

	// The dashboard stops with its context; the user only read and watched.
	stop()
	events, _, err := e.AuditEventsFrom(offset)
	if err != nil {
		t.Fatal(err)
	}
	verbs := map[string]int{}
	for _, ev := range events {
		if ev.User != "inspector" {
			continue
		}
		verbs[ev.Verb]++
		if ev.IsMutating() || (ev.Verb != "get" && ev.Verb != "list" && ev.Verb != "watch") {
			t.Errorf("the dashboard sent %s %s", ev.Verb, ev.RequestURI)
		}
	}
	if verbs["watch"] == 0 || verbs["list"] == 0 {
		t.Errorf("audited verbs of the dashboard's user: %v (want list and watch)", verbs)
	}
	t.Logf("audited verbs: %v", verbs)
}

// TestDashboardLiveKVCache: in live mode the route explorer's KV cache is the
// frontend's placements snapshot, read with the collection.
func TestDashboardLiveKVCache(t *testing.T) {
	fx := newExplainFixture(t, exampleQwen)
	ids := dwmInstanceIDs(t, fx.bundle)
	cfg := fx.frontendConfig(t, "qwen3-32b", qwenModel)
	cfg.Sources = []fakefrontend.PlacementSource{{
		Model: qwenModel, Namespace: qwenDynNS, Component: "prefill", Endpoint: "generate", BlockSize: 16,
		Events: []routecore.RouterEvent{fx.stored(ids[pod1c0], 1, overlap1c0)},
	}}
	fe := fakefrontend.New(cfg)
	defer fe.Close()

	streams, _, _, _ := iostreams.Test()
	streams.SetStdoutTTY(true)
	f := cmdutil.NewFactory(streams)
	var o *dashboard.Options
	cmd := dashboard.NewCmdDashboard(f, func(got *dashboard.Options) error { o = got; return nil })
	f.ConfigFlags.AddFlags(cmd.PersistentFlags())
	cmd.SetArgs([]string{"qwen3-32b", "--kubeconfig", fx.kc, "-n", "serving", "--frontend-url", fe.URL, "--refresh", "10m"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	to, err := o.TUIOptions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	data, err := to.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	kv := data.KV["serving/qwen3-32b"]
	if kv.Kind != explain.KVIndex || kv.Index == nil || kv.Index.BlockCount() != overlap1c0 || !strings.Contains(kv.Detail, "placements") {
		t.Fatalf("live KV cache %+v, want the placements snapshot with %d blocks", kv, overlap1c0)
	}
	if m := nonGET(fe); len(m) != 0 {
		t.Errorf("non-GET requests to the frontend: %v", m)
	}
}
