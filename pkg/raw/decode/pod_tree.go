package decode

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw"
)

// The pod walker reads the fields of podWire out of an unstructured Pod by
// hand. It produces exactly what runtime.DefaultUnstructuredConverter's
// FromUnstructured produces (checked by pod_tree_test.go), at a fraction
// of the cost, and gives up whenever it is not sure to: convertPodTree then
// runs the converter, which also words the error for a pod that cannot be
// read. The JSON path (pod_json.go) reads the same fields straight from JSON
// and gives up in the same cases, and more.
//
// The converter's rules it mirrors: keys match the json tags exactly (case
// sensitive) and other keys are ignored; a null is the same as an absent key
// (the zero value), except as a map value, where it is the key with a zero
// value; a present list or object is never nil (an empty one stays empty, a
// pointer field is allocated); strings are read only from strings, integers
// from int64 (or whole float64s); quantities and times go through their JSON
// unmarshalers. Anything else — numbers where strings are expected, other Go
// types (json.Number, int32, map[string]string, …), strings the JSON round
// trip would alter — makes it give up.

// podWalkEnabled lets tests compare reading with and without the walker.
var podWalkEnabled = true

// walkPod reads obj (an unstructured Pod) into a podWire without
// reflection; ok is false when the converter must be used instead.
func walkPod(obj map[string]any) (w podWire, ok bool) {
	var k podWalker
	if m, present := k.obj(obj, "metadata"); present {
		w.Metadata.Name = k.str(m, "name")
		w.Metadata.Namespace = k.str(m, "namespace")
		w.Metadata.Labels = k.strMap(m, "labels")
		w.Metadata.Annotations = k.strMap(m, "annotations")
	}
	if m, present := k.obj(obj, "spec"); present {
		w.Spec.NodeName = k.str(m, "nodeName")
		w.Spec.Containers = k.containers(m, "containers")
		w.Spec.InitContainers = k.containers(m, "initContainers")
	}
	if m, present := k.obj(obj, "status"); present {
		w.Status.Phase = corev1.PodPhase(k.str(m, "phase"))
		w.Status.PodIP = k.str(m, "podIP")
		if l := k.list(m, "podIPs"); l != nil {
			w.Status.PodIPs = make([]corev1.PodIP, len(l))
			for i, e := range l {
				if e, present := k.elem(e); present {
					w.Status.PodIPs[i].IP = k.str(e, "ip")
				}
			}
		}
		if l := k.list(m, "conditions"); l != nil {
			w.Status.Conditions = make([]corev1.PodCondition, len(l))
			for i, e := range l {
				if e, present := k.elem(e); present {
					k.condition(e, &w.Status.Conditions[i])
				}
			}
		}
	}
	if k.bad {
		return podWire{}, false
	}
	return w, true
}

// podWalker reads unstructured values; bad records that one of them could
// not be read exactly as the converter would (its readers then return zero
// values, and the walk's result is dropped).
type podWalker struct {
	bad bool
}

// obj reads an object field: present false when absent or null.
func (k *podWalker) obj(m map[string]any, key string) (map[string]any, bool) {
	return k.elem(m[key])
}

// elem reads an object value: present false for null. A nil map is present
// (the converter allocates a pointer to a zero struct for it).
func (k *podWalker) elem(v any) (map[string]any, bool) {
	switch v := v.(type) {
	case nil:
		return nil, false
	case map[string]any:
		return v, true
	}
	k.bad = true
	return nil, false
}

// list reads a list field: nil when absent, null or a nil slice; an empty list
// stays non-nil.
func (k *podWalker) list(m map[string]any, key string) []any {
	switch v := m[key].(type) {
	case nil:
		return nil
	case []any:
		return v
	}
	k.bad = true
	return nil
}

// str reads a string field ("" when absent or null).
func (k *podWalker) str(m map[string]any, key string) string {
	return k.strVal(m[key])
}

// strVal reads a string value ("" for null).
func (k *podWalker) strVal(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	}
	k.bad = true
	return ""
}

