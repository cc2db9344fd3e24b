package behavior

import (
	"slices"
	"strings"
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
)

func TestParseRelease(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    string
		known   bool
		profile routecore.Profile
		bad     bool
	}{
		{in: "", known: false, profile: routecore.ProfileLatest},
		{in: "1.3.0", want: "1.3.0", known: true, profile: routecore.ProfileLatest},
		{in: "v1.2", want: "1.2.0", known: true, profile: routecore.ProfileLegacyV1_2},
		{in: "1.4.0-dev.1", want: "1.4.0-dev.1", known: true, profile: routecore.ProfileLatest},
		{in: "0.9.1", want: "0.9.1", known: true, profile: routecore.ProfileLegacyV1_1},
		{in: "1.1.2", want: "1.1.2", known: true, profile: routecore.ProfileLegacyV1_1},
		{in: "latest", known: false, profile: routecore.ProfileLatest},
		{in: "legacy-v1.2", want: "1.2.0", known: true, profile: routecore.ProfileLegacyV1_2},
		{in: "legacy-tree-size", want: "1.1.0", known: true, profile: routecore.ProfileLegacyTreeSize},
		{in: "pre-clamp", want: "1.1.0", known: true, profile: routecore.ProfileLegacyV1_1},
		{in: "1", bad: true},
		{in: "1.x", bad: true},
		{in: "1.2.3.4", bad: true},
		{in: "-1.2", bad: true},
		{in: "01.2", bad: true},
		{in: "my-tag", bad: true},
		{in: strings.Repeat("1", 100) + ".1", bad: true},
	} {
		r, err := ParseRelease(tc.in)
		if tc.bad {
			if err == nil {
				t.Errorf("ParseRelease(%q) accepted: %v", tc.in, r)
			}
			continue
		}
		if err != nil || r.String() != tc.want || r.Known() != tc.known || r.Profile() != tc.profile {
			t.Errorf("ParseRelease(%q) = %q known %v profile %v, %v; want %q %v %v", tc.in, r.String(), r.Known(), r.Profile(), err, tc.want, tc.known, tc.profile)
		}
	}
}

func TestImageRelease(t *testing.T) {
	for _, tc := range []struct {
		ref, want string
	}{
		{"nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.3.0", "1.3.0"},
		{"nvcr.io/nvidia/ai-dynamo/sglang-runtime:1.2.0", "1.2.0"},
		{"nvcr.io/nvidia/ai-dynamo/trtllm-runtime:1.2.0-cuda12", "1.2.0-cuda12"},
		{"registry.local:5000/ai-dynamo/dynamo-frontend:v1.4.1", "1.4.1"},
		{"nvcr.io/nvidia/ai-dynamo/kubernetes-operator:1.3.0", "1.3.0"},
		{"my-registry/vllm-runtime:my-tag", ""},
		{"my-registry/vllm-runtime", ""},
		{"vllm/vllm-openai:v0.9.1", ""},
		{"nvcr.io/nvidia/ai-dynamo/vllm-runtime@sha256:abcdef", ""},
		{"nvcr.io/nvidia/ai-dynamo/vllm-runtime:latest", ""},
		{"localhost:5000/vllm-runtime", ""},
		{"", ""},
		{strings.Repeat("a", 600) + "/vllm-runtime:1.3.0", ""},
	} {
		r, ok := ImageRelease(tc.ref)
		if got := r.String(); (ok && got != tc.want) || (!ok && tc.want != "") {
			t.Errorf("ImageRelease(%q) = %q, %v; want %q", tc.ref, got, ok, tc.want)
		}
	}
}

func pod(name string, role model.Role, image string, ready bool, insts ...model.Instance) model.Worker {
	return model.Worker{Pod: name, Role: role, Image: image, Ready: ready, Instances: insts, Component: string(role)}
}

func card(workerType string) model.Instance {
	return model.Instance{ID: 1, WorkerType: workerType, BlockSize: 16, Model: "m"}
}

