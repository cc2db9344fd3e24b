package tokenizer

import (
	"errors"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"golang.org/x/text/unicode/norm"
)

// build makes a tokenizer from a JSON template with a tiny vocabulary.
func build(t *testing.T, js string) *Tokenizer {
	t.Helper()
	tk, err := Parse([]byte(js))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return tk
}

func TestSplitBehaviors(t *testing.T) {
	// The expectations are those of the Rust crate's split.rs tests: the
	// pattern \w+|[^\w\s]+ with invert=true.
	tests := []struct {
		behavior behavior
		want     []string
	}{
		{removed, []string{"How", "are", "you", "doing", "?"}},
		{isolated, []string{"How", " ", "are", " ", "you", " ", "doing", "?"}},
		{mergedWithPrevious, []string{"How ", "are ", "you ", "doing", "?"}},
		{mergedWithNext, []string{"How", " are", " you", " doing", "?"}},
		{contiguous, []string{"How", " ", "are", " ", "you", " ", "doing?"}},
	}
	re, err := compileRegex(`\w+|[^\w\s]+`)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		sp := &splitPre{m: regexMatcher{re: re}, behavior: tc.behavior, invert: true}
		var buf [][2]int
		got := sp.split([]piece{{s: "How are you doing?"}}, nil, &buf)
		var strs []string
		for _, p := range got {
			strs = append(strs, p.s)
		}
		if !slices.Equal(strs, tc.want) {
			t.Errorf("behavior %d: got %q, want %q", tc.behavior, strs, tc.want)
		}
	}
}

func TestScannersMatchRegexp2(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	inputs := []string{"", "a", " ", "  x", "x  ", "\n \n", " \r\n\r\n x", "'sa 'S 'Ll", "a.b", " .", " 1", "1234567", "\t\tword", "..\n\n", "😀😀 😀"}
	for range 3000 {
		inputs = append(inputs, randomText(r))
	}
	for _, pat := range []string{patternGPT2, patternLlama3, patternQwen2} {
		re, err := compileRegex(pat)
		if err != nil {
			t.Fatal(err)
		}
		sc := scanMatcher{scan: knownScanner(pat)}
		rx := regexMatcher{re: re}
		for _, in := range inputs {
			got, want := sc.matches(in, nil), rx.matches(in, nil)
			if !slices.Equal(got, want) {
				t.Fatalf("pattern %q on %q:\n scanner %v\n regexp2 %v", pat, in, got, want)
			}
		}
	}
}

func TestMergeHeapMatchesLinear(t *testing.T) {
	for _, name := range []string{"toy_bytelevel", "toy_sentencepiece", "qwen3"} {
		t.Run(name, func(t *testing.T) {
			tk := loadNamed(t, name)
			m := tk.model
			r := rand.New(rand.NewPCG(3, 4))
			words := []string{"aaaaaaaaaaaaaaaaaaaaaaaa", "the the the", "hello world"}
			for range 300 {
				words = append(words, strings.Repeat(randomText(r), 1+r.IntN(8)))
			}
			for _, w := range words {
				var ids []uint32
				if m.raw {
					for i := 0; i < len(w); i++ {
						ids = append(ids, m.byteTok[w[i]])
					}
				} else {
					ids = m.initialSymbols(w, nil)
				}
				lin := m.mergeLinear(slices.Clone(ids[:min(len(ids), linearMergeLimit)]))
				heap := m.mergeHeap(slices.Clone(ids[:min(len(ids), linearMergeLimit)]))
				if len(ids) >= 2 && !slices.Equal(lin, heap) {
					t.Fatalf("%q: linear %v, heap %v", w, lin, heap)
				}
			}
		})
	}
}

