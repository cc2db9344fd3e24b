package explain

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
)

// This file resolves the router configuration per hop, with where each value
// came from, and lists what the router may do differently from the dry run:
// router features whose state is not published (custom worker-selection
// policies, the approximate-mode cache, session affinity, other frontend
// replicas' loads, a conditional-prefill sidecar, request migration's
// exclusions, quarantined workers, the router queue's deadlines). Features that can be
// computed from published state (SITA bands, the conditional_prefill
// TokenCap policy and the Regression fast path) are computed.

// HopConfig is the effective router configuration of one hop.
type HopConfig struct {
	// Hop is prefill or decode (decode also serves aggregated requests).
	Hop string `json:"hop"`
	// Source says whose configuration the hop runs: the frontend's, or a worker
	// set's router_config (which replaces the frontend's for its hop).
	Source string `json:"source"`
	// Mode is the hop's router mode and ModeSource where it came from.
	Mode       string `json:"mode"`
	ModeSource string `json:"modeSource"`
	// Indexer is how the hop's router knows cache contents: kv-events (the
	// workers' KV events), approximate (predicted from its own routing
	// decisions; use_kv_events=false), none (overlap_score_credit 0: no indexer
	// at all), or not-used (a non-KV mode).
	Indexer string `json:"indexer"`
	// Selection is the hop's worker-selection policy ("default" is Dynamo's
	// built-in cost model) and SelectionSource where it was chosen.
	Selection       string `json:"selection"`
	SelectionSource string `json:"selectionSource,omitempty"`
	// Values are the settings that differ from Dynamo's defaults, each with
	// its source.
	Values []ConfigValue `json:"values,omitempty"`
}

// ConfigValue is one non-default router setting of a hop.
type ConfigValue struct {
	Name   string `json:"name"`
	Value  string `json:"value"`
	Source string `json:"source"`
}

// Divergence is a way the real router's decision may differ from the dry run,
// and why: a configured feature whose state is not published.
type Divergence struct {
	// Feature names it (selection-policy, approximate-cache, replicas,
	// session-affinity, conditional-prefill, migration, quarantine,
	// deadline).
	Feature string `json:"feature"`
	// Hop is prefill, decode or "" (both).
	Hop    string `json:"hop,omitempty"`
	Detail string `json:"detail"`
}

// hopOverrides returns the worker sets whose router_config replaces the
// frontend's for the prefill and for the decode hop (as config() applies them).
func (e *explainer) hopOverrides() (prefill, decode *model.RouterOverride) {
	return e.rd.Prefill.Override, e.rd.Decode.Override
}

// cardRouterConfig returns the raw router_config a component's workers publish.
func (e *explainer) cardRouterConfig(component string) json.RawMessage {
	for _, w := range e.dep.Workers {
		if w.Component != component {
			continue
		}
		for _, in := range w.Instances {
			if len(in.RouterConfig) > 0 {
				return in.RouterConfig
			}
		}
	}
	return nil
}

// frontendLookup is the first frontend pod's command line and DYN_* env.
func (e *explainer) frontendLookup() ([]string, func(string) (string, bool)) {
	for _, f := range e.dep.Frontends {
		env := f.Env
		return f.Argv, func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	}
	return nil, nil
}

