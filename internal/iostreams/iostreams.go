package iostreams

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/termsafe"
)

// ColorMode is the value of --color.
type ColorMode string

// The accepted --color values.
const (
	ColorAuto   ColorMode = "auto"
	ColorAlways ColorMode = "always"
	ColorNever  ColorMode = "never"
)

// ParseColorMode validates a --color value.
func ParseColorMode(s string) (ColorMode, error) {
	switch ColorMode(strings.ToLower(s)) {
	case ColorAuto, "":
		return ColorAuto, nil
	case ColorAlways:
		return ColorAlways, nil
	case ColorNever:
		return ColorNever, nil
	}
	return "", fmt.Errorf("invalid --color value %q: use auto, always or never", s)
}

// IOStreams carries the standard streams and what is known about the terminal
// behind them. Commands never touch os.Stdout or os.Stderr directly.
//
// Out and ErrOut are the output boundary (termsafe.Writer): whatever reaches
// them, cluster data included, has its control, bidi and invisible characters
// escaped, and only the plugin's own colour (termsafe.SGR) becomes ANSI SGR.
// TerminalOut is the raw stdout, for the dashboard, which escapes its frames
// itself.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	rawOut    io.Writer
	safeOut   *termsafe.Writer
	safeErr   *termsafe.Writer
	stdoutTTY bool
	stderrTTY bool
	colorMode ColorMode
	getenv    func(string) string
}

// System returns streams bound to the process's stdin, stdout and stderr.
func System() *IOStreams {
	s := &IOStreams{
		In:        os.Stdin,
		stdoutTTY: isTerminal(os.Stdout),
		stderrTTY: isTerminal(os.Stderr),
		colorMode: ColorAuto,
		getenv:    os.Getenv,
	}
	s.bind(os.Stdout, os.Stderr)
	return s
}

// bind puts the output boundary in front of out and errOut.
func (s *IOStreams) bind(out, errOut io.Writer) {
	s.rawOut = out
	s.safeOut = termsafe.NewWriter(out, s.ColorEnabled)
	s.safeErr = termsafe.NewWriter(errOut, s.ColorEnabled)
	s.Out, s.ErrOut = s.safeOut, s.safeErr
}

// TerminalOut is stdout without the output boundary: only for a full-screen
// program that drives the terminal and escapes what it draws (the dashboard).
func (s *IOStreams) TerminalOut() io.Writer {
	if s.rawOut == nil {
		return s.Out
	}
	return s.rawOut
}

// Flush writes out what the output boundary holds back (an incomplete UTF-8
// sequence at the very end); call it before exiting.
func (s *IOStreams) Flush() {
	for _, w := range []*termsafe.Writer{s.safeOut, s.safeErr} {
		if w != nil {
			_ = w.Flush()
		}
	}
}

// Test returns streams over in-memory buffers, not a TTY, with colour off and an
// empty environment, for tests. Out and ErrOut are the output boundary, as in
// System; the buffers receive what a terminal would.
func Test() (s *IOStreams, in, out, errOut *bytes.Buffer) {
	in, out, errOut = &bytes.Buffer{}, &bytes.Buffer{}, &bytes.Buffer{}
	s = &IOStreams{In: in, colorMode: ColorAuto, getenv: func(string) string { return "" }}
	s.bind(out, errOut)
	return s, in, out, errOut
}

// SetStdoutTTY overrides terminal detection (tests and --tty-like overrides).
func (s *IOStreams) SetStdoutTTY(tty bool) { s.stdoutTTY = tty }

// IsStdoutTTY reports whether stdout is a terminal.
func (s *IOStreams) IsStdoutTTY() bool { return s.stdoutTTY }

// SetStderrTTY marks stderr as a terminal (tests).
func (s *IOStreams) SetStderrTTY(tty bool) { s.stderrTTY = tty }

// IsStderrTTY reports whether stderr is a terminal (where a progress line may
// be redrawn in place).
func (s *IOStreams) IsStderrTTY() bool { return s.stderrTTY }

// SetColorMode sets the --color mode.
func (s *IOStreams) SetColorMode(m ColorMode) { s.colorMode = m }

// SetGetenv replaces the environment lookup (tests).
func (s *IOStreams) SetGetenv(f func(string) string) { s.getenv = f }

// ColorEnabled decides whether output may contain ANSI colour: --color never and
// always win; in auto mode NO_COLOR (any non-empty value) disables colour,
// CLICOLOR_FORCE (non-empty, not "0") forces it, and otherwise colour follows
// whether stdout is a terminal.
func (s *IOStreams) ColorEnabled() bool {
	switch s.colorMode {
	case ColorAlways:
		return true
	case ColorNever:
		return false
	}
	if s.getenv("NO_COLOR") != "" {
		return false
	}
	if v := s.getenv("CLICOLOR_FORCE"); v != "" && v != "0" {
		return true
	}
	return s.stdoutTTY
}

// Generic returns the streams in cli-runtime's form.
func (s *IOStreams) Generic() genericiooptions.IOStreams {
	return genericiooptions.IOStreams{In: s.In, Out: s.Out, ErrOut: s.ErrOut}
}

// isTerminal reports whether f is a character device (a terminal), without cgo.
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	if err != nil {
		return false
	}
	return st.Mode()&os.ModeCharDevice != 0
}
