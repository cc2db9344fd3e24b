package explain

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
)

// verdict fills Explanation.Verdict: routable or not, and on a failure the cause
// in deployment terms and the fix.
func (e *explainer) verdict(d *routecore.DisaggDecision) {
	x := e.x
	v := &x.Verdict
	v.DependsOnDraw = d.OutcomeDependsOnDraw
	rows := x.Matrix
	if rows == nil {
		rows = x.Alternatives
	}
	for _, r := range rows {
		if !r.Routable {
			v.FailingPrefill = append(v.FailingPrefill, r.Prefill)
		}
	}
	switch {
	case len(x.Alternatives) > 0:
		for _, r := range x.Alternatives {
			if !r.Routable {
				v.FailureProbability += r.Probability
			}
		}
	case d.Err != nil:
		v.FailureProbability = 1
	}
	// The risk of the decision, the same whatever the seed drew.
	switch {
	case v.FailureProbability >= 1-1e-9:
		v.Outcome = OutcomeFails
	case v.FailureProbability > 0 || len(v.FailingPrefill) > 0:
		v.Outcome = OutcomeCanFail
	default:
		v.Outcome = OutcomeRoutable
	}
	if d.Err == nil {
		v.Routable = true
		v.Message = x.Summary
		if v.DependsOnDraw {
			// The same cause as when the draw lands on a failing pick, so that
			// only the Draw detail depends on the seed.
			random := fmt.Sprintf("the prefill pick is random: other picks succeed, and the request fails with probability %.0f%% (on %s)", 100*v.FailureProbability, strings.Join(failingAlternatives(x.Alternatives), ", "))
			v.Cause = random
			if cause := e.requiredFailingCause(x.Alternatives); cause != "" {
				v.Cause = cause + "; " + random
			}
			v.Fix = e.requiredFix(x.Alternatives)
		} else if len(v.FailingPrefill) > 0 {
			v.Cause = fmt.Sprintf("this pick succeeds, but prefill on %s would make the request fail (see the matrix)", strings.Join(v.FailingPrefill, ", "))
			v.Fix = e.requiredFix(x.Matrix)
		}
		return
	}
	v.Stage = d.FailedStage
	v.Message = e.names(d.Error)
	switch d.FailedStage {
	case routecore.StageTransfer:
		v.Error = string(d.Transfer.Rule)
		v.Cause, v.Fix = e.transferCause(d.Transfer)
	case routecore.StagePrefill:
		v.Error = d.Prefill.ErrorKind
		v.Cause, v.Fix = e.stageCause("prefill", x.Prefill, model.RolePrefill, d.Prefill)
	case routecore.StageDecode:
		v.Error = d.Decode.ErrorKind
		var te *routecore.DecodeTransferError
		if errors.As(d.Err, &te) && d.Transfer != nil && d.Transfer.Rule == routecore.TransferRuleRequired {
			v.Cause, v.Fix = e.requiredCause(d.Transfer.Domain, d.Transfer.Value, x.Decode)
		} else {
			role := model.RoleDecode
			if d.Mode == routecore.DisaggModeAggregated {
				role = model.RoleAggregated
			}
			v.Cause, v.Fix = e.stageCause("decode", x.Decode, role, d.Decode)
		}
	}
	if v.DependsOnDraw {
		v.Cause += fmt.Sprintf("; the prefill pick is random: other picks succeed, and the request fails with probability %.0f%% (on %s)", 100*v.FailureProbability, strings.Join(failingAlternatives(x.Alternatives), ", "))
	}
}

func failingAlternatives(rows []MatrixRow) []string {
	var out []string
	for _, r := range rows {
		if !r.Routable {
			out = append(out, r.Prefill)
		}
	}
	return out
}

// requiredFix is the fix for a request whose outcome depends on the prefill
// landing: the first failing domain's fix.
func (e *explainer) requiredFix(rows []MatrixRow) string {
	for _, r := range rows {
		if !r.Routable && r.Domain != "" && e.policy != nil {
			_, fix := e.requiredCause(e.policy.Domain, r.Domain, nil)
			return fix
		}
	}
	return ""
}

// requiredFailingCause is the cause of the first failing landing's failure
// under a required policy ("" without one).
func (e *explainer) requiredFailingCause(rows []MatrixRow) string {
	for _, r := range rows {
		if !r.Routable && r.Domain != "" && e.policy != nil {
			cause, _ := e.requiredCause(e.policy.Domain, r.Domain, nil)
			return cause
		}
	}
	return ""
}

// domainWorkers counts the deployment's workers of one role in a domain value,
// by the value the router sees (published, else pod label, else node label).
type domainCount struct {
	total, ready int
	pods         []string
	// unpublished are pods in the domain (by pod or node label) that publish no
	// value for it: the router cannot place them.
	unpublished []string
}

