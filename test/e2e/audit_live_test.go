package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/fakefrontend"
	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/kubeenv"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/audit"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/capture"
)

// The live audit-routes test runs `kubectl dynamo audit-routes` through the
// real kubectl against the real API server, as a user bound only to
// docs/rbac/clusterrole.yaml: the example deployment is loaded into the API
// server, a fake frontend serves its metrics, busy thresholds and KV
// placements, and a loopback stand-in for the kubelet's log endpoint,
// registered as the frontend pod's node's endpoint, serves the router log
// fixture. The API server proxies GET pods/log to it, so the plugin reads the
// log exactly as it would on a cluster, and the audit log shows it sent only
// GETs.

// kubeletStandIn serves /containerLogs/NS/POD/CONTAINER over TLS (the API
// server does not verify a kubelet's certificate unless it is given a CA) and
// records each request's query.
type kubeletStandIn struct {
	srv  *httptest.Server
	mu   sync.Mutex
	reqs []*url.URL
	logs map[string]string // "NS/POD/CONTAINER" → log text
}

func newKubeletStandIn(t *testing.T, logs map[string]string) *kubeletStandIn {
	t.Helper()
	k := &kubeletStandIn{logs: logs}
	k.srv = httptest.NewUnstartedServer(http.HandlerFunc(k.serve))
	k.srv.StartTLS()
	t.Cleanup(k.srv.Close)
	return k
}

func (k *kubeletStandIn) serve(w http.ResponseWriter, r *http.Request) {
	k.mu.Lock()
	k.reqs = append(k.reqs, r.URL)
	k.mu.Unlock()
	if r.Method != http.MethodGet {
		http.Error(w, "the stand-in serves GET only", http.StatusMethodNotAllowed)
		return
	}
	key, ok := strings.CutPrefix(r.URL.Path, "/containerLogs/")
	text, found := k.logs[key]
	if !ok || !found {
		http.NotFound(w, r)
		return
	}
	if n, err := strconv.Atoi(r.URL.Query().Get("tailLines")); err == nil {
		lines := strings.SplitAfter(text, "\n")
		if len(lines) > 0 && lines[len(lines)-1] == "" {
			lines = lines[:len(lines)-1]
		}
		text = strings.Join(lines[max(0, len(lines)-n):], "")
	}
	if n, err := strconv.Atoi(r.URL.Query().Get("limitBytes")); err == nil && n < len(text) {
		text = text[:n]
	}
	_, _ = w.Write([]byte(text))
}

func (k *kubeletStandIn) requests() []*url.URL {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]*url.URL(nil), k.reqs...)
}

// registerKubelet points node's kubelet endpoint at the stand-in (a loopback
// InternalIP and its port) and restores the node's status afterwards.
func registerKubelet(t *testing.T, e *kubeenv.Env, node string, k *kubeletStandIn) {
	t.Helper()
	cs, err := e.Clientset()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	n, err := cs.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	old := n.Status.DeepCopy()
	u, err := url.Parse(k.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		t.Fatal(err)
	}
	n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: u.Hostname()}}
	n.Status.DaemonEndpoints.KubeletEndpoint.Port = int32(port)
	if _, err := cs.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if n, err := cs.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{}); err == nil {
			n.Status = *old
			_, _ = cs.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{})
		}
	})
}

