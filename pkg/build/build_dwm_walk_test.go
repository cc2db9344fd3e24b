package build

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/jsonscan"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw/decode"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/capture"
)

// The DWM walker (pkg/raw/decode's WalkDiscovery, which the sources run on
// every DWM) read as Build reads its instances (bldDiscoveryInstances) must
// give exactly what the roundtrip json.Marshal + bldFastDWM gives whenever it
// says ok. These tests check it on every DWM of the example captures, on the
// scale generator's shape and on edge cases, require it to handle the real
// shapes itself (else the speed-up is lost silently), and fuzz it.

// bldWalkDWMNoRecover is the walker and Build's reading of its instances.
func bldWalkDWMNoRecover(v any, source string) ([]*bldInstance, bool) {
	insts, ok := decode.WalkDiscovery(v)
	if !ok {
		return nil, false
	}
	return bldDiscoveryInstances(insts, source), true
}

// bldWalkDWM is bldWalkDWMNoRecover, a panic meaning "cannot tell".
func bldWalkDWM(v any, source string) (out []*bldInstance, ok bool) {
	defer func() {
		if recover() != nil {
			out, ok = nil, false
		}
	}()
	return bldWalkDWMNoRecover(v, source)
}

// dwmRoundtrip is the path the walker replaces.
func dwmRoundtrip(v any) ([]*bldInstance, bool) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, false
	}
	return bldFastDWM(data, "dwm/w")
}

// checkDWMWalk fails when the walker says ok with another result than the
// roundtrip's (or when the roundtrip rejects what it accepts).
func checkDWMWalk(t *testing.T, v any) (walked bool) {
	t.Helper()
	got, ok := bldWalkDWMNoRecover(v, "dwm/w")
	if !ok {
		return false
	}
	want, wantOK := dwmRoundtrip(v)
	if !wantOK {
		t.Fatalf("the walker accepted what the roundtrip rejects: %s", dumpInstances(got))
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("walker and roundtrip differ:\nwalker    %s\nroundtrip %s", dumpInstances(got), dumpInstances(want))
	}
	return true
}

// dwmJSON decodes JSON as the capture reader does (int64, float64 or
// json.Number for numbers).
func dwmJSON(t testing.TB, s string) any {
	t.Helper()
	m, err := capture.DecodeJSONObject([]byte(`{"data":` + s + `}`))
	if err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return m["data"]
}

// dwmScaleJSON is the DWM spec.data hack/gen-examples writes for the scale
// capture (deployment.dwm and deployment.card; the benchmark's deployment
// publishes the zone domain with a required policy). weight adds
// kv_transfer_preferred_weight as the preferred-policy examples do.
func dwmScaleJSON(i int, role string, weight bool) string {
	comp := "prefill"
	needs := `[["decode"]]`
	if role == "decode" {
		comp, needs = "backend", `[]`
	}
	zone := fmt.Sprintf("zone-%02d", i%10)
	id := (uint64(0x16304f1d5c7a00) + uint64(i+1)*0x1f3) & 0x1FFFFFFFFFFFFF
	ip := fmt.Sprintf("10.%d.%d.%d", 64+i/65536, (i/256)%256, i%256)
	key := fmt.Sprintf("bench-scale/%s/generate/%x", comp, id)
	pod := fmt.Sprintf("scale-0-%s-%s-%d", comp, zone, i)
	w := ""
	if weight {
		w = `,"kv_transfer_preferred_weight":0.85`
	}
	rc := fmt.Sprintf(`{"data_parallel_size":1,"data_parallel_start_rank":0,"enable_eagle":false,"enable_local_indexer":true,"exclude_tools_when_tool_choice_none":true,`+
		`"kv_transfer_domain":"zone","kv_transfer_enforcement":"required","max_num_batched_tokens":16384,"max_num_seqs":256,"reasoning_parser":null,`+
		`"stable_routing_id":%q,"structural_tag_mode":"off","structural_tag_schema":"auto","structural_tag_scope":"auto",`+
		`"taints":["dynamo.topology/zone=%s"],"tool_call_parser":null,"topology_domains":{"zone":%q},"total_kv_blocks":61034%s}`, pod, zone, zone, w)
	card := fmt.Sprintf(`{"context_length":131072,"display_name":"Qwen/Qwen3-32B","kv_cache_block_size":16,"media_decoder":null,"media_fetcher":null,`+
		`"migration_limit":0,"model_info":null,"model_input":"Tokens","model_type":"Chat | Completions","needs":%s,"runtime_config":%s,`+
		`"slug":"qwen_qwen3-32b","tokenizer":null,"worker_type":%q}`, needs, rc, role)
	return fmt.Sprintf(`{"endpoints":{%q:{"type":"Endpoint","namespace":"bench-scale","component":%q,"endpoint":"generate","instance_id":%d,"transport":{"tcp":"%s:41233/%x/generate"}}},`+
		`"model_cards":{%q:{"type":"Model","namespace":"bench-scale","component":%q,"endpoint":"generate","instance_id":%d,"card_json":%s}},`+
		`"event_channels":{"namespace/bench-scale/component/%s/topic/kv-events/%x":{"type":"EventChannel","scope":{"kind":"component","namespace":"bench-scale","component":%q},`+
		`"topic":"kv-events","instance_id":%d,"transport":{"kind":"Zmq","config":{"endpoint":"tcp://%s:36011"}}}},"event_sources":{}}`,
		key, comp, id, ip, id, key, comp, id, card, comp, id^0x5a5a5a, comp, id^0x5a5a5a, ip)
}

