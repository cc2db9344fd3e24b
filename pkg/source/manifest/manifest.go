package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	yamlv3 "go.yaml.in/yaml/v3"
	"sigs.k8s.io/yaml"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/capture"
)

// Why a document carries no object.
const (
	SkipEmpty         = "empty"
	SkipNotKubernetes = "not a Kubernetes object (no apiVersion and kind)"
)

// maxDocBytes bounds one YAML document: converting YAML takes about 40 times
// its size in memory. Manifests are far smaller; a capture (which is larger)
// is recognised before any document is converted.
const maxDocBytes = 32 << 20

// captureMarkers are what only a kubectl dynamo capture holds.
var captureMarkers = [][]byte{[]byte(capture.AnnotationCollectedAt), []byte("apiVersion: " + capture.APIVersion), []byte(`"apiVersion":"` + capture.APIVersion + `"`)}

// Options tune Parse.
type Options struct {
	// Index says for which objects the field lines are wanted (nil: none).
	Index func(obj map[string]any) bool
	// ReadCapture reads the objects of a capture file too (the caller named
	// it explicitly); otherwise a capture is recognised and not parsed.
	ReadCapture bool
}

// Parse reads the contents of one manifest file named name. The caller has
// read data through pkg/fileio and checked it with boundedyaml.Check.
func Parse(data []byte, name string, o Options) (*raw.ManifestFile, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	index := o.Index
	f := &raw.ManifestFile{Source: name}
	for _, m := range captureMarkers {
		if bytes.Contains(data, m) {
			f.Capture = true
			if !o.ReadCapture {
				return f, nil
			}
			break
		}
	}
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[') {
		if err := parseJSON(f, data, index); err != nil {
			return nil, err
		}
		return f, nil
	}
	for _, c := range split(data) {
		if len(c.text) > maxDocBytes {
			return nil, fmt.Errorf("YAML document at line %d is %d MiB: convert it to JSON first (yq -o json), which is read in bounded memory", c.line, len(c.text)>>20)
		}
		j, err := yaml.YAMLToJSON(c.text)
		if err != nil {
			return nil, fmt.Errorf("invalid YAML in the document at line %d: %w", c.line, err)
		}
		if err := addDocument(f, j, c.text, c.line, index); err != nil {
			return nil, err
		}
	}
	if len(f.Docs) == 0 {
		f.Docs = append(f.Docs, raw.ManifestDoc{Source: name, Line: 1, Skip: SkipEmpty})
	}
	return f, nil
}

// chunk is one YAML document and the line it starts on.
type chunk struct {
	text []byte
	line int
}

// split cuts a YAML stream at its "---" separator lines (a line starting with
// "---" followed by nothing but blanks or a comment), as kubectl does.
func split(data []byte) []chunk {
	var out []chunk
	start, startLine, line := 0, 1, 1
	for off := 0; off < len(data); {
		end := bytes.IndexByte(data[off:], '\n')
		next := len(data)
		if end >= 0 {
			next = off + end + 1
		}
		l := data[off:next]
		if bytes.HasPrefix(l, []byte("---")) {
			rest := strings.TrimSpace(string(l[3:]))
			if rest == "" || strings.HasPrefix(rest, "#") {
				out = append(out, chunk{text: data[start:off], line: startLine})
				start, startLine = next, line+1
			}
		}
		off = next
		line++
	}
	out = append(out, chunk{text: data[start:], line: startLine})
	return out
}

// parseJSON reads a JSON stream: one or more values.
func parseJSON(f *raw.ManifestFile, data []byte, index func(map[string]any) bool) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	for {
		start := int(dec.InputOffset())
		var v json.RawMessage
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("invalid JSON at line %d: %w", lineAt(data, int(dec.InputOffset())), err)
		}
		for start < len(data) && strings.ContainsRune(" \t\r\n", rune(data[start])) {
			start++
		}
		if err := addDocument(f, v, v, lineAt(data, start), index); err != nil {
			return err
		}
	}
}