// hopConfigs fills Router.Hops: per hop, whose configuration it runs, its
// mode, indexer and selection policy, and every non-default value with its
// source.
func (e *explainer) hopConfigs() {
	po, do := e.hopOverrides()
	argv, lookup := e.frontendLookup()
	envOnly, envErr := routecore.ParseFrontendSettings(nil, lookup)
	policies := routecore.ParseFrontendPolicies(argv, lookup)
	whatIf := map[string]bool{}
	for _, c := range e.x.Router.Overrides {
		name, _, _ := strings.Cut(c, "=")
		whatIf[name] = true
	}
	frontendSrc := cmp.Or(e.dep.Router.ConfigSource, "Dynamo's defaults")
	for _, h := range []struct {
		hop string
		cfg routecore.KvRouterConfig
		o   *model.RouterOverride
	}{{routecore.StagePrefill, e.pcfg, po}, {routecore.StageDecode, e.cfg, do}} {
		if h.hop == routecore.StagePrefill && len(e.prefill) == 0 && po == nil {
			continue
		}
		hc := HopConfig{Hop: h.hop, Source: "frontend: " + frontendSrc, Mode: string(e.mode), ModeSource: e.x.Router.ModeSource}
		if h.o != nil {
			hc.Source = "router_config of worker set " + h.o.Component + " (replaces the frontend's for this hop)"
			if h.o.Mode != "" && e.in.Options.Knobs.RouterMode == nil {
				hc.Mode, hc.ModeSource = h.o.Mode, "router_config of worker set "+h.o.Component
			}
		}
		stage := routecore.PolicyStageDecode
		if h.hop == routecore.StagePrefill {
			stage = routecore.PolicyStagePrefill
		} else if len(e.prefill) == 0 {
			stage = routecore.PolicyStageAggregated
		}
		sp := policies.Stage(stage)
		hc.Selection, hc.SelectionSource = cmp.Or(sp.Policy, "(from the policy YAML)"), sp.Source
		switch {
		case !routecore.RouterMode(hc.Mode).IsKV() && hc.Mode != "":
			hc.Indexer = "not-used"
		case h.cfg.OverlapScoreCredit == 0:
			hc.Indexer = "none"
		case !h.cfg.UseKvEvents:
			hc.Indexer = "approximate"
		default:
			hc.Indexer = "kv-events"
		}
		def, cur := configMap(routecore.DefaultKvRouterConfig()), configMap(h.cfg)
		var envMap map[string]string
		if envErr == nil && lookup != nil {
			envMap = configMap(envOnly.Config)
		}
		for _, k := range slices.Sorted(maps.Keys(cur)) {
			if cur[k] == def[k] {
				continue
			}
			v := ConfigValue{Name: k, Value: cur[k]}
			switch {
			case whatIf[k]:
				v.Source = "what-if flag"
			case h.o != nil:
				v.Source = "router_config of worker set " + h.o.Component
			case h.hop == routecore.StagePrefill && (k == "router_track_active_blocks" || k == "router_track_output_blocks"):
				v.Source = "prefill router (active-block tracking is off on the prefill hop)"
			case envMap != nil && envMap[k] == cur[k]:
				v.Source = "frontend env"
			case lookup != nil || argv != nil:
				v.Source = "frontend args"
			default:
				v.Source = "frontend: " + frontendSrc
			}
			hc.Values = append(hc.Values, v)
		}
		e.x.Router.Hops = append(e.x.Router.Hops, hc)
	}
}

// configMap renders a KvRouterConfig's fields as JSON text by name.
func configMap(c routecore.KvRouterConfig) map[string]string {
	b, _ := json.Marshal(c)
	var raw map[string]json.RawMessage
	_ = json.Unmarshal(b, &raw)
	out := make(map[string]string, len(raw))
	for k, v := range raw {
		out[k] = string(v)
	}
	return out
}

// scoringHop is the hop whose router scores cache overlap: prefill when
// prefill workers are routable (the decode router runs with credit 0), else
// decode.
func (e *explainer) scoringHop() (string, routecore.KvRouterConfig) {
	if len(e.prefill) > 0 {
		return routecore.StagePrefill, e.pcfg
	}
	return routecore.StageDecode, e.cfg
}

// approximate models approximate mode and the no-indexer case for the hop that
// scores overlap: in approximate mode (use_kv_events=false) the router predicts
// cache contents from its own routing decisions, which are not published, so
// the KV events read are not what it uses; overlap credit 0 means it builds no
// indexer at all. Either way no overlap is credited.
func (e *explainer) approximate() {
	if len(e.prefill) > 0 && !kvHop(e.pmode, e.pKnown) || len(e.prefill) == 0 && !kvHop(e.dmode, e.dKnown) {
		return
	}
	hop, cfg := e.scoringHop()
	switch {
	case cfg.OverlapScoreCredit == 0:
		e.x.Assumptions = append(e.x.Assumptions, fmt.Sprintf("the %s router's overlap_score_credit is 0: it builds no KV indexer (should_subscribe_to_kv_events is false), so cached blocks play no part in its choice", hop))
	case !cfg.UseKvEvents:
		had := len(e.overlapIn.DeviceBlocks) > 0 || len(e.overlapIn.EffectiveBlocks) > 0
		e.overlapIn = routecore.OverlapInput{}
		d := fmt.Sprintf("the %s router runs in approximate mode (use_kv_events=false): it predicts cache contents from its own routing decisions (entries expire after router_ttl_secs=%v), which are not published; no overlap is credited here", hop, cfg.RouterTTLSecs)
		if had {
			d += ", and the KV events read are not used because the router does not use them"
		}
		e.divergence("approximate-cache", hop, d+"; a worker that served this prefix recently may be preferred")
	}
}

