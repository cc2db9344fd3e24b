package dynosim

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func parseFile(t *testing.T, path string) TimingProfile {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := ParseTimingProfile(f, filepath.Base(path))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return p
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-6*math.Max(1, math.Abs(b)) }

func TestParsePlannerPrefill(t *testing.T) {
	p := parseFile(t, filepath.Join("testdata", "profiles", "prefill_raw_data.json"))
	isl := []float64{128, 512, 1024, 2048, 4096}
	thpt := []float64{14000, 18000, 19500, 19500, 18500}
	tok, sec := 0.0, 0.0
	for i := range isl {
		tok += isl[i]
		sec += isl[i] / thpt[i]
	}
	if !near(p.PrefillTokensPerSecondPerGPU, tok/sec) || p.DecodeStepMs != 0 || p.KvCapacityTokens != 0 {
		t.Errorf("prefill profile: %+v, want throughput %v", p, tok/sec)
	}
	if !strings.Contains(p.Source, "prefill_raw_data.json") {
		t.Errorf("source %q", p.Source)
	}
}

func TestParsePlannerDecode(t *testing.T) {
	p := parseFile(t, filepath.Join("testdata", "profiles", "decode_raw_data.json"))
	// The fixture is built on itl = 8 + 0.05 × active sequences exactly:
	// 0.05 × 163840 / 1024 = 8 sequences → 8.4 ms, and so on.
	if !near(p.DecodeStepMs, 8) || !near(p.DecodeStepMsPerSequence, 0.05) {
		t.Errorf("decode fit: base %v slope %v, want 8 and 0.05", p.DecodeStepMs, p.DecodeStepMsPerSequence)
	}
	if p.KvCapacityTokens != 163840 || p.CapacityBlocks(16) != 10240 || p.CapacityBlocks(0) != 0 {
		t.Errorf("capacity: %+v", p)
	}
}

func TestParsePlannerConfigMap(t *testing.T) {
	p := parseFile(t, filepath.Join("testdata", "profiles", "planner-profile-configmap.yaml"))
	if p.PrefillTokensPerSecondPerGPU <= 19000 || p.PrefillTokensPerSecondPerGPU >= 20000 {
		t.Errorf("prefill %v", p.PrefillTokensPerSecondPerGPU)
	}
	// (0.1×65536/2048, 10 ms) and (0.5×65536/2048, 14 ms): 3.2 → 10, 16 → 14.
	if !near(p.DecodeStepMsPerSequence, 4/12.8) || p.KvCapacityTokens != 65536 {
		t.Errorf("decode %+v", p)
	}
}

// TestParseUpstreamSpec: upstream's own DynoSim example with fixed timing.
func TestParseUpstreamSpec(t *testing.T) {
	p := parseFile(t, filepath.Join("testdata", "upstream", "aisimulate-dynamo-planner-prediction.yaml"))
	// prefill_ms 1 per pass of max_batched_tokens 2048 on 1 GPU; decode_ms 1;
	// fixed capacity 256 blocks.
	if !near(p.PrefillTokensPerSecondPerGPU, 2048000) || p.DecodeStepMs != 1 || p.DecodeStepMsPerSequence != 0 || p.KvCapacityBlocks != 256 {
		t.Errorf("spec profile: %+v", p)
	}
	if p.CapacityBlocks(64) != 256 {
		t.Errorf("CapacityBlocks prefers blocks")
	}
	// Default timing has no numbers.
	f, _ := os.ReadFile(filepath.Join("testdata", "upstream", "user-guide-engine-aggregated.yaml"))
	if _, err := ParseTimingProfile(bytes.NewReader(f), "agg"); err == nil || !strings.Contains(err.Error(), "no fixed timing") {
		t.Errorf("default timing: err %v", err)
	}
}

func TestFitLine(t *testing.T) {
	a, b, _ := fitLine([]float64{1, 2, 3}, []float64{5, 4, 3})
	if a != 4 || b != 0 {
		t.Errorf("negative slope: %v %v", a, b)
	}
	a, b, _ = fitLine([]float64{4, 4}, []float64{2, 4})
	if a != 3 || b != 0 {
		t.Errorf("one x: %v %v", a, b)
	}
	a, b, _ = fitLine([]float64{1, 2}, []float64{1, 3})
	if a != 0 || !near(b, 7.0/5) {
		t.Errorf("negative intercept: %v %v", a, b)
	}
}

