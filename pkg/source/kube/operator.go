package kube

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// OperatorSelector selects the Dynamo operator's controller-manager
// Deployment, as the operator's Helm chart labels it
// (deploy/helm/charts/platform/components/operator/templates/deployment.yaml).
const OperatorSelector = "app.kubernetes.io/part-of=dynamo-operator,control-plane=controller-manager"

// maxOperatorArgs bounds the manager arguments kept.
const maxOperatorArgs = 64

// trimOperator keeps of an operator Deployment only what tells its release:
// apiVersion, kind, name, namespace, labels, and each container's name,
// image and --operator-version argument. The rest (env, volumes, the other
// arguments) is dropped before anything else sees it, so a capture never
// carries it.
func trimOperator(u *unstructured.Unstructured) {
	keep := map[string]any{"apiVersion": u.GetAPIVersion(), "kind": u.GetKind()}
	meta := map[string]any{"name": u.GetName(), "namespace": u.GetNamespace()}
	if l := u.GetLabels(); len(l) > 0 {
		labels := map[string]any{}
		for k, v := range l {
			labels[k] = v
		}
		meta["labels"] = labels
	}
	keep["metadata"] = meta
	cs, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
	var out []any
	for _, c := range cs {
		m, ok := c.(map[string]any)
		if !ok {
			continue
		}
		tc := map[string]any{}
		if n, ok := m["name"].(string); ok {
			tc["name"] = n
		}
		if img, ok := m["image"].(string); ok {
			tc["image"] = img
		}
		args, _ := m["args"].([]any)
		var kept []any
		for i, a := range args {
			if s, ok := a.(string); ok && i < maxOperatorArgs && strings.HasPrefix(s, "--operator-version") {
				kept = append(kept, s)
			}
		}
		if len(kept) > 0 {
			tc["args"] = kept
		}
		out = append(out, tc)
	}
	if len(out) > 0 {
		keep["spec"] = map[string]any{"template": map[string]any{"spec": map[string]any{"containers": out}}}
	}
	u.Object = keep
}
