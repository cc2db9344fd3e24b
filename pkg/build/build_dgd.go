package build

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/cmdline"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
)

// bldDeployment is a Deployment being built.
type bldDeployment struct {
	u   *raw.DGD
	out model.Deployment
	src model.SourceKind
	// comps are the DGD's components by name.
	comps map[string]*bldComponent
	// env is the DGD-level env (v1beta1 spec.env, v1alpha1 spec.envs).
	env []raw.EnvVar
	// pods are the pods labelled with the DGD's name, by name.
	pods []*bldPod
	// workers and frontends are built from pods (and etcd instances).
	workers   []*bldWorker
	frontends []*bldPod
	// dynNamespaces are the Dynamo namespaces the deployment's workers use
	// (labels, env, spec, and the operator default <namespace>-<name>).
	dynNamespaces map[string]bool
	// specDynNamespace is the Dynamo namespace the v1alpha1 spec names.
	specDynNamespace string
}

// bldComponent is one DGD component with what its spec says about its main
// container.
type bldComponent struct {
	c   model.Component
	env []raw.EnvVar
	// command and args of the main container, unsplit.
	command, args []string
}

// bldComponentWire accepts both the v1beta1 component and the v1alpha1 service;
// the DGD's open-schema spec is read through JSON into core/v1 types, as the
// operator reads it (a malformed podTemplate makes the component unreadable).
type bldComponentWire struct {
	Name             string `json:"name"`
	Type             string `json:"type"`
	ComponentType    string `json:"componentType"`
	SubComponentType string `json:"subComponentType"`
	Replicas         *int32 `json:"replicas"`
	Multinode        *struct {
		NodeCount *int32 `json:"nodeCount"`
	} `json:"multinode"`
	PodTemplate  *corev1.PodTemplateSpec `json:"podTemplate"`
	Envs         []corev1.EnvVar         `json:"envs"`
	ExtraPodSpec *struct {
		MainContainer *corev1.Container `json:"mainContainer"`
	} `json:"extraPodSpec"`
	DynamoNamespace       *string `json:"dynamoNamespace"`
	GlobalDynamoNamespace bool    `json:"globalDynamoNamespace"`
}

type bldPolicyWire struct {
	LabelKey            string   `json:"labelKey"`
	ClusterTopologyName string   `json:"clusterTopologyName"`
	Domain              string   `json:"domain"`
	Enforcement         string   `json:"enforcement"`
	PreferredWeight     *float64 `json:"preferredWeight"`
}

// bldRecode converts an unstructured value into a typed one through JSON.
func bldRecode(v any, dst any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, dst)
}

// deployment builds the parts of a Deployment that come from the DGD and its
// pods; instances from etcd, roles and router configuration come later.
func (bd *bldBuilder) deployment(u *raw.DGD) *bldDeployment {
	d := &bldDeployment{u: u, src: bd.kubeSource(), comps: map[string]*bldComponent{}, dynNamespaces: map[string]bool{}}
	d.out = model.Deployment{Name: u.Name, Namespace: u.Namespace, APIVersion: u.APIVersion, Workers: []model.Worker{}}
	key := d.out.Key()
	spec := u.Spec
	if spec == nil {
		bd.note(d.src, key, "DynamoGraphDeployment %s has no spec; its components and policy are unknown", key)
	}
	bd.parsePolicy(d, spec)
	bd.parseComponents(d, spec)
	for _, field := range []string{"env", "envs"} {
		if v, ok := spec[field]; ok && v != nil {
			var env []corev1.EnvVar
			if err := bldRecode(v, &env); err != nil {
				bd.note(d.src, key, "DynamoGraphDeployment %s: spec.%s is not a list of env vars (%v); ignored: deployment-wide env is not applied", key, field, err)
				continue
			}
			d.env = append(d.env, bldRawEnv(env)...)
		}
	}
	bd.parseTopology(d, spec)
	d.out.Conditions = bd.parseConditions(d, u)
	if len(u.Status) > 0 {
		d.out.HasStatus = true
	}

	d.pods = bd.pods[d.out.Namespace][d.out.Name]
	bd.buildPods(d)
	return d
}

