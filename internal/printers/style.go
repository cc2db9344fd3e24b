package printers

import "github.com/ai-dynamo/kubectl-dynamo/pkg/termsafe"

// Bold wraps s in bold; use only when colour is enabled. Like every colour of
// the plugin it is a termsafe marker, which only the output boundary turns into
// an escape sequence.
func Bold(s string) string { return termsafe.SGR("1", s) }

// Color wraps s in the SGR colour code (e.g. "31"); use only when colour is
// enabled.
func Color(code, s string) string { return termsafe.SGR(code, s) }
