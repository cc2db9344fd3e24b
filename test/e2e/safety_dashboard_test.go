//go:build linux

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	clientv3 "go.etcd.io/etcd/client/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ai-dynamo/kubectl-dynamo/internal/cmd/dashboard"
	"github.com/ai-dynamo/kubectl-dynamo/internal/cmdutil"
	"github.com/ai-dynamo/kubectl-dynamo/internal/iostreams"
	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/fakefrontend"
	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/kubeenv"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/tui"
)

// The dashboard under the safety suite (issue 8): a read-only run under the
// audit log with the frontend, the etcd watch and the route explorer, and the
// discovery etcd stopped mid-watch and started again. The dashboard runs in
// this process as the command builds it (dashboard.NewCmdDashboard →
// Options.TUIOptions → tui.New), driven by a liveDriver instead of a terminal.

// etcdDiscoveryExample is the example whose workers publish through etcd.
const etcdDiscoveryExample = "etcd-discovery-v1alpha1.yaml"

// The prefill worker of instance 694d98147d54be25 publishes this rack.
const (
	etcdPrefillID   = 7587888160958627365
	etcdPrefillKey  = "v1/mdc/dynamo/prefill/generate/694d98147d54be25"
	etcdPrefillRack = "6f3c2a1e-9b7d-4c55-a1e2-0d9f8b7c6a51.1"
)

// startLiveDashboard builds the dashboard from its command line, as the command
// does, and returns the model with a driver that has run its Init. It stops
// with ctx.
func startLiveDashboard(ctx context.Context, t *testing.T, args ...string) (*tui.Model, *liveDriver) {
	t.Helper()
	streams, _, _, _ := iostreams.Test()
	streams.SetStdoutTTY(true)
	f := cmdutil.NewFactory(streams)
	var o *dashboard.Options
	cmd := dashboard.NewCmdDashboard(f, func(got *dashboard.Options) error { o = got; return nil })
	f.ConfigFlags.AddFlags(cmd.PersistentFlags())
	cmd.SetArgs(args)
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	to, err := o.TUIOptions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if to.Watch == nil {
		t.Fatal("the live dashboard has no watch")
	}
	to.Color = false
	m := tui.New(to)
	m.Update(tea.WindowSizeMsg{Width: 200, Height: 50})
	d := &liveDriver{m: m, msgs: make(chan tea.Msg, 1000)}
	d.start(m.Init())
	return m, d
}

// workerByInstance returns the worker that published instance id.
func workerByInstance(m *tui.Model, id uint64) *model.Worker {
	if m.Data() == nil {
		return nil
	}
	for i := range m.Data().Snapshot.Deployments {
		ws := m.Data().Snapshot.Deployments[i].Workers
		for j := range ws {
			for _, in := range ws[j].Instances {
				if uint64(in.ID) == id {
					return &ws[j]
				}
			}
		}
	}
	return nil
}

// flat is a view with its whitespace runs (wrapping, padding) as one space.
func flat(v string) string { return strings.Join(strings.Fields(v), " ") }

// putEtcd writes keys to an etcd (the test's own writes, never the plugin's).
func putEtcd(t *testing.T, endpoint string, kvs map[string]string) {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, DialTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for k, v := range kvs {
		if _, err := cli.Put(ctx, k, v); err != nil {
			t.Fatal(err)
		}
	}
}

func bundleEtcd(b *raw.Bundle) map[string]string {
	kvs := map[string]string{}
	for _, kv := range b.Etcd {
		kvs[kv.Key] = kv.Value
	}
	return kvs
}

