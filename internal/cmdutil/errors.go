package cmdutil

import (
	"errors"
	"fmt"
)

// Exit codes shared by every command (documented in docs/exit-codes.md).
const (
	// ExitOK means success with nothing to report.
	ExitOK = 0
	// ExitError means the command could not do its job (bad input, unreachable
	// cluster, …).
	ExitError = 1
	// ExitFindings means the command worked and found something the user asked to
	// fail on: a finding at or above --fail-on, or a predicted routing failure.
	ExitFindings = 2
)

// FlagError reports misuse of flags or arguments; the caller prints a usage hint.
type FlagError struct{ Err error }

func (e *FlagError) Error() string { return e.Err.Error() }
func (e *FlagError) Unwrap() error { return e.Err }

// FlagErrorf builds a FlagError.
func FlagErrorf(format string, args ...any) error {
	return &FlagError{Err: fmt.Errorf(format, args...)}
}

// ResultError ends a command that printed its output successfully but must exit
// non-zero (ExitFindings). Its message, if any, is printed to stderr as a note, not
// as an error.
type ResultError struct {
	Code    int
	Message string
}

func (e *ResultError) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Message
}

// HintError is an error with a next step for the user ("Try: …").
type HintError struct {
	Err  error
	Hint string
}

func (e *HintError) Error() string { return e.Err.Error() }
func (e *HintError) Unwrap() error { return e.Err }

// WithHint attaches a next-step hint to err.
func WithHint(err error, hint string) error {
	if err == nil {
		return nil
	}
	return &HintError{Err: err, Hint: hint}
}

// ExitCode maps an error returned by a command to the process exit code.
func ExitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var re *ResultError
	if errors.As(err, &re) {
		return re.Code
	}
	return ExitError
}
