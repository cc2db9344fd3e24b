package explainroute_test

// A small builder of capture files for the Rust selector cases (rustcases_test.go):
// one DynamoGraphDeployment with a frontend pod (whose args carry the router
// flags), worker pods on their nodes, one DynamoWorkerMetadata per worker (the
// model card with kv_cache_block_size, worker_type, runtime_config and an
// optional router_config), the frontend's /metrics text (per worker and dp rank
// loads) and /busy_threshold answer, and KvEvents saying which workers hold
// how many leading blocks of the request — the inputs a Rust selector test sets
// by hand, in the form the CLI reads them from a real deployment.

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
)

type rcObj = map[string]any

const (
	rcNamespace = "rust"
	rcDynNS     = "rust-vectors"
	rcModel     = "rust/selector-vectors"
	// The Rust vectors are the newest upstream's tests: the capture runs a
	// release whose rules are the newest (a worker set's router_config
	// holds for its own hop from 1.4 on, docs/compatibility.md).
	rcImage = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.4.0"
)

// rcLoad is one worker_id/dp_rank sample pair of the frontend's /metrics.
type rcLoad struct {
	Rank          uint32
	DecodeBlocks  uint64
	PrefillTokens uint64
}

// rcWorker is one worker pod and the instance it publishes.
type rcWorker struct {
	Pod string
	// Role is "prefill" or "decode"; "" is an aggregated worker (component type
	// worker, no worker_type on the card).
	Role string
	ID   uint64
	// Published runtime_config fields.
	Taints          []string
	Topology        map[string]string
	TransferDomain  string
	Enforcement     string
	PreferredWeight *float64
	DpStart, DpSize uint32
	TotalKvBlocks   uint64 // 0 = not published
	MaxBatched      uint64 // 0 = not published
	// RouterConfig is the card's router_config (nil: none).
	RouterConfig rcObj
	// Loads are the frontend's load samples for this worker (nil: none).
	Loads []rcLoad
}

// rcCached says that a worker (dp rank) holds the first Blocks blocks of the
// request on device.
type rcCached struct {
	Pod    string
	Rank   uint32
	Blocks int
}

// rcDeployment is the capture to build.
type rcDeployment struct {
	Name      string // DGD name (default "vectors")
	BlockSize int    // kv_cache_block_size (default 16)
	// RouterArgs are appended to "python3 -m dynamo.frontend --router-mode kv".
	RouterArgs []string
	// BusyThreshold is the /busy_threshold answer (raw JSON; "" for none).
	BusyThreshold string
	Workers       []rcWorker
	// Tokens is the request the cached blocks are prefixes of.
	Tokens []uint32
	Cached []rcCached
}

// rcTokens returns n deterministic token ids.
func rcTokens(n int) []uint32 {
	out := make([]uint32, n)
	x := uint64(0x7e57)
	for i := range out {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		out[i] = uint32(100 + x%150000)
	}
	return out
}

// rcTokenArg renders tokens for --tokens.
func rcTokenArg(toks []uint32) string {
	parts := make([]string, len(toks))
	for i, t := range toks {
		parts[i] = strconv.FormatUint(uint64(t), 10)
	}
	return strings.Join(parts, ",")
}

func rcF(v float64) *float64 { return &v }

func (d *rcDeployment) defaults() {
	if d.Name == "" {
		d.Name = "vectors"
	}
	if d.BlockSize == 0 {
		d.BlockSize = 16
	}
}

// Write renders the capture into a temporary directory and returns its path.
func (d rcDeployment) Write(t *testing.T) string {
	t.Helper()
	d.defaults()
	items := []rcObj{d.dgd()}
	items = append(items, rcNode("cpu-rust-01", ""), d.frontendPod())
	for i, w := range d.Workers {
		items = append(items, rcNode(rcNodeName(i), w.Topology["zone"]), d.pod(w, i), d.dwm(w, i))
	}
	items = append(items, d.metrics())
	if kv := d.kvEvents(t); kv != nil {
		items = append(items, kv)
	}
	list := rcObj{"apiVersion": "v1", "kind": "List",
		"metadata": rcObj{"annotations": rcObj{
			// Five minutes before cmdtest's clock: a fresh capture draws no
			// age warning (pkg/analysis.FreshnessNotes).
			"kubectl-dynamo.io/collected-at": "2026-11-22T11:55:00Z",
			"kubectl-dynamo.io/context":      "rust-vectors",
		}},
		"items": items}
	data, err := json.MarshalIndent(list, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), d.Name+".json")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func rcNodeName(i int) string { return fmt.Sprintf("gpu-rust-%02d", i+1) }