func (bd *bldBuilder) parsePolicy(d *bldDeployment, spec map[string]any) {
	key := d.out.Key()
	pol, found := bldNested(spec, "experimental", "kvTransferPolicy")
	if !found || pol == nil {
		return
	}
	var w bldPolicyWire
	if err := bldRecode(pol, &w); err != nil {
		bd.note(d.src, key, "DynamoGraphDeployment %s: spec.experimental.kvTransferPolicy could not be read (%v); the deployment is shown without a policy, so no topology checks run", key, err)
		return
	}
	p := &model.TransferPolicy{LabelKey: w.LabelKey, ClusterTopologyName: w.ClusterTopologyName, Domain: w.Domain, PreferredWeight: w.PreferredWeight}
	switch {
	case w.LabelKey != "" && w.ClusterTopologyName != "":
		p.Mode = model.PolicyLabelKey
		bd.note(d.src, key, "DynamoGraphDeployment %s: kvTransferPolicy sets both labelKey and clusterTopologyName, which the CRD forbids; assuming labelKey %q", key, w.LabelKey)
	case w.LabelKey != "":
		p.Mode = model.PolicyLabelKey
	case w.ClusterTopologyName != "":
		p.Mode = model.PolicyClusterTopologyName
	default:
		bd.note(d.src, key, "DynamoGraphDeployment %s: kvTransferPolicy names neither labelKey nor clusterTopologyName; the operator copies no topology label", key)
	}
	if w.Domain == "" {
		bd.note(d.src, key, "DynamoGraphDeployment %s: kvTransferPolicy has no domain; the transfer domain of each worker is unknown", key)
	}
	switch w.Enforcement {
	case "":
		p.Enforcement, p.EnforcementDefaulted = routecore.EnforcementRequired, true
	default:
		if _, err := routecore.ParseKvTransferEnforcement(w.Enforcement); err != nil {
			bd.note(d.src, key, "DynamoGraphDeployment %s: kvTransferPolicy.enforcement %q is not required or preferred; it is shown as is", key, w.Enforcement)
		}
		p.Enforcement = routecore.KvTransferEnforcement(w.Enforcement)
	}
	switch p.Mode {
	case model.PolicyLabelKey:
		p.PodLabelKey, p.NodeLabelKey = w.LabelKey, w.LabelKey
	default:
		if w.Domain != "" {
			p.PodLabelKey = bldPodTopologyPrefix + w.Domain
		}
	}
	d.out.Policy = p
}

