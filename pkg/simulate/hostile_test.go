package simulate

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/memguard"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/explain"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/simulate/trace"
)

// Hostile inputs of the simulator (issue 29). Nothing here is timed: a
// replay that stops advancing is caught by a watchdog that fails the test
// when no progress report arrives for a minute (a replay that advances
// reports every 500 requests, in milliseconds).

// repeatedConversation is the first perHour requests of the example
// conversation trace (200 requests over 83 s) repeated every hour for hours
// hours.
func repeatedConversation(t *testing.T, hours, perHour int) []trace.Request {
	t.Helper()
	f, err := os.Open("../../examples/traces/mooncake-conversation-200.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := trace.Open(f, trace.Mooncake, trace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var one []trace.Request
	for {
		q, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		one = append(one, q)
	}
	var out []trace.Request
	for h := range hours {
		for _, q := range one[:min(perHour, len(one))] {
			q.Arrival += time.Duration(h) * time.Hour
			out = append(out, q)
		}
	}
	return out
}

// runLive runs the simulation and fails the test when it stops reporting
// progress for a minute (the review's 72 h replay was still running, silent,
// after 120 s; it now takes a few seconds).
func runLive(t *testing.T, o Options) (*Report, error) {
	t.Helper()
	var reports atomic.Int64
	o.ProgressEvery = 500
	o.Progress = func(Progress) { reports.Add(1) }
	type result struct {
		r   *Report
		err error
	}
	done := make(chan result, 1)
	go func() {
		r, err := Run(context.Background(), o)
		done <- result{r, err}
	}()
	last, seen := time.Now(), int64(0)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case res := <-done:
			return res.r, res.err
		case <-tick.C:
			if n := reports.Load(); n != seen {
				last, seen = time.Now(), n
			} else if time.Since(last) > time.Minute {
				t.Fatalf("the replay stopped advancing: no progress report for a minute after %d reports", n)
			}
		}
	}
}

// TestVirtualTimeKeepsAdvancing: past about 1.5 days of virtual time the
// decode model's fixed 1e-9 completion tolerance fell below the clock's
// precision and a completion was scheduled at the same instant forever. The
// review's cases: the conversation trace repeated hourly (here its first 20
// requests, for 48 h), a slow replay (the 83 s conversation at --speedup
// 0.0005), and a tiny decode step.
func TestVirtualTimeKeepsAdvancing(t *testing.T) {
	snap, dep, _ := example(t, "prefill-only-zone-required.yaml")
	tiny := DefaultEngine()
	tiny.DecodeStepMs, tiny.DecodeStepMsPerSequence = 1e-3, 0 // 1 µs
	day := repeatedConversation(t, 1, 200)
	tests := []struct {
		name    string
		reqs    []trace.Request
		engine  Engine
		speedup float64
	}{
		{"48 hours of traffic", repeatedConversation(t, 48, 20), DefaultEngine(), 1},
		{"the conversation at --speedup 0.0005 (46 hours)", day, DefaultEngine(), 0.0005},
		{"a 1 µs decode step", day, tiny, 0.02},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := runLive(t, Options{Snapshot: snap, Deployment: dep, Base: explain.Options{Seed: 1, AssumeIdle: true}, Engine: tt.engine, Open: opener(tt.reqs), Speedup: tt.speedup})
			if err != nil {
				t.Fatal(err)
			}
			v := r.Variants[0]
			if v.Requests != len(tt.reqs) || v.Routed+v.Failed != v.Requests {
				t.Errorf("%d requests: %d routed, %d failed, of %d", len(tt.reqs), v.Routed, v.Failed, v.Requests)
			}
			t.Logf("%d requests over %v of virtual time", v.Requests, time.Duration(r.Trace.DurationMs*float64(time.Millisecond)).Round(time.Second))
		})
	}
}

// TestAddedWorkersPerVariant: the decode+N cap of 1,000 held per clause, so
// 100 clauses added 100,000 workers (1.9 GB); it holds per variant.
func TestAddedWorkersPerVariant(t *testing.T) {
	snap, dep, _ := example(t, "prefill-only-zone-required.yaml")
	_ = snap
	spec := strings.TrimSuffix(strings.Repeat("decode+1000@us-east-1c,", 100), ",")
	g := memguard.Watch(t, 64<<20)
	v, err := ParseVariant(spec)
	if err == nil {
		_, _, err = v.apply(dep, explain.Options{})
		err = errors.Join(errors.New("accepted"), err)
	}
	t.Logf("peak %s", memguard.MiB(g.Stop()))
	if err == nil || !strings.Contains(err.Error(), "adds 2000 workers in all: a variant adds at most 1000, in all its ROLE+N@VALUE clauses together; split it into several variants") {
		t.Fatalf("err = %v", err)
	}
	if _, err := ParseVariant("decode+600@a,prefill+400@b"); err != nil {
		t.Errorf("1000 workers in two clauses: %v", err)
	}
}
