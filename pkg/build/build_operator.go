package build

import (
	"cmp"
	"slices"
	"strings"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw"
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
func bldIsOperator(d *raw.Deployment) bool {
	l := d.Labels
	return l[bldLabelPartOf] == "dynamo-operator" && l[bldLabelControlPlane] == "controller-manager"
}

// bldOperator reads an operator Deployment: the manager container's image and
// --operator-version (else the image tag). Malformed fields read as "".
func bldOperator(d *raw.Deployment) model.Operator {
	op := model.Operator{Namespace: d.Namespace, Name: d.Name}
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Name != bldOperatorContainer {
			continue
		}
		if len(c.Image) <= bldMaxImageRef {
			op.Image = c.Image
		}
		for _, s := range c.Args {
			if strings.HasPrefix(s, bldOperatorVersion) {
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
