package explain

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/behavior"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
)

// routerMode resolves the frontend's router mode from the deployment's router
// info — the same value topology prints and RouterNotKV checks — and returns
// where it came from.
func (e *explainer) routerMode() string {
	r := e.dep.Router
	if r.Mode == "" {
		e.mode, e.modeKnown = routecore.RouterModeKV, false
		return "unknown (no frontend configuration was read); the KV router is assumed"
	}
	m, err := routecore.ParseRouterMode(r.Mode)
	if err != nil {
		e.mode, e.modeKnown = routecore.RouterMode(r.Mode), false
		e.x.Assumptions = append(e.x.Assumptions, fmt.Sprintf("the frontend's router mode %q is not one the frontend accepts (%v); the KV router is modelled", r.Mode, err))
		return cmp.Or(r.ModeSource, "frontend")
	}
	e.mode, e.modeKnown = m, true
	src := cmp.Or(r.ModeSource, "frontend")
	if src == "default" {
		src = "default: no --router-mode or DYN_ROUTER_MODE"
	}
	return src
}

// hopModes resolves each hop's router mode as pkg/behavior reads it for the
// release: the frontend's, unless the hop's worker set publishes its own
// router_config with a mode (since Dynamo #13192/#13197; before #13197 the
// prefill hop followed the decode side's), or — on releases whose workers
// publish their router flags — passes --router-mode itself. The --router-mode
// what-if replaces every hop's.
func (e *explainer) hopModes() {
	e.pmode, e.pKnown, e.dmode, e.dKnown = e.mode, e.modeKnown, e.mode, e.modeKnown
	if e.in.Options.Knobs.RouterMode != nil {
		return
	}
	for _, h := range []struct {
		hop   behavior.Hop
		mode  *routecore.RouterMode
		known *bool
	}{{e.rd.Prefill, &e.pmode, &e.pKnown}, {e.rd.Decode, &e.dmode, &e.dKnown}} {
		if o := h.hop.Override; o != nil && o.Mode != "" {
			if _, err := routecore.ParseRouterMode(o.Mode); err != nil {
				e.x.Assumptions = append(e.x.Assumptions, fmt.Sprintf("worker set %s publishes router mode %q, which the frontend does not accept (%v); its hop is modelled in the frontend's mode", o.Component, o.Mode, err))
				continue
			}
			*h.mode, *h.known = h.hop.Mode, h.hop.ModeKnown
		}
	}
}

// kvHop reports whether a hop runs the KV router (an unknown mode is
// modelled as kv).
func kvHop(mode routecore.RouterMode, known bool) bool { return !known || mode.IsKV() }

// modeWorkers turns a pool into the non-KV picker's view: one entry per
// instance, in-flight counts from --load activeRequests (summed over ranks),
// overload from the busy thresholds. Instances do not publish a device type in
// the data read, so every worker counts as non-CPU for device-aware-weighted.
func (e *explainer) modeWorkers(pool []routecore.Worker) []routecore.ModeWorker {
	out := make([]routecore.ModeWorker, 0, len(pool))
	for _, w := range pool {
		rep := routecore.WorkerOverload(e.thresholds, w)
		mw := routecore.ModeWorker{ID: w.ID, Overloaded: rep.Overloaded}
		if rep.Overloaded {
			mw.OverloadDetail = routecore.DescribeOverload(rep)
		}
		for _, l := range w.Loads {
			mw.InFlight += l.ActiveRequests
		}
		out = append(out, mw)
	}
	return out
}

