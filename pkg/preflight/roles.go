package preflight

import (
	"encoding/json"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/build"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw/decode"
)

// Pod labels the operator puts on a component's pods (k8s-objects.md §2.1).
const (
	labelDGD              = "nvidia.com/dynamo-graph-deployment-name"
	labelComponent        = "nvidia.com/dynamo-component"
	labelComponentType    = "nvidia.com/dynamo-component-type"
	labelSubComponentType = "nvidia.com/dynamo-sub-component-type"
)

// modelled is what pkg/build makes of a DGD and the pods the operator would
// render for it: one pod per component.
type modelled struct {
	snap  *model.Snapshot
	dep   *model.Deployment
	roles map[string]model.Worker
	notes []model.Note
}

// buildModel runs build.Build over the DGD, one rendered pod per component and the
// cluster's Grove topology objects, so that the policy, the topology object, the
// router mode and every worker's role are decided by the same code as topology.
func buildModel(u *unstructured.Unstructured, comps []*component, topologies []*unstructured.Unstructured) (*modelled, error) {
	objs := []raw.Object{u.Object}
	for _, t := range topologies {
		objs = append(objs, t.Object)
	}
	for _, c := range comps {
		labels := map[string]string{labelDGD: u.GetName(), labelComponent: c.name}
		if c.ctype != "" {
			labels[labelComponentType] = c.ctype
		}
		if c.subType != "" {
			labels[labelSubComponentType] = c.subType
		}
		pod := corev1.Pod{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			ObjectMeta: metav1.ObjectMeta{Name: u.GetName() + "-" + strings.ToLower(c.name) + "-0", Namespace: u.GetNamespace(), Labels: labels},
			Spec:       c.pod,
		}
		data, err := json.Marshal(&pod)
		if err != nil {
			return nil, err
		}
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			return nil, err
		}
		objs = append(objs, m)
	}
	snap, err := build.Build(&raw.Bundle{Objects: decode.FromObjects(objs)})
	if err != nil {
		return nil, err
	}
	out := &modelled{snap: snap, roles: map[string]model.Worker{}, notes: snap.Notes}
	for i := range snap.Deployments {
		d := &snap.Deployments[i]
		if d.Name == u.GetName() && d.Namespace == u.GetNamespace() {
			out.dep = d
		}
	}
	if out.dep == nil {
		return out, nil
	}
	for _, w := range out.dep.Workers {
		out.roles[strings.ToLower(w.Component)] = w
	}
	return out, nil
}