const spTemplate = `{
 "added_tokens": [
  {"id": 0, "content": "<unk>", "special": true, "normalized": false},
  {"id": 1, "content": "<s>", "special": true, "normalized": false},
  {"id": 9, "content": "[M]", "special": false, "normalized": false, "single_word": SINGLE, "lstrip": LSTRIP, "rstrip": RSTRIP}
 ],
 "normalizer": null,
 "pre_tokenizer": PRE,
 "post_processor": {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
   "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}},
 "decoder": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": true},
 "model": {"type": "BPE", "unk_token": "<unk>", "fuse_unk": FUSE, "byte_fallback": false,
   "vocab": {"<unk>": 0, "<s>": 1, "▁": 2, "a": 3, "b": 4, "▁a": 5, "ab": 6, "▁ab": 7, "c": 8, "[M]": 9},
   "merges": [["▁", "a"], ["a", "b"], ["▁a", "b"]]}
}`

func spTok(t *testing.T, pre, fuse, single, lstrip, rstrip string) *Tokenizer {
	r := strings.NewReplacer("PRE", pre, "FUSE", fuse, "SINGLE", single, "LSTRIP", lstrip, "RSTRIP", rstrip)
	return build(t, r.Replace(spTemplate))
}

func TestEncodeSmall(t *testing.T) {
	metaAlways := `{"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": true}`
	metaFirst := `{"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": false}`
	metaNever := `{"type": "Metaspace", "replacement": "▁", "add_prefix_space": false}`
	tests := []struct {
		name                      string
		pre, fuse, sw, lstr, rstr string
		text                      string
		special                   bool
		want                      []uint32
	}{
		{"metaspace split", metaAlways, "false", "false", "false", "false", "ab ab", false, []uint32{7, 7}},
		{"bos", metaAlways, "false", "false", "false", "false", "ab", true, []uint32{1, 7}},
		{"empty with bos", metaAlways, "false", "false", "false", "false", "", true, []uint32{1}},
		{"unk not fused", metaAlways, "false", "false", "false", "false", "axxb", false, []uint32{5, 0, 0, 4}},
		{"unk fused", metaAlways, "true", "false", "false", "false", "axxb", false, []uint32{5, 0, 4}},
		{"prepend first", metaFirst, "false", "false", "false", "false", "ab[M]ab", false, []uint32{7, 9, 6}},
		{"prepend always", metaAlways, "false", "false", "false", "false", "ab[M]ab", false, []uint32{7, 9, 7}},
		{"prepend never", metaNever, "false", "false", "false", "false", "ab", false, []uint32{6}},
		{"single word rejects", metaNever, "false", "true", "false", "false", "a[M]b", false, []uint32{3, 0, 0, 0, 4}},
		{"single word accepts", metaNever, "false", "true", "false", "false", "a [M] b", false, []uint32{3, 2, 9, 2, 4}},
		{"lstrip", metaNever, "false", "false", "true", "false", "a  [M] b", false, []uint32{3, 9, 2, 4}},
		{"rstrip", metaNever, "false", "false", "false", "true", "a  [M]  b", false, []uint32{3, 2, 2, 9, 4}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tk := spTok(t, tc.pre, tc.fuse, tc.sw, tc.lstr, tc.rstr)
			got, err := tk.Encode(tc.text, tc.special)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("Encode(%q) = %v, want %v", tc.text, got, tc.want)
			}
		})
	}
}

func TestDecode(t *testing.T) {
	tk := spTok(t, `{"type": "Metaspace"}`, "false", "false", "false", "false")
	tests := []struct {
		ids  []uint32
		skip bool
		want string
	}{
		{[]uint32{1, 7, 7}, false, "<s> ab ab"},
		{[]uint32{1, 7, 7}, true, "ab ab"},
		{[]uint32{2, 2, 3}, true, " a"}, // Rust drops the ▁ of the first token only
		{nil, false, ""},
	}
	for _, tc := range tests {
		got, err := tk.Decode(tc.ids, tc.skip)
		if err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("Decode(%v, %v) = %q, want %q", tc.ids, tc.skip, got, tc.want)
		}
	}
	if _, err := tk.Decode([]uint32{12345}, false); err == nil || !strings.Contains(err.Error(), "12345") {
		t.Errorf("Decode of an unknown id: err = %v, want an error naming the id", err)
	}
}