// routeByMode is the dry run in a non-KV router mode: the prefill router (when
// prefill workers are routable) picks with the mode's picker, derives the
// decode constraint from its pick exactly as in kv mode (the fail-closed rules
// apply), and the decode pick — the same picker, a separate rotation and
// occupancy state — ignores that constraint.
func (e *explainer) routeByMode(req routecore.Request) error {
	x := e.x
	x.Assumptions = append(x.Assumptions,
		fmt.Sprintf("router mode %s: the KV cost model is not used; the frontend's own in-flight request counts are not published, so they are 0 unless --load sets activeRequests", e.mode))
	var decodeTarget *routecore.WorkerID
	if p := e.in.Options.WhatIf.Decode; p != "" {
		id, err := e.resolveDecode(p)
		if err != nil {
			return err
		}
		decodeTarget = &id
	}
	preP, dec, err := e.modeDecide(SeedRand(e.in.Options.Seed), decodeTarget, nil, nil)
	if err != nil {
		return err
	}
	if preP == nil {
		x.Mode = routecore.DisaggModeAggregated
		x.Decode = e.modeStage(dec, req.Constraints)
		x.Summary = e.modeSummary(nil, dec)
		e.modeVerdict(nil, dec, nil)
		return nil
	}
	x.Mode = routecore.DisaggModeDisaggregated
	pre := *preP
	x.Prefill = e.modeStage(pre, req.Constraints)
	if pre.ErrorKind != "" {
		x.Summary = e.modeSummary(&pre, dec)
		e.modeVerdict(&pre, dec, nil)
		return nil
	}
	configs := map[routecore.WorkerID]routecore.RuntimeConfig{}
	for _, w := range e.prefill {
		configs[w.ID] = w.Runtime
	}
	derivations := map[routecore.WorkerID]routecore.TransferDerivation{}
	for _, c := range pre.Candidates {
		if c.Probability <= 0 {
			continue
		}
		t, _ := routecore.DeriveTransferConstraints(configs, c.Worker.ID)
		derivations[c.Worker.ID] = t
		row := MatrixRow{
			Prefill: e.label(routecore.WorkerWithDpRank{WorkerID: c.Worker.ID}, false), InstanceID: c.Worker.ID,
			Probability: c.Probability, Routable: !t.Failed && dec.ErrorKind == "",
			RequiredTaints: t.Constraints.RequiredTaints,
		}
		if m := e.byID[c.Worker.ID]; m != nil {
			row.Domain = m.pod.Domain.Effective()
		}
		switch {
		case t.Failed:
			row.Error = string(t.Rule) + ": " + e.names(t.Explanation)
		case dec.ErrorKind != "":
			row.Error = dec.ErrorKind + ": " + dec.Error
		default:
			for _, dc := range dec.Candidates {
				if dc.Probability > 0 {
					row.DecodeSelected = append(row.DecodeSelected, e.label(routecore.WorkerWithDpRank{WorkerID: dc.Worker.ID}, false))
				}
			}
		}
		x.Alternatives = append(x.Alternatives, row)
	}
	if len(x.Alternatives) == 1 {
		x.Alternatives = nil
	}
	t := derivations[pre.Selected]
	x.Transfer = &Transfer{
		PrefillWorker: e.label(routecore.WorkerWithDpRank{WorkerID: pre.Selected}, false),
		Domain:        t.Domain, Value: t.Value, Enforcement: t.Enforcement, Weight: t.Weight,
		RequiredTaints: t.Constraints.RequiredTaints, PreferredTaints: t.Constraints.PreferredTaints,
		Rule: t.Rule, Explanation: e.names(t.Explanation), Failed: t.Failed,
		Ignored: t.Constrained(),
	}
	if t.Constrained() && !t.Failed {
		x.Transfer.Explanation += fmt.Sprintf("; the %s decode pick does not read routing constraints, so this constraint has no effect", e.mode)
	}
	if !t.Failed {
		x.Decode = e.modeStage(dec, routecore.MergeFrontend(req.Constraints, t.Constraints))
	}
	x.Summary = e.modeSummary(&pre, dec)
	e.modeVerdict(&pre, dec, derivations)
	return nil
}

