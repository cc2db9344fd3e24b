package watch

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"sort"
	"strings"
	"testing"
	"testing/iotest"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// unstructuredFingerprint is nodeFingerprint as the watcher computed it when it
// decoded every event into an Unstructured object: the reference the JSON
// reader must match.
func unstructuredFingerprint(u *unstructured.Unstructured) uint64 {
	h := fnv.New64a()
	labels := u.GetLabels()
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(h, "l%s=%s\x00", k, labels[k])
	}
	unsched, _, _ := unstructured.NestedBool(u.Object, "spec", "unschedulable")
	fmt.Fprintf(h, "u%t\x00", unsched)
	for _, f := range []string{"capacity", "allocatable"} {
		m, _, _ := unstructured.NestedStringMap(u.Object, "status", f)
		ks := make([]string, 0, len(m))
		for k := range m {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		for _, k := range ks {
			fmt.Fprintf(h, "%s:%s=%s\x00", f, k, m[k])
		}
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		cm, _ := c.(map[string]any)
		if cm["type"] == "Ready" {
			fmt.Fprintf(h, "ready=%v\x00", cm["status"])
		}
	}
	return h.Sum64()
}

// readyStatusIsPlain tells whether every Ready condition's status is a string
// or absent: the values whose fingerprint the JSON reader prints as %v does
// (for others it prints their JSON, which changes when they do).
func readyStatusIsPlain(u *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		cm, _ := c.(map[string]any)
		if cm["type"] != "Ready" {
			continue
		}
		if s, ok := cm["status"]; ok {
			if _, isStr := s.(string); !isStr {
				return false
			}
		}
	}
	return true
}

// checkWatchObject compares what the JSON reader reads of an event's object
// with what the Unstructured accessors read of it.
func checkWatchObject(t *testing.T, doc string) {
	t.Helper()
	var ev map[string]any
	if err := json.Unmarshal([]byte(doc), &ev); err != nil {
		return // not an event: the stream reader rejects it
	}
	got := readWatchEvent([]byte(doc))
	if typ, _ := ev["type"].(string); got.Type != typ {
		t.Errorf("type = %q, want %q", got.Type, typ)
	}
	obj, _ := ev["object"].(map[string]any)
	if obj == nil {
		if got.Object != (watchObject{}) {
			t.Errorf("object = %+v, want none", got.Object)
		}
		return
	}
	u := &unstructured.Unstructured{Object: obj}
	kind, _, _ := unstructured.NestedString(obj, "involvedObject", "kind")
	msg, _, _ := unstructured.NestedString(obj, "message")
	want := watchObject{Name: u.GetName(), ResourceVersion: u.GetResourceVersion(), InvolvedKind: kind, Fingerprint: got.Object.Fingerprint}
	if readyStatusIsPlain(u) {
		want.Fingerprint = unstructuredFingerprint(u)
	}
	if got.Object != want {
		t.Errorf("object = %+v, want %+v", got.Object, want)
	}
	if got.Type == "ERROR" && got.Message != msg {
		t.Errorf("message = %q, want %q", got.Message, msg)
	}
}

// watchEventDocs are events as the API server sends them, and the edges the
// reader must read as the Unstructured accessors do.
var watchEventDocs = []string{
	`{"type":"ADDED","object":{"kind":"Node","metadata":{"name":"n1","resourceVersion":"12","labels":{"topology.kubernetes.io/zone":"z1","a":"b"}},` +
		`"spec":{"unschedulable":true},"status":{"capacity":{"cpu":"8","nvidia.com/gpu":"4"},"allocatable":{"cpu":"7500m"},` +
		`"conditions":[{"type":"MemoryPressure","status":"False"},{"type":"Ready","status":"True","lastHeartbeatTime":"2025-01-01T00:00:00Z"}]}}}`,
	`{"type":"MODIFIED","object":{"kind":"Event","metadata":{"name":"e.1","resourceVersion":"13"},"involvedObject":{"kind":"Pod","name":"p"},"type":"Warning"}}`,
	`{"type":"BOOKMARK","object":{"kind":"Pod","metadata":{"resourceVersion":"99","annotations":{"k8s.io/initial-events-end":"true"}}}}`,
	`{"type":"ERROR","object":{"kind":"Status","status":"Failure","message":"too old resource version: 1 (5)","reason":"Expired","code":410}}`,
	`{"type":"DELETED","object":{"metadata":{"name":"n2","labels":null},"status":{"capacity":{"cpu":8},"conditions":[{"type":"Ready"}]}}}`,
	`{"type":"ADDED","object":{"metadata":{"name":"n3","labels":{"a":null,"b":"c"}},"spec":{"unschedulable":"yes"},"status":{"conditions":{"type":"Ready"}}}}`,
	`{"type":"ADDED","object":{"metadata":{"name":1,"labels":{"a":1}},"status":{"conditions":[1,null,{"type":"Ready","status":true},{"type":"Ready","status":"Unknown"}]}}}`,
	`{"type":"ADDED","object":{"metadata":{"name":"dup"},"metadata":{"name":"dup2","resourceVersion":"7"},"status":{"allocatable":{"c\u0070u":"1","x":"y"}}}}`,
	`{"type":"ADDED","object":null}`,
	`{"type":"ADDED","object":[1,2]}`,
	`{"type":3,"object":{}}`,
	`{}`,
}

func TestReadWatchEventMatchesUnstructured(t *testing.T) {
	for _, doc := range watchEventDocs {
		t.Run(doc[:min(len(doc), 40)], func(t *testing.T) { checkWatchObject(t, doc) })
	}
}

