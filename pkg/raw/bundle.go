package raw

import (
	"time"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
)

// Bundle is the raw material a Snapshot is built from: Kubernetes objects,
// typed by kind with the fields that are read, etcd key-values, frontend
// metrics text and KV events, plus what each source reported about itself.
// Live sources fill a Bundle; a capture file is a serialized Bundle (see
// docs/capture-format.md); Build turns either into a Snapshot. Wire-to-model
// conversion happens only in Build.
type Bundle struct {
	// Context names where the data came from (kubeconfig context or file).
	Context string
	// Namespace is the namespace scope ("" for all namespaces).
	Namespace string
	// CollectedAt is when the bundle was read.
	CollectedAt time.Time
	// Objects are the Kubernetes objects: DynamoGraphDeployments,
	// DynamoWorkerMetadatas, Pods, Nodes, EndpointSlices, Events, Services,
	// ClusterTopologyBindings / ClusterTopologies.
	Objects Objects
	// AsRead holds every Kubernetes object whole, as read, when the read was
	// asked to keep them (the capture command writes them; preflight checks
	// manifests): nil otherwise. Build never reads it.
	AsRead []Object
	// Etcd holds key-values read from the Dynamo discovery etcd (v1/instances/,
	// v1/mdc/, …), values as stored.
	Etcd []EtcdKeyValue
	// Metrics holds frontend /metrics scrapes.
	Metrics []FrontendMetrics
	// BusyThresholds holds frontend GET /busy_threshold answers.
	BusyThresholds []FrontendBusyThresholds
	// KvEvents holds KV-cache contents as RouterEvents, per deployment.
	KvEvents []KvEvents
	// RouterLogs holds redacted excerpts of frontend logs: the KV router's
	// decision lines (capture --logs), per frontend pod.
	RouterLogs []RouterLogs
	// Sources and Notes are carried into the Snapshot.
	Sources []model.SourceStatus
	Notes   []model.Note
}

// EtcdKeyValue is one etcd entry; Value is the raw stored string.
type EtcdKeyValue struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// FrontendMetrics is one scrape of a deployment's frontend /metrics.
type FrontendMetrics struct {
	Namespace  string    `json:"namespace"`
	Deployment string    `json:"deployment"`
	Source     string    `json:"source,omitempty"`
	At         time.Time `json:"at"`
	Text       string    `json:"text"`
}

// FrontendBusyThresholds is a deployment's frontend GET /busy_threshold answer,
// raw JSON.
type FrontendBusyThresholds struct {
	Namespace  string    `json:"namespace"`
	Deployment string    `json:"deployment"`
	Source     string    `json:"source,omitempty"`
	At         time.Time `json:"at"`
	JSON       string    `json:"json"`
}

// RouterLogs is a redacted excerpt of one frontend pod's log: only the KV
// router's decision lines, each re-written with only the fields
// kubectl-dynamo's audit reads and the request ids replaced by pseudonyms
// (pkg/audit.Excerpt).
type RouterLogs struct {
	Namespace  string    `json:"namespace"`
	Deployment string    `json:"deployment"`
	Source     string    `json:"source,omitempty"`
	At         time.Time `json:"at"`
	// Lines are the excerpt, oldest first.
	Lines []string `json:"lines"`
	// Dropped counts the router lines left out (the excerpt keeps the last
	// ones).
	Dropped int `json:"dropped,omitempty"`
}

// KvEvents is a deployment's KV-cache contents as Dynamo RouterEvents.
type KvEvents struct {
	Namespace  string                  `json:"namespace"`
	Deployment string                  `json:"deployment"`
	BlockSize  int                     `json:"blockSize"`
	Source     string                  `json:"source,omitempty"`
	Events     []routecore.RouterEvent `json:"events"`
}
