package capture_test

import (
	"context"
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/cmdtest"
	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/golden"
	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/kubeenv"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/capture"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/etcd"
)

var env *kubeenv.Env

func TestMain(m *testing.M) {
	os.Exit(kubeenv.RunTests(m, kubeenv.Options{AuditLog: true, CRDs: []string{"../../../test/crds"}}, &env))
}

func TestCaptureFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"names_with_all_namespaces", []string{"capture", "-A", "llama"}},
		{"bad_output", []string{"capture", "-o", "table"}},
		{"cert_without_key", []string{"capture", "--etcd-cert", "c.pem"}},
		{"no_frontend_and_url", []string{"capture", "--no-frontend", "--frontend-url", "http://localhost:8000"}},
		{"unreachable_cluster", []string{"capture", "--server", "https://127.0.0.1:1", "--insecure-skip-tls-verify", "-n", "x", "--request-timeout", "2s"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := cmdtest.Run(t, tc.args...)
			if r.ExitCode != 1 || r.Stdout != "" {
				t.Errorf("exit %d, stdout %q", r.ExitCode, r.Stdout)
			}
			golden.Assert(t, cmdtest.Transcript(tc.args, "", r))
		})
	}
}

// setup creates the live fixture in a fresh namespace and returns it with the
// kubeconfig of a user bound to the read-only ClusterRole.
func setup(t *testing.T) (ns, kubeconfig string) {
	t.Helper()
	e := kubeenv.Require(t, env)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ns, err := e.NewNamespace(ctx, "cap")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"deployment.yaml", "rbac.yaml"} {
		data, err := os.ReadFile("../../../test/fixtures/live/" + f)
		if err != nil {
			t.Fatal(err)
		}
		if err := applyYAML(ctx, e, []byte(strings.ReplaceAll(string(data), "NAMESPACE", ns))); err != nil {
			t.Fatal(err)
		}
	}
	kc, err := e.KubeconfigFor("inspector", nil)
	if err != nil {
		t.Fatal(err)
	}
	return ns, kc
}

// applyYAML creates the fixture's objects (kubeenv.ApplyYAML keeps integers above
// 2^53 exact).
func applyYAML(ctx context.Context, e *kubeenv.Env, data []byte) error {
	_, err := e.ApplyYAML(ctx, data)
	return err
}

// planted are the secret values the fixture carries (HF tokens in the DGD, the
// pod env and a --hf-token= arg) plus the etcd password given below.
var planted = []string{"hf_PLANTEDdgdHFtokenXXXXXXXXXXXX", "hf_PLANTEDpodHFtokenXXXXXXXXXXXX", "hf_PLANTEDargTokenXXXXXXXXXXXXX", "planted-etcd-password-capture"}

