package routecore

import (
	"math"
	"slices"
	"testing"
)

// TestSelectByMode mirrors the runtime's picker tests (push_router.rs tests and
// the RoutePicker tests): where upstream asserts a pick that depends on random
// draws, the table asserts the exact probability of every worker instead.
func TestSelectByMode(t *testing.T) {
	w := func(id uint64, inflight uint64) ModeWorker { return ModeWorker{ID: WorkerID(id), InFlight: inflight} }
	cpu := func(mw ModeWorker) ModeWorker { mw.CPU = true; return mw }
	busy := func(mw ModeWorker) ModeWorker { mw.Overloaded = true; return mw }
	target := func(id uint64) *WorkerID { v := WorkerID(id); return &v }
	tests := []struct {
		name    string
		in      ModeInput
		want    map[WorkerID]float64 // worker → probability (absent: 0)
		wantErr string               // ErrorKind
	}{
		// p2c_selects_lower_load_worker: loads 10 and 1, two workers → id 2.
		{"p2c selects lower load worker", ModeInput{Mode: RouterModePowerOfTwo, Workers: []ModeWorker{w(1, 10), w(2, 1)}}, map[WorkerID]float64{2: 1}, ""},
		// p2c_selects_single_worker.
		{"p2c selects single worker", ModeInput{Mode: RouterModePowerOfTwo, Workers: []ModeWorker{w(42, 0)}}, map[WorkerID]float64{42: 1}, ""},
		// p2c_treats_missing_counts_as_zero: worker 2 has no count → 0 → wins.
		{"p2c treats missing counts as zero", ModeInput{Mode: RouterModePowerOfTwo, Workers: []ModeWorker{w(1, 5), w(2, 0)}}, map[WorkerID]float64{2: 1}, ""},
		// p2c_returns_valid_worker_on_tie: equal loads → the first drawn, so 1/2 each.
		{"p2c tie keeps the first drawn", ModeInput{Mode: RouterModePowerOfTwo, Workers: []ModeWorker{w(1, 3), w(2, 3)}}, map[WorkerID]float64{1: 0.5, 2: 0.5}, ""},
		// p2c_never_selects_dominated_worker: worker 3 at load 100 never wins.
		{"p2c never selects dominated worker", ModeInput{Mode: RouterModePowerOfTwo, Workers: []ModeWorker{w(1, 0), w(2, 0), w(3, 100)}}, map[WorkerID]float64{1: 0.5, 2: 0.5}, ""},
		// p2c_uses_exactly_two_samples_and_two_load_reads: 20 has load 5, the
		// others 1; 20 loses every pair, the others share.
		{"p2c four workers one loaded", ModeInput{Mode: RouterModePowerOfTwo, Workers: []ModeWorker{w(10, 1), w(20, 5), w(30, 1), w(40, 1)}},
			map[WorkerID]float64{10: 1.0 / 3, 30: 1.0 / 3, 40: 1.0 / 3}, ""},
		// Three distinct loads: the least loaded wins every pair it is in (4/6),
		// the middle one wins only against the most loaded (2/6).
		{"p2c three distinct loads", ModeInput{Mode: RouterModePowerOfTwo, Workers: []ModeWorker{w(1, 0), w(2, 1), w(3, 2)}},
			map[WorkerID]float64{1: 4.0 / 6, 2: 2.0 / 6}, ""},
		// least_loaded_selects_exact_min_and_tracks_counts: loads 2, 1, 0 → 3.
		{"least loaded selects exact min", ModeInput{Mode: RouterModeLeastLoaded, Workers: []ModeWorker{w(1, 2), w(2, 1), w(3, 0)}}, map[WorkerID]float64{3: 1}, ""},
		// least_loaded_ties_follow_scripted_reservoir_samples: all load 3 → uniform.
		{"least loaded ties are uniform", ModeInput{Mode: RouterModeLeastLoaded, Workers: []ModeWorker{w(10, 3), w(20, 3), w(30, 3)}},
			map[WorkerID]float64{10: 1.0 / 3, 20: 1.0 / 3, 30: 1.0 / 3}, ""},
		// device_aware_cpu_only_selects_least_loaded_instance.
		{"device aware cpu only", ModeInput{Mode: RouterModeDeviceAwareWeighted, Workers: []ModeWorker{cpu(w(1, 3)), cpu(w(2, 0)), cpu(w(3, 1))}}, map[WorkerID]float64{2: 1}, ""},
		// device_aware_non_cpu_only_selects_least_loaded_instance.
		{"device aware non-cpu only", ModeInput{Mode: RouterModeDeviceAwareWeighted, Workers: []ModeWorker{w(1, 3), w(2, 0), w(3, 1)}}, map[WorkerID]float64{2: 1}, ""},
		// device_aware_group_uses_ratio_budget: non-CPU 8 in flight, 2+2 workers,
		// ratio 2 → budget 4; CPU 3 < 4 → CPU group; least loaded there is 2.
		{"device aware ratio budget picks cpu", ModeInput{Mode: RouterModeDeviceAwareWeighted, NonCPUToCPURatio: 2,
			Workers: []ModeWorker{cpu(w(1, 3)), cpu(w(2, 0)), w(3, 4), w(4, 4)}}, map[WorkerID]float64{2: 1}, ""},
		{"device aware budget exhausted picks non-cpu", ModeInput{Mode: RouterModeDeviceAwareWeighted, NonCPUToCPURatio: 2,
			Workers: []ModeWorker{cpu(w(1, 4)), cpu(w(2, 0)), w(3, 4), w(4, 4)}}, map[WorkerID]float64{3: 0.5, 4: 0.5}, ""},
		// round_robin_excludes_overloaded_workers_from_candidates.
		{"round robin excludes overloaded", ModeInput{Mode: RouterModeRoundRobin, Workers: []ModeWorker{busy(w(1, 0)), w(2, 0)}}, map[WorkerID]float64{2: 1}, ""},
		{"round robin rotation unknown", ModeInput{Mode: RouterModeRoundRobin, Workers: []ModeWorker{w(1, 9), w(2, 0), w(3, 0), w(4, 0)}},
			map[WorkerID]float64{1: 0.25, 2: 0.25, 3: 0.25, 4: 0.25}, ""},
		{"random uniform", ModeInput{Mode: RouterModeRandom, Workers: []ModeWorker{w(1, 0), w(2, 0), busy(w(3, 0))}}, map[WorkerID]float64{1: 0.5, 2: 0.5}, ""},
		// selected_overloaded_worker_is_rejected_before_dispatch: the only worker
		// is overloaded → "All workers are busy".
		{"all overloaded", ModeInput{Mode: RouterModeRoundRobin, Workers: []ModeWorker{busy(w(1, 0))}}, nil, ErrKindAllWorkersBusy},
		{"no instances", ModeInput{Mode: RouterModeRandom}, nil, ErrKindNoInstances},
		{"direct names a worker", ModeInput{Mode: RouterModeDirect, Workers: []ModeWorker{w(1, 0), w(2, 0)}, Target: target(2)}, map[WorkerID]float64{2: 1}, ""},
		{"direct without a target", ModeInput{Mode: RouterModeDirect, Workers: []ModeWorker{w(1, 0)}}, nil, ErrKindDirectTargetMissing},
		{"direct unknown target", ModeInput{Mode: RouterModeDirect, Workers: []ModeWorker{w(1, 0)}, Target: target(9)}, nil, ErrKindDirectTargetNotFound},
		{"direct overloaded target", ModeInput{Mode: RouterModeDirect, Workers: []ModeWorker{busy(w(1, 0))}, Target: target(1)}, nil, ErrKindSelectedWorkerOverloaded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := SelectByMode(tt.in, &ScriptedRand{Draws: []float64{0.99}})
			if err != nil {
				t.Fatal(err)
			}
			if !d.IgnoresConstraints {
				t.Error("IgnoresConstraints = false; no non-KV picker reads routing constraints")
			}
			if d.ErrorKind != tt.wantErr {
				t.Fatalf("ErrorKind = %q (%s), want %q", d.ErrorKind, d.Error, tt.wantErr)
			}
			if tt.wantErr != "" {
				return
			}
			sum := 0.0
			for _, c := range d.Candidates {
				sum += c.Probability
				if got, want := c.Probability, tt.want[c.Worker.ID]; math.Abs(got-want) > 1e-12 {
					t.Errorf("P(%d) = %v, want %v", c.Worker.ID, got, want)
				}
				if c.Selected && c.Probability == 0 {
					t.Errorf("selected %d has probability 0", c.Worker.ID)
				}
			}
			if math.Abs(sum-1) > 1e-12 {
				t.Errorf("probabilities sum to %v", sum)
			}
		})
	}
}

