package preflight

import (
	"github.com/ai-dynamo/kubectl-dynamo/pkg/analysis"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/analysis/health"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
)

// Kind is the kind of the report document.
const Kind = "PreflightReport"

// Finding ids that only preflight raises (docs/findings.md). The others are
// topology's: PrefillDomainWithoutDecode, DecodeDomainWithoutPrefill,
// TopologyObjectMissing, RouterNotKV, WorkerRoleUnknown.
const (
	FindingInvalidManifest               = "InvalidManifest"
	FindingInvalidPolicy                 = "InvalidPolicy"
	FindingDomainLabelMissing            = "DomainLabelMissing"
	FindingReplicasUnschedulable         = "ReplicasUnschedulable"
	FindingMultinodeReplicaExceedsDomain = "MultinodeReplicaExceedsDomain"
	FindingImageNotRendered              = "ImageNotRendered"
	FindingDuplicateDeployment           = "DuplicateDeployment"
)

// FindingIDs lists the ids preflight can raise, its own and topology's.
func FindingIDs() []string {
	return []string{
		analysis.FindingDecodeDomainWithoutPrefill, FindingDomainLabelMissing, FindingDuplicateDeployment, FindingImageNotRendered, FindingInvalidManifest,
		FindingInvalidPolicy, FindingMultinodeReplicaExceedsDomain, analysis.FindingPrefillDomainWithoutDecode,
		FindingReplicasUnschedulable, analysis.FindingRouterNotKV, analysis.FindingTopologyObjectMissing,
		analysis.FindingWorkerRoleUnknown, health.FindingKvEventsNotPublished, health.FindingRouterReplicasNotSynced,
	}
}

// Certainty says whether every placement has the problem or only some.
type Certainty string

// Certainties.
const (
	// Certain: whatever the scheduler decides, the problem happens (or the
	// object is rejected before anything is scheduled).
	Certain Certainty = "certain"
	// Possible: some placement the scheduler may choose has the problem.
	Possible Certainty = "possible"
)

// Report is what `kubectl dynamo preflight` prints (kind PreflightReport).
type Report struct {
	APIVersion  string               `json:"apiVersion"`
	Kind        string               `json:"kind"`
	Context     string               `json:"context,omitempty"`
	Sources     []model.SourceStatus `json:"sources,omitempty"`
	Notes       []model.Note         `json:"notes,omitempty"`
	Cluster     *ClusterSummary      `json:"cluster,omitempty"`
	Deployments []DeploymentReport   `json:"deployments"`
	Findings    []Finding            `json:"findings"`
}

// ClusterSummary describes the nodes the prediction used; absent without a
// cluster.
type ClusterSummary struct {
	// Source is "kubernetes" (live) or "capture" (--nodes-from); Detail
	// names the file of a capture.
	Source string `json:"source"`
	Detail string `json:"detail,omitempty"`
	Nodes  int    `json:"nodes"`
	// Partial is true when the nodes may be only some of the cluster's (a
	// capture): findings that rest on a node being absent are possible.
	Partial bool `json:"partial,omitempty"`
	// GPUNodes have allocatable nvidia.com/gpu.
	GPUNodes int `json:"gpuNodes"`
	// AllocatableGPUs and RequestedGPUs sum nvidia.com/gpu over the nodes; the
	// requests are those of pods already bound to them (pods of the deployments
	// being checked excluded).
	AllocatableGPUs int64 `json:"allocatableGPUs"`
	RequestedGPUs   int64 `json:"requestedGPUs"`
}

