package tokenizer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// UnsupportedError reports a tokenizer.json component, type or option that
// this package does not implement. Path is the JSON path of the offending
// value, for example "pre_tokenizer.pretokenizers[0].behavior".
type UnsupportedError struct {
	// Path is the JSON path of the unsupported value.
	Path string
	// What describes the unsupported value, for example
	// `pre-tokenizer type "UnicodeScripts"`.
	What string
}

// Error implements error.
func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("tokenizer.json: %s: unsupported %s; this tokenizer cannot be reproduced exactly, so it is refused (file an issue with the model name)", e.Path, e.What)
}

func unsupported(path, format string, args ...any) error {
	return &UnsupportedError{Path: path, What: fmt.Sprintf(format, args...)}
}

func invalid(path, format string, args ...any) error {
	return fmt.Errorf("tokenizer.json: %s: %s", path, fmt.Sprintf(format, args...))
}

// obj is one JSON object of the file together with its path, with typed
// accessors that report errors with that path.
type obj struct {
	path string
	m    map[string]json.RawMessage
}

func isNull(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || bytes.Equal(t, []byte("null"))
}

func parseObj(raw json.RawMessage, path string) (*obj, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, invalid(path, "expected a JSON object")
	}
	return &obj{path: path, m: m}, nil
}

func (o *obj) sub(key string) string {
	if o.path == "" {
		return key
	}
	return o.path + "." + key
}

func (o *obj) has(key string) bool {
	raw, ok := o.m[key]
	return ok && !isNull(raw)
}

func (o *obj) typ() (string, error) {
	var s string
	raw, ok := o.m["type"]
	if !ok || json.Unmarshal(raw, &s) != nil {
		return "", invalid(o.path, `missing or invalid "type"`)
	}
	return s, nil
}

func (o *obj) str(key, def string) (string, error) {
	if !o.has(key) {
		return def, nil
	}
	var s string
	if err := json.Unmarshal(o.m[key], &s); err != nil {
		return "", invalid(o.sub(key), "expected a string")
	}
	return s, nil
}

func (o *obj) boolean(key string, def bool) (bool, error) {
	if !o.has(key) {
		return def, nil
	}
	var b bool
	if err := json.Unmarshal(o.m[key], &b); err != nil {
		return false, invalid(o.sub(key), "expected true or false")
	}
	return b, nil
}

func (o *obj) integer(key string, def int) (int, error) {
	if !o.has(key) {
		return def, nil
	}
	var n int
	if err := json.Unmarshal(o.m[key], &n); err != nil || n < 0 || n > 1<<20 {
		return 0, invalid(o.sub(key), "expected a small non-negative integer")
	}
	return n, nil
}

func (o *obj) list(key string) ([]json.RawMessage, error) {
	if !o.has(key) {
		return nil, nil
	}
	var l []json.RawMessage
	if err := json.Unmarshal(o.m[key], &l); err != nil {
		return nil, invalid(o.sub(key), "expected a list")
	}
	return l, nil
}

// allow refuses keys that this package does not know for the component, so
// that a future option is never ignored silently. Keys whose value is null
// are always accepted.
func (o *obj) allow(component string, keys ...string) error {
	var unknown []string
	for k, v := range o.m {
		if k == "type" || isNull(v) {
			continue
		}
		found := false
		for _, a := range keys {
			if a == k {
				found = true
				break
			}
		}
		if !found {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return unsupported(o.sub(unknown[0]), "option %q of %s", unknown[0], component)
	}
	return nil
}

// pattern is the {"String": ...} or {"Regex": ...} object of Split and
// Replace.
type pattern struct {
	literal string
	regex   string
	isRegex bool
}

func (o *obj) pattern(key string) (pattern, error) {
	p, err := parseObj(o.m[key], o.sub(key))
	if err != nil {
		return pattern{}, err
	}
	if err := p.allow("pattern", "String", "Regex"); err != nil {
		return pattern{}, err
	}
	switch {
	case p.has("String") && p.has("Regex"):
		return pattern{}, invalid(p.path, `expected only one of "String" and "Regex"`)
	case p.has("String"):
		s, err := p.str("String", "")
		return pattern{literal: s}, err
	case p.has("Regex"):
		s, err := p.str("Regex", "")
		return pattern{regex: s, isRegex: true}, err
	}
	return pattern{}, invalid(p.path, `expected "String" or "Regex"`)
}

func index(path string, i int) string { return fmt.Sprintf("%s[%d]", path, i) }

// oneOf returns an error unless v is one of the allowed values (compared
// case-sensitively, as the Rust implementation does).
func oneOf(path, what, v string, allowed ...string) error {
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	return unsupported(path, "%s %q (supported: %s)", what, v, strings.Join(allowed, ", "))
}

// parseSequence parses the list of a Sequence component (the decoders of a
// Sequence decoder, the normalizers of a Sequence normalizer, …), refusing any
// other key. parse receives each element and whether it is the last one.
func parseSequence[T any](o *obj, kind, field string, parse func(so *obj, last bool) (T, error)) ([]T, error) {
	if err := o.allow("Sequence "+kind, field); err != nil {
		return nil, err
	}
	l, err := o.list(field)
	if err != nil {
		return nil, err
	}
	steps := make([]T, 0, len(l))
	for i, raw := range l {
		so, err := parseObj(raw, index(o.sub(field), i))
		if err != nil {
			return nil, err
		}
		st, err := parse(so, i == len(l)-1)
		if err != nil {
			return nil, err
		}
		steps = append(steps, st)
	}
	return steps, nil
}