// strs reads a list of strings.
func (k *podWalker) strs(m map[string]any, key string) []string {
	l := k.list(m, key)
	if l == nil {
		return nil
	}
	out := make([]string, len(l))
	for i, e := range l {
		out[i] = k.strVal(e)
	}
	return out
}

// strMap reads a map of strings (labels, annotations).
func (k *podWalker) strMap(m map[string]any, key string) map[string]string {
	src, present := k.obj(m, key)
	if !present || src == nil {
		return nil
	}
	out := make(map[string]string, len(src))
	for name, v := range src {
		out[name] = k.strVal(v)
	}
	return out
}

// optBool reads an optional bool (*bool) field.
func (k *podWalker) optBool(m map[string]any, key string) *bool {
	switch v := m[key].(type) {
	case nil:
		return nil
	case bool:
		return &v
	}
	k.bad = true
	return nil
}

// int64Val reads an int64 field: an int64, or a whole float64 in range (which
// the converter truncates).
func (k *podWalker) int64Val(m map[string]any, key string) int64 {
	switch v := m[key].(type) {
	case nil:
		return 0
	case int64:
		return v
	case float64:
		if v == math.Trunc(v) && v >= -(1<<63) && v < 1<<63 {
			return int64(v)
		}
	}
	k.bad = true
	return 0
}

// quantity reads a resource.Quantity value the way its UnmarshalJSON reads the
// value's JSON encoding: a string whose encoding is itself in quotes, or an
// int64; a null is the zero Quantity.
func (k *podWalker) quantity(v any) resource.Quantity {
	var s string
	switch v := v.(type) {
	case nil:
		return resource.Quantity{}
	case string:
		if !jsonVerbatim(v) {
			k.bad = true
			return resource.Quantity{}
		}
		s = strings.TrimSpace(v)
	case int64:
		s = strconv.FormatInt(v, 10)
	default:
		k.bad = true
		return resource.Quantity{}
	}
	q, err := resource.ParseQuantity(s)
	if err != nil {
		k.bad = true
		return resource.Quantity{}
	}
	return q
}