func (w rcWorker) component() (name, ctype string) {
	switch w.Role {
	case "prefill":
		return "Prefill", "prefill"
	case "decode":
		return "Decode", "decode"
	}
	return "Worker", "worker"
}

func (d rcDeployment) dgd() rcObj {
	frontArgs := append([]string{"-m", "dynamo.frontend", "--router-mode", "kv"}, d.RouterArgs...)
	comps := []rcObj{{"name": "Frontend", "type": "frontend", "replicas": 1,
		"podTemplate": rcObj{"spec": rcObj{"containers": []rcObj{{"name": "main", "image": rcImage, "command": []string{"python3"}, "args": frontArgs}}}}}}
	counts := map[string]int{}
	var order []string
	for _, w := range d.Workers {
		name, _ := w.component()
		if counts[name] == 0 {
			order = append(order, name)
		}
		counts[name]++
	}
	for _, name := range order {
		ctype := map[string]string{"Prefill": "prefill", "Decode": "decode", "Worker": "worker"}[name]
		comps = append(comps, rcObj{"name": name, "type": ctype, "replicas": counts[name],
			"podTemplate": rcObj{"spec": rcObj{"containers": []rcObj{{"name": "main", "image": rcImage,
				"command": []string{"python3", "-m", "dynamo.vllm"}, "args": []string{"--model", rcModel},
				"resources": rcObj{"limits": rcObj{"nvidia.com/gpu": "1"}}}}}}})
	}
	return rcObj{"apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment",
		"metadata": rcObj{"name": d.Name, "namespace": rcNamespace, "generation": 1, "uid": "0f5e2d7c-0000-4000-a000-000000000001"},
		"spec":     rcObj{"backendFramework": "vllm", "components": comps},
		"status": rcObj{"state": "successful", "observedGeneration": 1,
			"conditions": []rcObj{{"type": "Ready", "status": "True", "reason": "all_resources_are_ready", "message": "", "lastTransitionTime": "2026-11-20T11:00:00Z"}}}}
}

func rcNode(name, zone string) rcObj {
	labels := rcObj{"kubernetes.io/hostname": name, "kubernetes.io/os": "linux"}
	if zone != "" {
		labels["topology.kubernetes.io/zone"] = zone
	}
	alloc := rcObj{"cpu": "96", "memory": "1056Gi", "pods": "110", "nvidia.com/gpu": "8"}
	return rcObj{"apiVersion": "v1", "kind": "Node", "metadata": rcObj{"name": name, "labels": labels},
		"status": rcObj{"allocatable": alloc, "capacity": alloc,
			"conditions": []rcObj{{"type": "Ready", "status": "True", "reason": "KubeletReady"}}}}
}

func (d rcDeployment) labels(comp, ctype string) rcObj {
	return rcObj{
		"nvidia.com/dynamo-graph-deployment-name": d.Name,
		"nvidia.com/dynamo-component":             comp,
		"nvidia.com/dynamo-component-type":        ctype,
		"nvidia.com/dynamo-namespace":             rcDynNS,
		"nvidia.com/dynamo-discovery-backend":     "kubernetes",
		"nvidia.com/dynamo-discovery-enabled":     "true",
	}
}

func rcRunning(ip string) rcObj {
	return rcObj{"phase": "Running", "podIP": ip, "startTime": "2026-11-20T11:00:00Z",
		"conditions": []rcObj{
			{"type": "PodScheduled", "status": "True"}, {"type": "Initialized", "status": "True"},
			{"type": "ContainersReady", "status": "True"}, {"type": "Ready", "status": "True"},
		},
		"containerStatuses": []rcObj{{"name": "main", "ready": true, "restartCount": 0, "image": rcImage, "started": true}}}
}

