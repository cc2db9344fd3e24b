package frontend

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/fakefrontend"
	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/fakekube"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/iolimit"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/kube"
)

// wantErr fails unless err is non-nil and contains every substring.
func wantErr(t *testing.T, err error, subs ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one containing %q", subs)
	}
	for _, s := range subs {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q\ndoes not contain %q", err, s)
		}
	}
}

// noMutation fails when the fake received anything but GETs and the two
// read-only POSTs.
func noMutation(t *testing.T, s *fakefrontend.Server) {
	t.Helper()
	if m := s.Mutating(); len(m) > 0 {
		t.Errorf("mutating requests sent: %v", m)
	}
}

// byteTokens is a fake tokenizer: one id per byte, plus the largest u32 id for
// a prompt starting with "MAX", and a chat form that prefixes 1000.
func byteTokens(prompt string, messages json.RawMessage) ([]uint32, error) {
	if messages != nil {
		var msgs []struct{ Content string }
		if err := json.Unmarshal(messages, &msgs); err != nil {
			return nil, err
		}
		out := []uint32{1000}
		for _, m := range msgs {
			for _, b := range []byte(m.Content) {
				out = append(out, uint32(b))
			}
		}
		return out, nil
	}
	var out []uint32
	if strings.HasPrefix(prompt, "MAX") {
		out = append(out, math.MaxUint32)
	}
	for _, b := range []byte(prompt) {
		out = append(out, uint32(b))
	}
	return out, nil
}

func TestTokenizeURL(t *testing.T) {
	no := false
	for _, tc := range []struct {
		name     string
		cfg      fakefrontend.Config
		req      TokenizeRequest
		opts     Options
		want     []uint32
		wantBody string
		wantErr  []string
		is       error
		requests int
	}{
		{name: "prompt", req: TokenizeRequest{Model: "m", Prompt: "MAXab"}, want: []uint32{math.MaxUint32, 'M', 'A', 'X', 'a', 'b'},
			wantBody: `{"model":"m","prompt":"MAXab"}`, requests: 1},
		{name: "empty prompt without model", req: TokenizeRequest{}, want: []uint32{}, wantBody: `{"prompt":""}`, requests: 1},
		{name: "messages", req: TokenizeRequest{Messages: json.RawMessage(` [{"role":"user","content":"hi"}] `), AddSpecialTokens: &no},
			want: []uint32{1000, 'h', 'i'}, wantBody: `{"messages":[{"role":"user","content":"hi"}],"add_generation_prompt":true,"add_special_tokens":false}`, requests: 1},
		{name: "prompt and messages", req: TokenizeRequest{Prompt: "x", Messages: json.RawMessage(`[]`)}, wantErr: []string{"either a prompt or chat messages"}},
		{name: "messages not an array", req: TokenizeRequest{Messages: json.RawMessage(`{"role":"user"}`)}, wantErr: []string{"must be a JSON array"}},
		{name: "no /tokenize", cfg: fakefrontend.Config{Status: map[string]int{"/tokenize": 404}}, req: TokenizeRequest{Prompt: "x"},
			wantErr: []string{"the frontend has no POST /tokenize", "answered HTTP 404", "a Dynamo release before /tokenize", "--tokenizer", "--tokens"}, is: ErrTokenizeUnsupported, requests: 1},
		{name: "405", cfg: fakefrontend.Config{Status: map[string]int{"/tokenize": 405}}, req: TokenizeRequest{Prompt: "x"},
			wantErr: []string{"answered HTTP 405"}, is: ErrTokenizeUnsupported, requests: 1},
		{name: "model not served", cfg: fakefrontend.Config{Models: []string{"a", "b"}}, req: TokenizeRequest{Model: "c", Prompt: "x"},
			wantErr: []string{`does not serve model "c"`, "GET /v1/models", "--tokenizer"}, requests: 1},
		{name: "500", cfg: fakefrontend.Config{Status: map[string]int{"/tokenize": 500}}, req: TokenizeRequest{Prompt: "x"},
			wantErr: []string{"POST /tokenize to the frontend (http://", "HTTP 500 Internal Server Error: injected HTTP 500", "--tokenizer"}, requests: 1},
		{name: "no tokenizer (501)", cfg: fakefrontend.Config{Tokenize: nil}, req: TokenizeRequest{Prompt: "x"},
			wantErr: []string{"cannot tokenize for this model", "no tokenizer configured"}, requests: 1},
		{name: "garbage", cfg: fakefrontend.Config{Garbage: map[string]string{"/tokenize": "<html>"}}, req: TokenizeRequest{Prompt: "x"},
			wantErr: []string{"something that is not a tokenize result", "is http://"}, requests: 1},
		{name: "negative id", cfg: fakefrontend.Config{Garbage: map[string]string{"/tokenize": `{"count":2,"tokens":[1,-2]}`}}, req: TokenizeRequest{Prompt: "x"},
			wantErr: []string{"tokens[1]", `"-2" is not a non-negative integer`}, requests: 1},
		{name: "too large", req: TokenizeRequest{Prompt: strings.Repeat("a", 600)}, opts: Options{MaxTokenizeBytes: 1024},
			wantErr: []string{"too large", "more than 1 KiB"}, is: iolimit.ErrResponseTooLarge, requests: 1},
		{name: "timeout", cfg: fakefrontend.Config{Hang: map[string]bool{"/tokenize": true}}, req: TokenizeRequest{Prompt: "x"}, opts: Options{Timeout: 200 * time.Millisecond},
			wantErr: []string{"no answer within 200ms", "--tokenizer"}, is: context.DeadlineExceeded, requests: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			if cfg.Tokenize == nil && tc.name != "no tokenizer (501)" {
				cfg.Tokenize = byteTokens
			}
			cfg.MaxModelLen = 131072
			s := fakefrontend.New(cfg)
			defer s.Close()
			o := tc.opts
			o.Now = func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }
			tgt := Target{Namespace: "serving", Deployment: "llm", URL: s.URL}
			res, err := o.Tokenize(context.Background(), tgt, tc.req)
			if got := len(s.Requests()); got != tc.requests {
				t.Errorf("%d requests, want %d", got, tc.requests)
			}
			noMutation(t, s)
			if tc.wantErr != nil {
				wantErr(t, err, tc.wantErr...)
				if tc.is != nil && !errors.Is(err, tc.is) {
					t.Errorf("errors.Is(%v) = false", tc.is)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(res.Tokens, tc.want) || res.MaxModelLen != 131072 {
				t.Errorf("tokens %v max len %d, want %v", res.Tokens, res.MaxModelLen, tc.want)
			}
			if res.Source != "frontend POST /tokenize ("+s.URL+")" || !res.At.Equal(o.Now()) {
				t.Errorf("source %q at %v", res.Source, res.At)
			}
			r := s.Requests()[0]
			if r.Method != "POST" || r.Path != "/tokenize" || string(r.Body) != tc.wantBody {
				t.Errorf("sent %s %s %s\nwant body %s", r.Method, r.Path, r.Body, tc.wantBody)
			}
		})
	}
}

