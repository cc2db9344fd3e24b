package preflight

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/analysis"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
)

// place decides, for every component, the nodes its pods may run on and the
// transfer-domain values they can land in, checks that its replicas fit (alone
// and all components together), and that a multinode replica fits in one value.
func (c *checker) place() {
	for i, k := range c.comps {
		f, _ := newFilter(&k.pod)
		reasons := map[string]int{}
		var el []*Node
		for _, n := range c.cl.Nodes {
			ok, why := f.matches(n)
			if ok && k.gpus > 0 && n.Allocatable < k.gpus {
				ok, why = false, fmt.Sprintf("fewer than %d allocatable nvidia.com/gpu", k.gpus)
			}
			if !ok {
				reasons[why]++
				continue
			}
			el = append(el, n)
		}
		c.eligible[k.name] = el
		n := len(el)
		c.dr.Components[i].EligibleNodes = &n
		if k.replicas == 0 {
			continue
		}
		c.alone[k.name] = k.replicas
		if len(el) == 0 {
			c.alone[k.name] = 0
			var rs []string
			for _, r := range slices.Sorted(maps.Keys(reasons)) {
				rs = append(rs, fmt.Sprintf("%d: %s", reasons[r], r))
			}
			c.addAt(k.path, FindingReplicasUnschedulable, model.SeverityError, c.nodeCertainty(), "",
				fmt.Sprintf("component %s: none of the %s can run its pods (%s): all %s stay Pending%s", k.name, c.nodesPhrase(), strings.Join(rs, ", "), plural(int64(k.replicas), "replica", "replicas"), c.partialCaveat()),
				"fix the component's nodeSelector, affinity or tolerations, or its nvidia.com/gpu request", c.dgdObject())
			continue
		}
		if k.gpus == 0 {
			continue
		}
		fit := fitAlone(k, el)
		c.alone[k.name] = fit
		if fit < k.replicas {
			free := int64(0)
			for _, n := range el {
				free += n.Free()
			}
			dom := ""
			if c.policy != nil {
				if vs := nodeValues(el, c.nodeKey); len(vs) == 1 {
					dom = vs[0]
				}
			}
			where := "on the nodes it may use"
			if dom != "" {
				where = fmt.Sprintf("in %s %s", c.policy.Domain, dom)
			}
			c.addAt(k.path+".replicas", FindingReplicasUnschedulable, model.SeverityError, c.nodeCertainty(), dom,
				fmt.Sprintf("component %s: %d of %d replicas fit: each pod requests %s %s, and the %s it may use %s have %d free (allocatable minus what running pods request): the rest stay Pending%s",
					k.name, fit, k.replicas, plural(k.gpus, "nvidia.com/gpu", "nvidia.com/gpu"), replicaShape(k), plural(int64(len(el)), "node", "nodes"), where, free, c.partialCaveat()),
				"lower the component's replicas or GPUs, widen its node constraints, or add GPU nodes there", c.dgdObject())
		}
		if k.multinode && c.policy != nil && c.nodeKey != "" {
			best := int32(0)
			for _, v := range nodeValues(el, c.nodeKey) {
				var in []*Node
				for _, n := range el {
					if n.Labels[c.nodeKey] == v && v != "" {
						in = append(in, n)
					}
				}
				best = max(best, fitAlone(&component{nodes: k.nodes, gpus: k.gpus, replicas: 1}, in))
			}
			if best == 0 {
				sev, what := model.SeverityWarning, fmt.Sprintf("so the scheduler spreads a replica's pods over several values of %s: the router sees only the leader's value, and the KV transfers of the other nodes' ranks cross the domain", c.policy.Domain)
				if c.packsDomain(k.packDomain) || c.packsDomain(c.dr.PackDomain) {
					sev, what = model.SeverityError, "and the component's packDomain requires one: its replicas stay Pending"
				}
				c.addAt(k.path+".multinode", FindingMultinodeReplicaExceedsDomain, sev, c.nodeCertainty(), "",
					fmt.Sprintf("component %s: one replica needs %d nodes with %s free each, and no %s has that room on the nodes it may use, %s%s", k.name, k.nodes, plural(k.gpus, "nvidia.com/gpu", "nvidia.com/gpu"), c.policy.Domain, what, c.partialCaveat()),
					fmt.Sprintf("give every %s enough GPU nodes for a whole replica, or lower multinode.nodeCount (more GPUs per node)", c.policy.Domain), c.dgdObject())
			}
		}
	}
	c.placeTogether()
}

