package trace

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
)

// FuzzOpen feeds arbitrary bytes to every JSON-lines reader: none may
// panic, every request must respect the bounds, arrivals must not go back,
// and every error but io.EOF must name a line.
func FuzzOpen(f *testing.F) {
	for _, s := range []string{
		`{"timestamp": 0, "input_length": 6758, "output_length": 500, "hash_ids": [0, 1, 2]}`,
		`{"session_id": "a", "timestamp": 1.5, "input_length": 10, "output_length": 3, "hash_ids": [1, 2, 3]}` + "\n" + `{"session_id": "a", "timestamp": 2, "input_length": 6, "output_length": 2, "hash_ids": [7]}`,
		dynamoLine,
		`{"timestamp":1,"event":` + dynamoLine + `}`,
		`{"timestamp": 5, "tokens": [1, 2, 4294967295], "output_length": 3, "session_id": 12}`,
		`{"text": "hello world", "output_length": 1}`,
		"\xef\xbb\xbf{\"timestamp\": 99999999999999999999}\n\n[1]\n",
		`{"hash_ids": [18446744073709551615], "timestamp": 0, "output_length": 0}`,
	} {
		f.Add([]byte(s))
	}
	words := func(s string) ([]uint32, error) {
		out := make([]uint32, 0, 8)
		for w := range strings.FieldsSeq(s) {
			out = append(out, uint32(len(w)))
		}
		return out, nil
	}
	o := Options{TraceBlockSize: 4, MaxLineBytes: 4096, MaxInputTokens: 256, Tokenize: words}
	f.Fuzz(func(t *testing.T, data []byte) {
		if f, err := Detect(data); err == nil {
			if _, err := ParseFormat(string(f)); err != nil {
				t.Fatalf("Detect returned %q, which ParseFormat rejects", f)
			}
		}
		for _, f := range []Format{Mooncake, MooncakeDelta, DynamoRequestTrace, Tokens, Texts} {
			r, err := Open(strings.NewReader(string(data)), f, o)
			if err != nil {
				t.Fatal(err)
			}
			var last Request
			for i := 0; ; i++ {
				req, err := r.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					var le *LineError
					if !errors.As(err, &le) && !strings.Contains(err.Error(), "no request_end records") {
						t.Fatalf("%s: error without a line: %v", f, err)
					}
					break
				}
				if len(req.Tokens) > o.MaxInputTokens || req.OutputTokens < 0 || req.OutputTokens > MaxOutputTokens || req.Line < 1 {
					t.Fatalf("%s: request out of bounds: line %d, %d tokens, %d out", f, req.Line, len(req.Tokens), req.OutputTokens)
				}
				if i > 0 && req.Arrival < last.Arrival {
					t.Fatalf("%s: arrival goes back at line %d", f, req.Line)
				}
				last = req
			}
		}
	})
}

// FuzzArrayLen: the element count the readers check before decoding an id
// list (arrayLen) is the count encoding/json decodes, for every valid JSON
// value, and "not an array" exactly when it is not one.
func FuzzArrayLen(f *testing.F) {
	for _, s := range []string{`[]`, `[1]`, ` [1, 2 ,3] `, `[[1,2],{"a":[3,4]},"x,y",",]"]`, `["\"", "\\"]`, `{"a":1}`, `"[1,2]"`, `null`, `[1,[2,[3]]]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) {
			return
		}
		var elems []json.RawMessage
		isArray := json.Unmarshal(raw, &elems) == nil && bytes.HasPrefix(bytes.TrimSpace(raw), []byte("["))
		n, ok := arrayLen(raw)
		if ok != isArray || ok && n != len(elems) {
			t.Fatalf("arrayLen(%q) = %d, %v; encoding/json: array %v of %d", raw, n, ok, isArray, len(elems))
		}
	})
}
