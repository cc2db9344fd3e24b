package behavior

import (
	"fmt"
	"strings"
)

// Rule is one behaviour of Dynamo that changed across releases: what it is,
// where the plugin relies on it, and what each release range does, with the
// upstream change that moved it. Table holds every such rule; the commands
// ask At (or a function below that does) instead of comparing versions
// themselves, and docs/compatibility.md is generated from the table.
type Rule struct {
	// ID names the rule in code and docs.
	ID string
	// Title says what the rule is about.
	Title string
	// Used lists where the plugin applies it (findings, commands).
	Used []string
	// Eras are the release ranges, oldest first; they cover every release.
	Eras []Era
	// Cite is the upstream evidence (ai-dynamo/dynamo pull requests and the
	// files that implement the newest behaviour).
	Cite string
}

// Era is one release range of a rule and the behaviour in it.
type Era struct {
	// Key names the behaviour for code ("strict-needs", "aggregated").
	Key string
	// From is the first release line of the range ("" for every release
	// before Until); Until the first one after it ("" for the newest).
	From, Until string
	// Behaviour is what Dynamo does in the range, in a sentence.
	Behaviour string
}

// Rule ids.
const (
	RuleReadiness        = "readiness"
	RuleOverloadStatus   = "overload-status"
	RuleBusyThresholds   = "busy-thresholds"
	RuleWorkerRouterArgs = "worker-router-args"
	RulePrefillHopConfig = "prefill-hop-router-config"
	RuleSelector         = "selector"
	RuleMultimodalHash   = "multimodal-hash"
	RuleVLLMKvEvents     = "vllm-kv-events"
	RuleTRTLLMKvEvents   = "trtllm-kv-events-flag"
	RuleAffinitySync     = "session-affinity-sync"
	RuleGroveNameLength  = "grove-name-length"
	RuleTopologyPack     = "topology-pack-domain"
	RuleTopologyKind     = "grove-topology-kind"
)

// Era keys.
const (
	EraDecodeFallback  = "decode-fallback"
	EraAggregated      = "aggregated-fallback"
	EraStrictNeeds     = "strict-needs"
	EraStatus503       = "503"
	EraStatus529       = "529"
	EraStatusConfig    = "529-configurable"
	EraDefaultsOn      = "defaults-on"
	EraAdmissionGate   = "admission-control-gate"
	EraOptIn           = "opt-in"
	EraNotParsed       = "not-parsed"
	EraParsed          = "parsed"
	EraFollowsDecode   = "follows-decode"
	EraOwnSet          = "own-set"
	EraLegacySelector  = "legacy"
	EraLatestSelector  = "latest"
	EraMmHash          = "mm-hash"
	EraPadValue        = "pad-value"
	EraImplicitConfig  = "implicit-config"
	EraExplicitConfig  = "explicit-config"
	EraPublishEvents   = "publish-events-and-metrics"
	EraPublishKvEvents = "publish-kv-events"
	EraPerReplica      = "per-replica"
	EraSynced          = "synced"
	EraRawNames        = "raw-names"
	EraHashedPCS       = "hashed-pcs-name"
	EraEveryComponent  = "every-component"
	EraAnyComponent    = "any-component"
	EraEitherKind      = "either-kind"
	EraBindingOnly     = "binding-only"
)