func replicaShape(k *component) string {
	if k.nodes > 1 {
		return fmt.Sprintf("(%d pods per replica)", k.nodes)
	}
	return "(one pod per replica)"
}

// fitAlone counts the replicas of k that fit on the free GPUs of nodes.
func fitAlone(k *component, nodes []*Node) int32 {
	if k.gpus <= 0 {
		return k.replicas
	}
	slots := int64(0)
	for _, n := range nodes {
		slots = satAdd(slots, n.Free()/k.gpus)
	}
	return int32(min(int64(k.replicas), slots/int64(max(1, k.nodes))))
}

// satAdd and satMul add and multiply non-negative counts, saturating at the
// largest int64 instead of wrapping (a capture may claim 2^62 GPUs per node).
func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

func satMul(a, b int64) int64 {
	if a != 0 && b > math.MaxInt64/a {
		return math.MaxInt64
	}
	return a * b
}

// nodeValues are the values of key on nodes ("" for nodes without it), sorted.
func nodeValues(nodes []*Node, key string) []string {
	set := map[string]bool{}
	for _, n := range nodes {
		set[n.Labels[key]] = true
	}
	return slices.Sorted(maps.Keys(set))
}

// placeTogether places every component's replicas on the free GPUs in turn —
// the most constrained first — and records how many fit (the FITS column).
// When some do not, checkJoint looks for node sets on which the components
// that can only use them need more GPUs than are free: then no placement
// fits them, and the shortfall is certain. A deployment-level packDomain must
// fit in one of its values.
func (c *checker) placeTogether() {
	c.cl.reset()
	defer c.cl.reset()
	order := slices.Clone(c.comps)
	slices.SortStableFunc(order, func(a, b *component) int {
		return cmp.Or(cmp.Compare(len(c.eligible[a.name]), len(c.eligible[b.name])), cmp.Compare(b.gpus*int64(b.nodes), a.gpus*int64(a.nodes)))
	})
	fits := map[string]int32{}
	var short []string
	for _, k := range order {
		el := c.eligible[k.name]
		placed := placeReplicas(k, el)
		fits[k.name] = placed
		if k.gpus > 0 && placed < k.replicas && c.alone[k.name] >= k.replicas {
			short = append(short, fmt.Sprintf("%s (%d of %d)", k.name, placed, k.replicas))
		}
	}
	for i := range c.dr.Components {
		f := fits[c.dr.Components[i].Name]
		c.dr.Components[i].Fits = &f
	}
	c.cl.reset()
	if len(short) > 0 && !c.checkJoint() {
		c.add(FindingReplicasUnschedulable, model.SeverityWarning, Possible, "",
			fmt.Sprintf("each component fits alone, but not all together on the free GPUs of the nodes they share: placed one after the other, %s fit", strings.Join(short, ", ")),
			"add GPU nodes or lower replicas; the scheduler may place them differently, but the GPUs requested exceed what those nodes have free", c.dgdObject())
	}
	if pd := c.dr.PackDomain; pd != "" {
		key := c.packKey(pd)
		if key == "" {
			return
		}
		need := int64(0)
		for _, k := range c.comps {
			need = satAdd(need, satMul(satMul(max(k.gpus, 0), int64(max(k.nodes, 0))), int64(max(k.replicas, 0))))
		}
		best, bestVal := int64(0), ""
		for _, v := range nodeValues(c.cl.Nodes, key) {
			free := int64(0)
			for _, n := range c.cl.Nodes {
				if n.Labels[key] == v && v != "" {
					free = satAdd(free, n.Free())
				}
			}
			if free > best {
				best, bestVal = free, v
			}
		}
		if need > best {
			c.addAt("spec.topologyConstraint.packDomain", FindingReplicasUnschedulable, model.SeverityError, c.nodeCertainty(), "",
				fmt.Sprintf("spec.topologyConstraint.packDomain %s puts every pod of the deployment in one %s, and they request %d nvidia.com/gpu; the %s with the most room (%s) has %d free: the deployment stays Pending%s", pd, pd, need, pd, noneIfEmpty(bestVal), best, c.partialCaveat()),
				"pack at a broader domain, or lower replicas", c.dgdObject())
		}
	}
}