func TestParseTimingProfileHostile(t *testing.T) {
	huge := bytes.Repeat([]byte(" "), MaxProfileBytes+1)
	for name, tc := range map[string]struct {
		in   []byte
		want string
	}{
		"empty":           {nil, "empty"},
		"npz":             {[]byte("PK\x03\x04rest"), "binary NumPy archive"},
		"npy":             {[]byte("\x93NUMPY\x01\x00"), "binary NumPy archive"},
		"huge":            {huge, "larger than"},
		"array":           {[]byte("[1,2]"), "object"},
		"unknown":         {[]byte(`{"foo": 1}`), "not a known timing profile"},
		"not yaml":        {[]byte("{{{"), "not JSON or YAML"},
		"NaN yaml":        {[]byte("prefill_isl: [1024]\nprefill_thpt_per_gpu: [.nan]\n"), ""},
		"inf yaml":        {[]byte("prefill_isl: [1024]\nprefill_thpt_per_gpu: [.inf]\n"), ""},
		"overflow":        {[]byte(`{"prefill_isl": [1e999], "prefill_thpt_per_gpu": [1]}`), ""},
		"negative thpt":   {[]byte(`{"prefill_isl": [1024], "prefill_thpt_per_gpu": [-5]}`), "not a finite positive number"},
		"zero isl":        {[]byte(`{"prefill_isl": [0], "prefill_thpt_per_gpu": [5]}`), "not a finite positive number"},
		"lengths":         {[]byte(`{"prefill_isl": [1, 2], "prefill_thpt_per_gpu": [5]}`), "different lengths"},
		"string values":   {[]byte(`{"prefill_isl": ["a"], "prefill_thpt_per_gpu": [5]}`), "prefill raw data"},
		"no max_kv":       {[]byte(`{"x_kv_usage": [0.1], "y_context_length": [10], "z_itl": [5]}`), "max_kv_tokens"},
		"fraction max_kv": {[]byte(`{"x_kv_usage": [0.1], "y_context_length": [10], "z_itl": [5], "max_kv_tokens": 10.5}`), "whole number"},
		"usage above 1":   {[]byte(`{"x_kv_usage": [1.5], "y_context_length": [10], "z_itl": [5], "max_kv_tokens": 100}`), "above 1"},
		"negative itl":    {[]byte(`{"x_kv_usage": [0.5], "y_context_length": [10], "z_itl": [-5], "max_kv_tokens": 100}`), "z_itl"},
		"zero context":    {[]byte(`{"x_kv_usage": [0.5], "y_context_length": [0], "z_itl": [5], "max_kv_tokens": 100}`), "y_context_length"},
		"other kind":      {[]byte("kind: Pod\ndata: {}\n"), "not a timing profile"},
		"empty cm":        {[]byte("kind: ConfigMap\ndata: {}\n"), "neither"},
		"cm bad json":     {[]byte("kind: ConfigMap\ndata:\n  prefill_raw_data.json: '{'\n"), "prefill raw data"},
		"spec unknown":    {[]byte("engine: {mode: aggregated, bogus: 1}\n"), "not a DynoSim spec"},
		"spec neg ms": {[]byte("engine:\n  mode: aggregated\n  model: m\n  hardware: h\n  workers:\n    aggregated:\n      parallelism: {replicas: 1, tensor: 1, pipeline: 1, attention_data: 1, moe_tensor: 1, moe_expert: 1}\n      timing: {type: fixed, prefill_ms: -1, decode_ms: 1}\n"),
			"prefill_ms"},
		"spec NaN ms": {[]byte("engine:\n  mode: aggregated\n  model: m\n  hardware: h\n  workers:\n    aggregated:\n      parallelism: {replicas: 1, tensor: 1, pipeline: 1, attention_data: 1, moe_tensor: 1, moe_expert: 1}\n      timing: {type: fixed, prefill_ms: 1, decode_ms: .nan}\n"),
			""},
	} {
		t.Run(name, func(t *testing.T) {
			p, err := ParseTimingProfile(bytes.NewReader(tc.in), name)
			if err == nil {
				t.Fatalf("no error; got %+v", p)
			}
			if tc.want != "" && !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %q, want %q", err, tc.want)
			}
		})
	}
}

func FuzzParseTimingProfile(f *testing.F) {
	for _, s := range []string{`{"prefill_isl":[1],"prefill_thpt_per_gpu":[1]}`, `{"x_kv_usage":[0.5],"y_context_length":[1],"z_itl":[1],"max_kv_tokens":1}`, "kind: ConfigMap\ndata: {}\n", "engine: {}\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParseTimingProfile(bytes.NewReader(data), "fuzz")
		if err != nil {
			return
		}
		for _, v := range []float64{p.PrefillTokensPerSecondPerGPU, p.DecodeStepMs, p.DecodeStepMsPerSequence} {
			if !finite(v) || v < 0 {
				t.Fatalf("accepted a non-finite or negative value: %+v", p)
			}
		}
	})
}
