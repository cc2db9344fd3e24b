package frontend

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/iolimit"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/kube"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/redact"
)

// Route-input defaults (explain-route's live inputs).
const (
	// DefaultMaxTokenizeBytes bounds a POST /tokenize answer.
	DefaultMaxTokenizeBytes = 64 << 20
	// DefaultMaxPlacementBytes bounds a whole KV placement snapshot.
	DefaultMaxPlacementBytes = 1 << 30
	// DefaultMaxPlacementLineBytes bounds one line of the placements stream
	// (at most 64 events; a stored event of 8k blocks is about 600 KiB).
	DefaultMaxPlacementLineBytes = 64 << 20
	// DefaultPlacementTimeout bounds the whole placement snapshot read.
	DefaultPlacementTimeout = time.Minute
	// DefaultIndexerTimeout bounds a KV indexer query.
	DefaultIndexerTimeout = 10 * time.Second
	// DefaultMaxIndexerBytes bounds a KV indexer answer.
	DefaultMaxIndexerBytes = 16 << 20
)

// The paths of the route inputs.
const (
	// TokenizePath is the frontend's tokenizer (POST, vLLM-compatible).
	TokenizePath = "/tokenize"
	// PlacementsPath is the frontend's NDJSON stream of KV placements (GET).
	PlacementsPath = "/v1/kv-cache/placements/stream"
	// IndexerQueryPath is a standalone KV indexer's overlap query (POST).
	IndexerQueryPath = "/query"
)

var (
	// ErrTokenizeForbidden means that RBAC refused POST /tokenize through the
	// API server's service proxy: a POST needs verb create on services/proxy.
	ErrTokenizeForbidden = errors.New("POST /tokenize through the API server's service proxy is forbidden")
	// ErrTokenizeUnsupported means that the frontend has no POST /tokenize
	// (it answered 404 or 405: a Dynamo release before /tokenize).
	ErrTokenizeUnsupported = errors.New("the frontend has no POST /tokenize")
	// ErrPlacementsUnsupported means that the frontend build has no KV
	// placements stream (it answered 404 or 405).
	ErrPlacementsUnsupported = errors.New("the frontend build has no KV placements stream (GET " + PlacementsPath + ")")
)

// offlineTokenize is the advice attached to every tokenize failure.
const offlineTokenize = "tokenize offline with --tokenizer (a tokenizer.json, or a Hugging Face model id in the local cache) or pass the ids with --tokens"

// routeError is an error with its own message that still matches, with
// errors.Is and errors.As, the sentinel and the underlying error it names.
type routeError struct {
	msg  string
	errs []error
}

func (e *routeError) Error() string   { return e.msg }
func (e *routeError) Unwrap() []error { return e.errs }

func newRouteError(msg string, errs ...error) error { return &routeError{msg: msg, errs: errs} }

// TokenizeRequest is a frontend POST /tokenize body (vLLM-compatible).
type TokenizeRequest struct {
	// Model is "model", omitted when "" (the frontend then uses its only model).
	Model string
	// Prompt is the "prompt" form.
	Prompt string
	// Messages is the "messages" form (an OpenAI chat messages array); when set,
	// Prompt must be "" and add_generation_prompt: true is sent, so the tokens
	// are those of a chat completion request.
	Messages json.RawMessage
	// AddSpecialTokens is "add_special_tokens" when non-nil (the frontend's
	// default is true for a prompt, false for messages).
	AddSpecialTokens *bool
}

// TokenizeResult is the frontend's tokenization of a prompt.
type TokenizeResult struct {
	Tokens []uint32
	// MaxModelLen is the model's context length; 0 when absent.
	MaxModelLen uint64
	// Source is e.g. "frontend POST /tokenize (service serving/llm-frontend:http)".
	Source string
	At     time.Time
}

// body is the JSON request body.
func (r TokenizeRequest) body() ([]byte, error) {
	if len(bytes.TrimSpace(r.Messages)) == 0 {
		return json.Marshal(struct {
			Model            string `json:"model,omitempty"`
			Prompt           string `json:"prompt"`
			AddSpecialTokens *bool  `json:"add_special_tokens,omitempty"`
		}{r.Model, r.Prompt, r.AddSpecialTokens})
	}
	if r.Prompt != "" {
		return nil, errors.New("a tokenize request has either a prompt or chat messages, not both")
	}
	msgs := bytes.TrimSpace(r.Messages)
	if !json.Valid(msgs) || msgs[0] != '[' {
		return nil, errors.New(`chat messages must be a JSON array of OpenAI chat messages, e.g. [{"role":"user","content":"hello"}]`)
	}
	return json.Marshal(struct {
		Model               string          `json:"model,omitempty"`
		Messages            json.RawMessage `json:"messages"`
		AddGenerationPrompt bool            `json:"add_generation_prompt"`
		AddSpecialTokens    *bool           `json:"add_special_tokens,omitempty"`
	}{r.Model, msgs, true, r.AddSpecialTokens})
}

