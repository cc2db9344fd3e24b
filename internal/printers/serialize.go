package printers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"sigs.k8s.io/yaml"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/termsafe"
)

// APIVersion is the apiVersion of every document kubectl-dynamo prints.
const APIVersion = "kubectl-dynamo.io/v1alpha1"

// JSON writes v as indented JSON followed by a newline. Models keep u64 values as
// decimal strings, so nothing passes through float64. Control, bidi and
// invisible characters inside strings are \u-escaped (termsafe.JSON): the
// document decodes to the same values and is safe to print.
func JSON(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("encode json: %w", err)
	}
	out, err := indentJSON(make([]byte, 0, buf.Len()+buf.Len()/2), buf.Bytes())
	if err != nil {
		return fmt.Errorf("encode json: %w", err)
	}
	_, err = w.Write(termsafe.JSON(out))
	return err
}

// YAML writes v as YAML, converted from its JSON form so that field names and
// omitempty rules are the same in both. Strings holding control, bidi or
// invisible characters are written double-quoted with those escaped
// (termsafe.YAMLStrings), so the document is exact and safe to print.
func YAML(w io.Writer, v any) error {
	j, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode yaml: %w", err)
	}
	j, restore, err := termsafe.YAMLStrings(j)
	if err != nil {
		return fmt.Errorf("encode yaml: %w", err)
	}
	y, err := yaml.JSONToYAML(j)
	if err != nil {
		return fmt.Errorf("encode yaml: %w", err)
	}
	_, err = w.Write(restore(y))
	return err
}

// CanonicalJSON is the compact JSON form of v, for comparing documents.
func CanonicalJSON(v any) ([]byte, error) { return json.Marshal(v) }