// jsonVerbatim reports whether encoding/json encodes s as s in quotes
// (printable ASCII other than '"', '\\' and the HTML-escaped '<', '>', '&').
func jsonVerbatim(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// resourceList reads a ResourceList field (limits, requests).
func (k *podWalker) resourceList(m map[string]any, key string) corev1.ResourceList {
	src, present := k.obj(m, key)
	if !present || src == nil {
		return nil
	}
	out := make(corev1.ResourceList, len(src))
	for name, v := range src {
		out[corev1.ResourceName(name)] = k.quantity(v)
	}
	return out
}

// timeVal reads a metav1.Time field the way its UnmarshalJSON does: an RFC 3339
// string (valid UTF-8, which the JSON round trip keeps as is), in local time.
func (k *podWalker) timeVal(m map[string]any, key string) metav1.Time {
	switch v := m[key].(type) {
	case nil:
		return metav1.Time{}
	case string:
		if utf8.ValidString(v) {
			if t, err := time.Parse(time.RFC3339, v); err == nil {
				return metav1.NewTime(t.Local())
			}
		}
	}
	k.bad = true
	return metav1.Time{}
}

// condition reads a PodCondition.
func (k *podWalker) condition(m map[string]any, c *corev1.PodCondition) {
	c.Type = corev1.PodConditionType(k.str(m, "type"))
	c.ObservedGeneration = k.int64Val(m, "observedGeneration")
	c.Status = corev1.ConditionStatus(k.str(m, "status"))
	c.LastProbeTime = k.timeVal(m, "lastProbeTime")
	c.LastTransitionTime = k.timeVal(m, "lastTransitionTime")
	c.Reason = k.str(m, "reason")
	c.Message = k.str(m, "message")
}

// containers reads a list of containers.
func (k *podWalker) containers(m map[string]any, key string) []containerWire {
	l := k.list(m, key)
	if l == nil {
		return nil
	}
	out := make([]containerWire, len(l))
	for i, e := range l {
		if e, present := k.elem(e); present {
			k.container(e, &out[i])
		}
	}
	return out
}

// container reads the fields of containerWire; the others are ignored,
// whatever their values.
func (k *podWalker) container(m map[string]any, c *containerWire) {
	c.Name = k.str(m, "name")
	c.Command = k.strs(m, "command")
	c.Args = k.strs(m, "args")
	if l := k.list(m, "env"); l != nil {
		c.Env = make([]corev1.EnvVar, len(l))
		for i, e := range l {
			if e, present := k.elem(e); present {
				k.envVar(e, &c.Env[i])
			}
		}
	}
	if l := k.list(m, "envFrom"); l != nil {
		c.EnvFrom = make([]corev1.EnvFromSource, len(l))
		for i, e := range l {
			if e, present := k.elem(e); present {
				k.envFrom(e, &c.EnvFrom[i])
			}
		}
	}
	if r, present := k.obj(m, "resources"); present {
		c.Resources.Limits = k.resourceList(r, "limits")
		c.Resources.Requests = k.resourceList(r, "requests")
		if l := k.list(r, "claims"); l != nil {
			c.Resources.Claims = make([]corev1.ResourceClaim, len(l))
			for i, e := range l {
				if e, present := k.elem(e); present {
					c.Resources.Claims[i] = corev1.ResourceClaim{Name: k.str(e, "name"), Request: k.str(e, "request")}
				}
			}
		}
	}
	switch v := m["restartPolicy"].(type) {
	case nil:
	case string:
		p := corev1.ContainerRestartPolicy(v)
		c.RestartPolicy = &p
	default:
		k.bad = true
	}
}

// envVar reads an EnvVar, every form of valueFrom included.
func (k *podWalker) envVar(m map[string]any, e *corev1.EnvVar) {
	e.Name = k.str(m, "name")
	e.Value = k.str(m, "value")
	vf, present := k.obj(m, "valueFrom")
	if !present {
		return
	}
	src := &corev1.EnvVarSource{}
	e.ValueFrom = src
	if r, present := k.obj(vf, "fieldRef"); present {
		src.FieldRef = &corev1.ObjectFieldSelector{APIVersion: k.str(r, "apiVersion"), FieldPath: k.str(r, "fieldPath")}
	}
	if r, present := k.obj(vf, "resourceFieldRef"); present {
		src.ResourceFieldRef = &corev1.ResourceFieldSelector{ContainerName: k.str(r, "containerName"), Resource: k.str(r, "resource"), Divisor: k.quantity(r["divisor"])}
	}
	if r, present := k.obj(vf, "configMapKeyRef"); present {
		src.ConfigMapKeyRef = &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: k.str(r, "name")}, Key: k.str(r, "key"), Optional: k.optBool(r, "optional")}
	}
	if r, present := k.obj(vf, "secretKeyRef"); present {
		src.SecretKeyRef = &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: k.str(r, "name")}, Key: k.str(r, "key"), Optional: k.optBool(r, "optional")}
	}
	if r, present := k.obj(vf, "fileKeyRef"); present {
		src.FileKeyRef = &corev1.FileKeySelector{VolumeName: k.str(r, "volumeName"), Path: k.str(r, "path"), Key: k.str(r, "key"), Optional: k.optBool(r, "optional")}
	}
}

// envFrom reads an EnvFromSource.
func (k *podWalker) envFrom(m map[string]any, e *corev1.EnvFromSource) {
	e.Prefix = k.str(m, "prefix")
	if r, present := k.obj(m, "configMapRef"); present {
		e.ConfigMapRef = &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: k.str(r, "name")}, Optional: k.optBool(r, "optional")}
	}
	if r, present := k.obj(m, "secretRef"); present {
		e.SecretRef = &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: k.str(r, "name")}, Optional: k.optBool(r, "optional")}
	}
}

