package kube_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/kube"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/fakekube"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/frontend"
)

// TestDirectClientNeverFollows: --frontend-url and the indexer URL, with the
// caller's own client (which would follow anything), a 302 to another host
// and a 307 for a POST are reported, and nothing reaches the target.
func TestDirectClientNeverFollows(t *testing.T) {
	var hits int
	other := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits++ }))
	defer other.Close()
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", other.URL+"/x?secret=1")
		w.WriteHeader(http.StatusFound)
	}))
	defer front.Close()
	follows := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return nil }}
	o := frontend.Options{HTTPClient: follows, Timeout: 5 * time.Second,
		Targets: []frontend.Target{{Namespace: "n", Deployment: "d", URL: front.URL}}}
	res := frontend.Collect(context.Background(), o)
	notes := fakekube.NoteLines(res.Notes)
	if !strings.Contains(notes, "a redirect to "+other.URL+"/x (HTTP 302), which kubectl-dynamo never follows") || strings.Contains(notes, "secret") {
		t.Errorf("notes:\n%s", notes)
	}
	_, err := o.Tokenize(context.Background(), frontend.Target{URL: front.URL}, frontend.TokenizeRequest{Prompt: "hi"})
	if err == nil || !strings.Contains(err.Error(), "never follows") {
		t.Errorf("tokenize: %v", err)
	}
	if hits != 0 {
		t.Errorf("the redirect target received %d requests", hits)
	}
	// The guard also refuses a mutating request on a caller's client.
	c := kube.SafeHTTPClient(follows)
	req, _ := http.NewRequest(http.MethodDelete, front.URL+"/v1/models/m", nil)
	resp, err := c.Do(req)
	if err == nil {
		resp.Body.Close()
	}
	if !errors.Is(err, kube.ErrRequestRefused) {
		t.Errorf("DELETE on the safe client: %v", err)
	}
}
