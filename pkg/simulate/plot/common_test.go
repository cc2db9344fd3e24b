package plot

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/simulate"
)

func TestNiceScale(t *testing.T) {
	tests := []struct {
		max, top, step float64
		n              int
	}{
		{0, 1, 0.25, 4},
		{math.NaN(), 1, 0.25, 4},
		{math.Inf(1), 1, 0.25, 4},
		{41.25, 60, 20, 4}, // a step of 10.3 rounds up to 20
		{60, 60, 10, 6},
		{9, 10, 2.5, 4},
		{0.3, 0.3, 0.1, 4},
		{1, 1, 0.25, 4},
		{12345, 15000, 5000, 4},
	}
	for _, tc := range tests {
		top, step := niceScale(tc.max, tc.n)
		if math.Abs(top-tc.top) > 1e-9 || math.Abs(step-tc.step) > 1e-9 {
			t.Errorf("niceScale(%v, %d) = %v, %v; want %v, %v", tc.max, tc.n, top, step, tc.top, tc.step)
		}
	}
}

func TestFormat(t *testing.T) {
	tests := []struct{ got, want string }{
		{number(0), "0"},
		{number(2.5), "2.5"},
		{number(41.25), "41.25"},
		{number(1.0 / 3), "0.33"},
		{number(-0.001), "0"},
		{number(12500), "12.5k"},
		{number(3e6), "3M"},
		{number(math.NaN()), "–"},
		{count(0), "0"},
		{count(999), "999"},
		{count(1000), "1,000"},
		{count(-1234567), "-1,234,567"},
		{percent(1, 3), "33.3%"},
		{percent(5, 0), "–"},
		{rate(0.375), "37.5%"},
		{rate(1.5), "–"},
		{rate(math.Inf(-1)), "–"},
	}
	for i, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("%d: got %q, want %q", i, tc.got, tc.want)
		}
	}
}

func TestSVGText(t *testing.T) {
	tests := []struct {
		in    string
		limit int
		want  string
	}{
		{"us-east-1a", 28, "us-east-1a"},
		{`<a href="x">&'`, 28, "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"},
		{"a\x1b[31mb\x00c\u202ed\u200be\ufffef", 28, "a[31mbcdef"},
		{"line\none\ttab\r", 28, "line one tab"},
		{"bad\xffbyte", 28, "bad\ufffdbyte"},
		{strings.Repeat("x", 100), 10, "xxxxxx…xxx"},
		{"雲雲雲雲雲雲", 7, "雲雲…雲"},
	}
	for _, tc := range tests {
		if got := svgText(tc.in, tc.limit); got != tc.want {
			t.Errorf("svgText(%q, %d) = %q, want %q", tc.in, tc.limit, got, tc.want)
		}
	}
}

func TestTimeAxis(t *testing.T) {
	pts := func(starts ...float64) []simulate.SeriesPoint {
		var p []simulate.SeriesPoint
		for _, s := range starts {
			p = append(p, simulate.SeriesPoint{StartMs: s})
		}
		return p
	}
	tests := []struct {
		name   string
		series simulate.Series
		bucket float64
		start  []float64
	}{
		{"plain", simulate.Series{BucketMs: 2000, Buckets: pts(0, 2000, 4000)}, 2, []float64{0, 2, 4}},
		{"no buckets", simulate.Series{BucketMs: 2000}, 2, []float64{}},
		{"bucket from the starts", simulate.Series{BucketMs: math.NaN(), Buckets: pts(0, 500)}, 0.5, []float64{0, 0.5}},
		{"one bucket of no length", simulate.Series{Buckets: pts(0)}, 1, []float64{0}},
		{"a start that is not a number", simulate.Series{BucketMs: 1000, Buckets: pts(0, math.Inf(1), 2000)}, 1, []float64{0, 1, 2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := newTimeAxis(tc.series)
			if a.bucket != tc.bucket {
				t.Errorf("bucket %v, want %v", a.bucket, tc.bucket)
			}
			if diff := cmp.Diff(tc.start, a.start); diff != "" {
				t.Errorf("starts (-want +got):\n%s", diff)
			}
		})
	}
}
