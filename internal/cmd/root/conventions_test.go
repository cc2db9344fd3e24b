package root_test

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/ai-dynamo/kubectl-dynamo/internal/cmd/root"
	"github.com/ai-dynamo/kubectl-dynamo/internal/cmdutil"
	"github.com/ai-dynamo/kubectl-dynamo/internal/iostreams"
	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/cmdtest"
)

// The conventions every command follows (docs/development.md), checked on the
// whole command tree: a command added later is covered without touching this
// file, unless it is not a data command (then it goes in notData, with the
// reason) or cannot run offline with --from-file alone (then it gets a sample).

// APIVersion is the apiVersion of every JSON and YAML document.
const APIVersion = "kubectl-dynamo.io/v1alpha1"

// example is the capture file data commands run on.
const example = "../../../examples/prefill-only-zone-required.yaml"

// notData are the visible commands that print no report, and why. Every other
// runnable command is a data command.
var notData = map[string]string{
	"version":    "one line of text (with -o json|yaml for scripts, checked by TestConventionsVersionedJSON)",
	"completion": "shell scripts",
	"capture":    "writes a capture file: a Kubernetes List (docs/capture-format.md), not a report",
	"dashboard":  "interactive TUI: needs a terminal and prints no report",
}

// samples are offline invocations of the data commands, without -o. A data
// command with a --from-file flag and no sample runs as `CMD --from-file example`.
var samples = map[string][]string{
	"hash":          {"--tokens", "1,2,3,4,5,6,7,8,9,10", "--block-size", "4"},
	"version":       {},
	"preflight":     {"-f", example, "--nodes-from", example},
	"explain-route": {"--from-file", example, "--tokens", "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33"},
	"simulate":      {"--from-file", example, "--synthetic", "rate=5,isl=64-256,osl=8,duration=20s,prefix-share=0.5", "--seed", "1", "--fail-on", "none"},
	"audit-routes":  {"--from-file", example, "--logs", "../../../test/fixtures/router-logs/not-minimum.log"},
}

// commandTree builds the root with cobra's lazily added completion command.
func commandTree(t *testing.T) *cobra.Command {
	t.Helper()
	streams, _, _, _ := iostreams.Test()
	cmd := root.NewCmdRoot(cmdutil.NewFactory(streams))
	cmd.InitDefaultCompletionCmd()
	return cmd
}

// path is the command's words after "kubectl dynamo".
func path(c *cobra.Command) []string {
	if !c.HasParent() {
		return nil
	}
	return append(path(c.Parent()), c.Name())
}

// visible returns every available command below root, depth first.
func visible(c *cobra.Command) []*cobra.Command {
	var out []*cobra.Command
	for _, sub := range c.Commands() {
		if !sub.IsAvailableCommand() || sub.Name() == "help" {
			continue
		}
		out = append(out, sub)
		out = append(out, visible(sub)...)
	}
	return out
}

// dataCommands are the runnable commands that print a report.
func dataCommands(t *testing.T) []*cobra.Command {
	t.Helper()
	var out []*cobra.Command
	for _, c := range visible(commandTree(t)) {
		if _, skip := notData[path(c)[0]]; skip || !c.Runnable() {
			continue
		}
		out = append(out, c)
	}
	if len(out) < 2 {
		t.Fatalf("found %d data commands: the walk is broken", len(out))
	}
	return out
}

// sample returns the offline invocation of a command, without -o.
func sample(t *testing.T, c *cobra.Command) []string {
	t.Helper()
	p := path(c)
	if s, ok := samples[strings.Join(p, " ")]; ok {
		return append(slices.Clone(p), s...)
	}
	if c.Flags().Lookup("from-file") != nil {
		return append(slices.Clone(p), "--from-file", example)
	}
	t.Fatalf("%s has no --from-file: add an offline invocation to samples in conventions_test.go", strings.Join(p, " "))
	return nil
}

