package dynosim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/termsafe"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
)

// Scenario is everything the export needs, as plain data filled by the caller
// (ScenarioFromDeployment fills it from a live deployment).
type Scenario struct {
	// Backend is vllm, sglang or trtllm ("" unknown: upstream's default, vllm,
	// applies).
	Backend string
	// Model is the Hugging Face model id or path the engines load (DynoSim
	// reads the model's config to size KV and timing).
	Model                 string
	Namespace, Deployment string
	// Hardware is an AISimulate system name (h200_sxm, b200_sxm, …). The
	// cluster does not say which; "" writes the placeholder "unknown".
	Hardware string
	// RouterMode is the frontend router mode (round-robin, random, kv, …).
	RouterMode   string
	RouterConfig routecore.KvRouterConfig
	// BlockSize is the engines' KV block size in tokens (0 unknown: the
	// backend's default applies).
	BlockSize                   int
	Prefill, Decode, Aggregated []WorkerSet
	Trace                       TraceSettings
	Seed                        uint64
	// Variant names the what-if the scenario is (a --variant spec; "" for
	// the deployment as it is).
	Variant string
	// Notes are what reading the scenario could not determine or carry
	// (ScenarioFromDeployment's notes, a variant's what-ifs DynoSim cannot
	// express): the header lists them before the spec's own.
	Notes []string
}

// WorkerSet is one component's workers: its replicas and their parallelism.
type WorkerSet struct {
	Component      string
	Replicas       int
	GPUsPerReplica int64
	TensorParallel int
	DataParallel   int
	// Domain is the topology domain value when every replica has the same
	// one; Domains every value its replicas have (sorted).
	Domain  string
	Domains []string
	// Args is the engine command line (words), read for engine knobs the
	// fields below do not carry.
	Args []string

	// PipelineParallel is the pipeline-parallel size (0 = 1).
	PipelineParallel int
	// MaxNumSeqs and MaxNumBatchedTokens are the scheduler limits (0 unknown:
	// read from Args, else upstream's defaults).
	MaxNumSeqs, MaxNumBatchedTokens uint64
	// KvCapacityBlocks is the worker's published total_kv_blocks (0 unknown).
	KvCapacityBlocks uint64
	// MemoryFraction is the GPU memory fraction for KV (0 unknown: read from
	// Args, else upstream's default).
	MemoryFraction float64
	// PrefixCaching is nil when unknown (read from Args, else upstream's
	// default, on).
	PrefixCaching *bool
	// ContextLength is the engine's maximum model length (0 unknown).
	ContextLength int
}

// TraceSettings is the traffic the simulation replays.
type TraceSettings struct {
	// Path is the trace file ("" = no trace file).
	Path string
	// Format is ours: mooncake, mooncake-delta, dynamo-request-trace (DynoSim's
	// "dynamo"), agentic_mooncake, applied_compute_agentic, weka; tokens,
	// texts and synthetic have no DynoSim counterpart.
	Format string
	// TraceBlockSize is the tokens per hash id (0 = upstream's default, 512).
	TraceBlockSize int
	// Speedup divides inter-arrival times (0 = 1).
	Speedup float64
	// Requests is how many requests our simulation replays (0 = all).
	Requests int
	// MaxVirtualSeconds is --duration: the replay's traffic ends then (0:
	// none).
	MaxVirtualSeconds float64
	// Synthetic is --synthetic traffic (Path is then empty).
	Synthetic *SyntheticTraffic
}

// SyntheticTraffic is kubectl-dynamo's --synthetic traffic: Poisson arrivals
// at Rate requests per second, prompt and output lengths uniform in their
// ranges, a share of each prompt from one of Prefixes shared prefixes, until
// Requests requests or DurationSeconds (whichever comes first; 0 unset).
type SyntheticTraffic struct {
	Rate            float64
	ISLMin, ISLMax  int
	OSLMin, OSLMax  int
	PrefixShare     float64
	Prefixes        int
	Requests        int
	DurationSeconds float64
	Seed            uint64
}

