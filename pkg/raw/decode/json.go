package decode

import (
	"github.com/ai-dynamo/kubectl-dynamo/pkg/jsonscan"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw"
)

// Decoder types Kubernetes objects read from validated JSON (B, checked with
// jsonscan.Validator): the JSON path. Each object is read in one pass over its
// bytes; only the fields the typed structs hold are decoded, and a value that
// is not read is skipped without being built. Strings that repeat across
// objects (label keys, env names and values, …) are shared.
//
// A Decoder is not safe for concurrent use; decode in parallel with one
// Decoder per goroutine over the same bytes.
type Decoder struct {
	B []byte
	// Ends, when set, holds the validator's recorded container ends.
	Ends *jsonscan.Ends

	tree   jsonscan.Decoder
	strs   map[string]string
	quants map[string]string
}

// NewDecoder returns a Decoder over validated JSON.
func NewDecoder(b []byte, ends *jsonscan.Ends) *Decoder {
	return &Decoder{B: b, Ends: ends, tree: jsonscan.Decoder{B: b}}
}

// Item types the object at B[i], as FromObject types the value
// jsonscan.Decoder would make of it: a *raw.Pod, *raw.DWM, …; nil for a
// value that is not an object or an object of another kind; for a list (an
// object whose items is an array) a []any of its items' results, nested at
// most twice. Add puts a result into Objects.
func (d *Decoder) Item(i int) any {
	return d.item(i, 0, nil)
}

// Defaults gives an item of a LIST its apiVersion and kind when it has
// neither (as client-go does for the items of a typed list) or no kind (as
// the collector does).
type Defaults struct {
	// ListAPIVersion and ListKind are the list's ("v1", "PodList").
	ListAPIVersion, ListKind string
	// APIVersion and Kind are the resource's ("v1", "Pod").
	APIVersion, Kind string
}

// ListItem is Item for an item of a LIST response, with its defaults.
func (d *Decoder) ListItem(i int, def *Defaults) any {
	return d.item(i, 0, def)
}

// Add appends the result of Item to out.
func Add(out *raw.Objects, v any) {
	switch o := v.(type) {
	case *raw.DGD:
		out.DGDs = append(out.DGDs, o)
	case *raw.DWM:
		out.DWMs = append(out.DWMs, o)
	case *raw.Pod:
		out.Pods = append(out.Pods, o)
	case *raw.Node:
		out.Nodes = append(out.Nodes, o)
	case *raw.Service:
		out.Services = append(out.Services, o)
	case *raw.EndpointSlice:
		out.EndpointSlices = append(out.EndpointSlices, o)
	case *raw.Event:
		out.Events = append(out.Events, o)
	case *raw.ClusterTopology:
		out.Topologies = append(out.Topologies, o)
	case *raw.Deployment:
		out.Deployments = append(out.Deployments, o)
	case []any:
		for _, e := range o {
			Add(out, e)
		}
	}
}

// top holds where an object's top-level fields start (-1: absent); a key
// given twice is read at its last occurrence, as a decoded map keeps it.
type top struct {
	apiVersion, kind, items, metadata, spec, status                         int
	endpoints, involvedObject, regarding, reason, typ, message, note, count int
	series, deprecatedCount, lastTimestamp, deprecatedLastTimestamp         int
	eventTime, firstTimestamp                                               int
}

