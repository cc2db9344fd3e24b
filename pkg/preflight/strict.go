package preflight

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
)

// strictProblems decodes a DynamoGraphDeployment strictly against the schema
// of its API version, as kubectl apply does by default: every unknown field
// and every value of the wrong type is a problem, named by its field path
// (spec.components[1].podTemplate.spec.containers[0].image) and said in our
// words. At most maxStrictProblems are reported.
func strictProblems(obj map[string]any, version string) []problem {
	root := dgdSchema(version)
	if root == nil {
		return nil
	}
	w := &strictWalker{}
	w.walk(obj, root, "")
	return w.out
}

const maxStrictProblems = 20

type strictWalker struct {
	out     []problem
	dropped int
}

func (w *strictWalker) bad(path, format string, args ...any) {
	if len(w.out) >= maxStrictProblems {
		w.dropped++
		return
	}
	id := FindingInvalidManifest
	if path == policyPath || strings.HasPrefix(path, policyPath+".") {
		id = FindingInvalidPolicy
	}
	w.out = append(w.out, problem{id: id, path: path, msg: fmt.Sprintf(format, args...), strict: true})
}

func join(path, field string) string {
	if path == "" {
		return field
	}
	return path + "." + field
}

func (w *strictWalker) walk(v any, n *schemaNode, path string) {
	if v == nil || n.kind == kindAny {
		// null is an absent field to the API server.
		return
	}
	switch n.kind {
	case kindString:
		if _, ok := v.(string); !ok {
			w.bad(path, "must be a string, not %s%s", describeValue(v), quoteHint(v))
		}
	case kindBool:
		if _, ok := v.(bool); !ok {
			w.bad(path, "must be true or false, not %s", describeValue(v))
		}
	case kindInteger:
		if !isInteger(v) {
			w.bad(path, "must be a whole number, not %s%s", describeValue(v), unquoteHint(v))
		}
	case kindNumber:
		if !isNumber(v) {
			w.bad(path, "must be a number, not %s%s", describeValue(v), unquoteHint(v))
		}
	case kindIntOrString:
		if _, ok := v.(string); !ok && !isInteger(v) {
			w.bad(path, "must be a whole number or a string, not %s", describeValue(v))
		}
	case kindQuantity:
		switch x := v.(type) {
		case string:
			if _, err := resource.ParseQuantity(x); err != nil {
				w.bad(path, "%q is not a quantity (for example 1, 500m, 16Gi)", x)
			}
		default:
			if !isNumber(v) {
				w.bad(path, "must be a quantity (for example 1, 500m, 16Gi), not %s", describeValue(v))
			}
		}
	case kindList:
		list, ok := v.([]any)
		if !ok {
			w.bad(path, "must be a list, not %s", describeValue(v))
			return
		}
		for i, item := range list {
			w.walk(item, n.elem, fmt.Sprintf("%s[%d]", path, i))
		}
	case kindMap:
		m, ok := v.(map[string]any)
		if !ok {
			w.bad(path, "must be a map (key: value), not %s", describeValue(v))
			return
		}
		for _, k := range sortedKeys(m) {
			w.walk(m[k], n.elem, join(path, k))
		}
	case kindObject:
		m, ok := v.(map[string]any)
		if !ok {
			w.bad(path, "must be an object (field: value), not %s", describeValue(v))
			return
		}
		if n.fields == nil {
			return
		}
		for _, k := range sortedKeys(m) {
			f, known := n.field(k)
			if !known {
				s, near := suggest(k, n.fields)
				w.bad(join(path, k), "unknown field%s", s)
				if near != "" {
					w.out[len(w.out)-1].hint = fmt.Sprintf("rename %s to %s", join(path, k), near)
				} else if len(w.out) > 0 && w.out[len(w.out)-1].path == join(path, k) {
					w.out[len(w.out)-1].hint = "remove " + join(path, k) + " (or move it where the schema has it)"
				}
				continue
			}
			w.walk(m[k], f, join(path, k))
		}
	}
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func isInteger(v any) bool {
	switch x := v.(type) {
	case int64, int, int32:
		return true
	case float64:
		return x == math.Trunc(x) && !math.IsInf(x, 0)
	case json.Number:
		_, err := x.Int64()
		return err == nil
	}
	return false
}

func isNumber(v any) bool {
	switch x := v.(type) {
	case int64, int, int32, float64:
		return true
	case json.Number:
		_, err := x.Float64()
		return err == nil
	}
	return false
}

// describeValue says what a value is, for "must be X, not Y".
func describeValue(v any) string {
	switch x := v.(type) {
	case string:
		return fmt.Sprintf("the string %q", clipText(x))
	case bool:
		return strconv.FormatBool(x)
	case int64, int, int32, float64, json.Number:
		return fmt.Sprintf("the number %v", x)
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	}
	return reflect.TypeOf(v).String()
}

// unquoteHint suggests dropping quotes around a number written as a string.
func unquoteHint(v any) string {
	if s, ok := v.(string); ok {
		if _, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil {
			return " (write it without quotes)"
		}
	}
	return ""
}

// quoteHint suggests quoting a value YAML read as a number or a boolean.
func quoteHint(v any) string {
	switch v.(type) {
	case bool, int64, int, int32, float64, json.Number:
		return fmt.Sprintf(" (quote it: \"%v\")", v)
	}
	return ""
}

func clipText(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// suggest is "; did you mean X?" for the known field nearest to name (by
// edit distance, ignoring case), or the known fields when there are few;
// near is X ("" when none is near).
func suggest(name string, fields map[string]*schemaNode) (text, near string) {
	best, bestD := "", math.MaxInt
	for k := range fields {
		d := editDistance(strings.ToLower(name), strings.ToLower(k))
		if d < bestD || d == bestD && k < best {
			best, bestD = k, d
		}
	}
	if best != "" && bestD <= max(2, len(name)/3) {
		return "; did you mean " + best + "?", best
	}
	if len(fields) <= 8 {
		keys := make([]string, 0, len(fields))
		for k := range fields {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		return "; known fields here: " + strings.Join(keys, ", "), ""
	}
	return "", ""
}

// editDistance is the Levenshtein distance, bounded in cost by the lengths of
// field names (a field name longer than 256 bytes is compared by its start).
func editDistance(a, b string) int {
	if len(a) > 256 {
		a = a[:256]
	}
	if len(b) > 256 {
		b = b[:256]
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// decodeError says what a JSON decoding error of a manifest part means, in
// our words: the field path and the type expected, never a Go type name.
func decodeError(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		want := "a value of another type"
		switch te.Type.Kind() {
		case reflect.String:
			want = "a string"
		case reflect.Bool:
			want = "true or false"
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			want = "a whole number"
		case reflect.Float32, reflect.Float64:
			want = "a number"
		case reflect.Slice, reflect.Array:
			want = "a list"
		case reflect.Map, reflect.Struct:
			want = "an object"
		}
		if te.Field != "" {
			return fmt.Sprintf("%s: must be %s, not %s", te.Field, want, jsonValueWord(te.Value))
		}
		return fmt.Sprintf("must be %s, not %s", want, jsonValueWord(te.Value))
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return "is not valid JSON"
	}
	// Errors of types that decode themselves (a quantity, a time) carry no
	// Go type names.
	return err.Error()
}

func jsonValueWord(v string) string {
	switch v {
	case "string":
		return "a string"
	case "number":
		return "a number"
	case "bool":
		return "true or false"
	case "array":
		return "a list"
	case "object":
		return "an object"
	}
	return v
}
