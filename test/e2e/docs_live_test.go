//go:build linux

package e2e

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/golden"
	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/kubeenv"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/capture"
)

// The docs' live transcripts (issue 22: every output shown must be generated
// or checked). Offline outputs are generated (hack/gen-docs); outputs that need
// a cluster are marked `<!-- checked-live: SCENARIO -->` before their console
// block, and TestDocsLiveTranscripts runs each block's command through the real
// kubectl against a real API server set up as SCENARIO says, and compares the
// output with the block after normalising what changes from run to run (dates,
// ages, times, the context name, ports).

// liveScenario prepares a control plane for one doc block and returns the
// kubeconfig its command runs with.
type liveScenario func(t *testing.T, e *kubeenv.Env) string

var liveScenarios = map[string]liveScenario{
	// docs/rbac.md: the namespaced Role of docs/rbac/role.yaml in serving, the
	// command impersonating a member of the group it binds.
	"rbac-namespaced-role": func(t *testing.T, e *kubeenv.Env) string {
		loadExample(t, e, "prefill-only-zone-required.yaml")
		role, err := os.ReadFile("../../docs/rbac/role.yaml")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.ApplyYAML(context.Background(), bytes.ReplaceAll(role, []byte("NAMESPACE"), []byte("serving"))); err != nil {
			t.Fatal(err)
		}
		return e.Kubeconfig
	},
	// docs/commands/topology.md: a Role with only DGDs, pods, services and
	// EndpointSlices in inference.
	"narrow-role": func(t *testing.T, e *kubeenv.Env) string {
		loadExample(t, e, "healthy-three-zone-required.yaml")
		if _, err := e.ApplyYAML(context.Background(), []byte(narrowRole)); err != nil {
			t.Fatal(err)
		}
		kc, err := e.KubeconfigFor("narrow", nil)
		if err != nil {
			t.Fatal(err)
		}
		return kc
	},
	// docs/commands/topology.md: --watch against the prefill-only example
	// with a frontend whose metrics change once (runWatch).
	"watch-frontend": func(t *testing.T, e *kubeenv.Env) string {
		loadExample(t, e, "prefill-only-zone-required.yaml")
		return e.Kubeconfig
	},
	// docs/commands/capture.md: the prefill-only example, read by an admin;
	// the capture block and the replay block after it share a directory.
	"capture": func(t *testing.T, e *kubeenv.Env) string {
		loadExample(t, e, "prefill-only-zone-required.yaml")
		return e.Kubeconfig
	},
}

// narrowRole grants user narrow only DGDs, pods, services and EndpointSlices
// in inference: no nodes, DWMs, events or Grove objects.
const narrowRole = `apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: dgd-and-pods-only, namespace: inference}
rules:
- apiGroups: [nvidia.com]
  resources: [dynamographdeployments]
  verbs: [get, list]
- apiGroups: [""]
  resources: [pods, services]
  verbs: [get, list]
- apiGroups: [discovery.k8s.io]
  resources: [endpointslices]
  verbs: [get, list]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: narrow-reader, namespace: inference}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: dgd-and-pods-only}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: narrow}
`

// docBlock is one checked-live console block.
type docBlock struct {
	file, scenario string
	line           int
	command        string // after "$ kubectl dynamo "
	want           string
}

var checkedLiveRE = regexp.MustCompile(`^<!-- checked-live: ([a-z0-9-]+) -->$`)

func docBlocks(t *testing.T) []docBlock {
	t.Helper()
	files, _ := filepath.Glob("../../docs/*.md")
	more, _ := filepath.Glob("../../docs/commands/*.md")
	files = append(append(files, more...), "../../README.md")
	var blocks []docBlock
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(data), "\n")
		for i := 0; i < len(lines); i++ {
			m := checkedLiveRE.FindStringSubmatch(lines[i])
			if m == nil {
				continue
			}
			if i+2 >= len(lines) || lines[i+1] != "```console" || !strings.HasPrefix(lines[i+2], "$ kubectl dynamo ") {
				t.Fatalf("%s:%d: a checked-live marker must precede a ```console block starting with $ kubectl dynamo", f, i+1)
			}
			end := i + 3
			for end < len(lines) && lines[end] != "```" {
				end++
			}
			blocks = append(blocks, docBlock{file: f, scenario: m[1], line: i + 1,
				command: strings.TrimPrefix(lines[i+2], "$ kubectl dynamo "), want: strings.Join(lines[i+3:end], "\n")})
			i = end
		}
	}
	return blocks
}

