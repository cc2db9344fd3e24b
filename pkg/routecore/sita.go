package routecore

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// SITA (size-interval task assignment, sita_enabled) confines a KV-routed
// request to a band of the eligible workers chosen by the request's size, so
// short prompts are not queued behind long ones. It mirrors
// sita_worker_id_bounds and its helpers in Dynamo's
// lib/kv-router/src/scheduling/selector/default.rs: the band restricts which
// eligible (worker, rank) pairs pick_default_worker scores; it is not an
// eligibility rule, so it never causes a routing error.

// SitaSlice is a half-open index range [Start, End) into the sorted eligible
// worker ids (SitaSlice in default.rs).
type SitaSlice struct {
	Start int `json:"start"`
	End   int `json:"end"`
}

func (s SitaSlice) width() int { return s.End - s.Start }

// SitaBandForSize maps a request size in tokens to its band (sita_band_for_size):
// size <= boundary1 is band 0; boundary2 == 0 collapses to two bands.
func SitaBandForSize(size, boundary1, boundary2 uint64) int {
	if size <= boundary1 {
		return 0
	}
	if boundary2 == 0 || size <= boundary2 {
		return 1
	}
	return 2
}

// SitaBandCount is 2 when boundary2 is 0, else 3 (sita_band_count).
func SitaBandCount(boundary2 uint64) int {
	if boundary2 == 0 {
		return 2
	}
	return 3
}

// SitaBandSlices partitions workerCount (>= 2) sorted workers into contiguous
// per-band slices (sita_band_slices): band 0 gets ceil(share·n) clamped to
// [1, n−1], the rest is split between the longer bands, band 1 taking the
// larger half; with two bands, or one worker left, bands 1 and 2 share the tail.
func SitaBandSlices(workerCount int, smallBandShare float64, bandCount int) [3]SitaSlice {
	band0 := int(math.Ceil(float64(smallBandShare * float64(workerCount))))
	band0 = min(max(band0, 1), workerCount-1)
	remaining := workerCount - band0
	if bandCount < 3 || remaining == 1 {
		tail := SitaSlice{band0, workerCount}
		return [3]SitaSlice{{0, band0}, tail, tail}
	}
	band1 := min(max((remaining+1)/2, 1), remaining-1)
	return [3]SitaSlice{{0, band0}, {band0, band0 + band1}, {band0 + band1, workerCount}}
}

func sitaSliceMean(loads []float64, s SitaSlice) float64 {
	if s.End <= s.Start {
		return 0
	}
	sum := 0.0
	for _, l := range loads[s.Start:s.End] {
		sum += l
	}
	return sum / float64(s.End-s.Start)
}

// SitaBandOccupancy is the share of the pool's per-worker load inside the
// slice, in [0,1] (sita_band_occupancy): 0.5 for an evenly loaded pool, and
// 0.5 when nothing is outside the slice or nothing is loaded.
func SitaBandOccupancy(loads []float64, s SitaSlice) float64 {
	inside := sitaSliceMean(loads, s)
	outsideCount := len(loads) - s.width()
	if outsideCount == 0 {
		return 0.5
	}
	total, in := 0.0, 0.0
	for _, l := range loads {
		total += l
	}
	for _, l := range loads[s.Start:s.End] {
		in += l
	}
	outside := (total - in) / float64(outsideCount)
	den := inside + outside
	if den <= 0 {
		return 0.5
	}
	return inside / den
}

// SitaApplySpill widens a saturated band (occupancy > spillThreshold) into the
// band above, or for the top band into band 1 (never band 0), when that
// neighbour's mean load is lower; then lets the result borrow an idle band 0
// (sita_apply_spill, sita_borrow_idle_short_band). spillThreshold >= 1 turns
// spilling off.
func SitaApplySpill(band, bandCount int, sl [3]SitaSlice, loads []float64, spillThreshold float64) SitaSlice {
	target := sl[band]
	if spillThreshold >= 1 {
		return target
	}
	widened := target
	if SitaBandOccupancy(loads, target) > spillThreshold {
		next := -1
		switch {
		case band+1 < bandCount:
			next = band + 1
		case band >= 2:
			next = band - 1
		}
		if next >= 0 {
			nb := sl[next]
			if nb != target && sitaSliceMean(loads, nb) < sitaSliceMean(loads, target) {
				widened = SitaSlice{min(target.Start, nb.Start), max(target.End, nb.End)}
			}
		}
	}
	short := sl[0]
	if widened.Start <= short.Start {
		return widened
	}
	if SitaBandOccupancy(loads, short) >= 1-spillThreshold {
		return widened
	}
	return SitaSlice{short.Start, widened.End}
}

