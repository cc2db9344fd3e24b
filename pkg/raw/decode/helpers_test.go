package decode

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/hermetic"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/jsonscan"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw"
)

func TestMain(m *testing.M) { hermetic.Main(m) }

// captureFiles are the example and fixture captures.
func captureFiles(t testing.TB) []string {
	t.Helper()
	var files []string
	for _, g := range []string{"../../../examples/*.yaml", "../../../test/fixtures/build/*.yaml", "../../../test/fixtures/captures/*.yaml", "../../../test/fixtures/upstream/*.yaml"} {
		more, _ := filepath.Glob(g)
		files = append(files, more...)
	}
	if len(files) < 40 {
		t.Fatalf("found %d captures", len(files))
	}
	return files
}

// captureObjects reads a capture file's Kubernetes objects (the items of its
// Lists; kubectl-dynamo's own kinds left out) as whole objects.
func captureObjects(t testing.TB, file string) []raw.Object {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out []raw.Object
	for _, doc := range strings.Split(string(data), "\n---") {
		j, err := yaml.YAMLToJSON([]byte(doc))
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if s := strings.TrimSpace(string(j)); s == "null" || s == "" {
			continue
		}
		m, err := JSONObject(j)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		out = append(out, listItems(m)...)
	}
	return out
}

func listItems(m raw.Object) []raw.Object {
	kind, _ := m["kind"].(string)
	if items, ok := m["items"].([]any); ok && strings.HasSuffix(kind, "List") {
		var out []raw.Object
		for _, it := range items {
			if o, ok := it.(map[string]any); ok {
				out = append(out, listItems(o)...)
			}
		}
		return out
	}
	if av, _ := m["apiVersion"].(string); strings.HasPrefix(av, "kubectl-dynamo.io/") {
		return nil
	}
	return []raw.Object{m}
}

// jsonObjects types one JSON object by the JSON path.
func jsonObjects(t testing.TB, data []byte) raw.Objects {
	t.Helper()
	v := jsonscan.Validator{B: data}
	i := jsonscan.SkipWS(data, 0)
	end, ok := v.Value(i, 0)
	if !ok || jsonscan.SkipWS(data, end) != len(data) {
		t.Fatalf("invalid JSON: %.200s", data)
	}
	var out raw.Objects
	Add(&out, NewDecoder(data, nil).Item(i))
	return out
}