// TestSafetyDashboardEtcdStopped: the dashboard watches the discovery etcd
// (--etcd-endpoints); the etcd process is stopped mid-watch. Within the dial
// timeout the header marks the etcd source STALE and says which endpoint, since
// when, why and when the data shown was read; the data shown is kept. A key
// is changed while the dashboard cannot see etcd (etcd started on another port
// on the same data, then stopped); etcd is started again on its own port and
// data: the watch resumes, the dashboard re-reads the keys and shows the
// change, and the marks go. After the dashboard's context is cancelled, no
// goroutine is left.
func TestSafetyDashboardEtcdStopped(t *testing.T) {
	f := newExplainFixture(t, etcdDiscoveryExample)
	e := f.e
	const user = "safety-dashboard-etcd"
	kc := docsReaderKubeconfig(t, e, user)
	upstream, err := e.RESTConfigFor(user, []string{docsReaderGroup})
	if err != nil {
		t.Fatal(err)
	}
	warmUpInProcess(t, kc)
	etcd := startRestartableEtcd(t)
	putEtcd(t, etcd.Endpoint, bundleEtcd(f.bundle))
	api := newAPIProxy(t, e, upstream)

	before := settledGoroutines()
	ids := goroutineStacks()
	ctx, stop := context.WithTimeout(context.Background(), 3*time.Minute)
	defer stop()
	m, d := startLiveDashboard(ctx, t, "deepseek-r1", "--kubeconfig", proxyKubeconfig(t, api), "-n", "research", "--no-frontend",
		"--etcd-endpoints", etcd.Endpoint, "--etcd-dial-timeout", "1s", "--refresh", "10m")
	d.until(t, 20*time.Second, "the watch", func(m *tui.Model) bool { return m.WatchState().State == "watching" })
	if w := workerByInstance(m, etcdPrefillID); w == nil || w.Domain.Published != etcdPrefillRack {
		t.Fatalf("before: the worker of instance %d is %+v", uint64(etcdPrefillID), w)
	}

	// 1. etcd stops.
	stopped := time.Now()
	etcd.Stop(t)
	shown := d.until(t, 30*time.Second, "etcd stale", func(m *tui.Model) bool { return len(m.WatchState().Stale) > 0 })
	t.Logf("etcd stopped → shown stale after %s", shown.Sub(stopped).Round(time.Millisecond))
	v := flat(m.View())
	for _, want := range []string{
		"etcd ", " STALE", "✗ watch degraded (etcd " + etcd.Endpoint + " unreachable)",
		"!! DEGRADED: etcd " + etcd.Endpoint + " unreachable since ",
		"(connection lost, not back within --etcd-dial-timeout 1s): the discovery data (etcd) shown was read at ",
		"may be stale; it is re-read when etcd answers again",
	} {
		if !strings.Contains(v, want) {
			t.Errorf("stale view lacks %q:\n%s", want, m.View())
		}
	}
	if w := workerByInstance(m, etcdPrefillID); w == nil || w.Domain.Published != etcdPrefillRack {
		t.Errorf("while etcd is down, the data shown changed: %+v", w)
	}
	header := strings.SplitN(m.View(), "\n", 6)
	t.Logf("header while etcd is down:\n%s", strings.Join(header[:5], "\n"))

	// 2. A key changes while the dashboard cannot see etcd.
	const moved = "6f3c2a1e-9b7d-4c55-a1e2-0d9f8b7c6a51.9"
	changed := strings.ReplaceAll(bundleEtcd(f.bundle)[etcdPrefillKey], etcdPrefillRack, moved)
	side := etcd.StartOnOtherPort(t)
	putEtcd(t, side, map[string]string{etcdPrefillKey: changed})
	etcd.Stop(t)

	// 3. etcd is back on its address and data.
	etcd.Start(t)
	back := time.Now()
	shown = d.until(t, 90*time.Second, "the recovery", func(m *tui.Model) bool {
		w := workerByInstance(m, etcdPrefillID)
		s := m.WatchState()
		return s.State == "watching" && len(s.Stale) == 0 && w != nil && w.Domain.Published == moved
	})
	t.Logf("etcd back → watching and the changed key shown after %s", shown.Sub(back).Round(time.Millisecond))
	if v := m.View(); strings.Contains(v, "STALE") || strings.Contains(v, "DEGRADED") || !strings.Contains(v, "⟳ watching") {
		t.Errorf("after the recovery:\n%s", v)
	}
	for _, src := range m.Data().Snapshot.Sources {
		if src.Kind == model.SourceEtcd && src.Degraded {
			t.Errorf("etcd source still degraded: %+v", src)
		}
	}

	// 4. The dashboard ends with its context; nothing is left running.
	stop()
	d.until(t, 20*time.Second, "the end of the watch", func(m *tui.Model) bool { return m.WatchState().State == "stopped" })
	api.Close()
	etcd.Stop(t)
	checkGoroutines(t, before, ids)
}

