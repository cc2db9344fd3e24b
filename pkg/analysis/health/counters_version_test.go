package health

import (
	"slices"
	"strings"
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/behavior"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
)

// kvEvents sets what the frontend's /metrics say about KV events, shaped as
// bldKvEvents reads upstream's series (RouterWorkerStatusMetrics and
// KvIndexerMetrics, lib/llm/src/kv_router/metrics.rs).
func kvEvents(storedOK, requests uint64, mism ...model.KvEventSourceMismatch) depOpt {
	return func(d *model.Deployment) {
		d.KvEvents = &model.KvEventsInfo{Source: "frontend /metrics", SourceMismatch: mism,
			Applied:        []model.KvEventsApplied{{EventType: "stored", Status: "ok", Count: storedOK}},
			RoutedRequests: u64(requests)}
	}
}

// endpoints gives every worker of a role the Dynamo endpoint upstream's
// disagg_router.yaml registers ("dynamo/prefill/generate" for the prefill set).
func endpoints(role model.Role, comp string) depOpt {
	return workers(role, func(w *model.Worker) {
		for i := range w.Instances {
			w.Instances[i].Endpoint = "dynamo/" + comp + "/generate"
		}
	})
}

func frontendArgs(argv string, env map[string]string) depOpt {
	return func(d *model.Deployment) {
		d.Frontends[0].Argv, d.Frontends[0].Env = words(argv), env
	}
}

func twoFrontends(d *model.Deployment) {
	f := d.Frontends[0]
	f.Pod = "vllm-v1-disagg-router-frontend-1"
	d.Frontends = append(d.Frontends, f)
}

func busyDecode(source string) depOpt {
	return func(d *model.Deployment) {
		d.Router.Thresholds.ActiveDecodeBlocksThreshold = f64(0.05)
		d.Router.ThresholdsSource = source
	}
}

