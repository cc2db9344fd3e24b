// Package dashboard implements `kubectl dynamo dashboard`: the interactive
// Bubble Tea dashboard (pkg/tui) over a live deployment, re-collected with
// source.Collect every --refresh, or over a capture file, fully offline.
package dashboard
