package completion_test

import (
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/ai-dynamo/kubectl-dynamo/internal/cmd/root"
	"github.com/ai-dynamo/kubectl-dynamo/internal/cmdutil"
	"github.com/ai-dynamo/kubectl-dynamo/internal/completion"
	"github.com/ai-dynamo/kubectl-dynamo/internal/iostreams"
	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/kubeenv"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
)

// env is the shared control plane of the live tests (completion_live_test.go).
var env *kubeenv.Env

func TestMain(m *testing.M) {
	os.Exit(kubeenv.RunTests(m, kubeenv.Options{CRDs: []string{"../../test/crds"}, AuditLog: true}, &env))
}

const (
	prefillOnly = "../../examples/prefill-only-zone-required.yaml"
	etcdRack    = "../../examples/etcd-discovery-v1alpha1.yaml"
	drift       = "../../examples/preferred-rollout-drift.yaml"
)

// complete runs `kubectl dynamo __complete args…` in-process on the real command
// tree, plus a "probe" command wired the way explain-route wires its
// what-if flags, and returns the candidates and the directive line.
func complete(t *testing.T, args ...string) (candidates []string, directive string) {
	t.Helper()
	streams, _, out, errOut := iostreams.Test()
	f := cmdutil.NewFactory(streams)
	f.Now = func() time.Time { return time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC) }
	cmd := root.NewCmdRoot(f)
	cmd.AddCommand(probe(f))
	cmd.SetArgs(append([]string{cobra.ShellCompRequestCmd}, args...))
	if err := cmd.Execute(); err != nil {
		t.Fatalf("__complete %v: %v (stderr %q)", args, err, errOut.String())
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) == 0 || !strings.HasPrefix(lines[len(lines)-1], ":") {
		t.Fatalf("__complete %v: no directive line in %q", args, out.String())
	}
	if strings.Contains(errOut.String(), "error") {
		t.Errorf("__complete %v printed an error: %q", args, errOut.String())
	}
	if len(lines) == 1 {
		return nil, lines[0]
	}
	return lines[:len(lines)-1], lines[len(lines)-1]
}

// probe is a command with explain-route's shape: [DGD], -A, --from-file and the
// what-if flags completed by Pods and DomainValues.
func probe(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:               "probe [DGD]",
		ValidArgsFunction: completion.MaxArgs(1, completion.Deployments(f)),
		RunE:              func(*cobra.Command, []string) error { return nil },
	}
	cmd.Flags().StringP("from-file", "f", "", "capture")
	cmd.Flags().BoolP("all-namespaces", "A", false, "all")
	cmd.Flags().StringSlice("exclude-worker", nil, "pods")
	cmd.Flags().String("prefill", "", "pod")
	cmd.Flags().String("decode", "", "pod")
	cmd.Flags().String("deployment", "", "dgd")
	cmd.Flags().StringSlice("domain-down", nil, "KEY=VALUE")
	_ = cmd.RegisterFlagCompletionFunc("exclude-worker", completion.Pods(f, completion.Arg(0)))
	_ = cmd.RegisterFlagCompletionFunc("prefill", completion.Pods(f, completion.Arg(0), model.RolePrefill))
	_ = cmd.RegisterFlagCompletionFunc("decode", completion.Pods(f, completion.Flag("deployment"), model.RoleDecode))
	_ = cmd.RegisterFlagCompletionFunc("domain-down", completion.DomainValues(f, completion.Arg(0)))
	return cmd
}

const (
	noFileComp          = ":4"
	noFileCompKeepOrder = ":36"
)

