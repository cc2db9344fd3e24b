package simulate_test

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/ai-dynamo/kubectl-dynamo/internal/cmd/root"
	"github.com/ai-dynamo/kubectl-dynamo/internal/cmdutil"
	"github.com/ai-dynamo/kubectl-dynamo/internal/iostreams"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/simulate/dynosim"
)

// wellFormedSVG parses an SVG document with encoding/xml and returns its
// element names.
func wellFormedSVG(t *testing.T, data []byte) map[string]int {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(data))
	dec.Strict = true
	elems := map[string]int{}
	depth, roots := 0, 0
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("the SVG is not well-formed XML: %v", err)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			if depth == 0 {
				roots++
				if e.Name.Local != "svg" || e.Name.Space != "http://www.w3.org/2000/svg" {
					t.Errorf("root element %v, want svg in the SVG namespace", e.Name)
				}
			}
			depth++
			elems[e.Name.Local]++
		case xml.EndElement:
			depth--
		}
	}
	if roots != 1 || depth != 0 {
		t.Errorf("%d root elements, depth %d at the end", roots, depth)
	}
	return elems
}

// decodeDynoSim decodes an exported spec strictly into dynosim.Spec and
// returns it with its top-level keys.
func decodeDynoSim(t *testing.T, data []byte) (dynosim.Spec, []string) {
	t.Helper()
	var spec dynosim.Spec
	if err := yaml.UnmarshalStrict(data, &spec); err != nil {
		t.Fatalf("the DynoSim spec does not decode strictly: %v\n%q", err, data)
	}
	var top map[string]any
	if err := yaml.Unmarshal(data, &top); err != nil {
		t.Fatal(err)
	}
	keys := make([]string, 0, len(top))
	for k := range top {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return spec, keys
}

// TestSimulatePlotAndExport: --plot writes a standalone SVG, --export-dynosim
// a DynoSim spec; both alongside the report on stdout.
func TestSimulatePlotAndExport(t *testing.T) {
	dir := t.TempDir()
	svg, spec := filepath.Join(dir, "report.svg"), filepath.Join(dir, "dynosim.yaml")
	args := []string{"simulate", "--from-file", prefillOnly, "--trace", mooncake, "--max-requests", "40", "--assume-idle", "--seed", "1",
		"--variant", "enforcement=preferred,weight=0.3", "--variant", "decode+1@us-east-1c", "--hardware", "h200_sxm",
		"--plot", svg, "--export-dynosim", spec, "-o", "json"}
	r := runIn(t, args...)
	if r.ExitCode != 2 {
		t.Fatalf("exit %d: %s", r.ExitCode, r.Stderr)
	}
	rep := decodeReport(t, r.Stdout)

	data, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	elems := wellFormedSVG(t, data)
	if elems["text"] == 0 || elems["path"]+elems["polyline"]+elems["rect"] == 0 {
		t.Errorf("the SVG draws nothing: %v", elems)
	}
	for _, v := range rep.Variants {
		if !bytes.Contains(data, []byte(v.Name)) {
			t.Errorf("the SVG has no panel titled %q", v.Name)
		}
	}

	data, err = os.ReadFile(spec)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(data, []byte("# DynoSim prediction input for serving/qwen3-32b")) {
		t.Errorf("the spec does not start with its header comment:\n%.300s", data)
	}
	s, keys := decodeDynoSim(t, data)
	if want := []string{"engine", "planner", "router", "traffic"}; !slices.Equal(keys, want) {
		t.Errorf("top-level keys %v, want %v", keys, want)
	}
	e := s.Engine
	if e.Model != "Qwen/Qwen3-32B" || e.Hardware != "h200_sxm" || e.Mode != "disaggregated" ||
		e.Workers.Prefill == nil || e.Workers.Decode == nil || e.Workers.Prefill.Parallelism.Replicas != 4 || e.Workers.Decode.Parallelism.Replicas != 6 {
		t.Errorf("engine %+v (prefill %+v, decode %+v)", e, e.Workers.Prefill, e.Workers.Decode)
	}
	if s.Router == nil || s.Traffic == nil || s.Traffic.Source == nil || s.Traffic.Source.Type != "trace" ||
		!slices.Equal(s.Traffic.Source.Paths, []string{mooncake}) || s.Traffic.Source.Format != "mooncake" ||
		s.Traffic.Source.BlockSize == nil || *s.Traffic.Source.BlockSize != 512 {
		t.Errorf("router %+v traffic %+v", s.Router, s.Traffic)
	}
	if !bytes.Contains(data, []byte("replayed the first 40 requests")) {
		t.Errorf("the spec does not say that only 40 requests were replayed")
	}
	if r := runIn(t, append(args[:len(args)-2:len(args)-2], "-o", "table")...); r.ExitCode != 2 || !strings.Contains(r.Stdout, "VARIANT") {
		t.Errorf("table with --plot: exit %d\n%s", r.ExitCode, r.Stdout)
	}
	// Each variant beside it (issue 31): the what-if applied, named in the
	// header; what DynoSim cannot carry of it, noted.
	for i, want := range []struct {
		variant string
		decode  int64
		note    string
	}{{"enforcement=preferred,weight=0.3", 6, "transfer enforcement and preferred weight have no DynoSim counterpart"}, {"decode+1@us-east-1c", 7, ""}} {
		data, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("dynosim.variant-%d.yaml", i+1)))
		if err != nil {
			t.Fatal(err)
		}
		s, _ := decodeDynoSim(t, data)
		if !bytes.Contains(data, []byte("# Variant: "+want.variant+" (the deployment with this what-if applied).")) || s.Engine.Workers.Decode.Parallelism.Replicas != want.decode ||
			!bytes.Contains(data, []byte(want.note)) {
			t.Errorf("variant %d: decode replicas %d, want %d:\n%.1500s", i+1, s.Engine.Workers.Decode.Parallelism.Replicas, want.decode, data)
		}
	}

	// Synthetic traffic (issue 31): DynoSim's synthetic source at the spec's
	// rate, the middle of its lengths, its request count.
	synth := filepath.Join(dir, "synthetic.yaml")
	if r := runIn(t, "simulate", "--from-file", healthy, "--synthetic", "rate=5,isl=100-400,osl=10,requests=10", "--export-dynosim", synth); r.ExitCode != 0 {
		t.Fatalf("exit %d: %s", r.ExitCode, r.Stderr)
	}
	data, err = os.ReadFile(synth)
	if err != nil {
		t.Fatal(err)
	}
	s, _ = decodeDynoSim(t, data)
	if tr := s.Traffic; s.Engine.Model != "meta-llama/Llama-3.3-70B-Instruct" || bytes.Contains(data, []byte("no trace file")) || tr == nil ||
		tr.Source.Type != "synthetic" || *tr.Source.InputTokens != 250 || *tr.Source.OutputTokens != 10 || *tr.Load.RequestsPerSecond != 5 || *tr.Stop.Requests != 10 {
		t.Errorf("synthetic export: model %q\n%s", s.Engine.Model, data)
	}
	// The variants' files are outputs checked before the run, as the spec is.
	if err := os.Mkdir(filepath.Join(dir, "taken.variant-1.yaml"), 0o755); err != nil {
		t.Fatal(err)
	}
	r = runIn(t, "simulate", "--from-file", healthy, "--synthetic", "rate=5,isl=100-400,osl=10,requests=10", "--variant", "down=us-east-1a", "--export-dynosim", filepath.Join(dir, "taken.yaml"))
	if r.ExitCode != 1 || !strings.Contains(r.Stderr, "variant 1: ") || r.Stdout != "" {
		t.Errorf("a directory where a variant's spec goes: exit %d, stderr %q", r.ExitCode, r.Stderr)
	}
}

