package decode

import (
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/jsonscan"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw"
)

// The pod reader reads a Pod straight from JSON into a raw.Pod: the walker's
// reading (pod_tree.go) over the bytes instead of a decoded map, field for
// field and with the same rules, so that it gives what the reference gives
// (jsonscan.Decoder's value, then podTree). It gives up (bad) where the walker
// does and wherever a value is not exactly one the walker accepts; the
// reference then reads the pod, wording the error of one that cannot be read.
// Members it does not read (volumes, probes, container statuses, …) are
// skipped unread, whatever they hold.

// zeroQuantity is what a null or absent quantity converts to.
var zeroQuantity = raw.Quantity((&resource.Quantity{}).String())

// pod types the Pod at B[i] whose top-level fields are t.
func (d *Decoder) pod(i int, t *top, tm raw.TypeMeta) *raw.Pod {
	r := podReader{d: d, b: d.B}
	p := &raw.Pod{TypeMeta: tm}
	if r.present(t.metadata) {
		r.metadata(t.metadata, p)
	}
	if r.present(t.spec) {
		p.Spec = r.spec(t.spec)
	}
	if r.present(t.status) {
		p.Status = r.status(t.status)
	}
	if r.bad {
		v, _ := d.tree.Value(i)
		m, _ := v.(map[string]any)
		return podTree(&unstructured.Unstructured{Object: m}, tm)
	}
	return p
}

// podReader reads one pod; bad records a value the walker would not accept.
type podReader struct {
	d   *Decoder
	b   []byte
	bad bool
}

// present is the walker's obj/elem: an object is present, null (or an absent
// field, -1) is not, anything else is bad.
func (r *podReader) present(i int) bool {
	if i < 0 {
		return false
	}
	switch r.b[i] {
	case '{':
		return true
	case 'n':
		return false
	}
	r.bad = true
	return false
}

// isList is the walker's list: true for an array, false for null, bad
// otherwise.
func (r *podReader) isList(i int) bool {
	switch r.b[i] {
	case '[':
		return true
	case 'n':
		return false
	}
	r.bad = true
	return false
}

// str is the walker's str: a string, "" for null, bad otherwise.
func (r *podReader) str(i int) string {
	switch r.b[i] {
	case '"':
		s, _ := r.d.str(i)
		return s
	case 'n':
		return ""
	}
	r.bad = true
	return ""
}

// strs is the walker's strs: a list of strings (null elements are "").
func (r *podReader) strs(i int) []string {
	if !r.isList(i) {
		return nil
	}
	out := make([]string, 0, 4)
	a := jsonscan.NewArr(r.d.Ends, r.b, i)
	for a.Next() {
		out = append(out, r.str(a.Val))
	}
	return out
}

// strMap is the walker's strMap (null values are "").
func (r *podReader) strMap(i int) map[string]string {
	if !r.present(i) {
		return nil
	}
	m := map[string]string{}
	o := jsonscan.NewObj(r.d.Ends, r.b, i)
	for o.Next() {
		k := r.d.mapKey(&o)
		m[k] = r.str(o.Val)
	}
	return m
}

// optBool is the walker's optBool: nil for null, a bool, bad otherwise.
func (r *podReader) optBool(i int) *bool {
	switch r.b[i] {
	case 't':
		v := true
		return &v
	case 'f':
		v := false
		return &v
	case 'n':
		return nil
	}
	r.bad = true
	return nil
}

// number is the decoder's value of the number at B[i] (int64, float64 or
// json.Number); ok false when B[i] is not a number.
func (r *podReader) number(i int) (any, bool) {
	if c := r.b[i]; c != '-' && (c < '0' || c > '9') {
		return nil, false
	}
	end, _ := jsonscan.NumberEnd(r.b, i)
	return jsonscan.Number(r.b[i:end]), true
}

