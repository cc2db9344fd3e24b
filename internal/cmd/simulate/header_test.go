package simulate_test

import (
	"strings"
	"testing"
)

// TestSimulateHeaderFigures (issue 31, item 2): the header says the KV
// capacity the workers run with and where it came from, per pool, and the
// traffic's own span and rates rather than the drain's end; the per-domain
// tables count the failures without a domain on a row of their own, and a
// legend says what the load columns count.
func TestSimulateHeaderFigures(t *testing.T) {
	// The first 20 requests of the Mooncake excerpt arrive over 3 s (0 to
	// 3,000 ms): 20/3 = 6.67 requests/s, 289,844/3 = 96,615 prompt tok/s,
	// 7,832/3 = 2,611 output tok/s.
	args := []string{"simulate", "--from-file", prefillOnly, "--trace", mooncake, "--max-requests", "20", "--assume-idle", "--seed", "1", "--fail-on", "none"}
	tests := []struct {
		name  string
		extra []string
		want  []string
		not   []string
	}{
		{"cards", nil, []string{
			"20 requests, 289,844 input + 7,832 output tokens, arriving over 3.0s: 6.67 req/s, 96,615 prompt tok/s, 2,611 output tok/s; the last finished at 9.9s",
			"KV cache:   prefill 61,034 blocks per rank on 4 worker(s), from worker cards (total_kv_blocks); decode 61,034 blocks per rank on 6 worker(s), from worker cards (total_kv_blocks) (not modelled",
			"Load columns: prefill = requests queued or prefilling, decode = sequences decoding",
		}, []string{"32,768"}},
		// Every card publishes its capacity: the flag changes nothing, and the
		// report says so instead of printing the flag's value as the capacity.
		{"the flag is a no-op", []string{"--kv-capacity-blocks", "1000"}, []string{
			"from worker cards (total_kv_blocks)",
			"--kv-capacity-blocks 1000 changes nothing: every worker's card publishes its total_kv_blocks",
		}, []string{"1,000 blocks"}},
		{"speedup", []string{"--speedup", "2"}, []string{
			"arriving over 1.5s: 13.3 req/s, 193,229 prompt tok/s, 5,221 output tok/s (speedup ×2: the trace's own span is 3.0s)",
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runIn(t, append(append([]string(nil), args...), tt.extra...)...)
			if r.ExitCode != 0 {
				t.Fatalf("exit %d: %s", r.ExitCode, r.Stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(r.Stdout, w) {
					t.Errorf("the report lacks %q:\n%.3000s", w, r.Stdout)
				}
			}
			for _, w := range tt.not {
				if strings.Contains(r.Stdout, w) {
					t.Errorf("the report holds %q", w)
				}
			}
		})
	}
	// The prefill hop's refusals have no domain: a row of their own.
	r := runIn(t, "simulate", "--from-file", prefillOnly, "--trace", mooncake, "--max-requests", "60", "--assume-idle", "--seed", "1", "--fail-on", "none")
	if !strings.Contains(r.Stdout, "  (no domain)   -             -               -              9 ") {
		t.Errorf("no row for the 9 failures without a domain:\n%s", r.Stdout)
	}
}

// TestSimulateEngineProfileSource (issue 31): with a profile, the Engine
// line says which figures came from it and which stay the built-in
// approximation, and the KV capacity line names the profile when it sets it.
func TestSimulateEngineProfileSource(t *testing.T) {
	const dir = "pkg/simulate/dynosim/testdata/profiles/"
	base := []string{"simulate", "--from-file", prefillOnly, "--synthetic", "rate=5,isl=100-400,osl=10,requests=10", "--fail-on", "none"}
	r := runIn(t, append(base, "--engine-profile", dir+"prefill_raw_data.json")...)
	if r.ExitCode != 0 || !strings.Contains(r.Stdout, dir+"prefill_raw_data.json: Dynamo planner profile (prefill: ") ||
		!strings.Contains(r.Stdout, "; built-in defaults for decode step, KV transfer per block; timings are estimates") {
		t.Errorf("prefill profile: exit %d\n%s", r.ExitCode, r.Stdout)
	}
	r = runIn(t, append(base, "--engine-profile", dir+"planner-profile-configmap.yaml")...)
	if r.ExitCode != 0 || !strings.Contains(r.Stdout, "; built-in defaults for KV transfer per block; timings are estimates") {
		t.Errorf("both profiles: exit %d\n%s", r.ExitCode, r.Stdout)
	}
}
