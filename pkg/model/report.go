package model

import (
	"cmp"
	"slices"
)

// Report is the topology view of a Snapshot: per deployment, capacity per value of
// the transfer domain, and the findings. It is what `kubectl dynamo topology`
// prints (kind TopologyReport) and what the dashboard's topology and findings
// pages show. pkg/analysis builds it.
type Report struct {
	APIVersion  string             `json:"apiVersion"`
	Kind        string             `json:"kind"`
	Context     string             `json:"context,omitempty"`
	Namespace   string             `json:"namespace,omitempty"`
	Sources     []SourceStatus     `json:"sources,omitempty"`
	Notes       []Note             `json:"notes,omitempty"`
	Deployments []DeploymentReport `json:"deployments"`
	Findings    []Finding          `json:"findings"`
}

// DeploymentReport is one deployment's capacity by domain value.
type DeploymentReport struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	// Policy is nil when the DGD has no kvTransferPolicy; Domains then has a single
	// entry for the whole deployment (value "").
	Policy *PolicySummary `json:"policy,omitempty"`
	// RouterMode is the frontend's router mode when known.
	RouterMode string `json:"routerMode,omitempty"`
	// Dynamo is the Dynamo release the deployment was read at and how it was
	// told (pkg/behavior).
	Dynamo *DynamoRelease `json:"dynamo,omitempty"`
	// Domains has one entry per value of the transfer domain, sorted by value;
	// workers with no value are grouped under the value "".
	Domains []DomainReport `json:"domains"`
	// PrefillToDecode is the deployment-wide ratio of ready prefill to ready decode
	// replicas (nil when there is no ready decode replica).
	PrefillToDecode *float64 `json:"prefillToDecode,omitempty"`
	// Tree is the topology hierarchy (e.g. zone › rack › host) with capacity at each
	// level, built from the Grove topology object or well-known node labels.
	Tree *TreeNode `json:"tree,omitempty"`
	// Workers are the worker replicas, in pod-name order of their first pod, with
	// the role each was counted as and the signal that decided it.
	Workers []WorkerReport `json:"workers,omitempty"`
	// NotDeployed is true when the deployment has no pods and no status: a
	// manifest that was not applied (finding WorkerPodsMissing says so).
	NotDeployed bool `json:"notDeployed,omitempty"`
	// RoutingQuality is the KV router's achieved and reachable prefix-cache hit
	// rate from the frontend's /metrics (Deployment.RoutingQuality); nil when the
	// frontend exports none of it.
	RoutingQuality *RoutingQuality `json:"routingQuality,omitempty"`
}

// DynamoRelease is the Dynamo release a deployment is read at: every rule
// that changed upstream follows it (docs/compatibility.md).
type DynamoRelease struct {
	// Version is the release ("1.3.0"); "" when unknown, and the newest
	// behaviour is then assumed.
	Version string `json:"version,omitempty"`
	Known   bool   `json:"known"`
	// Via is how it was told: images, manifest, operator, flag or unknown.
	Via string `json:"via"`
	// Source says where it was read (image tags, the operator, the
	// --dynamo-version flag) or why it is unknown.
	Source string `json:"source"`
	// Override is true when --dynamo-version set it.
	Override bool `json:"override,omitempty"`
	// Mixed is true when the pods run more than one release.
	Mixed bool `json:"mixed,omitempty"`
	// Operator is the Dynamo operator's release when it was read.
	Operator string `json:"operator,omitempty"`
}

// Bare is the release alone, for a narrow header: "1.3.0", "newest?" when
// unknown (the newest behaviour assumed), "-" when not read.
func (d *DynamoRelease) Bare() string {
	switch {
	case d == nil:
		return "-"
	case !d.Known:
		return "newest?"
	case d.Mixed:
		return d.Version + "+"
	}
	return d.Version
}

// Short is the release for a header line: "1.3.0 (image tags)", "1.2.0
// (--dynamo-version)", "newest (release unknown)".
func (d *DynamoRelease) Short() string {
	switch {
	case d == nil:
		return "-"
	case !d.Known && d.Override:
		return "newest (--dynamo-version)"
	case !d.Known:
		return "newest (release unknown)"
	}
	how := map[string]string{"images": "image tags", "manifest": "manifest images", "operator": "operator", "flag": "--dynamo-version"}[d.Via]
	if d.Mixed {
		how = "mixed images"
	}
	if how == "" {
		return d.Version
	}
	return d.Version + " (" + how + ")"
}

