package e2e

import (
	"bufio"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/fakefrontend"
	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/kubeenv"
)

// TestSafetyReadOnlyEveryCommand runs every command end to end — topology (table,
// json, yaml, all namespaces, through the service proxy, with --frontend-url, with
// etcd, and --watch for several intervals), capture, explain-route (placements
// stream, KV indexer, etcd discovery), hash, version and dynamic completion — as a
// user bound only to docs/rbac/clusterrole.yaml, and proves from the outside that
// nothing was changed: the API server's audit log shows only get/list/watch from
// that user; the fake frontend saw only GETs plus POST /tokenize and POST /query
// on known paths; the discovery etcd's own gRPC counters show only Range calls
// and its MVCC put/delete/txn counters did not move.
func TestSafetyReadOnlyEveryCommand(t *testing.T) {
	f := newExplainFixture(t, exampleQwen)
	e := f.e
	f2 := newExplainFixture(t, "etcd-discovery-v1alpha1.yaml")
	const user = "safety-readonly"
	kc := docsReaderKubeconfig(t, e, user)

	fe := fakefrontend.New(f.frontendConfig(t, "qwen3-32b", qwenModel))
	defer fe.Close()
	deepseek := fakefrontend.New(f2.frontendConfig(t, "deepseek-r1", "deepseek-ai/DeepSeek-R1"))
	defer deepseek.Close()

	// A separate discovery etcd holding the etcd-discovery example's keys.
	discovery := kubeenv.StartEtcd(t)
	eb := f2.bundle
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{discovery.Endpoint}, DialTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, kv := range eb.Etcd {
		if _, err := cli.Put(ctx, kv.Key, kv.Value); err != nil {
			t.Fatal(err)
		}
	}
	_ = cli.Close()
	etcdBefore := etcdCounters(t, discovery.Endpoint)

	offset, err := e.AuditOffset()
	if err != nil {
		t.Fatal(err)
	}
	capFile := filepath.Join(t.TempDir(), "capture.yaml")
	runs := []struct {
		args  []string
		codes []int // accepted exit codes
		want  string
	}{
		{[]string{"dynamo", "topology", "-n", "serving", "--frontend-url", fe.URL, "-o", "json"}, []int{2}, `"kind": "TopologyReport"`},
		{[]string{"dynamo", "topology", "-n", "serving"}, []int{2}, "PrefillDomainWithoutDecode"}, // frontend through services/proxy
		{[]string{"dynamo", "topology", "-A", "--no-frontend", "-o", "yaml"}, []int{2}, "kind: TopologyReport"},
		{[]string{"dynamo", "topology", "-n", "serving", "--tree", "--no-frontend"}, []int{2}, "us-east-1c"},
		{[]string{"dynamo", "topology", "-n", "research", "--etcd-endpoints", discovery.Endpoint, "--no-frontend", "-o", "wide"}, []int{0, 2}, "deepseek-r1"},
		{[]string{"dynamo", "capture", "-n", "serving", "--frontend-url", fe.URL}, []int{0}, "kind: List"},
		{[]string{"dynamo", "capture", "-n", "research", "--etcd-endpoints", discovery.Endpoint, "--no-frontend", "-o", "json"}, []int{0}, "EtcdKeyValues"},
		{[]string{"dynamo", "explain-route", "qwen3-32b", "-n", "serving", "--prompt", explainPrompt, "--frontend-url", fe.URL, "-o", "json"}, []int{2}, "NoEndpoints"},
		{[]string{"dynamo", "explain-route", "qwen3-32b", "-n", "serving", "--prompt", explainPrompt, "--frontend-url", fe.URL, "--indexer-url", fe.URL, "-o", "yaml"}, []int{0, 2}, "kind: RouteExplanation"},
		{[]string{"dynamo", "explain-route", "deepseek-r1", "-n", "research", "--prompt", explainPrompt, "--etcd-endpoints", discovery.Endpoint, "--frontend-url", deepseek.URL}, []int{0, 2}, "deepseek-r1"},
		// pods/log through the API server (no kubelet answers here: a note, and
		// the request is still only a GET).
		{[]string{"dynamo", "audit-routes", "qwen3-32b", "-n", "serving", "--frontend-url", fe.URL, "-o", "json"}, []int{0}, `"kind": "RouteAudit"`},
		{[]string{"dynamo", "capture", "-n", "serving", "--frontend-url", fe.URL, "--logs", "-o", "json"}, []int{0}, `"kind": "List"`},
		{[]string{"dynamo", "hash", "--tokens", "1,2,3,4,5,6,7,8", "--block-size", "4"}, []int{0}, "4945711292740353085"},
		{[]string{"dynamo", "version", "-o", "json"}, []int{0}, "v0.0.0-e2e"},
		{[]string{"__complete", "dynamo", "topology", "-n", "serving", ""}, []int{0}, "qwen3-32b"},
		{[]string{"__complete", "dynamo", "explain-route", "-n", "research", ""}, []int{0}, "deepseek-r1"},
		{[]string{"__complete", "dynamo", "topology", "-n", ""}, []int{0}, "serving"},
		{[]string{"__complete", "dynamo", "explain-route", "qwen3-32b", "-n", "serving", "--prefill", ""}, []int{0}, pod1c0},
	}
	for _, r := range runs {
		out, errOut, code := kubectlWith(t, kc, r.args...)
		if !slices.Contains(r.codes, code) || !strings.Contains(out, r.want) {
			t.Errorf("kubectl %s: exit %d (want %v), stdout lacks %q:\n%s\nstderr:\n%s", strings.Join(r.args, " "), code, r.codes, r.want, trimOut(out), errOut)
		}
		if r.args[1] == "capture" && r.args[len(r.args)-1] != "json" {
			if err := os.WriteFile(capFile, []byte(out), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The capture replays offline with no API request.
	if out, errOut, code := kubectlWith(t, kc, "dynamo", "topology", "--from-file", capFile); code != 2 || !strings.Contains(out, "PrefillDomainWithoutDecode") {
		t.Errorf("topology --from-file of the capture: exit %d\n%s\n%s", code, out, errOut)
	}

	// topology --watch for several intervals, then Ctrl-C.
	watchOffset, _ := e.AuditOffset()
	w := runPlugin(t, kc, nil, 3500*time.Millisecond, "topology", "-n", "serving", "--frontend-url", fe.URL, "--watch", "--watch-interval", "1s")
	if !strings.Contains(w.stdout, "PrefillDomainWithoutDecode") {
		t.Errorf("topology --watch printed no report (exit %d):\n%s\n%s", w.code, w.stdout, w.stderr)
	}
	waitAudit()
	watchEvents, _, _ := e.AuditEventsFrom(watchOffset)
	dgdLists := 0
	for _, ev := range watchEvents {
		if ev.User == user && ev.ObjectRef != nil && ev.ObjectRef.Resource == "dynamographdeployments" {
			dgdLists++
		}
	}
	if dgdLists < 3 {
		t.Errorf("topology --watch read the DGDs %d times in 3.5 s at a 1 s interval, want at least 3", dgdLists)
	}
	t.Logf("topology --watch: exit %d after %v, %d DGD LISTs", w.code, w.elapsed.Round(time.Millisecond), dgdLists)

	// API server: only get/list/watch from the plugin's user, over all the runs.
	waitAudit()
	total := auditReadOnly(t, e, offset, user)
	events, _, _ := e.AuditEventsFrom(offset)
	resources := map[string]int{}
	for _, ev := range events {
		if ev.User != user {
			continue
		}
		res := auditResource(t, ev, "the plugin")
		resources[ev.Verb+" "+res]++
	}
	t.Logf("SAFETY-FIGURE audited-requests=%d commands=%d by verb+resource: %v", total, len(runs)+2, sortedCounts(resources))

	// Frontends: only GETs plus the pure-compute POSTs, on known paths.
	known := []string{fakefrontend.PathMetrics, fakefrontend.PathBusyThreshold, fakefrontend.PathTokenize, fakefrontend.PathPlacements, fakefrontend.PathQuery}
	feReqs := 0
	for _, s := range []*fakefrontend.Server{fe, deepseek} {
		if m := s.Mutating(); len(m) > 0 {
			t.Errorf("mutating frontend requests: %v", m)
		}
		for _, r := range s.Requests() {
			feReqs++
			if !slices.Contains(known, r.Path) {
				t.Errorf("request to an unknown frontend path: %s", r)
			}
			pureCompute := r.Method == http.MethodPost && (r.Path == fakefrontend.PathTokenize || r.Path == fakefrontend.PathQuery)
			if r.Method != http.MethodGet && !pureCompute {
				t.Errorf("frontend request %s is neither a GET nor POST /tokenize or /query", r)
			}
		}
	}
	if countRequests(fe, "POST", fakefrontend.PathQuery) != 1 || countRequests(fe, "POST", fakefrontend.PathTokenize) < 2 {
		t.Errorf("expected POST /query once and POST /tokenize at least twice: %s", requestLog(fe))
	}
	t.Logf("SAFETY-FIGURE frontend-requests=%d (%s)", feReqs, requestLog(fe))

	// etcd: Range only.
	etcdAfter := etcdCounters(t, discovery.Endpoint)
	diff := map[string]float64{}
	for k, v := range etcdAfter {
		if d := v - etcdBefore[k]; d != 0 {
			diff[k] = d
		}
	}
	for k, d := range diff {
		switch k {
		case "grpc Range", "mvcc range":
		default:
			t.Errorf("etcd counter %s moved by %v during the plugin's runs: only Range is allowed", k, d)
		}
	}
	if diff["grpc Range"] == 0 {
		t.Errorf("no etcd Range was counted: the etcd check is not looking at the right etcd (%v)", diff)
	}
	t.Logf("SAFETY-FIGURE etcd-counter-deltas=%v", diff)
}

// etcdCounters reads etcd's /metrics: gRPC calls started per method ("grpc
// Range") and the MVCC counters ("mvcc put", "mvcc delete", "mvcc txn", "mvcc
// range").
func etcdCounters(t *testing.T, endpoint string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(endpoint + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		name, rest, ok := strings.Cut(line, " ")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
		if err != nil {
			continue
		}
		switch {
		case strings.HasPrefix(name, "grpc_server_started_total{"):
			_, m, _ := strings.Cut(name, `grpc_method="`)
			m, _, _ = strings.Cut(m, `"`)
			out["grpc "+m] += v
		case strings.HasPrefix(name, "etcd_debugging_mvcc_") && strings.HasSuffix(name, "_total"):
			k := strings.TrimSuffix(strings.TrimPrefix(name, "etcd_debugging_mvcc_"), "_total")
			if k == "put" || k == "delete" || k == "txn" || k == "range" {
				out["mvcc "+k] += v
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("etcd at %s exposes no gRPC or MVCC counters", endpoint)
	}
	return out
}

// waitAudit waits until the audit log has caught up: blocking mode writes an
// event when its response is complete, which may land a moment after the client
// saw the response.
func waitAudit() {
	time.Sleep(300 * time.Millisecond)
}

func sortedCounts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(k + "=" + strconv.Itoa(m[k]))
	}
	return b.String()
}

func trimOut(s string) string {
	if len(s) > 3000 {
		return s[:3000] + "…"
	}
	return s
}
