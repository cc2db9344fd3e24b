package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
)

func snapshotOf(keys ...string) *model.Snapshot {
	s := &model.Snapshot{}
	for _, k := range keys {
		ns, name, _ := strings.Cut(k, "/")
		s.Deployments = append(s.Deployments, model.Deployment{Namespace: ns, Name: name})
	}
	return s
}

func inventoryOf(keys []string, err error) Inventory {
	return func(context.Context) ([]string, error) { return keys, err }
}

// TestScopeSelect: one rule for every data command, live and offline — a
// namespace or name that matches nothing, or a source without deployments, is
// an error naming what exists and the command to run next.
func TestScopeSelect(t *testing.T) {
	offline := Scope{Command: "topology", Source: []string{"--from-file", "c.yaml"}, File: "c.yaml", AllNamespaces: true}
	live := Scope{Command: "topology", Context: "prod", Namespace: "default", AllNamespaces: true}
	var many []string
	for i := range 13 {
		many = append(many, fmt.Sprintf("ns%02d/d%02d", i, i))
	}
	tests := []struct {
		name      string
		scope     Scope
		snapshot  *model.Snapshot
		inventory Inventory
		wantKeep  []string
		wantErr   string
		wantHint  string
	}{
		{"offline all", offline, snapshotOf("a/x", "b/y"), nil, []string{"a/x", "b/y"}, "", ""},
		{"offline namespace", with(offline, "b"), snapshotOf("a/x", "b/y"), nil, []string{"b/y"}, "", ""},
		{"offline name", with(offline, "", "x"), snapshotOf("a/x", "b/y"), nil, []string{"a/x"}, "", ""},
		{"offline wrong namespace", with(offline, "nope"), snapshotOf("a/x", "b/y"), nil, nil,
			"no DynamoGraphDeployment in namespace nope of the capture file c.yaml; it holds 2 deployments in 2 namespaces: a/x, b/y",
			"Try: kubectl dynamo topology --from-file c.yaml -n a, or -A for every namespace"},
		{"offline name elsewhere", with(offline, "a", "y"), snapshotOf("a/x", "b/y"), nil, nil,
			"no DynamoGraphDeployment named y in namespace a of the capture file c.yaml",
			"Try: kubectl dynamo topology --from-file c.yaml -n b y"},
		{"offline one name of two missing", with(offline, "", "x", "z"), snapshotOf("a/x"), nil, nil,
			"no DynamoGraphDeployment named z in the capture file c.yaml; it holds 1 deployment in 1 namespace: a/x",
			"Try: kubectl dynamo topology --from-file c.yaml -n a x"},
		{"offline nothing Dynamo", offline, snapshotOf(), nil, nil,
			"the capture file c.yaml holds no DynamoGraphDeployment and no Dynamo worker pod",
			"--from-file examples/prefill-only-zone-required.yaml"},
		{"offline bounded list", with(offline, "zz"), snapshotOf(many...), nil, nil,
			"it holds 13 deployments in 13 namespaces: ns00/d00, ns01/d01, ns02/d02, ns03/d03, ns04/d04, ns05/d05, ns06/d06, ns07/d07, ns08/d08, ns09/d09 and 3 more", ""},
		{"live found", live, snapshotOf("default/x"), inventoryOf(nil, errors.New("not called")), []string{"default/x"}, "", ""},
		{"live default namespace empty", live, snapshotOf(), inventoryOf([]string{"serving/q", "llm/m"}, nil), nil,
			"no DynamoGraphDeployment in namespace default (the kubeconfig context's default; -n chooses another) of context prod; the cluster holds 2 deployments in 2 namespaces: llm/m, serving/q",
			"Try: kubectl dynamo topology -n llm, or -A for every namespace"},
		{"live given namespace empty", Scope{Command: "topology", Source: []string{"--context", "prod"}, Context: "prod", Namespace: "x", NamespaceGiven: true},
			snapshotOf(), inventoryOf([]string{"serving/q"}, nil), nil,
			"no DynamoGraphDeployment in namespace x of context prod; the cluster holds 1 deployment in 1 namespace: serving/q",
			"Try: kubectl dynamo topology --context prod -n serving"},
		{"live nothing anywhere", live, snapshotOf(), inventoryOf(nil, nil), nil,
			"no DynamoGraphDeployment in namespace default (the kubeconfig context's default; -n chooses another) of context prod, nor in any other namespace",
			"the Dynamo operator runs there"},
		{"live all namespaces empty", Scope{Command: "topology", Context: "prod"}, snapshotOf(), nil, nil,
			"no DynamoGraphDeployment in any namespace of context prod", "kubectl get dynamographdeployments -A"},
		{"live inventory forbidden", live, snapshotOf(), inventoryOf(nil, errors.New("forbidden: needs list on dynamographdeployments.nvidia.com in all namespaces")), nil,
			"the deployments of other namespaces could not be listed (forbidden: needs list on dynamographdeployments.nvidia.com in all namespaces)",
			"Try: kubectl dynamo topology -n NAMESPACE"},
		{"explain-route keeps the request for the user", Scope{Command: "explain-route", Source: []string{"--from-file", "c.yaml"}, File: "c.yaml", Names: []string{"nope"}},
			snapshotOf("a/x"), nil, nil, "no DynamoGraphDeployment named nope",
			"Try: kubectl dynamo explain-route --from-file c.yaml -n a x with the same request flags"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.scope.Select(context.Background(), tt.snapshot, tt.inventory)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				var got []string
				for i := range tt.snapshot.Deployments {
					got = append(got, tt.snapshot.Deployments[i].Key())
				}
				if strings.Join(got, " ") != strings.Join(tt.wantKeep, " ") {
					t.Errorf("kept %v, want %v", got, tt.wantKeep)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error %v, want it to contain %q", err, tt.wantErr)
			}
			if ExitCode(err) != ExitError {
				t.Errorf("exit code %d, want %d", ExitCode(err), ExitError)
			}
			var he *HintError
			if !errors.As(err, &he) || !strings.Contains(he.Hint, tt.wantHint) {
				t.Errorf("hint %v, want it to contain %q", he, tt.wantHint)
			}
			if tt.scope.File != "" && he != nil && strings.Contains(he.Hint, "get dgd") {
				t.Errorf("an offline hint must not send the user to the cluster: %q", he.Hint)
			}
		})
	}
}

// with returns sc reading namespace ns (given with -n) and names.
func with(sc Scope, ns string, names ...string) Scope {
	sc.Namespace, sc.NamespaceGiven, sc.Names = ns, ns != "", names
	return sc
}