// runSample runs a sample and fails unless it exits 0 or 2 (a result).
func runSample(t *testing.T, o cmdtest.Options, args ...string) cmdtest.Result {
	t.Helper()
	r := cmdtest.RunWith(t, o, args...)
	if r.ExitCode != cmdutil.ExitOK && r.ExitCode != cmdutil.ExitFindings {
		t.Fatalf("kubectl dynamo %s: exit %d: %s\n(if the sample no longer suits the command, update samples in conventions_test.go)",
			strings.Join(args, " "), r.ExitCode, r.Stderr)
	}
	return r
}

// TestConventionsOutputFlags: every data command takes -o table|wide|json|yaml
// (table by default, completed by the shell) and --no-headers, and --no-headers
// changes the table.
func TestConventionsOutputFlags(t *testing.T) {
	for _, c := range dataCommands(t) {
		name := strings.Join(path(c), " ")
		t.Run(name, func(t *testing.T) {
			o := c.Flags().Lookup("output")
			if o == nil || o.Shorthand != "o" {
				t.Fatalf("no -o/--output flag: use cmdutil.AddOutputFlags")
			}
			if o.DefValue != cmdutil.OutputTable {
				t.Errorf("-o defaults to %q, want table", o.DefValue)
			}
			comp := cmdtest.Run(t, append(append([]string{cobra.ShellCompRequestCmd}, path(c)...), "-o", "")...)
			for _, f := range []string{cmdutil.OutputTable, cmdutil.OutputWide, cmdutil.OutputJSON, cmdutil.OutputYAML} {
				if !slices.Contains(strings.Split(comp.Stdout, "\n"), f) {
					t.Errorf("-o does not offer %s (completion: %q)", f, comp.Stdout)
				}
			}
			nh := c.Flags().Lookup("no-headers")
			if nh == nil || nh.Value.Type() != "bool" {
				t.Fatalf("no --no-headers flag")
			}
			args := sample(t, c)
			with := runSample(t, cmdtest.Options{}, append(slices.Clone(args), "--no-headers")...)
			without := runSample(t, cmdtest.Options{}, args...)
			if with.Stdout == without.Stdout {
				t.Errorf("--no-headers does not change the table:\n%s", with.Stdout)
			}
			runSample(t, cmdtest.Options{}, append(slices.Clone(args), "-o", "wide")...)
		})
	}
}

// TestConventionsVersionedJSON: every command's JSON and YAML documents carry
// apiVersion kubectl-dynamo.io/v1alpha1 and a kind (capture excepted: its file is
// a Kubernetes List).
func TestConventionsVersionedJSON(t *testing.T) {
	var cmds []*cobra.Command
	for _, c := range visible(commandTree(t)) {
		if o := c.Flags().Lookup("output"); o != nil && strings.Contains(o.Usage, "json") && path(c)[0] != "capture" {
			cmds = append(cmds, c)
		}
	}
	kindRE := regexp.MustCompile(`^[A-Z][A-Za-z]+$`)
	for _, c := range cmds {
		name := strings.Join(path(c), " ")
		t.Run(name, func(t *testing.T) {
			args := sample(t, c)
			for _, format := range []string{"json", "yaml"} {
				r := runSample(t, cmdtest.Options{}, append(slices.Clone(args), "-o", format)...)
				var doc map[string]any
				var err error
				if format == "json" {
					err = json.Unmarshal([]byte(r.Stdout), &doc)
				} else {
					err = yaml.Unmarshal([]byte(r.Stdout), &doc)
				}
				if err != nil {
					t.Fatalf("-o %s is not one %s document: %v\n%s", format, format, err, r.Stdout)
				}
				if doc["apiVersion"] != APIVersion {
					t.Errorf("-o %s: apiVersion %v, want %s", format, doc["apiVersion"], APIVersion)
				}
				if k, _ := doc["kind"].(string); !kindRE.MatchString(k) {
					t.Errorf("-o %s: kind %v is not a CamelCase kind", format, doc["kind"])
				}
				if r.Stderr != "" && r.ExitCode == cmdutil.ExitFindings {
					t.Errorf("-o %s with exit 2 wrote to stderr (machine output keeps stderr empty): %q", format, r.Stderr)
				}
			}
		})
	}
}