// Placeholder is written for engine.hardware when Scenario.Hardware is empty.
const Placeholder = "unknown"

// traceFormats maps our trace format names to DynoSim's traffic.source.format.
var traceFormats = map[string]string{
	"mooncake":                "mooncake",
	"mooncake-delta":          "mooncake-delta",
	"agentic_mooncake":        "agentic_mooncake",
	"agentic-mooncake":        "agentic_mooncake",
	"applied_compute_agentic": "applied_compute_agentic",
	"weka":                    "weka",
	"dynamo":                  "dynamo",
	"dynamo-request-trace":    "dynamo",
}

// Export writes the scenario as a DynoSim prediction input (YAML, the format
// `aisimulate predict --stack dynamo --config FILE` reads). A comment header
// names the deployment, the command to run and every setting that could not
// be carried over. The output is deterministic: keys are sorted and notes keep
// a fixed order.
func Export(w io.Writer, s Scenario) error {
	spec, notes, err := ToSpec(s)
	if err != nil {
		return err
	}
	body, err := yaml.Marshal(spec)
	if err != nil {
		return fmt.Errorf("dynosim: encode spec: %w", err)
	}
	// Values come from the cluster (model, component names): one holding a
	// control, bidi or invisible character cannot be written as a spec a
	// person reads or DynoSim loads. The values are checked, not the YAML:
	// YAML escapes a control ("\e") that the reader then decodes raw.
	if v, ok := unsafeValue(reflect.ValueOf(spec)); ok {
		return fmt.Errorf("dynosim: a value of the deployment holds control or invisible characters, which a DynoSim spec cannot carry (%s); fix it in the deployment", termsafe.Escape(clipQuote(v, 80)))
	}
	for _, line := range strings.Split(string(body), "\n") {
		if !termsafe.Safe(line) {
			return fmt.Errorf("dynosim: a value of the deployment holds control or invisible characters, which a DynoSim spec cannot carry (%s); fix it in the deployment", termsafe.Escape(strings.TrimSpace(line)))
		}
	}
	var buf bytes.Buffer
	name := strings.Trim(s.Namespace+"/"+s.Deployment, "/")
	if name == "" {
		name = "a deployment"
	}
	fmt.Fprintf(&buf, "# DynoSim prediction input for %s, written by kubectl dynamo simulate --export-dynosim.\n", comment(name))
	if s.Variant != "" {
		fmt.Fprintf(&buf, "# Variant: %s (the deployment with this what-if applied).\n", comment(s.Variant))
	}
	buf.WriteString("# Schema: AISimulate's prediction YAML with Dynamo's router and planner adapters\n")
	buf.WriteString("# (ai-dynamo/aisimulate docs/cli/user-guide.md; Dynamo's DynoSim Replay CLI Reference).\n")
	buf.WriteString("# Run: aisimulate predict --stack dynamo --config THIS_FILE --output-dir ./dynosim-output\n")
	if len(notes) > 0 {
		buf.WriteString("# Not carried over, or assumed:\n")
		for _, n := range notes {
			buf.WriteString("#   - " + comment(n) + "\n")
		}
	}
	buf.Write(body)
	_, err = w.Write(buf.Bytes())
	return err
}

// ModelID reports whether s is written as a Hugging Face model id: "name" or
// "org/name", of letters, digits, '-', '_' and '.', neither part starting
// with '.' or '-' — never a path (/, ./, ~, ..) and never a control
// character.
func ModelID(s string) bool {
	if s == "" || len(s) > 256 {
		return false
	}
	parts := strings.Split(s, "/")
	if len(parts) > 2 {
		return false
	}
	for _, p := range parts {
		if p == "" || p[0] == '.' || p[0] == '-' || strings.Contains(p, "..") {
			return false
		}
		if strings.IndexFunc(p, func(r rune) bool { return !modelIDRune(r) }) >= 0 {
			return false
		}
	}
	return true
}

func modelIDRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.'
}

// clipQuote quotes s (Go syntax: controls escaped), cut to about n bytes.
func clipQuote(s string, n int) string {
	if len(s) > n {
		s = s[:n] + "…"
	}
	return strconv.Quote(s)
}

// unsafeValue finds a string in v that a person or DynoSim must not read raw:
// one holding a control, bidi or invisible character.
func unsafeValue(v reflect.Value) (string, bool) {
	switch v.Kind() {
	case reflect.String:
		return v.String(), !termsafe.Safe(v.String())
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return "", false
		}
		return unsafeValue(v.Elem())
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				if s, bad := unsafeValue(v.Field(i)); bad {
					return s, true
				}
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			if s, bad := unsafeValue(v.Index(i)); bad {
				return s, true
			}
		}
	case reflect.Map:
		it := v.MapRange()
		for it.Next() {
			if s, bad := unsafeValue(it.Key()); bad {
				return s, true
			}
			if s, bad := unsafeValue(it.Value()); bad {
				return s, true
			}
		}
	}
	return "", false
}

// comment keeps a note on one comment line.
func comment(s string) string {
	// Cluster names reach this header: fold line breaks, then show every
	// other control, bidi or invisible character visibly (a person cats the
	// file; YAML refuses raw controls).
	return termsafe.Escape(strings.NewReplacer("\r", " ", "\n", " ").Replace(s))
}

