package preflight_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/cmdtest"
	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/memguard"
)

// Hostile manifests (issue 29): the documented CI recipe runs preflight -f on
// pull requests, so whoever opens one writes these files.

func abs(t *testing.T, rel string) string {
	t.Helper()
	p, err := filepath.Abs("../../../" + rel)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// aliasBomb is a manifest with a ConfigMap whose one 100 KB string is aliased
// refs times: ~130 KB of YAML, refs × 100 KB of JSON.
func aliasBomb(t *testing.T, dir string, refs int) string {
	t.Helper()
	data, err := os.ReadFile(abs(t, capacity))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.Write(data)
	b.WriteString("---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  annotations:\n    a: &big ")
	b.WriteString(strings.Repeat("A", 100_000))
	b.WriteString("\ndata:\n  refs:\n")
	b.WriteString(strings.Repeat("  - *big\n", refs))
	p := filepath.Join(dir, "bomb.yaml")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// runBounded runs the command; when it has not returned after a minute the
// test fails and fifo is opened for writing (releasing a blocked open).
func runBounded(t *testing.T, fifo string, o cmdtest.Options, args ...string) cmdtest.Result {
	t.Helper()
	done := make(chan cmdtest.Result, 1)
	go func() { done <- cmdtest.RunWith(t, o, args...) }()
	select {
	case r := <-done:
		return r
	case <-time.After(time.Minute):
		if fifo != "" {
			if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				_ = w.Close()
			}
		}
		t.Fatalf("kubectl dynamo %s did not return within a minute", strings.Join(args, " "))
		return cmdtest.Result{}
	}
}

// TestPreflightHostileManifests: an alias bomb (5.9 GB from 130 KB), a
// manifest directory holding a link to /dev/zero (1.3 GB before the error)
// or a FIFO (a hang), and the same as --nodes-from: each is a clear error
// (exit 1) within a small memory bound.
func TestPreflightHostileManifests(t *testing.T) {
	bombDir, zeroDir, fifoDir := t.TempDir(), t.TempDir(), t.TempDir()
	bomb := aliasBomb(t, bombDir, 10_000)
	if err := os.Symlink("/dev/zero", filepath.Join(zeroDir, "zero.yaml")); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(fifoDir, "dgd.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	manifest := abs(t, capacity)
	tests := []struct {
		name  string
		args  []string
		stdin string
		want  string
	}{
		{"an alias bomb", []string{"-f", bomb, "--no-cluster"}, "",
			"error: -f " + bomb + ": YAML document 2 expands its anchors and aliases to more than 6 MiB of data, the limit for a 190 KiB input (16 times its size, plus 4 MiB): write the repeated values out, or remove the aliases (*name) to large anchors (&name)"},
		{"an alias bomb from stdin", []string{"-f", "-", "--no-cluster"}, "bomb",
			"error: -f -: YAML document 2 expands its anchors and aliases"},
		{"an alias bomb as --nodes-from", []string{"-f", manifest, "--nodes-from", bomb}, "",
			"error: --nodes-from " + bomb + ": YAML document 2 expands its anchors and aliases"},
		{"a link to /dev/zero in the directory", []string{"-f", zeroDir, "--no-cluster"}, "",
			"error: read -f: " + filepath.Join(zeroDir, "zero.yaml") + " is a character device, not a regular file: give the path of a file"},
		{"a FIFO in the directory", []string{"-f", fifoDir, "--no-cluster"}, "",
			"error: read -f: " + fifo + " is a named pipe (FIFO), not a regular file"},
		{"a FIFO as --nodes-from", []string{"-f", manifest, "--nodes-from", fifo}, "",
			"error: read --nodes-from: " + fifo + " is a named pipe (FIFO), not a regular file"},
		{"stdin twice", []string{"-f", "-", "--nodes-from", "-"}, "", "error: --nodes-from - and -f - both read standard input, which can be read only once"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdin := tt.stdin
			if stdin == "bomb" {
				data, err := os.ReadFile(bomb)
				if err != nil {
					t.Fatal(err)
				}
				stdin = string(data)
			}
			g := memguard.Watch(t, 256<<20)
			r := runBounded(t, fifo, cmdtest.Options{Stdin: stdin}, append([]string{"preflight"}, tt.args...)...)
			t.Logf("peak %s", memguard.MiB(g.Stop()))
			if r.ExitCode != 1 || !strings.HasPrefix(r.Stderr, tt.want) {
				t.Errorf("exit %d, stderr %.600q\nwant exit 1 and %q…", r.ExitCode, r.Stderr, tt.want)
			}
		})
	}
}
