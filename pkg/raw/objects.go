package raw

// Object is a Kubernetes object as read, not interpreted: its JSON value as
// the capture reader decodes it (objects as map[string]any, arrays as []any,
// integers that fit as int64 and larger ones as json.Number, other numbers as
// float64). Only the capture writer and preflight's checks read whole objects;
// everything else reads the typed objects below.
type Object = map[string]any

// Objects are the Kubernetes objects of a Bundle, typed by kind: each holds
// only the fields something reads (pkg/build, the sources' scoping, the
// frontend and etcd detection), named after their JSON paths. pkg/raw/decode
// fills them from JSON (a capture file, a LIST page) or from an Object.
//
// Objects are sorted by kind and API group exactly as Build sorts them: a kind
// in another group (a "Pod" of group example.com) is none of these and is not
// kept. Within a kind, objects keep the order they were read in.
type Objects struct {
	// DGDs are the DynamoGraphDeployments (nvidia.com, any version).
	DGDs []*DGD
	// DWMs are the DynamoWorkerMetadatas (nvidia.com).
	DWMs []*DWM
	// Pods are the Pods (core group).
	Pods []*Pod
	// Nodes are the Nodes (core group).
	Nodes []*Node
	// Services are the Services (core group).
	Services []*Service
	// EndpointSlices are the EndpointSlices (discovery.k8s.io).
	EndpointSlices []*EndpointSlice
	// Events are the Events (core group or events.k8s.io).
	Events []*Event
	// Topologies are the Grove ClusterTopologyBindings and ClusterTopologies
	// (grove.io).
	Topologies []*ClusterTopology
	// Deployments are the apps/v1 Deployments (the Dynamo operator's
	// controller manager is one).
	Deployments []*Deployment
}

// Len is the number of objects.
func (o *Objects) Len() int {
	return len(o.DGDs) + len(o.DWMs) + len(o.Pods) + len(o.Nodes) + len(o.Services) + len(o.EndpointSlices) + len(o.Events) + len(o.Topologies) + len(o.Deployments)
}

// Append adds p's objects after o's, kind by kind.
func (o *Objects) Append(p Objects) {
	o.DGDs = append(o.DGDs, p.DGDs...)
	o.DWMs = append(o.DWMs, p.DWMs...)
	o.Pods = append(o.Pods, p.Pods...)
	o.Nodes = append(o.Nodes, p.Nodes...)
	o.Services = append(o.Services, p.Services...)
	o.EndpointSlices = append(o.EndpointSlices, p.EndpointSlices...)
	o.Events = append(o.Events, p.Events...)
	o.Topologies = append(o.Topologies, p.Topologies...)
	o.Deployments = append(o.Deployments, p.Deployments...)
}

// Kinds of the typed objects, and the API groups they are read from.
const (
	KindDGD                    = "DynamoGraphDeployment"
	KindDWM                    = "DynamoWorkerMetadata"
	KindPod                    = "Pod"
	KindNode                   = "Node"
	KindService                = "Service"
	KindEndpointSlice          = "EndpointSlice"
	KindEvent                  = "Event"
	KindClusterTopologyBinding = "ClusterTopologyBinding"
	KindClusterTopology        = "ClusterTopology"
	KindDeployment             = "Deployment"

	GroupDynamo    = "nvidia.com"
	GroupDiscovery = "discovery.k8s.io"
	GroupEvents    = "events.k8s.io"
	GroupGrove     = "grove.io"
	GroupApps      = "apps"
)

// Group is the API group of an apiVersion ("" for the core group's "v1").
func Group(apiVersion string) string {
	for i := 0; i < len(apiVersion); i++ {
		if apiVersion[i] == '/' {
			return apiVersion[:i]
		}
	}
	return ""
}

// TypeMeta is an object's apiVersion and kind ("" when absent or not a string).
type TypeMeta struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
}

