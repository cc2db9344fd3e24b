package iostreams

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"

	"k8s.io/cli-runtime/pkg/genericiooptions"
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
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	stdoutTTY bool
	colorMode ColorMode
	getenv    func(string) string
}

// System returns streams bound to the process's stdin, stdout and stderr.
func System() *IOStreams {
	return &IOStreams{
		In:        os.Stdin,
		Out:       os.Stdout,
		ErrOut:    os.Stderr,
		stdoutTTY: isTerminal(os.Stdout),
		colorMode: ColorAuto,
		getenv:    os.Getenv,
	}
}

// Test returns streams over in-memory buffers, not a TTY, with colour off and an
// empty environment, for tests.
func Test() (s *IOStreams, in, out, errOut *bytes.Buffer) {
	in, out, errOut = &bytes.Buffer{}, &bytes.Buffer{}, &bytes.Buffer{}
	s = &IOStreams{In: in, Out: out, ErrOut: errOut, colorMode: ColorAuto, getenv: func(string) string { return "" }}
	return s, in, out, errOut
}

// SetStdoutTTY overrides terminal detection (tests and --tty-like overrides).
func (s *IOStreams) SetStdoutTTY(tty bool) { s.stdoutTTY = tty }

// IsStdoutTTY reports whether stdout is a terminal.
func (s *IOStreams) IsStdoutTTY() bool { return s.stdoutTTY }

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
