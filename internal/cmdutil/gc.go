package cmdutil

import (
	"os"
	"runtime/debug"
)

// One-shot runs (explain-route, topology without --watch) read a capture or a
// cluster, build one report and exit. Most of what they allocate stays live
// until the end, so the default collector (GOGC=100) spends a quarter of the
// run re-marking the same objects: on a 10,000-worker capture it collects
// while the snapshot is being built and costs ~0.1 s of a ~1 s run. These
// settings let the heap grow further before collecting, with a soft limit so a
// very large input still collects well before memory runs out.
const (
	oneShotGCPercent   = 400
	oneShotMemoryLimit = 2 << 30
)

// TuneGCForOneShot applies the one-shot collector settings, unless the user
// set GOGC or GOMEMLIMIT (which always win). It returns a function restoring
// the previous settings; long-running modes (--watch, dashboard) never call it.
func TuneGCForOneShot() (restore func()) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	prevPercent := debug.SetGCPercent(oneShotGCPercent)
	prevLimit := debug.SetMemoryLimit(oneShotMemoryLimit)
	return func() {
		debug.SetGCPercent(prevPercent)
		debug.SetMemoryLimit(prevLimit)
	}
}
