package explain

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/behavior"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
)

// seedMix is the second PCG seed; any constant works, it only has to be fixed.
const seedMix = 0x9E3779B97F4A7C15

// Explain runs the dry run. Errors are reserved for inputs that cannot be
// routed at all (no tokens, an unknown pod, an invalid knob: errors.Is
// ErrInput) — a request the router would reject is a Verdict, not an error.
func Explain(in Input) (*Explanation, error) {
	if in.Deployment == nil {
		return nil, errors.New("explain: no deployment")
	}
	if len(in.Request.Tokens) == 0 {
		return nil, inputErr("Pass a non-empty --prompt, --tokens or --token-file.", "the request has no tokens: the router cannot route an empty prompt")
	}
	p, err := NewPlan(in)
	if err != nil {
		return nil, err
	}
	ex := p.e
	if err := ex.request(); err != nil {
		return nil, err
	}
	ex.overlap()
	ex.approximate()
	ex.sources()
	if err := ex.route(); err != nil {
		return nil, err
	}
	ex.markSita()
	ex.features()
	return ex.x, nil
}

// member is one routable instance and the pod it belongs to.
type member struct {
	pod  *model.Worker
	inst *model.Instance
	role model.Role
}

type explainer struct {
	in  Input
	x   *Explanation
	dep *model.Deployment

	cfg, pcfg routecore.KvRouterConfig
	mode      routecore.RouterMode
	modeKnown bool
	// pmode and dmode are each hop's effective mode (hopModes).
	pmode, dmode   routecore.RouterMode
	pKnown, dKnown bool
	thresholds     routecore.BusyThresholds
	// thresholdsSource says where the thresholds come from.
	thresholdsSource string
	policy           *model.TransferPolicy

	prefill, decode []routecore.Worker
	byID            map[routecore.WorkerID]*member
	pin             *routecore.WorkerWithDpRank
	// noLoad counts instances without observed load (assumed idle).
	noLoad int

	blockSize int
	eagle     bool
	blocks    []routecore.Block
	overlapIn routecore.OverlapInput

	// sita is each KV hop's SITA band; userAllowed the request's own
	// allow-list; mayDiffer what the router may do differently (features.go).
	sita        map[string]routecore.SitaBand
	userAllowed []routecore.WorkerID
	mayDiffer   []Divergence

	// ties are the decode tie sets the matrix rows labelled (tieLabels).
	ties map[tieKey][]tieLabeled

	// rd is how Dynamo treats the deployment at its release (pkg/behavior);
	// ready is the frontend's readiness over the routable pools (after the
	// what-ifs).
	rd    *behavior.Reading
	ready behavior.Readiness
}

// overrideFrom names where a worker set's configuration was read when it is
// not its published card.
func overrideFrom(o *model.RouterOverride) string {
	if o.Source == "" || o.Source == "card" {
		return ""
	}
	return " (" + o.Source + ")"
}

