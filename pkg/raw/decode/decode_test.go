package decode

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/upstreamscale"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/jsonscan"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw"
)

// The JSON path (Decoder) must type every object exactly as the reference
// (FromObject over the object decoded whole) types it.

// jsonCheck compares the two paths on one JSON object.
func jsonCheck(t testing.TB, name string, data []byte) {
	t.Helper()
	m, err := JSONObject(data)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	want := FromObject(m)
	got := jsonObjects(t, data)
	if !reflect.DeepEqual(got, want) {
		gj, _ := json.Marshal(got)
		wj, _ := json.Marshal(want)
		t.Errorf("%s: the JSON path and the reference differ\njson:      %s\nreference: %s\ninput: %.2000s", name, gj, wj, data)
	}
}

// TestJSONMatchesObjects: every object of the examples and fixtures, the
// upstream-shaped scale capture's, and the pod walker's cases.
func TestJSONMatchesObjects(t *testing.T) {
	n := 0
	for _, f := range captureFiles(t) {
		for i, obj := range captureObjects(t, f) {
			data, err := json.Marshal(obj)
			if err != nil {
				t.Fatal(err)
			}
			jsonCheck(t, fmt.Sprintf("%s item %d", f, i), data)
			n++
		}
	}
	upstream := upstreamscale.Capture(upstreamscale.Options{Workers: 40, Nodes: 8, Zones: 3})
	m, err := JSONObject(upstream)
	if err != nil {
		t.Fatal(err)
	}
	for i, it := range m["items"].([]any) {
		data, _ := json.Marshal(it)
		jsonCheck(t, fmt.Sprintf("upstream item %d", i), data)
		n++
	}
	for _, s := range []string{podWalkGPUWorker, podWalkScaleWorker} {
		jsonCheck(t, "pod fixture", []byte(s))
	}
	for _, tc := range podWalkCases {
		pod := tc.json
		if pod != "{}" {
			pod = `{"apiVersion":"v1","kind":"Pod",` + tc.json[1:]
		}
		jsonCheck(t, tc.name, []byte(pod))
	}
	if n < 300 {
		t.Errorf("compared only %d objects", n)
	}
}

// TestJSONReadsRealisticPods: the JSON path reads the realistic pods itself
// (it does not hand them to the reference).
func TestJSONReadsRealisticPods(t *testing.T) {
	pods := map[string][]byte{"gpu worker": []byte(podWalkGPUWorker), "gen-examples pod": []byte(podWalkScaleWorker)}
	upstream, err := JSONObject(upstreamscale.Capture(upstreamscale.Options{Workers: 4, Nodes: 2, Zones: 2}))
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range upstream["items"].([]any) {
		if it.(map[string]any)["kind"] == "Pod" {
			pods["upstream pod"], _ = json.Marshal(it)
		}
	}
	for name, data := range pods {
		d := NewDecoder(data, nil)
		var tp top
		o := jsonscan.NewObj(nil, data, 0)
		tp = top{-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}
		for o.Next() {
			switch string(o.RawKey()) {
			case "metadata":
				tp.metadata = o.Val
			case "spec":
				tp.spec = o.Val
			case "status":
				tp.status = o.Val
			}
		}
		r := podReader{d: d, b: data}
		r.metadata(tp.metadata, &raw.Pod{})
		r.spec(tp.spec)
		r.status(tp.status)
		if r.bad {
			t.Errorf("%s: the JSON path gave up", name)
		}
	}
}