func (d *Decoder) item(i, depth int, def *Defaults) any {
	b := d.B
	if i >= len(b) || b[i] != '{' {
		return nil
	}
	t := top{-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}
	o := jsonscan.NewObj(d.Ends, b, i)
	for o.Next() {
		p := &t.apiVersion
		switch string(d.key(&o)) {
		case "apiVersion":
		case "kind":
			p = &t.kind
		case "items":
			p = &t.items
		case "metadata":
			p = &t.metadata
		case "spec":
			p = &t.spec
		case "status":
			p = &t.status
		case "endpoints":
			p = &t.endpoints
		case "involvedObject":
			p = &t.involvedObject
		case "regarding":
			p = &t.regarding
		case "reason":
			p = &t.reason
		case "type":
			p = &t.typ
		case "message":
			p = &t.message
		case "note":
			p = &t.note
		case "count":
			p = &t.count
		case "series":
			p = &t.series
		case "deprecatedCount":
			p = &t.deprecatedCount
		case "lastTimestamp":
			p = &t.lastTimestamp
		case "deprecatedLastTimestamp":
			p = &t.deprecatedLastTimestamp
		case "eventTime":
			p = &t.eventTime
		case "firstTimestamp":
			p = &t.firstTimestamp
		default:
			continue
		}
		*p = o.Val
	}
	if t.items >= 0 && b[t.items] == '[' && depth < 2 {
		var out []any
		a := jsonscan.NewArr(d.Ends, b, t.items)
		for a.Next() {
			if b[a.Val] != '{' {
				break // Unstructured.EachListItem stops at an item that is not an object
			}
			out = append(out, d.item(a.Val, depth+1, nil))
		}
		return out
	}
	tm := raw.TypeMeta{APIVersion: d.strOr(t.apiVersion), Kind: d.strOr(t.kind)}
	if def != nil && depth == 0 {
		if tm.APIVersion == "" && tm.Kind == "" {
			tm.APIVersion, tm.Kind = def.ListAPIVersion, trimList(def.ListKind)
		}
		if tm.Kind == "" {
			tm.APIVersion, tm.Kind = def.APIVersion, def.Kind
		}
	}
	switch group := raw.Group(tm.APIVersion); {
	case tm.Kind == raw.KindDGD && group == raw.GroupDynamo:
		o := &raw.DGD{TypeMeta: tm, ObjectMeta: d.meta(t.metadata, metaAnnotations)}
		o.Spec, o.Status = d.objectValue(t.spec), d.objectValue(t.status)
		return o
	case tm.Kind == raw.KindDWM && group == raw.GroupDynamo:
		o := &raw.DWM{TypeMeta: tm, ObjectMeta: d.meta(t.metadata, metaOwners)}
		if data := d.field(t.spec, "data"); data >= 0 && b[data] != 'n' {
			o.Spec.Data = d.dwmData(data)
		}
		return o
	case tm.Kind == raw.KindPod && group == "":
		return d.pod(i, &t, tm)
	case tm.Kind == raw.KindNode && group == "":
		return &raw.Node{TypeMeta: tm, ObjectMeta: d.meta(t.metadata, metaAnnotations)}
	case tm.Kind == raw.KindService && group == "":
		return &raw.Service{TypeMeta: tm, ObjectMeta: d.meta(t.metadata, metaAnnotations), Spec: d.objectValue(t.spec)}
	case tm.Kind == raw.KindEndpointSlice && group == raw.GroupDiscovery:
		return d.slice(&t, tm)
	case tm.Kind == raw.KindEvent && (group == "" || group == raw.GroupEvents):
		return d.event(&t, tm)
	case (tm.Kind == raw.KindClusterTopologyBinding || tm.Kind == raw.KindClusterTopology) && group == raw.GroupGrove:
		o := &raw.ClusterTopology{TypeMeta: tm, ObjectMeta: d.meta(t.metadata, metaAnnotations)}
		if l := d.field(t.spec, "levels"); l >= 0 {
			o.Spec.Levels, _ = d.tree.Value(l)
		}
		return o
	case tm.Kind == raw.KindDeployment && group == raw.GroupApps:
		return d.deployment(&t, tm)
	}
	return nil
}

// trimList is strings.TrimSuffix(kind, "List").
func trimList(kind string) string {
	if len(kind) >= 4 && kind[len(kind)-4:] == "List" {
		return kind[:len(kind)-4]
	}
	return kind
}

// key is the current member's key: its bytes, or decoded when escaped.
func (d *Decoder) key(o *jsonscan.Obj) []byte {
	if o.Escaped() {
		return []byte(o.Key())
	}
	return o.RawKey()
}

// Interning bounds: strings up to internMaxLen bytes are shared until the
// table holds internMaxCount (unique values such as pod names stop being
// added once it is full; the common ones come first).
const (
	internMaxLen   = 64
	internMaxCount = 1 << 14
)

// str decodes the validated string at B[i] and returns it and its end.
func (d *Decoder) str(i int) (string, int) {
	end, escaped, nonASCII := jsonscan.StringEnd(d.B, i)
	if escaped || nonASCII {
		return jsonscan.String(d.B, i, end), end
	}
	raw := d.B[i+1 : end-1]
	if len(raw) > internMaxLen {
		return string(raw), end
	}
	if s, ok := d.strs[string(raw)]; ok {
		return s, end
	}
	s := string(raw)
	if d.strs == nil {
		d.strs = make(map[string]string, 256)
	}
	if len(d.strs) < internMaxCount {
		d.strs[s] = s
	}
	return s, end
}

// strOr reads a field as NestedString does: its string, "" when absent (-1)
// or not a string.
func (d *Decoder) strOr(i int) string {
	if i < 0 || d.B[i] != '"' {
		return ""
	}
	s, _ := d.str(i)
	return s
}

// field finds key in the object at B[i] (its last occurrence), as
// NestedFieldNoCopy finds it: -1 when i is absent, not an object, or has no
// such key.
func (d *Decoder) field(i int, key string) int {
	if i < 0 || d.B[i] != '{' {
		return -1
	}
	at := -1
	o := jsonscan.NewObj(d.Ends, d.B, i)
	for o.Next() {
		if string(d.key(&o)) == key {
			at = o.Val
		}
	}
	return at
}

