package simulate

import (
	"math"
	"testing"
)

// TestHistPercentilesByHand: the percentiles of 1, 2, …, 1,000 ms are the
// values at ranks 500, 900 and 990 (the nearest-rank definition): 500, 900
// and 990 ms, exactly — every bucket near them holds one integer (a bucket
// is 0.1 % wide: 0.5 ms at 500 ms).
func TestHistPercentilesByHand(t *testing.T) {
	var h hist
	for v := 1000; v >= 1; v-- {
		h.add(float64(v))
	}
	p := h.percentiles()
	if p.Count != 1000 || p.P50 != 500 || p.P90 != 900 || p.P99 != 990 || p.Max != 1000 || p.Mean != 500.5 {
		t.Errorf("percentiles %+v, want p50 500, p90 900, p99 990, max 1000, mean 500.5", p)
	}
}

// TestHistStagesAreDistinct (issue 31): first tokens around half an hour and
// completions 5 s after each (a queue-dominated replay) have p50s 5 s apart;
// buckets 1 % wide reported both as the same value.
func TestHistStagesAreDistinct(t *testing.T) {
	var ttft, e2e hist
	for i := range 101 {
		v := 1_790_000 + float64(i)*200 // 29m50s … 30m10s
		ttft.add(v)
		e2e.add(v + 5000)
	}
	// Rank 51 of 101: the 51st value, 1,790,000 + 50 × 200 = 1,800,000 ms.
	a, b := ttft.percentiles().P50, e2e.percentiles().P50
	if math.Abs(a-1_800_000) > 0.001*1_800_000 || math.Abs(b-1_805_000) > 0.001*1_805_000 {
		t.Errorf("p50s %v and %v, want 1,800,000 and 1,805,000 within 0.1 %%", a, b)
	}
	if d := b - a; d < 4000 || d > 6000 {
		t.Errorf("the p50s are %v ms apart, want about 5,000", d)
	}
}