// config resolves the router configuration and applies the knobs.
func (e *explainer) config() error {
	r := e.dep.Router
	e.cfg = r.Config
	source := cmp.Or(r.ConfigSource, "frontend defaults")
	if e.cfg == (routecore.KvRouterConfig{}) {
		e.cfg = routecore.DefaultKvRouterConfig()
		source = "Dynamo's defaults (no frontend configuration was read)"
	}
	// Each hop's worker-set configuration, as pkg/behavior reads it for the
	// release (a published router_config; a worker's own router flags on
	// releases that publish them; before #13197 the prefill hop follows the
	// decode set's). A non-KV override carries no KV configuration.
	var prefillOverride *routecore.KvRouterConfig
	po, do := e.hopOverrides()
	if do != nil && do.Config != (routecore.KvRouterConfig{}) {
		e.cfg = do.Config
		source += "; decode router_config from component " + do.Component + overrideFrom(do)
	}
	if po != nil && po.Config != (routecore.KvRouterConfig{}) {
		c := po.Config
		prefillOverride = &c
		source += "; prefill router_config from component " + po.Component + overrideFrom(po)
	}
	if e.in.Options.Knobs.Profile == nil && e.rd.Release.Known {
		// The routing profile follows the release read (--dynamo-version, or
		// detected), unless a knob names one.
		p := e.rd.Release.Release.Profile()
		e.cfg.Profile = p
		if prefillOverride != nil {
			prefillOverride.Profile = p
		}
		if p != routecore.ProfileLatest {
			e.x.Assumptions = append(e.x.Assumptions, fmt.Sprintf("routing profile %s: the selector and hashing of Dynamo %s (%s)", p, e.rd.Release.Version, e.rd.Release.Source))
		}
	}
	k := e.in.Options.Knobs
	var changed []string
	apply := func(c *routecore.KvRouterConfig, record bool) {
		set := func(name string, dst *float64, v *float64) {
			if v != nil {
				*dst = *v
				if record {
					changed = append(changed, fmt.Sprintf("%s=%v", name, *v))
				}
			}
		}
		setb := func(name string, dst *bool, v *bool) {
			if v != nil {
				*dst = *v
				if record {
					changed = append(changed, fmt.Sprintf("%s=%v", name, *v))
				}
			}
		}
		set("overlap_score_credit", &c.OverlapScoreCredit, k.OverlapScoreCredit)
		set("overlap_score_credit_decay", &c.OverlapScoreCreditDecay, k.OverlapScoreCreditDecay)
		set("prefill_load_scale", &c.PrefillLoadScale, k.PrefillLoadScale)
		set("decode_active_request_weight", &c.DecodeActiveRequestWeight, k.DecodeActiveRequestWeight)
		set("host_cache_hit_weight", &c.HostCacheHitWeight, k.HostCacheHitWeight)
		set("disk_cache_hit_weight", &c.DiskCacheHitWeight, k.DiskCacheHitWeight)
		set("router_temperature", &c.RouterTemperature, k.Temperature)
		set("shared_cache_multiplier", &c.SharedCacheMultiplier, k.SharedCacheMultiplier)
		setb("router_track_active_blocks", &c.RouterTrackActiveBlocks, k.TrackActiveBlocks)
		setb("router_assume_kv_reuse", &c.RouterAssumeKvReuse, k.AssumeKvReuse)
		setb("router_track_prefill_tokens", &c.RouterTrackPrefillTokens, k.TrackPrefillTokens)
		setb("conditional_disagg_enabled", &c.ConditionalDisaggEnabled, k.ConditionalDisagg)
		if k.TrackActiveBlocks != nil && !*k.TrackActiveBlocks {
			c.RouterTrackOutputBlocks = false
		}
		if k.Profile != nil {
			c.Profile = *k.Profile
			if record {
				changed = append(changed, "profile="+string(*k.Profile))
			}
		}
	}
	apply(&e.cfg, true)
	if prefillOverride != nil {
		e.pcfg = *prefillOverride
		apply(&e.pcfg, false)
	} else {
		e.pcfg = routecore.PrefillRouterConfig(e.cfg)
	}
	for _, c := range []struct {
		what string
		cfg  routecore.KvRouterConfig
	}{{"router", e.cfg}, {"prefill router", e.pcfg}} {
		if err := c.cfg.Validate(); err != nil {
			return inputErr("Check the knob flags (--overlap-score-credit, --temperature, …) against docs/routing.md.", "the %s configuration is invalid: %v", c.what, err)
		}
	}
	e.thresholds, e.thresholdsSource = r.Thresholds, r.ThresholdsSource
	if k.Thresholds != nil {
		e.thresholds, e.thresholdsSource = *k.Thresholds, "the --active-*-threshold what-if flags"
		changed = append(changed, "busy thresholds")
	}
	if err := e.thresholds.Validate(); err != nil {
		return inputErr("Busy thresholds are fractions in [0,1] (decode) or token counts (prefill).", "invalid busy thresholds: %v", err)
	}
	if err := e.in.Request.Override.Validate(e.cfg.Profile); err != nil {
		return inputErr("See docs/routing.md for the per-request override fields.", "invalid router_config_override: %v", err)
	}
	modeSource := e.routerMode()
	if k.RouterMode != nil {
		changed = append(changed, "router_mode="+string(*k.RouterMode))
		if *k.RouterMode != e.mode {
			modeSource = "--router-mode what-if (the frontend runs " + string(e.mode) + ", from " + modeSource + ")"
		}
		e.mode, e.modeKnown = *k.RouterMode, true
	}
	if e.dep.Policy != nil {
		p := *e.dep.Policy
		e.policy = &p
	}
	if k.Enforcement != nil {
		changed = append(changed, "enforcement="+string(*k.Enforcement))
		if e.policy != nil {
			switch *k.Enforcement {
			case EnforcementOff:
				e.policy = nil
			default:
				e.policy.Enforcement = routecore.KvTransferEnforcement(*k.Enforcement)
				e.policy.EnforcementDefaulted = false
			}
		}
	}
	if k.PreferredWeight != nil {
		// Dynamo's validator: range(min = 0.0, max = 1.0) on the f32 value; a
		// worker publishing anything else cannot register.
		if f := float32(*k.PreferredWeight); !(f >= 0 && f <= 1) {
			return inputErr("A preferred weight is a fraction: 0 (no preference) to 1 (strongest).",
				"--preferred-weight %v is out of range: kv_transfer_preferred_weight must be between 0 and 1, as Dynamo's validator requires", *k.PreferredWeight)
		}
		changed = append(changed, fmt.Sprintf("preferred_weight=%v", *k.PreferredWeight))
		if e.policy != nil {
			w := *k.PreferredWeight
			e.policy.PreferredWeight = &w
		}
	}
	profile := e.cfg.Profile
	if profile == "" {
		profile = routecore.ProfileLatest
	}
	e.x.Router = RouterInfo{
		Mode: e.mode, ModeSource: modeSource,
		Profile: profile, Config: e.cfg, PrefillConfig: e.pcfg, ConfigSource: source,
		Thresholds: e.thresholds, Policy: e.policy, Overrides: changed,
		Seed: e.in.Options.Seed, SeedGiven: e.in.Options.SeedGiven,
	}
	return nil
}