// exampleDWMData is the spec.data of every DWM in the example captures and
// test fixtures, by file and name.
func exampleDWMData(t testing.TB) map[string]any {
	t.Helper()
	files, _ := filepath.Glob("../../examples/*.yaml")
	for _, dir := range []string{"captures", "build", "live"} {
		more, _ := filepath.Glob(filepath.Join("..", "..", "test", "fixtures", dir, "*.yaml"))
		files = append(files, more...)
	}
	out := map[string]any{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		b, err := capture.ParseWhole(data, f)
		if err != nil {
			continue // not a capture (RBAC manifests)
		}
		for _, m := range b.AsRead {
			u := &unstructured.Unstructured{Object: m}
			if u.GetKind() != "DynamoWorkerMetadata" {
				continue
			}
			raw, found, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "data")
			if found {
				out[filepath.Base(f)+"/"+u.GetName()] = raw
			}
		}
	}
	return out
}

// dwmEdgeCases are spec.data values (JSON) with what the walker must do with
// them: walk (and agree), or fall back (the roundtrip decides).
var dwmEdgeCases = []struct {
	name string
	json string
	walk bool
}{
	{"u64 id above 2^63", `{"e":{"k":{"type":"Endpoint","instance_id":18446744073709551615}}}`, true},
	{"u64 id as a string", `{"e":{"k":{"type":"Endpoint","instance_id":"18446744073709551615"}}}`, true},
	{"id 2^64", `{"e":{"k":{"type":"Endpoint","instance_id":18446744073709551616}}}`, false},
	{"id string with a leading zero", `{"e":{"k":{"type":"Endpoint","instance_id":"012"}}}`, false},
	{"id string not a number", `{"e":{"k":{"type":"Endpoint","instance_id":"x"}}}`, false},
	{"id string a float", `{"e":{"k":{"type":"Endpoint","instance_id":"1.5"}}}`, false},
	{"negative id", `{"e":{"k":{"type":"Endpoint","instance_id":-1}}}`, false},
	{"negative id of an event channel", `{"e":{"k":{"type":"EventChannel","instance_id":-1}}}`, true},
	{"float id", `{"e":{"k":{"type":"Endpoint","instance_id":16.0}}}`, false},
	{"fractional id", `{"e":{"k":{"type":"Endpoint","instance_id":1.5}}}`, false},
	{"float id of an event channel", `{"e":{"k":{"type":"EventChannel","instance_id":1.5}}}`, false},
	{"bool id", `{"e":{"k":{"type":"Endpoint","instance_id":true}}}`, false},
	{"id zero", `{"e":{"k":{"type":"Endpoint","instance_id":0}}}`, true},
	{"missing id", `{"e":{"k":{"type":"Endpoint"}}}`, false},
	{"null id", `{"e":{"k":{"type":"Model","instance_id":null}}}`, false},
	{"missing id of an event channel", `{"e":{"k":{"type":"EventChannel"}}}`, true},
	{"float block size", `{"m":{"k":{"type":"Model","instance_id":1,"card_json":{"kv_cache_block_size":16.0}}}}`, false},
	{"fractional block size", `{"m":{"k":{"type":"Model","instance_id":1,"card_json":{"kv_cache_block_size":16.5}}}}`, false},
	{"block size 2^31", `{"m":{"k":{"type":"Model","instance_id":1,"card_json":{"kv_cache_block_size":2147483648}}}}`, true},
	{"block size above 2^31", `{"m":{"k":{"type":"Model","instance_id":1,"card_json":{"kv_cache_block_size":2147483649}}}}`, false},
	{"block size above 2^31 on an Endpoint", `{"m":{"k":{"type":"Endpoint","instance_id":1,"card_json":{"kv_cache_block_size":2147483649}}}}`, true},
	{"block size 2^32", `{"m":{"k":{"type":"Endpoint","instance_id":1,"card_json":{"kv_cache_block_size":4294967296}}}}`, false},
	{"block size a string", `{"m":{"k":{"type":"Model","instance_id":1,"card_json":{"kv_cache_block_size":"16"}}}}`, false},
	{"negative block size", `{"m":{"k":{"type":"Model","instance_id":1,"card_json":{"kv_cache_block_size":-16}}}}`, false},
	{"u64 runtime fields", `{"m":{"k":{"type":"Model","instance_id":1,"card_json":{"runtime_config":{"total_kv_blocks":18446744073709551615,"max_num_seqs":0,"max_num_batched_tokens":9223372036854775807}}}}}`, true},
	{"runtime field too large", `{"m":{"k":{"type":"Model","instance_id":1,"card_json":{"runtime_config":{"total_kv_blocks":18446744073709551616}}}}}`, false},
	{"dp rank too large", `{"m":{"k":{"type":"Model","instance_id":1,"card_json":{"runtime_config":{"data_parallel_start_rank":4294967296}}}}}`, false},
	{"dp fields", `{"m":{"k":{"type":"Model","instance_id":1,"card_json":{"runtime_config":{"data_parallel_start_rank":4294967295,"data_parallel_size":8,"enable_eagle":true}}}}}`, true},
	{"weights", `{"m":{"a":{"type":"Model","instance_id":1,"card_json":{"runtime_config":{"kv_transfer_preferred_weight":1}}},"b":{"type":"Model","instance_id":2,"card_json":{"runtime_config":{"kv_transfer_preferred_weight":1e-7}}},"c":{"type":"Model","instance_id":3,"card_json":{"runtime_config":{"kv_transfer_preferred_weight":123456789012345678901234567890}}},"d":{"type":"Model","instance_id":4,"card_json":{"runtime_config":{"kv_transfer_preferred_weight":-0.0}}},"e":{"type":"Model","instance_id":5,"card_json":{"runtime_config":{"kv_transfer_preferred_weight":9007199254740993}}}}}`, true},
	{"weight out of range", `{"m":{"k":{"type":"Model","instance_id":1,"card_json":{"runtime_config":{"kv_transfer_preferred_weight":1e400}}}}}`, false},
	{"weight a string", `{"m":{"k":{"type":"Model","instance_id":1,"card_json":{"runtime_config":{"kv_transfer_preferred_weight":"0.5"}}}}}`, false},
	{"missing fields", `{"e":{"k":{"type":"Endpoint","instance_id":7}},"m":{"k":{"type":"Model","instance_id":7,"card_json":{}}},"r":{"k":{"type":"Model","instance_id":8,"card_json":{"runtime_config":{}}}}}`, true},
	{"null fields", `{"e":{"k":{"type":"Model","namespace":null,"component":null,"endpoint":null,"instance_id":3,"transport":null,"card_json":{"display_name":null,"kv_cache_block_size":null,"worker_type":null,"model_type":null,"router_config":null,"runtime_config":{"total_kv_blocks":null,"max_num_seqs":null,"max_num_batched_tokens":null,"data_parallel_start_rank":null,"data_parallel_size":null,"enable_eagle":null,"taints":null,"topology_domains":null,"kv_transfer_domain":null,"kv_transfer_enforcement":null,"kv_transfer_preferred_weight":null,"stable_routing_id":null,"disaggregated_endpoint":null,"kv_event_publishing_enabled":null}}}}}`, true},
	{"null card and runtime", `{"e":{"a":{"type":"Model","instance_id":3,"card_json":null},"b":{"type":"Model","instance_id":4,"card_json":{"runtime_config":null}}}}`, true},
	{"null maps and entries", `{"endpoints":null,"model_cards":{"k":null},"event_sources":{}}`, true},
	{"nested nulls", `{"m":{"k":{"type":"Model","instance_id":1,"transport":{"http":null,"tcp":"10.0.0.9:1/x"},"card_json":{"runtime_config":{"taints":[null,"a",null],"topology_domains":{"zone":null,"rack":"r1"}},"router_config":{"a":null,"b":[null]}}}}}`, true},
	{"empty taints and domains", `{"m":{"k":{"type":"Model","instance_id":1,"card_json":{"runtime_config":{"taints":[],"topology_domains":{}}}}}}`, true},
	{"wrong type: namespace", `{"e":{"k":{"type":"Endpoint","instance_id":1,"namespace":5}}}`, false},
	{"wrong type: type", `{"e":{"k":{"type":true,"instance_id":1}}}`, false},
	{"wrong type: card_json", `{"e":{"k":{"type":"EventChannel","card_json":"x"}}}`, false},
	{"wrong type: card_json array", `{"e":{"k":{"type":"Model","instance_id":1,"card_json":[]}}}`, false},
	{"wrong type: runtime_config", `{"e":{"k":{"type":"Model","instance_id":1,"card_json":{"runtime_config":1}}}}`, false},
	{"wrong type: taints", `{"e":{"k":{"type":"Model","instance_id":1,"card_json":{"runtime_config":{"taints":"a"}}}}}`, false},
	{"wrong type: taint", `{"e":{"k":{"type":"Model","instance_id":1,"card_json":{"runtime_config":{"taints":[1]}}}}}`, false},
	{"wrong type: domain", `{"e":{"k":{"type":"Model","instance_id":1,"card_json":{"runtime_config":{"topology_domains":{"z":1}}}}}}`, false},
	{"kv_event_publishing_enabled", `{"m":{"a":{"type":"Model","instance_id":1,"card_json":{"runtime_config":{"kv_event_publishing_enabled":true}}},"b":{"type":"Model","instance_id":2,"card_json":{"runtime_config":{"kv_event_publishing_enabled":false}}},"c":{"type":"Model","instance_id":3,"card_json":{"runtime_config":{"kv_event_publishing_enabled":null}}},"d":{"type":"Endpoint","instance_id":4,"card_json":{"runtime_config":{"kv_event_publishing_enabled":false}}}}}`, true},
	{"wrong type: kv_event_publishing_enabled", `{"e":{"k":{"type":"Model","instance_id":1,"card_json":{"runtime_config":{"kv_event_publishing_enabled":"false"}}}}}`, false},
	{"case-folded kv_event_publishing_enabled", `{"e":{"k":{"type":"Model","instance_id":1,"card_json":{"runtime_config":{"KV_Event_Publishing_Enabled":false}}}}}`, false},
	{"wrong type: enable_eagle", `{"e":{"k":{"type":"Model","instance_id":1,"card_json":{"runtime_config":{"enable_eagle":"true"}}}}}`, false},
	{"wrong type: dp size", `{"e":{"k":{"type":"Model","instance_id":1,"card_json":{"runtime_config":{"data_parallel_size":-1}}}}}`, false},
	{"wrong type: worker_type", `{"e":{"k":{"type":"Model","instance_id":1,"card_json":{"worker_type":7}}}}`, false},
	{"wrong type in an ignored entry", `{"e":{"k":{"type":"EventChannel","namespace":[],"instance_id":1}}}`, false},
	{"wrong type: a map of entries", `{"e":"x"}`, false},
	{"wrong type: an entry", `{"e":{"k":5}}`, false},
	{"spec.data an array", `[1]`, false},
	{"spec.data a string", `"x"`, false},
	{"case-folded type", `{"e":{"k":{"Type":"Endpoint","instance_id":1}}}`, false},
	{"case-folded instance_id", `{"e":{"k":{"type":"Endpoint","INSTANCE_ID":1}}}`, false},
	{"case-folded duplicate", `{"e":{"k":{"type":"Endpoint","TYPE":"Model","instance_id":1}}}`, false},
	{"case-folded card field", `{"m":{"k":{"type":"Model","instance_id":1,"card_json":{"Display_Name":"x"}}}}`, false},
	{"case-folded runtime field", `{"m":{"k":{"type":"Model","instance_id":1,"card_json":{"runtime_config":{"Total_KV_Blocks":5}}}}}`, false},
	{"long s folds to s", `{"m":{"k":{"type":"Model","instance_id":1,"card_json":{"runtime_config":{"ſtable_routing_id":"p"}}}}}`, false},
	{"Kelvin sign folds to k", `{"m":{"k":{"type":"Model","instance_id":1,"card_json":{"\u212Av_cache_block_size":8}}}}`, false},
	{"case-folded map keys are plain keys", `{"Endpoints":{"K":{"type":"Endpoint","instance_id":1}},"endpoints":{"k":{"type":"Endpoint","instance_id":1}}}`, true},
	{"unknown fields", `{"e":{"k":{"type":"Endpoint","instance_id":1,"scope":{"kind":"x","n":[1,2.5,null,true,{"a":"b"}]},"model_suffix":null,"big":18446744073709551616}}}`, true},
	{"duplicate endpoints across maps", `{"a":{"k":{"type":"Endpoint","namespace":"n","component":"c","endpoint":"e","instance_id":1,"transport":{"tcp":"10.0.0.1:1/x"}}},"b":{"k":{"type":"Endpoint","namespace":"n","component":"c","endpoint":"e","instance_id":1,"transport":{"tcp":"10.0.0.2:1/x"}}},"c":{"k":{"type":"Model","namespace":"n","component":"c","endpoint":"e","instance_id":1,"card_json":{"display_name":"m"}}}}`, true},
	{"types other than Endpoint and Model", `{"e":{"a":{"type":"EventChannel","instance_id":1},"b":{"type":"","instance_id":2},"c":{"type":"endpoint","instance_id":3},"d":{"instance_id":4},"f":{}}}`, true},
	{"legacy prefill signals", `{"m":{"a":{"type":"Model","instance_id":1,"card_json":{"model_type":"Prefill","runtime_config":{"disaggregated_endpoint":{"x":1}}}},"b":{"type":"Model","instance_id":2,"card_json":{"runtime_config":{"disaggregated_endpoint":false}}},"c":{"type":"Model","instance_id":3,"card_json":{"model_type":["Prefill"],"runtime_config":{"disaggregated_endpoint":""}}},"d":{"type":"Model","instance_id":4,"card_json":{"model_type":"Chat | Prefill"}}}}`, true},
	{"disaggregated endpoint without runtime on an Endpoint", `{"m":{"a":{"type":"Endpoint","instance_id":1,"card_json":{"model_type":"Prefill","runtime_config":{"disaggregated_endpoint":1}}}}}`, true},
	{"router config", `{"m":{"a":{"type":"Model","instance_id":1,"card_json":{"router_config":{"z":1,"a":"<&> \u2028","n":18446744073709551616,"f":0.5,"e":1e21,"s":1e-7}}},"b":{"type":"Model","instance_id":2,"card_json":{"router_config":"x"}},"c":{"type":"Model","instance_id":3,"card_json":{"router_config":[]}},"d":{"type":"Endpoint","instance_id":4,"card_json":{"router_config":{"a":1}}}}}`, true},
	{"transports", `{"e":{"a":{"type":"Endpoint","instance_id":1,"transport":{"http":"http://[fd00::1]:8000/v1"}},"b":{"type":"Endpoint","instance_id":2,"transport":{"nats_tcp":"dynamo.backend.generate"}},"c":{"type":"Endpoint","instance_id":3,"transport":{"b":"10.0.0.2:1","a":"nats","c":"10.0.0.3:1"}},"d":{"type":"Endpoint","instance_id":4,"transport":"10.0.0.1:80"},"f":{"type":"Endpoint","instance_id":5,"transport":["10.0.0.1:80"]},"g":{"type":"Endpoint","instance_id":6,"transport":{"":"10.0.0.7","a":"10.0.0.8"}},"h":{"type":"Endpoint","instance_id":7,"transport":{"tcp":5,"x":{"y":"10.0.0.1"},"z":"::ffff:10.0.0.9"}}}}`, true},
	{"HTML and unicode in strings", `{"e":{"k\u2028<":{"type":"Model","namespace":"a&b","component":"<c>","endpoint":"\u00e9","instance_id":1,"card_json":{"display_name":"\ud83d\ude00","runtime_config":{"stable_routing_id":"\u2029","topology_domains":{"z\u00e9":"v<"}}}}}}`, true},
	{"empty keys", `{"":{"":{"type":"Endpoint","instance_id":1,"endpoint":""}}}`, true},
	{"deep unknown value", `{"e":{"k":{"type":"Endpoint","instance_id":1,"x":` + strings.Repeat("[", 600) + strings.Repeat("]", 600) + `}}}`, false},
	{"non-ASCII unknown key", `{"e":{"k":{"type":"Endpoint","instance_id":1,"é":1}}}`, false},
	{"empty", `{}`, true},
	{"null", `null`, true},
}

