package preflight

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// nodeFilter is a component's pod-to-node predicate (the scheduler's
// NodeAffinity, NodeUnschedulable and TaintToleration filters; resources are
// checked by the placement).
type nodeFilter struct {
	selector labels.Selector
	// terms are the required node affinity terms (ORed); nil when none.
	terms []nodeTerm
	tols  []corev1.Toleration
}

type nodeTerm struct {
	sel    labels.Selector
	fields []corev1.NodeSelectorRequirement
}

// newFilter reads the pod spec's nodeSelector, required node affinity and
// tolerations; errors are unreadable requirements (reported as InvalidManifest).
func newFilter(p *corev1.PodSpec) (*nodeFilter, []string) {
	var errs []string
	f := &nodeFilter{selector: labels.SelectorFromSet(p.NodeSelector), tols: p.Tolerations}
	if a := p.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		for _, t := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
			sel, err := requirements(t.MatchExpressions)
			if err != nil {
				errs = append(errs, err.Error())
				continue
			}
			f.terms = append(f.terms, nodeTerm{sel: sel, fields: t.MatchFields})
		}
		if len(f.terms) == 0 {
			// No usable term: the scheduler matches no node.
			f.terms = []nodeTerm{{sel: labels.Nothing()}}
		}
	}
	return f, errs
}

func requirements(rs []corev1.NodeSelectorRequirement) (labels.Selector, error) {
	sel := labels.NewSelector()
	for _, r := range rs {
		var op selection.Operator
		switch r.Operator {
		case corev1.NodeSelectorOpIn:
			op = selection.In
		case corev1.NodeSelectorOpNotIn:
			op = selection.NotIn
		case corev1.NodeSelectorOpExists:
			op = selection.Exists
		case corev1.NodeSelectorOpDoesNotExist:
			op = selection.DoesNotExist
		case corev1.NodeSelectorOpGt:
			op = selection.GreaterThan
		case corev1.NodeSelectorOpLt:
			op = selection.LessThan
		default:
			return nil, fmt.Errorf("node affinity operator %q is not one of In, NotIn, Exists, DoesNotExist, Gt, Lt", r.Operator)
		}
		req, err := labels.NewRequirement(r.Key, op, r.Values)
		if err != nil {
			return nil, fmt.Errorf("node affinity requirement on %q: %w", r.Key, err)
		}
		sel = sel.Add(*req)
	}
	return sel, nil
}

// matches is the label and taint part of the scheduler's filters.
func (f *nodeFilter) matches(n *Node) (bool, string) {
	if !f.selector.Matches(labels.Set(n.Labels)) {
		return false, "nodeSelector"
	}
	if f.terms != nil && !slices.ContainsFunc(f.terms, func(t nodeTerm) bool { return t.matches(n) }) {
		return false, "node affinity"
	}
	if n.Unschedulable && !tolerates(f.tols, corev1.Taint{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule}) {
		return false, "cordoned"
	}
	for _, t := range n.Taints {
		if t.Effect == corev1.TaintEffectPreferNoSchedule {
			continue
		}
		if !tolerates(f.tols, t) {
			return false, "taint " + taintString(t)
		}
	}
	return true, ""
}

func (t nodeTerm) matches(n *Node) bool {
	if !t.sel.Matches(labels.Set(n.Labels)) {
		return false
	}
	for _, r := range t.fields {
		if r.Key != "metadata.name" {
			return false
		}
		in := slices.Contains(r.Values, n.Name)
		switch r.Operator {
		case corev1.NodeSelectorOpIn:
			if !in {
				return false
			}
		case corev1.NodeSelectorOpNotIn:
			if in {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// tolerates mirrors corev1.Toleration.ToleratesTaint without the numeric
// comparison operators.
func tolerates(tols []corev1.Toleration, t corev1.Taint) bool {
	for _, tol := range tols {
		if tol.Effect != "" && tol.Effect != t.Effect {
			continue
		}
		if tol.Key != "" && tol.Key != t.Key {
			continue
		}
		switch tol.Operator {
		case corev1.TolerationOpExists:
			return true
		case "", corev1.TolerationOpEqual:
			if tol.Key != "" && tol.Value == t.Value {
				return true
			}
		}
	}
	return false
}

func taintString(t corev1.Taint) string {
	if t.Value == "" {
		return t.Key + ":" + string(t.Effect)
	}
	return t.Key + "=" + t.Value + ":" + string(t.Effect)
}

// describe lists the constraints for the report.
func describe(p *corev1.PodSpec) []string {
	var out []string
	if len(p.NodeSelector) > 0 {
		out = append(out, "nodeSelector "+labels.SelectorFromSet(p.NodeSelector).String())
	}
	if a := p.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		var terms []string
		for _, t := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
			var parts []string
			for _, r := range t.MatchExpressions {
				parts = append(parts, fmt.Sprintf("%s %s %s", r.Key, r.Operator, strings.Join(r.Values, ",")))
			}
			for _, r := range t.MatchFields {
				parts = append(parts, fmt.Sprintf("%s %s %s", r.Key, r.Operator, strings.Join(r.Values, ",")))
			}
			terms = append(terms, strings.TrimSpace(strings.Join(parts, " & ")))
		}
		out = append(out, "node affinity "+strings.Join(terms, " | "))
	}
	for _, t := range p.Tolerations {
		s := t.Key
		if t.Operator == corev1.TolerationOpExists {
			s = cmpOr(s, "*") + " Exists"
		} else if t.Value != "" {
			s += "=" + t.Value
		}
		if t.Effect != "" {
			s += ":" + string(t.Effect)
		}
		out = append(out, "tolerates "+s)
	}
	return out
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// pinnedValues returns the values of key the pod spec allows, when it pins
// them (nodeSelector key=value, or every required affinity term has key In
// …); ok is false when any value is allowed.
func pinnedValues(p *corev1.PodSpec, key string) (vals []string, ok bool) {
	if v, has := p.NodeSelector[key]; has {
		return []string{v}, true
	}
	a := p.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return nil, false
	}
	set := map[string]bool{}
	for _, t := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		found := false
		for _, r := range t.MatchExpressions {
			if r.Key == key && r.Operator == corev1.NodeSelectorOpIn {
				for _, v := range r.Values {
					set[v] = true
				}
				found = true
				break
			}
		}
		if !found {
			return nil, false
		}
	}
	for v := range set {
		vals = append(vals, v)
	}
	slices.Sort(vals)
	return vals, true
}
