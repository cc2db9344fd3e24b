package e2e

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/fakefrontend"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/simulate"
)

// The live simulate tests run `kubectl dynamo simulate` through the real
// kubectl against the real API server holding the prefill-only-zone example,
// as the least-privilege user "inspector", with a fake Dynamo frontend serving
// the example's /metrics and /busy_threshold and a placements stream.

// simulateSynthetic is the traffic of the live runs: synthetic, so that it
// needs no file on the cluster side.
const simulateSynthetic = "rate=20,isl=100-1500,osl=8-64,prefix-share=0.5,prefixes=3,requests=60"

// simulateRun is one simulate run through kubectl.
type simulateRun struct {
	r              simulate.Report
	stdout, stderr string
	code           int
	elapsed        time.Duration
}

// runSimulate runs `kubectl dynamo simulate ARGS` and decodes -o json (when
// asked for) on exit 0 or 2.
func runSimulate(t *testing.T, kubeconfig string, args ...string) simulateRun {
	t.Helper()
	began := time.Now()
	out, errOut, code := kubectlWith(t, kubeconfig, append([]string{"dynamo", "simulate"}, args...)...)
	r := simulateRun{stdout: out, stderr: errOut, code: code, elapsed: time.Since(began)}
	if (code == 0 || code == 2) && slices.Contains(args, "json") {
		dec := json.NewDecoder(strings.NewReader(out))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&r.r); err != nil {
			t.Fatalf("not a SimulationReport (exit %d): %v\n%s\nstderr: %s", code, err, trimOut(out), errOut)
		}
		if r.r.Kind != simulate.Kind || r.r.APIVersion != simulate.APIVersion {
			t.Fatalf("kind %s/%s", r.r.APIVersion, r.r.Kind)
		}
	}
	t.Logf("simulate %s: exit %d in %v", strings.Join(args, " "), code, r.elapsed.Round(time.Millisecond))
	return r
}

