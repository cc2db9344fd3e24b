package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/hermetic"
)

// TestMain runs the tests in the hermetic environment (internal/testutil/hermetic).
func TestMain(m *testing.M) { hermetic.Main(m) }

// TestExamplesUpToDate regenerates the examples into a temporary directory and
// fails when examples/ differs: edit hack/gen-examples, then `go run ./hack/gen-examples`.
func TestExamplesUpToDate(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command("go", "run", ".", dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gen-examples: %v\n%s", err, out)
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) != 5 {
		t.Fatalf("generated %v (%v)", files, err)
	}
	files = append(files, filepath.Join(dir, "prompts", "support-chat.tokens"))
	for _, f := range files {
		got, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, err := filepath.Rel(dir, f)
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join("..", "..", "examples", rel))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("examples/%s is stale: run `go run ./hack/gen-examples` and commit the result", rel)
		}
	}
}
