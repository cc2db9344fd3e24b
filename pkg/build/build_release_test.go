package build

import (
	"os"
	"strings"
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/capture"
)

// operatorItem is a Dynamo operator's controller-manager Deployment as its
// Helm chart renders it (labels, the manager container and its
// --operator-version), at the capture's item indentation.
func operatorItem(ns, name string, labels bool, image, version string) string {
	l := ""
	if labels {
		l = `
    labels:
      app.kubernetes.io/part-of: dynamo-operator
      control-plane: controller-manager`
	}
	return `- apiVersion: apps/v1
  kind: Deployment
  metadata:` + l + `
    name: ` + name + `
    namespace: ` + ns + `
  spec:
    template:
      spec:
        containers:
        - name: kube-rbac-proxy
          image: quay.io/brancz/kube-rbac-proxy:v0.15.0
        - name: manager
          image: ` + image + `
          command: [/manager]
          args: [--health-probe-bind-address=:8081, "--operator-version=` + version + `"]
`
}

// TestBuildOperatorsAndWorkerRouterArgs: the operator's release is read from
// its --operator-version (else its image tag, bounded), Deployments that are
// not the operator are ignored; decode pods that set DYN_ROUTER_MODE=kv in
// their env carry their own router mode, with the pod as its source, whatever
// the release (pkg/behavior decides whether the release honours it).
func TestBuildOperatorsAndWorkerRouterArgs(t *testing.T) {
	data, err := os.ReadFile("../../examples/prefill-only-zone-required.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	long := strings.Repeat("9", 200)
	items := operatorItem("dynamo-system", "dynamo-platform-dynamo-operator-controller-manager", true, "nvcr.io/nvidia/ai-dynamo/kubernetes-operator:1.4.0", "1.4.1") +
		operatorItem("other", "look-alike", false, "nvcr.io/nvidia/ai-dynamo/kubernetes-operator:0.1.0", "0.1.0") +
		operatorItem("team-b", "dynamo-operator-controller-manager", true, "registry.example:5000/ai-dynamo/kubernetes-operator:1.3.2@sha256:abc", long)
	text = strings.Replace(text, "\nitems:\n", "\nitems:\n"+items, 1)
	decodeEnv := "      - name: DYN_COMPONENT\n        value: decode\n"
	if !strings.Contains(text, decodeEnv) {
		t.Fatal("the example changed: update this test")
	}
	text = strings.ReplaceAll(text, decodeEnv, decodeEnv+"      - name: DYN_ROUTER_MODE\n        value: kv\n")
	b, err := capture.Parse([]byte(text), "test")
	if err != nil {
		t.Fatal(err)
	}
	s, err := Build(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Operators) != 2 {
		t.Fatalf("operators %+v", s.Operators)
	}
	if op := s.Operators[0]; op.Namespace != "dynamo-system" || op.Version != "1.4.1" || op.Image != "nvcr.io/nvidia/ai-dynamo/kubernetes-operator:1.4.0" {
		t.Errorf("operator %+v", op)
	}
	// A version past the bound is not read: the image tag (after the
	// registry's port, before the digest) is.
	if op := s.Operators[1]; op.Namespace != "team-b" || op.Version != "1.3.2" {
		t.Errorf("operator %+v", op)
	}
	dep := mustDep(t, s, "serving/qwen3-32b")
	if len(dep.Router.WorkerArgs) != 1 {
		t.Fatalf("worker args %+v", dep.Router.WorkerArgs)
	}
	o := dep.Router.WorkerArgs[0]
	if o.Component != "Decode" || o.Mode != "kv" || !strings.HasPrefix(o.Source, "pod qwen3-32b-0-decode-") || !strings.HasSuffix(o.Source, "env DYN_ROUTER_MODE") {
		t.Errorf("worker args %+v", o)
	}
	if o.Config != routecore.DefaultKvRouterConfig() {
		t.Errorf("kv mode with no KV flags carries the default KV router config: %+v", o.Config)
	}
}
