package simulate

import (
	"cmp"
	"math"
	"slices"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
)

// DefaultSaturationThreshold is the share of a pool's capacity above which
// its queue dominates: under the engine model a FIFO prefill server's wait
// grows as ρ/(1−ρ) (5.7 prompts' worth at 85 %), and a decode worker's step
// time as 1/(1−ρ); above 100 % the queue grows for as long as the trace lasts.
const DefaultSaturationThreshold = 0.85

// The stages a Saturation row measures.
const (
	StagePrefill = "prefill"
	StageDecode  = "decode"
)

// Saturation is the load of one stage (prefill or decode) on a pool or on
// one domain's part of it, against its capacity under the engine model,
// measured over the span of the arrivals.
//
// Prefill capacity is PrefillTokensPerSecondPerGPU × GPUs of every worker
// that prefills (the prefill workers; the decode workers too when there are
// none or conditional disaggregation may bypass them). Decode capacity is the
// output tokens per second a decode worker approaches as its batch grows:
// a step of DecodeStepMs + DecodeStepMsPerSequence × B gives B tokens, so
// 1000 / DecodeStepMsPerSequence tokens/s (unbounded when that slope is 0).
// The utilisation is work ÷ span ÷ capacity; it is the figure queueing theory
// reads (ρ): at ρ ≥ the threshold, latencies are mostly waiting.
type Saturation struct {
	// Stage is prefill or decode; Domain the domain value, or "" for the
	// whole pool.
	Stage  string `json:"stage"`
	Domain string `json:"domain,omitempty"`
	// Workers is the workers of the stage in the pool or domain, and Role
	// their role (prefill, decode or aggregated; the stage's name when they
	// are of several): the workers AddWorkers would add.
	Workers int    `json:"workers"`
	Role    string `json:"role"`
	// CapacityTokensPerSecond is their capacity (prompt tokens prefilled, or
	// output tokens decoded, per second); Unbounded when the engine model
	// sets no limit (a decode step that does not grow with the batch).
	CapacityTokensPerSecond float64 `json:"capacityTokensPerSecond"`
	Unbounded               bool    `json:"unbounded,omitempty"`
	// OfferedTokensPerSecond is the trace's own load on the pool, known
	// before the run: its prompt tokens (every one prefilled, no cache) or
	// its output tokens over the span; OfferedUtilisation that over the
	// capacity. Pool rows only: how traffic spreads over domains is the
	// router's decision.
	OfferedTokensPerSecond float64 `json:"offeredTokensPerSecond,omitempty"`
	OfferedUtilisation     float64 `json:"offeredUtilisation,omitempty"`
	// WorkTokensPerSecond is the load the run put on it: the tokens its
	// workers prefilled (after their caches) or decoded for the requests,
	// plus, on the prefill pool's row, the prompts the prefill hop refused
	// (load the pool could not take). Utilisation is that over the capacity.
	WorkTokensPerSecond float64 `json:"workTokensPerSecond"`
	Utilisation         float64 `json:"utilisation"`
	// Saturated is Utilisation ≥ the report's SaturationThreshold.
	Saturated bool `json:"saturated"`
	// SlowDown is the factor by which the traffic must be slowed (its
	// inter-arrival times multiplied) for this row to fall to the threshold
	// (1 when it is below); AddWorkers the workers of the stage's average
	// capacity to add here instead.
	SlowDown   float64 `json:"slowDown"`
	AddWorkers int     `json:"addWorkers"`
}

// saturation measures the variant's stages against their capacities, over
// the arrivals' span (none when every request arrived at once).
func (s *state) saturation(threshold float64) []Saturation {
	span := s.lastArrival / 1000
	if !(span > 0) {
		return nil
	}
	type acc struct {
		workers   map[int]bool
		roles     map[model.Role]bool
		capacity  float64
		unbounded bool
		work      float64
	}
	newAcc := func() *acc { return &acc{workers: map[int]bool{}, roles: map[model.Role]bool{}} }
	var pool [2]*acc
	pool[0], pool[1] = newAcc(), newAcc()
	doms := [2][]*acc{make([]*acc, len(s.domains)), make([]*acc, len(s.domains))}
	add := func(st, d, worker int, capacity float64, unbounded bool, work float64) {
		for _, a := range []*acc{pool[st], doms[st][d]} {
			a.workers[worker] = true
			a.roles[s.workers[worker].role] = true
			a.capacity += capacity
			a.unbounded = a.unbounded || unbounded
			a.work += work
		}
	}
	decodeCap, decodeUnbounded := 0.0, s.eng.DecodeStepMsPerSequence <= 0
	if !decodeUnbounded {
		decodeCap = 1000 / s.eng.DecodeStepMsPerSequence
	}
	// Stable order: the workers', then their ranks'.
	for wi, w := range s.workers {
		d := w.domain
		for _, u := range w.units {
			for st := range 2 {
				if doms[st][d] == nil {
					doms[st][d] = newAcc()
				}
			}
			if u.prefills {
				add(0, d, wi, float64(s.eng.PrefillTokensPerSecondPerGPU*u.gpus), false, u.prefillTokens)
			}
			if u.decodes {
				add(1, d, wi, decodeCap, decodeUnbounded, u.decodeTokens)
			}
		}
	}
	pool[0].work += s.refusedPrefillTokens
	row := func(stage, domain string, a *acc, offered float64) Saturation {
		r := Saturation{Stage: stage, Domain: domain, Workers: len(a.workers), Role: stage, CapacityTokensPerSecond: a.capacity, Unbounded: a.unbounded,
			WorkTokensPerSecond: a.work / span, SlowDown: 1}
		if len(a.roles) == 1 {
			for role := range a.roles {
				r.Role = string(role)
			}
		}
		if a.unbounded {
			r.CapacityTokensPerSecond = 0
			return r
		}
		if domain == "" {
			r.OfferedTokensPerSecond = offered
		}
		if a.capacity > 0 {
			r.Utilisation = r.WorkTokensPerSecond / a.capacity
			r.OfferedUtilisation = r.OfferedTokensPerSecond / a.capacity
		}
		if r.Saturated = r.Utilisation >= threshold; r.Saturated {
			r.SlowDown = r.Utilisation / threshold
			per := a.capacity / float64(max(r.Workers, 1))
			r.AddWorkers = max(1, int(math.Ceil(r.WorkTokensPerSecond/threshold/per-1e-9))-r.Workers)
		}
		return r
	}
	var out []Saturation
	offered := [2]float64{float64(s.inTokens) / span, float64(s.outTokens) / span}
	for st, stage := range []string{StagePrefill, StageDecode} {
		if len(pool[st].workers) == 0 {
			continue
		}
		out = append(out, row(stage, "", pool[st], offered[st]))
		var rows []Saturation
		for d, a := range doms[st] {
			if a == nil || len(a.workers) == 0 || len(s.domains) < 2 {
				continue
			}
			rows = append(rows, row(stage, s.domains[d], a, 0))
		}
		slices.SortFunc(rows, func(a, b Saturation) int { return cmp.Compare(a.Domain, b.Domain) })
		out = append(out, rows...)
	}
	return out
}
