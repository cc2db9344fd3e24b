package decode

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw"
)

// FromObjects types whole objects (the reference path). Lists among them
// (any object whose items is an array, nested at most once) are replaced by
// their items, up to the first item that is not an object, as Build always
// read them; objects of other kinds are left out.
func FromObjects(objs []raw.Object) raw.Objects {
	var out raw.Objects
	fromObjects(&out, objs, 0)
	return out
}

// FromObject is FromObjects of one object.
func FromObject(obj raw.Object) raw.Objects {
	return FromObjects([]raw.Object{obj})
}

func fromObjects(out *raw.Objects, objs []raw.Object, depth int) {
	for _, m := range objs {
		if m == nil {
			continue
		}
		u := &unstructured.Unstructured{Object: m}
		if u.IsList() && depth < 2 {
			var items []raw.Object
			_ = u.EachListItem(func(o runtime.Object) error {
				if it, ok := o.(*unstructured.Unstructured); ok {
					items = append(items, it.Object)
				}
				return nil
			})
			fromObjects(out, items, depth+1)
			continue
		}
		addTree(out, u)
	}
}

// addTree types one object by its kind and group.
func addTree(out *raw.Objects, u *unstructured.Unstructured) {
	tm := raw.TypeMeta{APIVersion: u.GetAPIVersion(), Kind: u.GetKind()}
	switch group := raw.Group(tm.APIVersion); {
	case tm.Kind == raw.KindDGD && group == raw.GroupDynamo:
		d := &raw.DGD{TypeMeta: tm, ObjectMeta: metaTree(u)}
		d.Spec, _ = u.Object["spec"].(map[string]any)
		d.Status, _ = u.Object["status"].(map[string]any)
		out.DGDs = append(out.DGDs, d)
	case tm.Kind == raw.KindDWM && group == raw.GroupDynamo:
		d := &raw.DWM{TypeMeta: tm, ObjectMeta: metaTree(u)}
		d.OwnerReferences = ownerRefsTree(u)
		if data, found, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "data"); found && data != nil {
			d.Spec.Data = dwmDataTree(data)
		}
		out.DWMs = append(out.DWMs, d)
	case tm.Kind == raw.KindPod && group == "":
		out.Pods = append(out.Pods, podTree(u, tm))
	case tm.Kind == raw.KindNode && group == "":
		out.Nodes = append(out.Nodes, &raw.Node{TypeMeta: tm, ObjectMeta: metaTree(u)})
	case tm.Kind == raw.KindService && group == "":
		s := &raw.Service{TypeMeta: tm, ObjectMeta: metaTree(u)}
		s.Spec, _ = u.Object["spec"].(map[string]any)
		out.Services = append(out.Services, s)
	case tm.Kind == raw.KindEndpointSlice && group == raw.GroupDiscovery:
		out.EndpointSlices = append(out.EndpointSlices, sliceTree(u, tm))
	case tm.Kind == raw.KindEvent && (group == "" || group == raw.GroupEvents):
		out.Events = append(out.Events, eventTree(u, tm))
	case (tm.Kind == raw.KindClusterTopologyBinding || tm.Kind == raw.KindClusterTopology) && group == raw.GroupGrove:
		t := &raw.ClusterTopology{TypeMeta: tm, ObjectMeta: metaTree(u)}
		t.Spec.Levels, _, _ = unstructured.NestedFieldNoCopy(u.Object, "spec", "levels")
		out.Topologies = append(out.Topologies, t)
	case tm.Kind == raw.KindDeployment && group == raw.GroupApps:
		out.Deployments = append(out.Deployments, deploymentTree(u, tm))
	}
}

// metaTree reads metadata as Unstructured's accessors do (owner references
// and the creation time are read only for the kinds that use them).
func metaTree(u *unstructured.Unstructured) raw.ObjectMeta {
	return raw.ObjectMeta{Name: u.GetName(), Namespace: u.GetNamespace(), Labels: u.GetLabels(), Annotations: u.GetAnnotations()}
}

