package e2e

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/kubeenv"
)

// TestSafetyLeastPrivilege runs the plugin as users bound only to the shipped
// roles (docs/rbac/clusterrole.yaml as is, docs/rbac/role.yaml for the
// namespace), then to narrower ClusterRoles that each drop one permission from
// the shipped one. The shipped ClusterRole must be enough for a clean report;
// every narrower role must still report (exit 2: the example's
// PrefillDomainWithoutDecode) with a note that names the missing permission and
// its consequence. TestTopologyLiveDegradesWithoutPermissions covers all of them
// missing at once and TestTopologyLiveNoPermissionsFails none granted (exit 1).
func TestSafetyLeastPrivilege(t *testing.T) {
	e := kubeenv.Require(t, env)
	loadExample(t, e, exampleQwen)
	ctx := context.Background()

	// The shipped ClusterRole, as is.
	kc := docsReaderKubeconfig(t, e, "rbac-docs-clusterrole")
	r, stderr, code := runTopology(t, kc, "-n", "serving")
	if code != 2 || len(r.Deployments) != 1 {
		t.Fatalf("shipped ClusterRole: exit %d, %d deployments; stderr %s", code, len(r.Deployments), stderr)
	}
	for _, n := range r.Notes {
		if strings.Contains(n.Message, "RBAC") || strings.Contains(n.Message, "forbidden") {
			t.Errorf("shipped ClusterRole: permission note %q", n.Message)
		}
	}
	for _, s := range r.Sources {
		if s.Kind == "kubernetes" && s.Degraded {
			t.Errorf("shipped ClusterRole: the Kubernetes source is degraded: %+v", s)
		}
	}
	if out, errOut, code := kubectlWith(t, kc, "dynamo", "capture", "-n", "serving", "--no-frontend"); code != 0 || !strings.Contains(out, "DynamoWorkerMetadata") {
		t.Errorf("shipped ClusterRole: capture exit %d\n%s", code, errOut)
	}
	// explain-route offline tokenizer: all it needs is in the role.
	if out, errOut, code := kubectlWith(t, kc, "dynamo", "explain-route", "qwen3-32b", "-n", "serving", "--prompt", explainPrompt,
		"--tokenizer", explainTokenizer, "--no-frontend"); code != 2 || !strings.Contains(out, "NoEndpoints") {
		t.Errorf("shipped ClusterRole: explain-route exit %d\n%s\n%s", code, out, errOut)
	}
	// POST /tokenize through the service proxy needs create, which the shipped
	// role leaves commented out: the error names the verb and the fallbacks.
	_, errOut, code := kubectlEnv(t, kc, emptyHFCache(t), "dynamo", "explain-route", "qwen3-32b", "-n", "serving", "--prompt", explainPrompt)
	if code != 1 || !strings.Contains(errOut, "create on services/proxy") || !strings.Contains(errOut, "--tokens") {
		t.Errorf("shipped ClusterRole, POST /tokenize through the proxy: exit %d, stderr %q", code, errOut)
	}
	t.Logf("shipped ClusterRole, POST /tokenize through the proxy: %s", strings.TrimSpace(errOut))
	roles := 1

	// The shipped namespaced Role, bound in "serving".
	data, err := os.ReadFile("../../docs/rbac/role.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.ApplyYAML(ctx, []byte(strings.ReplaceAll(string(data), "NAMESPACE", "serving"))); err != nil {
		t.Fatal(err)
	}
	roles++
	// The shipped RoleBinding binds the group dynamo-readers, which the shipped
	// ClusterRoleBinding (applied above) binds too; so the Role is also bound to a
	// second group, and the user is only in that one.
	nkc, err := e.KubeconfigFor("rbac-docs-role", []string{docsReaderGroup + "-ns"})
	if err != nil {
		t.Fatal(err)
	}
	bindRole(t, e, "Role", "kubectl-dynamo-reader", "serving", docsReaderGroup+"-ns")
	r, stderr, code = runTopology(t, nkc, "-n", "serving")
	checkDegraded(t, "shipped Role", r, stderr, code, 2,
		[]string{"cannot list nodes at cluster scope (RBAC: needs list on nodes)", "node labels"},
		[]string{"clustertopologybindings.grove.io", "Grove topology levels are unknown"})

	// Narrower ClusterRoles, each the shipped one minus one permission.
	cr := docsClusterRole(t)
	cases := []struct {
		name   string
		drop   string // resource removed from the rules
		args   []string
		notes  [][]string // each: substrings one note must contain
		noteOf string
	}{
		{name: "no-nodes", drop: "nodes", notes: [][]string{{"cannot list nodes at cluster scope", "RBAC: needs list on nodes", "TopologyLabelDrift"}}},
		{name: "no-dwm", drop: "dynamoworkermetadatas", notes: [][]string{{"dynamoworkermetadatas", "RBAC: needs list on dynamoworkermetadatas"}}},
		{name: "no-events", drop: "events", notes: [][]string{{"cannot list events", "RBAC: needs list on events"}}},
		{name: "no-service-proxy", drop: "services/proxy", notes: [][]string{{"RBAC: needs get on services/proxy", "--frontend-url"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			roles++
			narrow := cr.DeepCopy()
			narrow.Name = "safety-" + c.name
			narrow.Rules = nil
			for _, rule := range cr.Rules {
				rule = *rule.DeepCopy()
				rule.Resources = slices.DeleteFunc(rule.Resources, func(s string) bool { return s == c.drop })
				if len(rule.Resources) > 0 {
					narrow.Rules = append(narrow.Rules, rule)
				}
			}
			applyTyped(t, e, narrow, "ClusterRole")
			bindRole(t, e, "ClusterRole", narrow.Name, "", "safety-"+c.name)
			kc, err := e.KubeconfigFor("user-"+c.name, []string{"safety-" + c.name})
			if err != nil {
				t.Fatal(err)
			}
			r, stderr, code := runTopology(t, kc, "-n", "serving")
			checkDegraded(t, c.name, r, stderr, code, 2, c.notes...)
			if c.drop == "services/proxy" {
				return // the frontend source is degraded, not the Kubernetes one
			}
			degraded := false
			for _, s := range r.Sources {
				degraded = degraded || (s.Kind == "kubernetes" && s.Degraded)
			}
			if !degraded {
				t.Errorf("%s: the Kubernetes source is not marked degraded: %+v", c.name, r.Sources)
			}
		})
	}
	t.Logf("SAFETY-FIGURE roles-tried=%d (shipped ClusterRole, shipped Role, %d narrower; plus the combined narrow role and no role at all in topology_live_test.go)", roles, len(cases))
}

// checkDegraded asserts the exit code and that, for each want, one note contains
// all its substrings.
func checkDegraded(t *testing.T, what string, r liveReport, stderr string, code, wantCode int, wants ...[]string) {
	t.Helper()
	if code != wantCode || len(r.Deployments) != 1 {
		t.Fatalf("%s: exit %d (want %d), %d deployments; stderr %s", what, code, wantCode, len(r.Deployments), stderr)
	}
	var all []string
	for _, n := range r.Notes {
		all = append(all, n.Message)
	}
	for _, want := range wants {
		found := false
		for _, n := range all {
			ok := true
			for _, w := range want {
				ok = ok && strings.Contains(n, w)
			}
			found = found || ok
		}
		if !found {
			t.Errorf("%s: no note containing %q; notes:\n%s", what, want, strings.Join(all, "\n"))
		}
	}
	t.Logf("%s: exit %d, notes:\n  %s", what, code, strings.Join(all, "\n  "))
}

// docsClusterRole parses the ClusterRole of docs/rbac/clusterrole.yaml.
func docsClusterRole(t *testing.T) *rbacv1.ClusterRole {
	t.Helper()
	data, err := os.ReadFile("../../docs/rbac/clusterrole.yaml")
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(string(data), "\n---")
	var cr rbacv1.ClusterRole
	if err := yaml.Unmarshal([]byte(first), &cr); err != nil {
		t.Fatal(err)
	}
	if cr.Kind != "ClusterRole" || len(cr.Rules) == 0 {
		t.Fatalf("docs/rbac/clusterrole.yaml: first document is %s with %d rules", cr.Kind, len(cr.Rules))
	}
	return &cr
}

func applyTyped(t *testing.T, e *kubeenv.Env, obj any, kind string) {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetAPIVersion("rbac.authorization.k8s.io/v1")
	u.SetKind(kind)
	if _, err := e.Apply(context.Background(), u); err != nil {
		t.Fatal(err)
	}
}

// bindRole binds a Role (in namespace) or ClusterRole (namespace "") to group.
func bindRole(t *testing.T, e *kubeenv.Env, roleKind, role, namespace, group string) {
	t.Helper()
	subjects := []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: group}}
	ref := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: roleKind, Name: role}
	if roleKind == "ClusterRole" {
		b := &rbacv1.ClusterRoleBinding{Subjects: subjects, RoleRef: ref}
		b.Name = role + "-" + group
		applyTyped(t, e, b, "ClusterRoleBinding")
		return
	}
	b := &rbacv1.RoleBinding{Subjects: subjects, RoleRef: ref}
	b.Name, b.Namespace = role+"-"+group, namespace
	applyTyped(t, e, b, "RoleBinding")
}