// dwmGoEdgeCases are values only a Go caller can build (not our decoders):
// the walker falls back on all of them (an empty json.Number, which
// json.Marshal writes as 0, is checked on its own).
func dwmGoEdgeCases() map[string]any {
	entry := func(k string, v any) map[string]any {
		return map[string]any{"e": map[string]any{"k": map[string]any{"type": "Model", "instance_id": int64(1), k: v}}}
	}
	card := func(k string, v any) map[string]any {
		return entry("card_json", map[string]any{k: v})
	}
	runtime := func(k string, v any) map[string]any {
		return card("runtime_config", map[string]any{k: v})
	}
	return map[string]any{
		"NaN weight":                  runtime("kv_transfer_preferred_weight", math.NaN()),
		"Inf in an unknown field":     entry("x", math.Inf(1)),
		"NaN in router_config":        card("router_config", []any{math.NaN()}),
		"typed nil card":              entry("card_json", map[string]any(nil)),
		"typed nil taints":            runtime("taints", []any(nil)),
		"typed nil domains":           runtime("topology_domains", map[string]any(nil)),
		"typed nil router_config":     card("router_config", map[string]any(nil)),
		"typed nil disaggregated":     runtime("disaggregated_endpoint", []any(nil)),
		"typed nil transport":         entry("transport", map[string]any(nil)),
		"typed nil spec.data":         map[string]any(nil),
		"typed nil map of entries":    map[string]any{"e": map[string]any(nil)},
		"int id":                      map[string]any{"e": map[string]any{"k": map[string]any{"type": "Endpoint", "instance_id": 5}}},
		"uint64 id":                   map[string]any{"e": map[string]any{"k": map[string]any{"type": "Endpoint", "instance_id": uint64(1 << 63)}}},
		"float64 block size":          card("kv_cache_block_size", float64(16)),
		"[]string taints":             runtime("taints", []string{"a"}),
		"map[string]string transport": entry("transport", map[string]string{"tcp": "10.0.0.1:1"}),
		"invalid json.Number id":      entry("instance_id", json.Number("01")),
		"invalid UTF-8 namespace":     entry("namespace", "a\xffb"),
		"invalid UTF-8 entry key":     map[string]any{"e": map[string]any{"k\xff": map[string]any{"type": "Endpoint", "instance_id": int64(1)}}},
		"invalid UTF-8 map key":       map[string]any{"e\xff": map[string]any{"k": map[string]any{"type": "Endpoint", "instance_id": int64(1)}}},
		"invalid UTF-8 transport":     entry("transport", map[string]any{"tcp": "10.0.0.1:1/\xff"}),
		"invalid UTF-8 domain key":    runtime("topology_domains", map[string]any{"z\xff": "a"}),
		"invalid UTF-8 model_type":    card("model_type", "Prefill\xff"),
	}
}