// withRouteDefaults fills the route-input defaults of o.
func (o Options) withRouteDefaults() Options {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxTokenizeBytes <= 0 {
		o.MaxTokenizeBytes = DefaultMaxTokenizeBytes
	}
	if o.MaxPlacementBytes <= 0 {
		o.MaxPlacementBytes = DefaultMaxPlacementBytes
	}
	if o.MaxPlacementLineBytes <= 0 {
		o.MaxPlacementLineBytes = DefaultMaxPlacementLineBytes
	}
	if o.PlacementTimeout <= 0 {
		o.PlacementTimeout = max(DefaultPlacementTimeout, o.Timeout)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	o.HTTPClient = safeClient(o.HTTPClient)
	return o
}

// safeClient is SafeHTTPClient: guarded, and never following a redirect.
func safeClient(c *http.Client) *http.Client { return kube.SafeHTTPClient(c) }

// Tokenize tokenizes a prompt (or chat messages) with the frontend's own
// tokenizer and chat template: POST /tokenize, through the API server's service
// proxy (RBAC verb create on services/proxy) or to t.URL. It is pure
// computation on the frontend; nothing changes. The answer is bounded by
// o.MaxTokenizeBytes and o.Timeout.
//
// A 403 through the service proxy is ErrTokenizeForbidden, a 404 or 405 (a
// frontend without /tokenize) ErrTokenizeUnsupported; every error says how to
// tokenize offline instead.
func (o Options) Tokenize(ctx context.Context, t Target, req TokenizeRequest) (*TokenizeResult, error) {
	o = o.withRouteDefaults()
	body, err := req.body()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	var data []byte
	if t.URL == "" {
		if o.API == nil {
			return nil, fmt.Errorf("cannot reach the frontend (%s): no Kubernetes client for the service proxy; pass --frontend-url or %s", t.where(), offlineTokenize)
		}
		data, err = o.API.ServiceProxyPost(ctx, t.Namespace, t.Service, t.Port, TokenizePath, body, o.MaxTokenizeBytes)
	} else {
		var u string
		if u, err = targetURL(t.URL, TokenizePath, "--frontend-url"); err != nil {
			return nil, err
		}
		data, err = doHTTP(ctx, o.HTTPClient, http.MethodPost, u, body, "application/json", o.MaxTokenizeBytes)
	}
	if err != nil {
		return nil, o.tokenizeError(t, req, err)
	}
	tokens, maxLen, err := decodeTokenizeAnswer(data)
	if err != nil {
		return nil, fmt.Errorf("the frontend (%s) answered POST /tokenize with %w: is %s the Dynamo frontend? Otherwise %s", t.where(), err, t.where(), offlineTokenize)
	}
	return &TokenizeResult{Tokens: tokens, MaxModelLen: maxLen, Source: "frontend POST " + TokenizePath + " (" + t.where() + ")", At: o.Now().UTC()}, nil
}

// tokenizeError turns a POST /tokenize failure into an actionable error.
func (o Options) tokenizeError(t Target, req TokenizeRequest, err error) error {
	where := t.where()
	code := statusCode(err)
	switch {
	case t.URL == "" && apierrors.IsForbidden(err):
		return newRouteError(fmt.Sprintf("%s (%s): RBAC needs verb create on services/proxy in namespace %s (get, enough for /metrics, does not allow a POST); %s, or port-forward the frontend and pass --frontend-url",
			ErrTokenizeForbidden, where, t.Namespace, offlineTokenize), ErrTokenizeForbidden, err)
	case code == http.StatusNotFound && strings.Contains(strings.ToLower(err.Error()), "model not found"):
		return newRouteError(fmt.Sprintf("the frontend (%s) does not serve model %q (POST /tokenize answered 404 Model not found): name a model it serves (GET /v1/models lists them), or %s",
			where, req.Model, offlineTokenize), err)
	case code == http.StatusNotFound || code == http.StatusMethodNotAllowed:
		why := "a Dynamo release before /tokenize"
		if t.URL == "" && req.Model != "" {
			why += fmt.Sprintf(", or it does not serve model %q", req.Model)
		}
		return newRouteError(fmt.Sprintf("%s (%s answered HTTP %d: %s): %s", ErrTokenizeUnsupported, where, code, why, offlineTokenize), ErrTokenizeUnsupported, err)
	case code == http.StatusNotImplemented:
		return newRouteError(fmt.Sprintf("the frontend (%s) cannot tokenize for this model (%s): %s", where, describeFrontendErr(err, o.Timeout), offlineTokenize), err)
	case errors.Is(err, iolimit.ErrResponseTooLarge):
		return newRouteError(fmt.Sprintf("the answer of the frontend (%s) to POST /tokenize is too large (%s): raise the tokenize size limit or %s", where, err, offlineTokenize), err)
	}
	return newRouteError(fmt.Sprintf("POST /tokenize to the frontend (%s) failed: %s; %s", where, describeFrontendErr(err, o.Timeout), offlineTokenize), err)
}

// decodeTokenizeAnswer reads {count, max_model_len, tokens, token_strs?} with
// exact integers.
func decodeTokenizeAnswer(data []byte) ([]uint32, uint64, error) {
	var ans struct {
		Count       json.RawMessage    `json:"count"`
		MaxModelLen json.RawMessage    `json:"max_model_len"`
		Tokens      *[]json.RawMessage `json:"tokens"`
	}
	if err := json.Unmarshal(data, &ans); err != nil {
		return nil, 0, fmt.Errorf("something that is not a tokenize result (%s)", describeJSONErr(err))
	}
	if ans.Tokens == nil {
		return nil, 0, errors.New("an answer without a tokens array")
	}
	tokens := make([]uint32, len(*ans.Tokens))
	for i, raw := range *ans.Tokens {
		id, err := routecore.ParseTokenID(string(bytes.TrimSpace(raw)))
		if err != nil {
			return nil, 0, fmt.Errorf("a bad token id at tokens[%d]: %w", i, err)
		}
		tokens[i] = id
	}
	if n, ok, err := jsonUint(ans.Count, 64); err != nil {
		return nil, 0, fmt.Errorf("a bad count: %w", err)
	} else if ok && n != uint64(len(tokens)) {
		return nil, 0, fmt.Errorf("count %d but %d tokens", n, len(tokens))
	}
	maxLen, _, err := jsonUint(ans.MaxModelLen, 64)
	if err != nil {
		return nil, 0, fmt.Errorf("a bad max_model_len: %w", err)
	}
	return tokens, maxLen, nil
}

// jsonUint parses a JSON non-negative integer literal exactly; ok is false
// when raw is absent or null.
func jsonUint(raw json.RawMessage, bits int) (v uint64, ok bool, err error) {
	s := string(bytes.TrimSpace(raw))
	if s == "" || s == "null" {
		return 0, false, nil
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false, fmt.Errorf("%.40s is not a non-negative integer", s)
		}
	}
	v, err = strconv.ParseUint(s, 10, bits)
	if err != nil {
		return 0, false, fmt.Errorf("%.40s does not fit in %d bits", s, bits)
	}
	return v, true, nil
}

