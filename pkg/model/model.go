package model

import (
	"encoding/json"
	"time"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
)

// Snapshot is everything kubectl-dynamo knows about one or more Dynamo
// deployments at one moment: the plain data model that the CLI printers, the
// findings engine, explain-route and the dashboard all read. It holds no
// client-go, etcd or HTTP types. Slices are sorted by stable keys (deployments by
// namespace then name, workers by pod name, instances by id) so that output is
// deterministic.
type Snapshot struct {
	// Context is the kubeconfig context (live) or the capture file (offline).
	Context string `json:"context,omitempty"`
	// Namespace is the namespace scope asked for ("" with --all-namespaces).
	Namespace string `json:"namespace,omitempty"`
	// CollectedAt is when the data was read (or the capture's timestamp).
	CollectedAt time.Time `json:"collectedAt"`
	// Sources lists every data source consulted and how it went.
	Sources []SourceStatus `json:"sources"`
	// Deployments are the DynamoGraphDeployments found, in (namespace, name) order.
	Deployments []Deployment `json:"deployments"`
	// Notes are facts about the collection a user must know, e.g. a missing CRD or
	// a permission denied; each says what was not seen and what that means.
	Notes []Note `json:"notes,omitempty"`
	// Operators are the Dynamo operator installations seen (their
	// controller-manager Deployments); none when the list was not allowed
	// (a note says so) or a capture has none.
	Operators []Operator `json:"operators,omitempty"`
}

// Operator is one Dynamo operator installation: its controller-manager
// Deployment and the release it runs.
type Operator struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Version is the manager's --operator-version (the Helm chart's
	// appVersion), else the image tag; "" when neither says.
	Version string `json:"version,omitempty"`
	// Image is the manager container's image.
	Image string `json:"image,omitempty"`
}

// SourceKind names a data source.
type SourceKind string

// The data sources.
const (
	SourceKubernetes SourceKind = "kubernetes"
	SourceEtcd       SourceKind = "etcd"
	SourceFrontend   SourceKind = "frontend"
	SourceCapture    SourceKind = "capture"
)

// SourceStatus says what one source contributed.
type SourceStatus struct {
	Kind SourceKind `json:"kind"`
	// Detail names the endpoint, file or context read.
	Detail string `json:"detail,omitempty"`
	// At is when the source was read.
	At time.Time `json:"at"`
	// Degraded is true when the source answered only partly or not at all.
	Degraded bool `json:"degraded,omitempty"`
	// Message explains a degradation.
	Message string `json:"message,omitempty"`
	// Unreachable is set when some read failed because the source could not be
	// reached at all (no connection, or a connection closed without an answer),
	// as opposed to refusing (RBAC) or not serving it: which endpoint and why,
	// e.g. "the API server of context prod (https://…) is unreachable,
	// connection refused".
	Unreachable string `json:"unreachable,omitempty"`
}

// NoteSeverity ranks a Note.
type NoteSeverity string

// Note severities.
const (
	NoteInfo    NoteSeverity = "info"
	NoteWarning NoteSeverity = "warning"
)

// Note is a message about the collection itself (not a finding about the
// deployment): a missing CRD, a 403, an unreachable frontend, an unparsable value.
type Note struct {
	Severity NoteSeverity `json:"severity"`
	Source   SourceKind   `json:"source"`
	// Deployment is set when the note concerns one deployment ("namespace/name").
	Deployment string `json:"deployment,omitempty"`
	Message    string `json:"message"`
}

// Deployment is one DynamoGraphDeployment and its workers.
type Deployment struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	// APIVersion is the DGD version read, e.g. nvidia.com/v1beta1.
	APIVersion string `json:"apiVersion"`
	// DynamoNamespace is the Dynamo namespace (not the Kubernetes one) when known.
	DynamoNamespace string `json:"dynamoNamespace,omitempty"`
	// DiscoveryBackend is "kubernetes" or "etcd" (from the DGD annotation and pod env).
	DiscoveryBackend string `json:"discoveryBackend,omitempty"`
	// Policy is spec.experimental.kvTransferPolicy; nil when the DGD sets none.
	Policy *TransferPolicy `json:"policy,omitempty"`
	// Topology is the Grove topology object the policy or placement names, when any.
	Topology *TopologyObject `json:"topology,omitempty"`
	// Components are the DGD's components (services) with their declared role.
	Components []Component `json:"components,omitempty"`
	// Router is the frontend's effective router configuration.
	Router RouterInfo `json:"router"`
	// Frontends are the frontend pods.
	Frontends []Frontend `json:"frontends,omitempty"`
	// Workers are the worker pods (and their published instances), by pod name.
	Workers []Worker `json:"workers"`
	// Events are the Kubernetes events about the deployment's objects that matter
	// to topology (e.g. TopologyLabelMissing), newest last.
	Events []Event `json:"events,omitempty"`
	// Conditions are the DGD's status conditions.
	Conditions []Condition `json:"conditions,omitempty"`
	// HasStatus says whether the DGD has a status (the operator has reconciled
	// it); a manifest read from a file has none.
	HasStatus bool `json:"hasStatus,omitempty"`
	// Load says where the worker loads came from, when any are known.
	Load *LoadInfo `json:"load,omitempty"`
	// RoutingQuality is the KV router's account of the prefix cache it used and
	// could have used, from the frontend's /metrics; nil when it exports none.
	RoutingQuality *RoutingQuality `json:"routingQuality,omitempty"`
	// KvEvents is what the frontend's router says about the KV events it
	// receives (workers without a source, events applied), from its /metrics;
	// nil when it exports none of those series.
	KvEvents *KvEventsInfo `json:"kvEvents,omitempty"`
}