func TestDetect(t *testing.T) {
	v13, v12 := "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.3.0", "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.2.0"
	for _, tc := range []struct {
		name     string
		dep      model.Deployment
		ops      []model.Operator
		override string
		version  string
		known    bool
		mixed    bool
		source   string
	}{
		{name: "one release", dep: model.Deployment{Workers: []model.Worker{pod("a", model.RoleDecode, v13, true), pod("b", model.RolePrefill, v13, true)}},
			version: "1.3.0", known: true, source: "image tag of 2 pods"},
		{name: "mixed, frontend decides", dep: model.Deployment{Workers: []model.Worker{pod("a", model.RoleDecode, v12, true)},
			Frontends: []model.Frontend{{Pod: "f", Image: v13}}}, version: "1.3.0", known: true, mixed: true, source: "the frontend's is followed"},
		{name: "mixed, oldest without frontend image", dep: model.Deployment{Workers: []model.Worker{pod("a", model.RoleDecode, v12, true), pod("b", model.RoleDecode, v13, true)}},
			version: "1.2.0", known: true, mixed: true, source: "the oldest is followed"},
		{name: "manifest components", dep: model.Deployment{Components: []model.Component{{Name: "Frontend", Type: "frontend", Image: v12}}},
			version: "1.2.0", known: true, source: "manifest's components"},
		{name: "operator when images say nothing", dep: model.Deployment{Workers: []model.Worker{pod("a", model.RoleDecode, "my-registry/vllm-runtime:my-tag", true)}},
			ops: []model.Operator{{Namespace: "dynamo-system", Name: "op", Version: "1.3.1"}}, version: "1.3.1", known: true, source: "operator's release"},
		{name: "unknown", dep: model.Deployment{Workers: []model.Worker{pod("a", model.RoleDecode, "my-registry/vllm-runtime:my-tag", true)}},
			known: false, source: "the images name no Dynamo release (my-registry/vllm-runtime:my-tag)"},
		{name: "override", dep: model.Deployment{Workers: []model.Worker{pod("a", model.RoleDecode, v13, true)}}, override: "1.2.0",
			version: "1.2.0", known: true, source: "--dynamo-version 1.2.0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Detect(&tc.dep, tc.ops, tc.override)
			if err != nil {
				t.Fatal(err)
			}
			if d.Version != tc.version || d.Known != tc.known || d.Mixed != tc.mixed || !strings.Contains(d.Source, tc.source) {
				t.Errorf("got %+v", d)
			}
		})
	}
	if _, err := Detect(&model.Deployment{}, nil, "nope"); err == nil {
		t.Error("an invalid --dynamo-version was accepted")
	}
}

