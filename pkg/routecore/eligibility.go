package routecore

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// DefaultMaxNumBatchedTokens stands in for an unreported max_num_batched_tokens in
// the fractional prefill overload check (DEFAULT_MAX_TOKENS in worker_monitor.rs).
// It is large enough that the check never fires with realistic loads.
const DefaultMaxNumBatchedTokens uint64 = 10_000_000

// WorkerOverload evaluates the busy thresholds for one worker, mirroring
// WorkerLoadState::is_overloaded in lib/llm/src/discovery/worker_monitor.rs. Every
// declared rank [start, start+size) is checked; a rank without a Loads entry is free.
// A rank is overloaded if any configured check trips:
//
//   - active_prefill_tokens > active_prefill_tokens_threshold;
//   - active_prefill_tokens > floor(frac · max_num_batched_tokens), with
//     DefaultMaxNumBatchedTokens when the worker did not report it;
//   - the decode latch: kv_used_blocks or active_decode_blocks above
//     threshold · total_kv_blocks (needs total_kv_blocks > 0), or the explicit
//     RankLoad.DecodeOverloadLatched.
//
// The worker is overloaded only when all its ranks are. With no threshold set the
// report is empty and not overloaded.
func WorkerOverload(th BusyThresholds, w Worker) OverloadReport {
	if !th.IsConfigured() {
		return OverloadReport{}
	}
	start, end, ok := eligDpRange(w.Runtime)
	if !ok || end == start {
		return OverloadReport{}
	}
	rep := OverloadReport{Overloaded: true, Ranks: make([]RankOverload, 0, end-start)}
	for rank := start; rank < end; rank++ {
		ro := eligRankOverload(th, w, uint32(rank))
		rep.Ranks = append(rep.Ranks, ro)
		if !ro.Overloaded {
			rep.Overloaded = false
		}
	}
	return rep
}

func eligRankOverload(th BusyThresholds, w Worker, rank uint32) RankOverload {
	ro := RankOverload{DpRank: rank}
	load, observed := w.Loads[rank]
	if observed {
		active := load.ActivePrefillTokens
		if t := th.ActivePrefillTokensThreshold; t != nil && active > *t {
			ro.Trips = append(ro.Trips, OverloadTrip{
				Threshold: ThresholdActivePrefillTokens, Signal: "active_prefill_tokens",
				Value: float64(active), Limit: float64(*t),
			})
		}
		if f := th.ActivePrefillTokensThresholdFrac; f != nil {
			maxBatched := DefaultMaxNumBatchedTokens
			if w.Runtime.MaxNumBatchedTokens != nil {
				maxBatched = *w.Runtime.MaxNumBatchedTokens
			}
			limit := eligSaturatingU64(*f * float64(maxBatched))
			if active > limit {
				ro.Trips = append(ro.Trips, OverloadTrip{
					Threshold: ThresholdActivePrefillTokensFrac, Signal: "active_prefill_tokens",
					Value: float64(active), Limit: float64(limit),
				})
			}
		}
	}
	if t := th.ActiveDecodeBlocksThreshold; t != nil {
		switch {
		case observed && load.DecodeOverloadLatched != nil:
			if *load.DecodeOverloadLatched {
				ro.Trips = append(ro.Trips, OverloadTrip{
					Threshold: ThresholdActiveDecodeBlocks, Signal: "decode_overload_latch", Value: 1, Limit: 0,
				})
			}
		case observed && w.Runtime.TotalKvBlocks != nil && *w.Runtime.TotalKvBlocks > 0:
			limit := *t * float64(*w.Runtime.TotalKvBlocks)
			if load.KvUsedBlocks != nil && float64(*load.KvUsedBlocks) > limit {
				ro.Trips = append(ro.Trips, OverloadTrip{
					Threshold: ThresholdActiveDecodeBlocks, Signal: "kv_used_blocks",
					Value: float64(*load.KvUsedBlocks), Limit: limit,
				})
			}
			if float64(load.ActiveDecodeBlocks) > limit {
				ro.Trips = append(ro.Trips, OverloadTrip{
					Threshold: ThresholdActiveDecodeBlocks, Signal: "active_decode_blocks",
					Value: float64(load.ActiveDecodeBlocks), Limit: limit,
				})
			}
		}
	}
	ro.Overloaded = len(ro.Trips) > 0
	return ro
}

