package watch

import (
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"sort"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/jsonscan"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw/decode"
)

// The watcher reads its WATCH streams and LIST pages as JSON, into the little
// it needs of each object (watchObject): no object is decoded whole.

// watchObject is what the watcher reads of an object: its name and
// resourceVersion, an Event's involvedObject.kind, and for a Node the
// fingerprint of what the model reads of it.
type watchObject struct {
	Name, ResourceVersion string
	InvolvedKind          string
	Fingerprint           uint64
}

// readWatchObject reads the validated object at b[i] ({} for a value that is
// not an object).
func readWatchObject(b []byte, ends *jsonscan.Ends, i int) watchObject {
	var w watchObject
	if i < 0 || i >= len(b) || b[i] != '{' {
		return w
	}
	d := decode.NewDecoder(b, ends)
	var meta, spec, status, involved = -1, -1, -1, -1
	o := jsonscan.NewObj(ends, b, i)
	for o.Next() {
		switch o.Key() {
		case "metadata":
			meta = o.Val
		case "spec":
			spec = o.Val
		case "status":
			status = o.Val
		case "involvedObject":
			involved = o.Val
		}
	}
	w.Name = d.StringField(meta, "name")
	w.ResourceVersion = d.StringField(meta, "resourceVersion")
	w.InvolvedKind = d.StringField(involved, "kind")
	w.Fingerprint = nodeFingerprint(b, ends, d, meta, spec, status)
	return w
}

// nodeFingerprint hashes what the model reads from a Node: labels,
// schedulability, capacity, allocatable and the Ready condition (as the
// accessors read them: labels null-coercing, the resource maps strings only).
func nodeFingerprint(b []byte, ends *jsonscan.Ends, d *decode.Decoder, meta, spec, status int) uint64 {
	h := fnv.New64a()
	writeMap := func(prefix string, m map[string]string) {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(h, "%s%s=%s\x00", prefix, k, m[k])
		}
	}
	writeMap("l", d.StringMapField(meta, "labels", true))
	unsched := false
	if at := d.Field(spec, "unschedulable"); at >= 0 && b[at] == 't' {
		unsched = true
	}
	fmt.Fprintf(h, "u%t\x00", unsched)
	for _, f := range []string{"capacity", "allocatable"} {
		writeMap(f+":", d.StringMapField(status, f, false))
	}
	if at := d.Field(status, "conditions"); at >= 0 && b[at] == '[' {
		a := jsonscan.NewArr(ends, b, at)
		for a.Next() {
			if b[a.Val] != '{' {
				continue
			}
			if d.StringField(a.Val, "type") != "Ready" {
				continue
			}
			// As fmt's %v prints the status the Unstructured object held: a
			// string as it is, an absent one as <nil>; any other value as its
			// JSON (the fingerprint need only change when the value does).
			switch s := d.Field(a.Val, "status"); {
			case s < 0:
				fmt.Fprintf(h, "ready=<nil>\x00")
			case b[s] == '"':
				fmt.Fprintf(h, "ready=%s\x00", d.StringField(a.Val, "status"))
			default:
				fmt.Fprintf(h, "ready=%s\x00", b[s:jsonscan.SkipKnown(ends, b, s)])
			}
		}
	}
	return h.Sum64()
}

// maxWatchEventBytes bounds one watch event (one object and its envelope); a
// variable for tests.
var maxWatchEventBytes = 64 << 20

// eventStream reads the events of a WATCH answer: JSON objects one after
// another, {"type": …, "object": {…}}.
type eventStream struct {
	r   io.Reader
	buf []byte
	pos int
	eof bool
}

// watchEvent is one event of a WATCH stream.
type watchEvent struct {
	Type string
	// Object is what the watcher reads of the event's object (for an ERROR
	// event, a Status: its message is in Message).
	Object  watchObject
	Message string
}

// errEventTooLarge ends a watch whose event exceeds maxWatchEventBytes.
var errEventTooLarge = errors.New("watch event too large")

// next reads the next event; io.EOF at the end of the stream.
func (s *eventStream) next() (watchEvent, error) {
	for {
		s.pos = jsonscan.SkipWS(s.buf, s.pos)
		if s.pos < len(s.buf) {
			v := jsonscan.Validator{B: s.buf}
			end, ok := v.Value(s.pos, 0)
			// An object is complete at its closing brace: no need to wait for
			// what follows it (the next event may be minutes away).
			if ok && end <= len(s.buf) && s.buf[s.pos] == '{' {
				ev := readWatchEvent(s.buf[s.pos:end])
				s.pos = end
				return ev, nil
			}
			if !ok && end < len(s.buf)-8 {
				return watchEvent{}, errors.New("the watch stream is not JSON")
			}
			if ok && s.buf[s.pos] != '{' {
				return watchEvent{}, errors.New("a watch event is not a JSON object")
			}
		}
		if s.eof {
			if s.pos < len(s.buf) {
				return watchEvent{}, io.ErrUnexpectedEOF
			}
			return watchEvent{}, io.EOF
		}
		if err := s.fill(); err != nil {
			return watchEvent{}, err
		}
	}
}

// fill reads more of the stream, keeping what is not read yet.
func (s *eventStream) fill() error {
	kept := len(s.buf) - s.pos
	if kept >= maxWatchEventBytes {
		return errEventTooLarge
	}
	if cap(s.buf)-kept < 32<<10 {
		nb := make([]byte, kept, min(max(64<<10, 2*cap(s.buf)), maxWatchEventBytes+64<<10))
		copy(nb, s.buf[s.pos:])
		s.buf = nb
	} else {
		s.buf = s.buf[:copy(s.buf, s.buf[s.pos:])]
	}
	s.pos = 0
	n, err := s.r.Read(s.buf[len(s.buf):cap(s.buf)])
	s.buf = s.buf[:len(s.buf)+n]
	switch {
	case err == io.EOF:
		s.eof = true
	case err != nil:
		return err
	}
	return nil
}

// readWatchEvent reads a validated event.
func readWatchEvent(b []byte) watchEvent {
	var ev watchEvent
	obj := -1
	var ends jsonscan.Ends
	v := jsonscan.Validator{B: b, Ends: &ends, EndsDepth: 3}
	v.Value(0, 0)
	d := decode.NewDecoder(b, &ends)
	o := jsonscan.NewObj(&ends, b, 0)
	for o.Next() {
		switch o.Key() {
		case "type":
			if b[o.Val] == '"' {
				ev.Type = jsonscan.String(b, o.Val, jsonscan.SkipKnown(&ends, b, o.Val))
			}
		case "object":
			obj = o.Val
		}
	}
	ev.Object = readWatchObject(b, &ends, obj)
	if ev.Type == "ERROR" {
		ev.Message = d.StringField(obj, "message")
	}
	return ev
}

// listPage reads a LIST answer for the watcher: its resourceVersion and
// continue token, and what the watcher reads of each item.
func listPage(data []byte) (rv, cont string, items []watchObject, err error) {
	p, err := decode.ListPage(data)
	if err != nil {
		return "", "", nil, fmt.Errorf("read the LIST answer: %w", err)
	}
	items = make([]watchObject, len(p.Items))
	for k, i := range p.Items {
		items[k] = readWatchObject(p.B, p.Ends, i)
	}
	return p.ResourceVersion, p.Continue, items, nil
}
