package simulate_test

import (
	"strings"
	"testing"
)

// TestSimulateReadiness: the TRT-LLM multinode shape before its workers
// register (pods ready, no DynamoWorkerMetadata) has no live worker, so the
// frontend answers every request 404 and simulate says so, with the reason,
// instead of an empty domain table; once registered, the requests are routed.
// Read at 1.3, decode workers without a live prefill worker are refused with
// 503 (the needs rule, #11160); at 1.2 the same requests are served.
func TestSimulateReadiness(t *testing.T) {
	const (
		unregistered = "test/fixtures/upstream/trtllm-disagg-multinode-v1alpha1.yaml"
		registered   = "test/fixtures/upstream/trtllm-disagg-multinode-v1alpha1-registered.yaml"
		traffic      = "rate=10,isl=256,osl=8,requests=40"
	)
	r := runIn(t, "simulate", "--from-file", unregistered, "--synthetic", traffic, "--assume-idle")
	if r.ExitCode != 2 {
		t.Fatalf("exit %d: %s%s", r.ExitCode, r.Stdout, r.Stderr)
	}
	for _, want := range []string{"40 ModelNotReady at the frontend hop", "HTTP 404", "no worker is live", "no worker is routable: no per-domain figures"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.Stdout)
		}
	}

	rep, _ := simJSON(t, "--from-file", registered, "--synthetic", traffic, "--assume-idle")
	v := rep.Variants[0]
	if v.Routed != v.Requests || v.Requests != 40 {
		t.Errorf("registered: %d of %d routed, failures %+v", v.Routed, v.Requests, v.Failures)
	}

	// Every prefill worker down: 1.3 refuses at the frontend (503), 1.2
	// serves aggregated on the decode workers.
	for _, tc := range []struct {
		version string
		refused bool
	}{{"1.3.0", true}, {"1.2.0", false}} {
		rep, _ := simJSON(t, "--from-file", registered, "--synthetic", traffic, "--assume-idle", "--dynamo-version", tc.version, "--variant", "exclude=trtllm-disagg-tp8-0-ctx-0-ctx-ldr-r8hz4")
		if len(rep.Variants) != 2 {
			t.Fatalf("variants %d", len(rep.Variants))
		}
		v := rep.Variants[1]
		refused := v.Failed == v.Requests && len(v.Failures) == 1 && v.Failures[0].Stage == "frontend" && v.Failures[0].Kind == "ModelNotReady" && strings.Contains(v.Failures[0].Example, "503")
		if refused != tc.refused {
			t.Errorf("%s, ctx (prefill) down: refused %v, want %v (%d of %d failed %+v)", tc.version, refused, tc.refused, v.Failed, v.Requests, v.Failures)
		}
	}
}
