package termsafe

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
	"sigs.k8s.io/yaml"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/hermetic"
)

// hostile is every kind of text that must not reach a terminal raw.
const hostile = "a\x1b]0;title\x07b\x1b]52;c;cHduZWQ=\x07c\x1b[2Jd\u009b31me\u202ef\u2066g\u200bh\ufeffi\x7fj\rk\x08l\u2028m\U000e0041n\ufdd0o"

func TestEscape(t *testing.T) {
	for _, tc := range []struct{ in, want, text string }{
		{"plain zone-a", "plain zone-a", "plain zone-a"},
		{"ünïcödé ✓ 東京", "ünïcödé ✓ 東京", "ünïcödé ✓ 東京"},
		{"\x1b[31mred", `\x1b[31mred`, `\x1b[31mred`},
		{"line\nnext\ttab", `line\x0anext\x09tab`, "line\nnext\ttab"},
		{"cr\rover", `cr\x0dover`, `cr\x0dover`},
		{"del\x7f", `del\x7f`, `del\x7f`},
		{"c1\u009b2J", `c1\u009b2J`, `c1\u009b2J`},
		{"bidi\u202eevil\u2069", `bidi\u202eevil\u2069`, `bidi\u202eevil\u2069`},
		{"zw\u200b\u200d\ufeff", `zw\u200b\u200d\ufeff`, `zw\u200b\u200d\ufeff`},
		{"tag\U000e0041", `tag\U000e0041`, `tag\U000e0041`},
		{"bad\xffutf8\xc3", `bad\xffutf8\xc3`, `bad\xffutf8\xc3`},
		{"marker\ufdd0", `marker\ufdd0`, `marker\ufdd0`},
	} {
		if got := Escape(tc.in); got != tc.want {
			t.Errorf("Escape(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if got := EscapeText(tc.in); got != tc.text {
			t.Errorf("EscapeText(%q) = %q, want %q", tc.in, got, tc.text)
		}
		if Safe(tc.in) != (tc.in == tc.want) {
			t.Errorf("Safe(%q) = %v", tc.in, Safe(tc.in))
		}
	}
	if got := Escape(hostile); !printable(got) {
		t.Errorf("Escape left something unsafe: %q", got)
	}
}

// printable reports whether s is free of everything a terminal interprets:
// checked here independently of Unsafe.
func printable(s string) bool {
	for _, r := range s {
		switch {
		case r < 0x20 && r != '\n', r == 0x7f, r >= 0x80 && r <= 0x9f,
			r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r >= 0x200b && r <= 0x200f,
			r == 0xfeff, r == 0x2028, r == 0x2029, r >= 0xfdd0 && r <= 0xfdef, r >= 0xe0000 && r <= 0xe007f,
			r == utf8.RuneError:
			return false
		}
	}
	return true
}

func TestWriterColourAndForgery(t *testing.T) {
	for _, color := range []bool{true, false} {
		var out bytes.Buffer
		w := NewWriter(&out, func() bool { return color })
		forged := "\ufdd0" + "000000000000" + "31\ufdd1" // a marker without the secret
		text := SGR("31", "red") + " " + hostile + " " + forged + " " + SGR("1;33", "warn") + "\n"
		if _, err := w.Write([]byte(text)); err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		got := out.String()
		plain := strings.NewReplacer("\x1b[31m", "", "\x1b[0m", "", "\x1b[1;33m", "").Replace(got)
		if !printable(plain) {
			t.Errorf("color %v: unsafe output %q", color, got)
		}
		if color != strings.Contains(got, "\x1b[31mred\x1b[0m") || color != strings.Contains(got, "\x1b[1;33mwarn\x1b[0m") {
			t.Errorf("color %v: plugin colour wrong in %q", color, got)
		}
		if !strings.Contains(got, `\x1b]0;title\x07`) || !strings.Contains(got, `\ufdd0`+"000000000000"+`31\ufdd1`) {
			t.Errorf("color %v: hostile text not shown escaped: %q", color, got)
		}
		if !strings.HasSuffix(got, "warn"+map[bool]string{true: "\x1b[0m"}[color]+"\n") {
			t.Errorf("color %v: newline lost: %q", color, got)
		}
	}
}

// TestWriterSplitWrites feeds a text byte by byte: split runes and split
// markers come out as when written whole.
func TestWriterSplitWrites(t *testing.T) {
	text := []byte("x " + SGR("32", "ok ✓ 東") + " " + hostile + " ü\n")
	var whole, split bytes.Buffer
	w1 := NewWriter(&whole, func() bool { return true })
	_, _ = w1.Write(text)
	_ = w1.Flush()
	w2 := NewWriter(&split, func() bool { return true })
	for i := range text {
		if _, err := w2.Write(text[i : i+1]); err != nil {
			t.Fatal(err)
		}
	}
	_ = w2.Flush()
	if whole.String() != split.String() {
		t.Errorf("split writes differ:\n%q\n%q", whole.String(), split.String())
	}
	// A trailing incomplete rune is escaped at Flush, not lost.
	var tail bytes.Buffer
	w3 := NewWriter(&tail, nil)
	_, _ = w3.Write([]byte("end\xe2\x80"))
	if tail.String() != "end" {
		t.Errorf("before flush %q", tail.String())
	}
	_ = w3.Flush()
	if tail.String() != `end\xe2\x80` {
		t.Errorf("after flush %q", tail.String())
	}
}

func TestJSONExactAndSafe(t *testing.T) {
	v := map[string]any{"zone" + hostile: []any{hostile, "plain", "emoji 🎉", "tag \U000e0041"}}
	doc, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	safe := JSON(doc)
	if !printable(string(safe)) {
		t.Errorf("unsafe JSON: %q", safe)
	}
	var back any
	if err := json.Unmarshal(safe, &back); err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(back)
	if !bytes.Equal(a, doc) {
		t.Errorf("JSON changed:\n%s\n%s", a, doc)
	}
	plain := []byte(`{"a":"b"}`)
	if got := JSON(plain); &got[0] != &plain[0] {
		t.Error("a safe document was copied")
	}
}

func TestYAMLExactAndSafe(t *testing.T) {
	v := map[string]any{"zone" + hostile: []any{hostile, "plain", "multi\nline", `quote " and \ backslash` + "\u202e", "emoji 🎉"}, "n": 3}
	doc, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	prepared, restore, err := YAMLStrings(doc)
	if err != nil {
		t.Fatal(err)
	}
	y, err := yaml.JSONToYAML(prepared)
	if err != nil {
		t.Fatal(err)
	}
	y = restore(y)
	if !printable(string(y)) {
		t.Errorf("unsafe YAML:\n%s", y)
	}
	back, err := yaml.YAMLToJSON(y)
	if err != nil {
		t.Fatalf("%v\n%s", err, y)
	}
	var a, b any
	_ = json.Unmarshal(back, &a)
	_ = json.Unmarshal(doc, &b)
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if !bytes.Equal(ja, jb) {
		t.Errorf("YAML changed:\n%s\n%s\n%s", ja, jb, y)
	}
}

func TestView(t *testing.T) {
	allowed := CollectSGR("\x1b[1;38;5;75mtitle\x1b[0m")
	frame := "\x1b[1;38;5;75mtitle\x1b[0m " + hostile + " \x1b[8mhidden\x1b[0m\nnext"
	got, changed := View(frame, allowed)
	if !changed {
		t.Fatal("not changed")
	}
	plain := strings.NewReplacer("\x1b[1;38;5;75m", "", "\x1b[0m", "").Replace(got)
	if !printable(plain) {
		t.Errorf("unsafe frame %q", got)
	}
	if !strings.Contains(got, `\x1b[8mhidden`) || !strings.Contains(got, "\x1b[1;38;5;75mtitle") || !strings.Contains(got, "\nnext") {
		t.Errorf("frame %q", got)
	}
	if same, changed := View("\x1b[0mok\n", allowed); changed || same != "\x1b[0mok\n" {
		t.Errorf("safe frame changed: %q", same)
	}
}

func TestTruncateAndWidth(t *testing.T) {
	for _, tc := range []struct {
		in    string
		width int
		want  string
	}{
		{"short", 10, "short"},
		{"qwen3-32b-0-vllmdecodeworker-7d9f8c6b5-x2x9z", 20, "qwen3-32b-0-v…-x2x9z"},
		{"東京東京東京東京", 9, "東京東…京"},
		{"abc", 1, "…"},
	} {
		got := Truncate(tc.in, tc.width)
		if got != tc.want {
			t.Errorf("Truncate(%q, %d) = %q, want %q", tc.in, tc.width, got, tc.want)
		}
		if Width(got) > tc.width {
			t.Errorf("Truncate(%q, %d) is %d wide", tc.in, tc.width, Width(got))
		}
	}
	if w := Width(SGR("31", "東京") + "ab"); w != 6 {
		t.Errorf("Width with markers = %d, want 6", w)
	}
	if got := EscapeMarked(SGR("31", "a\x1bb") + "\u202e"); Strip(got) != `a\x1bb\u202e` || !strings.Contains(got, "\ufdd0") {
		t.Errorf("EscapeMarked %q", got)
	}
}

func FuzzWriter(f *testing.F) {
	f.Add([]byte(hostile), 3)
	f.Add([]byte(SGR("1", "bold")+"\xff\xfe"), 1)
	f.Fuzz(func(t *testing.T, data []byte, chunk int) {
		if chunk <= 0 || chunk > 64 {
			chunk = 7
		}
		var out bytes.Buffer
		w := NewWriter(&out, func() bool { return true })
		for i := 0; i < len(data); i += chunk {
			_, _ = w.Write(data[i:min(len(data), i+chunk)])
		}
		_ = w.Flush()
		if s := out.String(); !printable(strings.NewReplacer("\x1b[0m", "", "\t", "").Replace(s)) && !strings.Contains(string(data), secret) {
			t.Errorf("unsafe output %q from %q", s, data)
		}
	})
}

// BenchmarkWriterTable is the boundary's cost on a typical wide table line by
// line (the safe fast path) and on hostile text.
func BenchmarkWriter(b *testing.B) {
	line := []byte("us-east-1a   1/1       3/3      2              6             0.33   7%            " + SGR("31", "✗ PrefillDomainWithoutDecode") + "\n")
	for _, tc := range []struct {
		name string
		data []byte
	}{{"table-line", line}, {"hostile", []byte(strings.Repeat(hostile, 4) + "\n")}} {
		b.Run(tc.name, func(b *testing.B) {
			w := NewWriter(&bytes.Buffer{}, func() bool { return true })
			b.SetBytes(int64(len(tc.data)))
			for b.Loop() {
				w.w.(*bytes.Buffer).Reset()
				_, _ = w.Write(tc.data)
			}
		})
	}
}

// BenchmarkView is the dashboard's per-frame pass over a 160×48 frame.
func BenchmarkView(b *testing.B) {
	allowed := CollectSGR("\x1b[1;38;5;75mx\x1b[0m")
	row := "\x1b[1;38;5;75m" + strings.Repeat("qwen3-32b-0-decode-us-east-1a-0   ", 4) + "\x1b[0m" + strings.Repeat(" ", 24) + "\n"
	frame := strings.Repeat(row, 48)
	b.SetBytes(int64(len(frame)))
	for b.Loop() {
		_, _ = View(frame, allowed)
	}
}

// truncateMeasured is Truncate without the plain-ASCII shortcut: every cut
// measured by ansi.
func truncateMeasured(s string, width int) string {
	if width <= 0 {
		return ""
	}
	if ansi.StringWidth(s) <= width {
		return s
	}
	if width == 1 {
		return "…"
	}
	tail := (width - 1) / 3
	head := width - 1 - tail
	return ansi.Truncate(s, head, "") + "…" + ansi.TruncateLeft(s, ansi.StringWidth(s)-tail, "")
}

// TestTruncatePlainASCII: the plain-ASCII shortcut cuts exactly as the
// measured cut does, at every width, on printable ASCII of every length.
func TestTruncatePlainASCII(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 1))
	for range hermetic.Size(200, 2000, 20000) {
		b := make([]byte, rng.IntN(300))
		for i := range b {
			b[i] = byte(0x20 + rng.IntN(0x7f-0x20))
		}
		s := string(b)
		for _, w := range []int{0, 1, 2, 3, 4, rng.IntN(310), len(s) - 1, len(s), len(s) + 1} {
			if got, want := Truncate(s, w), truncateMeasured(s, w); got != want {
				t.Fatalf("Truncate(%q, %d) = %q, measured %q", s, w, got, want)
			}
		}
	}
	for _, s := range []string{"", "a", "\x7f", "é", "a\tb", "東"} {
		if PlainASCII(s) != (s == "" || s == "a") {
			t.Errorf("PlainASCII(%q) = %v", s, PlainASCII(s))
		}
	}
}
