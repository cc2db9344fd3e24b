package build

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/golden"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/cmdline"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/capture"
)

const notesBaseDGD = `
- apiVersion: nvidia.com/v1beta1
  kind: DynamoGraphDeployment
  metadata: {name: d, namespace: ns}
  spec: {components: [{name: Frontend, type: frontend}, {name: Decode, type: decode}]}
`

const notesBasePod = `
- apiVersion: v1
  kind: Pod
  metadata: {name: d-decode-1, namespace: ns, labels: {nvidia.com/dynamo-graph-deployment-name: d, nvidia.com/dynamo-component: Decode}}
  spec: {containers: [{name: main}]}
`

func notesDWM(data string) string {
	return `
- apiVersion: nvidia.com/v1alpha1
  kind: DynamoWorkerMetadata
  metadata: {name: d-decode-1, namespace: ns}
  spec: ` + data + "\n"
}

func notesCard(card string) string {
	return notesDWM(`{data: {model_cards: {"ns-d/decode/generate/2a": {type: Model, namespace: ns-d, component: decode, endpoint: generate, instance_id: 42, card_json: ` + card + `}}}}`)
}

// TestBuildNotesForMalformedInput checks that every kind of malformed input is
// skipped with a warning note that says what was skipped, and never fails Build.
func TestBuildNotesForMalformedInput(t *testing.T) {
	cases := []struct {
		name  string
		items string
		want  string
	}{
		{"dwm spec.data not an object", notesBaseDGD + notesBasePod + notesDWM(`{data: "oops"}`), "spec.data is not a JSON object"},
		{"dwm without spec.data", notesBaseDGD + notesBasePod + notesDWM(`{}`), "has no spec.data"},
		{"dwm instance id not a number", notesBaseDGD + notesBasePod + notesDWM(`{data: {endpoints: {"a/b/c/2a": {type: Endpoint, instance_id: "abc"}}}}`), `"a/b/c/2a" could not be read (instance_id:`},
		{"dwm negative instance id", notesBaseDGD + notesBasePod + notesDWM(`{data: {endpoints: {"a/b/c/zz": {type: Endpoint, instance_id: -5}}}}`), `could not be read (instance_id: "-5" is not an unsigned 64-bit integer)`},
		{"dwm entry without id", notesBaseDGD + notesBasePod + notesDWM(`{data: {endpoints: {"x": {type: Endpoint}}}}`), "no instance_id and none in the key"},
		{"card runtime_config malformed", notesBaseDGD + notesBasePod + notesCard(`{runtime_config: {total_kv_blocks: "x"}}`), "card_json: runtime_config:"},
		{"card block size malformed", notesBaseDGD + notesBasePod + notesCard(`{kv_cache_block_size: -16}`), "kv_cache_block_size -16 is not a block size"},
		{"card router_config malformed", notesBaseDGD + notesBasePod + notesCard(`{worker_type: decode, router_config: {kv_router_config: {router_temperature: hot}}}`), "router_config of instance 42 (pod ns/d-decode-1) could not be read"},
		{"card unknown worker_type", notesBaseDGD + notesBasePod + notesCard(`{worker_type: verifier}`), `publishes an unknown worker_type "verifier"`},
		{"etcd value not JSON", notesBaseDGD + `
- {apiVersion: kubectl-dynamo.io/v1alpha1, kind: EtcdKeyValues, metadata: {name: e}, entries: [{key: v1/instances/x/y/z/2a, value: "{"}]}
`, "etcd key v1/instances/x/y/z/2a could not be read"},
		{"etcd id mismatch", notesBaseDGD + `
- {apiVersion: kubectl-dynamo.io/v1alpha1, kind: EtcdKeyValues, metadata: {name: e}, entries: [{key: v1/instances/ns-d/decode/generate/2b, value: '{"type":"Endpoint","namespace":"ns-d","component":"decode","endpoint":"generate","instance_id":42}'}]}
`, "names instance 2b but its value says 42"},
		{"policy enforcement unknown", `
- apiVersion: nvidia.com/v1beta1
  kind: DynamoGraphDeployment
  metadata: {name: d, namespace: ns}
  spec: {experimental: {kvTransferPolicy: {labelKey: k, domain: zone, enforcement: fallback}}}
`, `kvTransferPolicy.enforcement "fallback" is not required or preferred`},
		{"policy with both sources", `
- apiVersion: nvidia.com/v1beta1
  kind: DynamoGraphDeployment
  metadata: {name: d, namespace: ns}
  spec: {experimental: {kvTransferPolicy: {labelKey: k, clusterTopologyName: t, domain: zone}}}
`, "sets both labelKey and clusterTopologyName"},
		{"policy with no source or domain", `
- apiVersion: nvidia.com/v1beta1
  kind: DynamoGraphDeployment
  metadata: {name: d, namespace: ns}
  spec: {experimental: {kvTransferPolicy: {enforcement: required}}}
`, "kvTransferPolicy has no domain"},
		{"policy not an object", `
- apiVersion: nvidia.com/v1beta1
  kind: DynamoGraphDeployment
  metadata: {name: d, namespace: ns}
  spec: {experimental: {kvTransferPolicy: nope}}
`, "spec.experimental.kvTransferPolicy could not be read"},
		{"components not a list", `
- apiVersion: nvidia.com/v1beta1
  kind: DynamoGraphDeployment
  metadata: {name: d, namespace: ns}
  spec: {components: nope}
`, "spec.components is not a list"},
		{"component without a name", `
- apiVersion: nvidia.com/v1beta1
  kind: DynamoGraphDeployment
  metadata: {name: d, namespace: ns}
  spec: {components: [{type: decode}, {name: X, replicas: many}]}
`, "a component has no name"},
		{"services not a map", `
- apiVersion: nvidia.com/v1alpha1
  kind: DynamoGraphDeployment
  metadata: {name: d, namespace: ns}
  spec: {services: [a]}
`, "spec.services is not a map"},
		{"dgd without spec", `
- {apiVersion: nvidia.com/v1beta1, kind: DynamoGraphDeployment, metadata: {name: d, namespace: ns}}
`, "has no spec"},
		{"dgd env not a list", `
- {apiVersion: nvidia.com/v1beta1, kind: DynamoGraphDeployment, metadata: {name: d, namespace: ns}, spec: {env: 5}}
`, "spec.env is not a list of env vars"},
		{"conditions malformed", `
- {apiVersion: nvidia.com/v1beta1, kind: DynamoGraphDeployment, metadata: {name: d, namespace: ns}, spec: {}, status: {conditions: nope}}
`, "status.conditions could not be read"},
		{"topology levels malformed", `
- {apiVersion: grove.io/v1alpha1, kind: ClusterTopologyBinding, metadata: {name: t}, spec: {levels: nope}}
- {apiVersion: nvidia.com/v1beta1, kind: DynamoGraphDeployment, metadata: {name: d, namespace: ns}, spec: {experimental: {kvTransferPolicy: {clusterTopologyName: t, domain: zone}}}}
`, "ClusterTopologyBinding t: spec.levels could not be read"},
		{"pod unreadable", notesBaseDGD + `
- {apiVersion: v1, kind: Pod, metadata: {name: p, namespace: ns, labels: {nvidia.com/dynamo-graph-deployment-name: d}}, spec: {containers: nope}}
`, "pod ns/p could not be read"},
		{"negative GPU request", notesBaseDGD + `
- {apiVersion: v1, kind: Pod, metadata: {name: p, namespace: ns, labels: {nvidia.com/dynamo-graph-deployment-name: d, nvidia.com/dynamo-component: Decode}}, spec: {containers: [{name: main, resources: {limits: {nvidia.com/gpu: "-1"}}}]}}
`, "requests a negative nvidia.com/gpu"},
		{"frontend flag unparsable", notesBaseDGD + `
- {apiVersion: v1, kind: Pod, metadata: {name: fe, namespace: ns, labels: {nvidia.com/dynamo-graph-deployment-name: d, nvidia.com/dynamo-component: Frontend}}, spec: {containers: [{name: main, args: [--router-temperature, abc]}]}}
`, "frontend pod fe: the router flags could not be parsed"},
		{"busy threshold not JSON", notesBaseDGD + `
- {apiVersion: kubectl-dynamo.io/v1alpha1, kind: FrontendMetrics, metadata: {name: m, namespace: ns}, deployment: d, busyThreshold: nope}
`, "frontend /busy_threshold answer is not the expected JSON"},
		{"busy threshold token count malformed", notesBaseDGD + `
- {apiVersion: kubectl-dynamo.io/v1alpha1, kind: FrontendMetrics, metadata: {name: m, namespace: ns}, deployment: d, busyThreshold: '{"thresholds":[{"model":"m","active_prefill_tokens_threshold":-3}]}'}
`, "active_prefill_tokens_threshold -3 of model \"m\" is not a token count"},
		{"metrics garbage", notesBaseDGD + `
- {apiVersion: kubectl-dynamo.io/v1alpha1, kind: FrontendMetrics, metadata: {name: m, namespace: ns}, deployment: d, text: "x{\n"}
`, "1 line(s) could not be parsed (first: line 1: bad label name)"},
		{"metrics for another deployment", notesBaseDGD + `
- {apiVersion: kubectl-dynamo.io/v1alpha1, kind: FrontendMetrics, metadata: {name: m, namespace: ns}, deployment: other, text: ""}
`, "a frontend /metrics scrape for ns/other is in the bundle but that DynamoGraphDeployment is not"},
		{"discovery backend disagreement", `
- {apiVersion: nvidia.com/v1beta1, kind: DynamoGraphDeployment, metadata: {name: d, namespace: ns, annotations: {nvidia.com/dynamo-discovery-backend: etcd}}, spec: {}}
- {apiVersion: v1, kind: Pod, metadata: {name: p, namespace: ns, labels: {nvidia.com/dynamo-graph-deployment-name: d}}, spec: {containers: [{name: main, env: [{name: DYN_DISCOVERY_BACKEND, value: kubernetes}]}]}}
`, "but its pods run with DYN_DISCOVERY_BACKEND=kubernetes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, err := capture.Read(strings.NewReader("apiVersion: v1\nkind: List\nitems:\n"+tc.items), "")
			if err != nil {
				t.Fatalf("ReadCapture: %v", err)
			}
			s, err := Build(b)
			if err != nil {
				t.Fatalf("Build: %v", err)
			}
			var found *model.Note
			for i := range s.Notes {
				if strings.Contains(s.Notes[i].Message, tc.want) {
					found = &s.Notes[i]
				}
			}
			if found == nil {
				t.Fatalf("no note contains %q; notes:\n%s", tc.want, strings.Join(noteMessages(s.Notes), "\n"))
			}
			if found.Severity == "" || found.Source == "" {
				t.Errorf("note lacks severity or source: %+v", found)
			}
		})
	}
}

