package main

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/hermetic"
)

// TestMain runs the tests in the hermetic environment (internal/testutil/hermetic).
func TestMain(m *testing.M) { hermetic.Main(m) }

// fakeRun answers every command with its arguments echoed, exit 2 for "fail2",
// exit 1 for "fail1", and a usage error for "typo".
func fakeRun(args []string) (Result, error) {
	switch {
	case slices.Contains(args, "typo"):
		return Result{}, errors.New("usage error: unknown flag: --typo")
	case slices.Contains(args, "fail1"):
		return Result{Stderr: "error: broken\n", ExitCode: 1}, nil
	case slices.Contains(args, "fail2"):
		return Result{Stdout: "out " + strings.Join(args, " ") + "\nline 2\nline 3\n", Stderr: "1 finding(s)\n", ExitCode: 2}, nil
	}
	return Result{Stdout: "out " + strings.Join(args, " ") + "\nline 2\nline 3\n", Stderr: "note\n"}, nil
}

func TestFillBlocks(t *testing.T) {
	cases := []struct {
		name, in, want string
		changed        int
	}{
		{"console block", "intro\n<!-- generated: kubectl dynamo topology -f x.yaml -->\n```console\nstale\n```\n<!-- end generated -->\nafter\n",
			"intro\n<!-- generated: kubectl dynamo topology -f x.yaml -->\n```console\n$ kubectl dynamo topology -f x.yaml\nout topology -f x.yaml\nline 2\nline 3\nnote\n```\n<!-- end generated -->\nafter\n", 1},
		{"json block shows stdout only", "<!-- generated: kubectl dynamo hash -o json -->\n```json\n```\n<!-- end generated -->\n",
			"<!-- generated: kubectl dynamo hash -o json -->\n```json\nout hash -o json\nline 2\nline 3\n```\n<!-- end generated -->\n", 1},
		{"up to date", "<!-- generated: kubectl dynamo a -->\n```\nout a\nline 2\nline 3\n```\n<!-- end generated -->\n",
			"<!-- generated: kubectl dynamo a -->\n```\nout a\nline 2\nline 3\n```\n<!-- end generated -->\n", 0},
		{"head, redirections and exit status", "<!-- generated: kubectl dynamo a | head -1 -->\n<!-- generated: kubectl dynamo fail2 > /dev/null; echo $? -->\n<!-- generated: kubectl dynamo b 2>/dev/null -->\n```console\n```\n<!-- end generated -->\n",
			"<!-- generated: kubectl dynamo a | head -1 -->\n<!-- generated: kubectl dynamo fail2 > /dev/null; echo $? -->\n<!-- generated: kubectl dynamo b 2>/dev/null -->\n```console\n" +
				"$ kubectl dynamo a | head -1\nout a\nnote\n" +
				"$ kubectl dynamo fail2 > /dev/null; echo $?\n1 finding(s)\n2\n" +
				"$ kubectl dynamo b 2>/dev/null\nout b\nline 2\nline 3\n```\n<!-- end generated -->\n", 1},
		{"tail", "<!-- generated: kubectl dynamo a | tail -2 -->\n```\n```\n<!-- end generated -->\n",
			"<!-- generated: kubectl dynamo a | tail -2 -->\n```\nline 2\nline 3\n```\n<!-- end generated -->\n", 1},
		{"grep -A", "<!-- generated: kubectl dynamo a | grep -A 1 'line 2' -->\n```\n```\n<!-- end generated -->\n",
			"<!-- generated: kubectl dynamo a | grep -A 1 'line 2' -->\n```\nline 2\nline 3\n```\n<!-- end generated -->\n", 1},
		{"an error in a console block", "<!-- generated: kubectl dynamo fail1; echo $? -->\n````console\n````\n<!-- end generated -->\n",
			"<!-- generated: kubectl dynamo fail1; echo $? -->\n````console\n$ kubectl dynamo fail1; echo $?\nerror: broken\n1\n````\n<!-- end generated -->\n", 1},
		{"quoted arguments", "<!-- generated: kubectl dynamo hash --prompt 'a b' \"c \\\"d\\\"\" -->\n```\n```\n<!-- end generated -->\n",
			"<!-- generated: kubectl dynamo hash --prompt 'a b' \"c \\\"d\\\"\" -->\n```\nout hash --prompt a b c \"d\"\nline 2\nline 3\n```\n<!-- end generated -->\n", 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, changed, err := fillBlocks("f.md", tc.in, fakeRun)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
			if len(changed) != tc.changed {
				t.Errorf("%d blocks changed, want %d", len(changed), tc.changed)
			}
			again, changed, err := fillBlocks("f.md", got, fakeRun)
			if err != nil || again != got || len(changed) != 0 {
				t.Errorf("not idempotent: %v %d\n%s", err, len(changed), again)
			}
		})
	}
}