// Table is every release-dependent behaviour the plugin models. Releases are
// placed by upstream merge dates against the release dates (0.9.1 2026-02-26,
// 1.0.1 2026-03-15, 1.1.0 about 2026-04-30, 1.2.0 2026-06-02, 1.3.0
// 2026-07-20, 1.5.0 2026-09-18) where no release note names the change; a
// change merged in the weeks before a release is taken to be in the next one.
var Table = []Rule{
	{
		ID:    RuleReadiness,
		Title: "serving readiness of a disaggregated deployment whose prefill or decode side has no live worker",
		Used:  []string{"topology (DisaggNotActive, ModelNotReady)", "explain-route (verdict)", "simulate (failures)", "dashboard", "preflight"},
		Eras: []Era{
			{Key: EraAggregated, Until: "1.0", Behaviour: "decode workers without a live prefill worker serve requests aggregated (enforce_disagg is off by default); with --enforce-disagg (DYN_ENFORCE_DISAGG) every request fails (PrefillError::NotActivated)"},
			{Key: EraDecodeFallback, From: "1.0", Until: "1.1", Behaviour: "--decode-fallback (DYN_DECODE_FALLBACK, off by default) replaced --enforce-disagg: without it, every request fails while no prefill worker is live"},
			{Key: EraAggregated, From: "1.1", Until: "1.3", Behaviour: "decode workers without a live prefill worker serve requests aggregated (enforce_disagg off by default, #4286, #6957); with --enforce-disagg every request fails"},
			{Key: EraStrictNeeds, From: "1.3", Behaviour: "the model is ready only when a worker is live and every live worker set's needs are met — decode workers need a live prefill worker, prefill workers a live decode worker — otherwise every request is refused with HTTP 503 (ModelUnavailable; GET /v1/models/{model}/ready lists missing_worker_types); --enforce-disagg and DYN_ENFORCE_DISAGG are accepted and ignored; a Dynamo namespace that still has a legacy card (no worker_type) is ready whenever any worker is live"},
		},
		Cite: "#11160 (merged 2026-07-02, in 1.3.0 through #11295); lib/llm/src/discovery/model.rs evaluate_namespace and select_worker_set_with; needs registered by the vLLM (#9395), TRT-LLM (#9396) and SGLang workers (decode needs [[prefill]], prefill needs [[decode]]); gating #9815; #6515 (1.0 decode fallback)",
	},
	{
		ID:    RuleOverloadStatus,
		Title: "HTTP status of a request refused because every worker is busy",
		Used:  []string{"topology (AllWorkersBusy)", "explain-route (verdict)", "simulate"},
		Eras: []Era{
			{Key: EraStatus503, Until: "1.3", Behaviour: "503 Service Unavailable"},
			{Key: EraStatus529, From: "1.3", Until: "1.4", Behaviour: "529"},
			{Key: EraStatusConfig, From: "1.4", Behaviour: "529, or DYN_HTTP_OVERLOAD_STATUS_CODE when set"},
		},
		Cite: "#9506, #10941 (529), #11249 (DYN_HTTP_OVERLOAD_STATUS_CODE)",
	},
	{
		ID:    RuleBusyThresholds,
		Title: "which busy thresholds refuse requests",
		Used:  []string{"topology (AllWorkersBusy)", "explain-route (admission)", "simulate (admission)"},
		Eras: []Era{
			{Key: EraDefaultsOn, Until: "1.2", Behaviour: "unset thresholds fall back to defaults (1.0 decode blocks, 10M prefill tokens, 1.5 of max_num_batched_tokens) until #8333 made them opt-in"},
			{Key: EraAdmissionGate, From: "1.2", Until: "1.4", Behaviour: "thresholds from the frontend's args and env apply only with --admission-control token-capacity (default none; --no-admission-control clears them); a live /busy_threshold answer is what the frontend uses"},
			{Key: EraOptIn, From: "1.4", Behaviour: "each threshold is opt-in by itself; --admission-control is accepted, warned about and ignored"},
		},
		Cite: "#8333, #9547, #9694 (2026-05-18), #11276 (2026-07-06)",
	},
	{
		ID:    RuleWorkerRouterArgs,
		Title: "router settings a worker passes on its own command line",
		Used:  []string{"topology (RouterNotKV, KvEventsNotPublished)", "explain-route and simulate (each hop's mode and knobs)", "preflight"},
		Eras: []Era{
			{Key: EraNotParsed, Until: "1.4", Behaviour: "workers do not read router flags: a worker set follows the frontend's configuration unless its card carries a router_config"},
			{Key: EraParsed, From: "1.4", Behaviour: "workers parse --router-mode (or DYN_ROUTER_MODE) and the KV-router flags from their own command line and publish them as their card's router_config, which replaces the frontend's configuration for their hop; a worker that sets no mode publishes none"},
		},
		Cite: "#13192, #13197 (August 2026); components/src/dynamo/common/configuration/groups/router_args.py parse_worker_router_config, called by the vLLM, SGLang and TRT-LLM entrypoints",
	},
	{
		ID:    RulePrefillHopConfig,
		Title: "whose router_config the prefill hop follows",
		Used:  []string{"explain-route, simulate and the dashboard (the prefill hop's mode)", "topology (RouterNotKV)"},
		Eras: []Era{
			{Key: EraFollowsDecode, Until: "1.4", Behaviour: "the prefill hop follows the decode worker set's router_config (else the frontend's)"},
			{Key: EraOwnSet, From: "1.4", Behaviour: "each hop follows the router_config of the worker set it routes to (else the frontend's)"},
		},
		Cite: "#13197 (August 2026); lib/llm/src/discovery/watcher.rs",
	},
	{
		ID:    RuleSelector,
		Title: "KV selector cost clamp, credit bound and tie-break",
		Used:  []string{"explain-route, simulate, the dashboard (routing profile)"},
		Eras: []Era{
			{Key: EraLegacySelector, Until: "1.2", Behaviour: "adjusted prefill not clamped at 0, overlap_score_credit at most 1, no decode overlap branch, temperature-0 ties to the smallest radix tree (profile legacy-v1.1)"},
			{Key: EraLatestSelector, From: "1.2", Behaviour: "adjusted prefill clamped at 0, any finite credit, the conditional-disaggregation decode branch, ties broken uniformly at random (profile latest)"},
		},
		Cite: "#4257, #6253, #9516, #9975 (v1.1.2 kept the tree-size rule); lib/kv-router/src/scheduling/selector/default.rs",
	},
	{
		ID:    RuleMultimodalHash,
		Title: "how multimodal objects enter a request's block hashes",
		Used:  []string{"hash", "explain-route", "simulate"},
		Eras: []Era{
			{Key: EraMmHash, Until: "1.3", Behaviour: "each object's mm_hash is appended to the blocks it covers (profile legacy-v1.2 and older)"},
			{Key: EraPadValue, From: "1.3", Behaviour: "pad-value scheme: the object's placeholder tokens carry its hash (profile latest)"},
		},
		Cite: "#10328 (merged 2026-06-04, after 1.2.0)",
	},
	{
		ID:    RuleVLLMKvEvents,
		Title: "when a vLLM worker publishes KV events",
		Used:  []string{"topology (KvEventsNotPublished)"},
		Eras: []Era{
			{Key: EraImplicitConfig, Until: "1.1", Behaviour: "Dynamo's vLLM worker made a KV-events config itself with prefix caching on"},
			{Key: EraExplicitConfig, From: "1.1", Behaviour: "only with --kv-events-config and enable_kv_cache_events: true"},
		},
		Cite: "#6404 (2026-02-19), #7591 (2026-03-24), #4437, #11505, #12084",
	},
	{
		ID:    RuleTRTLLMKvEvents,
		Title: "the TensorRT-LLM worker's KV-event flag",
		Used:  []string{"topology (KvEventsNotPublished hint)"},
		Eras: []Era{
			{Key: EraPublishEvents, Until: "1.3", Behaviour: "--publish-events-and-metrics"},
			{Key: EraPublishKvEvents, From: "1.3", Behaviour: "--publish-kv-events"},
		},
		Cite: "components/src/dynamo/trtllm",
	},
	{
		ID:    RuleAffinitySync,
		Title: "session-affinity bindings across frontend replicas",
		Used:  []string{"topology (RouterReplicasNotSynced)"},
		Eras: []Era{
			{Key: EraPerReplica, Until: "1.4", Behaviour: "bindings are per replica, even with --router-replica-sync (#11079 was reverted by #11217)"},
			{Key: EraSynced, From: "1.4", Behaviour: "bindings sync across replicas whenever a TTL is set; the load view still needs --router-replica-sync"},
		},
		Cite: "#10875, #11035, #11750 (2026-07-16)",
	},
	{
		ID:    RuleGroveNameLength,
		Title: "the 45-character limit on the Grove names a component's pods are named from (admission webhook, Grove pathway only)",
		Used:  []string{"preflight (InvalidManifest on a component name)"},
		Eras: []Era{
			{Key: EraRawNames, Until: "1.2", Behaviour: "the PodCliqueSet is named after the DGD: the DGD name plus the lower-cased component name (a multinode component: plus its longest clique name, `<component>-ldr`) may not exceed 45 characters"},
			{Key: EraHashedPCS, From: "1.2", Behaviour: "the PodCliqueSet name is the DGD name shortened to 45 minus the largest component budget (at least 8), ending in `-` and four hex digits of its FNV-1a hash; a component's budget is its lower-cased name, or for a scaling group (multinode, inter-pod GPU memory service, experimental.grove.forceScalingGroup) its name plus its longest clique name (`-ldr`, `-wkr`, `-wkr-<rank>`, `-gms-<rank>`); only a component whose own budget exceeds 37 can still be rejected"},
		},
		Cite: "#8563 (auto-truncate Grove resource names, merged after 2026-05-01); deploy/operator/internal/dynamo/graph.go PCSNameForDGD and LongestPodCliqueNameForDGDComponent; deploy/operator/internal/webhook/validation/dynamographdeployment_helpers.go dgdComponentResourceNameLength; api/v1beta1 UsesPCSG",
	},
	{
		ID:    RuleTopologyPack,
		Title: "which components need a topologyConstraint when spec.topologyConstraint has no packDomain (admission webhook)",
		Used:  []string{"preflight (InvalidManifest on a topologyConstraint)"},
		Eras: []Era{
			{Key: EraEveryComponent, Until: "1.4", Behaviour: "without spec.topologyConstraint.packDomain every component must carry its own topologyConstraint"},
			{Key: EraAnyComponent, From: "1.4", Behaviour: "without spec.topologyConstraint.packDomain at least one component must carry a topologyConstraint; the others stay unconstrained (spec.topologyConstraint.packDomain: Required value: is required when no component topologyConstraint is set)"},
		},
		Cite: "#12448 (allow component-scoped topology, 2026-07-30, relates to #11399); deploy/operator/internal/webhook/validation/dynamographdeployment.go validateDynamoGraphDeploymentSpec",
	},
	{
		ID:    RuleTopologyKind,
		Title: "which Grove object the webhook reads for clusterTopologyName (the policy's and spec.topologyConstraint's)",
		Used:  []string{"preflight (TopologyObjectMissing)"},
		Eras: []Era{
			{Key: EraEitherKind, Until: "1.3", Behaviour: "a ClusterTopology (the name before Grove #616) or a ClusterTopologyBinding of that name"},
			{Key: EraBindingOnly, From: "1.3", Behaviour: "only a ClusterTopologyBinding of that name (\"references a ClusterTopologyBinding resource that was not found\"); a cluster with only the legacy ClusterTopology object is rejected"},
		},
		Cite: "Grove #616 (ClusterTopology renamed ClusterTopologyBinding, 2026-05-20, first tagged alpha.9); #11348 and #11399 (release/1.3.0 pins Grove v0.1.0-alpha.11), #11405; deploy/operator/internal/webhook/validation/dynamographdeployment_helpers.go readGroveClusterTopology",
	},
}