// jsonMutations are edge cases of every kind's fields.
var jsonMutations = []struct{ name, json string }{
	{"list of pods", `{"kind":"PodList","apiVersion":"v1","items":[{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a"}},{"kind":"Node","apiVersion":"v1","metadata":{"name":"n"}}]}`},
	{"list stops at a non-object", `{"kind":"List","items":[{"kind":"Node","apiVersion":"v1","metadata":{"name":"a"}},5,{"kind":"Node","apiVersion":"v1"}]}`},
	{"nested lists", `{"items":[{"items":[{"items":[{"kind":"Node","apiVersion":"v1"}],"kind":"Node","apiVersion":"v1","metadata":{"name":"deep"}}]}]}`},
	{"items not a list", `{"kind":"Node","apiVersion":"v1","items":{"a":1},"metadata":{"name":"n"}}`},
	{"pod with items", `{"kind":"Pod","apiVersion":"v1","items":[{"kind":"Node","apiVersion":"v1","metadata":{"name":"x"}}]}`},
	{"kind not a string", `{"kind":5,"apiVersion":"v1"}`},
	{"pod of another group", `{"kind":"Pod","apiVersion":"example.com/v1","metadata":{"name":"p"}}`},
	{"duplicate keys", `{"kind":"Node","kind":"Pod","apiVersion":"v1","metadata":{"name":"a"},"metadata":{"name":"b","labels":{"x":"1","x":"2"}}}`},
	{"escaped keys", `{"kin\u0064":"Node","apiVersion":"v1","metadata":{"na\u006de":"n","labels":{"\u0061":"b"}}}`},
	{"labels with a null", `{"kind":"Node","apiVersion":"v1","metadata":{"name":"n","labels":{"a":"b","c":null}}}`},
	{"labels with a number", `{"kind":"Service","apiVersion":"v1","metadata":{"labels":{"a":1}}}`},
	{"labels null", `{"kind":"Node","apiVersion":"v1","metadata":{"labels":null,"annotations":{}}}`},
	{"metadata a list", `{"kind":"Node","apiVersion":"v1","metadata":[1]}`},
	{"owner references", `{"kind":"DynamoWorkerMetadata","apiVersion":"nvidia.com/v1alpha1","metadata":{"name":"w","ownerReferences":[{"kind":"Pod","name":"p","uid":5,"controller":true,"blockOwnerDeletion":"yes"}]}}`},
	{"owner references with a non-object", `{"kind":"DynamoWorkerMetadata","apiVersion":"nvidia.com/v1alpha1","metadata":{"ownerReferences":[{"kind":"Pod","name":"p"},"x"]}}`},
	{"owner references not a list", `{"kind":"DynamoWorkerMetadata","apiVersion":"nvidia.com/v1alpha1","metadata":{"ownerReferences":{"kind":"Pod"}}}`},
	{"owner references empty", `{"kind":"DynamoWorkerMetadata","apiVersion":"nvidia.com/v1alpha1","metadata":{"ownerReferences":[]}}`},
	{"dwm data null", `{"kind":"DynamoWorkerMetadata","apiVersion":"nvidia.com/v1alpha1","spec":{"data":null}}`},
	{"dwm spec a string", `{"kind":"DynamoWorkerMetadata","apiVersion":"nvidia.com/v1alpha1","spec":"x"}`},
	{"dwm data a list", `{"kind":"DynamoWorkerMetadata","apiVersion":"nvidia.com/v1alpha1","spec":{"data":[1]}}`},
	{"dwm data empty", `{"kind":"DynamoWorkerMetadata","apiVersion":"nvidia.com/v1alpha1","spec":{"data":{}}}`},
	{"dwm entry without id", `{"kind":"DynamoWorkerMetadata","apiVersion":"nvidia.com/v1alpha1","spec":{"data":{"endpoints":{"k":{"type":"Endpoint","namespace":"n"}}}}}`},
	{"dwm u64 id", `{"kind":"DynamoWorkerMetadata","apiVersion":"nvidia.com/v1alpha1","spec":{"data":{"endpoints":{"k":{"type":"Endpoint","instance_id":18446744073709551615,"transport":{"tcp":"10.0.0.1:1/x","nats":"x"}}}}}}`},
	{"dgd spec and status", `{"kind":"DynamoGraphDeployment","apiVersion":"nvidia.com/v1beta1","metadata":{"name":"d","annotations":{"nvidia.com/dynamo-discovery-backend":"etcd"}},"spec":{"components":[{"name":"x","replicas":1.0}]},"status":{"conditions":null}}`},
	{"dgd spec not an object", `{"kind":"DynamoGraphDeployment","apiVersion":"nvidia.com/v1alpha1","spec":[1],"status":"x"}`},
	{"service", `{"kind":"Service","apiVersion":"v1","metadata":{"name":"s","labels":{"a":"b"}},"spec":{"ports":[{"name":"http","port":8000}],"selector":{"a":"b"}}}`},
	{"endpoint slice", `{"kind":"EndpointSlice","apiVersion":"discovery.k8s.io/v1","metadata":{"namespace":"n"},"endpoints":[{"targetRef":{"kind":"Pod","name":"p"},"conditions":{"ready":false}},5,{"targetRef":"x","conditions":{"ready":"yes"}},{"conditions":null}]}`},
	{"endpoint slice without endpoints", `{"kind":"EndpointSlice","apiVersion":"discovery.k8s.io/v1","endpoints":null}`},
	{"endpoint slice empty endpoints", `{"kind":"EndpointSlice","apiVersion":"discovery.k8s.io/v1","endpoints":[]}`},
	{"core event", `{"kind":"Event","apiVersion":"v1","metadata":{"namespace":"n","creationTimestamp":"2026-01-01T00:00:00Z"},"involvedObject":{"kind":"Pod","name":"p","namespace":"m"},
		"reason":"FailedScheduling","type":"Warning","message":"no","count":3,"lastTimestamp":"2026-01-02T00:00:00Z","firstTimestamp":5}`},
	{"events.k8s.io event", `{"kind":"Event","apiVersion":"events.k8s.io/v1","regarding":{"kind":"Pod","name":"p"},"note":"x","series":{"count":7,"lastObservedTime":"2026-01-02T00:00:00Z"},
		"deprecatedCount":2,"deprecatedLastTimestamp":"t","eventTime":"2026-01-03T00:00:00.000000Z"}`},
	{"event counts", `{"kind":"Event","apiVersion":"v1","count":1.5,"series":{"count":99999999999999999999},"deprecatedCount":-0}`},
	{"event count forms", `{"kind":"Event","apiVersion":"v1","count":"3","series":5,"deprecatedCount":1e2}`},
	{"topology", `{"kind":"ClusterTopologyBinding","apiVersion":"grove.io/v1alpha1","metadata":{"name":"t"},"spec":{"levels":[{"domain":"zone","key":"topology.kubernetes.io/zone"}]}}`},
	{"topology without spec", `{"kind":"ClusterTopology","apiVersion":"grove.io/v1alpha1","metadata":{"name":"t"}}`},
	{"topology levels null", `{"kind":"ClusterTopology","apiVersion":"grove.io/v1alpha1","spec":{"levels":null}}`},
	{"topology spec a list", `{"kind":"ClusterTopology","apiVersion":"grove.io/v1alpha1","spec":[{"levels":1}]}`},
	{"operator deployment", `{"kind":"Deployment","apiVersion":"apps/v1","metadata":{"name":"dynamo-operator-controller-manager","namespace":"dynamo-system",` +
		`"labels":{"app.kubernetes.io/part-of":"dynamo-operator","control-plane":"controller-manager"},"annotations":{"deployment.kubernetes.io/revision":"3"}},` +
		`"spec":{"replicas":1,"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"kube-rbac-proxy","image":"quay.io/brancz/kube-rbac-proxy:v0.15.0"},` +
		`{"name":"manager","image":"nvcr.io/nvidia/ai-dynamo/kubernetes-operator:1.4.0","command":["/manager"],"args":["--health-probe-bind-address=:8081","--operator-version=1.4.1"],` +
		`"env":[{"name":"X","value":"y"}]}]}}}}`},
	{"deployment containers of every type", `{"kind":"Deployment","apiVersion":"apps/v1","spec":{"template":{"spec":{"containers":[5,null,{"name":7,"image":null,"args":[1,"--operator-version=1",null]},` +
		`{"name":"manager","name":"m2","image":"a","image":"b","args":"x"},{"args":[]},{"args":null},{"args":["a"],"args":[true]}]}}}}`},
	{"deployment containers not a list", `{"kind":"Deployment","apiVersion":"apps/v1","spec":{"template":{"spec":{"containers":{"name":"manager"}}}}}`},
	{"deployment containers null", `{"kind":"Deployment","apiVersion":"apps/v1","spec":{"template":{"spec":{"containers":null}}}}`},
	{"deployment template not an object", `{"kind":"Deployment","apiVersion":"apps/v1","spec":{"template":[{"spec":{}}]}}`},
	{"deployment containers empty", `{"kind":"Deployment","apiVersion":"apps/v1","metadata":{"labels":{}},"spec":{"template":{"spec":{"containers":[]}}}}`},
	{"deployment of another group", `{"kind":"Deployment","apiVersion":"extensions/v1beta1","metadata":{"name":"d"}}`},
	{"pod images of every type", `{"kind":"Pod","apiVersion":"v1","spec":{"containers":[{"name":"main","image":5},{"name":"b","image":"x","image":null},{"name":"c","image":"\u0078y"},null],` +
		`"initContainers":[{"name":"i","image":"init:1"}]}}`},
}

