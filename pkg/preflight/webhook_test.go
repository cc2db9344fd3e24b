package preflight_test

import (
	"strings"
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/preflight"
)

// webhookDGD is upstream's admission-test baseline (betaDGDForAdmission): a
// frontend and a worker with one GPU on vLLM; mutate edits its text.
func webhookDGD(mutate func(string) string) string {
	m := `apiVersion: nvidia.com/v1beta1
kind: DynamoGraphDeployment
metadata:
  name: test-graph
  namespace: default
  annotations: {}
spec:
  backendFramework: vllm
  components:
  - name: frontend
    type: frontend
    podTemplate: {spec: {containers: [{name: main, image: "registry.example/runtime:1.3.0"}]}}
  - name: worker
    type: worker
    replicas: 1
    podTemplate: {spec: {containers: [{name: main, image: "registry.example/runtime:1.3.0", resources: {limits: {nvidia.com/gpu: "1"}}}]}}
`
	if mutate != nil {
		m = mutate(m)
	}
	return m
}

// worker adds fields to the worker component (YAML lines at its indent).
func worker(lines ...string) func(string) string {
	return func(m string) string {
		return strings.Replace(m, "  - name: worker\n    type: worker\n", "  - name: worker\n    type: worker\n    "+strings.Join(lines, "\n    ")+"\n", 1)
	}
}

func frontend(lines ...string) func(string) string {
	return func(m string) string {
		return strings.Replace(m, "  - name: frontend\n    type: frontend\n", "  - name: frontend\n    type: frontend\n    "+strings.Join(lines, "\n    ")+"\n", 1)
	}
}

func annotate(kv string) func(string) string {
	return func(m string) string { return strings.Replace(m, "annotations: {}", "annotations: {"+kv+"}", 1) }
}

func specLine(line string) func(string) string {
	return func(m string) string {
		return strings.Replace(m, "  backendFramework: vllm\n", "  backendFramework: vllm\n  "+line+"\n", 1)
	}
}

func all(fs ...func(string) string) func(string) string {
	return func(m string) string {
		for _, f := range fs {
			m = f(m)
		}
		return m
	}
}

