package simulate

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/behavior"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/explain"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
)

// Variant is one what-if scenario: the same changes explain-route and the
// dashboard offer, applied to the deployment before the traffic is replayed.
type Variant struct {
	// Spec is the text the variant was parsed from.
	Spec string
	// Knobs and the what-ifs map onto explain's options.
	Knobs          explain.Knobs
	ExcludeWorkers []string
	DomainDown     []explain.DomainValue
	// downValues are domain values named without a key (down=us-east-1a): the
	// deployment's transfer domain is the key.
	downValues []string
	// Add are synthetic workers (decode+N@VALUE, prefill+N@VALUE).
	Add []AddWorkers
	// DynamoVersion reads the deployment at another Dynamo release
	// (dynamo-version=…): its routing profile, each hop's mode and the
	// frontend's readiness (pkg/behavior).
	DynamoVersion string
	// Changes describe each change in words.
	Changes []string
}

// AddWorkers adds Count workers of Role in the domain value Value, cloned
// from a worker of that role (one in that value when there is one).
type AddWorkers struct {
	Role  model.Role
	Count int
	Value string
}

// maxAdded bounds decode+N: a variant cannot add more workers than this, in
// all its clauses together (each added worker is a clone the simulation
// keeps: 100 clauses of decode+1000 were 100,000 workers and 1.9 GB).
const maxAdded = 1000

// VariantKeys lists the accepted variant keys, for messages and docs.
const VariantKeys = "enforcement=required|preferred|off, weight=W, down=VALUE (or down=KEY=VALUE), exclude=POD, decode+N@VALUE, prefill+N@VALUE, router-mode=MODE, temperature=T, overlap-score-credit=X, overlap-score-credit-decay=X, prefill-load-scale=X, decode-active-request-weight=X, dynamo-version=V"

// ParseVariant parses a comma-separated list of what-ifs, e.g.
// "enforcement=preferred,weight=0.3" or "down=us-east-1a" or
// "decode+2@us-east-1c".
func ParseVariant(spec string) (Variant, error) {
	v := Variant{Spec: strings.TrimSpace(spec)}
	if v.Spec == "" {
		return v, fmt.Errorf("empty --variant: give one or more of %s", VariantKeys)
	}
	bad := func(part, why string) error {
		return fmt.Errorf("--variant %q: %q %s (accepted: %s)", spec, part, why, VariantKeys)
	}
	num := func(part, s string, lo, hi float64) (*float64, error) {
		f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < lo || f > hi {
			return nil, bad(part, fmt.Sprintf("needs a number between %g and %g", lo, hi))
		}
		return &f, nil
	}
	for part := range strings.SplitSeq(spec, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if role, rest, ok := cutAdd(part); ok {
			n, val, ok := strings.Cut(rest, "@")
			count, err := strconv.Atoi(strings.TrimSpace(n))
			if !ok || err != nil || count < 1 || count > maxAdded || strings.TrimSpace(val) == "" {
				return v, bad(part, fmt.Sprintf("is not ROLE+N@VALUE with 1 ≤ N ≤ %d, e.g. decode+2@us-east-1c", maxAdded))
			}
			if added := v.added() + count; added > maxAdded {
				return v, fmt.Errorf("--variant %q adds %d workers in all: a variant adds at most %d, in all its ROLE+N@VALUE clauses together; split it into several variants", spec, added, maxAdded)
			}
			v.Add = append(v.Add, AddWorkers{Role: role, Count: count, Value: strings.TrimSpace(val)})
			v.Changes = append(v.Changes, fmt.Sprintf("%d more %s worker(s) in %s", count, role, strings.TrimSpace(val)))
			continue
		}
		k, val, ok := strings.Cut(part, "=")
		k, val = strings.TrimSpace(strings.ToLower(k)), strings.TrimSpace(val)
		if !ok || val == "" {
			return v, bad(part, "is not KEY=VALUE")
		}
		switch k {
		case "enforcement":
			e, err := explain.ParseEnforcement(val)
			if err != nil {
				return v, bad(part, "must be required, preferred or off")
			}
			v.Knobs.Enforcement = &e
			v.Changes = append(v.Changes, "enforcement "+string(e))
		case "weight", "preferred-weight":
			f, err := num(part, val, 0, 1)
			if err != nil {
				return v, err
			}
			v.Knobs.PreferredWeight = f
			v.Changes = append(v.Changes, "preferred weight "+val)
		case "down", "domain-down":
			if dk, dv, ok := strings.Cut(val, "="); ok {
				d, err := explain.ParseDomainValue(dk + "=" + dv)
				if err != nil {
					return v, bad(part, "must be VALUE or KEY=VALUE")
				}
				v.DomainDown = append(v.DomainDown, d)
			} else {
				v.downValues = append(v.downValues, val)
			}
			v.Changes = append(v.Changes, val+" down")
		case "exclude", "exclude-worker":
			v.ExcludeWorkers = append(v.ExcludeWorkers, val)
			v.Changes = append(v.Changes, "without "+val)
		case "router-mode":
			m, err := routecore.ParseRouterMode(val)
			if err != nil {
				return v, bad(part, err.Error())
			}
			v.Knobs.RouterMode = &m
			v.Changes = append(v.Changes, "router mode "+string(m))
		case "temperature":
			f, err := num(part, val, 0, 1e6)
			if err != nil {
				return v, err
			}
			v.Knobs.Temperature = f
			v.Changes = append(v.Changes, "temperature "+val)
		case "overlap-score-credit":
			f, err := num(part, val, 0, 1e6)
			if err != nil {
				return v, err
			}
			v.Knobs.OverlapScoreCredit = f
			v.Changes = append(v.Changes, "overlap credit "+val)
		case "overlap-score-credit-decay":
			f, err := num(part, val, 0, 1e6)
			if err != nil {
				return v, err
			}
			v.Knobs.OverlapScoreCreditDecay = f
			v.Changes = append(v.Changes, "credit decay "+val)
		case "prefill-load-scale":
			f, err := num(part, val, 0, 1e6)
			if err != nil {
				return v, err
			}
			v.Knobs.PrefillLoadScale = f
			v.Changes = append(v.Changes, "prefill load scale "+val)
		case "decode-active-request-weight":
			f, err := num(part, val, 0, 1e6)
			if err != nil {
				return v, err
			}
			v.Knobs.DecodeActiveRequestWeight = f
			v.Changes = append(v.Changes, "active-request weight "+val)
		case "dynamo-version":
			rel, err := behavior.ParseRelease(val)
			if err != nil {
				return v, bad(part, err.Error())
			}
			p := rel.Profile()
			v.Knobs.Profile = &p
			v.DynamoVersion = val
			v.Changes = append(v.Changes, "Dynamo "+val)
		default:
			return v, bad(part, "has an unknown key")
		}
	}
	if len(v.Changes) == 0 {
		return v, fmt.Errorf("--variant %q changes nothing: give one or more of %s", spec, VariantKeys)
	}
	return v, nil
}