func TestDecodeTokenizeAnswer(t *testing.T) {
	for _, tc := range []struct {
		body    string
		want    []uint32
		maxLen  uint64
		wantErr string
	}{
		{body: `{"count":3,"max_model_len":4294967296,"tokens":[0,4294967295,7],"token_strs":["a","b","c"]}`, want: []uint32{0, math.MaxUint32, 7}, maxLen: 1 << 32},
		{body: `{"tokens":[]}`, want: []uint32{}},
		{body: `{"count":null,"max_model_len":null,"tokens":[5]}`, want: []uint32{5}},
		{body: `{"count":1,"tokens":[4294967296]}`, wantErr: "tokens[0]: token id \"4294967296\" does not fit in 32 bits"},
		{body: `{"tokens":[1,2,1.5]}`, wantErr: `tokens[2]: token id "1.5" is not a non-negative integer`},
		{body: `{"tokens":[1e3]}`, wantErr: `tokens[0]`},
		{body: `{"tokens":["7"]}`, wantErr: `tokens[0]`},
		{body: `{"tokens":[null]}`, wantErr: `tokens[0]`},
		{body: `{"count":3,"tokens":[1,2]}`, wantErr: "count 3 but 2 tokens"},
		{body: `{"count":-1,"tokens":[]}`, wantErr: "a bad count"},
		{body: `{"max_model_len":"big","tokens":[]}`, wantErr: "a bad max_model_len"},
		{body: `{"count":0}`, wantErr: "without a tokens array"},
		{body: `{"tokens":{}}`, wantErr: "not a tokenize result"},
		{body: `[1,2]`, wantErr: "not a tokenize result"},
	} {
		t.Run(tc.body, func(t *testing.T) {
			got, maxLen, err := decodeTokenizeAnswer([]byte(tc.body))
			if tc.wantErr != "" {
				wantErr(t, err, tc.wantErr)
				return
			}
			if err != nil || !slices.Equal(got, tc.want) || maxLen != tc.maxLen {
				t.Errorf("got %v %d %v, want %v %d", got, maxLen, err, tc.want, tc.maxLen)
			}
		})
	}
}

