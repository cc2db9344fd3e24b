package dynosim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/boundedyaml"
)

// TimingProfile is what kubectl-dynamo's engine model needs from a timing
// profile: prefill throughput per GPU, a decode step time linear in the
// active sequences (DecodeStepMs + DecodeStepMsPerSequence × active) and the
// KV capacity. Zero means "not in this profile" (the caller keeps its
// default).
type TimingProfile struct {
	PrefillTokensPerSecondPerGPU          float64
	DecodeStepMs, DecodeStepMsPerSequence float64
	// KvCapacityBlocks is the capacity in blocks when the profile counts
	// blocks; KvCapacityTokens when it counts tokens (Dynamo's planner
	// profile: max_kv_tokens), see CapacityBlocks.
	KvCapacityBlocks uint64
	KvCapacityTokens uint64
	// Source names the file, its format and how the numbers were derived.
	Source string
}

// CapacityBlocks returns the KV capacity in blocks of blockSize tokens:
// KvCapacityBlocks when set, else KvCapacityTokens / blockSize rounded down
// (0 when neither is known or blockSize is not positive).
func (p TimingProfile) CapacityBlocks(blockSize int) uint64 {
	if p.KvCapacityBlocks > 0 {
		return p.KvCapacityBlocks
	}
	if blockSize <= 0 {
		return 0
	}
	return p.KvCapacityTokens / uint64(blockSize)
}

// MaxProfileBytes bounds a profile file.
const MaxProfileBytes = 16 << 20

// maxProfilePoints bounds the points of one profile curve.
const maxProfilePoints = 1 << 20

