package analysis

import (
	"fmt"
	"strings"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
)

// anUnclassifiedSignals lists the signals looked for when a worker's role could
// not be decided, for the messages.
const anUnclassifiedSignals = "no card worker_type (no DynamoWorkerMetadata or etcd instance published one), " +
	"no prefill/decode nvidia.com/dynamo-component-type or -sub-component-type label, no prefill/decode type or subComponentType in the DGD, " +
	"no --disaggregation-mode, --is-prefill-worker or --is-decode-worker arg (also looked for inside sh -c, bash -c and mpirun), " +
	"no DYN_DISAGGREGATION_MODE env, no prefill/decode in the component name"

// NotDeployed reports whether the deployment has nothing running and was never
// reconciled: no pods and no status (a manifest rather than a deployment).
func NotDeployed(d *model.Deployment) bool {
	return len(d.Workers) == 0 && len(d.Frontends) == 0 && !d.HasStatus && len(d.Conditions) == 0
}

// checkUnclassified: WorkerPodsMissing (worker components declared, no worker pod)
// and WorkerRolesUndecided (worker pods, none recognised as prefill or decode).
// Either way the domain table shows no prefill or decode capacity, and without
// these the report would read "No findings."
func (a *anAnalysis) checkUnclassified() {
	sev := model.SeverityWarning
	if a.pol != nil {
		sev = model.SeverityError
	}
	if len(a.d.Workers) == 0 {
		var comps []string
		for _, c := range a.d.Components {
			if !model.IsWorkerType(strings.ToLower(c.Type)) || c.Replicas != nil && *c.Replicas == 0 {
				continue
			}
			n := "replicas not set"
			if c.Replicas != nil {
				n = anPlural(int(*c.Replicas), "replica", "replicas")
			}
			comps = append(comps, fmt.Sprintf("%s (type %s, %s)", c.Name, c.Type, n))
		}
		if len(comps) == 0 {
			return
		}
		f := model.Finding{ID: FindingWorkerPodsMissing, Severity: sev, Objects: []string{a.dgdObject()}}
		if NotDeployed(a.d) {
			f.Message = fmt.Sprintf("nothing is deployed: the DynamoGraphDeployment declares worker components %s but has no pods and no status, so it has not been applied or reconciled (a manifest, not a deployment); there is no prefill or decode capacity to report",
				strings.Join(comps, ", "))
			f.Hint = "to check a manifest before it is applied, run kubectl dynamo preflight -f MANIFEST; once applied, run topology against the cluster"
		} else {
			f.Message = fmt.Sprintf("the DynamoGraphDeployment declares worker components %s but none of their pods exists: there is no prefill or decode capacity running",
				strings.Join(comps, ", "))
			f.Hint = fmt.Sprintf("kubectl describe dgd %s -n %s (status conditions: has the operator created the pods?); kubectl get pods -n %s -l nvidia.com/dynamo-graph-deployment-name=%s",
				a.d.Name, a.d.Namespace, a.d.Namespace, a.d.Name)
		}
		a.add(f, false)
		return
	}
	var undecided []*anReplica
	for _, r := range a.replicas {
		switch r.role {
		case model.RolePrefill, model.RoleDecode:
			return // something is recognised
		case model.RoleEncode:
			continue
		}
		switch r.leader.RoleSignal {
		case model.SignalNone, model.SignalFallbackAggregated:
			undecided = append(undecided, r)
		}
	}
	if len(undecided) == 0 {
		return // every worker says it is aggregated
	}
	var pods []string
	for _, r := range undecided {
		for _, p := range r.pods {
			pods = append(pods, "pod/"+p.Pod)
		}
	}
	msg := fmt.Sprintf("none of the worker pods is recognised as prefill or decode: %s (%s) %s; %s. They are not counted as prefill or decode capacity",
		anPlural(len(undecided), "worker replica", "worker replicas"), anExamples(anReplicaNames(undecided)),
		map[bool]string{true: "has", false: "have"}[len(undecided) == 1], anUnclassifiedSignals)
	if a.pol != nil {
		msg += fmt.Sprintf(", so the %s policy cannot be checked against them", a.domainName())
	}
	a.add(model.Finding{ID: FindingWorkerRolesUndecided, Severity: sev, Objects: pods, Message: msg,
		Hint: "give the components type prefill/decode (v1beta1) or subComponentType prefill/decode (v1alpha1), or pass --disaggregation-mode prefill|decode to the engine; an aggregated deployment needs no kvTransferPolicy"}, false)
}