func TestFillBlocksErrors(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"no fence", "<!-- generated: kubectl dynamo a -->\ntext\n", "must open a fenced code block"},
		{"unclosed fence", "<!-- generated: kubectl dynamo a -->\n```\nx\n", "not closed"},
		{"no end marker", "<!-- generated: kubectl dynamo a -->\n```\n```\n", "must be followed by <!-- end generated -->"},
		{"not kubectl dynamo", "<!-- generated: kubectl get pods -->\n```\n```\n<!-- end generated -->\n", "must start with `kubectl dynamo`"},
		{"usage error", "<!-- generated: kubectl dynamo typo -->\n```console\n```\n<!-- end generated -->\n", "usage error"},
		{"error outside console", "<!-- generated: kubectl dynamo fail1 -->\n```json\n```\n<!-- end generated -->\n", "only a console block may show an error"},
		{"echo outside console", "<!-- generated: kubectl dynamo a; echo $? -->\n```\n```\n<!-- end generated -->\n", "needs a console block"},
		{"several commands outside console", "<!-- generated: kubectl dynamo a -->\n<!-- generated: kubectl dynamo b -->\n```\n```\n<!-- end generated -->\n", "several commands"},
		{"other pipes", "<!-- generated: kubectl dynamo a | jq . -->\n```\n```\n<!-- end generated -->\n", "only `| head -N` or `| tail -N`"},
		{"other shell", "<!-- generated: kubectl dynamo a; ls -->\n```console\n```\n<!-- end generated -->\n", "only `; echo $?`"},
		{"head and echo", "<!-- generated: kubectl dynamo a | head -2; echo $? -->\n```console\n```\n<!-- end generated -->\n", "head's exit code"},
		{"unterminated quote", "<!-- generated: kubectl dynamo a 'b -->\n```\n```\n<!-- end generated -->\n", "unterminated"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := fillBlocks("f.md", tc.in, fakeRun)
			if tc.want == "" {
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
			if err != nil && !strings.HasPrefix(err.Error(), "f.md:1: ") {
				t.Errorf("error %q does not name the marker's line", err)
			}
		})
	}
}

func TestFenceInOutput(t *testing.T) {
	run := func([]string) (Result, error) { return Result{Stdout: "```\n"}, nil }
	_, _, err := fillBlocks("f.md", "<!-- generated: kubectl dynamo a -->\n```\n```\n<!-- end generated -->\n", run)
	if err == nil || !strings.Contains(err.Error(), "longer fence") {
		t.Errorf("error %v", err)
	}
	if _, _, err := fillBlocks("f.md", "<!-- generated: kubectl dynamo a -->\n````\n````\n<!-- end generated -->\n", run); err != nil {
		t.Errorf("a longer fence: %v", err)
	}
}

// TestRunCommand runs the real command tree in-process the way the blocks do.
func TestRunCommand(t *testing.T) {
	r, err := runCommand([]string{"hash", "--tokens", "1,2,3,4", "--block-size", "4", "-o", "json"})
	if err != nil || r.ExitCode != 0 || !strings.Contains(r.Stdout, `"kind": "BlockHashes"`) {
		t.Errorf("hash: %v %+v", err, r)
	}
	if _, err := runCommand([]string{"hash", "--typo"}); err == nil || !strings.Contains(err.Error(), "unknown flag") {
		t.Errorf("a usage error is not reported: %v", err)
	}
	if _, err := runCommand([]string{"frobnicate"}); err == nil {
		t.Error("an unknown command is not reported")
	}
	// No kubeconfig and a dead server: a live command fails fast instead of
	// reading whatever cluster the machine has.
	r, err = runCommand([]string{"topology", "-n", "x"})
	if err != nil || r.ExitCode != 1 || !strings.Contains(r.Stderr, "127.0.0.1:1") {
		t.Errorf("live topology: %v %+v", err, r)
	}
}

func TestReferencePages(t *testing.T) {
	pages, err := referencePages()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"kubectl-dynamo.md", "kubectl-dynamo_topology.md", "kubectl-dynamo_completion_bash.md"} {
		if pages[name] == "" {
			t.Errorf("no page %s among %d", name, len(pages))
		}
	}
	root := pages["kubectl-dynamo.md"]
	for _, want := range []string{"# kubectl dynamo\n", "(kubectl-dynamo_topology.md)", "--color string", `(default "$HOME/.kube/cache")`} {
		if !strings.Contains(root, want) {
			t.Errorf("root page lacks %q", want)
		}
	}
	topo := pages["kubectl-dynamo_topology.md"]
	for _, want := range []string{"# kubectl dynamo topology\n", "kubectl dynamo topology [DGD...]", "--from-file string", "[kubectl dynamo](kubectl-dynamo.md)"} {
		if !strings.Contains(topo, want) {
			t.Errorf("topology page lacks %q", want)
		}
	}
	if strings.Contains(topo, "--kubeconfig string") {
		t.Error("the topology page repeats the global flags")
	}
}
