package behavior

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/cmdline"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
)

// Reading is how Dynamo treats one deployment at its release: what each
// router hop runs and where that came from, which workers the router knows,
// whether the frontend serves the model at all, and what the transfer
// constraint does in each hop. Every command asks it (Read) and none derives
// these answers on its own, so topology, explain-route, simulate, preflight
// and the dashboard agree by construction.
type Reading struct {
	Release Detection
	// Prefill and Decode are the two router hops. Without prefill workers the
	// decode hop is the only one (aggregated serving).
	Prefill, Decode Hop
	// Workers says, pod by pod (in the deployment's order), whether the
	// worker is registered with Dynamo's discovery and live.
	Workers []WorkerState
	// RegistrationKnown is false when the discovery records could not be read
	// (RegistrationUnknown says why): workers are then taken as registered.
	RegistrationKnown   bool
	RegistrationUnknown string
	// Readiness is whether the frontend serves the model.
	Readiness Readiness

	dep *model.Deployment
}

// Hop is one router hop's effective configuration.
type Hop struct {
	// Mode is the hop's router mode; ModeKnown is false when no
	// configuration was read (the KV router is then assumed).
	Mode      routecore.RouterMode
	ModeKnown bool
	// ModeSource says where the mode came from.
	ModeSource string
	// Override is the worker set's router_config that replaces the frontend's
	// configuration for this hop (published on its cards, or — on releases
	// whose workers publish their own router flags — read from their args);
	// nil when the frontend's applies.
	Override *model.RouterOverride
	// Constraint is what the hop does with a KV-transfer topology constraint
	// derived from the prefill pick (the decode hop's only).
	Constraint Constraint
}

// KV reports whether the hop runs the KV router (an unknown mode counts as
// kv, as every command models it).
func (h Hop) KV() bool { return !h.ModeKnown || h.Mode.IsKV() }

// Constraint is what a hop does with the transfer constraint.
type Constraint string

// Constraint effects.
const (
	// ConstraintHonoured: the KV decode router reads routing constraints, so
	// a required policy fails a request with no decode worker in the prefill
	// worker's domain (NoEndpoints) and a preferred one biases the pick.
	ConstraintHonoured Constraint = "honoured"
	// ConstraintIgnored: the non-KV pickers (PushRouter's round-robin,
	// random, power-of-two, least-loaded, device-aware-weighted, direct)
	// never read routing constraints: the decode pick may land in any
	// domain and a required policy never fails the request there.
	ConstraintIgnored Constraint = "ignored"
)

// Registration is whether the router knows a worker.
type Registration string

// Registration states.
const (
	// Registered: the worker published a Dynamo instance (DWM or etcd).
	Registered Registration = "registered"
	// NotRegistered: discovery was read and holds no instance of the worker.
	NotRegistered Registration = "not-registered"
	// RegistrationUnknown: the discovery records could not be read.
	RegistrationUnknown Registration = "unknown"
	// Rejected: the worker published instances whose runtime config
	// Dynamo's validator rejects (RegistrationErrors), so none registers.
	Rejected Registration = "rejected"
)

// WorkerState is one worker pod as the router sees it.
type WorkerState struct {
	Pod        string
	Role       model.Role
	Registered Registration
	// Live is what the frontend counts: ready and registered (or
	// registration unknown).
	Live bool
	// Why says why a running worker is not live.
	Why string
}

// Readiness is whether the frontend serves the model, at the release read.
type Readiness struct {
	// Ready is false when the frontend refuses every request.
	Ready bool
	// Status is the HTTP status of a refused request (503).
	Status int
	// Reason is upstream's wording, e.g. "missing worker types: prefill".
	Reason string
	// Missing are the worker types whose absence makes it unready.
	Missing []model.Role
	// Aggregated is true when, on a release before the strict readiness
	// rule, decode workers serve requests aggregated because no prefill
	// worker is live.
	Aggregated bool
	// Legacy is true when a live card has no worker_type (strict gating off).
	Legacy bool
	// Era is the readiness rule's era applied, and Cite its citation.
	Era  Era
	Cite string
}

// Read tells how Dynamo treats dep at the detected release.
func Read(snap *model.Snapshot, dep *model.Deployment, det Detection) *Reading {
	return read(snap, dep, det, false)
}

