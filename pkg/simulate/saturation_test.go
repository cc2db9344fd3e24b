package simulate

import (
	"math"
	"testing"
	"time"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/simulate/trace"
)

// everySecond is n requests one second apart, each of isl distinct tokens
// (nothing to cache) and osl output tokens: a span of n−1 seconds.
func everySecond(n, isl, osl int) []trace.Request {
	out := make([]trace.Request, n)
	for i := range out {
		out[i] = trace.Request{Arrival: time.Duration(i) * time.Second, Tokens: seqTokens(isl, uint32(1+i*100000)), OutputTokens: osl}
	}
	return out
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// TestSaturationOfAPoolByHand: one prefill worker of 1 GPU (10,000 tok/s)
// and ten prompts of 12,000 distinct tokens one second apart: 120,000 tokens
// over the 9 s span are 13,333 tok/s, 133 % of the capacity — saturated; the
// traffic must be slowed ×1.333/0.85 = 1.569, or one more worker added
// (⌈13,333 / 0.85 / 10,000⌉ = 2 workers). Decode: 100 output tokens over 9 s
// against 1000 / 0.08 = 12,500 tok/s: 0.09 %.
func TestSaturationOfAPoolByHand(t *testing.T) {
	r := run(t, syntheticDeployment(1, 1, []string{"z"}), DefaultEngine(), everySecond(10, 12000, 10))
	if r.SaturationThreshold != 0.85 {
		t.Fatalf("threshold %v", r.SaturationThreshold)
	}
	v := r.Variants[0]
	if len(v.Saturation) != 2 {
		t.Fatalf("rows %+v, want the prefill and decode pools (one domain: no domain rows)", v.Saturation)
	}
	p, d := v.Saturation[0], v.Saturation[1]
	if p.Stage != StagePrefill || p.Domain != "" || p.Workers != 1 || p.Role != "prefill" || p.CapacityTokensPerSecond != 10000 ||
		!near(p.WorkTokensPerSecond, 120000.0/9) || !near(p.OfferedTokensPerSecond, 120000.0/9) ||
		!near(p.Utilisation, 120000.0/9/10000) || !near(p.OfferedUtilisation, 120000.0/9/10000) ||
		!p.Saturated || !near(p.SlowDown, 120000.0/9/10000/0.85) || p.AddWorkers != 1 {
		t.Errorf("prefill pool %+v", p)
	}
	if d.Stage != StageDecode || d.CapacityTokensPerSecond != 12500 || !near(d.WorkTokensPerSecond, 100.0/9) ||
		!near(d.Utilisation, 100.0/9/12500) || d.Saturated || d.SlowDown != 1 || d.AddWorkers != 0 {
		t.Errorf("decode pool %+v", d)
	}
	if !v.QueueDominated || !near(v.SlowDown, p.SlowDown) {
		t.Errorf("variant: queue-dominated %v, slow-down %v", v.QueueDominated, v.SlowDown)
	}
	// Twice the prefill capacity (a second worker): 67 %, not saturated.
	r = run(t, syntheticDeployment(2, 1, []string{"z"}), DefaultEngine(), everySecond(10, 12000, 10))
	if v := r.Variants[0]; v.QueueDominated || v.SlowDown != 1 || !near(v.Saturation[0].Utilisation, 120000.0/9/20000) {
		t.Errorf("two prefill workers: %+v", v.Saturation)
	}
	// Slower traffic: ten prompts over 18 s at --speedup 0.5, 67 %.
	r2, err := runWith(syntheticDeployment(1, 1, []string{"z"}), DefaultEngine(), everySecond(10, 12000, 10), Options{Speedup: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	if v := r2.Variants[0]; v.QueueDominated || !near(v.Saturation[0].Utilisation, 120000.0/18/10000) {
		t.Errorf("at half speed: %+v", v.Saturation)
	}
}

// TestSaturationOfADomainByHand: the pool has room, one domain has not.
// Round-robin alternates ten prompts of 16,000 tokens between a prefill
// worker of 1 GPU in zone a and one of 4 GPUs in zone b: 80,000 tokens each
// over 9 s, 8,889 tok/s. Zone a runs at 8,889 / 10,000 = 89 % — saturated: add
// ⌈8,889 / 0.85 / 10,000⌉ − 1 = 1 worker there; zone b at 22 %, the pool at
// 17,778 / 50,000 = 36 %.
func TestSaturationOfADomainByHand(t *testing.T) {
	dep := syntheticDeployment(2, 2, []string{"a", "b"})
	for i := range dep.Workers {
		if dep.Workers[i].Pod == "bench-prefill-b-1" {
			dep.Workers[i].GPUs = 4
		}
	}
	r := run(t, dep, DefaultEngine(), everySecond(10, 16000, 4), "router-mode=round-robin")
	v := r.Variants[1]
	if v.Failed != 0 {
		t.Fatalf("failures %+v", v.Failures)
	}
	byKey := map[string]Saturation{}
	for _, s := range v.Saturation {
		byKey[s.Stage+"/"+s.Domain] = s
	}
	pool, a, b := byKey["prefill/"], byKey["prefill/a"], byKey["prefill/b"]
	if pool.CapacityTokensPerSecond != 50000 || !near(pool.Utilisation, 160000.0/9/50000) || pool.Saturated {
		t.Errorf("pool %+v", pool)
	}
	if a.CapacityTokensPerSecond != 10000 || !near(a.Utilisation, 80000.0/9/10000) || !a.Saturated || a.AddWorkers != 1 ||
		!near(a.SlowDown, 80000.0/9/10000/0.85) || a.OfferedTokensPerSecond != 0 {
		t.Errorf("zone a %+v", a)
	}
	if b.CapacityTokensPerSecond != 40000 || !near(b.Utilisation, 80000.0/9/40000) || b.Saturated {
		t.Errorf("zone b %+v", b)
	}
	if !v.QueueDominated || !near(v.SlowDown, a.SlowDown) {
		t.Errorf("variant: queue-dominated %v, slow-down %v", v.QueueDominated, v.SlowDown)
	}
	if len(v.Saturation) != 6 {
		t.Errorf("%d rows, want 6 (two stages: the pool and two zones)", len(v.Saturation))
	}
}

// TestSaturationOfAggregatedWorkers: with no prefill pool the aggregated
// workers prefill and decode; the rows name them, so that what to add is an
// aggregated worker.
func TestSaturationOfAggregatedWorkers(t *testing.T) {
	dep := syntheticDeployment(0, 1, []string{"z"})
	dep.Workers[0].Role = "aggregated"
	dep.Workers[0].Instances[0].WorkerType = "aggregated"
	r := run(t, dep, DefaultEngine(), everySecond(10, 12000, 10))
	v := r.Variants[0]
	if len(v.Saturation) != 2 {
		t.Fatalf("rows %+v", v.Saturation)
	}
	for _, s := range v.Saturation {
		if s.Role != "aggregated" || s.Workers != 1 {
			t.Errorf("row %+v, want the one aggregated worker", s)
		}
	}
	if p := v.Saturation[0]; p.Stage != StagePrefill || !near(p.Utilisation, 120000.0/9/10000) || p.AddWorkers != 1 {
		t.Errorf("prefill %+v", p)
	}
}