// ReadPlacements reads one snapshot of the frontend's KV placements: GET
// /v1/kv-cache/placements/stream (through the service proxy, verb get on
// services/proxy, or t.URL), NDJSON placement_snapshot_begin → batches of
// placement_snapshot_events → placement_snapshot_end. It stops at
// placement_snapshot_end and closes the connection, never reading the live
// tail. The read is bounded by o.MaxPlacementBytes in total,
// o.MaxPlacementLineBytes per line and o.PlacementTimeout from the request to
// placement_snapshot_end.
//
// Unknown line types and pings are skipped; a malformed line, a batch of
// another snapshot or out of order, or a stream that ends before
// placement_snapshot_end is an error. A frontend without the stream is
// ErrPlacementsUnsupported.
func (o Options) ReadPlacements(ctx context.Context, t Target) (*raw.PlacementSnapshot, error) {
	o = o.withRouteDefaults()
	where := t.where()
	sctx, cancel := context.WithTimeout(ctx, o.PlacementTimeout)
	defer cancel()
	rc, err := o.openStream(sctx, t, PlacementsPath)
	if err != nil {
		return nil, o.placementsOpenError(ctx, t, err)
	}
	defer rc.Close()
	// Closing the body unblocks a read that waits on a silent stream.
	stop := context.AfterFunc(sctx, func() { _ = rc.Close() })
	defer stop()

	pr := newPlacementReader(rc, o.MaxPlacementBytes, o.MaxPlacementLineBytes)
	snap, err := pr.read()
	if err != nil {
		switch {
		case ctx.Err() != nil:
			return nil, fmt.Errorf("reading the KV placements of the frontend (%s): %w", where, ctx.Err())
		case sctx.Err() != nil:
			return nil, newRouteError(fmt.Sprintf("the KV placements stream of the frontend (%s) did not reach placement_snapshot_end within %s (read %d lines, %s): the snapshot is large or the frontend slow; raise the placement timeout",
				where, o.PlacementTimeout, pr.lr.n, iolimit.ByteSize(pr.lr.total)), context.DeadlineExceeded)
		case errors.Is(err, iolimit.ErrResponseTooLarge):
			return nil, fmt.Errorf("the KV placements stream of the frontend (%s): %w; raise the placement size limit", where, err)
		}
		return nil, fmt.Errorf("the KV placements stream of the frontend (%s): %w", where, err)
	}
	snap.Source = "frontend GET " + PlacementsPath + " (" + where + ")"
	snap.At = o.Now().UTC()
	return snap, nil
}