// Lookup returns the rule with the id; it panics on an unknown id (ids are
// constants of this package).
func Lookup(id string) Rule {
	for _, r := range Table {
		if r.ID == id {
			return r
		}
	}
	panic("behavior: unknown rule " + id)
}

// At returns the era of rule id that holds for a release: the era whose range
// contains it, the newest for an unknown release.
func At(id string, rel Release) Era {
	r := Lookup(id)
	for _, e := range r.Eras {
		if e.contains(rel) {
			return e
		}
	}
	return r.Eras[len(r.Eras)-1]
}

func (e Era) contains(rel Release) bool {
	if !rel.Known() {
		return e.Until == ""
	}
	if e.From != "" && rel.Before(lineOf(e.From)) {
		return false
	}
	return e.Until == "" || rel.Before(lineOf(e.Until))
}

// Range is "before 1.3", "1.3 and later", "1.1 to 1.2", "every release".
func (e Era) Range() string {
	switch {
	case e.From == "" && e.Until == "":
		return "every release"
	case e.From == "":
		return "before " + e.Until
	case e.Until == "":
		return e.From + " and later"
	}
	u := MustRelease(e.Until + ".0")
	last := fmt.Sprintf("%d.%d", u.Major, u.Minor-1)
	if u.Minor == 0 {
		return e.From + " up to " + e.Until + " (exclusive)"
	}
	if last == e.From {
		return e.From
	}
	return e.From + " to " + last
}