// proxyKube is a FakeKube whose service proxy forwards to a fake frontend the
// way the API server does; non-2xx answers become the StatusErrors client-go
// makes of them (the frontend's JSON body is lost on the way).
func proxyKube(s *fakefrontend.Server) *fakekube.FakeKube {
	f := fakekube.NewFakeKube()
	status := func(resp *http.Response, verb, svc string) error {
		return apierrors.NewGenericServerResponse(resp.StatusCode, verb, schema.GroupResource{Resource: "services"}, svc, "unknown", 0, true)
	}
	f.ProxyPost = func(_, svc, port, path string, body []byte, limit int64) ([]byte, error) {
		resp, err := http.Post(s.URL+path, "application/json", bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		if resp.StatusCode > 299 {
			return nil, status(resp, "POST", svc+":"+port)
		}
		return iolimit.ReadAtMost(resp.Body, limit)
	}
	f.ProxyStream = func(ctx context.Context, _, svc, port, path string) (io.ReadCloser, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+path, nil)
		if err != nil {
			return nil, err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode > 299 {
			resp.Body.Close()
			return nil, status(resp, "GET", svc+":"+port)
		}
		return resp.Body, nil
	}
	return f
}

var proxyTarget = Target{Namespace: "serving", Deployment: "llm", Service: "llm-frontend", Port: "http"}

func TestTokenizeServiceProxy(t *testing.T) {
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "services/proxy"}, "llm-frontend:http",
		errors.New(`User "alice" cannot create resource "services/proxy" in API group "" in the namespace "serving"`))
	for _, tc := range []struct {
		name    string
		cfg     fakefrontend.Config
		req     TokenizeRequest
		err     error // returned by the service proxy instead of forwarding
		want    []uint32
		wantErr []string
		is      []error
	}{
		{name: "ok", req: TokenizeRequest{Prompt: "ab"}, want: []uint32{'a', 'b'}},
		{name: "forbidden", req: TokenizeRequest{Prompt: "ab"}, err: forbidden,
			wantErr: []string{"POST /tokenize through the API server's service proxy is forbidden (service serving/llm-frontend:http)", "RBAC needs verb create on services/proxy in namespace serving", "--tokenizer", "--tokens", "--frontend-url"},
			is:      []error{ErrTokenizeForbidden}},
		{name: "no /tokenize or model", cfg: fakefrontend.Config{Models: []string{"a"}}, req: TokenizeRequest{Model: "b", Prompt: "x"},
			wantErr: []string{"the frontend has no POST /tokenize (service serving/llm-frontend:http answered HTTP 404", `or it does not serve model "b"`}, is: []error{ErrTokenizeUnsupported}},
		{name: "service missing", req: TokenizeRequest{Prompt: "x"}, err: apierrors.NewNotFound(schema.GroupResource{Resource: "services"}, "llm-frontend"),
			wantErr: []string{"the Service does not exist", "--tokenizer"}},
		{name: "no endpoints", req: TokenizeRequest{Prompt: "x"}, err: apierrors.NewServiceUnavailable("no endpoints available for service \"llm-frontend:http\""),
			wantErr: []string{"the service proxy answered HTTP 503", "no endpoints available"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.Tokenize = byteTokens
			s := fakefrontend.New(cfg)
			defer s.Close()
			f := proxyKube(s)
			if tc.err != nil {
				f.ProxyPost = func(string, string, string, string, []byte, int64) ([]byte, error) { return nil, tc.err }
			}
			res, err := Options{API: f}.Tokenize(context.Background(), proxyTarget, tc.req)
			if !slices.Equal(f.Calls, []string{"PROXY POST serving/llm-frontend:http/tokenize"}) {
				t.Errorf("calls %v", f.Calls)
			}
			noMutation(t, s)
			if tc.wantErr != nil {
				wantErr(t, err, tc.wantErr...)
				for _, is := range tc.is {
					if !errors.Is(err, is) {
						t.Errorf("errors.Is(%v) = false", is)
					}
				}
				if tc.err != nil && !errors.Is(err, tc.err) {
					t.Errorf("the proxy's error is not wrapped")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(res.Tokens, tc.want) || res.Source != "frontend POST /tokenize (service serving/llm-frontend:http)" {
				t.Errorf("got %v from %q", res.Tokens, res.Source)
			}
		})
	}
	// Without a Kubernetes client the service proxy cannot be used.
	_, err := Options{}.Tokenize(context.Background(), proxyTarget, TokenizeRequest{Prompt: "x"})
	wantErr(t, err, "no Kubernetes client", "--frontend-url", "--tokenizer")
}

// apiServer is a fake API server whose service proxy for serving/llm-frontend:http
// forwards to s; verbs in deny get RBAC's 403.
func apiServer(t *testing.T, s *fakefrontend.Server, deny ...string) *httptest.Server {
	t.Helper()
	prefix := "/api/v1/namespaces/serving/services/llm-frontend:http/proxy"
	proxy := http.StripPrefix(prefix, s.Handler())
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, prefix+"/") {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"services \"x\" not found","reason":"NotFound","details":{"name":"x","kind":"services"},"code":404}`)
			return
		}
		verb := map[string]string{"GET": "get", "POST": "create"}[r.Method]
		if slices.Contains(deny, verb) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"services \"llm-frontend:http\" is forbidden: User \"alice\" cannot %s resource \"services/proxy\" in API group \"\" in the namespace \"serving\"","reason":"Forbidden","details":{"name":"llm-frontend:http","kind":"services"},"code":403}`, verb)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestRESTKubeAPIServiceProxy drives RESTAPI (client-go) through a fake
// API server's service proxy to the fake frontend.
func TestRESTKubeAPIServiceProxy(t *testing.T) {
	s := fakefrontend.New(fakefrontend.Config{Tokenize: byteTokens, MaxModelLen: 8192,
		Sources: []fakefrontend.PlacementSource{{Model: "m", Namespace: "ns", Component: "decode", Endpoint: "generate", BlockSize: 16, Cursor: 9,
			Events: []routecore.RouterEvent{storedEvent(1<<63+1, 0, 1<<62, nil, 1)}}}})
	defer s.Close()
	api, err := kube.NewAPI(&rest.Config{Host: apiServer(t, s).URL})
	if err != nil {
		t.Fatal(err)
	}
	o := Options{API: api}
	res, err := o.Tokenize(context.Background(), proxyTarget, TokenizeRequest{Model: "m", Prompt: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Tokens, []uint32{'h', 'i'}) || res.MaxModelLen != 8192 {
		t.Errorf("tokens %v max len %d", res.Tokens, res.MaxModelLen)
	}
	snap, err := o.ReadPlacements(context.Background(), proxyTarget)
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Sources) != 1 || len(snap.Sources[0].Events) != 1 || snap.Sources[0].Events[0].WorkerID != 1<<63+1 {
		t.Errorf("snapshot %+v", snap)
	}
	if !s.WaitStreamsClosed(1, 10*time.Second) {
		t.Error("the stream through the service proxy was not closed after placement_snapshot_end")
	}
	want := []string{"POST /api/v1/namespaces/serving/services/llm-frontend:http/proxy/tokenize",
		"GET /api/v1/namespaces/serving/services/llm-frontend:http/proxy/v1/kv-cache/placements/stream"}
	if got := api.Log.Requests(); !slices.Equal(got, want) {
		t.Errorf("requests %q\nwant %q", got, want)
	}
	if got := s.Requests(); len(got) != 2 || string(got[0].Body) != `{"model":"m","prompt":"hi"}` {
		t.Errorf("frontend saw %v", got)
	}
	noMutation(t, s)

	// RBAC that allows get but not create on services/proxy.
	api, err = kube.NewAPI(&rest.Config{Host: apiServer(t, s, "create").URL})
	if err != nil {
		t.Fatal(err)
	}
	o.API = api
	_, err = o.Tokenize(context.Background(), proxyTarget, TokenizeRequest{Prompt: "hi"})
	wantErr(t, err, "RBAC needs verb create on services/proxy in namespace serving", "--tokenizer")
	if !errors.Is(err, ErrTokenizeForbidden) || !apierrors.IsForbidden(err) {
		t.Errorf("not ErrTokenizeForbidden and a 403: %v", err)
	}
	if _, err := o.ReadPlacements(context.Background(), proxyTarget); err != nil {
		t.Errorf("placements with get allowed: %v", err)
	}
	api, err = kube.NewAPI(&rest.Config{Host: apiServer(t, s, "get", "create").URL})
	if err != nil {
		t.Fatal(err)
	}
	o.API = api
	_, err = o.ReadPlacements(context.Background(), proxyTarget)
	wantErr(t, err, "GET /v1/kv-cache/placements/stream through the API server's service proxy (service serving/llm-frontend:http) is forbidden: RBAC needs verb get on services/proxy in namespace serving")

	// A missing Service, through the real client.
	_, err = o.Tokenize(context.Background(), Target{Namespace: "serving", Service: "x", Port: "http"}, TokenizeRequest{Prompt: "hi"})
	wantErr(t, err, "the Service does not exist")
}

