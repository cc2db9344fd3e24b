package preflight

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// What the operator's webhook rejects when a manifest updates an existing
// DynamoGraphDeployment (ai-dynamo/dynamo deploy/operator/internal/webhook/
// validation: dynamographdeployment.go validateDynamoGraphDeploymentSpecUpdate,
// validateSpecTopologyConstraintUpdate, validateKvTransferPolicyUpdate,
// validateObjectMetaUpdate; shared.go validateDynamoComponentDeploymentSharedSpecUpdate,
// validateExperimentalSpecUpdate; and the CRD's CEL transition rules on type
// and minAvailable), in the webhook's words. preflight reads the existing DGD
// with a GET when it reads the cluster live; offline it cannot tell, and its
// hints say which changes hold only for a new deployment.

// lifecycle is what applying the manifest does.
type lifecycle int

const (
	// lifeUnknown (the zero value): the cluster was not asked (offline, or
	// the GET failed).
	_ lifecycle = iota
	// lifeCreate: no DGD of that namespace and name exists.
	lifeCreate
	// lifeUpdate: it exists; the webhook's update rules apply.
	lifeUpdate
)

const (
	recreateTopology = "is immutable and cannot be added, removed, or changed after creation; delete and recreate the DynamoGraphDeployment to change topology constraints"
	recreatePolicy   = "is immutable and cannot be added, removed, or changed after creation; delete and recreate the DynamoGraphDeployment to change the KV transfer policy"
)

// validateUpdate applies the update rules to the manifest u (components
// comps) against the existing DGD old.
func validateUpdate(u, old *unstructured.Unstructured, comps []*component) (out []problem) {
	bad := func(id, path, format string, args ...any) {
		out = append(out, problem{id: id, path: path, msg: fmt.Sprintf(format, args...), update: true})
	}
	oldComps := components(old, func(string, string) {})
	byName := map[string]*component{}
	for _, k := range oldComps {
		byName[k.name] = k
	}
	newNames := map[string]bool{}
	for _, k := range comps {
		newNames[k.name] = true
	}
	var added, removed []string
	for _, k := range comps {
		if byName[k.name] == nil {
			added = append(added, k.name)
		}
	}
	for _, k := range oldComps {
		if !newNames[k.name] {
			removed = append(removed, k.name)
		}
	}
	slices.Sort(added)
	slices.Sort(removed)
	if len(added) > 0 || len(removed) > 0 {
		detail := "component topology is immutable and cannot be modified after creation"
		if len(added) > 0 {
			detail += fmt.Sprintf(": components added: [%s]", strings.Join(added, " "))
		}
		if len(removed) > 0 {
			if len(added) > 0 {
				detail += ","
			} else {
				detail += ":"
			}
			detail += fmt.Sprintf(" components removed: [%s]", strings.Join(removed, " "))
		}
		path := "spec.components"
		if _, alpha := u.Object["spec"].(map[string]any)["services"]; alpha {
			path = "spec.services"
		}
		bad(FindingInvalidManifest, path, "%s", detail)
	}
	for _, k := range comps {
		o := byName[k.name]
		if o == nil {
			continue
		}
		replicas := func(c *component) int32 {
			if c.replicasSet {
				return c.replicas
			}
			return 1
		}
		if (k.scalingAdapter || o.scalingAdapter) && replicas(k) != replicas(o) {
			bad(FindingInvalidManifest, k.path+".replicas", "cannot be modified directly when scaling adapter is enabled; scale or update the related DynamoGraphDeploymentScalingAdapter instead (the existing DynamoGraphDeployment has %d)", replicas(o))
		}
		if (k.nodes > 1 && k.multinode) != (o.nodes > 1 && o.multinode) {
			bad(FindingInvalidManifest, k.path+".multinode", "cannot change node topology between single-node and multi-node after creation")
		}
		if k.constrained != o.constrained || k.packDomain != o.packDomain {
			bad(FindingInvalidManifest, k.path+".topologyConstraint", "%s", recreateTopology)
		}
		experimental := k.path + ".experimental"
		if strings.HasSuffix(u.GetAPIVersion(), "/v1alpha1") {
			experimental = k.path
		}
		if k.grove.interPodGMS != o.grove.interPodGMS {
			bad(FindingInvalidManifest, experimental+".gpuMemoryService.mode", "the inter-pod GMS layout cannot be toggled after creation; delete and recreate the DynamoGraphDeployment")
		}
		kf, of := interPodFailover(k.failover), interPodFailover(o.failover)
		switch {
		case kf != of:
			bad(FindingInvalidManifest, experimental+".failover", "inter-pod GMS failover cannot be toggled after creation; delete and recreate the DynamoGraphDeployment")
		case kf && shadows(k.failover) != shadows(o.failover):
			bad(FindingInvalidManifest, experimental+".failover.numShadows", "is immutable for inter-pod GMS failover; delete and recreate the DynamoGraphDeployment to change it")
		}
		if o.ctype != "" && k.ctype != o.ctype {
			bad(FindingInvalidManifest, k.path, "type is immutable after it is set (the existing DynamoGraphDeployment has %q)", o.ctype)
		}
		if o.minAvailableN != nil && k.minAvailableN != nil && *o.minAvailableN != *k.minAvailableN {
			bad(FindingInvalidManifest, k.path, "minAvailable is immutable after creation (the existing DynamoGraphDeployment has %d)", *o.minAvailableN)
		}
	}
	nb, _, _ := unstructured.NestedString(u.Object, "spec", "backendFramework")
	ob, _, _ := unstructured.NestedString(old.Object, "spec", "backendFramework")
	if nb != ob {
		bad(FindingInvalidManifest, "spec.backendFramework", "is immutable and cannot be changed after creation (the existing DynamoGraphDeployment has %q)", ob)
	}
	if !reflect.DeepEqual(specTopology(u), specTopology(old)) {
		bad(FindingInvalidManifest, "spec.topologyConstraint", "%s", recreateTopology)
	}
	if !reflect.DeepEqual(effectivePolicy(u), effectivePolicy(old)) {
		bad(FindingInvalidPolicy, policyPath, "%s", recreatePolicy)
	}
	if p, ok := u.GetAnnotations()[annotationWorkloadProvider]; ok {
		if q, had := old.GetAnnotations()[annotationWorkloadProvider]; had && p != q {
			bad(FindingInvalidManifest, "metadata.annotations["+annotationWorkloadProvider+"]", "%q: field is immutable (the existing DynamoGraphDeployment has %q)", p, q)
		}
	}
	return out
}

