package capture

import (
	"bytes"
	"encoding/json"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/jsonscan"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw/decode"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
)

// The fast capture reader handles the common case — a JSON capture that reads
// without error — in one validating pass over the file, then splits it without
// copying and types the Kubernetes objects (decode.Decoder: straight from the
// bytes into raw's structs) and decodes the KV events on every core. It
// gives up (ok false) on anything else: YAML, invalid JSON, any item that would
// be an error, an unusual spelling of a field. Read then runs the
// reference reader (readCaptureSlow), which produces the error messages, so the
// fast path only has to agree with it on success; capture_fast_test.go checks
// that it does.

// fastReader is one fast read of a capture.
type fastReader struct {
	data []byte
	// ends maps where each container nested at most fastEndsDepth deep starts
	// to where it ends (recorded while validating).
	ends *jsonscan.Ends
	rd   captureReader // the reference reader's state (header, item count, bundle)
	// objs are the Kubernetes objects' spans, typed in parallel afterwards into
	// typed (then rd.b.Objects, same order) and, for ParseWhole, decoded whole
	// into rd.b.AsRead.
	objs  [][2]int
	typed []any
	// kvs are the KvEvents items whose events are decoded in parallel afterwards.
	kvs []fastKv
	// ahead holds objects decoded while the file was validated, by start.
	ahead map[int]aheadObject
}

// aheadObject is an object decoded ahead: typed, and whole for ParseWhole.
type aheadObject struct {
	typed any
	whole map[string]any
}

// decodeAhead decodes the items of a List on another core while the
// validator is still working through the rest of the file (a capture's KV
// events, usually its largest part, come last). Results are keyed by where
// the item starts; decodeParallel uses them and decodes the others. Decoding
// a span does not depend on what is around it, so an item decoded ahead is
// exactly what decodeParallel would have made of it; if validation fails they
// are dropped with everything else.
type decodeAhead struct {
	data    []byte
	whole   bool
	v       *jsonscan.Validator
	spans   chan [2]int
	stopped atomic.Bool
	done    chan struct{}
	out     map[int]aheadObject
}

// decodeAheadQueue bounds the items waiting to be decoded ahead; the rest are
// decoded afterwards as usual.
const decodeAheadQueue = 1 << 15

// startDecodeAhead hooks a decoder onto v's List items; it returns nil (which
// does nothing) on a single core, where it would only compete with v.
func startDecodeAhead(v *jsonscan.Validator, whole bool) *decodeAhead {
	if runtime.GOMAXPROCS(0) < 2 {
		return nil
	}
	a := &decodeAhead{data: v.B, whole: whole, v: v, spans: make(chan [2]int, decodeAheadQueue), done: make(chan struct{}), out: map[int]aheadObject{}}
	v.OnObject, v.ObjectDepth = a.offer, 2
	go a.run()
	return a
}

// offer queues a validated List item unless it is one of kubectl-dynamo's own
// kinds (KV events are decoded by event, not into maps) or the queue is full.
func (a *decodeAhead) offer(start, end int) {
	var buf [8]jsonscan.Member
	for _, m := range jsonscan.Members(a.v.Ends, a.data, start, buf[:0]) {
		if jsonscan.KeyIs(a.data, m.KeyStart, m.KeyEnd, "apiVersion") {
			if bytes.HasPrefix(a.data[m.ValStart:m.ValEnd], []byte(`"`+Group+"/")) {
				return
			}
			break
		}
	}
	select {
	case a.spans <- [2]int{start, end}:
	default:
	}
}

func (a *decodeAhead) run() {
	defer close(a.done)
	// No recorded ends: the validator is still appending to them.
	dec := decode.NewDecoder(a.data, nil)
	d := jsonscan.Decoder{B: a.data}
	for span := range a.spans {
		if a.stopped.Load() {
			return
		}
		if o, ok := func() (o aheadObject, _ bool) {
			defer func() { _ = recover() }() // never for validated input; then decoded later as usual
			o.typed = dec.Item(span[0])
			if a.whole {
				v, _ := d.Value(span[0])
				o.whole, _ = v.(map[string]any)
			}
			return o, true
		}(); ok {
			a.out[span[0]] = o
		}
	}
}

// stop ends decoding ahead (after the item in progress) and returns what was
// decoded. It may be called more than once.
func (a *decodeAhead) stop() map[int]aheadObject {
	if a == nil {
		return nil
	}
	if !a.stopped.Swap(true) {
		a.v.OnObject = nil
		close(a.spans)
	}
	<-a.done
	return a.out
}

