package analysis

import (
	"fmt"
	"strings"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/behavior"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
)

// Findings about how Dynamo treats the deployment as a whole at its release
// (pkg/behavior): whether the frontend serves the model, which workers the
// router knows, which release is running.
const (
	// FindingModelNotReady: the frontend refuses every request (HTTP 503):
	// on Dynamo 1.3 and later a worker set's needs are unmet (decode workers
	// with no live prefill worker, or the reverse), or no worker is live at
	// all (error).
	FindingModelNotReady = "ModelNotReady"
	// FindingWorkersNotRegistered: worker pods run and are ready but published
	// no Dynamo instance while discovery was read, so the router does not know
	// them (warning).
	FindingWorkersNotRegistered = "WorkersNotRegistered"
	// FindingMixedDynamoReleases: the deployment's pods run different Dynamo
	// releases (warning).
	FindingMixedDynamoReleases = "MixedDynamoReleases"
	// FindingNoDecodeWorkers: prefill workers are live and no decode or
	// aggregated worker is, on a release (or with legacy cards) where the
	// frontend still serves the model: every request is prefilled and then
	// fails at the decode hop with NoInstances (error).
	FindingNoDecodeWorkers = "NoDecodeWorkers"
)

// checkBehavior runs the release-level checks.
func (a *anAnalysis) checkBehavior() {
	a.checkRegistration()
	a.checkReadiness()
	a.checkNoDecode()
	a.checkRelease()
}

// noLiveDecode reports whether prefill replicas are ready (and registered)
// while no decode or aggregated replica is: every prefilled request then has
// no decode instance to go to, whatever the mode or the enforcement.
func (a *anAnalysis) noLiveDecode() bool {
	prefill, decode := 0, 0
	for _, r := range a.replicas {
		if !r.ready {
			continue
		}
		switch r.role {
		case model.RolePrefill:
			prefill++
		case model.RoleDecode, model.RoleAggregated:
			decode++
		}
	}
	return prefill > 0 && decode == 0
}

// checkNoDecode: NoDecodeWorkers, where the frontend serves the model
// (before 1.3, or legacy cards): from 1.3 the same state is ModelNotReady.
// When the decode replicas are all Pending, WorkerPodsPending already says
// that requests cannot be served.
func (a *anAnalysis) checkNoDecode() {
	if !a.rd.Readiness.Ready || !a.noLiveDecode() {
		return
	}
	total, pending := 0, len(a.unscheduledOf(model.RoleDecode))
	for _, r := range a.replicas {
		if r.role == model.RoleDecode || r.role == model.RoleAggregated {
			total++
		}
	}
	if total > 0 && pending == total {
		return
	}
	var objs []string
	for _, r := range a.replicas {
		if r.role == model.RoleDecode || r.role == model.RoleAggregated {
			objs = append(objs, "pod/"+r.leader.Pod)
		}
	}
	if len(objs) == 0 {
		objs = []string{a.dgdObject()}
	}
	state := "the deployment has no decode worker"
	if total > 0 {
		state = fmt.Sprintf("none of its %s is live (ready and registered)", anPlural(total, "decode replica", "decode replicas"))
	}
	rel := a.rd.Release
	at := "Dynamo " + rel.Version
	if !rel.Known {
		at = "the newest Dynamo (release unknown), legacy cards"
	}
	a.add(model.Finding{ID: FindingNoDecodeWorkers, Severity: model.SeverityError, Objects: objs,
		Message: fmt.Sprintf("prefill workers are live but %s: the frontend serves the model, prefills each request and then fails it at the decode hop with NoInstances (%s; from 1.3 the model is unready instead, rule %s)",
			state, at, behavior.RuleReadiness),
		Hint: "bring the decode workers up (kubectl describe pod / kubectl logs on them)"}, false)
}