// ParseTimingProfile reads a timing profile in one of the text formats
// upstream documents (JSON or YAML; name labels errors and Source):
//
//   - Dynamo's planner profiling raw data, the JSON the mocker's
//     --planner-profile-data and the planner read from a profile directory:
//     prefill_raw_data.json (prefill_isl, prefill_ttft in ms,
//     prefill_thpt_per_gpu in tokens/s), decode_raw_data.json (x_kv_usage,
//     y_context_length, z_itl in ms, z_thpt_per_gpu, max_kv_tokens), either
//     file alone, or the ConfigMap the profiler writes with both under
//     data["prefill_raw_data.json"] and data["decode_raw_data.json"];
//   - a DynoSim prediction input (see Spec) whose workers use
//     timing.type: fixed (prefill_ms, decode_ms) and, optionally,
//     kv_cache.capacity.type: fixed (blocks).
//
// Mocker-format and profiler .npz files are binary NumPy archives and are
// refused with an error saying so. How each format is reduced to the linear
// model is documented on the derive functions and in the package README.
func ParseTimingProfile(r io.Reader, name string) (TimingProfile, error) {
	label := name
	if label == "" {
		label = "timing profile"
	}
	data, err := io.ReadAll(io.LimitReader(r, MaxProfileBytes+1))
	if err != nil {
		return TimingProfile{}, fmt.Errorf("read %s: %w", label, err)
	}
	if len(data) > MaxProfileBytes {
		return TimingProfile{}, fmt.Errorf("%s is larger than %d MiB; a timing profile is small", label, MaxProfileBytes>>20)
	}
	if bytes.HasPrefix(data, []byte("PK\x03\x04")) || bytes.HasPrefix(data, []byte("\x93NUMPY")) {
		return TimingProfile{}, fmt.Errorf("%s is a binary NumPy archive (.npz); pass the profiler's prefill_raw_data.json / decode_raw_data.json (or their ConfigMap) instead", label)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return TimingProfile{}, fmt.Errorf("%s is empty", label)
	}
	// A profile is a file someone else may have written: its anchors and
	// aliases may not expand it beyond a bound proportional to its size.
	js, err := boundedyaml.ToJSON(data)
	var ee *boundedyaml.ExpansionError
	if errors.As(err, &ee) {
		return TimingProfile{}, fmt.Errorf("%s: %w", label, err)
	}
	if err != nil {
		return TimingProfile{}, fmt.Errorf("%s is not JSON or YAML: %w", label, err)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(js, &top); err != nil || top == nil {
		return TimingProfile{}, fmt.Errorf("%s: a timing profile is a JSON/YAML object", label)
	}
	var p TimingProfile
	switch {
	case has(top, "prefill_isl") || has(top, "x_kv_usage"):
		p, err = plannerProfile(js, js, label)
	case has(top, "kind") && has(top, "data"):
		p, err = plannerConfigMap(top, label)
	case has(top, "engine"):
		p, err = specProfile(js, label)
	default:
		return TimingProfile{}, fmt.Errorf("%s: not a known timing profile (expected Dynamo planner raw data with prefill_isl / x_kv_usage, its ConfigMap, or a DynoSim spec with an engine section)", label)
	}
	if err != nil {
		return TimingProfile{}, err
	}
	return p, nil
}

func has(m map[string]json.RawMessage, k string) bool { _, ok := m[k]; return ok }

// plannerRaw is the union of prefill_raw_data.json and decode_raw_data.json.
type plannerRaw struct {
	PrefillISL        []float64 `json:"prefill_isl"`
	PrefillTTFT       []float64 `json:"prefill_ttft"`
	PrefillThptPerGPU []float64 `json:"prefill_thpt_per_gpu"`

	XKvUsage       []float64 `json:"x_kv_usage"`
	YContextLength []float64 `json:"y_context_length"`
	ZItl           []float64 `json:"z_itl"`
	ZThptPerGPU    []float64 `json:"z_thpt_per_gpu"`
	MaxKvTokens    *float64  `json:"max_kv_tokens"`
}

// plannerConfigMap reads the profiler's ConfigMap (data holds the two files
// as strings).
func plannerConfigMap(top map[string]json.RawMessage, label string) (TimingProfile, error) {
	var kind string
	_ = json.Unmarshal(top["kind"], &kind)
	if kind != "ConfigMap" {
		return TimingProfile{}, fmt.Errorf("%s: a %q object is not a timing profile (expected the planner profile ConfigMap)", label, kind)
	}
	var data map[string]string
	if err := json.Unmarshal(top["data"], &data); err != nil {
		return TimingProfile{}, fmt.Errorf("%s: ConfigMap data: %w", label, err)
	}
	pre, dec := data["prefill_raw_data.json"], data["decode_raw_data.json"]
	if pre == "" && dec == "" {
		return TimingProfile{}, fmt.Errorf("%s: the ConfigMap has neither prefill_raw_data.json nor decode_raw_data.json", label)
	}
	return plannerProfile([]byte(orEmptyObject(pre)), []byte(orEmptyObject(dec)), label)
}

func orEmptyObject(s string) string {
	if strings.TrimSpace(s) == "" {
		return "{}"
	}
	return s
}

func plannerProfile(prefillJSON, decodeJSON []byte, label string) (TimingProfile, error) {
	var pre, dec plannerRaw
	if err := json.Unmarshal(prefillJSON, &pre); err != nil {
		return TimingProfile{}, fmt.Errorf("%s: prefill raw data: %w", label, err)
	}
	if err := json.Unmarshal(decodeJSON, &dec); err != nil {
		return TimingProfile{}, fmt.Errorf("%s: decode raw data: %w", label, err)
	}
	p := TimingProfile{}
	var parts []string
	if len(pre.PrefillISL) > 0 || len(pre.PrefillThptPerGPU) > 0 {
		thpt, desc, err := derivePrefill(pre)
		if err != nil {
			return TimingProfile{}, fmt.Errorf("%s: %w", label, err)
		}
		p.PrefillTokensPerSecondPerGPU = thpt
		parts = append(parts, desc)
	}
	if len(dec.XKvUsage) > 0 || dec.MaxKvTokens != nil {
		base, slope, tokens, desc, err := deriveDecode(dec)
		if err != nil {
			return TimingProfile{}, fmt.Errorf("%s: %w", label, err)
		}
		p.DecodeStepMs, p.DecodeStepMsPerSequence, p.KvCapacityTokens = base, slope, tokens
		parts = append(parts, desc)
	}
	if len(parts) == 0 {
		return TimingProfile{}, fmt.Errorf("%s: the planner profile has no prefill or decode points", label)
	}
	p.Source = label + ": Dynamo planner profile (" + strings.Join(parts, "; ") + ")"
	return p, nil
}

// derivePrefill reduces the prefill curve to one throughput: the rate at
// which one GPU processes every profiled prompt once, Σ isl / Σ (isl / thpt)
// (the ISL-weighted harmonic mean of prefill_thpt_per_gpu). prefill_ttft is
// validated but not used: it is per worker, and the worker's GPU count is not
// in the file.
func derivePrefill(r plannerRaw) (float64, string, error) {
	n := len(r.PrefillISL)
	if n == 0 || n > maxProfilePoints {
		return 0, "", fmt.Errorf("prefill_isl has %d points (want 1 to %d)", n, maxProfilePoints)
	}
	if len(r.PrefillThptPerGPU) != n || (len(r.PrefillTTFT) != 0 && len(r.PrefillTTFT) != n) {
		return 0, "", fmt.Errorf("prefill_isl, prefill_ttft and prefill_thpt_per_gpu have different lengths (%d, %d, %d)", n, len(r.PrefillTTFT), len(r.PrefillThptPerGPU))
	}
	if err := positive("prefill_isl", r.PrefillISL); err != nil {
		return 0, "", err
	}
	if err := positive("prefill_thpt_per_gpu", r.PrefillThptPerGPU); err != nil {
		return 0, "", err
	}
	if err := nonNegative("prefill_ttft", r.PrefillTTFT); err != nil {
		return 0, "", err
	}
	tokens, seconds := 0.0, 0.0
	for i := range n {
		tokens += r.PrefillISL[i]
		seconds += r.PrefillISL[i] / r.PrefillThptPerGPU[i]
	}
	thpt := tokens / seconds
	if !finite(thpt) || thpt <= 0 {
		return 0, "", errors.New("prefill throughput does not compute to a finite positive number")
	}
	return thpt, fmt.Sprintf("prefill: %d points, ISL-weighted harmonic mean of prefill_thpt_per_gpu", n), nil
}

// deriveDecode fits the decode step linearly in the active sequences. Each
// profiled point runs x_kv_usage × max_kv_tokens KV tokens at context length
// y_context_length, i.e. n = x × max_kv_tokens / y active sequences; an
// ordinary least-squares line z_itl = base + slope × n is fitted over the
// points. A negative slope (noise) is clamped to 0 with base the mean ITL; a
// negative intercept is clamped to 0 with the slope refitted through the
// origin. max_kv_tokens is the KV capacity in tokens.
func deriveDecode(r plannerRaw) (base, slope float64, tokens uint64, desc string, err error) {
	n := len(r.XKvUsage)
	if n == 0 || n > maxProfilePoints {
		return 0, 0, 0, "", fmt.Errorf("x_kv_usage has %d points (want 1 to %d)", n, maxProfilePoints)
	}
	if len(r.YContextLength) != n || len(r.ZItl) != n || (len(r.ZThptPerGPU) != 0 && len(r.ZThptPerGPU) != n) {
		return 0, 0, 0, "", fmt.Errorf("x_kv_usage, y_context_length, z_itl and z_thpt_per_gpu have different lengths (%d, %d, %d, %d)", n, len(r.YContextLength), len(r.ZItl), len(r.ZThptPerGPU))
	}
	if r.MaxKvTokens == nil {
		return 0, 0, 0, "", errors.New("decode raw data has no max_kv_tokens")
	}
	maxKv := *r.MaxKvTokens
	if !finite(maxKv) || maxKv < 1 || maxKv > 1e15 || maxKv != math.Trunc(maxKv) {
		return 0, 0, 0, "", fmt.Errorf("max_kv_tokens %v is not a positive whole number", maxKv)
	}
	if err := nonNegative("x_kv_usage", r.XKvUsage); err != nil {
		return 0, 0, 0, "", err
	}
	for i, x := range r.XKvUsage {
		if x > 1 {
			return 0, 0, 0, "", fmt.Errorf("x_kv_usage[%d] = %v is above 1 (it is a fraction of max_kv_tokens)", i, x)
		}
	}
	if err := positive("y_context_length", r.YContextLength); err != nil {
		return 0, 0, 0, "", err
	}
	if err := positive("z_itl", r.ZItl); err != nil {
		return 0, 0, 0, "", err
	}
	if err := nonNegative("z_thpt_per_gpu", r.ZThptPerGPU); err != nil {
		return 0, 0, 0, "", err
	}
	xs := make([]float64, n)
	for i := range n {
		xs[i] = r.XKvUsage[i] * maxKv / r.YContextLength[i]
	}
	base, slope, how := fitLine(xs, r.ZItl)
	if !finite(base) || !finite(slope) {
		return 0, 0, 0, "", errors.New("the decode fit does not compute to finite numbers")
	}
	return base, slope, uint64(maxKv), fmt.Sprintf("decode: %d points, z_itl = %.4g + %.4g × active sequences (%s), capacity max_kv_tokens", n, base, slope, how), nil
}

// fitLine fits y = a + b·x by least squares, clamping as deriveDecode says.
func fitLine(xs, ys []float64) (a, b float64, how string) {
	n := float64(len(xs))
	var sx, sy float64
	for i := range xs {
		sx += xs[i]
		sy += ys[i]
	}
	mx, my := sx/n, sy/n
	var sxx, sxy, sxx0, sxy0 float64
	for i := range xs {
		dx := xs[i] - mx
		sxx += float64(dx * dx)
		sxy += float64(dx * (ys[i] - my))
		sxx0 += float64(xs[i] * xs[i])
		sxy0 += float64(xs[i] * ys[i])
	}
	if sxx == 0 || len(xs) < 2 {
		return my, 0, "one distinct batch size: flat at the mean"
	}
	b = sxy / sxx
	a = my - float64(b*mx)
	switch {
	case b < 0:
		return my, 0, "negative slope clamped: flat at the mean"
	case a < 0 && sxx0 > 0:
		return 0, sxy0 / sxx0, "negative intercept clamped: fitted through the origin"
	}
	return a, b, "least squares"
}

// specProfile reads the fixed timing and capacity of a DynoSim spec.
// decode_ms is a fixed time per decode pass whatever the batch, so the slope
// is 0; prefill_ms is a fixed time per prefill pass, taken as processing a
// full chunk of scheduler.max_batched_tokens (upstream's default 8192 when
// omitted) on the role's tensor × pipeline × attention_data GPUs.
func specProfile(js []byte, label string) (TimingProfile, error) {
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	var spec Spec
	if err := dec.Decode(&spec); err != nil {
		return TimingProfile{}, fmt.Errorf("%s: not a DynoSim spec: %w", label, err)
	}
	w := spec.Engine.Workers
	prefillRole, decodeRole := w.Aggregated, w.Aggregated
	if w.Prefill != nil || w.Decode != nil {
		prefillRole, decodeRole = w.Prefill, w.Decode
	}
	p := TimingProfile{}
	var parts []string
	if t := timingOf(prefillRole); t != nil && t.PrefillMs != nil {
		ms := *t.PrefillMs
		if !finite(ms) || ms <= 0 {
			return TimingProfile{}, fmt.Errorf("%s: prefill_ms %v is not a finite positive number", label, ms)
		}
		chunk := 8192.0
		if s := prefillRole.Scheduler; s != nil && s.MaxBatchedTokens != nil {
			if *s.MaxBatchedTokens <= 0 {
				return TimingProfile{}, fmt.Errorf("%s: max_batched_tokens %d is not positive", label, *s.MaxBatchedTokens)
			}
			chunk = float64(*s.MaxBatchedTokens)
		}
		par := prefillRole.Parallelism
		gpus := float64(max(1, par.Tensor) * max(1, par.Pipeline) * max(1, par.AttentionData))
		p.PrefillTokensPerSecondPerGPU = chunk / (ms / 1000) / gpus
		parts = append(parts, fmt.Sprintf("prefill: %g tokens per %g ms pass on %g GPUs", chunk, ms, gpus))
	}
	if t := timingOf(decodeRole); t != nil && t.DecodeMs != nil {
		ms := *t.DecodeMs
		if !finite(ms) || ms < 0 {
			return TimingProfile{}, fmt.Errorf("%s: decode_ms %v is not a finite non-negative number", label, ms)
		}
		p.DecodeStepMs = ms
		parts = append(parts, fmt.Sprintf("decode: fixed %g ms per pass", ms))
	}
	if decodeRole != nil && decodeRole.KvCache != nil && decodeRole.KvCache.Capacity != nil {
		if c := decodeRole.KvCache.Capacity; c.Type == "fixed" && c.Blocks != nil {
			p.KvCapacityBlocks = *c.Blocks
			parts = append(parts, fmt.Sprintf("capacity: %d blocks", *c.Blocks))
		}
	}
	if len(parts) == 0 {
		return TimingProfile{}, fmt.Errorf("%s: the DynoSim spec has no fixed timing (timing.type: fixed with prefill_ms / decode_ms) or fixed capacity; default and polynomial timing are computed inside AISimulate and carry no numbers", label)
	}
	p.Source = label + ": DynoSim spec (" + strings.Join(parts, "; ") + ")"
	return p, nil
}

func timingOf(w *Worker) *Timing {
	if w == nil || w.Timing == nil || w.Timing.Type != "fixed" {
		return nil
	}
	return w.Timing
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

func positive(name string, vs []float64) error {
	for i, v := range vs {
		if !finite(v) || v <= 0 || v > 1e15 {
			return fmt.Errorf("%s[%d] = %v is not a finite positive number", name, i, v)
		}
	}
	return nil
}

func nonNegative(name string, vs []float64) error {
	for i, v := range vs {
		if !finite(v) || v < 0 || v > 1e15 {
			return fmt.Errorf("%s[%d] = %v is not a finite non-negative number", name, i, v)
		}
	}
	return nil
}