// eligSaturatingU64 converts like Rust's `as u64`: NaN and negatives give 0, values
// beyond the range give math.MaxUint64, others truncate toward zero.
func eligSaturatingU64(f float64) uint64 {
	switch {
	case math.IsNaN(f) || f <= 0:
		return 0
	case f >= 18446744073709551615.0:
		return math.MaxUint64
	}
	return uint64(f)
}

// eligDpRange returns the worker's ranks as [start, end) in 64-bit arithmetic; ok is
// false when start+size does not fit a u32 rank.
func eligDpRange(r RuntimeConfig) (start, end uint64, ok bool) {
	size := uint64(r.DpSize()) // a published 0 has no rank, as start..start+0 upstream
	start = uint64(r.DataParallelStartRank)
	end = start + size
	return start, end, end <= math.MaxUint32+1
}

// Eligibility holds the per-request filters of Dynamo's RoutingEligibility
// (scheduling/filter.rs) plus the busy thresholds that decide the overloaded set.
type Eligibility struct {
	// AllowedWorkers restricts candidates; nil allows every worker.
	AllowedWorkers []WorkerID
	Constraints    RoutingConstraints
	Thresholds     BusyThresholds
}

// EligibilityError is returned by ValidateWorkerRank for an ineligible candidate.
type EligibilityError struct {
	Candidate WorkerWithDpRank
	Ineligibility
}

// Error returns the lower-case explanation.
func (e *EligibilityError) Error() string { return e.Text }

// ValidateWorkerRank checks one candidate in Dynamo's order
// (RoutingEligibility::validate_worker_rank): allow-list, fenced, worker present and
// rank in range, required taints, overload. It returns nil or an *EligibilityError.
func (e Eligibility) ValidateWorkerRank(workers []Worker, c WorkerWithDpRank) error {
	var w *Worker
	for i := range workers {
		if workers[i].ID == c.WorkerID {
			w = &workers[i]
			break
		}
	}
	allowed := e.AllowedWorkers == nil || slices.Contains(e.AllowedWorkers, c.WorkerID)
	var reason *Ineligibility
	if w == nil {
		if !allowed {
			reason = eligNotAllowed(c.WorkerID)
		} else {
			reason = &Ineligibility{Code: ReasonWorkerUnavailable,
				Text: fmt.Sprintf("worker %s is unavailable", c.WorkerID), Detail: "not among the known workers"}
		}
	} else {
		var taints []string
		if len(e.Constraints.RequiredTaints) > 0 {
			taints = w.effectiveTaints()
		}
		overload := WorkerOverload(e.Thresholds, *w)
		reason = eligCheckCandidate(w, c.DpRank, allowed, taints, e.Constraints.RequiredTaints, &overload)
	}
	if reason == nil {
		return nil
	}
	return &EligibilityError{Candidate: c, Ineligibility: *reason}
}

func eligNotAllowed(id WorkerID) *Ineligibility {
	return &Ineligibility{Code: ReasonWorkerNotAllowed,
		Text: fmt.Sprintf("worker %s is not in allowed worker set", id)}
}

// eligCheckCandidate applies validate_worker_rank's order to a known worker. taints must
// be the worker's sorted effective taints when required is non-empty; overload is the
// worker's overload report (the zero report when no threshold is set).
func eligCheckCandidate(w *Worker, rank uint32, allowed bool, taints, required []string, overload *OverloadReport) *Ineligibility {
	if !allowed {
		return eligNotAllowed(w.ID)
	}
	if w.Fenced {
		return eligFenced(w.ID)
	}
	start, end, _ := eligDpRange(w.Runtime)
	if uint64(rank) < start || uint64(rank) >= end {
		return &Ineligibility{Code: ReasonDpRankUnavailable,
			Text:    fmt.Sprintf("worker %s dp_rank %d is outside [%d, %d)", w.ID, rank, start, end),
			DpStart: uint32(start), DpEnd: uint32(min(end, math.MaxUint32)),
		}
	}
	if missing := eligMissingTaints(taints, required); len(missing) > 0 {
		return eligUnsatisfied(w.ID, missing)
	}
	if overload.Overloaded {
		rep := *overload
		return eligOverloaded(w.ID, &rep)
	}
	return nil
}

