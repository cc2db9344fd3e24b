package build

import (
	"cmp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
)

// The Dynamo operator's controller manager, as its Helm chart labels it
// (deploy/helm/charts/platform/components/operator/templates/deployment.yaml):
// the manager container runs /manager --operator-version=<chart appVersion>.
const (
	bldLabelPartOf       = "app.kubernetes.io/part-of"
	bldLabelControlPlane = "control-plane"
	bldOperatorContainer = "manager"
	bldOperatorVersion   = "--operator-version="
	// bldMaxVersion bounds a version string read from the cluster.
	bldMaxVersion = 64
)

// bldIsOperator reports whether a Deployment is a Dynamo operator's
// controller manager.
func bldIsOperator(u *unstructured.Unstructured) bool {
	l := u.GetLabels()
	return l[bldLabelPartOf] == "dynamo-operator" && l[bldLabelControlPlane] == "controller-manager"
}

// bldOperator reads an operator Deployment: the manager container's image and
// --operator-version (else the image tag). Malformed fields read as "".
func bldOperator(u *unstructured.Unstructured) model.Operator {
	op := model.Operator{Namespace: u.GetNamespace(), Name: u.GetName()}
	cs, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
	for _, c := range cs {
		m, _ := c.(map[string]any)
		if name, _ := m["name"].(string); name != bldOperatorContainer {
			continue
		}
		if img, _ := m["image"].(string); len(img) <= bldMaxImageRef {
			op.Image = img
		}
		args, _ := m["args"].([]any)
		for _, a := range args {
			if s, _ := a.(string); strings.HasPrefix(s, bldOperatorVersion) {
				if v := strings.TrimPrefix(s, bldOperatorVersion); len(v) <= bldMaxVersion {
					op.Version = v
				}
			}
		}
	}
	if op.Version == "" {
		if _, tag, ok := strings.Cut(imageAfterHost(op.Image), ":"); ok && len(tag) <= bldMaxVersion {
			op.Version = tag
		}
	}
	return op
}

// imageAfterHost drops a registry host (whose port would read as a tag) and
// a digest from an image reference.
func imageAfterHost(ref string) string {
	ref, _, _ = strings.Cut(ref, "@")
	if i := strings.LastIndex(ref, "/"); i >= 0 {
		return ref[i+1:]
	}
	return ref
}

// sortOperators orders operators by namespace and name.
func sortOperators(ops []model.Operator) {
	slices.SortFunc(ops, func(a, b model.Operator) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
}
