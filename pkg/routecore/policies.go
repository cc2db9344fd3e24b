package routecore

import "strings"

// Custom worker-selection policies replace the KV cost model of one router
// stage with a policy linked into a custom Dynamo image, configured in the
// router_policy_config YAML's worker_selection block
// (lib/kv-router/src/scheduling/worker_selection_config.rs). Their code is not
// in Dynamo's tree, so a dry run cannot compute their picks; it can only tell
// which stage runs which policy and where that was set.

// The stages a worker-selection policy applies to.
const (
	PolicyStageAggregated = "aggregated"
	PolicyStagePrefill    = "prefill"
	PolicyStageDecode     = "decode"
)

// BuiltinSelectionPolicy is the name that selects Dynamo's own selector.
const BuiltinSelectionPolicy = "default"

// SelectionPolicy is the worker-selection policy of one stage.
type SelectionPolicy struct {
	Stage string `json:"stage"`
	// Policy is the configured instance name; "default" is the built-in
	// selector; "" means the stage follows the router_policy_config YAML,
	// which is not read (its worker_selection.<stage> decides).
	Policy string `json:"policy"`
	// Source is the flag or environment variable that set it.
	Source string `json:"source"`
}

// Custom reports whether the stage may run something other than the built-in
// selector.
func (p SelectionPolicy) Custom() bool { return p.Policy != BuiltinSelectionPolicy }

// FrontendPolicies is the worker-selection configuration of a frontend.
type FrontendPolicies struct {
	// PolicyConfig is --router-policy-config / DYN_ROUTER_POLICY_CONFIG (a YAML
	// file path); PolicyConfigSource where it was set.
	PolicyConfig       string `json:"policyConfig,omitempty"`
	PolicyConfigSource string `json:"policyConfigSource,omitempty"`
	// Stages lists the stages whose selection is not the built-in selector by
	// default: set by a flag or variable, or left to the YAML. Empty when
	// every stage runs the built-in selector.
	Stages []SelectionPolicy `json:"stages,omitempty"`
}

// ParseFrontendPolicies reads the worker-selection flags and variables of a
// frontend command line with the precedence upstream documents for a stage:
// stage flag (--router-prefill-policy, --router-decode-policy), stage
// variable (DYN_ROUTER_PREFILL_POLICY, DYN_ROUTER_DECODE_POLICY),
// DYN_ROUTER_WORKER_SELECTION_POLICY (every stage), the YAML's
// worker_selection.<stage>, then the built-in selector. "default" selects the
// built-in selector explicitly.
func ParseFrontendPolicies(args []string, lookup func(string) (string, bool)) FrontendPolicies {
	var fp FrontendPolicies
	get := func(name string) (string, bool) {
		if lookup == nil {
			return "", false
		}
		v, ok := lookup(name)
		v = strings.TrimSpace(v)
		return v, ok && v != ""
	}
	flag := func(name string) (string, bool) {
		val, found := "", false
		for i := 0; i < len(args); i++ {
			a := args[i]
			switch {
			case a == name && i+1 < len(args):
				val, found = args[i+1], true
				i++
			case strings.HasPrefix(a, name+"="):
				val, found = strings.TrimPrefix(a, name+"="), true
			}
		}
		return strings.TrimSpace(val), found && strings.TrimSpace(val) != ""
	}
	if v, ok := flag("--router-policy-config"); ok {
		fp.PolicyConfig, fp.PolicyConfigSource = v, "frontend args --router-policy-config"
	} else if v, ok := get("DYN_ROUTER_POLICY_CONFIG"); ok {
		fp.PolicyConfig, fp.PolicyConfigSource = v, "frontend env DYN_ROUTER_POLICY_CONFIG"
	}
	global, globalOK := get("DYN_ROUTER_WORKER_SELECTION_POLICY")
	for _, st := range []struct{ stage, flag, env string }{
		{PolicyStageAggregated, "", ""},
		{PolicyStagePrefill, "--router-prefill-policy", "DYN_ROUTER_PREFILL_POLICY"},
		{PolicyStageDecode, "--router-decode-policy", "DYN_ROUTER_DECODE_POLICY"},
	} {
		p := SelectionPolicy{Stage: st.stage, Policy: BuiltinSelectionPolicy}
		if v, ok := flag(st.flag); st.flag != "" && ok {
			p.Policy, p.Source = v, "frontend args "+st.flag
		} else if v, ok := get(st.env); st.env != "" && ok {
			p.Policy, p.Source = v, "frontend env "+st.env
		} else if globalOK {
			p.Policy, p.Source = global, "frontend env DYN_ROUTER_WORKER_SELECTION_POLICY"
		} else if fp.PolicyConfig != "" {
			p.Policy, p.Source = "", "worker_selection."+st.stage+" of "+fp.PolicyConfig+" ("+fp.PolicyConfigSource+"; the file is not read)"
		}
		if p.Custom() {
			fp.Stages = append(fp.Stages, p)
		}
	}
	return fp
}

// Stage returns the policy of one stage (the built-in selector when unset).
func (fp FrontendPolicies) Stage(stage string) SelectionPolicy {
	for _, p := range fp.Stages {
		if p.Stage == stage {
			return p
		}
	}
	return SelectionPolicy{Stage: stage, Policy: BuiltinSelectionPolicy}
}