func (bd *bldBuilder) parseComponents(d *bldDeployment, spec map[string]any) {
	key := d.out.Key()
	add := func(name string, w *bldComponentWire) {
		if name == "" {
			name = w.Name
		}
		if name == "" {
			bd.note(d.src, key, "DynamoGraphDeployment %s: a component has no name; skipped", key)
			return
		}
		c := &bldComponent{c: model.Component{Name: name, Type: cmp.Or(w.Type, w.ComponentType), SubComponentType: w.SubComponentType, Replicas: w.Replicas}}
		if w.Multinode != nil {
			c.c.NodesPerReplica = 2
			if w.Multinode.NodeCount != nil {
				c.c.NodesPerReplica = *w.Multinode.NodeCount
			}
		}
		var main *corev1.Container
		if w.PodTemplate != nil {
			main = bldSpecMainContainer(w.PodTemplate.Spec.Containers, w.PodTemplate.Annotations[bldAnnMainContainer])
		}
		if w.ExtraPodSpec != nil && w.ExtraPodSpec.MainContainer != nil {
			main = w.ExtraPodSpec.MainContainer
		}
		c.env = bldRawEnv(w.Envs)
		if main != nil {
			c.env = append(c.env, bldRawEnv(main.Env)...)
			c.command, c.args = main.Command, main.Args
			if len(main.Image) <= bldMaxImageRef {
				c.c.Image = main.Image
			}
		}
		if w.GlobalDynamoNamespace {
			d.specDynNamespace = cmp.Or(d.specDynNamespace, "dynamo")
		} else if w.DynamoNamespace != nil && *w.DynamoNamespace != "" {
			d.specDynNamespace = cmp.Or(d.specDynNamespace, *w.DynamoNamespace)
		}
		if _, dup := d.comps[name]; dup {
			bd.note(d.src, key, "DynamoGraphDeployment %s: component %q is declared twice; the first is used", key, name)
			return
		}
		d.comps[name] = c
	}
	if comps, ok := spec["components"]; ok && comps != nil {
		list, ok := comps.([]any)
		if !ok {
			bd.note(d.src, key, "DynamoGraphDeployment %s: spec.components is not a list; components are unknown, so roles come from pod labels only", key)
		}
		for i, item := range list {
			var w bldComponentWire
			if err := bldRecode(item, &w); err != nil {
				bd.note(d.src, key, "DynamoGraphDeployment %s: spec.components[%d] could not be read (%v); skipped", key, i, err)
				continue
			}
			add("", &w)
		}
	}
	if svcs, ok := spec["services"]; ok && svcs != nil {
		m, ok := svcs.(map[string]any)
		if !ok {
			bd.note(d.src, key, "DynamoGraphDeployment %s: spec.services is not a map; components are unknown, so roles come from pod labels only", key)
		}
		for _, name := range bldSortedKeys(m) {
			var w bldComponentWire
			if m[name] != nil {
				if err := bldRecode(m[name], &w); err != nil {
					bd.note(d.src, key, "DynamoGraphDeployment %s: spec.services.%s could not be read (%v); skipped", key, name, err)
					continue
				}
			}
			add(name, &w)
		}
	}
	for _, name := range bldSortedKeys(d.comps) {
		d.out.Components = append(d.out.Components, d.comps[name].c)
	}
}

// component finds a component by name, exactly or ignoring case.
func (d *bldDeployment) component(name string) *bldComponent {
	if name == "" {
		return nil
	}
	if c := d.comps[name]; c != nil {
		return c
	}
	for _, k := range bldSortedKeys(d.comps) {
		if strings.EqualFold(k, name) {
			return d.comps[k]
		}
	}
	return nil
}

// parseTopology resolves the Grove topology object the policy (or, failing that,
// the placement constraint) names, and the policy's node label key.
func (bd *bldBuilder) parseTopology(d *bldDeployment, spec map[string]any) {
	key := d.out.Key()
	name := ""
	if p := d.out.Policy; p != nil && p.Mode == model.PolicyClusterTopologyName {
		name = p.ClusterTopologyName
	}
	if name == "" {
		for _, f := range []string{"clusterTopologyName", "topologyProfile"} {
			if v := bldNestedString(spec, "topologyConstraint", f); v != "" {
				name = v
				break
			}
		}
	}
	if name == "" {
		return
	}
	t := &model.TopologyObject{Kind: "ClusterTopologyBinding", Name: name}
	var obj *raw.ClusterTopology
	for _, kind := range []string{"ClusterTopologyBinding", "ClusterTopology"} {
		if o := bd.topologies[kind][name]; o != nil {
			t.Kind, t.Found, obj = kind, true, o
			break
		}
	}
	if obj != nil {
		var ls []struct {
			Domain string `json:"domain"`
			Key    string `json:"key"`
		}
		// An absent spec.levels recodes as null, which reads as no levels.
		if err := bldRecode(obj.Spec.Levels, &ls); err != nil {
			bd.note(d.src, key, "%s %s: spec.levels could not be read (%v); its levels are unknown", t.Kind, name, err)
		}
		for _, l := range ls {
			t.Levels = append(t.Levels, model.TopologyLevel{Domain: l.Domain, NodeLabelKey: l.Key})
		}
	}
	d.out.Topology = t
	if p := d.out.Policy; p != nil && p.Mode == model.PolicyClusterTopologyName {
		for _, l := range t.Levels {
			if l.Domain == p.Domain {
				p.NodeLabelKey = l.NodeLabelKey
				break
			}
		}
	}
}

