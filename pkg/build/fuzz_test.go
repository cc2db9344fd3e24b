package build

import (
	"encoding/json"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw/decode"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/frontend"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/kube"
)

// dwmSeeds are DiscoveryMetadata payloads (spec.data, or an etcd value's object).
var dwmSeeds = []string{
	`{"endpoints":{"ns/backend/generate/1a":{"type":"Endpoint","namespace":"ns","component":"backend","endpoint":"generate","instance_id":26,"transport":{"tcp":"10.0.0.1:4000/x"}}}}`,
	`{"model_cards":{"m":{"type":"Model","namespace":"ns","component":"prefill","endpoint":"generate","instance_id":18446744073709551615,"card_json":{"display_name":"Qwen/Qwen3-32B","kv_cache_block_size":16,"worker_type":"prefill","model_type":"Prefill","runtime_config":{"total_kv_blocks":1000,"max_num_batched_tokens":8192,"stable_routing_id":"pod-0","disaggregated_endpoint":{"a":1}},"router_config":{"router_temperature":0.5}}}}}`,
	`{"endpoints":{"k":{"type":"Endpoint","instance_id":"9007199254740993"}}}`,
	`{"endpoints":{"ns/c/e/ffffffffffffffff":{"type":"Endpoint"}}}`,
	`{"endpoints":{"k":{"type":"Endpoint","instance_id":-1}}}`,
	`{"endpoints":{"k":{"type":"Endpoint","instance_id":1.5}}}`,
	`{"endpoints":null,"x":[1,2]}`,
	`{"model_cards":{"m":{"type":"Model","instance_id":1,"card_json":{"kv_cache_block_size":4294967296}}}}`,
	`{"model_cards":{"m":{"type":"Model","instance_id":1,"card_json":{"worker_type":7}}}}`,
	`[1]`, `null`, `{}`, `"x"`,
}

// FuzzDiscoveryDecoders: DWM spec.data and etcd values never panic the
// decoders or Build, and the fast DWM decoder agrees with the general one on
// every input it accepts.
func FuzzDiscoveryDecoders(f *testing.F) {
	for _, s := range dwmSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 64<<10 {
			return
		}
		if fast, ok := bldFastDWM(data, "s"); ok {
			general, err := generalDWM(data)
			if err != nil {
				t.Fatalf("the fast decoder accepted what the general one rejects (%v)", err)
			}
			if !reflect.DeepEqual(fast, general) {
				t.Fatalf("fast and general decoders differ:\nfast    %s\ngeneral %s", dumpInstances(fast), dumpInstances(general))
			}
		}
		// Through Build: as a DWM's spec.data and as etcd values.
		b := &raw.Bundle{Etcd: []raw.EtcdKeyValue{
			{Key: "v1/instances/ns/backend/generate/694d9a1b2c3d4e5f", Value: string(data)},
			{Key: "v1/mdc/ns/backend/generate/694d9a1b2c3d4e5f", Value: string(data)},
		}}
		var spec any
		if json.Unmarshal(data, &spec) == nil {
			b.Objects = decode.FromObjects([]raw.Object{{
				"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoWorkerMetadata",
				"metadata": map[string]any{"name": "w-0", "namespace": "ns", "labels": map[string]any{kube.SrcLabelDeploymentName: "d"}},
				"spec":     map[string]any{"data": spec},
			}, {
				"apiVersion": "v1", "kind": "Pod",
				"metadata": map[string]any{"name": "w-0", "namespace": "ns", "labels": map[string]any{kube.SrcLabelDeploymentName: "d"}},
			}})
		}
		if _, err := Build(b); err != nil {
			t.Fatalf("Build: %v", err) // a recovered panic is reported as an error
		}
	})
}

