package raw

// Pod is the part of a Pod that is read: what Build converts (metadata, the
// containers' command lines, environment, resources and restart policies, the
// node, phase, IPs and conditions, and the containers' images) and nothing else: not managedFields,
// volumes, probes, ports or container statuses. Field names follow the JSON
// paths (and corev1's Go names, so code written against corev1.Pod reads the
// same).
//
// The fields hold exactly what apimachinery's unstructured converter
// (runtime.DefaultUnstructuredConverter) makes of them: a null is the zero
// value, a present list or object is never nil (an empty one stays empty).
// When the conversion fails, Invalid says why, and only the metadata is set
// (read as Unstructured's accessors read it, Labels included).
type Pod struct {
	TypeMeta
	ObjectMeta `json:"metadata"`
	Spec       PodSpec   `json:"spec"`
	Status     PodStatus `json:"status"`
	// Invalid is the conversion's error when the pod cannot be read ("" when
	// it can).
	Invalid string `json:"-"`
}

// PodSpec is the part of a pod's spec that is read.
type PodSpec struct {
	NodeName       string      `json:"nodeName"`
	Containers     []Container `json:"containers"`
	InitContainers []Container `json:"initContainers"`
}

// Container is the part of a container that is read.
type Container struct {
	Name string `json:"name"`
	// Image is read leniently, apart from the conversion: "" when absent or
	// not a string, and never a reason the pod cannot be read (it only tells
	// the Dynamo release).
	Image         string               `json:"image"`
	Command       []string             `json:"command"`
	Args          []string             `json:"args"`
	Env           []EnvVar             `json:"env"`
	EnvFrom       []EnvFromSource      `json:"envFrom"`
	Resources     ResourceRequirements `json:"resources"`
	RestartPolicy *string              `json:"restartPolicy"`
}

// ContainerRestartPolicyAlways is the container restart policy that marks a
// native sidecar among init containers.
const ContainerRestartPolicyAlways = "Always"

// EnvVar is one env entry, every form of valueFrom included.
type EnvVar struct {
	Name      string        `json:"name"`
	Value     string        `json:"value"`
	ValueFrom *EnvVarSource `json:"valueFrom"`
}

// EnvVarSource is an env entry's valueFrom.
type EnvVarSource struct {
	FieldRef         *ObjectFieldSelector   `json:"fieldRef"`
	ResourceFieldRef *ResourceFieldSelector `json:"resourceFieldRef"`
	ConfigMapKeyRef  *KeySelector           `json:"configMapKeyRef"`
	SecretKeyRef     *KeySelector           `json:"secretKeyRef"`
	FileKeyRef       *FileKeySelector       `json:"fileKeyRef"`
}

// ObjectFieldSelector is a valueFrom.fieldRef.
type ObjectFieldSelector struct {
	APIVersion string `json:"apiVersion"`
	FieldPath  string `json:"fieldPath"`
}

// ResourceFieldSelector is a valueFrom.resourceFieldRef.
type ResourceFieldSelector struct {
	ContainerName string   `json:"containerName"`
	Resource      string   `json:"resource"`
	Divisor       Quantity `json:"divisor"`
}

// KeySelector is a valueFrom.configMapKeyRef or secretKeyRef.
type KeySelector struct {
	Name     string `json:"name"`
	Key      string `json:"key"`
	Optional *bool  `json:"optional"`
}

// FileKeySelector is a valueFrom.fileKeyRef.
type FileKeySelector struct {
	VolumeName string `json:"volumeName"`
	Path       string `json:"path"`
	Key        string `json:"key"`
	Optional   *bool  `json:"optional"`
}

// EnvFromSource is one envFrom entry.
type EnvFromSource struct {
	Prefix       string            `json:"prefix"`
	ConfigMapRef *LocalRefOptional `json:"configMapRef"`
	SecretRef    *LocalRefOptional `json:"secretRef"`
}

// LocalRefOptional names a ConfigMap or Secret of the pod's namespace.
type LocalRefOptional struct {
	Name     string `json:"name"`
	Optional *bool  `json:"optional"`
}

// ResourceRequirements are a container's resources.
type ResourceRequirements struct {
	Limits   ResourceList    `json:"limits"`
	Requests ResourceList    `json:"requests"`
	Claims   []ResourceClaim `json:"claims"`
}

// ResourceList maps resource names (nvidia.com/gpu, cpu, …) to quantities.
type ResourceList map[string]Quantity

// Quantity is a resource quantity: as written ("4", "500m", "80Gi", spaces
// trimmed), or canonical when only the reference converter could read it.
// It is always one resource.ParseQuantity accepts (a pod holding another
// cannot be read), and parses to the quantity the conversion made; Build
// parses the ones it uses.
type Quantity string

// ResourceClaim is one of resources.claims.
type ResourceClaim struct {
	Name    string `json:"name"`
	Request string `json:"request"`
}

// PodStatus is the part of a pod's status that is read.
type PodStatus struct {
	Phase      string         `json:"phase"`
	PodIP      string         `json:"podIP"`
	PodIPs     []PodIP        `json:"podIPs"`
	Conditions []PodCondition `json:"conditions"`
}

// Pod phases and condition values Build compares with.
const (
	PodPending      = "Pending"
	PodReady        = "Ready"
	PodScheduled    = "PodScheduled"
	ConditionTrue   = "True"
	ConditionFalse  = "False"
	PodSucceeded    = "Succeeded"
	PodFailed       = "Failed"
	PodInitialized  = "Initialized"
	ContainersReady = "ContainersReady"
)

// PodIP is one of status.podIPs.
type PodIP struct {
	IP string `json:"ip"`
}

// PodCondition is one of status.conditions. Its observedGeneration and times
// are checked (a pod where they do not convert cannot be read) but not kept:
// nothing reads them.
type PodCondition struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}
