package boundedyaml

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"

	yamlv2 "go.yaml.in/yaml/v2"
)

// Budget bounds what one input may expand to, aliases expanded.
type Budget struct {
	// Bytes bounds the JSON the input converts to.
	Bytes int64
	// Nodes bounds the values (scalars, sequences, mappings, map keys).
	Nodes int64
}

// The budget for an input of n bytes is Factor·n plus a floor: a document
// without aliases converts to JSON of about its own size (at most twice it for
// the densest YAML), so only alias expansion can reach it.
const (
	// Factor is how many times its own size an input may expand to.
	Factor = 16
	// MinBytes is the byte budget of an empty input (small files may use a
	// few anchors for shared blocks).
	MinBytes = 4 << 20
	// MinNodes is the value budget of an empty input.
	MinNodes = 1 << 18
)

// BudgetFor returns the budget for an input of n bytes.
func BudgetFor(n int) Budget {
	return Budget{Bytes: MinBytes + Factor*int64(n), Nodes: MinNodes + int64(n)}
}

// ExpansionError is a document that expands beyond its budget.
type ExpansionError struct {
	// Document is the 1-based document of the stream (0: a single document).
	Document int
	// InputBytes is the size of the whole input the budget was computed for.
	InputBytes int
	Budget     Budget
	// Nodes is true when the value count, not the byte count, went over.
	Nodes bool
}

func (e *ExpansionError) Error() string {
	where := "the YAML"
	if e.Document > 0 {
		where = fmt.Sprintf("YAML document %d", e.Document)
	}
	what := fmt.Sprintf("more than %s of data", mib(e.Budget.Bytes))
	if e.Nodes {
		what = fmt.Sprintf("more than %d values", e.Budget.Nodes)
	}
	return fmt.Sprintf("%s expands its anchors and aliases to %s, the limit for a %s input (%d times its size, plus %s): "+
		"write the repeated values out, or remove the aliases (*name) to large anchors (&name)", where, what, kib(e.InputBytes), Factor, mib(MinBytes))
}

func mib(n int64) string { return strconv.FormatInt(n>>20, 10) + " MiB" }

func kib(n int) string {
	if n < 1<<20 {
		return strconv.Itoa((n+1023)>>10) + " KiB"
	}
	return strconv.Itoa(n>>20) + " MiB"
}

// ToJSON converts one YAML document to JSON, exactly as
// sigs.k8s.io/yaml.YAMLToJSON does, and returns an *ExpansionError instead
// when the document expands beyond BudgetFor(len(doc)).
func ToJSON(doc []byte) ([]byte, error) {
	return ToJSONBudget(doc, BudgetFor(len(doc)))
}

// ToJSONBudget is ToJSON with an explicit budget.
func ToJSONBudget(doc []byte, b Budget) ([]byte, error) {
	var obj any
	if err := yamlv2.Unmarshal(doc, &obj); err != nil {
		return nil, err
	}
	m := meter{b: b}
	if !m.value(obj) {
		return nil, &ExpansionError{InputBytes: len(doc), Budget: b, Nodes: m.nodes > b.Nodes}
	}
	j, err := jsonable(obj)
	if err != nil {
		return nil, err
	}
	return json.Marshal(j)
}

// Unmarshal converts doc with ToJSON and decodes the JSON into v with
// encoding/json.
func Unmarshal(doc []byte, v any) error {
	j, err := ToJSON(doc)
	if err != nil {
		return err
	}
	return json.Unmarshal(j, v)
}

// Check verifies that the YAML stream data (documents separated by "---")
// expands, all documents together, within BudgetFor(len(data)), without
// converting it. JSON input, and YAML in which no anchor can occur, pass
// without being parsed: only an anchor lets a document expand. A document the
// YAML library cannot parse passes too; its converter reports the error.
func Check(data []byte) error {
	return checkBudget(data, BudgetFor(len(data)))
}