// ToSpec maps a scenario onto the DynoSim schema. notes says, in a fixed
// order, what the spec cannot express and what was assumed; the error is for
// a scenario DynoSim cannot run at all (no workers, no model, a prefill pool
// without decode, invalid numbers, an unknown backend or trace format).
func ToSpec(s Scenario) (Spec, []string, error) {
	notes := slices.Clone(s.Notes)
	note := func(format string, a ...any) { notes = append(notes, fmt.Sprintf(format, a...)) }

	if strings.TrimSpace(s.Model) == "" {
		return Spec{}, nil, fmt.Errorf("dynosim: the model is unknown; DynoSim requires engine.model (a Hugging Face id or path)")
	}
	backend := strings.ToLower(strings.TrimSpace(s.Backend))
	switch backend {
	case "vllm", "sglang", "trtllm":
	case "":
		note("engine.backend: the backend is unknown; DynoSim's default (vllm) applies")
	default:
		return Spec{}, nil, fmt.Errorf("dynosim: backend %q is not one DynoSim simulates (vllm, sglang, trtllm)", s.Backend)
	}
	if s.BlockSize < 0 {
		return Spec{}, nil, fmt.Errorf("dynosim: block size %d is negative", s.BlockSize)
	}
	hardware := strings.TrimSpace(s.Hardware)
	if hardware == "" {
		hardware = Placeholder
		note("engine.hardware: the GPU model is not known to kubectl-dynamo; replace %q with an AISimulate system name (e.g. --set engine.hardware=h200_sxm)", Placeholder)
	}
	model := strings.TrimSpace(s.Model)
	if !ModelID(model) {
		// The name comes from the cluster (a worker card, the engine's
		// --model): DynoSim loads engine.model as a Hugging Face id or a
		// local path, so a path (/home/victim/.ssh) or a name with control
		// characters is never written into the spec.
		note("engine.model: the deployment's model name %s is not a Hugging Face model id (org/name); a name from the cluster is written only as one (never as a local path), so replace %q with the model's id", comment(clipQuote(model, 80)), Placeholder)
		model = Placeholder
	}
	spec := Spec{Engine: Engine{Model: model, Hardware: hardware, Backend: backend}}

	pd := len(s.Prefill) > 0 || len(s.Decode) > 0
	switch {
	case pd && (len(s.Prefill) == 0 || len(s.Decode) == 0):
		return Spec{}, nil, fmt.Errorf("dynosim: a disaggregated deployment needs both prefill and decode workers (have %d prefill, %d decode sets)", len(s.Prefill), len(s.Decode))
	case pd:
		spec.Engine.Mode = "disaggregated"
		if len(s.Aggregated) > 0 {
			note("engine.mode: the deployment has aggregated workers (%s) beside prefill/decode; DynoSim simulates one mode, so only prefill/decode are exported", setNames(s.Aggregated))
		}
		if backend == "trtllm" {
			note("engine.mode: aisimulate predict supports TensorRT-LLM only in aggregated mode; this disaggregated spec will be rejected until it does")
		}
	case len(s.Aggregated) > 0:
		spec.Engine.Mode = "aggregated"
	default:
		return Spec{}, nil, fmt.Errorf("dynosim: the scenario has no workers")
	}

	ctxLen := 0
	pool := func(role string, sets []WorkerSet) (*Worker, error) {
		w, n, cl, err := toWorker(role, backend, s.BlockSize, sets)
		notes = append(notes, n...)
		if cl > 0 && (ctxLen == 0 || cl < ctxLen) {
			ctxLen = cl
		}
		return w, err
	}
	var err error
	if spec.Engine.Mode == "disaggregated" {
		if spec.Engine.Workers.Prefill, err = pool("prefill", s.Prefill); err != nil {
			return Spec{}, nil, err
		}
		if spec.Engine.Workers.Decode, err = pool("decode", s.Decode); err != nil {
			return Spec{}, nil, err
		}
		spec.Engine.KvTransfer = &KvTransfer{TimingMode: "destination_missing"}
		note("engine.kv_transfer: the prefill-to-decode link bandwidth is not known; without bandwidth_gb_per_second DynoSim charges no transfer delay (kubectl-dynamo's per-block transfer times, same- and cross-domain, have no counterpart)")
	} else if spec.Engine.Workers.Aggregated, err = pool("aggregated", s.Aggregated); err != nil {
		return Spec{}, nil, err
	}
	if ctxLen > 0 {
		spec.Engine.ContextLength = int64(ctxLen)
	}
	if s.BlockSize == 0 {
		note("kv_cache.block_size: the KV block size is unknown; the backend's default applies (vLLM 64, SGLang 1, TensorRT-LLM 32)")
	}

	router, rnotes := toRouter(s)
	spec.Router = router
	notes = append(notes, rnotes...)
	spec.Planner = &Planner{Policy: "disabled"}

	traffic, tnotes, err := toTraffic(s.Trace, s.Seed)
	if err != nil {
		return Spec{}, nil, err
	}
	spec.Traffic = traffic
	notes = append(notes, tnotes...)

	if s.Seed != 0 && s.Trace.Synthetic == nil {
		note("seed %d: not carried; DynoSim's trace-timestamp load takes no seed (only poisson load does) and its router has none", s.Seed)
	}
	if d := domains(s); len(d) > 0 {
		note("topology: transfer domains (%s) and the kvTransferPolicy enforcement are not modelled by DynoSim; every decode worker is equally reachable", strings.Join(d, ", "))
	}
	return spec, notes, nil
}

func setNames(sets []WorkerSet) string {
	names := make([]string, 0, len(sets))
	for _, ws := range sets {
		n := ws.Component
		if n == "" {
			n = "?"
		}
		names = append(names, n)
	}
	return strings.Join(names, ", ")
}

