package health

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/hermetic"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/build"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/capture"
)

func TestMain(m *testing.M) { hermetic.Main(m) }

func u64(v uint64) *uint64    { return &v }
func f64(v float64) *float64  { return &v }
func i32(v int32) *int32      { return &v }
func words(s string) []string { return strings.Fields(s) }

// Upstream-shaped command lines (ai-dynamo/dynamo examples/backends/*/deploy).
const (
	// vllm/deploy/disagg_router.yaml: no --kv-events-config on either worker set.
	vllmPrefillNoEvents = "python3 -m dynamo.vllm --model Qwen/Qwen3-0.6B --is-prefill-worker"
	vllmDecode          = "python3 -m dynamo.vllm --model Qwen/Qwen3-0.6B --is-decode-worker"
	// vllm/deploy/v1beta1/agg_router.yaml.
	vllmKvEventsConfig = `{"publisher":"zmq","topic":"kv-events","endpoint":"tcp://*:20080","enable_kv_cache_events":true}`
)

type depOpt func(*model.Deployment)

// disaggRouter is upstream's vllm/deploy/disagg_router.yaml as reconciled: a
// frontend with DYN_ROUTER_MODE=kv, two prefill and two decode workers that
// published cards with block size 16 and the frontend's loads.
// atRelease runs every pod on the runtime image of a Dynamo release, which
// the rules then follow (pkg/behavior.Detect).
func atRelease(v string) depOpt {
	return func(d *model.Deployment) {
		for i := range d.Workers {
			d.Workers[i].Image = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:" + v
		}
		for i := range d.Frontends {
			d.Frontends[i].Image = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:" + v
		}
	}
}

func disaggRouter(opts ...depOpt) *model.Snapshot {
	d := model.Deployment{Name: "vllm-v1-disagg-router", Namespace: "dynamo",
		Router: model.RouterInfo{Mode: "kv", ModeSource: "frontend pod env DYN_ROUTER_MODE",
			Config: routecore.DefaultKvRouterConfig(), ConfigSource: "frontend pod vllm-v1-disagg-router-frontend-0 (defaults ← env ← args)"},
		Frontends: []model.Frontend{{Pod: "vllm-v1-disagg-router-frontend-0", Ready: true,
			Argv: words("python3 -m dynamo.frontend"), Env: map[string]string{"DYN_ROUTER_MODE": "kv"}}},
		Components: []model.Component{{Name: "Frontend", Type: "frontend", Replicas: i32(1)}},
	}
	for i, role := range []model.Role{model.RolePrefill, model.RolePrefill, model.RoleDecode, model.RoleDecode} {
		comp, argv := "VllmPrefillWorker", words(vllmPrefillNoEvents)
		if role == model.RoleDecode {
			comp, argv = "VllmDecodeWorker", words(vllmDecode)
		}
		pod := "vllm-v1-disagg-router-" + strings.ToLower(comp) + "-" + string(rune('a'+i))
		d.Workers = append(d.Workers, model.Worker{Pod: pod, Namespace: "dynamo", Component: comp, Role: role, Replica: pod, Leader: true, Ready: true,
			Argv: argv, Instances: []model.Instance{{ID: routecore.WorkerID(100 + i), Model: "Qwen/Qwen3-0.6B", WorkerType: string(role), BlockSize: 16,
				Runtime: routecore.RuntimeConfig{TotalKvBlocks: u64(1000), MaxNumBatchedTokens: u64(8192)},
				Load:    []model.RankLoad{{ActiveDecodeBlocks: 100, ActivePrefillTokens: 0}}}}})
	}
	for _, o := range opts {
		o(&d)
	}
	return &model.Snapshot{Deployments: []model.Deployment{d}}
}

