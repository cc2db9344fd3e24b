package preflight_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/preflight"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/capture"
	srcmanifest "github.com/ai-dynamo/kubectl-dynamo/pkg/source/manifest"
)

// clusterYAML: zones a and b with two 8-GPU nodes each, zone c with one 8-GPU
// node tainted for prefill, a CPU node without a zone, and a Grove topology.
const clusterYAML = `
apiVersion: v1
kind: Node
metadata: {name: a1, labels: {topology.kubernetes.io/zone: a, kubernetes.io/hostname: a1}}
status: {allocatable: {nvidia.com/gpu: "8"}}
---
apiVersion: v1
kind: Node
metadata: {name: a2, labels: {topology.kubernetes.io/zone: a, kubernetes.io/hostname: a2}}
status: {allocatable: {nvidia.com/gpu: "8"}}
---
apiVersion: v1
kind: Node
metadata: {name: b1, labels: {topology.kubernetes.io/zone: b, kubernetes.io/hostname: b1}}
status: {allocatable: {nvidia.com/gpu: "8"}}
---
apiVersion: v1
kind: Node
metadata: {name: b2, labels: {topology.kubernetes.io/zone: b, kubernetes.io/hostname: b2}}
status: {allocatable: {nvidia.com/gpu: "8"}}
---
apiVersion: v1
kind: Node
metadata: {name: c1, labels: {topology.kubernetes.io/zone: c, kubernetes.io/hostname: c1}}
spec: {taints: [{key: dedicated, value: prefill, effect: NoSchedule}]}
status: {allocatable: {nvidia.com/gpu: "8"}}
---
apiVersion: v1
kind: Node
metadata: {name: cpu1, labels: {kubernetes.io/hostname: cpu1}}
status: {allocatable: {cpu: "16"}}
---
apiVersion: grove.io/v1alpha1
kind: ClusterTopologyBinding
metadata: {name: fabric}
spec: {levels: [{domain: zone, key: topology.kubernetes.io/zone}, {domain: host, key: kubernetes.io/hostname}]}
`

// busyPod takes 8 GPUs of node a1.
const busyPod = `
apiVersion: v1
kind: Pod
metadata: {name: busy, namespace: other}
spec: {nodeName: a1, containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: "8"}}}]}
status: {phase: Running}
`

func objects(t *testing.T, docs ...string) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	for _, d := range docs {
		for _, part := range strings.Split(d, "\n---\n") {
			if strings.TrimSpace(part) == "" {
				continue
			}
			var m map[string]any
			if err := yaml.Unmarshal([]byte(part), &m); err != nil {
				t.Fatalf("%v\n%s", err, part)
			}
			out = append(out, &unstructured.Unstructured{Object: m})
		}
	}
	return out
}

// dgd renders a v1beta1 DGD with a policy and components.
func dgd(name, policy string, components ...string) string {
	return fmt.Sprintf(`apiVersion: nvidia.com/v1beta1
kind: DynamoGraphDeployment
metadata: {name: %s, namespace: ns}
spec:
  backendFramework: vllm
  experimental:
    kvTransferPolicy: %s
  components:
  - {name: Frontend, type: frontend, podTemplate: {spec: {containers: [{name: main, image: x, args: [--router-mode, kv]}]}}}
%s`, name, policy, strings.Join(components, "\n"))
}

// comp renders a component; extra goes into the pod spec.
func comp(name, typ string, replicas, gpus int, extra string) string {
	return fmt.Sprintf("  - {name: %s, type: %s, replicas: %d, podTemplate: {spec: {%s containers: [{name: main, image: x, resources: {limits: {nvidia.com/gpu: \"%d\"}}}]}}}", name, typ, replicas, extra, gpus)
}

// vllmComp renders a vLLM worker component as upstream's examples do, with
// extra engine args.
func vllmComp(name, typ, args string) string {
	if args != "" {
		args = ", " + args
	}
	return fmt.Sprintf("  - {name: %s, type: %s, replicas: 1, podTemplate: {spec: {containers: [{name: main, image: x, command: [python3, -m, dynamo.vllm], args: [--model, m%s], resources: {limits: {nvidia.com/gpu: \"1\"}}}]}}}", name, typ, args)
}

const zoneRequired = "{labelKey: topology.kubernetes.io/zone, domain: zone, enforcement: required}"

type want struct {
	id, severity, domain string
	certainty            preflight.Certainty
}

