package kube

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw"
)

// OperatorSelector selects the Dynamo operator's controller-manager
// Deployment, as the operator's Helm chart labels it
// (deploy/helm/charts/platform/components/operator/templates/deployment.yaml).
const OperatorSelector = "app.kubernetes.io/part-of=dynamo-operator,control-plane=controller-manager"

// maxOperatorArgs bounds the manager arguments kept.
const maxOperatorArgs = 64

// operatorArg reports whether trimOperator keeps the i-th argument of a
// container.
func operatorArg(i int, s string) bool {
	return i < maxOperatorArgs && strings.HasPrefix(s, "--operator-version")
}

// trimOperator keeps of an operator Deployment read whole (for a capture)
// only what tells its release: apiVersion, kind, name, namespace, labels, and
// each container's name, image and --operator-version argument. The rest
// (env, volumes, the other arguments) is dropped before anything else sees
// it, so a capture never carries it.
func trimOperator(obj raw.Object) raw.Object {
	u := &unstructured.Unstructured{Object: obj}
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
			if s, ok := a.(string); ok && operatorArg(i, s) {
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
	return keep
}

// trimOperatorTyped keeps of a typed operator Deployment what trimOperator
// keeps of it whole, so that a live read and a capture of it read the same:
// the --operator-version arguments (and labels, containers and arguments that
// are empty read as absent, as the trimmed object has none).
func trimOperatorTyped(d *raw.Deployment) {
	if len(d.Labels) == 0 {
		d.Labels = nil
	}
	cs := d.Spec.Template.Spec.Containers
	if len(cs) == 0 {
		d.Spec.Template.Spec.Containers = nil
	}
	for i := range cs {
		var kept []string
		for j, s := range cs[i].Args {
			if operatorArg(j, s) {
				kept = append(kept, s)
			}
		}
		cs[i].Args = kept
	}
}