// TestWebhookRules has the cases of upstream's admission test
// (deploy/operator/internal/webhook/validation/dynamographdeployment_test.go,
// TestDynamoGraphDeploymentValidator_Validate) for the rules preflight
// encodes, named as there, with the message upstream expects (the field path
// and its detail); and the cases it accepts.
func TestWebhookRules(t *testing.T) {
	noGrove := annotate(`nvidia.com/enable-grove: "false"`)
	interPod := "experimental: {gpuMemoryService: {mode: InterPod}}"
	intraPod := "experimental: {gpuMemoryService: {mode: IntraPod}}"
	cases := []struct {
		name   string
		mutate func(string) string
		want   []string
	}{
		{"valid deployment with components", nil, nil},
		{"component minAvailable requires Grove", all(noGrove, worker("minAvailable: 1")),
			[]string{`spec.components[1].minAvailable: is currently supported only for Grove-backed DynamoGraphDeployment components (requires the Grove pathway, but workload provider "component" is selected`}},
		{"inter-pod GMS requires Grove", all(noGrove, worker(interPod)),
			[]string{`spec.components[1].experimental.gpuMemoryService.mode: requires the Grove pathway, but workload provider "component" is selected`}},
		{"inter-pod GMS requires vLLM backend", all(worker(interPod), func(m string) string {
			return strings.Replace(m, "backendFramework: vllm", "backendFramework: sglang", 1)
		}),
			[]string{`spec.components[1].experimental.gpuMemoryService.mode: the inter-pod GMS layout is currently supported only for vLLM (detected backend: sglang)`}},
		{"intra-pod failover requires container discovery", worker("experimental: {gpuMemoryService: {mode: IntraPod}, failover: {mode: IntraPod}}"),
			[]string{`metadata.annotations[nvidia.com/dynamo-kube-discovery-mode]: "": must be "container" when intra-pod failover is configured`}},
		{"GMS requires GPU resources on the main container", all(worker(intraPod), func(m string) string {
			return strings.Replace(m, `, resources: {limits: {nvidia.com/gpu: "1"}}`, "", 1)
		}), []string{"spec.components[1].experimental.gpuMemoryService: GPU memory service requires podTemplate.spec.containers[main].resources.limits.nvidia.com/gpu >= 1"}},
		{"v1beta1 replicas below minAvailable are rejected by CEL", worker("minAvailable: 2"),
			[]string{"spec.components[1]: minAvailable must be less than or equal to replicas unless replicas is 0"}},
		{"v1beta1 valid replicas and minAvailable reach the webhook", all(worker("minAvailable: 1"), func(m string) string { return strings.Replace(m, "replicas: 1", "replicas: 2", 1) }), nil},
		{"minAvailable must be positive", worker("minAvailable: 0"), []string{"spec.components[1].minAvailable: 0 must be at least 1"}},
		{"replicas zero can keep minAvailable for scale-up intent", all(worker("minAvailable: 2"), func(m string) string { return strings.Replace(m, "replicas: 1", "replicas: 0", 1) }), nil},
		{"component grove.forceScalingGroup requires Grove", all(noGrove, worker("experimental: {grove: {forceScalingGroup: true}}")),
			[]string{"spec.components[1].experimental.grove.forceScalingGroup: is currently supported only for Grove-backed DynamoGraphDeployment components"}},
		{"v1beta1 grove.forceScalingGroup on a single-node component reaches the webhook", worker("experimental: {grove: {forceScalingGroup: true}}"), nil},
		{"frontend component cannot be multinode", frontend("multinode: {nodeCount: 2}"),
			[]string{"spec.components[0].multinode: multinode is supported only for worker, prefill, or decode components"}},
		{"roles require a component role schema", worker("roles: [{name: leader}]"),
			[]string{"spec.components[1].roles: roles are supported only for component shapes that define a role schema"}},
		{"GMS rejects frontend component", frontend(intraPod),
			[]string{"spec.components[0].experimental.gpuMemoryService: GPU memory service is only supported for worker, prefill, or decode components",
				"spec.components[0].experimental.gpuMemoryService: GPU memory service requires podTemplate.spec.containers[main].resources.limits.nvidia.com/gpu >= 1"}},
		{"intra-pod failover requires GMS", all(annotate("nvidia.com/dynamo-kube-discovery-mode: container"), worker("experimental: {failover: {mode: IntraPod}}")),
			[]string{`spec.components[1].experimental.failover: gpuMemoryService is required when failover mode is "IntraPod"`}},
		{"failover mode must match GMS mode", worker("experimental: {gpuMemoryService: {mode: IntraPod}, failover: {mode: InterPod, numShadows: 1}}"),
			[]string{`spec.components[1].experimental.failover.mode: must match gpuMemoryService.mode "IntraPod"`}},
		{"inter-pod failover rejects frontend component", frontend("experimental: {failover: {mode: InterPod, numShadows: 1}}"),
			[]string{`spec.components[0].experimental.failover: gpuMemoryService is required when failover mode is "InterPod"`,
				"spec.components[0].experimental.failover: GMS failover requires at least 1 GPU in podTemplate.spec.containers[main].resources.limits.nvidia.com/gpu",
				`spec.components[0].experimental.failover: GMS failover is not supported for component type "frontend"`}},
		{"priority class requires Grove", all(noGrove, specLine("priorityClassName: high-priority")),
			[]string{`spec.priorityClassName: requires the Grove pathway, but workload provider "component" is selected`}},
		{"priority class is allowed with Grove", specLine("priorityClassName: high-priority"), nil},
		{"v1beta1 EPP config without a source is rejected by CEL", all(worker("eppConfig: {}"), func(m string) string {
			return strings.Replace(m, "    type: worker\n", "    type: epp\n", 1)
		}), []string{"spec.components[1].eppConfig: exactly one of configMapRef or config must be specified"}},
		{"eppConfig only with type epp", worker("eppConfig: {configMapRef: {name: epp}}"),
			[]string{"spec.components[1].eppConfig: eppConfig may only be set when type is epp"}},
		{"v1beta1 valid EPP config reaches the webhook", all(worker("eppConfig: {configMapRef: {name: epp}}"), func(m string) string {
			return strings.Replace(m, "    type: worker\n", "    type: epp\n", 1)
		}), nil},
		{"KV-transfer cluster topology name requires Grove pathway", all(noGrove, specLine("experimental: {kvTransferPolicy: {clusterTopologyName: grove-topology, domain: zone}}")),
			[]string{`spec.experimental.kvTransferPolicy.clusterTopologyName: requires the Grove pathway, but workload provider "component" is selected`}},
		{"typed and provider-native Grove topology cannot be combined", all(
			specLine(`providerOverride: {apiVersion: grove.io/v1alpha1, target: PodCliqueSet, value: {spec: {template: {topologyConstraint: {topologyName: grove-topology, pack: {required: rack}}}}}}`),
			specLine("topologyConstraint: {clusterTopologyName: grove-topology, packDomain: rack}")),
			[]string{"spec.providerOverride.value: cannot be combined with spec.topologyConstraint or components[].topologyConstraint; use either the typed topology API or provider-native Grove topology overrides"}},
		{"valid Grove root provider override is admitted", specLine(`providerOverride: {apiVersion: grove.io/v1alpha1, value: {spec: {template: {topologyConstraint: {topologyName: grove-topology, pack: {required: rack}}}}}}`), nil},
		{"workload provider input is normalized from routing intent on create", annotate("nvidia.com/workload-provider: component"), nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := check(t, nil, webhookDGD(tc.mutate))
			var got []string
			for _, f := range r.Findings {
				if f.ID == preflight.FindingInvalidManifest || f.ID == preflight.FindingInvalidPolicy {
					got = append(got, f.Message)
					if f.Certainty != preflight.Certain || f.Severity != "error" {
						t.Errorf("%s %s: %s", f.Severity, f.Certainty, f.Message)
					}
				}
			}
			if len(got) != len(tc.want) {
				t.Fatalf("want %d rejections, got:\n%s", len(tc.want), dump(r))
			}
			for _, w := range tc.want {
				found := false
				for _, g := range got {
					found = found || strings.Contains(g, w)
				}
				if !found {
					t.Errorf("want a rejection containing %q, got:\n%s", w, strings.Join(got, "\n"))
				}
			}
		})
	}
}