func check(t *testing.T, cluster *preflight.Cluster, manifest string) *preflight.Report {
	t.Helper()
	// Read as the command reads -f: with the line of each object and field.
	f, err := srcmanifest.Parse([]byte(manifest), "test.yaml", srcmanifest.Options{Index: func(map[string]any) bool { return true }})
	if err != nil {
		t.Fatal(err)
	}
	var ms []preflight.Manifest
	for _, d := range f.Docs {
		if d.Object == nil {
			continue
		}
		ms = append(ms, preflight.Manifest{Object: &unstructured.Unstructured{Object: d.Object}, Source: "test.yaml", Line: d.Line, Fields: d.Fields})
	}
	return preflight.Check(preflight.Options{Manifests: ms, Cluster: cluster})
}

func found(r *preflight.Report, w want) bool {
	for _, f := range r.Findings {
		if f.ID == w.id && string(f.Severity) == w.severity && f.Domain == w.domain && f.Certainty == w.certainty {
			return true
		}
	}
	return false
}

func dump(r *preflight.Report) string {
	var b strings.Builder
	for _, f := range r.Findings {
		fmt.Fprintf(&b, "  %s %s %s %q %s\n", f.ID, f.Severity, f.Certainty, f.Domain, f.Message)
	}
	return b.String()
}

// TestCheckCatches covers what the issue requires preflight to catch, with a
// cluster and without.
func TestCheckCatches(t *testing.T) {
	pin := func(z string) string { return fmt.Sprintf("nodeSelector: {topology.kubernetes.io/zone: %s},", z) }
	tolerate := "tolerations: [{key: dedicated, value: prefill, effect: NoSchedule}],"
	cases := []struct {
		name     string
		manifest string
		cluster  bool
		want     []want
		not      []string
	}{
		{"third zone only has prefill", dgd("d", zoneRequired,
			comp("pa", "prefill", 1, 1, pin("a")), comp("pc", "prefill", 1, 1, pin("c")+tolerate),
			comp("da", "decode", 1, 1, pin("a")), comp("db", "decode", 1, 1, pin("b"))), true,
			[]want{{"PrefillDomainWithoutDecode", "error", "c", preflight.Certain}}, nil},
		{"third zone only has prefill, offline", dgd("d", zoneRequired,
			comp("pa", "prefill", 1, 1, pin("a")), comp("pc", "prefill", 1, 1, pin("c")),
			comp("da", "decode", 1, 1, pin("a"))), false,
			[]want{{"PrefillDomainWithoutDecode", "error", "c", preflight.Certain}}, nil},
		{"a zone whose GPU nodes only prefill tolerates", dgd("d", zoneRequired,
			comp("p", "prefill", 2, 1, tolerate), comp("d", "decode", 2, 1, "")), true,
			[]want{{"PrefillDomainWithoutDecode", "error", "c", preflight.Possible}, {"PrefillDomainWithoutDecode", "warning", "", preflight.Possible}}, nil},
		{"KV router over vLLM prefill workers that publish no KV events", dgd("d", zoneRequired,
			vllmComp("p", "prefill", ""), vllmComp("dec", "decode", "")), false,
			[]want{{"KvEventsNotPublished", "warning", "", preflight.Certain}}, nil},
		{"vLLM prefill workers with --kv-events-config", dgd("d", zoneRequired,
			vllmComp("p", "prefill", `--kv-events-config, '{"publisher":"zmq","topic":"kv-events","endpoint":"tcp://*:20080","enable_kv_cache_events":true}'`),
			vllmComp("dec", "decode", "")), false,
			nil, []string{"KvEventsNotPublished"}},
		{"unconstrained under required", dgd("d", zoneRequired,
			comp("p", "prefill", 2, 1, ""), comp("d", "decode", 2, 1, "")), true,
			[]want{{"PrefillDomainWithoutDecode", "warning", "", preflight.Possible}}, []string{"ReplicasUnschedulable"}},
		{"packed into one zone", strings.Replace(dgd("d", "{clusterTopologyName: fabric, domain: zone}",
			comp("p", "prefill", 2, 1, ""), comp("d", "decode", 2, 1, "")), "  backendFramework: vllm\n", "  backendFramework: vllm\n  topologyConstraint: {clusterTopologyName: fabric, packDomain: zone}\n", 1), true,
			nil, []string{"PrefillDomainWithoutDecode", "TopologyObjectMissing", "InvalidManifest"}},
		{"labelKey no node carries", dgd("d", "{labelKey: example.com/pod-zone, domain: zone}",
			comp("p", "prefill", 1, 1, ""), comp("d", "decode", 1, 1, "")), true,
			[]want{{"DomainLabelMissing", "error", "", preflight.Certain}}, nil},
		{"workers may land on unlabelled nodes", dgd("d", zoneRequired,
			comp("p", "prefill", 1, 0, ""), comp("d", "decode", 1, 0, "")), true,
			[]want{{"DomainLabelMissing", "warning", "", preflight.Possible}}, nil},
		{"clusterTopologyName not found", dgd("d", "{clusterTopologyName: nosuch, domain: zone}",
			comp("p", "prefill", 1, 1, ""), comp("d", "decode", 1, 1, "")), true,
			[]want{{"TopologyObjectMissing", "error", "", preflight.Certain}}, nil},
		{"domain not a level", dgd("d", "{clusterTopologyName: fabric, domain: rack}",
			comp("p", "prefill", 1, 1, ""), comp("d", "decode", 1, 1, "")), true,
			[]want{{"TopologyObjectMissing", "error", "", preflight.Certain}}, nil},
		{"preferred without weight", dgd("d", "{labelKey: topology.kubernetes.io/zone, domain: zone, enforcement: preferred}",
			comp("p", "prefill", 1, 1, ""), comp("d", "decode", 1, 1, "")), false,
			[]want{{"InvalidPolicy", "error", "", preflight.Certain}}, nil},
		{"weight above 1", dgd("d", "{labelKey: topology.kubernetes.io/zone, domain: zone, enforcement: preferred, preferredWeight: 1.5}",
			comp("p", "prefill", 1, 1, ""), comp("d", "decode", 1, 1, "")), false,
			[]want{{"InvalidPolicy", "error", "", preflight.Certain}}, nil},
		{"weight below 0", dgd("d", "{labelKey: topology.kubernetes.io/zone, domain: zone, enforcement: preferred, preferredWeight: -0.1}",
			comp("p", "prefill", 1, 1, ""), comp("d", "decode", 1, 1, "")), false,
			[]want{{"InvalidPolicy", "error", "", preflight.Certain}}, nil},
		{"both sources", dgd("d", "{labelKey: topology.kubernetes.io/zone, clusterTopologyName: fabric, domain: zone}",
			comp("p", "prefill", 1, 1, ""), comp("d", "decode", 1, 1, "")), false,
			[]want{{"InvalidPolicy", "error", "", preflight.Certain}}, nil},
		{"more decode GPUs in a zone than it has", dgd("d", zoneRequired,
			comp("pa", "prefill", 1, 1, pin("a")), comp("da", "decode", 3, 4, pin("a"))), true,
			[]want{{"ReplicasUnschedulable", "error", "a", preflight.Certain}}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var cl *preflight.Cluster
			if tc.cluster {
				cl = preflight.NewCluster(objects(t, clusterYAML, busyPod), nil)
			}
			r := check(t, cl, tc.manifest)
			for _, w := range tc.want {
				if !found(r, w) {
					t.Errorf("want %+v, got:\n%s", w, dump(r))
				}
			}
			for _, id := range tc.not {
				for _, f := range r.Findings {
					if f.ID == id {
						t.Errorf("unexpected %s: %s", id, f.Message)
					}
				}
			}
		})
	}
}