// storedEvent is a stored event of one block.
func storedEvent(worker uint64, dp uint32, hash uint64, parent *routecore.SequenceHash, id uint64) routecore.RouterEvent {
	return routecore.RouterEvent{WorkerID: routecore.WorkerID(worker), Event: routecore.KvCacheEvent{EventID: id, DpRank: dp,
		Data: routecore.KvCacheEventData{Stored: &routecore.KvCacheStoreData{ParentHash: parent,
			Blocks: []routecore.KvCacheStoredBlock{{BlockHash: routecore.SequenceHash(hash), TokensHash: routecore.LocalBlockHash(^hash)}}}}}}
}

// chainEvents is n stored events of one chain on worker, hashes above 2^53.
func chainEvents(worker uint64, dp uint32, n int) []routecore.RouterEvent {
	var out []routecore.RouterEvent
	var parent *routecore.SequenceHash
	for i := range n {
		h := uint64(1)<<63 | uint64(i)*0x9E3779B97F4A7C15>>1
		out = append(out, storedEvent(worker, dp, h, parent, uint64(i)))
		p := routecore.SequenceHash(h)
		parent = &p
	}
	return out
}

// negativeHashEvent is written by an engine that publishes hashes as i64.
const negativeHashEvent = `{"worker_id":9007199254740993,"event":{"event_id":1,"dp_rank":1,"data":{"stored":{"parent_hash":-2,"blocks":[{"block_hash":-1,"tokens_hash":-9223372036854775808}]}}}}`