// openStream opens a GET answer body from t.
func (o Options) openStream(ctx context.Context, t Target, path string) (io.ReadCloser, error) {
	if t.URL == "" {
		if o.API == nil {
			return nil, errors.New("no Kubernetes client to reach the service proxy")
		}
		return o.API.ServiceProxyStream(ctx, t.Namespace, t.Service, t.Port, path)
	}
	u, err := targetURL(t.URL, path, "--frontend-url")
	if err != nil {
		return nil, err
	}
	return openHTTP(ctx, o.HTTPClient, http.MethodGet, u, nil, "application/x-ndjson, application/json;q=0.9")
}

// placementsOpenError turns a failure to open the placements stream into an
// actionable error.
func (o Options) placementsOpenError(ctx context.Context, t Target, err error) error {
	where := t.where()
	code := statusCode(err)
	switch {
	case code == http.StatusNotFound || code == http.StatusMethodNotAllowed:
		return newRouteError(fmt.Sprintf("%s: %s answered HTTP %d (Dynamo releases before 2026 have none): the workers' cached blocks cannot be read from this frontend; query a standalone KV indexer (POST /query) if one runs, or treat KV overlap as unknown",
			ErrPlacementsUnsupported, where, code), ErrPlacementsUnsupported, err)
	case t.URL == "" && apierrors.IsForbidden(err):
		return newRouteError(fmt.Sprintf("GET %s through the API server's service proxy (%s) is forbidden: RBAC needs verb get on services/proxy in namespace %s; or port-forward the frontend and pass --frontend-url",
			PlacementsPath, where, t.Namespace), err)
	case ctx.Err() == nil && (errors.Is(err, context.DeadlineExceeded) || iolimit.IsTimeout(context.Background(), err)):
		return newRouteError(fmt.Sprintf("the frontend (%s) did not answer GET %s within %s: raise the placement timeout", where, PlacementsPath, o.PlacementTimeout), context.DeadlineExceeded, err)
	}
	return newRouteError(fmt.Sprintf("cannot read the KV placements of the frontend (%s): %s", where, describeFrontendErr(err, o.PlacementTimeout)), err)
}

// placementReader parses one snapshot from the placements stream.
type placementReader struct {
	lr      lineReader
	snap    raw.PlacementSnapshot
	begun   bool
	sources map[[4]string]int // (model, namespace, component, endpoint) → index
	batches []batchProgress   // per source
	skipped map[string]bool
}

type batchProgress struct{ next, count uint64 }

func newPlacementReader(r io.Reader, maxTotal, maxLine int64) *placementReader {
	return &placementReader{
		lr:      lineReader{br: bufio.NewReaderSize(r, 64<<10), maxTotal: maxTotal, maxLine: maxLine},
		sources: map[[4]string]int{},
		skipped: map[string]bool{},
	}
}

