package explain

import (
	"errors"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/behavior"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
)

// Plan is the request-independent half of a dry run: the router
// configuration of both hops after the knobs, the router mode, the busy
// thresholds, the two routing pools after the what-ifs, and the block size.
// Explain builds one per request; a caller routing many requests (the traffic
// simulator) builds it once and calls Decide per request, so that each
// decision is exactly the one explain-route would make for the same inputs.
type Plan struct {
	e *explainer
}

// NewPlan resolves everything of a dry run that does not depend on the
// request's tokens. in.Request's Override is validated; its tokens are not
// read. Errors are ErrInput for bad what-ifs and knobs, as in Explain.
func NewPlan(in Input) (*Plan, error) {
	dep := in.Deployment
	if dep == nil {
		return nil, errors.New("explain: no deployment")
	}
	x := &Explanation{
		APIVersion: APIVersion, Kind: Kind,
		Deployment: dep.Name, Namespace: dep.Namespace,
	}
	if in.Snapshot != nil {
		x.Context = in.Snapshot.Context
		for _, n := range in.Snapshot.Notes {
			if n.Deployment == "" || n.Deployment == dep.Key() {
				x.Notes = append(x.Notes, n)
			}
		}
	}
	ex := &explainer{in: in, x: x, dep: dep, byID: map[routecore.WorkerID]*member{}}
	rd, err := behavior.ReadDeployment(in.Snapshot, dep, in.Options.DynamoVersion)
	if err != nil {
		return nil, inputErr("Pass a Dynamo version such as 1.3.0, or a profile name.", "--dynamo-version: %v", err)
	}
	ex.rd = rd
	x.Dynamo = rd.Release.Model()
	if err := ex.config(); err != nil {
		return nil, err
	}
	if err := ex.pools(); err != nil {
		return nil, err
	}
	ex.hopModes()
	ex.hopConfigs()
	ex.readiness()
	if err := ex.resolveBlockSize(); err != nil {
		return nil, err
	}
	return &Plan{e: ex}, nil
}

// SeedRand is the draw source explain-route uses for a seed: a caller that
// wants a dry run's draws (ties, sampling, non-KV picks) to match
// explain-route's for the same seed draws from it in the same order.
func SeedRand(seed uint64) routecore.Rand { return routecore.NewRand(seed, seedMix) }

// Dynamo returns the Dynamo release the plan follows and how it was told.
func (p *Plan) Dynamo() *model.DynamoRelease { return p.e.x.Dynamo }

// Router returns the resolved router configuration (mode, configs, hops,
// thresholds, policy, seed), as Explanation.Router shows it.
func (p *Plan) Router() RouterInfo { return p.e.x.Router }

// Mode is the router mode the plan routes with; ModeKnown is false when no
// frontend configuration was read and the KV router is assumed.
func (p *Plan) Mode() (mode routecore.RouterMode, known bool) { return p.e.mode, p.e.modeKnown }

// KV reports whether the hop that scores cache overlap (prefill when prefill
// workers are routable, else decode) runs the KV cost model (the kv mode, or
// an unknown mode, which is modelled as kv).
func (p *Plan) KV() bool {
	if len(p.e.prefill) > 0 {
		return kvHop(p.e.pmode, p.e.pKnown)
	}
	return kvHop(p.e.dmode, p.e.dKnown)
}

// HopModes are the prefill and decode hops' router modes (a worker set's
// router_config may give a hop its own).
func (p *Plan) HopModes() (prefill, decode routecore.RouterMode) { return p.e.pmode, p.e.dmode }

// BlockSize is the KV block size the router hashes with; Eagle whether any
// routable worker hashes Eagle windows.
func (p *Plan) BlockSize() int { return p.e.blockSize }

// Eagle reports whether the routable workers hash EAGLE windows.
func (p *Plan) Eagle() bool { return p.e.eagle }

// Model is the served model name from the worker cards.
func (p *Plan) Model() string { return p.e.x.Model }

// Pools returns the prefill and decode routing pools. The slices are the
// plan's own: a caller may update each worker's Loads between Decide calls
// (a simulation feeding the router's ledger), and nothing else.
func (p *Plan) Pools() (prefill, decode []routecore.Worker) { return p.e.prefill, p.e.decode }

// Excluded lists the workers that are not candidates and why.
func (p *Plan) Excluded() []Excluded { return p.e.x.Excluded }

// Assumptions are what the plan assumed so far (before any request).
func (p *Plan) Assumptions() []string { return p.e.x.Assumptions }

// Member is the pod and role behind a routable instance.
type Member struct {
	Pod  *model.Worker
	Inst *model.Instance
	Role model.Role
}

// Member returns the pod behind an instance id (false when unknown).
func (p *Plan) Member(id routecore.WorkerID) (Member, bool) {
	m := p.e.byID[id]
	if m == nil {
		return Member{}, false
	}
	return Member{Pod: m.pod, Inst: m.inst, Role: m.role}, true
}