func (bd *bldBuilder) parseConditions(d *bldDeployment, u *raw.DGD) []model.Condition {
	conds, found := u.Status["conditions"]
	if !found || conds == nil {
		return nil
	}
	var cs []model.Condition
	if err := bldRecode(conds, &cs); err != nil {
		bd.note(d.src, d.out.Key(), "DynamoGraphDeployment %s: status.conditions could not be read (%v); conditions are not shown", d.out.Key(), err)
		return nil
	}
	slices.SortStableFunc(cs, func(a, b model.Condition) int { return cmp.Compare(a.Type, b.Type) })
	return cs
}

// bldEnvMap resolves env vars with literal values (and $(VAR) references to
// earlier ones, as the kubelet does); valueFrom entries are not known and are
// reported in unknown.
func bldEnvMap(env []raw.EnvVar) (vals map[string]string, unknown []string) {
	vals = make(map[string]string, len(env))
	for _, e := range env {
		if e.ValueFrom != nil {
			delete(vals, e.Name)
			unknown = append(unknown, e.Name)
			continue
		}
		vals[e.Name] = cmdline.ExpandKube(e.Value, func(k string) (string, bool) { v, ok := vals[k]; return v, ok })
	}
	return vals, unknown
}

// bldLookup chains env maps: the first that has the name wins.
func bldLookup(maps ...map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		for _, m := range maps {
			if v, ok := m[k]; ok {
				return v, true
			}
		}
		return "", false
	}
}

// bldDGDRef formats a deployment-scoped object reference.
func bldDGDRef(d *bldDeployment) string { return fmt.Sprintf("DynamoGraphDeployment %s", d.out.Key()) }

// bldNested is unstructured.NestedFieldNoCopy: the value at the path, found
// false when a step is missing or not an object.
func bldNested(m map[string]any, fields ...string) (any, bool) {
	var v any = m
	for _, f := range fields {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = mm[f]; !ok {
			return nil, false
		}
	}
	return v, true
}

// bldNestedString is unstructured.NestedString ignoring the error: the string
// at the path, "" when it is missing or not a string.
func bldNestedString(m map[string]any, fields ...string) string {
	v, _ := bldNested(m, fields...)
	s, _ := v.(string)
	return s
}

// bldSpecMainContainer is bldMainContainer over a DGD's podTemplate
// containers.
func bldSpecMainContainer(cs []corev1.Container, name string) *corev1.Container {
	if name == "" {
		name = "main"
	}
	for i := range cs {
		if cs[i].Name == name {
			return &cs[i]
		}
	}
	if len(cs) > 0 {
		return &cs[0]
	}
	return nil
}

// bldRawEnv is a DGD's env (read as core/v1) as a pod's is held.
func bldRawEnv(env []corev1.EnvVar) []raw.EnvVar {
	if env == nil {
		return nil
	}
	out := make([]raw.EnvVar, len(env))
	for i, e := range env {
		out[i] = raw.EnvVar{Name: e.Name, Value: e.Value}
		s := e.ValueFrom
		if s == nil {
			continue
		}
		src := &raw.EnvVarSource{}
		if r := s.FieldRef; r != nil {
			src.FieldRef = &raw.ObjectFieldSelector{APIVersion: r.APIVersion, FieldPath: r.FieldPath}
		}
		if r := s.ResourceFieldRef; r != nil {
			src.ResourceFieldRef = &raw.ResourceFieldSelector{ContainerName: r.ContainerName, Resource: r.Resource, Divisor: raw.Quantity(r.Divisor.String())}
		}
		if r := s.ConfigMapKeyRef; r != nil {
			src.ConfigMapKeyRef = &raw.KeySelector{Name: r.Name, Key: r.Key, Optional: r.Optional}
		}
		if r := s.SecretKeyRef; r != nil {
			src.SecretKeyRef = &raw.KeySelector{Name: r.Name, Key: r.Key, Optional: r.Optional}
		}
		if r := s.FileKeyRef; r != nil {
			src.FileKeyRef = &raw.FileKeySelector{VolumeName: r.VolumeName, Path: r.Path, Key: r.Key, Optional: r.Optional}
		}
		out[i].ValueFrom = src
	}
	return out
}
