package fakefrontend

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
)

// Paths the fake serves.
const (
	PathMetrics       = "/metrics"
	PathBusyThreshold = "/busy_threshold"
	PathTokenize      = "/tokenize"
	PathPlacements    = "/v1/kv-cache/placements/stream"
	PathQuery         = "/query"
)

// MaxEventsPerLine is the placements stream's batch size (Dynamo's
// MAX_EVENTS_PER_LINE).
const MaxEventsPerLine = 64

// DefaultLiveInterval is the pace of the live tail after placement_snapshot_end.
const DefaultLiveInterval = 50 * time.Millisecond

// PlacementSource is one (model, endpoint) source of the placements stream.
type PlacementSource struct {
	Model, Namespace, Component, Endpoint string
	// BlockSize is block_size_tokens.
	BlockSize int
	// Cursor is the source's snapshot cursor.
	Cursor uint64
	// Events are emitted with routecore's exact JSON encoding.
	Events []routecore.RouterEvent
	// RawEvents are emitted verbatim after Events (e.g. hashes written as
	// negative i64, as some engines publish them).
	RawEvents []json.RawMessage
}

// SourceError is a placement_source_error line.
type SourceError struct {
	Model, Namespace, Component, Endpoint string
	// Reason is feed_unavailable, snapshot_missing, snapshot_failed, …
	Reason string
}

// Config configures a fake frontend. The zero value serves empty answers.
type Config struct {
	// Metrics is the GET /metrics body.
	Metrics string
	// BusyThreshold is the GET /busy_threshold body; 404 when "".
	BusyThreshold string

	// Tokenize tokenizes a POST /tokenize request: the "prompt" form passes the
	// prompt and nil messages, the "messages" form "" and the raw messages
	// array. nil answers 501 (no tokenizer configured), as Dynamo does.
	Tokenize func(prompt string, messages json.RawMessage) ([]uint32, error)
	// MaxModelLen is max_model_len in the /tokenize answer.
	MaxModelLen uint64
	// Models are the served model names; when set, a /tokenize request naming
	// another model (or none while several are served) gets Dynamo's 404
	// "Model not found".
	Models []string

	// SnapshotID is the placements snapshot id; 1 when 0.
	SnapshotID uint64
	// Sources are the placements stream's sources, in order.
	Sources []PlacementSource
	// SourceErrors are emitted after the sources; any makes the snapshot
	// incomplete.
	SourceErrors []SourceError
	// Incomplete ends the snapshot with complete:false. An incomplete snapshot
	// (this or SourceErrors) ends the stream after placement_snapshot_end, as
	// Dynamo does; a complete one is followed by the live tail.
	Incomplete bool
	// ExtraLines are raw lines written right after placement_snapshot_begin
	// (unknown types, pings, malformed JSON, …); a newline is appended.
	ExtraLines []string
	// HugeLineBytes, when > 0, writes one line of about that many bytes (an
	// unknown type with padding) right after placement_snapshot_begin.
	HugeLineBytes int
	// StreamNeverEnds writes no placement_snapshot_end: after the snapshot
	// events only pings follow, until the client disconnects.
	StreamNeverEnds bool
	// LiveInterval paces the live tail and pings; DefaultLiveInterval when 0.
	LiveInterval time.Duration

	// Scores are the indexer's POST /query answer (matched tokens).
	Scores map[routecore.WorkerWithDpRank]uint64
	// ScoresJSON, when set, is the POST /query answer verbatim.
	ScoresJSON string
	// IndexerModels, when set, are the model names the indexer knows; other
	// names get the indexer's 404 "no indexer for model=…".
	IndexerModels []string

	// Status answers a path with this status code instead of serving it (an
	// empty body for 404 and 405, as a router without the route answers; a
	// Dynamo JSON error otherwise).
	Status map[string]int
	// Garbage answers a path with 200 and this body instead of serving it.
	Garbage map[string]string
	// Hang makes a path never answer (until the client gives up).
	Hang map[string]bool
}

// Request is one recorded request.
type Request struct {
	Method string
	Path   string
	Body   []byte
}

// String is "METHOD PATH".
func (r Request) String() string { return r.Method + " " + r.Path }