// normalizers hide what differs between runs of the same command.
var normalizers = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z`), "<timestamp>"},
	{regexp.MustCompile(`\d{4}-\d{2}-\d{2} \d{2}:\d{2}`), "<date>"},
	{regexp.MustCompile(`\b\d+[smhd] ago\b`), "<age> ago"},
	{regexp.MustCompile(`\b\d{2}:\d{2}:\d{2}\b`), "<time>"},
	{regexp.MustCompile(`Context: \S+`), "Context: <context>"},
	{regexp.MustCompile(`127\.0\.0\.1:\d{3,5}`), "127.0.0.1:<port>"},
}

func normalize(s string) string {
	s = strings.TrimRight(s, "\n")
	for _, n := range normalizers {
		s = n.re.ReplaceAllString(s, n.with)
	}
	return s
}

func TestDocsLiveTranscripts(t *testing.T) {
	blocks := docBlocks(t)
	if len(blocks) == 0 {
		t.Fatal("no checked-live blocks found in the docs")
	}
	kubeenv.Require(t, env) // skips (or fails in CI) without the binaries
	// One control plane per scenario, so what other tests load cannot change
	// the transcripts; the scenarios run side by side (their control planes
	// start in parallel), each one's blocks in the docs' order, since a block
	// may read a file an earlier one wrote.
	var scenarios []string
	byScenario := map[string][]docBlock{}
	for _, b := range blocks {
		if _, ok := liveScenarios[b.scenario]; !ok {
			t.Errorf("%s:%d: unknown scenario %q", b.file, b.line, b.scenario)
			continue
		}
		if _, ok := byScenario[b.scenario]; !ok {
			scenarios = append(scenarios, b.scenario)
		}
		byScenario[b.scenario] = append(byScenario[b.scenario], b)
	}
	for _, sc := range scenarios {
		t.Run(sc, func(t *testing.T) {
			t.Parallel()
			e := kubeenv.Start(t, kubeenv.Options{CRDs: []string{"../../test/crds"}})
			kubeconfig, dir := liveScenarios[sc](t, e), t.TempDir()
			for _, b := range byScenario[sc] {
				t.Run(filepath.Base(b.file)+":"+b.command, func(t *testing.T) { checkDocBlock(t, b, dir, kubeconfig) })
			}
		})
	}
}

// checkDocBlock runs one block's command in the scenario's directory and
// compares its output with the block.
func checkDocBlock(t *testing.T, b docBlock, dir, kubeconfig string) {
	// "ARGS [> FILE] [| head -1]": a redirected block shows stderr (stdout goes
	// to FILE in the scenario's directory, for the blocks after it); the others
	// show stdout.
	cmdline, pipe, _ := strings.Cut(b.command, " | ")
	if pipe != "" && pipe != "head -1" {
		t.Fatalf("%s:%d: only | head -1 is supported", b.file, b.line)
	}
	cmdline, redirect, _ := strings.Cut(cmdline, " > ")
	var stdout, stderr string
	if b.scenario == "watch-frontend" {
		stdout, stderr = runWatch(t, dir, kubeconfig, strings.Fields(cmdline))
	} else {
		stdout, stderr, _ = runIn(t, dir, kubeconfig, strings.Fields(cmdline))
	}
	got := stdout
	switch {
	case redirect != "":
		if err := os.WriteFile(filepath.Join(dir, strings.TrimSpace(redirect)), []byte(stdout), 0o600); err != nil {
			t.Fatal(err)
		}
		got = stderr
	case pipe != "":
		got, _, _ = strings.Cut(stdout, "\n")
	}
	if g, w := normalize(got), normalize(b.want); g != w {
		if golden.Updating() {
			updateDocBlock(t, b, got)
			return
		}
		t.Errorf("%s:%d shows an output the command no longer prints (UPDATE_GOLDEN=1 rewrites the block from this run):\n--- doc\n%s\n--- now\n%s", b.file, b.line, w, g)
	}
}

// runWatch runs a `topology --watch --frontend-url URL` doc block: a frontend
// on a local port (the URL's port is replaced) serves the example's metrics;
// after the first report one decode worker's active blocks change, the second
// report follows, and Ctrl-C (SIGINT) ends the watch, which must exit 0.
func runWatch(t *testing.T, dir, kubeconfig string, args []string) (string, string) {
	t.Helper()
	raw, err := os.ReadFile("../../examples/prefill-only-zone-required.yaml")
	if err != nil {
		t.Fatal(err)
	}
	b, err := capture.Read(bytes.NewReader(raw), "example")
	if err != nil || len(b.Metrics) == 0 {
		t.Fatalf("example metrics: %v", err)
	}
	var mu sync.Mutex
	metrics := b.Metrics[0].Text
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/busy_threshold" && len(b.BusyThresholds) > 0 {
			_, _ = io.WriteString(w, b.BusyThresholds[0].JSON)
			return
		}
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		_, _ = io.WriteString(w, metrics)
	}))
	defer srv.Close()
	for i, a := range args {
		if strings.HasPrefix(a, "http://127.0.0.1:") {
			args[i] = srv.URL
		}
	}
	cmd := exec.Command(kubectlBinary(t), append([]string{"dynamo"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+binDir+string(os.PathListSeparator)+os.Getenv("PATH"), "KUBECONFIG="+kubeconfig, "HOME="+t.TempDir())
	var out, errb syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor := func(what string, n int) {
		deadline := time.Now().Add(60 * time.Second)
		for strings.Count(out.String(), what) < n {
			if time.Now().After(deadline) {
				_ = cmd.Process.Kill()
				t.Fatalf("the watch never printed %d × %q:\n%s\n%s", n, what, out.String(), errb.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	waitFor("    fix: ", 1)
	mu.Lock()
	metrics = strings.Replace(metrics, `worker_type="decode"} 3154`, `worker_type="decode"} 41210`, 1)
	mu.Unlock()
	waitFor("    fix: ", 2)
	_ = cmd.Process.Signal(os.Interrupt)
	if err := cmd.Wait(); err != nil {
		t.Errorf("the watch did not exit 0 on SIGINT: %v", err)
	}
	return out.String(), errb.String()
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// updateMu serialises the rewrites of doc files (scenarios run in parallel and
// several write to the same file).
var updateMu sync.Mutex

// updateDocBlock replaces a block's output with this run's.
func updateDocBlock(t *testing.T, b docBlock, got string) {
	t.Helper()
	updateMu.Lock()
	defer updateMu.Unlock()
	data, err := os.ReadFile(b.file)
	if err != nil {
		t.Fatal(err)
	}
	old := "$ kubectl dynamo " + b.command + "\n" + b.want + "\n```"
	now := "$ kubectl dynamo " + b.command + "\n" + strings.TrimRight(got, "\n") + "\n```"
	if !strings.Contains(string(data), old) {
		t.Fatalf("%s:%d: block not found to update", b.file, b.line)
	}
	if err := os.WriteFile(b.file, []byte(strings.Replace(string(data), old, now, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("updated %s:%d", b.file, b.line)
}

// runIn runs kubectl dynamo ARGS in dir with a kubeconfig.
func runIn(t *testing.T, dir, kubeconfig string, args []string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(kubectlBinary(t), append([]string{"dynamo"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"PATH="+binDir+string(os.PathListSeparator)+os.Getenv("PATH"),
		"KUBECONFIG="+kubeconfig,
		"HOME="+t.TempDir(),
	)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return out.String(), errb.String(), ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run kubectl: %v", err)
	}
	return out.String(), errb.String(), 0
}