func read(snap *model.Snapshot, dep *model.Deployment, det Detection, planned bool) *Reading {
	rd := &Reading{Release: det, RegistrationKnown: true, dep: dep}
	if why := discoveryUnread(snap, dep); why != "" && !planned {
		rd.RegistrationKnown, rd.RegistrationUnknown = false, why
	}
	rd.Prefill, rd.Decode = hops(dep, det.Release)
	rd.workers(dep, planned)
	rd.Readiness = readiness(dep, rd, det.Release)
	return rd
}

// ReadPlanned reads a deployment that is not running yet (a manifest with the
// pods the operator would render): every worker is taken as registered and
// live, so the answers are the ones the deployment gets once it runs.
func ReadPlanned(snap *model.Snapshot, dep *model.Deployment, override string) (*Reading, error) {
	var ops []model.Operator
	if snap != nil {
		ops = snap.Operators
	}
	det, err := Detect(dep, ops, override)
	if err != nil {
		return nil, err
	}
	return read(snap, dep, det, true), nil
}

// discoveryUnread says why the deployment's discovery records were not read
// ("" when they were): the DynamoWorkerMetadata list failed or its CRD is not
// served (kubernetes discovery), no etcd was read (etcd discovery), or the
// backend is not known (pkg/build tells it from the pods' env, the DGD's
// annotation or the source of a published instance).
func discoveryUnread(snap *model.Snapshot, dep *model.Deployment) string {
	if snap == nil || dep == nil {
		return ""
	}
	switch strings.ToLower(dep.DiscoveryBackend) {
	case "kubernetes", "etcd":
	default:
		return "the discovery backend is not known (no DYN_DISCOVERY_BACKEND on the pods, no annotation, no published instance)"
	}
	if strings.EqualFold(dep.DiscoveryBackend, "etcd") {
		for _, s := range snap.Sources {
			if s.Kind == model.SourceEtcd && !s.Degraded {
				return ""
			}
		}
		return "the deployment uses etcd discovery and no etcd was read (--etcd-endpoints)"
	}
	for _, s := range snap.Sources {
		for _, part := range strings.Split(s.Message, "; ") {
			if strings.HasPrefix(part, "dynamoworkermetadatas.nvidia.com ") {
				return "the DynamoWorkerMetadata list failed (" + part + ")"
			}
		}
	}
	for _, n := range snap.Notes {
		if strings.Contains(n.Message, "DynamoWorkerMetadata CRD (dynamoworkermetadatas.nvidia.com/v1alpha1) is not installed") {
			return "the DynamoWorkerMetadata CRD is not installed"
		}
	}
	return ""
}

// hops resolves each hop's mode and the worker-set override that applies to
// it: a worker set's published router_config (any release), else its own
// router flags on releases whose workers publish them
// (RuleWorkerRouterArgs); before #13197 the prefill hop follows the decode
// set's (RulePrefillHopConfig).
func hops(dep *model.Deployment, rel Release) (prefill, decode Hop) {
	front := Hop{}
	r := dep.Router
	if r.Mode == "" {
		front.Mode, front.ModeSource = routecore.RouterModeKV, "unknown (no frontend configuration was read); the KV router is assumed"
	} else if m, err := routecore.ParseRouterMode(r.Mode); err != nil {
		front.Mode, front.ModeSource = routecore.RouterMode(r.Mode), fmt.Sprintf("%s (%q is not a mode the frontend accepts; the KV router is modelled)", cmp.Or(r.ModeSource, "frontend"), r.Mode)
	} else {
		front.Mode, front.ModeKnown = m, true
		front.ModeSource = cmp.Or(r.ModeSource, "frontend")
		if front.ModeSource == "default" {
			front.ModeSource = "default: no --router-mode or DYN_ROUTER_MODE"
		}
	}
	roles := componentRoles(dep)
	pick := func(list []model.RouterOverride, want ...model.Role) *model.RouterOverride {
		for i := range list {
			if slices.Contains(want, roles[list[i].Component]) {
				o := list[i]
				return &o
			}
		}
		return nil
	}
	override := func(want ...model.Role) *model.RouterOverride {
		if o := pick(r.WorkerSetOverrides, want...); o != nil {
			if o.Source == "" {
				o.Source = "card"
			}
			return o
		}
		if At(RuleWorkerRouterArgs, rel).Key == EraParsed {
			return pick(r.WorkerArgs, want...)
		}
		return nil
	}
	po, do := override(model.RolePrefill), override(model.RoleDecode, model.RoleAggregated)
	if At(RulePrefillHopConfig, rel).Key == EraFollowsDecode {
		po = do
	}
	prefill, decode = front, front
	for _, h := range []struct {
		hop *Hop
		o   *model.RouterOverride
	}{{&prefill, po}, {&decode, do}} {
		h.hop.Override = h.o
		if h.o == nil || h.o.Mode == "" {
			continue
		}
		m, err := routecore.ParseRouterMode(h.o.Mode)
		if err != nil {
			continue
		}
		h.hop.Mode, h.hop.ModeKnown = m, true
		h.hop.ModeSource = "worker set " + h.o.Component + " " + describeOverride(h.o)
	}
	decode.Constraint = ConstraintHonoured
	if !decode.KV() {
		decode.Constraint = ConstraintIgnored
	}
	return prefill, decode
}

