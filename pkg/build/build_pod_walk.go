package build

import (
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The pod walker reads the fields of bldPodWire out of an unstructured Pod by
// hand. It produces exactly what runtime.DefaultUnstructuredConverter's
// FromUnstructured produces (checked by build_pod_walk_test.go), at a fraction
// of the cost, and gives up whenever it is not sure to: bldConvertPod then runs
// the converter, which also words the error for a pod that cannot be read.
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

// bldPodWalkEnabled lets tests compare Build with and without the walker.
var bldPodWalkEnabled = true

// bldWalkPod reads obj (an unstructured Pod) into a bldPodWire without
// reflection; ok is false when the converter must be used instead.
func bldWalkPod(obj map[string]any) (w bldPodWire, ok bool) {
	var k bldPodWalker
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
		return bldPodWire{}, false
	}
	return w, true
}

// bldPodWalker reads unstructured values; bad records that one of them could
// not be read exactly as the converter would (its readers then return zero
// values, and the walk's result is dropped).
type bldPodWalker struct {
	bad bool
}

// obj reads an object field: present false when absent or null.
func (k *bldPodWalker) obj(m map[string]any, key string) (map[string]any, bool) {
	return k.elem(m[key])
}

// elem reads an object value: present false for null. A nil map is present
// (the converter allocates a pointer to a zero struct for it).
func (k *bldPodWalker) elem(v any) (map[string]any, bool) {
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
func (k *bldPodWalker) list(m map[string]any, key string) []any {
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
func (k *bldPodWalker) str(m map[string]any, key string) string {
	return k.strVal(m[key])
}

// strVal reads a string value ("" for null).
func (k *bldPodWalker) strVal(v any) string {
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
func (k *bldPodWalker) strs(m map[string]any, key string) []string {
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
func (k *bldPodWalker) strMap(m map[string]any, key string) map[string]string {
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
func (k *bldPodWalker) optBool(m map[string]any, key string) *bool {
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
func (k *bldPodWalker) int64Val(m map[string]any, key string) int64 {
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
func (k *bldPodWalker) quantity(v any) resource.Quantity {
	var s string
	switch v := v.(type) {
	case nil:
		return resource.Quantity{}
	case string:
		if !bldJSONVerbatim(v) {
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

// bldJSONVerbatim reports whether encoding/json encodes s as s in quotes
// (printable ASCII other than '"', '\\' and the HTML-escaped '<', '>', '&').
func bldJSONVerbatim(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// resourceList reads a ResourceList field (limits, requests).
func (k *bldPodWalker) resourceList(m map[string]any, key string) corev1.ResourceList {
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
func (k *bldPodWalker) timeVal(m map[string]any, key string) metav1.Time {
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
func (k *bldPodWalker) condition(m map[string]any, c *corev1.PodCondition) {
	c.Type = corev1.PodConditionType(k.str(m, "type"))
	c.ObservedGeneration = k.int64Val(m, "observedGeneration")
	c.Status = corev1.ConditionStatus(k.str(m, "status"))
	c.LastProbeTime = k.timeVal(m, "lastProbeTime")
	c.LastTransitionTime = k.timeVal(m, "lastTransitionTime")
	c.Reason = k.str(m, "reason")
	c.Message = k.str(m, "message")
}

// containers reads a list of containers.
func (k *bldPodWalker) containers(m map[string]any, key string) []bldContainerWire {
	l := k.list(m, key)
	if l == nil {
		return nil
	}
	out := make([]bldContainerWire, len(l))
	for i, e := range l {
		if e, present := k.elem(e); present {
			k.container(e, &out[i])
		}
	}
	return out
}

// container reads the fields of bldContainerWire; the others are ignored,
// whatever their values.
func (k *bldPodWalker) container(m map[string]any, c *bldContainerWire) {
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
func (k *bldPodWalker) envVar(m map[string]any, e *corev1.EnvVar) {
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
func (k *bldPodWalker) envFrom(m map[string]any, e *corev1.EnvFromSource) {
	e.Prefix = k.str(m, "prefix")
	if r, present := k.obj(m, "configMapRef"); present {
		e.ConfigMapRef = &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: k.str(r, "name")}, Optional: k.optBool(r, "optional")}
	}
	if r, present := k.obj(m, "secretRef"); present {
		e.SecretRef = &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: k.str(r, "name")}, Optional: k.optBool(r, "optional")}
	}
}