func (e *explainer) divergence(feature, hop, detail string) {
	e.mayDiffer = append(e.mayDiffer, Divergence{Feature: feature, Hop: hop, Detail: detail})
}

// sitaBands are a decision's SITA bands by hop: the routing core computes
// them inside each KV hop's selection (DisaggInput.ApplySita), over the hop's
// pool with the hop's own constraints — the decode band among the decode
// workers the transfer constraint leaves.
func sitaBands(d *routecore.DisaggDecision) map[string]routecore.SitaBand {
	var out map[string]routecore.SitaBand
	for hop, b := range map[string]*routecore.SitaBand{routecore.StagePrefill: d.PrefillSita, routecore.StageDecode: d.DecodeSita} {
		if b == nil || b.Why == "sita_enabled is false" {
			continue
		}
		if out == nil {
			out = map[string]routecore.SitaBand{}
		}
		out[hop] = *b
	}
	return out
}

// setSita records a decision's SITA bands for the stages (markSita) and says
// what the dry run assumed about the size.
func (e *explainer) setSita(d *routecore.DisaggDecision) {
	e.sita = sitaBands(d)
	for _, h := range []struct {
		hop string
		cfg routecore.KvRouterConfig
	}{{routecore.StagePrefill, e.pcfg}, {routecore.StageDecode, e.cfg}} {
		if b, ok := e.sita[h.hop]; ok && b.Applied && h.cfg.SitaOSLWeight > 0 {
			e.x.Assumptions = append(e.x.Assumptions, fmt.Sprintf("the %s router's SITA size counts sita_osl_weight × the request's expected output tokens; the request carries no output estimate here, so its size is its prefill alone", h.hop))
		}
	}
}

// markSita attaches each hop's SITA band to its stage and relabels the
// candidates the band left out.
func (e *explainer) markSita() {
	for hop, b := range e.sita {
		s := e.x.Decode
		if hop == routecore.StagePrefill {
			s = e.x.Prefill
		}
		if s == nil {
			continue
		}
		band := b
		s.Sita = &band
		if !b.Applied {
			continue
		}
		for i := range s.Candidates {
			c := &s.Candidates[i]
			if c.ReasonCode != routecore.ReasonWorkerNotAllowed || b.Allows(c.InstanceID) ||
				(e.userAllowed != nil && !slices.Contains(e.userAllowed, c.InstanceID)) {
				continue
			}
			c.ReasonCode = ReasonSitaBand
			c.Reason = fmt.Sprintf("outside SITA band %d (size %d tokens; the band is workers %s..%s)", b.Band, b.Size, e.label(routecore.WorkerWithDpRank{WorkerID: b.First}, false), e.label(routecore.WorkerWithDpRank{WorkerID: b.Last}, false))
		}
	}
}

// ReasonSitaBand marks a candidate SITA's size band left out: it is not an
// eligibility failure (upstream skips it when scoring), so it never makes a
// request fail on its own.
const ReasonSitaBand routecore.ReasonCode = "OutsideSitaBand"

