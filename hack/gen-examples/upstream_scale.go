package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/upstreamscale"
)

// upstreamScaleMain writes the upstream-shaped capture of the memory and
// speed benchmarks (docs/performance.md, "Reading and building"): `go run
// ./hack/gen-examples -upstream-scale -out DIR [-workers 10000 -nodes 2000
// -zones 10]`. DIR/capture.json is Dynamo's vLLM disaggregated-router example
// scaled up, every object as an API server returns it
// (internal/testutil/upstreamscale); DIR/prompt.tokens is a 4,096-token
// prompt for explain-route. Both are deterministic.
func upstreamScaleMain(args []string) error {
	fs := flag.NewFlagSet("gen-examples -upstream-scale", flag.ContinueOnError)
	out := fs.String("out", "", "output directory")
	workers := fs.Int("workers", 10000, "worker pods (half prefill, half decode), each with its DynamoWorkerMetadata")
	nodes := fs.Int("nodes", 2000, "GPU nodes")
	zones := fs.Int("zones", 10, "zones")
	tokens := fs.Int("tokens", 4096, "prompt tokens")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" || *workers < 2 || *nodes < 1 || *zones < 1 || *zones > 30 || *tokens < 1 {
		return errors.New("usage: -out DIR [-workers N>=2] [-nodes N>=1] [-zones 1..30] [-tokens N>=1]")
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	data := upstreamscale.Capture(upstreamscale.Options{Workers: *workers, Nodes: *nodes, Zones: *zones})
	if err := os.WriteFile(filepath.Join(*out, "capture.json"), data, 0o644); err != nil {
		return err
	}
	var tb strings.Builder
	for i, t := range upstreamscale.Prompt(*tokens) {
		if i > 0 {
			tb.WriteByte(' ')
		}
		tb.WriteString(strconv.FormatUint(uint64(t), 10))
	}
	tb.WriteByte('\n')
	if err := os.WriteFile(filepath.Join(*out, "prompt.tokens"), []byte(tb.String()), 0o644); err != nil {
		return err
	}
	fmt.Printf("wrote %s/capture.json (%d workers, %d nodes, %d zones; %.1f MB) and prompt.tokens (%d tokens)\n",
		*out, *workers, *nodes, *zones, float64(len(data))/1e6, *tokens)
	return nil
}