// SitaWidenUncachedLongBand gives a long request with no cached prefix
// anywhere every non-short worker, and band 0 too while band 0's occupancy is
// under 2·(1 − spillThreshold) (sita_widen_uncached_long_band).
func SitaWidenUncachedLongBand(band int, sl [3]SitaSlice, workerCount int, bestCachedTokens uint64, loads []float64, spillThreshold float64) SitaSlice {
	if band == 0 || bestCachedTokens > 0 {
		return sl[band]
	}
	idleAllowance := float64((1 - spillThreshold) * 2)
	if SitaBandOccupancy(loads, sl[0]) < idleAllowance {
		return SitaSlice{0, workerCount}
	}
	return SitaSlice{sl[0].End, workerCount}
}

// SitaWorker is one eligible worker as SITA sees it: its id and its queued
// work in tokens, averaged over its dp ranks (sita_worker_loads: active
// prefill tokens + potential decode blocks · block size).
type SitaWorker struct {
	ID   WorkerID `json:"id,string"`
	Load float64  `json:"load"`
}

// SitaInput is what sita_worker_id_bounds reads for one request.
type SitaInput struct {
	// Workers are the workers eligibility allows (allow-list, not overloaded,
	// required taints), any order.
	Workers []SitaWorker
	// ISL is the prompt length; BestCachedTokens the largest effective cached
	// tokens any eligible (worker, rank) offers.
	ISL              uint64
	BestCachedTokens uint64
	// ExpectedOutputTokens is the request's output estimate (agent hints); nil
	// when absent.
	ExpectedOutputTokens *uint64
	// Pinned is true when the request names its worker: SITA does not apply.
	Pinned bool
}

// SitaBand is the outcome of SITA for one request.
type SitaBand struct {
	// Applied is false when SITA does not change routing (disabled, pinned, or
	// fewer than two eligible workers); Why says which.
	Applied bool   `json:"applied"`
	Why     string `json:"why,omitempty"`
	// Size is the effective prefill tokens (ISL − best cached) plus
	// sita_osl_weight · expected output tokens; Band its band (0 short).
	Size      uint64 `json:"size"`
	Band      int    `json:"band"`
	BandCount int    `json:"bandCount"`
	// Slices are the bands over the sorted eligible ids; Spilled and Widened
	// the two candidate ranges; Range the wider one, which routing uses.
	Slices  []SitaSlice `json:"slices,omitempty"`
	Spilled SitaSlice   `json:"spilled"`
	Widened SitaSlice   `json:"widened"`
	Range   SitaSlice   `json:"range"`
	// First and Last are the inclusive worker-id bounds; Workers the ids in
	// the band, ascending.
	First   WorkerID   `json:"first,string"`
	Last    WorkerID   `json:"last,string"`
	Workers []WorkerID `json:"workers,omitempty"`
}

// Allows reports whether a worker id is inside the band (always true when the
// band was not applied).
func (b SitaBand) Allows(id WorkerID) bool {
	return !b.Applied || (id >= b.First && id <= b.Last)
}

// ComputeSitaBand mirrors sita_worker_id_bounds.
func ComputeSitaBand(cfg KvRouterConfig, in SitaInput) SitaBand {
	switch {
	case !cfg.SitaEnabled:
		return SitaBand{Why: "sita_enabled is false"}
	case in.Pinned:
		return SitaBand{Why: "the request is pinned to a worker"}
	case len(in.Workers) < 2:
		return SitaBand{Why: fmt.Sprintf("%d eligible worker(s): too few to partition", len(in.Workers))}
	}
	ws := slices.Clone(in.Workers)
	slices.SortFunc(ws, func(a, b SitaWorker) int { return cmp.Compare(a.ID, b.ID) })
	prefill := in.ISL - min(in.ISL, in.BestCachedTokens)
	var out float64
	if in.ExpectedOutputTokens != nil {
		out = float64(cfg.SitaOSLWeight * float64(*in.ExpectedOutputTokens))
	}
	size := satAddU64(prefill, sitaFloatToU64(out))
	b := SitaBand{Applied: true, Size: size, BandCount: SitaBandCount(cfg.SitaBoundary2)}
	b.Band = SitaBandForSize(size, cfg.SitaBoundary1, cfg.SitaBoundary2)
	sl := SitaBandSlices(len(ws), cfg.SitaSmallBandShare, b.BandCount)
	b.Slices = slices.Clone(sl[:b.BandCount])
	loads := make([]float64, len(ws))
	for i, w := range ws {
		loads[i] = w.Load
	}
	b.Spilled = SitaApplySpill(b.Band, b.BandCount, sl, loads, cfg.SitaSpillThreshold)
	b.Widened = SitaWidenUncachedLongBand(b.Band, sl, len(ws), in.BestCachedTokens, loads, cfg.SitaSpillThreshold)
	b.Range = b.Spilled
	if b.Widened.width() > b.Spilled.width() {
		b.Range = b.Widened
	}
	b.First, b.Last = ws[b.Range.Start].ID, ws[b.Range.End-1].ID
	for _, w := range ws[b.Range.Start:b.Range.End] {
		b.Workers = append(b.Workers, w.ID)
	}
	return b
}