func TestFindingsCountersAndVersions(t *testing.T) {
	withEvents := prefillArgs(vllmPrefillNoEvents+" --kv-events-config "+vllmKvEventsConfig, nil)
	prefillSet := endpoints(model.RolePrefill, "prefill")
	mism := func(comp string, n uint64) model.KvEventSourceMismatch {
		return model.KvEventSourceMismatch{Model: "Qwen/Qwen3-0.6B", WorkerType: "prefill", TargetNamespace: "dynamo", TargetComponent: comp, TargetEndpoint: "generate", Workers: n}
	}
	cases := []struct {
		name     string
		snap     *model.Snapshot
		opts     Options
		want     []string
		contains []string
		absent   []string
	}{
		// Frontend counters.
		{name: "gauge > 0 confirms the command-line finding", snap: disaggRouter(prefillSet, kvEvents(5, 4210, mism("prefill", 2))),
			want: []string{"KvEventsNotPublished warning"}, contains: []string{"no --kv-events-config", "the router itself counts 2 workers without a KV event source",
				`target_component="prefill"`}},
		{name: "gauge 0 for the set clears a command-line suspicion", snap: disaggRouter(prefillSet, kvEvents(5, 4210, mism("prefill", 0)))},
		{name: "gauge 0 does not clear a card that says false", snap: disaggRouter(prefillSet, cardPublishes(model.RolePrefill, false), kvEvents(5, 4210, mism("prefill", 0))),
			want: []string{"KvEventsNotPublished warning"}, contains: []string{"kv_event_publishing_enabled false"}},
		{name: "gauge > 0 where the command line looked fine raises it", snap: disaggRouter(withEvents, prefillSet, kvEvents(5, 4210, mism("prefill", 1))),
			want: []string{"KvEventsNotPublished warning"}, contains: []string{"worker set VllmPrefillWorker (2 workers", "counts 1 worker without a KV event source"}},
		{name: "gauge of another worker set is not this one's", snap: disaggRouter(withEvents, prefillSet, kvEvents(5, 4210, mism("backend", 3)))},
		{name: "unlabelled first gauge applies to the deployment", snap: disaggRouter(withEvents, kvEvents(5, 4210, model.KvEventSourceMismatch{Workers: 1})),
			want: []string{"KvEventsNotPublished warning"}, contains: []string{"dynamo_component_router_kv_event_source_mismatch_workers{} 1"}},
		{name: "0 stored events over many requests is said", snap: disaggRouter(kvEvents(0, 4210)),
			want: []string{"KvEventsNotPublished warning"}, contains: []string{"applied 0 stored KV events over 4210 routed requests"}},
		{name: "0 stored events at a cold start is not evidence", snap: disaggRouter(kvEvents(0, 99)),
			want: []string{"KvEventsNotPublished warning"}, absent: []string{"applied 0 stored"}},
		{name: "stored events while every worker looks silent: the args reading is contradicted", snap: disaggRouter(
			workers(model.RoleDecode, func(w *model.Worker) { w.Argv = words(vllmPrefillNoEvents) }),
			func(d *model.Deployment) { d.Router.Config.ConditionalDisaggEnabled = true }, kvEvents(12, 4210))},
		{name: "stored events from other workers do not clear a set", snap: disaggRouter(kvEvents(12, 4210)), want: []string{"KvEventsNotPublished warning"}},

		// Versions: KV events.
		{name: "vLLM bare args before 1.1: Dynamo made the events config itself (#6404, #7591)", snap: disaggRouter(), opts: Options{DynamoVersion: "1.0.1"}},
		{name: "a legacy profile without a version is taken as 1.1", snap: disaggRouter(), opts: Options{DynamoVersion: string(routecore.ProfileLegacyV1_1)},
			want: []string{"KvEventsNotPublished warning"}},
		{name: "a legacy profile: busy answers 503", snap: disaggRouter(withEvents, busyDecode("frontend /busy_threshold")), opts: Options{DynamoVersion: string(routecore.ProfileLegacyV1_1)},
			want: []string{"AllWorkersBusy warning", "AllWorkersBusy warning"}, contains: []string{"HTTP 503"}},
		{name: "vLLM bare args in 1.1", snap: disaggRouter(), opts: Options{DynamoVersion: "v1.1.0"}, want: []string{"KvEventsNotPublished warning"}},
		{name: "TRT-LLM before 1.3: the fix is --publish-events-and-metrics", snap: disaggRouter(prefillArgs("python3 -m dynamo.trtllm --disaggregation-mode prefill", nil)),
			opts: Options{DynamoVersion: "1.2.1"}, want: []string{"KvEventsNotPublished warning"}},

		// Versions: disaggregation.
		{name: "no prefill worker, 1.0.x default fails requests (#6515)", snap: disaggRouter(withEvents, noPrefill), opts: Options{DynamoVersion: "1.0.0"},
			want: []string{"DisaggNotActive error"}, contains: []string{"PrefillError::NotActivated", "#6515"}},
		{name: "no prefill worker, 1.2 default runs aggregated (#6957)", snap: disaggRouter(withEvents, noPrefill), opts: Options{DynamoVersion: "1.2.0"},
			want: []string{"DisaggNotActive warning"}},
		{name: "no prefill worker, 1.3 and later: ModelNotReady, not this rule (#11160)", snap: disaggRouter(withEvents, noPrefill), opts: Options{DynamoVersion: "1.3.0"}},
		{name: "--decode-fallback read in 1.0", snap: disaggRouter(withEvents, noPrefill, frontendArgs("python3 -m dynamo.frontend --decode-fallback", nil)),
			opts: Options{DynamoVersion: "1.0.0"}, want: []string{"DisaggNotActive warning"}},

		// Versions: busy.
		{name: "busy 1.2 without --admission-control token-capacity: thresholds cleared (#9694)", snap: disaggRouter(withEvents, busyDecode("frontend pod f (args/env)")),
			opts: Options{DynamoVersion: "1.2.0"}},
		{name: "busy 1.2 with --admission-control token-capacity: 503", snap: disaggRouter(withEvents, busyDecode("frontend pod f (args/env)"),
			frontendArgs("python3 -m dynamo.frontend --admission-control token-capacity", nil)),
			opts: Options{DynamoVersion: "1.2.0"}, want: []string{"AllWorkersBusy warning", "AllWorkersBusy warning"}, contains: []string{"HTTP 503"}},
		{name: "busy 1.2 with a live /busy_threshold answer is trusted", snap: disaggRouter(withEvents, busyDecode("frontend /busy_threshold")),
			opts: Options{DynamoVersion: "1.2.0"}, want: []string{"AllWorkersBusy warning", "AllWorkersBusy warning"}},
		{name: "busy newest: 529, thresholds opt-in (#11276)", snap: disaggRouter(withEvents, busyDecode("frontend pod f (args/env)")),
			want: []string{"AllWorkersBusy warning", "AllWorkersBusy warning"}, contains: []string{"HTTP 529"}},
		{name: "busy newest with DYN_HTTP_OVERLOAD_STATUS_CODE (#11249)", snap: disaggRouter(withEvents, busyDecode("frontend pod f (args/env)"),
			frontendArgs("python3 -m dynamo.frontend", map[string]string{"DYN_HTTP_OVERLOAD_STATUS_CODE": "503"})),
			want: []string{"AllWorkersBusy warning", "AllWorkersBusy warning"}, contains: []string{"HTTP 503 (DYN_HTTP_OVERLOAD_STATUS_CODE)"}},

		// Versions: replicas and session affinity.
		{name: "1.3 session affinity with replica sync: bindings still per replica (#11035)", snap: disaggRouter(withEvents, twoFrontends,
			func(d *model.Deployment) { d.Router.Config.RouterReplicaSync = true },
			frontendArgs("python3 -m dynamo.frontend --router-session-affinity-ttl-secs 300", nil)),
			opts: Options{DynamoVersion: "1.3.0"}, want: []string{"RouterReplicasNotSynced warning"}, contains: []string{"TTL 300s", "#11035"}},
		{name: "1.4 session affinity syncs itself (#11750)", snap: disaggRouter(withEvents, twoFrontends,
			func(d *model.Deployment) { d.Router.Config.RouterReplicaSync = true },
			frontendArgs("python3 -m dynamo.frontend --router-session-affinity-ttl-secs 300", nil)),
			opts: Options{DynamoVersion: "1.4.0"}},
		{name: "no replica sync, newest, TTL: the load view still diverges", snap: disaggRouter(withEvents, twoFrontends,
			frontendArgs("python3 -m dynamo.frontend", map[string]string{"DYN_ROUTER_SESSION_AFFINITY_TTL_SECS": "60"})),
			want: []string{"RouterReplicasNotSynced warning"}, contains: []string{"syncs its own bindings regardless (#11750)"}},

		// Routing quality from the cache-reuse funnel.
		{name: "funnel: picked 10% of 50% reachable", snap: disaggRouter(withEvents, funnel(3000, 3000000, 1500000, 300000)),
			want: []string{"KvRoutingGivesAwayCache warning"}, contains: []string{"holding 10% of the input tokens in cache where 50% was cached", "gives away 80%"}},
		{name: "funnel: nothing cached on the picked workers", snap: disaggRouter(withEvents, funnel(3000, 3000000, 1500000, 0)),
			want: []string{"KvRoutingGivesAwayCache warning"}},
		{name: "funnel: just above half kept", snap: disaggRouter(withEvents, funnel(3000, 3000000, 1500000, 750001))},
		{name: "funnel: cold start", snap: disaggRouter(withEvents, funnel(999, 3000000, 1500000, 0))},
		{name: "funnel: under 20% reachable", snap: disaggRouter(withEvents, funnel(3000, 3000000, 599999, 0))},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fs := FindingsWith(tc.snap, tc.opts)
			var got []string
			for _, f := range fs {
				got = append(got, f.ID+" "+string(f.Severity))
				if f.Hint == "" || f.Message == "" || len(f.Objects) == 0 {
					t.Errorf("finding %s lacks a message, hint or objects: %+v", f.ID, f)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("findings = %q, want %q\n%+v", got, tc.want, fs)
			}
			for _, s := range tc.contains {
				if !strings.Contains(fs[0].Message+" "+fs[0].Hint, s) {
					t.Errorf("finding does not contain %q:\n%s\n%s", s, fs[0].Message, fs[0].Hint)
				}
			}
			for _, s := range tc.absent {
				if len(fs) > 0 && strings.Contains(fs[0].Message, s) {
					t.Errorf("finding contains %q:\n%s", s, fs[0].Message)
				}
			}
		})
	}
}