func (d rcDeployment) frontendPod() rcObj {
	args := append([]string{"-m", "dynamo.frontend", "--router-mode", "kv"}, d.RouterArgs...)
	name := d.Name + "-0-frontend-5d8f7"
	return rcObj{"apiVersion": "v1", "kind": "Pod",
		"metadata": rcObj{"name": name, "namespace": rcNamespace, "labels": d.labels("Frontend", "frontend")},
		"spec": rcObj{"nodeName": "cpu-rust-01", "containers": []rcObj{{"name": "main", "image": rcImage,
			"command": []string{"python3"}, "args": args,
			"env":   []rcObj{{"name": "DYN_NAMESPACE", "value": rcDynNS}, {"name": "DYN_DISCOVERY_BACKEND", "value": "kubernetes"}},
			"ports": []rcObj{{"name": "http", "containerPort": 8000, "protocol": "TCP"}}}}},
		"status": rcRunning("10.77.0.5")}
}

func rcIP(i int) string { return fmt.Sprintf("10.77.1.%d", 10+i) }

func (d rcDeployment) pod(w rcWorker, i int) rcObj {
	comp, ctype := w.component()
	return rcObj{"apiVersion": "v1", "kind": "Pod",
		"metadata": rcObj{"name": w.Pod, "namespace": rcNamespace, "labels": d.labels(comp, ctype)},
		"spec": rcObj{"nodeName": rcNodeName(i), "containers": []rcObj{{"name": "main", "image": rcImage,
			"command": []string{"python3", "-m", "dynamo.vllm"}, "args": []string{"--model", rcModel},
			"env":       []rcObj{{"name": "DYN_NAMESPACE", "value": rcDynNS}, {"name": "DYN_DISCOVERY_BACKEND", "value": "kubernetes"}},
			"resources": rcObj{"limits": rcObj{"nvidia.com/gpu": "1"}}}}},
		"status": rcRunning(rcIP(i))}
}

// card is the worker's model card (card_json).
func (d rcDeployment) card(w rcWorker) rcObj {
	rc := rcObj{
		"max_num_seqs":             256,
		"data_parallel_start_rank": w.DpStart,
		"data_parallel_size":       max(w.DpSize, 1),
		"enable_local_indexer":     true,
		"enable_eagle":             false,
		"stable_routing_id":        w.Pod,
	}
	if w.TotalKvBlocks > 0 {
		rc["total_kv_blocks"] = w.TotalKvBlocks
	}
	if w.MaxBatched > 0 {
		rc["max_num_batched_tokens"] = w.MaxBatched
	}
	if len(w.Taints) > 0 {
		rc["taints"] = w.Taints
	}
	if len(w.Topology) > 0 {
		rc["topology_domains"] = w.Topology
	}
	if w.TransferDomain != "" {
		rc["kv_transfer_domain"] = w.TransferDomain
	}
	if w.Enforcement != "" {
		rc["kv_transfer_enforcement"] = w.Enforcement
	}
	if w.PreferredWeight != nil {
		rc["kv_transfer_preferred_weight"] = *w.PreferredWeight
	}
	card := rcObj{
		"display_name": rcModel, "slug": "rust_selector-vectors",
		"kv_cache_block_size": d.BlockSize, "model_type": "Chat | Completions", "model_input": "Tokens",
		"context_length": 131072, "runtime_config": rc,
	}
	if w.Role != "" {
		card["worker_type"] = w.Role
	}
	if w.RouterConfig != nil {
		card["router_config"] = w.RouterConfig
	}
	return card
}

func (d rcDeployment) dwm(w rcWorker, i int) rcObj {
	comp := "backend"
	if w.Role == "prefill" {
		comp = "prefill"
	}
	key := fmt.Sprintf("%s/%s/generate/%x", rcDynNS, comp, w.ID)
	id := json.Number(strconv.FormatUint(w.ID, 10))
	data := rcObj{
		"endpoints": rcObj{key: rcObj{"type": "Endpoint", "namespace": rcDynNS, "component": comp, "endpoint": "generate",
			"instance_id": id, "transport": rcObj{"tcp": fmt.Sprintf("%s:41233/%x/generate", rcIP(i), w.ID)}}},
		"model_cards": rcObj{key: rcObj{"type": "Model", "namespace": rcDynNS, "component": comp, "endpoint": "generate",
			"instance_id": id, "card_json": d.card(w)}},
	}
	return rcObj{"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoWorkerMetadata",
		"metadata": rcObj{"name": w.Pod, "namespace": rcNamespace,
			"ownerReferences": []rcObj{{"apiVersion": "v1", "kind": "Pod", "name": w.Pod, "uid": "pod-" + w.Pod, "controller": false}}},
		"spec": rcObj{"data": data}}
}