func TestEras(t *testing.T) {
	for _, r := range Table {
		if len(r.Eras) == 0 || r.Eras[0].From != "" || r.Eras[len(r.Eras)-1].Until != "" || r.Cite == "" {
			t.Errorf("%s: eras must start open, end open and carry a citation", r.ID)
		}
		for i := 1; i < len(r.Eras); i++ {
			if r.Eras[i].From != r.Eras[i-1].Until {
				t.Errorf("%s: era %d starts at %q, the previous ends at %q", r.ID, i, r.Eras[i].From, r.Eras[i-1].Until)
			}
		}
	}
	for _, tc := range []struct {
		id, rel, key string
	}{
		{RuleReadiness, "1.2.9", EraAggregated},
		{RuleReadiness, "1.3.0", EraStrictNeeds},
		{RuleReadiness, "1.0.1", EraDecodeFallback},
		{RuleReadiness, "0.9.1", EraAggregated},
		{RuleReadiness, "", EraStrictNeeds},
		{RuleOverloadStatus, "1.2.0", EraStatus503},
		{RuleOverloadStatus, "1.3.0", EraStatus529},
		{RuleWorkerRouterArgs, "1.3.0", EraNotParsed},
		{RuleWorkerRouterArgs, "1.4.0", EraParsed},
		{RulePrefillHopConfig, "1.3.2", EraFollowsDecode},
		{RuleMultimodalHash, "1.2.0", EraMmHash},
		// The Grove name rule: #8563 landed after 1.1.0 (2026-04-30).
		{RuleGroveNameLength, "1.1.9", EraRawNames},
		{RuleGroveNameLength, "1.2.0", EraHashedPCS},
		{RuleGroveNameLength, "", EraHashedPCS},
		// The relaxed topology rule: #12448 (2026-07-30) landed after 1.3.0.
		{RuleTopologyPack, "1.3.9", EraEveryComponent},
		{RuleTopologyPack, "1.4.0", EraAnyComponent},
		{RuleTopologyPack, "", EraAnyComponent},
		// The Grove object the webhook reads: 1.3 pins Grove alpha.11.
		{RuleTopologyKind, "1.2.9", EraEitherKind},
		{RuleTopologyKind, "1.3.0", EraBindingOnly},
		{RuleTopologyKind, "", EraBindingOnly},
	} {
		if got := At(tc.id, MustRelease(tc.rel)).Key; got != tc.key {
			t.Errorf("At(%s, %q) = %s, want %s", tc.id, tc.rel, got, tc.key)
		}
	}
	if got := Lookup(RuleReadiness).Eras[2].Range(); got != "1.1 to 1.2" {
		t.Errorf("range %q", got)
	}
	if got := Lookup(RuleReadiness).Eras[1].Range(); got != "1.0" {
		t.Errorf("range %q", got)
	}
}

func TestReadiness(t *testing.T) {
	frontend := model.Frontend{Pod: "f", Argv: []string{"python3", "-m", "dynamo.frontend"}}
	enforced := model.Frontend{Pod: "f", Argv: []string{"python3", "-m", "dynamo.frontend", "--enforce-disagg"}}
	for _, tc := range []struct {
		name    string
		rel     string
		workers []model.Worker
		front   model.Frontend
		ready   bool
		missing []model.Role
		agg     bool
		reason  string
	}{
		{name: "1.3 decode only", rel: "1.3.0", workers: []model.Worker{pod("d", model.RoleDecode, "", true, card("decode")), pod("p", model.RolePrefill, "", false, card("prefill"))},
			front: frontend, ready: false, missing: []model.Role{model.RolePrefill}, reason: "missing worker types: prefill"},
		{name: "1.3 prefill only", rel: "1.3.0", workers: []model.Worker{pod("p", model.RolePrefill, "", true, card("prefill"))},
			front: frontend, ready: false, missing: []model.Role{model.RoleDecode}},
		{name: "1.3 both", rel: "1.3.0", workers: []model.Worker{pod("d", model.RoleDecode, "", true, card("decode")), pod("p", model.RolePrefill, "", true, card("prefill"))},
			front: frontend, ready: true},
		{name: "1.3 legacy card", rel: "1.3.0", workers: []model.Worker{pod("d", model.RoleDecode, "", true, card(""))}, front: frontend, ready: true},
		{name: "1.2 decode only serves aggregated", rel: "1.2.0", workers: []model.Worker{pod("d", model.RoleDecode, "", true, card("decode"))},
			front: frontend, ready: true, agg: true},
		{name: "1.2 decode only enforced", rel: "1.2.0", workers: []model.Worker{pod("d", model.RoleDecode, "", true, card("decode"))},
			front: enforced, ready: false, missing: []model.Role{model.RolePrefill}, reason: "NotActivated"},
		{name: "1.0 decode only fails by default", rel: "1.0.1", workers: []model.Worker{pod("d", model.RoleDecode, "", true, card("decode"))},
			front: frontend, ready: false, missing: []model.Role{model.RolePrefill}, reason: "NotActivated"},
		{name: "aggregated only", rel: "1.3.0", workers: []model.Worker{pod("a", model.RoleAggregated, "", true, card("aggregated"))}, front: frontend, ready: true},
		{name: "nothing registered", rel: "1.3.0", workers: []model.Worker{pod("a", model.RoleAggregated, "", true)}, front: frontend, ready: false, reason: "no worker is live"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dep := &model.Deployment{DiscoveryBackend: "kubernetes", Workers: tc.workers, Frontends: []model.Frontend{tc.front}}
			rd, err := ReadDeployment(&model.Snapshot{}, dep, tc.rel)
			if err != nil {
				t.Fatal(err)
			}
			r := rd.Readiness
			if r.Ready != tc.ready || !slices.Equal(r.Missing, tc.missing) || r.Aggregated != tc.agg || !strings.Contains(r.Reason, tc.reason) {
				t.Errorf("got %+v", r)
			}
			// 503 while a worker set waits for another; 404 (model not
			// found) when no worker is live at all.
			want := 503
			if len(r.Missing) == 0 {
				want = 404
			}
			if !r.Ready && r.Status != want {
				t.Errorf("status %d, want %d", r.Status, want)
			}
		})
	}
}

