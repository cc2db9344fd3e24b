package preflight

import (
	"encoding/json"
	"reflect"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The DynamoGraphDeployment schema, both API versions, as strict decoding
// needs it: which fields exist and what type each holds. kubectl apply
// validates fields strictly by default (the API server rejects an unknown or
// duplicate field, --validate=strict), so a typo such as kvTransferPolicey is
// an error, not a field silently dropped.
//
// The Dynamo part is written from the CRD types (ai-dynamo/dynamo
// deploy/operator/api/v1beta1 dynamographdeployment_types.go,
// dynamocomponentdeployment_types.go, common_types.go; api/v1alpha1
// dynamographdeployment_types.go, dynamocomponentdeployment_types.go,
// common.go), as the union over the releases we read: a field one release
// knows is not unknown. Subtrees whose shape the operator keeps open
// (x-kubernetes-preserve-unknown-fields: providerOverride.value,
// eppConfig.config, status) or that are still settling (the checkpoint
// blocks, the deprecated v1alpha1 autoscaling) are not checked. The
// Kubernetes parts (podTemplate, extraPodSpec, env, probes, metadata) are
// read from k8s.io/api's own types.

// schemaKind is the JSON type a field holds.
type schemaKind int

const (
	kindAny schemaKind = iota
	kindString
	kindInteger
	kindNumber
	kindBool
	kindObject
	kindList
	kindMap
	kindQuantity
	kindIntOrString
)

// schemaNode is one field's schema.
type schemaNode struct {
	kind schemaKind
	// fields are an object's known fields; nil with kindObject is an object
	// whose fields are not checked.
	fields map[string]*schemaNode
	// elem is a list's items or a map's values.
	elem *schemaNode
}

func (n *schemaNode) field(name string) (*schemaNode, bool) {
	f, ok := n.fields[name]
	return f, ok
}

var (
	anyNode      = &schemaNode{kind: kindAny}
	stringNode   = &schemaNode{kind: kindString}
	integerNode  = &schemaNode{kind: kindInteger}
	numberNode   = &schemaNode{kind: kindNumber}
	boolNode     = &schemaNode{kind: kindBool}
	quantityNode = &schemaNode{kind: kindQuantity}
	openObject   = &schemaNode{kind: kindObject}
	stringMap    = mapOf(stringNode)
	stringList   = listOf(stringNode)
)

func object(fields map[string]*schemaNode) *schemaNode {
	return &schemaNode{kind: kindObject, fields: fields}
}

func listOf(elem *schemaNode) *schemaNode { return &schemaNode{kind: kindList, elem: elem} }

func mapOf(elem *schemaNode) *schemaNode { return &schemaNode{kind: kindMap, elem: elem} }

// with returns a copy of an object node with more fields.
func with(n *schemaNode, more map[string]*schemaNode) *schemaNode {
	f := make(map[string]*schemaNode, len(n.fields)+len(more))
	for k, v := range n.fields {
		f[k] = v
	}
	for k, v := range more {
		f[k] = v
	}
	return object(f)
}

// dgdSchema returns the schema of a DynamoGraphDeployment at apiVersion
// nvidia.com/v1alpha1 or v1beta1 (nil for another version).
func dgdSchema(version string) *schemaNode {
	schemaOnce.Do(buildSchemas)
	switch version {
	case "v1alpha1":
		return alphaSchema
	case "v1beta1":
		return betaSchema
	}
	return nil
}

var (
	schemaOnce              sync.Once
	alphaSchema, betaSchema *schemaNode
)

func buildSchemas() {
	podTemplate := reflectSchema(reflect.TypeFor[corev1.PodTemplateSpec]())
	podSpec := reflectSchema(reflect.TypeFor[corev1.PodSpec]())
	container := reflectSchema(reflect.TypeFor[corev1.Container]())
	env := listOf(reflectSchema(reflect.TypeFor[corev1.EnvVar]()))
	probe := reflectSchema(reflect.TypeFor[corev1.Probe]())
	metadata := reflectSchema(reflect.TypeFor[metav1.ObjectMeta]())
	configMapKeyRef := reflectSchema(reflect.TypeFor[corev1.ConfigMapKeySelector]())
	resourceClaims := listOf(reflectSchema(reflect.TypeFor[corev1.ResourceClaim]()))

	policy := object(map[string]*schemaNode{
		"labelKey": stringNode, "clusterTopologyName": stringNode, "domain": stringNode,
		"enforcement": stringNode, "preferredWeight": numberNode,
	})
	providerOverride := object(map[string]*schemaNode{"apiVersion": stringNode, "target": stringNode, "value": anyNode})
	restart := object(map[string]*schemaNode{
		"id":       stringNode,
		"strategy": object(map[string]*schemaNode{"type": stringNode, "order": stringList}),
	})
	multinode := object(map[string]*schemaNode{"nodeCount": integerNode})
	modelRef := object(map[string]*schemaNode{"name": stringNode, "revision": stringNode})
	componentTC := object(map[string]*schemaNode{"packDomain": stringNode})
	eppConfig := object(map[string]*schemaNode{"configMapRef": configMapKeyRef, "config": anyNode})
	roles := listOf(object(map[string]*schemaNode{
		"name": stringNode, "replicas": integerNode, "providerOverride": providerOverride, "podTemplate": podTemplate,
	}))
	gms := object(map[string]*schemaNode{
		"enabled": boolNode, "mode": stringNode, "deviceClassName": stringNode,
		"extraClientContainers": stringList, "extraClientPods": listOf(openObject),
	})
	failover := object(map[string]*schemaNode{"enabled": boolNode, "mode": stringNode, "numShadows": integerNode})
	// scalingAdapter is {} in v1beta1, {enabled} in v1alpha1 and older v1beta1.
	scalingAdapter := object(map[string]*schemaNode{"enabled": boolNode})

	// The fields both versions' components share.
	shared := object(map[string]*schemaNode{
		"providerOverride": providerOverride, "runtimeVersionOverride": stringNode,
		"globalDynamoNamespace": boolNode, "replicas": integerNode, "minAvailable": integerNode,
		"multinode": multinode, "roles": roles, "modelRef": modelRef, "scalingAdapter": scalingAdapter,
		"eppConfig": eppConfig, "dynamoSidecar": stringNode, "topologyConstraint": componentTC,
	})
	betaComponent := with(shared, map[string]*schemaNode{
		"name": stringNode, "type": stringNode, "podTemplate": podTemplate,
		"sharedMemorySize": quantityNode, "frontendSidecar": stringNode,
		"compilationCache": object(map[string]*schemaNode{"pvcName": stringNode, "mountPath": stringNode}),
		"experimental": object(map[string]*schemaNode{
			"gpuMemoryService": gms, "failover": failover, "checkpoint": openObject,
			"grove": object(map[string]*schemaNode{"forceScalingGroup": boolNode}),
		}),
	})
	resourceItem := object(map[string]*schemaNode{
		"cpu": stringNode, "memory": stringNode, "gpu": stringNode, "gpuType": stringNode, "custom": stringMap,
	})
	extraPodSpec := with(podSpec, map[string]*schemaNode{"mainContainer": container})
	alphaService := with(shared, map[string]*schemaNode{
		"annotations": stringMap, "labels": stringMap, "serviceName": stringNode,
		"componentType": stringNode, "subComponentType": stringNode, "dynamoNamespace": stringNode,
		"resources":     object(map[string]*schemaNode{"requests": resourceItem, "limits": resourceItem, "claims": resourceClaims}),
		"autoscaling":   openObject,
		"envs":          env,
		"envFromSecret": stringNode,
		"volumeMounts":  listOf(object(map[string]*schemaNode{"name": stringNode, "mountPoint": stringNode, "useAsCompilationCache": boolNode})),
		"ingress": object(map[string]*schemaNode{
			"enabled": boolNode, "host": stringNode, "useVirtualService": boolNode, "virtualServiceGateway": stringNode,
			"hostPrefix": stringNode, "hostSuffix": stringNode, "annotations": stringMap, "labels": stringMap,
			"tls": object(map[string]*schemaNode{"secretName": stringNode}), "ingressControllerClassName": stringNode,
		}),
		"sharedMemory":     object(map[string]*schemaNode{"disabled": boolNode, "size": quantityNode}),
		"extraPodMetadata": object(map[string]*schemaNode{"annotations": stringMap, "labels": stringMap}),
		"extraPodSpec":     extraPodSpec,
		"livenessProbe":    probe, "readinessProbe": probe,
		"checkpoint":       openObject,
		"frontendSidecar":  openObject,
		"gpuMemoryService": gms, "failover": failover,
	})

	sharedSpec := map[string]*schemaNode{
		"providerOverride": providerOverride, "annotations": stringMap, "labels": stringMap,
		"priorityClassName": stringNode, "backendFramework": stringNode, "restart": restart,
	}
	betaSpec := with(object(sharedSpec), map[string]*schemaNode{
		"components": listOf(betaComponent),
		"env":        env,
		"topologyConstraint": object(map[string]*schemaNode{
			// topologyProfile: the field's name in early v1beta1 releases.
			"clusterTopologyName": stringNode, "topologyProfile": stringNode, "packDomain": stringNode,
		}),
		"experimental": object(map[string]*schemaNode{
			"kvTransferPolicy": policy,
			"componentGroups": listOf(object(map[string]*schemaNode{
				"name": stringNode, "replicas": integerNode, "scalingAdapter": scalingAdapter,
				"components": listOf(object(map[string]*schemaNode{"name": stringNode})),
			})),
		}),
	})
	alphaSpec := with(object(sharedSpec), map[string]*schemaNode{
		"services": mapOf(alphaService),
		"envs":     env,
		"pvcs": listOf(object(map[string]*schemaNode{
			"create": boolNode, "name": stringNode, "storageClass": stringNode, "size": quantityNode, "volumeAccessMode": stringNode,
		})),
		"topologyConstraint": object(map[string]*schemaNode{
			"topologyProfile": stringNode, "clusterTopologyName": stringNode, "packDomain": stringNode,
		}),
		"experimental": object(map[string]*schemaNode{"kvTransferPolicy": policy}),
	})
	root := func(spec *schemaNode) *schemaNode {
		return object(map[string]*schemaNode{
			"apiVersion": stringNode, "kind": stringNode, "metadata": metadata, "spec": spec, "status": anyNode,
		})
	}
	alphaSchema, betaSchema = root(alphaSpec), root(betaSpec)
}

// reflectSchema is the schema of a Kubernetes API type, from its json tags.
func reflectSchema(t reflect.Type) *schemaNode {
	return (&reflector{seen: map[reflect.Type]*schemaNode{}}).node(t)
}

type reflector struct {
	seen map[reflect.Type]*schemaNode
}

var jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()

func (r *reflector) node(t reflect.Type) *schemaNode {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.PkgPath() + "." + t.Name() {
	case "k8s.io/apimachinery/pkg/api/resource.Quantity":
		return quantityNode
	case "k8s.io/apimachinery/pkg/util/intstr.IntOrString":
		return &schemaNode{kind: kindIntOrString}
	case "k8s.io/apimachinery/pkg/apis/meta/v1.Time", "k8s.io/apimachinery/pkg/apis/meta/v1.MicroTime",
		"k8s.io/apimachinery/pkg/apis/meta/v1.Duration":
		return stringNode
	}
	if reflect.PointerTo(t).Implements(jsonUnmarshaler) {
		// A type that decodes itself (FieldsV1, RawExtension): its own shape.
		return anyNode
	}
	switch t.Kind() {
	case reflect.String:
		return stringNode
	case reflect.Bool:
		return boolNode
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return integerNode
	case reflect.Float32, reflect.Float64:
		return numberNode
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return stringNode // []byte is base64 text
		}
		return listOf(r.node(t.Elem()))
	case reflect.Map:
		return mapOf(r.node(t.Elem()))
	case reflect.Struct:
		if n, ok := r.seen[t]; ok {
			return n
		}
		n := object(map[string]*schemaNode{})
		r.seen[t] = n
		r.fields(t, n)
		return n
	}
	return anyNode
}

// fields adds a struct's json fields to n, inline embedded structs included.
func (r *reflector) fields(t reflect.Type, n *schemaNode) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		if f.Anonymous && (name == "" || strings.Contains(","+opts+",", ",inline,")) {
			et := f.Type
			for et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				r.fields(et, n)
				continue
			}
		}
		if name == "" {
			name = f.Name
		}
		n.fields[name] = r.node(f.Type)
	}
}