// dwmDataCases are spec.data values the DWM reader must read as the walker
// does, or hand to it.
var dwmDataCases = []struct{ name, json string }{
	{"endpoint and model", `{"endpoints":{"k":{"type":"Endpoint","namespace":"n","component":"c","endpoint":"e","instance_id":26,"transport":{"tcp":"10.0.0.1:4000/x","nats":5}}},
		"model_cards":{"k":{"type":"Model","instance_id":26,"card_json":{"display_name":"m","kv_cache_block_size":16,"worker_type":"prefill","model_type":"Prefill",
		"runtime_config":{"total_kv_blocks":10,"max_num_seqs":2,"max_num_batched_tokens":3,"data_parallel_start_rank":1,"data_parallel_size":0,"enable_eagle":true,
		"taints":["a",null],"topology_domains":{"zone":"z","rack":null},"kv_transfer_domain":"zone","kv_transfer_enforcement":"required","kv_transfer_preferred_weight":0.5,
		"stable_routing_id":"p","kv_event_publishing_enabled":false,"disaggregated_endpoint":{"x":1},"extra":[1,{"a":null}]},"router_config":{"b":2,"a":"<&>"},"needs":[["decode"]]}}}}`},
	{"u64 ids", `{"e":{"a":{"type":"Endpoint","instance_id":18446744073709551615},"b":{"type":"Endpoint","instance_id":"9007199254740993"},"c":{"type":"Endpoint","instance_id":-1}}}`},
	{"float id", `{"e":{"a":{"type":"Endpoint","instance_id":1.0}}}`},
	{"string id not a number", `{"e":{"a":{"type":"Endpoint","instance_id":"x1"}}}`},
	{"missing id", `{"e":{"a":{"type":"Model"}}}`},
	{"other types kept out", `{"event_channels":{"a":{"type":"EventChannel","instance_id":3,"transport":{"kind":"Zmq"}}},"event_sources":{}}`},
	{"null maps and entries", `{"a":null,"b":{"x":null},"c":{}}`},
	{"map not an object", `{"a":[1]}`},
	{"entry not an object", `{"a":{"x":5}}`},
	{"duplicate map", `{"a":{"x":{"type":"Endpoint","instance_id":1}},"a":{"y":{"type":"Endpoint","instance_id":2}}}`},
	{"duplicate entry", `{"a":{"x":{"type":"Endpoint","instance_id":1},"x":{"type":"Endpoint","instance_id":2}}}`},
	{"duplicate field", `{"a":{"x":{"type":"Endpoint","type":"Model","instance_id":1}}}`},
	{"duplicate card field", `{"a":{"x":{"type":"Model","instance_id":1,"card_json":{"worker_type":"a","worker_type":"b"}}}}`},
	{"duplicate runtime field", `{"a":{"x":{"type":"Model","instance_id":1,"card_json":{"runtime_config":{"max_num_seqs":1,"max_num_seqs":2}}}}}`},
	{"duplicate transport key", `{"a":{"x":{"type":"Endpoint","instance_id":1,"transport":{"tcp":"10.0.0.1:1","tcp":"10.0.0.2:1"}}}}`},
	{"duplicate domain", `{"a":{"x":{"type":"Model","instance_id":1,"card_json":{"runtime_config":{"topology_domains":{"zone":"a","zone":"b"}}}}}}`},
	{"case-folded field", `{"a":{"x":{"type":"Endpoint","Instance_Id":4,"instance_id":1}}}`},
	{"case-folded card field", `{"a":{"x":{"type":"Model","instance_id":1,"card_json":{"Worker_Type":"decode"}}}}`},
	{"non-ASCII key", `{"a":{"x":{"type":"Endpoint","instance_id":1,"ſype":2}}}`},
	{"escaped keys", `{"a":{"x":{"type":"Endpoint","instance_id":1}}}`},
	{"wrong types", `{"a":{"x":{"type":5,"instance_id":1}}}`},
	{"block size too large", `{"a":{"x":{"type":"Model","instance_id":1,"card_json":{"kv_cache_block_size":4294967295}}}}`},
	{"block size float", `{"a":{"x":{"type":"Model","instance_id":1,"card_json":{"kv_cache_block_size":16.0}}}}`},
	{"weight forms", `{"a":{"x":{"type":"Model","instance_id":1,"card_json":{"runtime_config":{"kv_transfer_preferred_weight":-0}}},"y":{"type":"Model","instance_id":2,"card_json":{"runtime_config":{"kv_transfer_preferred_weight":1e400}}}}}`},
	{"bad eagle", `{"a":{"x":{"type":"Model","instance_id":1,"card_json":{"runtime_config":{"enable_eagle":"yes"}}}}}`},
	{"card on an endpoint", `{"a":{"x":{"type":"Endpoint","instance_id":1,"card_json":{"display_name":"m","router_config":{"x":1}}}}}`},
	{"card not an object", `{"a":{"x":{"type":"Model","instance_id":1,"card_json":"m"}}}`},
	{"runtime not an object", `{"a":{"x":{"type":"Model","instance_id":1,"card_json":{"runtime_config":[1]}}}}`},
	{"transport a string", `{"a":{"x":{"type":"Endpoint","instance_id":1,"transport":"nats://x"}}}`},
	{"deep unknown value", `{"a":{"x":{"type":"Endpoint","instance_id":1,"extra":` + strings.Repeat("[", 600) + strings.Repeat("]", 600) + `}}}`},
	{"deep value of another type", `{"a":{"x":{"type":"Other","instance_id":1,"transport":` + strings.Repeat("[", 600) + strings.Repeat("]", 600) + `}}}`},
}

