package preflight_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/preflight"
)

// checkAgainst checks manifest as an update of existing (nil: the cluster
// has no such DGD, a create), or offline when checked is false.
func checkAgainst(t *testing.T, manifest, existing string, checked bool) *preflight.Report {
	t.Helper()
	var ex *unstructured.Unstructured
	if existing != "" {
		ex = objects(t, existing)[0]
	}
	m := objects(t, manifest)[0]
	return preflight.Check(preflight.Options{Manifests: []preflight.Manifest{{Object: m, Source: "test.yaml", Existing: ex, ExistingChecked: checked}}})
}

// TestUpdateRules (issue 30, item 5): with the existing DGD read live, the
// webhook's update rules, in its words, with upstream's update cases
// (dynamographdeployment_test.go: "v1beta1 type change is rejected by CEL",
// "v1beta1 changed minAvailable update is rejected by CEL", "workload
// provider cannot change", "valid v1beta1 update reaches the webhook", …).
func TestUpdateRules(t *testing.T) {
	base := webhookDGD(nil)
	cases := []struct {
		name, manifest string
		want           []string
	}{
		{"valid v1beta1 update reaches the webhook", strings.Replace(base, "annotations: {}", "annotations: {}\n  labels: {updated: \"true\"}", 1), nil},
		{"a component added", base + "  - {name: decode, type: decode, podTemplate: {spec: {containers: [{name: main, image: x}]}}}\n",
			[]string{"spec.components: component topology is immutable and cannot be modified after creation: components added: [decode]: the webhook rejects this update of the existing DynamoGraphDeployment"}},
		{"a component removed", strings.Split(base, "  - name: worker")[0],
			[]string{"spec.components: component topology is immutable and cannot be modified after creation: components removed: [worker]"}},
		{"backendFramework changed", strings.Replace(base, "backendFramework: vllm", "backendFramework: sglang", 1),
			[]string{`spec.backendFramework: is immutable and cannot be changed after creation (the existing DynamoGraphDeployment has "vllm")`}},
		{"a policy added", specLine("experimental: {kvTransferPolicy: {labelKey: topology.kubernetes.io/zone, domain: zone}}")(base),
			[]string{"spec.experimental.kvTransferPolicy: is immutable and cannot be added, removed, or changed after creation; delete and recreate the DynamoGraphDeployment to change the KV transfer policy"}},
		{"a deployment topology added", specLine("topologyConstraint: {clusterTopologyName: grove-topology, packDomain: rack}")(base),
			[]string{"spec.topologyConstraint: is immutable and cannot be added, removed, or changed after creation; delete and recreate the DynamoGraphDeployment to change topology constraints"}},
		{"a component topology added", worker("topologyConstraint: {packDomain: rack}")(specLine("topologyConstraint: {clusterTopologyName: grove-topology, packDomain: zone}")(base)),
			[]string{"spec.components[1].topologyConstraint: is immutable", "spec.topologyConstraint: is immutable"}},
		{"multinode toggled", worker("multinode: {nodeCount: 2}")(base),
			[]string{"spec.components[1].multinode: cannot change node topology between single-node and multi-node after creation"}},
		{"v1beta1 type change is rejected by CEL", strings.Replace(base, "    type: worker\n", "    type: decode\n", 1),
			[]string{`spec.components[1]: type is immutable after it is set (the existing DynamoGraphDeployment has "worker")`}},
		{"inter-pod GMS toggled", worker("experimental: {gpuMemoryService: {mode: InterPod}}")(base),
			[]string{"spec.components[1].experimental.gpuMemoryService.mode: the inter-pod GMS layout cannot be toggled after creation"}},
		{"workload provider cannot change", annotate("nvidia.com/workload-provider: component")(base),
			[]string{`metadata.annotations[nvidia.com/workload-provider]: "component": field is immutable (the existing DynamoGraphDeployment has "grove")`}},
	}
	existing := annotate("nvidia.com/workload-provider: grove")(base)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := checkAgainst(t, tc.manifest, existing, true)
			var got []string
			for _, f := range r.Findings {
				if f.ID == preflight.FindingInvalidManifest || f.ID == preflight.FindingInvalidPolicy {
					got = append(got, f.Message)
				}
			}
			if len(got) != len(tc.want) {
				t.Fatalf("want %d rejections, got:\n%s", len(tc.want), dump(r))
			}
			for _, w := range tc.want {
				if !strings.Contains(strings.Join(got, "\n"), w) {
					t.Errorf("want %q in:\n%s", w, strings.Join(got, "\n"))
				}
			}
			// Created instead, the same manifest passes the update rules.
			for _, f := range checkAgainst(t, tc.manifest, "", true).Findings {
				if strings.Contains(f.Message, "this update") {
					t.Errorf("an update rule on a create: %s", f.Message)
				}
			}
		})
	}
	t.Run("scaling adapter owns replicas", func(t *testing.T) {
		withAdapter := worker("scalingAdapter: {}")(base)
		r := checkAgainst(t, strings.Replace(withAdapter, "replicas: 1", "replicas: 3", 1), withAdapter, true)
		if !strings.Contains(dump(r), "spec.components[1].replicas: cannot be modified directly when scaling adapter is enabled; scale or update the related DynamoGraphDeploymentScalingAdapter instead (the existing DynamoGraphDeployment has 1)") {
			t.Errorf("got:\n%s", dump(r))
		}
	})
	t.Run("the stored provider decides the pathway", func(t *testing.T) {
		// On create, enable-grove (absent) selects Grove; the existing DGD was
		// created on the component provider, which stays.
		m := specLine("priorityClassName: high-priority")(base)
		r := checkAgainst(t, m, annotate("nvidia.com/workload-provider: component")(base), true)
		if !strings.Contains(dump(r), `spec.priorityClassName: requires the Grove pathway, but workload provider "component" is selected (the existing DynamoGraphDeployment's nvidia.com/workload-provider)`) {
			t.Errorf("got:\n%s", dump(r))
		}
		if strings.Contains(dump(checkAgainst(t, m, "", true)), "priorityClassName") {
			t.Error("a create on the Grove pathway rejected priorityClassName")
		}
	})
	t.Run("restart is for existing deployments", func(t *testing.T) {
		m := specLine("restart: {id: roll}")(base)
		if !strings.Contains(dump(checkAgainst(t, m, "", true)), "spec.restart: spec.restart must be unset on create") {
			t.Error("a create with spec.restart passed")
		}
		for _, f := range checkAgainst(t, m, existing, true).Findings {
			if strings.Contains(f.Message, "spec.restart") {
				t.Errorf("an update with spec.restart: %s", f.Message)
			}
		}
	})
}

