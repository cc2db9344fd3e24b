// Package cmdtest runs the real kubectl-dynamo command tree in-process over test
// streams, the way main does, for command-level tests.
package cmdtest

import (
	"bytes"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ai-dynamo/kubectl-dynamo/internal/cmd/root"
	"github.com/ai-dynamo/kubectl-dynamo/internal/cmdutil"
	"github.com/ai-dynamo/kubectl-dynamo/internal/iostreams"
)

// Result is what a command run produced.
type Result struct {
	Stdout   string
	Stderr   string
	ExitCode int
}

// Options tune a run.
type Options struct {
	// Stdin is fed to the command.
	Stdin string
	// StdinReader, when set, is the command's standard input instead of
	// Stdin (an endless or lazily made stream).
	StdinReader io.Reader
	// TTY makes stdout look like a terminal.
	TTY bool
	// Env is the environment seen by colour decisions (NO_COLOR, CLICOLOR_FORCE).
	Env map[string]string
}

// Run executes `kubectl dynamo <args>` and returns its output and exit code.
func Run(t testing.TB, args ...string) Result {
	t.Helper()
	return RunWith(t, Options{}, args...)
}

// RunWith executes the command with options.
func RunWith(t testing.TB, o Options, args ...string) Result {
	t.Helper()
	streams, in, out, errOut := iostreams.Test()
	in.WriteString(o.Stdin)
	if o.StdinReader != nil {
		streams.In = o.StdinReader
	}
	streams.SetStdoutTTY(o.TTY)
	streams.SetGetenv(func(k string) string { return o.Env[k] })
	f := cmdutil.NewFactory(streams)
	f.Now = func() time.Time { return time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC) }
	cmd := root.NewCmdRoot(f)
	cmd.SetArgs(args)
	code := cmdutil.Report(streams.ErrOut, cmd, args, cmd.Execute())
	streams.Flush()
	return Result{Stdout: out.String(), Stderr: errOut.String(), ExitCode: code}
}

// Transcript renders a result for golden files: the command, stdout, stderr and
// exit code, so one file pins everything a user sees.
func Transcript(args []string, stdin string, r Result) []byte {
	var b bytes.Buffer
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = shellQuote(a)
	}
	b.WriteString("$ kubectl dynamo " + strings.Join(quoted, " ") + "\n")
	if stdin != "" {
		b.WriteString("--- stdin\n" + stdin)
		if !strings.HasSuffix(stdin, "\n") {
			b.WriteString("\n")
		}
	}
	b.WriteString("--- stdout\n" + r.Stdout)
	if r.Stdout != "" && !strings.HasSuffix(r.Stdout, "\n") {
		b.WriteString("\n")
	}
	b.WriteString("--- stderr\n" + r.Stderr)
	if r.Stderr != "" && !strings.HasSuffix(r.Stderr, "\n") {
		b.WriteString("\n")
	}
	b.WriteString("--- exit code: ")
	b.WriteString(strconv.Itoa(r.ExitCode))
	b.WriteString("\n")
	return b.Bytes()
}

// shellQuote quotes an argument the way a user would type it in a POSIX shell.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		plain := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_=,./:@%+", r)
		return !plain
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
