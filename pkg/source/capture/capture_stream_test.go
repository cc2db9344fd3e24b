package capture

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/upstreamscale"
)

// streamInputs are JSON captures of every shape: the seeds, the examples and
// fixtures as JSON (compact and indented), the upstream-shaped capture, and
// captures written by Write then converted as `capture -o json` converts them.
func streamInputs(t testing.TB) map[string][]byte {
	t.Helper()
	inputs := map[string][]byte{}
	for i, s := range fastSeeds {
		inputs[fmt.Sprintf("seed %d", i)] = []byte(s)
	}
	files, _ := filepath.Glob("../../../examples/*.yaml")
	for _, g := range []string{"../../../test/fixtures/captures/*.yaml", "../../../test/fixtures/build/*.yaml", "../../../test/fixtures/upstream/*.yaml"} {
		more, _ := filepath.Glob(g)
		files = append(files, more...)
	}
	for _, f := range files {
		y, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		j, err := yaml.YAMLToJSON(y)
		if err != nil {
			t.Fatal(err)
		}
		inputs[f] = j
		var ind bytes.Buffer
		if json.Indent(&ind, j, "", "  ") == nil {
			inputs[f+" indented"] = ind.Bytes()
		}
	}
	inputs["upstream"] = upstreamscale.Capture(upstreamscale.Options{Workers: 60, Nodes: 12, Zones: 3})
	var w bytes.Buffer
	if err := Write(&w, roundTripBundle(t)); err != nil {
		t.Fatal(err)
	}
	j, err := yaml.YAMLToJSON(w.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	inputs["written"] = j
	return inputs
}

// TestStreamMatchesFast: whenever the streaming reader reads a capture, the
// fast reader reads it to the same Bundle; it reads every capture of the
// shape `capture -o json` writes; windows and batches of every size,
// down to a window that cuts every value, give the same result.
func TestStreamMatchesFast(t *testing.T) {
	defer func(w, b int) { streamWindow, streamBatch = w, b }(streamWindow, streamBatch)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for name, data := range streamInputs(t) {
		fast, fastOK := readCaptureFast(data, "file.json", false)
		for _, cfg := range []struct{ window, batch, procs int }{{4 << 20, 1 << 20, 2}, {64, 100, 2}, {1, 1, 1}, {4096, 1 << 20, 4}, {300, 5000, 1}} {
			streamWindow, streamBatch = cfg.window, cfg.batch
			runtime.GOMAXPROCS(cfg.procs)
			got, ok := readCaptureStream(bytes.NewReader(data), int64(len(data)), "file.json")
			if !ok {
				if !strings.HasPrefix(name, "seed") && !strings.Contains(name, "manifest-") && cfg.window == 4<<20 {
					t.Errorf("%s: the streaming reader gave up on a capture", name)
				}
				continue
			}
			if !fastOK {
				t.Errorf("%s (%+v): the streaming reader read what the fast reader does not", name, cfg)
				continue
			}
			if !reflect.DeepEqual(got, fast) {
				gj, _ := json.Marshal(got)
				fj, _ := json.Marshal(fast)
				t.Errorf("%s (%+v): readers differ\nstream: %.3000s\nfast:   %.3000s", name, cfg, gj, fj)
			}
		}
	}
}

// TestReadStreamingGivesUp: what the streaming reader does not read is left
// to Read (YAML, several documents, a top-level array, nested Lists,
// truncated or invalid captures, a file over the size limit).
func TestReadStreamingGivesUp(t *testing.T) {
	for _, in := range []string{
		"apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Pod, metadata: {name: p}}\n",
		`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"}} {"apiVersion":"v1","kind":"Node"}`,
		`[{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"}}]`,
		`{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"Pod"}]}]}`,
		`{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"Pod"}]`,
		`{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"kubectl-dynamo.io/v1alpha1","kind":"Nope"}]}`,
		`{"apiVersion":"v1","kind":"Pod","items":[{"apiVersion":"v1","kind":"Node"}]}`,
		`{"apiVersion":"v1","kind":"List","items":[{"kind":"Pod"}]}`,
	} {
		if b, ok := ReadStreaming(strings.NewReader(in), int64(len(in)), "f"); ok {
			t.Errorf("%.60s: read %+v", in, b)
		}
	}
	in := `{"apiVersion":"v1","kind":"List","items":[]}`
	if _, ok := ReadStreaming(strings.NewReader(in), captureLimit+1, "big"); ok {
		t.Error("read a capture over the size limit")
	}
	if b, ok := ReadStreaming(strings.NewReader(in), int64(len(in)), "f"); !ok || b.Context != "f" {
		t.Errorf("an empty List: %+v %v", b, ok)
	}
}

// FuzzStreamMatchesFast: on any input the streaming reader never panics and
// reads what it reads as the fast reader does.
func FuzzStreamMatchesFast(f *testing.F) {
	for _, s := range fastSeeds {
		f.Add([]byte(s), uint16(64))
	}
	f.Add([]byte(`{"items":[{"apiVersion":"v1","kind":"Node","metadata":{"name":"n","labels":{"a":true}}}],"kind":"List","apiVersion":"v1"}`), uint16(7))
	f.Fuzz(func(t *testing.T, data []byte, window uint16) {
		if len(data) > 64<<10 {
			return
		}
		defer func(w int) { streamWindow = w }(streamWindow)
		streamWindow = int(window%2048) + 1
		got, ok := readCaptureStream(bytes.NewReader(data), int64(len(data)), "fuzz")
		if !ok {
			return
		}
		fast, fastOK := readCaptureFast(data, "fuzz", false)
		if !fastOK {
			t.Fatalf("the streaming reader read what the fast reader does not")
		}
		if !reflect.DeepEqual(got, fast) {
			gj, _ := json.Marshal(got)
			fj, _ := json.Marshal(fast)
			t.Fatalf("readers differ\nstream: %s\nfast:   %s", gj, fj)
		}
	})
}
