package tokenizer

import (
	"os"
	"strings"
	"testing"
)

// benchDocs returns the documents of the corpus named by KDYN_BENCH_CORPUS
// (written by hack/tokenizer/bench-corpus.mjs, documents separated by
// "\n\f\n"), or the golden corpus of the tokenizer when it is unset.
func benchDocs(b *testing.B, name string) []string {
	if p := os.Getenv("KDYN_BENCH_CORPUS"); p != "" {
		data, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		return strings.Split(string(data), "\n\f\n")
	}
	var docs []string
	g := readGoldenB(b, name)
	for _, c := range g.Cases {
		docs = append(docs, c.Text)
	}
	return docs
}

// BenchmarkEncode measures encoding throughput (MB/s of UTF-8 input) in the
// steady state, with a warm pre-token cache. hack/tokenizer/bench.sh runs it
// next to the reference implementation.
func BenchmarkEncode(b *testing.B) {
	for _, name := range append([]string{"toy_bytelevel"}, realTokenizers...) {
		b.Run(name, func(b *testing.B) {
			tk := loadNamed(b, name)
			docs := benchDocs(b, name)
			n := 0
			for _, d := range docs {
				n += len(d)
			}
			b.SetBytes(int64(n))
			b.ReportAllocs()
			for b.Loop() {
				for _, d := range docs {
					if _, err := tk.Encode(d, false); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// BenchmarkLoad measures parsing a tokenizer.json.
func BenchmarkLoad(b *testing.B) {
	for _, name := range []string{"qwen3", "llama3"} {
		b.Run(name, func(b *testing.B) {
			data, err := os.ReadFile(tokenizerFile(b, name))
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := Parse(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