func TestRegistration(t *testing.T) {
	dep := &model.Deployment{DiscoveryBackend: "kubernetes", Workers: []model.Worker{
		{Pod: "a-ldr", Replica: "a", Leader: true, Ready: true, Role: model.RoleDecode, Instances: []model.Instance{card("decode")}},
		{Pod: "a-wkr", Replica: "a", Ready: true, Role: model.RoleDecode},
		{Pod: "b", Ready: true, Role: model.RoleDecode},
	}}
	rd, _ := ReadDeployment(&model.Snapshot{}, dep, "")
	want := []Registration{Registered, Registered, NotRegistered}
	for i, w := range rd.Workers {
		if w.Registered != want[i] || w.Live != (want[i] == Registered) {
			t.Errorf("%s: %+v", w.Pod, w)
		}
	}
	// DWMs unreadable: registration unknown, workers taken as live.
	snap := &model.Snapshot{Sources: []model.SourceStatus{{Kind: model.SourceKubernetes, Degraded: true, Message: "dynamoworkermetadatas.nvidia.com forbidden"}}}
	dep = &model.Deployment{DiscoveryBackend: "kubernetes", Workers: []model.Worker{{Pod: "b", Ready: true, Role: model.RoleDecode}}}
	rd, _ = ReadDeployment(snap, dep, "")
	if rd.RegistrationKnown || rd.Workers[0].Registered != RegistrationUnknown || !rd.Workers[0].Live || !strings.Contains(rd.RegistrationUnknown, "forbidden") {
		t.Errorf("unknown registration: %+v %+v", rd.RegistrationUnknown, rd.Workers)
	}
	// etcd discovery without an etcd read.
	dep.DiscoveryBackend = "etcd"
	rd, _ = ReadDeployment(&model.Snapshot{}, dep, "")
	if rd.RegistrationKnown {
		t.Error("etcd discovery without etcd counted as known")
	}
	// An unknown backend: unknown.
	dep.DiscoveryBackend = ""
	if rd, _ = ReadDeployment(&model.Snapshot{}, dep, ""); rd.RegistrationKnown || !rd.Workers[0].Live {
		t.Error("an unknown backend with nothing published counted as known")
	}
}

