package simulate

import (
	"context"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/explain"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/simulate/trace"
)

// TestKvCapacityPerPool: the report says the capacity each pool's workers
// run with and where it came from — a card's total_kv_blocks where one is
// published, else the engine model's capacity and its source.
func TestKvCapacityPerPool(t *testing.T) {
	dep := syntheticDeployment(3, 2, []string{"a", "b"})
	published := uint64(20000)
	for i := range dep.Workers {
		// Two of the three prefill workers and one of the two decode workers
		// publish 20,000 blocks.
		if w := &dep.Workers[i]; w.Pod != "bench-prefill-a-2" && w.Pod != "bench-decode-b-1" {
			w.Instances[0].Runtime.TotalKvBlocks = &published
		}
	}
	eng := DefaultEngine()
	eng.KvCapacityBlocks, eng.KvCapacitySource = 4096, "--kv-capacity-blocks"
	r := run(t, dep, eng, []trace.Request{{Tokens: seqTokens(64, 1), OutputTokens: 1}})
	want := []PoolCapacity{
		{Role: "prefill", BlocksPerRank: 20000, Workers: 2, Ranks: 2, Source: KvSourceCards, Modelled: true},
		{Role: "prefill", BlocksPerRank: 4096, Workers: 1, Ranks: 1, Source: "--kv-capacity-blocks", Modelled: true},
		// Disaggregated without conditional disaggregation: nothing reads a
		// decode worker's cache.
		{Role: "decode", BlocksPerRank: 20000, Workers: 1, Ranks: 1, Source: KvSourceCards, Modelled: false},
		{Role: "decode", BlocksPerRank: 4096, Workers: 1, Ranks: 1, Source: "--kv-capacity-blocks", Modelled: false},
	}
	if !reflect.DeepEqual(r.KvCapacity, want) {
		t.Errorf("capacities\n got %+v\nwant %+v", r.KvCapacity, want)
	}
	if r.Engine.KvCapacitySource != "--kv-capacity-blocks" || r.Engine.KvCapacityBlocks != 4096 {
		t.Errorf("engine %+v", r.Engine)
	}
	// The engine model's default when nothing else is said.
	r = run(t, syntheticDeployment(1, 1, []string{"a"}), DefaultEngine(), []trace.Request{{Tokens: seqTokens(64, 1), OutputTokens: 1}})
	if c := r.KvCapacity[0]; c.BlocksPerRank != 32768 || c.Source != KvSourceDefault {
		t.Errorf("default capacity %+v", c)
	}
}

// TestTraceSpanAndRates: the header's span and rates are the arrivals', not
// the drain's. Four requests at 0, 1, 2 and 4 s of 1,000 and 3,000 tokens
// (8,000 in all) and 10 output tokens each: a span of 4 s, 4/4 = 1 request/s,
// 8,000/4 = 2,000 prompt tokens/s and 40/4 = 10 output tokens/s; at
// --speedup 2 the span is 2 s and every rate doubles.
func TestTraceSpanAndRates(t *testing.T) {
	sec := func(s int) time.Duration { return time.Duration(s) * time.Second }
	reqs := []trace.Request{
		{Arrival: sec(0), Tokens: seqTokens(1000, 1), OutputTokens: 10},
		{Arrival: sec(1), Tokens: seqTokens(3000, 100000), OutputTokens: 10},
		{Arrival: sec(2), Tokens: seqTokens(1000, 200000), OutputTokens: 10},
		{Arrival: sec(4), Tokens: seqTokens(3000, 300000), OutputTokens: 10},
	}
	dep := syntheticDeployment(1, 1, []string{"a"})
	for _, tc := range []struct {
		speedup                    float64
		span, req, prompt, outputs float64
	}{
		{1, 4000, 1, 2000, 10},
		{2, 2000, 2, 4000, 20},
	} {
		r, err := runWith(dep, DefaultEngine(), reqs, Options{Speedup: tc.speedup})
		if err != nil {
			t.Fatal(err)
		}
		tr := r.Trace
		if tr.SpanMs != tc.span || tr.RequestRate != tc.req || tr.PromptTokensPerSecond != tc.prompt || tr.OutputTokensPerSecond != tc.outputs {
			t.Errorf("speedup %g: span %v, rates %v req/s, %v prompt tok/s, %v output tok/s; want %v, %v, %v, %v",
				tc.speedup, tr.SpanMs, tr.RequestRate, tr.PromptTokensPerSecond, tr.OutputTokensPerSecond, tc.span, tc.req, tc.prompt, tc.outputs)
		}
		// The drain ends after the last arrival: its prefill alone is 300 ms.
		if !(tr.DurationMs > tr.SpanMs+300) {
			t.Errorf("speedup %g: the last finished at %v ms, the span is %v ms", tc.speedup, tr.DurationMs, tr.SpanMs)
		}
	}
	// Every request at once: no span, no rate.
	burst := []trace.Request{{Tokens: seqTokens(100, 1), OutputTokens: 1}, {Tokens: seqTokens(100, 9000), OutputTokens: 1}}
	r := run(t, dep, DefaultEngine(), burst)
	if r.Trace.SpanMs != 0 || r.Trace.RequestRate != 0 || math.IsInf(r.Trace.PromptTokensPerSecond, 0) {
		t.Errorf("a burst: %+v", r.Trace)
	}
}

