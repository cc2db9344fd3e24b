// Package plot draws a simulate.Report as a picture: SVG renders it as a
// standalone SVG document (no scripts, fonts or images from elsewhere) for a
// browser or a report, Terminal as compact block-character sparklines for the
// terminal.
//
// Both show the same thing, one panel per variant (the deployment as it is
// first), on axes shared by every panel so that variants compare at a glance:
// per transfer domain (zone, rack, …) the load over virtual time, decode load
// as active sequences and (SVG only) prefill load as requests in flight, and
// the requests that failed per bucket of time. A domain keeps its colour in
// every panel; past nine domains the nine busiest are coloured and the others
// drawn in grey (the legend says how many).
//
// Everything printed that came from the cluster (variant, domain and worker
// names, the deployment, the trace source) is treated as hostile: SVG text has
// control and invisible formatting characters removed, is cut to a length and
// XML-escaped; terminal text is escaped with internal/termsafe before it is
// measured and cut, so it fits the width as it will be printed. Numbers that
// are not finite, or negative loads, are not drawn (a line has a gap there).
//
// Output is deterministic: the same report gives the same bytes.
package plot
