package dynosim

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/golden"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/build"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/capture"
)

// documentedKeys reads testdata/upstream/documented-keys.txt: path → type.
func documentedKeys(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "upstream", "documented-keys.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		path, typ, ok := strings.Cut(line, " ")
		if !ok {
			t.Fatalf("documented-keys.txt: bad line %q", line)
		}
		out[path] = typ
	}
	return out
}

// flatten returns every key path of a decoded YAML document with its value's
// type (int, number, string, bool, list, map); worker roles become <role>.
func flatten(prefix string, v any, out map[string]string) {
	switch x := v.(type) {
	case map[string]any:
		if prefix != "" {
			out[prefix] = "map"
		}
		for k, val := range x {
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			if prefix == "engine.workers" {
				p = "engine.workers.<role>"
			}
			flatten(p, val, out)
		}
	case []any:
		out[prefix] = "list"
	case string:
		out[prefix] = "string"
	case bool:
		out[prefix] = "bool"
	case float64:
		if x == math.Trunc(x) {
			out[prefix] = "int"
		} else {
			out[prefix] = "number"
		}
	case nil:
		out[prefix] = "null"
	default:
		out[prefix] = fmt.Sprintf("%T", v)
	}
}

// typeOK reports whether a value of type got fits the documented type.
func typeOK(doc, got string) bool {
	for _, d := range strings.Split(doc, "|") {
		if d == got || (d == "number" && got == "int") {
			return true
		}
	}
	return false
}

// checkSpec decodes a spec strictly (unknown fields rejected, as upstream
// does) and checks every key path and value type against the documented list.
func checkSpec(t *testing.T, name string, data []byte, docs map[string]string) map[string]string {
	t.Helper()
	var spec Spec
	if err := yaml.UnmarshalStrict(data, &spec); err != nil {
		t.Fatalf("%s: strict decode: %v", name, err)
	}
	var raw any
	if err := yaml.Unmarshal(data, &raw); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	keys := map[string]string{}
	flatten("", raw, keys)
	for path, got := range keys {
		want, ok := docs[path]
		if !ok {
			t.Errorf("%s: key %s is not documented upstream", name, path)
			continue
		}
		if !typeOK(want, got) {
			t.Errorf("%s: %s is a %s, upstream documents %s", name, path, got, want)
		}
	}
	return keys
}

