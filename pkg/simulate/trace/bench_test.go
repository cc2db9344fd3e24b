package trace

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkMooncakeRead reads the 200-request conversation excerpt (mean
// input 10,000-odd tokens) end to end and reports requests and tokens per
// second.
func BenchmarkMooncakeRead(b *testing.B) {
	raw, err := os.ReadFile(filepath.Join("testdata", "mooncake_conversation_head200.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(raw)))
	var requests, tokens int
	for b.Loop() {
		r, err := Open(bytes.NewReader(raw), Mooncake, Options{})
		if err != nil {
			b.Fatal(err)
		}
		for {
			req, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			requests++
			tokens += len(req.Tokens)
		}
	}
	s := b.Elapsed().Seconds()
	b.ReportMetric(float64(requests)/s, "requests/s")
	b.ReportMetric(float64(tokens)/s, "tokens/s")
}

// BenchmarkSynthetic makes requests of 4,000 tokens, half from 8 shared
// prefixes.
func BenchmarkSynthetic(b *testing.B) {
	var requests, tokens int
	for b.Loop() {
		r, err := Synthetic("rate=100,isl=4000,osl=100,prefix-share=0.5,requests=100", 1)
		if err != nil {
			b.Fatal(err)
		}
		for {
			req, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			requests++
			tokens += len(req.Tokens)
		}
	}
	s := b.Elapsed().Seconds()
	b.ReportMetric(float64(requests)/s, "requests/s")
	b.ReportMetric(float64(tokens)/s, "tokens/s")
}