// jointSet is a set of nodes and the components that may only use them.
type jointSet struct {
	nodes []*Node
	comps []*component
	need  int64
	free  int64
}

// checkJoint applies Hall's condition to the GPUs: for candidate node sets
// (each component's eligible nodes, each value of the transfer domain or the
// zone label, and the unions of overlapping eligible sets), the components
// whose eligible nodes all lie in the set need their replicas' GPUs there; when
// that exceeds the set's free GPUs no placement fits them all, whatever the
// scheduler does. It reports the smallest such sets, each with its shortfall
// and its free GPUs per domain value, and returns whether it reported any.
// (GPUs are counted as a whole: a set may also fail by fragmentation, which
// the placement above shows as a possible shortage.)
func (c *checker) checkJoint() bool {
	var gpuComps []*component
	for _, k := range c.comps {
		if k.gpus > 0 && k.replicas > 0 && len(c.eligible[k.name]) > 0 {
			gpuComps = append(gpuComps, k)
		}
	}
	if len(gpuComps) == 0 {
		return false
	}
	key := c.domainKey()
	type cand = map[string]bool
	var cands []cand
	seen := map[string]bool{}
	addCand := func(nodes []*Node) {
		set := cand{}
		for _, n := range nodes {
			set[n.Name] = true
		}
		id := strings.Join(slices.Sorted(maps.Keys(set)), "\x00")
		if len(set) > 0 && !seen[id] {
			seen[id] = true
			cands = append(cands, set)
		}
	}
	var all []*Node
	for _, k := range gpuComps {
		addCand(c.eligible[k.name])
		all = append(all, c.eligible[k.name]...)
	}
	for i, a := range gpuComps {
		for _, b := range gpuComps[i+1:] {
			if overlaps(c.eligible[a.name], c.eligible[b.name]) {
				addCand(append(slices.Clone(c.eligible[a.name]), c.eligible[b.name]...))
			}
		}
	}
	addCand(all)
	if key != "" {
		for _, v := range nodeValues(all, key) {
			var in []*Node
			for _, n := range all {
				if n.Labels[key] == v {
					in = append(in, n)
				}
			}
			addCand(in)
		}
	}
	var bad []jointSet
	for _, set := range cands {
		js := jointSet{}
		for _, n := range c.cl.Nodes {
			if set[n.Name] {
				js.nodes = append(js.nodes, n)
				js.free = satAdd(js.free, n.Free())
			}
		}
		for _, k := range gpuComps {
			if !slices.ContainsFunc(c.eligible[k.name], func(n *Node) bool { return !set[n.Name] }) {
				js.comps = append(js.comps, k)
				js.need = satAdd(js.need, satMul(satMul(k.gpus, int64(max(k.nodes, 1))), int64(k.replicas)))
			}
		}
		// A component short by itself has its own finding.
		shortAlone := len(js.comps) == 1 && c.alone[js.comps[0].name] < js.comps[0].replicas
		if js.need > js.free && !shortAlone {
			bad = append(bad, js)
		}
	}
	slices.SortStableFunc(bad, func(a, b jointSet) int { return cmp.Compare(len(a.nodes), len(b.nodes)) })
	var reported []jointSet
	for _, js := range bad {
		superset := slices.ContainsFunc(reported, func(r jointSet) bool {
			return !slices.ContainsFunc(r.nodes, func(n *Node) bool { return !slices.Contains(js.nodes, n) })
		})
		if superset {
			continue
		}
		reported = append(reported, js)
		c.reportJoint(js, key)
	}
	return len(reported) > 0
}

func overlaps(a, b []*Node) bool {
	return slices.ContainsFunc(a, func(n *Node) bool { return slices.Contains(b, n) })
}

// domainKey is the node label the joint shortfall is broken down by: the
// transfer domain's, else the zone label when the nodes carry it.
func (c *checker) domainKey() string {
	if c.nodeKey != "" {
		return c.nodeKey
	}
	const zone = "topology.kubernetes.io/zone"
	if slices.ContainsFunc(c.cl.Nodes, func(n *Node) bool { return n.Labels[zone] != "" }) {
		return zone
	}
	return ""
}

