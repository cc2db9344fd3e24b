package routecore

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// RouterMode is the frontend's --router-mode (DYN_ROUTER_MODE): how a worker is
// picked for each hop. Only RouterModeKV runs the KV cost model; the others are
// the runtime's first-party pickers (PushRouter in
// lib/runtime/src/pipeline/network/egress/push_router.rs and the RoutePicker it
// shares with the llm crate's RoutingHost builtin plane).
type RouterMode string

// Router modes, spelled as the frontend's --router-mode choices.
const (
	RouterModeRoundRobin          RouterMode = "round-robin"
	RouterModeRandom              RouterMode = "random"
	RouterModePowerOfTwo          RouterMode = "power-of-two"
	RouterModeKV                  RouterMode = "kv"
	RouterModeDirect              RouterMode = "direct"
	RouterModeLeastLoaded         RouterMode = "least-loaded"
	RouterModeDeviceAwareWeighted RouterMode = "device-aware-weighted"
)

// RouterModes lists every mode, in the order of the frontend's choices.
var RouterModes = []RouterMode{
	RouterModeRoundRobin, RouterModeRandom, RouterModePowerOfTwo, RouterModeKV,
	RouterModeDirect, RouterModeLeastLoaded, RouterModeDeviceAwareWeighted,
}

// DefaultRouterMode is the frontend's default (RouterMode's #[default]).
const DefaultRouterMode = RouterModeRoundRobin

// ParseRouterMode accepts the frontend's spellings (round-robin, power-of-two,
// …) and the serde snake_case names a model card's router_config uses
// (round_robin, power_of_two_choices, …).
func ParseRouterMode(s string) (RouterMode, error) {
	switch strings.ReplaceAll(strings.ToLower(strings.TrimSpace(s)), "_", "-") {
	case "round-robin", "roundrobin":
		return RouterModeRoundRobin, nil
	case "random":
		return RouterModeRandom, nil
	case "power-of-two", "power-of-two-choices", "poweroftwochoices":
		return RouterModePowerOfTwo, nil
	case "kv":
		return RouterModeKV, nil
	case "direct":
		return RouterModeDirect, nil
	case "least-loaded", "leastloaded":
		return RouterModeLeastLoaded, nil
	case "device-aware-weighted", "deviceawareweighted":
		return RouterModeDeviceAwareWeighted, nil
	}
	names := make([]string, len(RouterModes))
	for i, m := range RouterModes {
		names[i] = string(m)
	}
	return "", fmt.Errorf("router mode %q: must be one of %s", s, strings.Join(names, ", "))
}

// IsKV reports whether the mode runs the KV router.
func (m RouterMode) IsKV() bool { return m == RouterModeKV }

// Non-KV selection rules (Decision.SelectionRule of a non-KV hop).
const (
	RuleRoundRobin          SelectionRule = "round-robin"
	RuleRandom              SelectionRule = "random"
	RulePowerOfTwo          SelectionRule = "power-of-two"
	RuleLeastLoaded         SelectionRule = "least-loaded"
	RuleDeviceAwareWeighted SelectionRule = "device-aware-weighted"
	RuleDirect              SelectionRule = "direct"
)

// Non-KV error kinds, named after what the runtime returns.
const (
	// ErrKindNoInstances: no routable instance at all ("no instances found for
	// endpoint"; PushRouter::empty_free_pool_error).
	ErrKindNoInstances = "NoInstances"
	// ErrKindAllWorkersBusy: instances exist but every one is overloaded
	// (ResourceExhausted "All workers are busy, please retry later"; HTTP 529
	// since Dynamo 1.3, #10941, or DYN_HTTP_OVERLOAD_STATUS_CODE; 503 before).
	ErrKindAllWorkersBusy = "AllWorkersBusy"
	// ErrKindDirectTargetMissing: direct mode and the request names no worker.
	ErrKindDirectTargetMissing = "DirectTargetMissing"
	// ErrKindDirectTargetNotFound: the named worker is not routable
	// ("instance_id=… not found for endpoint"; PushRouter::direct).
	ErrKindDirectTargetNotFound = "DirectTargetNotFound"
	// ErrKindSelectedWorkerOverloaded: direct mode named an overloaded worker
	// ("Selected worker is overloaded, please retry later";
	// PushRouter::check_workers_available).
	ErrKindSelectedWorkerOverloaded = "SelectedWorkerOverloaded"
)

// DefaultNonCPUToCPURatio is DYN_ENCODER_CUDA_TO_CPU_RATIO's default (8).
const DefaultNonCPUToCPURatio = 8

