package routecore

import (
	"fmt"
	"math"
)

// SoftmaxProbabilities returns the selection probability of every cost at a
// temperature > 0, exactly as softmax_sample_index in scheduling/selector/default.rs
// computes them, operation for operation:
//
//   - lo and hi are the smallest and largest cost; when they are equal every
//     candidate gets 1/n;
//   - otherwise costs are min–max normalised, p_i ∝ exp(−(c_i − lo)/((hi − lo)·T)),
//     so the best candidate has weight 1 and the worst exp(−1/T); when hi − lo
//     overflows, costs are first divided by max(|lo|, |hi|);
//   - the weights are divided by their sum, accumulated in slice order.
//
// Costs must be finite and the temperature finite and > 0.
func SoftmaxProbabilities(costs []float64, temperature float64) ([]float64, error) {
	if len(costs) == 0 {
		return nil, fmt.Errorf("%w: softmax needs at least one cost", ErrInvalidRequest)
	}
	if err := sampleCheckTemperature(temperature); err != nil {
		return nil, err
	}
	for i, c := range costs {
		if math.IsNaN(c) || math.IsInf(c, 0) {
			return nil, fmt.Errorf("%w: cost %d is %v; costs must be finite", ErrInvalidRequest, i, c)
		}
	}
	p := make([]float64, len(costs))
	softmaxInto(p, costs, temperature)
	return p, nil
}

func sampleCheckTemperature(temperature float64) error {
	if !(temperature > 0) || math.IsInf(temperature, 0) {
		return fmt.Errorf("%w: softmax temperature must be finite and > 0, got %v", ErrInvalidRequest, temperature)
	}
	return nil
}

// softmaxInto is SoftmaxProbabilities without the checks, writing into p (len(p) ==
// len(costs) > 0; p may be costs itself). Costs must be finite, temperature > 0.
func softmaxInto(p, costs []float64, temperature float64) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, c := range costs {
		lo, hi = min(lo, c), max(hi, c) // the builtins follow math.Min/Max on ±0 and NaN
	}
	softmaxWeights(p, costs, lo, hi, len(costs), temperature)
	sum := 0.0
	for _, v := range p {
		sum += v
	}
	for i := range p {
		p[i] /= sum
	}
}

// softmaxWeights writes the unnormalised softmax weights of costs into p (p may be
// costs). costs may be any contiguous piece of a table of n costs whose smallest
// and largest values are lo and hi, so a large table can be weighted in parts;
// the weights must then be summed in table order. (Taking the minimum and maximum
// in any order gives the same lo and hi: the builtins order −0 below +0.)
func softmaxWeights(p, costs []float64, lo, hi float64, n int, temperature float64) {
	if lo == hi {
		for i := range p {
			p[i] = 1.0 / float64(n)
		}
		return
	}
	magnitude := 1.0
	if math.IsInf(hi-lo, 0) {
		magnitude = max(math.Abs(lo), math.Abs(hi))
	}
	minNorm := lo / magnitude
	scale := -1.0 / ((hi/magnitude - minNorm) * temperature)
	maxScaled := float64(minNorm * scale) // rounded here: Go may otherwise fuse it into the subtraction below
	for i, c := range costs {
		p[i] = libmExp(float64(c/magnitude*scale) - maxScaled) // glibc's exp; the product rounded as in Rust
	}
}

// SampleIndex returns the first index whose running probability sum reaches u
// (u <= cumulative), falling back to the last index when rounding leaves the total
// just below u — the draw step of softmax_sample_index.
func SampleIndex(probabilities []float64, u float64) int {
	cum := 0.0
	for i, p := range probabilities {
		cum += p
		if u <= cum {
			return i
		}
	}
	return len(probabilities) - 1
}

// SoftmaxSampleIndex is softmax_sample_index as a pure function: the probability
// table and the index the draw u in [0,1) selects.
func SoftmaxSampleIndex(costs []float64, temperature, u float64) (int, []float64, error) {
	if err := sampleCheckDraw(u); err != nil {
		return 0, nil, err
	}
	p, err := SoftmaxProbabilities(costs, temperature)
	if err != nil {
		return 0, nil, err
	}
	return SampleIndex(p, u), p, nil
}

// MinimumCostTies returns the minimum of costs and the indices (ascending) of every
// cost equal to it — the candidates among which Dynamo's minimum_cost_index breaks
// the tie uniformly at random. Equality is exact float equality, as in Dynamo.
func MinimumCostTies(costs []float64) (minCost float64, ties []int) {
	minCost = math.Inf(1)
	for i, c := range costs {
		switch {
		case c < minCost:
			minCost = c
			ties = append(ties[:0], i)
		case c == minCost:
			ties = append(ties, i)
		}
	}
	return minCost, ties
}

// TieIndex picks one of n tied candidates with the draw u: floor(u·n), clamped to
// n−1. Production Dynamo uses reservoir sampling with its own generator, which is
// equally uniform but consumes draws differently, so the same seed does not give
// the same pick; the dry run reports the tie set for that reason.
func TieIndex(n int, u float64) int {
	i := int(math.Floor(u * float64(n)))
	return min(max(i, 0), n-1)
}

func sampleCheckDraw(u float64) error {
	if math.IsNaN(u) || u < 0 || u > 1 {
		return fmt.Errorf("%w: draw must be in [0,1), got %v", ErrInvalidRequest, u)
	}
	return nil
}