// features lists what the router may do differently (Verdict.MayDiffer) once
// the route is known.
func (e *explainer) features() {
	defer func() { e.x.Verdict.MayDiffer = e.mayDiffer }()
	// kv: some hop runs the KV router.
	kv := kvHop(e.dmode, e.dKnown) || (len(e.prefill) > 0 && kvHop(e.pmode, e.pKnown))
	if len(e.prefill) > 0 && !kvHop(e.pmode, e.pKnown) && kvHop(e.dmode, e.dKnown) && e.cfg.ConditionalDisaggEnabled {
		e.divergence("conditional-disagg", routecore.StageDecode, fmt.Sprintf("conditional disaggregation is on in the KV decode router, but the prefill hop runs %s: the dry run routes prefill with its picker and pins the decode flow to that pick, which skips the decode peek, so a request the peek would keep on the decode worker (bypass) is shown disaggregated", e.pmode))
	}
	for _, h := range e.x.Router.Hops {
		hopKV := kvHop(e.dmode, e.dKnown)
		if h.Hop == routecore.StagePrefill {
			hopKV = kvHop(e.pmode, e.pKnown)
		}
		if h.Selection != routecore.BuiltinSelectionPolicy && hopKV {
			name := "a custom policy"
			if h.Selection != "" && !strings.HasPrefix(h.Selection, "(") {
				name = "the custom policy " + h.Selection
			}
			e.divergence("selection-policy", h.Hop, fmt.Sprintf("the %s hop runs %s (%s), a worker-selection policy linked into a custom Dynamo image whose code is not visible; the built-in cost model is shown. Its filters can also reject every candidate (AllEligibleWorkersFiltered, HTTP 503)", h.Hop, name, h.SelectionSource))
		}
	}
	po, do := e.hopOverrides()
	for _, o := range []*model.RouterOverride{po, do} {
		if o == nil {
			continue
		}
		raw := e.cardRouterConfig(o.Component)
		doc, err := routecore.DecodeRouterConfigJSON(raw)
		if err != nil {
			continue
		}
		for _, f := range doc.Ignored {
			switch strings.TrimPrefix(f, "kv_router_config.") {
			case "router_policy_config", "router_prefill_policy", "router_decode_policy":
				if kv {
					e.divergence("selection-policy", "", fmt.Sprintf("worker set %s's router_config sets %s: a custom worker-selection policy whose code is not visible may pick instead of the built-in cost model", o.Component, f))
				}
			case "enable_session_prefix_index":
				e.divergence("session-affinity", "", fmt.Sprintf("worker set %s's router_config sets %s: requests of one session may be steered to the worker holding the session's prefix, by state the router keeps in memory", o.Component, f))
			case "router_approximate_cache_policy":
				e.divergence("approximate-cache", "", fmt.Sprintf("worker set %s's router_config sets %s: the approximate cache's eviction is not modelled", o.Component, f))
			}
		}
		e.conditionalPrefill(o.Component, raw)
	}
	if kv {
		ready := 0
		for _, f := range e.dep.Frontends {
			if f.Ready {
				ready++
			}
		}
		if ready > 1 && !e.cfg.RouterReplicaSync {
			e.divergence("replicas", "", fmt.Sprintf("%d frontend replicas run without router replica sync (DYN_ROUTER_REPLICA_SYNC / --router-replica-sync): each router counts only the requests it routed itself, so a replica's view of the loads differs from the loads shown, which are at best one replica's", ready))
		}
	}
	if e.cfg.RouterPredictedTTLSecs != nil && kv {
		e.divergence("approximate-cache", "", fmt.Sprintf("router_predicted_ttl_secs=%v: the router also predicts cache contents from its own decisions (a side index, entries kept that long) and credits the larger of the two overlaps; those predictions are not published", *e.cfg.RouterPredictedTTLSecs))
	}
	e.runtimeFeatures()
}

