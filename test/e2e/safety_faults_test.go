package e2e

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/client-go/rest"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/fakefrontend"
	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/kubeenv"
)

// faultCase is one injected fault: the command runs in this process (so that
// goroutines left behind are seen) against the real API server, through a
// faulty proxy when proxy is set.
type faultCase struct {
	name string
	// proxy configures the API-server proxy; nil runs against the API server directly.
	proxy func(p *apiProxy)
	// args follow "topology -n serving -o json" unless cmd is set.
	args []string
	cmd  []string
	// frontend, when set, is started and its URL passed as --frontend-url.
	frontend *fakefrontend.Config
	wantCode int
	// wantOut and wantErr are substrings of stdout and stderr ("{server}" is
	// the API server URL the plugin was given); notErr must not be in stderr,
	// and each of once must be in it exactly once.
	wantOut, wantErr, notErr, once []string
	// within bounds the run's duration.
	within time.Duration
}

// TestSafetyFaults injects the faults of issue 8 one at a time and checks the
// message, the exit code and that no goroutine is left behind.
func TestSafetyFaults(t *testing.T) {
	f := newExplainFixture(t, exampleQwen)
	e := f.e
	const user = "safety-faults"
	kc := docsReaderKubeconfig(t, e, user)
	upstream, err := e.RESTConfigFor(user, []string{docsReaderGroup})
	if err != nil {
		t.Fatal(err)
	}
	warmUpInProcess(t, kc)

	metrics, busy := f.metrics(t, "qwen3-32b")
	fe := func(mod func(*fakefrontend.Config)) *fakefrontend.Config {
		c := fakefrontend.Config{Metrics: metrics, BusyThreshold: busy}
		if mod != nil {
			mod(&c)
		}
		return &c
	}
	closedPort := func() string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		_ = ln.Close()
		return addr
	}()

	cases := []faultCase{
		{name: "api-slow-within-timeout", proxy: func(p *apiProxy) { p.Delay = 300 * time.Millisecond },
			args: []string{"--no-frontend", "--request-timeout", "10s"}, wantCode: 2, wantOut: []string{"PrefillDomainWithoutDecode"}},
		{name: "api-slow-over-timeout", proxy: func(p *apiProxy) { p.Delay = 5 * time.Second },
			args: []string{"--no-frontend", "--request-timeout", "1s"}, wantCode: 1,
			wantErr: []string{"the API server did not answer in time", "raise --request-timeout"}, within: 15 * time.Second},
		// The API server goes away after discovery (the three discovery GETs
		// run first, concurrently): nothing can be listed. client-go retries
		// the closed connections (EOF) until --request-timeout; the message
		// says the server is unreachable, names it and points at the cluster
		// and the kubeconfig context, not at --request-timeout.
		{name: "api-gone-after-discovery", proxy: func(p *apiProxy) { p.GoneAfter = 3 },
			args: []string{"--no-frontend", "--request-timeout", "2s"}, wantCode: 1,
			wantErr: []string{"no DynamoGraphDeployment could be read: " +
				"the API server of context faulty ({server}) is unreachable, connection closed without an answer (EOF) on every attempt until the request timed out; failed reads: ",
				"dynamographdeployments.nvidia.com unreachable", "pods unreachable",
				"; check the cluster is reachable with this kubeconfig and that its current context is the intended cluster (kubectl cluster-info)",
				"Retry once the API server answers; each attempt waits at most --request-timeout"},
			// The outage is said once, and permissions are not blamed for it.
			once:   []string{"is unreachable", "kubectl cluster-info"},
			notErr: []string{"raise --request-timeout", "timed out (", "auth can-i"}, within: 30 * time.Second},
		// Only the pod LISTs die (connection closed): the deployments are read,
		// the workers are not, and an empty table must not pass as "no findings".
		{name: "api-pods-gone", proxy: func(p *apiProxy) { p.Drop = []string{"/pods"} },
			args: []string{"--no-frontend", "--request-timeout", "2s"}, wantCode: 1,
			wantErr: []string{"none of their worker pods could be",
				"listing pods in namespace serving failed: the API server of context faulty ({server}) is unreachable, connection closed without an answer (EOF)",
				"Retry once the API server answers"},
			notErr: []string{"raise --request-timeout", "auth can-i"}, within: 30 * time.Second},
		{name: "list-continue-expired-once", proxy: func(p *apiProxy) { p.PageLimit = 1; p.ExpireContinue = 1 },
			args: []string{"--no-frontend"}, wantCode: 2, wantOut: []string{"PrefillDomainWithoutDecode"}},
		// Every continue token expires: the LIST is restarted once, then the
		// resource is reported unreadable, and the run fails (exit 1).
		{name: "list-continue-always-expired", proxy: func(p *apiProxy) { p.PageLimit = 1; p.ExpireContinue = -1 },
			args: []string{"--no-frontend"}, wantCode: 1,
			wantErr: []string{"none of their worker pods could be", "The provided continue parameter is too old"}},
		{name: "crd-group-missing", proxy: func(p *apiProxy) { p.NotFound = []string{"/apis/nvidia.com"} },
			args: []string{"--no-frontend"}, wantCode: 1, wantErr: []string{"dynamographdeployments"}},
		{name: "dwm-crd-missing", proxy: func(p *apiProxy) {
			p.NotFound = []string{"/apis/nvidia.com/v1alpha1/namespaces/serving/dynamoworkermetadatas"}
		}, args: []string{"--no-frontend"}, wantCode: 2, wantOut: []string{"dynamoworkermetadatas.nvidia.com is not served (CRD not installed?)"}},
		{name: "grove-crd-missing", proxy: func(p *apiProxy) { p.NotFound = []string{"/apis/grove.io"} },
			args: []string{"--no-frontend"}, wantCode: 2, wantOut: []string{"PrefillDomainWithoutDecode"}},
		{name: "etcd-unreachable", args: []string{"--no-frontend", "--etcd-endpoints", "http://" + closedPort, "--etcd-dial-timeout", "1s"},
			wantCode: 2, wantOut: []string{"is unreachable", "--etcd-dial-timeout"}, within: 15 * time.Second},
		{name: "frontend-404", frontend: fe(func(c *fakefrontend.Config) {
			c.Status = map[string]int{fakefrontend.PathMetrics: 404, fakefrontend.PathBusyThreshold: 404}
		}),
			wantCode: 2, wantOut: []string{"HTTP 404", "live load"}},
		{name: "frontend-500", frontend: fe(func(c *fakefrontend.Config) { c.Status = map[string]int{fakefrontend.PathMetrics: 500} }),
			wantCode: 2, wantOut: []string{"HTTP 500", "live load"}},
		{name: "frontend-garbage", frontend: fe(func(c *fakefrontend.Config) {
			c.Garbage = map[string]string{fakefrontend.PathMetrics: "<html>502 Bad Gateway</html>\n", fakefrontend.PathBusyThreshold: "{not json"}
		}), wantCode: 2, wantOut: []string{"not Prometheus text", "invalid JSON"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { runFault(t, e, upstream, c) })
	}
	t.Run("etcd-stopped-mid-read", func(t *testing.T) { etcdStoppedMidRead(t, e, upstream) })
	t.Logf("SAFETY-FIGURE faults-injected=%d goroutine-checks=%d", len(cases)+1, goroutinesChecked.Load())
}