// TestDWMWalkMatchesRoundtrip: the walker agrees with the roundtrip on every
// example DWM, the scale shape and the edge cases, walks the real shapes
// itself and falls back where it should.
func TestDWMWalkMatchesRoundtrip(t *testing.T) {
	examples := exampleDWMData(t)
	if len(examples) < 40 {
		t.Fatalf("found %d example DWMs", len(examples))
	}
	for _, name := range bldSortedKeys(examples) {
		t.Run("example/"+name, func(t *testing.T) {
			if !checkDWMWalk(t, examples[name]) {
				t.Fatal("the walker fell back on an example DWM")
			}
		})
	}
	for i, role := range []string{"prefill", "decode", "prefill", "decode"} {
		t.Run(fmt.Sprintf("scale/%s-%d", role, i), func(t *testing.T) {
			v := dwmJSON(t, dwmScaleJSON(i*7919, role, i >= 2))
			if !checkDWMWalk(t, v) {
				t.Fatal("the walker fell back on the scale shape")
			}
			if got, _ := bldWalkDWMNoRecover(v, "dwm/w"); len(got) != 2 || !got[1].hasCard || got[0].host == "" || got[1].stableID == "" {
				t.Fatalf("unexpected decode: %s", dumpInstances(got))
			}
		})
	}
	for _, tc := range dwmEdgeCases {
		t.Run("edge/"+tc.name, func(t *testing.T) {
			if walked := checkDWMWalk(t, dwmJSON(t, tc.json)); walked != tc.walk {
				t.Fatalf("walked %v, want %v", walked, tc.walk)
			}
		})
	}
	goCases := dwmGoEdgeCases()
	for _, name := range bldSortedKeys(goCases) {
		t.Run("go/"+name, func(t *testing.T) {
			if checkDWMWalk(t, goCases[name]) {
				t.Fatal("the walker did not fall back")
			}
		})
	}
	t.Run("go/empty json.Number id", func(t *testing.T) {
		v := map[string]any{"e": map[string]any{"k": map[string]any{"type": "Endpoint", "instance_id": json.Number("")}}}
		if !checkDWMWalk(t, v) {
			t.Fatal("the walker fell back")
		}
	})
}