// lineOf splits "1.3" into 1, 3.
func lineOf(s string) (int, int) {
	r := MustRelease(s + ".0")
	return r.Major, r.Minor
}

// Cite returns "rule id (release range): citation" for messages and notes.
func Cite(id string, rel Release) string {
	r := Lookup(id)
	e := At(id, rel)
	return fmt.Sprintf("%s, %s: %s", r.ID, e.Range(), r.Cite)
}

// Markdown renders the table as docs/compatibility.md.
func Markdown() string {
	var b strings.Builder
	b.WriteString(`# Compatibility: Dynamo behaviour by release

<!-- This page is generated from pkg/behavior/table.go (make docs); hack/verify-docs.sh fails when it drifts. -->

kubectl-dynamo reads how Dynamo behaves in one place (pkg/behavior) and follows the release the deployment runs.
Every command tells that release on its first lines and in JSON (` + "`dynamo`" + `: ` + "`version`" + `, ` + "`known`" + `, and
` + "`via`" + `/` + "`source`" + ` for where it was read): the runtime image tags of the worker and frontend pods (or of a manifest's containers), else the Dynamo
operator's release; ` + "`--dynamo-version`" + ` overrides it. When nothing tells, the newest behaviour below is
assumed and the output says so. Deployments whose pods run different releases get the MixedDynamoReleases finding.

Releases are placed by upstream merge dates against the release dates (0.9.1 2026-02-26, 1.0.1 2026-03-15, 1.1.0
about 2026-04-30, 1.2.0 2026-06-02, 1.3.0 2026-07-20, 1.5.0 2026-09-18) where no release note names the change; a
change merged in the weeks before a release is taken to be in the next one. Numbers are ai-dynamo/dynamo pull
requests.

| rule | releases | behaviour |
|---|---|---|
`)
	for _, r := range Table {
		for i, e := range r.Eras {
			name := ""
			if i == 0 {
				name = "`" + r.ID + "`: " + r.Title
			}
			fmt.Fprintf(&b, "| %s | %s | %s |\n", name, e.Range(), e.Behaviour)
		}
	}
	b.WriteString("\n## Where each rule is used, and its upstream evidence\n\n")
	for _, r := range Table {
		fmt.Fprintf(&b, "- **`%s`** — used by %s. Upstream: %s.\n", r.ID, strings.Join(r.Used, "; "), r.Cite)
	}
	return b.String()
}
