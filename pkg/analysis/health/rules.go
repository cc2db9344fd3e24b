package health

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/behavior"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/cmdline"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
)

// kvEvents: KvEventsNotPublished. The router subscribes to KV events when it runs
// in kv mode with use_kv_events and an overlap credit above 0 and no remote
// indexer (KvRouterConfig::should_subscribe_to_kv_events); prefill and aggregated
// workers then need an event source, decode workers only under conditional
// disaggregation (KvEventSourceRequirement::derive, lib/llm/src/kv_router.rs).
// A worker's card says whether it publishes (runtime_config
// kv_event_publishing_enabled, #12095): false is the worker's own word, so the
// finding holds whatever its command line says; true clears it (the flags may
// be in a config file); only without it is the command line read.
//
// The frontend's own counters, where exported, weigh in: the router's
// kv_event_source_mismatch_workers gauge (#11194) above 0 for a worker set
// confirms the finding (or raises it when the command line looked fine), at 0
// it clears a suspicion read from the command line; kv_cache_events_applied
// (no worker label) at 0 stored events over many routed requests confirms,
// and stored events applied while every worker of the deployment looks silent
// on its command line contradict that reading, which is then dropped.
func (c *check) kvEvents() {
	type key struct {
		role      model.Role
		engine    string
		why       string
		card      bool
		source    string
		component string
	}
	groups := map[key][]*replica{}
	var keys []key
	needing := map[string][]*replica{}
	var needOrder []string
	argsSuspects := 0
	for _, r := range c.replicas {
		role := r.role()
		rt := c.routingFor(r.leader.Component)
		if !isKV(rt.mode) || !rt.cfg.UseKvEvents || !(rt.cfg.OverlapScoreCredit > 0) || rt.cfg.UseRemoteIndexer {
			continue
		}
		needs := role == model.RolePrefill || role == model.RoleAggregated ||
			(role == model.RoleDecode && rt.cfg.ConditionalDisaggEnabled)
		if !needs {
			continue
		}
		if needing[r.leader.Component] == nil {
			needOrder = append(needOrder, r.leader.Component)
		}
		needing[r.leader.Component] = append(needing[r.leader.Component], r)
		var p publishing
		switch declared, on := cardPublishing(r); {
		case declared && on:
			continue
		case declared:
			p = publishing{engine: engineOf(cmdline.CommandWords(r.leader.Argv, r.leader.Env)), known: true, card: true}
		case len(r.leader.Argv) == 0:
			continue
		default:
			if p = kvPublishing(r.leader); !p.known || p.on {
				continue
			}
			if p.engine == engineVLLM && behavior.At(behavior.RuleVLLMKvEvents, c.rel).Key == behavior.EraImplicitConfig {
				// Before 1.1 Dynamo's vLLM worker made a KV-events config itself
				// when prefix caching was on (until #6404), then through a
				// deprecated fallback (removed by #7591): bare args publish.
				continue
			}
			argsSuspects++
		}
		k := key{role: role, engine: p.engine, why: p.why, card: p.card, source: rt.source, component: r.leader.Component}
		if groups[k] == nil {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], r)
	}
	ev := c.d.KvEvents
	stored, hasApplied := ev.StoredOK()
	var requests uint64
	if ev != nil && ev.RoutedRequests != nil {
		requests = *ev.RoutedRequests
	}
	noneApplied := hasApplied && stored == 0 && requests >= KvEventsMinRequests
	// Stored events reached the router, yet by their command lines no worker of
	// the deployment publishes: the command-line reading is wrong somewhere
	// (flags in a file, an engine default), and it cannot say where.
	contradicted := hasApplied && stored > 0 && argsSuspects > 0 && argsSuspects == len(c.replicas)
	appliedNote := ""
	if noneApplied {
		appliedNote = fmt.Sprintf("; the router confirms it: its index has applied 0 stored KV events over %s routed requests (dynamo_component_kv_cache_events_applied{event_type=\"stored\",status=\"ok\"}, %s)",
			u(requests), ev.Source)
	}
	confirmed := map[string]bool{}
	for _, k := range keys {
		rs := groups[k]
		gauge, zero := c.sourceMismatch(rs)
		if !k.card && gauge == nil && (contradicted || zero) {
			continue
		}
		evidence := appliedNote
		if gauge != nil {
			confirmed[k.component] = true
			evidence += "; " + describeMismatch(gauge, ev.Source)
		}
		ns := names(rs)
		what := fmt.Sprintf("%s none (%s: %s%s)", pluralVerb(len(rs), string(k.role)+" worker", "publishes", "publish"), engineNames[k.engine], k.why, decodeExtra(k.role))
		if k.card {
			engine := ""
			if name := engineNames[k.engine]; name != "" {
				engine = "; " + name
			}
			what = fmt.Sprintf("%s KV-event publishing disabled (the worker's own model card: runtime_config.kv_event_publishing_enabled false%s%s)",
				pluralVerb(len(rs), string(k.role)+" worker", "reports", "report"), engine, decodeExtra(k.role))
		}
		c.add(model.Finding{ID: FindingKvEventsNotPublished, Severity: model.SeverityWarning, Objects: podObjects(rs),
			Message: fmt.Sprintf("the router expects KV events (kv mode with use_kv_events, %s), but %s: %s%s. Its prefix index stays empty for them, so every request sees 0 cached blocks there and is placed on load alone; the KV hit rate stays near 0 %% however much prompts share, and only the frontend log says so (kv_event_publisher_disabled, #12095)",
				k.source, what, examples(ns), evidence),
			Hint: c.publishFix(k.engine) + "; or, to route without events on purpose, run the frontend with --no-router-kv-events (approximate mode)"})
	}
	// Worker sets the router counts without a source, where nothing above
	// flagged them (their command lines looked fine or could not be read).
	for _, comp := range needOrder {
		if confirmed[comp] {
			continue
		}
		rs := needing[comp]
		gauge, _ := c.sourceMismatch(rs)
		if gauge == nil {
			continue
		}
		engine := engineOf(cmdline.CommandWords(rs[0].leader.Argv, rs[0].leader.Env))
		c.add(model.Finding{ID: FindingKvEventsNotPublished, Severity: model.SeverityWarning, Objects: podObjects(rs),
			Message: fmt.Sprintf("the router expects KV events from worker set %s (%s: %s), and %s%s. Its prefix index stays empty for those workers: requests there see 0 cached blocks and are placed on load alone, and the KV hit rate stays near 0 %% however much prompts share",
				cmp.Or(comp, "(no component)"), plural(len(rs), "worker"), examples(names(rs)), describeMismatch(gauge, ev.Source), appliedNote),
			Hint: c.publishFix(engine) + " on the workers the frontend log names (KV EVENT ROUTING MISCONFIGURATION); or run the frontend with --no-router-kv-events (approximate mode)"})
	}
}

