package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/hermetic"
	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/kubeenv"
)

// binDir holds kubectl-dynamo and kubectl_complete-dynamo, built once.
var binDir string

func TestMain(m *testing.M) {
	code, err := setup(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e setup:", err)
		code = 1
	}
	os.Exit(code)
}

func setup(m *testing.M) (int, error) {
	if err := hermetic.Apply(); err != nil {
		return 1, err
	}
	dir, err := os.MkdirTemp("", "kubectl-dynamo-e2e-")
	if err != nil {
		return 1, err
	}
	defer os.RemoveAll(dir)
	root, err := filepath.Abs("../..")
	if err != nil {
		return 1, err
	}
	exe := "kubectl-dynamo"
	if runtime.GOOS == "windows" {
		exe += ".exe"
	}
	build := exec.Command("go", "build", "-ldflags",
		"-X github.com/ai-dynamo/kubectl-dynamo/internal/buildinfo.Version=v0.0.0-e2e",
		"-o", filepath.Join(dir, exe), "./cmd/kubectl-dynamo")
	build.Dir = root
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return 1, fmt.Errorf("go build: %w\n%s", err, out)
	}
	script, err := os.ReadFile(filepath.Join(root, "kubectl_complete-dynamo"))
	if err != nil {
		return 1, err
	}
	if err := os.WriteFile(filepath.Join(dir, "kubectl_complete-dynamo"), script, 0o755); err != nil {
		return 1, err
	}
	binDir = dir
	// One real kube-apiserver + etcd for the live tests (skipped locally when the
	// binaries are not provisioned; CI provisions them and fails otherwise).
	return kubeenv.RunTests(m, kubeenv.Options{CRDs: []string{filepath.Join(root, "test", "crds")}, AuditLog: true}, &env), nil
}

// env is the shared control plane.
var env *kubeenv.Env

// kubectlBinary is the provisioned kubectl (hack/testbin/provision.sh, the
// version kubeenv pins), not whichever kubectl the machine has on PATH.
func kubectlBinary(t *testing.T) string {
	t.Helper()
	bins, err := kubeenv.FindBinaries("")
	if err != nil {
		hermetic.SkipOrFail(t, "the provisioned kubectl", kubeenv.ProvisionCommand)
	}
	return bins.Kubectl
}

// kubectl runs the real kubectl with our binaries first on PATH and an empty
// kubeconfig, so nothing on the machine leaks in.
func kubectl(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return kubectlWith(t, filepath.Join(t.TempDir(), "kubeconfig"), args...)
}

// kubectlWith runs the real kubectl against a kubeconfig.
func kubectlWith(t *testing.T, kubeconfig string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	path := kubectlBinary(t)
	cmd := exec.Command(path, args...)
	home := t.TempDir()
	cmd.Env = append(os.Environ(),
		"PATH="+binDir+string(os.PathListSeparator)+os.Getenv("PATH"),
		"KUBECONFIG="+kubeconfig,
		"HOME="+home,
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

func TestPluginIsDiscovered(t *testing.T) {
	out, errOut, code := kubectl(t, "plugin", "list")
	if code != 0 || !strings.Contains(out, filepath.Join(binDir, "kubectl-dynamo")) {
		t.Fatalf("kubectl plugin list (exit %d) does not list kubectl-dynamo:\n%s\n%s", code, out, errOut)
	}
}

func TestHashThroughKubectl(t *testing.T) {
	out, errOut, code := kubectl(t, "dynamo", "hash", "--tokens", "1,2,3,4,5,6,7,8,9,10,11,12", "--block-size", "4", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var doc struct {
		Kind   string `json:"kind"`
		Blocks []struct {
			SequenceHash string `json:"sequenceHash"`
		} `json:"blocks"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if doc.Kind != "BlockHashes" || len(doc.Blocks) != 3 || doc.Blocks[2].SequenceHash != "12583592247330656132" {
		t.Errorf("unexpected result: %s", out)
	}
}

func TestExitCodesThroughKubectl(t *testing.T) {
	_, errOut, code := kubectl(t, "dynamo", "hash", "--tokens", "1,x")
	if code != 1 || !strings.Contains(errOut, `error: --tokens, token 2: token id "x" is not a non-negative integer`) {
		t.Errorf("bad input: exit %d, stderr %q", code, errOut)
	}
	out, _, code := kubectl(t, "dynamo", "version", "-o", "json")
	if code != 0 || !strings.Contains(out, `"version": "v0.0.0-e2e"`) {
		t.Errorf("version through kubectl: exit %d, %s", code, out)
	}
}

func TestCompletionThroughKubectl(t *testing.T) {
	out, errOut, code := kubectl(t, "__complete", "dynamo", "hash", "-o", "")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, f := range []string{"table", "wide", "json", "yaml"} {
		if !strings.Contains(out, f+"\n") {
			t.Errorf("kubectl __complete dynamo hash -o lacks %q:\n%s", f, out)
		}
	}
	out, _, _ = kubectl(t, "__complete", "dynamo", "")
	if !strings.Contains(out, "hash\t") {
		t.Errorf("subcommands not completed through kubectl:\n%s", out)
	}
}