// DeploymentReport is one DGD of the manifests.
type DeploymentReport struct {
	Name       string `json:"name"`
	Namespace  string `json:"namespace"`
	APIVersion string `json:"apiVersion"`
	// Source is the manifest file (or "-" for stdin) the DGD came from.
	Source string               `json:"source,omitempty"`
	Policy *model.PolicySummary `json:"policy,omitempty"`
	// PolicyInvalid is true when the manifest's kvTransferPolicy is rejected
	// (InvalidPolicy): it is then not used for the domain prediction.
	PolicyInvalid bool `json:"policyInvalid,omitempty"`
	// NodeLabelKey is the node label holding the transfer domain's value, when
	// known.
	NodeLabelKey string `json:"nodeLabelKey,omitempty"`
	RouterMode   string `json:"routerMode,omitempty"`
	// Dynamo is the Dynamo release the manifest is checked for and how it
	// was told (its images, or --dynamo-version).
	Dynamo *model.DynamoRelease `json:"dynamo,omitempty"`
	// PackDomain is the deployment-level topologyConstraint.packDomain.
	PackDomain string            `json:"packDomain,omitempty"`
	Components []ComponentReport `json:"components"`
	// Domains has one entry per value of the transfer domain that a worker can
	// land in (or that the manifest names); absent without a policy.
	Domains []DomainReport `json:"domains,omitempty"`
}

// ComponentReport is one component and where its replicas can land.
type ComponentReport struct {
	Name string `json:"name"`
	Type string `json:"type,omitempty"`
	// Role and RoleSignal are pkg/build's decision for the pod the operator would
	// render.
	Role       string `json:"role"`
	RoleSignal string `json:"roleSignal,omitempty"`
	Replicas   int32  `json:"replicas"`
	// NodesPerReplica is >1 for multinode components.
	NodesPerReplica int32 `json:"nodesPerReplica"`
	// GPUsPerPod is the pod's nvidia.com/gpu request.
	GPUsPerPod int64 `json:"gpusPerPod"`
	// PackDomain is the component's topologyConstraint.packDomain.
	PackDomain string `json:"packDomain,omitempty"`
	// Constraints describes the scheduling constraints read (nodeSelector,
	// affinity, tolerations), for humans.
	Constraints []string `json:"constraints,omitempty"`
	// EligibleNodes counts the nodes the pods may run on (selectors, affinity,
	// taints, GPU allocatable); nil without a cluster.
	EligibleNodes *int `json:"eligibleNodes,omitempty"`
	// Domains are the transfer-domain values the replicas can land in; nil
	// when any value is possible (no cluster and no pinning in the manifest).
	Domains []string `json:"domains,omitempty"`
	// AnyDomain is true when the manifest does not restrict the values and no
	// cluster is known.
	AnyDomain bool `json:"anyDomain,omitempty"`
	// Fits is how many replicas fit on the free GPUs, all components placed
	// together (nil without a cluster).
	Fits *int32 `json:"fits,omitempty"`
}

// DomainReport is one value of the transfer domain.
type DomainReport struct {
	Value string `json:"value"`
	// Nodes and FreeGPUs describe the cluster's nodes with this value (absent
	// without a cluster).
	Nodes    int   `json:"nodes,omitempty"`
	FreeGPUs int64 `json:"freeGPUs,omitempty"`
	// Prefill and Decode say whether replicas of that role land here:
	// "certain", "possible" or "never".
	Prefill string `json:"prefill"`
	Decode  string `json:"decode"`
	// PrefillComponents and DecodeComponents may land here.
	PrefillComponents []string `json:"prefillComponents,omitempty"`
	DecodeComponents  []string `json:"decodeComponents,omitempty"`
	Flags             []string `json:"flags,omitempty"`
}

// Presence values of DomainReport.Prefill and .Decode.
const (
	PresenceCertain  = "certain"
	PresencePossible = "possible"
	PresenceNever    = "never"
)

// Finding is a topology finding with its certainty and where in the
// manifests it is.
type Finding struct {
	model.Finding
	Certainty Certainty `json:"certainty"`
	// File and Line are where the finding points: the field it names (Field),
	// the component it is about, else the DynamoGraphDeployment's first line.
	File  string `json:"file,omitempty"`
	Line  int    `json:"line,omitempty"`
	Field string `json:"field,omitempty"`
}