func interPodFailover(f *failoverWire) bool { return f != nil && interPod(f.Mode) }

func shadows(f *failoverWire) int32 { return max(1, f.NumShadows) }

// specTopology is what validateSpecTopologyConstraintUpdate compares: the
// topology name (clusterTopologyName, or v1alpha1's topologyProfile) and the
// packDomain; nil without a constraint.
func specTopology(u *unstructured.Unstructured) []string {
	tc, ok, _ := unstructured.NestedMap(u.Object, "spec", "topologyConstraint")
	if !ok || tc == nil {
		return nil
	}
	name, _ := tc["clusterTopologyName"].(string)
	if name == "" {
		name, _ = tc["topologyProfile"].(string)
	}
	pd, _ := tc["packDomain"].(string)
	return []string{name, pd}
}

// effectivePolicy is what kvTransferPoliciesEqual compares, enforcement
// defaulted to required; nil without a policy.
func effectivePolicy(u *unstructured.Unstructured) []any {
	p, ok, _ := unstructured.NestedMap(u.Object, "spec", "experimental", "kvTransferPolicy")
	if !ok || p == nil {
		return nil
	}
	str := func(k string) string { s, _ := p[k].(string); return s }
	enf := str("enforcement")
	if enf == "" {
		enf = "required"
	}
	var w any
	switch x := p["preferredWeight"].(type) {
	case int64:
		w = float64(x)
	case float64:
		w = x
	}
	return []any{str("labelKey"), str("clusterTopologyName"), str("domain"), enf, w}
}

// lifecycleHint is a fix that changes something the webhook rejects on
// update (what: "adding a component"): as written for a new DGD, the way
// that works for an existing one (update) followed by delete-and-recreate,
// or both when preflight could not tell (offline).
func (c *checker) lifecycleHint(create, what, update string) string {
	switch c.life {
	case lifeCreate:
		return create
	case lifeUpdate:
		s := "the DynamoGraphDeployment exists, and the webhook rejects " + what + " on update: delete and recreate it to " + create
		if update != "" {
			s = update + "; " + s
		}
		return s
	}
	s := create + " (for a new DynamoGraphDeployment: on an existing one the webhook rejects " + what + " on update, so delete and recreate it"
	if update != "" {
		s += ", or " + update
	}
	return s + ")"
}