// checkRegistration: WorkersNotRegistered.
func (a *anAnalysis) checkRegistration() {
	var pods []*model.Worker
	for i := range a.d.Workers {
		w := &a.d.Workers[i]
		if st, ok := a.rd.State(w.Pod); ok && st.Registered == behavior.NotRegistered && w.Ready && (w.Leader || w.Replica == "" || w.Replica == w.Pod) {
			pods = append(pods, w)
		}
	}
	if len(pods) == 0 {
		return
	}
	discovery := "no DynamoWorkerMetadata"
	if strings.EqualFold(a.d.DiscoveryBackend, "etcd") {
		discovery = "no etcd entry"
	}
	subject := anPlural(len(pods), "worker pod is ready but published", "worker pods are ready but published")
	a.add(model.Finding{ID: FindingWorkersNotRegistered, Severity: model.SeverityWarning, Objects: anPodObjects(pods),
		Message: fmt.Sprintf("%s no Dynamo instance (%s): the router does not know them, so they serve nothing and are not counted as ready capacity: %s",
			subject, discovery, anExamples(anPodNames(pods))),
		Hint: "read the workers' logs for their registration (kubectl logs POD); with kubernetes discovery the worker's service account must be allowed to create its DynamoWorkerMetadata"}, false)
}

// checkReadiness: ModelNotReady (the strict readiness rule of 1.3 and
// later, and any release with no live worker). Before 1.3 decode workers
// without prefill serve aggregated or fail by --enforce-disagg: that is
// DisaggNotActive (pkg/analysis/health).
func (a *anAnalysis) checkReadiness() {
	r := a.rd.Readiness
	if r.Ready || (r.Era.Key != behavior.EraStrictNeeds && len(r.Missing) > 0) {
		return
	}
	var objs []string
	for _, f := range a.d.Frontends {
		objs = append(objs, "pod/"+f.Pod)
	}
	for i := range a.d.Workers {
		if st := a.rd.Workers[i]; st.Live {
			objs = append(objs, "pod/"+a.d.Workers[i].Pod)
		}
	}
	if len(objs) == 0 {
		objs = []string{a.dgdObject()}
	}
	rel := a.rd.Release
	at := "Dynamo " + rel.Version
	if !rel.Known {
		at = "the newest Dynamo (release unknown)"
	}
	if len(r.Missing) == 0 {
		a.add(model.Finding{ID: FindingModelNotReady, Severity: model.SeverityError, Objects: objs,
			Message: fmt.Sprintf("no worker of the deployment is live (ready and registered with discovery): the frontend has no instance to serve the model, so every request fails (%s)", at),
			Hint:    "bring the workers up and make sure they register (kubectl describe pod / kubectl logs on them)"}, false)
		return
	}
	var need []string
	for _, m := range r.Missing {
		need = append(need, string(m))
	}
	a.add(model.Finding{ID: FindingModelNotReady, Severity: model.SeverityError, Objects: objs,
		Message: fmt.Sprintf("the frontend keeps the model unready (%s): %s has no live worker, and the live worker sets need it, so every request is refused with HTTP 503 (ModelUnavailable; GET /v1/models/{model}/ready lists missing_worker_types) until one is live — %s (rule %s, %s)",
			r.Reason, strings.Join(need, " and "), at, behavior.RuleReadiness, r.Era.Range()),
		Hint: fmt.Sprintf("bring the %s workers up (kubectl describe/logs on them); --enforce-disagg no longer changes this (#11160)", strings.Join(need, " and "))}, false)
}

// checkRelease: MixedDynamoReleases.
func (a *anAnalysis) checkRelease() {
	det := a.rd.Release
	if !det.Mixed {
		return
	}
	var parts []string
	var objs []string
	for _, s := range det.Seen {
		parts = append(parts, fmt.Sprintf("%s (%s)", s.Version, anExamples(s.Where)))
		for _, w := range s.Where {
			if p, ok := strings.CutPrefix(w, "pod "); ok {
				objs = append(objs, "pod/"+p)
			}
		}
	}
	a.add(model.Finding{ID: FindingMixedDynamoReleases, Severity: model.SeverityWarning, Objects: objs,
		Message: fmt.Sprintf("the deployment's pods run different Dynamo releases: %s; the rules that changed between them are read at %s (%s), and workers and frontend of different releases may not agree on cards, readiness or routing",
			strings.Join(parts, "; "), det.Version, det.Source),
		Hint: "finish the rollout so every pod runs one release, or pass --dynamo-version to read the deployment at another"}, false)
}