// modeDecide runs the non-KV picks in the order the draws are taken: the
// decode hop first, then the prefill hop when prefill workers are routable
// (nil pre otherwise). counters are the hops' round-robin counters (nil:
// unknown rotation).
func (e *explainer) modeDecide(rng routecore.Rand, decodeTarget *routecore.WorkerID, prefillCounter, decodeCounter *routecore.RoundRobinCounter) (*routecore.ModeDecision, routecore.ModeDecision, error) {
	dec, err := routecore.SelectByMode(routecore.ModeInput{Mode: e.dmode, Workers: e.modeWorkers(e.decode), Target: decodeTarget, Counter: decodeCounter}, rng)
	if err != nil {
		return nil, dec, inputErr("", "the routing core rejected the inputs: %v", err)
	}
	if len(e.prefill) == 0 {
		return nil, dec, nil
	}
	pre, err := e.modePrefill(rng, prefillCounter)
	if err != nil {
		return nil, dec, err
	}
	return &pre, dec, nil
}

// modePrefill is a non-KV prefill pick.
func (e *explainer) modePrefill(rng routecore.Rand, counter *routecore.RoundRobinCounter) (routecore.ModeDecision, error) {
	var prefillTarget *routecore.WorkerID
	if e.pin != nil {
		id := e.pin.WorkerID
		prefillTarget = &id
	}
	pre, err := routecore.SelectByMode(routecore.ModeInput{Mode: e.pmode, Workers: e.modeWorkers(e.prefill), Target: prefillTarget, Counter: counter}, rng)
	if err != nil {
		return pre, inputErr("", "the routing core rejected the inputs: %v", err)
	}
	if e.pmode == routecore.RouterModeDirect && pre.ErrorKind == routecore.ErrKindDirectTargetMissing {
		// PrefillRouter::generate: the prefill hop needs the named worker first.
		pre.Error = "Prefill worker ID required in Direct routing mode but none found in request. Expected prefill_worker_id to be set via x-dynamo-prefill-instance-id header by external router (e.g., EPP)."
	}
	return pre, nil
}

// resolveDecode turns --decode POD into the instance a direct-mode request names.
func (e *explainer) resolveDecode(pod string) (routecore.WorkerID, error) {
	var best *member
	for _, m := range e.byID {
		if m.pod.Pod == pod && m.role != model.RolePrefill && (best == nil || m.inst.ID < best.inst.ID) {
			best = m
		}
	}
	if best == nil {
		return 0, inputErr("--decode names a decode worker that is ready and not excluded.", "--decode %s: no routable decode worker of %s has that name (workers: %s)", pod, e.dep.Key(), examplePods(e.dep))
	}
	return best.inst.ID, nil
}

// modeStage renders a non-KV hop as a Stage.
func (e *explainer) modeStage(d routecore.ModeDecision, c routecore.RoutingConstraints) *Stage {
	s := &Stage{Rule: d.Rule, Constraints: c, ErrorKind: d.ErrorKind, Error: d.Error, ModeExplanation: d.Explanation,
		Candidates: make([]Candidate, len(d.Candidates))}
	for i, mc := range d.Candidates {
		cand := Candidate{InstanceID: mc.Worker.ID, Eligible: mc.Eligible, Probability: mc.Probability,
			Selected: d.ErrorKind == "" && mc.Selected, Reason: mc.Reason, InFlight: mc.Worker.InFlight}
		if m := e.byID[mc.Worker.ID]; m != nil {
			cand.Worker, cand.Domain, cand.Node = m.pod.Pod, m.pod.Domain.Effective(), m.pod.Node
		}
		s.Candidates[i] = cand
	}
	if d.ErrorKind == "" {
		s.Pick = e.label(routecore.WorkerWithDpRank{WorkerID: d.Selected}, false)
		for _, mc := range d.Candidates {
			if mc.Probability > 0 {
				s.Selected = append(s.Selected, e.label(routecore.WorkerWithDpRank{WorkerID: mc.Worker.ID}, false))
			}
		}
		s.RandomTie = len(s.Selected) > 1
	}
	return s
}