type fastKv struct {
	bundleIndex int      // index in rd.b.KvEvents
	events      [][2]int // element spans
}

// fastEndsDepth covers a List (0), its items (1), the items (2), their fields
// (3) and the elements of those (4: KV events).
const fastEndsDepth = 4

// readCaptureFast reads a capture, or reports ok false when the reference reader
// must be used.
func readCaptureFast(data []byte, name string, whole bool) (*raw.Bundle, bool) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	i := jsonscan.SkipWS(data, 0)
	if i >= len(data) || (data[i] != '{' && data[i] != '[') {
		return nil, false
	}
	var docs [][2]int
	v := jsonscan.Validator{B: data, Ends: &jsonscan.Ends{Spans: make([]jsonscan.Span, 0, 1024)}, EndsDepth: fastEndsDepth}
	ahead := startDecodeAhead(&v, whole)
	defer ahead.stop() // on the error paths
	for i < len(data) {
		end, ok := v.Value(i, 0)
		if !ok {
			return nil, false
		}
		docs = append(docs, [2]int{i, end})
		i = jsonscan.SkipWS(data, end)
	}
	fr := &fastReader{data: data, ends: v.Ends, rd: captureReader{b: &raw.Bundle{}, whole: whole}}
	for _, d := range docs {
		if !fr.document(d[0], 0) {
			return nil, false
		}
	}
	fr.ahead = ahead.stop()
	if !fr.decodeParallel() {
		return nil, false
	}
	b := fr.rd.b
	if b.Context == "" {
		b.Context = name
	}
	if name != "" {
		b.Sources = append(b.Sources, model.SourceStatus{Kind: model.SourceCapture, Detail: name, At: b.CollectedAt})
	}
	return b, true
}

// document is captureReader.document over a validated span starting at i.
func (fr *fastReader) document(i, depth int) bool {
	if depth > 2 {
		return false
	}
	if fr.data[i] == '[' {
		for _, e := range jsonscan.Elements(fr.ends, fr.data, i, nil) {
			if !fr.item(e[0], e[1], depth) {
				return false
			}
		}
		return true
	}
	return fr.item(i, jsonscan.SkipKnown(fr.ends, fr.data, i), depth)
}

// item is captureReader.item over the validated value b[s:e].
func (fr *fastReader) item(s, e, depth int) bool {
	b := fr.data
	if b[s] != '{' {
		return false
	}
	var apiVersion, kind, items, metadata *jsonscan.Member
	members := jsonscan.Members(fr.ends, b, s, make([]jsonscan.Member, 0, 8))
	for k := range members {
		m := &members[k]
		switch {
		case jsonscan.KeyIs(b, m.KeyStart, m.KeyEnd, "apiVersion"):
			apiVersion = m
		case jsonscan.KeyIs(b, m.KeyStart, m.KeyEnd, "kind"):
			kind = m
		case jsonscan.KeyIs(b, m.KeyStart, m.KeyEnd, "items"):
			items = m
		case jsonscan.KeyIs(b, m.KeyStart, m.KeyEnd, "metadata"):
			metadata = m
		}
	}
	var h captureHeader
	h.APIVersion = fr.stringValue(apiVersion)
	h.Kind = fr.stringValue(kind)
	if items != nil && (h.Kind == "List" || strings.HasSuffix(h.Kind, "List")) {
		if h.Kind == "List" && !fr.rd.headerSeen {
			var raw json.RawMessage
			if metadata != nil {
				raw = b[metadata.ValStart:metadata.ValEnd]
			}
			if err := fr.rd.listHeader(raw); err != nil {
				return false
			}
		}
		switch b[items.ValStart] {
		case 'n':
			return true
		case '[':
			for _, el := range jsonscan.Elements(fr.ends, b, items.ValStart, nil) {
				if !fr.document(el[0], depth+1) {
					return false
				}
			}
			return true
		}
		return false
	}
	fr.rd.items++
	if h.Kind == "" || h.APIVersion == "" {
		return false
	}
	group, _, _ := strings.Cut(h.APIVersion, "/")
	if group == Group {
		if h.APIVersion == APIVersion && h.Kind == KindKvEvents {
			return fr.kvEvents(s, e, members)
		}
		return fr.rd.ours(h, b[s:e]) == nil
	}
	fr.objs = append(fr.objs, [2]int{s, e})
	return true
}