func checkBudget(data []byte, b Budget) error {
	if !mayHaveAnchor(data) {
		return nil
	}
	m := meter{b: b}
	for i, doc := range documents(data) {
		n := i + 1
		if !mayHaveAnchor(doc) {
			// Still count what it takes up: the budget is for the whole stream.
			m.bytes += int64(len(doc))
			continue
		}
		var obj any
		if err := yamlv2.Unmarshal(doc, &obj); err != nil {
			continue
		}
		if !m.value(obj) {
			return &ExpansionError{Document: n, InputBytes: len(data), Budget: b, Nodes: m.nodes > b.Nodes}
		}
	}
	return nil
}

// mayHaveAnchor reports whether data may expand through an alias: it needs
// an anchor ('&') and an alias ('*'), each where a node can start (after a
// space, a tab, a line break, '[', '{' or ',', or at the start) followed by a
// name character, in something that is not JSON. It errs on the side of yes
// (an indicator inside a quoted string counts); a no is certain.
func mayHaveAnchor(data []byte) bool {
	// Expansion needs an anchor and an alias to it.
	if !nodeStart(data, '&') || !nodeStart(data, '*') {
		return false
	}
	// JSON has no anchors (an '&' there is inside a string): validated only
	// when a candidate was found, so a large JSON capture costs one scan.
	t := bytes.TrimLeft(data, " \t\r\n")
	return len(t) == 0 || t[0] != '{' && t[0] != '[' || !json.Valid(t)
}

