package simulate_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/cmdtest"
	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/hostile"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/simulate"
)

// Terminal safety for simulate (internal/cmd/root/hostile_test.go covers the
// other commands the same way): a capture whose names, zone values, label
// keys, model name and context carry terminal attacks goes through every
// human output; no byte that reaches the terminal may be a control character
// but the plugin's own colour sequences, and JSON carries the values exactly.

// attack is appended to names, zones, label keys, the model name and the context.
const attack = "\x1b]0;PWNED\x07\x1b]52;c;cHduZWQ\x07\x1b[2J\u009b8m\u202e\u2066\u200b\ufeff\x1b[8m\x7f\r\x08\ufdd0" + "\U000e0041"

// (No '=' in the attack: Dynamo's validator rejects a domain value holding
// one, and the workers would not route at all.)
var (
	names = []string{
		"us-east-1", "us-east-1" + attack, // zone values, pod, worker and DWM names, taints
		"qwen3-32b", "qwen3" + attack + "-32b", // the deployment, its labels and Dynamo namespace
		"topology.kubernetes.io/zone", "topology.kubernetes.io/zone" + attack, // label key, policy field
	}
	hostileReplacer = strings.NewReplacer(append(slices.Clone(names), "Qwen/", "Qwen/"+attack)...) // and the model
	namesReplacer   = strings.NewReplacer(names...)
)

// hostileCapture rewrites the example with the attack in every string and
// key (JSON held in strings too) and writes it as JSON (hostile.Capture).
func hostileCapture(t *testing.T, example string, rep *strings.Replacer) string {
	t.Helper()
	return hostile.Capture(t, "../../../"+example, hostile.CaptureOptions{Replace: rep.Replace, Context: "example" + attack})
}

var sgr = regexp.MustCompile(`\x1b\[[0-9;]*m`)

func TestSimulateHostileClusterText(t *testing.T) {
	file := hostileCapture(t, prefillOnly, hostileReplacer)
	dir := t.TempDir()
	traffic := []string{"--trace", "../../../" + mooncake, "--max-requests", "30", "--seed", "1"}
	runs := []struct {
		name    string
		args    []string
		code    int
		visible bool // the escaped attack must show on stdout
	}{
		{"table", []string{"--variant", "enforcement=preferred,weight=0.3"}, 2, true},
		{"wide", []string{"--variant", "decode+1@us-east-1" + attack + "c", "-o", "wide"}, 2, true},
		{"no-headers", []string{"--no-headers", "-o", "wide", "--variant", "down=us-east-1" + attack + "a"}, 2, false},
		{"cold", []string{"--cold", "--assume-idle"}, 2, true},
		{"plot", []string{"--plot", filepath.Join(dir, "hostile.svg")}, 2, true},
		{"down in a hostile zone", []string{"--variant", "down=us-east-1" + attack + "a"}, 2, true},
		{"unknown hostile zone", []string{"--variant", "down=mars" + attack}, 1, false},
		{"progress", []string{"--progress", "always", "--variant", "decode+1@us-east-1" + attack + "c"}, 2, true},
	}
	for _, r := range runs {
		t.Run(r.name, func(t *testing.T) {
			args := append(append([]string{"simulate", "--from-file", file}, traffic...), r.args...)
			never := cmdtest.RunWith(t, cmdtest.Options{Env: map[string]string{"NO_COLOR": "1"}}, args...)
			always := cmdtest.RunWith(t, cmdtest.Options{TTY: true}, append(args, "--color", "always")...)
			for _, out := range []struct{ name, text string }{
				{"stdout", never.Stdout}, {"stderr", never.Stderr},
				{"stdout (colour)", sgr.ReplaceAllString(always.Stdout, "")}, {"stderr (colour)", sgr.ReplaceAllString(always.Stderr, "")},
			} {
				// The progress line's own carriage return and erase-line are the
				// plugin's, as SGR is.
				text := strings.ReplaceAll(out.text, "\r\x1b[K", "")
				if at, ok := hostile.ControlFree(text); !ok {
					t.Errorf("%s: a control character reached the terminal near %q", out.name, at)
				}
			}
			if got := sgr.ReplaceAllString(always.Stdout, ""); got != never.Stdout {
				t.Errorf("colour and plain runs differ beyond SGR:\n%s\n---\n%s", got, never.Stdout)
			}
			if never.ExitCode != r.code {
				t.Fatalf("exit %d, want %d: %s", never.ExitCode, r.code, never.Stderr)
			}
			if r.visible && !strings.Contains(never.Stdout, `  us-east-1\x1b]0;PWNED\x07`) {
				t.Errorf("the attack is not shown escaped in the domain table:\n%s", never.Stdout)
			}
		})
	}
	// The SVG: well-formed, and the attack's controls are not in it.
	svg, err := os.ReadFile(filepath.Join(dir, "hostile.svg"))
	if err != nil {
		t.Fatal(err)
	}
	wellFormedSVG(t, svg)
	if at, ok := hostile.ControlFree(string(svg)); !ok {
		t.Errorf("svg: a control character near %q", at)
	}
	// JSON carries the values exactly.
	res := cmdtest.Run(t, append([]string{"simulate", "--from-file", file, "-o", "json"}, traffic...)...)
	dec := json.NewDecoder(strings.NewReader(res.Stdout))
	dec.DisallowUnknownFields()
	var rep simulate.Report
	if err := dec.Decode(&rep); err != nil {
		t.Fatalf("exit %d: %v\n%s", res.ExitCode, err, res.Stderr)
	}
	found := false
	for _, d := range rep.Variants[0].Domains {
		found = found || d.Value == "us-east-1"+attack+"c"
	}
	if !found || rep.Deployment != "qwen3"+attack+"-32b" || rep.Context != "example"+attack || rep.Model != "Qwen/"+attack+"Qwen3-32B" {
		t.Errorf("-o json does not carry the values exactly: %q %q %q %+v", rep.Deployment, rep.Context, rep.Model, rep.Variants[0].Domains)
	}
}