// placementLine is the union of the placement line shapes; numbers stay raw
// so that they are parsed exactly.
type placementLine struct {
	Type       string            `json:"type"`
	SnapshotID json.RawMessage   `json:"snapshot_id"`
	Complete   *bool             `json:"complete"`
	Model      string            `json:"model"`
	Namespace  string            `json:"namespace"`
	Component  string            `json:"component"`
	Endpoint   string            `json:"endpoint"`
	BlockSize  json.RawMessage   `json:"block_size_tokens"`
	Cursor     json.RawMessage   `json:"cursor"`
	BatchIndex json.RawMessage   `json:"batch_index"`
	BatchCount json.RawMessage   `json:"batch_count"`
	Events     []json.RawMessage `json:"events"`
	Reason     string            `json:"reason"`
}

// placementReasons explain the placement_source_error reasons.
var placementReasons = map[string]string{
	"feed_unavailable":    "the router's placement feed could not be opened",
	"snapshot_missing":    "the feed sent events before its snapshot",
	"snapshot_failed":     "the feed's snapshot could not be read",
	"stream_closed":       "the feed closed",
	"cursor_gap":          "the feed lost events",
	"unexpected_snapshot": "the feed restarted",
	"feed_error":          "the feed failed",
}

// read parses lines up to placement_snapshot_end.
func (p *placementReader) read() (*raw.PlacementSnapshot, error) {
	for {
		line, err := p.lr.next()
		if errors.Is(err, io.EOF) {
			if !p.begun {
				return nil, fmt.Errorf("the stream ended after %d lines without placement_snapshot_begin: is this the Dynamo frontend?", p.lr.n)
			}
			return nil, fmt.Errorf("the stream ended after %d lines before placement_snapshot_end (the frontend closes it when its sources change or a reader is slow); retry", p.lr.n)
		}
		if err != nil {
			return nil, err
		}
		done, err := p.line(bytes.TrimSpace(line))
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", p.lr.n, err)
		}
		if done {
			p.snap.Bytes = p.lr.total
			sort.Strings(p.snap.SkippedTypes)
			return &p.snap, nil
		}
	}
}

// line handles one line; done at placement_snapshot_end.
func (p *placementReader) line(line []byte) (done bool, err error) {
	if len(line) == 0 {
		return false, nil
	}
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(line, &head); err != nil {
		if p.lr.partial {
			return false, errors.New("the stream ended in the middle of a line")
		}
		return false, fmt.Errorf("not a JSON object (%s)", describeJSONErr(err))
	}
	switch head.Type {
	case "ping":
		return false, nil
	case "placement_snapshot_begin", "placement_snapshot_events", "placement_snapshot_end", "placement_source_error":
	default:
		// Newer line types, and live placement_events, which the frontend sends
		// only after placement_snapshot_end.
		p.snap.Skipped++
		name := head.Type
		if name == "" {
			name = "(no type)"
		}
		if !p.skipped[name] {
			p.skipped[name] = true
			p.snap.SkippedTypes = append(p.snap.SkippedTypes, name)
		}
		return false, nil
	}
	var l placementLine
	if err := json.Unmarshal(line, &l); err != nil {
		return false, fmt.Errorf("malformed %s: %s", head.Type, describeJSONErr(err))
	}
	if head.Type == "placement_source_error" {
		msg := fmt.Sprintf("%s: %s", raw.PlacementSource{Model: l.Model, Namespace: l.Namespace, Component: l.Component, Endpoint: l.Endpoint}, l.Reason)
		if why, ok := placementReasons[l.Reason]; ok {
			msg += " (" + why + ")"
		}
		p.snap.Errors = append(p.snap.Errors, msg)
		return false, nil
	}
	id, ok, err := jsonUint(l.SnapshotID, 64)
	if err != nil || !ok {
		return false, fmt.Errorf("%s without a valid snapshot_id", head.Type)
	}
	if head.Type == "placement_snapshot_begin" {
		if p.begun {
			return false, errors.New("a second placement_snapshot_begin")
		}
		p.begun = true
		p.snap.SnapshotID = id
		return false, nil
	}
	if !p.begun {
		return false, fmt.Errorf("%s before placement_snapshot_begin", head.Type)
	}
	if id != p.snap.SnapshotID {
		return false, fmt.Errorf("%s of snapshot %d inside snapshot %d", head.Type, id, p.snap.SnapshotID)
	}
	if head.Type == "placement_snapshot_end" {
		for i, b := range p.batches {
			if b.next < b.count {
				return false, fmt.Errorf("the snapshot ended after %d of %d batches of source %s", b.next, b.count, p.snap.Sources[i])
			}
		}
		p.snap.Complete = l.Complete != nil && *l.Complete
		return true, nil
	}
	return false, p.events(&l)
}

