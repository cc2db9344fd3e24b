package cmdutil

import (
	"os"
	"runtime/debug"
)

// One-shot runs (explain-route, topology without --watch, simulate) read a
// capture or a cluster, build one report and exit. Most of what they allocate
// stays live until the end, so the default collector (GOGC=100) spends part of
// the run re-marking the same objects. These settings let the heap grow
// further before collecting, with a soft limit so a very large input still
// collects well before memory runs out.
//
// How much further is a trade of memory for time. topology and explain-route
// hold small typed objects (pkg/raw): on the upstream-shaped 10,000-worker
// capture their live heap is 60-110 MB and a collection marks it in tens of
// milliseconds, so they let the heap grow to 3× (GOGC=200; 5× cost 25-40 MB
// more peak RSS for about 0.1 s of CPU). simulate's index and traces are
// rebuilt continuously and it keeps 5× (GOGC=400).
const (
	// GCReport is topology's and explain-route's GC percent.
	GCReport           = 200
	oneShotMemoryLimit = 2 << 30
)

// TuneGCForOneShot applies the one-shot collector settings (percent: GCReport;
// simulate keeps Go's defaults, its replay being mostly garbage at once), unless the user set GOGC or GOMEMLIMIT (which always win).
// It returns a function restoring the previous settings; long-running modes
// (--watch, dashboard) never call it.
func TuneGCForOneShot(percent int) (restore func()) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	prevPercent := debug.SetGCPercent(percent)
	prevLimit := debug.SetMemoryLimit(oneShotMemoryLimit)
	return func() {
		debug.SetGCPercent(prevPercent)
		debug.SetMemoryLimit(prevLimit)
	}
}