// Field finds key in the object at B[i] (its last occurrence), as
// NestedFieldNoCopy does: where its value starts, -1 when i is -1, not an
// object, or has no such key.
func (d *Decoder) Field(i int, key string) int { return d.field(i, key) }

// StringField is the string at key in the object at B[i], as NestedString
// reads it ("" when absent or not a string).
func (d *Decoder) StringField(i int, key string) string { return d.strOr(d.field(i, key)) }

// StringMapField is the map of strings at key in the object at B[i]: as
// GetLabels reads one (NestedNullCoercingStringMap) when nullAsEmpty, else as
// NestedStringMap (strings only); nil when absent or another value.
func (d *Decoder) StringMapField(i int, key string, nullAsEmpty bool) map[string]string {
	at := d.field(i, key)
	if at < 0 {
		return nil
	}
	if !nullAsEmpty {
		o := jsonscan.NewObj(d.Ends, d.B, at)
		for d.B[at] == '{' && o.Next() {
			if d.B[o.Val] != '"' {
				return nil
			}
		}
	}
	return d.stringMap(at)
}

// objectValue decodes the object at B[i] as a JSON value; nil when absent or
// not an object.
func (d *Decoder) objectValue(i int) map[string]any {
	if i < 0 || d.B[i] != '{' {
		return nil
	}
	v, _ := d.tree.Value(i)
	m, _ := v.(map[string]any)
	return m
}

// What meta reads besides name, namespace and labels.
const (
	metaAnnotations = iota // annotations as GetAnnotations reads them
	metaOwners             // annotations and owner references
	metaEvent              // annotations and the creation time
)

// meta reads metadata (at B[i], -1 when absent) as Unstructured's accessors
// do.
func (d *Decoder) meta(i, what int) raw.ObjectMeta {
	var m raw.ObjectMeta
	if i < 0 || d.B[i] != '{' {
		return m
	}
	o := jsonscan.NewObj(d.Ends, d.B, i)
	for o.Next() {
		switch string(d.key(&o)) {
		case "name":
			m.Name = d.strOr(o.Val)
		case "namespace":
			m.Namespace = d.strOr(o.Val)
		case "labels":
			m.Labels = d.stringMap(o.Val)
		case "annotations":
			m.Annotations = d.stringMap(o.Val)
		case "creationTimestamp":
			if what == metaEvent {
				m.CreationTimestamp = d.strOr(o.Val)
			}
		case "ownerReferences":
			if what == metaOwners {
				m.OwnerReferences = d.ownerRefs(o.Val)
			}
		}
	}
	return m
}

// stringMap reads a map of strings as GetLabels and GetAnnotations do
// (NestedNullCoercingStringMap): nil unless the value is an object whose
// values are strings or null (read as "").
func (d *Decoder) stringMap(i int) map[string]string {
	b := d.B
	if b[i] != '{' {
		return nil
	}
	n := 0
	o := jsonscan.NewObj(d.Ends, b, i)
	for o.Next() {
		if c := b[o.Val]; c != '"' && c != 'n' {
			return nil
		}
		n++
	}
	m := make(map[string]string, n)
	o = jsonscan.NewObj(d.Ends, b, i)
	for o.Next() {
		k := d.mapKey(&o)
		if b[o.Val] == 'n' {
			m[k] = ""
			continue
		}
		v, end := d.str(o.Val)
		m[k] = v
		o.Done(end)
	}
	return m
}

// mapKey is the current member's key as a shared string.
func (d *Decoder) mapKey(o *jsonscan.Obj) string {
	if o.Escaped() {
		return o.Key()
	}
	s, _ := d.str(o.KeyStart)
	return s
}

// ownerRefs reads metadata.ownerReferences as GetOwnerReferences does.
func (d *Decoder) ownerRefs(i int) []raw.OwnerReference {
	b := d.B
	if b[i] != '[' {
		return nil
	}
	out := []raw.OwnerReference{}
	a := jsonscan.NewArr(d.Ends, b, i)
	for a.Next() {
		if b[a.Val] != '{' {
			return nil
		}
		var r raw.OwnerReference
		o := jsonscan.NewObj(d.Ends, b, a.Val)
		for o.Next() {
			switch string(d.key(&o)) {
			case "apiVersion":
				r.APIVersion = d.strOr(o.Val)
			case "kind":
				r.Kind = d.strOr(o.Val)
			case "name":
				r.Name = d.strOr(o.Val)
			case "uid":
				r.UID = d.strOr(o.Val)
			case "controller":
				r.Controller = d.boolOr(o.Val)
			case "blockOwnerDeletion":
				r.BlockOwnerDeletion = d.boolOr(o.Val)
			}
		}
		out = append(out, r)
	}
	return out
}

