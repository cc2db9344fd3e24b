package routecore

import (
	"reflect"
	"testing"
)

func TestParseFrontendPolicies(t *testing.T) {
	env := func(kv ...string) func(string) (string, bool) {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
	}
	for _, c := range []struct {
		name string
		args []string
		env  func(string) (string, bool)
		want FrontendPolicies
	}{
		{"nothing set: built-in everywhere", nil, nil, FrontendPolicies{}},
		// test_stage_policy_cli_and_environment_precedence (frontend tests):
		// the stage flag beats the stage variable; the other stage keeps its variable.
		{"stage flag beats stage env", []string{"--router-prefill-policy", "cli-prefill"},
			env("DYN_ROUTER_PREFILL_POLICY", "env-prefill", "DYN_ROUTER_DECODE_POLICY", "env-decode"),
			FrontendPolicies{Stages: []SelectionPolicy{
				{PolicyStagePrefill, "cli-prefill", "frontend args --router-prefill-policy"},
				{PolicyStageDecode, "env-decode", "frontend env DYN_ROUTER_DECODE_POLICY"},
			}}},
		{"the global variable covers every stage without its own setting", []string{"--router-decode-policy=default"},
			env("DYN_ROUTER_WORKER_SELECTION_POLICY", "stacked"),
			FrontendPolicies{Stages: []SelectionPolicy{
				{PolicyStageAggregated, "stacked", "frontend env DYN_ROUTER_WORKER_SELECTION_POLICY"},
				{PolicyStagePrefill, "stacked", "frontend env DYN_ROUTER_WORKER_SELECTION_POLICY"},
			}}},
		{"a policy YAML leaves every stage to the file", []string{"--router-policy-config", "/etc/policy.yaml"}, nil,
			FrontendPolicies{PolicyConfig: "/etc/policy.yaml", PolicyConfigSource: "frontend args --router-policy-config", Stages: []SelectionPolicy{
				{PolicyStageAggregated, "", "worker_selection.aggregated of /etc/policy.yaml (frontend args --router-policy-config; the file is not read)"},
				{PolicyStagePrefill, "", "worker_selection.prefill of /etc/policy.yaml (frontend args --router-policy-config; the file is not read)"},
				{PolicyStageDecode, "", "worker_selection.decode of /etc/policy.yaml (frontend args --router-policy-config; the file is not read)"},
			}}},
		{"explicit default overrides the YAML for its stage", []string{"--router-prefill-policy", "default"}, env("DYN_ROUTER_POLICY_CONFIG", "/p.yaml", "DYN_ROUTER_DECODE_POLICY", "default"),
			FrontendPolicies{PolicyConfig: "/p.yaml", PolicyConfigSource: "frontend env DYN_ROUTER_POLICY_CONFIG", Stages: []SelectionPolicy{
				{PolicyStageAggregated, "", "worker_selection.aggregated of /p.yaml (frontend env DYN_ROUTER_POLICY_CONFIG; the file is not read)"},
			}}},
	} {
		got := ParseFrontendPolicies(c.args, c.env)
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", c.name, got, c.want)
		}
	}
	if p := (FrontendPolicies{}).Stage(PolicyStageDecode); p.Custom() {
		t.Errorf("unset stage is custom: %+v", p)
	}
}
