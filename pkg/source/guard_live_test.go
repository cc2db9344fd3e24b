package source

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/fakekube"
	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/kubeenv"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/frontend"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/kube"
)

// wireLog records the requests that reached a server.
type wireLog struct {
	mu   sync.Mutex
	reqs []string
	auth []string
}

func (l *wireLog) add(r *http.Request) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reqs = append(l.reqs, r.Method+" "+r.URL.Path)
	l.auth = append(l.auth, r.Header.Get("Authorization"))
}

func (l *wireLog) all() ([]string, []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.reqs...), append([]string(nil), l.auth...)
}

// TestLiveRedirectsAreNeverFollowed puts a TLS proxy in front of a real
// kube-apiserver that answers the service-proxy requests the way a hostile
// frontend pod (or a compromised proxy path) can: GET /metrics with a 302 to
// another host, POST /tokenize with a 307 to the API server's own
// serviceaccounts/token endpoint. Before the request guard, client-go followed
// both: the bearer token went to the other host, and the operator's identity
// created a service-account token (audit log: create serviceaccounts/token).
// Now nothing reaches the other host, nothing but GETs and the one POST
// reaches the API server, and the notes and errors name the targets.
func TestLiveRedirectsAreNeverFollowed(t *testing.T) {
	e := kubeenv.Start(t, kubeenv.Options{AuditLog: true, CRDs: []string{"../../test/crds"}})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ns, err := e.NewNamespace(ctx, "redir")
	if err != nil {
		t.Fatal(err)
	}
	if err := applyYAML(ctx, e, liveFixture(t, "deployment.yaml", ns)); err != nil {
		t.Fatal(err)
	}
	if _, err := e.ApplyYAML(ctx, []byte(fmt.Sprintf("apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: victim, namespace: %s}\n", ns))); err != nil {
		t.Fatal(err)
	}

	var attackerLog wireLog
	attacker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		attackerLog.add(r)
		fmt.Fprintln(w, "# thanks")
	}))
	defer attacker.Close()

	// The front: forwards everything to the real API server, except the
	// service-proxy paths, which it answers with redirects.
	upstream, err := url.Parse(e.Host)
	if err != nil {
		t.Fatal(err)
	}
	caOnly := &rest.Config{Host: e.Host, TLSClientConfig: rest.TLSClientConfig{CAFile: e.CAFile}}
	upstreamRT, err := rest.TransportFor(caOnly)
	if err != nil {
		t.Fatal(err)
	}
	forward := httputil.NewSingleHostReverseProxy(upstream)
	forward.Transport = upstreamRT
	var frontLog wireLog
	var front *httptest.Server
	front = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		frontLog.add(r)
		switch {
		case strings.HasSuffix(r.URL.Path, "/proxy/metrics"):
			http.Redirect(w, r, attacker.URL+"/steal?token=1", http.StatusFound)
		case strings.HasSuffix(r.URL.Path, "/proxy/tokenize"):
			http.Redirect(w, r, front.URL+"/api/v1/namespaces/"+ns+"/serviceaccounts/victim/token", http.StatusTemporaryRedirect)
		case strings.HasSuffix(r.URL.Path, "/proxy/busy_threshold"):
			http.Redirect(w, r, front.URL+"/api/v1/namespaces/"+ns+"/services/llama-frontend/proxy/busy_threshold", http.StatusTemporaryRedirect)
		default:
			forward.ServeHTTP(w, r)
		}
	}))
	defer front.Close()

	cfg := &rest.Config{Host: front.URL, BearerToken: e.AdminToken, TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
	api, err := kube.NewAPI(cfg)
	if err != nil {
		t.Fatal(err)
	}
	auditFrom, err := e.AuditOffset()
	if err != nil {
		t.Fatal(err)
	}

	// 1. A live collection with the frontend: /metrics is answered with a 302.
	b, err := Collect(ctx, CollectOptions{Kube: api, Namespace: ns, NoEtcd: true, FrontendTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	notes := fakekube.NoteLines(b.Notes)
	if !strings.Contains(notes, "a redirect to "+attacker.URL+"/steal (HTTP 302), which kubectl-dynamo never follows: nothing was sent there") {
		t.Errorf("no note names the redirect's target:\n%s", notes)
	}
	if strings.Contains(notes, "token=1") {
		t.Errorf("a note prints the redirect's query:\n%s", notes)
	}

	// 2. POST /tokenize through the service proxy, answered with a 307 to the
	// serviceaccounts/token endpoint on the same host.
	fo := frontend.Options{API: api, Timeout: 5 * time.Second}
	_, err = fo.Tokenize(ctx, frontend.Target{Namespace: ns, Deployment: "llama", Service: "llama-frontend", Port: "8000"}, frontend.TokenizeRequest{Prompt: "hi"})
	var re *kube.RedirectError
	if !errors.As(err, &re) || re.Status != http.StatusTemporaryRedirect || !strings.HasSuffix(re.To, "/serviceaccounts/victim/token") {
		t.Errorf("tokenize through a redirecting proxy: %v (want a *RedirectError naming serviceaccounts/victim/token)", err)
	}

	// 3. The guard refuses a mutating request before it leaves the process,
	// even one built on the service-proxy client itself.
	before, _ := frontLog.all()
	err = api.Rest.Delete().Namespace(ns).Resource("serviceaccounts").Name("victim").Do(ctx).Error()
	if !errors.Is(err, kube.ErrRequestRefused) {
		t.Errorf("DELETE through the guarded client: %v, want ErrRequestRefused", err)
	}
	err = api.Rest.Post().Namespace(ns).Resource("services").Name("llama-frontend:8000").SubResource("proxy").Suffix("busy_threshold").
		Body([]byte(`{"model":"m","threshold":0}`)).Do(ctx).Error()
	if !errors.Is(err, kube.ErrRequestRefused) || !strings.Contains(err.Error(), "POST") || !strings.Contains(err.Error(), "busy_threshold") {
		t.Errorf("POST /busy_threshold through the guarded client: %v, want ErrRequestRefused naming it", err)
	}
	if after, _ := frontLog.all(); len(after) != len(before) {
		t.Errorf("refused requests reached the wire: %v", after[len(before):])
	}

	// The evidence: what reached the other host, the front and the API server.
	if reqs, _ := attackerLog.all(); len(reqs) != 0 {
		t.Errorf("the other host received %d requests (%v): a redirect was followed", len(reqs), reqs)
	}
	reqs, _ := frontLog.all()
	posts := 0
	for _, r := range reqs {
		switch {
		case strings.HasPrefix(r, "GET "):
		case r == "POST /api/v1/namespaces/"+ns+"/services/llama-frontend:8000/proxy/tokenize":
			posts++
		default:
			t.Errorf("sent %s: only GET and POST .../proxy/tokenize may leave the process", r)
		}
		if strings.Contains(r, "serviceaccounts") {
			t.Errorf("sent %s: the redirect to serviceaccounts/token was followed", r)
		}
	}
	if posts != 1 {
		t.Errorf("POST /tokenize sent %d times, want once (not re-sent to the redirect's target)", posts)
	}
	events, _, err := e.AuditEventsFrom(auditFrom)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range events {
		if ev.IsMutating() && ev.User == kubeenv.AdminUser {
			t.Errorf("the API server saw a mutating request by the operator's identity: %s %s", ev.Verb, ev.RequestURI)
		}
	}
	t.Logf("front saw %d requests (%d POST /tokenize), the other host 0, the audit log %d events and no write", len(reqs), posts, len(events))
}