// ModeWorker is one routable instance as a non-KV picker sees it. Non-KV modes
// pick instances, not (instance, dp rank) pairs.
type ModeWorker struct {
	ID WorkerID `json:"id,string"`
	// InFlight is the frontend's own count of requests in flight to the worker
	// (RoutingOccupancyState::load); only power-of-two, least-loaded and
	// device-aware-weighted read it.
	InFlight uint64 `json:"inFlight"`
	// CPU marks a worker whose instance publishes device_type cpu
	// (device-aware-weighted groups workers by it).
	CPU bool `json:"cpu,omitempty"`
	// Overloaded is the busy detector's verdict: such a worker is not free.
	Overloaded bool `json:"overloaded,omitempty"`
	// OverloadDetail names the thresholds the worker's loads trip
	// (DescribeOverload); it only words the candidate's reason.
	OverloadDetail string `json:"overloadDetail,omitempty"`
}

// ModeInput is one non-KV hop.
type ModeInput struct {
	Mode    RouterMode
	Workers []ModeWorker
	// Target is the worker a direct-mode request names (nil: none named).
	Target *WorkerID
	// NonCPUToCPURatio is DYN_ENCODER_CUDA_TO_CPU_RATIO (0: the default, 8).
	NonCPUToCPURatio uint64
	// Counter is the hop's round-robin counter when the caller keeps one (a
	// simulation replaying many requests); nil means it is not visible (a
	// single dry run). Other modes ignore it.
	Counter *RoundRobinCounter
}

// RoundRobinCounter is a round-robin hop's rotation as a caller tracks it
// across requests. Until Known, the frontend's counter is not visible: the
// pick is drawn uniformly (each free worker 1/n, exactly as a single dry run
// says) and the counter becomes known from it. From then on the runtime's
// PushRouter rule applies: free_ids[counter % n], then the counter advances
// (round_robin_counter.fetch_add(1)).
type RoundRobinCounter struct {
	Known bool
	Next  uint64
}

// ModeCandidate is the evidence for one worker of a non-KV hop.
type ModeCandidate struct {
	Worker ModeWorker `json:"worker"`
	// Eligible is whether the mode may pick the worker (free: routable and not
	// overloaded; direct: the named worker).
	Eligible bool   `json:"eligible"`
	Reason   string `json:"reason,omitempty"`
	// Probability is the chance production picks this worker, given the inputs.
	Probability float64 `json:"probability"`
	Selected    bool    `json:"selected,omitempty"`
}

// ModeDecision is the evidence of a non-KV hop.
type ModeDecision struct {
	Mode RouterMode    `json:"mode"`
	Rule SelectionRule `json:"rule"`
	// Candidates are every worker in canonical (id) order.
	Candidates []ModeCandidate `json:"candidates"`
	// Selected is the pick this run drew (valid when ErrorKind is empty).
	Selected WorkerID `json:"selected,string"`
	// Explanation says how the mode picks, in one or two sentences.
	Explanation string `json:"explanation"`
	// ErrorKind and Error are set when the hop fails.
	ErrorKind string `json:"errorKind,omitempty"`
	Error     string `json:"error,omitempty"`
	// IgnoresConstraints is always true: no non-KV picker reads the request's
	// routing constraints (required or preferred taints).
	IgnoresConstraints bool `json:"ignoresConstraints"`
}