// quality sets the frontend's decision-quality counters: kv_hit_rate count and
// sum, and one prefill hop's decisions, KV-optimal decisions, input_f0 and
// input_f1.
func quality(hitCount uint64, hitSum float64, decisions, optimal, f0, f1 uint64) depOpt {
	return func(d *model.Deployment) {
		d.RoutingQuality = &model.RoutingQuality{Source: "frontend /metrics",
			KvHitRate: &model.HitRateStat{Sum: hitSum, Count: hitCount},
			Hops: []model.RoutingHopQuality{{WorkerType: "prefill", DecisionCounters: true, Decisions: decisions,
				KvOptimalDecisions: optimal, InputTokens: f0, ReachableCachedTokens: f1}}}
	}
}

func workers(role model.Role, f func(w *model.Worker)) depOpt {
	return func(d *model.Deployment) {
		for i := range d.Workers {
			if d.Workers[i].Role == role {
				f(&d.Workers[i])
			}
		}
	}
}

func ptr[T any](v T) *T { return &v }

// cardPublishes sets runtime_config.kv_event_publishing_enabled on the cards
// of every worker of a role, as workers with #12095 publish it.
func cardPublishes(role model.Role, on bool) depOpt {
	return workers(role, func(w *model.Worker) {
		for i := range w.Instances {
			w.Instances[i].KvEventPublishing = ptr(on)
		}
	})
}

func prefillArgs(argv string, env map[string]string) depOpt {
	return workers(model.RolePrefill, func(w *model.Worker) { w.Argv, w.Env = words(argv), env })
}

