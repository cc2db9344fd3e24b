package watch

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"sort"
	"testing"

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
	var obj map[string]any
	if err := json.Unmarshal([]byte(doc), &obj); err != nil || obj == nil {
		if got := readRawObject([]byte(doc)); got != (watchObject{}) && obj == nil {
			t.Errorf("read %+v from what is not a JSON object", got)
		}
		return
	}
	got := readRawObject([]byte(doc))
	u := &unstructured.Unstructured{Object: obj}
	kind, _, _ := unstructured.NestedString(obj, "involvedObject", "kind")
	want := watchObject{Name: u.GetName(), ResourceVersion: u.GetResourceVersion(), InvolvedKind: kind, Fingerprint: got.Fingerprint}
	if readyStatusIsPlain(u) {
		want.Fingerprint = unstructuredFingerprint(u)
	}
	if got != want {
		t.Errorf("object = %+v, want %+v", got, want)
	}
}

// watchObjectDocs are objects as watch events carry them, and the edges the
// reader must read as the Unstructured accessors do.
var watchObjectDocs = []string{
	`{"kind":"Node","metadata":{"name":"n1","resourceVersion":"12","labels":{"topology.kubernetes.io/zone":"z1","a":"b"}},` +
		`"spec":{"unschedulable":true},"status":{"capacity":{"cpu":"8","nvidia.com/gpu":"4"},"allocatable":{"cpu":"7500m"},` +
		`"conditions":[{"type":"MemoryPressure","status":"False"},{"type":"Ready","status":"True","lastHeartbeatTime":"2025-01-01T00:00:00Z"}]}}`,
	`{"kind":"Event","metadata":{"name":"e.1","resourceVersion":"13"},"involvedObject":{"kind":"Pod","name":"p"},"type":"Warning"}`,
	`{"kind":"Pod","metadata":{"resourceVersion":"99","annotations":{"k8s.io/initial-events-end":"true"}}}`,
	`{"metadata":{"name":"n2","labels":null},"status":{"capacity":{"cpu":8},"conditions":[{"type":"Ready"}]}}`,
	`{"metadata":{"name":"n3","labels":{"a":null,"b":"c"}},"spec":{"unschedulable":"yes"},"status":{"conditions":{"type":"Ready"}}}`,
	`{"metadata":{"name":1,"labels":{"a":1}},"status":{"conditions":[1,null,{"type":"Ready","status":true},{"type":"Ready","status":"Unknown"}]}}`,
	`{"metadata":{"name":"dup"},"metadata":{"name":"dup2","resourceVersion":"7"},"status":{"allocatable":{"c\u0070u":"1","x":"y"}}}`,
	` {"metadata":{"name":"spaced"}} `,
	`{}`,
	`null`,
	`[1,2]`,
	`{"metadata":`,
	`{}0`,
	`{"metadata":{"name":"a"}} {}`,
}

func TestReadRawObjectMatchesUnstructured(t *testing.T) {
	for _, doc := range watchObjectDocs {
		t.Run(doc[:min(len(doc), 40)], func(t *testing.T) { checkWatchObject(t, doc) })
	}
}

// FuzzReadRawObjectMatchesUnstructured checks the JSON reader of watched
// objects against the Unstructured accessors the watcher used before, on any
// document.
func FuzzReadRawObjectMatchesUnstructured(f *testing.F) {
	for _, doc := range watchObjectDocs {
		f.Add(doc)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		if len(doc) > 1<<16 {
			return
		}
		checkWatchObject(t, doc)
	})
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
