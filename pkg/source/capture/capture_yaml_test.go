package capture

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/boundedyaml"
)

func jsonValue(t *testing.T, b []byte) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("%v\n%.300s", err, b)
	}
	return v
}

// TestYAMLListItemByItemMatchesWhole: converting a List item by item gives
// exactly the JSON of converting it whole, on every example and test capture.
func TestYAMLListItemByItemMatchesWhole(t *testing.T) {
	var files []string
	for _, g := range []string{"../../../examples/*.yaml", "../../../test/fixtures/captures/*.yaml", "../../../test/fixtures/build/*.yaml"} {
		m, _ := filepath.Glob(g)
		files = append(files, m...)
	}
	if len(files) < 5 {
		t.Fatalf("captures: %v", files)
	}
	lists := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		yr := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
		for {
			doc, err := yr.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			whole, err := yaml.YAMLToJSON(doc)
			if err != nil {
				continue
			}
			split, ok := yamlListToJSON(doc)
			if !ok {
				continue
			}
			lists++
			if !reflect.DeepEqual(jsonValue(t, whole), jsonValue(t, split)) {
				t.Errorf("%s: item-by-item conversion differs from the whole document's", f)
			}
		}
	}
	if lists < 5 {
		t.Errorf("only %d Lists converted item by item", lists)
	}
}

func TestYAMLListShapes(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		ok        bool
	}{
		{"list", "apiVersion: v1\nkind: List\nitems:\n- kind: Pod\n  metadata: {name: a}\n- kind: Pod\n  metadata:\n    name: b\n    annotations:\n      x: |\n        line\n        - not an item\nmetadata: {}\n", true},
		{"empty items", "apiVersion: v1\nkind: List\nitems: []\n", false},
		{"indented items", "kind: List\nitems:\n  - kind: Pod\n", false},
		{"alias across items", "kind: List\nitems:\n- &a {kind: Pod}\n- *a\n", false},
		{"no items", "kind: Pod\nmetadata: {name: a}\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := yamlListToJSON([]byte(tc.doc))
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v (%s)", ok, tc.ok, got)
			}
			if ok {
				whole, err := yaml.YAMLToJSON([]byte(tc.doc))
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(jsonValue(t, whole), jsonValue(t, got)) {
					t.Errorf("got %s\nwant %s", got, whole)
				}
			}
		})
	}
}

// TestLargeYAMLDocumentBound: a large YAML document that cannot be converted
// item by item is refused with advice, not converted at 40 times its size.
func TestLargeYAMLDocumentBound(t *testing.T) {
	defer func(a, b int) { yamlSplitMinBytes, maxYAMLDocBytes = a, b }(yamlSplitMinBytes, maxYAMLDocBytes)
	yamlSplitMinBytes, maxYAMLDocBytes = 64, 256
	big := "kind: List\nitems:\n  - kind: Pod\n    metadata: {name: " + strings.Repeat("x", 300) + "}\n"
	_, err := Read(strings.NewReader(big), "big.yaml")
	if err == nil || !strings.Contains(err.Error(), "convert the capture to JSON first (kubectl dynamo capture -o json") {
		t.Errorf("err = %v", err)
	}
	// The same size as a List with items at column 0 is read, item by item.
	list := "apiVersion: v1\nkind: List\nmetadata: {}\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata: {name: " + strings.Repeat("x", 300) + ", namespace: n}\n"
	b, err := Read(strings.NewReader(list), "list.yaml")
	if err != nil || b.Objects.Len() != 1 {
		t.Errorf("list: %v", err)
	}
}

// TestAliasBombIsRefused: a library caller of Read or Parse gets the same
// bound as the commands (issue 29, case 2): one 100 KB string aliased 1,000
// times in a 108 KB List is refused before any document is converted,
// instead of expanding to 100 MB.
func TestAliasBombIsRefused(t *testing.T) {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: List\nmetadata: {}\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a, namespace: n}\n  data:\n    big: &big " + strings.Repeat("x", 100_000) + "\n")
	for i := range 1000 {
		fmt.Fprintf(&b, "    k%d: *big\n", i)
	}
	_, err := Read(strings.NewReader(b.String()), "bomb.yaml")
	var ee *boundedyaml.ExpansionError
	if !errors.As(err, &ee) || !strings.HasPrefix(err.Error(), "capture bomb.yaml: YAML document 1 expands its anchors and aliases") {
		t.Errorf("err = %v, want an expansion error", err)
	}
}
