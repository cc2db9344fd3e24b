package completion_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/kubeenv"
)

// applyExample creates an example capture's Kubernetes objects, and their
// namespaces, in the test API server: test setup as the admin (the plugin itself
// never writes).
func applyExample(t *testing.T, e *kubeenv.Env, file string) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := kubeenv.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var apply []*unstructured.Unstructured
	namespaces := map[string]bool{}
	for _, u := range objs {
		if u.GetAPIVersion() == "kubectl-dynamo.io/v1alpha1" {
			continue // etcd keys and frontend scrapes: not Kubernetes objects
		}
		u = u.DeepCopy()
		for _, f := range []string{"uid", "resourceVersion", "creationTimestamp", "generation"} {
			unstructured.RemoveNestedField(u.Object, "metadata", f)
		}
		if u.GetKind() == "Service" {
			unstructured.RemoveNestedField(u.Object, "spec", "clusterIP")
			unstructured.RemoveNestedField(u.Object, "spec", "clusterIPs")
		}
		if ns := u.GetNamespace(); ns != "" && !namespaces[ns] {
			namespaces[ns] = true
			apply = append(apply, &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}})
		}
		apply = append(apply, u)
	}
	if _, err := e.Apply(ctx, apply...); err != nil {
		t.Fatal(err)
	}
}

// TestCompleteLive completes against a real API server holding two examples, as
// a user bound to docs/rbac/clusterrole.yaml (which has no list on namespaces),
// checks that every completion agrees with the same completion on the capture
// file, and that completion sent only get and list requests.
func TestCompleteLive(t *testing.T) {
	e := kubeenv.Require(t, env)
	applyExample(t, e, prefillOnly)
	applyExample(t, e, etcdRack)
	ctx := context.Background()
	role, err := os.ReadFile("../../docs/rbac/clusterrole.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.ApplyYAML(ctx, role); err != nil {
		t.Fatal(err)
	}
	reader, err := e.KubeconfigFor("completer", []string{"dynamo-readers"})
	if err != nil {
		t.Fatal(err)
	}
	admin, err := e.KubeconfigFor("completion-admin", []string{"system:masters"})
	if err != nil {
		t.Fatal(err)
	}
	offset, err := e.AuditOffset()
	if err != nil {
		t.Fatal(err)
	}

	// Live and offline agree, for each helper.
	for _, tc := range []struct {
		name    string
		file    string
		args    []string
		nonzero bool
	}{
		{"deployments", prefillOnly, []string{"topology", "-n", "serving", ""}, true},
		{"v1alpha1 deployments", etcdRack, []string{"topology", "-n", "research", ""}, true},
		{"no deployment in namespace", prefillOnly, []string{"topology", "-n", "empty", ""}, false},
		{"prefill pods", prefillOnly, []string{"probe", "qwen3-32b", "-n", "serving", "--prefill", ""}, true},
		{"all worker pods, no name", prefillOnly, []string{"probe", "-n", "serving", "--exclude-worker", ""}, true},
		{"pods after a comma", prefillOnly, []string{"probe", "-n", "serving", "--exclude-worker", "qwen3-32b-0-decode-us-east-1a-0,qwen3-32b-0-decode-us-east-1a"}, true},
		{"domain values", prefillOnly, []string{"probe", "qwen3-32b", "-n", "serving", "--domain-down", ""}, true},
		{"rack domain values", etcdRack, []string{"probe", "deepseek-r1", "-n", "research", "--domain-down", "rack="}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			live, ld := complete(t, append([]string{"--kubeconfig", reader}, tc.args...)...)
			offline, od := complete(t, append([]string{"--from-file", tc.file}, tc.args...)...)
			if diff := cmp.Diff(offline, live); diff != "" || ld != od {
				t.Errorf("live differs from the capture (-offline +live):\n%s\ndirectives %s %s", diff, od, ld)
			}
			if tc.nonzero && len(live) == 0 {
				t.Errorf("no live candidates")
			}
		})
	}

	// -n: the reader may not list namespaces, so it gets the namespaces of the
	// deployments it can read; the admin also gets the others, after them.
	// capture has no --from-file; it completes as topology does.
	got, _ := complete(t, "--kubeconfig", reader, "capture", "-n", "serving", "q")
	if want := []string{"qwen3-32b\tzone required, namespace serving"}; !slices.Equal(got, want) {
		t.Errorf("capture: %q, want %q", got, want)
	}

	got, directive := complete(t, "--kubeconfig", reader, "topology", "-n", "")
	want := []string{"research\t1 Dynamo deployment: deepseek-r1", "serving\t1 Dynamo deployment: qwen3-32b"}
	if diff := cmp.Diff(want, got); diff != "" || directive != noFileCompKeepOrder {
		t.Errorf("reader's namespaces (-want +got):\n%s\ndirective %s", diff, directive)
	}
	got, _ = complete(t, "--kubeconfig", admin, "topology", "-n", "")
	if len(got) < 3 || !slices.Equal(got[:2], want) || !slices.Contains(got, "default") {
		t.Errorf("admin's namespaces = %q", got)
	}

	// A user who may read nothing gets nothing, silently.
	nobody, err := e.KubeconfigFor("completion-nobody", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"topology", "-n", "serving", ""}, {"topology", "-n", ""}, {"probe", "-n", "serving", "--prefill", ""}} {
		if got, _ := complete(t, append([]string{"--kubeconfig", nobody}, args...)...); len(got) != 0 {
			t.Errorf("%v as nobody: %q", args, got)
		}
	}

	events, _, err := e.AuditEventsFrom(offset)
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, ev := range events {
		if !strings.HasPrefix(ev.User, "completer") && !strings.HasPrefix(ev.User, "completion-") {
			continue
		}
		seen++
		if ev.IsMutating() || (ev.Verb != "get" && ev.Verb != "list") {
			t.Errorf("completion sent %s %s as %s", ev.Verb, ev.RequestURI, ev.User)
		}
	}
	if seen == 0 {
		t.Error("no audited request from the completion users: the audit check is not looking at the right users")
	}
}
