package routecore

import (
	"math"
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/fusion"
)

// Rust never fuses a multiplication and an addition into one FMA instruction
// (one rounding instead of two); the Go spec allows it, and Go's compilers do it
// on arm64, ppc64le, s390x, riscv64 and loong64 — across statements too — unless
// a product is converted explicitly (float64(a*b)). kubectl-dynamo ships arm64
// binaries (Apple silicon, Graviton, Grace), where a fused cost term would
// differ from the router's in the last bit and could change a tie set or a
// pick. These tests keep every product in routecore rounded on its own.

// TestNoImplicitFusedMultiplyAdd compiles routecore (and its tests, whose
// reference implementations must round like the router too) for arm64 and
// s390x and fails on any fused multiply-add the compiler chose by itself
// (internal/testutil/fusion). The only fused instructions allowed are
// explicit math.FMA calls (the libm port reproduces glibc's FMA builds), at
// most one per call on the line.
func TestNoImplicitFusedMultiplyAdd(t *testing.T) {
	if testing.Short() {
		t.Skip("-short (the arm64 run under qemu): cross-compiles the package twice per architecture; the native run does it")
	}
	for pass, n := range fusion.Check(t, ".", true) {
		if n == 0 {
			t.Errorf("%s: no math.FMA found in the listing; the scan no longer sees fused instructions", pass)
		}
	}
}

// fusionCase is an input on which fusing one multiply-add changes the result:
// each case checks that the vector discriminates (the fused value differs)
// and that routecore returns the separately rounded value, Rust's.
type fusionCase struct {
	name           string
	got            func() float64
	rounded, fused float64
}

// TestCostArithmeticIsNeverFused runs the cost formula, the decay factor and
// the softmax on inputs where a fused multiply-add would round differently.
// On amd64 Go never fuses; on arm64 (make test-arm64) these failed before
// every product was rounded explicitly.
func TestCostArithmeticIsNeverFused(t *testing.T) {
	b, err := ProfileLatest.Behavior()
	if err != nil {
		t.Fatal(err)
	}
	w := ResolvedWeights{OverlapScoreCredit: 0.7, OverlapScoreCreditDecay: 0.3, PrefillLoadScale: 1.1,
		HostCacheHitWeight: 0.3, DecodeActiveRequestWeight: 0.1, TrackPrefillTokens: true}
	in := CostInput{ISL: 1000, BlockSize: 16, RequestBlocks: 63, HasLoad: true,
		ActivePrefillTokens: 946, ActiveDecodeBlocks: 5, ActiveRequests: 3, DeviceBlocks: 12, HostBlocks: 3}
	terms := CandidateLogit(b, w, in)

	// The formula with every product rounded, as Rust computes it.
	norm := float64(946) / 16 / 63
	decayRounded := 1 / (1 + float64(0.3*norm))
	effCredit := float64(0.7 * decayRounded)
	creditRounded := float64(effCredit*12) + float64(0.3*3)
	raw := float64(946+1000) / 16
	reqCost := float64(0.1 * 3)
	logitRounded := float64(1.1*(raw-creditRounded)) + 5 + reqCost

	costs := []float64{0.1, 0.74, 1.3, 2.9}
	probs, err := SoftmaxProbabilities(costs, 0.9)
	if err != nil {
		t.Fatal(err)
	}
	// softmaxWeights' exponent for cost 0.74, rounded and with lo·scale fused
	// into the subtraction (what arm64 compiled before).
	lo, hi, temp := 0.1, 2.9, 0.9
	scale := -1.0 / ((hi - lo) * temp)
	expRounded := float64(0.74*scale) - float64(lo*scale)
	expFused := math.FMA(-lo, scale, float64(0.74*scale))

	cases := []fusionCase{
		{"decay factor", func() float64 { return terms.DecayFactor }, decayRounded, 1 / math.FMA(0.3, norm, 1)},
		{"credit blocks", func() float64 { return terms.CreditBlocks },
			creditRounded, math.FMA(effCredit, 12, float64(0.3*3))},
		{"logit", func() float64 { return terms.Logit }, logitRounded, math.FMA(1.1, raw-creditRounded, 5) + reqCost},
		{"softmax exponent", func() float64 {
			p := make([]float64, len(costs))
			softmaxWeights(p, costs, lo, hi, len(costs), temp)
			return p[1]
		}, libmExp(expRounded), libmExp(expFused)},
	}
	for _, c := range cases {
		if c.rounded == c.fused {
			t.Errorf("%s: the vector does not discriminate (fused and rounded are both %v)", c.name, c.rounded)
			continue
		}
		if got := c.got(); got != c.rounded {
			t.Errorf("%s = %v [%016x], want the separately rounded %v [%016x] (fused would give %v)",
				c.name, got, math.Float64bits(got), c.rounded, math.Float64bits(c.rounded), c.fused)
		}
	}
	if sum := probs[0] + probs[1] + probs[2] + probs[3]; math.Abs(sum-1) > 1e-15 {
		t.Errorf("probabilities sum to %v", sum)
	}
}