// SelectByMode mirrors the runtime's first-party pickers for one hop. Free
// workers are the routable ones that are not overloaded (RoutingInstances
// free_ids, in id order); then
//
//   - round-robin picks free_ids[counter % n]. The counter is the frontend's
//     own and not published, so each free worker gets 1/n.
//   - random picks a uniform index: 1/n.
//   - power-of-two draws two distinct indices (first uniform, second uniform
//     among the others) and keeps the first unless the second has strictly
//     fewer requests in flight; each ordered pair has probability 1/(n(n−1)).
//   - least-loaded picks the minimum in-flight count; ties by reservoir
//     sampling, uniform over the tied workers.
//   - device-aware-weighted splits the free workers into CPU and non-CPU
//     groups; with both present it sends to the CPU group when the CPU
//     in-flight total is below non_cpu_total·cpu_count/(ratio·non_cpu_count)
//     (integer division), else to the non-CPU group; then least-loaded
//     within the group.
//   - direct dispatches to the worker the request names, which must be
//     routable and not overloaded.
//
// No mode reads the request's routing constraints. rng is read once, to draw
// this run's pick from the probabilities (nil: the most probable, first in id
// order). Every candidate's probability is exact for the given inputs.
func SelectByMode(in ModeInput, rng Rand) (ModeDecision, error) {
	d := ModeDecision{Mode: in.Mode, IgnoresConstraints: true}
	switch in.Mode {
	case RouterModeRoundRobin:
		d.Rule = RuleRoundRobin
	case RouterModeRandom:
		d.Rule = RuleRandom
	case RouterModePowerOfTwo:
		d.Rule = RulePowerOfTwo
	case RouterModeLeastLoaded:
		d.Rule = RuleLeastLoaded
	case RouterModeDeviceAwareWeighted:
		d.Rule = RuleDeviceAwareWeighted
	case RouterModeDirect:
		d.Rule = RuleDirect
	default:
		return d, fmt.Errorf("SelectByMode: mode %q is not a non-KV mode", in.Mode)
	}
	ws := slices.Clone(in.Workers)
	slices.SortFunc(ws, func(a, b ModeWorker) int { return cmp.Compare(a.ID, b.ID) })
	d.Candidates = make([]ModeCandidate, len(ws))
	var free []int
	for i, w := range ws {
		d.Candidates[i].Worker = w
		if w.Overloaded {
			d.Candidates[i].Reason = "overloaded (busy thresholds): not among the free workers"
			if w.OverloadDetail != "" {
				d.Candidates[i].Reason = "overloaded (" + w.OverloadDetail + "): not among the free workers"
			}
			continue
		}
		free = append(free, i)
	}
	if in.Mode == RouterModeDirect {
		return modeDirect(d, in.Target)
	}
	if len(free) == 0 {
		if len(ws) == 0 {
			d.ErrorKind, d.Error = ErrKindNoInstances, "no instances found for endpoint"
		} else {
			d.ErrorKind, d.Error = ErrKindAllWorkersBusy, "All workers are busy, please retry later"
		}
		return d, nil
	}
	n := float64(len(free))
	prob := make([]float64, len(ws))
	switch in.Mode {
	case RouterModeRoundRobin:
		if c := in.Counter; c != nil && c.Known {
			k := c.Next % uint64(len(free))
			prob[free[k]] = 1
			d.Explanation = fmt.Sprintf("round-robin over the %d free worker(s): the rotation counter is at %d, so free worker %d of %d", len(free), c.Next, k+1, len(free))
			c.Next++
			break
		}
		for _, i := range free {
			prob[i] = 1 / n
		}
		d.Explanation = fmt.Sprintf("round-robin over the %d free worker(s): the frontend's rotation counter is not visible, so each has probability 1/%d", len(free), len(free))
	case RouterModeRandom:
		for _, i := range free {
			prob[i] = 1 / n
		}
		d.Explanation = fmt.Sprintf("uniform random over the %d free worker(s): 1/%d each", len(free), len(free))
	case RouterModePowerOfTwo:
		if len(free) == 1 {
			prob[free[0]] = 1
		} else {
			pair := 1 / (n * (n - 1))
			for _, a := range free {
				for _, b := range free {
					if a == b {
						continue
					}
					if ws[a].InFlight <= ws[b].InFlight {
						prob[a] += pair
					} else {
						prob[b] += pair
					}
				}
			}
		}
		d.Explanation = fmt.Sprintf("power of two choices over the %d free worker(s): two distinct workers drawn at random, the one with fewer requests in flight kept (the first drawn on a tie)", len(free))
	case RouterModeLeastLoaded:
		modeLeastLoaded(ws, free, prob)
		d.Explanation = "the free worker with the fewest requests in flight; ties broken uniformly at random"
	case RouterModeDeviceAwareWeighted:
		group, why := modeDeviceGroup(ws, free, in.NonCPUToCPURatio)
		modeLeastLoaded(ws, group, prob)
		d.Explanation = why + "; within it the worker with the fewest requests in flight, ties uniform"
	}
	for i := range ws {
		d.Candidates[i].Probability = prob[i]
		if !ws[i].Overloaded {
			d.Candidates[i].Eligible = true
			if prob[i] == 0 {
				d.Candidates[i].Reason = "free, but this mode never picks it with these loads"
			}
		}
	}
	pick := modeDraw(prob, rng)
	d.Selected = ws[pick].ID
	if c := in.Counter; c != nil && in.Mode == RouterModeRoundRobin && !c.Known {
		c.Known, c.Next = true, uint64(slices.Index(free, pick))+1
	}
	d.Candidates[slices.IndexFunc(d.Candidates, func(c ModeCandidate) bool { return c.Worker.ID == d.Selected })].Selected = true
	return d, nil
}

