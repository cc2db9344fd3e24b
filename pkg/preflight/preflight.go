package preflight

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/analysis"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/analysis/health"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/behavior"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
)

// Options are the inputs of Check.
type Options struct {
	// Manifests are the DynamoGraphDeployments to check, with their namespace
	// already resolved.
	Manifests []Manifest
	// Cluster is the cluster to predict against; nil checks the manifests only.
	Cluster *Cluster
	// Context names the cluster (kubeconfig context or capture file).
	Context string
	// Sources and Notes are carried into the report.
	Sources []model.SourceStatus
	Notes   []model.Note
	// DynamoVersion overrides the Dynamo release the manifests are checked
	// for (--dynamo-version); "" reads it from their images (pkg/behavior).
	DynamoVersion string
}

// Check validates each manifest and, with a cluster, predicts where its
// replicas can land and which transfer-domain values end up with prefill and
// no decode. It never fails: whatever cannot be read becomes a finding or a note.
func Check(o Options) *Report {
	r := &Report{APIVersion: analysis.ReportAPIVersion, Kind: Kind, Context: o.Context, Sources: o.Sources, Notes: o.Notes,
		Deployments: []DeploymentReport{}, Findings: []Finding{}}
	if o.Cluster != nil {
		r.Cluster = o.Cluster.summary()
		r.Notes = append(r.Notes, o.Cluster.Notes...)
	} else {
		r.Notes = append(r.Notes, model.Note{Severity: model.NoteInfo, Source: "manifest",
			Message: "no cluster was read (--no-cluster, or no kubeconfig, and no --nodes-from): only the manifests were validated; node selectors, taints, GPU capacity and domain labels were not checked"})
	}
	first := map[string]Manifest{}
	for _, m := range o.Manifests {
		dr, fs, notes := checkOne(m, o.Cluster, o.DynamoVersion)
		id := m.Object.GetNamespace() + "/" + m.Object.GetName()
		if prev, dup := first[id]; dup {
			fs = append(fs, duplicateFinding(m, prev))
		} else {
			first[id] = m
		}
		r.Deployments = append(r.Deployments, dr)
		r.Findings = append(r.Findings, fs...)
		r.Notes = append(r.Notes, notes...)
	}
	slices.SortStableFunc(r.Findings, func(a, b Finding) int {
		return cmp.Or(cmp.Compare(b.Severity.Rank(), a.Severity.Rank()), cmp.Compare(a.Namespace, b.Namespace),
			cmp.Compare(a.Deployment, b.Deployment), cmp.Compare(a.ID, b.ID), cmp.Compare(a.Domain, b.Domain), cmp.Compare(a.Message, b.Message))
	})
	for i := range r.Deployments {
		d := &r.Deployments[i]
		for j := range d.Domains {
			for _, f := range r.Findings {
				if f.Namespace == d.Namespace && f.Deployment == d.Name && f.Domain == d.Domains[j].Value && f.Domain != "" && !slices.Contains(d.Domains[j].Flags, f.ID) {
					d.Domains[j].Flags = append(d.Domains[j].Flags, f.ID)
				}
			}
		}
	}
	return r
}

// duplicateFinding: m defines the DGD prev already defines. kubectl apply
// applies both, the later replacing the earlier; kustomize, Argo CD and Flux
// refuse two objects with one identity.
func duplicateFinding(m, prev Manifest) Finding {
	where := prev.Source
	if l := prev.lineOf("metadata.name"); l > 0 {
		where = fmt.Sprintf("%s:%d", prev.Source, l)
	}
	return Finding{Finding: model.Finding{ID: FindingDuplicateDeployment, Severity: model.SeverityWarning, Deployment: m.Object.GetName(), Namespace: m.Object.GetNamespace(),
		Message: fmt.Sprintf("DynamoGraphDeployment %s/%s is also defined at %s: kubectl apply applies both, the later replacing the earlier; kustomize, Argo CD and Flux refuse two objects with one identity",
			m.Object.GetNamespace(), m.Object.GetName(), where),
		Hint:    "keep one definition (or give them different names or namespaces)",
		Objects: []string{"dynamographdeployment/" + m.Object.GetName()}}, Certainty: Certain, File: m.Source, Line: m.lineOf("metadata.name"), Field: "metadata.name"}
}