// TestJSONEdgeCases: the paths agree on unusual objects of every kind.
func TestJSONEdgeCases(t *testing.T) {
	for _, tc := range jsonMutations {
		jsonCheck(t, tc.name, []byte(tc.json))
	}
	for _, tc := range dwmDataCases {
		jsonCheck(t, "dwm "+tc.name, []byte(`{"apiVersion":"nvidia.com/v1alpha1","kind":"DynamoWorkerMetadata","metadata":{"name":"w"},"spec":{"data":`+tc.json+`}}`))
	}
}

// TestJSONMutations replaces every value of realistic objects of every kind
// by values of every type, deletes every key and adds case variants, and
// compares the paths each time.
func TestJSONMutations(t *testing.T) {
	roots := map[string]map[string]any{}
	for name, s := range map[string]string{"gpu worker": podWalkGPUWorker} {
		roots[name] = podWalkDecode(t, s)
	}
	up, err := JSONObject(upstreamscale.Capture(upstreamscale.Options{Workers: 2, Nodes: 1, Zones: 1}))
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range up["items"].([]any) {
		o := it.(map[string]any)
		k, _ := o["kind"].(string)
		if _, seen := roots["upstream "+k]; !seen {
			roots["upstream "+k] = o
		}
	}
	for _, tc := range jsonMutations {
		roots[tc.name] = podWalkDecode(t, tc.json)
	}
	for name, root := range roots {
		n := 0
		podWalkMutate(root, func(desc string, mutated func(any) any) {
			data, err := json.Marshal(mutated(root))
			if err != nil {
				return // a Go value JSON cannot hold
			}
			n++
			jsonCheck(t, name+desc, data)
		})
		if n == 0 {
			t.Errorf("%s: no mutations", name)
		}
	}
}