func describeOverride(o *model.RouterOverride) string {
	if o.Source == "card" || o.Source == "" {
		return "card router_config"
	}
	return o.Source + " (published as its card's router_config)"
}

// componentRoles maps each worker component to its role (prefill wins when a
// component mixes roles).
func componentRoles(dep *model.Deployment) map[string]model.Role {
	roles := map[string]model.Role{}
	for _, w := range dep.Workers {
		if _, ok := roles[w.Component]; !ok || w.Role == model.RolePrefill {
			roles[w.Component] = w.Role
		}
	}
	for _, c := range dep.Components {
		if _, ok := roles[c.Name]; ok {
			continue
		}
		switch strings.ToLower(cmp.Or(c.SubComponentType, c.Type)) {
		case "prefill":
			roles[c.Name] = model.RolePrefill
		case "decode":
			roles[c.Name] = model.RoleDecode
		}
	}
	return roles
}

// workers decides each worker pod's registration. A multinode replica is
// registered when any of its pods published an instance (the leader does).
func (rd *Reading) workers(dep *model.Deployment, planned bool) {
	byReplica := map[string]bool{}
	valid := map[string]bool{}       // replicas with an instance the validator accepts
	rejects := map[string][]string{} // the validator's errors per replica
	for _, w := range dep.Workers {
		if len(w.Instances) == 0 {
			continue
		}
		k := replicaKey(&w)
		byReplica[k] = true
		for _, in := range w.Instances {
			if errs := RegistrationErrors(in.Runtime); len(errs) > 0 {
				rejects[k] = append(rejects[k], errs...)
			} else {
				valid[k] = true
			}
		}
	}
	for _, w := range dep.Workers {
		st := WorkerState{Pod: w.Pod, Role: w.Role}
		switch {
		case planned:
			st.Registered, st.Live = Registered, true
			rd.Workers = append(rd.Workers, st)
			continue
		case byReplica[replicaKey(&w)] && !valid[replicaKey(&w)]:
			st.Registered = Rejected
			st.Why = "publishes a runtime config that Dynamo's validator rejects, so it cannot register and the router does not know it: " + strings.Join(slices.Compact(rejects[replicaKey(&w)]), "; ")
		case byReplica[replicaKey(&w)]:
			st.Registered = Registered
		case !rd.RegistrationKnown:
			st.Registered = RegistrationUnknown
		default:
			st.Registered = NotRegistered
			st.Why = "publishes no Dynamo instance (no DynamoWorkerMetadata or etcd entry), so the router does not know it"
		}
		st.Live = w.Ready && st.Registered != NotRegistered && st.Registered != Rejected
		if !w.Ready && st.Why == "" {
			st.Why = "not ready"
		}
		rd.Workers = append(rd.Workers, st)
	}
}

func replicaKey(w *model.Worker) string { return cmp.Or(w.Replica, w.Pod) }