// ObjectMeta is the part of metadata something reads. Strings are "" when
// absent or not a string. Labels and Annotations read as Unstructured's
// GetLabels and GetAnnotations read them: a null value is "", and one value of
// another type makes them all unknown (nil).
type ObjectMeta struct {
	Name        string            `json:"name"`
	Namespace   string            `json:"namespace"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	// CreationTimestamp is read for Events only.
	CreationTimestamp string `json:"creationTimestamp"`
	// OwnerReferences are read for DWMs only, as Unstructured.GetOwnerReferences
	// reads them: nil unless metadata.ownerReferences is a list of objects.
	OwnerReferences []OwnerReference `json:"ownerReferences"`
}

// OwnerReference is one of metadata.ownerReferences ("" for a field that is
// not a string; nil for a controller flag that is not a bool).
type OwnerReference struct {
	APIVersion         string `json:"apiVersion"`
	Kind               string `json:"kind"`
	Name               string `json:"name"`
	UID                string `json:"uid"`
	Controller         *bool  `json:"controller"`
	BlockOwnerDeletion *bool  `json:"blockOwnerDeletion"`
}

// DGD is a DynamoGraphDeployment. Its spec and status have an open schema
// (the CRD preserves unknown fields) that Build reads the way the operator
// does, through JSON, so they are kept as JSON values: nil when absent or not
// an object.
type DGD struct {
	TypeMeta
	ObjectMeta `json:"metadata"`
	Spec       map[string]any `json:"spec"`
	Status     map[string]any `json:"status"`
}

// Node is a Node: Build reads its labels.
type Node struct {
	TypeMeta
	ObjectMeta `json:"metadata"`
}

// Service is a Service. Its spec is kept as a JSON value (nil when absent or
// not an object): Build reads it as a core/v1 ServiceSpec, the frontend
// detection its ports.
type Service struct {
	TypeMeta
	ObjectMeta `json:"metadata"`
	Spec       map[string]any `json:"spec"`
}

// EndpointSlice is a discovery.k8s.io EndpointSlice: its endpoints' target
// pods and readiness.
type EndpointSlice struct {
	TypeMeta
	ObjectMeta `json:"metadata"`
	// Endpoints are the elements of endpoints that are objects (nil when
	// endpoints is not a list).
	Endpoints []Endpoint `json:"endpoints"`
}

// Endpoint is one endpoint of an EndpointSlice.
type Endpoint struct {
	TargetRef  ObjectReference    `json:"targetRef"`
	Conditions EndpointConditions `json:"conditions"`
}

// EndpointConditions are an endpoint's conditions.
type EndpointConditions struct {
	// Ready is nil when absent or not a bool.
	Ready *bool `json:"ready"`
}

// ObjectReference names an object ("" for a field that is absent or not a
// string).
type ObjectReference struct {
	Kind      string `json:"kind"`
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
}

// Event is a core/v1 or events.k8s.io/v1 Event. Strings are "" when absent or
// not a string; counts are nil unless the value is an integer that fits in 64
// bits.
type Event struct {
	TypeMeta
	ObjectMeta     `json:"metadata"`
	InvolvedObject ObjectReference `json:"involvedObject"`
	Regarding      ObjectReference `json:"regarding"`
	Reason         string          `json:"reason"`
	Type           string          `json:"type"`
	Message        string          `json:"message"`
	Note           string          `json:"note"`
	Count          *int64          `json:"count"`
	Series         EventSeries     `json:"series"`
	// DeprecatedCount, DeprecatedLastTimestamp are events.k8s.io/v1's names.
	DeprecatedCount         *int64 `json:"deprecatedCount"`
	LastTimestamp           string `json:"lastTimestamp"`
	DeprecatedLastTimestamp string `json:"deprecatedLastTimestamp"`
	EventTime               string `json:"eventTime"`
	FirstTimestamp          string `json:"firstTimestamp"`
}

// EventSeries is an event's series.
type EventSeries struct {
	Count            *int64 `json:"count"`
	LastObservedTime string `json:"lastObservedTime"`
}

// ClusterTopology is a Grove ClusterTopologyBinding or ClusterTopology (Kind
// says which).
type ClusterTopology struct {
	TypeMeta
	ObjectMeta `json:"metadata"`
	Spec       ClusterTopologySpec `json:"spec"`
}

// ClusterTopologySpec is the part of the spec Build reads.
type ClusterTopologySpec struct {
	// Levels is spec.levels as a JSON value (nil when absent); Build reads it
	// as a list of {domain, key}.
	Levels any `json:"levels"`
}

// Deployment is an apps/v1 Deployment, of which only what tells a Dynamo
// operator's release is read: its name, namespace and labels (not its
// annotations), and its pod template's containers' names, images and
// arguments.
type Deployment struct {
	TypeMeta
	ObjectMeta `json:"metadata"`
	Spec       DeploymentSpec `json:"spec"`
}

// DeploymentSpec is the part of a Deployment's spec that is read.
type DeploymentSpec struct {
	Template PodTemplateSpec `json:"template"`
}

// PodTemplateSpec is a Deployment's pod template.
type PodTemplateSpec struct {
	Spec PodTemplateSpecSpec `json:"spec"`
}

// PodTemplateSpecSpec is the part of a pod template's spec that is read.
type PodTemplateSpecSpec struct {
	// Containers are the elements of spec.template.spec.containers that are
	// objects, as NestedSlice reads the list: nil unless it is a list.
	Containers []DeploymentContainer `json:"containers"`
}

// DeploymentContainer is the part of a pod template's container that is
// read. Strings are "" when absent or not a string.
type DeploymentContainer struct {
	Name  string `json:"name"`
	Image string `json:"image"`
	// Args has one element per element of args ("" for one that is not a
	// string); nil unless args is a list.
	Args []string `json:"args"`
}