// checker holds the state of one deployment's check.
type checker struct {
	man      *Manifest
	u        *unstructured.Unstructured
	cl       *Cluster
	comps    []*component
	m        *modelled
	dr       DeploymentReport
	findings []Finding
	notes    []model.Note
	// policy is usable for the domain analysis.
	policy  *model.TransferPolicy
	nodeKey string
	// levels of the placement topology object (broadest first), when known.
	levels []model.TopologyLevel
	// values per component name (nil: any); eligible nodes per component.
	values   map[string][]string
	anyValue map[string]bool
	eligible map[string][]*Node
	// alone is how many replicas of each component fit on its nodes by
	// itself (a component short alone has its own finding).
	alone map[string]int32
	// rd is how Dynamo will treat the deployment once it runs (pkg/behavior),
	// at dynamoVersion (or the release its images tell).
	rd            *behavior.Reading
	dynamoVersion string
	// pathway is whether the operator renders the DGD through Grove; life
	// what applying the manifest does (create, update, unknown).
	pathway pathway
	life    lifecycle
}

func (c *checker) add(id string, sev model.Severity, cert Certainty, domain, msg, hint string, objects ...string) {
	c.addAt("", id, sev, cert, domain, msg, hint, objects...)
}

// addAt adds a finding about the field at path (a component's path for a
// finding about the component).
func (c *checker) addAt(path, id string, sev model.Severity, cert Certainty, domain, msg, hint string, objects ...string) {
	c.findings = append(c.findings, Finding{Finding: model.Finding{ID: id, Severity: sev, Deployment: c.u.GetName(), Namespace: c.u.GetNamespace(),
		Domain: domain, Message: msg, Hint: hint, Objects: objects}, Certainty: cert, Field: path})
}

// locate sets each finding's file and line from its field.
func (c *checker) locate() {
	for i := range c.findings {
		f := &c.findings[i]
		f.File = c.man.Source
		f.Line = c.man.lineOf(f.Field)
	}
}

func (c *checker) dgdObject() string { return "dynamographdeployment/" + c.u.GetName() }

// manifestHealthIDs are the routing-health findings a manifest alone decides
// (its engine args and env, its declared frontend replicas); the others need
// running workers, their cards or their loads.
var manifestHealthIDs = []string{health.FindingKvEventsNotPublished, health.FindingRouterReplicasNotSynced}

// checkRoutingHealth runs topology's routing-health rules (pkg/analysis/health)
// over the modelled deployment, with the same ids: a KV router over workers
// whose args publish no KV events, or KV frontends without replica sync, are
// caught before the manifest is applied.
func (c *checker) checkRoutingHealth() {
	if c.m == nil || c.m.snap == nil {
		return
	}
	for _, f := range health.FindingsWith(c.m.snap, health.Options{DynamoVersion: c.dynamoVersion}) {
		if f.Deployment != c.u.GetName() || f.Namespace != c.u.GetNamespace() || !slices.Contains(manifestHealthIDs, f.ID) {
			continue
		}
		c.findings = append(c.findings, Finding{Finding: f, Certainty: Certain})
	}
}