// pools turns the deployment's workers into the two routing pools, applying
// the what-ifs and the load sources.
func (e *explainer) pools() error {
	o := e.in.Options
	pods := map[string]*model.Worker{}
	for i := range e.dep.Workers {
		pods[e.dep.Workers[i].Pod] = &e.dep.Workers[i]
	}
	excluded := map[string]bool{}
	for _, p := range o.WhatIf.ExcludeWorkers {
		if pods[p] == nil {
			return inputErr("List the deployment's workers with: kubectl dynamo topology -o wide", "--exclude-worker %s: no worker pod of %s has that name (workers: %s)", p, e.dep.Key(), examplePods(e.dep))
		}
		excluded[p] = true
	}
	down := map[string]string{}
	for _, dv := range o.WhatIf.DomainDown {
		n := 0
		for i := range e.dep.Workers {
			if inDomain(&e.dep.Workers[i], e.policy, dv) {
				n++
				if down[e.dep.Workers[i].Pod] == "" {
					down[e.dep.Workers[i].Pod] = dv.String()
				}
			}
		}
		if n == 0 {
			return inputErr("Domain values are listed by: kubectl dynamo topology", "--domain-down %s: no worker of %s is in that domain (known values: %s)", dv, e.dep.Key(), knownDomainValues(e.dep, e.policy, dv.Key))
		}
	}
	loads := map[string]LoadOverride{}
	for _, lo := range o.Loads {
		if pods[lo.Worker] == nil {
			return inputErr("List the deployment's workers with: kubectl dynamo topology -o wide", "--load %s: no worker pod of %s has that name (workers: %s)", lo.Worker, e.dep.Key(), examplePods(e.dep))
		}
		loads[lo.Worker] = lo
	}

	for i := range e.dep.Workers {
		w := &e.dep.Workers[i]
		inst := routingInstances(w)
		if len(inst) == 0 {
			if w.Leader && (w.Role == model.RolePrefill || w.Role == model.RoleDecode || w.Role == model.RoleAggregated) {
				if pp := w.Pending; pp != nil {
					e.exclude(w, w.Role, pendingReason(pp))
				} else {
					e.exclude(w, w.Role, "publishes no Dynamo instance (no DynamoWorkerMetadata or etcd entry), so the router does not know it")
				}
			}
			continue
		}
		for _, in := range inst {
			role := instanceRole(w, in)
			if role != model.RolePrefill && role != model.RoleDecode && role != model.RoleAggregated {
				continue
			}
			switch {
			case excluded[w.Pod]:
				e.exclude(w, role, "excluded by --exclude-worker")
				continue
			case down[w.Pod] != "":
				e.exclude(w, role, "in "+down[w.Pod]+", taken down by --domain-down")
				continue
			case !w.Ready:
				e.exclude(w, role, "pod not ready: the frontend's discovery does not route to it")
				continue
			}
			if errs := behavior.RegistrationErrors(in.Runtime); len(errs) > 0 {
				// The same validator as topology's InvalidWorkerTopology finding.
				e.exclude(w, role, "publishes a runtime config that Dynamo's validator rejects, so it cannot register and the router does not know it: "+strings.Join(errs, "; "))
				continue
			}
			if prev, dup := e.byID[in.ID]; dup {
				e.x.Assumptions = append(e.x.Assumptions, fmt.Sprintf("instance %d is published by both %s and %s; %s is used", uint64(in.ID), prev.pod.Pod, w.Pod, prev.pod.Pod))
				continue
			}
			rw := routecore.Worker{ID: in.ID, Name: w.Pod, Runtime: e.runtime(in.Runtime, role)}
			rw.EffectiveTaints = rw.Runtime.EffectiveTaints()
			rw.Loads = e.loadsFor(in, rw.Runtime, loads[w.Pod], o.AssumeIdle)
			e.byID[in.ID] = &member{pod: w, inst: in, role: role}
			if role == model.RolePrefill {
				e.prefill = append(e.prefill, rw)
			} else {
				e.decode = append(e.decode, rw)
			}
		}
	}
	if e.noLoad > 0 {
		e.x.Assumptions = append(e.x.Assumptions, fmt.Sprintf("%d worker instance(s) have no load in the frontend metrics; they are assumed idle", e.noLoad))
	}
	if p := o.WhatIf.Prefill; p != "" {
		pin, err := e.resolvePin(p, pods)
		if err != nil {
			return err
		}
		e.pin = pin
	}
	return nil
}

// routingInstances returns the pod's instances that carry a model card, one
// per instance id (an instance publishes several endpoints; the card-carrying
// generate endpoint is preferred).
func routingInstances(w *model.Worker) []*model.Instance {
	var out []*model.Instance
	for i := range w.Instances {
		in := &w.Instances[i]
		j := slices.IndexFunc(out, func(o *model.Instance) bool { return o.ID == in.ID })
		switch {
		case j < 0:
			out = append(out, in)
		case better(in, out[j]):
			out[j] = in
		}
	}
	return out
}

