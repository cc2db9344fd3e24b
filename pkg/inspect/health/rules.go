package health

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/inspect"
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
func (c *check) kvEvents() {
	type key struct {
		role   inspect.Role
		engine string
		why    string
		card   bool
		source string
	}
	groups := map[key][]*replica{}
	var keys []key
	for _, r := range c.replicas {
		role := r.role()
		rt := c.routingFor(r.leader.Component)
		if !isKV(rt.mode) || !rt.cfg.UseKvEvents || !(rt.cfg.OverlapScoreCredit > 0) || rt.cfg.UseRemoteIndexer {
			continue
		}
		needs := role == inspect.RolePrefill || role == inspect.RoleAggregated ||
			(role == inspect.RoleDecode && rt.cfg.ConditionalDisaggEnabled)
		if !needs {
			continue
		}
		var p publishing
		switch declared, on := cardPublishing(r); {
		case declared && on:
			continue
		case declared:
			p = publishing{engine: engineOf(inspect.CommandWords(r.leader.Argv, r.leader.Env)), known: true, card: true}
		case len(r.leader.Argv) == 0:
			continue
		default:
			if p = kvPublishing(r.leader); !p.known || p.on {
				continue
			}
		}
		k := key{role: role, engine: p.engine, why: p.why, card: p.card, source: rt.source}
		if groups[k] == nil {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], r)
	}
	for _, k := range keys {
		rs := groups[k]
		ns := names(rs)
		fix := map[string]string{
			engineVLLM:   `add --kv-events-config '{"publisher":"zmq","topic":"kv-events","endpoint":"tcp://*:5557","enable_kv_cache_events":true}' to the workers' args (prefix caching on)`,
			engineSGLang: `add --kv-events-config '{"publisher":"zmq","topic":"kv-events","endpoint":"tcp://*:5557"}' to the workers' args (radix cache on)`,
			engineTRTLLM: "add --publish-kv-events (before Dynamo 1.3.0: --publish-events-and-metrics) to the workers' args",
		}[k.engine]
		if fix == "" {
			fix = "turn the engine's KV-event publishing on (vLLM and SGLang: --kv-events-config; TensorRT-LLM: --publish-kv-events)"
		}
		extra := ""
		if k.role == inspect.RoleDecode {
			extra = " (conditional disaggregation scores decode workers by their cache too)"
		}
		what := fmt.Sprintf("%s none (%s: %s%s)", pluralVerb(len(rs), string(k.role)+" worker", "publishes", "publish"), engineNames[k.engine], k.why, extra)
		if k.card {
			engine := ""
			if name := engineNames[k.engine]; name != "" {
				engine = "; " + name
			}
			what = fmt.Sprintf("%s KV-event publishing disabled (the worker's own model card: runtime_config.kv_event_publishing_enabled false%s%s)",
				pluralVerb(len(rs), string(k.role)+" worker", "reports", "report"), engine, extra)
		}
		c.add(inspect.Finding{ID: FindingKvEventsNotPublished, Severity: inspect.SeverityWarning, Objects: podObjects(rs),
			Message: fmt.Sprintf("the router expects KV events (kv mode with use_kv_events, %s), but %s: %s. Its prefix index stays empty for them, so every request sees 0 cached blocks there and is placed on load alone; the KV hit rate stays near 0 %% however much prompts share, and only the frontend log says so (kv_event_publisher_disabled, #12095)",
				k.source, what, examples(ns)),
			Hint: fix + "; or, to route without events on purpose, run the frontend with --no-router-kv-events (approximate mode)"})
	}
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
		model := cmp.Or(k.model, "(unnamed model)")
		c.add(inspect.Finding{ID: FindingKvHashSpaceMismatch, Severity: inspect.SeverityWarning, Objects: podObjects(rs),
			Message: fmt.Sprintf("workers of worker set %s (model %s) publish cards that hash KV blocks differently: %s. The router hashes a request once per worker set, so a worker whose cache is hashed another way never matches (overlap always 0, \"routing fails silently\", #1233); current frontends reject a card whose checksum differs from the worker set's first (#7368), so those workers may serve nothing at all",
				cmp.Or(k.component, "(no component)"), model, strings.Join(parts, "; ")),
			Hint: "give every worker of the set the same --block-size (--page-size on SGLang, tokens_per_block on TensorRT-LLM) and the same speculative-decoding setting, then restart the ones that differ"})
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// enforceDisagg reads the frontend's --enforce-disagg / DYN_ENFORCE_DISAGG
// (components/src/dynamo/common/configuration/groups/router_args.py); set is false
// when no frontend command line is known.
func (c *check) enforceDisagg() (value, known bool, from string) {
	for _, f := range c.d.Frontends {
		if len(f.Argv) == 0 {
			continue
		}
		words := inspect.CommandWords(f.Argv, f.Env)
		if v, set := boolFlag(words, "--enforce-disagg", "--no-enforce-disagg"); set {
			return v, true, "frontend pod " + f.Pod + " args"
		}
		if v, ok := f.Env["DYN_ENFORCE_DISAGG"]; ok {
			return truthy(v), true, "frontend pod " + f.Pod + " env DYN_ENFORCE_DISAGG"
		}
		return false, true, "frontend pod " + f.Pod + " (default)"
	}
	return false, false, ""
}