func (e *explainer) modeSummary(pre *routecore.ModeDecision, dec routecore.ModeDecision) string {
	hop := func(what string, d routecore.ModeDecision) string {
		n := 0
		for _, c := range d.Candidates {
			if c.Probability > 0 {
				n++
			}
		}
		if n <= 1 {
			return fmt.Sprintf("%s on %s", what, e.label(routecore.WorkerWithDpRank{WorkerID: d.Selected}, false))
		}
		return fmt.Sprintf("%s on one of %d workers (%s)", what, n, d.Rule)
	}
	if pre == nil {
		return hop("served aggregated", dec)
	}
	return hop("prefill", *pre) + ", " + hop("decode", dec)
}

// modeVerdict fills the verdict of a non-KV dry run.
func (e *explainer) modeVerdict(pre *routecore.ModeDecision, dec routecore.ModeDecision, derivations map[routecore.WorkerID]routecore.TransferDerivation) {
	x := e.x
	v := &x.Verdict
	fix := "run the frontend with --router-mode kv (DYN_ROUTER_MODE=kv) so that decode picks honour the transfer constraint"
	fail := func(stage, kind, msg string, p float64) {
		v.Stage, v.Error, v.Message = stage, kind, e.names(msg)
		v.FailureProbability = p
	}
	switch {
	case pre != nil && pre.ErrorKind != "":
		fail("prefill", pre.ErrorKind, pre.Error, 1)
		v.Cause, v.Fix = e.modeErrorCause(pre.ErrorKind, "prefill", x.Prefill)
	default:
		if pre != nil {
			for _, c := range pre.Candidates {
				if t, ok := derivations[c.Worker.ID]; ok && t.Failed {
					v.FailureProbability += c.Probability
					v.FailingPrefill = append(v.FailingPrefill, e.label(routecore.WorkerWithDpRank{WorkerID: c.Worker.ID}, false))
				}
			}
			if t := derivations[pre.Selected]; t.Failed {
				v.Stage, v.Error, v.Message = routecore.StageTransfer, string(t.Rule), e.names(t.Explanation)
				v.Cause = "the prefill router derives the decode constraint in every router mode, and a required policy fails closed when it cannot"
				v.Fix = "wait for the prefill worker to publish its runtime config, or remove it from the prefill pool"
			}
		}
		if dec.ErrorKind != "" {
			if v.Stage == "" {
				v.Stage, v.Error, v.Message = "decode", dec.ErrorKind, dec.Error
				v.Cause, v.Fix = e.modeErrorCause(dec.ErrorKind, "decode", x.Decode)
			}
			v.FailureProbability = 1
		}
	}
	v.DependsOnDraw = v.FailureProbability > 0 && v.FailureProbability < 1
	switch {
	case v.FailureProbability >= 1-1e-9:
		v.Outcome = OutcomeFails
	case v.FailureProbability > 0:
		v.Outcome = OutcomeCanFail
	default:
		v.Outcome = OutcomeRoutable
	}
	v.Routable = v.Stage == ""
	if pre != nil && dec.ErrorKind == "" {
		// The chance the decode pick lands where the derived constraint would not
		// have put it (required: excluded; preferred: not matching).
		for _, c := range pre.Candidates {
			t, ok := derivations[c.Worker.ID]
			if !ok || t.Failed || !t.Constrained() {
				continue
			}
			taint := t.Taint
			for _, dc := range dec.Candidates {
				m := e.byID[dc.Worker.ID]
				if m == nil || dc.Probability == 0 {
					continue
				}
				if !slices.Contains(m.inst.Runtime.EffectiveTaints(), taint) {
					v.ConstraintIgnoredProbability += float64(c.Probability * dc.Probability)
				}
			}
		}
	}
	if !v.Routable {
		return
	}
	v.Message = x.Summary
	if v.DependsOnDraw {
		v.Cause = fmt.Sprintf("the %s prefill pick lands on %s with probability %.0f%%, where the transfer constraint cannot be derived and the request fails", e.mode, strings.Join(v.FailingPrefill, ", "), 100*v.FailureProbability)
		v.Fix = "wait for those prefill workers to publish their runtime config, or remove them from the prefill pool"
	}
	if v.ConstraintIgnoredProbability > 0 && e.policy != nil {
		what := fmt.Sprintf("the frontend routes in %s mode, whose decode pick ignores the kvTransferPolicy: with probability %.0f%% decode runs outside the prefill worker's %s and the KV cache crosses it", e.mode, 100*v.ConstraintIgnoredProbability, e.policy.Domain)
		if e.policy.Enforcement == routecore.EnforcementRequired {
			what += " (required enforcement would have refused that decode worker)"
		}
		v.Cause = strings.TrimPrefix(v.Cause+"; "+what, "; ")
		v.Fix = strings.TrimPrefix(v.Fix+"; "+fix, "; ")
	}
}