func TestFindings(t *testing.T) {
	withEvents := prefillArgs(vllmPrefillNoEvents+" --kv-events-config "+vllmKvEventsConfig, nil)
	cases := []struct {
		name string
		snap *model.Snapshot
		// want are "ID severity" pairs, in report order.
		want []string
		// contains are substrings the first finding's message must have.
		contains []string
	}{
		{name: "upstream disagg_router: KV router, vLLM prefill without --kv-events-config (#4249, #11505)", snap: disaggRouter(),
			want: []string{"KvEventsNotPublished warning"}, contains: []string{"2 prefill workers publish none (vLLM: no --kv-events-config)", "vllm-v1-disagg-router-vllmprefillworker-a"}},
		{name: "agg_router shape: --kv-events-config with enable_kv_cache_events true", snap: disaggRouter(withEvents)},
		{name: "--kv-events-config without enable_kv_cache_events (vLLM default false)",
			snap: disaggRouter(prefillArgs(vllmPrefillNoEvents+` --kv-events-config {"publisher":"zmq"}`, nil)),
			want: []string{"KvEventsNotPublished warning"}, contains: []string{`without "enable_kv_cache_events": true`}},
		{name: "vLLM prefix caching off", snap: disaggRouter(prefillArgs(vllmPrefillNoEvents+" --no-enable-prefix-caching --kv-events-config "+vllmKvEventsConfig, nil)),
			want: []string{"KvEventsNotPublished warning"}, contains: []string{"--no-enable-prefix-caching"}},
		{name: "nested shell: sh -c with the flag inside", snap: disaggRouter(prefillArgs("", nil), workers(model.RolePrefill, func(w *model.Worker) {
			w.Argv = []string{"sh", "-c", "exec python3 -m dynamo.vllm --model Qwen/Qwen3-0.6B --is-prefill-worker --kv-events-config '" + vllmKvEventsConfig + "'"}
		}))},
		{name: "engine args from a file: undecidable, no finding", snap: disaggRouter(prefillArgs(vllmPrefillNoEvents+" --engine-config-json /etc/engine.json", nil))},
		{name: "approximate mode on purpose (--no-router-kv-events)", snap: disaggRouter(func(d *model.Deployment) { d.Router.Config.UseKvEvents = false })},
		{name: "overlap credit 0: no indexer, no events needed", snap: disaggRouter(func(d *model.Deployment) { d.Router.Config.OverlapScoreCredit = 0 })},
		{name: "round-robin frontend: no KV router", snap: disaggRouter(func(d *model.Deployment) { d.Router.Mode = "round-robin" })},
		{name: "worker set router_config kv over a round-robin frontend (#13192)", snap: disaggRouter(func(d *model.Deployment) {
			d.Router.Mode = "round-robin"
			d.Router.WorkerSetOverrides = []model.RouterOverride{{Component: "VllmPrefillWorker", Mode: "kv", Config: routecore.DefaultKvRouterConfig()}}
		}), want: []string{"KvEventsNotPublished warning"}, contains: []string{"router_config worker set VllmPrefillWorker publishes"}},
		{name: "SGLang prefill without --kv-events-config", snap: disaggRouter(prefillArgs("python3 -m dynamo.sglang --model-path Qwen/Qwen3-0.6B --disaggregation-mode prefill", nil)),
			want: []string{"KvEventsNotPublished warning"}, contains: []string{"SGLang: no --kv-events-config"}},
		{name: "SGLang with --kv-events-config", snap: disaggRouter(prefillArgs(`python3 -m dynamo.sglang --disaggregation-mode prefill --kv-events-config {"publisher":"zmq","topic":"kv-events","endpoint":"tcp://*:5557"}`, nil))},
		{name: "TRT-LLM via mpirun bash -c without --publish-kv-events", snap: disaggRouter(workers(model.RolePrefill, func(w *model.Worker) {
			w.Argv = []string{"mpirun", "--allow-run-as-root", "bash", "-c", "trtllm-llmapi-launch python3 -m dynamo.trtllm --model-path /m --disaggregation-mode prefill --extra-engine-args /cfg/prefill.yaml"}
		})), want: []string{"KvEventsNotPublished warning"}, contains: []string{"TensorRT-LLM: no --publish-kv-events"}},
		{name: "TRT-LLM with the deprecated --publish-events-and-metrics", snap: disaggRouter(prefillArgs("python3 -m dynamo.trtllm --disaggregation-mode prefill --publish-events-and-metrics", nil))},
		{name: "card kv_event_publishing_enabled false: certain even with the flag on the command line (#12095)", snap: disaggRouter(withEvents, cardPublishes(model.RolePrefill, false)),
			want: []string{"KvEventsNotPublished warning"}, contains: []string{"2 prefill workers report KV-event publishing disabled (the worker's own model card: runtime_config.kv_event_publishing_enabled false; vLLM)"}},
		{name: "card false with engine args from a file (undecidable from args)", snap: disaggRouter(prefillArgs(vllmPrefillNoEvents+" --engine-config-json /etc/engine.json", nil), cardPublishes(model.RolePrefill, false)),
			want: []string{"KvEventsNotPublished warning"}, contains: []string{"kv_event_publishing_enabled false; vLLM)"}},
		{name: "card false with no command line (etcd-only worker)", snap: disaggRouter(prefillArgs("", nil), cardPublishes(model.RolePrefill, false)),
			want: []string{"KvEventsNotPublished warning"}, contains: []string{"2 prefill workers report KV-event publishing disabled (the worker's own model card: runtime_config.kv_event_publishing_enabled false)"}},
		{name: "card false on one of two prefill workers", snap: disaggRouter(withEvents, func(d *model.Deployment) { d.Workers[1].Instances[0].KvEventPublishing = ptr(false) }),
			want: []string{"KvEventsNotPublished warning"}, contains: []string{"1 prefill worker reports", "vllm-v1-disagg-router-vllmprefillworker-b"}},
		{name: "card true: no finding though the args look bare (config file)", snap: disaggRouter(cardPublishes(model.RolePrefill, true))},
		{name: "card false on decode workers: not scored by their cache without conditional disaggregation", snap: disaggRouter(withEvents, cardPublishes(model.RoleDecode, false))},
		{name: "card false on decode workers under conditional disaggregation", snap: disaggRouter(withEvents, cardPublishes(model.RoleDecode, false), func(d *model.Deployment) {
			d.Router.Config.ConditionalDisaggEnabled = true
		}), want: []string{"KvEventsNotPublished warning"}, contains: []string{"2 decode workers report KV-event publishing disabled", "conditional disaggregation scores decode workers"}},
		{name: "card false but the router does not consume events (--no-router-kv-events)", snap: disaggRouter(cardPublishes(model.RolePrefill, false), func(d *model.Deployment) { d.Router.Config.UseKvEvents = false })},
		{name: "TRT-LLM with DYN_TRTLLM_PUBLISH_KV_EVENTS=true", snap: disaggRouter(prefillArgs("python3 -m dynamo.trtllm --disaggregation-mode prefill", map[string]string{"DYN_TRTLLM_PUBLISH_KV_EVENTS": "true"}))},

		{name: "hash space: one prefill worker with block size 32 (#1233, #7368)", snap: disaggRouter(withEvents, func(d *model.Deployment) { d.Workers[1].Instances[0].BlockSize = 32 }),
			want: []string{"KvHashSpaceMismatch warning"}, contains: []string{"kv_cache_block_size 16 on vllm-v1-disagg-router-vllmprefillworker-a; 32 on vllm-v1-disagg-router-vllmprefillworker-b"}},
		{name: "hash space: EAGLE on one decode worker only", snap: disaggRouter(withEvents, func(d *model.Deployment) { d.Workers[3].Instances[0].Runtime.EnableEagle = true }),
			want: []string{"KvHashSpaceMismatch warning"}, contains: []string{"enable_eagle true on vllm-v1-disagg-router-vllmdecodeworker-d; false on vllm-v1-disagg-router-vllmdecodeworker-c"}},
		{name: "hash space: EAGLE on all decode, none on prefill (separate worker sets, fixed by #9857)", snap: disaggRouter(withEvents, workers(model.RoleDecode, func(w *model.Worker) { w.Instances[0].Runtime.EnableEagle = true }))},

		// Before 1.3 (the images tell 1.2.0): decode without prefill serves
		// aggregated, or fails under --enforce-disagg.
		{name: "disagg: prefill workers gone, decode serves aggregated (#6957, #7131)", snap: disaggRouter(withEvents, atRelease("1.2.0"), workers(model.RolePrefill, func(w *model.Worker) { w.Ready = false })),
			want: []string{"DisaggNotActive warning"}, contains: []string{"2 decode worker(s)", "its 2 prefill workers", "runs aggregated"}},
		{name: "disagg: prefill ready but not registered (no card)", snap: disaggRouter(withEvents, atRelease("1.2.0"), workers(model.RolePrefill, func(w *model.Worker) { w.Instances = nil })),
			want: []string{"DisaggNotActive warning"}},
		{name: "disagg: --enforce-disagg fails every request", snap: disaggRouter(withEvents, atRelease("1.2.0"), workers(model.RolePrefill, func(w *model.Worker) { w.Ready = false }),
			func(d *model.Deployment) {
				d.Frontends[0].Argv = words("python3 -m dynamo.frontend --router-mode kv --enforce-disagg")
			}),
			want: []string{"DisaggNotActive error"}, contains: []string{"PrefillError::NotActivated"}},
		{name: "disagg: DYN_ENFORCE_DISAGG=true", snap: disaggRouter(withEvents, atRelease("1.2.0"), workers(model.RolePrefill, func(w *model.Worker) { w.Ready = false }),
			func(d *model.Deployment) { d.Frontends[0].Env["DYN_ENFORCE_DISAGG"] = "true" }),
			want: []string{"DisaggNotActive error"}},
		{name: "disagg: one prefill worker still serves", snap: disaggRouter(withEvents, func(d *model.Deployment) { d.Workers[0].Ready = false })},
		// From 1.3 the same deployment is an outage: ModelNotReady (pkg/analysis),
		// not this warning.
		{name: "disagg: on 1.3 decode without prefill is ModelNotReady's", snap: disaggRouter(withEvents, atRelease("1.3.0"), workers(model.RolePrefill, func(w *model.Worker) { w.Ready = false }))},

		{name: "replicas: two KV frontends without DYN_ROUTER_REPLICA_SYNC (#589, #14758)", snap: disaggRouter(withEvents, func(d *model.Deployment) {
			d.Frontends = append(d.Frontends, model.Frontend{Pod: "vllm-v1-disagg-router-frontend-1", Ready: true})
		}), want: []string{"RouterReplicasNotSynced warning"}, contains: []string{"2 ready frontend replicas", "1/2 of the load"}},
		{name: "replicas: DGD declares 3 frontend replicas", snap: disaggRouter(withEvents, func(d *model.Deployment) { d.Components[0].Replicas = i32(3) }),
			want: []string{"RouterReplicasNotSynced warning"}, contains: []string{"3 frontend replicas declared in the DGD"}},
		{name: "replicas: synced", snap: disaggRouter(withEvents, func(d *model.Deployment) {
			d.Components[0].Replicas = i32(3)
			d.Router.Config.RouterReplicaSync = true
		})},

		{name: "busy: every decode worker over active_decode_blocks_threshold 0.05 (#9506)", snap: disaggRouter(withEvents, func(d *model.Deployment) {
			d.Router.Thresholds.ActiveDecodeBlocksThreshold = f64(0.05)
			d.Router.ThresholdsSource = "frontend /busy_threshold"
		}), want: []string{"AllWorkersBusy warning", "AllWorkersBusy warning"}, contains: []string{"all 2 decode workers are over a busy threshold", "active_decode_blocks 100 > 50"}},
		{name: "busy: one decode worker free", snap: disaggRouter(withEvents, func(d *model.Deployment) {
			d.Router.Thresholds.ActiveDecodeBlocksThreshold = f64(0.5)
			d.Workers[3].Instances[0].Load[0].ActiveDecodeBlocks = 900
		})},
		{name: "busy: loads unknown", snap: disaggRouter(withEvents, func(d *model.Deployment) {
			d.Router.Thresholds.ActiveDecodeBlocksThreshold = f64(0.01)
			for i := range d.Workers {
				d.Workers[i].Instances[0].Load = nil
			}
		})},

		{name: "quality: 12% achieved of 60% reachable (#14776)", snap: disaggRouter(withEvents, quality(4210, 505.2, 4210, 2560, 1000000, 600000)),
			want: []string{"KvRoutingGivesAwayCache warning"}, contains: []string{"hit rate is 12% where 60% was reachable", "600000 of 1000000 input tokens", "4210 prefill decisions, 2560 of which", "gives away 80%", "Overlap credit 1, temperature 0"}},
		{name: "quality: avoidable prefill tokens cited (#13987)", snap: disaggRouter(withEvents, quality(4210, 505.2, 4210, 2560, 1000000, 600000), func(d *model.Deployment) {
			d.RoutingQuality.Hops[0].AvoidablePrefillTokens = u64(310000)
		}), want: []string{"KvRoutingGivesAwayCache warning"}, contains: []string{"the router counts 310000 avoidable prefill tokens"}},
		{name: "quality: achieved exactly half of reachable fires", snap: disaggRouter(withEvents, quality(2000, 600, 2000, 1000, 1000, 600)),
			want: []string{"KvRoutingGivesAwayCache warning"}},
		{name: "quality: achieved just above half keeps quiet", snap: disaggRouter(withEvents, quality(2000, 601, 2000, 1000, 1000, 600))},
		{name: "quality: cold start, 999 decisions", snap: disaggRouter(withEvents, quality(4210, 0, 999, 0, 1000000, 600000))},
		{name: "quality: cold start, 999 hit-rate observations", snap: disaggRouter(withEvents, quality(999, 0, 4210, 0, 1000000, 600000))},
		{name: "quality: under 20% reachable, nothing to give away", snap: disaggRouter(withEvents, quality(4210, 0, 4210, 0, 1000000, 199999))},
		{name: "quality: 20% reachable exactly is judged", snap: disaggRouter(withEvents, quality(4210, 0, 4210, 0, 1000000, 200000)),
			want: []string{"KvRoutingGivesAwayCache warning"}},
		{name: "quality: released frontend, kv_hit_rate only: no finding", snap: disaggRouter(withEvents, quality(4210, 0, 4210, 0, 1000000, 600000), func(d *model.Deployment) {
			d.RoutingQuality.Hops = nil
		})},
		{name: "quality: no kv_hit_rate: no finding", snap: disaggRouter(withEvents, quality(4210, 0, 4210, 0, 1000000, 600000), func(d *model.Deployment) {
			d.RoutingQuality.KvHitRate = nil
		})},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fs := Findings(tc.snap)
			var got []string
			for _, f := range fs {
				got = append(got, f.ID+" "+string(f.Severity))
				if f.Hint == "" || f.Message == "" || len(f.Objects) == 0 || f.Deployment == "" {
					t.Errorf("finding %s lacks a message, hint, objects or deployment: %+v", f.ID, f)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("findings = %q, want %q\n%+v", got, tc.want, fs)
			}
			for _, s := range tc.contains {
				if !strings.Contains(fs[0].Message, s) {
					t.Errorf("message does not contain %q:\n%s", s, fs[0].Message)
				}
			}
			again := Findings(tc.snap)
			if !slices.EqualFunc(fs, again, func(a, b model.Finding) bool { return a.Message == b.Message && slices.Equal(a.Objects, b.Objects) }) {
				t.Errorf("Findings is not deterministic")
			}
		})
	}
}

