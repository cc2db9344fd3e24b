package simulate_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/cmdtest"
	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/memguard"
)

// Hostile files (issue 29): what simulate reads and writes. The commands run
// in-process; a command that never returns (the review's FIFO and /dev/zero
// inputs) fails its test after a minute instead of hanging the suite.

func abs(t *testing.T, rel string) string {
	t.Helper()
	p, err := filepath.Abs("../../../" + rel)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func mkfifo(t *testing.T, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o666); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
}

// runBounded runs the command tree; when it has not returned after a minute
// the test fails, and the FIFOs are opened for writing (which releases a
// command blocked opening one).
func runBounded(t *testing.T, fifos []string, o cmdtest.Options, args ...string) cmdtest.Result {
	t.Helper()
	done := make(chan cmdtest.Result, 1)
	go func() { done <- cmdtest.RunWith(t, o, args...) }()
	select {
	case r := <-done:
		return r
	case <-time.After(time.Minute):
		for _, f := range fifos {
			if w, err := os.OpenFile(f, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				_ = w.Close()
			}
		}
		t.Fatalf("kubectl dynamo %s did not return within a minute (it blocked or read without end)", strings.Join(args, " "))
		return cmdtest.Result{}
	}
}

// TestSimulateHostileInputFiles: inputs that are not regular files are
// refused from their stat with a clear error (exit 1), never opened to block
// or read without end; a pipe the shell passes is read once, whole.
func TestSimulateHostileInputFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "trace.jsonl")
	mkfifo(t, fifo)
	profileFifo := filepath.Join(dir, "profile.json")
	mkfifo(t, profileFifo)
	capture := abs(t, prefillOnly)
	traffic := []string{"--synthetic", "rate=5,isl=100,osl=5,requests=5", "--fail-on", "none"}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"a named pipe as --trace", []string{"simulate", "-f", capture, "--trace", fifo, "--fail-on", "none"},
			"error: read --trace: " + fifo + " is a named pipe (FIFO), not a regular file: kubectl-dynamo reads only regular files, standard input and process substitution"},
		{"a named pipe as --trace, format given", []string{"simulate", "-f", capture, "--trace", fifo, "--trace-format", "mooncake", "--fail-on", "none"},
			"error: read --trace: " + fifo + " is a named pipe (FIFO), not a regular file"},
		{"/dev/zero as a mooncake trace", []string{"simulate", "-f", capture, "--trace", "/dev/zero", "--trace-format", "mooncake", "--fail-on", "none"},
			"error: read --trace: /dev/zero is a character device, not a regular file: give the path of a file"},
		{"a named pipe as --engine-profile", append([]string{"simulate", "-f", capture, "--engine-profile", profileFifo}, traffic...),
			"error: read --engine-profile: " + profileFifo + " is a named pipe (FIFO)"},
		{"a named pipe as --from-file", append([]string{"simulate", "-f", fifo}, traffic...),
			"error: read --from-file: " + fifo + " is a named pipe (FIFO)"},
		{"a directory as --trace", []string{"simulate", "-f", capture, "--trace", dir}, "error: read --trace: " + dir + " is a directory, not a file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runBounded(t, []string{fifo, profileFifo}, cmdtest.Options{}, tt.args...)
			if r.ExitCode != 1 || !strings.HasPrefix(r.Stderr, tt.want) || r.Stdout != "" {
				t.Errorf("exit %d, stderr %q\nwant exit 1 and %q…", r.ExitCode, r.Stderr, tt.want)
			}
		})
	}
}