func checkOne(man Manifest, cl *Cluster, dynamoVersion string) (DeploymentReport, []Finding, []model.Note) {
	u := man.Object
	c := &checker{man: &man, u: u, cl: cl, values: map[string][]string{}, anyValue: map[string]bool{}, eligible: map[string][]*Node{}, alone: map[string]int32{}}
	c.dr = DeploymentReport{Name: u.GetName(), Namespace: u.GetNamespace(), APIVersion: u.GetAPIVersion(), Source: man.Source, Components: []ComponentReport{}}
	// Strict decoding first (kubectl apply's default): an unknown field or a
	// wrong type is reported where it is, and the parts it breaks are not
	// reported again as unreadable.
	strict := strictProblems(u.Object, strings.TrimPrefix(u.GetAPIVersion(), "nvidia.com/"))
	var readProblems []problem
	c.comps = components(u, func(path, msg string) {
		readProblems = append(readProblems, problem{id: FindingInvalidManifest, path: path, msg: msg, decode: true})
	})
	var topologies []*unstructured.Unstructured
	if cl != nil {
		topologies = cl.Topologies
	}
	m, err := buildModel(u, c.comps, topologies)
	// The webhook's rules follow the release the manifest is checked for
	// (pkg/behavior): its images, else --dynamo-version, else the newest.
	var rel behavior.Release
	if err == nil && m.dep != nil {
		rd, rerr := behavior.ReadPlanned(m.snap, m.dep, dynamoVersion)
		if rerr != nil {
			rd, _ = behavior.ReadPlanned(m.snap, m.dep, "")
		}
		c.rd, c.dynamoVersion = rd, dynamoVersion
		rel = rd.Release.Release
	} else if r, perr := behavior.ParseRelease(dynamoVersion); perr == nil {
		rel = r
	}
	switch {
	case man.ExistingChecked && man.Existing != nil:
		c.life = lifeUpdate
	case man.ExistingChecked:
		c.life = lifeCreate
	}
	c.pathway = pathwayOf(u, man.Existing)
	if p, ok := u.GetAnnotations()[annotationWorkloadProvider]; ok {
		c.notes = append(c.notes, model.Note{Severity: model.NoteInfo, Source: "manifest", Deployment: u.GetNamespace() + "/" + u.GetName(),
			Message: fmt.Sprintf("the manifest sets %s: %q, which the operator writes itself: on create it derives the provider from %s and replaces this value; on an existing DynamoGraphDeployment it may not change", annotationWorkloadProvider, p, annotationGrove)})
	}
	problems := slices.Concat(strict, readProblems, validateManifest(u, c.comps, rel, c.pathway))
	switch c.life {
	case lifeUpdate:
		problems = append(problems, validateUpdate(u, man.Existing, c.comps)...)
	case lifeCreate:
		// A CEL transition rule of v1beta1: restart is for existing DGDs.
		if _, has := u.Object["spec"].(map[string]any)["restart"]; has && strings.HasSuffix(u.GetAPIVersion(), "/v1beta1") {
			problems = append(problems, problem{id: FindingInvalidManifest, path: "spec.restart", msg: "spec.restart must be unset on create; set spec.restart.id after creation to request a restart"})
		}
	}
	policyBroken := false
	for _, p := range problems {
		if p.decode && slices.ContainsFunc(strict, func(s problem) bool {
			return s.path == p.path || strings.HasPrefix(s.path, p.path+".") || strings.HasPrefix(s.path, p.path+"[")
		}) {
			continue
		}
		id := p.id
		msg := fmt.Sprintf("%s: %s: the API server or the Dynamo operator's admission webhook rejects the DynamoGraphDeployment", p.path, p.msg)
		switch {
		case p.strict:
			msg = fmt.Sprintf("%s: %s (kubectl apply and the API server reject the DynamoGraphDeployment: strict field validation)", p.path, p.msg)
		case p.update:
			msg = fmt.Sprintf("%s: %s: the webhook rejects this update of the existing DynamoGraphDeployment", p.path, p.msg)
			if p.hint == "" {
				p.hint = "keep " + p.path + " as the existing DynamoGraphDeployment has it, or delete and recreate the DynamoGraphDeployment to change it"
			}
		}
		c.addAt(p.path, id, model.SeverityError, Certain, "", msg, cmp.Or(p.hint, "fix "+p.path+" in the manifest"), c.dgdObject())
		policyBroken = policyBroken || id == FindingInvalidPolicy
	}
	if err != nil || m.dep == nil {
		c.notes = append(c.notes, model.Note{Severity: model.NoteWarning, Source: "manifest", Deployment: u.GetNamespace() + "/" + u.GetName(),
			Message: fmt.Sprintf("the deployment could not be modelled (%v): roles and the policy are unknown", err)})
		c.locate()
		return c.dr, c.findings, c.notes
	}
	c.m = m
	d := m.dep
	c.dr.RouterMode = d.Router.Mode
	c.dr.Dynamo = c.rd.Release.Model()
	c.dr.PolicyInvalid = policyBroken
	if p := d.Policy; p != nil {
		c.dr.Policy = &model.PolicySummary{Domain: p.Domain, Enforcement: string(p.Enforcement), PreferredWeight: p.PreferredWeight,
			Mode: string(p.Mode), LabelKey: p.LabelKey, ClusterTopologyName: p.ClusterTopologyName}
		if !policyBroken && p.Domain != "" && p.Mode != "" {
			c.policy = p
			c.nodeKey = p.NodeLabelKey
			c.dr.NodeLabelKey = p.NodeLabelKey
		}
	}
	c.dr.PackDomain, _, _ = unstructured.NestedString(u.Object, "spec", "topologyConstraint", "packDomain")
	c.checkTopologyObjects()
	c.components()
	c.checkRoutingHealth()
	if cl != nil {
		c.place()
		c.checkDomainLabel()
	}
	c.checkRouter()
	c.checkReadiness()
	if c.policy != nil {
		c.domains()
	}
	c.locate()
	return c.dr, c.findings, c.notes
}

