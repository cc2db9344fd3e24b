package simulate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"time"
)

// traceStats is what one read of the trace says before any variant runs:
// its requests (up to MaxRequests) and the span of their arrivals, in the
// trace's own time.
type traceStats struct {
	requests int
	spanMs   float64
}

// scanTrace reads the trace once, without routing anything.
func scanTrace(ctx context.Context, o Options) (traceStats, error) {
	tr, err := o.Open()
	if err != nil {
		return traceStats{}, err
	}
	var st traceStats
	var first, last float64
	for o.MaxRequests <= 0 || st.requests < o.MaxRequests {
		tq, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return traceStats{}, err
		}
		at := float64(tq.Arrival) / float64(time.Millisecond)
		if st.requests == 0 {
			first = at
		}
		last = max(last, at)
		st.requests++
		if st.requests%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return traceStats{}, err
			}
		}
	}
	if st.requests == 0 {
		return st, ErrNoTrace
	}
	st.spanMs = max(last-first, 0)
	return st, nil
}

// The --rate range (requests per second), as the synthetic traffic's.
const (
	MinRate = 1e-6
	MaxRate = 1e6
)

// speedupForRate is the speedup that gives the trace a mean rate of rate
// requests per second: its own is its requests over its span.
func speedupForRate(rate float64, st traceStats) (float64, error) {
	if math.IsNaN(rate) || rate < MinRate || rate > MaxRate {
		return 0, fmt.Errorf("--rate must be a number of requests per second from %s to %s, got %v", shortG(MinRate), shortG(MaxRate), rate)
	}
	if st.requests < 2 || !(st.spanMs > 0) {
		return 0, fmt.Errorf("--rate %g: the trace's %d request(s) arrive at one instant, so it has no rate to scale; use --synthetic rate=%g for traffic at a rate", rate, st.requests, rate)
	}
	own := float64(st.requests) / (st.spanMs / 1000)
	sp := rate / own
	if err := ValidateSpeedup(sp); err != nil {
		return 0, fmt.Errorf("--rate %g scales the trace's own %.3g requests/s by %.3g, outside what the simulator replays: %w", rate, own, sp, err)
	}
	return sp, nil
}

// ValidateDuration checks a --duration value (virtual ms; 0 means the whole
// trace).
func ValidateDuration(ms float64) error {
	if math.IsNaN(ms) || ms < 0 || ms > MaxVirtualMs {
		return fmt.Errorf("--duration must be from 0 (the whole trace) to %s, got %s", fmtVirtual(MaxVirtualMs), fmtVirtual(ms))
	}
	return nil
}
