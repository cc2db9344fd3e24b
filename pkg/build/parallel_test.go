package build

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/capture"
)

// TestBuildParallelMatchesSequential builds every fixture and example with the
// work done ahead on every core (the threshold lowered to one item) and with
// none, and requires the same Snapshot, notes included.
func TestBuildParallelMatchesSequential(t *testing.T) {
	files, _ := filepath.Glob("../../test/fixtures/build/*.yaml")
	more, _ := filepath.Glob("../../examples/*.yaml")
	caps, _ := filepath.Glob("../../test/fixtures/captures/*.yaml")
	files = append(append(files, more...), caps...)
	if len(files) < 8 {
		t.Fatalf("found %d fixtures", len(files))
	}
	defer func(v int) { bldParallelMin = v }(bldParallelMin)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		build := func(threshold int) *model.Snapshot {
			bldParallelMin = threshold
			return buildCaptureBytes(t, data, f) // a fresh bundle: Build must not depend on reuse
		}
		par, seq := build(1), build(1<<30)
		if !reflect.DeepEqual(par, seq) {
			pj, _ := json.Marshal(par)
			sj, _ := json.Marshal(seq)
			t.Errorf("%s: parallel and sequential builds differ\nparallel:   %s\nsequential: %s", f, pj, sj)
		}
	}
}

// TestBldParallelPanics: a panic in the work done ahead reaches the caller's
// goroutine (where Build recovers it) instead of crashing the process.
func TestBldParallelPanics(t *testing.T) {
	defer func() {
		if r := recover(); r != "boom" {
			t.Errorf("recovered %v, want boom", r)
		}
	}()
	bldParallel(1000, func(i int) {
		if i == 500 {
			panic("boom")
		}
	})
	t.Error("no panic")
}

// buildCaptureBytes parses a capture and builds its Snapshot, failing the test
// on any error.
func buildCaptureBytes(t *testing.T, data []byte, name string) *model.Snapshot {
	t.Helper()
	b, err := capture.Parse(data, name)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Build(b)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