func runFault(t *testing.T, e *kubeenv.Env, upstream *rest.Config, c faultCase) {
	t.Helper()
	// Every run goes through a proxy, faulty or not, that is closed after the
	// run: client-go keeps idle keep-alive connections in a process-wide
	// transport cache, which would otherwise count as goroutines left behind.
	p := newAPIProxy(t, e, upstream)
	if c.proxy != nil {
		c.proxy(p)
	}
	cleanups := []func(){p.Close}
	kubeconfig := proxyKubeconfig(t, p)
	defer func() { t.Logf("API requests through the proxy: %d", len(p.Requests())) }()
	args := append([]string{"--kubeconfig", kubeconfig}, c.cmd...)
	if c.cmd == nil {
		args = append(args, "topology", "-n", "serving", "-o", "json")
	}
	args = append(args, c.args...)
	if c.frontend != nil {
		s := fakefrontend.New(*c.frontend)
		cleanups = append(cleanups, s.Close)
		args = append(args, "--frontend-url", s.URL)
	}
	began := time.Now()
	r := inProcess(t, func() {
		for _, f := range cleanups {
			f()
		}
	}, args...)
	elapsed := time.Since(began)
	if r.ExitCode != c.wantCode {
		t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.ExitCode, c.wantCode, trimOut(r.Stdout), r.Stderr)
	}
	for _, w := range c.wantOut {
		if !strings.Contains(r.Stdout, w) {
			t.Errorf("stdout lacks %q:\n%s", w, trimOut(r.Stdout))
		}
	}
	for _, w := range c.wantErr {
		if w = strings.ReplaceAll(w, "{server}", p.URL); !strings.Contains(r.Stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, r.Stderr)
		}
	}
	for _, w := range c.notErr {
		if strings.Contains(r.Stderr, w) {
			t.Errorf("stderr has %q:\n%s", w, r.Stderr)
		}
	}
	for _, w := range c.once {
		if n := strings.Count(r.Stderr, w); n != 1 {
			t.Errorf("stderr has %q %d times, want once:\n%s", w, n, r.Stderr)
		}
	}
	if c.within > 0 && elapsed > c.within {
		t.Errorf("took %v, want at most %v", elapsed, c.within)
	}
	t.Logf("exit %d in %v; stderr: %s; notes: %s", r.ExitCode, elapsed.Round(time.Millisecond), strings.TrimSpace(r.Stderr), notesOf(r.Stdout))
}