// int64Val is the walker's int64Val: null is 0, an int64, or a whole float64
// in range.
func (r *podReader) int64Val(i int) {
	if r.b[i] == 'n' {
		return
	}
	v, _ := r.number(i)
	switch v := v.(type) {
	case int64:
		return
	case float64:
		if v == math.Trunc(v) && v >= -(1<<63) && v < 1<<63 {
			return
		}
	}
	r.bad = true
}

// timeVal is the walker's timeVal: null, or an RFC 3339 string.
func (r *podReader) timeVal(i int) {
	switch r.b[i] {
	case 'n':
		return
	case '"':
		s, _ := r.d.str(i)
		if utf8.ValidString(s) {
			if _, err := time.Parse(time.RFC3339, s); err == nil {
				return
			}
		}
	}
	r.bad = true
}

// quantity is the walker's quantity, kept as the parsed quantity's String():
// a string encoding/json writes verbatim, or an int64; null is zero.
func (r *podReader) quantity(i int) raw.Quantity {
	var s string
	switch r.b[i] {
	case 'n':
		return zeroQuantity
	case '"':
		v, _ := r.d.str(i)
		if q, ok := r.d.quants[v]; ok {
			return raw.Quantity(q)
		}
		if !jsonVerbatim(v) {
			r.bad = true
			return ""
		}
		s = v
	default:
		n, isNum := r.number(i)
		v, isInt := n.(int64)
		if !isNum || !isInt {
			r.bad = true
			return ""
		}
		s = strconv.FormatInt(v, 10)
	}
	q, err := resource.ParseQuantity(strings.TrimSpace(s))
	if err != nil {
		r.bad = true
		return ""
	}
	c := q.String()
	if r.d.quants == nil {
		r.d.quants = map[string]string{}
	}
	if len(r.d.quants) < internMaxCount {
		r.d.quants[s] = c
	}
	return raw.Quantity(c)
}

func (r *podReader) metadata(i int, p *raw.Pod) {
	o := jsonscan.NewObj(r.d.Ends, r.b, i)
	for o.Next() {
		switch string(r.d.key(&o)) {
		case "name":
			p.Name = r.str(o.Val)
		case "namespace":
			p.Namespace = r.str(o.Val)
		case "labels":
			p.Labels = r.strMap(o.Val)
		case "annotations":
			p.Annotations = r.strMap(o.Val)
		}
	}
}

func (r *podReader) spec(i int) raw.PodSpec {
	var s raw.PodSpec
	o := jsonscan.NewObj(r.d.Ends, r.b, i)
	for o.Next() {
		switch string(r.d.key(&o)) {
		case "nodeName":
			s.NodeName = r.str(o.Val)
		case "containers":
			s.Containers = r.containers(o.Val)
		case "initContainers":
			s.InitContainers = r.containers(o.Val)
		}
	}
	return s
}

func (r *podReader) containers(i int) []raw.Container {
	if !r.isList(i) {
		return nil
	}
	out := make([]raw.Container, 0, 1)
	a := jsonscan.NewArr(r.d.Ends, r.b, i)
	for a.Next() {
		var c raw.Container
		if r.present(a.Val) {
			c = r.container(a.Val)
		}
		out = append(out, c)
	}
	return out
}