// TestSimulateLive: the plugin reads the deployment from the API server and
// the frontend, replays synthetic traffic, reports the deployment's workers
// and domains as the offline capture does, exits 2 for the zone without
// decode (0 under --fail-on none), and sends only get/list/watch to the API
// server and only GETs to the frontend.
func TestSimulateLive(t *testing.T) {
	f := newExplainFixture(t, exampleQwen)
	ids := dwmInstanceIDs(t, f.bundle)
	cfg := f.frontendConfig(t, "qwen3-32b", qwenModel)
	cfg.Sources = []fakefrontend.PlacementSource{{
		Model: qwenModel, Namespace: qwenDynNS, Component: "prefill", Endpoint: "generate", BlockSize: 16, Cursor: 7,
		Events: []routecore.RouterEvent{f.stored(ids[pod1c0], 1, overlap1c0), f.stored(ids[pod1a0], 1, overlap1a0)},
	}}
	fe := fakefrontend.New(cfg)
	defer fe.Close()

	offset, err := f.e.AuditOffset()
	if err != nil {
		t.Fatal(err)
	}
	base := []string{"qwen3-32b", "-n", "serving", "--frontend-url", fe.URL, "--synthetic", simulateSynthetic, "--seed", "1"}
	live := runSimulate(t, f.kc, append(slices.Clone(base), "--variant", "decode+1@us-east-1c", "--variant", "down=us-east-1c", "-o", "json")...)
	if live.code != 2 || live.stderr != "" {
		t.Fatalf("exit %d, want 2 (prefills in us-east-1c fail at decode) and no message with -o json; stderr:\n%s", live.code, live.stderr)
	}
	r := live.r
	if r.Deployment != "qwen3-32b" || r.Namespace != "serving" || r.DomainKey != "zone" || r.Model != qwenModel || r.Seed != 1 ||
		r.Trace.Format != "synthetic" || r.Trace.Source != simulateSynthetic || r.Trace.Requests != 60 || r.Trace.RouterBlockSize != 16 {
		t.Errorf("report header: %s/%s domain %q model %q seed %d trace %+v", r.Namespace, r.Deployment, r.DomainKey, r.Model, r.Seed, r.Trace)
	}
	if len(r.Variants) != 3 {
		t.Fatalf("%d variants, want 3", len(r.Variants))
	}
	// The deployment as it is: 4 prefill and 6 decode workers over 3 zones,
	// us-east-1c with prefill only.
	type pd struct{ p, d int }
	wantDomains := [][]string{{"us-east-1a", "us-east-1b", "us-east-1c"}, {"us-east-1a", "us-east-1b", "us-east-1c"}, {"us-east-1a", "us-east-1b"}}
	wantPD := []map[string]pd{
		{"us-east-1a": {1, 3}, "us-east-1b": {1, 3}, "us-east-1c": {2, 0}},
		{"us-east-1a": {1, 3}, "us-east-1b": {1, 3}, "us-east-1c": {2, 1}},
		{"us-east-1a": {1, 3}, "us-east-1b": {1, 3}},
	}
	wantWorkers := []int{10, 11, 8}
	for i, v := range r.Variants {
		var doms []string
		for _, d := range v.Domains {
			doms = append(doms, d.Value)
			if got := (pd{d.PrefillWorkers, d.DecodeWorkers}); got != wantPD[i][d.Value] {
				t.Errorf("variant %s: %s has %d/%d prefill/decode workers, want %v", v.Name, d.Value, got.p, got.d, wantPD[i][d.Value])
			}
		}
		if !slices.Equal(doms, wantDomains[i]) || len(v.Workers) != wantWorkers[i] {
			t.Errorf("variant %s: domains %v, %d workers; want %v, %d", v.Name, doms, len(v.Workers), wantDomains[i], wantWorkers[i])
		}
		if v.Requests != 60 || v.Routed+v.Failed != 60 {
			t.Errorf("variant %s: %d requests, %d routed, %d failed", v.Name, v.Requests, v.Routed, v.Failed)
		}
	}
	if v := r.Variants[0]; v.Failed == 0 || v.Failures[0].Kind != "NoEndpoints" || v.Failures[0].Stage != routecore.StageDecode {
		t.Errorf("as deployed: %d failed %+v, want NoEndpoints at the decode hop", v.Failed, v.Failures)
	}
	for _, v := range r.Variants[1:] {
		for _, fc := range v.Failures {
			if fc.Kind == "NoEndpoints" {
				t.Errorf("variant %s still fails with NoEndpoints: %+v", v.Name, fc)
			}
		}
	}
	// The KV contents came from the placements stream, the loads from /metrics.
	for _, a := range r.Assumptions {
		if strings.Contains(a, "KV caches start empty") {
			t.Errorf("the placements stream was not used: %s", a)
		}
	}
	if countRequests(fe, "GET", fakefrontend.PathPlacements) == 0 || countRequests(fe, "GET", fakefrontend.PathMetrics) == 0 {
		t.Errorf("placements or metrics not read: %s", requestLog(fe))
	}

	// The same deployment, cold, live and from the capture: the same simulation.
	liveCold := runSimulate(t, f.kc, append(slices.Clone(base), "--cold", "--fail-on", "none", "-o", "json")...)
	offline := runSimulate(t, f.kc, "--from-file", "../../examples/"+exampleQwen, "--synthetic", simulateSynthetic, "--seed", "1", "--cold", "--fail-on", "none", "-o", "json")
	if liveCold.code != 0 || offline.code != 0 {
		t.Fatalf("--fail-on none: exit %d live, %d offline\n%s\n%s", liveCold.code, offline.code, liveCold.stderr, offline.stderr)
	}
	if !reflect.DeepEqual(liveCold.r.Variants, offline.r.Variants) {
		lv, ov := liveCold.r.Variants[0], offline.r.Variants[0]
		t.Errorf("live and offline simulations differ: live routed %d failed %d workers %+v\noffline routed %d failed %d workers %+v",
			lv.Routed, lv.Failed, lv.Workers, ov.Routed, ov.Failed, ov.Workers)
	}

	// Table output: the report on stdout, the exit-2 reason on stderr.
	table := runSimulate(t, f.kc, base...)
	if table.code != 2 || !strings.Contains(table.stdout, "Deployment: serving/qwen3-32b") ||
		!strings.HasPrefix(table.stderr, "the deployment as it is fails ") || !strings.HasSuffix(table.stderr, "; --fail-on any, exit code 2)\n") {
		t.Errorf("table: exit %d\nstdout:\n%s\nstderr:\n%s", table.code, trimOut(table.stdout), table.stderr)
	}
	// Errors: exit 1 before anything is read from the frontend.
	if bad := runSimulate(t, f.kc, "qwen3-32b", "-n", "serving", "--frontend-url", fe.URL); bad.code != 1 || !strings.Contains(bad.stderr, "give the traffic") {
		t.Errorf("no traffic: exit %d, stderr %q", bad.code, bad.stderr)
	}
	if bad := runSimulate(t, f.kc, "nope", "-n", "serving", "--no-frontend", "--synthetic", simulateSynthetic); bad.code != 1 || !strings.Contains(bad.stderr, "nope") {
		t.Errorf("unknown deployment: exit %d, stderr %q", bad.code, bad.stderr)
	}
	// Without a frontend: cold, with a note saying so.
	nofe := runSimulate(t, f.kc, "qwen3-32b", "-n", "serving", "--no-frontend", "--synthetic", simulateSynthetic, "--seed", "1", "--fail-on", "none", "-o", "json")
	if nofe.code != 0 || !slices.ContainsFunc(nofe.r.Assumptions, func(a string) bool { return strings.Contains(a, "KV caches start empty: --no-frontend") }) {
		t.Errorf("--no-frontend: exit %d, assumptions %v\n%s", nofe.code, nofe.r.Assumptions, nofe.stderr)
	}

	waitAudit()
	auditReadOnly(t, f.e, offset, "inspector")
	events, _, _ := f.e.AuditEventsFrom(offset)
	resources := map[string]int{}
	for _, ev := range events {
		if ev.User == "inspector" {
			resources[ev.Verb+" "+auditResource(t, ev, "simulate")]++
		}
	}
	t.Logf("API server requests by verb+resource: %s", sortedCounts(resources))
	if got := nonGET(fe); len(got) != 0 {
		t.Errorf("non-GET requests to the frontend: %v (all: %s)", got, requestLog(fe))
	}
	t.Logf("frontend requests: %s", requestLog(fe))
}
