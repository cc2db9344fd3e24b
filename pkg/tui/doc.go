// Package tui is the Bubble Tea dashboard (`kubectl dynamo dashboard`) over the
// model and explain data. It never talks to client-go or etcd itself: data
// arrives through an injected Loader that returns a Data (a snapshot, its
// topology report and the KV-cache contents per deployment), built from a
// raw.Bundle by NewData.
//
// The model follows the Elm architecture in small parts, in the manner of
// soft-serve: a root Model holds the shared state (size, styles, data, the
// selected deployment and the highlight a finding casts) and routes messages —
// global keys first, then the active page. Each page (topology, workers,
// findings, route explorer) has its own update and view; the header and the
// help overlay are views over the shared state. I/O (reloading the data, the
// route explorer's dry runs) runs in tea.Cmds whose results come back as
// messages, so Update never blocks.
package tui