// container reads the fields of containerWire; the others are skipped,
// whatever they hold.
func (r *podReader) container(i int) raw.Container {
	var c raw.Container
	o := jsonscan.NewObj(r.d.Ends, r.b, i)
	for o.Next() {
		switch string(r.d.key(&o)) {
		case "name":
			c.Name = r.str(o.Val)
		case "image":
			c.Image = r.d.strOr(o.Val) // leniently (podImages)
		case "command":
			c.Command = r.strs(o.Val)
		case "args":
			c.Args = r.strs(o.Val)
		case "env":
			c.Env = nil
			if r.isList(o.Val) {
				c.Env = make([]raw.EnvVar, 0, 8)
				a := jsonscan.NewArr(r.d.Ends, r.b, o.Val)
				for a.Next() {
					var e raw.EnvVar
					if r.present(a.Val) {
						e = r.envVar(a.Val)
					}
					c.Env = append(c.Env, e)
				}
			}
		case "envFrom":
			c.EnvFrom = nil
			if r.isList(o.Val) {
				c.EnvFrom = []raw.EnvFromSource{}
				a := jsonscan.NewArr(r.d.Ends, r.b, o.Val)
				for a.Next() {
					var e raw.EnvFromSource
					if r.present(a.Val) {
						e = r.envFrom(a.Val)
					}
					c.EnvFrom = append(c.EnvFrom, e)
				}
			}
		case "resources":
			c.Resources = raw.ResourceRequirements{}
			if r.present(o.Val) {
				c.Resources = r.resources(o.Val)
			}
		case "restartPolicy":
			c.RestartPolicy = nil
			switch r.b[o.Val] {
			case 'n':
			case '"':
				s, _ := r.d.str(o.Val)
				c.RestartPolicy = &s
			default:
				r.bad = true
			}
		}
	}
	return c
}

func (r *podReader) envVar(i int) raw.EnvVar {
	var e raw.EnvVar
	o := jsonscan.NewObj(r.d.Ends, r.b, i)
	for o.Next() {
		switch string(r.d.key(&o)) {
		case "name":
			e.Name = r.str(o.Val)
		case "value":
			e.Value = r.str(o.Val)
		case "valueFrom":
			e.ValueFrom = nil
			if r.present(o.Val) {
				e.ValueFrom = r.envSource(o.Val)
			}
		}
	}
	return e
}

func (r *podReader) envSource(i int) *raw.EnvVarSource {
	src := &raw.EnvVarSource{}
	o := jsonscan.NewObj(r.d.Ends, r.b, i)
	for o.Next() {
		switch string(r.d.key(&o)) {
		case "fieldRef":
			src.FieldRef = nil
			if r.present(o.Val) {
				f := &raw.ObjectFieldSelector{}
				r.members(o.Val, func(k string, v int) {
					switch k {
					case "apiVersion":
						f.APIVersion = r.str(v)
					case "fieldPath":
						f.FieldPath = r.str(v)
					}
				})
				src.FieldRef = f
			}
		case "resourceFieldRef":
			src.ResourceFieldRef = nil
			if r.present(o.Val) {
				f := &raw.ResourceFieldSelector{Divisor: zeroQuantity}
				r.members(o.Val, func(k string, v int) {
					switch k {
					case "containerName":
						f.ContainerName = r.str(v)
					case "resource":
						f.Resource = r.str(v)
					case "divisor":
						f.Divisor = r.quantity(v)
					}
				})
				src.ResourceFieldRef = f
			}
		case "configMapKeyRef":
			src.ConfigMapKeyRef = r.keySelector(o.Val)
		case "secretKeyRef":
			src.SecretKeyRef = r.keySelector(o.Val)
		case "fileKeyRef":
			src.FileKeyRef = nil
			if r.present(o.Val) {
				f := &raw.FileKeySelector{}
				r.members(o.Val, func(k string, v int) {
					switch k {
					case "volumeName":
						f.VolumeName = r.str(v)
					case "path":
						f.Path = r.str(v)
					case "key":
						f.Key = r.str(v)
					case "optional":
						f.Optional = r.optBool(v)
					}
				})
				src.FileKeyRef = f
			}
		}
	}
	return src
}

// members calls fn with each member's key and value (the value is skipped
// afterwards: fn reads scalars only).
func (r *podReader) members(i int, fn func(key string, val int)) {
	o := jsonscan.NewObj(r.d.Ends, r.b, i)
	for o.Next() {
		fn(string(r.d.key(&o)), o.Val)
	}
}