// notesOf extracts the note messages of a JSON report, for the log.
func notesOf(stdout string) string {
	var out []string
	for _, l := range strings.Split(stdout, "\n") {
		if strings.Contains(l, `"message"`) {
			out = append(out, strings.TrimSpace(l))
		}
	}
	return strings.Join(out, " | ")
}

// etcdStoppedMidRead: the discovery etcd holds about 8 MB of keys (several Range
// pages); the connection is cut after 1.5 MB and the endpoint stays down. The
// run must end with the etcd source degraded and a note, the report otherwise
// intact, and no goroutine left.
func etcdStoppedMidRead(t *testing.T, e *kubeenv.Env, upstream *rest.Config) {
	etcd := kubeenv.StartEtcd(t)
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{etcd.Endpoint}, DialTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pad := strings.Repeat("x", 4000)
	for i := range 2000 {
		if _, err := cli.Put(ctx, fmt.Sprintf("v1/instances/ns/comp/ep/%06x", i), `{"pad":"`+pad+`"}`); err != nil {
			t.Fatal(err)
		}
	}
	_ = cli.Close()
	p := newTCPProxy(t, strings.TrimPrefix(etcd.Endpoint, "http://"), 1500<<10)
	api := newAPIProxy(t, e, upstream)
	began := time.Now()
	r := inProcess(t, func() { p.Cut(); api.Close() }, "--kubeconfig", proxyKubeconfig(t, api), "topology", "-n", "serving", "-o", "json", "--no-frontend",
		"--etcd-endpoints", "http://"+p.Addr, "--etcd-dial-timeout", "2s", "--etcd-timeout", "3s")
	if r.ExitCode != 2 || !strings.Contains(r.Stdout, "PrefillDomainWithoutDecode") {
		t.Errorf("exit %d, want 2 with the report; stderr %s", r.ExitCode, r.Stderr)
	}
	if !strings.Contains(r.Stdout, "etcd") || !strings.Contains(r.Stdout, `"degraded": true`) {
		t.Errorf("no degraded etcd source:\n%s", trimOut(r.Stdout))
	}
	t.Logf("cut after %d bytes; exit %d in %v; notes: %s", p.Sent(), r.ExitCode, time.Since(began).Round(time.Millisecond), notesOf(r.Stdout))
}