// boolOr reads a bool as NestedBool does: nil unless it is true or false.
func (d *Decoder) boolOr(i int) *bool {
	if i < 0 {
		return nil
	}
	switch d.B[i] {
	case 't':
		v := true
		return &v
	case 'f':
		v := false
		return &v
	}
	return nil
}

// int64Or reads an integer as NestedInt64 does: nil unless the value is an
// integer that fits in 64 bits (the decoder's int64).
func (d *Decoder) int64Or(i int) *int64 {
	if i < 0 {
		return nil
	}
	if c := d.B[i]; c != '-' && (c < '0' || c > '9') {
		return nil
	}
	end, _ := jsonscan.NumberEnd(d.B, i)
	if n, ok := jsonscan.Number(d.B[i:end]).(int64); ok {
		return &n
	}
	return nil
}

// ref reads an object reference (at B[i], -1 when absent).
func (d *Decoder) ref(i int) raw.ObjectReference {
	var r raw.ObjectReference
	if i < 0 || d.B[i] != '{' {
		return r
	}
	o := jsonscan.NewObj(d.Ends, d.B, i)
	for o.Next() {
		switch string(d.key(&o)) {
		case "kind":
			r.Kind = d.strOr(o.Val)
		case "name":
			r.Name = d.strOr(o.Val)
		case "namespace":
			r.Namespace = d.strOr(o.Val)
		}
	}
	return r
}

func (d *Decoder) slice(t *top, tm raw.TypeMeta) *raw.EndpointSlice {
	b := d.B
	s := &raw.EndpointSlice{TypeMeta: tm, ObjectMeta: d.meta(t.metadata, metaAnnotations)}
	if t.endpoints < 0 || b[t.endpoints] != '[' {
		return s
	}
	s.Endpoints = []raw.Endpoint{}
	a := jsonscan.NewArr(d.Ends, b, t.endpoints)
	for a.Next() {
		if b[a.Val] != '{' {
			continue
		}
		var ep raw.Endpoint
		o := jsonscan.NewObj(d.Ends, b, a.Val)
		for o.Next() {
			switch string(d.key(&o)) {
			case "targetRef":
				ep.TargetRef = d.ref(o.Val)
			case "conditions":
				ep.Conditions.Ready = d.boolOr(d.field(o.Val, "ready"))
			}
		}
		s.Endpoints = append(s.Endpoints, ep)
	}
	return s
}

func (d *Decoder) event(t *top, tm raw.TypeMeta) *raw.Event {
	e := &raw.Event{TypeMeta: tm, ObjectMeta: d.meta(t.metadata, metaEvent),
		InvolvedObject: d.ref(t.involvedObject), Regarding: d.ref(t.regarding)}
	e.Reason, e.Type, e.Message, e.Note = d.strOr(t.reason), d.strOr(t.typ), d.strOr(t.message), d.strOr(t.note)
	e.Count, e.DeprecatedCount = d.int64Or(t.count), d.int64Or(t.deprecatedCount)
	e.Series.Count, e.Series.LastObservedTime = d.int64Or(d.field(t.series, "count")), d.strOr(d.field(t.series, "lastObservedTime"))
	e.LastTimestamp, e.DeprecatedLastTimestamp = d.strOr(t.lastTimestamp), d.strOr(t.deprecatedLastTimestamp)
	e.EventTime, e.FirstTimestamp = d.strOr(t.eventTime), d.strOr(t.firstTimestamp)
	return e
}

// deployment reads a Deployment as deploymentTree does.
func (d *Decoder) deployment(t *top, tm raw.TypeMeta) *raw.Deployment {
	b := d.B
	o := &raw.Deployment{TypeMeta: tm, ObjectMeta: d.meta(t.metadata, metaAnnotations)}
	o.Annotations = nil
	cs := d.field(d.field(d.field(t.spec, "template"), "spec"), "containers")
	if cs < 0 || b[cs] != '[' {
		return o
	}
	out := []raw.DeploymentContainer{}
	a := jsonscan.NewArr(d.Ends, b, cs)
	for a.Next() {
		if b[a.Val] != '{' {
			continue
		}
		var c raw.DeploymentContainer
		m := jsonscan.NewObj(d.Ends, b, a.Val)
		for m.Next() {
			switch string(d.key(&m)) {
			case "name":
				c.Name = d.strOr(m.Val)
			case "image":
				c.Image = d.strOr(m.Val)
			case "args":
				c.Args = nil
				if b[m.Val] != '[' {
					continue
				}
				c.Args = []string{}
				e := jsonscan.NewArr(d.Ends, b, m.Val)
				for e.Next() {
					c.Args = append(c.Args, d.strOr(e.Val))
				}
			}
		}
		out = append(out, c)
	}
	o.Spec.Template.Spec.Containers = out
	return o
}