func TestCompleteFromFile(t *testing.T) {
	prefill := []string{
		"qwen3-32b-0-prefill-us-east-1a-0\tprefill, zone us-east-1a",
		"qwen3-32b-0-prefill-us-east-1b-0\tprefill, zone us-east-1b",
		"qwen3-32b-0-prefill-us-east-1c-0\tprefill, zone us-east-1c",
		"qwen3-32b-0-prefill-us-east-1c-1\tprefill, zone us-east-1c",
	}
	cases := []struct {
		name      string
		args      []string
		want      []string
		directive string
	}{
		{"topology deployment", []string{"topology", "--from-file", prefillOnly, ""},
			[]string{"qwen3-32b\tzone required, namespace serving"}, noFileComp},
		{"shorthand -f and prefix", []string{"topology", "-f", prefillOnly, "qw"},
			[]string{"qwen3-32b\tzone required, namespace serving"}, noFileComp},
		{"prefix without match", []string{"topology", "-f", prefillOnly, "llama"}, nil, noFileComp},
		{"namespace that matches", []string{"topology", "-f", prefillOnly, "-n", "serving", ""},
			[]string{"qwen3-32b\tzone required, namespace serving"}, noFileComp},
		{"other namespace", []string{"topology", "-f", prefillOnly, "-n", "other", ""}, nil, noFileComp},
		{"name already given", []string{"topology", "-f", prefillOnly, "qwen3-32b", ""}, nil, noFileComp},
		{"all namespaces takes no names, and says why", []string{"topology", "-f", prefillOnly, "-A", ""},
			[]string{"_activeHelp_ deployment names are taken within one namespace: drop -A and pass -n NAMESPACE"}, noFileComp},
		{"stdin is not read", []string{"topology", "-f", "-", ""}, nil, noFileComp},
		{"missing file", []string{"topology", "-f", "no/such/capture.yaml", ""}, nil, noFileComp},
		{"not a capture", []string{"topology", "-f", "../../go.mod", ""}, nil, noFileComp},
		{"v1alpha1 deployment", []string{"topology", "-f", etcdRack, ""},
			[]string{"deepseek-r1\track required, namespace research"}, noFileComp},
		{"namespaces", []string{"topology", "-f", prefillOnly, "-n", ""},
			[]string{"serving\t1 Dynamo deployment: qwen3-32b"}, noFileCompKeepOrder},
		{"namespaces after the argument", []string{"topology", "-f", drift, "mixtral", "--namespace", "l"},
			[]string{"llm\t1 Dynamo deployment: mixtral"}, noFileCompKeepOrder},
		{"output formats", []string{"topology", "-f", prefillOnly, "-o", ""},
			[]string{"table", "wide", "json", "yaml", "jsonpath=", "go-template="}, noFileComp},
		{"output templates wait for their text", []string{"topology", "-f", prefillOnly, "-o", "jsonp"}, []string{"table", "wide", "json", "yaml", "jsonpath=", "go-template="}, ":6"},
		{"fail-on", []string{"topology", "--fail-on", ""}, []string{"error", "warning", "info"}, noFileComp},
		{"capture output formats", []string{"capture", "-o", ""}, []string{"yaml", "json"}, noFileComp},

		{"prefill pods of the named deployment", []string{"probe", "qwen3-32b", "-f", prefillOnly, "--prefill", ""}, prefill, noFileComp},
		{"prefill pods, no deployment named", []string{"probe", "-f", prefillOnly, "--prefill", ""}, prefill, noFileComp},
		{"prefill pods by prefix", []string{"probe", "-f", prefillOnly, "--prefill", "qwen3-32b-0-prefill-us-east-1c"}, prefill[2:], noFileComp},
		{"pods of an unknown deployment", []string{"probe", "nosuch", "-f", prefillOnly, "--exclude-worker", ""}, nil, noFileComp},
		{"decode pods from a flag target", []string{"probe", "--deployment", "qwen3-32b", "-f", prefillOnly, "--decode", "qwen3-32b-0-decode-us-east-1b"},
			[]string{
				"qwen3-32b-0-decode-us-east-1b-0\tdecode, zone us-east-1b",
				"qwen3-32b-0-decode-us-east-1b-1\tdecode, zone us-east-1b",
				"qwen3-32b-0-decode-us-east-1b-2\tdecode, zone us-east-1b",
			}, noFileComp},
		{"comma list leaves out the pods given", []string{"probe", "-f", prefillOnly, "--exclude-worker",
			"qwen3-32b-0-prefill-us-east-1c-0,qwen3-32b-0-prefill-us-east-1"},
			[]string{
				"qwen3-32b-0-prefill-us-east-1c-0,qwen3-32b-0-prefill-us-east-1a-0\tprefill, zone us-east-1a",
				"qwen3-32b-0-prefill-us-east-1c-0,qwen3-32b-0-prefill-us-east-1b-0\tprefill, zone us-east-1b",
				"qwen3-32b-0-prefill-us-east-1c-0,qwen3-32b-0-prefill-us-east-1c-1\tprefill, zone us-east-1c",
			}, noFileComp},
		{"not ready and unlabelled workers", []string{"probe", "-f", drift, "--prefill", ""},
			[]string{
				"mixtral-0-vllmprefillworker-eu-west-1a-0\tprefill, zone eu-west-1a",
				"mixtral-0-vllmprefillworker-eu-west-1a-1\tprefill, zone eu-west-1a",
				"mixtral-0-vllmprefillworker-eu-west-1b-0\tprefill, zone (no value), not ready",
			}, noFileComp},

		{"domain values", []string{"probe", "-f", prefillOnly, "--domain-down", ""},
			[]string{
				"zone=us-east-1a\t1 prefill, 3 decode ready",
				"zone=us-east-1b\t1 prefill, 3 decode ready",
				"zone=us-east-1c\t2 prefill, 0 decode ready",
			}, noFileComp},
		{"domain values after a comma", []string{"probe", "qwen3-32b", "-f", prefillOnly, "--domain-down", "zone=us-east-1c,zone=us-east-1b"},
			[]string{"zone=us-east-1c,zone=us-east-1b\t1 prefill, 3 decode ready"}, noFileComp},
		{"rack domain values", []string{"probe", "-f", etcdRack, "--domain-down", "rack="},
			[]string{
				"rack=6f3c2a1e-9b7d-4c55-a1e2-0d9f8b7c6a51.1\t1 prefill, 2 decode ready",
				"rack=6f3c2a1e-9b7d-4c55-a1e2-0d9f8b7c6a51.2\t1 prefill, 2 decode ready",
			}, noFileComp},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, directive := complete(t, tc.args...)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("candidates (-want +got):\n%s", diff)
			}
			if directive != tc.directive {
				t.Errorf("directive %s, want %s", directive, tc.directive)
			}
		})
	}
}