func better(a, b *model.Instance) bool {
	ac, bc := a.BlockSize > 0 || a.Model != "", b.BlockSize > 0 || b.Model != ""
	if ac != bc {
		return ac
	}
	return strings.HasSuffix(a.Endpoint, "/generate") && !strings.HasSuffix(b.Endpoint, "/generate")
}

func instanceRole(w *model.Worker, in *model.Instance) model.Role {
	switch in.WorkerType {
	case "prefill":
		return model.RolePrefill
	case "decode":
		return model.RoleDecode
	case "aggregated":
		return model.RoleAggregated
	}
	return w.Role
}

// runtime applies the enforcement what-ifs to a prefill worker's runtime config.
func (e *explainer) runtime(rc routecore.RuntimeConfig, role model.Role) routecore.RuntimeConfig {
	k := e.in.Options.Knobs
	if role != model.RolePrefill || (k.Enforcement == nil && k.PreferredWeight == nil) {
		return rc
	}
	if k.Enforcement != nil {
		switch *k.Enforcement {
		case EnforcementOff:
			rc.KvTransferDomain = ""
			rc.KvTransferEnforcement = routecore.EnforcementNone
		default:
			if rc.KvTransferDomain == "" && e.dep.Policy != nil {
				// Topology-aware transfer was off on this worker: turning it on uses
				// the DGD's domain and the value the worker publishes.
				rc.KvTransferDomain = e.dep.Policy.Domain
			}
			rc.KvTransferEnforcement = routecore.KvTransferEnforcement(*k.Enforcement)
		}
	}
	if rc.KvTransferEnforcement == routecore.EnforcementPreferred {
		switch {
		case k.PreferredWeight != nil:
			w := *k.PreferredWeight
			rc.KvTransferPreferredWeight = &w
		case rc.KvTransferPreferredWeight == nil && e.dep.Policy != nil && e.dep.Policy.PreferredWeight != nil:
			w := *e.dep.Policy.PreferredWeight
			rc.KvTransferPreferredWeight = &w
		}
	}
	return rc
}

// loadsFor builds a worker's per-rank loads from the observed load, --assume-idle
// and --load.
func (e *explainer) loadsFor(in *model.Instance, rc routecore.RuntimeConfig, lo LoadOverride, idle bool) map[uint32]routecore.RankLoad {
	start, end := rc.DpRange()
	loads := make(map[uint32]routecore.RankLoad, end-start)
	observed := map[uint32]model.RankLoad{}
	for _, l := range in.Load {
		observed[l.DpRank] = l
	}
	if !idle && len(in.Load) == 0 && lo.Worker == "" {
		e.noLoad++
	}
	for r := start; r < end; r++ {
		var l routecore.RankLoad
		if ob, ok := observed[r]; ok && !idle {
			l.ActiveDecodeBlocks, l.ActivePrefillTokens = ob.ActiveDecodeBlocks, ob.ActivePrefillTokens
		}
		if lo.DecodeBlocks != nil {
			l.ActiveDecodeBlocks = *lo.DecodeBlocks
		}
		if lo.PrefillTokens != nil {
			l.ActivePrefillTokens = *lo.PrefillTokens
		}
		if lo.ActiveRequests != nil {
			l.ActiveRequests = *lo.ActiveRequests
		}
		loads[r] = l
	}
	return loads
}

// resolvePin turns --prefill POD[:RANK] into a pinned candidate.
func (e *explainer) resolvePin(s string, pods map[string]*model.Worker) (*routecore.WorkerWithDpRank, error) {
	pod, rankS, hasRank := strings.Cut(s, ":")
	w := pods[pod]
	if w == nil {
		return nil, inputErr("List the prefill workers with: kubectl dynamo explain-route --all-prefill", "--prefill %s: no worker pod of %s has that name (workers: %s)", pod, e.dep.Key(), examplePods(e.dep))
	}
	var m *member
	for _, mm := range e.byID {
		if mm.pod == w && mm.role == model.RolePrefill {
			if m == nil || mm.inst.ID < m.inst.ID {
				m = mm
			}
		}
	}
	if m == nil {
		return nil, inputErr("--prefill names a prefill worker that is ready and not excluded.", "--prefill %s: %s is not a routable prefill worker (role %s%s)", s, pod, w.Role, e.excludedWhy(pod))
	}
	start, end := m.inst.Runtime.DpRange()
	rank := start
	if hasRank {
		r, err := strconv.ParseUint(rankS, 10, 32)
		if err != nil || r < uint64(start) || r >= uint64(end) {
			return nil, inputErr("", "--prefill %s: dp rank must be in [%d, %d)", s, start, end)
		}
		rank = uint32(r)
	}
	return &routecore.WorkerWithDpRank{WorkerID: m.inst.ID, DpRank: rank}, nil
}

func (e *explainer) excludedWhy(pod string) string {
	for _, x := range e.x.Excluded {
		if x.Worker == pod {
			return "; " + x.Reason
		}
	}
	return ""
}