func lineAt(data []byte, off int) int {
	return 1 + bytes.Count(data[:min(off, len(data))], []byte("\n"))
}

// addDocument adds one document (its JSON form j and its text) starting at
// line: an object, each item of a List, or a skipped document.
func addDocument(f *raw.ManifestFile, j, text []byte, line int, index func(map[string]any) bool) error {
	t := bytes.TrimSpace(j)
	if len(t) == 0 || bytes.Equal(t, []byte("null")) {
		// An empty document between separators is no news; a file with
		// nothing in it is (Parse notes it).
		return nil
	}
	if t[0] != '{' {
		f.Docs = append(f.Docs, raw.ManifestDoc{Source: f.Source, Line: line, Skip: SkipNotKubernetes})
		return nil
	}
	obj, err := capture.DecodeJSONObject(t)
	if err != nil {
		return fmt.Errorf("the document at line %d: %w", line, err)
	}
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	if apiVersion == "" || kind == "" {
		f.Docs = append(f.Docs, raw.ManifestDoc{Source: f.Source, Line: line, Skip: SkipNotKubernetes})
		return nil
	}
	var root *yamlv3.Node
	lines := func() *yamlv3.Node {
		if root == nil {
			root = parseNode(text)
		}
		return root
	}
	items, isList := obj["items"].([]any)
	if !isList || !strings.HasSuffix(kind, "List") {
		d := raw.ManifestDoc{Source: f.Source, Line: line, Object: obj}
		if n := lines(); n != nil {
			d.Line = line + n.Line - 1
			if index != nil && index(obj) {
				d.Fields = fieldLines(n, line-1)
			}
		}
		f.Docs = append(f.Docs, d)
		return nil
	}
	var itemNodes []*yamlv3.Node
	if n := lines(); n != nil {
		if in := mapValue(n, "items"); in != nil && in.Kind == yamlv3.SequenceNode {
			itemNodes = in.Content
		}
	}
	for i, it := range items {
		d := raw.ManifestDoc{Source: f.Source, Line: line}
		var node *yamlv3.Node
		if i < len(itemNodes) {
			node = itemNodes[i]
			d.Line = line + node.Line - 1
		}
		m, ok := it.(map[string]any)
		if !ok {
			d.Skip = SkipNotKubernetes
			f.Docs = append(f.Docs, d)
			continue
		}
		d.Object = m
		if node != nil && index != nil && index(m) {
			d.Fields = fieldLines(node, line-1)
		}
		f.Docs = append(f.Docs, d)
	}
	return nil
}

// parseNode is the YAML node tree of a document (JSON is YAML), its content
// node; nil when the YAML library cannot read it (the lines are then unknown,
// never an error: the JSON conversion has already accepted the document).
func parseNode(text []byte) *yamlv3.Node {
	var doc yamlv3.Node
	if err := yamlv3.Unmarshal(text, &doc); err != nil || doc.Kind != yamlv3.DocumentNode || len(doc.Content) == 0 {
		return nil
	}
	return doc.Content[0]
}

func mapValue(n *yamlv3.Node, key string) *yamlv3.Node {
	if n.Kind != yamlv3.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// fieldLines maps every field path under n to the line of its key (a list
// item: of the item), lines offset by off. Aliases are not followed, so the
// walk is bounded by the document's own size.
func fieldLines(n *yamlv3.Node, off int) map[string]int {
	out := map[string]int{}
	var walk func(n *yamlv3.Node, path string)
	walk = func(n *yamlv3.Node, path string) {
		switch n.Kind {
		case yamlv3.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				if k.Kind != yamlv3.ScalarNode || k.Value == "<<" {
					continue
				}
				p := k.Value
				if path != "" {
					p = path + "." + k.Value
				}
				if _, dup := out[p]; !dup {
					out[p] = k.Line + off
				}
				walk(v, p)
			}
		case yamlv3.SequenceNode:
			for i, item := range n.Content {
				p := path + "[" + strconv.Itoa(i) + "]"
				out[p] = item.Line + off
				walk(item, p)
			}
		}
	}
	walk(n, "")
	return out
}
