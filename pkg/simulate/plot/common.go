package plot

import (
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/simulate"
)

// load returns v and true when v is a load that can be drawn: finite and not
// negative.
func load(v float64) (float64, bool) {
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return 0, false
	}
	return v, true
}

// timeAxis is a variant's series placed on the time axis, in seconds.
type timeAxis struct {
	bucket float64   // bucket length
	start  []float64 // start of each bucket
}

// newTimeAxis reads a series' times, defending against what cannot be drawn:
// a bucket length that is not a positive finite number is taken from the first
// two starts, else one second; a start that is not finite and positive is the
// bucket's index times the bucket length.
func newTimeAxis(s simulate.Series) timeAxis {
	a := timeAxis{bucket: 1, start: make([]float64, len(s.Buckets))}
	if b, ok := load(s.BucketMs); ok && b > 0 {
		a.bucket = b / 1000
	} else if len(s.Buckets) >= 2 {
		if d, ok := load(s.Buckets[1].StartMs - s.Buckets[0].StartMs); ok && d > 0 {
			a.bucket = d / 1000
		}
	}
	for i, p := range s.Buckets {
		if v, ok := load(p.StartMs); ok {
			a.start[i] = v / 1000
		} else {
			a.start[i] = float64(i) * a.bucket
		}
	}
	return a
}

// end is the time the last bucket ends (0 without buckets).
func (a timeAxis) end() float64 {
	if len(a.start) == 0 {
		return 0
	}
	return a.start[len(a.start)-1] + a.bucket
}

// domainPoint is domain d of bucket p; ok is false when the series has no
// value for it (a series shorter than the domain list).
func domainPoint(p simulate.SeriesPoint, d int) (simulate.DomainPoint, bool) {
	if d < len(p.Domains) {
		return p.Domains[d], true
	}
	return simulate.DomainPoint{}, false
}

// bucketFailed is the failed requests of one bucket over every domain and
// those without one (failed before any worker was picked), and the requests
// (routed and failed).
func bucketFailed(p simulate.SeriesPoint) (failed, requests int) {
	nd := max(p.NoDomainFailed, 0)
	failed, requests = nd, nd
	for _, d := range p.Domains {
		f, r := max(d.Failed, 0), max(d.Routed, 0)
		failed += f
		requests += f + r
	}
	return failed, requests
}

// maxDecode is the highest drawable decode load of a variant's series.
func maxDecode(v simulate.VariantResult) float64 {
	m := 0.0
	for _, p := range v.Series.Buckets {
		for _, d := range p.Domains {
			if x, ok := load(d.DecodeLoad); ok {
				m = max(m, x)
			}
		}
	}
	return m
}

// domainPeak is the highest drawable decode load of domain d over a series.
func domainPeak(s simulate.Series, d int) float64 {
	m := 0.0
	for _, p := range s.Buckets {
		if dp, ok := domainPoint(p, d); ok {
			if x, ok := load(dp.DecodeLoad); ok {
				m = max(m, x)
			}
		}
	}
	return m
}

// busiest returns the indexes of the n domains with the highest peaks (ties:
// the earlier domain), in index order.
func busiest(peaks []float64, n int) []int {
	idx := make([]int, len(peaks))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return peaks[idx[a]] > peaks[idx[b]] })
	if n < len(idx) {
		idx = idx[:n]
	}
	sort.Ints(idx)
	return idx
}

// niceScale returns the axis maximum (a round number at or above m) and the
// tick step for about n ticks; an axis over nothing (m 0) goes to 1.
func niceScale(m float64, n int) (top, step float64) {
	if m <= 0 || math.IsNaN(m) || math.IsInf(m, 0) {
		return 1, 1.0 / float64(n)
	}
	raw := m / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step = 10 * mag
	for _, f := range []float64{1, 2, 2.5, 5, 10} {
		if f*mag >= raw {
			step = f * mag
			break
		}
	}
	return math.Ceil(m/step-1e-9) * step, step
}

// number formats a value compactly: integers as such, others with at most
// two decimals (trailing zeros dropped), 10,000 and more in k and M.
func number(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "–"
	case math.Abs(v) >= 1e6:
		return trim(v/1e6, 1) + "M"
	case math.Abs(v) >= 1e4:
		return trim(v/1e3, 1) + "k"
	}
	return trim(v, 2)
}

// trim formats v with at most prec decimals, without trailing zeros or a
// negative zero.
func trim(v float64, prec int) string {
	s := strconv.FormatFloat(v, 'f', prec, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if s == "-0" {
		return "0"
	}
	return s
}

// count formats an integer with thousands separators (9,812).
func count(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// percent formats part of whole as a percentage with one decimal ("–" for an
// empty whole).
func percent(part, whole int) string {
	if whole <= 0 {
		return "–"
	}
	return trim(100*float64(part)/float64(whole), 1) + "%"
}

// rate formats a ratio in [0,1] as a percentage ("–" when it is not one).
func rate(r float64) string {
	if math.IsNaN(r) || math.IsInf(r, 0) || r < 0 || r > 1 {
		return "–"
	}
	return trim(100*r, 1) + "%"
}

// headline is a variant's figures as the panel titles show them.
type headline struct {
	routed, failed, cross, hit string
}

func newHeadline(v simulate.VariantResult) headline {
	req := v.Requests
	if req <= 0 {
		req = v.Routed + v.Failed
	}
	return headline{
		routed: "routed " + count(v.Routed) + " of " + count(req) + " (" + percent(v.Routed, req) + ")",
		failed: "failed " + count(v.Failed) + " (" + percent(v.Failed, req) + ")",
		cross:  "cross-domain transfers " + count(v.CrossDomainTransfers),
		hit:    "KV hit rate " + rate(v.HitRate),
	}
}
