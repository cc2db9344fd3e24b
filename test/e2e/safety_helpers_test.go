package e2e

import (
	"bytes"
	"context"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/cmdtest"
	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/kubeenv"
)

// The safety suite (issue 8): read-only under the audit log, least privilege,
// faults, secrets. These helpers are shared by the safety_*_test.go files.

// docsReaderGroup is the group the ClusterRoleBinding of docs/rbac/clusterrole.yaml
// binds, as shipped.
const docsReaderGroup = "dynamo-readers"

// docsReaderKubeconfig applies docs/rbac/clusterrole.yaml exactly as shipped and
// returns a kubeconfig for user, a member of the group that file binds.
func docsReaderKubeconfig(t *testing.T, e *kubeenv.Env, user string) string {
	t.Helper()
	data, err := os.ReadFile("../../docs/rbac/clusterrole.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.ApplyYAML(context.Background(), data); err != nil {
		t.Fatal(err)
	}
	kc, err := e.KubeconfigFor(user, []string{docsReaderGroup})
	if err != nil {
		t.Fatal(err)
	}
	return kc
}

// pluginRun is one run of the built binary.
type pluginRun struct {
	stdout, stderr string
	code           int
	elapsed        time.Duration
}

// runPlugin runs the built kubectl-dynamo binary directly (not through kubectl),
// so that it can be interrupted (topology --watch). With interruptAfter > 0 it
// sends SIGINT after that long. The run is killed after a minute.
func runPlugin(t *testing.T, kubeconfig string, extraEnv []string, interruptAfter time.Duration, args ...string) pluginRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(binDir, "kubectl-dynamo"), args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig, "HOME="+t.TempDir())
	cmd.Env = append(cmd.Env, extraEnv...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	began := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if interruptAfter > 0 {
		timer := time.AfterFunc(interruptAfter, func() { _ = cmd.Process.Signal(os.Interrupt) })
		defer timer.Stop()
	}
	err := cmd.Wait()
	r := pluginRun{stdout: out.String(), stderr: errb.String(), elapsed: time.Since(began)}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		t.Fatalf("run kubectl-dynamo: %v", err)
	}
	return r
}

// inProcess runs the command tree in this process (as main does) and fails t
// when goroutines started by the run are still alive a few seconds after it and
// after cleanup (closing the test's servers). A warm-up run must have happened
// before (see warmUpInProcess), so that lazily started process-wide goroutines
// are not counted.
func inProcess(t *testing.T, cleanup func(), args ...string) cmdtest.Result {
	t.Helper()
	before := settledGoroutines()
	ids := goroutineStacks()
	r := cmdtest.Run(t, args...)
	if cleanup != nil {
		cleanup()
	}
	checkGoroutines(t, before, ids)
	return r
}

// settledGoroutines waits (at most 5 s) until the goroutine count has not
// changed for 300 ms, so that what the previous test left winding down is not
// blamed on the next run, and returns it.
func settledGoroutines() int {
	n, stable := runtime.NumGoroutine(), time.Now()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		if m := runtime.NumGoroutine(); m != n {
			n, stable = m, time.Now()
		} else if time.Since(stable) >= 300*time.Millisecond {
			break
		}
	}
	return n
}

// goroutinesChecked counts the in-process runs checked for leaks (reported in
// docs/reliability.md).
var goroutinesChecked atomic.Int64