// reportJoint raises the certain shortfall of one node set.
func (c *checker) reportJoint(js jointSet, key string) {
	var need []string
	names := make([]string, 0, len(js.comps))
	for _, k := range js.comps {
		names = append(names, k.name)
		need = append(need, fmt.Sprintf("%s %d × %s", k.name, k.replicas, plural(k.gpus*int64(max(k.nodes, 1)), "GPU", "GPUs")))
	}
	where := fmt.Sprintf("the %s they may use", plural(int64(len(js.nodes)), "node", "nodes"))
	dom := ""
	if key != "" {
		vals := nodeValues(js.nodes, key)
		free := map[string]int64{}
		for _, n := range js.nodes {
			free[n.Labels[key]] = satAdd(free[n.Labels[key]], n.Free())
		}
		var parts []string
		for _, v := range vals {
			parts = append(parts, fmt.Sprintf("%s %d free", noneIfEmpty(v), free[v]))
		}
		label := key
		if c.policy != nil && key == c.nodeKey {
			label = c.policy.Domain
		}
		if len(vals) == 1 && vals[0] != "" {
			dom = vals[0]
			where = fmt.Sprintf("the %s they may use, all in %s %s", plural(int64(len(js.nodes)), "node", "nodes"), label, dom)
		} else {
			where += fmt.Sprintf(" (%s: %s)", label, strings.Join(parts, ", "))
		}
	}
	c.addAt(js.comps[0].path+".replicas", FindingReplicasUnschedulable, model.SeverityError, c.nodeCertainty(), dom,
		fmt.Sprintf("%s need %d nvidia.com/gpu together (%s), and %s have %d free (allocatable minus what running pods request): %d short, so replicas stay Pending whatever the scheduler does%s",
			joinAnd(names), js.need, strings.Join(need, ", "), where, js.free, js.need-js.free, c.partialCaveat()),
		"lower the replicas or GPUs of these components, widen their node constraints, or add GPU nodes there", c.dgdObject())
}