func TestDecoders(t *testing.T) {
	tests := []struct {
		name string
		dec  decoder
		in   []string
		want string
	}{
		{"byte fallback valid", sequenceDec{byteFallbackDec{}, fuseDec{}}, []string{"a", "<0xE4>", "<0xB8>", "<0xAD>", "b"}, "a中b"},
		{"byte fallback invalid", sequenceDec{byteFallbackDec{}, fuseDec{}}, []string{"<0xE4>", "<0xB8>", "x"}, "\uFFFD\uFFFDx"},
		{"byte level lossy", byteLevelDec{}, []string{"a", byteLevelEncode("\xe4\xb8"), "b"}, "a\uFFFDb"},
		{"strip", sequenceDec{fuseDec{}, stripDec{content: ' ', start: 1}}, []string{"  a", " b "}, " a b "},
		{"replace", replaceDec{m: literalMatcher{lit: "▁"}, content: " "}, []string{"▁a▁b"}, " a b"},
		{"bpe suffix", bpeDec{suffix: "</w>"}, []string{"a</w>", "b</w>"}, "a b"},
	}
	for _, tc := range tests {
		if got := strings.Join(tc.dec.decodeChain(tc.in), ""); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestLossyUTF8(t *testing.T) {
	tests := []struct{ in, want string }{
		{"abc", "abc"},
		{"a\xffb", "a\uFFFDb"},
		{"\xe4\xb8a", "\uFFFDa"},               // one maximal subpart
		{"\xe0\x80", "\uFFFD\uFFFD"},           // E0 80 is not a valid prefix
		{"\xf0\x9f\x98", "\uFFFD"},             // truncated 4-byte sequence
		{"\xed\xa0\x80", "\uFFFD\uFFFD\uFFFD"}, // surrogate
	}
	for _, tc := range tests {
		if got := lossyUTF8([]byte(tc.in)); got != tc.want {
			t.Errorf("lossyUTF8(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	toy, err := os.ReadFile("testdata/toy_bytelevel.json")
	if err != nil {
		t.Fatal(err)
	}
	base := string(toy)
	tests := []struct {
		name, old, new string
		wantPath       string
		unsupported    bool
	}{
		{"model type", `"type": "BPE"`, `"type": "Unigram"`, "model.type", true},
		{"normalizer", `"normalizer": {
  "type": "NFC"
 }`, `"normalizer": {"type": "Precompiled", "precompiled_charsmap": "x"}`, "normalizer.type", true},
		{"pre-tokenizer", `"type": "Split"`, `"type": "UnicodeScripts"`, "pre_tokenizer.pretokenizers[0].type", true},
		{"behavior", `"behavior": "Isolated"`, `"behavior": "Sideways"`, "pre_tokenizer.pretokenizers[0].behavior", true},
		{"unknown option", `"invert": false`, `"invert": false, "shiny": 1`, "pre_tokenizer.pretokenizers[0].shiny", true},
		{"regex syntax", `"Regex": "(?i:`, `"Regex": "\\p{^L}(?i:`, "pre_tokenizer.pretokenizers[0].pattern", true},
		{"truncation", `"truncation": null`, `"truncation": {"max_length": 5}`, "truncation", true},
		{"decoder", `"decoder": {
  "type": "ByteLevel"`, `"decoder": {
  "type": "CTC"`, "decoder.type", true},
		{"dropout", `"dropout": null`, `"dropout": 0.1`, "model.dropout", true},
		{"merge not in vocab", `"merges": [`, `"merges": [["zz", "q"], `, "model.merges[0]", false},
		{"bad option value", `"ignore_merges": true`, `"ignore_merges": "yes"`, "model.ignore_merges", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(base, tc.old) {
				t.Fatalf("fixture does not contain %q", tc.old)
			}
			_, err := Parse([]byte(strings.Replace(base, tc.old, tc.new, 1)))
			if err == nil {
				t.Fatal("Parse succeeded, want an error")
			}
			if !strings.Contains(err.Error(), tc.wantPath) {
				t.Errorf("error %q does not name %q", err, tc.wantPath)
			}
			var ue *UnsupportedError
			if errors.As(err, &ue) != tc.unsupported {
				t.Errorf("errors.As(*UnsupportedError) = %v, want %v (err %v)", !tc.unsupported, tc.unsupported, err)
			}
		})
	}
	if _, err := Parse([]byte("not json")); err == nil {
		t.Error("Parse(not json) succeeded")
	}
}

func TestInvalidUTF8(t *testing.T) {
	tk := loadNamed(t, "toy_bytelevel")
	if _, err := tk.Encode("a\xffb", false); !errors.Is(err, ErrInvalidUTF8) {
		t.Errorf("err = %v, want ErrInvalidUTF8", err)
	}
}

func TestRoundTrip(t *testing.T) {
	for _, name := range []string{"toy_bytelevel", "qwen3", "llama3"} {
		t.Run(name, func(t *testing.T) {
			tk := loadNamed(t, name)
			r := rand.New(rand.NewPCG(5, 6))
			for range 500 {
				s := randomText(r)
				if strings.Contains(s, "café") || strings.Contains(s, "<tool>") {
					continue // added tokens that do not survive byte-level decoding or strip spaces
				}
				ids, err := tk.Encode(s, false)
				if err != nil {
					t.Fatal(err)
				}
				got, err := tk.Decode(ids, false)
				if err != nil {
					t.Fatal(err)
				}
				want := s
				if name != "llama3" {
					want = normNFC(s)
				}
				if got != want {
					t.Fatalf("Decode(Encode(%q)) = %q", s, got)
				}
			}
		})
	}
}

func TestConcurrentEncode(t *testing.T) {
	tk := loadNamed(t, "toy_bytelevel")
	want, _ := tk.Encode("The quick brown fox, 12345 times!", true)
	done := make(chan []uint32)
	for range 8 {
		go func() {
			var got []uint32
			for range 200 {
				got, _ = tk.Encode("The quick brown fox, 12345 times!", true)
			}
			done <- got
		}()
	}
	for range 8 {
		if got := <-done; !slices.Equal(got, want) {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, p := range []string{"testdata/toy_bytelevel.json", "testdata/toy_sentencepiece.json"} {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}}`))
	f.Add([]byte(`{"model": {"vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]}, "pre_tokenizer": {"type": "Split", "pattern": {"Regex": "(?=a)"}, "behavior": "MergedWithNext", "invert": true}}`))
	f.Add([]byte(`{"model": {"vocab": {"a": 4294967295}, "merges": null}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tk, err := Parse(data)
		if err != nil {
			return
		}
		ids, err := tk.Encode("Hello wörld 123 <|bos|> 😀\n", true)
		if err == nil {
			_, _ = tk.Decode(ids, false)
		}
	})
}

func normNFC(s string) string { return unicodeNorm{normNFCForm}.normalize(s) }

var normNFCForm = norm.NFC

func TestPrefixSuffix(t *testing.T) {
	tests := []struct {
		name, model, text string
		want              []uint32
	}{
		{"continuing_subword_prefix", `"continuing_subword_prefix": "##",
		  "vocab": {"a": 0, "##b": 1, "##c": 2, "ab": 3, "abc": 4, "b": 5}, "merges": ["a ##b", "ab ##c"]`, "abc ab b", []uint32{4, 3, 5}},
		{"end_of_word_suffix", `"end_of_word_suffix": "</w>",
		  "vocab": {"a": 0, "b": 1, "b</w>": 2, "ab</w>": 3, "a</w>": 4}, "merges": ["a b</w>"]`, "ab ba", []uint32{3, 1, 4}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tk := build(t, `{"pre_tokenizer": {"type": "WhitespaceSplit"}, "model": {"type": "BPE", `+tc.model+`}}`)
			got, err := tk.Encode(tc.text, false)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("Encode(%q) = %v, want %v", tc.text, got, tc.want)
			}
		})
	}
}