func TestHops(t *testing.T) {
	decodeArgsKV := model.RouterOverride{Component: "decode", Mode: "kv", Source: "pod d args"}
	cardRR := model.RouterOverride{Component: "decode", Mode: "round-robin", Source: "card"}
	for _, tc := range []struct {
		name           string
		rel            string
		router         model.RouterInfo
		prefill, dmode routecore.RouterMode
		constraint     Constraint
		dsource        string
	}{
		{name: "frontend round-robin", rel: "1.4.0", router: model.RouterInfo{Mode: "round-robin", ModeSource: "default"},
			prefill: "round-robin", dmode: "round-robin", constraint: ConstraintIgnored, dsource: "default"},
		{name: "worker args kv on 1.4", rel: "1.4.0", router: model.RouterInfo{Mode: "round-robin", ModeSource: "default", WorkerArgs: []model.RouterOverride{decodeArgsKV}},
			prefill: "round-robin", dmode: "kv", constraint: ConstraintHonoured, dsource: "worker set decode pod d args"},
		{name: "worker args ignored on 1.3", rel: "1.3.0", router: model.RouterInfo{Mode: "round-robin", ModeSource: "default", WorkerArgs: []model.RouterOverride{decodeArgsKV}},
			prefill: "round-robin", dmode: "round-robin", constraint: ConstraintIgnored},
		{name: "prefill follows decode before 1.4", rel: "1.3.0", router: model.RouterInfo{Mode: "kv", WorkerSetOverrides: []model.RouterOverride{cardRR}},
			prefill: "round-robin", dmode: "round-robin", constraint: ConstraintIgnored, dsource: "card router_config"},
		{name: "own set from 1.4", rel: "1.4.0", router: model.RouterInfo{Mode: "kv", WorkerSetOverrides: []model.RouterOverride{cardRR}},
			prefill: "kv", dmode: "round-robin", constraint: ConstraintIgnored},
		{name: "unknown mode is kv", rel: "", router: model.RouterInfo{}, prefill: "kv", dmode: "kv", constraint: ConstraintHonoured, dsource: "unknown"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dep := &model.Deployment{Router: tc.router, Workers: []model.Worker{
				{Pod: "p", Component: "prefill", Role: model.RolePrefill}, {Pod: "d", Component: "decode", Role: model.RoleDecode}}}
			rd, _ := ReadDeployment(&model.Snapshot{}, dep, tc.rel)
			if rd.Prefill.Mode != tc.prefill || rd.Decode.Mode != tc.dmode || rd.Decode.Constraint != tc.constraint || !strings.Contains(rd.Decode.ModeSource, tc.dsource) {
				t.Errorf("prefill %s decode %s (%s) constraint %s", rd.Prefill.Mode, rd.Decode.Mode, rd.Decode.ModeSource, rd.Decode.Constraint)
			}
		})
	}
}

func TestMarkdownListsEveryRule(t *testing.T) {
	md := Markdown()
	for _, r := range Table {
		if !strings.Contains(md, "`"+r.ID+"`") {
			t.Errorf("%s missing from the compatibility page", r.ID)
		}
	}
}

// TestStateMatchesWorkers: State finds each worker pod's state as a scan of
// Workers does (the first of a repeated name; none for an unknown one), also
// after Workers changed.
func TestStateMatchesWorkers(t *testing.T) {
	dep := &model.Deployment{DiscoveryBackend: "kubernetes", Workers: []model.Worker{
		{Pod: "a", Ready: true, Role: model.RoleDecode, Instances: []model.Instance{card("decode")}},
		{Pod: "b", Role: model.RolePrefill},
		{Pod: "a", Ready: true, Role: model.RolePrefill},
	}}
	rd, _ := ReadDeployment(&model.Snapshot{}, dep, "")
	scan := func(pod string) (WorkerState, bool) {
		for _, w := range rd.Workers {
			if w.Pod == pod {
				return w, true
			}
		}
		return WorkerState{}, false
	}
	check := func(when string) {
		t.Helper()
		for _, pod := range []string{"a", "b", "c", ""} {
			got, gotOK := rd.State(pod)
			want, wantOK := scan(pod)
			if got != want || gotOK != wantOK || rd.Live(pod) != want.Live {
				t.Errorf("%s: State(%q) = %+v %t, want %+v %t", when, pod, got, gotOK, want, wantOK)
			}
		}
	}
	check("as read")
	rd.Workers[0].Pod = "c"
	check("a pod renamed")
	rd.Workers = append(rd.Workers, WorkerState{Pod: "d", Live: true})
	check("a worker added")
}