// TestConventionsHumanOutput: the table of every command that reads a deployment
// names the context in its first line, and no human output is coloured when
// piped, with NO_COLOR, or with --color never.
func TestConventionsHumanOutput(t *testing.T) {
	coloured := 0 // commands that colour with --color always: proves the check sees colour
	for _, c := range dataCommands(t) {
		name := strings.Join(path(c), " ")
		t.Run(name, func(t *testing.T) {
			args := sample(t, c)
			r := runSample(t, cmdtest.Options{}, args...)
			if c.Flags().Lookup("from-file") != nil {
				first, _, _ := strings.Cut(r.Stdout, "\n")
				if !strings.Contains(first, "Context: ") {
					t.Errorf("the first line does not show the context: %q", first)
				}
			}
			for _, tc := range []struct {
				name string
				o    cmdtest.Options
				args []string
			}{
				{"piped", cmdtest.Options{}, args},
				{"NO_COLOR on a terminal", cmdtest.Options{TTY: true, Env: map[string]string{"NO_COLOR": "1"}}, args},
				{"--color never on a terminal", cmdtest.Options{TTY: true, Env: map[string]string{"CLICOLOR_FORCE": "1"}}, append(slices.Clone(args), "--color", "never")},
			} {
				r := runSample(t, tc.o, tc.args...)
				if strings.Contains(r.Stdout+r.Stderr, "\x1b[") {
					t.Errorf("%s: output has ANSI escapes:\n%q", tc.name, r.Stdout)
				}
			}
			if r := runSample(t, cmdtest.Options{}, append(slices.Clone(args), "--color", "always")...); strings.Contains(r.Stdout, "\x1b[") {
				coloured++
			}
		})
	}
	if coloured == 0 {
		t.Error("no command colours its output with --color always: the escape check above cannot be trusted")
	}
}

// TestConventionsGlobalFlags: --color and the kubectl connection flags live on
// the root, for every command, and no command redefines them.
func TestConventionsGlobalFlags(t *testing.T) {
	cmd := commandTree(t)
	global := []string{"color", "kubeconfig", "context", "namespace", "request-timeout"}
	for _, name := range global {
		if cmd.PersistentFlags().Lookup(name) == nil {
			t.Errorf("--%s is not a persistent flag of the root", name)
		}
	}
	if f := cmd.PersistentFlags().Lookup("color"); f != nil && f.DefValue != "auto" {
		t.Errorf("--color defaults to %q, want auto", f.DefValue)
	}
	r := cmdtest.Run(t, cobra.ShellCompRequestCmd, "--color", "")
	for _, v := range []string{"auto", "always", "never"} {
		if !strings.Contains(r.Stdout, v+"\n") {
			t.Errorf("--color does not complete %s: %q", v, r.Stdout)
		}
	}
	for _, c := range visible(cmd) {
		for _, name := range global {
			if c.LocalNonPersistentFlags().Lookup(name) != nil {
				t.Errorf("%s redefines the global --%s", strings.Join(path(c), " "), name)
			}
		}
	}
}

// TestConventionsDocumented: the exit codes in docs/exit-codes.md are exactly
// the ones commands use, and every command has its page in docs/commands/.
func TestConventionsDocumented(t *testing.T) {
	data, err := os.ReadFile("../../../docs/exit-codes.md")
	if err != nil {
		t.Fatal(err)
	}
	var documented []int
	for _, m := range regexp.MustCompile("(?m)^\\| `(\\d+)` \\|").FindAllStringSubmatch(string(data), -1) {
		documented = append(documented, int(m[1][0]-'0'))
	}
	sort.Ints(documented)
	if want := []int{cmdutil.ExitOK, cmdutil.ExitError, cmdutil.ExitFindings}; !slices.Equal(documented, want) {
		t.Errorf("docs/exit-codes.md documents exit codes %v, the commands use %v", documented, want)
	}
	for _, c := range commandTree(t).Commands() {
		if !c.IsAvailableCommand() || c.Name() == "help" || c.Name() == "completion" {
			continue
		}
		if _, err := os.Stat("../../../docs/commands/" + c.Name() + ".md"); err != nil {
			t.Errorf("%s has no page docs/commands/%s.md", c.Name(), c.Name())
		}
	}
}