// generalDWM is decodeDWM's general path, on its own.
func generalDWM(data []byte) ([]*bldInstance, error) {
	var maps map[string]json.RawMessage
	if err := json.Unmarshal(data, &maps); err != nil {
		return nil, err
	}
	bd := &bldBuilder{}
	var out []*bldInstance
	for _, mk := range bldSortedKeys(maps) {
		if bldIsNull(maps[mk]) {
			continue
		}
		var entries map[string]json.RawMessage
		if err := json.Unmarshal(maps[mk], &entries); err != nil {
			continue
		}
		for _, ek := range bldSortedKeys(entries) {
			bi, err := bd.decodeInstance(entries[ek], ek, "s")
			if err != nil {
				return nil, err
			}
			if bi != nil {
				out = append(out, bi)
			}
		}
	}
	return out, nil
}

func dumpInstances(bis []*bldInstance) string {
	var b strings.Builder
	for _, bi := range bis {
		j, _ := json.Marshal(bi.inst)
		b.WriteString(bi.key + " " + string(j) + " host=" + bi.host + " stable=" + bi.stableID + " legacy=" + bi.legacyPrefill + " card=" + strconv.FormatBool(bi.hasCard) + "; ")
	}
	return b.String()
}

// FuzzPromText: the Prometheus text parser never panics, and what it parses
// re-serializes to text that parses to the same samples.
func FuzzPromText(f *testing.F) {
	for _, s := range []string{
		"# HELP dynamo_frontend_inflight x\n# TYPE dynamo_frontend_inflight gauge\ndynamo_frontend_inflight{model=\"Qwen/Qwen3-32B\"} 3\n",
		"a{b=\"c\\\"d\\\\e\\nf\",g=\"\"} +Inf 1700000000000\nb NaN\nc -Inf\nd 1e-9\n",
		"x{} 1\ny{a=\"1\",} 2\nz{a=1} 3\n{a=\"b\"} 4\n",
		"m 1 2 3\n\r\n   \t\n#\n",
		"dynamo_component_kv_cache_active_blocks{dynamo_component=\"backend\",worker_id=\"18446744073709551615\"} 12\n",
		"ä 1\nm{ä=\"x\"} 2\nm{a=\"\xff\"} 3\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if len(text) > 64<<10 {
			return
		}
		res := bldParsePromText(text, nil)
		if res.errors > 0 && res.firstError == "" {
			t.Fatal("errors without a first error")
		}
		_, bad := frontend.NotPrometheusText([]byte(text))
		_ = bad
		var out strings.Builder
		for _, s := range res.samples {
			out.WriteString(promLine(s))
		}
		again := bldParsePromText(out.String(), nil)
		if again.errors != 0 || len(again.samples) != len(res.samples) {
			t.Fatalf("re-serialized text: %d errors (%s), %d samples, want %d:\n%s", again.errors, again.firstError, len(again.samples), len(res.samples), out.String())
		}
		for i := range res.samples {
			a, b := res.samples[i], again.samples[i]
			if a.name != b.name || !sameFloat(a.value, b.value) || !sameLabels(a.labels, b.labels) {
				t.Fatalf("sample %d: %+v, re-parsed %+v", i, a, b)
			}
		}
	})
}

func promLine(s bldSample) string {
	var b strings.Builder
	b.WriteString(s.name)
	if len(s.labels) > 0 {
		keys := make([]string, 0, len(s.labels))
		for k := range s.labels {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			v := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s.labels[k])
			b.WriteString(k + `="` + v + `"`)
		}
		b.WriteByte('}')
	}
	b.WriteByte(' ')
	switch {
	case math.IsNaN(s.value):
		b.WriteString("NaN")
	case math.IsInf(s.value, 1):
		b.WriteString("+Inf")
	case math.IsInf(s.value, -1):
		b.WriteString("-Inf")
	default:
		b.WriteString(strconv.FormatFloat(s.value, 'g', -1, 64))
	}
	b.WriteByte('\n')
	return b.String()
}

func sameFloat(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }

func sameLabels(a, b map[string]string) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	return reflect.DeepEqual(a, b)
}