// role is pkg/build's role for a component ("" for non-workers).
func (c *checker) role(k *component) (model.Role, string) {
	if w, ok := c.m.roles[strings.ToLower(k.name)]; ok {
		return w.Role, w.RoleSignal
	}
	return "", ""
}

func (c *checker) components() {
	for _, k := range c.comps {
		c.checkImages(k)
		cr := ComponentReport{Name: k.name, Type: k.ctype, Replicas: k.replicas, NodesPerReplica: k.nodes, GPUsPerPod: k.gpus,
			PackDomain: k.packDomain, Constraints: describe(&k.pod)}
		role, signal := c.role(k)
		cr.Role, cr.RoleSignal = string(role), signal
		if role == "" {
			cr.Role = cmp.Or(k.ctype, "-")
		}
		if role == model.RoleUnknown {
			c.addAt(k.path, analysis.FindingWorkerRoleUnknown, model.SeverityWarning, Certain, "",
				fmt.Sprintf("component %s: its role could not be decided from the component type, sub-component type, --disaggregation-mode arg or name, so it is counted neither as prefill nor as decode", k.name),
				"give the component type: prefill|decode (v1beta1) or subComponentType, or pass --disaggregation-mode", c.dgdObject())
		}
		c.dr.Components = append(c.dr.Components, cr)
	}
}

// checkImages: an image reference that still holds a template placeholder
// (${VERSION}, $(TAG), {{ .Values.tag }}; upstream's example manifests ship
// some for envsubst) is accepted by the API server, but the kubelet cannot
// pull it (InvalidImageName): the pods never start.
func (c *checker) checkImages(k *component) {
	for _, list := range []struct {
		field string
		cs    []corev1.Container
	}{{"containers", k.pod.Containers}, {"initContainers", k.pod.InitContainers}} {
		for i, ct := range list.cs {
			if !strings.Contains(ct.Image, "${") && !strings.Contains(ct.Image, "$(") && !strings.Contains(ct.Image, "{{") {
				continue
			}
			path := fmt.Sprintf("%s.podTemplate.spec.%s[%d].image", k.path, list.field, i)
			if strings.HasSuffix(c.u.GetAPIVersion(), "/v1alpha1") {
				path = k.path + ".extraPodSpec"
			}
			c.addAt(path, FindingImageNotRendered, model.SeverityWarning, Certain, "",
				fmt.Sprintf("component %s: image %q still holds a template placeholder: the API server accepts it, but the kubelet cannot pull it (InvalidImageName) and the pods never start; nor can the Dynamo release be read from its tag", k.name, ct.Image),
				"render the manifest before applying it (envsubst, helm template, kustomize), or write the tag", c.dgdObject())
		}
	}
}