func TestCaptureLive(t *testing.T) {
	ns, kc := setup(t)
	t.Setenv(etcd.EnvPassword, "planted-etcd-password-capture")
	e := kubeenv.Require(t, env)
	from, err := e.AuditOffset()
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"capture", "--kubeconfig", kc, "-n", ns, "--no-frontend", "--etcd-endpoints", "http://127.0.0.1:1", "--etcd-dial-timeout", "300ms", "--etcd-timeout", "300ms"}
	r := cmdtest.Run(t, args...)
	if r.ExitCode != 0 {
		t.Fatalf("exit %d\n%s", r.ExitCode, r.Stderr)
	}
	for _, s := range planted {
		if strings.Contains(r.Stdout, s) || strings.Contains(r.Stderr, s) {
			t.Errorf("planted secret %q leaked", s)
		}
	}
	b, err := capture.ParseWhole([]byte(r.Stdout), "stdout")
	if err != nil {
		t.Fatalf("the capture does not read back: %v", err)
	}
	var kinds []string
	for _, m := range b.AsRead {
		o := &unstructured.Unstructured{Object: m}
		kinds = append(kinds, o.GetKind()+"/"+o.GetName())
	}
	for _, want := range []string{"DynamoGraphDeployment/llama", "Pod/llama-decode-1", "Node/gpu-a1", "DynamoWorkerMetadata/llama-prefill-0",
		"EndpointSlice/llama-workers-abcde", "Event/llama-decode-1.topo", "ClusterTopologyBinding/gpu-fabric", "Service/llama-frontend"} {
		if !slices.Contains(kinds, want) {
			t.Errorf("capture lacks %s (has %v)", want, kinds)
		}
	}
	if !strings.Contains(r.Stdout, "instance_id: 7587885012467105317") {
		t.Error("instance id above 2^53 not kept exactly")
	}
	if !strings.Contains(r.Stderr, "note (etcd): etcd at http://127.0.0.1:1 is unreachable") {
		t.Errorf("stderr lacks the etcd note:\n%s", r.Stderr)
	}
	golden.Assert(t, normalize(cmdtest.Transcript(args, "", r), ns, kc))

	// JSON: the same capture.
	rj := cmdtest.Run(t, "capture", "--kubeconfig", kc, "-n", ns, "--no-frontend", "llama", "-o", "json")
	if rj.ExitCode != 0 || !json.Valid([]byte(rj.Stdout)) {
		t.Fatalf("-o json: exit %d, valid %v\n%s", rj.ExitCode, json.Valid([]byte(rj.Stdout)), rj.Stderr)
	}
	bj, err := capture.ParseWhole([]byte(rj.Stdout), "json")
	if err != nil {
		t.Fatal(err)
	}
	named := func(name string) func(raw.Object) bool {
		return func(m raw.Object) bool { return (&unstructured.Unstructured{Object: m}).GetName() == name }
	}
	if !slices.ContainsFunc(bj.AsRead, named("llama")) || slices.ContainsFunc(bj.AsRead, named("other")) {
		t.Error("-o json with a name: wrong deployments")
	}
	for _, s := range planted {
		if strings.Contains(rj.Stdout, s) {
			t.Errorf("planted secret %q leaked into JSON", s)
		}
	}

	// Read-only: the audit log has only get/list/watch from the plugin's user.
	evs, _, err := e.AuditEventsFrom(from)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ev := range evs {
		if ev.User != "inspector" {
			continue
		}
		n++
		if ev.IsMutating() || !slices.Contains([]string{"get", "list", "watch"}, ev.Verb) {
			t.Errorf("capture issued %s %s", ev.Verb, ev.RequestURI)
		}
	}
	if n < 20 {
		t.Errorf("only %d audited requests by the plugin", n)
	}
}

func TestCaptureRestricted(t *testing.T) {
	ns, _ := setup(t)
	e := kubeenv.Require(t, env)
	kc, err := e.KubeconfigFor("restricted", nil)
	if err != nil {
		t.Fatal(err)
	}
	r := cmdtest.Run(t, "capture", "--kubeconfig", kc, "-n", ns, "llama")
	if r.ExitCode != 0 {
		t.Fatalf("a restricted user must get a degraded capture: exit %d\n%s", r.ExitCode, r.Stderr)
	}
	for _, want := range []string{
		"note (kubernetes): cannot list nodes at cluster scope (RBAC: needs list on nodes)",
		"note (kubernetes): cannot list dynamoworkermetadatas.nvidia.com in namespace " + ns,
		"note (frontend): cannot read /metrics from the frontend of " + ns + "/llama",
	} {
		if !strings.Contains(r.Stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.Stderr)
		}
	}
	b, err := capture.Read(strings.NewReader(r.Stdout), "x")
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Notes) < 3 || !slices.ContainsFunc(b.Sources, func(s model.SourceStatus) bool { return s.Degraded }) {
		t.Errorf("notes/sources not carried into the capture: %+v", b.Sources)
	}
}

// normalize replaces what differs between runs (namespace, uids, resource
// versions, timestamps, paths, ports) so the transcript can be a golden file.
func normalize(b []byte, ns, kubeconfig string) []byte {
	s := string(b)
	s = strings.ReplaceAll(s, kubeconfig, "KUBECONFIG")
	s = strings.ReplaceAll(s, ns, "NAMESPACE")
	for _, r := range []struct{ re, with string }{
		{`(?m)^(\s+uid: ).*$`, "${1}UID"},
		{`(?m)^(\s+resourceVersion: ).*$`, "${1}RV"},
		{`(?m)^(\s+creationTimestamp: ).*$`, "${1}TIME"},
		{`(?m)^(\s+generation: ).*$`, "${1}N"},
		{`(?m)^(\s+(?:firstTimestamp|lastTimestamp|eventTime): ).*$`, "${1}TIME"},
		{`https://127\.0\.0\.1:\d+`, "https://127.0.0.1:PORT"},
		{`(?m)^(\s+kubectl-dynamo.io/context: ).*$`, "${1}CONTEXT"},
		{`\\"at\\":\\"[^\\]*\\"`, `\"at\":\"TIME\"`},
		{`(?m)^(\s+clusterIPs?: ).*$`, "${1}IP"},
		{`(?m)^(\s+- )10\.0\.\d+\.\d+$`, "${1}IP"},
	} {
		s = regexp.MustCompile(r.re).ReplaceAllString(s, r.with)
	}
	return []byte(s)
}
