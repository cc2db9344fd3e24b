package simulate

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// SLO is a latency objective: a metric (time to first token, or end to
// end) that every request, or a percentile of them, must meet.
type SLO struct {
	// Spec is the objective as written (ttft-p99=4s).
	Spec string `json:"spec"`
	// Metric is ttft or e2e.
	Metric string `json:"metric"`
	// Percentile is the share of requests (0 to 100) that must meet the
	// target, 100 for every request (written without a percentile).
	Percentile float64 `json:"percentile"`
	TargetMs   float64 `json:"targetMs"`
}

// The SLO metrics.
const (
	MetricTTFT = "ttft"
	MetricE2E  = "e2e"
)

// SLOKeys is what --slo accepts, for messages.
const SLOKeys = "ttft=D, e2e=D (every request), ttft-pNN=D, e2e-pNN=D (the NNth percentile; p50, p90, p99, p99.9…), D a duration such as 500ms or 2s"

// ParseSLOs reads a comma-separated list of objectives: ttft=2s,e2e=30s,
// ttft-p99=4s.
func ParseSLOs(spec string) ([]SLO, error) {
	var out []SLO
	seen := map[string]bool{}
	for part := range strings.SplitSeq(spec, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		bad := func(why string) error {
			return fmt.Errorf("--slo %q: %q %s (accepted: %s)", spec, part, why, SLOKeys)
		}
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			return nil, bad("is not METRIC=DURATION")
		}
		k = strings.ToLower(strings.TrimSpace(k))
		metric, pc, hasPC := strings.Cut(k, "-")
		if metric != MetricTTFT && metric != MetricE2E {
			return nil, bad("names no metric: ttft or e2e")
		}
		s := SLO{Spec: part, Metric: metric, Percentile: 100}
		if hasPC {
			p, err := strconv.ParseFloat(strings.TrimPrefix(pc, "p"), 64)
			if !strings.HasPrefix(pc, "p") || err != nil || math.IsNaN(p) || p <= 0 || p >= 100 {
				return nil, bad("needs a percentile above 0 and below 100, such as p50, p99 or p99.9")
			}
			s.Percentile = p
		}
		d, err := time.ParseDuration(strings.TrimSpace(v))
		if err != nil || d <= 0 || float64(d)/float64(time.Millisecond) > MaxVirtualMs {
			return nil, bad("needs a positive duration with its unit, such as 500ms or 2s")
		}
		s.TargetMs = float64(d) / float64(time.Millisecond)
		key := fmt.Sprintf("%s-%g", s.Metric, s.Percentile)
		if seen[key] {
			return nil, bad("repeats an objective")
		}
		seen[key] = true
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--slo %q holds no objective: give %s", spec, SLOKeys)
	}
	return out, nil
}

// allowed is how many of n requests may miss the target with the
// objective still met: a percentile p is met (nearest rank: the value at
// rank ⌈p/100 × n⌉ is within the target) when at most n − ⌈p/100 × n⌉
// requests are over it; every request (100): none.
func (s SLO) allowed(n int) int {
	if s.Percentile >= 100 || n == 0 {
		return 0
	}
	// The rank in integers where the percentile is a whole number of
	// hundredths, so that 99 % of 100 is 99, not 99.00000000000001.
	need := int(math.Ceil(s.Percentile*float64(n)/100 - 1e-9))
	return max(n-need, 0)
}

// SLOResult is one objective's outcome for a variant (or a domain).
type SLOResult struct {
	SLO string `json:"slo"`
	// Breaches counts the requests that missed the target: routed requests
	// whose latency is over it, and every failed request (it never got a
	// first token). Share is Breaches over the requests.
	Breaches int     `json:"breaches"`
	Share    float64 `json:"share"`
	// Allowed is how many breaches the objective's percentile allows; Met
	// is Breaches ≤ Allowed.
	Allowed int  `json:"allowed"`
	Met     bool `json:"met"`
}

// sloResults turns breach counts over n requests into results.
func sloResults(slos []SLO, breaches []int, n int) []SLOResult {
	if len(slos) == 0 {
		return nil
	}
	out := make([]SLOResult, len(slos))
	for i, s := range slos {
		r := SLOResult{SLO: s.Spec, Breaches: breaches[i], Allowed: s.allowed(n)}
		if n > 0 {
			r.Share = float64(r.Breaches) / float64(n)
		}
		r.Met = r.Breaches <= r.Allowed
		out[i] = r
	}
	return out
}
