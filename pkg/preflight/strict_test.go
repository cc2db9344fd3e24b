package preflight_test

import (
	"strings"
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/preflight"
)

const alphaStrictDGD = `apiVersion: nvidia.com/v1alpha1
kind: DynamoGraphDeployment
metadata: {name: d, namespace: ns}
spec:
  backendFramework: vllm
  experimental:
    kvTransferPolicy: {labelKey: topology.kubernetes.io/zone, domain: zone}
  services:
    Frontend: {componentType: frontend, extraPodSpec: {mainContainer: {image: x}}}
    Worker:
      componentType: worker
      subComponentType: decode
      replicas: 1
      resources: {limits: {gpu: "1"}}
      extraPodSpec: {mainContainer: {image: x, args: [--model, m]}}
`

// TestStrictDecoding (issue 30, item 3): kubectl apply validates fields
// strictly, so preflight does too, for both API versions: an unknown field is
// an error naming its path and the nearest known field; a wrong type says
// what was expected, in our words (no Go type or struct name); a part that
// could not be read is not reported twice.
func TestStrictDecoding(t *testing.T) {
	beta := dgd("d", "{labelKey: topology.kubernetes.io/zone, domain: zone, enforcement: required}",
		comp("p", "prefill", 1, 1, ""), comp("dec", "decode", 1, 1, ""))
	cases := []struct {
		name     string
		manifest string
		// want are (id, message fragment) of the expected findings' rejection.
		want [][2]string
	}{
		{"valid v1beta1", beta, nil},
		{"valid v1alpha1", alphaStrictDGD, nil},
		{"a typo in kvTransferPolicy drops the policy", strings.Replace(beta, "kvTransferPolicy:", "kvTransferPolicey:", 1),
			[][2]string{{"InvalidManifest", "spec.experimental.kvTransferPolicey: unknown field; did you mean kvTransferPolicy?"}}},
		{"a typo in enforcement", strings.Replace(beta, "enforcement: required", "enforcment: required", 1),
			[][2]string{{"InvalidPolicy", "spec.experimental.kvTransferPolicy.enforcment: unknown field; did you mean enforcement?"}}},
		{"a quoted weight", strings.Replace(beta, "enforcement: required}", `enforcement: preferred, preferredWeight: "0.5"}`, 1),
			[][2]string{{"InvalidPolicy", `spec.experimental.kvTransferPolicy.preferredWeight: must be a number, not the string "0.5" (write it without quotes)`}}},
		{"a quoted replica count", strings.Replace(beta, "replicas: 1,", `replicas: "1",`, 1),
			[][2]string{{"InvalidManifest", `spec.components[1].replicas: must be a whole number, not the string "1" (write it without quotes)`}}},
		{"a typo in a container", strings.Replace(beta, "containers: [{name: main, image: x, resources", "containers: [{name: main, image: x, imagePulPolicy: Always, resources", 1),
			[][2]string{{"InvalidManifest", "spec.components[1].podTemplate.spec.containers[0].imagePulPolicy: unknown field; did you mean imagePullPolicy?"}}},
		{"a number where a string goes", strings.Replace(beta, "backendFramework: vllm", "backendFramework: 3", 1),
			[][2]string{{"InvalidManifest", `spec.backendFramework: must be a string, not the number 3 (quote it: "3")`}}},
		{"a bad GPU quantity", strings.Replace(beta, `nvidia.com/gpu: "1"`, `nvidia.com/gpu: "one"`, 1),
			[][2]string{{"InvalidManifest", `spec.components[1].podTemplate.spec.containers[0].resources.limits.nvidia.com/gpu: "one" is not a quantity`}}},
		{"a field of the other version", strings.Replace(beta, "  components:", "  envs: []\n  components:", 1),
			[][2]string{{"InvalidManifest", "spec.envs: unknown field; did you mean env?"}}},
		{"v1alpha1: a typo in a service", strings.Replace(alphaStrictDGD, "subComponentType: decode", "subComponentTyp: decode", 1),
			[][2]string{{"InvalidManifest", "spec.services.Worker.subComponentTyp: unknown field; did you mean subComponentType?"}}},
		{"v1alpha1: a typo in the main container", strings.Replace(alphaStrictDGD, "args: [--model, m]", "argz: [--model, m]", 1),
			[][2]string{{"InvalidManifest", "spec.services.Worker.extraPodSpec.mainContainer.argz: unknown field; did you mean args?"}}},
		{"v1alpha1: a list where an object goes", strings.Replace(alphaStrictDGD, "resources: {limits: {gpu: \"1\"}}", "resources: [gpu]", 1),
			[][2]string{{"InvalidManifest", "spec.services.Worker.resources: must be an object (field: value), not a list"}}},
		{"v1alpha1: a typo in the policy", strings.Replace(alphaStrictDGD, "domain: zone}", "domian: zone}", 1),
			[][2]string{{"InvalidPolicy", "spec.experimental.kvTransferPolicy.domain: is required"}, {"InvalidPolicy", "spec.experimental.kvTransferPolicy.domian: unknown field; did you mean domain?"}}},
		{"open subtrees are not checked", strings.Replace(beta, "  components:", "  providerOverride: {apiVersion: grove.io/v1alpha1, value: {spec: {anything: 1}}}\n  components:", 1), nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := check(t, nil, tc.manifest)
			var got [][2]string
			for _, f := range r.Findings {
				if f.ID == preflight.FindingInvalidManifest || f.ID == preflight.FindingInvalidPolicy {
					got = append(got, [2]string{f.ID, f.Message})
				}
				for _, leak := range []string{"Go struct", "Go value", "Wire", "json:", "unmarshal"} {
					if strings.Contains(f.Message, leak) {
						t.Errorf("a Go decoding detail leaks (%q): %s", leak, f.Message)
					}
				}
			}
			if len(got) != len(tc.want) {
				t.Fatalf("want %d rejections, got %d:\n%s", len(tc.want), len(got), dump(r))
			}
			for i, w := range tc.want {
				if got[i][0] != w[0] || !strings.Contains(got[i][1], w[1]) {
					t.Errorf("finding %d: got %s %q, want %s containing %q", i, got[i][0], got[i][1], w[0], w[1])
				}
			}
		})
	}
}
