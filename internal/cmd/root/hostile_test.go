package root_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"sigs.k8s.io/yaml"

	"github.com/ai-dynamo/kubectl-dynamo/internal/cmd/dashboard"
	"github.com/ai-dynamo/kubectl-dynamo/internal/cmdutil"
	"github.com/ai-dynamo/kubectl-dynamo/internal/iostreams"
	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/cmdtest"
	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/hostile"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/tui"
)

// Terminal safety (issue 16, item 3): a capture whose free-text fields all
// carry terminal attacks — window title (OSC 0), clipboard write (OSC 52),
// clear screen, a C1 CSI, bidi overrides, zero-width and invisible runes, DEL,
// carriage return, backspace, a forged colour marker — goes through every
// command, every output format and every dashboard tab. No byte that reaches
// the terminal may be a control character, but for the plugin's own SGR colour
// sequences; the attacks must be shown (escaped), not dropped; and JSON and
// YAML must carry the values exactly.

// attack is appended to names, zones, label keys, model names, context,
// annotations and etcd keys and values.
const attack = "\x1b]0;PWNED\x07\x1b]52;c;cHduZWQ=\x07\x1b[2J\u009b8m\u202e\u2066\u200b\ufeff\x1b[8m\x7f\r\x08\ufdd0000000000000" + "31\ufdd1\U000e0041"

// attackShown is how the attack's start reads once escaped.
const attackShown = `\x1b]0;PWNED\x07\x1b]52;c;cHduZWQ=\x07\x1b[2J\u009b8m\u202e\u2066\u200b\ufeff\x1b[8m\x7f\x0d\x08\ufdd0`

// hostileReplacements inject the attack consistently, so the deployment still
// joins up (pods to nodes to DWMs) and every command gets past loading.
var hostileReplacements = []struct{ old, new string }{
	{"us-east-1", "us-east-1" + attack},                                     // zone values, pod, worker and DWM names, taints
	{"qwen3-32b", "qwen3" + attack + "-32b"},                                // the deployment, its labels and Dynamo namespace
	{"Qwen/", "Qwen/" + attack},                                             // the model's display name
	{"6f3c2a1e", "6f3c2a1e" + attack},                                       // rack values (etcd example)
	{"deepseek-ai/", "deepseek-ai/" + attack},                               // model name in etcd values
	{"v1/mdc/dynamo/", "v1/mdc/dynamo/" + attack},                           // etcd keys
	{"topology.kubernetes.io/zone", "topology.kubernetes.io/zone" + attack}, // label key, policy field
	{"example", "example" + attack},                                         // the capture's context
}

// hostileCapture rewrites an example capture with the attack and writes it as
// JSON (hostile.Capture).
func hostileCapture(t *testing.T, example string) string {
	t.Helper()
	return hostile.Capture(t, filepath.Join("..", "..", "..", "examples", example), hostile.CaptureOptions{
		Replace: poisonString, Context: "example" + attack, Note: "note" + attack,
		Dir: os.Getenv("KDYN_HOSTILE_DIR"), // set: keep the captures, to try them by hand
	})
}

func poisonString(s string) string {
	for _, r := range hostileReplacements {
		s = strings.ReplaceAll(s, r.old, r.new)
	}
	return s
}

// sgr matches an SGR sequence.
var sgr = regexp.MustCompile(`\x1b\[[0-9;]*m`)