// events adds one placement_snapshot_events batch.
func (p *placementReader) events(l *placementLine) error {
	src := raw.PlacementSource{Model: l.Model, Namespace: l.Namespace, Component: l.Component, Endpoint: l.Endpoint}
	bs, ok, err := jsonUint(l.BlockSize, 31)
	if err != nil || !ok || bs == 0 {
		return fmt.Errorf("source %s has no valid block_size_tokens", src)
	}
	cursor, _, err := jsonUint(l.Cursor, 64)
	if err != nil {
		return fmt.Errorf("source %s: bad cursor: %w", src, err)
	}
	index, _, err := jsonUint(l.BatchIndex, 32)
	if err != nil {
		return fmt.Errorf("source %s: bad batch_index: %w", src, err)
	}
	count, ok, err := jsonUint(l.BatchCount, 32)
	if err != nil {
		return fmt.Errorf("source %s: bad batch_count: %w", src, err)
	}
	if !ok {
		count = 1
	}
	if index >= count {
		return fmt.Errorf("source %s: batch_index %d is not below batch_count %d", src, index, count)
	}
	key := [4]string{l.Model, l.Namespace, l.Component, l.Endpoint}
	i, seen := p.sources[key]
	if !seen {
		if index != 0 {
			return fmt.Errorf("source %s starts at batch %d of %d", src, index, count)
		}
		src.BlockSize, src.Cursor = int(bs), cursor
		i = len(p.snap.Sources)
		p.sources[key] = i
		p.snap.Sources = append(p.snap.Sources, src)
		p.batches = append(p.batches, batchProgress{count: count})
	}
	s, b := &p.snap.Sources[i], &p.batches[i]
	switch {
	case index != b.next || count != b.count:
		return fmt.Errorf("source %s: batch %d of %d after %d of %d batches", src, index, count, b.next, b.count)
	case s.BlockSize != int(bs) || s.Cursor != cursor:
		return fmt.Errorf("source %s: block_size_tokens or cursor changed between batches", src)
	}
	b.next++
	for j, raw := range l.Events {
		ev, err := routecore.DecodeRouterEvent(raw)
		if err != nil {
			return fmt.Errorf("source %s: events[%d]: %w", src, j, err)
		}
		s.Events = append(s.Events, ev)
	}
	return nil
}

// lineReader reads lines with a per-line and a total byte limit.
type lineReader struct {
	br       *bufio.Reader
	maxLine  int64
	maxTotal int64
	total    int64
	n        int // lines read
	partial  bool
	buf      []byte
}

// next returns the next line (valid until the next call), io.EOF at the end.
func (l *lineReader) next() ([]byte, error) {
	l.buf = l.buf[:0]
	for {
		chunk, err := l.br.ReadSlice('\n')
		l.total += int64(len(chunk))
		if l.total > l.maxTotal {
			return nil, fmt.Errorf("%w: the snapshot is larger than %s (at line %d)", iolimit.ErrResponseTooLarge, iolimit.ByteSize(l.maxTotal), l.n+1)
		}
		if int64(len(l.buf)+len(chunk)) > l.maxLine+1 { // +1: the newline
			return nil, fmt.Errorf("%w: line %d is larger than %s", iolimit.ErrResponseTooLarge, l.n+1, iolimit.ByteSize(l.maxLine))
		}
		l.buf = append(l.buf, chunk...)
		switch {
		case err == nil:
			l.n++
			return l.buf, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(l.buf) > 0:
			l.n++
			l.partial = true
			return l.buf, nil
		}
		return nil, err
	}
}

// IndexerQuery is a standalone KV indexer's POST /query body.
type IndexerQuery struct {
	TokenIDs []uint32
	// ModelName is the model the workers registered with the indexer.
	ModelName string
	// RoutingGroup, LoraName and CacheSalt are sent only when set (older
	// indexers know tenant_id instead of routing_group and default it).
	RoutingGroup, LoraName, CacheSalt string
}

// IndexerScores is a KV indexer's answer.
type IndexerScores struct {
	// Tokens are matched tokens per (worker, dp rank) as the indexer reports them (already × block size).
	Tokens map[routecore.WorkerWithDpRank]uint64
	Source string
	At     time.Time
}

// IndexerOptions configure QueryIndexer.
type IndexerOptions struct {
	// Timeout bounds the query; DefaultIndexerTimeout when 0.
	Timeout time.Duration
	// MaxBytes bounds the answer; DefaultMaxIndexerBytes when 0.
	MaxBytes int64
	// Now returns the current time; time.Now when nil.
	Now func() time.Time
}