// checkTopologyObjects checks the Grove objects the policy and the placement
// name, against the cluster's.
func (c *checker) checkTopologyObjects() {
	spec, _ := c.u.Object["spec"].(map[string]any)
	placeName := ""
	for _, f := range []string{"clusterTopologyName", "topologyProfile"} {
		if v, _, _ := unstructured.NestedString(spec, "topologyConstraint", f); v != "" {
			placeName = v
			break
		}
	}
	p := c.m.dep.Policy
	policyName := ""
	if p != nil && p.Mode == model.PolicyClusterTopologyName {
		policyName = p.ClusterTopologyName
	}
	if c.cl == nil || (placeName == "" && policyName == "") {
		return
	}
	if !c.cl.GroveServed {
		c.addAt(cmp.Or(policyPathIf(policyName, ".clusterTopologyName"), "spec.topologyConstraint"), analysis.FindingTopologyObjectMissing, model.SeverityError, Certain, "",
			fmt.Sprintf("the DynamoGraphDeployment names the Grove topology %q but Grove is not installed (neither clustertopologybindings.grove.io nor clustertopologies.grove.io is served): the webhook rejects it", cmp.Or(policyName, placeName)),
			"install Grove and create the ClusterTopologyBinding, or use kvTransferPolicy.labelKey without topologyConstraint", c.dgdObject())
		c.policy = nil
		return
	}
	if !c.cl.TopologiesKnown {
		return
	}
	// Which kinds the release's webhook reads (rule grove-topology-kind).
	kinds := []string{"ClusterTopologyBinding", "ClusterTopology"}
	era := behavior.At(behavior.RuleTopologyKind, c.rd.Release.Release)
	if era.Key == behavior.EraBindingOnly {
		kinds = kinds[:1]
	}
	legacyOnly := func(name string) string {
		if len(kinds) > 1 {
			return ""
		}
		for _, t := range c.cl.Topologies {
			if t.GetKind() == "ClusterTopology" && t.GetName() == name {
				return fmt.Sprintf(" (the cluster has a ClusterTopology %q, the object's name before Grove #616, which the webhook of %s no longer reads: rule %s, %s)", name, releaseName(c.rd), behavior.RuleTopologyKind, era.Range())
			}
		}
		return ""
	}
	find := func(name string) (string, []model.TopologyLevel, bool) {
		for _, kind := range kinds {
			for _, t := range c.cl.Topologies {
				if t.GetKind() == kind && t.GetName() == name {
					var ls []struct{ Domain, Key string }
					raw, _, _ := unstructured.NestedFieldNoCopy(t.Object, "spec", "levels")
					_ = convertAny(raw, &ls)
					var out []model.TopologyLevel
					for _, l := range ls {
						out = append(out, model.TopologyLevel{Domain: l.Domain, NodeLabelKey: l.Key})
					}
					return kind, out, true
				}
			}
		}
		return "", nil, false
	}
	domains := func(ls []model.TopologyLevel) string {
		var s []string
		for _, l := range ls {
			s = append(s, l.Domain)
		}
		return "[" + strings.Join(s, " ") + "]"
	}
	if policyName != "" {
		kind, ls, ok := find(policyName)
		switch {
		case !ok:
			c.addAt(policyPath+".clusterTopologyName", analysis.FindingTopologyObjectMissing, model.SeverityError, Certain, "",
				fmt.Sprintf("kvTransferPolicy.clusterTopologyName %q names no %s in the cluster: the webhook rejects the DynamoGraphDeployment on create (\"references a ClusterTopologyBinding resource that was not found\")%s", policyName, strings.Join(kinds, " or "), legacyOnly(policyName)),
				"create the topology object first, or fix clusterTopologyName", c.dgdObject())
			c.policy = nil
		case !slices.ContainsFunc(ls, func(l model.TopologyLevel) bool { return l.Domain == p.Domain }):
			c.addAt(policyPath+".domain", analysis.FindingTopologyObjectMissing, model.SeverityError, Certain, "",
				fmt.Sprintf("kvTransferPolicy.domain %q does not exist in %s %q; available domains: %s: the webhook rejects the DynamoGraphDeployment on create", p.Domain, kind, policyName, domains(ls)),
				"use one of the object's domains, or add a level for it", c.dgdObject())
			c.policy = nil
		}
	}
	if placeName == "" {
		return
	}
	kind, ls, ok := find(placeName)
	if !ok {
		c.addAt("spec.topologyConstraint", analysis.FindingTopologyObjectMissing, model.SeverityError, Certain, "",
			fmt.Sprintf("spec.topologyConstraint names the Grove topology %q, which is no %s in the cluster: the webhook rejects the DynamoGraphDeployment on create%s", placeName, strings.Join(kinds, " or "), legacyOnly(placeName)),
			"create the ClusterTopologyBinding first, or fix spec.topologyConstraint.clusterTopologyName", c.dgdObject())
		return
	}
	c.levels = ls
	index := func(dom string) int {
		return slices.IndexFunc(ls, func(l model.TopologyLevel) bool { return l.Domain == dom })
	}
	specPack := c.dr.PackDomain
	if specPack != "" && index(specPack) < 0 {
		c.addAt("spec.topologyConstraint.packDomain", analysis.FindingTopologyObjectMissing, model.SeverityError, Certain, "",
			fmt.Sprintf("spec.topologyConstraint.packDomain %q does not exist in %s %q; available domains: %s: the webhook rejects the DynamoGraphDeployment on create", specPack, kind, placeName, domains(ls)),
			"use one of the object's domains", c.dgdObject())
	}
	for _, k := range c.comps {
		if k.packDomain == "" {
			continue
		}
		switch i := index(k.packDomain); {
		case i < 0:
			c.addAt(k.path+".topologyConstraint.packDomain", analysis.FindingTopologyObjectMissing, model.SeverityError, Certain, "",
				fmt.Sprintf("%s.topologyConstraint.packDomain %q does not exist in %s %q; available domains: %s: the webhook rejects the DynamoGraphDeployment on create", k.path, k.packDomain, kind, placeName, domains(ls)),
				"use one of the object's domains", c.dgdObject())
		case specPack != "" && index(specPack) >= 0 && i < index(specPack):
			c.addAt(k.path+".topologyConstraint.packDomain", FindingInvalidManifest, model.SeverityError, Certain, "",
				fmt.Sprintf("%s.topologyConstraint.packDomain %q must be equal to or narrower than the deployment-level domain %q: the webhook rejects the DynamoGraphDeployment", k.path, k.packDomain, specPack),
				"use a narrower packDomain for the component", c.dgdObject())
		}
	}
}