// KvEventsMinRequests is the number of routed requests (router_requests_total)
// after which 0 stored KV events applied is evidence rather than a cold start.
const KvEventsMinRequests = 100

func decodeExtra(role model.Role) string {
	if role == model.RoleDecode {
		return " (conditional disaggregation scores decode workers by their cache too)"
	}
	return ""
}

// publishFix is the flag that turns an engine's KV-event publishing on, for the
// release checked.
func (c *check) publishFix(engine string) string {
	switch engine {
	case engineVLLM:
		return `add --kv-events-config '{"publisher":"zmq","topic":"kv-events","endpoint":"tcp://*:5557","enable_kv_cache_events":true}' to the workers' args (prefix caching on)`
	case engineSGLang:
		return `add --kv-events-config '{"publisher":"zmq","topic":"kv-events","endpoint":"tcp://*:5557"}' to the workers' args (radix cache on)`
	case engineTRTLLM:
		if behavior.At(behavior.RuleTRTLLMKvEvents, c.rel).Key == behavior.EraPublishEvents {
			return "add --publish-events-and-metrics to the workers' args (" + relName(c.rel) + "; --publish-kv-events replaces it from 1.3.0)"
		}
		return "add --publish-kv-events (before Dynamo 1.3.0: --publish-events-and-metrics) to the workers' args"
	}
	return "turn the engine's KV-event publishing on (vLLM and SGLang: --kv-events-config; TensorRT-LLM: --publish-kv-events)"
}

