package tokenizer

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
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
	file := filepath.Join(t.TempDir(), "tokenizer.json")
	if err := os.WriteFile(file, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"/dev/zero", file, filepath.Dir(file), "../../../../dev/zero", "a/b@../../../../dev/zero",
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

// TestRegexTimeout: a tokenizer.json Split regex with catastrophic
// backtracking, (a+)+$, took 39 s on 26 characters. It now fails within
// RegexMatchTimeout with a clear error, instead of hanging or (worse)
// silently stopping the split half way.
func TestRegexTimeout(t *testing.T) {
	data, err := os.ReadFile("testdata/toy_bytelevel.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	doc["pre_tokenizer"] = map[string]any{"type": "Split", "pattern": map[string]any{"Regex": "(a+)+$"}, "behavior": "Isolated", "invert": false}
	evil, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	defer func(d time.Duration) { RegexMatchTimeout = d }(RegexMatchTimeout)
	RegexMatchTimeout = 200 * time.Millisecond
	tk, err := Parse(evil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tk.Encode("aaa", false); err != nil {
		t.Fatalf("a short text: %v", err)
	}
	_, err = tk.Encode(strings.Repeat("a", 40)+"X", false)
	var te *RegexTimeoutError
	if !errors.As(err, &te) || !strings.Contains(err.Error(), "did not finish within 200ms") {
		t.Fatalf("Encode: %v, want a *RegexTimeoutError", err)
	}
	// The tokenizer stays usable afterwards.
	if _, err := tk.Encode("aaa", false); err != nil {
		t.Errorf("after a timeout: %v", err)
	}
}