// releaseName names the release a reading is at ("Dynamo 1.3.0", "the
// newest Dynamo").
func releaseName(rd *behavior.Reading) string {
	if rd != nil && rd.Release.Known {
		return "Dynamo " + rd.Release.Version
	}
	return "the newest Dynamo"
}

// policyPathIf is policyPath+field when the policy names a topology, else "".
func policyPathIf(name, field string) string {
	if name == "" {
		return ""
	}
	return policyPath + field
}

// packKey is the node label of a pack domain ("" when unknown).
func (c *checker) packKey(dom string) string {
	for _, l := range c.levels {
		if l.Domain == dom {
			return l.NodeLabelKey
		}
	}
	if c.policy != nil && dom == c.policy.Domain {
		return c.nodeKey
	}
	return ""
}

// packsDomain is true when packing at dom keeps pods in one value of the
// transfer domain (dom is the policy's domain or narrower).
func (c *checker) packsDomain(dom string) bool {
	if dom == "" || c.policy == nil {
		return false
	}
	if dom == c.policy.Domain {
		return true
	}
	pi := slices.IndexFunc(c.levels, func(l model.TopologyLevel) bool { return l.Domain == c.policy.Domain })
	di := slices.IndexFunc(c.levels, func(l model.TopologyLevel) bool { return l.Domain == dom })
	return pi >= 0 && di >= pi
}