// FuzzReadWatchEventMatchesUnstructured checks the JSON reader of watch events
// against the Unstructured accessors the watcher used before, on any event.
func FuzzReadWatchEventMatchesUnstructured(f *testing.F) {
	for _, doc := range watchEventDocs {
		f.Add(doc)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		if len(doc) > 1<<16 {
			return
		}
		// The stream reader reads only validated objects; read it as it would.
		es := &eventStream{r: strings.NewReader(doc)}
		if _, err := es.next(); err != nil {
			return
		}
		var probe any
		if json.Unmarshal([]byte(doc), &probe) != nil {
			return // (e.g. a second value after the event)
		}
		checkWatchObject(t, strings.TrimSpace(doc))
	})
}

func TestEventStream(t *testing.T) {
	two := watchEventDocs[0] + "\n" + watchEventDocs[1] + "\n"
	tests := []struct {
		name      string
		stream    string
		oneByte   bool
		types     []string
		wantErr   error // after the events; io.EOF is a clean end
		wantErrIn string
	}{
		{name: "events one a line", stream: two, types: []string{"ADDED", "MODIFIED"}, wantErr: io.EOF},
		{name: "one byte at a time", stream: two, oneByte: true, types: []string{"ADDED", "MODIFIED"}, wantErr: io.EOF},
		{name: "back to back, no newline", stream: watchEventDocs[2] + watchEventDocs[3], types: []string{"BOOKMARK", "ERROR"}, wantErr: io.EOF},
		{name: "empty stream", stream: "", wantErr: io.EOF},
		{name: "cut in the middle of an event", stream: watchEventDocs[0] + watchEventDocs[1][:30], types: []string{"ADDED"}, wantErr: io.ErrUnexpectedEOF},
		{name: "not JSON", stream: `{"type":"ADDED","object":{"metadata":{"name":x}}} ` + strings.Repeat(" ", 32), wantErrIn: "not JSON"},
		{name: "not an object", stream: `[1,2,3] `, wantErrIn: "not a JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r io.Reader = strings.NewReader(tt.stream)
			if tt.oneByte {
				r = iotest.OneByteReader(r)
			}
			es := &eventStream{r: r}
			var types []string
			var err error
			for {
				var ev watchEvent
				if ev, err = es.next(); err != nil {
					break
				}
				types = append(types, ev.Type)
			}
			if strings.Join(types, ",") != strings.Join(tt.types, ",") {
				t.Errorf("events = %v, want %v", types, tt.types)
			}
			switch {
			case tt.wantErrIn != "":
				if err == nil || !strings.Contains(err.Error(), tt.wantErrIn) {
					t.Errorf("err = %v, want one saying %q", err, tt.wantErrIn)
				}
			case !errors.Is(err, tt.wantErr):
				t.Errorf("err = %v, want %v", err, tt.wantErr)
			}
		})
	}
}

// TestEventStreamReturnsAnEventBeforeTheNext checks that a complete event is
// read without waiting for the next one (a watch may stay quiet for minutes).
func TestEventStreamReturnsAnEventBeforeTheNext(t *testing.T) {
	pr, pw := io.Pipe()
	defer func() { _ = pw.Close() }()
	go func() { _, _ = pw.Write([]byte(watchEventDocs[1])) }()
	es := &eventStream{r: pr}
	ev, err := es.next()
	if err != nil || ev.Type != "MODIFIED" || ev.Object.InvolvedKind != "Pod" {
		t.Fatalf("next = %+v, %v; want the MODIFIED event of a Pod", ev, err)
	}
}

// TestEventStreamBoundsAnEvent checks that an event larger than
// maxWatchEventBytes ends the stream instead of growing the buffer.
func TestEventStreamBoundsAnEvent(t *testing.T) {
	defer func(n int) { maxWatchEventBytes = n }(maxWatchEventBytes)
	maxWatchEventBytes = 1 << 20
	big := `{"type":"ADDED","object":{"metadata":{"name":"` + strings.Repeat("a", 2<<20) + `"}}}`
	es := &eventStream{r: strings.NewReader(big)}
	if _, err := es.next(); !errors.Is(err, errEventTooLarge) {
		t.Fatalf("err = %v, want %v", err, errEventTooLarge)
	}
	if cap(es.buf) > maxWatchEventBytes+64<<10 {
		t.Errorf("buffer grew to %d bytes, want at most %d", cap(es.buf), maxWatchEventBytes+64<<10)
	}
}

func TestListPageReadsItems(t *testing.T) {
	page := `{"kind":"NodeList","apiVersion":"v1","metadata":{"resourceVersion":"42","continue":"c1"},"items":[` +
		`{"metadata":{"name":"n1","resourceVersion":"40","labels":{"a":"b"}}},{"metadata":{"name":"n2"}}]}`
	rv, cont, items, err := listPage([]byte(page))
	if err != nil {
		t.Fatal(err)
	}
	if rv != "42" || cont != "c1" || len(items) != 2 || items[0].Name != "n1" || items[0].ResourceVersion != "40" || items[1].Name != "n2" {
		t.Fatalf("listPage = %q, %q, %+v", rv, cont, items)
	}
	u := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "n1", "resourceVersion": "40", "labels": map[string]any{"a": "b"}}}}
	if items[0].Fingerprint != unstructuredFingerprint(u) {
		t.Errorf("fingerprint differs from the Unstructured one")
	}
	if _, _, _, err := listPage([]byte(`{"items":[`)); err == nil {
		t.Errorf("a cut LIST answer read without error")
	}
}
