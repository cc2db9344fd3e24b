package fileio_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/fileio"
)

func write(o *fileio.Output, s string) error {
	return o.Write(func(w io.Writer) error { _, err := io.WriteString(w, s); return err })
}

func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// TestOutputRefusals: what the review replaced — a device, a FIFO, a link to
// a device, the command's own input — is refused before anything runs, and
// left as it was.
func TestOutputRefusals(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "plot.svg")
	mkfifo(t, fifo)
	devLink := filepath.Join(dir, "null.yaml")
	if err := os.Symlink("/dev/null", devLink); err != nil {
		t.Fatal(err)
	}
	input := filepath.Join(dir, "trace.jsonl")
	if err := os.WriteFile(input, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	inputLink := filepath.Join(dir, "link.svg")
	if err := os.Symlink("trace.jsonl", inputLink); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "adir")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	inputs := []fileio.Named{{What: "--trace", Path: input}, {What: "--from-file", Path: "-"}, {What: "--export-dynosim", Path: filepath.Join(dir, "new.yaml")}}
	tests := []struct {
		name, path, want string
	}{
		{"/dev/null", "/dev/null", "--plot: /dev/null is not a file kubectl-dynamo replaces (devices and descriptors are refused): give the path of a file"},
		{"/dev/stdout", "/dev/stdout", "--plot: /dev/stdout is not a file kubectl-dynamo replaces"},
		{"a FIFO", fifo, "--plot: " + fifo + " is a named pipe (FIFO): kubectl-dynamo replaces only a regular file, or creates a new one; give another path"},
		{"a link to a device", devLink, "--plot: /dev/null is not a file kubectl-dynamo replaces"},
		{"a directory", sub, "--plot: " + sub + " is a directory: kubectl-dynamo replaces only a regular file"},
		{"the command's input", input, "--plot: " + input + " is the file --trace names too: writing it would replace that file; give the output another name"},
		{"a link to the command's input", inputLink, "--plot: " + inputLink + " is the file --trace names too"},
		{"another output", filepath.Join(dir, "new.yaml"), "--plot: " + filepath.Join(dir, "new.yaml") + " is the file --export-dynosim names too"},
		{"a missing directory", filepath.Join(dir, "missing", "x.svg"), "--plot: the directory " + filepath.Join(dir, "missing") + ": no such file or directory; create it first or give another path"},
		{"stdout", "-", "--plot: writes a file; the report goes to standard output, so give a file name"},
	}
	before := names(t, dir)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := fileio.NewOutput(tt.path, "--plot", inputs...)
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("err = %v\nwant %s…", err, tt.want)
			}
			if o != nil {
				t.Errorf("an Output for a refused path")
			}
		})
	}
	if after := names(t, dir); !slices.Equal(after, before) {
		t.Errorf("the directory changed: %v → %v", before, after)
	}
	if st, err := os.Lstat(fifo); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced: %v %v", st, err)
	}
}

// TestOutputWrites: a new file honours the umask, a replaced one keeps its
// mode, a link is written through and stays a link, a failed write leaves the
// old file and no temporary file, and no message names the temporary file.
func TestOutputWrites(t *testing.T) {
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	dir := t.TempDir()

	fresh := filepath.Join(dir, "fresh.svg")
	o, err := fileio.NewOutput(fresh, "--plot")
	if err != nil {
		t.Fatal(err)
	}
	if err := write(o, "new"); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(fresh); st.Mode().Perm() != 0o600 {
		t.Errorf("a new file under umask 077 is %v, want -rw-------", st.Mode())
	}

	kept := filepath.Join(dir, "kept.svg")
	if err := os.WriteFile(kept, []byte("old"), 0o640); err != nil {
		t.Fatal(err)
	}
	_ = os.Chmod(kept, 0o640)
	o, err = fileio.NewOutput(kept, "--plot")
	if err != nil {
		t.Fatal(err)
	}
	if err := write(o, "new"); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(kept); st.Mode().Perm() != 0o640 {
		t.Errorf("a replaced file is %v, want its old -rw-r-----", st.Mode())
	}

	target := filepath.Join(dir, "real.svg")
	link := filepath.Join(dir, "link.svg")
	if err := os.Symlink("real.svg", link); err != nil {
		t.Fatal(err)
	}
	o, err = fileio.NewOutput(link, "--plot")
	if err != nil {
		t.Fatal(err)
	}
	if err := write(o, "through"); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v %v", st, err)
	}
	if got, _ := os.ReadFile(target); string(got) != "through" {
		t.Errorf("the link's target holds %q", got)
	}

	o, err = fileio.NewOutput(kept, "--plot")
	if err != nil {
		t.Fatal(err)
	}
	err = o.Write(func(w io.Writer) error {
		_, _ = io.WriteString(w, "partial")
		return errors.New("disk full")
	})
	if err == nil || err.Error() != "--plot: disk full" {
		t.Errorf("err = %v", err)
	}
	if got, _ := os.ReadFile(kept); string(got) != "new" {
		t.Errorf("a failed write changed the file: %q", got)
	}
	for _, n := range names(t, dir) {
		if strings.HasPrefix(n, ".kubectl-dynamo-") {
			t.Errorf("temporary file left behind: %s", n)
		}
	}
}
