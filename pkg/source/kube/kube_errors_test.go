package kube_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source"
)

// goneAfterDiscovery answers the three discovery GETs like a cluster serving
// the Dynamo CRDs and closes every later connection without an answer: the API
// server went away mid-run.
func goneAfterDiscovery(t *testing.T) *httptest.Server {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) > 3 || !strings.HasPrefix(r.URL.Path, "/apis/") || strings.Count(r.URL.Path, "/") != 3 {
			if c, _, err := w.(http.Hijacker).Hijack(); err == nil {
				_ = c.Close()
			}
			return
		}
		w.Header().Set("Content-Type", "application/json")
		gv := strings.TrimPrefix(r.URL.Path, "/apis/")
		res := `[]`
		if gv == "nvidia.com/v1beta1" {
			res = `[{"name":"dynamographdeployments","namespaced":true,"kind":"DynamoGraphDeployment","verbs":["get","list","watch"]}]`
		}
		fmt.Fprintf(w, `{"kind":"APIResourceList","apiVersion":"v1","groupVersion":%q,"resources":%s}`, gv, res)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// collectUnreachableNotes collects namespace inf of context prod from the API
// server at url and returns the bundle and its notes that say something is
// unreachable; a note advising --request-timeout fails the test.
func collectUnreachableNotes(t *testing.T, url string) (*raw.Bundle, []string) {
	t.Helper()
	b, err := source.Collect(context.Background(), source.CollectOptions{RESTConfig: &rest.Config{Host: url, Timeout: time.Second},
		Context: "prod", Namespace: "inf", NoFrontend: true, NoEtcd: true})
	if err != nil {
		t.Fatal(err)
	}
	var notes []string
	for _, n := range b.Notes {
		if strings.Contains(n.Message, "is unreachable") {
			notes = append(notes, n.Message)
		}
		if strings.Contains(n.Message, "raise --request-timeout") {
			t.Errorf("note advises --request-timeout for an unreachable server: %s", n.Message)
		}
	}
	return b, notes
}

// TestCollectAPIServerGoneSaysUnreachable: every LIST meets a closed
// connection; client-go retries the EOF until the request timeout. One note
// says the API server is unreachable, names it and points at the cluster and
// the kubeconfig context once, lists every failed read with what its loss
// means, and does not advise a longer --request-timeout.
func TestCollectAPIServerGoneSaysUnreachable(t *testing.T) {
	srv := goneAfterDiscovery(t)
	b, unreachable := collectUnreachableNotes(t, srv.URL)
	if len(unreachable) != 1 {
		t.Fatalf("want one note for the outage, got %d:\n%s", len(unreachable), strings.Join(unreachable, "\n"))
	}
	note := unreachable[0]
	server := "the API server of context prod (" + srv.URL + ") is unreachable, connection closed without an answer (EOF)"
	for _, want := range []string{server,
		"dynamographdeployments.nvidia.com in namespace inf (the deployments, their kvTransferPolicy and router settings are unknown",
		"pods in namespace inf (the workers, their nodes, readiness and domain labels are unknown",
		"check the cluster is reachable with this kubeconfig and that its current context is the intended cluster (kubectl cluster-info)"} {
		if strings.Count(note, want) != 1 {
			t.Errorf("the note should say %q once:\n%s", want, note)
		}
	}
	if strings.Count(note, "is unreachable") != 1 {
		t.Errorf("the note repeats the outage:\n%s", note)
	}
	src := b.Sources[0]
	if !src.Degraded || !strings.Contains(src.Message, "dynamographdeployments.nvidia.com unreachable") ||
		!strings.HasPrefix(src.Unreachable, server) {
		t.Errorf("source %+v", src)
	}
}

// TestCollectOneUnreachableReadKeepsItsOwnNote: when a single LIST meets a
// closed connection (the others answer), its note names that read, the
// server and the cause, as before the merging of outages.
func TestCollectOneUnreachableReadKeepsItsOwnNote(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/pods") {
			if c, _, err := w.(http.Hijacker).Hijack(); err == nil {
				_ = c.Close()
			}
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if gv := strings.TrimPrefix(r.URL.Path, "/apis/"); strings.Count(r.URL.Path, "/") == 3 && strings.HasPrefix(r.URL.Path, "/apis/") {
			res := `[]`
			if gv == "nvidia.com/v1beta1" {
				res = `[{"name":"dynamographdeployments","namespaced":true,"kind":"DynamoGraphDeployment","verbs":["get","list","watch"]}]`
			}
			fmt.Fprintf(w, `{"kind":"APIResourceList","apiVersion":"v1","groupVersion":%q,"resources":%s}`, gv, res)
			return
		}
		fmt.Fprint(w, `{"kind":"List","apiVersion":"v1","metadata":{},"items":[]}`)
	}))
	t.Cleanup(srv.Close)
	b, got := collectUnreachableNotes(t, srv.URL)
	want := "listing pods in namespace inf failed: the API server of context prod (" + srv.URL + ") is unreachable, connection closed without an answer (EOF)"
	if len(got) != 1 || !strings.HasPrefix(got[0], want) {
		t.Errorf("unreachable notes %q, want one starting with %q", got, want)
	}
	if src := b.Sources[0]; !strings.Contains(src.Message, "pods unreachable") || strings.Contains(src.Message, "dynamographdeployments") || src.Unreachable == "" {
		t.Errorf("source %+v", src)
	}
}

// TestCollectAPIServerRefusedSaysUnreachable: no API server at the address:
// the discovery error says so, with the address.
func TestCollectAPIServerRefusedSaysUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	host := "https://" + ln.Addr().String()
	_ = ln.Close()
	_, err = source.Collect(context.Background(), source.CollectOptions{RESTConfig: &rest.Config{Host: host, Timeout: 5 * time.Second}, Namespace: "inf", NoFrontend: true, NoEtcd: true})
	want := "read API discovery for nvidia.com/v1beta1: the API server (" + host + ") is unreachable, connection refused: check the cluster is reachable"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v\nwant %q", err, want)
	}
}

// TestCollectAPIServerSlowKeepsTimeoutAdvice: a server that answers too
// slowly is a timeout, and the message keeps the --request-timeout advice.
func TestCollectAPIServerSlowKeepsTimeoutAdvice(t *testing.T) {
	srv := slowAPIServer(t, "v1beta1")
	_, err := source.Collect(context.Background(), source.CollectOptions{RESTConfig: &rest.Config{Host: srv.URL, Timeout: 300 * time.Millisecond}, Namespace: "inf", NoFrontend: true, NoEtcd: true})
	if err == nil || !strings.Contains(err.Error(), "the API server did not answer in time") || !strings.Contains(err.Error(), "raise --request-timeout") ||
		strings.Contains(err.Error(), "is unreachable,") {
		t.Errorf("err = %v", err)
	}
}