// nodeStart reports whether an indicator c ('&' for an anchor, '*' for an
// alias) of data stands where a YAML node can start, followed by a name
// character.
func nodeStart(data []byte, c byte) bool {
	for i := bytes.IndexByte(data, c); i >= 0; {
		start := i == 0
		if !start {
			switch data[i-1] {
			// YAML's separators; ':' ends a flow key ({"a":&b …}); the last
			// bytes of a byte-order mark and of the Unicode line breaks
			// YAML 1.1 knows (NEL, LS, PS). A wrong yes costs a parse.
			case ' ', '\t', '\r', '\n', '[', '{', ',', ':', 0xbf, 0x85, 0xa8, 0xa9:
				start = true
			}
		}
		if start && i+1 < len(data) {
			switch data[i+1] {
			case ' ', '\t', '\r', '\n', '[', ']', '{', '}', ',':
			default:
				return true
			}
		}
		j := bytes.IndexByte(data[i+1:], c)
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return false
}

// meter adds up the JSON a decoded document converts to, and stops as soon as
// the budget is exceeded. The YAML library shares a scalar among the aliases
// to it (one string, many references) and bounds the number of values it
// decodes through aliases, so the decoded tree itself stays small; it is its
// JSON, which copies every reference, that grows.
type meter struct {
	b            Budget
	bytes, nodes int64
}

func (m *meter) add(bytes int64) bool {
	m.bytes += bytes
	m.nodes++
	return m.bytes <= m.b.Bytes && m.nodes <= m.b.Nodes
}

func (m *meter) value(v any) bool {
	switch x := v.(type) {
	case nil:
		return m.add(4)
	case string:
		return m.add(int64(len(x)) + 2)
	case bool:
		return m.add(5)
	case map[any]any:
		if !m.add(2) {
			return false
		}
		for k, e := range x {
			if !m.value(k) || !m.add(2) || !m.value(e) {
				return false
			}
		}
		return true
	case []any:
		if !m.add(2) {
			return false
		}
		for _, e := range x {
			if !m.add(1) || !m.value(e) {
				return false
			}
		}
		return true
	}
	switch x := v.(type) {
	case int:
		return m.add(int64(len(strconv.Itoa(x))))
	case int64:
		return m.add(int64(len(strconv.FormatInt(x, 10))))
	case uint64:
		return m.add(int64(len(strconv.FormatUint(x, 10))))
	}
	return m.add(24) // a float, a time
}

// jsonable is sigs.k8s.io/yaml's convertToJSONableObject without a target
// type: map keys become strings the way it writes them, everything else is
// kept for encoding/json. Where two keys of a mapping become the same string
// (0 and 0.0 are both "0"), sigs.k8s.io/yaml keeps whichever Go's map
// iteration visits last, which changes from run to run; jsonable keeps one by
// a fixed rule (keyBefore), so a document always converts the same way, to one
// of sigs.k8s.io/yaml's answers.
func jsonable(v any) (any, error) {
	switch x := v.(type) {
	case map[any]any:
		out := make(map[string]any, len(x))
		from := make(map[string]any, len(x)) // the source key each entry came from
		for k, e := range x {
			var key string
			switch tk := k.(type) {
			case string:
				key = tk
			case int:
				key = strconv.Itoa(tk)
			case int64:
				key = strconv.FormatInt(tk, 10)
			case float64:
				key = strconv.FormatFloat(tk, 'g', -1, 32)
				switch key {
				case "+Inf":
					key = ".inf"
				case "-Inf":
					key = "-.inf"
				case "NaN":
					key = ".nan"
				}
			case bool:
				key = strconv.FormatBool(tk)
			default:
				return nil, fmt.Errorf("unsupported map key of type: %s, key: %+#v, value: %+#v", reflect.TypeOf(k), k, e)
			}
			c, err := jsonable(e)
			if err != nil {
				return nil, err
			}
			if prev, dup := from[key]; dup && !keyBefore(k, c, prev, out[key]) {
				continue
			}
			out[key], from[key] = c, k
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			c, err := jsonable(e)
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	}
	return v, nil
}

// keyBefore orders two source keys that convert to the same JSON key, with
// their converted values: a string key first (it is the JSON key as written),
// then an integer, a float, a boolean; the smaller number first; then the
// value whose JSON sorts first (NaN keys, which are all different).
func keyBefore(k1, v1, k2, v2 any) bool {
	rank := func(k any) int {
		switch k.(type) {
		case string:
			return 0
		case int, int64:
			return 1
		case float64:
			return 2
		}
		return 3
	}
	if r1, r2 := rank(k1), rank(k2); r1 != r2 {
		return r1 < r2
	}
	if f1, ok := k1.(float64); ok {
		if f2 := k2.(float64); f1 != f2 && !math.IsNaN(f1) && !math.IsNaN(f2) {
			return f1 < f2
		}
	}
	j1, _ := json.Marshal(v1)
	j2, _ := json.Marshal(v2)
	return bytes.Compare(j1, j2) < 0
}

// documents yields the documents of a YAML stream as the Kubernetes YAML
// reader splits them (k8s.io/apimachinery/pkg/util/yaml.YAMLReader, which
// pkg/simulate may not import): at every line that starts with "---" followed
// by nothing but white space or a comment; empty documents are skipped.
func documents(data []byte) func(yield func(int, []byte) bool) {
	return func(yield func(int, []byte) bool) {
		n, start := 0, 0
		emit := func(end int) bool {
			doc := data[start:end]
			start = end
			if len(bytes.TrimSpace(doc)) == 0 {
				return true
			}
			ok := yield(n, doc)
			n++
			return ok
		}
		for i := 0; i < len(data); {
			end := bytes.IndexByte(data[i:], '\n')
			next := len(data)
			if end >= 0 {
				next = i + end + 1
			}
			line := data[i:next]
			if isSeparator(line) {
				if !emit(i) {
					return
				}
				start = next
			}
			i = next
		}
		emit(len(data))
	}
}

// isSeparator reports whether a line ends a YAML document: "---", then only
// white space or a comment.
func isSeparator(line []byte) bool {
	rest, ok := bytes.CutPrefix(line, []byte("---"))
	if !ok {
		return false
	}
	rest = bytes.TrimSpace(rest)
	return len(rest) == 0 || rest[0] == '#'
}
