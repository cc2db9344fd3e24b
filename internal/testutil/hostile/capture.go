package hostile

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// CaptureOptions say how Capture poisons an example capture.
type CaptureOptions struct {
	// Replace rewrites every string and map key (and the strings inside JSON
	// held in strings: etcd values, busy thresholds). It should inject the
	// attack consistently, so that the deployment still joins up (pods to
	// nodes to DWMs) and every command gets past loading.
	Replace func(string) string
	// Context is the capture's context annotation (kubectl-dynamo.io/context).
	Context string
	// Note, when set, is written as a kubectl-dynamo.io/hostile annotation on
	// every object with metadata.
	Note string
	// Dir is where the file goes (a test's TempDir when empty).
	Dir string
}

// Capture rewrites the capture at path (YAML or JSON) with o and writes it as
// JSON — a YAML file cannot hold C0 controls raw — returning the new file's
// path.
func Capture(t testing.TB, path string, o CaptureOptions) string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	j, err := yaml.YAMLToJSON(raw)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if m, ok := doc.(map[string]any); ok && o.Context != "" {
		md, _ := m["metadata"].(map[string]any)
		if md == nil {
			md = map[string]any{}
			m["metadata"] = md
		}
		ann, _ := md["annotations"].(map[string]any)
		if ann == nil {
			ann = map[string]any{}
			md["annotations"] = ann
		}
		ann["kubectl-dynamo.io/context"] = o.Context
	}
	out, err := json.Marshal(poison(doc, &o))
	if err != nil {
		t.Fatal(err)
	}
	dir := o.Dir
	if dir == "" {
		dir = t.TempDir()
	}
	name := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(path), ".yaml"), ".json")
	out2 := filepath.Join(dir, "hostile-"+name+".json")
	if err := os.WriteFile(out2, out, 0o600); err != nil {
		t.Fatal(err)
	}
	return out2
}

func poison(v any, o *CaptureOptions) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[o.Replace(k)] = poison(e, o)
		}
		if o.Note != "" {
			if md, ok := out["metadata"].(map[string]any); ok {
				if ann, ok := md["annotations"].(map[string]any); ok || md["name"] != nil {
					if ann == nil {
						ann = map[string]any{}
						md["annotations"] = ann
					}
					ann["kubectl-dynamo.io/hostile"] = o.Note
				}
			}
		}
		return out
	case []any:
		for i := range x {
			x[i] = poison(x[i], o)
		}
		return x
	case string:
		// JSON held in a string is poisoned inside and encoded again.
		if strings.HasPrefix(x, "{") {
			dec := json.NewDecoder(strings.NewReader(x))
			dec.UseNumber()
			var inner any
			if dec.Decode(&inner) == nil {
				if b, err := json.Marshal(poison(inner, o)); err == nil {
					return string(b)
				}
			}
		}
		return o.Replace(x)
	}
	return v
}