func (e *explainer) countDomain(domain, value string, role model.Role) domainCount {
	var c domainCount
	for i := range e.dep.Workers {
		w := &e.dep.Workers[i]
		if !sameRole(w.Role, role) || (!w.Leader && len(w.Instances) == 0) {
			continue
		}
		published := ""
		for _, in := range w.Instances {
			if v := in.Runtime.TopologyDomains[domain]; v != "" {
				published = v
			}
		}
		switch {
		case published == value:
			c.total++
			c.pods = append(c.pods, w.Pod)
			if w.Ready {
				c.ready++
			}
		case published == "" && (w.Domain.Pod == value || w.Domain.Node == value):
			c.unpublished = append(c.unpublished, w.Pod)
		}
	}
	return c
}

func sameRole(a, b model.Role) bool {
	if a == b {
		return true
	}
	dec := func(r model.Role) bool { return r == model.RoleDecode || r == model.RoleAggregated }
	return dec(a) && dec(b)
}

// requiredCause explains a decode failure under a required transfer constraint
// domain=value: which decode workers exist there and why none can take it.
func (e *explainer) requiredCause(domain, value string, decode *Stage) (cause, fix string) {
	pre := e.countDomain(domain, value, model.RolePrefill)
	dec := e.countDomain(domain, value, model.RoleDecode)
	where := domain + " " + value
	alt := "or set spec.experimental.kvTransferPolicy.enforcement: preferred with a preferredWeight so decode may run in another " + domain
	switch {
	case dec.total == 0 && len(dec.unpublished) == 0:
		cause = fmt.Sprintf("%s has %d prefill and 0 decode workers: every request prefilled there needs a decode worker in the same %s", where, pre.total, domain)
		fix = fmt.Sprintf("add decode capacity in %s (a decode replica scheduled there), %s", where, alt)
		// Decode workers the scheduler has not placed run nowhere yet: say
		// why, as topology's domain findings do.
		var pending []string
		for _, x := range e.x.Excluded {
			if sameRole(x.Role, model.RoleDecode) && strings.HasPrefix(x.Reason, "Pending") {
				pending = append(pending, x.Worker+" ("+x.Reason+")")
			}
		}
		if len(pending) > 0 {
			cause += "; the decode workers that are not scheduled yet run nowhere: " + strings.Join(pending, "; ")
			fix = "make the pending decode workers schedulable (kubectl describe pod on them), " + fix
		}
	case dec.total == 0:
		cause = fmt.Sprintf("%s has decode pods (%s) but none publishes topology_domains.%s, so the router cannot place them there", where, strings.Join(dec.unpublished, ", "), domain)
		fix = fmt.Sprintf("check the topology volume and DYN_* topology env on those pods (kubectl dynamo topology shows the findings) and restart them, %s", alt)
	default:
		var reasons []string
		if decode != nil {
			reasons = ineligibleSummary(decode, func(c Candidate) bool { return c.Domain == value || slices.Contains(dec.pods, c.Worker) })
		}
		var gone []string
		for _, x := range e.x.Excluded {
			if slices.Contains(dec.pods, x.Worker) {
				gone = append(gone, x.Worker+" ("+x.Reason+")")
			}
		}
		if len(gone) > 0 {
			reasons = append(reasons, "not routable: "+strings.Join(gone, "; "))
		}
		cause = fmt.Sprintf("%s has %d prefill and %d decode workers (%d ready), but none can take the request", where, pre.total, dec.total, dec.ready)
		if len(reasons) > 0 {
			cause += ": " + strings.Join(reasons, "; ")
		}
		fix = fmt.Sprintf("restore or add decode capacity in %s (or raise the busy thresholds if they are overloaded), %s", where, alt)
	}
	return cause, fix
}

// transferCause explains a failed KV-transfer derivation.
func (e *explainer) transferCause(t *routecore.TransferDerivation) (cause, fix string) {
	pod := e.label(routecore.WorkerWithDpRank{WorkerID: t.PrefillWorker}, false)
	cause = e.names(t.Explanation)
	switch t.Rule {
	case routecore.TransferRuleDomainNotInTopology:
		fix = fmt.Sprintf("make sure /etc/dynamo/topology/%s is projected and non-empty on %s (the node needs the domain's label); kubectl dynamo topology lists the affected workers", t.Domain, pod)
	case routecore.TransferRulePreferredWeightMissing:
		fix = "set spec.experimental.kvTransferPolicy.preferredWeight (DYN_KV_TRANSFER_PREFERRED_WEIGHT) and roll the prefill workers"
	case routecore.TransferRuleEnforcementMissing:
		fix = "set spec.experimental.kvTransferPolicy.enforcement (DYN_KV_TRANSFER_ENFORCEMENT) to required or preferred and roll the prefill workers"
	case routecore.TransferRuleSelectedMissingRequired:
		fix = fmt.Sprintf("wait for %s to publish its runtime config, or remove it from the prefill pool", pod)
	default:
		fix = "see docs/routing.md (KV-transfer derivation)"
	}
	return cause, fix
}

