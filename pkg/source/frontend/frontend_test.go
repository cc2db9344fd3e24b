package frontend

import (
	"context"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/fakefrontend"
	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/fakekube"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/kube"
)

func TestCollectFrontendURL(t *testing.T) {
	for _, tc := range []struct {
		mode       string
		metrics    bool
		busy       bool
		degraded   bool
		wantNote   string
		maxMetrics int64
	}{
		{mode: "ok", metrics: true, busy: true},
		{mode: "old", metrics: true, wantNote: "has no GET /busy_threshold (older Dynamo, or the admin API disabled): busy thresholds are taken from the frontend's args and env"},
		{mode: "badjson", metrics: true, wantNote: "answered /busy_threshold with invalid JSON"},
		{mode: "500", degraded: true, wantNote: "cannot read /metrics from the frontend of inf/llama (http://"},
		{mode: "garbage", degraded: true, wantNote: "is not Prometheus text (line 1)"},
		{mode: "oversized", degraded: true, wantNote: "response too large: more than 1 KiB", maxMetrics: 1024},
		{mode: "slow", degraded: true, wantNote: "no answer within 200ms"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			fs := &fakefrontend.FrontendServer{}
			srv := httptest.NewServer(fs.Handler(tc.mode))
			defer srv.Close()
			r := Collect(context.Background(), Options{
				Targets:         []Target{{Namespace: "inf", Deployment: "llama", URL: srv.URL}},
				Timeout:         200 * time.Millisecond,
				MaxMetricsBytes: tc.maxMetrics,
			})
			if got := len(r.Metrics) == 1; got != tc.metrics {
				t.Errorf("metrics read = %v, want %v", got, tc.metrics)
			}
			if got := len(r.BusyThresholds) == 1; got != tc.busy {
				t.Errorf("busy thresholds read = %v, want %v", got, tc.busy)
			}
			if tc.metrics && r.Metrics[0].Text != fakefrontend.SampleMetrics {
				t.Errorf("metrics text changed")
			}
			if tc.busy && r.BusyThresholds[0].JSON != fakefrontend.SampleBusy {
				t.Errorf("busy JSON changed")
			}
			if r.Source.Degraded != tc.degraded {
				t.Errorf("degraded = %v, want %v (%s)", r.Source.Degraded, tc.degraded, r.Source.Message)
			}
			if tc.wantNote != "" {
				fakekube.WantNotes(t, r.Notes, tc.wantNote)
			} else if len(r.Notes) > 0 {
				t.Errorf("unexpected notes:\n%s", fakekube.NoteLines(r.Notes))
			}
			if r.Requests != 2 {
				t.Errorf("requests = %d", r.Requests)
			}
			fs.Mu.Lock()
			defer fs.Mu.Unlock()
			for _, req := range fs.Reqs {
				if !strings.HasPrefix(req, "GET ") {
					t.Errorf("non-GET request to the frontend: %s", req)
				}
			}
		})
	}
}

func TestCollectFrontendProxyAndTargets(t *testing.T) {
	f := fakekube.FakeCluster(1)
	f.Proxy = func(ns, svc, port, path string) ([]byte, error) {
		if path == "/metrics" {
			return []byte(fakefrontend.SampleMetrics), nil
		}
		return []byte(fakefrontend.SampleBusy), nil
	}
	r, err := kube.Collect(context.Background(), kube.Options{API: f, Namespace: "inf"})
	if err != nil {
		t.Fatal(err)
	}
	targets, notes := Targets(r.Objects)
	if len(targets) != 1 || targets[0].Service != "llama-frontend" || targets[0].Port != "http" || targets[0].Deployment != "llama" {
		t.Errorf("targets = %+v", targets)
	}
	fakekube.WantNotes(t, notes, "no frontend Service found for inf/other")
	fr := Collect(context.Background(), Options{API: f, Targets: targets})
	if len(fr.Metrics) != 1 || len(fr.BusyThresholds) != 1 || fr.Source.Degraded {
		t.Errorf("proxy read: %+v", fr)
	}
	if fr.Metrics[0].Source != "service inf/llama-frontend:http" {
		t.Errorf("source = %q", fr.Metrics[0].Source)
	}
	if !slices.Contains(f.Calls, "PROXY inf/llama-frontend:http/metrics") || !slices.Contains(f.Calls, "PROXY inf/llama-frontend:http/busy_threshold") {
		t.Errorf("calls = %v", f.Calls)
	}

	// No endpoints: a note, not an error.
	f.Proxy = nil
	fr = Collect(context.Background(), Options{API: f, Targets: targets})
	if !fr.Source.Degraded {
		t.Error("not degraded")
	}
	fakekube.WantNotes(t, fr.Notes, "the service proxy answered HTTP 503 (no ready endpoint, or the frontend is down)")
}

func TestServicePort(t *testing.T) {
	for _, tc := range []struct {
		ports []any
		want  string
	}{
		{[]any{map[string]any{"name": "grpc", "port": int64(9000)}, map[string]any{"name": "http", "port": int64(8080)}}, "http"},
		{[]any{map[string]any{"name": "web", "port": int64(8000)}, map[string]any{"name": "x", "port": int64(1)}}, "web"},
		{[]any{map[string]any{"port": int64(8000)}, map[string]any{"port": int64(1)}}, "8000"},
		{[]any{map[string]any{"port": int64(9999)}}, "9999"},
		{nil, "8000"},
	} {
		u := &raw.Service{Spec: map[string]any{"ports": tc.ports}}
		if got := servicePort(u); got != tc.want {
			t.Errorf("servicePort(%v) = %q, want %q", tc.ports, got, tc.want)
		}
	}
}

func TestNotPrometheusText(t *testing.T) {
	if line, bad := NotPrometheusText([]byte(fakefrontend.SampleMetrics)); bad {
		t.Errorf("sample rejected at line %d", line)
	}
	for _, s := range []string{"{\"a\":1}", "hello world", "metric{a=\"b\"}"} {
		if _, bad := NotPrometheusText([]byte(s)); !bad {
			t.Errorf("%q accepted", s)
		}
	}
}