// Key returns "namespace/name".
func (d *Deployment) Key() string { return d.Namespace + "/" + d.Name }

// PolicyMode is how a kvTransferPolicy names its topology source.
type PolicyMode string

// Policy modes.
const (
	PolicyLabelKey            PolicyMode = "labelKey"
	PolicyClusterTopologyName PolicyMode = "clusterTopologyName"
)

// TransferPolicy is a DGD's spec.experimental.kvTransferPolicy, with the label
// keys it implies resolved.
type TransferPolicy struct {
	Mode                PolicyMode `json:"mode"`
	LabelKey            string     `json:"labelKey,omitempty"`
	ClusterTopologyName string     `json:"clusterTopologyName,omitempty"`
	// Domain is the logical transfer domain (zone, rack, …).
	Domain string `json:"domain"`
	// Enforcement is "required" or "preferred"; the CRD default "required" is
	// applied when the field is empty, and EnforcementDefaulted says so.
	Enforcement          routecore.KvTransferEnforcement `json:"enforcement"`
	EnforcementDefaulted bool                            `json:"enforcementDefaulted,omitempty"`
	PreferredWeight      *float64                        `json:"preferredWeight,omitempty"`
	// PodLabelKey is the pod label carrying the worker's domain value: LabelKey, or
	// nvidia.com/dynamo-topology.<domain> in clusterTopologyName mode.
	PodLabelKey string `json:"podLabelKey"`
	// NodeLabelKey is the node label the value is copied from: LabelKey, or the
	// topology object's level key for Domain ("" when the object is missing).
	NodeLabelKey string `json:"nodeLabelKey,omitempty"`
}

// TopologyObject is a Grove ClusterTopologyBinding (or legacy ClusterTopology).
type TopologyObject struct {
	// Kind is ClusterTopologyBinding or ClusterTopology.
	Kind string `json:"kind"`
	Name string `json:"name"`
	// Found is false when the DGD names an object that does not exist (or could not
	// be read; see Snapshot.Notes).
	Found bool `json:"found"`
	// Levels are the object's levels, broadest first.
	Levels []TopologyLevel `json:"levels,omitempty"`
}

// TopologyLevel is one level of a topology hierarchy.
type TopologyLevel struct {
	Domain string `json:"domain"`
	// NodeLabelKey is the node label holding this level's value.
	NodeLabelKey string `json:"nodeLabelKey"`
}

// Role is a worker's part in serving.
type Role string

// Roles.
const (
	RolePrefill    Role = "prefill"
	RoleDecode     Role = "decode"
	RoleAggregated Role = "aggregated"
	RoleEncode     Role = "encode"
	RoleUnknown    Role = "unknown"
)

// Component is one DGD component (service).
type Component struct {
	Name string `json:"name"`
	// Type is the declared type (frontend, worker, prefill, decode, planner, …).
	Type string `json:"type"`
	// SubComponentType is the v1alpha1 subComponentType when set.
	SubComponentType string `json:"subComponentType,omitempty"`
	// Replicas is the desired replica count when declared.
	Replicas *int32 `json:"replicas,omitempty"`
	// NodesPerReplica is >1 for multinode components.
	NodesPerReplica int32 `json:"nodesPerReplica,omitempty"`
	// Image is the main container's image in the DGD spec ("" when unset).
	Image string `json:"image,omitempty"`
}

