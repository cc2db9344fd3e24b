package kube

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw/decode"
)

// TestTrimOperatorTypedMatchesWhole: trimming the typed object gives what
// typing the trimmed whole object gives, whatever the Deployment holds.
func TestTrimOperatorTypedMatchesWhole(t *testing.T) {
	many := make([]any, 70)
	for i := range many {
		many[i] = "--x"
	}
	many[66] = "--operator-version=9" // past maxOperatorArgs: dropped
	many[3] = "--operator-version=1"
	many[5] = 7
	docs := []string{
		`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"m","namespace":"n","labels":{"a":"b"},"annotations":{"x":"y"}},` +
			`"spec":{"template":{"spec":{"containers":[{"name":"manager","image":"i:1","args":["--a","--operator-version=1.2.3",5,"--operator-versionX"],"env":[{"name":"A"}]}]}}}}`,
		`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"labels":{}},"spec":{"template":{"spec":{"containers":[5,null]}}}}`,
		`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"labels":{"a":1}},"spec":{"template":{"spec":{"containers":[]}}}}`,
		`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"labels":{"a":null}},"spec":{"template":{"spec":{"containers":[{"name":5,"image":7,"args":"x"},{"args":[]},{}]}}}}`,
		`{"apiVersion":"apps/v1","kind":"Deployment","spec":{"template":{"spec":{"containers":{"name":"manager"}}}}}`,
		`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":7}}`,
	}
	long, _ := json.Marshal(map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
		"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "manager", "args": many}}}}}})
	docs = append(docs, string(long))
	typed := func(m raw.Object) []*raw.Deployment {
		t.Helper()
		data, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		var out raw.Objects
		decode.Add(&out, decode.NewDecoder(data, nil).Item(0))
		return out.Deployments
	}
	for _, doc := range docs {
		m, err := decode.JSONObject([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		live := typed(m)
		if len(live) != 1 {
			t.Fatalf("%s: typed %d deployments", doc, len(live))
		}
		trimOperatorTyped(live[0])
		capt := typed(trimOperator(m))
		if !reflect.DeepEqual(live, capt) {
			l, _ := json.Marshal(live)
			c, _ := json.Marshal(capt)
			t.Errorf("%.120s:\n live    %s\n capture %s", doc, l, c)
		}
	}
}
