// Package termsafe keeps cluster data from driving the user's terminal.
//
// Everything kubectl-dynamo prints for humans may carry text that someone else
// wrote: label values, DynamoWorkerMetadata payloads, etcd keys and values,
// annotations, model names, frontend answers. Printed raw, such text can set the
// window title (OSC 0), write the clipboard (OSC 52), clear the screen, reorder
// what the user reads (bidi controls) or hide characters (zero-width runes).
//
// The package has one rule, Unsafe, and applies it at the output boundary:
//
//   - Escape and EscapeText render unsafe runes visibly (`\x1b`, `\u202e`,
//     `\xff` for a byte that is not UTF-8), for tables and free text;
//   - Writer wraps a stream and escapes everything unsafe that reaches it, except
//     the plugin's own colour, which printers request with SGR: that emits a
//     marker carrying a per-process secret, which only Writer turns into an ANSI
//     SGR sequence, so text from the cluster can never produce one;
//   - JSON and YAML post-passes escape the same runes inside strings, so the
//     documents stay exact (they decode to the same values) and safe to cat;
//   - View escapes a finished TUI frame, keeping only the SGR sequences the
//     dashboard's own styles produce. It cannot tell one of them in the data
//     from the dashboard's own, so it is the second line: the dashboard
//     escapes cluster text with Escape where it places it into a cell, before
//     the layout.
//
// Truncate and Width measure and cut display text (markers have no width).
package termsafe
