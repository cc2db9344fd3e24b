package preflight

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/behavior"
)

// Rules of the DynamoGraphDeployment CRD schema (both versions) and of the
// operator's admission webhook (deploy/operator/internal/webhook/validation),
// as far as they can be checked without the cluster.
var (
	componentNameRe = regexp.MustCompile(`^[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?$`)
	domainRe        = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?$`)
	componentTypes  = []string{"frontend", "worker", "prefill", "decode", "planner", "epp"}
	backends        = []string{"sglang", "vllm", "trtllm"}
)

const (
	maxComponents   = 25
	annotationGrove = "nvidia.com/enable-grove"
	policyPath      = "spec.experimental.kvTransferPolicy"
)

// problem is one rejected field.
type problem struct {
	id, path, msg string
	// strict marks a strict-decoding problem (an unknown field, a wrong
	// type: the API server rejects those itself); decode one a part that
	// could not be read into its shape, which a strict problem explains.
	strict, decode bool
	// update marks a rule of the webhook's update path (the DGD exists).
	update bool
	// hint replaces the default "fix PATH in the manifest".
	hint string
}

// policyWire is spec.experimental.kvTransferPolicy as written.
type policyWire struct {
	LabelKey            *string  `json:"labelKey"`
	ClusterTopologyName *string  `json:"clusterTopologyName"`
	Domain              *string  `json:"domain"`
	Enforcement         *string  `json:"enforcement"`
	PreferredWeight     *float64 `json:"preferredWeight"`
}

// validateManifest checks a DGD against the CRD schema, its CEL rules and the
// webhook's stateless rules, as the webhook of release rel applies them. comps
// are the parsed components.
func validateManifest(u *unstructured.Unstructured, comps []*component, rel behavior.Release, pw pathway) (out []problem) {
	bad := func(id, path, format string, args ...any) {
		out = append(out, problem{id: id, path: path, msg: fmt.Sprintf(format, args...)})
	}
	version := strings.TrimPrefix(u.GetAPIVersion(), "nvidia.com/")
	if version != "v1alpha1" && version != "v1beta1" {
		bad(FindingInvalidManifest, "apiVersion", "%q is not served: use nvidia.com/v1beta1 (or nvidia.com/v1alpha1)", u.GetAPIVersion())
	}
	if u.GetName() == "" {
		bad(FindingInvalidManifest, "metadata.name", "is required")
	} else if errs := validation.IsDNS1123Subdomain(u.GetName()); len(errs) > 0 {
		bad(FindingInvalidManifest, "metadata.name", "%q is not a valid name: %s", u.GetName(), strings.Join(errs, "; "))
	}
	spec, ok := u.Object["spec"].(map[string]any)
	if !ok {
		bad(FindingInvalidManifest, "spec", "is required")
		return out
	}
	if s, ok := spec["backendFramework"].(string); ok && !slices.Contains(backends, s) {
		bad(FindingInvalidManifest, "spec.backendFramework", "%q is not one of %s", s, strings.Join(backends, ", "))
	}
	switch version {
	case "v1beta1":
		if _, has := spec["services"]; has {
			bad(FindingInvalidManifest, "spec.services", "is a v1alpha1 field: nvidia.com/v1beta1 lists components under spec.components (or set apiVersion: nvidia.com/v1alpha1)")
		}
		list, isList := spec["components"].([]any)
		if _, has := spec["components"]; has && !isList {
			bad(FindingInvalidManifest, "spec.components", "must be a list of components")
		}
		if len(list) == 0 {
			bad(FindingInvalidManifest, "spec.components", "must have at least one component")
		}
		if len(list) > maxComponents {
			bad(FindingInvalidManifest, "spec.components", "has %d components, more than the %d allowed", len(list), maxComponents)
		}
	case "v1alpha1":
		if _, has := spec["components"]; has {
			bad(FindingInvalidManifest, "spec.components", "is a v1beta1 field: nvidia.com/v1alpha1 maps services under spec.services (or set apiVersion: nvidia.com/v1beta1)")
		}
		m, _ := spec["services"].(map[string]any)
		if len(m) == 0 {
			bad(FindingInvalidManifest, "spec.services", "must have at least one service")
		}
		if len(m) > maxComponents {
			bad(FindingInvalidManifest, "spec.services", "has %d services, more than the %d allowed", len(m), maxComponents)
		}
	}
	grove := pw.grove
	shapes := make([]groveShape, 0, len(comps))
	for _, c := range comps {
		shapes = append(shapes, c.grove)
	}
	seen := map[string]string{}
	epp := 0
	for _, c := range comps {
		switch {
		case c.name == "":
			bad(FindingInvalidManifest, c.path+".name", "is required")
		case len(c.name) > 63 || !componentNameRe.MatchString(c.name):
			bad(FindingInvalidManifest, c.path+".name", "%q must be 1-63 letters, digits or '-', starting and ending with a letter or digit", c.name)
		}
		// The v1beta1 CEL rule compares names ignoring case; v1alpha1 map keys
		// may differ in case only (the newest admission tests: "v1alpha1
		// converted service names may collide case-insensitively").
		if prev, dup := seen[strings.ToLower(c.name)]; dup && c.name != "" && version == "v1beta1" {
			bad(FindingInvalidManifest, c.path+".name", "%q duplicates component %q (names are compared ignoring case)", c.name, prev)
		}
		seen[strings.ToLower(c.name)] = c.name
		if version == "v1beta1" && c.ctype != "" && !slices.Contains(componentTypes, c.ctype) {
			bad(FindingInvalidManifest, c.path+".type", "%q is not one of %s", c.ctype, strings.Join(componentTypes, ", "))
		}
		if c.replicas < 0 {
			bad(FindingInvalidManifest, c.path+".replicas", "%d must be at least 0", c.replicas)
		}
		if c.multinode && c.nodes < 2 {
			bad(FindingInvalidManifest, c.path+".multinode.nodeCount", "%d must be at least 2 (a single-node component has no multinode block)", c.nodes)
		}
		if c.ctype == "epp" {
			epp++
			if c.multinode {
				bad(FindingInvalidManifest, c.path+".multinode", "an EPP component cannot be multinode")
			}
			if c.replicas != 1 {
				bad(FindingInvalidManifest, c.path+".replicas", "an EPP component must have exactly 1 replica, not %d", c.replicas)
			}
		}
		if grove && c.name != "" {
			if n := groveNameLength(rel, u.GetName(), shapes, c.grove); n.length > maxGroveName {
				bad(FindingInvalidManifest, c.path+".name", "combined resource name length %d exceeds the %d-character pod-name limit (%s; the operator names the PodCliqueSet %q); shorten DynamoGraphDeployment name %q or component name %q (rule %s, %s)",
					n.length, maxGroveName, n.parts, n.pcs, u.GetName(), c.name, behavior.RuleGroveNameLength, behavior.At(behavior.RuleGroveNameLength, rel).Range())
			}
		}
		if version == "v1beta1" {
			for i, k := range c.pod.Containers {
				if k.Name != "main" && k.Image == "" {
					bad(FindingInvalidManifest, fmt.Sprintf("%s.podTemplate.spec.containers[%d].image", c.path, i), "is required for sidecar container %q", k.Name)
				}
			}
		}
		if _, errs := newFilter(&c.pod); len(errs) > 0 {
			bad(FindingInvalidManifest, c.path, "%s", strings.Join(errs, "; "))
		}
	}
	if epp > 1 {
		bad(FindingInvalidManifest, "spec.components", "at most one component may have type epp, found %d", epp)
	}
	out = append(out, validateTopologyConstraint(spec, comps, version, rel)...)
	out = append(out, validatePolicy(spec, pw)...)
	out = append(out, validateWebhook(u, spec, comps, version, pw)...)
	return out
}

// validateTopologyConstraint applies the webhook's placement rules that need
// no topology object (rule topology-pack-domain for the release rel).
func validateTopologyConstraint(spec map[string]any, comps []*component, version string, rel behavior.Release) (out []problem) {
	tc, hasTC := spec["topologyConstraint"].(map[string]any)
	anyComponent := false
	for _, c := range comps {
		anyComponent = anyComponent || c.constrained
		if c.constrained && !domainRe.MatchString(c.packDomain) {
			// The CRD: a component topologyConstraint requires packDomain,
			// matching the domain pattern ({} fails it too).
			out = append(out, problem{id: FindingInvalidManifest, path: c.path + ".topologyConstraint.packDomain", msg: fmt.Sprintf("%q must match %s (a component topologyConstraint needs its packDomain; remove the block to leave the component unconstrained)", c.packDomain, domainRe.String())})
		}
	}
	if !hasTC && !anyComponent {
		return out
	}
	if !hasTC {
		return append(out, problem{id: FindingInvalidManifest, path: "spec.topologyConstraint", msg: "is required when any component topology constraint is set"})
	}
	nameField := "clusterTopologyName"
	if version == "v1alpha1" {
		nameField = "topologyProfile"
	}
	if s, _ := tc[nameField].(string); s == "" {
		if s2, _ := tc["clusterTopologyName"].(string); s2 == "" {
			out = append(out, problem{id: FindingInvalidManifest, path: "spec.topologyConstraint." + nameField, msg: "is required: it names the Grove ClusterTopologyBinding whose levels packDomain refers to"})
		}
	}
	if pd, _ := tc["packDomain"].(string); pd == "" {
		era := behavior.At(behavior.RuleTopologyPack, rel)
		cite := fmt.Sprintf("rule %s, %s", behavior.RuleTopologyPack, era.Range())
		switch {
		case era.Key == behavior.EraEveryComponent:
			for _, c := range comps {
				if !c.constrained {
					out = append(out, problem{id: FindingInvalidManifest, path: c.path + ".topologyConstraint", msg: "is required because spec.topologyConstraint.packDomain is not set (" + cite + ")"})
				}
			}
		case !anyComponent:
			out = append(out, problem{id: FindingInvalidManifest, path: "spec.topologyConstraint.packDomain", msg: "is required when no component topologyConstraint is set (" + cite + ")"})
		}
	}
	return out
}

// validatePolicy applies the CRD schema, its CEL rules and the webhook's rules
// to spec.experimental.kvTransferPolicy.
func validatePolicy(spec map[string]any, pw pathway) (out []problem) {
	raw, has, _ := unstructured.NestedFieldNoCopy(spec, "experimental", "kvTransferPolicy")
	if !has || raw == nil {
		return nil
	}
	bad := func(field, format string, args ...any) {
		path := policyPath
		if field != "" {
			path += "." + field
		}
		out = append(out, problem{id: FindingInvalidPolicy, path: path, msg: fmt.Sprintf(format, args...)})
	}
	var p policyWire
	if err := convertAny(raw, &p); err != nil {
		out = append(out, problem{id: FindingInvalidPolicy, path: policyPath, msg: decodeError(err), decode: true})
		return out
	}
	hasLabel := p.LabelKey != nil && *p.LabelKey != ""
	hasTopo := p.ClusterTopologyName != nil && *p.ClusterTopologyName != ""
	if hasLabel == hasTopo {
		bad("", "exactly one of labelKey or clusterTopologyName is required")
	}
	if hasLabel {
		if errs := validation.IsQualifiedName(*p.LabelKey); len(errs) > 0 {
			bad("labelKey", "%q is not a valid Kubernetes label key: %s", *p.LabelKey, strings.Join(errs, "; "))
		}
	}
	if hasTopo {
		if errs := validation.IsDNS1123Subdomain(*p.ClusterTopologyName); len(errs) > 0 {
			bad("clusterTopologyName", "%q is not a valid Kubernetes resource name: %s", *p.ClusterTopologyName, strings.Join(errs, "; "))
		}
		if !pw.grove {
			bad("clusterTopologyName", "%s (use labelKey)", pw.requirement)
		}
	}
	switch {
	case p.Domain == nil || *p.Domain == "":
		bad("domain", "is required")
	case !domainRe.MatchString(*p.Domain):
		bad("domain", "%q is not a valid topology domain; must match %s", *p.Domain, domainRe.String())
	}
	enf := "required"
	if p.Enforcement != nil && *p.Enforcement != "" {
		enf = *p.Enforcement
	}
	if enf != "required" && enf != "preferred" {
		bad("enforcement", "%q is invalid; must be \"required\" or \"preferred\"", enf)
	}
	if enf == "preferred" && p.PreferredWeight == nil {
		bad("preferredWeight", "is required when enforcement is \"preferred\" (a weight in [0, 1]; without one every request prefilled on a worker fails)")
	}
	if w := p.PreferredWeight; w != nil {
		if *w < 0 || *w > 1 {
			bad("preferredWeight", "%g is invalid; must be >= 0 and <= 1", *w)
		}
		if enf != "preferred" {
			bad("preferredWeight", "may only be set when enforcement is \"preferred\"")
		}
	}
	return out
}

func convertAny(v any, dst any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, dst)
}