// TestSafetyReadOnlyDashboard runs the dashboard live — the frontend's metrics
// polled every second and its KV placements read with each collection, the
// Kubernetes objects and the discovery etcd watched, reloads after a pod
// change, an etcd change and ctrl+r, the route explorer explaining the
// request with what-ifs and a typed prompt (tokenized locally) — as a user bound only to docs/rbac/clusterrole.yaml,
// and proves from the outside that nothing was changed: the audit log shows
// only get/list/watch from that user and no Secret or ConfigMap; the frontend
// saw only GETs on known paths (never POST /busy_threshold); etcd's own
// counters show only Range and Watch calls from the dashboard.
func TestSafetyReadOnlyDashboard(t *testing.T) {
	f := newExplainFixture(t, etcdDiscoveryExample)
	e := f.e
	const user = "safety-dashboard"
	kc := docsReaderKubeconfig(t, e, user)
	upstream, err := e.RESTConfigFor(user, []string{docsReaderGroup})
	if err != nil {
		t.Fatal(err)
	}
	warmUpInProcess(t, kc)

	discovery := kubeenv.StartEtcd(t)
	kvs := bundleEtcd(f.bundle)
	putEtcd(t, discovery.Endpoint, kvs)
	// The placements say the prefill worker of etcdPrefillID holds the prompt.
	const model = "deepseek-ai/DeepSeek-R1"
	cfg := f.frontendConfig(t, "deepseek-r1", model)
	cfg.Sources = []fakefrontend.PlacementSource{{Model: model, Namespace: "dynamo", Component: "prefill", Endpoint: "generate", BlockSize: 16,
		Events: []routecore.RouterEvent{f.stored(routecore.WorkerID(etcdPrefillID), 1, len(f.blocks))}}}
	fe := fakefrontend.New(cfg)
	api := newAPIProxy(t, e, upstream)
	tokens := make([]string, len(f.tokens))
	for i, id := range f.tokens {
		tokens[i] = strconv.FormatUint(uint64(id), 10)
	}

	etcdBefore := etcdCounters(t, discovery.Endpoint)
	offset, err := e.AuditOffset()
	if err != nil {
		t.Fatal(err)
	}
	before := settledGoroutines()
	ids := goroutineStacks()
	ctx, stop := context.WithTimeout(context.Background(), 3*time.Minute)
	defer stop()
	m, d := startLiveDashboard(ctx, t, "deepseek-r1", "--kubeconfig", proxyKubeconfig(t, api), "-n", "research",
		"--frontend-url", fe.URL, "--etcd-endpoints", discovery.Endpoint, "--refresh", "1s", "--tokens", strings.Join(tokens, ","),
		"--tokenizer", explainTokenizer)
	d.until(t, 20*time.Second, "the watch", func(m *tui.Model) bool { return m.WatchState().State == "watching" })

	// The route explorer: the request explained on the live data, the KV cache
	// from the placements; then two what-ifs.
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("4")})
	explained := func(m *tui.Model) bool {
		x := m.Route().Explanation()
		return x != nil && x.Prefill != nil && len(x.Prefill.Candidates) > 0
	}
	d.until(t, 20*time.Second, "the route explanation", explained)
	x := m.Route().Explanation()
	hot := ""
	for _, c := range x.Prefill.Candidates {
		if uint64(c.InstanceID) == etcdPrefillID && c.OverlapBlocks == float64(len(f.blocks)) {
			hot = c.Worker
		}
	}
	if hot == "" || x.Prefill.Pick != hot {
		t.Errorf("prefill pick %q; want the worker of instance %d with the whole prompt cached (placements)", x.Prefill.Pick, uint64(etcdPrefillID))
	}
	for _, k := range []string{"e", "w"} {
		_, cmd := m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)})
		d.start(cmd)
		d.until(t, 20*time.Second, "the what-if "+k, explained)
	}
	// A prompt typed in the explorer is tokenized locally (--tokenizer): no
	// request leaves the process for it.
	const prompt = "hello from the safety suite"
	want, err := f.tok.Encode(prompt, true)
	if err != nil {
		t.Fatal(err)
	}
	keys := []tea.KeyMsg{{Type: tea.KeyRunes, Runes: []rune("i")}, {Type: tea.KeyCtrlU}}
	for _, r := range prompt {
		keys = append(keys, tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
	}
	keys = append(keys, tea.KeyMsg{Type: tea.KeyEnter})
	for _, k := range keys {
		_, cmd := m.Update(k)
		d.start(cmd)
	}
	d.until(t, 20*time.Second, "the typed prompt explained", func(m *tui.Model) bool {
		return slices.Equal(m.Route().Tokens(), want) && explained(m)
	})

	// Reloads: a pod change (by the admin), an etcd change (the test's own
	// Put, measured apart), ctrl+r; and metric polls.
	cs, err := e.Clientset()
	if err != nil {
		t.Fatal(err)
	}
	// The policy's label key: the pod's domain label (Domain.Pod) changes.
	patch := []byte(`{"metadata":{"labels":{"nvidia.com/gpu.clique":"safety-touched"}}}`)
	hw := workerByInstance(m, etcdPrefillID)
	if hw == nil {
		t.Fatalf("no worker published instance %d", uint64(etcdPrefillID))
	}
	victim := hw.Pod
	if _, err := cs.CoreV1().Pods("research").Patch(ctx, victim, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		unpatch := []byte(`{"metadata":{"labels":{"nvidia.com/gpu.clique":null}}}`)
		_, _ = cs.CoreV1().Pods("research").Patch(context.Background(), victim, types.MergePatchType, unpatch, metav1.PatchOptions{})
		loadExample(t, e, etcdDiscoveryExample)
	})
	d.until(t, 20*time.Second, "the relabelled pod", func(m *tui.Model) bool {
		for _, dep := range m.Data().Snapshot.Deployments {
			for _, w := range dep.Workers {
				if w.Pod == victim && w.Domain.Pod == "safety-touched" {
					return true
				}
			}
		}
		return false
	})
	putBefore := etcdCounters(t, discovery.Endpoint)
	const moved = "6f3c2a1e-9b7d-4c55-a1e2-0d9f8b7c6a51.9"
	putEtcd(t, discovery.Endpoint, map[string]string{etcdPrefillKey: strings.ReplaceAll(kvs[etcdPrefillKey], etcdPrefillRack, moved)})
	putAfter := etcdCounters(t, discovery.Endpoint)
	d.until(t, 20*time.Second, "the etcd change", func(m *tui.Model) bool {
		w := workerByInstance(m, etcdPrefillID)
		return w != nil && w.Domain.Published == moved
	})
	shown := m.Data()
	_, cmd := m.Update(tea.KeyMsg{Type: tea.KeyCtrlR})
	d.start(cmd)
	d.until(t, 20*time.Second, "the ctrl+r reload", func(m *tui.Model) bool { return m.Data() != shown })
	polls := countRequests(fe, http.MethodGet, fakefrontend.PathMetrics)
	d.until(t, 30*time.Second, "three metric polls", func(*tui.Model) bool {
		return countRequests(fe, http.MethodGet, fakefrontend.PathMetrics) >= polls+3
	})

	stop()
	d.until(t, 20*time.Second, "the end of the watch", func(m *tui.Model) bool { return m.WatchState().State == "stopped" })
	api.Close()
	fe.Close()
	checkGoroutines(t, before, ids)

	// API server: get/list/watch only, no Secret or ConfigMap.
	waitAudit()
	events, _, err := e.AuditEventsFrom(offset)
	if err != nil {
		t.Fatal(err)
	}
	verbs, resources := map[string]int{}, map[string]int{}
	watches := 0 // a WATCH is audited when it starts and when it ends
	for _, ev := range events {
		if ev.User != user {
			continue
		}
		verbs[ev.Verb]++
		if ev.Verb == "watch" && ev.Stage == "ResponseStarted" {
			watches++
		}
		if ev.IsMutating() || (ev.Verb != "get" && ev.Verb != "list" && ev.Verb != "watch") {
			t.Errorf("the dashboard sent %s %s", ev.Verb, ev.RequestURI)
		}
		res := auditResource(t, ev, "the dashboard")
		resources[ev.Verb+" "+res]++
	}
	if verbs["watch"] == 0 || verbs["list"] == 0 {
		t.Errorf("audited verbs of the dashboard's user: %v (want list and watch)", verbs)
	}
	total := verbs["get"] + verbs["list"] + verbs["watch"]
	t.Logf("SAFETY-FIGURE dashboard-audited-requests=%d verbs=%v watches-opened=%d by verb+resource: %s", total, verbs, watches, sortedCounts(resources))

	// Frontend: GETs on known paths only.
	known := []string{fakefrontend.PathMetrics, fakefrontend.PathBusyThreshold, fakefrontend.PathTokenize, fakefrontend.PathPlacements, fakefrontend.PathQuery}
	byReq := map[string]int{}
	for _, r := range fe.Requests() {
		byReq[r.String()]++
		if !slices.Contains(known, r.Path) {
			t.Errorf("request to an unknown frontend path: %s", r)
		}
		pureCompute := r.Method == http.MethodPost && (r.Path == fakefrontend.PathTokenize || r.Path == fakefrontend.PathQuery)
		if r.Method != http.MethodGet && !pureCompute {
			t.Errorf("frontend request %s is neither a GET nor POST /tokenize or /query", r)
		}
	}
	if m := fe.Mutating(); len(m) > 0 || countRequests(fe, http.MethodPost, fakefrontend.PathBusyThreshold) > 0 {
		t.Errorf("mutating frontend requests: %v", m)
	}
	if byReq["GET "+fakefrontend.PathPlacements] == 0 || byReq["GET "+fakefrontend.PathBusyThreshold] == 0 {
		t.Errorf("the dashboard did not read the placements and busy_threshold: %v", byReq)
	}
	feKeys := make(map[string]int, len(byReq))
	for k, n := range byReq {
		feKeys[k] = n
	}
	t.Logf("SAFETY-FIGURE dashboard-frontend-requests=%d (%s)", len(fe.Requests()), sortedCounts(feKeys))

	// etcd: Range and Watch only, apart from the test's own Put.
	etcdAfter := etcdCounters(t, discovery.Endpoint)
	diff := map[string]float64{}
	for k, v := range etcdAfter {
		d := v - etcdBefore[k]
		if k != "grpc Range" && k != "grpc Watch" && k != "mvcc range" {
			d -= putAfter[k] - putBefore[k] // the test's Put
		}
		if d != 0 {
			diff[k] = d
		}
	}
	for k, n := range diff {
		switch k {
		case "grpc Range", "grpc Watch", "mvcc range":
		default:
			t.Errorf("etcd counter %s moved by %v during the dashboard's run: only Range and Watch are allowed", k, n)
		}
	}
	if diff["grpc Range"] == 0 || diff["grpc Watch"] == 0 {
		t.Errorf("etcd counted no Range or no Watch (%v): the check is not looking at the right etcd", diff)
	}
	if d := putAfter["grpc Put"] - putBefore["grpc Put"]; d != 1 {
		t.Errorf("the test's own Put counted %v times", d)
	}
	t.Logf("SAFETY-FIGURE dashboard-etcd-counter-deltas=%v", diff)
}

