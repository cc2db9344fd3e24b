package inspect

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestCheckRequest(t *testing.T) {
	for _, tc := range []struct {
		method, path string
		direct, ok   bool
	}{
		{"GET", "/api/v1/namespaces/a/pods", false, true},
		{"GET", "/apis/nvidia.com/v1alpha1/dynamoworkermetadatas", false, true},
		{"POST", "/api/v1/namespaces/a/services/fe:8000/proxy/tokenize", false, true},
		{"POST", "/api/v1/namespaces/a/services/fe/proxy/query", false, true},
		{"POST", "/k8s/clusters/c-1/api/v1/namespaces/a/services/fe:8000/proxy/tokenize", false, true}, // a server URL with a prefix
		{"POST", "/api/v1/namespaces/a/services/fe:8000/proxy/busy_threshold", false, false},
		{"POST", "/api/v1/namespaces/a/services/fe:8000/proxy/tokenize/x", false, false},
		{"POST", "/api/v1/namespaces/a/serviceaccounts/sa/token", false, false},
		{"POST", "/api/v1/namespaces/a/pods/p/proxy/tokenize", false, false},
		{"POST", "/apis/authentication.k8s.io/v1/tokenreviews", false, false},
		{"DELETE", "/api/v1/namespaces/a/pods/p", false, false},
		{"PUT", "/api/v1/namespaces/a/services/fe:8000/proxy/tokenize", false, false},
		{"PATCH", "/apis/nvidia.com/v1beta1/namespaces/a/dynamographdeployments/d", false, false},
		{"HEAD", "/api", false, false},
		{"GET", "/metrics", true, true},
		{"POST", "/tokenize", true, true},
		{"POST", "/v1/query", true, true},
		{"POST", "/busy_threshold", true, false},
		{"POST", "/v1/chat/completions", true, false},
		{"DELETE", "/tokenize", true, false},
	} {
		allow := apiProxyPOST
		if tc.direct {
			allow = directPOST
		}
		err := checkRequest(tc.method, tc.path, allow, "x")
		if (err == nil) != tc.ok {
			t.Errorf("%s %s (direct %v): %v, want allowed=%v", tc.method, tc.path, tc.direct, err, tc.ok)
		}
		if err != nil && (!errors.Is(err, ErrRequestRefused) || !strings.Contains(err.Error(), tc.method+" "+tc.path)) {
			t.Errorf("%s %s: error %q does not wrap ErrRequestRefused or name the request", tc.method, tc.path, err)
		}
	}
}

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
	o := FrontendOptions{HTTPClient: follows, Timeout: 5 * time.Second,
		Targets: []FrontendTarget{{Namespace: "n", Deployment: "d", URL: front.URL}}}
	res := CollectFrontend(context.Background(), o)
	notes := noteLines(res.Notes)
	if !strings.Contains(notes, "a redirect to "+other.URL+"/x (HTTP 302), which kubectl-dynamo never follows") || strings.Contains(notes, "secret") {
		t.Errorf("notes:\n%s", notes)
	}
	_, err := o.Tokenize(context.Background(), FrontendTarget{URL: front.URL}, TokenizeRequest{Prompt: "hi"})
	if err == nil || !strings.Contains(err.Error(), "never follows") {
		t.Errorf("tokenize: %v", err)
	}
	if hits != 0 {
		t.Errorf("the redirect target received %d requests", hits)
	}
	// The guard also refuses a mutating request on a caller's client.
	c := SafeHTTPClient(follows)
	req, _ := http.NewRequest(http.MethodDelete, front.URL+"/v1/models/m", nil)
	resp, err := c.Do(req)
	if err == nil {
		resp.Body.Close()
	}
	if !errors.Is(err, ErrRequestRefused) {
		t.Errorf("DELETE on the safe client: %v", err)
	}
}