// stageCause explains a selection that found no eligible candidate.
func (e *explainer) stageCause(leg string, s *Stage, role model.Role, d *routecore.Decision) (cause, fix string) {
	total := 0
	var excluded []string
	for _, x := range e.x.Excluded {
		if sameRole(x.Role, role) {
			total++
			excluded = append(excluded, x.Worker+" ("+x.Reason+")")
		}
	}
	n := 0
	if s != nil {
		n = len(s.Candidates)
	}
	switch {
	case n == 0 && total == 0:
		return fmt.Sprintf("the deployment has no %s worker that publishes a Dynamo instance", leg),
			"check that the workers are running and registered (kubectl dynamo topology shows them); a worker appears once its DynamoWorkerMetadata or etcd entry exists"
	case n == 0:
		return fmt.Sprintf("no %s worker is routable: %s", leg, strings.Join(excluded, "; ")),
			fmt.Sprintf("bring the %s workers back (kubectl describe pod …) or add capacity", leg)
	}
	if d.SelectionRule == routecore.RulePinned || strings.HasPrefix(d.ErrorKind, "Pinned") || (leg == "prefill" && e.pin != nil) {
		pinned := e.label(d.Selected, true)
		if e.pin != nil && leg == "prefill" {
			pinned = e.label(*e.pin, true)
		}
		why := "is not eligible"
		for _, c := range s.Candidates {
			if c.InstanceID == d.Selected.WorkerID && c.DpRank == d.Selected.DpRank && c.Reason != "" {
				why = "is not eligible: " + strings.TrimPrefix(c.Reason, "worker "+c.Worker+" ")
			}
		}
		if e.pin != nil && leg == "prefill" {
			for _, c := range s.Candidates {
				if c.InstanceID == e.pin.WorkerID && c.DpRank == e.pin.DpRank && c.Reason != "" {
					why = "is not eligible: " + strings.TrimPrefix(c.Reason, "worker "+c.Worker+" ")
				}
			}
		}
		return fmt.Sprintf("the request pins %s worker %s, which %s; a pinned request is never rerouted to another worker", leg, pinned, why),
			"pin an eligible worker or drop the pin (--prefill, prefill_worker_id/decode_worker_id); to keep the pin, relieve that worker (--load, busy thresholds)"
	}
	if d.ErrorKind == "AllEligibleWorkersOverloaded" {
		return e.allBusyCause(leg, s), allBusyFix
	}
	reasons := ineligibleSummary(s, func(Candidate) bool { return true })
	cause = fmt.Sprintf("none of the %d %s candidates is eligible", n, leg)
	if len(reasons) > 0 {
		cause += ": " + strings.Join(reasons, "; ")
	}
	switch d.ErrorKind {
	case "PinnedWorkerOverloaded":
		fix = "add capacity or raise the frontend's busy thresholds (--active-decode-blocks-threshold, --active-prefill-tokens-threshold); --load/--assume-idle explore what-ifs"
	case "PinnedWorkerNotAllowed":
		fix = "pin a worker that is eligible, or drop the pin"
	default:
		if len(s.Constraints.RequiredTaints) > 0 {
			fix = fmt.Sprintf("no %s worker carries every required taint (%s): relax the routing constraints or add workers that carry them", leg, strings.Join(s.Constraints.RequiredTaints, ", "))
		} else {
			fix = fmt.Sprintf("add or restore %s capacity", leg)
		}
	}
	return cause, fix
}

// ineligibleSummary groups the ineligible candidates matching keep by reason.
func ineligibleSummary(s *Stage, keep func(Candidate) bool) []string {
	type group struct {
		code  routecore.ReasonCode
		pods  []string
		first string
	}
	var groups []*group
	for _, c := range s.Candidates {
		if c.Eligible || !keep(c) {
			continue
		}
		i := slices.IndexFunc(groups, func(g *group) bool { return g.code == c.ReasonCode })
		if i < 0 {
			groups = append(groups, &group{code: c.ReasonCode, first: c.Reason})
			i = len(groups) - 1
		}
		if !slices.Contains(groups[i].pods, c.Worker) {
			groups[i].pods = append(groups[i].pods, c.Worker)
		}
	}
	var out []string
	for _, g := range groups {
		pods := g.pods
		more := ""
		if len(pods) > 5 {
			more = fmt.Sprintf(" and %d more", len(pods)-5)
			pods = pods[:5]
		}
		out = append(out, fmt.Sprintf("%s %s (%s%s)", describeCode(g.code), strings.Join(pods, ", "), g.first, more))
	}
	return out
}

func describeCode(c routecore.ReasonCode) string {
	switch c {
	case routecore.ReasonWorkerOverloaded:
		return "overloaded:"
	case routecore.ReasonRoutingConstraintsUnsatisfied:
		return "missing required taints:"
	case routecore.ReasonWorkerNotAllowed:
		return "not allowed:"
	case routecore.ReasonWorkerFenced:
		return "fenced:"
	case routecore.ReasonDpRankUnavailable:
		return "dp rank unavailable:"
	}
	return string(c) + ":"
}
