package raw

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
)

// ClusterObjects is what a placement prediction reads of a cluster: its Nodes,
// the Pods that are not finished and the Grove topology objects, with what the
// read could not see.
type ClusterObjects struct {
	Objects []*unstructured.Unstructured
	Source  model.SourceStatus
	Notes   []model.Note
	// PodsKnown is false when the pods could not be listed.
	PodsKnown bool
	// GroveServed is false when neither Grove topology CRD is served.
	GroveServed bool
	// TopologiesKnown is false when the topology objects could not be read.
	TopologiesKnown bool
}