// QueryIndexer asks a standalone Dynamo KV indexer (python -m dynamo.indexer)
// which workers hold the prompt's blocks: POST {baseURL}/query with
// {"token_ids", "model_name", "routing_group"?, "lora_name"?, "cache_salt"?}.
// The indexer hashes the tokens itself. The client is used through
// SafeHTTPClient: no redirect is followed.
// Worker ids keep full 64-bit precision.
func QueryIndexer(ctx context.Context, client *http.Client, baseURL string, q IndexerQuery, o IndexerOptions) (*IndexerScores, error) {
	if o.Timeout <= 0 {
		o.Timeout = DefaultIndexerTimeout
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxIndexerBytes
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	where := redact.URLs(baseURL)
	u, err := targetURL(baseURL, IndexerQueryPath, "the KV indexer URL")
	if err != nil {
		return nil, err
	}
	if q.ModelName == "" {
		return nil, fmt.Errorf("cannot query the KV indexer at %s without a model name: the indexer keeps one index per model_name", where)
	}
	tokens := q.TokenIDs
	if tokens == nil {
		tokens = []uint32{}
	}
	body, err := json.Marshal(struct {
		TokenIDs     []uint32 `json:"token_ids"`
		ModelName    string   `json:"model_name"`
		RoutingGroup string   `json:"routing_group,omitempty"`
		LoraName     string   `json:"lora_name,omitempty"`
		CacheSalt    string   `json:"cache_salt,omitempty"`
	}{tokens, q.ModelName, q.RoutingGroup, q.LoraName, q.CacheSalt})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	data, err := doHTTP(ctx, safeClient(client), http.MethodPost, u, body, "application/json", o.MaxBytes)
	if err != nil {
		return nil, indexerError(where, q, err, o.Timeout)
	}
	scores, err := decodeIndexerScores(data)
	if err != nil {
		return nil, fmt.Errorf("the KV indexer at %s answered POST /query with %w: is it a Dynamo KV indexer (python -m dynamo.indexer)?", where, err)
	}
	return &IndexerScores{Tokens: scores, Source: "KV indexer POST " + IndexerQueryPath + " (" + where + ")", At: o.Now().UTC()}, nil
}

// indexerError turns a POST /query failure into an actionable error.
func indexerError(where string, q IndexerQuery, err error, timeout time.Duration) error {
	var he *httpStatusError
	var re *kube.RedirectError
	switch {
	case errors.As(err, &he) && he.Code == http.StatusNotFound:
		group := q.RoutingGroup
		if group == "" {
			group = "default"
		}
		msg := he.Message
		if msg == "" {
			msg = "no message"
		}
		return newRouteError(fmt.Sprintf("the KV indexer at %s answered HTTP 404 to POST /query (%s): it has no index for model %q in routing group %q (GET /workers lists what registered), or it is not a Dynamo KV indexer",
			where, msg, q.ModelName, group), err)
	case errors.As(err, &re):
		return newRouteError(fmt.Sprintf("the KV indexer at %s answered POST /query with a redirect to %s (HTTP %d), which kubectl-dynamo never follows: nothing was sent there; pass the final URL if you trust it",
			where, re.To, re.Status), err)
	case errors.As(err, &he) && he.Code >= 300 && he.Code < 400:
		return newRouteError(fmt.Sprintf("the KV indexer at %s answered POST /query with %s", where, redact.URLs(err.Error())), err)
	case errors.As(err, &he) && he.Code == http.StatusMethodNotAllowed:
		return newRouteError(fmt.Sprintf("%s has no POST /query (HTTP 405): it is not a Dynamo KV indexer, or a release before /query; point the indexer URL at python -m dynamo.indexer", where), err)
	case errors.Is(err, iolimit.ErrResponseTooLarge):
		return newRouteError(fmt.Sprintf("the answer of the KV indexer at %s to POST /query is too large (%s): raise the indexer size limit", where, err), err)
	case errors.Is(err, context.DeadlineExceeded) || iolimit.IsTimeout(context.Background(), err):
		return newRouteError(fmt.Sprintf("the KV indexer at %s did not answer POST /query within %s: check it is reachable (port-forward its Service and pass the local URL) and not overloaded", where, timeout), err)
	case errors.As(err, &he):
		return newRouteError(fmt.Sprintf("the KV indexer at %s answered POST /query with %s: check its logs", where, redact.URLs(err.Error())), err)
	}
	return newRouteError(fmt.Sprintf("cannot reach the KV indexer at %s: %s: check the URL (port-forward the indexer's Service and pass the local URL)", where, redact.URLs(err.Error())), err)
}

// decodeIndexerScores reads {"scores":{"<worker_id>":{"<dp_rank>": tokens}}, …}
// with exact integers.
func decodeIndexerScores(data []byte) (map[routecore.WorkerWithDpRank]uint64, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil || top == nil {
		return nil, errors.New("something that is not a JSON object")
	}
	raw, ok := top["scores"]
	if !ok {
		return nil, errors.New("an answer without scores")
	}
	var scores map[string]map[string]json.RawMessage
	if err := json.Unmarshal(raw, &scores); err != nil {
		return nil, fmt.Errorf("scores that are not {worker_id: {dp_rank: tokens}} (%s)", describeJSONErr(err))
	}
	out := make(map[routecore.WorkerWithDpRank]uint64)
	for w, ranks := range scores {
		id, err := strconv.ParseUint(w, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("worker id %q that is not a u64 decimal", w)
		}
		for r, v := range ranks {
			dp, err := strconv.ParseUint(r, 10, 32)
			if err != nil {
				return nil, fmt.Errorf("dp rank %q of worker %s that is not a u32 decimal", r, w)
			}
			n, ok, err := jsonUint(v, 64)
			if err != nil || !ok {
				return nil, fmt.Errorf("a bad score for worker %s dp rank %s: %.40s", w, r, bytes.TrimSpace(v))
			}
			out[routecore.WorkerWithDpRank{WorkerID: routecore.WorkerID(id), DpRank: uint32(dp)}] = n
		}
	}
	return out, nil
}

// describeJSONErr describes a json.Unmarshal error without Go type names.
func describeJSONErr(err error) string {
	var ute *json.UnmarshalTypeError
	if errors.As(err, &ute) {
		if ute.Field == "" {
			return "a JSON " + ute.Value + " where an object was expected"
		}
		return "field " + ute.Field + " has the wrong type (a JSON " + ute.Value + ")"
	}
	return err.Error()
}

// targetURL joins path to an http(s) base URL.
func targetURL(base, path, what string) (string, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("%s %q is not an http(s) URL", what, redact.URLs(base))
	}
	return u.JoinPath(path).String(), nil
}