// sitaFloatToU64 is Rust's saturating `as usize` for a non-negative float.
func sitaFloatToU64(f float64) uint64 {
	switch {
	case !(f > 0):
		return 0
	case f >= math.MaxUint64:
		return math.MaxUint64
	}
	return uint64(f)
}

func satAddU64(a, b uint64) uint64 {
	if a > math.MaxUint64-b {
		return math.MaxUint64
	}
	return a + b
}

// SitaInputFor builds SITA's input from the routing inputs: the workers
// eligibility allows (allow-list, not fenced, not overloaded at these
// thresholds, required taints present), each with its mean queued work over
// its dp ranks, and the best effective cached tokens among their ranks.
// Additional blocks the request itself would add are not counted
// (potential_decode_blocks counts them only when the router tracks them; the
// dry run reports this as an assumption).
func SitaInputFor(workers []Worker, req Request, th BusyThresholds) SitaInput {
	in := SitaInput{ISL: uint64(max(req.ISL, 0)), Pinned: req.Pinned != nil}
	var allowed map[WorkerID]bool
	if req.AllowedWorkers != nil {
		allowed = map[WorkerID]bool{}
		for _, id := range req.AllowedWorkers {
			allowed[id] = true
		}
	}
	for _, w := range workers {
		if w.Fenced || (allowed != nil && !allowed[w.ID]) || !sitaHasTaints(w.effectiveTaints(), req.Constraints.RequiredTaints) {
			continue
		}
		if th.IsConfigured() && WorkerOverload(th, w).Overloaded {
			continue
		}
		start, size := w.Runtime.DataParallelStartRank, max(w.Runtime.DataParallelSize, 1)
		total := 0.0
		for r := start; r < start+size; r++ {
			l := w.Loads[r]
			total += float64(l.ActivePrefillTokens) + float64(l.ActiveDecodeBlocks*uint64(max(req.BlockSize, 0)))
			if c := req.Overlap.CachedTokens[WorkerWithDpRank{WorkerID: w.ID, DpRank: r}]; c > in.BestCachedTokens {
				in.BestCachedTokens = c
			}
		}
		in.Workers = append(in.Workers, SitaWorker{ID: w.ID, Load: total / float64(size)})
	}
	return in
}

// sitaRestrict confines req to the hop's SITA band over workers (the hop's
// pool, with the hop's own constraints: for the decode hop, the transfer
// constraint derived from the prefill pick), as pick_default_worker does
// inside the hop's selection. It returns the band (Applied false when SITA
// is off or does not apply) and changes only req.AllowedWorkers.
func sitaRestrict(cfg KvRouterConfig, th BusyThresholds, workers []Worker, req *Request) SitaBand {
	if !cfg.SitaEnabled || len(workers) == 0 {
		return SitaBand{Why: "sita_enabled is false"}
	}
	b := ComputeSitaBand(cfg, SitaInputFor(workers, *req, th))
	if !b.Applied {
		return b
	}
	var allowed []WorkerID
	for _, w := range workers {
		if b.Allows(w.ID) && (req.AllowedWorkers == nil || slices.Contains(req.AllowedWorkers, w.ID)) {
			allowed = append(allowed, w.ID)
		}
	}
	if allowed == nil {
		allowed = []WorkerID{}
	}
	req.AllowedWorkers = allowed
	return b
}

// sitaHasTaints reports whether have (sorted effective taints) holds need.
func sitaHasTaints(have, need []string) bool {
	for _, t := range need {
		if !slices.Contains(have, t) {
			return false
		}
	}
	return true
}