func eligFenced(id WorkerID) *Ineligibility {
	return &Ineligibility{Code: ReasonWorkerFenced,
		Text: fmt.Sprintf("worker %s is not routable", id), Detail: "fenced: dead or deregistered"}
}

func eligUnsatisfied(id WorkerID, missing []string) *Ineligibility {
	return &Ineligibility{Code: ReasonRoutingConstraintsUnsatisfied,
		Text:          fmt.Sprintf("worker %s does not satisfy routing constraints", id),
		Detail:        "missing required taints " + strings.Join(missing, ", "),
		MissingTaints: missing,
	}
}

// eligOverloaded takes ownership of rep.
func eligOverloaded(id WorkerID, rep *OverloadReport) *Ineligibility {
	return &Ineligibility{Code: ReasonWorkerOverloaded,
		Text:     fmt.Sprintf("worker %s is overloaded", id),
		Detail:   eligDescribeTrips(*rep),
		Overload: rep,
	}
}

// eligCloneReason copies a reason for another rank of the same worker, with the
// same sharing eligCheckCandidate gives: its own MissingTaints and OverloadReport
// (whose Ranks are shared, as every rank's copy of the worker report shares them).
func eligCloneReason(r *Ineligibility) *Ineligibility {
	c := *r
	if r.MissingTaints != nil {
		c.MissingTaints = slices.Clone(r.MissingTaints)
	}
	if r.Overload != nil {
		rep := *r.Overload
		c.Overload = &rep
	}
	return &c
}

// eligWorkerOverloaded is WorkerOverload(th, *w).Overloaded without building the
// report: every declared rank must trip some configured check.
func eligWorkerOverloaded(th BusyThresholds, w *Worker) bool {
	if !th.IsConfigured() {
		return false
	}
	start, end, ok := eligDpRange(w.Runtime)
	if !ok || end == start {
		return false
	}
	for rank := start; rank < end; rank++ {
		if !eligRankOverloaded(th, w, uint32(rank)) {
			return false
		}
	}
	return true
}

// eligRankOverloaded reports whether eligRankOverload would record any trip.
func eligRankOverloaded(th BusyThresholds, w *Worker, rank uint32) bool {
	load, observed := w.Loads[rank]
	if observed {
		active := load.ActivePrefillTokens
		if t := th.ActivePrefillTokensThreshold; t != nil && active > *t {
			return true
		}
		if f := th.ActivePrefillTokensThresholdFrac; f != nil {
			maxBatched := DefaultMaxNumBatchedTokens
			if w.Runtime.MaxNumBatchedTokens != nil {
				maxBatched = *w.Runtime.MaxNumBatchedTokens
			}
			if active > eligSaturatingU64(*f*float64(maxBatched)) {
				return true
			}
		}
	}
	if t := th.ActiveDecodeBlocksThreshold; t != nil {
		switch {
		case observed && load.DecodeOverloadLatched != nil:
			return *load.DecodeOverloadLatched
		case observed && w.Runtime.TotalKvBlocks != nil && *w.Runtime.TotalKvBlocks > 0:
			limit := *t * float64(*w.Runtime.TotalKvBlocks)
			if load.KvUsedBlocks != nil && float64(*load.KvUsedBlocks) > limit {
				return true
			}
			if float64(load.ActiveDecodeBlocks) > limit {
				return true
			}
		}
	}
	return false
}

// eligMissingTaints returns the required taints absent from the sorted worker taints,
// in the order given.
func eligMissingTaints(sortedTaints, required []string) []string {
	var missing []string
	for _, t := range required {
		if _, found := slices.BinarySearch(sortedTaints, t); !found {
			missing = append(missing, t)
		}
	}
	return missing
}

// DescribeOverload words an overload report: which threshold each rank's load
// trips, with the value and the limit ("" when nothing trips).
func DescribeOverload(rep OverloadReport) string { return eligDescribeTrips(rep) }

func eligDescribeTrips(rep OverloadReport) string {
	var parts []string
	for _, r := range rep.Ranks {
		for _, t := range r.Trips {
			parts = append(parts, fmt.Sprintf("rank %d: %s %v > %s limit %v", r.DpRank, t.Signal, t.Value, t.Threshold, t.Limit))
		}
	}
	if len(parts) == 0 {
		return "all ranks over a busy threshold"
	}
	return strings.Join(parts, "; ")
}
