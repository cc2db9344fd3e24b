package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
)

// scaleMain writes a large capture for the explain-route benchmark
// (hack/explain-bench.sh): `go run ./hack/gen-examples -scale -out DIR
// -workers 10000 -blocks 1000000 -tokens 32768`. The capture is JSON (a List)
// and the prompt a token file; both are deterministic.
//
// Workers are spread over 10 zones, half prefill and half decode, with a
// required zone policy. KV contents: -holders workers (every prefill worker
// first) each store a chain of -blocks/-holders blocks whose first p blocks
// are the prompt's (p varies per holder, so overlaps differ) and the rest
// their own.
func scaleMain(args []string) error {
	fs := flag.NewFlagSet("gen-examples -scale", flag.ContinueOnError)
	out := fs.String("out", "", "output directory")
	workers := fs.Int("workers", 10000, "worker pods (half prefill, half decode)")
	blocks := fs.Int("blocks", 1000000, "KV blocks stored in total")
	holders := fs.Int("holders", 1000, "workers holding KV blocks")
	tokens := fs.Int("tokens", 32768, "prompt tokens")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" || *workers < 20 || *holders < 1 || *holders > *workers || *blocks < *holders || *tokens < 16 {
		return errors.New("usage: -out DIR [-workers N>=20] [-blocks N] [-holders N<=workers] [-tokens N>=16]")
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	d := deployment{name: "scale", ns: "bench", dynNS: "bench-scale", apiVersion: "nvidia.com/v1beta1",
		labelKey: "topology.kubernetes.io/zone", domain: "zone", enforcement: "required", discovery: "kubernetes",
		model: "Qwen/Qwen3-32B", nativeTypes: true, prefillComp: "Prefill", decodeComp: "Decode",
		frontendArgs: []string{"python3", "-m", "dynamo.frontend", "--router-mode", "kv"}}
	counts := map[string][2]int{}
	per := *workers / 10
	for z := 0; z < 10; z++ {
		counts[fmt.Sprintf("zone-%02d", z)] = [2]int{per / 2, per - per/2}
	}
	d.workers = zoneWorkers(d, counts, 8)
	for i := range d.workers {
		// Spread the pods over nodes of 8 GPUs each.
		d.workers[i].node = fmt.Sprintf("gpu-%s-%04d", d.workers[i].zone, i/8)
		d.workers[i].ip = fmt.Sprintf("10.%d.%d.%d", 64+i/65536, (i/256)%256, i%256)
	}

	prompt := make([]uint32, *tokens)
	x := uint64(0xbe4c4)
	for i := range prompt {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		prompt[i] = uint32(1000 + x%150000)
	}
	pb, err := routecore.ComputeBlocks(prompt, 16, routecore.HashOptions{})
	if err != nil {
		return err
	}
	items := d.objects()
	items = append(items, scaleKvEvents(d, pb, *holders, *blocks/(*holders)))
	list := obj{"apiVersion": "v1", "kind": "List", "metadata": obj{"annotations": obj{
		"kubectl-dynamo.io/collected-at": collectedAt, "kubectl-dynamo.io/context": "scale-bench"}}, "items": items}
	f, err := os.Create(filepath.Join(*out, "capture.json"))
	if err != nil {
		return err
	}
	if err := json.NewEncoder(f).Encode(list); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	var tb strings.Builder
	for i, t := range prompt {
		if i > 0 {
			tb.WriteByte(' ')
		}
		tb.WriteString(strconv.FormatUint(uint64(t), 10))
	}
	tb.WriteByte('\n')
	if err := os.WriteFile(filepath.Join(*out, "prompt.tokens"), []byte(tb.String()), 0o644); err != nil {
		return err
	}
	fmt.Printf("wrote %s/capture.json (%d workers, %d KV blocks on %d holders) and prompt.tokens (%d tokens)\n", *out, len(d.workers), (*blocks / *holders)**holders, *holders, *tokens)
	return nil
}

// scaleKvEvents makes each holder store a chain of n blocks: the prompt's first
// p blocks (p differs per holder), then blocks of its own.
func scaleKvEvents(d deployment, prompt []routecore.Block, holders, n int) obj {
	order := make([]worker, 0, len(d.workers))
	for _, w := range d.workers {
		if w.role == "prefill" {
			order = append(order, w)
		}
	}
	for _, w := range d.workers {
		if w.role == "decode" {
			order = append(order, w)
		}
	}
	events := make([]obj, 0, holders)
	for h := 0; h < holders; h++ {
		w := order[h]
		p := (h * 131) % min(n, len(prompt))
		bl := make([]obj, 0, n)
		for i := 0; i < n; i++ {
			var local, ext uint64
			if i < p {
				local, ext = uint64(prompt[i].LocalHash), uint64(prompt[i].SequenceHash)^0xa5a5a5a5a5a5a5a5
			} else {
				local = splitmix(w.id ^ uint64(i)*0x9E3779B97F4A7C15)
				ext = splitmix(local ^ w.id)
			}
			bl = append(bl, obj{"block_hash": json.Number(strconv.FormatUint(ext, 10)), "tokens_hash": json.Number(strconv.FormatUint(local, 10))})
		}
		events = append(events, obj{"worker_id": json.Number(strconv.FormatUint(w.id, 10)), "storage_tier": "device",
			"event": obj{"event_id": 1, "dp_rank": 0, "data": obj{"stored": obj{"parent_hash": nil, "blocks": bl}}}})
	}
	return obj{"apiVersion": "kubectl-dynamo.io/v1alpha1", "kind": "KvEvents",
		"metadata": obj{"name": d.name + "-kv", "namespace": d.ns}, "deployment": d.name, "blockSize": 16,
		"source": "generated", "events": events}
}

// splitmix is SplitMix64's finaliser: distinct, well-spread fake hashes.
func splitmix(x uint64) uint64 {
	x += 0x9E3779B97F4A7C15
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9
	x = (x ^ (x >> 27)) * 0x94D049BB133111EB
	return x ^ (x >> 31)
}
