package explain

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
)

// withPrefillRouterConfig publishes raw as the router_config of every prefill
// worker's instances and as the component's override, as pkg/build reads it.
func withPrefillRouterConfig(t *testing.T, dep *model.Deployment, raw string) string {
	t.Helper()
	doc, err := routecore.DecodeRouterConfigJSON([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	comp := ""
	for i := range dep.Workers {
		w := &dep.Workers[i]
		if w.Role != model.RolePrefill {
			continue
		}
		comp = w.Component
		for j := range w.Instances {
			w.Instances[j].RouterConfig = json.RawMessage(raw)
		}
	}
	if comp == "" {
		t.Fatal("no prefill workers")
	}
	dep.Router.WorkerSetOverrides = append(dep.Router.WorkerSetOverrides, model.RouterOverride{Component: comp, Mode: doc.RouterMode, Config: doc.Config})
	return comp
}

func features(x *Explanation) []string {
	var out []string
	for _, d := range x.Verdict.MayDiffer {
		out = append(out, d.Feature)
	}
	return out
}

func TestHopConfigsSayWhereValuesComeFrom(t *testing.T) {
	_, s := loadExample(t, "healthy-three-zone-required.yaml")
	dep := &s.Deployments[0]
	comp := withPrefillRouterConfig(t, dep, `{"router_mode":"kv","kv_router_config":{"router_temperature":0.5,"use_kv_events":false}}`)
	x, err := Explain(Input{Snapshot: s, Deployment: dep, Request: Request{Tokens: exampleTokens(t), Tokenizer: "test"}, Options: Options{DynamoVersion: perHop}})
	if err != nil {
		t.Fatal(err)
	}
	if len(x.Router.Hops) != 2 {
		t.Fatalf("hops = %+v", x.Router.Hops)
	}
	p, d := x.Router.Hops[0], x.Router.Hops[1]
	if p.Hop != "prefill" || !strings.Contains(p.Source, "worker set "+comp) || p.Indexer != "approximate" {
		t.Errorf("prefill hop = %+v", p)
	}
	if d.Hop != "decode" || !strings.HasPrefix(d.Source, "frontend: ") || d.Indexer != "kv-events" {
		t.Errorf("decode hop = %+v", d)
	}
	i := slices.IndexFunc(p.Values, func(v ConfigValue) bool { return v.Name == "router_temperature" })
	if i < 0 || p.Values[i].Value != "0.5" || p.Values[i].Source != "router_config of worker set "+comp {
		t.Errorf("prefill values = %+v", p.Values)
	}
	// Approximate mode on the hop that scores overlap: the KV events read are
	// not what that router uses, so no overlap is credited and the verdict says so.
	if !slices.Contains(features(x), "approximate-cache") {
		t.Errorf("mayDiffer = %+v", x.Verdict.MayDiffer)
	}
	for _, c := range x.Prefill.Candidates {
		if c.OverlapBlocks != 0 {
			t.Errorf("%s credited %v overlap blocks in approximate mode", c.Worker, c.OverlapBlocks)
		}
	}
}

func TestCreditZeroMeansNoIndexer(t *testing.T) {
	_, s := loadExample(t, "healthy-three-zone-required.yaml")
	dep := &s.Deployments[0]
	withPrefillRouterConfig(t, dep, `{"overlap_score_credit":0}`)
	x, err := Explain(Input{Snapshot: s, Deployment: dep, Request: Request{Tokens: exampleTokens(t), Tokenizer: "test"}, Options: Options{DynamoVersion: perHop}})
	if err != nil {
		t.Fatal(err)
	}
	if x.Router.Hops[0].Indexer != "none" || !slices.ContainsFunc(x.Assumptions, func(a string) bool { return strings.Contains(a, "builds no KV indexer") }) {
		t.Errorf("hop %+v, assumptions %q", x.Router.Hops[0], x.Assumptions)
	}
}

func TestSitaConfinesThePrefillPick(t *testing.T) {
	_, s := loadExample(t, "healthy-three-zone-required.yaml")
	dep := &s.Deployments[0]
	withPrefillRouterConfig(t, dep, `{"sita_enabled":true,"sita_boundary_1":16,"sita_boundary_2":0,"sita_small_band_share":0.5,"sita_spill_threshold":1.0}`)
	x, err := Explain(Input{Snapshot: s, Deployment: dep, Request: Request{Tokens: exampleTokens(t), Tokenizer: "test"}, Options: Options{DynamoVersion: perHop}})
	if err != nil {
		t.Fatal(err)
	}
	b := x.Prefill.Sita
	if b == nil || !b.Applied || b.Band != 1 {
		t.Fatalf("sita = %+v", b)
	}
	out, in := 0, 0
	for _, c := range x.Prefill.Candidates {
		switch {
		case c.ReasonCode == ReasonSitaBand:
			out++
			if b.Allows(c.InstanceID) || c.Selected {
				t.Errorf("%s marked outside the band it is in", c.Worker)
			}
		case b.Allows(c.InstanceID):
			in++
		}
		if c.Selected && !b.Allows(c.InstanceID) {
			t.Errorf("picked %s outside the band", c.Worker)
		}
	}
	if out == 0 || in == 0 {
		t.Errorf("band %+v: %d candidates out, %d in", b, out, in)
	}
	if !x.Verdict.Routable {
		t.Errorf("SITA made the request fail: %+v", x.Verdict)
	}
}

func TestMayDifferListsUnmodelledFeatures(t *testing.T) {
	_, s := loadExample(t, "healthy-three-zone-required.yaml")
	dep := &s.Deployments[0]
	withPrefillRouterConfig(t, dep, `{"router_mode":"round-robin","kv_router_config":{"enable_session_prefix_index":true,"conditional_prefill_enabled":true,"conditional_prefill_policy":"threshold_regression","conditional_prefill_bypass_below_tokens":100000}}`)
	if len(dep.Frontends) == 0 {
		t.Fatal("no frontend")
	}
	f := dep.Frontends[0]
	f.Env = map[string]string{"DYN_ROUTER_DECODE_POLICY": "soft-pin"}
	f.Ready = true
	dep.Frontends = []model.Frontend{f, f}
	x, err := Explain(Input{Snapshot: s, Deployment: dep, Request: Request{Tokens: exampleTokens(t), Tokenizer: "test"}, Options: Options{DynamoVersion: perHop}})
	if err != nil {
		t.Fatal(err)
	}
	got := features(x)
	for _, want := range []string{"selection-policy", "session-affinity", "replicas", "conditional-prefill"} {
		if !slices.Contains(got, want) {
			t.Errorf("mayDiffer lacks %s: %+v", want, x.Verdict.MayDiffer)
		}
	}
	// The prefill set's own router_mode is modelled, not a divergence: its
	// hop picks round-robin (TestMixedHopModes).
	if slices.Contains(got, "router-mode") || x.Prefill == nil || x.Prefill.Rule != routecore.RuleRoundRobin {
		t.Errorf("prefill hop %+v, mayDiffer %v", x.Prefill, got)
	}
	if d := x.Router.Hops[1]; d.Selection != "soft-pin" || d.SelectionSource != "frontend env DYN_ROUTER_DECODE_POLICY" {
		t.Errorf("decode hop = %+v", d)
	}
	b, _ := json.Marshal(x)
	if !strings.Contains(string(b), `"mayDiffer":[`) || !strings.Contains(string(b), `"hops":[`) {
		t.Error("JSON lacks mayDiffer or hops")
	}
}