func TestFindingsNil(t *testing.T) {
	if fs := Findings(nil); fs != nil {
		t.Fatalf("Findings(nil) = %v", fs)
	}
}

// TestUpstreamFixtures runs the rules on the fixtures rebuilt from upstream's
// disagg-multinode examples (test/fixtures/upstream): their prefill
// workers pass no KV-event flag while the frontend routes in kv mode.
func TestUpstreamFixtures(t *testing.T) {
	cases := map[string][]string{
		"vllm-disagg-multinode-v1beta1.yaml":                 {"KvEventsNotPublished:vLLM: no --kv-events-config"},
		"sglang-disagg-multinode-v1beta1.yaml":               {"KvEventsNotPublished:SGLang: no --kv-events-config"},
		"trtllm-disagg-multinode-v1beta1-zone-required.yaml": {"KvEventsNotPublished:TensorRT-LLM: no --publish-kv-events"},
	}
	for file, want := range cases {
		t.Run(file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("..", "..", "..", "test", "fixtures", "upstream", file))
			if err != nil {
				t.Fatal(err)
			}
			b, err := capture.Parse(data, file)
			if err != nil {
				t.Fatal(err)
			}
			s, err := build.Build(b)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range Findings(s) {
				got = append(got, f.ID)
			}
			if len(got) != len(want) {
				t.Fatalf("findings %v, want %v", got, want)
			}
			for i, w := range want {
				id, text, _ := strings.Cut(w, ":")
				f := Findings(s)[i]
				if f.ID != id || !strings.Contains(f.Message, text) {
					t.Errorf("finding %d = %s %q, want %s containing %q", i, f.ID, f.Message, id, text)
				}
			}
		})
	}
}

// TestDocumented checks that every id has its section in docs/findings.md with
// the upstream references it is built on.
func TestDocumented(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "findings.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	for _, id := range FindingIDs() {
		i := strings.Index(doc, "\n## "+id+"\n")
		if i < 0 {
			t.Errorf("docs/findings.md has no section ## %s", id)
			continue
		}
		sec := doc[i+1:]
		if j := strings.Index(sec[3:], "\n## "); j >= 0 {
			sec = sec[:j+3]
		}
		for _, part := range []string{"**Severity:**", "**Fix.**", "**Upstream.**"} {
			if !strings.Contains(sec, part) {
				t.Errorf("section %s lacks %s", id, part)
			}
		}
		if !regexp.MustCompile(`#\d{3,5}`).MatchString(sec) {
			t.Errorf("section %s cites no upstream issue", id)
		}
	}
}