// TestSimulateHostileExport: the DynoSim spec is a file users read with cat
// and feed to another program: hostile names in it must be valid YAML and
// reach no terminal. A model name DynoSim cannot take fails the export
// cleanly (exit 1, no file).
func TestSimulateHostileExport(t *testing.T) {
	dir := t.TempDir()
	traffic := []string{"--synthetic", "rate=5,isl=100-400,osl=5,requests=10", "--fail-on", "none"}
	spec := filepath.Join(dir, "names.yaml")
	r := cmdtest.Run(t, append([]string{"simulate", "--from-file", hostileCapture(t, prefillOnly, namesReplacer), "--export-dynosim", spec}, traffic...)...)
	if r.ExitCode != 0 {
		t.Fatalf("exit %d: %s", r.ExitCode, r.Stderr)
	}
	data, err := os.ReadFile(spec)
	if err != nil {
		t.Fatal(err)
	}
	if at, ok := hostile.ControlFree(string(data)); !ok {
		t.Errorf("the DynoSim spec holds a raw control character near %q", at)
	}
	decodeDynoSim(t, data)

	spec = filepath.Join(dir, "model.yaml")
	r = cmdtest.Run(t, append([]string{"simulate", "--from-file", hostileCapture(t, prefillOnly, hostileReplacer), "--export-dynosim", spec}, traffic...)...)
	if r.ExitCode == 0 {
		data, err := os.ReadFile(spec)
		if err != nil {
			t.Fatal(err)
		}
		if at, ok := hostile.ControlFree(string(data)); !ok {
			t.Errorf("the DynoSim spec holds a raw control character near %q", at)
		}
		decodeDynoSim(t, data)
	} else {
		if r.ExitCode != 1 || !strings.Contains(r.Stderr, "--export-dynosim") {
			t.Errorf("exit %d: %s", r.ExitCode, r.Stderr)
		}
		if names := dirNames(t, dir); len(names) != 1 {
			t.Errorf("files left behind: %v", names)
		}
	}
	if at, ok := hostile.ControlFree(r.Stderr); !ok {
		t.Errorf("stderr: a control character near %q", at)
	}
}