// added is the number of workers the variant adds so far.
func (v Variant) added() int {
	n := 0
	for _, a := range v.Add {
		n += a.Count
	}
	return n
}

func cutAdd(part string) (model.Role, string, bool) {
	for _, r := range []model.Role{model.RoleDecode, model.RolePrefill, model.RoleAggregated} {
		if rest, ok := strings.CutPrefix(part, string(r)+"+"); ok {
			return r, rest, true
		}
	}
	return "", "", false
}

// merge lays the variant's knobs over the base knobs (the command's flags).
func mergeKnobs(base, v explain.Knobs) explain.Knobs {
	out := base
	setF := func(dst **float64, src *float64) {
		if src != nil {
			*dst = src
		}
	}
	setF(&out.OverlapScoreCredit, v.OverlapScoreCredit)
	setF(&out.OverlapScoreCreditDecay, v.OverlapScoreCreditDecay)
	setF(&out.PrefillLoadScale, v.PrefillLoadScale)
	setF(&out.DecodeActiveRequestWeight, v.DecodeActiveRequestWeight)
	setF(&out.Temperature, v.Temperature)
	setF(&out.PreferredWeight, v.PreferredWeight)
	if v.Enforcement != nil {
		out.Enforcement = v.Enforcement
	}
	if v.RouterMode != nil {
		out.RouterMode = v.RouterMode
	}
	if v.Profile != nil {
		out.Profile = v.Profile
	}
	return out
}

