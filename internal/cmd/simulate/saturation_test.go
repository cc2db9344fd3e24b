package simulate_test

import (
	"math"
	"strings"
	"testing"
)

const aggRouter = "test/fixtures/upstream/vllm-agg-router-v1beta1.yaml"

// TestSimulateSaturationFirst (issue 31): over two aggregated workers of one
// GPU (2 × 10,000 = 20,000 prompt tok/s under the built-in engine model) the
// Mooncake excerpt offers 2,782,179 prompt tokens over 72 s, 38,641 tok/s:
// 193 % before any cache. The report says so before the comparison, names
// what makes it stable, and marks the latency and hit-rate figures as
// queue-dominated. At --rate 1.2 (the trace's own 200/72 = 2.78 requests/s
// slowed ×0.432) the offered load is 16,693 tok/s (83 %) and the report says
// no stage is saturated.
func TestSimulateSaturationFirst(t *testing.T) {
	base := []string{"simulate", "--from-file", aggRouter, "--trace", mooncake, "--assume-idle", "--seed", "1"}
	r := runIn(t, base...)
	if r.ExitCode != 0 {
		t.Fatalf("exit %d: %s", r.ExitCode, r.Stderr)
	}
	sat := strings.Index(r.Stdout, "Saturation: ✗ 1 stage(s) at or above 85% of their capacity")
	table := strings.Index(r.Stdout, "VARIANT ")
	if sat < 0 || table < 0 || sat > table {
		t.Fatalf("the saturation verdict does not come first:\n%s", r.Stdout)
	}
	for _, w := range []string{
		"arriving over 1m12s: 2.78 req/s, 38,641 prompt tok/s",
		"as deployed   prefill   (pool)   ",
		" / 20,000           38,641 (193%)        slow the traffic ×",
		"or add 3 aggregated worker(s)",
		"* queue-dominated: a stage runs at or above 85% of its capacity",
	} {
		if !strings.Contains(r.Stdout, w) {
			t.Errorf("the report lacks %q:\n%s", w, r.Stdout)
		}
	}
	row := ""
	for line := range strings.SplitSeq(r.Stdout, "\n") {
		if strings.HasPrefix(line, "as deployed ") {
			row = line
		}
	}
	if strings.Count(row, "*") != 3 {
		t.Errorf("the comparison row should mark the hit rate, TTFT and E2E as queue-dominated: %q", row)
	}
	rep, _ := simJSON(t, base[1:]...)
	v := rep.Variants[0]
	p := v.Saturation[0]
	if !v.QueueDominated || p.Stage != "prefill" || p.Role != "aggregated" || p.CapacityTokensPerSecond != 20000 ||
		math.Abs(p.OfferedTokensPerSecond-2782179.0/72) > 1e-6 || !p.Saturated {
		t.Errorf("saturation %+v", v.Saturation)
	}

	slow := runIn(t, append(base, "--rate", "1.2")...)
	for _, w := range []string{
		"arriving over 2m46s: 1.20 req/s, 16,693 prompt tok/s",
		"(speedup ×0.432: the trace's own span is 1m12s)",
		"Saturation: every stage below 85% of its capacity under the engine model",
	} {
		if !strings.Contains(slow.Stdout, w) {
			t.Errorf("--rate 1.2: the report lacks %q:\n%s", w, slow.Stdout)
		}
	}
	if strings.Contains(slow.Stdout, "queue-dominated") {
		t.Errorf("--rate 1.2 is marked queue-dominated")
	}
	// --duration keeps the arrivals of the first 30 s (timestamps 0 to 30,000 ms): 92 of the 200.
	cut, _ := simJSON(t, append(base[1:], "--duration", "30s")...)
	if cut.Trace.Requests != 92 || cut.Trace.SpanMs > 30000 || cut.Trace.DurationLimitMs != 30000 {
		t.Errorf("--duration 30s: %d requests over %v ms", cut.Trace.Requests, cut.Trace.SpanMs)
	}
}

// TestSimulateFailOnSaturated: --fail-on saturated makes a saturated
// deployment as it is exit 2, with the slow-down in the message; the same
// traffic slowed to 1.2 requests/s passes.
func TestSimulateFailOnSaturated(t *testing.T) {
	base := []string{"simulate", "--from-file", aggRouter, "--trace", mooncake, "--assume-idle", "--seed", "1", "--fail-on", "saturated"}
	r := runIn(t, base...)
	if r.ExitCode != 2 || !strings.HasPrefix(r.Stderr, "the deployment as it is saturates (a stage at or above 85% of its capacity; to be stable, slow the traffic ×") ||
		!strings.HasSuffix(r.Stderr, "or add capacity): --fail-on saturated, exit code 2\n") {
		t.Errorf("exit %d, stderr %q", r.ExitCode, r.Stderr)
	}
	if r := runIn(t, append(base, "--rate", "1.2")...); r.ExitCode != 0 {
		t.Errorf("--rate 1.2: exit %d, stderr %q", r.ExitCode, r.Stderr)
	}
}