// toWorker maps one role's worker sets onto one DynoSim pool. DynoSim has one
// pool per role: sets of the same shape are summed, a set of another shape is
// counted in replicas with the first set's shape and noted.
func toWorker(role, backend string, blockSize int, sets []WorkerSet) (*Worker, []string, int, error) {
	var notes []string
	note := func(format string, a ...any) { notes = append(notes, fmt.Sprintf(format, a...)) }
	var first *WorkerSet
	var firstK engineKnobs
	replicas := int64(0)
	for i := range sets {
		ws := &sets[i]
		if ws.Replicas < 0 || ws.TensorParallel < 0 || ws.DataParallel < 0 || ws.PipelineParallel < 0 || ws.GPUsPerReplica < 0 || ws.ContextLength < 0 {
			return nil, nil, 0, fmt.Errorf("dynosim: %s worker set %q has a negative count", role, ws.Component)
		}
		if ws.MemoryFraction < 0 || ws.MemoryFraction > 1 || math.IsNaN(ws.MemoryFraction) {
			return nil, nil, 0, fmt.Errorf("dynosim: %s worker set %q has memory fraction %v outside (0, 1]", role, ws.Component, ws.MemoryFraction)
		}
		if ws.Replicas == 0 {
			note("%s: %s has no replicas and is left out", role, nameOr(ws.Component))
			continue
		}
		k := readKnobs(backend, ws)
		if first == nil {
			first, firstK = ws, k
		} else if shape(k) != shape(firstK) {
			note("%s: %s (tensor %d, pipeline %d, data %d) differs from %s (tensor %d, pipeline %d, data %d); DynoSim has one %s pool, so its replicas take the latter's shape",
				role, nameOr(ws.Component), k.tp, k.pp, k.dp, nameOr(first.Component), firstK.tp, firstK.pp, firstK.dp, role)
		}
		replicas += int64(ws.Replicas)
	}
	if first == nil {
		return nil, notes, 0, fmt.Errorf("dynosim: the %s workers have no replicas", role)
	}
	k := firstK
	notes = append(notes, k.notes...)
	w := &Worker{
		Parallelism: Parallelism{Replicas: replicas, Tensor: int64(k.tp), Pipeline: int64(k.pp), AttentionData: int64(k.dp), MoeTensor: 1, MoeExpert: 1},
		Timing:      &Timing{Type: "default"},
	}
	if want := int64(k.tp * k.pp * k.dp); first.GPUsPerReplica > 0 && first.GPUsPerReplica != want {
		note("%s: %s requests %d GPUs per replica but tensor × pipeline × data = %d; DynoSim counts the latter", role, nameOr(first.Component), first.GPUsPerReplica, want)
	}
	if k.maxSeqs > 0 || k.maxTokens > 0 {
		w.Scheduler = &Scheduler{}
		if k.maxTokens > 0 {
			w.Scheduler.MaxBatchedTokens = i64(k.maxTokens)
		}
		if k.maxSeqs > 0 {
			w.Scheduler.MaxSequences = i64(k.maxSeqs)
		}
	}
	kv := &KvCache{}
	if blockSize > 0 {
		kv.BlockSize = i64(uint64(blockSize))
	}
	kv.PrefixCaching = k.prefixCaching
	switch {
	case first.KvCapacityBlocks > 0:
		b := first.KvCapacityBlocks
		kv.Capacity = &Capacity{Type: "fixed", Blocks: &b}
		if blockSize == 0 {
			note("%s: kv_cache.capacity.blocks is the worker's published total_kv_blocks, counted in its own block size, which is unknown here", role)
		}
	case k.memFraction > 0:
		f := k.memFraction
		kv.Capacity = &Capacity{Type: "default", MemoryFraction: &f}
	}
	if kv.BlockSize != nil || kv.PrefixCaching != nil || kv.Capacity != nil {
		w.KvCache = kv
	}
	return w, notes, k.ctxLen, nil
}

func nameOr(s string) string {
	if s == "" {
		return "a worker set"
	}
	return s
}

func shape(k engineKnobs) [3]int { return [3]int{k.tp, k.pp, k.dp} }

func i64(v uint64) *int64 {
	if v > math.MaxInt64 {
		v = math.MaxInt64
	}
	x := int64(v)
	return &x
}

func f64(v float64) *float64 { return &v }

