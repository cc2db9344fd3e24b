package analysis

import (
	"bytes"
	"runtime"
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/upstreamscale"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/build"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/capture"
)

// BenchmarkUpstreamCapture reads, builds and analyses the upstream-shaped
// capture (internal/testutil/upstreamscale: Dynamo's vLLM disaggregated-router
// example scaled to 10,000 workers with their DynamoWorkerMetadata, 2,000
// nodes, 10 zones, every object as an API server returns it; 69.5 MB of JSON,
// generated here, never committed): what topology --from-file does, phase by
// phase. read-stream is the streaming reader the commands use on a file,
// read-whole the reader of a capture held in memory; the retained sub-benchmark
// reports what stays live (MB after a collection) once the capture is read and
// once it is built.
func BenchmarkUpstreamCapture(b *testing.B) {
	data := upstreamscale.Capture(upstreamscale.Options{})
	read := func(b *testing.B) *raw.Bundle {
		bundle, ok := capture.ReadStreaming(bytes.NewReader(data), int64(len(data)), "upstream.json")
		if !ok {
			b.Fatal("the streaming reader gave up on the upstream-shaped capture")
		}
		return bundle
	}
	b.Run("read-stream", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			read(b)
		}
	})
	b.Run("read-whole", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := capture.Parse(data, "upstream.json"); err != nil {
				b.Fatal(err)
			}
		}
	})
	bundle := read(b)
	b.Run("build", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			s, err := build.Build(bundle)
			if err != nil {
				b.Fatal(err)
			}
			if n := len(s.Deployments[0].Workers); n != 10_000 {
				b.Fatalf("%d workers", n)
			}
		}
	})
	snap, err := build.Build(bundle)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("analyze", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			Analyze(snap, AnalyzeOptions{})
		}
	})
	b.Run("retained", func(b *testing.B) {
		live := func() float64 {
			runtime.GC()
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			return float64(m.HeapAlloc) / 1e6
		}
		for b.Loop() {
			bundle, snap = nil, nil
			base := live()
			bundle = read(b)
			read := live() - base
			snap, _ = build.Build(bundle)
			built := live() - base
			b.ReportMetric(read, "bundle-MB")
			b.ReportMetric(built, "bundle+snapshot-MB")
		}
	})
}