func TestReadPlacementsURL(t *testing.T) {
	bigWorker := uint64(1<<63 + 7) // above 2^53
	decode := chainEvents(bigWorker, 0, 150)
	prefill := append(chainEvents(42, 1, 3), routecore.RouterEvent{WorkerID: 42, Event: routecore.KvCacheEvent{EventID: 9, DpRank: 1,
		Data: routecore.KvCacheEventData{Removed: &routecore.KvCacheRemoveData{BlockHashes: []routecore.SequenceHash{math.MaxUint64}}}}})
	parent := routecore.SequenceHash(math.MaxUint64 - 1)
	negative := routecore.RouterEvent{WorkerID: 1<<53 + 1, Event: routecore.KvCacheEvent{EventID: 1, DpRank: 1,
		Data: routecore.KvCacheEventData{Stored: &routecore.KvCacheStoreData{ParentHash: &parent,
			Blocks: []routecore.KvCacheStoredBlock{{BlockHash: math.MaxUint64, TokensHash: 1 << 63}}}}}}
	sources := []fakefrontend.PlacementSource{
		{Model: "qwen", Namespace: "dyn", Component: "decode", Endpoint: "generate", BlockSize: 16, Cursor: 1<<63 + 3, Events: decode},
		{Model: "qwen", Namespace: "dyn", Component: "prefill", Endpoint: "generate", BlockSize: 16, Cursor: 5, Events: prefill,
			RawEvents: []json.RawMessage{json.RawMessage(negativeHashEvent)}},
		{Model: "qwen", Namespace: "dyn", Component: "empty", Endpoint: "generate", BlockSize: 32},
	}
	wantSources := []raw.PlacementSource{
		{Model: "qwen", Namespace: "dyn", Component: "decode", Endpoint: "generate", BlockSize: 16, Cursor: 1<<63 + 3, Events: decode},
		{Model: "qwen", Namespace: "dyn", Component: "prefill", Endpoint: "generate", BlockSize: 16, Cursor: 5, Events: append(slices.Clone(prefill), negative)},
		{Model: "qwen", Namespace: "dyn", Component: "empty", Endpoint: "generate", BlockSize: 32},
	}

	for _, tc := range []struct {
		name         string
		cfg          fakefrontend.Config
		opts         Options
		wantErr      []string
		is           []error
		complete     bool
		errors       []string
		skipped      int
		skippedTypes []string
		disconnect   bool // the client must have closed a stream the server keeps open
	}{
		{name: "complete snapshot", cfg: fakefrontend.Config{SnapshotID: 1<<63 + 1, Sources: sources}, complete: true, disconnect: true},
		{name: "unknown types and pings skipped", cfg: fakefrontend.Config{SnapshotID: 3, Sources: sources, ExtraLines: []string{
			`{"v":1,"type":"ping"}`, ``, `{"v":2,"type":"placement_snapshot_hint","x":[1,2]}`, `{"v":1,"type":"placement_events","events":[]}`, `{"v":1}`}},
			complete: true, skipped: 3, skippedTypes: []string{"(no type)", "placement_events", "placement_snapshot_hint"}, disconnect: true},
		{name: "source errors", cfg: fakefrontend.Config{SnapshotID: 3, Sources: sources, SourceErrors: []fakefrontend.SourceError{
			{Model: "qwen", Namespace: "dyn", Component: "decode", Endpoint: "lora", Reason: "feed_unavailable"}, {Model: "qwen", Reason: "brand_new"}}},
			errors: []string{"qwen (dyn/decode/lora): feed_unavailable (the router's placement feed could not be opened)", "qwen (//): brand_new"}},
		{name: "malformed line", cfg: fakefrontend.Config{Sources: sources, ExtraLines: []string{`{"v":1,"type":"ping"}`, `{"v":1,"type":`}},
			wantErr: []string{"line 3: not a JSON object"}, disconnect: true},
		{name: "events of another snapshot", cfg: fakefrontend.Config{SnapshotID: 7, Sources: sources, ExtraLines: []string{
			`{"v":1,"type":"placement_snapshot_events","snapshot_id":99,"model":"m","namespace":"n","component":"c","endpoint":"e","block_size_tokens":16,"cursor":0,"batch_index":0,"batch_count":1,"events":[]}`}},
			wantErr: []string{"line 2: placement_snapshot_events of snapshot 99 inside snapshot 7"}, disconnect: true},
		{name: "bad event", cfg: fakefrontend.Config{Sources: []fakefrontend.PlacementSource{{Model: "m", BlockSize: 16,
			RawEvents: []json.RawMessage{json.RawMessage(negativeHashEvent), json.RawMessage(`{"worker_id":-1,"event":{"event_id":1,"data":"cleared"}}`)}}}},
			wantErr: []string{"line 2: source m (//): events[1]:", "worker_id must be non-negative"}, is: []error{routecore.ErrMalformedEvent}, disconnect: true},
		{name: "404", cfg: fakefrontend.Config{Status: map[string]int{"/v1/kv-cache/placements/stream": 404}},
			wantErr: []string{"the frontend build has no KV placements stream (GET /v1/kv-cache/placements/stream): http://", "answered HTTP 404", "POST /query"}, is: []error{ErrPlacementsUnsupported}},
		{name: "500", cfg: fakefrontend.Config{Status: map[string]int{"/v1/kv-cache/placements/stream": 500}},
			wantErr: []string{"cannot read the KV placements of the frontend (http://", "HTTP 500 Internal Server Error: injected HTTP 500"}},
		{name: "garbage", cfg: fakefrontend.Config{Garbage: map[string]string{"/v1/kv-cache/placements/stream": "<html><body>hello</body></html>\n"}},
			wantErr: []string{"line 1: not a JSON object"}},
		{name: "never ends", cfg: fakefrontend.Config{Sources: sources, StreamNeverEnds: true}, opts: Options{PlacementTimeout: 300 * time.Millisecond},
			wantErr: []string{"did not reach placement_snapshot_end within 300ms", "(read ", "raise the placement timeout"}, is: []error{context.DeadlineExceeded}, disconnect: true},
		{name: "no answer", cfg: fakefrontend.Config{Hang: map[string]bool{"/v1/kv-cache/placements/stream": true}}, opts: Options{PlacementTimeout: 300 * time.Millisecond},
			wantErr: []string{"did not answer GET /v1/kv-cache/placements/stream within 300ms"}, is: []error{context.DeadlineExceeded}},
		{name: "huge line", cfg: fakefrontend.Config{Sources: sources, HugeLineBytes: 2 << 20}, opts: Options{MaxPlacementLineBytes: 1 << 20},
			wantErr: []string{"line 2 is larger than 1 MiB", "raise the placement size limit"}, is: []error{iolimit.ErrResponseTooLarge}, disconnect: true},
		{name: "snapshot too large", cfg: fakefrontend.Config{Sources: sources}, opts: Options{MaxPlacementBytes: 8 << 10},
			wantErr: []string{"the snapshot is larger than 8 KiB (at line 2)"}, is: []error{iolimit.ErrResponseTooLarge}, disconnect: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := fakefrontend.New(tc.cfg)
			defer s.Close()
			o := tc.opts
			o.Timeout = 100 * time.Millisecond // per-request timeout; the snapshot read has its own
			if o.PlacementTimeout == 0 {
				o.PlacementTimeout = time.Minute
			}
			tgt := Target{Namespace: "serving", Deployment: "llm", URL: s.URL}
			snap, err := o.ReadPlacements(context.Background(), tgt)
			if tc.disconnect && !s.WaitStreamsClosed(1, 10*time.Second) {
				t.Error("the fake frontend did not see the client close the stream")
			}
			if got := s.Requests(); len(got) != 1 || got[0].String() != "GET /v1/kv-cache/placements/stream" {
				t.Errorf("requests %v", got)
			}
			noMutation(t, s)
			if tc.wantErr != nil {
				wantErr(t, err, tc.wantErr...)
				for _, is := range tc.is {
					if !errors.Is(err, is) {
						t.Errorf("errors.Is(%v) = false", is)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if snap.SnapshotID != tc.cfg.SnapshotID || snap.Complete != tc.complete {
				t.Errorf("snapshot %d complete %v", snap.SnapshotID, snap.Complete)
			}
			if !reflect.DeepEqual(snap.Sources, wantSources) {
				for i := range min(len(snap.Sources), len(wantSources)) {
					if !reflect.DeepEqual(snap.Sources[i], wantSources[i]) {
						t.Errorf("source %d differs: %d events, want %d", i, len(snap.Sources[i].Events), len(wantSources[i].Events))
					}
				}
				t.Fatalf("%d sources, want %d", len(snap.Sources), len(wantSources))
			}
			if !slices.Equal(snap.Errors, tc.errors) || snap.Skipped != tc.skipped || !slices.Equal(snap.SkippedTypes, tc.skippedTypes) {
				t.Errorf("errors %q skipped %d %q", snap.Errors, snap.Skipped, snap.SkippedTypes)
			}
			if snap.Source != "frontend GET /v1/kv-cache/placements/stream ("+s.URL+")" || snap.Bytes == 0 || snap.At.IsZero() {
				t.Errorf("source %q bytes %d at %v", snap.Source, snap.Bytes, snap.At)
			}
		})
	}
}

// TestPlacementReaderLines feeds the reader hand-written streams.
func TestPlacementReaderLines(t *testing.T) {
	begin := `{"v":1,"type":"placement_snapshot_begin","snapshot_id":18446744073709551615,"complete":false}`
	end := `{"v":1,"type":"placement_snapshot_end","snapshot_id":18446744073709551615,"complete":true,"cursor":[]}`
	batch := func(src string, index, count int, extra string) string {
		return fmt.Sprintf(`{"v":1,"type":"placement_snapshot_events","snapshot_id":18446744073709551615,"model":"m","namespace":"n","component":%q,"endpoint":"e","block_size_tokens":16,"cursor":4,"batch_index":%d,"batch_count":%d,"events":[]%s}`, src, index, count, extra)
	}
	for _, tc := range []struct {
		name    string
		lines   []string
		sources int
		wantErr string
	}{
		{name: "minimal", lines: []string{begin, end}},
		{name: "end without newline", lines: []string{begin, batch("a", 0, 2, ""), batch("a", 1, 2, ""), batch("b", 0, 1, ""), end + "<EOF>"}, sources: 2},
		{name: "crlf and blank lines", lines: []string{begin + "\r", "", "  ", batch("a", 0, 1, "") + "\r", end + "\r"}, sources: 1},
		{name: "extra fields", lines: []string{begin, batch("a", 0, 1, `,"residency":"worker","new":{"x":[1]}`), end}, sources: 1},
		{name: "empty stream", lines: []string{"<EOF>"}, wantErr: "ended after 0 lines without placement_snapshot_begin"},
		{name: "ends before end", lines: []string{begin, batch("a", 0, 1, "")}, wantErr: "the stream ended after 2 lines before placement_snapshot_end"},
		{name: "cut mid-line", lines: []string{begin, `{"v":1,"type":"placement_snap<EOF>`}, wantErr: "line 2: the stream ended in the middle of a line"},
		{name: "events before begin", lines: []string{batch("a", 0, 1, ""), begin, end}, wantErr: "line 1: placement_snapshot_events before placement_snapshot_begin"},
		{name: "two begins", lines: []string{begin, begin, end}, wantErr: "line 2: a second placement_snapshot_begin"},
		{name: "missing batch", lines: []string{begin, batch("a", 0, 2, ""), end}, wantErr: "line 3: the snapshot ended after 1 of 2 batches of source m (n/a/e)"},
		{name: "batch out of order", lines: []string{begin, batch("a", 0, 3, ""), batch("a", 2, 3, ""), end}, wantErr: "line 3: source m (n/a/e): batch 2 of 3 after 1 of 3 batches"},
		{name: "starts mid-way", lines: []string{begin, batch("a", 1, 2, ""), end}, wantErr: "source m (n/a/e) starts at batch 1 of 2"},
		{name: "index beyond count", lines: []string{begin, batch("a", 2, 2, ""), end}, wantErr: "batch_index 2 is not below batch_count 2"},
		{name: "no block size", lines: []string{begin, strings.Replace(batch("a", 0, 1, ""), `"block_size_tokens":16,`, "", 1), end}, wantErr: "has no valid block_size_tokens"},
		{name: "float snapshot id", lines: []string{`{"type":"placement_snapshot_begin","snapshot_id":1.5}`, end}, wantErr: "line 1: placement_snapshot_begin without a valid snapshot_id"},
		{name: "end of another snapshot", lines: []string{begin, strings.Replace(end, "18446744073709551615", "1", 1)}, wantErr: "placement_snapshot_end of snapshot 1 inside snapshot 18446744073709551615"},
		{name: "events not an array", lines: []string{begin, strings.Replace(batch("a", 0, 1, ""), `"events":[]`, `"events":{}`, 1), end}, wantErr: "line 2: malformed placement_snapshot_events"},
		{name: "not an object", lines: []string{`[1,2]`}, wantErr: "line 1: not a JSON object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stream := strings.Join(tc.lines, "\n") + "\n"
			stream = strings.Replace(stream, "<EOF>\n", "", 1)
			snap, err := newPlacementReader(strings.NewReader(stream), 1<<20, 1<<16).read()
			if tc.wantErr != "" {
				wantErr(t, err, tc.wantErr)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if snap.SnapshotID != math.MaxUint64 || !snap.Complete || len(snap.Sources) != tc.sources {
				t.Errorf("snapshot %d complete %v with %d sources", snap.SnapshotID, snap.Complete, len(snap.Sources))
			}
		})
	}
}

// TestReadPlacementsServiceProxy reads the stream through the API service
// proxy, including a body that ignores cancellation.
func TestReadPlacementsServiceProxy(t *testing.T) {
	s := fakefrontend.New(fakefrontend.Config{Sources: []fakefrontend.PlacementSource{{Model: "m", BlockSize: 64, Events: chainEvents(1<<62, 2, 70)}}})
	defer s.Close()
	f := proxyKube(s)
	snap, err := Options{API: f}.ReadPlacements(context.Background(), proxyTarget)
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Sources) != 1 || !reflect.DeepEqual(snap.Sources[0].Events, chainEvents(1<<62, 2, 70)) || snap.Source != "frontend GET /v1/kv-cache/placements/stream (service serving/llm-frontend:http)" {
		t.Errorf("snapshot from %q: %d sources", snap.Source, len(snap.Sources))
	}
	if !s.WaitStreamsClosed(1, 10*time.Second) {
		t.Error("stream not closed after placement_snapshot_end")
	}
	if !slices.Equal(f.Calls, []string{"PROXY STREAM serving/llm-frontend:http/v1/kv-cache/placements/stream"}) {
		t.Errorf("calls %v", f.Calls)
	}
	noMutation(t, s)

	// A 404 through the proxy.
	s404 := fakefrontend.New(fakefrontend.Config{Status: map[string]int{"/v1/kv-cache/placements/stream": 404}})
	defer s404.Close()
	_, err = Options{API: proxyKube(s404)}.ReadPlacements(context.Background(), proxyTarget)
	if !errors.Is(err, ErrPlacementsUnsupported) {
		t.Errorf("404 through the proxy: %v", err)
	}

	// A body that never delivers and ignores the context: closing it on the
	// deadline still ends the read.
	pr, pw := io.Pipe()
	defer pw.Close()
	f = fakekube.NewFakeKube()
	go func() { _, _ = pw.Write([]byte(`{"v":1,"type":"placement_snapshot_begin","snapshot_id":1}` + "\n")) }()
	f.ProxyStream = func(context.Context, string, string, string, string) (io.ReadCloser, error) { return pr, nil }
	_, err = Options{API: f, PlacementTimeout: 200 * time.Millisecond}.ReadPlacements(context.Background(), proxyTarget)
	wantErr(t, err, "did not reach placement_snapshot_end within 200ms", "read 1 lines")

	// The caller's cancellation is reported as such.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = Options{API: proxyKube(s)}.ReadPlacements(ctx, proxyTarget)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

func TestQueryIndexer(t *testing.T) {
	big := routecore.WorkerID(1<<63 + 99) // above 2^53
	scores := map[routecore.WorkerWithDpRank]uint64{{WorkerID: big}: 128, {WorkerID: big, DpRank: 1}: 64, {WorkerID: math.MaxUint64, DpRank: 7}: 16}
	for _, tc := range []struct {
		name     string
		cfg      fakefrontend.Config
		q        IndexerQuery
		opts     IndexerOptions
		baseURL  string // "" is the fake's URL
		wantBody string
		want     map[routecore.WorkerWithDpRank]uint64
		wantErr  []string
		requests int
	}{
		{name: "scores", cfg: fakefrontend.Config{Scores: scores}, q: IndexerQuery{TokenIDs: []uint32{1, math.MaxUint32}, ModelName: "qwen"},
			wantBody: `{"token_ids":[1,4294967295],"model_name":"qwen"}`, want: scores, requests: 1},
		{name: "routing group, lora and salt", cfg: fakefrontend.Config{Scores: scores, IndexerModels: []string{"qwen"}},
			q:        IndexerQuery{ModelName: "qwen", RoutingGroup: "g1", LoraName: "ad", CacheSalt: "s"},
			wantBody: `{"token_ids":[],"model_name":"qwen","routing_group":"g1","lora_name":"ad","cache_salt":"s"}`, want: scores, requests: 1},
		{name: "no match", cfg: fakefrontend.Config{}, q: IndexerQuery{TokenIDs: []uint32{1}, ModelName: "qwen"},
			wantBody: `{"token_ids":[1],"model_name":"qwen"}`, want: map[routecore.WorkerWithDpRank]uint64{}, requests: 1},
		{name: "unknown model", cfg: fakefrontend.Config{IndexerModels: []string{"other"}}, q: IndexerQuery{ModelName: "qwen"},
			wantErr: []string{"answered HTTP 404 to POST /query (no indexer for model=qwen routing_group=default)", `no index for model "qwen" in routing group "default"`, "GET /workers"}, requests: 1},
		{name: "500", cfg: fakefrontend.Config{Status: map[string]int{"/query": 500}}, q: IndexerQuery{ModelName: "qwen"},
			wantErr: []string{"answered POST /query with HTTP 500 Internal Server Error: injected HTTP 500"}, requests: 1},
		{name: "405", cfg: fakefrontend.Config{Status: map[string]int{"/query": 405}}, q: IndexerQuery{ModelName: "qwen"},
			wantErr: []string{"has no POST /query (HTTP 405): it is not a Dynamo KV indexer"}, requests: 1},
		{name: "garbage", cfg: fakefrontend.Config{Garbage: map[string]string{"/query": "ok"}}, q: IndexerQuery{ModelName: "qwen"},
			wantErr: []string{"not a JSON object", "is it a Dynamo KV indexer"}, requests: 1},
		{name: "big score values", cfg: fakefrontend.Config{ScoresJSON: `{"scores":{"18446744073709551615":{"0":18446744073709551615}}}`}, q: IndexerQuery{ModelName: "m"},
			want: map[routecore.WorkerWithDpRank]uint64{{WorkerID: math.MaxUint64}: math.MaxUint64}, wantBody: `{"token_ids":[],"model_name":"m"}`, requests: 1},
		{name: "too large", cfg: fakefrontend.Config{Scores: scores}, q: IndexerQuery{ModelName: "m"}, opts: IndexerOptions{MaxBytes: 16},
			wantErr: []string{"too large", "more than 16 bytes"}, requests: 1},
		{name: "timeout", cfg: fakefrontend.Config{Hang: map[string]bool{"/query": true}}, q: IndexerQuery{ModelName: "m"}, opts: IndexerOptions{Timeout: 200 * time.Millisecond},
			wantErr: []string{"did not answer POST /query within 200ms"}, requests: 1},
		{name: "no model", q: IndexerQuery{TokenIDs: []uint32{1}}, wantErr: []string{"without a model name"}},
		{name: "not http", baseURL: "ftp://indexer", q: IndexerQuery{ModelName: "m"}, wantErr: []string{`the KV indexer URL "ftp://indexer" is not an http(s) URL`}},
		{name: "unreachable, credentials redacted", baseURL: "http://user:hunter2secret@127.0.0.1:1/base", q: IndexerQuery{ModelName: "m"},
			wantErr: []string{"cannot reach the KV indexer at http://user:", "check the URL"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := fakefrontend.New(tc.cfg)
			defer s.Close()
			base := tc.baseURL
			if base == "" {
				base = s.URL
			}
			o := tc.opts
			o.Now = func() time.Time { return time.Unix(1e9, 0) }
			res, err := QueryIndexer(context.Background(), nil, base, tc.q, o)
			if got := len(s.Requests()); got != tc.requests {
				t.Errorf("%d requests, want %d", got, tc.requests)
			}
			noMutation(t, s)
			if tc.wantErr != nil {
				wantErr(t, err, tc.wantErr...)
				if strings.Contains(err.Error(), "hunter2") {
					t.Errorf("credentials leaked: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(res.Tokens, tc.want) {
				t.Errorf("scores %v\nwant %v", res.Tokens, tc.want)
			}
			if res.Source != "KV indexer POST /query ("+s.URL+")" || !res.At.Equal(time.Unix(1e9, 0)) {
				t.Errorf("source %q at %v", res.Source, res.At)
			}
			if r := s.Requests()[0]; r.String() != "POST /query" || string(r.Body) != tc.wantBody {
				t.Errorf("sent %v %s\nwant %s", r, r.Body, tc.wantBody)
			}
		})
	}
}

func TestQueryIndexerRedirects(t *testing.T) {
	other := fakefrontend.New(fakefrontend.Config{})
	defer other.Close()
	redirect := func(to string) *httptest.Server {
		return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, to+"/query", http.StatusTemporaryRedirect)
		}))
	}
	srv := redirect(other.URL)
	defer srv.Close()
	_, err := QueryIndexer(context.Background(), nil, srv.URL, IndexerQuery{ModelName: "m"}, IndexerOptions{})
	wantErr(t, err, "answered POST /query with a redirect to "+other.URL+"/query (HTTP 307), which kubectl-dynamo never follows: nothing was sent there")
	// A caller's client, even one that would follow redirects, follows none.
	follows := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return nil }}
	_, err = QueryIndexer(context.Background(), follows, srv.URL, IndexerQuery{ModelName: "m"}, IndexerOptions{})
	wantErr(t, err, "never follows")
	if n := len(other.Requests()); n != 0 {
		t.Errorf("the POST was re-sent to another host (%d requests)", n)
	}
}