// restartableEtcd is a discovery etcd that a test stops and starts again on
// the same ports and data directory (kubeenv's etcd is started once).
type restartableEtcd struct {
	Endpoint string
	bin, dir string
	port     int // client port
	peer     int
	cmd      *exec.Cmd
	done     chan struct{}
}

func startRestartableEtcd(t *testing.T) *restartableEtcd {
	t.Helper()
	bin, err := kubeenv.FindBinaries("")
	if err != nil {
		t.Skip(err)
	}
	ports := freeTCPPorts(t, 2)
	e := &restartableEtcd{bin: bin.Etcd, dir: t.TempDir(), port: ports[0], peer: ports[1]}
	e.Endpoint = "http://127.0.0.1:" + strconv.Itoa(e.port)
	e.Start(t)
	t.Cleanup(func() {
		if t.Failed() {
			log, _ := os.ReadFile(filepath.Join(e.dir, "etcd.log"))
			t.Logf("etcd log (tail):\n%s", tail(string(log), 3000))
		}
		e.Stop(t)
	})
	return e
}

// Start starts etcd on its own client port and waits until it is healthy.
func (e *restartableEtcd) Start(t *testing.T) { t.Helper(); e.startOn(t, e.port) }

// StartOnOtherPort starts etcd on the same data, on another client port (the
// dashboard, watching the usual port, still cannot reach it), and returns that
// endpoint.
func (e *restartableEtcd) StartOnOtherPort(t *testing.T) string {
	t.Helper()
	p := freeTCPPorts(t, 1)[0]
	e.startOn(t, p)
	return "http://127.0.0.1:" + strconv.Itoa(p)
}