// Live reports whether a worker pod is live (by pod name).
func (rd *Reading) Live(pod string) bool {
	for _, w := range rd.Workers {
		if w.Pod == pod {
			return w.Live
		}
	}
	return false
}

// State returns a worker pod's state.
func (rd *Reading) State(pod string) (WorkerState, bool) {
	for _, w := range rd.Workers {
		if w.Pod == pod {
			return w, true
		}
	}
	return WorkerState{}, false
}

// readiness applies RuleReadiness to the deployment's live workers.
func readiness(dep *model.Deployment, rd *Reading, rel Release) Readiness {
	live := Live{Roles: map[model.Role]int{}}
	for i, st := range rd.Workers {
		if !st.Live {
			continue
		}
		live.Roles[st.Role]++
		for _, in := range dep.Workers[i].Instances {
			if in.WorkerType == "" && cardPublished(&in) {
				live.Legacy = true
			}
		}
	}
	if len(dep.Workers) == 0 {
		// A manifest, or a deployment without pods: nothing runs to judge yet.
		era := At(RuleReadiness, rel)
		return Readiness{Ready: true, Era: era, Cite: Cite(RuleReadiness, rel)}
	}
	enforce, _ := EnforceDisagg(dep, rel)
	return EvaluateReadiness(rel, live, enforce)
}

// Live is what the frontend's readiness rule reads: how many live workers of
// each role a deployment has (after any what-if that removes some), and
// whether a live card lacks worker_type (a legacy worker).
type Live struct {
	Roles  map[model.Role]int
	Legacy bool
}

// EvaluateReadiness applies RuleReadiness to the live workers at a release.
// Worker sets declare their needs on their cards; every Dynamo backend
// registers decode workers with needs [[prefill]] and prefill workers with
// [[decode]], aggregated (and encode) workers with none, so the needs are
// read from the roles. enforce is the frontend's --enforce-disagg (releases
// before the strict rule; EnforceDisagg).
func EvaluateReadiness(rel Release, live Live, enforce bool) Readiness {
	era := At(RuleReadiness, rel)
	out := Readiness{Ready: true, Era: era, Cite: Cite(RuleReadiness, rel), Legacy: live.Legacy}
	total := 0
	for _, n := range live.Roles {
		total += n
	}
	if total == 0 {
		// The frontend drops a model with its last instance: requests for it
		// are answered 404 (model not found), on every release.
		out.Ready, out.Status = false, 404
		out.Reason = "no worker is live"
		return out
	}
	prefill, decode := live.Roles[model.RolePrefill], live.Roles[model.RoleDecode]
	switch era.Key {
	case EraStrictNeeds:
		if live.Legacy {
			return out
		}
		if decode > 0 && prefill == 0 {
			out.Missing = append(out.Missing, model.RolePrefill)
		}
		if prefill > 0 && decode == 0 {
			out.Missing = append(out.Missing, model.RoleDecode)
		}
		if len(out.Missing) > 0 {
			var names []string
			for _, m := range out.Missing {
				names = append(names, string(m))
			}
			out.Ready, out.Status = false, 503
			out.Reason = "missing worker types: " + strings.Join(names, ", ")
		}
	case EraAggregated, EraDecodeFallback:
		if decode == 0 || prefill > 0 {
			return out
		}
		if enforce {
			out.Ready, out.Status = false, 503
			out.Missing = []model.Role{model.RolePrefill}
			out.Reason = "PrefillError::NotActivated: no prefill worker is live and disaggregation is enforced"
			return out
		}
		out.Aggregated = true
	}
	return out
}

// cardPublished reports whether an instance carries model-card data (as
// opposed to a bare endpoint registration).
func cardPublished(in *model.Instance) bool {
	rc := &in.Runtime
	return in.BlockSize > 0 || in.Model != "" || rc.TotalKvBlocks != nil || rc.MaxNumSeqs != nil ||
		len(rc.TopologyDomains) > 0 || rc.KvTransferDomain != ""
}