func TestDecodeIndexerScores(t *testing.T) {
	for _, tc := range []struct {
		body    string
		want    map[routecore.WorkerWithDpRank]uint64
		wantErr string
	}{
		{body: `{"scores":{"9007199254740993":{"0":32,"1":16}},"frequencies":[2,1],"instances":{}}`,
			want: map[routecore.WorkerWithDpRank]uint64{{WorkerID: 9007199254740993}: 32, {WorkerID: 9007199254740993, DpRank: 1}: 16}},
		{body: `{"scores":null,"tree_sizes":{}}`, want: map[routecore.WorkerWithDpRank]uint64{}},
		{body: `{"scores":{"-1":{"0":1}}}`, wantErr: `worker id "-1" that is not a u64 decimal`},
		{body: `{"scores":{"18446744073709551616":{"0":1}}}`, wantErr: `worker id "18446744073709551616"`},
		{body: `{"scores":{"1":{"4294967296":1}}}`, wantErr: `dp rank "4294967296" of worker 1`},
		{body: `{"scores":{"1":{"0":1.5}}}`, wantErr: "a bad score for worker 1 dp rank 0: 1.5"},
		{body: `{"scores":{"1":{"0":"7"}}}`, wantErr: `a bad score for worker 1 dp rank 0: "7"`},
		{body: `{"scores":{"1":{"0":-3}}}`, wantErr: "a bad score"},
		{body: `{"scores":[1]}`, wantErr: "scores that are not"},
		{body: `{"frequencies":[]}`, wantErr: "an answer without scores"},
		{body: `null`, wantErr: "not a JSON object"},
	} {
		t.Run(tc.body, func(t *testing.T) {
			got, err := decodeIndexerScores([]byte(tc.body))
			if tc.wantErr != "" {
				wantErr(t, err, tc.wantErr)
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %v %v, want %v", got, err, tc.want)
			}
		})
	}
}