// TestMultinodeExceedsDomain: a 3-node replica of 8-GPU pods fits in the
// cluster but in no single zone.
func TestMultinodeExceedsDomain(t *testing.T) {
	m := dgd("d", zoneRequired,
		comp("p", "prefill", 1, 8, "")) + "\n  - {name: d, type: decode, replicas: 1, multinode: {nodeCount: 3}, podTemplate: {spec: {containers: [{name: main, image: x, resources: {limits: {nvidia.com/gpu: \"8\"}}}], tolerations: [{key: dedicated, operator: Exists}]}}}\n"
	cl := preflight.NewCluster(objects(t, clusterYAML), nil)
	r := check(t, cl, m)
	if !found(r, want{"MultinodeReplicaExceedsDomain", "warning", "", preflight.Certain}) {
		t.Errorf("got:\n%s", dump(r))
	}
}

// TestUpstreamManifests: every upstream example parses, validates and gets
// prefill and decode roles from pkg/build.
func TestUpstreamManifests(t *testing.T) {
	dir := "../../internal/cmd/preflight/testdata/upstream/"
	for _, f := range []string{"vllm-disagg-v1alpha1.yaml", "vllm-disagg-v1beta1.yaml", "sglang-disagg-multinode-v1alpha1.yaml", "trtllm-disagg-multinode-v1beta1.yaml"} {
		t.Run(f, func(t *testing.T) {
			data, err := os.ReadFile(dir + f)
			if err != nil {
				t.Fatal(err)
			}
			b, err := capture.ParseWhole(data, f)
			if err != nil {
				t.Fatal(err)
			}
			var ms []preflight.Manifest
			for _, m := range b.AsRead {
				u := &unstructured.Unstructured{Object: m}
				if u.GetKind() == "DynamoGraphDeployment" {
					u.SetNamespace("default")
					ms = append(ms, preflight.Manifest{Object: u, Source: f})
				}
			}
			r := preflight.Check(preflight.Options{Manifests: ms})
			if len(r.Findings) != 0 {
				t.Errorf("findings on an upstream example:\n%s", dump(r))
			}
			roles := map[string]bool{}
			for _, c := range r.Deployments[0].Components {
				roles[c.Role] = true
				if (c.Role == "prefill" || c.Role == "decode") && c.GPUsPerPod < 1 {
					t.Errorf("%s: %d GPUs per pod", c.Name, c.GPUsPerPod)
				}
			}
			if !roles["prefill"] || !roles["decode"] {
				t.Errorf("roles %v", roles)
			}
		})
	}
}