// TestInputChecks: an image still holding a template placeholder, and two
// definitions of one DGD in the input.
func TestInputChecks(t *testing.T) {
	r := check(t, nil, webhookDGD(func(m string) string {
		return strings.Replace(m, `image: "registry.example/runtime:1.3.0", resources`, `image: "nvcr.io/nvidia/ai-dynamo/vllm-runtime:${VERSION}", resources`, 1)
	}))
	if !found(r, want{"ImageNotRendered", "warning", "", preflight.Certain}) || !strings.Contains(dump(r), `image "nvcr.io/nvidia/ai-dynamo/vllm-runtime:${VERSION}" still holds a template placeholder`) {
		t.Errorf("an unrendered image: got\n%s", dump(r))
	}
	r = check(t, nil, webhookDGD(nil)+"---\n"+webhookDGD(nil))
	var dups []preflight.Finding
	for _, f := range r.Findings {
		if f.ID == preflight.FindingDuplicateDeployment {
			dups = append(dups, f)
		}
	}
	if len(dups) != 1 || dups[0].Line != 21 || !strings.Contains(dups[0].Message, "default/test-graph is also defined at test.yaml") {
		t.Errorf("a duplicate DGD: got %+v\n%s", dups, dump(r))
	}
}

// TestTopologyObjectKind (rule grove-topology-kind): from 1.3 the webhook
// reads only a ClusterTopologyBinding; a cluster that still has the legacy
// ClusterTopology of that name is rejected, and before 1.3 accepted.
func TestTopologyObjectKind(t *testing.T) {
	legacy := strings.Replace(clusterYAML, "kind: ClusterTopologyBinding", "kind: ClusterTopology", 1)
	for _, tc := range []struct {
		release string
		missing bool
	}{{"1.2.0", false}, {"1.3.0", true}} {
		t.Run(tc.release, func(t *testing.T) {
			m := strings.ReplaceAll(dgd("d", "{clusterTopologyName: fabric, domain: zone}",
				comp("p", "prefill", 1, 1, ""), comp("dec", "decode", 1, 1, "")), "image: x", "image: nvcr.io/nvidia/ai-dynamo/vllm-runtime:"+tc.release)
			r := check(t, preflight.NewCluster(objects(t, legacy), nil), m)
			got := found(r, want{"TopologyObjectMissing", "error", "", preflight.Certain})
			if got != tc.missing || tc.missing && !strings.Contains(dump(r), `the cluster has a ClusterTopology "fabric", the object's name before Grove #616, which the webhook of Dynamo 1.3.0 no longer reads: rule grove-topology-kind, 1.3 and later`) {
				t.Errorf("want TopologyObjectMissing %v, got:\n%s", tc.missing, dump(r))
			}
		})
	}
}
