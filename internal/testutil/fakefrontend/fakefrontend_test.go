package fakefrontend

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/tokenizer"
)

func post(t *testing.T, url, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestTokenizeWithRealTokenizer plugs pkg/tokenizer into the fake, the way
// tests of explain-route do.
func TestTokenizeWithRealTokenizer(t *testing.T) {
	tok, err := tokenizer.Load("../../../pkg/tokenizer/testdata/toy_bytelevel.json")
	if err != nil {
		t.Fatal(err)
	}
	s := New(Config{MaxModelLen: 32768, Models: []string{"toy"}, Tokenize: func(prompt string, messages json.RawMessage) ([]uint32, error) {
		if messages != nil {
			return nil, errors.New("no chat template")
		}
		return tok.Encode(prompt, true)
	}})
	defer s.Close()
	want, err := tok.Encode("hello world", true)
	if err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name, body string
		code       int
		contains   string
	}{
		{"prompt", `{"model":"toy","prompt":"hello world"}`, 200, `"max_model_len":32768`},
		{"token strs", `{"prompt":"hello world","return_token_strs":true}`, 200, `"token_strs":["t`},
		{"unknown model", `{"model":"other","prompt":"x"}`, 404, `"message":"Model not found"`},
		{"messages fail", `{"messages":[{"role":"user","content":"x"}]}`, 500, "no chat template"},
		{"neither form", `{"model":"toy"}`, 422, "untagged enum"},
		{"bad json", `{`, 400, "parse"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := post(t, s.URL+PathTokenize, tc.body)
			if code != tc.code || !strings.Contains(body, tc.contains) {
				t.Fatalf("got %d %s, want %d containing %q", code, body, tc.code, tc.contains)
			}
			if code != 200 {
				return
			}
			var ans struct {
				Count  int      `json:"count"`
				Tokens []uint32 `json:"tokens"`
			}
			if err := json.Unmarshal([]byte(body), &ans); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ans.Tokens, want) || ans.Count != len(want) {
				t.Errorf("tokens %v (count %d), want %v", ans.Tokens, ans.Count, want)
			}
		})
	}
	if code, _ := get(t, s.URL+PathTokenize); code != http.StatusMethodNotAllowed {
		t.Errorf("GET /tokenize = %d, want 405", code)
	}
	if m := s.Mutating(); len(m) != 0 {
		t.Errorf("mutating requests recorded: %v", m)
	}
	if n := len(s.Requests()); n != 7 {
		t.Errorf("recorded %d requests, want 7", n)
	}
	if r := s.Requests()[0]; r.Method != "POST" || r.Path != PathTokenize || !strings.Contains(string(r.Body), "hello world") {
		t.Errorf("first request recorded as %v %q", r, r.Body)
	}
}

func TestMetricsBusyAndFaults(t *testing.T) {
	s := New(Config{
		Metrics:       "x_total 1\n",
		BusyThreshold: `{"thresholds":[]}`,
		Status:        map[string]int{"/tokenize": 404, PathQuery: 503},
		Garbage:       map[string]string{"/busy_threshold": "<html>"},
	})
	defer s.Close()
	if code, body := get(t, s.URL+PathMetrics); code != 200 || body != "x_total 1\n" {
		t.Errorf("/metrics = %d %q", code, body)
	}
	if code, body := get(t, s.URL+PathBusyThreshold); code != 200 || body != "<html>" {
		t.Errorf("/busy_threshold = %d %q", code, body)
	}
	if code, body := post(t, s.URL+PathTokenize, `{"prompt":"x"}`); code != 404 || body != "" {
		t.Errorf("/tokenize = %d %q, want an empty 404", code, body)
	}
	if code, body := post(t, s.URL+PathQuery, `{}`); code != 503 || !strings.Contains(body, "injected") {
		t.Errorf("/query = %d %q", code, body)
	}
	if code, _ := post(t, s.URL+PathMetrics, `{}`); code != 405 {
		t.Errorf("POST /metrics = %d", code)
	}
	if code, _ := get(t, s.URL+"/nope"); code != 404 {
		t.Errorf("unknown path = %d", code)
	}
	m := s.Mutating()
	if len(m) != 1 || m[0].String() != "POST /metrics" {
		t.Errorf("Mutating() = %v, want the POST /metrics", m)
	}
}

func TestQueryScores(t *testing.T) {
	big := routecore.WorkerID(1<<63 + 12345) // above 2^53
	s := New(Config{
		IndexerModels: []string{"m"},
		Scores: map[routecore.WorkerWithDpRank]uint64{
			{WorkerID: big, DpRank: 0}: 64, {WorkerID: big, DpRank: 3}: 32, {WorkerID: 7}: 16,
		},
	})
	defer s.Close()
	code, body := post(t, s.URL+PathQuery, `{"token_ids":[1,2,3],"model_name":"m"}`)
	want := `{"scores":{"7":{"0":16},"9223372036854788153":{"0":64,"3":32}},"frequencies":[],"instances":{}}`
	if code != 200 || body != want {
		t.Errorf("got %d %s\nwant %s", code, body, want)
	}
	code, body = post(t, s.URL+PathQuery, `{"token_ids":[1],"model_name":"x","routing_group":"g"}`)
	if code != 404 || !strings.Contains(body, "no indexer for model=x routing_group=g") {
		t.Errorf("unknown model: %d %s", code, body)
	}
}

