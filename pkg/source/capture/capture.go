package capture

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/boundedyaml"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw/decode"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/termsafe"
)

// Capture file vocabulary (see docs/capture-format.md).
const (
	// APIVersion is the apiVersion of the capture items kubectl-dynamo
	// defines itself (EtcdKeyValues, FrontendMetrics, KvEvents).
	APIVersion = "kubectl-dynamo.io/v1alpha1"
	// Group is the API group of those items.
	Group = "kubectl-dynamo.io"

	// KindEtcdKeyValues holds etcd key-values: entries [{key, value}].
	KindEtcdKeyValues = "EtcdKeyValues"
	// KindFrontendMetrics holds a frontend /metrics scrape (text) and,
	// optionally, its /busy_threshold answer (busyThreshold, raw JSON).
	KindFrontendMetrics = "FrontendMetrics"
	// KindKvEvents holds a deployment's KV-cache contents as RouterEvents.
	KindKvEvents = "KvEvents"
	// KindRouterLogs holds a redacted excerpt of a frontend pod's log: the
	// KV router's decision lines (capture --logs).
	KindRouterLogs = "RouterLogs"

	// AnnotationCollectedAt on the List is when the capture was taken (RFC 3339).
	AnnotationCollectedAt = "kubectl-dynamo.io/collected-at"
	// AnnotationContext on the List is the kubeconfig context captured.
	AnnotationContext = "kubectl-dynamo.io/context"
	// AnnotationNamespace on the List is the namespace scope captured ("" or
	// absent for all namespaces).
	AnnotationNamespace = "kubectl-dynamo.io/namespace"
	// AnnotationSources on the List is a JSON array of SourceStatus: what each
	// live source contributed when the capture was taken.
	AnnotationSources = "kubectl-dynamo.io/sources"
	// AnnotationNotes on the List is a JSON array of Note from the collection.
	AnnotationNotes = "kubectl-dynamo.io/notes"

	// MaxBytes bounds the size of a capture file Read accepts.
	MaxBytes = 512 << 20
)

// captureLimit is MaxBytes; tests lower it.
var captureLimit int64 = MaxBytes