// podWire is the part of a Pod that is read, in core/v1's types: what the
// walker and the converter both produce (and are compared on), before
// rawPod turns it into a raw.Pod. Converting only these fields (not
// managedFields, volumes, container statuses, …) keeps reading fast on
// deployments with thousands of pods.
type podWire struct {
	Metadata struct {
		Name        string            `json:"name"`
		Namespace   string            `json:"namespace"`
		Labels      map[string]string `json:"labels"`
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
	Spec struct {
		NodeName       string          `json:"nodeName"`
		Containers     []containerWire `json:"containers"`
		InitContainers []containerWire `json:"initContainers"`
	} `json:"spec"`
	Status struct {
		Phase      corev1.PodPhase       `json:"phase"`
		PodIP      string                `json:"podIP"`
		PodIPs     []corev1.PodIP        `json:"podIPs"`
		Conditions []corev1.PodCondition `json:"conditions"`
	} `json:"status"`
}

// containerWire is the part of a container that is read (the main
// container's command, args and environment; every container's GPU resources
// and restart policy; names for DWM ownership). Ports, probes, volume mounts
// and the like are not converted, so a malformed field nothing reads does not
// make the pod unreadable.
type containerWire struct {
	Name          string                         `json:"name"`
	Command       []string                       `json:"command"`
	Args          []string                       `json:"args"`
	Env           []corev1.EnvVar                `json:"env"`
	EnvFrom       []corev1.EnvFromSource         `json:"envFrom"`
	Resources     corev1.ResourceRequirements    `json:"resources"`
	RestartPolicy *corev1.ContainerRestartPolicy `json:"restartPolicy"`
}

// podTree types a Pod object: the walker, else the converter; a pod neither
// can read keeps its metadata and the reason.
func podTree(u *unstructured.Unstructured, tm raw.TypeMeta) *raw.Pod {
	w, err := convertPodTree(u.Object)
	if err != nil {
		return &raw.Pod{TypeMeta: tm, ObjectMeta: raw.ObjectMeta{Name: u.GetName(), Namespace: u.GetNamespace(), Labels: u.GetLabels()}, Invalid: err.Error()}
	}
	p := rawPod(&w)
	p.TypeMeta = tm
	if spec, ok := u.Object["spec"].(map[string]any); ok {
		podImages(spec["containers"], p.Spec.Containers)
		podImages(spec["initContainers"], p.Spec.InitContainers)
	}
	// GetLabels' reading, as for every kind (the converted labels whenever the
	// walker read them).
	p.Labels = u.GetLabels()
	return p
}

// podImages reads the images of the containers list l, converted into cs, as
// NestedString would: an image that is not a string is "", and does not make
// the pod unreadable (the converter never sees it: containerWire has no image).
func podImages(l any, cs []raw.Container) {
	list, _ := l.([]any)
	for i, e := range list {
		if i >= len(cs) {
			return
		}
		m, _ := e.(map[string]any)
		cs[i].Image, _ = m["image"].(string)
	}
}

// convertPodTree converts an unstructured Pod, never panicking: the walker,
// else runtime.DefaultUnstructuredConverter over metadata, spec and status.
func convertPodTree(obj map[string]any) (w podWire, err error) {
	defer func() {
		if r := recover(); r != nil {
			w, err = podWire{}, fmt.Errorf("malformed pod: %v", r)
		}
	}()
	walked := false
	if podWalkEnabled {
		w, walked = walkPod(obj)
	}
	if walked {
		return w, nil
	}
	w = podWire{}
	src := map[string]any{}
	for _, k := range []string{"metadata", "spec", "status"} {
		if v, ok := obj[k]; ok {
			src[k] = v
		}
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(src, &w); err != nil {
		return podWire{}, err
	}
	return w, nil
}

// rawPod turns a converted pod into a raw.Pod: quantities as their String(),
// condition times dropped.
func rawPod(w *podWire) *raw.Pod {
	p := &raw.Pod{}
	p.Name, p.Namespace, p.Labels, p.Annotations = w.Metadata.Name, w.Metadata.Namespace, w.Metadata.Labels, w.Metadata.Annotations
	p.Spec.NodeName = w.Spec.NodeName
	p.Spec.Containers, p.Spec.InitContainers = rawContainers(w.Spec.Containers), rawContainers(w.Spec.InitContainers)
	p.Status.Phase, p.Status.PodIP = string(w.Status.Phase), w.Status.PodIP
	if w.Status.PodIPs != nil {
		p.Status.PodIPs = make([]raw.PodIP, len(w.Status.PodIPs))
		for i, ip := range w.Status.PodIPs {
			p.Status.PodIPs[i].IP = ip.IP
		}
	}
	if w.Status.Conditions != nil {
		p.Status.Conditions = make([]raw.PodCondition, len(w.Status.Conditions))
		for i, c := range w.Status.Conditions {
			p.Status.Conditions[i] = raw.PodCondition{Type: string(c.Type), Status: string(c.Status), Reason: c.Reason, Message: c.Message}
		}
	}
	return p
}

func rawContainers(ws []containerWire) []raw.Container {
	if ws == nil {
		return nil
	}
	out := make([]raw.Container, len(ws))
	for i := range ws {
		w, c := &ws[i], &out[i]
		c.Name, c.Command, c.Args = w.Name, w.Command, w.Args
		if w.Env != nil {
			c.Env = make([]raw.EnvVar, len(w.Env))
			for j, e := range w.Env {
				c.Env[j] = raw.EnvVar{Name: e.Name, Value: e.Value, ValueFrom: rawEnvSource(e.ValueFrom)}
			}
		}
		if w.EnvFrom != nil {
			c.EnvFrom = make([]raw.EnvFromSource, len(w.EnvFrom))
			for j, e := range w.EnvFrom {
				f := raw.EnvFromSource{Prefix: e.Prefix}
				if r := e.ConfigMapRef; r != nil {
					f.ConfigMapRef = &raw.LocalRefOptional{Name: r.Name, Optional: r.Optional}
				}
				if r := e.SecretRef; r != nil {
					f.SecretRef = &raw.LocalRefOptional{Name: r.Name, Optional: r.Optional}
				}
				c.EnvFrom[j] = f
			}
		}
		c.Resources.Limits, c.Resources.Requests = rawResources(w.Resources.Limits), rawResources(w.Resources.Requests)
		if w.Resources.Claims != nil {
			c.Resources.Claims = make([]raw.ResourceClaim, len(w.Resources.Claims))
			for j, r := range w.Resources.Claims {
				c.Resources.Claims[j] = raw.ResourceClaim{Name: r.Name, Request: r.Request}
			}
		}
		if w.RestartPolicy != nil {
			rp := string(*w.RestartPolicy)
			c.RestartPolicy = &rp
		}
	}
	return out
}

func rawEnvSource(s *corev1.EnvVarSource) *raw.EnvVarSource {
	if s == nil {
		return nil
	}
	out := &raw.EnvVarSource{}
	if r := s.FieldRef; r != nil {
		out.FieldRef = &raw.ObjectFieldSelector{APIVersion: r.APIVersion, FieldPath: r.FieldPath}
	}
	if r := s.ResourceFieldRef; r != nil {
		out.ResourceFieldRef = &raw.ResourceFieldSelector{ContainerName: r.ContainerName, Resource: r.Resource, Divisor: raw.Quantity(r.Divisor.String())}
	}
	if r := s.ConfigMapKeyRef; r != nil {
		out.ConfigMapKeyRef = &raw.KeySelector{Name: r.Name, Key: r.Key, Optional: r.Optional}
	}
	if r := s.SecretKeyRef; r != nil {
		out.SecretKeyRef = &raw.KeySelector{Name: r.Name, Key: r.Key, Optional: r.Optional}
	}
	if r := s.FileKeyRef; r != nil {
		out.FileKeyRef = &raw.FileKeySelector{VolumeName: r.VolumeName, Path: r.Path, Key: r.Key, Optional: r.Optional}
	}
	return out
}

func rawResources(l corev1.ResourceList) raw.ResourceList {
	if l == nil {
		return nil
	}
	out := make(raw.ResourceList, len(l))
	for n, q := range l {
		out[string(n)] = raw.Quantity(q.String())
	}
	return out
}