// Server is a running fake frontend. Close it when done.
type Server struct {
	*httptest.Server
	cfg  Config
	quit chan struct{}
	once sync.Once

	mu          sync.Mutex
	reqs        []Request
	opened      int
	disconnects int
	liveLines   int
	changed     chan struct{}
}

// New starts a fake frontend.
func New(cfg Config) *Server {
	if cfg.SnapshotID == 0 {
		cfg.SnapshotID = 1
	}
	if cfg.LiveInterval <= 0 {
		cfg.LiveInterval = DefaultLiveInterval
	}
	s := &Server{cfg: cfg, quit: make(chan struct{}), changed: make(chan struct{})}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// Handler is the fake's handler, e.g. to mount it behind a fake API server's
// service proxy.
func (s *Server) Handler() http.Handler { return http.HandlerFunc(s.serve) }

// Close stops the live tails and hanging requests, then the server.
func (s *Server) Close() {
	s.once.Do(func() { close(s.quit) })
	s.Server.Close()
}

// Requests returns every request received, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reqs)
}

// Mutating returns the requests that are neither GET/HEAD nor one of the
// read-only POSTs (/tokenize, /detokenize, /query, /query_by_hash).
func (s *Server) Mutating() []Request {
	var out []Request
	for _, r := range s.Requests() {
		switch {
		case r.Method == http.MethodGet || r.Method == http.MethodHead:
		case r.Method == http.MethodPost && (r.Path == PathTokenize || r.Path == "/detokenize" || r.Path == PathQuery || r.Path == "/query_by_hash"):
		default:
			out = append(out, r)
		}
	}
	return out
}

// StreamsOpened is the number of placements streams started.
func (s *Server) StreamsOpened() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.opened
}

// StreamsClosed is the number of placements streams whose client disconnected.
func (s *Server) StreamsClosed() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.disconnects
}

// LiveLines is the number of live-tail lines written (placement_events and
// pings after placement_snapshot_end, or pings of a never-ending stream).
func (s *Server) LiveLines() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.liveLines
}

// WaitStreamsClosed waits until n placements streams were closed by their
// client, or the timeout passes; it reports whether they were.
func (s *Server) WaitStreamsClosed(n int, timeout time.Duration) bool {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		done, ch := s.disconnects >= n, s.changed
		s.mu.Unlock()
		if done {
			return true
		}
		select {
		case <-ch:
		case <-deadline.C:
			return false
		}
	}
}