func TestMaxArgs(t *testing.T) {
	fn := completion.MaxArgs(1, cobra.FixedCompletions([]cobra.Completion{"a", "b"}, cobra.ShellCompDirectiveNoFileComp))
	if got, d := fn(&cobra.Command{}, nil, ""); len(got) != 2 || d != cobra.ShellCompDirectiveNoFileComp {
		t.Errorf("no argument yet: %q %v", got, d)
	}
	if got, d := fn(&cobra.Command{}, []string{"a"}, ""); len(got) != 0 || d != cobra.ShellCompDirectiveNoFileComp {
		t.Errorf("one argument given: %q %v", got, d)
	}
	got, _ := complete(t, "probe", "-f", prefillOnly, "")
	if len(got) != 1 {
		t.Errorf("probe's first argument: %q", got)
	}
	if got, _ := complete(t, "probe", "-f", prefillOnly, "qwen3-32b", ""); len(got) != 0 {
		t.Errorf("probe's second argument: %q", got)
	}
}

// writeKubeconfig writes a kubeconfig with the given contexts, all pointing at
// server, the first one current.
func writeKubeconfig(t *testing.T, server string, contexts ...string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: Config\ncurrent-context: " + contexts[0] + "\n")
	b.WriteString("clusters:\n- name: c\n  cluster: {server: '" + server + "', insecure-skip-tls-verify: true}\n")
	b.WriteString("users:\n- name: u\n  user: {token: not-a-real-token}\ncontexts:\n")
	for i, c := range contexts {
		ns := ""
		if i == 1 {
			ns = ", namespace: serving"
		}
		b.WriteString("- name: " + c + "\n  context: {cluster: c, user: u" + ns + "}\n")
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestCompleteContexts(t *testing.T) {
	kc := writeKubeconfig(t, "https://127.0.0.1:1", "lab", "prod-east", "prod-west")
	got, directive := complete(t, "topology", "--kubeconfig", kc, "--context", "prod")
	want := []string{"prod-east\tcluster c, namespace serving", "prod-west\tcluster c"}
	if diff := cmp.Diff(want, got); diff != "" || directive != noFileComp {
		t.Errorf("(-want +got):\n%s\ndirective %s", diff, directive)
	}
	got, _ = complete(t, "topology", "--kubeconfig", kc, "--context", "")
	if len(got) != 3 || got[0] != "lab\tcluster c (current)" {
		t.Errorf("contexts = %q", got)
	}
}

// TestCompleteUnreachableCluster: a cluster that refuses connections, or accepts
// them and never answers, gives no candidates, no error and no file names.
func TestCompleteUnreachableCluster(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c) // hold the connection open, say nothing
			mu.Unlock()
		}
	}()
	refused := writeKubeconfig(t, "https://127.0.0.1:1", "gone")
	silent := writeKubeconfig(t, "https://"+ln.Addr().String(), "silent")
	noConfig := filepath.Join(t.TempDir(), "missing-kubeconfig")
	for _, args := range [][]string{
		{"topology", "--kubeconfig", refused, ""},
		{"topology", "--kubeconfig", refused, "-n", ""},
		{"capture", "--kubeconfig", refused, "-A", "-n", ""},
		{"probe", "--kubeconfig", refused, "--prefill", ""},
		{"probe", "--kubeconfig", refused, "--domain-down", ""},
		{"topology", "--kubeconfig", noConfig, ""},
		{"topology", "--kubeconfig", silent, "--request-timeout", "1s", ""},
		{"probe", "--kubeconfig", silent, "--request-timeout", "1s", "--exclude-worker", ""},
		{"topology", "--kubeconfig", silent, "--request-timeout", "1s", "-n", ""},
	} {
		got, directive := complete(t, args...)
		if len(got) != 0 || !slices.Contains([]string{noFileComp, noFileCompKeepOrder}, directive) {
			t.Errorf("%v: candidates %q, directive %s", args, got, directive)
		}
	}
}