// disagg: DisaggNotActive. Decode workers serve, and no prefill worker is both
// ready and registered: the frontend's prefill router is not activated (or was
// deactivated when the last prefill worker left), so requests go to decode
// aggregated — or fail with PrefillError::NotActivated under --enforce-disagg
// (lib/llm/src/kv_router/prefill_router.rs).
func (c *check) disagg() {
	var decode, prefill, readyPrefill []*replica
	anyCard := false
	for _, r := range c.replicas {
		anyCard = anyCard || len(r.cards) > 0
		switch r.role() {
		case inspect.RoleDecode:
			if r.ready {
				decode = append(decode, r)
			}
		case inspect.RolePrefill:
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
		c.add(inspect.Finding{ID: FindingDisaggNotActive, Severity: inspect.SeverityError, Objects: objs,
			Message: fmt.Sprintf("%s decode worker(s) (%s) serve, but %s: with --enforce-disagg (%s) every request fails with PrefillError::NotActivated until a prefill worker registers",
				strconv.Itoa(len(decode)), examples(names(decode)), state, from),
			Hint: "bring the prefill workers up (kubectl describe/logs on them); the frontend activates its prefill router as soon as one registers"})
		return
	}
	c.add(inspect.Finding{ID: FindingDisaggNotActive, Severity: inspect.SeverityWarning, Objects: objs,
		Message: fmt.Sprintf("%s decode worker(s) (%s) serve, but %s: the frontend's prefill router is not active, so every request runs aggregated on the decode workers (prefill and decode on one GPU, no KV transfer) and nothing reports it (enforce_disagg is false, %s; #6957, #7131)",
			strconv.Itoa(len(decode)), examples(names(decode)), state, from),
		Hint: "bring the prefill workers up; to fail requests rather than serve them aggregated, run the frontend with --enforce-disagg (DYN_ENFORCE_DISAGG=true)"})
}

// replicaSync: RouterReplicasNotSynced.
func (c *check) replicaSync() {
	rt := c.routingFor("")
	if !isKV(rt.mode) || rt.cfg.RouterReplicaSync {
		return
	}
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
	c.add(inspect.Finding{ID: FindingRouterReplicasNotSynced, Severity: inspect.SeverityWarning, Objects: c.frontendObjects(),
		Message: fmt.Sprintf("%s route in kv mode without router replica sync (%s): KV events reach every replica, but each replica counts only the requests it routed itself as active load, so each sees about 1/%d of the load and replicas pile new requests onto the same workers (#589, #7753, #14758)",
			what, rt.source, replicas),
		Hint: "run the frontends with --router-replica-sync (DYN_ROUTER_REPLICA_SYNC=true) so they share active-sequence state"})
}

func frontendNames(fs []inspect.Frontend) []string {
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
	byRole := map[inspect.Role][]*replica{}
	for _, r := range c.replicas {
		if r.ready {
			byRole[r.role()] = append(byRole[r.role()], r)
		}
	}
	for _, role := range []inspect.Role{inspect.RolePrefill, inspect.RoleDecode, inspect.RoleAggregated} {
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
		c.add(inspect.Finding{ID: FindingAllWorkersBusy, Severity: inspect.SeverityWarning, Objects: podObjects(rs),
			Message: fmt.Sprintf("all %s are over a busy threshold at the loads read (thresholds from %s): %s. New requests for this role are queued or rejected with 503 \"all workers are busy\" until one drops below (#9506, #9547); a threshold below the workers' steady load starves them permanently (#8163)",
				plural(len(rs), string(role)+" worker"), cmp.Or(c.d.Router.ThresholdsSource, "the frontend"), examples(trips)),
			Hint: "add workers for this role, or raise --active-decode-blocks-threshold / --active-prefill-tokens-threshold(-frac) (live: POST /busy_threshold); --admission-control none turns the busy checks off"})
	}
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