func (e *restartableEtcd) startOn(t *testing.T, port int) {
	t.Helper()
	if e.cmd != nil {
		t.Fatal("etcd is already running")
	}
	client := "http://127.0.0.1:" + strconv.Itoa(port)
	peer := "http://127.0.0.1:" + strconv.Itoa(e.peer)
	logf, err := os.OpenFile(filepath.Join(e.dir, "etcd.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	e.cmd = exec.Command(e.bin, "--name=restartable", "--data-dir="+filepath.Join(e.dir, "data"),
		"--listen-client-urls="+client, "--advertise-client-urls="+client,
		"--listen-peer-urls="+peer, "--initial-advertise-peer-urls="+peer, "--initial-cluster=restartable="+peer,
		"--initial-cluster-state=new", "--unsafe-no-fsync", "--log-level=warn")
	e.cmd.Stdout, e.cmd.Stderr = logf, logf
	// Its own process group, killed with the test process if that dies.
	e.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := e.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	e.done = done
	cmd := e.cmd
	go func() { _ = cmd.Wait(); close(done) }()
	hc := &http.Client{Timeout: time.Second}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = kubeenv.WaitFor(ctx, "etcd "+client+"/health", func(ctx context.Context) (bool, error) {
		select {
		case <-done:
			return false, fmt.Errorf("etcd exited")
		default:
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, client+"/health", nil)
		resp, err := hc.Do(req)
		if err != nil {
			return false, err
		}
		defer resp.Body.Close()
		var h struct{ Health string }
		err = json.NewDecoder(resp.Body).Decode(&h)
		return err == nil && h.Health == "true", err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Stop stops etcd (SIGTERM, as a service manager does; SIGKILL after 10 s)
// and waits until it exited. It does nothing when etcd is not running.
func (e *restartableEtcd) Stop(t *testing.T) {
	t.Helper()
	if e.cmd == nil {
		return
	}
	_ = syscall.Kill(-e.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-e.done:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-e.cmd.Process.Pid, syscall.SIGKILL)
		<-e.done
	}
	e.cmd = nil
}

// freeTCPPorts returns n free ports on 127.0.0.1 (another process may take one
// before it is used; then the etcd start fails the test).
func freeTCPPorts(t *testing.T, n int) []int {
	t.Helper()
	var out []int
	var lns []net.Listener
	defer func() {
		for _, ln := range lns {
			_ = ln.Close()
		}
	}()
	for range n {
		ln, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns = append(lns, ln)
		out = append(out, ln.Addr().(*net.TCPAddr).Port)
	}
	return out
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}
