package manifest_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/manifest"
)

func everything(map[string]any) bool { return true }

// summary is "line kind/name" or "line skip: why" per document.
func summary(f *raw.ManifestFile) string {
	var parts []string
	for _, d := range f.Docs {
		if d.Object == nil {
			parts = append(parts, fmt.Sprintf("%d skip: %s", d.Line, d.Skip))
			continue
		}
		md, _ := d.Object["metadata"].(map[string]any)
		parts = append(parts, fmt.Sprintf("%d %s/%v", d.Line, d.Object["kind"], md["name"]))
	}
	return strings.Join(parts, "; ")
}

// TestParse: documents and List items with the line they start on; empty
// files, YAML that is no Kubernetes object and captures told apart.
func TestParse(t *testing.T) {
	cases := []struct {
		name, data, want string
		capture          bool
	}{
		{"two documents with a comment and a leading separator",
			"# deploy\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---   # next\n\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n",
			"3 ConfigMap/a; 8 ConfigMap/b", false},
		{"a List", "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a}\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: b}\n",
			"4 ConfigMap/a; 7 ConfigMap/b", false},
		{"a JSON stream", "{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\", \"metadata\": {\"name\": \"a\"}}\n\n{\"apiVersion\": \"v1\",\n \"kind\": \"ConfigMap\", \"metadata\": {\"name\": \"b\"}}\n",
			"1 ConfigMap/a; 3 ConfigMap/b", false},
		{"an empty file", "", "1 skip: empty", false},
		{"comments only", "# nothing yet\n---\n", "1 skip: empty", false},
		{"Helm values", "replicaCount: 2\nimage: {tag: 1.3.0}\n", "1 skip: not a Kubernetes object (no apiVersion and kind)", false},
		{"a list of strings", "- a\n- b\n", "1 skip: not a Kubernetes object (no apiVersion and kind)", false},
		{"a capture", "apiVersion: v1\nkind: List\nmetadata:\n  annotations: {kubectl-dynamo.io/collected-at: \"2026-11-20T12:03:11Z\"}\nitems: [{apiVersion: v1, kind: Node, metadata: {name: n}}]\n", "", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, err := manifest.Parse([]byte(tc.data), "f.yaml", manifest.Options{Index: everything})
			if err != nil {
				t.Fatal(err)
			}
			if got := summary(f); got != tc.want || f.Capture != tc.capture {
				t.Errorf("got %q capture %v, want %q capture %v", got, f.Capture, tc.want, tc.capture)
			}
		})
	}
}

// TestFieldLines: field paths map to the lines of their keys, in a
// document after others and in a List item; an alias is not expanded.
func TestFieldLines(t *testing.T) {
	data := `apiVersion: v1
kind: ConfigMap
metadata: {name: first}
---
apiVersion: nvidia.com/v1beta1
kind: DynamoGraphDeployment
metadata:
  name: d
  labels: &l {a: b}
spec:
  experimental:
    kvTransferPolicy:
      enforcment: required
  components:
  - name: frontend
  - name: worker
    podTemplate:
      metadata: {labels: *l}
      spec:
        containers:
        - name: main
          resources: {limits: {nvidia.com/gpu: "1"}}
`
	f, err := manifest.Parse([]byte(data), "f.yaml", manifest.Options{Index: func(o map[string]any) bool { return o["kind"] == "DynamoGraphDeployment" }})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Docs) != 2 || f.Docs[0].Fields != nil || f.Docs[1].Line != 5 {
		t.Fatalf("docs: %s; fields of the first: %v", summary(f), f.Docs[0].Fields)
	}
	fields := f.Docs[1].Fields
	for path, line := range map[string]int{
		"spec.experimental.kvTransferPolicy.enforcment": 13,
		"spec.components[0]":                            15,
		"spec.components[1].name":                       16,
		"spec.components[1].podTemplate.spec.containers[0].resources.limits.nvidia.com/gpu": 22,
		"metadata.labels.a": 9,
	} {
		if fields[path] != line {
			t.Errorf("%s: line %d, want %d", path, fields[path], line)
		}
	}
	if _, expanded := fields["spec.components[1].podTemplate.metadata.labels.a"]; expanded {
		t.Error("an alias was expanded")
	}
}

// TestParseErrors: invalid YAML says which document, never "capture".
func TestParseErrors(t *testing.T) {
	_, err := manifest.Parse([]byte("apiVersion: v1\nkind: ConfigMap\n---\nkey: [unclosed\n"), "f.yaml", manifest.Options{})
	if err == nil || !strings.Contains(err.Error(), "line 4") || strings.Contains(err.Error(), "capture") {
		t.Errorf("got %v", err)
	}
}