func (r *podReader) keySelector(i int) *raw.KeySelector {
	if !r.present(i) {
		return nil
	}
	s := &raw.KeySelector{}
	r.members(i, func(k string, v int) {
		switch k {
		case "name":
			s.Name = r.str(v)
		case "key":
			s.Key = r.str(v)
		case "optional":
			s.Optional = r.optBool(v)
		}
	})
	return s
}

func (r *podReader) envFrom(i int) raw.EnvFromSource {
	var e raw.EnvFromSource
	ref := func(v int) *raw.LocalRefOptional {
		if !r.present(v) {
			return nil
		}
		l := &raw.LocalRefOptional{}
		r.members(v, func(k string, v int) {
			switch k {
			case "name":
				l.Name = r.str(v)
			case "optional":
				l.Optional = r.optBool(v)
			}
		})
		return l
	}
	r.members(i, func(k string, v int) {
		switch k {
		case "prefix":
			e.Prefix = r.str(v)
		case "configMapRef":
			e.ConfigMapRef = ref(v)
		case "secretRef":
			e.SecretRef = ref(v)
		}
	})
	return e
}

func (r *podReader) resources(i int) raw.ResourceRequirements {
	var res raw.ResourceRequirements
	list := func(v int) raw.ResourceList {
		if !r.present(v) {
			return nil
		}
		l := raw.ResourceList{}
		o := jsonscan.NewObj(r.d.Ends, r.b, v)
		for o.Next() {
			l[r.d.mapKey(&o)] = r.quantity(o.Val)
		}
		return l
	}
	o := jsonscan.NewObj(r.d.Ends, r.b, i)
	for o.Next() {
		switch string(r.d.key(&o)) {
		case "limits":
			res.Limits = list(o.Val)
		case "requests":
			res.Requests = list(o.Val)
		case "claims":
			res.Claims = nil
			if r.isList(o.Val) {
				res.Claims = []raw.ResourceClaim{}
				a := jsonscan.NewArr(r.d.Ends, r.b, o.Val)
				for a.Next() {
					var c raw.ResourceClaim
					if r.present(a.Val) {
						r.members(a.Val, func(k string, v int) {
							switch k {
							case "name":
								c.Name = r.str(v)
							case "request":
								c.Request = r.str(v)
							}
						})
					}
					res.Claims = append(res.Claims, c)
				}
			}
		}
	}
	return res
}

func (r *podReader) status(i int) raw.PodStatus {
	var s raw.PodStatus
	o := jsonscan.NewObj(r.d.Ends, r.b, i)
	for o.Next() {
		switch string(r.d.key(&o)) {
		case "phase":
			s.Phase = r.str(o.Val)
		case "podIP":
			s.PodIP = r.str(o.Val)
		case "podIPs":
			s.PodIPs = nil
			if r.isList(o.Val) {
				s.PodIPs = make([]raw.PodIP, 0, 1)
				a := jsonscan.NewArr(r.d.Ends, r.b, o.Val)
				for a.Next() {
					var ip raw.PodIP
					if r.present(a.Val) {
						r.members(a.Val, func(k string, v int) {
							if k == "ip" {
								ip.IP = r.str(v)
							}
						})
					}
					s.PodIPs = append(s.PodIPs, ip)
				}
			}
		case "conditions":
			s.Conditions = nil
			if r.isList(o.Val) {
				s.Conditions = make([]raw.PodCondition, 0, 5)
				a := jsonscan.NewArr(r.d.Ends, r.b, o.Val)
				for a.Next() {
					var c raw.PodCondition
					if r.present(a.Val) {
						r.members(a.Val, func(k string, v int) {
							switch k {
							case "type":
								c.Type = r.str(v)
							case "observedGeneration":
								r.int64Val(v)
							case "status":
								c.Status = r.str(v)
							case "lastProbeTime", "lastTransitionTime":
								r.timeVal(v)
							case "reason":
								c.Reason = r.str(v)
							case "message":
								c.Message = r.str(v)
							}
						})
					}
					s.Conditions = append(s.Conditions, c)
				}
			}
		}
	}
	return s
}