// FuzzJSONMatchesObjects: on any JSON object, the JSON path never panics and
// types it as the reference does.
func FuzzJSONMatchesObjects(f *testing.F) {
	f.Add([]byte(podWalkGPUWorker))
	for _, tc := range jsonMutations {
		f.Add([]byte(tc.json))
	}
	for _, tc := range dwmDataCases {
		f.Add([]byte(`{"apiVersion":"nvidia.com/v1alpha1","kind":"DynamoWorkerMetadata","spec":{"data":` + tc.json + `}}`))
	}
	for _, tc := range podWalkCases {
		f.Add([]byte(`{"apiVersion":"v1","kind":"Pod",` + tc.json[1:]))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		end, ok := jsonscan.Validate(data, 0)
		if !ok || jsonscan.SkipWS(data, end) != len(data) {
			return
		}
		if _, err := JSONObject(data); err != nil {
			return
		}
		jsonCheck(t, "fuzz", data)
	})
}

// TestJSONReadsRealisticDWMs: the JSON path reads every DWM of the examples,
// the fixtures and the upstream-shaped capture itself (it does not hand them
// to the walker over a decoded value).
func TestJSONReadsRealisticDWMs(t *testing.T) {
	var datas [][]byte
	add := func(obj map[string]any) {
		if k, _ := obj["kind"].(string); k != "DynamoWorkerMetadata" {
			return
		}
		spec, _ := obj["spec"].(map[string]any)
		if data, ok := spec["data"]; ok && data != nil {
			j, _ := json.Marshal(data)
			datas = append(datas, j)
		}
	}
	for _, f := range captureFiles(t) {
		for _, obj := range captureObjects(t, f) {
			add(obj)
		}
	}
	up, err := JSONObject(upstreamscale.Capture(upstreamscale.Options{Workers: 6, Nodes: 2, Zones: 2}))
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range up["items"].([]any) {
		add(it.(map[string]any))
	}
	if len(datas) < 40 {
		t.Fatalf("found %d DWMs", len(datas))
	}
	for _, data := range datas {
		r := dwmReader{d: NewDecoder(data, nil), b: data}
		if _, ok := r.data(0); !ok {
			t.Errorf("the JSON path gave up on %s", data)
		}
	}
}