// WorkerReport is one worker replica: a single-node worker pod, or the pods of
// one multinode replica (counted once, with its leader's role and value and the
// GPUs of all its pods).
type WorkerReport struct {
	// Leader is the pod that decides the replica (the pod itself when single-node).
	Leader    string `json:"leader"`
	Component string `json:"component,omitempty"`
	Role      Role   `json:"role"`
	// RoleSignal says which signal decided the role: card worker_type, a label, the
	// DGD's declared type, an engine arg (and the shell it was nested in), env
	// DYN_DISAGGREGATION_MODE, the component name, or a deployment-wide fallback.
	RoleSignal string `json:"roleSignal"`
	// Pods are all the replica's pods, leader first.
	Pods  []string `json:"pods"`
	Ready bool     `json:"ready"`
	// Unregistered is set when the replica's pods are ready but it published
	// no Dynamo instance while discovery was read: the router does not know
	// it, so it is not ready capacity (WorkersNotRegistered).
	Unregistered bool  `json:"unregistered,omitempty"`
	GPUs         int64 `json:"gpus"`
	// Value is the transfer-domain value the router sees for the replica ("" when
	// none, and always "" without a policy).
	Value string `json:"value,omitempty"`
	// Pending is set when a pod of the replica is not scheduled: the scheduler's
	// reason for the first such pod (leader first).
	Pending *PodPending `json:"pending,omitempty"`
}

// PolicySummary is the part of the kvTransferPolicy a report shows.
type PolicySummary struct {
	Domain              string   `json:"domain"`
	Enforcement         string   `json:"enforcement"`
	PreferredWeight     *float64 `json:"preferredWeight,omitempty"`
	Mode                string   `json:"mode,omitempty"`
	LabelKey            string   `json:"labelKey,omitempty"`
	ClusterTopologyName string   `json:"clusterTopologyName,omitempty"`
}

// DomainReport is capacity in one domain value. Counts are replicas (a multinode
// replica counts once; it is ready when all its pods are).
type DomainReport struct {
	Value      string       `json:"value"`
	Prefill    RoleCapacity `json:"prefill"`
	Decode     RoleCapacity `json:"decode"`
	Aggregated RoleCapacity `json:"aggregated,omitzero"`
	// DecodeLoadPercent is active decode blocks over total KV blocks of the ready
	// decode workers, when loads are known.
	DecodeLoadPercent *float64 `json:"decodeLoadPercent,omitempty"`
	// PrefillToDecode is ready prefill over ready decode replicas (nil when no
	// ready decode replica).
	PrefillToDecode *float64 `json:"prefillToDecode,omitempty"`
	// Flags are the ids of findings about this domain value.
	Flags []string `json:"flags,omitempty"`
}

// RoleCapacity is one role's capacity in a domain value.
type RoleCapacity struct {
	Ready int   `json:"ready"`
	Total int   `json:"total"`
	GPUs  int64 `json:"gpus"`
	// KvTokens is the KV capacity in tokens (total_kv_blocks × block size) of the
	// ready replicas, when published.
	KvTokens uint64 `json:"kvTokens,omitempty"`
	// Workers are the replicas' pod names (leaders for multinode replicas).
	Workers []string `json:"workers,omitempty"`
	// Pending counts the replicas (of Total) with a pod the scheduler has not
	// placed: capacity the DGD declares that is not running.
	Pending int `json:"pending,omitempty"`
}

// TreeNode is one node of the topology hierarchy.
type TreeNode struct {
	// Domain is the level (zone, rack, host, …); Value its value ("" at the root).
	Domain   string       `json:"domain"`
	Value    string       `json:"value"`
	Prefill  RoleCapacity `json:"prefill"`
	Decode   RoleCapacity `json:"decode"`
	Children []*TreeNode  `json:"children,omitempty"`
}

// Severity ranks a finding.
type Severity string

// Severities, most severe first.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
	SeverityInfo    Severity = "info"
)

// Rank orders severities: error 3, warning 2, info 1, anything else 0.
func (s Severity) Rank() int {
	switch s {
	case SeverityError:
		return 3
	case SeverityWarning:
		return 2
	case SeverityInfo:
		return 1
	}
	return 0
}

// Finding is one problem found in a deployment, with a fixed id documented in
// docs/findings.md.
type Finding struct {
	ID         string   `json:"id"`
	Severity   Severity `json:"severity"`
	Deployment string   `json:"deployment"`
	Namespace  string   `json:"namespace"`
	// Domain is the domain value concerned, when the finding is about one.
	Domain string `json:"domain,omitempty"`
	// Message says what is wrong and what the router will do about it.
	Message string `json:"message"`
	// Hint is the one-line fix.
	Hint string `json:"hint"`
	// Objects are the affected objects as kind/name (e.g. pod/vllm-prefill-0).
	Objects []string `json:"objects,omitempty"`
}

// SortFindings sorts findings in report order: severity (error first), then
// namespace, deployment, id, domain value, message and objects, so that the order
// is total and deterministic.
func SortFindings(fs []Finding) {
	slices.SortStableFunc(fs, func(a, b Finding) int {
		return cmp.Or(
			cmp.Compare(b.Severity.Rank(), a.Severity.Rank()),
			cmp.Compare(a.Namespace, b.Namespace),
			cmp.Compare(a.Deployment, b.Deployment),
			cmp.Compare(a.ID, b.ID),
			cmp.Compare(a.Domain, b.Domain),
			cmp.Compare(a.Message, b.Message),
			slices.Compare(a.Objects, b.Objects),
		)
	})
}
