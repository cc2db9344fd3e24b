package kube_test

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/fakekube"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw/decode"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/kube"
)

// operatorLabels are the labels OperatorSelector selects.
var operatorLabels = map[string]string{"app.kubernetes.io/part-of": "dynamo-operator", "control-plane": "controller-manager"}

// TestCollectOperatorDeployment: the operator's controller-manager Deployment
// is read by label in every namespace; kept whole (for a capture) it is
// trimmed to what tells its release, and its typed object is the one a
// capture of it gives, so that a live read and its capture agree.
func TestCollectOperatorDeployment(t *testing.T) {
	f := fakekube.FakeCluster(2)
	spec := map[string]any{"replicas": int64(1), "template": map[string]any{"spec": map[string]any{
		"volumes": []any{map[string]any{"name": "cert"}},
		"containers": []any{
			map[string]any{"name": "kube-rbac-proxy", "image": "quay.io/brancz/kube-rbac-proxy:v0.15.0", "args": []any{"--secure-listen-address=0.0.0.0:8443"}},
			map[string]any{"name": "manager", "image": "nvcr.io/nvidia/ai-dynamo/kubernetes-operator:1.4.0", "command": []any{"/manager"},
				"args": []any{"--health-probe-bind-address=:8081", "--operator-version=1.4.1", "--token=secret"},
				"env":  []any{map[string]any{"name": "PASSWORD", "value": "secret"}}},
		}}}}
	f.Add(kube.GVRDeployments,
		fakekube.Obj("apps/v1", "Deployment", "dynamo-system", "dynamo-operator-controller-manager", operatorLabels,
			map[string]any{"spec": spec}),
		fakekube.Obj("apps/v1", "Deployment", "other", "look-alike", map[string]string{"app": "x"}, map[string]any{"spec": spec}))
	r, err := kube.Collect(context.Background(), kube.Options{API: f, Namespace: "inf", KeepObjects: true})
	if err != nil {
		t.Fatal(err)
	}
	var whole []raw.Object
	for _, m := range r.AsRead {
		if m["kind"] == "Deployment" {
			whole = append(whole, m)
		}
	}
	wantWhole := []raw.Object{{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "dynamo-operator-controller-manager", "namespace": "dynamo-system",
			"labels": map[string]any{"app.kubernetes.io/part-of": "dynamo-operator", "control-plane": "controller-manager"}},
		"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{
			map[string]any{"name": "kube-rbac-proxy", "image": "quay.io/brancz/kube-rbac-proxy:v0.15.0"},
			map[string]any{"name": "manager", "image": "nvcr.io/nvidia/ai-dynamo/kubernetes-operator:1.4.0", "args": []any{"--operator-version=1.4.1"}},
		}}}},
	}}
	if !reflect.DeepEqual(whole, wantWhole) {
		g, _ := json.Marshal(whole)
		w, _ := json.Marshal(wantWhole)
		t.Errorf("kept whole:\n%s\nwant\n%s", g, w)
	}
	if len(r.Objects.Deployments) != 1 {
		t.Fatalf("typed deployments %+v", r.Objects.Deployments)
	}
	if args := r.Objects.Deployments[0].Spec.Template.Spec.Containers[1].Args; !reflect.DeepEqual(args, []string{"--operator-version=1.4.1"}) {
		t.Errorf("typed manager args %q, want only its --operator-version", args)
	}
	// As a capture of it reads it.
	data, err := json.Marshal(whole[0])
	if err != nil {
		t.Fatal(err)
	}
	m, err := decode.JSONObject(data)
	if err != nil {
		t.Fatal(err)
	}
	if got := decode.FromObject(m).Deployments; !reflect.DeepEqual(got, r.Objects.Deployments) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(r.Objects.Deployments)
		t.Errorf("the capture reads\n%s\nthe live read\n%s", g, w)
	}
}
