package tokenizer

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestLoadRefusesWhatIsNotARegularFileWithinTheLimit: `hash --tokenizer
// /dev/zero` used to read without end; a FIFO would block; a sparse 1 GiB
// file would be read whole. Each is refused before anything is read.
func TestLoadRefusesWhatIsNotARegularFileWithinTheLimit(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.json")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(MaxFileBytes + 1); err != nil { // sparse: no disk used
		t.Fatal(err)
	}
	f.Close()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, want string }{
		{"/dev/zero", "not a regular file"},
		{fifo, "not a regular file"},
		{dir, "not a regular file"},
		{big, "larger than the 256 MiB limit"},
	} {
		_, err := Load(tc.path)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Load(%s): %v, want an error containing %q", tc.path, err, tc.want)
		}
	}
}

// TestResolveModelIDNeverReadsAPath: a worker card's model name is cluster
// data; only a Hugging Face cache id resolves, whatever the name says.
func TestResolveModelIDNeverReadsAPath(t *testing.T) {
	hub := t.TempDir()
	getenv := func(k string) string {
		if k == "HF_HUB_CACHE" {
			return hub
		}
		return ""
	}
	real := filepath.Join(t.TempDir(), "tokenizer.json")
	if err := os.WriteFile(real, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"/dev/zero", real, filepath.Dir(real), "../../../../dev/zero", "a/b@../../../../dev/zero",
		"org/name@/dev/zero", "./x/y", "org/../y"} {
		src, err := ResolveModelID(name, getenv)
		if err == nil {
			t.Errorf("ResolveModelID(%q) = %+v, want an error", name, src)
			continue
		}
		if !strings.Contains(err.Error(), "never read as a file path") {
			t.Errorf("ResolveModelID(%q): %v", name, err)
		}
	}
	// A real cached model still resolves.
	snap := filepath.Join(hub, "models--Qwen--Qwen3-0.6B", "snapshots", "abc123")
	if err := os.MkdirAll(snap, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(snap, "tokenizer.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := ResolveModelID("Qwen/Qwen3-0.6B", getenv)
	if err != nil || src.Model != "Qwen/Qwen3-0.6B" || src.Revision != "abc123" {
		t.Errorf("cached model: %+v %v", src, err)
	}
}
