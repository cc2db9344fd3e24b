package capture

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/build"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw/decode"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
)

func mustEvent(t testing.TB, js string) routecore.RouterEvent {
	t.Helper()
	ev, err := routecore.DecodeRouterEvent([]byte(js))
	if err != nil {
		t.Fatalf("decode %s: %v", js, err)
	}
	return ev
}

// roundTripBundle exercises every capture feature: ids above 2^53 and 2^63,
// negative i64 engine hashes, multi-line text, busy thresholds with and
// without a metrics scrape, sources and notes.
func roundTripBundle(t testing.TB) *raw.Bundle {
	dwm, err := DecodeJSONObject([]byte(`{"apiVersion":"nvidia.com/v1alpha1","kind":"DynamoWorkerMetadata","metadata":{"name":"w","namespace":"ns"},
		"spec":{"data":{"endpoints":{"a/b/c/ffffffffffffffff":{"type":"Endpoint","instance_id":18446744073709551615,"weight":0.85,"n":-9223372036854775808,"s":"0755","t":"true"}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 9, 30, 14, 5, 12, 123456789, time.UTC)
	whole := []raw.Object{dwm, {"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "cm", "namespace": "ns"}, "data": map[string]any{"x": "line1\nline2\n", "y": ""}}}
	return &raw.Bundle{
		Context: "ctx", Namespace: "ns", CollectedAt: at,
		Objects: decode.FromObjects(whole), AsRead: whole,
		Etcd: []raw.EtcdKeyValue{
			{Key: "v1/instances/ns/backend/generate/694d98147d54be25", Value: `{"type":"Endpoint","instance_id":7587888160958627365}`},
			{Key: "v1/mdc/x", Value: ""},
		},
		Metrics: []raw.FrontendMetrics{
			{Namespace: "ns", Deployment: "d", Source: "svc/metrics", At: at, Text: "# HELP x\nx{a=\"b\"} 1\n"},
			{Namespace: "ns", Deployment: "e", Text: ""},
		},
		BusyThresholds: []raw.FrontendBusyThresholds{
			{Namespace: "ns", Deployment: "d", Source: "svc/busy", At: at.Add(time.Second), JSON: `{"thresholds":[]}`},
			{Namespace: "ns", Deployment: "f", JSON: `{}`},
		},
		KvEvents: []raw.KvEvents{{Namespace: "ns", Deployment: "d", BlockSize: 16, Source: "placements", Events: []routecore.RouterEvent{
			mustEvent(t, `{"worker_id":7587888160958627365,"event":{"event_id":1812,"dp_rank":1,"data":{"stored":{"parent_hash":-4943900154361435539,"start_position":48,"blocks":[{"block_hash":-1,"tokens_hash":9034612871098223409,"mm_extra_info":{"mm_hashes":[1]}}]}}}}`),
			mustEvent(t, `{"worker_id":18446744073709551615,"storage_tier":"host_pinned","event":{"event_id":1,"dp_rank":0,"data":{"removed":{"block_hashes":[-9223372036854775808,18446744073709551615]}}}}`),
			mustEvent(t, `{"worker_id":1,"event":{"event_id":2,"dp_rank":0,"data":"cleared"}}`),
		}}},
		RouterLogs: []raw.RouterLogs{{Namespace: "ns", Deployment: "d", Source: "pod/d-frontend-0/main", At: at, Dropped: 3, Lines: []string{
			`2026-09-30T14:05:12.000000Z  INFO dynamo_kv_router::scheduling::selector: Selected worker router_mode="kv" request_id="req-1" worker_id=18446744073709551615 worker_type=prefill dp_rank=0 logit=1.5 host_pinned_blocks=0 disk_blocks=0`,
			"a line with \\x1b and \\u202e escaped by the writer: \x1b[2J \u202e",
		}}},
		Sources: []model.SourceStatus{{Kind: model.SourceKubernetes, Detail: "ctx", At: at}, {Kind: model.SourceFrontend, Detail: "svc", At: at, Degraded: true, Message: "404"}},
		Notes:   []model.Note{{Severity: model.NoteWarning, Source: model.SourceEtcd, Deployment: "ns/d", Message: "etcd unreachable"}},
	}
}

func TestCaptureRoundTrip(t *testing.T) {
	b := roundTripBundle(t)
	var buf bytes.Buffer
	if err := Write(&buf, b); err != nil {
		t.Fatal(err)
	}
	text := buf.String()
	for _, s := range []string{"18446744073709551615", "7587888160958627365", "13502843919348116077", "kind: KvEvents", "kind: EtcdKeyValues", "kind: RouterLogs", "kubectl-dynamo.io/collected-at: \"2026-09-30T14:05:12.123456789Z\""} {
		if !strings.Contains(text, s) {
			t.Errorf("capture lacks %q:\n%s", s, text)
		}
	}
	got, err := ParseWhole([]byte(text), "")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(b, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	// Read keeps the typed objects only.
	typed, err := Read(strings.NewReader(text), "")
	if err != nil {
		t.Fatal(err)
	}
	if typed.AsRead != nil || !cmp.Equal(b.Objects, typed.Objects) {
		t.Errorf("Read: objects %+v, whole %d", typed.Objects, len(typed.AsRead))
	}
	// A named read records the file as a capture source and keeps the context.
	named, err := Read(strings.NewReader(text), "bug-1234.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if named.Context != "ctx" || named.Sources[len(named.Sources)-1] != (model.SourceStatus{Kind: model.SourceCapture, Detail: "bug-1234.yaml", At: b.CollectedAt}) {
		t.Errorf("named read: context %q sources %+v", named.Context, named.Sources)
	}
	// The same capture as JSON reads identically.
	y2j, err := json.Marshal(mustYAMLToJSONMap(t, text))
	if err != nil {
		t.Fatal(err)
	}
	gotJSON, err := ParseWhole(y2j, "")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(b, gotJSON); diff != "" {
		t.Errorf("JSON round trip (-want +got):\n%s", diff)
	}
}

func mustYAMLToJSONMap(t *testing.T, y string) json.RawMessage {
	t.Helper()
	docs, err := captureDocuments([]byte(y))
	if err != nil || len(docs) != 1 {
		t.Fatalf("captureDocuments: %v (%d docs)", err, len(docs))
	}
	return json.RawMessage(docs[0])
}

func TestReadCaptureShapes(t *testing.T) {
	pod := func(name string) string {
		return `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"` + name + `","namespace":"ns"}}`
	}
	cases := []struct {
		name, in string
		pods     []string
		ctx      string
	}{
		{"json list", `{"apiVersion":"v1","kind":"List","metadata":{"annotations":{"kubectl-dynamo.io/context":"c"}},"items":[` + pod("a") + `,` + pod("b") + `]}`, []string{"a", "b"}, "c"},
		{"json stream", pod("a") + "\n" + pod("b"), []string{"a", "b"}, "x"},
		{"json array", "[" + pod("a") + "]", []string{"a"}, "x"},
		{"single yaml object", "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\n", []string{"a"}, "x"},
		{"multi-document yaml with a typed list and empty documents", "---\n# comment only\n---\napiVersion: v1\nkind: PodList\nitems:\n- " + pod("a") + "\n---\n" + pod("b") + "\n---\n", []string{"a", "b"}, "x"},
		{"nested list", `{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"List","items":[` + pod("a") + `]}]}`, []string{"a"}, "x"},
		{"byte order mark", "\xef\xbb\xbf" + pod("a"), []string{"a"}, "x"},
		{"empty list", "apiVersion: v1\nkind: List\nitems: []\n", nil, "x"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, err := Read(strings.NewReader(tc.in), "x")
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, o := range b.Objects.Pods {
				names = append(names, o.Name)
			}
			if diff := cmp.Diff(tc.pods, names); diff != "" || b.Context != tc.ctx {
				t.Errorf("context %q, objects (-want +got):\n%s", b.Context, diff)
			}
		})
	}
}

func TestReadCaptureErrors(t *testing.T) {
	ours := func(body string) string {
		return "apiVersion: v1\nkind: List\nitems:\n- apiVersion: kubectl-dynamo.io/v1alpha1\n  " + body + "\n"
	}
	cases := []struct{ name, in, want string }{
		{"empty", "", "capture f.yaml holds no objects"},
		{"comments only", "# nothing\n---\n", "holds no objects"},
		{"unknown kind of ours", ours("kind: Frobnicate"), `item 1: unknown kind "Frobnicate" in kubectl-dynamo.io/v1alpha1: expected EtcdKeyValues, FrontendMetrics, KvEvents or RouterLogs`},
		{"unsupported version of ours", "- {apiVersion: kubectl-dynamo.io/v2, kind: KvEvents}", `unsupported apiVersion "kubectl-dynamo.io/v2" for KvEvents`},
		{"item without kind", "apiVersion: v1\nkind: List\nitems:\n- {metadata: {name: x}}\n", "item 1 has no apiVersion or kind"},
		{"item not an object", "apiVersion: v1\nkind: List\nitems: [3]\n", "item 1 is not an object"},
		{"items not a list", "apiVersion: v1\nkind: List\nitems: {a: 1}\n", "List items must be an array"},
		{"invalid yaml", "a: [1, 2\n", "invalid YAML in document 1"},
		{"invalid json", `{"apiVersion": "v1", `, "invalid JSON"},
		{"second document invalid", "apiVersion: v1\nkind: Pod\n---\nkind: [\n", "invalid YAML in document 2"},
		{"yaml infinity", "apiVersion: v1\nkind: Pod\nx: .inf\n", "invalid YAML"},
		{"metrics without deployment", ours("kind: FrontendMetrics\n  metadata: {name: m}\n  text: x"), "FrontendMetrics m: deployment is required"},
		{"metrics text not a string", ours("kind: FrontendMetrics\n  deployment: d\n  text: [1]"), "FrontendMetrics (item 1): json: cannot unmarshal"},
		{"events without deployment", ours("kind: KvEvents\n  metadata: {name: k}\n  events: []"), "KvEvents k: deployment is required"},
		{"malformed event", ours(`kind: KvEvents
  metadata: {name: k}
  deployment: d
  events: [{worker_id: 1, event: {event_id: 1, dp_rank: 0, data: {stored: {blocks: [{block_hash: 1.5, tokens_hash: 2}]}}}}]`), "KvEvents k: event 0: malformed router event"},
		{"etcd entries malformed", ours("kind: EtcdKeyValues\n  entries: [{key: a, value: 3}]"), "EtcdKeyValues (item 1): json: cannot unmarshal number"},
		{"collected-at malformed", "apiVersion: v1\nkind: List\nmetadata: {annotations: {kubectl-dynamo.io/collected-at: yesterday}}\nitems: []\n", `annotation kubectl-dynamo.io/collected-at="yesterday" is not an RFC 3339 time`},
		{"sources malformed", "apiVersion: v1\nkind: List\nmetadata: {annotations: {kubectl-dynamo.io/sources: nope}}\nitems: []\n", "kubectl-dynamo.io/sources is not a JSON array of sources"},
		{"lists too deep", `{"kind":"List","apiVersion":"v1","items":[{"kind":"List","apiVersion":"v1","items":[{"kind":"List","apiVersion":"v1","items":[{"kind":"List","apiVersion":"v1","items":[]}]}]}]}`, "lists nested more than two deep"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read(strings.NewReader(tc.in), "f.yaml")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
	t.Run("too large", func(t *testing.T) {
		old := captureLimit
		captureLimit = 1 << 20
		defer func() { captureLimit = old }()
		_, err := Read(strings.NewReader(strings.Repeat("#", 1<<20+1)), "big.yaml")
		if err == nil || !strings.Contains(err.Error(), "capture big.yaml is larger than the 1 MiB limit") {
			t.Fatalf("error = %v", err)
		}
	})
}

func TestWriteCaptureErrors(t *testing.T) {
	if err := Write(&bytes.Buffer{}, nil); err == nil {
		t.Error("WriteCapture(nil) succeeded")
	}
	b := &raw.Bundle{KvEvents: []raw.KvEvents{{Namespace: "ns", Deployment: "d", Events: []routecore.RouterEvent{{}}}}}
	if err := Write(&bytes.Buffer{}, b); err == nil || !strings.Contains(err.Error(), "KV events of ns/d, event 0") {
		t.Errorf("error = %v", err)
	}
	b = &raw.Bundle{AsRead: []raw.Object{nil}}
	if err := Write(&bytes.Buffer{}, b); err == nil || !strings.Contains(err.Error(), "object 0 is empty") {
		t.Errorf("error = %v", err)
	}
}

// FuzzReadCapture checks that no input makes Read or Build panic, and
// that whatever Read accepts can be written and read again.
func FuzzReadCapture(f *testing.F) {
	var buf bytes.Buffer
	if err := Write(&buf, roundTripBundle(f)); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	for _, name := range []string{"labelkey-v1beta1.yaml", "v1alpha1-etcd.yaml", "dwm-payloads.yaml"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "..", "test", "fixtures", "build", name))
		if err != nil {
			f.Fatal(err)
		}
		b, err := ParseWhole(data, "")
		if err != nil {
			f.Fatal(err)
		}
		buf.Reset()
		if err := Write(&buf, b); err == nil {
			f.Add(buf.Bytes())
		}
	}
	f.Add([]byte(`{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"kubectl-dynamo.io/v1alpha1","kind":"KvEvents","deployment":"d","events":[{"worker_id":1,"event":{"event_id":1,"dp_rank":0,"data":"cleared"}}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 256<<10 {
			return
		}
		b, err := ParseWhole(data, "fuzz")
		if err != nil {
			return
		}
		if _, err := build.Build(b); err != nil {
			t.Fatalf("Build failed on an accepted capture: %v", err)
		}
		typed, err := Read(bytes.NewReader(data), "fuzz")
		if err != nil || !reflect.DeepEqual(typed.Objects, b.Objects) {
			t.Fatalf("Read and ParseWhole type the objects differently (%v)", err)
		}
		var out bytes.Buffer
		if err := Write(&out, b); err != nil {
			return // e.g. a hand-built event that cannot be re-encoded
		}
		if _, err := Read(&out, ""); err != nil {
			t.Fatalf("re-reading a written capture failed: %v\n%s", err, out.String())
		}
	})
}