// conditionalPrefill computes a worker set's conditional_prefill policy when
// its router_config carries one: TokenCap from the request and the cache-hot
// decode worker, Regression's fast path from the loads; what depends on the
// cost-evaluation sidecar is reported as not computable.
func (e *explainer) conditionalPrefill(component string, raw json.RawMessage) {
	c, err := routecore.DecodeConditionalPrefillJSON(raw)
	if err != nil {
		e.divergence("conditional-prefill", "", fmt.Sprintf("worker set %s's conditional_prefill configuration could not be read (%v)", component, err))
		return
	}
	if !c.Present || !c.Enabled || len(e.prefill) == 0 {
		return
	}
	in := routecore.ConditionalPrefillInput{PromptTokens: uint64(len(e.in.Request.Tokens)), BlockSize: uint64(e.blockSize)}
	var hot *routecore.Worker
	for i := range e.decode {
		w := &e.decode[i]
		ov := e.overlapIn.DeviceBlocks[routecore.WorkerWithDpRank{WorkerID: w.ID, DpRank: w.Runtime.DataParallelStartRank}]
		if hot == nil || ov > in.DecodeOverlapBlocks {
			hot, in.DecodeOverlapBlocks = w, ov
		}
	}
	state := func(w *routecore.Worker) routecore.CondPrefillWorker {
		if w == nil {
			return routecore.CondPrefillWorker{}
		}
		l := w.Loads[w.Runtime.DataParallelStartRank]
		load, queued := l.ActiveDecodeBlocks, (l.ActivePrefillTokens+in.BlockSize-1)/max(in.BlockSize, 1)
		return routecore.CondPrefillWorker{LoadBlocks: &load, MaxBlocks: w.Runtime.TotalKvBlocks, QueuedBlocks: &queued}
	}
	in.Decode = state(hot)
	if e.x.Prefill != nil {
		for _, cand := range e.x.Prefill.Candidates {
			if !cand.Selected {
				continue
			}
			for i := range e.prefill {
				if e.prefill[i].ID == cand.InstanceID {
					in.Prefill = state(&e.prefill[i])
				}
			}
			break
		}
	}
	d := routecore.DecideConditionalPrefill(c, in)
	switch {
	case !d.Known:
		e.divergence("conditional-prefill", "", fmt.Sprintf("worker set %s enables conditional prefill: %s; the request may be served aggregated on the cache-hot decode worker instead", component, d.Explanation))
	case d.Bypass && e.x.Mode == routecore.DisaggModeDisaggregated:
		e.divergence("conditional-prefill", "", fmt.Sprintf("worker set %s enables conditional prefill and it bypasses remote prefill for this request (%s): the cache-hot decode worker prefills locally, not the disaggregated flow shown", component, d.Explanation))
	default:
		e.x.Assumptions = append(e.x.Assumptions, fmt.Sprintf("worker set %s's conditional prefill keeps remote prefill for this request (%s)", component, d.Explanation))
	}
}

// frontendSetting returns a frontend setting from its command line (which wins,
// as argparse gives a flag precedence over its env default) or its DYN_* env,
// and where it came from.
func (e *explainer) frontendSetting(flag, env string) (value, source string, ok bool) {
	argv, lookup := e.frontendLookup()
	if v, found := argValue(argv, flag); flag != "" && found {
		return v, "frontend args " + flag, true
	}
	if lookup != nil && env != "" {
		if v, found := lookup(env); found {
			return v, "frontend env " + env, true
		}
	}
	return "", "", false
}

// argValue is the value of the last --flag value / --flag=value in words.
func argValue(words []string, flag string) (string, bool) {
	val, found := "", false
	for i, w := range words {
		name, v, hasVal := strings.Cut(w, "=")
		if name != flag {
			continue
		}
		switch {
		case hasVal:
			val, found = v, true
		case i+1 < len(words):
			val, found = words[i+1], true
		}
	}
	return val, found
}

// positiveInt parses a non-negative decimal count; ok is false for anything
// else (the frontend rejects it or falls back to its default).
func positiveInt(s string) (uint64, bool) {
	v, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
	return v, err == nil
}

// runtimeFeatures lists the per-request router state outside the routing core
// that a configuration turns on: request migration (a retry excludes the
// workers that failed it), worker quarantine after a failure, and the router
// queue whose due times shed requests with DeadlineExceeded. None of that state
// is published, so each is a way the decision may differ.
func (e *explainer) runtimeFeatures() {
	e.migrationFeature()
	e.quarantineFeature()
	e.deadlineFeature()
}

// migrationFeature: --migration-limit / DYN_MIGRATION_LIMIT on the frontend
// (since Dynamo #5918), or --migration-limit on a worker (releases before it,
// where the worker's card carried migration_limit).
func (e *explainer) migrationFeature() {
	limit, src := uint64(0), ""
	if v, s, ok := e.frontendSetting("--migration-limit", "DYN_MIGRATION_LIMIT"); ok {
		if n, ok := positiveInt(v); ok && n > 0 {
			limit, src = n, s
		}
	}
	if limit == 0 {
		for _, w := range e.dep.Workers {
			if v, ok := argValue(w.Argv, "--migration-limit"); ok {
				if n, ok := positiveInt(v); ok && n > 0 {
					limit, src = n, "worker "+w.Pod+" args --migration-limit (a release before Dynamo #5918 moved the flag to the frontend)"
					break
				}
			}
		}
	}
	if limit == 0 {
		return
	}
	retry := "a KV-routed retry excludes the workers that already failed the request (Dynamo #11647)"
	if !kvHop(e.dmode, e.dKnown) || (len(e.prefill) > 0 && !kvHop(e.pmode, e.pKnown)) {
		retry += "; a round-robin or random retry may pick the failed worker again (Dynamo #13736)"
	}
	e.divergence("migration", "", fmt.Sprintf("request migration is on (migration_limit=%d, %s): a request whose worker disconnects, stops answering or shuts down mid-stream is routed again, up to %d time(s), from the tokens generated so far; %s. The dry run shows the first attempt only; which workers a retry excludes is per-request frontend state", limit, src, limit, retry))
}

