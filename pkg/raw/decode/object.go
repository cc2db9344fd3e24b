package decode

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
)

// JSONObject decodes a JSON object into a whole Object: int64 for integers
// that fit, float64 for other numbers, and json.Number for integers beyond
// int64 (u64 ids), so no precision is lost. It is the value the JSON path's
// decoder (jsonscan.Decoder) makes of the same bytes.
func JSONObject(data []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	if m == nil {
		return nil, errors.New("not a JSON object")
	}
	return normalizeJSONValue(m).(map[string]any), nil
}

func normalizeJSONValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = normalizeJSONValue(e)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = normalizeJSONValue(e)
		}
		return x
	case json.Number:
		s := string(x)
		if !strings.ContainsAny(s, ".eE") {
			if i, err := strconv.ParseInt(s, 10, 64); err == nil {
				return i
			}
			return x
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return f
		}
		return x
	}
	return v
}
