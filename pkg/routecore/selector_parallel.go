package routecore

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Concurrency is injected, like randomness and the clock: routecore never
// starts a goroutine itself. A caller that wants large selections to use
// several cores sets Selector.Go (or DisaggInput.Go) to a function that runs
// its argument concurrently, typically func(f func()) { go f() }; without it
// every phase runs in one part on the caller's goroutine. The decision is the
// same either way.

// selDefaultGo is used when a Selector has no Go; nil outside tests (the
// package's tests set it so that every selection may take the parallel path).
var selDefaultGo func(f func())

// Large selections split their per-candidate work (validating the workers,
// enumerating candidates, scoring them, and the exponentials of the softmax)
// into contiguous parts of the canonical order, which up to GOMAXPROCS
// goroutines take in turn. Every part keeps its own running state — the
// allow-list and overlap-map cursors (positioned by binary search), the decay
// floor, the minimum cost and its tie count, the first failure — and the parts
// are merged afterwards in canonical order exactly as the sequential loop would
// have combined them, so a decision is bit-for-bit the same whatever the number
// of parts and goroutines. Only order-dependent floating-point reductions (the
// softmax sum and the sampling walk) stay sequential. There are a few parts per
// goroutine, so that on a busy machine a goroutine that gets less CPU time
// takes fewer parts instead of holding up the others.
//
// Two more jobs run beside the parts: the overlap maps that scoring reads by
// merge are sorted on goroutines of their own from the end of validation on,
// and a selection that must allocate its evidence (several megabytes, which the
// runtime zeroes) does so on a goroutine while the parts look up the load
// projections of all candidates (selState.lookAhead).

// selParallelMin is the fewest items (workers, candidates or costs) for which a
// selection phase is split across goroutines, each of which then has at least
// selParallelMin/2 items. Below about a thousand items per goroutine, starting
// and joining goroutines costs more than it saves. A variable so tests can force
// the parallel path on small inputs (and a benchmark can disable it).
var selParallelMin = 4096

// selPartsPerProc is how many parts a phase has per goroutine it may use.
const selPartsPerProc = 4

// selParts returns how many parts a phase over n items is split into: 1 below
// selParallelMin items or with one usable core, else a few per usable goroutine,
// each of at least selParallelMin/8 items.
func selParts(n int) int {
	if n < selParallelMin || n < 2 {
		return 1
	}
	procs := min(runtime.GOMAXPROCS(0), n/max(selParallelMin/2, 1))
	if procs <= 1 {
		return 1
	}
	return max(min(procs*selPartsPerProc, n/max(selParallelMin/8, 1)), procs)
}

// selSplit returns the start of part i of n items split into parts parts.
func selSplit(n, parts, i int) int { return int(int64(n) * int64(i) / int64(parts)) }

// selRun calls f(0), …, f(parts-1), each once, on up to GOMAXPROCS goroutines
// (the caller's among them, the others started with spawn) that take the parts
// in order, and returns when all calls have returned. Without spawn it calls
// them in order.
func selRun(spawn func(func()), parts int, f func(part int)) {
	procs := min(parts, runtime.GOMAXPROCS(0))
	if procs <= 1 || spawn == nil {
		for i := range parts {
			f(i)
		}
		return
	}
	var next atomic.Int64
	work := func() {
		for {
			i := int(next.Add(1) - 1)
			if i >= parts {
				return
			}
			f(i)
		}
	}
	var wg sync.WaitGroup
	for range procs - 1 {
		selSpawn(spawn, &wg, work)
	}
	work()
	wg.Wait()
}

// selSpawn runs f with spawn, counted by wg.
func selSpawn(spawn func(func()), wg *sync.WaitGroup, f func()) {
	wg.Add(1)
	spawn(func() {
		defer wg.Done()
		f()
	})
}

// spawner is the function that starts concurrent work, or nil.
func (s *selState) spawner() func(func()) {
	if s.sel.Go != nil {
		return s.sel.Go
	}
	return selDefaultGo
}

// nparts is selParts, or 1 when no concurrency was injected.
func (s *selState) nparts(n int) int {
	if s.spawner() == nil {
		return 1
	}
	return selParts(n)
}

// run is selRun with the selection's spawner.
func (s *selState) run(parts int, f func(part int)) { selRun(s.spawner(), parts, f) }

// selPart is one contiguous range of workers (in id order) and of the candidates
// they hold, with the part's results of validation and enumeration.
type selPart struct {
	k0, k1 int // workers [k0, k1) in id order
	n0, n1 int // candidates [n0, n1)

	// validation: n is the candidates of the part's workers before err (or more
	// than MaxCandidates); unsorted means the workers were not in id order.
	n        int
	err      error
	unsorted bool

	// enumeration: vis is the part's visited candidates (in its own region of
	// the shared buffer, at offset visOff), floor its decay floor (if
	// floorSeen), anyOverloaded whether it rejected a worker for overload.
	vis           []selVisit
	visOff        int
	floor         uint64
	floorSeen     bool
	anyOverloaded bool

	_ [64]byte // keep parts written by different goroutines off each other's cache lines
}

// selScorePart is one contiguous range [j0, j1) of the visited candidates and its
// scoring results: the minimum cost and how many candidates have it (the first
// minimum in canonical order kept among equal values), the smallest and largest
// cost (the softmax bounds) and the first candidate whose cost is not finite.
type selScorePart struct {
	j0, j1   int
	minCost  float64
	minCount int
	lo, hi   float64
	failAt   int // index into vis, or -1
	failCost float64

	_ [64]byte
}