// stringValue is json.Unmarshal into a string, ignoring a non-string value.
func (fr *fastReader) stringValue(m *jsonscan.Member) string {
	if m == nil || fr.data[m.ValStart] != '"' {
		return ""
	}
	return jsonscan.String(fr.data, m.ValStart, m.ValEnd)
}

// kvEvents reads a KvEvents item: every field but events with json.Unmarshal
// (on a copy of the item without the events), the events' spans for later.
func (fr *fastReader) kvEvents(s, e int, members []jsonscan.Member) bool {
	b := fr.data
	var events *jsonscan.Member
	for k := range members {
		m := &members[k]
		key := jsonscan.String(b, m.KeyStart, m.KeyEnd)
		if key == "events" {
			events = m
		} else if strings.EqualFold(key, "events") {
			return false // json.Unmarshal would match it case-insensitively
		}
	}
	header := make([]byte, 0, 256)
	last := s
	for k := range members {
		m := &members[k]
		if jsonscan.KeyIs(b, m.KeyStart, m.KeyEnd, "events") {
			header = append(header, b[last:m.ValStart]...)
			header = append(header, "null"...)
			last = m.ValEnd
		}
	}
	header = append(header, b[last:e]...)
	var v captureKvEvents
	if err := json.Unmarshal(header, &v); err != nil || v.Deployment == "" || v.Events != nil {
		return false
	}
	kv := raw.KvEvents{Namespace: v.Metadata.Namespace, Deployment: v.Deployment, BlockSize: v.BlockSize, Source: v.Source}
	var spans [][2]int
	if events != nil {
		switch b[events.ValStart] {
		case 'n':
		case '[':
			spans = jsonscan.Elements(fr.ends, b, events.ValStart, nil)
		default:
			return false
		}
	}
	kv.Events = make([]routecore.RouterEvent, len(spans))
	fr.rd.b.KvEvents = append(fr.rd.b.KvEvents, kv)
	fr.kvs = append(fr.kvs, fastKv{bundleIndex: len(fr.rd.b.KvEvents) - 1, events: spans})
	return true
}

// decodeParallel types the recorded objects and decodes the events on every
// core.
func (fr *fastReader) decodeParallel() bool {
	type task struct {
		obj       int // index into fr.objs, or -1
		kv, event int
	}
	n := len(fr.objs)
	for _, kv := range fr.kvs {
		n += len(kv.events)
	}
	tasks := make([]task, 0, n)
	fr.typed = make([]any, len(fr.objs))
	if fr.rd.whole && len(fr.objs) > 0 {
		fr.rd.b.AsRead = make([]raw.Object, len(fr.objs))
	}
	for i := range fr.objs {
		tasks = append(tasks, task{obj: i})
	}
	for k, kv := range fr.kvs {
		for j := range kv.events {
			tasks = append(tasks, task{obj: -1, kv: k, event: j})
		}
	}
	var failed atomic.Bool
	var next atomic.Int64
	const batch = 32
	work := func() {
		dec := decode.NewDecoder(fr.data, fr.ends)
		d := jsonscan.Decoder{B: fr.data}
		for !failed.Load() {
			lo := int(next.Add(batch)) - batch
			if lo >= len(tasks) {
				return
			}
			for _, t := range tasks[lo:min(lo+batch, len(tasks))] {
				if t.obj >= 0 {
					span := fr.objs[t.obj]
					if o, ok := fr.ahead[span[0]]; ok && (!fr.rd.whole || o.whole != nil) {
						fr.typed[t.obj] = o.typed
						if fr.rd.whole {
							fr.rd.b.AsRead[t.obj] = o.whole
						}
						continue
					}
					fr.typed[t.obj] = dec.Item(span[0])
					if fr.rd.whole {
						v, _ := d.Value(span[0])
						m, ok := v.(map[string]any)
						if !ok {
							failed.Store(true)
							return
						}
						fr.rd.b.AsRead[t.obj] = m
					}
					continue
				}
				kv := fr.kvs[t.kv]
				span := kv.events[t.event]
				ev, err := routecore.DecodeValidRouterEvent(fr.data[span[0]:span[1]])
				if err != nil {
					failed.Store(true)
					return
				}
				fr.rd.b.KvEvents[kv.bundleIndex].Events[t.event] = ev
			}
		}
	}
	workers := min(runtime.GOMAXPROCS(0), (len(tasks)+batch-1)/batch)
	var wg sync.WaitGroup
	for range workers - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
	if failed.Load() {
		return false
	}
	for _, o := range fr.typed {
		decode.Add(&fr.rd.b.Objects, o)
	}
	fr.typed = nil
	return true
}