// TestDeploymentReadsWhatTellsARelease: of a Deployment, the name,
// namespace, labels and the containers' names, images and arguments are
// read, and nothing else (not its annotations, env or replicas).
func TestDeploymentReadsWhatTellsARelease(t *testing.T) {
	var doc string
	for _, tc := range jsonMutations {
		if tc.name == "operator deployment" {
			doc = tc.json
		}
	}
	got := jsonObjects(t, []byte(doc))
	want := raw.Objects{Deployments: []*raw.Deployment{{
		TypeMeta: raw.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: raw.ObjectMeta{Name: "dynamo-operator-controller-manager", Namespace: "dynamo-system",
			Labels: map[string]string{"app.kubernetes.io/part-of": "dynamo-operator", "control-plane": "controller-manager"}},
		Spec: raw.DeploymentSpec{Template: raw.PodTemplateSpec{Spec: raw.PodTemplateSpecSpec{Containers: []raw.DeploymentContainer{
			{Name: "kube-rbac-proxy", Image: "quay.io/brancz/kube-rbac-proxy:v0.15.0"},
			{Name: "manager", Image: "nvcr.io/nvidia/ai-dynamo/kubernetes-operator:1.4.0", Args: []string{"--health-probe-bind-address=:8081", "--operator-version=1.4.1"}},
		}}}},
	}}}
	if !reflect.DeepEqual(got, want) {
		gj, _ := json.Marshal(got)
		wj, _ := json.Marshal(want)
		t.Errorf("read\n%s\nwant\n%s", gj, wj)
	}
}