// TestDWMWalkU64IDs: ids above 2^63 come through exactly (never via float64).
func TestDWMWalkU64IDs(t *testing.T) {
	for _, s := range []string{`18446744073709551615`, `"18446744073709551615"`, `9223372036854775808`, `9007199254740993`} {
		got, ok := bldWalkDWM(dwmJSON(t, `{"e":{"k":{"type":"Endpoint","instance_id":`+s+`}}}`), "dwm/w")
		want := strings.Trim(s, `"`)
		if !ok || len(got) != 1 || fmt.Sprint(uint64(got[0].inst.ID)) != want {
			t.Fatalf("%s: ok %v, %s", s, ok, dumpInstances(got))
		}
	}
}

// TestDWMWalkKnowsEveryField: the walker's field lists are the JSON names of
// the structs bldFastDWM decodes into (a field added to routecore.RuntimeConfig
// must be added to the walker, or the walker would silently drop it).
func TestDWMWalkKnowsEveryField(t *testing.T) {
	var names func(reflect.Type) []string
	names = func(rt reflect.Type) []string {
		var out []string
		for i := range rt.NumField() {
			f := rt.Field(i)
			if f.Anonymous && f.Tag.Get("json") == "" {
				out = append(out, names(f.Type)...)
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if rt.Name() == "RuntimeConfig" && f.Name == "DataParallelSizeSet" {
				continue // decoded with data_parallel_size (its presence)
			}
			if name == "" || name == "-" {
				t.Fatalf("%s.%s has no JSON name: the walker does not model it", rt.Name(), f.Name)
			}
			out = append(out, name)
		}
		slices.Sort(out)
		return out
	}
	for _, tc := range []struct {
		v    any
		list []string
	}{
		{bldFastEntry{}, decode.WalkEntryFields},
		{bldFastCard{}, decode.WalkCardFields},
		{bldFastRuntime{}, decode.WalkRuntimeFields},
	} {
		want := names(reflect.TypeOf(tc.v))
		got := slices.Sorted(slices.Values(tc.list))
		if !slices.Equal(got, want) {
			t.Errorf("%T: walker knows %v, the struct has %v", tc.v, got, want)
		}
	}
	// No field has a type with its own JSON decoding the walker would bypass.
	unmarshaler := reflect.TypeFor[json.Unmarshaler]()
	var check func(reflect.Type)
	check = func(rt reflect.Type) {
		for i := range rt.NumField() {
			ft := rt.Field(i).Type
			if ft == reflect.TypeFor[json.RawMessage]() || ft == reflect.TypeFor[*json.Number]() {
				continue
			}
			if ft == reflect.TypeFor[routecore.RuntimeConfig]() {
				// Its UnmarshalJSON only records whether data_parallel_size was
				// present, which the walker reproduces (TestDWMWalkMatchesRoundtrip);
				// bldFastRuntime decodes it field by field.
				continue
			}
			if reflect.PointerTo(ft).Implements(unmarshaler) || reflect.PointerTo(ft).Implements(reflect.TypeFor[interface{ UnmarshalText([]byte) error }]()) {
				t.Errorf("%s.%s (%s) decodes itself", rt.Name(), rt.Field(i).Name, ft)
			}
			for ft.Kind() == reflect.Pointer || ft.Kind() == reflect.Slice || ft.Kind() == reflect.Map {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct && ft != reflect.TypeFor[bldFastCard]() && ft != reflect.TypeFor[bldFastRuntime]() {
				check(ft)
			}
		}
	}
	for _, v := range []any{bldFastEntry{}, bldFastCard{}, bldFastRuntime{}} {
		check(reflect.TypeOf(v))
	}
}

// dwmFuzzValue is an interesting value to put somewhere in a spec.data: what
// our decoders produce (including u64 ids as json.Number) and what only a Go
// caller could (NaN, typed nils, other Go types).
func dwmFuzzValue(i int) any { return dwmFuzzValues[i%len(dwmFuzzValues)]() }

var dwmFuzzValues = []func() any{
	func() any { return nil },
	func() any { return true },
	func() any { return "" },
	func() any { return "Endpoint" },
	func() any { return "Model" },
	func() any { return "Prefill" },
	func() any { return "10.1.2.3:4000/x" },
	func() any { return "http://[fd00::2]:80/y" },
	func() any { return "123" },
	func() any { return "0123" },
	func() any { return "a\xffb" },
	func() any { return "<&>\u2028" },
	func() any { return int64(0) },
	func() any { return int64(-1) },
	func() any { return int64(16) },
	func() any { return int64(1 << 31) },
	func() any { return int64(1<<31 + 1) },
	func() any { return int64(1 << 32) },
	func() any { return int64(math.MaxInt64) },
	func() any { return float64(16) },
	func() any { return 1.5 },
	func() any { return math.Copysign(0, -1) },
	func() any { return 1e21 },
	func() any { return math.NaN() },
	func() any { return math.Inf(-1) },
	func() any { return json.Number("18446744073709551615") },
	func() any { return json.Number("18446744073709551616") },
	func() any { return json.Number("1e400") },
	func() any { return json.Number("") },
	func() any { return json.Number("01") },
	func() any { return json.Number("-5") },
	func() any { return map[string]any{} },
	func() any { return []any{} },
	func() any { return []any{"a", nil} },
	func() any { return []any{int64(1)} },
	func() any { return map[string]any{"tcp": "10.9.8.7:1/z"} },
	func() any { return map[string]any{"zone": nil, "rack": "r"} },
	func() any { return map[string]any{"type": "Endpoint", "instance_id": int64(3)} },
	func() any {
		return map[string]any{"type": "Model", "instance_id": json.Number("18446744073709551615"), "card_json": map[string]any{}}
	},
	func() any { return map[string]any(nil) },
	func() any { return []any(nil) },
	func() any { return 5 },
	func() any { return uint64(1 << 63) },
	func() any { return []string{"x"} },
}

// dwmFuzzKeys are keys worth inserting: every field name, some map names and
// case-folded spellings.
var dwmFuzzKeys = func() []string {
	keys := slices.Concat(decode.WalkEntryFields, decode.WalkCardFields, decode.WalkRuntimeFields,
		[]string{"endpoints", "model_cards", "tcp", "http", "x", "", "Type", "INSTANCE_ID", "Card_Json", "ſtable_routing_id", "\u212Av_cache_block_size", "k\xff"})
	return keys
}()

// dwmFoldKey is a spelling of k that encoding/json may match to the same field.
func dwmFoldKey(k string, i int) string {
	switch i % 5 {
	case 0:
		return strings.ToUpper(k)
	case 1:
		if k == "" {
			return k
		}
		return strings.ToUpper(k[:1]) + k[1:]
	case 2:
		return strings.Replace(k, "s", "ſ", 1)
	case 3:
		return strings.Replace(k, "k", "\u212A", 1)
	}
	return k + "\xff"
}

// dwmSlot is a place in a spec.data: a map key or an array index.
type dwmSlot struct {
	m map[string]any
	k string
	a []any
	i int
}

func (s dwmSlot) get() any {
	if s.m != nil {
		return s.m[s.k]
	}
	return s.a[s.i]
}

func (s dwmSlot) set(v any) {
	if s.m != nil {
		s.m[s.k] = v
	} else {
		s.a[s.i] = v
	}
}

// dwmSlots lists the slots of v depth first in sorted key order (so that a
// fuzz input always mutates the same places).
func dwmSlots(v any, out []dwmSlot, depth int) []dwmSlot {
	if depth > 12 {
		return out
	}
	switch x := v.(type) {
	case map[string]any:
		keys := bldSortedKeys(x)
		for _, k := range keys {
			out = append(out, dwmSlot{m: x, k: k})
			out = dwmSlots(x[k], out, depth+1)
		}
	case []any:
		for i := range x {
			out = append(out, dwmSlot{a: x, i: i})
			out = dwmSlots(x[i], out, depth+1)
		}
	}
	return out
}

// dwmMutate applies the mutations that ops encodes (three bytes each: what,
// where, with what) to v and returns it.
func dwmMutate(v any, ops []byte) any {
	for len(ops) >= 3 && len(ops) <= 3*16 {
		op, where, with := int(ops[0]), int(ops[1]), int(ops[2])
		ops = ops[3:]
		slots := dwmSlots(v, nil, 0)
		if len(slots) > 4096 { // copies grow the value exponentially: enough
			break
		}
		if len(slots) == 0 {
			if m, ok := v.(map[string]any); ok && m != nil {
				m[dwmFuzzKeys[with%len(dwmFuzzKeys)]] = dwmFuzzValue(where)
			}
			continue
		}
		s := slots[where%len(slots)]
		switch op % 6 {
		case 0: // replace a value
			s.set(dwmFuzzValue(with))
		case 1: // delete a key (null an element)
			if s.m != nil {
				delete(s.m, s.k)
			} else {
				s.set(nil)
			}
		case 2: // rename a key to a case-folded spelling
			if s.m != nil {
				e := s.m[s.k]
				delete(s.m, s.k)
				s.m[dwmFoldKey(s.k, with)] = e
			}
		case 3: // add a case-folded duplicate of a key
			if s.m != nil {
				s.m[dwmFoldKey(s.k, with)] = dwmFuzzValue(with / 5)
			}
		case 4: // insert a known field next to this one, or into this map
			m := s.m
			if inner, ok := s.get().(map[string]any); ok && inner != nil && with&1 == 1 {
				m = inner
			}
			if m != nil {
				m[dwmFuzzKeys[(with>>1)%len(dwmFuzzKeys)]] = dwmFuzzValue(where + with)
			}
		case 5: // copy a subtree elsewhere (duplicate entries across maps)
			slots[with%len(slots)].set(jsonValueCopy(s.get()))
		}
	}
	return v
}

// FuzzDWMWalkMatchesRoundtrip: on spec.data decoded from the fuzz JSON by the
// capture reader's decoder (or the scale shape when it is not JSON), mutated
// as the second input says, the walker never panics and, whenever it says ok,
// agrees with json.Marshal + bldFastDWM (so it also says !ok whenever the
// roundtrip does); it never modifies its input.
func FuzzDWMWalkMatchesRoundtrip(f *testing.F) {
	scale := dwmScaleJSON(3, "prefill", true)
	f.Add([]byte(scale), []byte{})
	f.Add([]byte(dwmScaleJSON(4, "decode", false)), []byte{0, 5, 7, 4, 30, 11, 2, 9, 0})
	for _, s := range dwmSeeds {
		f.Add([]byte(s), []byte{})
	}
	for _, tc := range dwmEdgeCases {
		f.Add([]byte(tc.json), []byte{})
	}
	examples := exampleDWMData(f)
	for _, name := range bldSortedKeys(examples) {
		data, err := json.Marshal(examples[name])
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, []byte{byte(len(name)), byte(len(name) * 7), byte(len(name) * 13)})
	}
	for i := range 24 {
		f.Add([]byte("x"), []byte{byte(i), byte(i * 37), byte(i * 11), byte(i + 3), byte(i * 5), byte(i * 17)})
	}
	f.Fuzz(func(t *testing.T, data, ops []byte) {
		if len(data) > 32<<10 || len(ops) > 3*16 {
			return
		}
		var v any
		if end, ok := jsonscan.Validate(data, 0); ok && jsonscan.SkipWS(data, end) == len(data) {
			d := jsonscan.Decoder{B: data}
			v, _ = d.Value(jsonscan.SkipWS(data, 0))
		} else {
			d := jsonscan.Decoder{B: []byte(scale)}
			v, _ = d.Value(0)
		}
		v = dwmMutate(v, ops)
		before := jsonValueCopy(v)
		got, ok := bldWalkDWMNoRecover(v, "dwm/w")
		enc, err := json.Marshal(v)
		if err == nil && !reflect.DeepEqual(before, v) {
			t.Fatalf("the walker modified its input")
		}
		if !ok {
			return
		}
		if err != nil {
			t.Fatalf("the walker accepted what json.Marshal rejects (%v): %s", err, dumpInstances(got))
		}
		want, wantOK := bldFastDWM(enc, "dwm/w")
		if !wantOK {
			t.Fatalf("the walker accepted what the roundtrip rejects: %s\ninput %s", dumpInstances(got), enc)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("walker and roundtrip differ:\nwalker    %s\nroundtrip %s\ninput %s", dumpInstances(got), dumpInstances(want), enc)
		}
	})
}

// BenchmarkDWMDecode decodes one scale-shaped DWM spec.data by the walker and
// by the roundtrip it replaces.
// TestDWMWalkSingleMutations applies every single mutation dwmMutate knows
// (each op, at each place, with each value or key it can pick) to the scale
// shape: most walker bugs show with one change to a real DWM.
func TestDWMWalkSingleMutations(t *testing.T) {
	if testing.Short() {
		t.Skip("about 15,000 roundtrips")
	}
	v := dwmJSON(t, dwmScaleJSON(3, "prefill", true))
	n := len(dwmSlots(v, nil, 0))
	vals := len(dwmFuzzValues)
	walked := 0
	for where := range n {
		for op, withs := range []int{vals, 1, 5, vals, 2 * len(dwmFuzzKeys), n} {
			for with := range withs {
				if op == 3 { // every value, each under one of the folded spellings
					with = 5*with + with%5
				}
				if checkDWMWalk(t, dwmMutate(jsonValueCopy(v), []byte{byte(op), byte(where), byte(with)})) {
					walked++
				}
			}
		}
	}
	if walked < n*10 {
		t.Fatalf("only %d single mutations walked", walked)
	}
}

// TestDWMWalkMutations runs the fuzz target's check on a few thousand
// pseudo-random mutations of the scale shape and the example DWMs, so that a
// plain `go test` covers more than the seed corpus.
func TestDWMWalkMutations(t *testing.T) {
	bases := []any{dwmJSON(t, dwmScaleJSON(3, "prefill", true)), dwmJSON(t, dwmScaleJSON(8, "decode", false))}
	examples := exampleDWMData(t)
	for _, name := range bldSortedKeys(examples) {
		bases = append(bases, examples[name])
	}
	x := uint64(0x9E3779B97F4A7C15)
	walked, fellBack := 0, 0
	for i := range 3000 {
		ops := make([]byte, 3*(1+i%8))
		for j := range ops {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			ops[j] = byte(x)
		}
		v := dwmMutate(jsonValueCopy(bases[i%len(bases)]), ops)
		if checkDWMWalk(t, v) {
			walked++
		} else {
			fellBack++
		}
	}
	t.Logf("%d walked, %d fell back", walked, fellBack)
	if walked < 300 || fellBack < 300 {
		t.Fatalf("%d walked, %d fell back: the mutations no longer test both sides", walked, fellBack)
	}
}

func BenchmarkDWMDecode(b *testing.B) {
	v := dwmJSON(b, dwmScaleJSON(1234, "prefill", false))
	b.Run("walk", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if out, ok := bldWalkDWM(v, "dwm/w"); !ok || len(out) != 2 {
				b.Fatal("walk failed")
			}
		}
	})
	b.Run("roundtrip", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			data, err := json.Marshal(v)
			if err != nil {
				b.Fatal(err)
			}
			if out, ok := bldFastDWM(data, "dwm/w"); !ok || len(out) != 2 {
				b.Fatal("roundtrip failed")
			}
		}
	})
}