// RouterInfo is the frontend's effective router configuration.
type RouterInfo struct {
	// Mode is the router mode (kv, round-robin, …); "" when unknown.
	Mode string `json:"mode,omitempty"`
	// ModeSource says where Mode came from (e.g. "frontend args", "env", "default").
	ModeSource string `json:"modeSource,omitempty"`
	// Config is the effective KvRouterConfig (defaults ← env ← args; a worker set's
	// published router_config replaces it, see WorkerSetOverrides).
	Config routecore.KvRouterConfig `json:"config"`
	// ConfigSource says where Config came from.
	ConfigSource string `json:"configSource,omitempty"`
	// Thresholds are the busy thresholds (frontend flags/env, or the live
	// /busy_threshold answer, which wins).
	Thresholds routecore.BusyThresholds `json:"thresholds"`
	// ThresholdsSource says where Thresholds came from.
	ThresholdsSource string `json:"thresholdsSource,omitempty"`
	// WorkerSetOverrides are router_config blocks published in worker model cards,
	// by component; each replaces the frontend config for that worker set.
	WorkerSetOverrides []RouterOverride `json:"workerSetOverrides,omitempty"`
	// WorkerArgs are the router settings worker components pass on their own
	// command line or env (--router-mode, DYN_ROUTER_MODE and the KV-router
	// flags), by component: what their cards will publish as router_config on
	// releases whose workers advertise it (pkg/behavior decides). Only
	// components that set a router mode are listed.
	WorkerArgs []RouterOverride `json:"workerArgs,omitempty"`
	// Warnings are problems met while reading the configuration.
	Warnings []string `json:"warnings,omitempty"`
}

// RouterOverride is a model card's router_config for one worker set.
type RouterOverride struct {
	Component string                   `json:"component"`
	Mode      string                   `json:"mode,omitempty"`
	Config    routecore.KvRouterConfig `json:"config"`
	// Source says where it was read: "card" for a published router_config,
	// else the pod or spec whose args/env set it.
	Source string `json:"source,omitempty"`
}

// Frontend is one frontend pod.
type Frontend struct {
	Pod   string `json:"pod"`
	Node  string `json:"node,omitempty"`
	Ready bool   `json:"ready"`
	// Image is the main container's image.
	Image string `json:"image,omitempty"`
	// Service is the Service (name:port) that fronts it, when found.
	Service string `json:"service,omitempty"`
	// Argv and Env are the main container's command line (as Worker.Argv) and
	// its DYN_* environment; not serialised (see Worker.Argv).
	Argv []string          `json:"-"`
	Env  map[string]string `json:"-"`
	// Container is the main container's name, whose log holds the router's
	// lines (audit-routes); not serialised.
	Container string `json:"-"`
}

// Worker is one worker pod.
type Worker struct {
	Pod       string `json:"pod"`
	Namespace string `json:"namespace"`
	Node      string `json:"node,omitempty"`
	Component string `json:"component,omitempty"`
	// Role and RoleSignal: the role and which signal decided it (card worker_type,
	// component-type label, sub-component-type label, --disaggregation-mode arg,
	// component name).
	Role       Role   `json:"role"`
	RoleSignal string `json:"roleSignal"`
	// Replica groups the pods of one multinode replica (leader and workers); it is
	// the pod name for single-node workers. Leader is true for the pod that
	// publishes the worker (rank 0).
	Replica string `json:"replica"`
	Leader  bool   `json:"leader"`
	// Ready is the pod's Ready condition (and the EndpointSlice when known).
	Ready bool   `json:"ready"`
	Phase string `json:"phase,omitempty"`
	// Image is the main container's image.
	Image string `json:"image,omitempty"`
	// Pending is set when the pod has no node: the scheduler has not placed it
	// (why, when it was read). Such a pod has no node label, so no domain value yet.
	Pending *PodPending `json:"pending,omitempty"`
	// GPUs is the sum of nvidia.com/gpu and MIG (nvidia.com/mig-*) requests over
	// containers; GPUResources lists them by resource name.
	GPUs         int64            `json:"gpus"`
	GPUResources map[string]int64 `json:"gpuResources,omitempty"`
	// Instances are the Dynamo endpoint instances this pod published (from DWM CRs
	// or etcd), by instance id.
	Instances []Instance `json:"instances,omitempty"`
	// Domain is the worker's value for the deployment's transfer domain, as seen in
	// each place it lives.
	Domain DomainValues `json:"domain"`
	// TopologyEnv is the topology-related environment the operator injected.
	TopologyEnv TopologyEnv `json:"topologyEnv"`
	// LabelKeyAnnotation is the nvidia.com/topology-label-key (or
	// -cluster-topology-name) annotation value, "" when absent.
	LabelKeyAnnotation string `json:"labelKeyAnnotation,omitempty"`
	// NodeLabels are the node's topology-related labels (zone, region, rack, host,
	// and every label named by the policy or topology object).
	NodeLabels map[string]string `json:"nodeLabels,omitempty"`
	// PodLabels are the pod's topology labels (the policy's pod label key and
	// nvidia.com/dynamo-topology.* labels).
	PodLabels map[string]string `json:"podLabels,omitempty"`
	// Argv is the main container's command line as words (command and args,
	// $(VAR) expanded, a shell's -c script split; CommandWords opens deeper
	// nesting) and Env its DYN_* environment (pod, then component, then DGD):
	// the engine flags routing health reads. Neither is serialised: command
	// lines and env may carry secrets that only a capture's redaction removes.
	Argv []string          `json:"-"`
	Env  map[string]string `json:"-"`
}