func (e *explainer) exclude(w *model.Worker, role model.Role, reason string) {
	if slices.ContainsFunc(e.x.Excluded, func(x Excluded) bool { return x.Worker == w.Pod }) {
		return
	}
	e.x.Excluded = append(e.x.Excluded, Excluded{Worker: w.Pod, Role: role, Reason: reason})
}

// inDomain reports whether w is in the domain value dv: dv.Key is the policy's
// transfer domain, a domain the worker publishes, or a node or pod label key.
func inDomain(w *model.Worker, policy *model.TransferPolicy, dv DomainValue) bool {
	if policy != nil && dv.Key == policy.Domain && w.Domain.Effective() == dv.Value {
		return true
	}
	for _, in := range w.Instances {
		if in.Runtime.TopologyDomains[dv.Key] == dv.Value {
			return true
		}
	}
	return w.NodeLabels[dv.Key] == dv.Value || w.PodLabels[dv.Key] == dv.Value
}

func knownDomainValues(dep *model.Deployment, policy *model.TransferPolicy, key string) string {
	seen := map[string]bool{}
	for i := range dep.Workers {
		w := &dep.Workers[i]
		if policy != nil && key == policy.Domain && w.Domain.Effective() != "" {
			seen[w.Domain.Effective()] = true
		}
		for _, in := range w.Instances {
			if v := in.Runtime.TopologyDomains[key]; v != "" {
				seen[v] = true
			}
		}
		if v := w.NodeLabels[key]; v != "" {
			seen[v] = true
		}
		if v := w.PodLabels[key]; v != "" {
			seen[v] = true
		}
	}
	if len(seen) == 0 {
		return "none for " + key
	}
	vals := make([]string, 0, len(seen))
	for v := range seen {
		vals = append(vals, key+"="+v)
	}
	slices.Sort(vals)
	return strings.Join(vals, ", ")
}

func examplePods(dep *model.Deployment) string {
	var names []string
	for _, w := range dep.Workers {
		names = append(names, w.Pod)
	}
	if len(names) == 0 {
		return "none"
	}
	if len(names) > 6 {
		return strings.Join(names[:6], ", ") + fmt.Sprintf(", … (%d in all)", len(names))
	}
	return strings.Join(names, ", ")
}

// request hashes the tokens with the deployment's block size.
// blockSize resolves the KV block size the router hashes with (the workers'
// cards, else --block-size) and the served model name.
func (e *explainer) resolveBlockSize() error {
	sizes := map[int][]string{}
	eagle := false
	models := map[string]bool{}
	for _, m := range e.byID {
		if m.inst.BlockSize > 0 {
			sizes[m.inst.BlockSize] = append(sizes[m.inst.BlockSize], m.pod.Pod)
		}
		eagle = eagle || m.inst.Runtime.EnableEagle
		if m.inst.Model != "" {
			models[m.inst.Model] = true
		}
	}
	for mdl := range models {
		if e.x.Model == "" || mdl < e.x.Model {
			e.x.Model = mdl
		}
	}
	bs := e.in.Options.BlockSize
	switch {
	case len(sizes) > 1:
		var parts []string
		for s, pods := range sizes {
			parts = append(parts, fmt.Sprintf("%d (%s)", s, pods[0]))
		}
		slices.Sort(parts)
		return inputErr("Every worker of a model must use the same KV block size; fix the deployment.", "workers of %s publish different kv_cache_block_size values: %s", e.dep.Key(), strings.Join(parts, ", "))
	case len(sizes) == 1:
		for s := range sizes {
			if bs != 0 && bs != s {
				return inputErr("Drop --block-size: the workers' model cards say what the router uses.", "--block-size %d contradicts the workers' kv_cache_block_size %d", bs, s)
			}
			bs = s
		}
	case bs == 0:
		if len(e.byID) == 0 {
			bs = 16
			e.x.Assumptions = append(e.x.Assumptions, "no routable worker publishes kv_cache_block_size; block size 16 assumed for hashing")
		} else {
			return inputErr("Pass --block-size N (the engine's KV block size, e.g. 16 for vLLM).", "no worker of %s publishes kv_cache_block_size", e.dep.Key())
		}
	default:
		e.x.Assumptions = append(e.x.Assumptions, fmt.Sprintf("block size %d from --block-size (no worker card publishes one)", bs))
	}
	e.blockSize = bs
	e.eagle = eagle
	return nil
}