// toRouter maps the router mode and the KV router's knobs. DynoSim's router
// adapter (version 1 contract) has round_robin and kv_router, and of the KV
// knobs overlap_score_credit, prefill_load_scale, temperature and the prefill
// load model; every other non-default knob is noted.
func toRouter(s Scenario) (*Router, []string) {
	var notes []string
	mode := strings.TrimSpace(s.RouterMode)
	if mode == "" {
		mode = string(routecore.DefaultRouterMode)
		notes = append(notes, "router.policy: the router mode is unknown; the frontend default (round-robin) is assumed")
	}
	if !routecore.RouterMode(mode).IsKV() {
		if mode != string(routecore.RouterModeRoundRobin) {
			notes = append(notes, fmt.Sprintf("router.policy: router mode %q has no DynoSim counterpart (round_robin, kv_router); round_robin is written", mode))
		}
		return &Router{Policy: "round_robin", PrefillLoadModel: &PrefillLoadModel{Type: "none"}}, notes
	}
	cfg := s.RouterConfig
	if reflect.DeepEqual(cfg, routecore.KvRouterConfig{}) {
		cfg = routecore.DefaultKvRouterConfig()
		notes = append(notes, "router: no KV router configuration was given; Dynamo's defaults are written")
	}
	r := &Router{Policy: "kv_router", PrefillLoadModel: &PrefillLoadModel{Type: "none"}}
	switch cfg.RouterPrefillLoadModel {
	case routecore.PrefillLoadModelAIC:
		r.PrefillLoadModel.Type = "aic"
	case routecore.PrefillLoadModelNone, "":
	default:
		notes = append(notes, fmt.Sprintf("router.prefill_load_model: %q has no DynoSim counterpart (none, aic); none is written", cfg.RouterPrefillLoadModel))
	}
	r.OverlapScoreCredit = finiteNonNeg(cfg.OverlapScoreCredit, "router.overlap_score_credit", &notes)
	r.PrefillLoadScale = finiteNonNeg(cfg.PrefillLoadScale, "router.prefill_load_scale", &notes)
	r.Temperature = finiteNonNeg(cfg.RouterTemperature, "router.temperature", &notes)
	if d := unmappedKnobs(cfg); len(d) > 0 {
		notes = append(notes, "router: KV router settings outside DynoSim's router contract, left at its defaults: "+strings.Join(d, ", "))
	}
	if r.Temperature != nil && *r.Temperature > 0 {
		notes = append(notes, "router.temperature: softmax sampling draws from DynoSim's own random stream, so individual choices differ from kubectl-dynamo's seeded ones")
	}
	routable := int64(0)
	for _, sets := range [][]WorkerSet{s.Aggregated, s.Decode} {
		for _, ws := range sets {
			routable += int64(ws.Replicas) * int64(max(1, ws.DataParallel))
		}
	}
	if routable <= 1 {
		notes = append(notes, "router.policy: DynoSim rejects kv_router with one routable worker; set router.policy: round_robin to run this spec")
	}
	return r, notes
}

func finiteNonNeg(v float64, key string, notes *[]string) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		*notes = append(*notes, fmt.Sprintf("%s: %v is not a finite non-negative number; DynoSim's default applies", key, v))
		return nil
	}
	return f64(v)
}

// unmappedKnobs lists the KV router settings (by Dynamo's snake_case name,
// sorted) whose value differs from Dynamo's default and which DynoSim's
// router contract cannot carry.
func unmappedKnobs(cfg routecore.KvRouterConfig) []string {
	mapped := map[string]bool{"overlap_score_credit": true, "prefill_load_scale": true, "router_temperature": true, "router_prefill_load_model": true}
	got, want := knobMap(cfg), knobMap(routecore.DefaultKvRouterConfig())
	var out []string
	for k, v := range got {
		if mapped[k] {
			continue
		}
		if string(v) != string(want[k]) {
			out = append(out, k+"="+string(v))
		}
	}
	sort.Strings(out)
	return out
}