// sourceMismatch finds the router's kv_event_source_mismatch_workers series
// that concern rs's worker set: the target component is the Dynamo component
// of their instances' endpoints (or the DGD component), else, on frontends
// without target labels, the model and worker type. It returns the first
// series above 0 (nil when none), and zero when a matching series says 0.
func (c *check) sourceMismatch(rs []*replica) (gauge *model.KvEventSourceMismatch, zero bool) {
	ev := c.d.KvEvents
	if ev == nil || len(rs) == 0 {
		return nil, false
	}
	comps := map[string]bool{}
	models := map[string]bool{}
	for _, r := range rs {
		comps[r.leader.Component] = true
		if m := r.model(); m != "" {
			models[m] = true
		}
		for _, p := range r.pods {
			for _, in := range p.Instances {
				if parts := strings.Split(in.Endpoint, "/"); len(parts) >= 2 && parts[1] != "" {
					comps[parts[1]] = true
				}
			}
		}
	}
	role := rs[0].role()
	for i := range ev.SourceMismatch {
		m := &ev.SourceMismatch[i]
		switch {
		case m.TargetComponent != "":
			if !comps[m.TargetComponent] {
				continue
			}
		case m.Model != "" || m.WorkerType != "":
			if m.Model != "" && len(models) > 0 && !models[m.Model] {
				continue
			}
			if m.WorkerType != "" && !workerTypeMatches(m.WorkerType, role) {
				continue
			}
		}
		if m.Workers == 0 {
			zero = true
			continue
		}
		if gauge == nil {
			gauge = m
		}
	}
	return gauge, zero
}

func workerTypeMatches(wt string, role model.Role) bool {
	switch strings.ToLower(wt) {
	case "prefill":
		return role == model.RolePrefill
	case "decode":
		return role == model.RoleDecode || role == model.RoleAggregated
	}
	return strings.EqualFold(wt, string(role))
}

// describeMismatch quotes a mismatch series as evidence.
func describeMismatch(m *model.KvEventSourceMismatch, source string) string {
	var labels []string
	for _, l := range [][2]string{{"model", m.Model}, {"worker_type", m.WorkerType}, {"target_component", m.TargetComponent}, {"target_endpoint", m.TargetEndpoint}} {
		if l[1] != "" {
			labels = append(labels, l[0]+"=\""+l[1]+"\"")
		}
	}
	return fmt.Sprintf("the router itself counts %s without a KV event source (dynamo_component_router_kv_event_source_mismatch_workers{%s} %s, %s; #11194)",
		plural(int(min(m.Workers, 1<<20)), "worker"), strings.Join(labels, ","), u(m.Workers), source)
}