// ownerRefsTree is Unstructured.GetOwnerReferences.
func ownerRefsTree(u *unstructured.Unstructured) []raw.OwnerReference {
	refs := u.GetOwnerReferences()
	if refs == nil {
		return nil
	}
	out := make([]raw.OwnerReference, len(refs))
	for i, r := range refs {
		out[i] = raw.OwnerReference{APIVersion: r.APIVersion, Kind: r.Kind, Name: r.Name, UID: string(r.UID),
			Controller: r.Controller, BlockOwnerDeletion: r.BlockOwnerDeletion}
	}
	return out
}

// refTree reads an object reference's kind, name and namespace.
func refTree(m map[string]any, field string) raw.ObjectReference {
	var r raw.ObjectReference
	r.Kind, _, _ = unstructured.NestedString(m, field, "kind")
	r.Name, _, _ = unstructured.NestedString(m, field, "name")
	r.Namespace, _, _ = unstructured.NestedString(m, field, "namespace")
	return r
}

func sliceTree(u *unstructured.Unstructured, tm raw.TypeMeta) *raw.EndpointSlice {
	s := &raw.EndpointSlice{TypeMeta: tm, ObjectMeta: metaTree(u)}
	eps, found, err := unstructured.NestedSlice(u.Object, "endpoints")
	if !found || err != nil {
		return s
	}
	s.Endpoints = make([]raw.Endpoint, 0, len(eps))
	for _, e := range eps {
		m, ok := e.(map[string]any)
		if !ok {
			continue
		}
		ep := raw.Endpoint{TargetRef: refTree(m, "targetRef")}
		if r, found, err := unstructured.NestedBool(m, "conditions", "ready"); found && err == nil {
			ep.Conditions.Ready = &r
		}
		s.Endpoints = append(s.Endpoints, ep)
	}
	return s
}

func eventTree(u *unstructured.Unstructured, tm raw.TypeMeta) *raw.Event {
	obj := u.Object
	e := &raw.Event{TypeMeta: tm, ObjectMeta: metaTree(u), InvolvedObject: refTree(obj, "involvedObject"), Regarding: refTree(obj, "regarding")}
	e.CreationTimestamp, _, _ = unstructured.NestedString(obj, "metadata", "creationTimestamp")
	str := func(fields ...string) string { s, _, _ := unstructured.NestedString(obj, fields...); return s }
	num := func(fields ...string) *int64 {
		if n, ok, _ := unstructured.NestedInt64(obj, fields...); ok {
			return &n
		}
		return nil
	}
	e.Reason, e.Type, e.Message, e.Note = str("reason"), str("type"), str("message"), str("note")
	e.Count, e.Series.Count, e.DeprecatedCount = num("count"), num("series", "count"), num("deprecatedCount")
	e.LastTimestamp, e.Series.LastObservedTime = str("lastTimestamp"), str("series", "lastObservedTime")
	e.DeprecatedLastTimestamp, e.EventTime, e.FirstTimestamp = str("deprecatedLastTimestamp"), str("eventTime"), str("firstTimestamp")
	return e
}

// deploymentTree reads a Deployment's name, namespace, labels and containers
// as the accessors read them (the containers by NestedSlice; an element, a
// name, an image or an argument of another type is skipped or "").
func deploymentTree(u *unstructured.Unstructured, tm raw.TypeMeta) *raw.Deployment {
	o := &raw.Deployment{TypeMeta: tm, ObjectMeta: metaTree(u)}
	o.Annotations = nil
	cs, found, err := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
	if !found || err != nil {
		return o
	}
	o.Spec.Template.Spec.Containers = make([]raw.DeploymentContainer, 0, len(cs))
	for _, e := range cs {
		m, ok := e.(map[string]any)
		if !ok {
			continue
		}
		var c raw.DeploymentContainer
		c.Name, _ = m["name"].(string)
		c.Image, _ = m["image"].(string)
		if args, ok := m["args"].([]any); ok {
			c.Args = make([]string, len(args))
			for i, a := range args {
				c.Args[i], _ = a.(string)
			}
		}
		o.Spec.Template.Spec.Containers = append(o.Spec.Template.Spec.Containers, c)
	}
	return o
}
