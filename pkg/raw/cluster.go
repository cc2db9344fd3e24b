package raw

import (
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
)

// ClusterObjects is what a placement prediction reads of a cluster: its Nodes,
// the Pods that are not finished and the Grove topology objects, whole (preflight
// reads them as core/v1 objects), with what the read could not see.
type ClusterObjects struct {
	Objects []Object
	Source  model.SourceStatus
	Notes   []model.Note
	// PodsKnown is false when the pods could not be listed.
	PodsKnown bool
	// GroveServed is false when neither Grove topology CRD is served.
	GroveServed bool
	// TopologiesKnown is false when the topology objects could not be read.
	TopologiesKnown bool
}

// DeploymentRef names a DynamoGraphDeployment to read: namespace, name and
// the apiVersion to read it at (nvidia.com/v1beta1 or v1alpha1).
type DeploymentRef struct {
	Namespace, Name, APIVersion string
}

// ExistingDeployments is what a GET of the DynamoGraphDeployments a
// preflight checks found: the existing objects, which refs were looked up
// (found or not), and what could not be read.
type ExistingDeployments struct {
	// Objects are keyed by "namespace/name", whole as the API server
	// answered them.
	Objects map[string]Object
	// Checked holds the keys whose GET answered (found or not found).
	Checked map[string]bool
	Notes   []model.Note
}