// TestLifecycleHints: a fix that the webhook rejects on update is offered as
// is for a new DGD, replaced by what works on update (and delete and
// recreate) for an existing one, and offline says it holds for a new one.
func TestLifecycleHints(t *testing.T) {
	pin := func(z string) string { return "nodeSelector: {topology.kubernetes.io/zone: " + z + "}," }
	m := dgd("d", zoneRequired, comp("pa", "prefill", 1, 1, pin("a")), comp("pc", "prefill", 1, 1, pin("c")), comp("da", "decode", 1, 1, pin("a")))
	hint := func(r *preflight.Report) string {
		for _, f := range r.Findings {
			if f.ID == "PrefillDomainWithoutDecode" {
				return f.Hint
			}
		}
		t.Fatalf("no PrefillDomainWithoutDecode:\n%s", dump(r))
		return ""
	}
	create := hint(checkAgainst(t, m, "", true))
	update := hint(checkAgainst(t, m, m, true))
	offline := hint(checkAgainst(t, m, "", false))
	if !strings.HasPrefix(create, "add a decode component pinned to zone=c") || strings.Contains(create, "existing") {
		t.Errorf("create: %q", create)
	}
	if !strings.HasPrefix(update, "keep prefill out of zone c, or widen an existing decode component's node affinity") ||
		!strings.Contains(update, "the DynamoGraphDeployment exists, and the webhook rejects adding a component and changing kvTransferPolicy on update: delete and recreate it to add a decode component") {
		t.Errorf("update: %q", update)
	}
	if !strings.HasPrefix(offline, "add a decode component pinned to zone=c") || !strings.Contains(offline, "(for a new DynamoGraphDeployment: on an existing one the webhook rejects adding a component and changing kvTransferPolicy on update, so delete and recreate it") {
		t.Errorf("offline: %q", offline)
	}
}