func TestTRTLLMFixFollowsRelease(t *testing.T) {
	snap := disaggRouter(prefillArgs("python3 -m dynamo.trtllm --disaggregation-mode prefill", nil))
	old := FindingsWith(snap, Options{DynamoVersion: "1.2.1"})
	if len(old) != 1 || !strings.HasPrefix(old[0].Hint, "add --publish-events-and-metrics") {
		t.Fatalf("%+v", old)
	}
	newest := Findings(snap)
	if len(newest) != 1 || !strings.HasPrefix(newest[0].Hint, "add --publish-kv-events") {
		t.Fatalf("%+v", newest)
	}
}

func TestParseRelease(t *testing.T) {
	for _, ok := range []string{"", "1.3.0", "v1.2", "1.4.0-dev.1", "latest", "legacy-v1.1", "pre-clamp"} {
		if err := ParseRelease(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"banana", "1", "1.x", "-1.2", strings.Repeat("1", 70) + ".1"} {
		if err := ParseRelease(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	// An unparsable version in Options is the newest behaviour, not a panic.
	if fs := FindingsWith(disaggRouter(), Options{DynamoVersion: "banana"}); len(fs) != 1 {
		t.Fatalf("%+v", fs)
	}
}

func noPrefill(d *model.Deployment) {
	d.Workers = slices.DeleteFunc(d.Workers, func(w model.Worker) bool { return w.Role == model.RolePrefill })
}

func funnel(attempts, f0, f2, f3 uint64) depOpt {
	return func(d *model.Deployment) {
		d.RoutingQuality = &model.RoutingQuality{Source: "frontend /metrics", Funnel: []model.RoutingFunnelPhase{{Phase: "prefill",
			Attempts: attempts, InputTokens: f0, BestEligibleCachedTokens: f2, SelectedCachedTokens: f3}}}
	}
}

// TestProfileNamesAreReleases: a profile name given as --dynamo-version is
// judged as the releases it stands for (legacy-v1.2 → 1.2, the older legacy
// profiles → before 1.2, latest → the newest).
func TestProfileNamesAreReleases(t *testing.T) {
	for _, tc := range []struct {
		name         string
		before12     bool
		is12, before bool
	}{
		{"legacy-v1.2", false, true, true},
		{"legacy-v1.1", true, false, true},
		{"legacy-tree-size", true, false, true},
		{"latest", false, false, false},
	} {
		r, err := behavior.ParseRelease(tc.name)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if r.Before(1, 2) != tc.before12 || r.Is(1, 2) != tc.is12 || r.Before(1, 3) != tc.before {
			t.Errorf("%s: before 1.2 %v, is 1.2 %v, before 1.3 %v", tc.name, r.Before(1, 2), r.Is(1, 2), r.Before(1, 3))
		}
	}
}