func knobMap(cfg routecore.KvRouterConfig) map[string]json.RawMessage {
	b, err := json.Marshal(cfg)
	if err != nil {
		return nil
	}
	m := map[string]json.RawMessage{}
	if json.Unmarshal(b, &m) != nil {
		return nil
	}
	return m
}

// toTraffic maps the trace settings onto traffic.source/load/stop.
func toTraffic(t TraceSettings, seed uint64) (*Traffic, []string, error) {
	var notes []string
	if math.IsNaN(t.Speedup) || math.IsInf(t.Speedup, 0) || t.Speedup < 0 {
		return nil, nil, fmt.Errorf("dynosim: trace speedup %v is not a finite non-negative number", t.Speedup)
	}
	if t.TraceBlockSize < 0 || t.Requests < 0 {
		return nil, nil, fmt.Errorf("dynosim: trace block size and request count must not be negative")
	}
	if math.IsNaN(t.MaxVirtualSeconds) || math.IsInf(t.MaxVirtualSeconds, 0) || t.MaxVirtualSeconds < 0 {
		return nil, nil, fmt.Errorf("dynosim: traffic duration %v is not a finite non-negative number", t.MaxVirtualSeconds)
	}
	if syn := t.Synthetic; syn != nil {
		return syntheticTraffic(*syn, t, seed)
	}
	if strings.TrimSpace(t.Path) == "" {
		notes = append(notes, "traffic: no trace file; DynoSim's default synthetic traffic applies (100 requests of 1024 input / 128 output tokens at concurrency 10)")
		return nil, notes, nil
	}
	format := strings.ToLower(strings.TrimSpace(t.Format))
	if format == "" {
		format = "mooncake"
	}
	up, ok := traceFormats[format]
	if !ok {
		return nil, nil, fmt.Errorf("dynosim: trace format %q has no DynoSim counterpart (mooncake, mooncake-delta, dynamo-request-trace, agentic_mooncake, applied_compute_agentic, weka)", t.Format)
	}
	src := &TrafficSource{Type: "trace", Paths: []string{t.Path}, Format: up}
	switch {
	case t.TraceBlockSize > 0 && (up == "dynamo" || up == "weka"):
		notes = append(notes, "traffic.source.block_size: left out; DynoSim reads the block size embedded in a "+up+" trace")
	case t.TraceBlockSize > 0:
		src.BlockSize = i64(uint64(t.TraceBlockSize))
	case up != "dynamo" && up != "weka":
		notes = append(notes, "traffic.source.block_size: the trace's hash block size is unknown; DynoSim's default (512) applies")
	}
	speed := t.Speedup
	if speed == 0 {
		speed = 1
	}
	tr := &Traffic{Source: src}
	if up == "applied_compute_agentic" {
		notes = append(notes, "traffic.load: applied_compute_agentic traces carry no timestamps; DynoSim needs load.type concurrency, which kubectl-dynamo does not choose: set traffic.load")
	} else {
		tr.Load = &TrafficLoad{Type: "trace_timestamps", Speedup: f64(speed)}
	}
	if t.Requests > 0 {
		notes = append(notes, fmt.Sprintf("traffic.stop: kubectl-dynamo replayed the first %d requests; DynoSim's stop.requests is for synthetic traffic only, so it replays the whole trace (cut it with traffic.stop.max_virtual_time_seconds)", t.Requests))
	}
	if t.MaxVirtualSeconds > 0 {
		tr.Stop = &TrafficStop{MaxVirtualTimeSeconds: f64(t.MaxVirtualSeconds)}
		notes = append(notes, fmt.Sprintf("traffic.stop.max_virtual_time_seconds: %g, kubectl-dynamo's --duration; it ends DynoSim's run then, where kubectl-dynamo ends the arrivals then and lets the requests in flight finish", t.MaxVirtualSeconds))
	}
	return tr, notes, nil
}

