package cmdutil

import (
	"fmt"

	"github.com/ai-dynamo/kubectl-dynamo/internal/printers"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
)

// Style decorates report text (topology, preflight) when colour is on; the
// severity symbols carry the meaning without it.
type Style struct{ Color bool }

// Severity colours text by a finding severity: red error, yellow warning, dim
// info.
func (s Style) Severity(sev model.Severity, text string) string {
	if !s.Color {
		return text
	}
	switch sev {
	case model.SeverityError:
		return printers.Color("31", text)
	case model.SeverityWarning:
		return printers.Color("33", text)
	}
	return printers.Color("2", text)
}

// Bold emboldens text.
func (s Style) Bold(text string) string {
	if !s.Color {
		return text
	}
	return printers.Bold(text)
}

// SeveritySymbol marks a severity so that it reads without colour: ✗ ! i.
func SeveritySymbol(sev model.Severity) string {
	switch sev {
	case model.SeverityError:
		return "✗"
	case model.SeverityWarning:
		return "!"
	}
	return "i"
}

// FindingsExit is the exit of a report command: ExitFindings (2) when a
// finding reaches --fail-on (unless --exit-zero), with a one-line reason for
// table output (structured output stays clean).
func FindingsExit(severities []model.Severity, failOn string, exitZero, table bool) error {
	if exitZero {
		return nil
	}
	threshold := model.Severity(failOn).Rank()
	n := 0
	for _, s := range severities {
		if s.Rank() >= threshold {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	msg := fmt.Sprintf("%d finding(s) at or above %s (exit code 2; --exit-zero reports without failing)", n, failOn)
	if !table {
		msg = ""
	}
	return &ResultError{Code: ExitFindings, Message: msg}
}