// checkGoroutines waits up to 10 s for the goroutine count to fall back to
// before, and fails t with every goroutine's stack otherwise.
func checkGoroutines(t *testing.T, before int, old map[string]string) {
	t.Helper()
	goroutinesChecked.Add(1)
	deadline := time.Now().Add(10 * time.Second)
	for {
		n := runtime.NumGoroutine()
		if n <= before {
			t.Logf("goroutines: %d before, %d after", before, n)
			return
		}
		if time.Now().After(deadline) {
			var b strings.Builder
			for id, st := range goroutineStacks() {
				if _, ok := old[id]; !ok {
					b.WriteString(st + "\n\n")
				}
			}
			t.Errorf("goroutine leak: %d goroutines before the run, %d after; new ones:\n%s", before, n, b.String())
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// goroutineStacks returns every goroutine's stack by goroutine id.
func goroutineStacks() map[string]string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	out := map[string]string{}
	for _, st := range strings.Split(string(buf), "\n\n") {
		if id, _, ok := strings.Cut(strings.TrimPrefix(st, "goroutine "), " "); ok {
			out[id] = st
		}
	}
	return out
}

var warmUp sync.Once

// warmUpInProcess runs one in-process command against the live cluster so that
// process-wide goroutines started on first use (client-go, klog) exist before a
// leak check counts.
func warmUpInProcess(t *testing.T, kubeconfig string) {
	warmUp.Do(func() {
		cmdtest.Run(t, "--kubeconfig", kubeconfig, "topology", "-n", "serving", "--no-frontend", "--no-etcd", "-o", "json")
	})
}

// apiProxy is an HTTPS reverse proxy in front of the real API server that
// injects faults. It forwards as the identity of its upstream rest.Config, so
// the audit log still names the user; the plugin reaches it with a kubeconfig
// that trusts the proxy's certificate (proxyKubeconfig).
type apiProxy struct {
	*httptest.Server
	upstream *url.URL
	rt       http.RoundTripper

	// Delay holds every request this long before forwarding it.
	Delay time.Duration
	// PageLimit rewrites the limit of every LIST (forcing continue pages).
	PageLimit int
	// ExpireContinue answers this many LIST continue requests with 410 Gone
	// (a negative value: all of them).
	ExpireContinue int
	// GoneAfter, when > 0, closes the connection of every request after the
	// first GoneAfter ones without an answer: the API server went away.
	GoneAfter int
	// Drop closes the connection of every request whose path contains one of
	// these strings, without an answer.
	Drop []string
	// NotFound answers requests whose path has one of these prefixes 404.
	NotFound []string

	mu       sync.Mutex
	requests []string
	expired  int
}

func newAPIProxy(t *testing.T, e *kubeenv.Env, cfg *rest.Config) *apiProxy {
	t.Helper()
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(e.Host)
	if err != nil {
		t.Fatal(err)
	}
	p := &apiProxy{upstream: u, rt: rt}
	p.Server = httptest.NewUnstartedServer(http.HandlerFunc(p.serve))
	p.StartTLS()
	t.Cleanup(p.Close)
	return p
}

// Close stops the proxy and drops its upstream connections.
func (p *apiProxy) Close() {
	p.CloseClientConnections()
	p.Server.Close()
	type idleCloser interface{ CloseIdleConnections() }
	if c, ok := p.rt.(idleCloser); ok {
		c.CloseIdleConnections()
	}
}

// Requests are the requests received, "METHOD PATH?QUERY".
func (p *apiProxy) Requests() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.requests...)
}

func (p *apiProxy) serve(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	p.requests = append(p.requests, r.Method+" "+r.URL.RequestURI())
	n := len(p.requests)
	p.mu.Unlock()
	drop := p.GoneAfter > 0 && n > p.GoneAfter
	for _, d := range p.Drop {
		drop = drop || strings.Contains(r.URL.Path, d)
	}
	if drop {
		if hj, ok := w.(http.Hijacker); ok {
			if c, _, err := hj.Hijack(); err == nil {
				_ = c.Close()
				return
			}
		}
		panic(http.ErrAbortHandler)
	}
	if p.Delay > 0 {
		select {
		case <-time.After(p.Delay):
		case <-r.Context().Done():
			return
		}
	}
	for _, prefix := range p.NotFound {
		if strings.HasPrefix(r.URL.Path, prefix) {
			writeStatus(w, apierrors.NewNotFound(schema.GroupResource{Resource: strings.TrimPrefix(r.URL.Path, prefix)}, ""))
			return
		}
	}
	q := r.URL.Query()
	if q.Get("continue") != "" {
		p.mu.Lock()
		expire := p.ExpireContinue < 0 || p.expired < p.ExpireContinue
		if expire {
			p.expired++
		}
		p.mu.Unlock()
		if expire {
			writeStatus(w, apierrors.NewResourceExpired("The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter."))
			return
		}
	}
	if p.PageLimit > 0 && q.Get("limit") != "" {
		q.Set("limit", strconv.Itoa(p.PageLimit))
		r.URL.RawQuery = q.Encode()
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(p.upstream)
			pr.Out.Host = p.upstream.Host
		},
		Transport:     p.rt,
		FlushInterval: -1,
		ErrorLog:      nil,
	}
	rp.ServeHTTP(w, r)
}