// checkRouter: RouterNotKV, from the decode hop's mode as pkg/behavior reads
// it (the frontend's, or the decode workers' own --router-mode on releases
// whose workers publish it).
func (c *checker) checkRouter() {
	h := c.rd.Decode
	if c.m.dep.Policy == nil || h.Constraint != behavior.ConstraintIgnored {
		return
	}
	hint := "run the frontend with --router-mode kv (or DYN_ROUTER_MODE=kv)"
	if h.Override != nil {
		hint = "set the decode component's router mode to kv (" + h.Override.Source + ")"
	}
	c.addAt(policyPath, analysis.FindingRouterNotKV, model.SeverityWarning, Certain, "",
		fmt.Sprintf("the decode hop will route in %s mode (%s), not kv: the prefill router still derives the decode constraint from the prefill worker it picks, but the %s decode pick does not read routing constraints, so decode workers are picked without regard to the transfer domain", h.Mode, h.ModeSource, h.Mode),
		hint, c.dgdObject())
}

// checkReadiness: ModelNotReady (Dynamo 1.3 and later: a deployment with
// decode workers and no prefill component, or the reverse, is never ready)
// and DisaggNotActive (earlier releases: decode workers without prefill serve
// aggregated, or fail under --enforce-disagg).
func (c *checker) checkReadiness() {
	r := c.rd.Readiness
	var need []string
	for _, m := range r.Missing {
		need = append(need, string(m))
	}
	rel := "the newest Dynamo (release unknown)"
	if c.rd.Release.Known {
		rel = "Dynamo " + c.rd.Release.Version
	}
	switch {
	case !r.Ready && r.Era.Key == behavior.EraStrictNeeds && len(need) > 0:
		c.add(analysis.FindingModelNotReady, model.SeverityError, Certain, "",
			fmt.Sprintf("the deployment declares no %s component, and its other workers need one: on %s the frontend keeps the model unready and refuses every request with HTTP 503 (%s; rule %s, %s)", strings.Join(need, " or "), rel, r.Reason, behavior.RuleReadiness, r.Era.Range()),
			c.lifecycleHint(fmt.Sprintf("add a %s component (--enforce-disagg no longer changes this, #11160)", strings.Join(need, " and ")), "adding a component", ""), c.dgdObject())
	case !r.Ready && len(need) > 0:
		c.add(health.FindingDisaggNotActive, model.SeverityError, Certain, "",
			fmt.Sprintf("the deployment declares no prefill component and the frontend enforces disaggregation: on %s every request fails (%s)", rel, r.Reason),
			c.lifecycleHint("add a prefill component", "adding a component", "run the frontend without --enforce-disagg"), c.dgdObject())
	case r.Aggregated:
		c.add(health.FindingDisaggNotActive, model.SeverityWarning, Certain, "",
			fmt.Sprintf("the deployment declares decode workers and no prefill component: on %s every request runs aggregated on the decode workers (rule %s, %s)", rel, behavior.RuleReadiness, r.Era.Range()),
			c.lifecycleHint("add a prefill component", "adding a component", "declare the workers aggregated"), c.dgdObject())
	}
}

func plural(n int64, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

func list(items []string) string {
	if len(items) <= 4 {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:3], ", ") + fmt.Sprintf(" and %d more", len(items)-3)
}

func noneIfEmpty(v string) string { return cmp.Or(v, "<none>") }