// TestDecodeKvEventPublishing: every card decoder (the walker, the one-pass
// JSON decoder and the entry-by-entry one) reads runtime_config's
// kv_event_publishing_enabled (#12095) as unknown, true or false, and the
// entry-by-entry decoder rejects a card whose value is not a bool, as Dynamo's
// serde does.
func TestDecodeKvEventPublishing(t *testing.T) {
	entry := func(id int, field string) string {
		return fmt.Sprintf(`{"type":"Model","instance_id":%d,"card_json":{"worker_type":"prefill","runtime_config":{"total_kv_blocks":8%s}}}`, id, field)
	}
	const kv = `,"kv_event_publishing_enabled":`
	data := `{"model_cards":{"a":` + entry(1, "") + `,"b":` + entry(2, kv+"true") + `,"c":` + entry(3, kv+"false") + `,"d":` + entry(4, kv+"null") + `}}`
	want := map[string]string{"a": "unknown", "b": "true", "c": "false", "d": "unknown"}
	state := func(p *bool) string {
		if p == nil {
			return "unknown"
		}
		return fmt.Sprint(*p)
	}
	check := func(path string, out []*bldInstance) {
		t.Helper()
		got := map[string]string{}
		for _, bi := range out {
			got[bi.key] = state(bi.inst.KvEventPublishing)
		}
		if !maps.Equal(got, want) {
			t.Errorf("%s: kv_event_publishing_enabled = %v, want %v", path, got, want)
		}
	}
	walked, ok := bldWalkDWMNoRecover(dwmJSON(t, data), "dwm/w")
	if !ok {
		t.Fatal("the walker fell back")
	}
	check("walker", walked)
	fast, ok := bldFastDWM([]byte(data), "dwm/w")
	if !ok {
		t.Fatal("the one-pass decoder fell back")
	}
	check("one-pass", fast)
	var entries map[string]map[string]json.RawMessage
	if err := json.Unmarshal([]byte(data), &entries); err != nil {
		t.Fatal(err)
	}
	var general []*bldInstance
	for k, raw := range entries["model_cards"] {
		bi, err := (&bldBuilder{}).decodeInstance(raw, k, "dwm/w")
		if err != nil {
			t.Fatalf("entry %s: %v", k, err)
		}
		general = append(general, bi)
	}
	check("entry-by-entry", general)

	bad := json.RawMessage(entry(5, kv+`"false"`))
	if _, ok := bldFastDWM([]byte(`{"m":{"k":`+string(bad)+`}}`), "dwm/w"); ok {
		t.Error("the one-pass decoder accepted a string kv_event_publishing_enabled")
	}
	if _, err := (&bldBuilder{}).decodeInstance(bad, "k", "dwm/w"); err == nil || !strings.Contains(err.Error(), "runtime_config") {
		t.Errorf("a string kv_event_publishing_enabled: err = %v, want a runtime_config error", err)
	}
}

// jsonValueCopy deep-copies a decoded JSON value (typed nils stay typed).
func jsonValueCopy(v any) any {
	switch v := v.(type) {
	case map[string]any:
		if v == nil {
			return map[string]any(nil) // stays a typed nil
		}
		m := make(map[string]any, len(v))
		for k, e := range v {
			m[k] = jsonValueCopy(e)
		}
		return m
	case []any:
		if v == nil {
			return []any(nil) // stays a typed nil
		}
		l := make([]any, len(v))
		for i, e := range v {
			l[i] = jsonValueCopy(e)
		}
		return l
	}
	return v
}