// EnforceDisagg reads whether the frontend fails requests rather than serve
// them aggregated while no prefill worker is live, on releases before the
// strict readiness rule: --enforce-disagg / DYN_ENFORCE_DISAGG
// (router_args.py), or Dynamo 1.0.x's --decode-fallback / DYN_DECODE_FALLBACK
// (#6515), whose absence enforced it. from says where it was read ("" when no
// frontend command line is known).
func EnforceDisagg(dep *model.Deployment, rel Release) (enforce bool, from string) {
	for _, f := range dep.Frontends {
		if len(f.Argv) == 0 {
			continue
		}
		words := cmdline.CommandWords(f.Argv, f.Env)
		if v, set := cmdline.BoolFlag(words, "--enforce-disagg", "--no-enforce-disagg"); set {
			return v, "frontend pod " + f.Pod + " args"
		}
		if v, ok := f.Env["DYN_ENFORCE_DISAGG"]; ok {
			return cmdline.Truthy(v), "frontend pod " + f.Pod + " env DYN_ENFORCE_DISAGG"
		}
		if v, set := cmdline.BoolFlag(words, "--decode-fallback", "--no-decode-fallback"); set {
			return !v, "frontend pod " + f.Pod + " args --decode-fallback (#6515)"
		}
		if v, ok := f.Env["DYN_DECODE_FALLBACK"]; ok {
			return !cmdline.Truthy(v), "frontend pod " + f.Pod + " env DYN_DECODE_FALLBACK (#6515)"
		}
		if At(RuleReadiness, rel).Key == EraDecodeFallback {
			return true, "frontend pod " + f.Pod + " (the " + rel.Line() + " default: no --decode-fallback, #6515)"
		}
		return false, "frontend pod " + f.Pod + " (default)"
	}
	return false, ""
}

// ReadDeployment detects dep's release (override is --dynamo-version, "" to
// detect) and reads it. An invalid override is the only error.
func ReadDeployment(snap *model.Snapshot, dep *model.Deployment, override string) (*Reading, error) {
	var ops []model.Operator
	if snap != nil {
		ops = snap.Operators
	}
	det, err := Detect(dep, ops, override)
	if err != nil {
		return nil, err
	}
	return Read(snap, dep, det), nil
}

// Model is the detection as the reports carry it.
func (d Detection) Model() *model.DynamoRelease {
	return &model.DynamoRelease{Version: d.Version, Known: d.Known, Via: d.Via, Source: d.Source, Override: d.Override, Mixed: d.Mixed, Operator: d.Operator}
}

// SetRouting is the router configuration of the hop that routes to one
// worker set: the set's own (its published router_config, or its router
// flags on releases whose workers publish them), else the frontend's.
type SetRouting struct {
	// Mode is the router mode ("" when no configuration was read).
	Mode   string
	Config routecore.KvRouterConfig
	// Source names where it came from.
	Source string
	// Override is the set's own configuration when it applies.
	Override *model.RouterOverride
}

// KV reports whether the set is routed by the KV router.
func (s SetRouting) KV() bool { return strings.EqualFold(strings.TrimSpace(s.Mode), "kv") }

// SetRouting returns the routing of worker set component.
func (rd *Reading) SetRouting(component string) SetRouting {
	r := &rd.dep.Router
	find := func(list []model.RouterOverride) *model.RouterOverride {
		for i := range list {
			if list[i].Component == component {
				o := list[i]
				return &o
			}
		}
		return nil
	}
	if o := find(r.WorkerSetOverrides); o != nil {
		return SetRouting{Mode: cmp.Or(o.Mode, r.Mode), Config: o.Config, Source: "the router_config worker set " + component + " publishes", Override: o}
	}
	if At(RuleWorkerRouterArgs, rd.Release.Release).Key == EraParsed {
		if o := find(r.WorkerArgs); o != nil {
			return SetRouting{Mode: o.Mode, Config: o.Config, Source: "the router flags of worker set " + component + " (" + o.Source + ")", Override: o}
		}
	}
	src := "the frontend's configuration"
	if r.ConfigSource != "" {
		src, _, _ = strings.Cut(r.ConfigSource, " (")
	}
	return SetRouting{Mode: r.Mode, Config: r.Config, Source: src}
}

// LegacyCard reports whether an instance is a legacy worker's: a model card
// without worker_type (which turns strict readiness gating off).
func LegacyCard(in *model.Instance) bool { return in.WorkerType == "" && cardPublished(in) }