// TestSimulateProcessSubstitution: --trace <(cat t.jsonl) — a pipe passed as
// /dev/fd/N — is read once: every request is replayed, for every variant
// (the path was opened to sniff the format and again per variant, and the
// first 64 KiB of requests were lost).
func TestSimulateProcessSubstitution(t *testing.T) {
	if _, err := os.Stat("/dev/fd/0"); err != nil {
		t.Skip("no /dev/fd here")
	}
	trace := abs(t, mooncake)
	data, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	args := func(path string) []string {
		return []string{"simulate", "-f", abs(t, prefillOnly), "--trace", path, "--assume-idle", "--seed", "1", "--variant", "enforcement=preferred,weight=0.3", "--fail-on", "none", "-o", "json"}
	}
	want := cmdtest.Run(t, args(trace)...)
	if want.ExitCode != 0 {
		t.Fatalf("from the file: exit %d: %s", want.ExitCode, want.Stderr)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	go func() {
		_, _ = w.Write(data)
		_ = w.Close()
	}()
	got := runBounded(t, nil, cmdtest.Options{}, args(fmt.Sprintf("/dev/fd/%d", r.Fd()))...)
	if got.ExitCode != 0 {
		t.Fatalf("from a pipe: exit %d: %s", got.ExitCode, got.Stderr)
	}
	rep, rep2 := decodeReport(t, want.Stdout), decodeReport(t, got.Stdout)
	for i := range rep.Variants {
		if rep2.Variants[i].Requests != rep.Variants[i].Requests {
			t.Errorf("variant %d replayed %d requests from the pipe, %d from the file", i, rep2.Variants[i].Requests, rep.Variants[i].Requests)
		}
	}
}

// lines is standard input that repeats a line without end.
type lines struct {
	line []byte
	buf  []byte
}

func (l *lines) Read(p []byte) (int, error) {
	if len(l.buf) == 0 {
		l.buf = l.line
	}
	n := copy(p, l.buf)
	l.buf = l.buf[n:]
	return n, nil
}

// TestSimulateStdinTraceIsBounded: --trace - is held in memory once, up to
// 256 MiB, then refused (it buffered up to 1 GiB and peaked at 2.7 GB).
func TestSimulateStdinTraceIsBounded(t *testing.T) {
	in := &lines{line: []byte(`{"timestamp": 0, "input_length": 512, "output_length": 5, "hash_ids": [1]}` + "\n")}
	g := memguard.Watch(t, 320<<20)
	r := cmdtest.RunWith(t, cmdtest.Options{StdinReader: in}, "simulate", "-f", abs(t, prefillOnly), "--trace", "-", "--fail-on", "none")
	t.Logf("peak %s", memguard.MiB(g.Stop()))
	if r.ExitCode != 1 || !strings.Contains(r.Stderr, "error: read --trace: standard input is larger than the 256 MiB limit") {
		t.Errorf("exit %d, stderr %q", r.ExitCode, r.Stderr)
	}
}

// TestSimulateOutputFilesAreChecked: --plot and --export-dynosim replace only a
// regular file or create a new one, never an input or a device, a FIFO or a
// link's target outside a file; they honour the umask, write through a link,
// are checked before the run, and their errors never name the temporary
// file.
func TestSimulateOutputFilesAreChecked(t *testing.T) {
	dir := t.TempDir()
	capture := filepath.Join(dir, "capture.yaml")
	trace := filepath.Join(dir, "trace.jsonl")
	for src, dst := range map[string]string{abs(t, prefillOnly): capture, abs(t, mooncake): trace} {
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fifo := filepath.Join(dir, "plot.svg")
	mkfifo(t, fifo)
	nullLink := filepath.Join(dir, "null.yaml")
	if err := os.Symlink("/dev/null", nullLink); err != nil {
		t.Fatal(err)
	}
	subdir := filepath.Join(dir, "adir")
	if err := os.Mkdir(subdir, 0o755); err != nil {
		t.Fatal(err)
	}
	malformed := filepath.Join(dir, "malformed.jsonl")
	if err := os.WriteFile(malformed, []byte(`{"timestamp": 0, "input_length": 600, "output_length": 5, "hash_ids": [1, 2]}`+"\n"+`{"timestamp": 1, oops}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	base := []string{"simulate", "-f", capture, "--trace", trace, "--max-requests", "20", "--fail-on", "none"}
	stat := func(p string) os.FileInfo {
		st, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	before := map[string]os.FileInfo{capture: stat(capture), trace: stat(trace), fifo: stat(fifo), nullLink: stat(nullLink)}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"--plot is the trace", []string{"--plot", trace}, "error: --plot: " + trace + " is the file --trace names too: writing it would replace that file; give the output another name"},
		{"--export-dynosim is the capture", []string{"--export-dynosim", capture}, "error: --export-dynosim: " + capture + " is the file --from-file names too"},
		{"both outputs one file", []string{"--plot", filepath.Join(dir, "x"), "--export-dynosim", filepath.Join(dir, "x")}, "error: --plot: " + filepath.Join(dir, "x") + " is the file --export-dynosim names too"},
		{"--plot a FIFO", []string{"--plot", fifo}, "error: --plot: " + fifo + " is a named pipe (FIFO): kubectl-dynamo replaces only a regular file, or creates a new one; give another path"},
		{"--export-dynosim a link to /dev/null", []string{"--export-dynosim", nullLink}, "error: --export-dynosim: /dev/null is not a file kubectl-dynamo replaces (devices and descriptors are refused)"},
		{"--plot a directory", []string{"--plot", subdir}, "error: --plot: " + subdir + " is a directory"},
		{"checked before the run", []string{"--trace", malformed, "--plot", filepath.Join(dir, "missing", "p.svg")}, "error: --plot: the directory " + filepath.Join(dir, "missing") + ": no such file or directory; create it first or give another path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runBounded(t, []string{fifo}, cmdtest.Options{}, append(append([]string{}, base...), tt.args...)...)
			if r.ExitCode != 1 || !strings.HasPrefix(r.Stderr, tt.want) || r.Stdout != "" {
				t.Errorf("exit %d, stderr %q\nwant exit 1 and %q…", r.ExitCode, r.Stderr, tt.want)
			}
			if strings.Contains(r.Stderr, ".kubectl-dynamo-") {
				t.Errorf("the error names the temporary file: %s", r.Stderr)
			}
		})
	}
	for p, st := range before {
		now := stat(p)
		if !os.SameFile(st, now) || now.Mode() != st.Mode() || now.Size() != st.Size() {
			t.Errorf("%s changed: %v %d → %v %d", p, st.Mode(), st.Size(), now.Mode(), now.Size())
		}
	}
	for _, e := range dirNames(t, dir) {
		if strings.HasPrefix(e, ".kubectl-dynamo-") {
			t.Errorf("temporary file left behind: %s", e)
		}
	}

	// A new file honours the umask; a link is written through and stays a link.
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	target := filepath.Join(dir, "real.svg")
	link := filepath.Join(dir, "link.svg")
	if err := os.Symlink("real.svg", link); err != nil {
		t.Fatal(err)
	}
	spec := filepath.Join(dir, "dynosim.yaml")
	r := cmdtest.Run(t, append(append([]string{}, base...), "--plot", link, "--export-dynosim", spec)...)
	if r.ExitCode != 0 {
		t.Fatalf("exit %d: %s", r.ExitCode, r.Stderr)
	}
	if st := stat(spec); st.Mode().Perm() != 0o600 {
		t.Errorf("--export-dynosim under umask 077 made %v, want -rw-------", st.Mode())
	}
	if st := stat(link); st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced by %v", st.Mode())
	}
	if data, _ := os.ReadFile(target); !bytes.HasPrefix(data, []byte("<svg")) && !bytes.Contains(data[:min(len(data), 200)], []byte("<svg")) {
		t.Errorf("the link's target holds %.80q", data)
	}
}

// TestSimulateDeviceOutputAsRoot: as root the review's --export-dynosim
// /dev/null replaced the device node with a world-readable file. A device
// node made in a temporary directory stands for it here.
func TestSimulateDeviceOutputAsRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("making a device node needs root")
	}
	dev := filepath.Join(t.TempDir(), "null")
	if err := syscall.Mknod(dev, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
		t.Skipf("mknod: %v", err)
	}
	r := cmdtest.Run(t, "simulate", "-f", abs(t, prefillOnly), "--synthetic", "rate=5,isl=100,osl=5,requests=5", "--fail-on", "none", "--export-dynosim", dev, "--plot", dev+".svg")
	if r.ExitCode != 1 || !strings.HasPrefix(r.Stderr, "error: --export-dynosim: "+dev+" is a character device: kubectl-dynamo replaces only a regular file") {
		t.Errorf("exit %d, stderr %q", r.ExitCode, r.Stderr)
	}
	if st, err := os.Lstat(dev); err != nil || st.Mode()&os.ModeCharDevice == 0 {
		t.Errorf("the device node was replaced: %v %v", st, err)
	}
}
