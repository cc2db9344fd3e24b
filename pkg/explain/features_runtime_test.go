package explain

import (
	"slices"
	"strings"
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
)

// TestRuntimeStateMayDiffer covers the per-request router state the dry run
// cannot see, each configured as upstream configures it on the example
// deployments (rebuilt from Dynamo's own manifests): request migration
// (frontend --migration-limit / DYN_MIGRATION_LIMIT since Dynamo #5918, a
// worker's --migration-limit before it), worker quarantine after a failure
// (DYN_RUNTIME_INHIBITED_DURATION_SECS, #11993; DYN_HTTP_BACKEND_STREAM_TIMEOUT_SECS
// in lib/runtime push_router.rs) and the router queue whose due times shed
// requests with DeadlineExceeded (router_queue_threshold, #14123/#14176).
func TestRuntimeStateMayDiffer(t *testing.T) {
	for _, tc := range []struct {
		name    string
		example string
		argv    []string          // appended to the frontend's command line
		env     map[string]string // added to the frontend's DYN_* env
		worker  []string          // appended to every worker's command line
		router  string            // a prefill worker set's router_config
		queue   float64           // the frontend's router_queue_threshold as pkg/build reads it from argv; 0 for none
		feature string            // the mayDiffer feature expected; "" for none
		hop     string
		detail  []string // substrings of the detail
	}{
		{name: "frontend env DYN_MIGRATION_LIMIT", example: "vllm-disagg-default-router.yaml",
			env: map[string]string{"DYN_MIGRATION_LIMIT": "3"}, feature: "migration",
			detail: []string{"migration_limit=3, frontend env DYN_MIGRATION_LIMIT", "up to 3 time(s)", "#11647", "#13736", "first attempt only"}},
		{name: "frontend flag wins over env", example: "healthy-three-zone-required.yaml",
			argv: []string{"--migration-limit", "2"}, env: map[string]string{"DYN_MIGRATION_LIMIT": "5"}, feature: "migration",
			detail: []string{"migration_limit=2, frontend args --migration-limit", "#11647"}},
		{name: "worker flag of releases before #5918", example: "healthy-three-zone-required.yaml",
			worker: []string{"--migration-limit=1"}, feature: "migration",
			detail: []string{"migration_limit=1, worker ", "before Dynamo #5918"}},
		{name: "migration limit 0 is off", example: "healthy-three-zone-required.yaml",
			env: map[string]string{"DYN_MIGRATION_LIMIT": "0"}, feature: ""},
		{name: "inhibition window set", example: "healthy-three-zone-required.yaml",
			env: map[string]string{"DYN_RUNTIME_INHIBITED_DURATION_SECS": "10"}, feature: "quarantine",
			detail: []string{"frontend env DYN_RUNTIME_INHIBITED_DURATION_SECS=10", "for up to 10 s", "#11993", "not published"}},
		{name: "stream timeout quarantines with the default window", example: "vllm-disagg-default-router.yaml",
			env: map[string]string{"DYN_HTTP_BACKEND_STREAM_TIMEOUT_SECS": "120"}, feature: "quarantine",
			detail: []string{"DYN_HTTP_BACKEND_STREAM_TIMEOUT_SECS=120", "silent for 120 s", "(for 5 s)"}},
		{name: "inhibition disabled quarantines nothing", example: "healthy-three-zone-required.yaml",
			env: map[string]string{"DYN_RUNTIME_INHIBITED_DURATION_SECS": "0", "DYN_HTTP_BACKEND_STREAM_TIMEOUT_SECS": "60"}, feature: ""},
		{name: "router queue on the frontend", example: "healthy-three-zone-required.yaml",
			argv: []string{"--router-queue-threshold", "0.8"}, queue: 0.8, feature: "deadline",
			detail: []string{"the prefill and decode routers queue requests (router_queue_threshold=0.8)", "DeadlineExceeded", "HTTP 429", "#14176"}},
		{name: "router queue of a prefill set's router_config", example: "healthy-three-zone-required.yaml",
			router: `{"router_mode":"kv","kv_router_config":{"router_queue_threshold":0.5}}`, feature: "deadline", hop: "prefill",
			detail: []string{"the prefill router queues requests (router_queue_threshold=0.5)"}},
		{name: "no queue in a non-KV mode", example: "vllm-disagg-default-router.yaml",
			argv: []string{"--router-queue-threshold", "0.8"}, queue: 0.8, feature: ""},
		{name: "nothing configured", example: "healthy-three-zone-required.yaml", feature: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, s := loadExample(t, tc.example)
			dep := &s.Deployments[0]
			if len(dep.Frontends) == 0 {
				t.Fatal("no frontend")
			}
			for i := range dep.Frontends {
				f := &dep.Frontends[i]
				f.Argv = append(slices.Clone(f.Argv), tc.argv...)
				env := map[string]string{}
				for k, v := range f.Env {
					env[k] = v
				}
				for k, v := range tc.env {
					env[k] = v
				}
				f.Env = env
			}
			for i := range dep.Workers {
				dep.Workers[i].Argv = append(slices.Clone(dep.Workers[i].Argv), tc.worker...)
			}
			if tc.queue != 0 {
				if dep.Router.Config == (routecore.KvRouterConfig{}) {
					dep.Router.Config = routecore.DefaultKvRouterConfig()
				}
				q := tc.queue
				dep.Router.Config.RouterQueueThreshold = &q
			}
			if tc.router != "" {
				withPrefillRouterConfig(t, dep, tc.router)
			}
			x, err := Explain(Input{Snapshot: s, Deployment: dep, Request: Request{Tokens: exampleTokens(t), Tokenizer: "test"}, Options: Options{DynamoVersion: perHop}})
			if err != nil {
				t.Fatal(err)
			}
			var got []Divergence
			for _, d := range x.Verdict.MayDiffer {
				if d.Feature == "migration" || d.Feature == "quarantine" || d.Feature == "deadline" {
					got = append(got, d)
				}
			}
			if tc.feature == "" {
				if len(got) != 0 {
					t.Fatalf("unexpected: %+v", got)
				}
				return
			}
			if len(got) != 1 || got[0].Feature != tc.feature || got[0].Hop != tc.hop {
				t.Fatalf("got %+v, want one %s (hop %q)", got, tc.feature, tc.hop)
			}
			for _, want := range tc.detail {
				if !strings.Contains(got[0].Detail, want) {
					t.Errorf("detail lacks %q: %s", want, got[0].Detail)
				}
			}
		})
	}
}

// TestArgValue reads a flag's last value in either form.
func TestArgValue(t *testing.T) {
	words := []string{"python3", "-m", "dynamo.frontend", "--migration-limit", "2", "--migration-limit=4", "--router-mode"}
	if v, ok := argValue(words, "--migration-limit"); !ok || v != "4" {
		t.Errorf("got %q %v", v, ok)
	}
	if _, ok := argValue(words, "--router-mode"); ok {
		t.Error("a flag without a value was read")
	}
	if _, ok := argValue(words, ""); ok {
		t.Error("the empty flag matched")
	}
}