func TestAuditRoutesLive(t *testing.T) {
	e := kubeenv.Require(t, env)
	loadExample(t, e, exampleQwen)
	data, err := os.ReadFile("../../examples/" + exampleQwen)
	if err != nil {
		t.Fatal(err)
	}
	b, err := capture.Read(bytes.NewReader(data), exampleQwen)
	if err != nil {
		t.Fatal(err)
	}
	logText, err := os.ReadFile("../../examples/router-logs/prefill-only-zone-required.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	const frontendPod, node = "qwen3-32b-0-frontend-7c9f5", "cpu-serving-01"
	kubelet := newKubeletStandIn(t, map[string]string{"serving/" + frontendPod + "/main": string(logText)})
	registerKubelet(t, e, node, kubelet)

	// The fake frontend serves what the capture holds, so the live model is
	// the capture's: metrics (loads), busy thresholds and KV placements.
	cfg := fakefrontend.Config{Models: []string{qwenModel}}
	for _, m := range b.Metrics {
		cfg.Metrics = m.Text
	}
	for _, t := range b.BusyThresholds {
		cfg.BusyThreshold = t.JSON
	}
	for _, kv := range b.KvEvents {
		cfg.Sources = append(cfg.Sources, fakefrontend.PlacementSource{Model: qwenModel, Namespace: qwenDynNS, Component: "prefill", Endpoint: "generate",
			BlockSize: kv.BlockSize, Cursor: uint64(len(kv.Events)), Events: kv.Events})
	}
	fe := fakefrontend.New(cfg)
	defer fe.Close()

	type run struct {
		rep            audit.Report
		stdout, stderr string
		code           int
	}
	audited := func(t *testing.T, kubeconfig string, args ...string) run {
		t.Helper()
		out, errOut, code := kubectlEnv(t, kubeconfig, nil, append([]string{"dynamo", "audit-routes", "qwen3-32b", "-n", "serving", "--frontend-url", fe.URL, "-o", "json"}, args...)...)
		r := run{stdout: out, stderr: errOut, code: code}
		if err := json.Unmarshal([]byte(out), &r.rep); err != nil {
			t.Fatalf("exit %d, not a RouteAudit: %v\n%s\nstderr: %s", code, err, out, errOut)
		}
		return r
	}

	t.Run("every replica's log through GET pods/log", func(t *testing.T) {
		kc := docsReaderKubeconfig(t, e, "auditor")
		offset, err := e.AuditOffset()
		if err != nil {
			t.Fatal(err)
		}
		r := audited(t, kc, "--since", "45m", "--tail", "100000")
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		rep := r.rep
		if len(rep.Logs.Streams) != 1 || rep.Logs.Streams[0].Name != "pod/"+frontendPod+"/main" || rep.Logs.Streams[0].Formats[audit.FormatJSON] == 0 {
			t.Fatalf("streams %+v", rep.Logs.Streams)
		}
		if rep.Logs.Join.Decisions != 8 {
			t.Errorf("%d decisions, want the fixture's 8", rep.Logs.Join.Decisions)
		}
		for _, c := range rep.Checks {
			if c.Disagreed != 0 || c.Covered != 8 {
				t.Errorf("live %s: covered %d, disagreed %d (reasons %+v; disagreements %+v)", c.Check, c.Covered, c.Disagreed, c.Reasons, rep.Disagreements)
			}
		}
		reqs := kubelet.requests()
		if len(reqs) != 1 {
			t.Fatalf("the kubelet stand-in got %d requests", len(reqs))
		}
		q := reqs[0].Query()
		if q.Get("sinceSeconds") != "2700" || q.Get("tailLines") != "100000" || q.Get("limitBytes") != strconv.Itoa(256<<20) {
			t.Errorf("the API server passed %q", reqs[0].RawQuery)
		}
		events, _, err := e.AuditEventsFrom(offset)
		if err != nil {
			t.Fatal(err)
		}
		logGets := 0
		for _, ev := range events {
			if ev.User != "auditor" {
				continue
			}
			if ev.IsMutating() || (ev.Verb != "get" && ev.Verb != "list" && ev.Verb != "watch") {
				t.Errorf("the plugin sent %s %s", ev.Verb, ev.RequestURI)
			}
			// A log is streamed: the audit log has a ResponseStarted and a
			// ResponseComplete event for the one request.
			if ev.ObjectRef != nil && ev.ObjectRef.Resource == "pods" && ev.ObjectRef.Subresource == "log" && ev.Stage == "ResponseComplete" {
				logGets++
				if ev.Verb != "get" || ev.Code != http.StatusOK || ev.ObjectRef.Name != frontendPod {
					t.Errorf("pods/log request %s: verb %s, code %d", ev.RequestURI, ev.Verb, ev.Code)
				}
			}
		}
		if logGets != 1 {
			t.Errorf("%d audited GETs of pods/log, want 1", logGets)
		}
		if reqs := nonGET(fe); len(reqs) != 0 {
			t.Errorf("the frontend got %q", reqs)
		}
	})

	t.Run("a role without pods/log degrades with a note", func(t *testing.T) {
		kc := inspectorWithoutPodLogs(t, e)
		before := len(kubelet.requests())
		r := audited(t, kc)
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		notes := strings.Join(r.rep.Notes, "\n")
		if !strings.Contains(notes, "pod/"+frontendPod+"/main: reading its log was denied (RBAC: needs get on pods/log") {
			t.Errorf("no denial note in:\n%s", notes)
		}
		if r.rep.Logs.Join.Decisions != 0 || len(kubelet.requests()) != before {
			t.Errorf("a refused log was read: %d decisions", r.rep.Logs.Join.Decisions)
		}
	})
}

// inspectorWithoutPodLogs binds a user to docs/rbac/clusterrole.yaml's
// ClusterRole minus its pods/log rule.
func inspectorWithoutPodLogs(t *testing.T, e *kubeenv.Env) string {
	t.Helper()
	cr := docsClusterRole(t)
	narrow := cr.DeepCopy()
	narrow.Name = "audit-no-pod-logs"
	narrow.Rules = nil
	for _, rule := range cr.Rules {
		if len(rule.Resources) == 1 && rule.Resources[0] == "pods/log" {
			continue
		}
		narrow.Rules = append(narrow.Rules, rule)
	}
	if len(narrow.Rules) != len(cr.Rules)-1 {
		t.Fatalf("docs/rbac/clusterrole.yaml has no rule for pods/log alone: %+v", cr.Rules)
	}
	applyTyped(t, e, narrow, "ClusterRole")
	bindRole(t, e, "ClusterRole", narrow.Name, "", "audit-no-pod-logs")
	kc, err := e.KubeconfigFor("auditor-no-logs", []string{"audit-no-pod-logs"})
	if err != nil {
		t.Fatal(err)
	}
	return kc
}
