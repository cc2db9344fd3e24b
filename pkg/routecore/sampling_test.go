package routecore

import (
	"errors"
	"math"
	"slices"
	"testing"
)

// TestSoftmaxSampleExtremeFiniteCosts is softmax_sample_orders_extreme_finite_costs.
func TestSoftmaxSampleExtremeFiniteCosts(t *testing.T) {
	i, p, err := SoftmaxSampleIndex([]float64{-math.MaxFloat64, math.MaxFloat64}, 1, 0.6)
	if err != nil || i != 0 {
		t.Fatalf("index %d err %v, want 0", i, err)
	}
	want0 := 1 / (1 + math.Exp(-1))
	if math.Abs(p[0]-want0) > 1e-15 || math.Abs(p[0]+p[1]-1) > 1e-15 {
		t.Errorf("probabilities %v, want [%v, %v]", p, want0, 1-want0)
	}
}

func TestSoftmaxProbabilities(t *testing.T) {
	tests := []struct {
		name  string
		costs []float64
		temp  float64
		want  []float64
		tol   float64
	}{
		{"worked example T=0.5", []float64{34.25, 6.25, 128.25}, 0.5, []float64{0.358, 0.566, 0.077}, 5e-4},
		{"equal costs are uniform", []float64{5, 5, 5, 5}, 0.7, []float64{0.25, 0.25, 0.25, 0.25}, 0},
		{"single candidate", []float64{3}, 2, []float64{1}, 0},
		{"best 1, worst e^-1/T", []float64{0, 10}, 1, []float64{1 / (1 + math.Exp(-1)), math.Exp(-1) / (1 + math.Exp(-1))}, 1e-15},
		{"scale free", []float64{0, 1e-300}, 1, []float64{1 / (1 + math.Exp(-1)), math.Exp(-1) / (1 + math.Exp(-1))}, 1e-15},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := SoftmaxProbabilities(tt.costs, tt.temp)
			if err != nil {
				t.Fatal(err)
			}
			for i := range p {
				if math.Abs(p[i]-tt.want[i]) > tt.tol {
					t.Errorf("p[%d] = %v, want %v", i, p[i], tt.want[i])
				}
			}
		})
	}
}

func TestSoftmaxRejectsBadInput(t *testing.T) {
	for _, tc := range []struct {
		costs []float64
		temp  float64
	}{
		{nil, 1}, {[]float64{1, math.NaN()}, 1}, {[]float64{1, math.Inf(1)}, 1}, {[]float64{1, 2}, 0}, {[]float64{1, 2}, math.Inf(1)}, {[]float64{1}, -1},
	} {
		if _, err := SoftmaxProbabilities(tc.costs, tc.temp); !errors.Is(err, ErrInvalidRequest) {
			t.Errorf("%v T=%v: error %v", tc.costs, tc.temp, err)
		}
	}
}

func TestSampleIndex(t *testing.T) {
	p := []float64{0.25, 0.5, 0.25}
	for _, tc := range []struct {
		u    float64
		want int
	}{{0, 0}, {0.25, 0}, {0.2500001, 1}, {0.75, 1}, {0.9, 2}, {1, 2}} {
		if got := SampleIndex(p, tc.u); got != tc.want {
			t.Errorf("u=%v: %d, want %d", tc.u, got, tc.want)
		}
	}
	// rounding shortfall falls back to the last index
	if got := SampleIndex([]float64{0.3, 0.3}, 0.9); got != 1 {
		t.Errorf("fallback %d, want 1", got)
	}
}

func TestMinimumCostTiesAndTieIndex(t *testing.T) {
	m, ties := MinimumCostTies([]float64{3, 1, 2, 1, 1})
	if m != 1 || !slices.Equal(ties, []int{1, 3, 4}) {
		t.Errorf("min %v ties %v", m, ties)
	}
	for _, tc := range []struct {
		n    int
		u    float64
		want int
	}{{3, 0, 0}, {3, 0.333, 0}, {3, 0.34, 1}, {3, 0.999, 2}, {3, 1, 2}, {1, 0.5, 0}} {
		if got := TieIndex(tc.n, tc.u); got != tc.want {
			t.Errorf("TieIndex(%d,%v) = %d, want %d", tc.n, tc.u, got, tc.want)
		}
	}
}

func TestRandImplementations(t *testing.T) {
	r := &ScriptedRand{Draws: []float64{0.1, 0.2}}
	if got := []float64{r.Float64(), r.Float64(), r.Float64()}; !slices.Equal(got, []float64{0.1, 0.2, 0.1}) || r.Calls != 3 {
		t.Errorf("scripted %v calls %d", got, r.Calls)
	}
	a, b := NewRand(1, 2), NewRand(1, 2)
	for range 5 {
		x, y := a.Float64(), b.Float64()
		if x != y || x < 0 || x >= 1 {
			t.Fatalf("seeded draws %v %v", x, y)
		}
	}
}
