package simulate

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/explain"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/simulate/trace"
)

// TestStallGuard: were the loop to stop advancing again, it fails loudly
// (an internal error, exit 1) instead of running forever. The old fixed
// tolerance is put back to make it stall.
func TestStallGuard(t *testing.T) {
	testHookDoneTol = func(*state, *unit) float64 { return 1e-9 }
	defer func() { testHookDoneTol = nil }()
	snap, dep, _ := example(t, "prefill-only-zone-required.yaml")
	_, err := runLive(t, Options{Snapshot: snap, Deployment: dep, Base: explain.Options{Seed: 1, AssumeIdle: true}, Engine: DefaultEngine(), Open: opener(repeatedConversation(t, 48, 20))})
	if !errors.Is(err, ErrInternal) || !strings.Contains(err.Error(), "virtual time stopped advancing at ") {
		t.Fatalf("err = %v, want the progress guard's internal error", err)
	}
	t.Log(err)
}

// TestNumbersStayInRange: inputs that made the model's times infinite (and
// panicked, with Go's exit status 2) are refused up front, times past the
// horizon are an error, and a panic that still happens comes back as an
// internal error.
func TestNumbersStayInRange(t *testing.T) {
	snap, dep, _ := example(t, "prefill-only-zone-required.yaml")
	two := []trace.Request{{Tokens: seqTokens(32, 1), OutputTokens: 4}, {Arrival: time.Hour, Tokens: seqTokens(32, 100), OutputTokens: 4}}
	slow := DefaultEngine()
	slow.PrefillTokensPerSecondPerGPU = 1e-300
	tinyStep := DefaultEngine()
	tinyStep.DecodeStepMs = 1e-300
	longDecode := DefaultEngine()
	longDecode.DecodeStepMs = MaxStepMs
	tests := []struct {
		name     string
		o        Options
		want     string
		internal bool
	}{
		{"--speedup 1e-300", Options{Speedup: 1e-300}, "--speedup must be a positive number from 1e-6 to 1e9, got 1e-300", false},
		{"--speedup +Inf", Options{Speedup: math.Inf(1)}, "--speedup must be a positive number from 1e-6 to 1e9", false},
		{"prefill 1e-300 tokens/s", Options{Engine: slow}, "engine model: prefillTokensPerSecondPerGPU must be a number from 1 to 1e9, got 1e-300", false},
		{"a decode step of 1e-300 ms", Options{Engine: tinyStep}, "engine model: decodeStepMs must be a number from 0.001 to 1e6", false},
		{"arrivals past the horizon", Options{Speedup: MinSpeedup}, "trace request 2 arrives 41666d16h0m0s after the first at --speedup 1e-06, past the simulator's horizon of 1157d9h46m40s of virtual time: raise --speedup", false},
		{"decode past the horizon", Options{Engine: longDecode, Open: opener([]trace.Request{{Tokens: seqTokens(32, 1), OutputTokens: trace.MaxOutputTokens}})}, "the engine model's timings take a request past the simulator's horizon", false},
		{"a panic", Options{OnDecision: func(int, int, explain.CoreDecision) { panic("boom") }}, "internal error in the simulation: boom; this is a bug in kubectl-dynamo", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := tt.o
			o.Snapshot, o.Deployment, o.Base = snap, dep, explain.Options{Seed: 1, AssumeIdle: true}
			if o.Engine == (Engine{}) {
				o.Engine = DefaultEngine()
			}
			if o.Open == nil {
				o.Open = opener(two)
			}
			_, err := runLive(t, o)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v\nwant %q", err, tt.want)
			}
			if errors.Is(err, ErrInternal) != tt.internal {
				t.Errorf("internal error: %v, want %v", errors.Is(err, ErrInternal), tt.internal)
			}
		})
	}
}
