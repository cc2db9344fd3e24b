package dashboard_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/spf13/cobra"

	"github.com/ai-dynamo/kubectl-dynamo/internal/cmd/dashboard"
	"github.com/ai-dynamo/kubectl-dynamo/internal/cmdutil"
	"github.com/ai-dynamo/kubectl-dynamo/internal/iostreams"
	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/cmdtest"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/explain"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/tui"
)

const (
	example = "../../../examples/prefill-only-zone-required.yaml"
	prompt  = "../../../examples/prompts/support-chat.tokens"
)

// wait is the one generous limit for every wait of the end-to-end flow (the
// machine running it may be loaded).
const wait = 20 * time.Second

// options runs the command's Complete and Validate with a terminal on stdout
// and returns its Options.
func options(t *testing.T, args ...string) (*dashboard.Options, error) {
	t.Helper()
	streams, _, _, _ := iostreams.Test()
	streams.SetStdoutTTY(true)
	f := cmdutil.NewFactory(streams)
	var got *dashboard.Options
	cmd := dashboard.NewCmdDashboard(f, func(o *dashboard.Options) error { got = o; return nil })
	f.ConfigFlags.AddFlags(cmd.PersistentFlags())
	cmd.SetArgs(args)
	cmd.SetOut(&bytes.Buffer{})
	cmd.SetErr(&bytes.Buffer{})
	err := cmd.Execute()
	return got, err
}

// TestRefusesWithoutTerminal: piped stdout gets a clear error pointing at
// the same data without a terminal (topology with the user's --from-file, never
// --watch, which refuses a file), exit 1, and nothing on stdout.
func TestRefusesWithoutTerminal(t *testing.T) {
	r := cmdtest.Run(t, "dashboard", "--from-file", example)
	if r.ExitCode != cmdutil.ExitError {
		t.Errorf("exit %d, want 1", r.ExitCode)
	}
	if !strings.Contains(r.Stderr, "needs a terminal") || !strings.Contains(r.Stderr, "kubectl dynamo topology --from-file "+example) ||
		strings.Contains(r.Stderr, "--watch") {
		t.Errorf("stderr %q", r.Stderr)
	}
	if r.Stdout != "" {
		t.Errorf("stdout %q", r.Stdout)
	}
}

// TestSelectionMatchingNothingFails: the dashboard follows the CLI's one rule —
// a namespace or name that matches nothing, or a file with no Dynamo objects,
// fails before the screen is taken, listing what exists.
func TestSelectionMatchingNothingFails(t *testing.T) {
	pod := filepath.Join(t.TempDir(), "pod.yaml")
	if err := os.WriteFile(pod, []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\nspec: {containers: [{name: c, image: x}]}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"wrong namespace", []string{"--from-file", example, "-n", "wrongns"},
			[]string{"no DynamoGraphDeployment in namespace wrongns of the capture file", "serving/qwen3-32b", "Try: kubectl dynamo dashboard --from-file " + example + " -n serving"}},
		{"wrong name", []string{"--from-file", example, "nope"},
			[]string{"no DynamoGraphDeployment named nope", "serving/qwen3-32b"}},
		{"not a capture", []string{"--from-file", pod},
			[]string{"holds no DynamoGraphDeployment and no Dynamo worker pod"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := options(t, tc.args...)
			if err == nil {
				_, err = o.TUIOptions(context.Background())
			}
			if err == nil {
				t.Fatal("no error")
			}
			var b strings.Builder
			code := cmdutil.Report(&b, &cobra.Command{Use: "kubectl dynamo"}, nil, err)
			if code != cmdutil.ExitError {
				t.Errorf("exit %d", code)
			}
			for _, w := range tc.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("error lacks %q:\n%s", w, b.String())
				}
			}
		})
	}
}

func TestFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--from-file", example, "--theme", "pink"}, "--theme must be dark or light"},
		{[]string{"--from-file", "-"}, "reads its keys from stdin"},
		{[]string{"--from-file", example, "--tokens", "1 2", "--token-file", prompt}, "cannot be combined"},
		{[]string{"--from-file", example, "--tokens", "1 two"}, `"two" is not a token id`},
		{[]string{"--from-file", example, "--frontend-url", "http://x"}, "cannot be used with --from-file"},
		{[]string{"--from-file", example, "--skew-factor", "0.5"}, "--skew-factor must be at least 1"},
		{[]string{"nope", "--from-file", example}, ""}, // checked at load time below
	} {
		o, err := options(t, tc.args...)
		if tc.want == "" {
			if err != nil {
				t.Fatalf("%v: %v", tc.args, err)
			}
			if _, err := o.TUIOptions(context.Background()); err == nil || !strings.Contains(err.Error(), "no DynamoGraphDeployment named nope") {
				t.Errorf("%v: load error %v", tc.args, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want %q", tc.args, err, tc.want)
		}
	}
}

// TestOfflineOptions: --from-file loads once, never refreshes, indexes the
// capture's KvEvents for the route explorer, and passes the token file on.
func TestOfflineOptions(t *testing.T) {
	o, err := options(t, "--from-file", example, "--token-file", prompt, "--theme", "light")
	if err != nil {
		t.Fatal(err)
	}
	to, err := o.TUIOptions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if to.Load != nil || to.Refresh != 0 || to.Theme != tui.ThemeLight {
		t.Errorf("offline options: load %v refresh %v theme %v", to.Load != nil, to.Refresh, to.Theme)
	}
	kv := to.Initial.KV["serving/qwen3-32b"]
	if kv.Kind != explain.KVIndex || kv.Index == nil {
		t.Errorf("KV %+v", kv)
	}
	toks, err := tui.ParseTokenIDs(to.Tokens)
	if err != nil || len(toks) != 205 {
		t.Errorf("tokens: %d, %v", len(toks), err)
	}
}

// TestEndToEnd runs the dashboard built by the command in a real Bubble Tea
// program: start on the prefill-only example, go to the route explorer, type
// the example prompt's token ids, see NOT ROUTABLE, flip enforcement to
// preferred (still failing: the workers publish no preferred weight), add a
// preferred weight and see ROUTABLE, quit.
func TestEndToEnd(t *testing.T) {
	o, err := options(t, "--from-file", example)
	if err != nil {
		t.Fatal(err)
	}
	to, err := o.TUIOptions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	to.Color = false
	tm := teatest.NewTestModel(t, tui.New(to), teatest.WithInitialTermSize(120, 40))
	out := tm.Output()
	waitFor := func(what string) {
		t.Helper()
		teatest.WaitFor(t, out, func(b []byte) bool { return bytes.Contains(b, []byte(what)) },
			teatest.WithDuration(wait), teatest.WithCheckInterval(20*time.Millisecond))
	}
	waitFor("us-east-1c")
	tm.Send(tea.KeyMsg{Type: tea.KeyTab})
	tm.Send(tea.KeyMsg{Type: tea.KeyShiftTab})
	tm.Type("4")
	waitFor("Type or paste")
	data, err := os.ReadFile(prompt)
	if err != nil {
		t.Fatal(err)
	}
	tm.Type("i")
	tm.Type(tui.TokenText(string(data)))
	tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
	waitFor("NOT ROUTABLE")
	tm.Type("e")
	waitFor("preferred-weight-missing")
	tm.Type("w")
	waitFor("✓ ROUTABLE")
	tm.Type("q")
	fm := tm.FinalModel(t, teatest.WithFinalTimeout(wait)).(*tui.Model)
	if !fm.Quitting() || fm.Tab() != tui.TabRoute {
		t.Errorf("quitting %v tab %v", fm.Quitting(), fm.Tab())
	}
	r := fm.Route()
	if len(r.Tokens()) != 205 || r.Enforcement() != explain.EnforcementPreferred || r.PreferredWeight() != 0.25 {
		t.Errorf("tokens %d enforcement %q weight %v", len(r.Tokens()), r.Enforcement(), r.PreferredWeight())
	}
	x := r.Explanation()
	if x == nil || !x.Verdict.Routable || x.Decode == nil || !strings.HasPrefix(x.Decode.Pick, "qwen3-32b-0-decode-") {
		t.Fatalf("final explanation: %+v", x)
	}
}
