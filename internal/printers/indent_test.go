package printers

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// stdIndent is what JSON printed before indentJSON: json.Indent with two spaces.
func stdIndent(t testing.TB, src []byte) []byte {
	var buf bytes.Buffer
	if err := json.Indent(&buf, src, "", "  "); err != nil {
		t.Fatalf("json.Indent(%q): %v", src, err)
	}
	return buf.Bytes()
}

func TestIndentJSONMatchesStdlib(t *testing.T) {
	tests := []string{
		`{}`, `[]`, `{}` + "\n", `"x"`, `"x"` + "\n", `0`, `-1.5e+10`, `true`, `null`,
		`{"a":1}`, `{"a":{}}`, `{"a":[]}`, `[[],{},[[]],{"":{}}]`,
		`{"a":"b\"c","d\\":"\\","e":"\\\"","f":"{[,:]}"}`,
		`{"apiVersion":"kubectl-dynamo.io/v1alpha1","kind":"RouteExplanation","items":[{"n":18446744073709551615,"f":-0.25,"ok":false,"x":null},{"s":"ü\u2028<&>"}]}` + "\n",
		`[1,2,3,[4,[5,[6]]]]`,
	}
	for _, src := range tests {
		got, err := indentJSON(nil, []byte(src))
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		if want := stdIndent(t, []byte(src)); !bytes.Equal(got, want) {
			t.Errorf("%s:\ngot  %q\nwant %q", src, got, want)
		}
		if _, ok := indentCompact(nil, []byte(src)); !ok {
			t.Errorf("%s: compact input did not take the fast path", src)
		}
	}
}

func TestIndentJSONNonCompactFallsBack(t *testing.T) {
	for _, src := range []string{"{ \"a\": 1 }", "[1, 2]", " 1", "{}\n\n", "\t[]"} {
		if _, ok := indentCompact(nil, []byte(src)); ok {
			t.Errorf("%q took the fast path", src)
		}
		got, err := indentJSON([]byte("prefix"), []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		if want := append([]byte("prefix"), stdIndent(t, []byte(src))...); !bytes.Equal(got, want) {
			t.Errorf("%q: got %q, want %q", src, got, want)
		}
	}
	if _, err := indentJSON(nil, []byte(`{"a" 1}`)); err == nil {
		t.Error("invalid, non-compact JSON: no error")
	}
}

// TestJSONPrinterOutput pins the printer's whole output on a document with
// the values our models carry.
func TestJSONPrinterOutput(t *testing.T) {
	doc := map[string]any{"apiVersion": APIVersion, "kind": "X", "empty": []int{}, "obj": map[string]any{},
		"n": uint64(math.MaxUint64), "s": "<a&b>", "list": []any{1, "two", nil, map[string]any{"k": true}}}
	var b strings.Builder
	if err := JSON(&b, doc); err != nil {
		t.Fatal(err)
	}
	var enc bytes.Buffer
	e := json.NewEncoder(&enc)
	e.SetEscapeHTML(false)
	e.SetIndent("", "  ")
	if err := e.Encode(doc); err != nil {
		t.Fatal(err)
	}
	if b.String() != enc.String() {
		t.Errorf("JSON printed\n%s\nwant (json.Encoder with SetIndent)\n%s", b.String(), enc.String())
	}
}

func FuzzIndentJSONMatchesStdlib(f *testing.F) {
	for _, s := range []string{`{"a":[1,{"b":"c\"d"}],"e":{}}`, `[]`, `"\\\\"`, `{"k":"v"}` + "\n", `[-0.0,1e5,true,null]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, data); err != nil {
			t.Fatal(err)
		}
		for _, src := range [][]byte{compact.Bytes(), append(compact.Bytes(), '\n'), data} {
			got, err := indentJSON(nil, src)
			if err != nil {
				t.Fatalf("%q: %v", src, err)
			}
			if want := stdIndent(t, src); !bytes.Equal(got, want) {
				t.Fatalf("%q:\ngot  %q\nwant %q", src, got, want)
			}
		}
	})
}

func BenchmarkJSONIndent(b *testing.B) {
	type row struct {
		Worker string  `json:"worker"`
		ID     string  `json:"instanceId"`
		Cost   float64 `json:"cost"`
		Terms  map[string]float64
		OK     bool `json:"eligible"`
	}
	rows := make([]row, 10000)
	for i := range rows {
		rows[i] = row{Worker: "scale-0-decode-zone-07-1234", ID: "18446744073709551615", Cost: float64(i) * 1.25, Terms: map[string]float64{"overlap": 3, "prefill": 12.5, "decode": 7}, OK: i%3 == 0}
	}
	src, _ := json.Marshal(rows)
	dst := make([]byte, 0, 2*len(src))
	b.Run("indentJSON", func(b *testing.B) {
		b.SetBytes(int64(len(src)))
		for b.Loop() {
			if _, err := indentJSON(dst[:0], src); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json.Indent", func(b *testing.B) {
		b.SetBytes(int64(len(src)))
		buf := bytes.NewBuffer(dst[:0])
		for b.Loop() {
			buf.Reset()
			if err := json.Indent(buf, src, "", "  "); err != nil {
				b.Fatal(err)
			}
		}
	})
}
