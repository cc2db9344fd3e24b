package explain

import (
	"fmt"
	"strings"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/behavior"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
)

// StageFrontend is where a request refused before any routing fails: the
// frontend does not serve the model (Verdict.Stage, CoreDecision.Refused).
const StageFrontend = "frontend"

// Refusal is the frontend refusing a request before either router hop runs.
type Refusal struct {
	// Kind is ModelNotReady (Dynamo 1.3 and later: a worker set's needs are
	// unmet) or PrefillNotActivated (earlier releases under --enforce-disagg).
	Kind string `json:"kind"`
	// Status is the HTTP status (503).
	Status int `json:"status"`
	// Message is the frontend's reason.
	Message string `json:"message"`
}

// readiness applies pkg/behavior's readiness rule to the routable pools,
// after the what-ifs: the workers the frontend counts as live.
func (e *explainer) readiness() {
	live := behavior.Live{Roles: map[model.Role]int{}}
	for _, m := range e.byID {
		live.Roles[m.role]++
		if m.inst.WorkerType == "" && behavior.LegacyCard(m.inst) {
			live.Legacy = true
		}
	}
	rel := e.rd.Release.Release
	enforce, _ := behavior.EnforceDisagg(e.dep, rel)
	e.ready = behavior.EvaluateReadiness(rel, live, enforce)
	if e.ready.Aggregated {
		e.x.Assumptions = append(e.x.Assumptions, fmt.Sprintf("no prefill worker is live: Dynamo %s serves requests aggregated on the decode workers (%s)", releaseText(e.rd), behavior.RuleReadiness+", "+e.ready.Era.Range()))
	}
}

// refusal is the frontend's refusal of every request, when the pools leave the
// model unready: no worker live at all (the model is not served: HTTP 404),
// or a worker set's needs unmet (1.3 and later), or no prefill worker under
// --enforce-disagg (earlier).
func (e *explainer) refusal() *Refusal {
	r := e.ready
	if r.Ready {
		return nil
	}
	kind := "ModelNotReady"
	if len(r.Missing) > 0 && r.Era.Key != behavior.EraStrictNeeds {
		kind = "PrefillNotActivated"
	}
	return &Refusal{Kind: kind, Status: r.Status, Message: r.Reason}
}

// refuse fills the verdict of a request the frontend refuses.
func (e *explainer) refuse(r *Refusal) {
	x := e.x
	var need []string
	for _, m := range e.ready.Missing {
		need = append(need, string(m))
	}
	x.Summary = fmt.Sprintf("the frontend refuses the request before routing: %s (HTTP %d)", r.Message, r.Status)
	v := &x.Verdict
	v.Outcome, v.Routable, v.FailureProbability = OutcomeFails, false, 1
	v.Stage, v.Error = StageFrontend, r.Kind
	v.Message = fmt.Sprintf("HTTP %d: %s", r.Status, r.Message)
	if len(need) == 0 {
		v.Cause = "no worker of the deployment is live (ready and registered with discovery): the frontend drops a model with its last instance, so it does not serve this one (model not found)"
		v.Fix = "bring the workers up and make sure they register (kubectl describe pod / kubectl logs on them; kubectl get dynamoworkermetadatas)"
		return
	}
	if r.Kind == "ModelNotReady" {
		v.Cause = fmt.Sprintf("no %s worker is live, and the live worker sets need one: the frontend keeps the model unready (Dynamo %s; %s, %s)", strings.Join(need, " or "), releaseText(e.rd), behavior.RuleReadiness, e.ready.Era.Range())
		v.Fix = fmt.Sprintf("bring the %s workers up (kubectl describe/logs on them); --enforce-disagg no longer changes this (#11160)", strings.Join(need, " and "))
		return
	}
	v.Cause = "no prefill worker is live and the frontend enforces disaggregation (--enforce-disagg), so the prefill router is not activated"
	v.Fix = "bring the prefill workers up; or run the frontend without --enforce-disagg to serve aggregated meanwhile"
}

// releaseText is "1.3.0 (image tag …)" or "newest (release unknown)".
func releaseText(rd *behavior.Reading) string {
	if !rd.Release.Known {
		return "newest (release unknown)"
	}
	return rd.Release.Version
}

// refusedDecision is Decide's answer for a refused request.
func refusedDecision(r *Refusal) CoreDecision { return CoreDecision{Refused: r} }