func TestBuildNilAndEmpty(t *testing.T) {
	if _, err := Build(nil); err == nil || !strings.Contains(err.Error(), "nil bundle") {
		t.Errorf("Build(nil) error = %v", err)
	}
	s, err := Build(&raw.Bundle{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Deployments == nil || s.Sources == nil || len(s.Deployments) != 0 || s.Notes != nil {
		t.Errorf("empty snapshot = %+v", s)
	}
}

// shuffle shuffles a slice.
func shuffle[T any](rng *rand.Rand, s []T) {
	rng.Shuffle(len(s), func(i, j int) { s[i], s[j] = s[j], s[i] })
}

// TestBuildDeterministic shuffles the bundle's objects (each kind's; Build
// reads every kind apart) and etcd entries: the snapshot must not change.
func TestBuildDeterministic(t *testing.T) {
	for _, name := range []string{"labelkey-v1beta1.yaml", "v1alpha1-etcd.yaml", "grove-topology.yaml", "multinode-mig.yaml"} {
		b := ReadFixtureBundle(t, name)
		s0, _ := Build(b)
		want, _ := json.Marshal(s0)
		rng := rand.New(rand.NewPCG(1, 2))
		for i := 0; i < 5; i++ {
			o := &b.Objects
			shuffle(rng, o.DGDs)
			shuffle(rng, o.DWMs)
			shuffle(rng, o.Pods)
			shuffle(rng, o.Nodes)
			shuffle(rng, o.Services)
			shuffle(rng, o.EndpointSlices)
			shuffle(rng, o.Events)
			shuffle(rng, o.Topologies)
			shuffle(rng, o.Deployments)
			rng.Shuffle(len(b.Etcd), func(i, j int) { b.Etcd[i], b.Etcd[j] = b.Etcd[j], b.Etcd[i] })
			s, _ := Build(b)
			got, _ := json.Marshal(s)
			if !bytes.Equal(want, got) {
				t.Fatalf("%s: snapshot changed with object order:\n%s", name, cmp.Diff(string(want), string(got)))
			}
		}
	}
}

func TestBuildVersionPreference(t *testing.T) {
	items := `
- {apiVersion: nvidia.com/v1beta1, kind: DynamoGraphDeployment, metadata: {name: d, namespace: ns}, spec: {components: [{name: A, type: decode}]}}
- {apiVersion: nvidia.com/v1alpha1, kind: DynamoGraphDeployment, metadata: {name: d, namespace: ns}, spec: {services: {B: {componentType: decode}}}}
`
	lines := strings.Split(strings.TrimSpace(items), "\n")
	reversed := lines[1] + "\n" + lines[0] + "\n"
	for _, order := range []string{items, reversed} {
		b, err := capture.Read(strings.NewReader("apiVersion: v1\nkind: List\nitems:\n"+order), "")
		if err != nil {
			t.Fatal(err)
		}
		s, _ := Build(b)
		if len(s.Deployments) != 1 || s.Deployments[0].APIVersion != "nvidia.com/v1beta1" || s.Deployments[0].Components[0].Name != "A" {
			t.Errorf("deployments = %+v", s.Deployments)
		}
	}
}

// TestBuildGolden pins the whole snapshot of a realistic capture.
func TestBuildGolden(t *testing.T) {
	f, err := os.Open(filepath.Join("..", "..", "test", "fixtures", "captures", "healthy-three-zone.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := capture.Read(f, "healthy-three-zone.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s, err := Build(b)
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, append(data, '\n'))
}

// TestExampleCaptures reads every capture under test/fixtures/captures: it must
// build without warnings and round-trip byte for byte through Write.
func TestExampleCaptures(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "test", "fixtures", "captures", "*.yaml"))
	if len(files) < 2 {
		t.Fatalf("expected the example captures, found %v", files)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			b, err := capture.ParseWhole(data, "")
			if err != nil {
				t.Fatal(err)
			}
			s, err := Build(b)
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Notes) != 0 {
				t.Errorf("notes: %q", noteMessages(s.Notes))
			}
			for _, d := range s.Deployments {
				if d.Router.Mode != "kv" || d.Policy == nil || d.Load == nil || len(d.Router.Warnings) != 0 {
					t.Errorf("%s: router %q policy %v load %v warnings %q", d.Key(), d.Router.Mode, d.Policy, d.Load, d.Router.Warnings)
				}
				for _, w := range d.Workers {
					if w.RoleSignal != "card worker_type" || !w.Ready || len(w.Instances) != 1 || len(w.Instances[0].Load) != 1 ||
						w.Domain.Published == "" || w.Domain.Published != w.Domain.Pod || w.Domain.Pod != w.Domain.Node {
						t.Errorf("worker %s is not consistent: %+v", w.Pod, w)
					}
				}
			}
			var out bytes.Buffer
			if err := capture.Write(&out, b); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(out.Bytes(), data) {
				t.Errorf("WriteCapture(ReadCapture(%s)) differs:\n%s", file, cmp.Diff(string(data), out.String()))
			}
		})
	}
}