func TestParseRouterMode(t *testing.T) {
	for in, want := range map[string]RouterMode{
		"round-robin": RouterModeRoundRobin, "round_robin": RouterModeRoundRobin, "Random": RouterModeRandom,
		"power-of-two": RouterModePowerOfTwo, "power_of_two_choices": RouterModePowerOfTwo, "kv": RouterModeKV,
		"direct": RouterModeDirect, "least_loaded": RouterModeLeastLoaded, "device_aware_weighted": RouterModeDeviceAwareWeighted,
	} {
		if got, err := ParseRouterMode(in); err != nil || got != want {
			t.Errorf("ParseRouterMode(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseRouterMode("fastest"); err == nil {
		t.Error("ParseRouterMode(fastest): want an error")
	}
}

func TestSelectByModeRejectsKV(t *testing.T) {
	if _, err := SelectByMode(ModeInput{Mode: RouterModeKV}, nil); err == nil {
		t.Fatal("SelectByMode(kv): want an error, kv runs Select")
	}
}

// TestRoundRobinCounter: a caller-kept counter makes round-robin the
// runtime's rotation (free_ids[counter % n], then fetch_add). The first pick,
// with the counter not yet known, is the single dry run's uniform draw; the
// rotation continues from it, skips busy workers (they are not in free_ids)
// and wraps.
func TestRoundRobinCounter(t *testing.T) {
	ws := []ModeWorker{{ID: 30}, {ID: 10}, {ID: 20}}
	c := &RoundRobinCounter{}
	first, err := SelectByMode(ModeInput{Mode: RouterModeRoundRobin, Workers: ws, Counter: c}, &ScriptedRand{Draws: []float64{0.5}})
	if err != nil {
		t.Fatal(err)
	}
	// Draw 0.5 over ids 10, 20, 30 (1/3 each) lands on 20: free index 1.
	if first.Selected != 20 || !c.Known || c.Next != 2 {
		t.Fatalf("first pick %d, counter %+v", first.Selected, *c)
	}
	for _, p := range first.Candidates {
		if math.Abs(p.Probability-1.0/3) > 1e-15 {
			t.Errorf("first pick: %d has probability %v, want 1/3", p.Worker.ID, p.Probability)
		}
	}
	var got []WorkerID
	for i := range 5 {
		in := ModeInput{Mode: RouterModeRoundRobin, Workers: ws, Counter: c}
		if i == 2 {
			in.Workers = []ModeWorker{{ID: 30}, {ID: 10, Overloaded: true}, {ID: 20}}
		}
		d, err := SelectByMode(in, nil)
		if err != nil {
			t.Fatal(err)
		}
		if p := d.Candidates[slices.IndexFunc(d.Candidates, func(c ModeCandidate) bool { return c.Selected })].Probability; p != 1 {
			t.Errorf("pick %d has probability %v with a known counter", i, p)
		}
		got = append(got, d.Selected)
	}
	// Counter 2 → 30, 3 → 10, 4 with 10 busy → free [20 30][0] = 20, 5 → 30, 6 → 10.
	want := []WorkerID{30, 10, 20, 30, 10}
	if !slices.Equal(got, want) || c.Next != 7 {
		t.Errorf("rotation %v (counter %d), want %v (7)", got, c.Next, want)
	}
}