type streamLine struct {
	Type       string            `json:"type"`
	SnapshotID uint64            `json:"snapshot_id"`
	Complete   bool              `json:"complete"`
	Model      string            `json:"model"`
	Cursor     json.RawMessage   `json:"cursor"`
	BatchIndex int               `json:"batch_index"`
	BatchCount int               `json:"batch_count"`
	BlockSize  int               `json:"block_size_tokens"`
	Events     []json.RawMessage `json:"events"`
	Reason     string            `json:"reason"`
}

func cleared(worker routecore.WorkerID, id uint64) routecore.RouterEvent {
	return routecore.RouterEvent{WorkerID: worker, Event: routecore.KvCacheEvent{EventID: id, Data: routecore.KvCacheEventData{Cleared: true}}}
}

func TestPlacementsStream(t *testing.T) {
	var events []routecore.RouterEvent
	for i := range 130 {
		events = append(events, cleared(routecore.WorkerID(1<<60+i), uint64(i)))
	}
	s := New(Config{
		SnapshotID: 7,
		Sources: []PlacementSource{
			{Model: "m", Namespace: "ns", Component: "decode", Endpoint: "generate", BlockSize: 16, Cursor: 41, Events: events},
			{Model: "m", Namespace: "ns", Component: "prefill", Endpoint: "generate", BlockSize: 16, Cursor: 3},
		},
		ExtraLines:   []string{`{"v":1,"type":"ping"}`},
		LiveInterval: 5 * time.Millisecond,
	})
	defer s.Close()
	resp, err := http.Get(s.URL + PathPlacements)
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/x-ndjson" {
		t.Errorf("content type %q", ct)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	var lines []streamLine
	for sc.Scan() {
		var l streamLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("line %d: %v", len(lines)+1, err)
		}
		lines = append(lines, l)
		if len(lines) == 10 { // a few lines of the live tail
			break
		}
	}
	resp.Body.Close()
	var types []string
	for _, l := range lines {
		types = append(types, l.Type)
	}
	want := []string{"placement_snapshot_begin", "ping", "placement_snapshot_events", "placement_snapshot_events", "placement_snapshot_events",
		"placement_snapshot_events", "placement_snapshot_end", "placement_events", "ping", "placement_events"}
	if !reflect.DeepEqual(types, want) {
		t.Fatalf("line types %v\nwant %v", types, want)
	}
	for i, w := range []struct{ events, index, count int }{{64, 0, 3}, {64, 1, 3}, {2, 2, 3}, {0, 0, 1}} {
		l := lines[2+i]
		if len(l.Events) != w.events || l.BatchIndex != w.index || l.BatchCount != w.count || l.SnapshotID != 7 || l.BlockSize != 16 {
			t.Errorf("batch line %d: %d events, batch %d of %d, snapshot %d, block size %d; want %+v", i, len(l.Events), l.BatchIndex, l.BatchCount, l.SnapshotID, l.BlockSize, w)
		}
	}
	if c := string(lines[5].Cursor); c != "3" {
		t.Errorf("empty source: cursor %s", c)
	}
	if got, _ := routecore.DecodeRouterEvent(lines[2].Events[5]); !reflect.DeepEqual(got, events[5]) {
		t.Errorf("event 5 = %+v, want %+v", got, events[5])
	}
	if end := lines[6]; !end.Complete || end.SnapshotID != 7 || !strings.Contains(string(end.Cursor), `"cursor":41`) {
		t.Errorf("end line %+v", end)
	}
	if string(lines[7].Cursor) != "42" {
		t.Errorf("first live cursor %s, want 42", lines[7].Cursor)
	}
	if !s.WaitStreamsClosed(1, 10*time.Second) {
		t.Fatal("the fake did not notice the client disconnecting")
	}
	if s.StreamsOpened() != 1 || s.LiveLines() < 3 {
		t.Errorf("opened %d, live lines %d", s.StreamsOpened(), s.LiveLines())
	}
}

func TestPlacementsStreamFaults(t *testing.T) {
	t.Run("incomplete ends the stream", func(t *testing.T) {
		s := New(Config{SourceErrors: []SourceError{{Model: "m", Reason: "feed_unavailable"}}})
		defer s.Close()
		code, body := get(t, s.URL+PathPlacements)
		lines := strings.Split(strings.TrimSpace(body), "\n")
		if code != 200 || len(lines) != 3 || !strings.Contains(lines[1], `"reason":"feed_unavailable"`) || !strings.Contains(lines[2], `"complete":false`) {
			t.Errorf("got %d\n%s", code, body)
		}
	})
	t.Run("never ends", func(t *testing.T) {
		s := New(Config{StreamNeverEnds: true, HugeLineBytes: 100, LiveInterval: time.Millisecond})
		defer s.Close()
		resp, err := http.Get(s.URL + PathPlacements)
		if err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReader(resp.Body)
		var got []string
		for range 5 {
			l, err := br.ReadString('\n')
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, l)
		}
		resp.Body.Close()
		if !strings.Contains(got[1], `"type":"x_padding"`) || len(got[1]) < 100 || strings.Contains(strings.Join(got, ""), "placement_snapshot_end") {
			t.Errorf("lines:\n%s", strings.Join(got, ""))
		}
		if !s.WaitStreamsClosed(1, 10*time.Second) {
			t.Fatal("disconnect not seen")
		}
	})
	t.Run("hang until the client gives up", func(t *testing.T) {
		s := New(Config{Hang: map[string]bool{PathPlacements: true}})
		defer s.Close()
		c := &http.Client{Timeout: 100 * time.Millisecond}
		resp, err := c.Get(s.URL + PathPlacements)
		if err == nil {
			resp.Body.Close()
			t.Fatal("no timeout")
		}
	})
}