// update changes counters under the lock and wakes WaitStreamsClosed.
func (s *Server) update(f func()) {
	s.mu.Lock()
	f()
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.reqs = append(s.reqs, Request{Method: r.Method, Path: r.URL.Path, Body: body})
	s.mu.Unlock()

	path := r.URL.Path
	if s.cfg.Hang[path] {
		select {
		case <-r.Context().Done():
		case <-s.quit:
		}
		return
	}
	if code, ok := s.cfg.Status[path]; ok {
		if code == http.StatusNotFound || code == http.StatusMethodNotAllowed {
			w.WriteHeader(code)
			return
		}
		writeError(w, code, fmt.Sprintf("injected HTTP %d", code))
		return
	}
	if g, ok := s.cfg.Garbage[path]; ok {
		_, _ = io.WriteString(w, g)
		return
	}
	switch path {
	case PathMetrics:
		if !allow(w, r, http.MethodGet) {
			return
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = io.WriteString(w, s.cfg.Metrics)
	case PathBusyThreshold:
		if !allow(w, r, http.MethodGet) {
			return
		}
		if s.cfg.BusyThreshold == "" {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, s.cfg.BusyThreshold)
	case PathTokenize:
		if allow(w, r, http.MethodPost) {
			s.tokenize(w, body)
		}
	case PathPlacements:
		if allow(w, r, http.MethodGet) {
			s.placements(w, r)
		}
	case PathQuery:
		if allow(w, r, http.MethodPost) {
			s.query(w, body)
		}
	default:
		w.WriteHeader(http.StatusNotFound)
	}
}

// allow answers 405 (empty body, like axum) unless r uses method.
func allow(w http.ResponseWriter, r *http.Request, method string) bool {
	if r.Method == method {
		return true
	}
	w.Header().Set("Allow", method)
	w.WriteHeader(http.StatusMethodNotAllowed)
	return false
}

// writeError writes Dynamo's frontend error body.
func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, map[string]any{"message": msg, "type": http.StatusText(code), "code": code})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func (s *Server) tokenize(w http.ResponseWriter, body []byte) {
	var req struct {
		Model            *string         `json:"model"`
		Prompt           *string         `json:"prompt"`
		Messages         json.RawMessage `json:"messages"`
		AddSpecialTokens *bool           `json:"add_special_tokens"`
		ReturnTokenStrs  *bool           `json:"return_token_strs"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		writeError(w, http.StatusBadRequest, "Failed to parse the request body as JSON: "+err.Error())
		return
	}
	if req.Prompt == nil && req.Messages == nil {
		writeError(w, http.StatusUnprocessableEntity, "Failed to deserialize the JSON body: data did not match any variant of untagged enum TokenizeRequest")
		return
	}
	if len(s.cfg.Models) > 0 {
		switch {
		case req.Model == nil && len(s.cfg.Models) > 1, req.Model != nil && !slices.Contains(s.cfg.Models, *req.Model):
			writeError(w, http.StatusNotFound, "Model not found")
			return
		}
	}
	if s.cfg.Tokenize == nil {
		writeError(w, http.StatusNotImplemented, "Model has no tokenizer configured")
		return
	}
	prompt := ""
	if req.Messages == nil {
		prompt = *req.Prompt
	}
	tokens, err := s.cfg.Tokenize(prompt, req.Messages)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "Tokenizer encode failed: "+err.Error())
		return
	}
	if tokens == nil {
		tokens = []uint32{}
	}
	resp := map[string]any{"count": len(tokens), "max_model_len": s.cfg.MaxModelLen, "tokens": tokens}
	if req.ReturnTokenStrs != nil && *req.ReturnTokenStrs {
		strs := make([]string, len(tokens))
		for i, t := range tokens {
			strs[i] = "t" + strconv.FormatUint(uint64(t), 10)
		}
		resp["token_strs"] = strs
	}
	writeJSON(w, http.StatusOK, resp)
}

func (s *Server) query(w http.ResponseWriter, body []byte) {
	var req struct {
		TokenIDs     []uint32 `json:"token_ids"`
		ModelName    string   `json:"model_name"`
		RoutingGroup string   `json:"routing_group"`
	}
	if err := json.Unmarshal(body, &req); err != nil || req.TokenIDs == nil {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"error": "invalid query: token_ids and model_name are required"})
		return
	}
	if len(s.cfg.IndexerModels) > 0 && !slices.Contains(s.cfg.IndexerModels, req.ModelName) {
		group := req.RoutingGroup
		if group == "" {
			group = "default"
		}
		writeJSON(w, http.StatusNotFound, map[string]string{"error": fmt.Sprintf("no indexer for model=%s routing_group=%s", req.ModelName, group)})
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if s.cfg.ScoresJSON != "" {
		_, _ = io.WriteString(w, s.cfg.ScoresJSON)
		return
	}
	// Built by hand so that worker ids above 2^53 stay exact.
	byWorker := map[routecore.WorkerID][]routecore.WorkerWithDpRank{}
	for k := range s.cfg.Scores {
		byWorker[k.WorkerID] = append(byWorker[k.WorkerID], k)
	}
	workers := make([]routecore.WorkerID, 0, len(byWorker))
	for id := range byWorker {
		workers = append(workers, id)
	}
	sort.Slice(workers, func(i, j int) bool { return workers[i] < workers[j] })
	var b strings.Builder
	b.WriteString(`{"scores":{`)
	for i, id := range workers {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"%d":{`, uint64(id))
		ranks := byWorker[id]
		slices.SortFunc(ranks, routecore.WorkerWithDpRank.Compare)
		for j, k := range ranks {
			if j > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `"%d":%d`, k.DpRank, s.cfg.Scores[k])
		}
		b.WriteByte('}')
	}
	b.WriteString(`},"frequencies":[],"instances":{}}`)
	_, _ = io.WriteString(w, b.String())
}

