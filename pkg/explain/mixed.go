package explain

import (
	"fmt"
	"slices"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
)

// routeMixed is the dry run when the two hops run different kinds of router
// (since Dynamo #13192/#13197 a worker set's router_config governs its own
// hop): a KV prefill hop and a non-KV decode hop, or the other way round. The
// KV hop runs the routing core's disaggregated flow (prefill only, or decode
// after a prefill pinned to the non-KV pick); the other hop runs its mode's
// picker. Draws are taken in hop order: prefill, then decode.
func (e *explainer) routeMixed(req routecore.Request, prefillKV bool) error {
	x := e.x
	x.Mode = routecore.DisaggModeDisaggregated
	e.userAllowed = req.AllowedWorkers
	d, err := e.mixedDecide(req, SeedRand(e.in.Options.Seed), nil, nil)
	if err != nil {
		return err
	}
	if d.KV != nil {
		e.setSita(d.KV)
	}
	x.Assumptions = append(x.Assumptions, fmt.Sprintf("the prefill hop runs %s and the decode hop %s (a worker set's router_config replaces the frontend's mode for its hop, Dynamo #13192/#13197)", e.pmode, e.dmode))
	if prefillKV {
		kd := d.KV
		x.Prefill = e.stage(kd.Prefill, req.Constraints)
		e.setTransfer(kd.Transfer)
		if kd.FailedStage != "" {
			x.Summary = e.names(kd.Explanation)
			e.verdict(kd)
			return nil
		}
		x.Decode = e.modeStage(*d.Decode, kd.DecodeConstraints)
		if x.Transfer != nil && kd.Transfer.Constrained() {
			x.Transfer.Ignored = true
			x.Transfer.Explanation += fmt.Sprintf("; the %s decode pick does not read routing constraints, so this constraint has no effect", e.dmode)
		}
		x.Summary = fmt.Sprintf("prefill on %s (kv), decode %s", e.label(kd.Prefill.Selected, true), e.modeSummary(nil, *d.Decode)[len("served aggregated "):])
		e.mixedDecodeVerdict(*d.Decode, kd.Transfer)
		return nil
	}
	x.Prefill = e.modeStage(*d.Prefill, req.Constraints)
	if d.Prefill.ErrorKind != "" {
		x.Summary = e.modeSummary(d.Prefill, routecore.ModeDecision{})
		e.modeVerdict(d.Prefill, routecore.ModeDecision{}, nil)
		return nil
	}
	kd := d.KV
	e.setTransfer(kd.Transfer)
	if kd.Decode != nil {
		x.Decode = e.stage(kd.Decode, kd.DecodeConstraints)
	}
	x.Summary = e.names(kd.Explanation)
	e.verdict(kd)
	return nil
}

// mixedDecide runs the two hops of a mixed-mode request (see routeMixed).
func (e *explainer) mixedDecide(req routecore.Request, rng routecore.Rand, pc, dc *routecore.RoundRobinCounter) (CoreDecision, error) {
	if kvHop(e.pmode, e.pKnown) {
		di := e.disaggInput(req)
		di.PrefillOnly = true
		kd, err := routecore.RouteDisaggregated(di, rng)
		if err != nil && kd.Err == nil {
			return CoreDecision{}, inputErr("", "the routing core rejected the inputs: %v", err)
		}
		cd := CoreDecision{KV: &kd, Transfer: kd.Transfer, Sita: sitaBands(&kd)}
		if kd.FailedStage != "" {
			return cd, nil // the request fails at the prefill or transfer stage
		}
		var target *routecore.WorkerID
		if s := e.in.Options.WhatIf.Decode; s != "" {
			id, err := e.resolveDecode(s)
			if err != nil {
				return CoreDecision{}, err
			}
			target = &id
		}
		dec, err := routecore.SelectByMode(routecore.ModeInput{Mode: e.dmode, Workers: e.modeWorkers(e.decode), Target: target, Counter: dc}, rng)
		if err != nil {
			return CoreDecision{}, inputErr("", "the routing core rejected the inputs: %v", err)
		}
		cd.Decode = &dec
		return cd, nil
	}
	pre, err := e.modePrefill(rng, pc)
	if err != nil {
		return CoreDecision{}, err
	}
	cd := CoreDecision{Prefill: &pre}
	if pre.ErrorKind != "" {
		return cd, nil
	}
	// The KV decode hop after the non-KV prefill pick: the prefill is pinned
	// to that pick (its first dp rank), so the routing core derives the
	// transfer constraint from it and routes decode under it.
	m := e.byID[pre.Selected]
	start, _ := m.inst.Runtime.DpRange()
	pin := routecore.WorkerWithDpRank{WorkerID: pre.Selected, DpRank: start}
	di := e.disaggInput(req)
	di.PrefillPin, di.SkipAlternatives = &pin, true
	kd, err := routecore.RouteDisaggregated(di, rng)
	if err != nil && kd.Err == nil {
		return CoreDecision{}, inputErr("", "the routing core rejected the inputs: %v", err)
	}
	cd.KV, cd.Transfer, cd.Sita = &kd, kd.Transfer, sitaBands(&kd)
	return cd, nil
}

// setTransfer renders the transfer derivation.
func (e *explainer) setTransfer(t *routecore.TransferDerivation) {
	if t == nil {
		return
	}
	e.x.Transfer = &Transfer{
		PrefillWorker: e.label(routecore.WorkerWithDpRank{WorkerID: t.PrefillWorker}, false),
		Domain:        t.Domain, Value: t.Value, Enforcement: t.Enforcement, Weight: t.Weight,
		RequiredTaints: t.Constraints.RequiredTaints, PreferredTaints: t.Constraints.PreferredTaints,
		Rule: t.Rule, Explanation: e.names(t.Explanation), Failed: t.Failed,
	}
}

// mixedDecodeVerdict is the verdict of a KV prefill hop followed by a non-KV
// decode pick.
func (e *explainer) mixedDecodeVerdict(dec routecore.ModeDecision, t *routecore.TransferDerivation) {
	x := e.x
	v := &x.Verdict
	if dec.ErrorKind != "" {
		v.Stage, v.Error, v.Message = routecore.StageDecode, dec.ErrorKind, e.names(dec.Error)
		v.FailureProbability, v.Outcome = 1, OutcomeFails
		v.Cause, v.Fix = e.modeErrorCause(dec.ErrorKind, "decode", x.Decode)
		return
	}
	v.Routable, v.Outcome, v.Message = true, OutcomeRoutable, x.Summary
	if t == nil || !t.Constrained() || e.policy == nil {
		return
	}
	for _, dc := range dec.Candidates {
		m := e.byID[dc.Worker.ID]
		if m == nil || dc.Probability == 0 {
			continue
		}
		if !slices.Contains(m.inst.Runtime.EffectiveTaints(), t.Taint) {
			v.ConstraintIgnoredProbability += dc.Probability
		}
	}
	if v.ConstraintIgnoredProbability > 0 {
		v.Cause = fmt.Sprintf("the decode hop routes in %s mode, whose pick ignores the kvTransferPolicy: with probability %.0f%% decode runs outside the prefill worker's %s and the KV cache crosses it", e.dmode, 100*v.ConstraintIgnoredProbability, e.policy.Domain)
		if e.policy.Enforcement == routecore.EnforcementRequired {
			v.Cause += " (required enforcement would have refused that decode worker)"
		}
		v.Fix = "publish router_mode kv in the decode worker set's router_config (or run the frontend with --router-mode kv) so that decode picks honour the transfer constraint"
	}
}