// quarantineFeature: a worker a request failed on is dropped from the
// frontend's routable set for DYN_RUNTIME_INHIBITED_DURATION_SECS (default 5 s,
// 0 disables it; Dynamo #11993), and DYN_HTTP_BACKEND_STREAM_TIMEOUT_SECS
// quarantines a worker whose stream goes silent that long
// (lib/runtime push_router.rs wrap_with_fault_detection → report_instance_down).
// Listed when the deployment sets either; the default window applies to every
// deployment and is documented, not repeated on each verdict.
func (e *explainer) quarantineFeature() {
	window, wsrc, wset := e.frontendSetting("", "DYN_RUNTIME_INHIBITED_DURATION_SECS")
	timeout, tsrc, tset := e.frontendSetting("", "DYN_HTTP_BACKEND_STREAM_TIMEOUT_SECS")
	secs, ok := positiveInt(window)
	switch {
	case wset && !ok:
		secs = 5 // upstream warns and keeps its default
	case !wset:
		secs = 5
	}
	if secs == 0 {
		return // local inhibition disabled: nothing is quarantined
	}
	var parts []string
	if wset {
		parts = append(parts, fmt.Sprintf("%s=%s: a worker a request failed on (cannot connect, disconnected, connection or response timeout, engine shutdown) is dropped from the frontend's routable workers for up to %d s, until discovery reconciles (Dynamo #11993)", wsrc, strings.TrimSpace(window), secs))
	}
	if t, ok := positiveInt(timeout); tset && ok && t > 0 {
		parts = append(parts, fmt.Sprintf("%s=%d: a worker whose response stream is silent for %d s is quarantined the same way (for %d s)", tsrc, t, t, secs))
	}
	if len(parts) == 0 {
		return
	}
	e.divergence("quarantine", "", strings.Join(parts, "; ")+". Which workers are quarantined now is the frontend's own state and not published, so a worker shown as a candidate may be skipped")
}

// deadlineFeature: with router_queue_threshold set on a KV hop, a request waits
// in the router's queue while every eligible worker is above it, and a queued
// request whose due time passes is shed with DeadlineExceeded (Dynamo #14123,
// #14176; HTTP 429 "request deadline exceeded").
func (e *explainer) deadlineFeature() {
	type queued struct {
		hop string
		th  float64
	}
	var qs []queued
	for _, h := range []struct {
		hop  string
		cfg  routecore.KvRouterConfig
		kv   bool
		used bool
	}{
		{routecore.StagePrefill, e.pcfg, kvHop(e.pmode, e.pKnown), len(e.prefill) > 0},
		{routecore.StageDecode, e.cfg, kvHop(e.dmode, e.dKnown), true},
	} {
		if h.used && h.kv && h.cfg.RouterQueueThreshold != nil {
			qs = append(qs, queued{h.hop, *h.cfg.RouterQueueThreshold})
		}
	}
	if len(qs) == 0 {
		return
	}
	hop, who := qs[0].hop, "the "+qs[0].hop+" router queues"
	if len(qs) == 2 {
		if qs[0].th == qs[1].th {
			hop, who, qs = "", "the prefill and decode routers queue", qs[:1]
		} else {
			hop, who = "", fmt.Sprintf("the prefill router (router_queue_threshold=%v) and the decode router queue", qs[0].th)
			qs = qs[1:]
		}
	}
	e.divergence("deadline", hop, fmt.Sprintf("%s requests (router_queue_threshold=%v): while every eligible worker is above the threshold a request waits in the router's queue instead of being routed now, and one whose due time passes there (the policy class's TTFT SLO, or x-dynamo-slo-ttft-ms) fails with DeadlineExceeded (HTTP 429 \"request deadline exceeded\", Dynamo #14123/#14176). The queue is not published: the dry run routes as if the request were dispatched now", who, qs[0].th))
}
