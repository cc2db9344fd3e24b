package explain

import (
	"bytes"
	"encoding/json"
	"io"
	"testing"
	"time"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/upstreamscale"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/build"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/capture"
)

// BenchmarkExplainUpstream times each phase of `explain-route --from-file` on
// the upstream-shaped capture (internal/testutil/upstreamscale: Dynamo's vLLM
// disaggregated-router example scaled to 10,000 workers with their
// DynamoWorkerMetadata, 2,000 nodes, 10 zones; generated here, never
// committed) and a 4,096-token prompt, as hack/capture-bench.sh runs the
// binary on it. The capture has no KV events: every worker ties on overlap,
// the shape that makes the prefill table widest.
func BenchmarkExplainUpstream(b *testing.B) {
	data := upstreamscale.Capture(upstreamscale.Options{})
	read := func(b *testing.B) {
		if _, ok := capture.ReadStreaming(bytes.NewReader(data), int64(len(data)), "upstream.json"); !ok {
			b.Fatal("the streaming reader gave up on the upstream-shaped capture")
		}
	}
	bundle, ok := capture.ReadStreaming(bytes.NewReader(data), int64(len(data)), "upstream.json")
	if !ok {
		b.Fatal("the streaming reader gave up on the upstream-shaped capture")
	}
	snap, err := build.Build(bundle)
	if err != nil {
		b.Fatal(err)
	}
	dep := &snap.Deployments[0]
	ix, _ := IndexEvents(BundleEventSets(bundle, dep), 16)
	in := Input{Snapshot: snap, Deployment: dep, Request: Request{Tokens: upstreamscale.Prompt(4096)}, KV: IndexCache(ix, "capture", time.Time{})}
	b.Run("read-capture", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			read(b)
		}
	})
	b.Run("build-snapshot", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := build.Build(bundle); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("explain", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Explain(in); err != nil {
				b.Fatal(err)
			}
		}
	})
	x, err := Explain(in)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := json.NewEncoder(io.Discard).Encode(x); err != nil {
				b.Fatal(err)
			}
		}
	})
}