// TestBusyGPUsAndExclusion: GPUs requested by running pods are not free, except
// those of the deployment being re-applied.
func TestBusyGPUsAndExclusion(t *testing.T) {
	own := strings.Replace(busyPod, "namespace: other}", "namespace: ns, labels: {nvidia.com/dynamo-graph-deployment-name: d}}", 1)
	m := dgd("d", zoneRequired, comp("pa", "prefill", 1, 1, "nodeSelector: {kubernetes.io/hostname: a1},"), comp("da", "decode", 1, 1, "nodeSelector: {kubernetes.io/hostname: a1},"))
	r := check(t, preflight.NewCluster(objects(t, clusterYAML, busyPod), nil), m)
	if !found(r, want{"ReplicasUnschedulable", "error", "a", preflight.Certain}) {
		t.Errorf("a full node: got\n%s", dump(r))
	}
	r = check(t, preflight.NewCluster(objects(t, clusterYAML, own), []string{"ns/d"}), m)
	if len(r.Findings) != 0 {
		t.Errorf("the deployment's own pods counted:\n%s", dump(r))
	}
}

// TestPlacementCostIndependentOfReplicas: placing replicas cost work per
// replica — 24 components of 2^31-1 replicas in a 1.5 KB manifest took 104 s,
// and a capture whose nodes claim 2^40 GPUs each made a one-GPU component
// loop as long. Placement is now arithmetic per component and node; the test
// fails when the check has not returned after a minute (it takes
// milliseconds).
func TestPlacementCostIndependentOfReplicas(t *testing.T) {
	const maxReplicas = 1<<31 - 1
	var comps []string
	for i := range 12 {
		comps = append(comps, fmt.Sprintf("  - {name: p%d, type: prefill, replicas: %d, podTemplate: {spec: {containers: [{name: main, image: x}]}}}", i, maxReplicas))
		comps = append(comps, fmt.Sprintf("  - {name: d%d, type: decode, replicas: %d, podTemplate: {spec: {containers: [{name: main, image: x, resources: {limits: {nvidia.com/gpu: \"1\"}}}]}}}", i, maxReplicas))
	}
	m := dgd("d", zoneRequired, comps...)
	huge := strings.ReplaceAll(clusterYAML, `nvidia.com/gpu: "8"`, `nvidia.com/gpu: "1099511627776"`)
	for name, cluster := range map[string]string{"8-GPU nodes": clusterYAML, "nodes claiming 2^40 GPUs": huge} {
		t.Run(name, func(t *testing.T) {
			cl := preflight.NewCluster(objects(t, cluster), nil)
			done := make(chan *preflight.Report, 1)
			go func() { done <- check(t, cl, m) }()
			var r *preflight.Report
			select {
			case r = <-done:
			case <-time.After(time.Minute):
				t.Fatal("the placement of 24 components of 2^31-1 replicas did not finish within a minute")
			}
			free := int64(0) // on the nodes the decode components may use
			for _, n := range cl.Nodes {
				if len(n.Taints) == 0 {
					free += n.Allocatable
				}
			}
			placed := int64(0)
			for _, c := range r.Deployments[0].Components {
				if c.Fits == nil {
					continue
				}
				if c.GPUsPerPod == 0 && c.Role == "prefill" && *c.Fits != maxReplicas {
					t.Errorf("%s: %d of %d GPU-less replicas fit", c.Name, *c.Fits, maxReplicas)
				}
				placed += int64(*c.Fits) * c.GPUsPerPod
			}
			if want := min(free, 12*maxReplicas); placed != want {
				t.Errorf("%d GPUs placed, want %d (every free GPU, or every replica)", placed, want)
			}
		})
	}
}
