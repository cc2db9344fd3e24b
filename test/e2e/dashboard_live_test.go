package e2e

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ai-dynamo/kubectl-dynamo/internal/cmd/dashboard"
	"github.com/ai-dynamo/kubectl-dynamo/internal/cmdutil"
	"github.com/ai-dynamo/kubectl-dynamo/internal/iostreams"
	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/kubeenv"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/tui"
)

// TestDashboardLiveRefresh: the dashboard reads a deployment from the real API
// server, and after a pod is deleted the next refresh (the command's live
// loader, inspect.Collect) shows it gone from the workers table and the
// topology tiles.
func TestDashboardLiveRefresh(t *testing.T) {
	e := kubeenv.Require(t, env)
	loadExample(t, e, "prefill-only-zone-required.yaml")
	// Put the deleted pod back for the other live tests on this API server.
	t.Cleanup(func() { loadExample(t, e, "prefill-only-zone-required.yaml") })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rbac, err := os.ReadFile("../../pkg/inspect/testdata/live/rbac.yaml")
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
	if to.Load == nil || to.Refresh != time.Second {
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