func TestHostileClusterTextIsEscapedEverywhere(t *testing.T) {
	prompt := "../../../examples/prompts/support-chat.tokens"
	captures := map[string]string{
		"zone": hostileCapture(t, "prefill-only-zone-required.yaml"),
		"etcd": hostileCapture(t, "etcd-discovery-v1alpha1.yaml"),
	}
	type run struct {
		name    string
		args    []string
		visible bool // the escaped attack must show
	}
	var runs []run
	for name, file := range captures {
		for _, o := range []string{"table", "wide", "json", "yaml", "jsonpath={.deployments[*].name}"} {
			runs = append(runs, run{name + "/topology -o " + o, []string{"topology", "--from-file", file, "--exit-zero", "-o", o}, o == "table" || o == "wide"})
		}
		runs = append(runs, run{name + "/topology --tree", []string{"topology", "--from-file", file, "--exit-zero", "--tree"}, true})
		for _, o := range []string{"table", "wide", "json", "yaml"} {
			runs = append(runs, run{name + "/explain-route -o " + o, []string{"explain-route", "--from-file", file, "--token-file", prompt, "-o", o}, o == "table" || o == "wide"})
		}
		runs = append(runs, run{name + "/explain-route --all-prefill", []string{"explain-route", "--from-file", file, "--token-file", prompt, "--cold", "--assume-idle", "--all-prefill", "--exit-zero"}, true})
		runs = append(runs, run{name + "/explain-route bad worker", []string{"explain-route", "--from-file", file, "--token-file", prompt, "--domain-down", "zone=us-east-1" + attack + "a"}, false})
	}
	for _, r := range runs {
		t.Run(r.name, func(t *testing.T) {
			never := cmdtest.RunWith(t, cmdtest.Options{Env: map[string]string{"NO_COLOR": "1"}}, r.args...)
			always := cmdtest.RunWith(t, cmdtest.Options{TTY: true}, append(r.args, "--color", "always")...)
			for _, out := range []struct{ name, text string }{
				{"stdout", never.Stdout}, {"stderr", never.Stderr},
				{"stdout (colour)", sgr.ReplaceAllString(always.Stdout, "")}, {"stderr (colour)", sgr.ReplaceAllString(always.Stderr, "")},
			} {
				if at, ok := hostile.ControlFree(out.text); !ok {
					t.Errorf("%s: a control character reached the terminal near %q", out.name, at)
				}
			}
			// The colour run differs from the plain one only by SGR sequences:
			// every escape sequence in it is the plugin's own, and colour does
			// not shift a column (issue 22: colour codes counted toward widths).
			if got := sgr.ReplaceAllString(always.Stdout, ""); got != never.Stdout {
				t.Errorf("colour and plain runs differ beyond SGR:\n%s\n---\n%s", got, never.Stdout)
			}
			if r.visible && !strings.Contains(never.Stdout, attackShown) {
				t.Errorf("the attack is not shown escaped in stdout:\n%s", never.Stdout)
			}
			if never.ExitCode == cmdutil.ExitError && !strings.Contains(r.name, "bad worker") {
				t.Errorf("exit 1: %s", never.Stderr)
			}
		})
	}
	// JSON and YAML are exact: the attack comes back byte for byte.
	for name, file := range captures {
		for _, o := range []string{"json", "yaml"} {
			res := cmdtest.Run(t, "topology", "--from-file", file, "--exit-zero", "-o", o)
			j := []byte(res.Stdout)
			if o == "yaml" {
				var err error
				if j, err = yaml.YAMLToJSON(j); err != nil {
					t.Fatalf("%s -o yaml does not parse: %v", name, err)
				}
			}
			var doc struct {
				Context     string `json:"context"`
				Deployments []struct {
					Name    string `json:"name"`
					Domains []struct {
						Value string `json:"value"`
					} `json:"domains"`
				} `json:"deployments"`
			}
			if err := json.Unmarshal(j, &doc); err != nil {
				t.Fatalf("%s -o %s: %v", name, o, err)
			}
			found := false
			for _, d := range doc.Deployments {
				for _, dom := range d.Domains {
					found = found || strings.Contains(dom.Value, attack)
				}
			}
			if !found || !strings.Contains(doc.Context, attack) {
				t.Errorf("%s -o %s does not carry the values exactly: context %q, deployments %+v", name, o, doc.Context, doc.Deployments)
			}
		}
	}
}

// TestHostileDashboard renders every dashboard tab, the help and the route
// explorer's explanation of the hostile capture, with colour: the only escape
// sequences in a frame are SGR sequences the dashboard also draws for the
// benign example, and nothing else a terminal interprets gets through.
func TestHostileDashboard(t *testing.T) {
	prompt := "../../../examples/prompts/support-chat.tokens"
	frames := func(file string) []string {
		streams, _, _, _ := iostreams.Test()
		streams.SetStdoutTTY(true)
		f := cmdutil.NewFactory(streams)
		var o *dashboard.Options
		cmd := dashboard.NewCmdDashboard(f, func(got *dashboard.Options) error { o = got; return nil })
		f.ConfigFlags.AddFlags(cmd.PersistentFlags())
		cmd.SetArgs([]string{"--from-file", file, "--token-file", prompt})
		if err := cmd.Execute(); err != nil {
			t.Fatal(err)
		}
		to, err := o.TUIOptions(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		to.Color = true
		m := tui.New(to)
		// drain runs the commands an update returns, as Bubble Tea would
		// (offline there are no ticks, so every command returns).
		var drain func(cmd tea.Cmd, depth int)
		drain = func(cmd tea.Cmd, depth int) {
			if cmd == nil || depth > 20 {
				return
			}
			switch msg := cmd().(type) {
			case nil:
			case tea.BatchMsg:
				for _, c := range msg {
					drain(c, depth+1)
				}
			default:
				_, next := m.Update(msg)
				drain(next, depth+1)
			}
		}
		drain(m.Init(), 0)
		var out []string
		for _, size := range [][2]int{{160, 48}, {80, 24}} {
			m.Update(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
			for _, k := range []string{"1", "2", "3", "4", "?", "?", "j", "enter"} {
				_, cmd := m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)})
				if k == "enter" {
					_, cmd = m.Update(tea.KeyMsg{Type: tea.KeyEnter})
				}
				drain(cmd, 0)
				out = append(out, m.View())
			}
		}
		return out
	}
	benign := map[string]bool{}
	for _, fr := range frames("../../../examples/prefill-only-zone-required.yaml") {
		for _, s := range sgr.FindAllString(fr, -1) {
			benign[s] = true
		}
	}
	shown, routed := false, false
	for i, fr := range frames(hostileCapture(t, "prefill-only-zone-required.yaml")) {
		for _, s := range sgr.FindAllString(fr, -1) {
			if !benign[s] {
				t.Errorf("frame %d: SGR %q is not one of the dashboard's own", i, s)
			}
		}
		if at, ok := hostile.ControlFree(sgr.ReplaceAllString(fr, "")); !ok {
			t.Errorf("frame %d: a control character reached the terminal near %q", i, at)
		}
		shown = shown || strings.Contains(fr, `\x1b]0;PWNED`)
		routed = routed || strings.Contains(fr, "ROUTABLE")
	}
	if !shown {
		t.Error("no frame shows the attack escaped")
	}
	if !routed {
		t.Error("no frame shows the route explorer's verdict")
	}
}
