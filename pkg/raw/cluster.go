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