// TestUpstreamExamples: upstream's own examples decode strictly into Spec and
// use only documented keys — Spec and documented-keys.txt cover them.
func TestUpstreamExamples(t *testing.T) {
	docs := documentedKeys(t)
	files, err := filepath.Glob(filepath.Join("testdata", "upstream", "*.yaml"))
	if err != nil || len(files) < 5 {
		t.Fatalf("upstream examples: %v %v", files, err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		checkSpec(t, f, data, docs)
	}
}

func exampleScenario() Scenario {
	cfg := routecore.DefaultKvRouterConfig()
	cfg.OverlapScoreCredit = 0.5
	cfg.RouterTemperature = 0.25
	cfg.RouterTTLSecs = 300
	return Scenario{
		Backend: "vllm", Model: "Qwen/Qwen3-0.6B", Namespace: "llm", Deployment: "vllm-disagg",
		RouterMode: "kv", RouterConfig: cfg, BlockSize: 16,
		Prefill: []WorkerSet{{Component: "VllmPrefillWorker", Replicas: 2, GPUsPerReplica: 2, TensorParallel: 2, DataParallel: 1, Domain: "zone-a",
			Args: []string{"python3", "-m", "dynamo.vllm", "--max-num-batched-tokens", "4096", "--gpu-memory-utilization=0.85"}}},
		Decode: []WorkerSet{{Component: "VllmDecodeWorker", Replicas: 3, GPUsPerReplica: 1, TensorParallel: 1, Domain: "zone-b", KvCapacityBlocks: 40960, MaxNumSeqs: 512}},
		Trace:  TraceSettings{Path: "/traces/toolagent.jsonl", Format: "mooncake", TraceBlockSize: 512, Speedup: 2, Requests: 1000},
		Seed:   42,
	}
}

// TestExportSchema: the export decodes strictly, and its keys and value types
// are upstream's documented ones, for every mode and router policy.
func TestExportSchema(t *testing.T) {
	docs := documentedKeys(t)
	agg := exampleScenario()
	agg.Aggregated, agg.Prefill, agg.Decode = agg.Decode, nil, nil
	rr := agg
	rr.RouterMode = "round-robin"
	noTrace := agg
	noTrace.Trace = TraceSettings{}
	seen := map[string]string{}
	for name, s := range map[string]Scenario{"disagg-kv": exampleScenario(), "agg-kv": agg, "agg-rr": rr, "no-trace": noTrace} {
		var buf bytes.Buffer
		if err := Export(&buf, s); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for k, v := range checkSpec(t, name, buf.Bytes(), docs) {
			seen[k] = v
		}
	}
	for _, must := range []string{"engine.kv_transfer.timing_mode", "router.overlap_score_credit", "traffic.source.block_size", "engine.workers.<role>.kv_cache.capacity.blocks"} {
		if _, ok := seen[must]; !ok {
			t.Errorf("no export wrote %s", must)
		}
	}
}

func TestExportDeterministic(t *testing.T) {
	var a, b bytes.Buffer
	if err := Export(&a, exampleScenario()); err != nil {
		t.Fatal(err)
	}
	if err := Export(&b, exampleScenario()); err != nil {
		t.Fatal(err)
	}
	if a.String() != b.String() {
		t.Fatal("two exports of one scenario differ")
	}
	golden.Assert(t, a.Bytes())
}

func TestExportErrors(t *testing.T) {
	base := exampleScenario()
	for name, tc := range map[string]struct {
		mut  func(*Scenario)
		want string
	}{
		"no model":       {func(s *Scenario) { s.Model = " " }, "model is unknown"},
		"bad backend":    {func(s *Scenario) { s.Backend = "llamacpp" }, "not one DynoSim simulates"},
		"no workers":     {func(s *Scenario) { s.Prefill, s.Decode = nil, nil }, "no workers"},
		"prefill only":   {func(s *Scenario) { s.Decode = nil }, "needs both prefill and decode"},
		"zero replicas":  {func(s *Scenario) { s.Decode[0].Replicas = 0 }, "decode workers have no replicas"},
		"negative tp":    {func(s *Scenario) { s.Prefill[0].TensorParallel = -1 }, "negative count"},
		"NaN speedup":    {func(s *Scenario) { s.Trace.Speedup = math.NaN() }, "speedup"},
		"texts trace":    {func(s *Scenario) { s.Trace.Format = "texts" }, "no DynoSim counterpart"},
		"bad fraction":   {func(s *Scenario) { s.Decode[0].MemoryFraction = 1.5 }, "memory fraction"},
		"negative block": {func(s *Scenario) { s.BlockSize = -1 }, "negative"},
	} {
		t.Run(name, func(t *testing.T) {
			s := base
			s.Prefill = append([]WorkerSet(nil), base.Prefill...)
			s.Decode = append([]WorkerSet(nil), base.Decode...)
			tc.mut(&s)
			err := Export(&bytes.Buffer{}, s)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestRouterMapping(t *testing.T) {
	for mode, want := range map[string]string{"kv": "kv_router", "round-robin": "round_robin", "random": "round_robin", "power-of-two": "round_robin", "": "round_robin"} {
		s := exampleScenario()
		s.RouterMode = mode
		spec, notes, err := ToSpec(s)
		if err != nil {
			t.Fatal(err)
		}
		if spec.Router.Policy != want {
			t.Errorf("mode %q: policy %s, want %s", mode, spec.Router.Policy, want)
		}
		if want == "round_robin" && (spec.Router.OverlapScoreCredit != nil || spec.Router.PrefillLoadModel.Type != "none") {
			t.Errorf("mode %q: round_robin carries KV knobs, which upstream rejects", mode)
		}
		if mode != "kv" && mode != "round-robin" && !strings.Contains(strings.Join(notes, "\n"), "router") {
			t.Errorf("mode %q: no note on the router mapping", mode)
		}
	}
	s := exampleScenario()
	_, notes, _ := ToSpec(s)
	if !strings.Contains(strings.Join(notes, "\n"), "router_ttl_secs=300") {
		t.Errorf("the non-default TTL is not noted: %q", notes)
	}
}

// loadDeployments reads a capture and builds its snapshot.
func loadDeployments(t *testing.T, path string) []model.Deployment {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := capture.Read(f, filepath.Base(path))
	if err != nil {
		t.Fatal(err)
	}
	s, err := build.Build(b)
	if err != nil {
		t.Fatal(err)
	}
	return s.Deployments
}

// render is the golden text for one deployment: its scenario notes and its
// export (or the export's error).
func render(t *testing.T, deps []model.Deployment) []byte {
	t.Helper()
	docs := documentedKeys(t)
	var out bytes.Buffer
	for i := range deps {
		s, notes := ScenarioFromDeployment(&deps[i])
		s.Trace = TraceSettings{Path: "trace.jsonl", Format: "mooncake", TraceBlockSize: 512, Speedup: 1}
		fmt.Fprintf(&out, "### %s\n", deps[i].Key())
		fmt.Fprintf(&out, "backend=%q model=%q blockSize=%d router=%q prefill=%s decode=%s aggregated=%s\n",
			s.Backend, s.Model, s.BlockSize, s.RouterMode, sets(s.Prefill), sets(s.Decode), sets(s.Aggregated))
		for _, n := range notes {
			fmt.Fprintf(&out, "note: %s\n", n)
		}
		var buf bytes.Buffer
		if err := Export(&buf, s); err != nil {
			fmt.Fprintf(&out, "export error: %v\n", err)
			continue
		}
		checkSpec(t, deps[i].Key(), buf.Bytes(), docs)
		out.Write(buf.Bytes())
	}
	return out.Bytes()
}

func sets(ws []WorkerSet) string {
	parts := make([]string, 0, len(ws))
	for _, w := range ws {
		parts = append(parts, fmt.Sprintf("%s×%d(gpus=%d tp=%d dp=%d pp=%d kv=%d domain=%q)", w.Component, w.Replicas, w.GPUsPerReplica, w.TensorParallel, w.DataParallel, w.PipelineParallel, w.KvCapacityBlocks, w.Domain))
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// TestExportExamples: goldens of the export of the repository's example
// captures.
func TestExportExamples(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "..", "examples", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("examples: %v %v", files, err)
	}
	sort.Strings(files)
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".yaml"), func(t *testing.T) {
			golden.Assert(t, render(t, loadDeployments(t, f)))
		})
	}
}

// TestScenarioFromUpstream: upstream-shaped vLLM, SGLang and TRT-LLM
// disaggregated deployments (test/fixtures/upstream).
func TestScenarioFromUpstream(t *testing.T) {
	for _, tc := range []struct {
		file, backend string
		tp            int
	}{
		{"vllm-disagg-v1beta1.yaml", "vllm", 1},
		{"sglang-disagg-v1beta1.yaml", "sglang", 1},
		{"trtllm-disagg-v1beta1.yaml", "trtllm", 0}, // TP is in an --extra-engine-args file
		{"vllm-disagg-multinode-v1beta1.yaml", "vllm", 0},
		{"trtllm-disagg-multinode-v1beta1-zone-required.yaml", "trtllm", 0},
	} {
		t.Run(strings.TrimSuffix(tc.file, ".yaml"), func(t *testing.T) {
			deps := loadDeployments(t, filepath.Join("..", "..", "..", "test", "fixtures", "upstream", tc.file))
			if len(deps) != 1 {
				t.Fatalf("%d deployments", len(deps))
			}
			s, _ := ScenarioFromDeployment(&deps[0])
			if s.Backend != tc.backend {
				t.Errorf("backend %q, want %q", s.Backend, tc.backend)
			}
			if s.Model == "" || len(s.Prefill) == 0 || len(s.Decode) == 0 || len(s.Aggregated) != 0 {
				t.Errorf("model %q, %d prefill, %d decode, %d aggregated sets", s.Model, len(s.Prefill), len(s.Decode), len(s.Aggregated))
			}
			if tc.tp > 0 && (s.Prefill[0].TensorParallel != tc.tp || s.Decode[0].TensorParallel != tc.tp) {
				t.Errorf("tp prefill %d decode %d, want %d", s.Prefill[0].TensorParallel, s.Decode[0].TensorParallel, tc.tp)
			}
			golden.Assert(t, render(t, deps))
		})
	}
}

func TestScenarioFromNil(t *testing.T) {
	if _, notes := ScenarioFromDeployment(nil); len(notes) == 0 {
		t.Fatal("nil deployment without a note")
	}
}

func TestReadKnobs(t *testing.T) {
	ws := &WorkerSet{Args: []string{"python3", "-m", "dynamo.sglang", "--tp", "8", "--dp", "8", "--enable-dp-attention", "--max-running-requests=128", "--disable-radix-cache", "--mem-fraction-static", "0.8"}}
	k := readKnobs("sglang", ws)
	if k.tp != 1 || k.dp != 8 || k.maxSeqs != 128 || k.prefixCaching == nil || *k.prefixCaching || k.memFraction != 0.8 {
		t.Errorf("sglang dp-attention knobs: %+v", k)
	}
	ws = &WorkerSet{GPUsPerReplica: 4, Args: []string{"python3", "-m", "dynamo.trtllm", "--extra-engine-args", "/cfg/engine.yaml"}}
	k = readKnobs("trtllm", ws)
	if k.tp != 4 || len(k.notes) != 2 {
		t.Errorf("trtllm tp from GPUs: %+v", k)
	}
	ws = &WorkerSet{Args: []string{"-tp", "2", "-dp=2", "--no-enable-prefix-caching", "--max-model-len", "8192"}}
	k = readKnobs("vllm", ws)
	if k.tp != 2 || k.dp != 2 || k.prefixCaching == nil || *k.prefixCaching || k.ctxLen != 8192 {
		t.Errorf("vllm knobs: %+v", k)
	}
}