// request hashes the request's tokens at the resolved block size.
func (e *explainer) request() error {
	bs, eagle := e.blockSize, e.eagle
	r := e.in.Request
	beh, err := e.cfg.Profile.Behavior()
	if err != nil {
		return inputErr("", "%v", err)
	}
	mm, err := r.mmRouting(bs, beh.MmScheme)
	if err != nil {
		return err
	}
	blocks, err := routecore.ComputeBlocks(mm.Tokens, bs, mm.HashOptions(routecore.HashOptions{LoraName: r.LoraName, CacheNamespace: r.CacheNamespace, Eagle: eagle}))
	if err != nil {
		return inputErr("", "hash the request: %v", err)
	}
	e.blocks = blocks
	info := RequestInfo{
		TokenCount: len(r.Tokens), BlockSize: bs, Tokenizer: r.Tokenizer,
		LoraName: r.LoraName, CacheNamespace: r.CacheNamespace, Eagle: eagle,
		Constraints: r.Constraints.Clone(),
		Blocks:      make([]BlockInfo, len(blocks)),
		MmScheme:    mm.Scheme,
	}
	if mm.Scheme == routecore.MmSchemePadValue {
		// The router routes with the routing tokens: their count is the ISL
		// (KvRouter::find_best_match_details, isl_tokens = tokens.len()), for
		// the cost and conditional disaggregation alike.
		info.RoutingTokenCount = len(mm.Tokens)
		e.in.Request.Tokens = mm.Tokens
	}
	info.MultimodalObjects = multimodalObjectCount(r.Multimodal)
	for i, b := range blocks {
		info.Blocks[i] = BlockInfo{Index: b.Index, LocalHash: uint64(b.LocalHash), SequenceHash: uint64(b.SequenceHash)}
		blockMultimodal(&info.Blocks[i], mm, b)
	}
	e.x.Request = info
	return nil
}

// overlap computes every candidate's cached prefix from the KV source.
func (e *explainer) overlap() {
	kv := e.in.KV
	weights := routecore.TierWeights{HostPinned: e.pcfg.HostCacheHitWeight, Disk: e.pcfg.DiskCacheHitWeight}
	bs := uint32(e.blockSize)
	switch kv.Kind {
	case KVIndex:
		if kv.Index == nil {
			break
		}
		m := kv.Index.FindTieredMatches(routecore.LocalHashes(e.blocks))
		e.overlapIn = routecore.ToOverlapInput(m, weights, bs, nil)
		e.overlapIn.TreeSizes = TreeSizesForTies(e.pcfg, kv.Index, m)
	case KVIndexer:
		var scores routecore.OverlapScores
		for w, tokens := range kv.IndexerTokens {
			if b := tokens / uint64(bs); b > 0 {
				scores = append(scores, routecore.OverlapScore{Worker: w, Blocks: uint32(min(b, uint64(len(e.blocks))))})
			}
		}
		slices.SortFunc(scores, func(a, b routecore.OverlapScore) int { return a.Worker.Compare(b.Worker) })
		e.overlapIn = routecore.ToOverlapInput(routecore.TieredMatches{Device: scores}, weights, bs, nil)
	}
	if e.cfg.SharedCacheType != "" && e.cfg.SharedCacheType != routecore.SharedCacheNone {
		e.x.Assumptions = append(e.x.Assumptions, fmt.Sprintf("shared cache %q hits are not visible from outside the router; none assumed", e.cfg.SharedCacheType))
	}
}

func (e *explainer) sources() {
	x := e.x
	add := func(what, detail string, s *model.SourceStatus) {
		src := Source{What: what, Detail: detail}
		if s != nil {
			src.At = s.At
		}
		x.Sources = append(x.Sources, src)
	}
	var snapSrc *model.SourceStatus
	if e.in.Snapshot != nil && len(e.in.Snapshot.Sources) > 0 {
		snapSrc = &e.in.Snapshot.Sources[0]
	}
	workers := fmt.Sprintf("%d prefill and %d decode instance(s) routable", len(e.prefill), len(e.decode))
	if n := len(x.Excluded); n > 0 {
		workers += fmt.Sprintf(", %d worker(s) excluded", n)
	}
	if snapSrc != nil {
		workers += " (" + string(snapSrc.Kind) + ": " + snapSrc.Detail + ")"
	}
	add("workers", workers, snapSrc)
	add("tokens", cmp.Or(e.in.Request.Tokenizer, "token ids given"), nil)
	kv := e.in.KV
	switch kv.Kind {
	case KVIndex:
		d := kv.Detail
		if kv.Index != nil {
			d += fmt.Sprintf(" (%d blocks indexed)", kv.Index.BlockCount())
		}
		x.Sources = append(x.Sources, Source{What: "kv-cache", Detail: d, At: kv.At})
	case KVIndexer:
		x.Sources = append(x.Sources, Source{What: "kv-cache", Detail: kv.Detail, At: kv.At})
	default:
		x.Sources = append(x.Sources, Source{What: "kv-cache", Detail: cmp.Or(kv.Detail, "cold: no cached blocks assumed")})
	}
	if kv.Incomplete != "" {
		x.Assumptions = append(x.Assumptions, "the KV-cache snapshot is incomplete ("+kv.Incomplete+"); overlaps may be understated")
	}
	switch {
	case e.in.Options.AssumeIdle:
		x.Sources = append(x.Sources, Source{What: "loads", Detail: "assumed idle (--assume-idle)"})
	case e.dep.Load != nil:
		x.Sources = append(x.Sources, Source{What: "loads", Detail: e.dep.Load.Source, At: e.dep.Load.At})
	default:
		x.Sources = append(x.Sources, Source{What: "loads", Detail: "unknown: no frontend metrics, every worker assumed idle"})
	}
	if len(e.in.Options.Loads) > 0 {
		var ws []string
		for _, l := range e.in.Options.Loads {
			ws = append(ws, l.Worker)
		}
		x.Assumptions = append(x.Assumptions, "loads of "+strings.Join(ws, ", ")+" set by --load")
	}
	x.Sources = append(x.Sources, Source{What: "router-config", Detail: x.Router.ConfigSource})
	x.Assumptions = append(x.Assumptions,
		"the router's own in-flight bookkeeping is approximated by the frontend's load metrics; active request counts are 0 unless set by --load")
}