// doHTTP sends one request and reads at most limit bytes of a 2xx answer.
func doHTTP(ctx context.Context, client *http.Client, method, u string, body []byte, accept string, limit int64) ([]byte, error) {
	rc, err := openHTTP(ctx, client, method, u, body, accept)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return iolimit.ReadAtMost(rc, limit)
}

// openHTTP sends one request and returns the body of a 2xx answer; any other
// answer is an *httpStatusError carrying the answer's error message.
func openHTTP(ctx context.Context, client *http.Client, method, u string, body []byte, accept string) (io.ReadCloser, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", accept)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		defer resp.Body.Close()
		return nil, &httpStatusError{Code: resp.StatusCode, Status: resp.Status, Message: answerMessage(resp)}
	}
	return resp.Body, nil
}

// answerMessage is the error message of a non-2xx answer: a redirect's target,
// the "message" or "error" of a JSON body, or the body's first line.
func answerMessage(resp *http.Response) string {
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		if loc := resp.Header.Get("Location"); loc != "" {
			return "redirect to " + redact.URLs(loc) + " not followed; use the final URL"
		}
	}
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	var m map[string]json.RawMessage
	if json.Unmarshal(data, &m) == nil {
		for _, k := range []string{"message", "error", "detail"} {
			var s string
			if json.Unmarshal(m[k], &s) == nil && s != "" {
				return redact.URLs(firstLine(s))
			}
			var nested struct {
				Message string `json:"message"`
			}
			if json.Unmarshal(m[k], &nested) == nil && nested.Message != "" {
				return redact.URLs(firstLine(nested.Message))
			}
		}
	}
	return redact.URLs(firstLine(strings.TrimSpace(string(data))))
}

// statusCode is the HTTP status of a frontend or service-proxy answer error
// (0 when err is no such answer, or the Service itself is missing).
func statusCode(err error) int {
	var he *httpStatusError
	if errors.As(err, &he) {
		return he.Code
	}
	var st apierrors.APIStatus
	if errors.As(err, &st) && !serviceMissing(err) {
		return int(st.Status().Code)
	}
	return 0
}
