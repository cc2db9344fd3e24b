package preflight

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The operator's admission rules beyond names, types and the policy, read
// from the newest webhook (ai-dynamo/dynamo deploy/operator/internal/webhook/
// validation: dynamographdeployment.go validateDynamoGraphDeploymentSpec,
// shared_v1beta1.go, dynamographdeployment_helpers.go
// grovePathwayForDynamoGraphDeployment) and the CRD's CEL rules
// (api/v1beta1 dynamocomponentdeployment_types.go), with the messages the
// webhook gives. The cases of its admission test
// (dynamographdeployment_test.go TestDynamoGraphDeploymentValidator_Validate)
// are pkg/preflight's TestWebhookRules.

const (
	annotationWorkloadProvider = "nvidia.com/workload-provider"
	annotationDiscoveryMode    = "nvidia.com/dynamo-kube-discovery-mode"
	providerGrove              = "grove"
	providerComponent          = "component"
)

// pathway is whether the operator renders the DGD through Grove, and the
// webhook's words when a Grove-only field is used off it.
type pathway struct {
	grove       bool
	requirement string
}

// pathwayOf decides the pathway as the operator does. The durable choice is
// the nvidia.com/workload-provider annotation, which the operator writes on
// create (its defaulting webhook derives it from nvidia.com/enable-grove,
// replacing whatever the manifest says) and which may not change afterwards:
// for an existing DGD the stored annotation decides. The operator's own Grove
// feature gate is not visible from here; it is taken as on.
func pathwayOf(u, existing *unstructured.Unstructured) pathway {
	if existing != nil {
		if p, ok := existing.GetAnnotations()[annotationWorkloadProvider]; ok {
			switch p {
			case providerGrove:
				return pathway{grove: true}
			case providerComponent:
				return pathway{requirement: fmt.Sprintf("requires the Grove pathway, but workload provider %q is selected (the existing DynamoGraphDeployment's %s)", p, annotationWorkloadProvider)}
			}
			return pathway{requirement: fmt.Sprintf("requires the Grove pathway, but annotation %q has unsupported value %q", annotationWorkloadProvider, p)}
		}
	}
	if v := u.GetAnnotations()[annotationGrove]; strings.EqualFold(v, "false") {
		return pathway{requirement: fmt.Sprintf("requires the Grove pathway, but workload provider %q is selected (%s: %q)", providerComponent, annotationGrove, v)}
	}
	return pathway{grove: true}
}

// workerTypes are the component types GMS, failover and multinode apply to
// (IsWorkerComponent).
func workerType(t string) bool { return t == "worker" || t == "prefill" || t == "decode" }