// hashSpace: KvHashSpaceMismatch. A worker set (one Dynamo component of one
// model) whose cards disagree on kv_cache_block_size or enable_eagle hashes
// blocks in more than one space.
func (c *check) hashSpace() {
	type setKey struct{ model, component string }
	sets := map[setKey][]*replica{}
	var keys []setKey
	for _, r := range c.replicas {
		if len(r.cards) == 0 {
			continue
		}
		k := setKey{r.model(), r.leader.Component}
		if sets[k] == nil {
			keys = append(keys, k)
		}
		sets[k] = append(sets[k], r)
	}
	for _, k := range keys {
		rs := sets[k]
		bySize := map[int][]string{}
		byEagle := map[bool][]string{}
		for _, r := range rs {
			in := r.cards[0]
			if in.BlockSize > 0 {
				bySize[in.BlockSize] = append(bySize[in.BlockSize], r.leader.Pod)
			}
			byEagle[in.Runtime.EnableEagle] = append(byEagle[in.Runtime.EnableEagle], r.leader.Pod)
		}
		var parts []string
		if len(bySize) > 1 {
			sizes := make([]int, 0, len(bySize))
			for s := range bySize {
				sizes = append(sizes, s)
			}
			slices.Sort(sizes)
			var ps []string
			for _, s := range sizes {
				ps = append(ps, fmt.Sprintf("%d on %s", s, examples(sorted(bySize[s]))))
			}
			parts = append(parts, "kv_cache_block_size "+strings.Join(ps, "; "))
		}
		if len(byEagle) > 1 {
			parts = append(parts, fmt.Sprintf("enable_eagle true on %s; false on %s", examples(sorted(byEagle[true])), examples(sorted(byEagle[false]))))
		}
		if len(parts) == 0 {
			continue
		}
		modelName := cmp.Or(k.model, "(unnamed model)")
		c.add(model.Finding{ID: FindingKvHashSpaceMismatch, Severity: model.SeverityWarning, Objects: podObjects(rs),
			Message: fmt.Sprintf("workers of worker set %s (model %s) publish cards that hash KV blocks differently: %s. The router hashes a request once per worker set, so a worker whose cache is hashed another way never matches (overlap always 0, \"routing fails silently\", #1233); current frontends reject a card whose checksum differs from the worker set's first (#7368), so those workers may serve nothing at all",
				cmp.Or(k.component, "(no component)"), modelName, strings.Join(parts, "; ")),
			Hint: "give every worker of the set the same --block-size (--page-size on SGLang, tokens_per_block on TensorRT-LLM) and the same speculative-decoding setting, then restart the ones that differ"})
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// enforceDisagg reads --enforce-disagg (and 1.0's --decode-fallback) as
// pkg/behavior does; known is false when no frontend command line is known.
func (c *check) enforceDisagg() (value, known bool, from string) {
	v, from := behavior.EnforceDisagg(c.d, c.rel)
	return v, from != "", from
}

// disagg: DisaggNotActive. Decode workers serve, and no prefill worker is both
// ready and registered: the frontend's prefill router is not activated (or was
// deactivated when the last prefill worker left), so requests go to decode
// aggregated — or fail with PrefillError::NotActivated under --enforce-disagg
// (lib/llm/src/kv_router/prefill_router.rs).
func (c *check) disagg() {
	if behavior.At(behavior.RuleReadiness, c.rel).Key == behavior.EraStrictNeeds {
		// From Dynamo 1.3 decode workers without prefill leave the model
		// unready (every request 503): ModelNotReady (pkg/analysis) says so.
		return
	}
	var decode, prefill, readyPrefill []*replica
	anyCard := false
	for _, r := range c.replicas {
		anyCard = anyCard || len(r.cards) > 0
		switch r.role() {
		case model.RoleDecode:
			if r.ready {
				decode = append(decode, r)
			}
		case model.RolePrefill:
			prefill = append(prefill, r)
		}
	}
	if len(decode) == 0 {
		return
	}
	for _, r := range prefill {
		// Registered: ready and, when cards are read at all, publishing one.
		if r.ready && (!anyCard || len(r.cards) > 0) {
			readyPrefill = append(readyPrefill, r)
		}
	}
	if len(readyPrefill) > 0 {
		return
	}
	enforce, known, from := c.enforceDisagg()
	if !known {
		return
	}
	state := "no prefill worker exists"
	if len(prefill) > 0 {
		state = fmt.Sprintf("its %s (%s) are not ready or have not registered", plural(len(prefill), "prefill worker"), examples(names(prefill)))
	}
	objs := append(podObjects(decode), podObjects(prefill)...)
	objs = append(objs, c.frontendObjects()...)
	if enforce {
		c.add(model.Finding{ID: FindingDisaggNotActive, Severity: model.SeverityError, Objects: objs,
			Message: fmt.Sprintf("%s decode worker(s) (%s) serve, but %s: with --enforce-disagg (%s) every request fails with PrefillError::NotActivated until a prefill worker registers",
				strconv.Itoa(len(decode)), examples(names(decode)), state, from),
			Hint: "bring the prefill workers up (kubectl describe/logs on them); the frontend activates its prefill router as soon as one registers"})
		return
	}
	c.add(model.Finding{ID: FindingDisaggNotActive, Severity: model.SeverityWarning, Objects: objs,
		Message: fmt.Sprintf("%s decode worker(s) (%s) serve, but %s: the frontend's prefill router is not active, so every request runs aggregated on the decode workers (prefill and decode on one GPU, no KV transfer) and nothing reports it (enforce_disagg is false, %s; #6957, #7131)",
			strconv.Itoa(len(decode)), examples(names(decode)), state, from),
		Hint: "bring the prefill workers up; to fail requests rather than serve them aggregated, run the frontend with --enforce-disagg (DYN_ENFORCE_DISAGG=true)"})
}

// replicaSync: RouterReplicasNotSynced. Several KV-routing frontend replicas
// without router replica sync each see only their own load. Session affinity
// with a TTL (--router-session-affinity-ttl-secs, #10875, Dynamo 1.3) keeps its
// bindings per replica in 1.3 (#11035; a first sync, #11079, was reverted by
// #11217) and syncs them itself from 1.4, whatever --router-replica-sync says
// (#11750).
func (c *check) replicaSync() {
	rt := c.routingFor("")
	n, ready := 0, 0
	for _, f := range c.d.Frontends {
		n++
		if f.Ready {
			ready++
		}
	}
	declared := 0
	for _, comp := range c.d.Components {
		if strings.EqualFold(comp.Type, "frontend") && comp.Replicas != nil {
			declared += int(*comp.Replicas)
		}
	}
	replicas := max(ready, declared)
	if replicas < 2 {
		return
	}
	what := fmt.Sprintf("%d frontend replicas", replicas)
	if ready >= 2 {
		what = fmt.Sprintf("%d ready frontend replicas (%s)", ready, examples(frontendNames(c.d.Frontends)))
	} else if declared >= 2 {
		what = fmt.Sprintf("%d frontend replicas declared in the DGD", declared)
	}
	ttl, ttlFrom := c.affinityTTL()
	affinityLocal := ttl != "" && c.rel.Known() && behavior.At(behavior.RuleAffinitySync, c.rel).Key == behavior.EraPerReplica
	if isKV(rt.mode) && !rt.cfg.RouterReplicaSync {
		affinity := ""
		switch {
		case affinityLocal:
			affinity = fmt.Sprintf(". Session affinity (TTL %ss, %s) is per replica in %s as well: a conversation's next turn on another replica loses its worker and its cached prefix (#11035; synced from 1.4, #11750)", ttl, ttlFrom, relName(c.rel))
		case ttl != "" && behavior.At(behavior.RuleAffinitySync, c.rel).Key == behavior.EraSynced:
			affinity = fmt.Sprintf(". Session affinity (TTL %ss, %s) syncs its own bindings regardless (#11750), which does not share the load view", ttl, ttlFrom)
		}
		c.add(model.Finding{ID: FindingRouterReplicasNotSynced, Severity: model.SeverityWarning, Objects: c.frontendObjects(),
			Message: fmt.Sprintf("%s route in kv mode without router replica sync (%s): KV events reach every replica, but each replica counts only the requests it routed itself as active load, so each sees about 1/%d of the load and replicas pile new requests onto the same workers (#589, #7753, #14758)%s",
				what, rt.source, replicas, affinity),
			Hint: "run the frontends with --router-replica-sync (DYN_ROUTER_REPLICA_SYNC=true) so they share active-sequence state"})
		return
	}
	if affinityLocal {
		c.add(model.Finding{ID: FindingRouterReplicasNotSynced, Severity: model.SeverityWarning, Objects: c.frontendObjects(),
			Message: fmt.Sprintf("%s run session affinity (TTL %ss, %s) on %s, where each replica keeps its own session bindings (#11035) and --router-replica-sync does not share them: a conversation's next turn on another replica is routed afresh and loses its worker's cached prefix",
				what, ttl, ttlFrom, relName(c.rel)),
			Hint: "upgrade the frontends to Dynamo 1.4 or later (bindings sync across replicas, #11750), or send each session to one frontend replica (hash X-Dynamo-Session-ID at the ingress)"})
	}
}

// affinityTTL reads --router-session-affinity-ttl-secs
// (DYN_ROUTER_SESSION_AFFINITY_TTL_SECS) from the first frontend command line
// that sets it; "" when none does or the value is 0.
func (c *check) affinityTTL() (ttl, from string) {
	for _, f := range c.d.Frontends {
		words := cmdline.CommandWords(f.Argv, f.Env)
		v, ok := flagValue(words, "--router-session-affinity-ttl-secs")
		where := "frontend pod " + f.Pod + " args"
		if !ok {
			v, ok = f.Env["DYN_ROUTER_SESSION_AFFINITY_TTL_SECS"]
			where = "frontend pod " + f.Pod + " env DYN_ROUTER_SESSION_AFFINITY_TTL_SECS"
		}
		if !ok {
			continue
		}
		n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 32)
		if err != nil || n == 0 {
			return "", ""
		}
		return strconv.FormatUint(n, 10), where
	}
	return "", ""
}

func frontendNames(fs []model.Frontend) []string {
	var out []string
	for _, f := range fs {
		if f.Ready {
			out = append(out, f.Pod)
		}
	}
	slices.Sort(out)
	return out
}

// busy: AllWorkersBusy. The busy thresholds (frontend flags/env, or the live
// /busy_threshold answer) evaluated as the frontend does
// (routecore.WorkerOverload, worker_monitor.rs) on the loads read from its
// /metrics: when every ready worker of a role is overloaded, the router has no
// free worker for that role.
func (c *check) busy() {
	th := c.d.Router.Thresholds
	if !th.IsConfigured() {
		return
	}
	if c.admissionOff() {
		return // Dynamo 1.2/1.3 without --admission-control token-capacity: no busy checks
	}
	byRole := map[model.Role][]*replica{}
	for _, r := range c.replicas {
		if r.ready {
			byRole[r.role()] = append(byRole[r.role()], r)
		}
	}
	for _, role := range []model.Role{model.RolePrefill, model.RoleDecode, model.RoleAggregated} {
		rs := byRole[role]
		if len(rs) == 0 {
			continue
		}
		var trips []string
		all := true
		for _, r := range rs {
			over, desc := overloaded(th, r)
			if !over {
				all = false
				break
			}
			trips = append(trips, r.leader.Pod+" ("+desc+")")
		}
		if !all {
			continue
		}
		slices.Sort(trips)
		c.add(model.Finding{ID: FindingAllWorkersBusy, Severity: model.SeverityWarning, Objects: podObjects(rs),
			Message: fmt.Sprintf("all %s are over a busy threshold at the loads read (thresholds from %s): %s. New requests for this role are queued or rejected with %s \"All workers are busy, please retry later\" until one drops below (#9506, #9547); a threshold below the workers' steady load starves them permanently (#8163)",
				plural(len(rs), string(role)+" worker"), cmp.Or(c.d.Router.ThresholdsSource, "the frontend"), examples(trips), c.overloadStatus()),
			Hint: "add workers for this role, or raise --active-decode-blocks-threshold / --active-prefill-tokens-threshold(-frac) (live: POST /busy_threshold); " + c.busyOffHint()})
	}
}

// admissionOff reports whether the frontend's busy checks are switched off
// although thresholds are set: in Dynamo 1.2 and 1.3 the thresholds applied
// only with --admission-control token-capacity (DYN_ADMISSION_CONTROL), the
// default being none (#9694; --no-admission-control, #9547, cleared them too);
// #11276 (1.4) removed the switch and each threshold is opt-in by itself. A
// live /busy_threshold answer is what the frontend applies, so it is trusted.
func (c *check) admissionOff() bool {
	if behavior.At(behavior.RuleBusyThresholds, c.rel).Key != behavior.EraAdmissionGate || !strings.Contains(c.d.Router.ThresholdsSource, "(args/env)") {
		return false
	}
	for _, f := range c.d.Frontends {
		if len(f.Argv) == 0 {
			continue
		}
		words := cmdline.CommandWords(f.Argv, f.Env)
		if has(words, "--no-admission-control") {
			return true
		}
		mode, ok := flagValue(words, "--admission-control")
		if !ok {
			mode, ok = f.Env["DYN_ADMISSION_CONTROL"]
		}
		return !ok || !strings.EqualFold(strings.TrimSpace(mode), "token-capacity")
	}
	return false
}

// overloadStatus is the HTTP status the frontend answers an all-busy request
// with: DYN_HTTP_OVERLOAD_STATUS_CODE when set (#11249, 1.4), 529 from Dynamo
// 1.3 (#10941), 503 before.
func (c *check) overloadStatus() string {
	if behavior.At(behavior.RuleOverloadStatus, c.rel).Key == behavior.EraStatusConfig {
		for _, f := range c.d.Frontends {
			if v, ok := f.Env["DYN_HTTP_OVERLOAD_STATUS_CODE"]; ok {
				if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n >= 100 && n <= 599 {
					return "HTTP " + strconv.Itoa(n) + " (DYN_HTTP_OVERLOAD_STATUS_CODE)"
				}
			}
		}
	}
	if behavior.At(behavior.RuleOverloadStatus, c.rel).Key == behavior.EraStatus503 {
		return "HTTP 503"
	}
	return "HTTP 529"
}

// busyOffHint says how to turn the busy checks off in the release checked.
func (c *check) busyOffHint() string {
	switch {
	case behavior.At(behavior.RuleBusyThresholds, c.rel).Key == behavior.EraAdmissionGate:
		return "dropping --admission-control token-capacity (the default, none, clears the thresholds) turns the busy checks off"
	case behavior.At(behavior.RuleBusyThresholds, c.rel).Key == behavior.EraDefaultsOn:
		return "unsetting the threshold flags turns the busy checks off"
	}
	return "unsetting a threshold flag turns that check off (each is opt-in; --admission-control is ignored since #11276)"
}

// overloaded evaluates a replica's published instances: it is overloaded when
// every instance with a known load is, and at least one load is known.
func overloaded(th routecore.BusyThresholds, r *replica) (bool, string) {
	known := false
	var desc []string
	for _, in := range r.cards {
		if len(in.Load) == 0 {
			continue
		}
		known = true
		w := routecore.Worker{ID: in.ID, Runtime: in.Runtime, Loads: map[uint32]routecore.RankLoad{}}
		for _, l := range in.Load {
			w.Loads[l.DpRank] = routecore.RankLoad{ActiveDecodeBlocks: l.ActiveDecodeBlocks, ActivePrefillTokens: l.ActivePrefillTokens}
		}
		rep := routecore.WorkerOverload(th, w)
		if !rep.Overloaded {
			return false, ""
		}
		for _, ro := range rep.Ranks {
			for _, t := range ro.Trips {
				desc = append(desc, fmt.Sprintf("%s %s > %s", t.Signal, fmtNum(t.Value), fmtNum(t.Limit)))
			}
		}
	}
	if !known {
		return false, ""
	}
	slices.Sort(desc)
	desc = slices.Compact(desc)
	return true, strings.Join(desc, ", ")
}

func fmtNum(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// pluralVerb returns "1 worker publishes" / "2 workers publish".
func pluralVerb(n int, word, one, many string) string {
	if n == 1 {
		return plural(n, word) + " " + one
	}
	return plural(n, word) + " " + many
}