// apply returns the deployment with the variant's added workers (a copy;
// the input is not changed) and explain options with its what-ifs.
func (v Variant) apply(dep *model.Deployment, base explain.Options) (*model.Deployment, explain.Options, error) {
	o := base
	o.Knobs = mergeKnobs(base.Knobs, v.Knobs)
	if v.DynamoVersion != "" {
		o.DynamoVersion = v.DynamoVersion
	}
	o.WhatIf.ExcludeWorkers = append(append([]string(nil), base.WhatIf.ExcludeWorkers...), v.ExcludeWorkers...)
	o.WhatIf.DomainDown = append(append([]explain.DomainValue(nil), base.WhatIf.DomainDown...), v.DomainDown...)
	for _, val := range v.downValues {
		if dep.Policy == nil || dep.Policy.Domain == "" {
			return nil, o, fmt.Errorf("--variant %q: down=%s needs a transfer domain, and %s has no kvTransferPolicy; name the key: down=KEY=%s (a node or pod label)", v.Spec, val, dep.Key(), val)
		}
		o.WhatIf.DomainDown = append(o.WhatIf.DomainDown, explain.DomainValue{Key: dep.Policy.Domain, Value: val})
	}
	if len(v.Add) == 0 {
		return dep, o, nil
	}
	d := *dep
	d.Workers = append([]model.Worker(nil), dep.Workers...)
	var maxID routecore.WorkerID
	for _, w := range dep.Workers {
		for _, in := range w.Instances {
			maxID = max(maxID, in.ID)
		}
	}
	domain := ""
	if dep.Policy != nil {
		domain = dep.Policy.Domain
	}
	for _, a := range v.Add {
		tpl := template(dep, a.Role, a.Value)
		if tpl == nil {
			return nil, o, fmt.Errorf("--variant %q: %s has no %s worker that publishes an instance to clone for %s+%d@%s", v.Spec, dep.Key(), a.Role, a.Role, a.Count, a.Value)
		}
		for i := range a.Count {
			w := *tpl
			w.Pod = fmt.Sprintf("sim-%s-%s-%d", a.Role, a.Value, i+1)
			w.Replica, w.Leader, w.Ready, w.Pending = w.Pod, true, true, nil
			w.Domain = model.DomainValues{Published: a.Value, PublishedDomain: domain, Pod: a.Value}
			w.Instances = make([]model.Instance, 0, 1)
			for _, in := range tpl.Instances {
				if in.ID == 0 {
					continue
				}
				maxID++
				in.ID = maxID
				in.Load = nil
				in.Source = "simulate: cloned from " + tpl.Pod
				rc := in.Runtime
				rc.TopologyDomains = map[string]string{}
				for k, val := range in.Runtime.TopologyDomains {
					rc.TopologyDomains[k] = val
				}
				if domain != "" {
					rc.TopologyDomains[domain] = a.Value
				}
				in.Runtime = rc
				w.Instances = append(w.Instances, in)
				break
			}
			d.Workers = append(d.Workers, w)
		}
	}
	return &d, o, nil
}

// template picks the worker to clone: a ready worker of the role with an
// instance, preferring one in the value, then the first by pod name.
func template(dep *model.Deployment, role model.Role, value string) *model.Worker {
	var first *model.Worker
	for i := range dep.Workers {
		w := &dep.Workers[i]
		if w.Role != role || len(w.Instances) == 0 {
			continue
		}
		if w.Domain.Effective() == value {
			return w
		}
		if first == nil {
			first = w
		}
	}
	return first
}