func modeDirect(d ModeDecision, target *WorkerID) (ModeDecision, error) {
	d.Explanation = "direct: the worker the request names (x-dynamo-prefill-instance-id / x-dynamo-decode-instance-id, set by an external router such as the EPP)"
	if target == nil {
		d.ErrorKind, d.Error = ErrKindDirectTargetMissing, "worker ID required for request in Direct routing mode"
		return d, nil
	}
	i := slices.IndexFunc(d.Candidates, func(c ModeCandidate) bool { return c.Worker.ID == *target })
	if i < 0 {
		d.ErrorKind, d.Error = ErrKindDirectTargetNotFound, fmt.Sprintf("instance_id=%d not found for endpoint", uint64(*target))
		return d, nil
	}
	for j := range d.Candidates {
		if j != i && d.Candidates[j].Reason == "" {
			d.Candidates[j].Reason = "not the worker the request names"
		}
	}
	if d.Candidates[i].Worker.Overloaded {
		d.ErrorKind, d.Error = ErrKindSelectedWorkerOverloaded, "Selected worker is overloaded, please retry later"
		return d, nil
	}
	d.Candidates[i].Eligible, d.Candidates[i].Probability, d.Candidates[i].Selected = true, 1, true
	d.Selected = *target
	return d, nil
}

// modeLeastLoaded gives the workers of group with the minimum in-flight count
// equal shares.
func modeLeastLoaded(ws []ModeWorker, group []int, prob []float64) {
	if len(group) == 0 {
		return
	}
	lowest := ws[group[0]].InFlight
	for _, i := range group {
		lowest = min(lowest, ws[i].InFlight)
	}
	var tied []int
	for _, i := range group {
		if ws[i].InFlight == lowest {
			tied = append(tied, i)
		}
	}
	for _, i := range tied {
		prob[i] = 1 / float64(len(tied))
	}
}

// modeDeviceGroup is device_aware_candidate_group: the group the budget picks.
func modeDeviceGroup(ws []ModeWorker, free []int, ratio uint64) ([]int, string) {
	if ratio == 0 {
		ratio = DefaultNonCPUToCPURatio
	}
	var cpu, acc []int
	var cpuLoad, accLoad uint64
	for _, i := range free {
		if ws[i].CPU {
			cpu, cpuLoad = append(cpu, i), satAdd(cpuLoad, ws[i].InFlight)
		} else {
			acc, accLoad = append(acc, i), satAdd(accLoad, ws[i].InFlight)
		}
	}
	switch {
	case len(cpu) == 0:
		return acc, "every free worker is non-CPU, so device-aware-weighted is least-loaded over all of them"
	case len(acc) == 0:
		return cpu, "every free worker is a CPU worker, so device-aware-weighted is least-loaded over all of them"
	}
	allowed := satMul(accLoad, uint64(len(cpu))) / satMul(ratio, uint64(len(acc)))
	if cpuLoad < allowed {
		return cpu, fmt.Sprintf("CPU group chosen: %d CPU request(s) in flight < budget %d (non-CPU %d × %d CPU worker(s) ÷ (ratio %d × %d non-CPU worker(s)))", cpuLoad, allowed, accLoad, len(cpu), ratio, len(acc))
	}
	return acc, fmt.Sprintf("non-CPU group chosen: %d CPU request(s) in flight ≥ budget %d (non-CPU %d × %d CPU worker(s) ÷ (ratio %d × %d non-CPU worker(s)))", cpuLoad, allowed, accLoad, len(cpu), ratio, len(acc))
}

func satAdd(a, b uint64) uint64 {
	if a+b < a {
		return ^uint64(0)
	}
	return a + b
}

func satMul(a, b uint64) uint64 {
	if a != 0 && b > ^uint64(0)/a {
		return ^uint64(0)
	}
	return a * b
}

// modeDraw picks an index from the probabilities with one draw from rng (nil:
// the most probable, first in order).
func modeDraw(prob []float64, rng Rand) int {
	last := -1
	for i, p := range prob {
		if p > 0 {
			last = i
		}
	}
	if rng == nil {
		best := last
		for i, p := range prob {
			if p > prob[best] {
				best = i
			}
		}
		for i, p := range prob {
			if p == prob[best] {
				return i
			}
		}
		return best
	}
	u := rng.Float64()
	acc := 0.0
	for i, p := range prob {
		if p <= 0 {
			continue
		}
		acc += p
		if u < acc {
			return i
		}
	}
	return last
}