func TestParsePromText(t *testing.T) {
	text := `# HELP m help text with "quotes"
# TYPE m gauge
# a free comment
m 1
m{} 2
m{a="x",b="y\"z\\w\nv",} 3 1700000000000
  m{ a = "sp" } -4.5
m{a="nan"} NaN
m{a="inf"} +Inf
m{a="ninf"} -Inf
m{a="ex"} 5 # {trace_id="abc"} 1
other{a="skipped"} 6
m{a="bad\q"} 7
m{a="open} 8
m{1a="x"} 9
m{a="x"}10
m{a="x"} ten
m{a="x"} 1 2 3
{"quoted.name"} 1
m{a="x" b="y"} 1
`
	res := bldParsePromText(text, func(n string) bool { return n == "m" })
	type sample struct {
		Labels map[string]string
		Value  string
	}
	var got []sample
	for _, s := range res.samples {
		got = append(got, sample{s.labels, strconv.FormatFloat(s.value, 'g', -1, 64)})
	}
	want := []sample{
		{nil, "1"}, {map[string]string{}, "2"}, {map[string]string{"a": "x", "b": "y\"z\\w\nv"}, "3"},
		{map[string]string{"a": "sp"}, "-4.5"}, {map[string]string{"a": "nan"}, "NaN"}, {map[string]string{"a": "inf"}, "+Inf"},
		{map[string]string{"a": "ninf"}, "-Inf"}, {map[string]string{"a": "ex"}, "5"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("samples (-want +got):\n%s", diff)
	}
	if res.errors != 8 || !strings.HasPrefix(res.firstError, "line 13: label a: bad escape") {
		t.Errorf("errors = %d, first = %q", res.errors, res.firstError)
	}
}

func TestRoleFromArgs(t *testing.T) {
	cases := []struct {
		argv []string
		role model.Role
		flag string
	}{
		{[]string{"--disaggregation-mode", "prefill"}, model.RolePrefill, "--disaggregation-mode"},
		{[]string{"--disaggregation-mode=decode"}, model.RoleDecode, "--disaggregation-mode"},
		{[]string{"--disaggregation-mode", "null"}, model.RoleAggregated, "--disaggregation-mode"},
		{[]string{"--is-prefill-worker"}, model.RolePrefill, "--is-prefill-worker"},
		{[]string{"--is-prefill-worker=false"}, "", ""},
		{[]string{"--disaggregation-mode"}, "", ""},
		{[]string{"--model", "x"}, "", ""},
		// TRT-LLM names the roles context and generation.
		{[]string{"--disaggregation-mode", "context"}, model.RolePrefill, "--disaggregation-mode"},
		{[]string{"--disaggregation-mode=generation"}, model.RoleDecode, "--disaggregation-mode"},
		{[]string{"--is-decode-worker"}, model.RoleDecode, "--is-decode-worker"},
		// The operator's TRT-LLM multinode leader (backend_trtllm.go setupLeaderContainer):
		// the engine command is a bash -c script run by mpirun inside the sh -c script.
		{cmdline.Argv([]string{"/bin/sh", "-c"}, []string{`mkdir -p $HOME/.ssh && cp /ssh-pk/private.key $HOME/.ssh/id_rsa && ` +
			`mpirun $([ "$(id -u)" = "0" ] && echo --allow-run-as-root) --oversubscribe -n 8 -H $(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)-ctx-ldr-0.$(GROVE_HEADLESS_SERVICE) ` +
			`--mca pml ob1 --mca plm_rsh_args "-p 2222 -o StrictHostKeyChecking=no -i $HOME/.ssh/id_rsa" -x HF_HOME -x HOME ` +
			`bash -c 'trtllm-llmapi-launch python3 -m dynamo.trtllm --model-path Qwen/Qwen3-0.6B --extra-engine-args /workspace/prefill.yaml --disaggregation-mode context'`}, nil),
			model.RolePrefill, "--disaggregation-mode (in mpirun › bash -c)"},
		// Its worker pods run only sshd.
		{cmdline.Argv([]string{"/bin/sh", "-c"}, []string{`mkdir -p $HOME/.ssh && ssh-keygen -t rsa -f $HOME/.ssh/host_keys/ssh_host_rsa_key -N '' && /usr/sbin/sshd -D -f $HOME/.ssh/sshd_config`}, nil), "", ""},
		// A command line in one word, two shells deep.
		{[]string{"sh", "-c", `exec bash -lc "python3 -m dynamo.vllm --is-decode-worker"`}, model.RoleDecode, "--is-decode-worker (in sh -c › bash -lc)"},
		// A JSON argument that merely contains spaces is not a command line.
		{[]string{"--override-engine-args", `{"a": "b c"}`}, "", ""},
	}
	for _, tc := range cases {
		r, f := bldRoleFromArgs(tc.argv, nil)
		if r != tc.role || f != tc.flag {
			t.Errorf("bldRoleFromArgs(%q) = %q, %q; want %q, %q", tc.argv, r, f, tc.role, tc.flag)
		}
	}
}
