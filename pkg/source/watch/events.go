package watch

import (
	"fmt"
	"hash/fnv"
	"sort"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/jsonscan"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw/decode"
)

// The watcher reads the objects of its WATCH events (kube.RawObject) and LIST
// pages as JSON, into the little it needs of each (watchObject): no object is
// decoded whole.

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

// readRawObject reads what the watcher needs of the object of a watch event
// (kube.RawObject: the dynamic client would have decoded it whole); {} when it
// is not one JSON object.
func readRawObject(data []byte) watchObject {
	var ends jsonscan.Ends
	v := jsonscan.Validator{B: data, Ends: &ends, EndsDepth: 3}
	i := jsonscan.SkipWS(data, 0)
	if end, ok := v.Value(i, 0); !ok || jsonscan.SkipWS(data, end) != len(data) {
		return watchObject{}
	}
	return readWatchObject(data, &ends, i)
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