// captureMeta is the metadata of one of our items.
type captureMeta struct {
	Name        string            `json:"name,omitempty"`
	Namespace   string            `json:"namespace,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

type captureHeader struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
}

type captureEtcd struct {
	APIVersion string             `json:"apiVersion"`
	Kind       string             `json:"kind"`
	Metadata   captureMeta        `json:"metadata"`
	Entries    []raw.EtcdKeyValue `json:"entries"`
}

type captureMetrics struct {
	APIVersion  string      `json:"apiVersion"`
	Kind        string      `json:"kind"`
	Metadata    captureMeta `json:"metadata"`
	Deployment  string      `json:"deployment"`
	Source      string      `json:"source,omitempty"`
	CollectedAt *time.Time  `json:"collectedAt,omitempty"`
	// Text is absent when the item carries only a busy-threshold answer.
	Text                     *string    `json:"text,omitempty"`
	BusyThreshold            *string    `json:"busyThreshold,omitempty"`
	BusyThresholdSource      string     `json:"busyThresholdSource,omitempty"`
	BusyThresholdCollectedAt *time.Time `json:"busyThresholdCollectedAt,omitempty"`
}

type captureKvEvents struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   captureMeta       `json:"metadata"`
	Deployment string            `json:"deployment"`
	BlockSize  int               `json:"blockSize"`
	Source     string            `json:"source,omitempty"`
	Events     []json.RawMessage `json:"events"`
}

type captureRouterLogs struct {
	APIVersion  string      `json:"apiVersion"`
	Kind        string      `json:"kind"`
	Metadata    captureMeta `json:"metadata"`
	Deployment  string      `json:"deployment"`
	Source      string      `json:"source,omitempty"`
	CollectedAt *time.Time  `json:"collectedAt,omitempty"`
	Dropped     int         `json:"dropped,omitempty"`
	Lines       []string    `json:"lines"`
}

// Read reads a capture file: a Kubernetes List (YAML or JSON), a
// multi-document YAML stream or a single object, whose items are Kubernetes
// objects as `kubectl get -o yaml` prints them plus the kubectl-dynamo.io/v1alpha1
// kinds EtcdKeyValues, FrontendMetrics and KvEvents. name (the file name, or "-"
// for stdin) labels errors, becomes the Bundle's Context when the List carries no
// context annotation, and is recorded as a capture source when not empty.
//
// The Kubernetes objects are typed (raw.Objects, pkg/raw/decode): a JSON
// capture's objects are read straight from the file into the typed structs,
// and nothing else of them is kept. Integers keep their full precision (u64
// ids are never routed through float64). Kinds nothing reads are left out; an
// unknown kind in the kubectl-dynamo.io group is an error, as is a file larger
// than MaxBytes.
func Read(r io.Reader, name string) (*raw.Bundle, error) {
	label := name
	if label == "" {
		label = "capture"
	}
	data, err := readAllLimited(r, captureLimit+1)
	if err != nil {
		return nil, fmt.Errorf("read capture %s: %w", label, err)
	}
	return Parse(data, name)
}

// Parse is Read over the file's contents. The Bundle does not share memory
// with data.
func Parse(data []byte, name string) (*raw.Bundle, error) {
	return parse(data, name, false)
}

// ParseWhole is Parse that also keeps every Kubernetes object whole, as read
// (Bundle.AsRead, in file order, kinds nothing else reads included): for
// preflight, which checks manifests and nodes whole.
func ParseWhole(data []byte, name string) (*raw.Bundle, error) {
	return parse(data, name, true)
}

func parse(data []byte, name string, whole bool) (*raw.Bundle, error) {
	label := name
	if label == "" {
		label = "capture"
	}
	if int64(len(data)) > captureLimit {
		return nil, fmt.Errorf("capture %s is larger than the %d MiB limit: capture fewer deployments (kubectl dynamo capture NAME -n NAMESPACE)", label, captureLimit>>20)
	}
	if b, ok := readCaptureFast(data, name, whole); ok {
		return b, nil
	}
	return readCaptureSlow(data, name, label, whole)
}

// readAllLimited is io.ReadAll(io.LimitReader(r, limit)) that sizes its buffer
// once when r knows its length (a file, a bytes.Reader): a large capture is
// then read without growing and copying the buffer.
func readAllLimited(r io.Reader, limit int64) ([]byte, error) {
	size := int64(-1)
	switch x := r.(type) {
	case interface{ Len() int }:
		size = int64(x.Len())
	case interface{ Stat() (os.FileInfo, error) }:
		if fi, err := x.Stat(); err == nil && fi.Mode().IsRegular() {
			size = fi.Size()
		}
	}
	if size < 0 {
		return io.ReadAll(io.LimitReader(r, limit))
	}
	// make, not bytes.Buffer.Grow, which writes zeros over the whole buffer
	// before reading into it (~0.1 s for a 100 MB capture).
	buf := make([]byte, 0, min(size, limit)+bytes.MinRead)
	lr := io.LimitReader(r, limit)
	for {
		if len(buf) == cap(buf) { // r had more than it said
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := lr.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// readCaptureSlow is the reference reader: YAML and JSON, every error message;
// objects are typed whole (decode.FromObject).
func readCaptureSlow(data []byte, name, label string, whole bool) (*raw.Bundle, error) {
	// Anchors and aliases may not expand the file beyond a budget
	// proportional to its size (issue 29): checked here, for every caller,
	// before any document is converted. JSON and YAML without an anchor and
	// an alias pass on one scan.
	if err := boundedyaml.Check(data); err != nil {
		return nil, fmt.Errorf("capture %s: %w", label, err)
	}
	docs, err := captureDocuments(data)
	if err != nil {
		return nil, fmt.Errorf("capture %s: %w", label, err)
	}
	if len(docs) == 0 {
		return nil, fmt.Errorf("capture %s holds no objects: expected a Kubernetes List (kubectl dynamo capture > FILE writes one)", label)
	}
	rd := &captureReader{b: &raw.Bundle{}, whole: whole}
	for i, doc := range docs {
		if err := rd.document(doc, 0); err != nil {
			if len(docs) > 1 {
				return nil, fmt.Errorf("capture %s, document %d: %w", label, i+1, err)
			}
			return nil, fmt.Errorf("capture %s: %w", label, err)
		}
	}
	b := rd.b
	if b.Context == "" {
		b.Context = name
	}
	if name != "" {
		b.Sources = append(b.Sources, model.SourceStatus{Kind: model.SourceCapture, Detail: name, At: b.CollectedAt})
	}
	return b, nil
}

// captureDocuments splits data into JSON documents: a JSON stream (one or more
// values) when the first non-space byte is '{' or '[', else YAML documents
// separated by "---", each converted to JSON.
func captureDocuments(data []byte) ([][]byte, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	var out [][]byte
	if len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[') {
		dec := json.NewDecoder(bytes.NewReader(trimmed))
		for {
			var raw json.RawMessage
			err := dec.Decode(&raw)
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			if err != nil {
				return nil, fmt.Errorf("invalid JSON at byte %d: %w", dec.InputOffset(), err)
			}
			out = append(out, raw)
		}
	}
	yr := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for n := 1; ; n++ {
		doc, err := yr.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read YAML document %d: %w", n, err)
		}
		j, err := yamlDocToJSON(doc, n)
		if err != nil {
			return nil, err
		}
		if t := bytes.TrimSpace(j); len(t) == 0 || bytes.Equal(t, []byte("null")) {
			continue
		}
		out = append(out, j)
	}
}

// YAML conversion takes about 40 times a document's size in memory (a 36 MB
// List of 4,000 workers: 1.5 GB). A large List as kubectl and `capture` write
// it (items as "- " entries at column 0) is converted one item at a time, so
// memory stays proportional to the JSON it becomes; any other YAML document
// larger than maxYAMLDocBytes is refused with advice to use JSON.
var (
	yamlSplitMinBytes = 1 << 20
	maxYAMLDocBytes   = 32 << 20
)

// yamlDocToJSON converts YAML document n to JSON within the memory bound above.
func yamlDocToJSON(doc []byte, n int) ([]byte, error) {
	if len(doc) >= yamlSplitMinBytes {
		if j, ok := yamlListToJSON(doc); ok {
			return j, nil
		}
	}
	if len(doc) > maxYAMLDocBytes {
		return nil, fmt.Errorf("YAML document %d is %d MiB and not a List whose items can be converted one by one: converting it would take about %d GiB of memory; "+
			"convert the capture to JSON first (kubectl dynamo capture -o json, or yq -o json), which is read in bounded memory",
			n, len(doc)>>20, max(1, (40*len(doc))>>30))
	}
	j, err := yaml.YAMLToJSON(doc)
	if err != nil {
		return nil, fmt.Errorf("invalid YAML in document %d: %w", n, err)
	}
	return j, nil
}

// yamlListToJSON converts a YAML mapping with a top-level "items:" sequence
// written at column 0 ("- " entries) item by item. ok is false when the
// document does not have that shape or an item does not convert on its own
// (an alias to another item's anchor), and the caller converts it whole.
func yamlListToJSON(doc []byte) ([]byte, bool) {
	var head []byte    // every top-level key but items, with its lines
	var items [][]byte // each item's lines, "- " included
	inItems, found := false, false
	for len(doc) > 0 {
		line := doc
		if i := bytes.IndexByte(doc, '\n'); i >= 0 {
			line, doc = doc[:i+1], doc[i+1:]
		} else {
			doc = nil
		}
		trimmed := bytes.TrimRight(line, "\r\n")
		col0 := len(trimmed) > 0 && trimmed[0] != ' ' && trimmed[0] != '\t' && trimmed[0] != '#'
		switch {
		case col0 && string(trimmed) == "items:":
			if found {
				return nil, false
			}
			inItems, found = true, true
			continue
		case inItems && col0 && (trimmed[0] == '-' && (len(trimmed) == 1 || trimmed[1] == ' ')):
			items = append(items, append([]byte(nil), line...))
			continue
		case inItems && col0:
			inItems = false
		case inItems:
			if len(items) == 0 {
				if len(bytes.TrimSpace(trimmed)) == 0 || bytes.HasPrefix(bytes.TrimSpace(trimmed), []byte("#")) {
					continue
				}
				return nil, false // items indented under the key: not this shape
			}
			items[len(items)-1] = append(items[len(items)-1], line...)
			continue
		}
		head = append(head, line...)
	}
	if !found {
		return nil, false
	}
	hj, err := yaml.YAMLToJSON(head)
	if err != nil {
		return nil, false
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(hj, &top); err != nil || top == nil {
		return nil, false
	}
	var arr bytes.Buffer
	arr.WriteByte('[')
	for k, it := range items {
		ij, err := yaml.YAMLToJSON(it)
		if err != nil {
			return nil, false
		}
		ij = bytes.TrimSpace(ij)
		if len(ij) < 2 || ij[0] != '[' || ij[len(ij)-1] != ']' {
			return nil, false
		}
		if k > 0 {
			arr.WriteByte(',')
		}
		arr.Write(ij[1 : len(ij)-1])
	}
	arr.WriteByte(']')
	top["items"] = arr.Bytes()
	out, err := json.Marshal(top)
	if err != nil {
		return nil, false
	}
	return out, true
}

type captureReader struct {
	b *raw.Bundle
	// whole keeps every Kubernetes object whole too (ParseWhole).
	whole bool
	// headerSeen is set once a List's kubectl-dynamo annotations were read.
	headerSeen bool
	items      int
}

// document reads one top-level JSON value: a List (or XxxList), an array of
// objects, or one object.
func (rd *captureReader) document(doc []byte, depth int) error {
	if depth > 2 {
		return errors.New("lists nested more than two deep")
	}
	doc = bytes.TrimSpace(doc)
	if len(doc) > 0 && doc[0] == '[' {
		var items []json.RawMessage
		if err := json.Unmarshal(doc, &items); err != nil {
			return fmt.Errorf("invalid JSON array: %w", err)
		}
		for _, it := range items {
			if err := rd.item(it, depth); err != nil {
				return err
			}
		}
		return nil
	}
	return rd.item(doc, depth)
}

func (rd *captureReader) item(raw json.RawMessage, depth int) error {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return fmt.Errorf("item %d is not an object: every item must be a Kubernetes object with apiVersion and kind", rd.items+1)
	}
	var h captureHeader
	_ = json.Unmarshal(obj["apiVersion"], &h.APIVersion)
	_ = json.Unmarshal(obj["kind"], &h.Kind)
	if itemsRaw, ok := obj["items"]; ok && (h.Kind == "List" || strings.HasSuffix(h.Kind, "List")) {
		if h.Kind == "List" && !rd.headerSeen {
			if err := rd.listHeader(obj["metadata"]); err != nil {
				return err
			}
		}
		if t := bytes.TrimSpace(itemsRaw); len(t) == 0 || bytes.Equal(t, []byte("null")) {
			return nil
		}
		var items []json.RawMessage
		if err := json.Unmarshal(itemsRaw, &items); err != nil {
			return fmt.Errorf("%s items must be an array: %w", h.Kind, err)
		}
		for _, it := range items {
			if err := rd.document(it, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	rd.items++
	if h.Kind == "" || h.APIVersion == "" {
		return fmt.Errorf("item %d has no apiVersion or kind: every item must be a Kubernetes object as kubectl get -o yaml prints it", rd.items)
	}
	group, _, _ := strings.Cut(h.APIVersion, "/")
	if group == Group {
		return rd.ours(h, raw)
	}
	m, err := DecodeJSONObject(raw)
	if err != nil {
		return fmt.Errorf("item %d (%s): %w", rd.items, h.Kind, err)
	}
	rd.b.Objects.Append(decode.FromObject(m))
	if rd.whole {
		rd.b.AsRead = append(rd.b.AsRead, m)
	}
	return nil
}

// listHeader reads the List's kubectl-dynamo.io annotations.
func (rd *captureReader) listHeader(raw json.RawMessage) error {
	if len(raw) == 0 {
		return nil
	}
	var meta struct {
		Annotations map[string]string `json:"annotations"`
	}
	if err := json.Unmarshal(raw, &meta); err != nil {
		return fmt.Errorf("List metadata is malformed: %w", err) //nolint:staticcheck // "List" is the Kubernetes kind
	}
	a := meta.Annotations
	if len(a) == 0 {
		return nil
	}
	rd.headerSeen = true
	if v := a[AnnotationCollectedAt]; v != "" {
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return fmt.Errorf("List annotation %s=%q is not an RFC 3339 time: fix or remove it", AnnotationCollectedAt, v) //nolint:staticcheck // "List" is the Kubernetes kind
		}
		rd.b.CollectedAt = t
	}
	rd.b.Context = a[AnnotationContext]
	rd.b.Namespace = a[AnnotationNamespace]
	if v := a[AnnotationSources]; v != "" {
		if err := json.Unmarshal([]byte(v), &rd.b.Sources); err != nil {
			return fmt.Errorf("List annotation %s is not a JSON array of sources: %w", AnnotationSources, err) //nolint:staticcheck // "List" is the Kubernetes kind
		}
	}
	if v := a[AnnotationNotes]; v != "" {
		if err := json.Unmarshal([]byte(v), &rd.b.Notes); err != nil {
			return fmt.Errorf("List annotation %s is not a JSON array of notes: %w", AnnotationNotes, err) //nolint:staticcheck // "List" is the Kubernetes kind
		}
	}
	return nil
}

// ours decodes one of the kubectl-dynamo.io kinds.
func (rd *captureReader) ours(h captureHeader, data json.RawMessage) error {
	if h.APIVersion != APIVersion {
		return fmt.Errorf("item %d: unsupported apiVersion %q for %s: this kubectl-dynamo reads %s", rd.items, h.APIVersion, h.Kind, APIVersion)
	}
	where := func(name string) string {
		if name == "" {
			return fmt.Sprintf("%s (item %d)", h.Kind, rd.items)
		}
		return fmt.Sprintf("%s %s", h.Kind, name)
	}
	switch h.Kind {
	case KindEtcdKeyValues:
		var v captureEtcd
		if err := json.Unmarshal(data, &v); err != nil {
			return fmt.Errorf("%s: %w (expected entries: [{key, value}] with string values)", where(""), err)
		}
		rd.b.Etcd = append(rd.b.Etcd, v.Entries...)
	case KindFrontendMetrics:
		var v captureMetrics
		if err := json.Unmarshal(data, &v); err != nil {
			return fmt.Errorf("%s: %w (expected deployment, text and optional busyThreshold strings)", where(""), err)
		}
		if v.Deployment == "" {
			return fmt.Errorf("%s: deployment is required (the DynamoGraphDeployment the frontend serves)", where(v.Metadata.Name))
		}
		if v.Text != nil {
			m := raw.FrontendMetrics{Namespace: v.Metadata.Namespace, Deployment: v.Deployment, Source: v.Source, Text: *v.Text}
			if v.CollectedAt != nil {
				m.At = *v.CollectedAt
			}
			rd.b.Metrics = append(rd.b.Metrics, m)
		}
		if v.BusyThreshold != nil {
			t := raw.FrontendBusyThresholds{Namespace: v.Metadata.Namespace, Deployment: v.Deployment, Source: v.BusyThresholdSource, JSON: *v.BusyThreshold}
			if v.BusyThresholdCollectedAt != nil {
				t.At = *v.BusyThresholdCollectedAt
			}
			rd.b.BusyThresholds = append(rd.b.BusyThresholds, t)
		}
	case KindKvEvents:
		var v captureKvEvents
		if err := json.Unmarshal(data, &v); err != nil {
			return fmt.Errorf("%s: %w (expected deployment, blockSize and events: [RouterEvent])", where(""), err)
		}
		if v.Deployment == "" {
			return fmt.Errorf("%s: deployment is required (the DynamoGraphDeployment whose KV cache this is)", where(v.Metadata.Name))
		}
		kv := raw.KvEvents{Namespace: v.Metadata.Namespace, Deployment: v.Deployment, BlockSize: v.BlockSize, Source: v.Source,
			Events: make([]routecore.RouterEvent, 0, len(v.Events))}
		for i, e := range v.Events {
			ev, err := routecore.DecodeRouterEvent(e)
			if err != nil {
				return fmt.Errorf("%s: event %d: %w", where(v.Metadata.Name), i, err)
			}
			kv.Events = append(kv.Events, ev)
		}
		rd.b.KvEvents = append(rd.b.KvEvents, kv)
	case KindRouterLogs:
		var v captureRouterLogs
		if err := json.Unmarshal(data, &v); err != nil {
			return fmt.Errorf("%s: %w (expected deployment and lines: [string])", where(""), err)
		}
		if v.Deployment == "" {
			return fmt.Errorf("%s: deployment is required (the DynamoGraphDeployment whose frontend logged the lines)", where(v.Metadata.Name))
		}
		l := raw.RouterLogs{Namespace: v.Metadata.Namespace, Deployment: v.Deployment, Source: v.Source, Lines: v.Lines, Dropped: v.Dropped}
		if v.CollectedAt != nil {
			l.At = *v.CollectedAt
		}
		rd.b.RouterLogs = append(rd.b.RouterLogs, l)
	default:
		return fmt.Errorf("item %d: unknown kind %q in %s: expected %s, %s, %s or %s", rd.items, h.Kind, APIVersion,
			KindEtcdKeyValues, KindFrontendMetrics, KindKvEvents, KindRouterLogs)
	}
	return nil
}

// DecodeJSONObject decodes a JSON object into the value types unstructured
// objects use: int64 for integers that fit, float64 for other numbers, and
// json.Number for integers beyond int64 (e.g. u64 ids), so no precision is lost
// (decode.JSONObject).
func DecodeJSONObject(raw []byte) (map[string]any, error) { return decode.JSONObject(raw) }

// Write writes b as a capture file (YAML; see Read): a v1 List
// whose metadata annotations carry the collection time, context, namespace,
// sources and notes, and whose items are the Kubernetes objects whole, as read
// (b.AsRead: the capture command's live read keeps them), followed by one
// EtcdKeyValues item (when there are entries), one FrontendMetrics item per
// metrics scrape (carrying the same deployment's busy-threshold answer, if any)
// plus one per unpaired busy-threshold answer, one KvEvents item per
// deployment's events, and one RouterLogs item per frontend log excerpt.
// ParseWhole(Write(b), "") returns b again.
func Write(w io.Writer, b *raw.Bundle) error {
	if b == nil {
		return errors.New("write capture: no data to write")
	}
	ann := map[string]string{}
	if !b.CollectedAt.IsZero() {
		ann[AnnotationCollectedAt] = b.CollectedAt.UTC().Format(time.RFC3339Nano)
	}
	if b.Context != "" {
		ann[AnnotationContext] = b.Context
	}
	if b.Namespace != "" {
		ann[AnnotationNamespace] = b.Namespace
	}
	if len(b.Sources) > 0 {
		j, err := json.Marshal(b.Sources)
		if err != nil {
			return fmt.Errorf("write capture: encode sources: %w", err)
		}
		ann[AnnotationSources] = string(j)
	}
	if len(b.Notes) > 0 {
		j, err := json.Marshal(b.Notes)
		if err != nil {
			return fmt.Errorf("write capture: encode notes: %w", err)
		}
		ann[AnnotationNotes] = string(j)
	}
	items := make([]any, 0, len(b.AsRead)+len(b.Metrics)+len(b.KvEvents)+len(b.RouterLogs)+1)
	for i, o := range b.AsRead {
		if o == nil {
			return fmt.Errorf("write capture: object %d is empty", i)
		}
		items = append(items, o)
	}
	if len(b.Etcd) > 0 {
		items = append(items, captureEtcd{APIVersion: APIVersion, Kind: KindEtcdKeyValues,
			Metadata: captureMeta{Name: "etcd"}, Entries: b.Etcd})
	}
	used := make([]bool, len(b.BusyThresholds))
	for i := range b.Metrics {
		m := &b.Metrics[i]
		text := m.Text
		item := captureMetrics{APIVersion: APIVersion, Kind: KindFrontendMetrics,
			Metadata:   captureMeta{Name: captureItemName(m.Deployment, "frontend-metrics", i), Namespace: m.Namespace},
			Deployment: m.Deployment, Source: m.Source, CollectedAt: timePtr(m.At), Text: &text}
		for j := range b.BusyThresholds {
			t := &b.BusyThresholds[j]
			if !used[j] && t.Namespace == m.Namespace && t.Deployment == m.Deployment {
				used[j] = true
				item.setBusy(t)
				break
			}
		}
		items = append(items, item)
	}
	for j := range b.BusyThresholds {
		if used[j] {
			continue
		}
		t := &b.BusyThresholds[j]
		item := captureMetrics{APIVersion: APIVersion, Kind: KindFrontendMetrics,
			Metadata:   captureMeta{Name: captureItemName(t.Deployment, "busy-threshold", j), Namespace: t.Namespace},
			Deployment: t.Deployment}
		item.setBusy(t)
		items = append(items, item)
	}
	for i := range b.KvEvents {
		kv := &b.KvEvents[i]
		item := captureKvEvents{APIVersion: APIVersion, Kind: KindKvEvents,
			Metadata:   captureMeta{Name: captureItemName(kv.Deployment, "kv-events", i), Namespace: kv.Namespace},
			Deployment: kv.Deployment, BlockSize: kv.BlockSize, Source: kv.Source, Events: make([]json.RawMessage, 0, len(kv.Events))}
		for j, ev := range kv.Events {
			raw, err := ev.MarshalJSON()
			if err != nil {
				return fmt.Errorf("write capture: KV events of %s/%s, event %d: %w", kv.Namespace, kv.Deployment, j, err)
			}
			item.Events = append(item.Events, raw)
		}
		items = append(items, item)
	}
	for i := range b.RouterLogs {
		l := &b.RouterLogs[i]
		items = append(items, captureRouterLogs{APIVersion: APIVersion, Kind: KindRouterLogs,
			Metadata:   captureMeta{Name: captureItemName(l.Deployment, "router-logs", i), Namespace: l.Namespace},
			Deployment: l.Deployment, Source: l.Source, CollectedAt: timePtr(l.At), Dropped: l.Dropped, Lines: l.Lines})
	}
	list := struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Annotations map[string]string `json:"annotations,omitempty"`
		} `json:"metadata"`
		Items []any `json:"items"`
	}{APIVersion: "v1", Kind: "List", Items: items}
	if len(ann) > 0 {
		list.Metadata.Annotations = ann
	}
	j, err := json.Marshal(list)
	if err != nil {
		return fmt.Errorf("write capture: encode: %w", err)
	}
	// Values holding control, bidi or invisible characters are written
	// double-quoted with those escaped: the file reads back exactly and is
	// safe to cat.
	j, restore, err := termsafe.YAMLStrings(j)
	if err != nil {
		return fmt.Errorf("write capture: encode: %w", err)
	}
	y, err := yaml.JSONToYAML(j)
	if err != nil {
		return fmt.Errorf("write capture: convert to YAML: %w", err)
	}
	_, err = w.Write(restore(y))
	return err
}

func (m *captureMetrics) setBusy(t *raw.FrontendBusyThresholds) {
	j := t.JSON
	m.BusyThreshold = &j
	m.BusyThresholdSource = t.Source
	m.BusyThresholdCollectedAt = timePtr(t.At)
}

// captureItemName names one of our items after its deployment.
func captureItemName(deployment, suffix string, i int) string {
	if deployment == "" {
		return suffix + "-" + strconv.Itoa(i)
	}
	return deployment + "-" + suffix
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}
