package fileio_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/memguard"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/fileio"
)

// mkfifo makes a named pipe, or skips where there are none.
func mkfifo(t *testing.T, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
}

// unblock opens a FIFO for writing and closes it, which releases a reader
// blocked in open: a test of a FIFO fails instead of hanging.
func unblock(path string) {
	if f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
		_ = f.Close()
	}
}

func TestOpenRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "trace.jsonl")
	mkfifo(t, fifo)
	link := filepath.Join(dir, "zero.yaml")
	if err := os.Symlink("/dev/zero", link); err != nil {
		t.Fatal(err)
	}
	small := filepath.Join(dir, "small.yaml")
	if err := os.WriteFile(small, []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path string
		limit      int64
		want       string
	}{
		{"a named pipe (would block in open)", fifo, 1 << 20, "read --trace: " + fifo + " is a named pipe (FIFO), not a regular file: kubectl-dynamo reads only regular files, standard input and process substitution; pipe the data in (… | kubectl dynamo … --trace -) or pass <(…)"},
		{"a device", "/dev/zero", 1 << 20, "read --trace: /dev/zero is a character device, not a regular file: give the path of a file"},
		{"a link to a device", link, 1 << 20, "read --trace: " + link + " is a character device, not a regular file"},
		{"a directory", dir, 1 << 20, "read --trace: " + dir + " is a directory, not a file"},
		{"missing", filepath.Join(dir, "nope"), 1 << 20, "read --trace: open " + filepath.Join(dir, "nope") + ": no such file or directory"},
		{"larger than the limit", small, 5, "read --trace: " + small + " is larger than the 0 MiB limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() {
				in, err := fileio.Open(nil, tt.path, "--trace", tt.limit)
				if err == nil {
					_, err = in.Bytes()
				}
				done <- err
			}()
			var err error
			select {
			case err = <-done:
			case <-time.After(30 * time.Second):
				unblock(fifo)
				t.Fatalf("Open(%s) blocked (30 s without returning)", tt.path)
			}
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("err = %v\nwant %s…", err, tt.want)
			}
		})
	}
}

// TestStreamsAreReadOnce: standard input and a pipe passed as /dev/fd/N (what
// <(…) gives) are read once, whole, and every pass sees all of it; the
// review's process substitution lost its first 64 KiB to the format sniff.
func TestStreamsAreReadOnce(t *testing.T) {
	data := bytes.Repeat([]byte("{\"timestamp\": 1, \"hash_ids\": [1]}\n"), 10_000) // 350 KB, more than a pipe holds
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		_, _ = w.Write(data)
		_ = w.Close()
	}()
	defer r.Close()
	paths := map[string]func() (*fileio.Input, error){
		"-": func() (*fileio.Input, error) { return fileio.Open(bytes.NewReader(data), "-", "--trace", 1<<20) },
		"/dev/fd/N": func() (*fileio.Input, error) {
			return fileio.Open(nil, fmt.Sprintf("/dev/fd/%d", r.Fd()), "--trace", 1<<20)
		},
	}
	for name, open := range paths {
		t.Run(name, func(t *testing.T) {
			if name != "-" {
				if _, err := os.Stat("/dev/fd/0"); err != nil {
					t.Skip("no /dev/fd here")
				}
			}
			in, err := open()
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			if !in.Stream() {
				t.Errorf("not read as a stream")
			}
			for pass := range 3 {
				got, err := io.ReadAll(in.NewReader())
				if err != nil || !bytes.Equal(got, data) {
					t.Fatalf("pass %d: %d of %d bytes, err %v", pass, len(got), len(data), err)
				}
			}
			if b, err := in.Bytes(); err != nil || !bytes.Equal(b, data) {
				t.Errorf("Bytes: %d bytes, %v", len(b), err)
			}
		})
	}
}

// TestRegularFileIsOpenedOnce: every pass reads the one descriptor; renaming
// another file into the path after Open changes nothing.
func TestRegularFileIsOpenedOnce(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "t.jsonl")
	if err := os.WriteFile(path, []byte("first\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	in, err := fileio.Open(nil, path, "--trace", 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	other := filepath.Join(dir, "other")
	if err := os.WriteFile(other, []byte("second\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(other, path); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if got, _ := io.ReadAll(in.NewReader()); string(got) != "first\n" {
			t.Fatalf("a pass read %q: the path was opened again", got)
		}
	}
}

// TestStreamMemoryIsTheLimit: standard input at the limit is held once — not
// doubled by a growing buffer (the review saw 2.7 GB for a 1 GiB trace) — and
// beyond the limit refused.
func TestStreamMemoryIsTheLimit(t *testing.T) {
	const limit = 64 << 20
	g := memguard.Watch(t, limit+limit/2)
	in, err := fileio.Open(io.LimitReader(zeros{}, limit), "-", "--trace", limit)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := io.Copy(io.Discard, in.NewReader())
	_ = in.Close()
	peak := g.Stop()
	t.Logf("%d MiB from stdin: peak %s", limit>>20, memguard.MiB(peak))
	if n != limit {
		t.Errorf("read %d bytes", n)
	}
	if _, err := fileio.Open(zeros{}, "-", "--trace", 1<<20); err == nil || !strings.Contains(err.Error(), "read --trace: standard input is larger than the 1 MiB limit") {
		t.Errorf("endless stdin: %v", err)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

func TestReadFileLargerThanStat(t *testing.T) {
	const path = "/proc/self/maps"
	if st, err := os.Stat(path); err != nil || !st.Mode().IsRegular() || st.Size() != 0 {
		t.Skipf("%s is not a zero-size regular file here", path)
	}
	got, err := fileio.ReadFile(nil, path, "--from-file", 1<<20)
	if err != nil || !bytes.Contains(got, []byte("\n")) {
		t.Fatalf("%d bytes, %v", len(got), err)
	}
	if _, err := fileio.ReadFile(nil, path, "--from-file", 600); err == nil || !strings.Contains(err.Error(), "larger than the 0 MiB limit") {
		t.Errorf("over the limit: %v", err)
	}
}

func TestIsStdin(t *testing.T) {
	for p, want := range map[string]bool{"-": true, "/dev/stdin": true, "/dev/fd/0": true, "/proc/self/fd/0": true, "/dev/fd/3": false, "x": false} {
		if fileio.IsStdin(p) != want {
			t.Errorf("IsStdin(%q) = %v", p, !want)
		}
	}
}