// metrics is the frontend's /metrics text with the per-worker loads, and its
// /busy_threshold answer.
func (d rcDeployment) metrics() rcObj {
	var b strings.Builder
	for _, m := range []struct {
		name string
		val  func(rcLoad) uint64
	}{
		{"dynamo_frontend_worker_active_decode_blocks", func(l rcLoad) uint64 { return l.DecodeBlocks }},
		{"dynamo_frontend_worker_active_prefill_tokens", func(l rcLoad) uint64 { return l.PrefillTokens }},
	} {
		fmt.Fprintf(&b, "# TYPE %s gauge\n", m.name)
		for _, w := range d.Workers {
			role := cmp.Or(w.Role, "decode")
			for _, l := range w.Loads {
				fmt.Fprintf(&b, "%s{dp_rank=\"%d\",worker_id=\"%d\",worker_type=\"%s\"} %d\n", m.name, l.Rank, w.ID, role, m.val(l))
			}
		}
	}
	fmt.Fprintf(&b, "# TYPE dynamo_frontend_model_kv_cache_block_size gauge\ndynamo_frontend_model_kv_cache_block_size{model=%q} %d\n", rcModel, d.BlockSize)
	b.WriteString("# TYPE dynamo_router_overhead_total_ms histogram\ndynamo_router_overhead_total_ms_count{router_id=\"0\"} 42\n")
	m := rcObj{"apiVersion": "kubectl-dynamo.io/v1alpha1", "kind": "FrontendMetrics",
		"metadata":    rcObj{"name": d.Name + "-frontend", "namespace": rcNamespace},
		"deployment":  d.Name,
		"collectedAt": "2026-11-22T11:55:00Z",
		"text":        b.String()}
	if d.BusyThreshold != "" {
		m["busyThreshold"] = d.BusyThreshold
	}
	return m
}

// kvEvents stores, per rcCached, the first Blocks blocks of the request on the
// worker's dp rank (device tier), as the engines' KV events would.
func (d rcDeployment) kvEvents(t *testing.T) rcObj {
	if len(d.Cached) == 0 {
		return nil
	}
	blocks, err := routecore.ComputeBlocks(d.Tokens, d.BlockSize, routecore.HashOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var events []rcObj
	for n, c := range d.Cached {
		i := slices.IndexFunc(d.Workers, func(w rcWorker) bool { return w.Pod == c.Pod })
		if i < 0 || c.Blocks > len(blocks) {
			t.Fatalf("cached %+v: no such worker, or more blocks than the request's %d", c, len(blocks))
		}
		var bl []rcObj
		for _, b := range blocks[:c.Blocks] {
			bl = append(bl, rcObj{
				"block_hash":  json.Number(strconv.FormatUint(uint64(b.SequenceHash)^0x5a5a5a5a5a5a5a5a, 10)),
				"tokens_hash": json.Number(strconv.FormatUint(uint64(b.LocalHash), 10))})
		}
		events = append(events, rcObj{"worker_id": json.Number(strconv.FormatUint(d.Workers[i].ID, 10)), "storage_tier": "device",
			"event": rcObj{"event_id": n + 1, "dp_rank": c.Rank, "data": rcObj{"stored": rcObj{"parent_hash": nil, "blocks": bl}}}})
	}
	return rcObj{"apiVersion": "kubectl-dynamo.io/v1alpha1", "kind": "KvEvents",
		"metadata":   rcObj{"name": d.Name + "-kv", "namespace": rcNamespace},
		"deployment": d.Name, "blockSize": d.BlockSize,
		"source": "frontend GET /v1/kv-cache/placements/stream (snapshot)",
		"events": events}
}