// route runs the routing core and fills the explanation.
func (e *explainer) route() error {
	x := e.x
	r := e.in.Request
	req := routecore.Request{
		ISL: len(r.Tokens), BlockSize: e.blockSize, Overlap: e.overlapIn,
		Constraints: r.Constraints.Clone(), Override: r.Override,
	}
	if len(e.prefill) == 0 && e.cfg.RouterTrackActiveBlocks && req.Override.Resolve(e.cfg).AssumeKvReuse {
		req.AdditionalBlocksRule = routecore.AdditionalBlocksAllNew
		x.Assumptions = append(x.Assumptions, "none of the request's blocks is assumed shared with in-flight requests (the router's active-sequence ledger is not visible)")
	}
	if r := e.refusal(); r != nil {
		e.refuse(r)
		return nil
	}
	switch kvP, kvD := kvHop(e.pmode, e.pKnown), kvHop(e.dmode, e.dKnown); {
	case !kvD && (len(e.prefill) == 0 || !kvP):
		return e.routeByMode(req)
	case len(e.prefill) > 0 && kvP != kvD:
		return e.routeMixed(req, kvP)
	}
	e.userAllowed = req.AllowedWorkers
	di := e.disaggInput(req)
	d, err := routecore.RouteDisaggregated(di, SeedRand(e.in.Options.Seed))
	if err != nil && d.Err == nil {
		return inputErr("", "the routing core rejected the inputs: %v", err)
	}
	e.setSita(&d)
	x.Mode, x.Summary = d.Mode, e.names(d.Explanation)
	x.Conditional, x.ConditionalSkipped = d.Conditional, d.ConditionalSkipped
	if d.Prefill != nil {
		x.Prefill = e.stage(d.Prefill, req.Constraints)
	}
	if d.Transfer != nil {
		t := d.Transfer
		x.Transfer = &Transfer{
			PrefillWorker: e.label(routecore.WorkerWithDpRank{WorkerID: t.PrefillWorker}, false),
			Domain:        t.Domain, Value: t.Value, Enforcement: t.Enforcement, Weight: t.Weight,
			RequiredTaints: t.Constraints.RequiredTaints, PreferredTaints: t.Constraints.PreferredTaints,
			Rule: t.Rule, Explanation: e.names(t.Explanation), Failed: t.Failed,
		}
	}
	if d.Decode != nil {
		x.Decode = e.stage(d.Decode, d.DecodeConstraints)
	}
	for _, a := range d.PrefillAlternatives {
		x.Alternatives = append(x.Alternatives, e.row(a))
	}
	if e.in.Options.WhatIf.AllPrefill && len(e.prefill) > 0 {
		outs, err := routecore.EvaluateAllPrefill(di)
		if err != nil {
			return inputErr("", "evaluate every prefill landing: %v", err)
		}
		for _, o := range outs {
			x.Matrix = append(x.Matrix, e.row(o))
		}
	}
	e.verdict(&d)
	return nil
}

func (e *explainer) stage(d *routecore.Decision, c routecore.RoutingConstraints) *Stage {
	s := &Stage{
		Rule: d.SelectionRule, Temperature: d.Temperature, MinCost: d.MinCost,
		Constraints: c, ErrorKind: d.ErrorKind,
		Candidates: make([]Candidate, len(d.Candidates)),
	}
	failed := d.ErrorKind != ""
	for i, ce := range d.Candidates {
		m := e.byID[ce.Candidate.WorkerID]
		cand := Candidate{
			InstanceID: ce.Candidate.WorkerID, DpRank: ce.Candidate.DpRank,
			Eligible: ce.Eligible, Scored: ce.Scored, InTieSet: ce.InTieSet,
			Probability: ce.Probability, Terms: ce.Terms,
			Selected: !failed && ce.Candidate == d.Selected,
		}
		if m != nil {
			cand.Worker, cand.Domain, cand.Node = m.pod.Pod, m.pod.Domain.Effective(), m.pod.Node
		}
		if ce.Scored {
			t := ce.Terms
			cand.OverlapBlocks, cand.CachedTokens = t.DeviceBlocks, t.CachedTokens
			cand.PrefillBlocks, cand.DecodeBlocks, cand.Credit, cand.Cost = t.AdjustedPrefillBlocks, t.DecodeBlocks, t.CreditBlocks, t.Cost
		} else if ov, ok := e.overlapIn.DeviceBlocks[ce.Candidate]; ok {
			cand.OverlapBlocks = float64(ov)
		}
		if ce.Reason != nil {
			cand.Reason, cand.ReasonCode = e.names(ce.Reason.Full()), ce.Reason.Code
		}
		s.Candidates[i] = cand
	}
	if failed {
		return s
	}
	s.Pick = e.label(d.Selected, true)
	if len(d.TieSet) > 1 {
		s.RandomTie = true
		for _, c := range d.TieSet {
			s.Selected = append(s.Selected, e.label(c, true))
		}
	} else {
		s.Selected = []string{s.Pick}
	}
	return s
}