// modeErrorCause explains a non-KV hop's error in deployment terms.
func (e *explainer) modeErrorCause(kind, stage string, s *Stage) (cause, fix string) {
	switch kind {
	case routecore.ErrKindNoInstances:
		return fmt.Sprintf("no %s worker is routable", stage), fmt.Sprintf("start %s workers or make them ready", stage)
	case routecore.ErrKindAllWorkersBusy:
		return e.allBusyCause(stage, s), allBusyFix
	case routecore.ErrKindDirectTargetMissing:
		return fmt.Sprintf("direct mode routes only to the worker the request names, and this request names no %s worker", stage),
			fmt.Sprintf("have the external router set the %s instance id (--prefill / --decode POD here)", stage)
	case routecore.ErrKindDirectTargetNotFound:
		return fmt.Sprintf("the %s worker the request names is not routable", stage), "name a ready worker"
	case routecore.ErrKindSelectedWorkerOverloaded:
		return fmt.Sprintf("the %s worker the request names is over the busy thresholds", stage), "name another worker or add capacity"
	}
	return "", ""
}

// allBusyFix is the fix of an admission refusal: every worker of the hop is
// over the busy thresholds.
const allBusyFix = "add capacity, or raise or unset the busy thresholds (--active-decode-blocks-threshold, --active-prefill-tokens-threshold[-frac]; live: POST /busy_threshold); --load/--assume-idle explore what-ifs"

// allBusyCause words the frontend's admission refusal (PushRouter's
// empty_free_pool_error, the KV router's AllEligibleWorkersOverloaded): in
// every router mode a request is admitted only when a worker of the hop is
// free, so with all of them over the busy thresholds the frontend answers
// "All workers are busy, please retry later". The cause names the thresholds in
// effect, where they come from, and each worker's tripped load.
func (e *explainer) allBusyCause(stage string, s *Stage) string {
	cause := fmt.Sprintf("all workers busy: every %s worker is over the busy thresholds (%s, from %s), so the %s router has no free worker and the frontend refuses the request with \"All workers are busy, please retry later\" (HTTP 529 since Dynamo 1.3, or DYN_HTTP_OVERLOAD_STATUS_CODE; 503 before)",
		stage, describeThresholds(e.thresholds), cmp.Or(e.thresholdsSource, "the frontend's flags and env"), e.mode)
	if s != nil {
		reasons := ineligibleSummary(s, func(Candidate) bool { return true })
		for i, r := range reasons {
			reasons[i] = strings.TrimPrefix(r, ": ") // a non-KV hop's candidates carry no reason code
		}
		if len(reasons) > 0 {
			cause += ": " + strings.Join(reasons, "; ")
		}
	}
	return cause
}

// describeThresholds lists the busy thresholds that are set.
func describeThresholds(t routecore.BusyThresholds) string {
	var parts []string
	if v := t.ActiveDecodeBlocksThreshold; v != nil {
		parts = append(parts, fmt.Sprintf("active_decode_blocks_threshold %g", *v))
	}
	if v := t.ActivePrefillTokensThreshold; v != nil {
		parts = append(parts, fmt.Sprintf("active_prefill_tokens_threshold %d", *v))
	}
	if v := t.ActivePrefillTokensThresholdFrac; v != nil {
		parts = append(parts, fmt.Sprintf("active_prefill_tokens_threshold_frac %g", *v))
	}
	if len(parts) == 0 {
		return "none set"
	}
	return strings.Join(parts, ", ")
}