func joinAnd(items []string) string {
	if len(items) <= 1 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

// placeReplicas places k's replicas one after the other, each pod on the node
// with the most free GPUs (the first such node on a tie), a replica whose
// pods do not all fit taking none, until one does not fit; it returns how
// many were placed and adds their GPUs to the nodes' planned.
//
// It computes that placement instead of performing it pod by pod, so its cost
// is per node, not per replica (a manifest may ask for 2^31-1 replicas; 24 such
// components took 104 s pod by pod). Each node's free GPUs f are slots of
// value f, f-g, f-2g, … down to g (g the pod's GPUs); picking the node with the
// most free GPUs picks the largest slot value left, so m pods take the m
// largest slot values, ties going to the earlier node. The threshold value is
// found by bisection.
func placeReplicas(k *component, nodes []*Node) int32 {
	if k.replicas <= 0 || len(nodes) == 0 {
		return 0
	}
	if k.gpus <= 0 || k.nodes <= 0 {
		return k.replicas
	}
	g, per := k.gpus, int64(k.nodes)
	free := make([]int64, len(nodes))
	top := int64(0)
	for i, n := range nodes {
		free[i] = n.Free()
		top = max(top, free[i])
	}
	// slotsFrom counts the slots of value at least v (v >= g), saturating
	// at limit.
	slotsFrom := func(v, limit int64) int64 {
		total := int64(0)
		for _, f := range free {
			if f >= v {
				total = satAdd(total, (f-v)/g+1)
				if total >= limit {
					return limit
				}
			}
		}
		return total
	}
	if top < g {
		return 0
	}
	slots := slotsFrom(g, math.MaxInt64)
	placed := min(int64(k.replicas), slots/per)
	pods := placed * per
	if pods == 0 {
		return 0
	}
	// The largest v with at least pods slots of value >= v.
	lo, hi := g, top
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		if slotsFrom(mid, pods) >= pods {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	v := lo
	left := pods
	// Every slot above v is taken, then the slots of value exactly v in node
	// order.
	if v < top {
		left -= slotsFrom(v+1, pods)
	}
	for i, n := range nodes {
		f := free[i]
		taken := int64(0)
		if f > v {
			taken = (f-v-1)/g + 1 // slots of value > v
		}
		if left > 0 && f >= v && (f-v)%g == 0 {
			taken++
			left--
		}
		n.planned += taken * g
	}
	return int32(placed)
}

// checkDomainLabel checks that the nodes carry the policy's node label.
func (c *checker) checkDomainLabel() {
	if c.policy == nil || c.nodeKey == "" {
		return
	}
	with := 0
	for _, n := range c.cl.Nodes {
		if _, ok := n.Labels[c.nodeKey]; ok {
			with++
		}
	}
	if with == 0 {
		c.addAt(policyPath, FindingDomainLabelMissing, model.SeverityError, c.nodeCertainty(), "",
			fmt.Sprintf("none of the %s carries the label %s that kvTransferPolicy reads for %s: the operator cannot copy a value to any worker pod, so every worker waits for /etc/dynamo/topology/%s and exits after 30 s%s", c.nodesPhrase(), c.nodeKey, c.policy.Domain, c.policy.Domain, c.partialCaveat()),
			fmt.Sprintf("label the GPU nodes (kubectl label node NODE %s=VALUE), or fix the policy's labelKey / topology level", c.nodeKey), c.dgdObject())
		c.policy = nil
		return
	}
	for _, k := range c.comps {
		if role, _ := c.role(k); role != model.RolePrefill && role != model.RoleDecode && role != model.RoleAggregated {
			continue
		}
		var without []string
		for _, n := range c.eligible[k.name] {
			if _, ok := n.Labels[c.nodeKey]; !ok {
				without = append(without, n.Name)
			}
		}
		if len(without) > 0 && k.replicas > 0 {
			c.addAt(k.path, FindingDomainLabelMissing, model.SeverityWarning, Possible, "",
				fmt.Sprintf("component %s may be scheduled on %s without the label %s (%s): a worker there gets no %s value (TopologyLabelMissing) and exits after 30 s", k.name, plural(int64(len(without)), "node", "nodes"), c.nodeKey, list(without), c.policy.Domain),
				fmt.Sprintf("add node affinity %s Exists to the component, or label those nodes", c.nodeKey), c.dgdObject())
		}
	}
}

// componentValues are the transfer-domain values k can land in; anyValue is true
// when every value is possible (no cluster and no pinning).
func (c *checker) componentValues(k *component) (vals []string, anyValue bool) {
	if c.cl == nil {
		if c.nodeKey == "" {
			return nil, true
		}
		vs, ok := pinnedValues(&k.pod, c.nodeKey)
		return vs, !ok
	}
	var room []*Node
	for _, n := range c.eligible[k.name] {
		if k.gpus == 0 || n.Free() >= k.gpus {
			room = append(room, n)
		}
	}
	return nodeValues(room, c.nodeKey), false
}

// domains predicts, for each value of the transfer domain, whether prefill and
// decode replicas land there, and raises the domain findings.
func (c *checker) domains() {
	var prefill, decode []roleComp
	universe := map[string]bool{}
	for i, k := range c.comps {
		role, _ := c.role(k)
		if role != model.RolePrefill && role != model.RoleDecode || k.replicas == 0 {
			continue
		}
		vals, anyValue := c.componentValues(k)
		c.dr.Components[i].Domains, c.dr.Components[i].AnyDomain = vals, anyValue
		rc := roleComp{k, vals, anyValue}
		if role == model.RolePrefill {
			prefill = append(prefill, rc)
		} else {
			decode = append(decode, rc)
		}
		for _, v := range vals {
			universe[v] = true
		}
	}
	if c.cl != nil {
		for _, v := range nodeValues(c.cl.Nodes, c.nodeKey) {
			if v != "" {
				universe[v] = true
			}
		}
	}
	if len(prefill) == 0 {
		return
	}
	pol := c.policy
	dom := pol.Domain
	required := pol.Enforcement != "preferred"
	sev := model.SeverityWarning
	if required {
		sev = model.SeverityError
	}
	coLocated := c.packsDomain(c.dr.PackDomain)
	may := func(rs []roleComp, v string) (names []string, certain bool) {
		for _, r := range rs {
			if r.any || slices.Contains(r.vals, v) {
				names = append(names, r.k.name)
				if !r.any && len(r.vals) == 1 {
					certain = true
				}
			}
		}
		return names, certain
	}
	presence := func(names []string, certain bool) string {
		switch {
		case certain:
			return PresenceCertain
		case len(names) > 0:
			return PresencePossible
		}
		return PresenceNever
	}
	values := slices.Sorted(maps.Keys(universe))
	anyP := slices.ContainsFunc(prefill, func(r roleComp) bool { return r.any })
	anyD := slices.ContainsFunc(decode, func(r roleComp) bool { return r.any })
	var uncertain []string
	for _, v := range values {
		if v == "" {
			continue
		}
		pn, pc := may(prefill, v)
		dn, dc := may(decode, v)
		c.dr.Domains = append(c.dr.Domains, DomainReport{Value: v, Prefill: presence(pn, pc), Decode: presence(dn, dc), PrefillComponents: pn, DecodeComponents: dn})
		if c.cl != nil {
			row := &c.dr.Domains[len(c.dr.Domains)-1]
			for _, n := range c.cl.Nodes {
				if n.Labels[c.nodeKey] == v {
					row.Nodes++
					row.FreeGPUs += n.Free()
				}
			}
		}
		switch {
		case coLocated:
		case len(pn) > 0 && len(dn) == 0:
			cert, how := Possible, "can land"
			if pc {
				cert, how = Certain, "lands"
				if !c.manifestDecides(prefill, decode, v) {
					cert = c.nodeCertainty()
				}
			}
			var what string
			if len(decode) > 0 {
				what = "no decode component can land there (" + c.decodeWhere(decode) + ")"
			} else {
				what = "the deployment has no decode component"
			}
			router := "every request prefilled there decodes in another " + dom + ", each KV transfer crossing domains"
			if required {
				router = "under required enforcement every request prefilled there fails with NoEndpoints"
			}
			c.addAt(c.compPath(pn[0]), analysis.FindingPrefillDomainWithoutDecode, sev, cert, v,
				fmt.Sprintf("%s %s: prefill (%s) %s there and %s: %s", dom, v, strings.Join(pn, ", "), how, what, router),
				c.lifecycleHint(fmt.Sprintf("add a decode component pinned to %s=%s (node affinity on %s), or set kvTransferPolicy.enforcement: preferred with a preferredWeight", dom, v, c.nodeKey),
					"adding a component and changing kvTransferPolicy",
					fmt.Sprintf("keep prefill out of %s %s, or widen an existing decode component's node affinity on %s to include %s (both allowed on update)", dom, v, c.nodeKey, v)),
				c.dgdObject())
		case len(pn) > 0 && !dc:
			uncertain = append(uncertain, v)
		case len(dn) > 0 && len(pn) == 0 && dc:
			cert := Certain
			if !c.manifestDecides(decode, prefill, v) {
				cert = c.nodeCertainty()
			}
			c.addAt(c.compPath(dn[0]), analysis.FindingDecodeDomainWithoutPrefill, model.SeverityWarning, cert, v,
				fmt.Sprintf("%s %s: decode (%s) lands there and no prefill component can: under required enforcement those decode workers get no request, under preferred only cross-domain ones", dom, v, strings.Join(dn, ", ")),
				fmt.Sprintf("add prefill capacity in %s=%s, or move the decode replicas to values that have prefill", dom, v), c.dgdObject())
		}
	}
	// Without a cluster, an unpinned component may land in values the manifest
	// does not name.
	if !coLocated && (anyP && !anyD || anyP && anyD && len(values) != 1 || len(uncertain) > 0) {
		if anyP && !anyD && len(decode) > 0 {
			c.addAt(policyPath, analysis.FindingPrefillDomainWithoutDecode, sev, Possible, "",
				fmt.Sprintf("prefill may land in any %s while decode is pinned to %s: a %s with prefill and no decode fails requests under required enforcement", dom, list(c.decodeValues(decode)), dom),
				fmt.Sprintf("pin prefill to the same values of %s as decode (node affinity), or add decode in every %s", c.nodeKey, dom), c.dgdObject())
			return
		}
		if len(uncertain) == 0 && c.cl != nil {
			return
		}
		if !required {
			sev = model.SeverityInfo
		} else {
			sev = model.SeverityWarning
		}
		scope := fmt.Sprintf("any of %d values of %s (%s)", len(uncertain), dom, list(uncertain))
		if c.cl == nil && len(uncertain) == 0 {
			scope = "any " + dom + " the cluster has"
		}
		outcome := "requests prefilled there fail with NoEndpoints"
		if !required {
			outcome = "requests prefilled there decode across domains"
		}
		c.addAt(policyPath, analysis.FindingPrefillDomainWithoutDecode, sev, Possible, "",
			fmt.Sprintf("placement is not constrained per %s: prefill and decode replicas may land in %s, so the scheduler may leave a %s with prefill and no decode replica, where %s", dom, scope, dom, outcome),
			c.lifecycleHint(fmt.Sprintf("pack the deployment into one %s (spec.topologyConstraint.packDomain: %s), or run decode per %s (one decode component per value, pinned with node affinity on %s, replicas >= 1 each)", dom, dom, dom, cmp.Or(c.nodeKey, "the domain label")),
				"adding spec.topologyConstraint and adding components",
				fmt.Sprintf("pin the existing prefill and decode components to the same values of %s with node affinity (allowed on update)", cmp.Or(c.nodeKey, "the domain label"))),
			c.dgdObject())
		for i := range c.dr.Domains {
			if slices.Contains(uncertain, c.dr.Domains[i].Value) {
				c.dr.Domains[i].Flags = append(c.dr.Domains[i].Flags, analysis.FindingPrefillDomainWithoutDecode)
			}
		}
	}
}

// compPath is the manifest path of the component named name.
func (c *checker) compPath(name string) string {
	for _, k := range c.comps {
		if k.name == name {
			return k.path
		}
	}
	return ""
}

// nodeCertainty is the certainty of a finding that rests on the nodes read:
// certain when they are all of the cluster's, possible when some may be
// missing (a capture holds only the nodes its deployments ran on).
func (c *checker) nodeCertainty() Certainty {
	if c.cl == nil || c.cl.NodesComplete {
		return Certain
	}
	return Possible
}

// nodesPhrase names the nodes a finding was decided on.
func (c *checker) nodesPhrase() string {
	if c.cl.NodesComplete {
		return plural(int64(len(c.cl.Nodes)), "node", "nodes")
	}
	return plural(int64(len(c.cl.Nodes)), "node", "nodes") + " the capture holds"
}

// partialCaveat says, on a finding that rests on absent nodes, that the
// capture may not hold them all.
func (c *checker) partialCaveat() string {
	if c.cl == nil || c.cl.NodesComplete {
		return ""
	}
	return " (possible: a capture holds only the nodes its deployments' pods ran on; give --nodes-from a full node list, kubectl get nodes -o yaml, for a certain answer)"
}

// manifestDecides reports whether the manifest alone puts one side (here:
// its components pinned to value v of the transfer domain by nodeSelector or
// required node affinity) in v and keeps every component of the other side
// out of it, whatever nodes the cluster has.
func (c *checker) manifestDecides(here, other []roleComp, v string) bool {
	pinned := false
	for _, r := range here {
		if vals, ok := pinnedValues(&r.k.pod, c.nodeKey); ok && len(vals) == 1 && vals[0] == v {
			pinned = true
		}
	}
	if !pinned {
		return false
	}
	for _, r := range other {
		vals, ok := pinnedValues(&r.k.pod, c.nodeKey)
		if !ok || slices.Contains(vals, v) {
			return false
		}
	}
	return true
}

// roleComp is a prefill or decode component and the values it can land in.
type roleComp struct {
	k    *component
	vals []string
	any  bool
}

// decodeWhere says where the decode components can land.
func (c *checker) decodeWhere(decode []roleComp) string {
	var parts []string
	for _, r := range decode {
		switch {
		case r.any:
			parts = append(parts, r.k.name+": any")
		case len(r.vals) == 0:
			parts = append(parts, r.k.name+": nowhere")
		default:
			parts = append(parts, r.k.name+": "+list(r.vals))
		}
	}
	return strings.Join(parts, "; ")
}

// decodeValues is the union of the decode components' values.
func (c *checker) decodeValues(decode []roleComp) []string {
	set := map[string]bool{}
	for _, r := range decode {
		for _, v := range r.vals {
			set[v] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}
