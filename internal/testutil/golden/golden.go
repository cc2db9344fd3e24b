// Package golden compares test output with files under testdata/, and rewrites
// them when run with -update or UPDATE_GOLDEN=1 (`make golden`).
package golden

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files")

// Updating reports whether golden files are being rewritten.
func Updating() bool { return *update || os.Getenv("UPDATE_GOLDEN") == "1" }

// Path returns testdata/<TestName>.golden, sub-tests becoming folders.
func Path(t testing.TB) string {
	return filepath.Join("testdata", filepath.FromSlash(t.Name())+".golden")
}

// Assert compares got with the golden file for this test.
func Assert(t testing.TB, got []byte) {
	t.Helper()
	AssertFile(t, Path(t), got)
}

// AssertFile compares got with the named golden file.
func AssertFile(t testing.TB, path string, got []byte) {
	t.Helper()
	got = normalize(got)
	if Updating() {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatalf("create golden dir: %v", err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatalf("write golden: %v", err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden %s: %v (run with UPDATE_GOLDEN=1 to create it)", path, err)
	}
	want = normalize(want)
	if !bytes.Equal(want, got) {
		t.Errorf("output differs from %s (-want +got):\n%s\nRun `make golden` to accept the new output.", path,
			cmp.Diff(escape(string(want)), escape(string(got))))
	}
}

func normalize(b []byte) []byte { return bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n")) }

// escape makes control sequences visible in diffs.
func escape(s string) string { return strings.ReplaceAll(s, "\x1b", `\x1b`) }