// check compares the variant with the deployment as it is, before anything
// is replayed: the what-ifs that change nothing (a preferred weight where no
// prefill worker runs preferred enforcement, an enforcement or a router mode
// the deployment already has) and the domain values an added worker makes
// new. A variant all of whose what-ifs change nothing is an error (it would
// replay the deployment as it is under another name); otherwise each is a
// note, as is a new domain value (allowed: it models a new zone).
func (v Variant) check(dep *model.Deployment, base, plan *explain.Plan) ([]string, error) {
	var notes, noops []string
	// The prefill workers' effective enforcement, as deployed and in the variant.
	enforcements := func(p *explain.Plan) map[routecore.KvTransferEnforcement]int {
		out := map[routecore.KvTransferEnforcement]int{}
		prefill, _ := p.Pools()
		for _, w := range prefill {
			e := w.Runtime.KvTransferEnforcement
			if w.Runtime.KvTransferDomain == "" {
				e = routecore.EnforcementNone
			}
			out[e]++
		}
		return out
	}
	describe := func(m map[routecore.KvTransferEnforcement]int) string {
		var parts []string
		for _, e := range []routecore.KvTransferEnforcement{routecore.EnforcementRequired, routecore.EnforcementPreferred, routecore.EnforcementNone} {
			if n := m[e]; n > 0 {
				name := string(e)
				if e == routecore.EnforcementNone {
					name = "no topology-aware transfer"
				}
				parts = append(parts, fmt.Sprintf("%d %s", n, name))
			}
		}
		if len(parts) == 0 {
			return "there is no prefill worker"
		}
		return "they run " + strings.Join(parts, ", ")
	}
	before, after := enforcements(base), enforcements(plan)
	if v.Knobs.PreferredWeight != nil && after[routecore.EnforcementPreferred] == 0 {
		noops = append(noops, fmt.Sprintf("weight=%g changes nothing: the preferred weight applies to prefill workers under preferred enforcement, and none is (%s); add enforcement=preferred to the variant",
			*v.Knobs.PreferredWeight, describe(after)))
	}
	if e := v.Knobs.Enforcement; e != nil {
		want := routecore.KvTransferEnforcement(*e)
		if *e == explain.EnforcementOff {
			want = routecore.EnforcementNone
		}
		switch {
		case len(before) == 0:
			noops = append(noops, fmt.Sprintf("enforcement=%s changes nothing: the deployment has no prefill worker", *e))
		case len(before) == 1 && before[want] > 0:
			noops = append(noops, fmt.Sprintf("enforcement=%s changes nothing: every prefill worker already runs it", *e))
		}
	}
	if m := v.Knobs.RouterMode; m != nil {
		if mode, known := base.Mode(); known && mode == *m {
			noops = append(noops, fmt.Sprintf("router-mode=%s changes nothing: the frontend already runs it", *m))
		}
	}
	if len(v.Add) > 0 {
		values := map[string]bool{}
		var list []string
		for _, w := range dep.Workers {
			if val := w.Domain.Effective(); val != "" && !values[val] {
				values[val] = true
				list = append(list, val)
			}
		}
		slices.Sort(list)
		key := "domain"
		if dep.Policy != nil && dep.Policy.Domain != "" {
			key = dep.Policy.Domain
		}
		for _, a := range v.Add {
			switch {
			case dep.Policy == nil || dep.Policy.Domain == "":
				notes = append(notes, fmt.Sprintf("%s+%d@%s: %s has no transfer domain, so %s only names the added workers", a.Role, a.Count, a.Value, dep.Key(), a.Value))
			case !values[a.Value]:
				notes = append(notes, fmt.Sprintf("%s+%d@%s: %s is a new %s value (the deployment's are %s): the added workers form a %s of their own; check the spelling if you meant an existing one",
					a.Role, a.Count, a.Value, a.Value, key, strings.Join(list, ", "), key))
			}
		}
	}
	if len(noops) > 0 && len(noops) == len(v.Changes) {
		why := make([]string, len(noops))
		for i, n := range noops {
			why[i] = strings.Replace(n, " changes nothing:", ":", 1)
		}
		return nil, &explain.InputError{Msg: fmt.Sprintf("--variant %q changes nothing — %s", v.Spec, strings.Join(why, "; ")),
			Hint: "Each variant must change something the deployment does not already do (" + VariantKeys + ")"}
	}
	return append(noops, notes...), nil
}

// Deployment is the deployment as the variant changes it, for an export to a
// simulator that reads a deployment but not kubectl-dynamo's what-ifs
// (DynoSim): its added workers, without the workers it excludes or takes
// down in the transfer domain. knobs are its router settings; notes say what
// of it the deployment cannot carry (enforcement and weight, a Dynamo
// release, a domain down by another label).
func (v Variant) Deployment(dep *model.Deployment) (*model.Deployment, explain.Knobs, []string, error) {
	out, _, err := v.apply(dep, explain.Options{})
	if err != nil {
		return nil, v.Knobs, nil, err
	}
	var notes []string
	d := *out
	d.Workers = nil
	down := map[string]bool{}
	for _, val := range v.downValues {
		down[val] = true
	}
	for _, dv := range v.DomainDown {
		if dep.Policy != nil && dv.Key == dep.Policy.Domain {
			down[dv.Value] = true
		} else {
			notes = append(notes, fmt.Sprintf("down=%s=%s: the workers of a node or pod label's value are not taken out of the export", dv.Key, dv.Value))
		}
	}
	for _, w := range out.Workers {
		if slices.Contains(v.ExcludeWorkers, w.Pod) || down[w.Domain.Effective()] {
			continue
		}
		d.Workers = append(d.Workers, w)
	}
	if v.Knobs.Enforcement != nil || v.Knobs.PreferredWeight != nil {
		notes = append(notes, "the variant's transfer enforcement and preferred weight have no DynoSim counterpart (it models no topology)")
	}
	if v.DynamoVersion != "" {
		notes = append(notes, "dynamo-version="+v.DynamoVersion+": DynoSim simulates its own Dynamo release")
	}
	return &d, v.Knobs, notes, nil
}