// PodPending says why a pod is not scheduled: the scheduler's verdict.
type PodPending struct {
	// Reason is the PodScheduled condition's reason (Unschedulable,
	// SchedulingGated, …), else the event's (FailedScheduling); "" when neither
	// was read.
	Reason string `json:"reason,omitempty"`
	// Message is the scheduler's message, e.g. "0/12 nodes are available: 4
	// Insufficient nvidia.com/gpu. …".
	Message string `json:"message,omitempty"`
	// Source is where Reason and Message were read: "condition PodScheduled" or
	// "event FailedScheduling"; "" when neither was read.
	Source string `json:"source,omitempty"`
}

// DomainValues is a worker's transfer-domain value in each place it appears.
// Empty strings mean absent.
type DomainValues struct {
	// Published is topology_domains[domain] from the worker's runtime config.
	Published string `json:"published,omitempty"`
	// PublishedDomain is the kv_transfer_domain the worker published.
	PublishedDomain string `json:"publishedDomain,omitempty"`
	// Pod is the pod label value.
	Pod string `json:"pod,omitempty"`
	// Node is the node label value.
	Node string `json:"node,omitempty"`
}

// Effective returns the value the router will use: the published one when the
// worker published runtime config, else the pod label, else the node label.
func (d DomainValues) Effective() string {
	switch {
	case d.Published != "":
		return d.Published
	case d.Pod != "":
		return d.Pod
	}
	return d.Node
}

// TopologyEnv is a worker's topology environment (DYN_* variables).
type TopologyEnv struct {
	Enabled         string `json:"enabled,omitempty"`
	TransferDomain  string `json:"transferDomain,omitempty"`
	Enforcement     string `json:"enforcement,omitempty"`
	PreferredWeight string `json:"preferredWeight,omitempty"`
	MountPath       string `json:"mountPath,omitempty"`
}

// Instance is one published Dynamo endpoint instance of a worker.
type Instance struct {
	// ID is the instance id (a u64; etcd lease ids exceed 2^53): printed as a
	// decimal string in JSON.
	ID routecore.WorkerID `json:"id,string"`
	// Endpoint is "dynamo-namespace/component/endpoint".
	Endpoint string `json:"endpoint"`
	// Model is the served model's display name.
	Model string `json:"model,omitempty"`
	// WorkerType is the card's worker_type ("prefill", "decode", "aggregated", …).
	WorkerType string `json:"workerType,omitempty"`
	// BlockSize is the card's kv_cache_block_size.
	BlockSize int `json:"blockSize,omitempty"`
	// Runtime is the card's runtime_config.
	Runtime routecore.RuntimeConfig `json:"runtime"`
	// KvEventPublishing is runtime_config.kv_event_publishing_enabled: whether
	// the worker says its engine publishes KV events (#12095); nil when the
	// card does not say (workers before it). Kept here, not in Runtime, which
	// holds what routing computes with.
	KvEventPublishing *bool `json:"kvEventPublishingEnabled,omitempty"`
	// RouterConfig is the card's router_config when present (raw JSON).
	RouterConfig json.RawMessage `json:"routerConfig,omitempty"`
	// Source is "dwm/<name>" or "etcd/<key>".
	Source string `json:"source"`
	// Load is the frontend's live view of each dp rank, when known.
	Load []RankLoad `json:"load,omitempty"`
}

// RankLoad is the frontend's view of one (instance, dp rank).
type RankLoad struct {
	DpRank              uint32 `json:"dpRank"`
	ActiveDecodeBlocks  uint64 `json:"activeDecodeBlocks"`
	ActivePrefillTokens uint64 `json:"activePrefillTokens"`
}

// LoadInfo says where loads came from.
type LoadInfo struct {
	Source string    `json:"source"`
	At     time.Time `json:"at"`
}

// Event is a Kubernetes event relevant to topology.
type Event struct {
	Reason  string    `json:"reason"`
	Type    string    `json:"type"`
	Object  string    `json:"object"`
	Message string    `json:"message"`
	Count   int32     `json:"count,omitempty"`
	Last    time.Time `json:"last"`
}

// Condition is a status condition.
type Condition struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}