// TestSimulateOutputFiles: a file that cannot be written fails the command
// (exit 1) without leaving a partial or temporary file; an existing file is
// replaced whole, by a rename, never truncated in place.
func TestSimulateOutputFiles(t *testing.T) {
	base := []string{"simulate", "--from-file", prefillOnly, "--synthetic", "rate=10,isl=100-1000,osl=10,requests=20", "--fail-on", "none"}
	for _, flag := range []string{"--plot", "--export-dynosim"} {
		t.Run(flag, func(t *testing.T) {
			dir := t.TempDir()
			// A directory that does not exist.
			missing := filepath.Join(dir, "missing", "out")
			r := runIn(t, append(slices.Clone(base), flag, missing)...)
			if r.ExitCode != 1 || !strings.Contains(r.Stderr, "error: "+flag+": ") || !strings.Contains(r.Stderr, "no such file or directory") {
				t.Errorf("missing directory: exit %d stderr %q", r.ExitCode, r.Stderr)
			}
			if r.Stdout != "" {
				t.Errorf("a report was printed although the file failed:\n%s", r.Stdout)
			}
			if _, err := os.Stat(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the missing directory was created: %v", err)
			}
			// A path that is a directory: the rename fails, the temporary file goes.
			sub := filepath.Join(dir, "adir")
			if err := os.Mkdir(sub, 0o755); err != nil {
				t.Fatal(err)
			}
			r = runIn(t, append(slices.Clone(base), flag, sub)...)
			if r.ExitCode != 1 || !strings.Contains(r.Stderr, "error: "+flag+": ") {
				t.Errorf("a directory as the file: exit %d stderr %q", r.ExitCode, r.Stderr)
			}
			if names := dirNames(t, dir); !slices.Equal(names, []string{"adir"}) {
				t.Errorf("files left behind: %v", names)
			}
			if names := dirNames(t, sub); len(names) != 0 {
				t.Errorf("files written into the directory: %v", names)
			}

			// An existing file is replaced: new content, a new file (rename), and
			// a reader of the old file still sees the old content whole.
			path := filepath.Join(dir, "out")
			if err := os.WriteFile(path, []byte("old content\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			old, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer old.Close()
			oldInfo, _ := old.Stat()
			r = runIn(t, append(slices.Clone(base), flag, path)...)
			if r.ExitCode != 0 {
				t.Fatalf("exit %d: %s", r.ExitCode, r.Stderr)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if flag == "--plot" {
				wellFormedSVG(t, data)
			} else {
				decodeDynoSim(t, data)
			}
			newInfo, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if os.SameFile(oldInfo, newInfo) {
				t.Errorf("the existing file was rewritten in place, not replaced")
			}
			if got, _ := io.ReadAll(old); string(got) != "old content\n" {
				t.Errorf("the old file's content changed under its reader: %q", got)
			}
			if names := dirNames(t, dir); !slices.Equal(names, []string{"adir", "out"}) {
				t.Errorf("files left behind: %v", names)
			}
		})
	}
	// Both files, the second failing: no report, exit 1.
	dir := t.TempDir()
	r := runIn(t, append(slices.Clone(base), "--export-dynosim", filepath.Join(dir, "ok.yaml"), "--plot", filepath.Join(dir, "no", "plot.svg"))...)
	if r.ExitCode != 1 || r.Stdout != "" {
		t.Errorf("plot failing after the export: exit %d, stdout %q", r.ExitCode, r.Stdout)
	}
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// runStreams runs the command tree with stderr marked a terminal or not (cmdtest
// marks only stdout).
func runStreams(t *testing.T, stderrTTY bool, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chdir("../../.."); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = os.Chdir(wd) }()
	streams, _, out, errOut := iostreams.Test()
	streams.SetStderrTTY(stderrTTY)
	streams.SetGetenv(func(string) string { return "" })
	f := cmdutil.NewFactory(streams)
	cmd := root.NewCmdRoot(f)
	cmd.SetArgs(args)
	code = cmdutil.Report(streams.ErrOut, cmd, args, cmd.Execute())
	streams.Flush()
	return out.String(), errOut.String(), code
}

// TestSimulateProgress: the progress line is drawn on stderr, in place, when
// stderr is a terminal (or --progress always), and cleared at the end.
func TestSimulateProgress(t *testing.T) {
	args := []string{"simulate", "--from-file", prefillOnly, "--trace", mooncake, "--max-requests", "30", "--fail-on", "none",
		"--variant", "decode+1@us-east-1c", "--variant", "enforcement=preferred,weight=0.5"}
	tests := []struct {
		name     string
		tty      bool
		progress string
		shown    bool
	}{
		{"auto on a terminal", true, "auto", true},
		{"always on a terminal", true, "always", true},
		{"always to a file", false, "always", true},
		{"never on a terminal", true, "never", false},
		{"auto to a file", false, "auto", false},
	}
	var plain string
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := runStreams(t, tt.tty, append(slices.Clone(args), "--progress", tt.progress)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			if plain == "" {
				plain = out
			} else if out != plain {
				t.Errorf("the progress setting changed stdout")
			}
			if !tt.shown {
				if errOut != "" {
					t.Errorf("stderr %q, want nothing", errOut)
				}
				return
			}
			for i, v := range []string{"as deployed", "decode+1@us-east-1c", "enforcement=preferred,weight=0.5"} {
				want := "\r\x1b[Ksimulate: variant " + string(rune('1'+i)) + "/3 " + v + ": 30/30 requests (100%), "
				if !strings.Contains(errOut, want) {
					t.Errorf("stderr lacks %q:\n%q", want, errOut)
				}
			}
			if !strings.HasSuffix(errOut, "\r\x1b[K") || strings.Contains(errOut, "\n") {
				t.Errorf("the progress line is not redrawn in place and cleared at the end: %q", errOut)
			}
		})
	}
	// Inside a variant (issue 31): requests done out of the total (known from
	// a first read of the traffic), every 256 requests at most ten times a
	// second — the first report of a variant is always drawn.
	_, errOut, code := runStreams(t, true, "simulate", "--from-file", healthy, "--synthetic", "rate=50,isl=100-200,osl=4,requests=1000", "--fail-on", "none")
	if code != 0 || !strings.Contains(errOut, "\r\x1b[Ksimulate: variant 1/1 as deployed: 256/1,000 requests (26%)") ||
		!strings.Contains(errOut, "\r\x1b[Ksimulate: variant 1/1 as deployed: 1,000/1,000 requests (100%)") {
		t.Errorf("exit %d, stderr %q: no progress inside the variant", code, errOut)
	}
	// A variant that cannot apply is refused before anything is replayed: no
	// progress line, the error alone.
	_, errOut, code = runStreams(t, true, "simulate", "--from-file", prefillOnly, "--trace", mooncake, "--max-requests", "5", "--variant", "down=mars")
	if code != 1 || !strings.HasPrefix(errOut, "error: --variant \"down=mars\": down=zone=mars: no worker") {
		t.Errorf("exit %d, stderr %q: want the error alone", code, errOut)
	}
	// The exit-2 message follows the cleared line.
	_, errOut, code = runStreams(t, true, "simulate", "--from-file", prefillOnly, "--trace", mooncake, "--max-requests", "30")
	if code != 2 || !strings.Contains(errOut, "\r\x1b[Kthe deployment as it is fails ") || !strings.HasSuffix(errOut, "exit code 2)\n") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}
