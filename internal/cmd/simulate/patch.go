package simulate

import (
	"cmp"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/simulate"
)

// dgdPatch is the recommended change as a unified diff of the
// DynamoGraphDeployment's spec, for the user to review and apply: the policy
// switch as the kvTransferPolicy's enforcement and weight, and each added
// worker as a replica of the component it was cloned from — the component
// itself when it is pinned to that domain value, otherwise a copy of it
// pinned there by a nodeSelector on the policy's node label. notes say what
// the patch could not express.
func dgdPatch(b *raw.Bundle, dep *model.Deployment, c *simulate.Candidate) (patch string, notes []string, err error) {
	patch, _, _, notes, err = dgdTexts(b, dep, c)
	return patch, notes, err
}

// dgdTexts is dgdPatch with the DGD before and after the change, as YAML.
func dgdTexts(b *raw.Bundle, dep *model.Deployment, c *simulate.Candidate) (patch, from, to string, notes []string, err error) {
	u := findDGD(b, dep)
	if u == nil {
		return "", "", "", []string{"the source holds no DynamoGraphDeployment object for " + dep.Key() + ": no patch"}, nil
	}
	before := map[string]any{"apiVersion": u.APIVersion, "kind": cmp.Or(u.Kind, "DynamoGraphDeployment"),
		"metadata": map[string]any{"name": u.Name, "namespace": u.Namespace}}
	if u.Spec != nil {
		before["spec"] = runtime.DeepCopyJSONValue(u.Spec)
	}
	after := runtime.DeepCopyJSONValue(before).(map[string]any)
	spec, _ := after["spec"].(map[string]any)
	if spec == nil {
		return "", "", "", []string{dep.Key() + " has no spec: no patch"}, nil
	}
	if c.Enforcement != "" {
		exp, _ := spec["experimental"].(map[string]any)
		pol, _ := exp["kvTransferPolicy"].(map[string]any)
		if pol == nil {
			notes = append(notes, "the DGD has no spec.experimental.kvTransferPolicy to switch")
		} else {
			pol["enforcement"] = c.Enforcement
			if c.PreferredWeight != nil {
				pol["preferredWeight"] = *c.PreferredWeight
			}
		}
	}
	label := ""
	if dep.Policy != nil {
		label = dep.Policy.NodeLabelKey
	}
	for _, a := range c.Add {
		n, err := addReplicas(spec, dep, a, label)
		if err != nil {
			return "", "", "", nil, err
		}
		notes = append(notes, n...)
	}
	x, err := yaml.Marshal(before)
	if err != nil {
		return "", "", "", nil, err
	}
	y, err := yaml.Marshal(after)
	if err != nil {
		return "", "", "", nil, err
	}
	name := dep.Name
	if dep.Namespace != "" {
		name = dep.Key()
	}
	return unifiedDiff(name+" (as deployed)", name+" (recommended)", string(x), string(y)), string(x), string(y), notes, nil
}

// findDGD returns the deployment's DynamoGraphDeployment object.
func findDGD(b *raw.Bundle, dep *model.Deployment) *raw.DGD {
	if b == nil {
		return nil
	}
	for _, d := range b.Objects.DGDs {
		if d.Name == dep.Name && d.Namespace == dep.Namespace {
			return d
		}
	}
	return nil
}

// addReplicas adds a.Count replicas of the component a worker of a.Role (in
// a.Value when one is) belongs to, placed in a.Value.
func addReplicas(spec map[string]any, dep *model.Deployment, a simulate.AddWorkers, label string) ([]string, error) {
	comp := ""
	for _, w := range dep.Workers {
		if w.Role != a.Role || w.Component == "" || len(w.Instances) == 0 {
			continue
		}
		if comp == "" || w.Domain.Effective() == a.Value {
			comp = w.Component
		}
		if w.Domain.Effective() == a.Value {
			break
		}
	}
	if comp == "" {
		return []string{fmt.Sprintf("%s+%d@%s: no %s worker names its DGD component: add the replicas by hand", a.Role, a.Count, a.Value, a.Role)}, nil
	}
	get, set, alpha, ok := components(spec)
	if !ok {
		return []string{"the DGD spec has neither components nor services: add the replicas by hand"}, nil
	}
	tpl := get(comp)
	if tpl == nil {
		return []string{fmt.Sprintf("%s+%d@%s: the DGD has no component %s: add the replicas by hand", a.Role, a.Count, a.Value, comp)}, nil
	}
	bump := func(c map[string]any, n int) {
		c["replicas"] = int64(replicasOf(c) + n)
	}
	if label == "" {
		// No node label to pin the replicas with: more replicas of the
		// component, placed where the scheduler puts them.
		bump(tpl, a.Count)
		return []string{fmt.Sprintf("%s+%d@%s: the policy names no node label to pin the new replicas to %s: the patch adds them to %s, and the scheduler decides their domain", a.Role, a.Count, a.Value, a.Value, comp)}, nil
	}
	if nodeSelector(tpl, alpha, false)[label] == a.Value {
		bump(tpl, a.Count)
		return nil, nil
	}
	name := comp + "-" + a.Value
	if c := get(name); c != nil {
		bump(c, a.Count)
		return nil, nil
	}
	c := runtime.DeepCopyJSONValue(tpl).(map[string]any)
	c["replicas"] = int64(a.Count)
	nodeSelector(c, alpha, true)[label] = a.Value
	set(name, c)
	return nil, nil
}