// validateWebhook applies the rules above to a DGD of API version version
// ("v1beta1" or "v1alpha1"), its parsed components and its pathway.
func validateWebhook(u *unstructured.Unstructured, spec map[string]any, comps []*component, version string, pw pathway) (out []problem) {
	bad := func(path, format string, args ...any) {
		out = append(out, problem{id: FindingInvalidManifest, path: path, msg: fmt.Sprintf(format, args...)})
	}
	beta := version == "v1beta1"
	backend, _ := spec["backendFramework"].(string)
	if s, _ := spec["priorityClassName"].(string); s != "" && !pw.grove {
		bad("spec.priorityClassName", "%s", pw.requirement)
	}
	intraFailover := false
	for _, c := range comps {
		experimental := c.path + ".experimental"
		if !beta {
			experimental = c.path
		}
		if c.minAvailableN != nil && beta {
			replicas := int64(1)
			if c.replicasSet {
				replicas = int64(c.replicas)
			}
			switch {
			case *c.minAvailableN < 1:
				bad(c.path+".minAvailable", "%d must be at least 1", *c.minAvailableN)
			case replicas != 0 && *c.minAvailableN > replicas:
				bad(c.path, "minAvailable must be less than or equal to replicas unless replicas is 0 (minAvailable %d, replicas %d)", *c.minAvailableN, replicas)
			}
		}
		if c.minAvailable && !pw.grove {
			bad(c.path+".minAvailable", "is currently supported only for Grove-backed DynamoGraphDeployment components (%s)", pw.requirement)
		}
		if c.forceScalingGroupSet && !pw.grove {
			bad(c.path+".experimental.grove.forceScalingGroup", "is currently supported only for Grove-backed DynamoGraphDeployment components (%s)", pw.requirement)
		}
		if c.multinode && c.ctype != "" && c.ctype != "epp" && !workerType(c.ctype) {
			bad(c.path+".multinode", "multinode is supported only for worker, prefill, or decode components")
		}
		if c.roles > 0 && !c.multinode {
			bad(c.path+".roles", "roles are supported only for component shapes that define a role schema; this release supports multinode components")
		}
		if c.epp != nil {
			if c.ctype != "epp" {
				bad(c.path+".eppConfig", "eppConfig may only be set when type is epp")
			}
			_, hasRef := c.epp["configMapRef"]
			_, hasConfig := c.epp["config"]
			if hasRef == hasConfig {
				bad(c.path+".eppConfig", "exactly one of configMapRef or config must be specified")
			}
		}
		if g := c.gms; g != nil {
			path := experimental + ".gpuMemoryService"
			if c.ctype != "" && !workerType(c.ctype) {
				bad(path, "GPU memory service is only supported for worker, prefill, or decode components")
			}
			if c.mainGPULimit < 1 {
				bad(path, "GPU memory service requires podTemplate.spec.containers[main].resources.limits.nvidia.com/gpu >= 1")
			}
			if interPod(g.Mode) {
				if !pw.grove {
					bad(path+".mode", "%s", pw.requirement)
				}
				if backend != "vllm" {
					bad(path+".mode", "the inter-pod GMS layout is currently supported only for vLLM (detected backend: %s)", cmpOrUnset(backend))
				}
			}
		}
		if f := c.failover; f != nil {
			path := experimental + ".failover"
			mode := effectiveMode(f.Mode)
			switch {
			case c.gms == nil:
				bad(path, "gpuMemoryService is required when failover mode is %q", mode)
			case effectiveMode(c.gms.Mode) != mode:
				bad(path+".mode", "must match gpuMemoryService.mode %q", effectiveMode(c.gms.Mode))
			}
			if mode == "InterPod" && c.mainGPULimit < 1 {
				bad(path, "GMS failover requires at least 1 GPU in podTemplate.spec.containers[main].resources.limits.nvidia.com/gpu")
			}
			if c.ctype != "" && !workerType(c.ctype) {
				bad(path, "GMS failover is not supported for component type %q", c.ctype)
			}
			intraFailover = intraFailover || mode == "IntraPod"
		}
	}
	if intraFailover && u.GetAnnotations()[annotationDiscoveryMode] != "container" {
		bad("metadata.annotations["+annotationDiscoveryMode+"]", `%q: must be "container" when intra-pod failover is configured`, u.GetAnnotations()[annotationDiscoveryMode])
	}
	out = append(out, topologyOverrideConflicts(spec, comps, pw)...)
	return out
}

// effectiveMode is a GMS or failover mode as the CRD defaults it.
func effectiveMode(m string) string {
	if interPod(m) {
		return "InterPod"
	}
	return "IntraPod"
}

func cmpOrUnset(s string) string {
	if s == "" {
		return "<unset>"
	}
	return s
}

// topologyOverrideConflicts is groveTopologyOverrideCompositionErrors: on the
// Grove provider, a providerOverride that writes Grove's topologyConstraint
// cannot be combined with the typed topologyConstraint fields.
func topologyOverrideConflicts(spec map[string]any, comps []*component, pw pathway) (out []problem) {
	if !pw.grove {
		return nil
	}
	typed := spec["topologyConstraint"] != nil
	for _, c := range comps {
		typed = typed || c.constrained
	}
	if !typed {
		return nil
	}
	const detail = "cannot be combined with spec.topologyConstraint or components[].topologyConstraint; use either the typed topology API or provider-native Grove topology overrides"
	if v, ok, _ := unstructured.NestedFieldNoCopy(spec, "providerOverride", "value", "spec", "template", "topologyConstraint"); ok && v != nil {
		out = append(out, problem{id: FindingInvalidManifest, path: "spec.providerOverride.value", msg: detail})
	}
	for _, c := range comps {
		for _, v := range c.providerOverride {
			if m, ok := v.(map[string]any); ok && m["topologyConstraint"] != nil {
				out = append(out, problem{id: FindingInvalidManifest, path: c.path + ".providerOverride.value", msg: detail})
				break
			}
		}
	}
	return out
}