// placements serves the NDJSON placements stream.
func (s *Server) placements(w http.ResponseWriter, r *http.Request) {
	s.update(func() { s.opened++ })
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("Cache-Control", "no-cache")
	rc := http.NewResponseController(w)
	write := func(line []byte) bool {
		if _, err := w.Write(append(line, '\n')); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	line := func(v any) []byte {
		b, err := json.Marshal(v)
		if err != nil {
			panic(err) // test configuration error
		}
		return b
	}
	id := s.cfg.SnapshotID
	if !write(line(map[string]any{"v": 1, "type": "placement_snapshot_begin", "snapshot_id": id, "complete": false})) {
		s.disconnected()
		return
	}
	if s.cfg.HugeLineBytes > 0 {
		pad := strings.Repeat("x", s.cfg.HugeLineBytes)
		if !write([]byte(`{"v":1,"type":"x_padding","pad":"` + pad + `"}`)) {
			s.disconnected()
			return
		}
	}
	for _, l := range s.cfg.ExtraLines {
		if !write([]byte(l)) {
			s.disconnected()
			return
		}
	}
	type cursor struct {
		Model     string `json:"model"`
		Namespace string `json:"namespace"`
		Component string `json:"component"`
		Endpoint  string `json:"endpoint"`
		Cursor    uint64 `json:"cursor"`
	}
	cursors := []cursor{}
	for _, src := range s.cfg.Sources {
		events := make([]json.RawMessage, 0, len(src.Events)+len(src.RawEvents))
		for _, ev := range src.Events {
			b, err := json.Marshal(ev)
			if err != nil {
				panic(err)
			}
			events = append(events, b)
		}
		events = append(events, src.RawEvents...)
		count := max((len(events)+MaxEventsPerLine-1)/MaxEventsPerLine, 1)
		for i := range count {
			batch := events[min(i*MaxEventsPerLine, len(events)):min((i+1)*MaxEventsPerLine, len(events))]
			if !write(line(map[string]any{"v": 1, "type": "placement_snapshot_events", "snapshot_id": id,
				"model": src.Model, "namespace": src.Namespace, "component": src.Component, "endpoint": src.Endpoint,
				"block_size_tokens": src.BlockSize, "cursor": src.Cursor, "batch_index": i, "batch_count": count,
				"events": batch})) {
				s.disconnected()
				return
			}
		}
		cursors = append(cursors, cursor{src.Model, src.Namespace, src.Component, src.Endpoint, src.Cursor})
	}
	for _, e := range s.cfg.SourceErrors {
		if !write(line(map[string]any{"v": 1, "type": "placement_source_error", "model": e.Model, "namespace": e.Namespace,
			"component": e.Component, "endpoint": e.Endpoint, "reason": e.Reason})) {
			s.disconnected()
			return
		}
	}
	complete := !s.cfg.Incomplete && len(s.cfg.SourceErrors) == 0
	if !s.cfg.StreamNeverEnds {
		if !write(line(map[string]any{"v": 1, "type": "placement_snapshot_end", "snapshot_id": id, "complete": complete, "cursor": cursors})) {
			s.disconnected()
			return
		}
		if !complete {
			return // Dynamo ends an incomplete stream after the snapshot
		}
	}

	// The live tail (or, for a never-ending snapshot, pings) until the client
	// goes away.
	tick := time.NewTicker(s.cfg.LiveInterval)
	defer tick.Stop()
	for n := 0; ; n++ {
		select {
		case <-r.Context().Done():
			s.disconnected()
			return
		case <-s.quit:
			return
		case <-tick.C:
		}
		var l []byte
		if n%2 == 0 && len(s.cfg.Sources) > 0 && !s.cfg.StreamNeverEnds {
			src := s.cfg.Sources[0]
			l = line(map[string]any{"v": 1, "type": "placement_events", "model": src.Model, "namespace": src.Namespace,
				"component": src.Component, "endpoint": src.Endpoint, "block_size_tokens": src.BlockSize,
				"cursor": src.Cursor + uint64(n/2) + 1, "batch_index": 0, "batch_count": 1, "events": []any{}})
		} else {
			l = []byte(`{"v":1,"type":"ping"}`)
		}
		if !write(l) {
			s.disconnected()
			return
		}
		s.update(func() { s.liveLines++ })
	}
}

func (s *Server) disconnected() { s.update(func() { s.disconnects++ }) }