// TestFailuresWithoutADomain: requests the frontend refuses (no live prefill
// worker at 1.3) never reach a worker; they are counted without a domain, in
// the variant and in the time series, so that the series' failures add up to
// the variant's.
func TestFailuresWithoutADomain(t *testing.T) {
	dep := syntheticDeployment(1, 2, []string{"a", "b"})
	sec := func(s int) time.Duration { return time.Duration(s) * time.Second }
	var reqs []trace.Request
	for i := range 6 {
		reqs = append(reqs, trace.Request{Arrival: sec(i), Tokens: seqTokens(200, uint32(1+i*1000)), OutputTokens: 2})
	}
	r := run(t, dep, DefaultEngine(), reqs, "exclude=bench-prefill-a-0,dynamo-version=1.3.0")
	as, v := r.Variants[0], r.Variants[1]
	if as.Failed != 0 || as.NoDomainFailed != 0 {
		t.Fatalf("as deployed: failed %d, without a domain %d", as.Failed, as.NoDomainFailed)
	}
	if v.Failed != 6 || v.NoDomainFailed != 6 {
		t.Fatalf("without the prefill worker: failed %d, without a domain %d; want 6 and 6 (%+v)", v.Failed, v.NoDomainFailed, v.Failures)
	}
	series := 0
	for _, b := range v.Series.Buckets {
		series += b.NoDomainFailed
	}
	if series != 6 {
		t.Errorf("the time series holds %d failures without a domain, want 6", series)
	}
	// The series' entries name their domains, in the variant's order.
	for _, b := range as.Series.Buckets {
		if len(b.Domains) != 2 || b.Domains[0].Domain != "a" || b.Domains[1].Domain != "b" {
			t.Fatalf("bucket at %v ms: %+v", b.StartMs, b.Domains)
		}
	}
}

// runWith runs the deployment as it is over reqs with o's other fields
// (speedup, limits) set.
func runWith(dep *model.Deployment, eng Engine, reqs []trace.Request, o Options) (*Report, error) {
	o.Deployment, o.Engine, o.Open = dep, eng, opener(reqs)
	o.Base = explain.Options{Seed: 5, AssumeIdle: true}
	return Run(context.Background(), o)
}

// TestRateAndDuration: --rate scales the trace to a mean rate, --duration
// cuts it. Ten requests one second apart have their own rate of 10 over 9 s,
// 1.111/s: --rate 2 is a speedup of 2 / (10/9) = 1.8 and a span of 9/1.8 =
// 5 s. --duration 4s keeps the arrivals at 0 to 4 s (five requests); with
// --rate 2 the first 4 s of the scaled trace, arrivals at 0, 0.56, …, 3.89 s
// (eight requests).
func TestRateAndDuration(t *testing.T) {
	dep := syntheticDeployment(1, 1, []string{"z"})
	reqs := everySecond(10, 100, 2)
	for _, tc := range []struct {
		name           string
		o              Options
		requests       int
		speedup, spanS float64
	}{
		{"rate", Options{Rate: 2}, 10, 1.8, 5},
		{"duration", Options{DurationMs: 4000}, 5, 1, 4},
		{"both", Options{Rate: 2, DurationMs: 4000}, 8, 1.8, 7 / 1.8},
		{"max-requests first", Options{Rate: 2, MaxRequests: 4}, 4, 2.0 / (4.0 / 3), 3 / (2.0 / (4.0 / 3))},
	} {
		r, err := runWith(dep, DefaultEngine(), reqs, tc.o)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if tr := r.Trace; tr.Requests != tc.requests || !near(tr.Speedup, tc.speedup) || !near(tr.SpanMs, tc.spanS*1000) ||
			tr.TargetRate != tc.o.Rate || tr.DurationLimitMs != tc.o.DurationMs {
			t.Errorf("%s: %d requests at speedup %v over %v ms; want %d, %v, %v ms", tc.name, tr.Requests, tr.Speedup, tr.SpanMs, tc.requests, tc.speedup, tc.spanS*1000)
		}
	}
	// A trace arriving at one instant has no rate to scale.
	burst := []trace.Request{{Tokens: seqTokens(10, 1), OutputTokens: 1}, {Tokens: seqTokens(10, 50), OutputTokens: 1}}
	if _, err := runWith(dep, DefaultEngine(), burst, Options{Rate: 2}); err == nil || !strings.Contains(err.Error(), "arrive at one instant") {
		t.Errorf("--rate on a burst: %v", err)
	}
	for _, bad := range []float64{-1, 2e6, math.NaN()} {
		if _, err := runWith(dep, DefaultEngine(), reqs, Options{Rate: bad}); err == nil || !strings.Contains(err.Error(), "--rate must be") {
			t.Errorf("--rate %v: %v", bad, err)
		}
	}
}