// syntheticTraffic maps --synthetic: DynoSim's synthetic source has one
// prompt and one output length, and its poisson load a rate and a seed.
func syntheticTraffic(syn SyntheticTraffic, t TraceSettings, seed uint64) (*Traffic, []string, error) {
	var notes []string
	if !(syn.Rate > 0) || math.IsInf(syn.Rate, 0) || syn.ISLMin < 1 || syn.ISLMax < syn.ISLMin || syn.OSLMin < 0 || syn.OSLMax < syn.OSLMin || syn.Requests < 0 ||
		math.IsNaN(syn.DurationSeconds) || syn.DurationSeconds < 0 || math.IsInf(syn.DurationSeconds, 0) {
		return nil, nil, fmt.Errorf("dynosim: synthetic traffic %+v is not a rate and length ranges", syn)
	}
	mid := func(lo, hi int) int64 { return int64(lo) + int64(hi-lo)/2 }
	isl, osl := mid(syn.ISLMin, syn.ISLMax), mid(syn.OSLMin, syn.OSLMax)
	rate := syn.Rate * max(t.Speedup, 0)
	if t.Speedup == 0 {
		rate = syn.Rate
	}
	tr := &Traffic{
		Source: &TrafficSource{Type: "synthetic", InputTokens: &isl, OutputTokens: &osl},
		Load:   &TrafficLoad{Type: "poisson", RequestsPerSecond: f64(rate), Seed: &seed},
	}
	if syn.ISLMin != syn.ISLMax || syn.OSLMin != syn.OSLMax {
		notes = append(notes, fmt.Sprintf("traffic.source: DynoSim's synthetic requests have one length; the middle of kubectl-dynamo's uniform ranges is written (input %d–%d → %d, output %d–%d → %d)",
			syn.ISLMin, syn.ISLMax, isl, syn.OSLMin, syn.OSLMax, osl))
	}
	if syn.PrefixShare > 0 {
		notes = append(notes, fmt.Sprintf("traffic.source: prefix-share=%g over %d shared prefixes has no counterpart in DynoSim's single-turn synthetic traffic, whose prompts share nothing: expect fewer prefix-cache hits (its synthetic-session source shares prefixes across turns)", syn.PrefixShare, syn.Prefixes))
	}
	if t.Speedup != 0 && t.Speedup != 1 {
		notes = append(notes, fmt.Sprintf("traffic.load.requests_per_second: the synthetic rate %g × the speedup %g", syn.Rate, t.Speedup))
	}
	notes = append(notes, fmt.Sprintf("traffic.load.seed: %d, kubectl-dynamo's --seed; DynoSim draws its own arrivals and lengths from it, not the same requests", seed))
	stop := &TrafficStop{}
	n := syn.Requests
	if t.Requests > 0 && (n == 0 || t.Requests < n) {
		n = t.Requests
	}
	if n > 0 {
		stop.Requests = i64(uint64(n))
	}
	secs := syn.DurationSeconds
	if t.MaxVirtualSeconds > 0 && (secs == 0 || t.MaxVirtualSeconds < secs) {
		secs = t.MaxVirtualSeconds
	}
	if secs > 0 {
		stop.MaxVirtualTimeSeconds = f64(secs)
	}
	if stop.Requests != nil || stop.MaxVirtualTimeSeconds != nil {
		tr.Stop = stop
	}
	return tr, notes, nil
}

// domains returns the distinct topology domain values of the scenario's
// worker sets, sorted ("" left out): every value of every set's replicas.
func domains(s Scenario) []string {
	seen := map[string]bool{}
	for _, sets := range [][]WorkerSet{s.Prefill, s.Decode, s.Aggregated} {
		for _, ws := range sets {
			for _, d := range append([]string{ws.Domain}, ws.Domains...) {
				if d != "" {
					seen[d] = true
				}
			}
		}
	}
	out := make([]string, 0, len(seen))
	for d := range seen {
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}