// components returns accessors of the DGD's components by name: v1beta1
// spec.components (a list of named components) or v1alpha1 spec.services
// (a map by name, alpha set).
func components(spec map[string]any) (get func(string) map[string]any, set func(string, map[string]any), alpha, ok bool) {
	if list, isList := spec["components"].([]any); isList {
		get = func(name string) map[string]any {
			for _, it := range list {
				if c, _ := it.(map[string]any); c != nil && c["name"] == name {
					return c
				}
			}
			return nil
		}
		set = func(name string, c map[string]any) {
			c["name"] = name
			list = append(list, c)
			spec["components"] = list
		}
		return get, set, false, true
	}
	if m, isMap := spec["services"].(map[string]any); isMap {
		get = func(name string) map[string]any { c, _ := m[name].(map[string]any); return c }
		set = func(name string, c map[string]any) { m[name] = c }
		return get, set, true, true
	}
	return nil, nil, false, false
}

func replicasOf(c map[string]any) int {
	switch v := c["replicas"].(type) {
	case int64:
		return int(v)
	case float64:
		return int(v)
	case int:
		return v
	}
	return 1 // the operator's default
}

// nodeSelector returns the component's pod nodeSelector (v1beta1
// podTemplate.spec; v1alpha1 extraPodSpec, a pod spec inline), made when
// create is set.
func nodeSelector(c map[string]any, alpha, create bool) map[string]any {
	path := []string{"podTemplate", "spec", "nodeSelector"}
	if alpha {
		path = []string{"extraPodSpec", "nodeSelector"}
	}
	cur := c
	for _, k := range path {
		next, _ := cur[k].(map[string]any)
		if next == nil {
			if !create {
				return map[string]any{}
			}
			next = map[string]any{}
			cur[k] = next
		}
		cur = next
	}
	return cur
}

// unifiedDiff is the unified diff (3 lines of context) of two texts, by
// their longest common subsequence of lines.
func unifiedDiff(fromName, toName, a, b string) string {
	x, y := strings.SplitAfter(a, "\n"), strings.SplitAfter(b, "\n")
	if x[len(x)-1] == "" {
		x = x[:len(x)-1]
	}
	if y[len(y)-1] == "" {
		y = y[:len(y)-1]
	}
	// lcs[i][j] is the LCS length of x[i:] and y[j:].
	lcs := make([][]int32, len(x)+1)
	for i := range lcs {
		lcs[i] = make([]int32, len(y)+1)
	}
	for i := len(x) - 1; i >= 0; i-- {
		for j := len(y) - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	type op struct {
		kind byte // ' ', '-', '+'
		line string
		i, j int // positions before the op, 0-based
	}
	var ops []op
	i, j := 0, 0
	for i < len(x) || j < len(y) {
		switch {
		case i < len(x) && j < len(y) && x[i] == y[j]:
			ops = append(ops, op{' ', x[i], i, j})
			i, j = i+1, j+1
		case i < len(x) && (j == len(y) || lcs[i+1][j] >= lcs[i][j+1]):
			ops = append(ops, op{'-', x[i], i, j}) // removals before additions
			i++
		default:
			ops = append(ops, op{'+', y[j], i, j})
			j++
		}
	}
	const context = 3
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", fromName, toName)
	for k := 0; k < len(ops); {
		if ops[k].kind == ' ' {
			k++
			continue
		}
		start := max(k-context, 0)
		end := k
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			// A run of unchanged lines: the hunk ends unless another change
			// comes within twice the context.
			run := end
			for run < len(ops) && ops[run].kind == ' ' {
				run++
			}
			if run == len(ops) || run-end > 2*context {
				end = min(end+context, len(ops))
				break
			}
			end = run
		}
		na, nb := 0, 0
		for _, o := range ops[start:end] {
			if o.kind != '+' {
				na++
			}
			if o.kind != '-' {
				nb++
			}
		}
		la, lb := ops[start].i+1, ops[start].j+1
		if na == 0 {
			la-- // an empty range names the line before it
		}
		if nb == 0 {
			lb--
		}
		fmt.Fprintf(&out, "@@ -%d,%d +%d,%d @@\n", la, na, lb, nb)
		for _, o := range ops[start:end] {
			out.WriteByte(o.kind)
			out.WriteString(o.line)
			if !strings.HasSuffix(o.line, "\n") {
				out.WriteString("\n\\ No newline at end of file\n")
			}
		}
		k = end
	}
	return out.String()
}