func writeStatus(w http.ResponseWriter, err *apierrors.StatusError) {
	st := err.Status()
	st.Kind, st.APIVersion = "Status", "v1"
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(int(st.Code))
	_, _ = fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":%q,"reason":%q,"code":%d}`,
		st.Message, st.Reason, st.Code)
}

// proxyKubeconfig writes a kubeconfig that reaches p (trusting its certificate)
// with no credentials of its own.
func proxyKubeconfig(t *testing.T, p *apiProxy) string {
	t.Helper()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: p.Certificate().Raw})
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["faulty"] = &clientcmdapi.Cluster{Server: p.URL, CertificateAuthorityData: ca}
	cfg.AuthInfos["faulty"] = &clientcmdapi.AuthInfo{}
	cfg.Contexts["faulty"] = &clientcmdapi.Context{Cluster: "faulty", AuthInfo: "faulty", Namespace: "default"}
	cfg.CurrentContext = "faulty"
	path := filepath.Join(t.TempDir(), "proxy.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// tcpProxy forwards TCP connections to target until Cut is called; after that
// every connection is closed and new ones are refused (the listener is closed).
// CutAfter cuts automatically once that many bytes went from target to the
// clients.
type tcpProxy struct {
	Addr     string
	ln       net.Listener
	target   string
	cutAfter int64
	sent     atomic.Int64
	once     sync.Once
	mu       sync.Mutex
	conns    []net.Conn
	wg       sync.WaitGroup
}

func newTCPProxy(t *testing.T, target string, cutAfter int64) *tcpProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &tcpProxy{Addr: ln.Addr().String(), ln: ln, target: target, cutAfter: cutAfter}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.Cut)
	return p
}

func (p *tcpProxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
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
		p.wg.Add(2)
		go func() { defer p.wg.Done(); _, _ = io.Copy(up, c); _ = up.Close() }()
		go func() {
			defer p.wg.Done()
			buf := make([]byte, 16<<10)
			for {
				n, err := up.Read(buf)
				if n > 0 {
					if _, werr := c.Write(buf[:n]); werr != nil {
						break
					}
					if p.cutAfter > 0 && p.sent.Add(int64(n)) >= p.cutAfter {
						go p.Cut()
						break
					}
				}
				if err != nil {
					break
				}
			}
			_ = c.Close()
		}()
	}
}

// Cut closes the listener and every connection.
func (p *tcpProxy) Cut() {
	p.once.Do(func() {
		_ = p.ln.Close()
		p.mu.Lock()
		for _, c := range p.conns {
			_ = c.Close()
		}
		p.mu.Unlock()
	})
}

// Sent is the number of bytes forwarded from target to the clients.
func (p *tcpProxy) Sent() int64 { return p.sent.Load() }

// auditResource names an audited request's resource ("pods", "services/proxy",
// "(non-resource)") and fails the test when who read a Secret or ConfigMap.
func auditResource(t *testing.T, ev kubeenv.AuditEvent, who string) string {
	t.Helper()
	res := "(non-resource)"
	if ev.ObjectRef != nil {
		res = ev.ObjectRef.Resource
		if ev.ObjectRef.Subresource != "" {
			res += "/" + ev.ObjectRef.Subresource
		}
		if res == "secrets" || res == "configmaps" {
			t.Errorf("%s read %s: %s %s", who, res, ev.Verb, ev.RequestURI)
		}
	}
	return res
}