func (e *explainer) row(o routecore.PrefillOutcome) MatrixRow {
	row := MatrixRow{
		Prefill: e.label(o.Prefill, true), InstanceID: o.Prefill.WorkerID, DpRank: o.Prefill.DpRank,
		Probability: o.Probability, Routable: o.Routable,
		RequiredTaints: o.DecodeConstraints.RequiredTaints,
	}
	if m := e.byID[o.Prefill.WorkerID]; m != nil {
		row.Domain = m.pod.Domain.Effective()
	}
	if !o.Routable {
		kind := ""
		if o.Decode != nil {
			kind = o.Decode.ErrorKind
		}
		if kind == "" {
			kind = string(o.Transfer.Rule)
		}
		row.Error = kind + ": " + e.names(o.Error)
	} else if o.Decode != nil {
		if len(o.Decode.TieSet) > 1 {
			row.DecodeSelected = e.tieLabels(o.Decode.TieSet)
		} else {
			row.DecodeSelected = []string{e.label(o.Decode.Selected, true)}
		}
	}
	return row
}

// tieKey is what tieLabels first compares of two tie sets.
type tieKey struct {
	n           int
	first, last routecore.WorkerWithDpRank
}

// tieLabels labels a decode tie set. The prefill workers of a zone mostly tie
// on the same decode workers, so the labels of an equal tie set are shared:
// one slice, which no reader of the explanation modifies, instead of one per
// row (at 10,000 workers, 5,000 rows of 500 labels).
func (e *explainer) tieLabels(ties []routecore.WorkerWithDpRank) []string {
	k := tieKey{n: len(ties), first: ties[0], last: ties[len(ties)-1]}
	for _, t := range e.ties[k] {
		if slices.Equal(t.ties, ties) {
			return t.labels
		}
	}
	labels := make([]string, len(ties))
	for i, c := range ties {
		labels[i] = e.label(c, true)
	}
	if e.ties == nil {
		e.ties = map[tieKey][]tieLabeled{}
	}
	e.ties[k] = append(e.ties[k], tieLabeled{ties: ties, labels: labels})
	return labels
}

// tieLabeled is a tie set tieLabels labelled.
type tieLabeled struct {
	ties   []routecore.WorkerWithDpRank
	labels []string
}

// label names a candidate by pod, with ":rank" when the worker has several dp
// ranks and withRank is set.
func (e *explainer) label(c routecore.WorkerWithDpRank, withRank bool) string {
	m := e.byID[c.WorkerID]
	if m == nil {
		return strconv.FormatUint(uint64(c.WorkerID), 10)
	}
	if s, end := m.inst.Runtime.DpRange(); withRank && end-s > 1 {
		return m.pod.Pod + ":" + strconv.FormatUint(uint64(c.DpRank), 10)
	}
	return m.pod.Pod
}

// names replaces instance ids (and their "id/rank" forms) in a routecore
// message with pod names (and "pod:rank" for multi-rank workers), so users
// read the names they know.
func (e *explainer) names(s string) string {
	if s == "" || len(e.byID) == 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if !isDigit(s[i]) || (i > 0 && !isBoundary(s[i-1])) {
			b.WriteByte(s[i])
			i++
			continue
		}
		j := i
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		id, err := strconv.ParseUint(s[i:j], 10, 64)
		m := e.byID[routecore.WorkerID(id)]
		if err != nil || m == nil {
			b.WriteString(s[i:j])
			i = j
			continue
		}
		b.WriteString(m.pod.Pod)
		if j+1 < len(s) && s[j] == '/' && isDigit(s[j+1]) {
			k := j + 1
			for k < len(s) && isDigit(s[k]) {
				k++
			}
			if st, end := m.inst.Runtime.DpRange(); end-st > 1 {
				b.WriteString(":" + s[j+1:k])
			}
			j = k
		}
		i = j
	}
	return b.String()
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// isBoundary reports whether c may precede an instance id in a message.
func isBoundary(c byte) bool { return c == ' ' || c == '(' || c == '[' || c == ',' || c == '"' }

// pendingReason says why a pod the scheduler has not placed is not a candidate,
// with the scheduler's reason when it was read (topology's WorkerPodsPending).
func pendingReason(pp *model.PodPending) string {
	why := "no reason read"
	if pp.Source != "" {
		msg := strings.TrimSpace(pp.Message)
		if i := strings.Index(msg, ". "); i >= 0 {
			msg = msg[:i+1] // the first sentence, without the preemption report
		}
		why = pp.Reason
		if msg != "" {
			why = strings.TrimSpace(fmt.Sprintf("%s %q", pp.Reason, msg))
		}
	}
	return "Pending, not scheduled, " + why + "; it runs nowhere, so the router does not know it"
}
