package jsonscan

import (
	"fmt"
	"strings"
	"testing"
	"unsafe"
)

// TestJSDecoderInternsStrings: repeated keys and short values share one
// string, long and escaped ones are decoded as usual, and the table is bounded.
func TestJSDecoderInternsStrings(t *testing.T) {
	data := []byte(`[{"name":"Running","uid":"0123456789abcdef0123456789abcdef-x"},{"name":"Running","uid":"0123456789abcdef0123456789abcdef-x","e":"a\nb"}]`)
	d := Decoder{B: data}
	v, _ := d.Value(0)
	a := v.([]any)
	m0, m1 := a[0].(map[string]any), a[1].(map[string]any)
	key := func(m map[string]any, k string) string {
		for kk := range m {
			if kk == k {
				return kk
			}
		}
		t.Fatalf("no key %q", k)
		return ""
	}
	if unsafe.StringData(key(m0, "name")) != unsafe.StringData(key(m1, "name")) {
		t.Error("the key \"name\" was not shared")
	}
	if unsafe.StringData(m0["name"].(string)) != unsafe.StringData(m1["name"].(string)) {
		t.Error("the short value \"Running\" was not shared")
	}
	if unsafe.StringData(m0["uid"].(string)) == unsafe.StringData(m1["uid"].(string)) {
		t.Error("a value longer than jsInternMaxLen was interned")
	}
	if m1["e"] != "a\nb" {
		t.Errorf("escaped value = %q", m1["e"])
	}
	var sb strings.Builder
	sb.WriteString("[")
	for i := range jsInternMaxCount + 100 {
		if i > 0 {
			sb.WriteString(",")
		}
		fmt.Fprintf(&sb, `"v%d"`, i)
	}
	sb.WriteString("]")
	d = Decoder{B: []byte(sb.String())}
	v, _ = d.Value(0)
	if got := v.([]any); len(got) != jsInternMaxCount+100 || got[len(got)-1] != fmt.Sprintf("v%d", jsInternMaxCount+99) {
		t.Fatalf("decoded %d values, last %v", len(got), got[len(got)-1])
	}
	if len(d.strs) > jsInternMaxCount {
		t.Errorf("%d interned strings, bound %d", len(d.strs), jsInternMaxCount)
	}
}

func TestJSDigits(t *testing.T) {
	for _, s := range []string{"", "x", "0", "12345678", "123456789", "1234567/", "1234567:", "12345678901234567890,", "9999999999999999999999999a", "0123456789012345\x00", "12345678\xb0", "1234567\x39\x3a"} {
		want := 0
		for want < len(s) && s[want] >= '0' && s[want] <= '9' {
			want++
		}
		if got := jsDigits([]byte(s), 0); got != want {
			t.Errorf("jsDigits(%q) = %d, want %d", s, got, want)
		}
	}
	// Every byte value in every position of an 8-byte word.
	for pos := range 8 {
		for c := range 256 {
			b := []byte("1234567890123456")
			b[pos] = byte(c)
			want := pos
			if c >= '0' && c <= '9' {
				want = len(b)
			}
			if got := jsDigits(b, 0); got != want {
				t.Fatalf("jsDigits with byte %#x at %d = %d, want %d", c, pos, got, want)
			}
		}
	}
}
