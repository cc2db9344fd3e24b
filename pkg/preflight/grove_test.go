package preflight_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/preflight"
)

// groveDGD renders a v1beta1 DGD with a frontend and the given components
// (YAML flow mappings), annotations and images tagged with release.
func groveDGD(name, release, annotations string, components ...string) string {
	return fmt.Sprintf(`apiVersion: nvidia.com/v1beta1
kind: DynamoGraphDeployment
metadata: {name: %s, namespace: ns%s}
spec:
  backendFramework: vllm
  components:
  - {name: frontend, type: frontend, podTemplate: {spec: {containers: [{name: main, image: nvcr.io/nvidia/ai-dynamo/vllm-runtime:%s}]}}}
%s`, name, annotations, release, strings.Join(components, "\n"))
}

// groveWorker renders a worker component; extra goes into the component.
func groveWorker(name, release, extra string) string {
	return fmt.Sprintf("  - {name: %s, type: worker, %spodTemplate: {spec: {containers: [{name: main, image: nvcr.io/nvidia/ai-dynamo/vllm-runtime:%s, resources: {limits: {nvidia.com/gpu: \"1\"}}}]}}}", name, extra, release)
}

// TestGroveNameLength is the webhook's 45-character rule (rule
// grove-name-length), with upstream's own admission cases
// (deploy/operator/internal/webhook/validation dynamographdeployment_test.go:
// "rendered Grove resource name length accepts boundary / rejects overflow /
// is skipped outside Grove") and the shapes whose names changed: the docs'
// capacity example, multinode, inter-pod GPU memory service and
// forceScalingGroup components, at releases on both sides of #8563.
func TestGroveNameLength(t *testing.T) {
	longDGD := "test-graph-" + strings.Repeat("x", 50) // 61 characters
	boundary := "w" + strings.Repeat("x", 36)          // 37
	tooLong := boundary + "x"                          // 38
	noGrove := ", annotations: {nvidia.com/enable-grove: \"false\"}"
	gms := "experimental: {gpuMemoryService: {mode: InterPod}}, "
	force := "experimental: {grove: {forceScalingGroup: true}}, "
	multinode := "multinode: {nodeCount: 2}, "
	cases := []struct {
		name     string
		manifest string
		// want is the InvalidManifest message fragment; "" for none.
		want string
	}{
		{"upstream: accepts boundary", groveDGD(longDGD, "1.3.0", "", groveWorker(boundary, "1.3.0", "")), ""},
		{"upstream: rejects overflow", groveDGD(longDGD, "1.3.0", "", groveWorker(tooLong, "1.3.0", "")),
			`combined resource name length 46 exceeds the 45-character pod-name limit (PCS name + component name; the operator names the PodCliqueSet "tes-cafb")`},
		{"upstream: skipped outside Grove", groveDGD(longDGD, "1.3.0", noGrove, groveWorker(tooLong, "1.3.0", "")), ""},
		{"docs capacity example, newest", groveDGD("qwen3-disagg-zone-capacity", "1.3.0", "", groveWorker("VllmPrefillWorkerAz1", "1.3.0", "")), ""},
		{"docs capacity example, before #8563", groveDGD("qwen3-disagg-zone-capacity", "1.1.1", "", groveWorker("VllmPrefillWorkerAz1", "1.1.1", "")),
			"combined resource name length 46 exceeds the 45-character pod-name limit (DGD name + component name; the operator names the PodCliqueSet \"qwen3-disagg-zone-capacity\")"},
		{"multinode, newest: the PCS name is shortened", groveDGD(strings.Repeat("a", 30), "1.3.0", "", groveWorker("worker", "1.3.0", multinode)), ""},
		{"multinode, before #8563", groveDGD(strings.Repeat("a", 30), "1.1.1", "", groveWorker("worker", "1.1.1", multinode)),
			`combined resource name length 46 exceeds the 45-character pod-name limit (DGD name + PCSG name + longest PodClique name "worker-ldr"`},
		{"inter-pod GMS: a 16-character name has a budget of 38", groveDGD("vllm-disagg", "1.3.0", "", groveWorker("VllmDecodeWorker", "1.3.0", gms)),
			`combined resource name length 46 exceeds the 45-character pod-name limit (PCS name + PCSG name + longest PodClique name "vllmdecodeworker-gms-0"; the operator names the PodCliqueSet "vll-08e2")`},
		{"inter-pod GMS: a 15-character name fits", groveDGD("vllm-disagg", "1.3.0", "", groveWorker("VllmDecodeWorke", "1.3.0", gms)), ""},
		{"intra-pod GMS is no scaling group", groveDGD("vllm-disagg", "1.3.0", "", groveWorker("VllmDecodeWorker", "1.3.0", "experimental: {gpuMemoryService: {mode: IntraPod}}, ")), ""},
		{"forceScalingGroup: 19 characters", groveDGD("vllm-disagg", "1.3.0", "", groveWorker(strings.Repeat("f", 19), "1.3.0", force)),
			"combined resource name length 46 exceeds the 45-character pod-name limit (PCS name + PCSG name + longest PodClique name"},
		{"forceScalingGroup: 18 characters", groveDGD(strings.Repeat("d", 40), "1.3.0", "", groveWorker(strings.Repeat("f", 18), "1.3.0", force)), ""},
		{"multinode inter-pod GMS: ranks name the cliques", groveDGD("d", "1.3.0", "", groveWorker(strings.Repeat("m", 20), "1.3.0", "multinode: {nodeCount: 12}, "+gms)),
			`combined resource name length 48 exceeds the 45-character pod-name limit (PCS name + PCSG name + longest PodClique name "` + strings.Repeat("m", 20) + `-gms-10"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := check(t, nil, tc.manifest)
			var got []string
			for _, f := range r.Findings {
				if f.ID == preflight.FindingInvalidManifest {
					got = append(got, f.Message)
				}
			}
			switch {
			case tc.want == "" && len(got) > 0:
				t.Errorf("want no InvalidManifest, got %q", got)
			case tc.want != "" && (len(got) != 1 || !strings.Contains(got[0], tc.want)):
				t.Errorf("want one InvalidManifest containing %q, got %q", tc.want, got)
			}
		})
	}
}

// TestTopologyConstraintRule: without spec.topologyConstraint.packDomain,
// the newest webhook (rule topology-pack-domain, #12448) rejects only a DGD
// none of whose components is constrained; before 1.4 every component needed
// one. Upstream's cases: "deployment topology without pack domain allows
// unconstrained components", "... requires a component topology",
// "component topology constraint requires deployment topology", "component
// topology pack domain is required by the schema".
func TestTopologyConstraintRule(t *testing.T) {
	spec := "  topologyConstraint: {clusterTopologyName: grove-topology}\n"
	with := func(release, specTC string, workerTC string) string {
		m := groveDGD("d", release, "", groveWorker("worker", release, workerTC))
		if specTC != "" {
			m = strings.Replace(m, "  backendFramework: vllm\n", "  backendFramework: vllm\n"+specTC, 1)
		}
		return m
	}
	cases := []struct {
		name, manifest string
		want           []string
	}{
		{"one component constrained, newest", with("1.4.0", spec, "topologyConstraint: {packDomain: rack}, "), nil},
		{"one component constrained, 1.3", with("1.3.0", spec, "topologyConstraint: {packDomain: rack}, "),
			[]string{"spec.components[0].topologyConstraint: is required because spec.topologyConstraint.packDomain is not set (rule topology-pack-domain, before 1.4)"}},
		{"no component constrained", with("1.4.0", spec, ""),
			[]string{"spec.topologyConstraint.packDomain: is required when no component topologyConstraint is set (rule topology-pack-domain, 1.4 and later)"}},
		{"component constraint without the deployment's", with("1.4.0", "", "topologyConstraint: {packDomain: rack}, "),
			[]string{"spec.topologyConstraint: is required when any component topology constraint is set"}},
		{"an empty component constraint", with("1.4.0", spec+"", "topologyConstraint: {}, "),
			[]string{`spec.components[1].topologyConstraint.packDomain: "" must match`}},
		{"deployment pack domain inherited", with("1.3.0", "  topologyConstraint: {clusterTopologyName: grove-topology, packDomain: rack}\n", ""), nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := check(t, nil, tc.manifest)
			var got []string
			for _, f := range r.Findings {
				if f.ID == preflight.FindingInvalidManifest {
					got = append(got, f.Message)
				}
			}
			if len(got) != len(tc.want) {
				t.Fatalf("want %d InvalidManifest, got %q", len(tc.want), got)
			}
			for i := range got {
				if !strings.Contains(got[i], tc.want[i]) {
					t.Errorf("finding %d: %q does not contain %q", i, got[i], tc.want[i])
				}
			}
		})
	}
}