// TierWeights are the host and disk cache-hit weights of the hop that scores
// overlap (the prefill router when prefill workers are routable).
func (p *Plan) TierWeights() routecore.TierWeights {
	_, cfg := p.e.scoringHop()
	return routecore.TierWeights{HostPinned: cfg.HostCacheHitWeight, Disk: cfg.DiskCacheHitWeight}
}

// ScoringConfig is the configuration of the hop that scores overlap.
func (p *Plan) ScoringConfig() routecore.KvRouterConfig {
	_, cfg := p.e.scoringHop()
	return cfg
}

// DecideOptions carry the router state a single dry run cannot see but a
// simulation keeps.
type DecideOptions struct {
	// PrefillCounter and DecodeCounter are the hops' round-robin counters (nil:
	// the rotation is unknown, each free worker 1/n).
	PrefillCounter, DecodeCounter *routecore.RoundRobinCounter
	// SkipAlternatives leaves out the outcome of every other possible prefill
	// landing (routecore.DisaggInput.SkipAlternatives): the decision is the
	// same.
	SkipAlternatives bool
}

// CoreDecision is the routing core's answer for one request, before it is
// turned into an Explanation: in kv mode the disaggregated flow's decision,
// in the other modes the two pickers' decisions and the transfer derivation
// from the prefill pick.
type CoreDecision struct {
	KV *routecore.DisaggDecision
	// Prefill (nil when aggregated) and Decode are the non-KV picks, when that
	// hop is not KV (with hops in different modes, KV holds the other hop);
	// Transfer is derived from the prefill pick (nil when aggregated or
	// prefill failed).
	Prefill  *routecore.ModeDecision
	Decode   *routecore.ModeDecision
	Transfer *routecore.TransferDerivation
	// Sita is each KV hop's SITA band, when enabled.
	Sita map[string]routecore.SitaBand
	// Refused is set when the frontend refuses the request before routing
	// (the model is not ready at the release read); the other fields are then
	// empty.
	Refused *Refusal
}

// Decide routes one request exactly as Explain does: req is the routing
// core's request (ISL, block size, overlap, constraints, override, active
// blocks) built by the caller; rng supplies the draws in explain-route's
// order (SeedRand). Errors are invalid inputs only; a request the router
// rejects is a decision with an error kind.
func (p *Plan) Decide(req routecore.Request, rng routecore.Rand, o DecideOptions) (CoreDecision, error) {
	e := p.e
	if r := e.refusal(); r != nil {
		return refusedDecision(r), nil
	}
	kvP, kvD := kvHop(e.pmode, e.pKnown), kvHop(e.dmode, e.dKnown)
	if len(e.prefill) > 0 && kvP != kvD {
		return e.mixedDecide(req, rng, o.PrefillCounter, o.DecodeCounter)
	}
	if !kvD {
		var target *routecore.WorkerID
		if s := e.in.Options.WhatIf.Decode; s != "" {
			id, err := e.resolveDecode(s)
			if err != nil {
				return CoreDecision{}, err
			}
			target = &id
		}
		pre, dec, err := e.modeDecide(rng, target, o.PrefillCounter, o.DecodeCounter)
		if err != nil {
			return CoreDecision{}, err
		}
		d := CoreDecision{Prefill: pre, Decode: &dec}
		if pre != nil && pre.ErrorKind == "" {
			configs := make(map[routecore.WorkerID]routecore.RuntimeConfig, len(e.prefill))
			for _, w := range e.prefill {
				configs[w.ID] = w.Runtime
			}
			t, _ := routecore.DeriveTransferConstraints(configs, pre.Selected)
			d.Transfer = &t
		}
		return d, nil
	}
	di := e.disaggInput(req)
	di.SkipAlternatives = o.SkipAlternatives
	dd, err := routecore.RouteDisaggregated(di, rng)
	if err != nil && dd.Err == nil {
		return CoreDecision{}, inputErr("", "the routing core rejected the inputs: %v", err)
	}
	return CoreDecision{KV: &dd, Transfer: dd.Transfer, Sita: sitaBands(&dd)}, nil
}

// disaggInput is the routing core's input for one KV-mode request.
func (e *explainer) disaggInput(req routecore.Request) routecore.DisaggInput {
	pcfg := e.pcfg
	return routecore.DisaggInput{
		// Large selections may use every core (routecore starts goroutines only
		// through this; the decision is the same).
		Go:     func(f func()) { go f() },
		Config: e.cfg, PrefillConfig: &pcfg, Thresholds: e.thresholds,
		PrefillWorkers: e.prefill, DecodeWorkers: e.decode, Request: req, PrefillPin: e.pin,
		ApplySita: true,
	}
}

// Names replaces instance ids in a routing core message with pod names (and
// pod:rank for multi-rank workers), as explain-route's messages read.
func (p *Plan) Names(s string) string { return p.e.names(s) }
