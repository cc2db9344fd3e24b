package simulate

import (
	"math"
	"slices"
)

// hist is a bounded histogram of positive values (milliseconds) in
// logarithmic buckets 0.1 % wide, each holding its count and the sum of its
// values, so that percentiles need memory bounded by the value range (at most
// about 32,000 buckets from 1 µs to the horizon), not by the request count. A
// percentile is the mean of the values in the bucket its rank falls in: within
// 0.1 % of the exact value, and exact when the bucket holds one distinct
// value. (Buckets 1 % wide, reported by their middle, made the p50s of two
// stages a few seconds apart at half an hour identical to the millisecond.)
// Mean and max are exact.
type hist struct {
	counts map[int32]histBucket
	n      int
	sum    float64
	max    float64
	zeros  int
}

type histBucket struct {
	n   int
	sum float64
}

// histBase is the ratio of a bucket's upper bound to its lower one.
const histBase = 1.001

var logHistBase = math.Log(histBase)

func (h *hist) add(v float64) {
	if math.IsNaN(v) || v < 0 {
		v = 0
	}
	if h.counts == nil {
		h.counts = map[int32]histBucket{}
	}
	h.n++
	h.sum += v
	h.max = max(h.max, v)
	if v < 1e-3 {
		h.zeros++
		return
	}
	k := int32(math.Floor(math.Log(v) / logHistBase))
	b := h.counts[k]
	b.n++
	b.sum += v
	h.counts[k] = b
}

func (h *hist) percentiles() Percentiles {
	if h.n == 0 {
		return Percentiles{}
	}
	keys := make([]int32, 0, len(h.counts))
	for k := range h.counts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	at := func(q float64) float64 {
		rank := int(math.Ceil(q * float64(h.n)))
		rank = max(rank, 1)
		seen := h.zeros
		if seen >= rank {
			return 0
		}
		for _, k := range keys {
			b := h.counts[k]
			seen += b.n
			if seen >= rank {
				// the mean of the bucket's values, never above the exact max
				return min(b.sum/float64(b.n), h.max)
			}
		}
		return h.max
	}
	return Percentiles{Count: h.n, Mean: h.sum / float64(h.n), P50: at(0.5), P90: at(0.9), P99: at(0.99), Max: h.max}
}

// level tracks an integer load over virtual time: the time spent at each
// value (for the time-weighted mean and p95) and the peak.
type level struct {
	cur   int
	since float64
	dur   map[int]float64
	peak  int
}

func (l *level) set(t float64, v int) {
	if l.dur == nil {
		l.dur = map[int]float64{}
	}
	if t > l.since {
		l.dur[l.cur] += t - l.since
	}
	l.since = max(l.since, t)
	l.cur = v
	l.peak = max(l.peak, v)
}

func (l *level) stats(end float64) LoadStats {
	l.set(end, l.cur)
	vals := make([]int, 0, len(l.dur))
	for v := range l.dur {
		vals = append(vals, v)
	}
	// Sum in value order: a map's order would change the last bits.
	slices.Sort(vals)
	var total, area float64
	for _, v := range vals {
		total += l.dur[v]
		area += float64(float64(v) * l.dur[v])
	}
	if total == 0 {
		return LoadStats{Peak: float64(l.peak)}
	}
	p95, acc := 0, 0.0
	for _, v := range vals {
		acc += l.dur[v]
		p95 = v
		if acc >= 0.95*total {
			break
		}
	}
	return LoadStats{Mean: area / total, P95: float64(p95), Peak: float64(l.peak)}
}

// series accumulates per-domain counts and load areas in buckets of virtual
// time; when the buckets would exceed maxBuckets the width doubles and
// neighbours merge, so memory is bounded whatever the trace's length.
type series struct {
	width   float64
	domains int
	buckets []bucket
}

type bucket struct {
	routed, failed []int
	noDomainFailed int
	prefill        []float64 // load × ms
	decode         []float64
}

const maxBuckets = 240

func newSeries(domains int, width float64) *series {
	return &series{width: width, domains: domains}
}

func (s *series) at(t float64) *bucket {
	if t < 0 {
		t = 0
	}
	for int(t/s.width) >= maxBuckets {
		s.merge()
	}
	i := int(t / s.width)
	for len(s.buckets) <= i {
		s.buckets = append(s.buckets, bucket{
			routed: make([]int, s.domains), failed: make([]int, s.domains),
			prefill: make([]float64, s.domains), decode: make([]float64, s.domains),
		})
	}
	return &s.buckets[i]
}

func (s *series) merge() {
	out := s.buckets[:0:0]
	for i := 0; i < len(s.buckets); i += 2 {
		b := s.buckets[i]
		if i+1 < len(s.buckets) {
			c := s.buckets[i+1]
			b.noDomainFailed += c.noDomainFailed
			for d := range b.routed {
				b.routed[d] += c.routed[d]
				b.failed[d] += c.failed[d]
				b.prefill[d] += c.prefill[d]
				b.decode[d] += c.decode[d]
			}
		}
		out = append(out, b)
	}
	s.buckets = out
	s.width *= 2
}

// area adds value × time over [t0, t1) to domain d's prefill or decode load,
// split over the buckets the interval crosses.
func (s *series) area(d int, decode bool, v int, t0, t1 float64) {
	if v == 0 || t1 <= t0 {
		return
	}
	s.at(t1) // grow (and merge) first, so the width is final for this interval
	for t := t0; t < t1; {
		b := s.at(t)
		end := min(t1, (math.Floor(t/s.width)+1)*s.width)
		if end <= t {
			end = t1
		}
		if decode {
			b.decode[d] += float64(float64(v) * (end - t))
		} else {
			b.prefill[d] += float64(float64(v) * (end - t))
		}
		t = end
	}
}

func (s *series) result() Series {
	out := Series{BucketMs: s.width, Buckets: make([]SeriesPoint, len(s.buckets))}
	for i, b := range s.buckets {
		p := SeriesPoint{StartMs: float64(i) * s.width, Domains: make([]DomainPoint, s.domains), NoDomainFailed: b.noDomainFailed}
		for d := range s.domains {
			p.Domains[d] = DomainPoint{Routed: b.routed[d], Failed: b.failed[d], PrefillLoad: b.prefill[d] / s.width, DecodeLoad: b.decode[d] / s.width}
		}
		out.Buckets[i] = p
	}
	return out
}
