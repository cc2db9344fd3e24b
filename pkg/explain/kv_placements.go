package explain

import (
	"fmt"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw"
)

// PlacementEventSets returns the placement snapshot's sources that belong to
// the deployment: those in its Dynamo namespace (all of them when it is
// unknown).
func PlacementEventSets(p *raw.PlacementSnapshot, dep *model.Deployment) []EventSet {
	var out []EventSet
	for _, s := range p.Sources {
		if dep.DynamoNamespace != "" && s.Namespace != "" && s.Namespace != dep.DynamoNamespace {
			continue
		}
		out = append(out, EventSet{
			Name:      fmt.Sprintf("placements %s/%s/%s (%s)", s.Namespace, s.Component, s.Endpoint, s.Model),
			BlockSize: s.BlockSize, Events: s.Events,
		})
	}
	return out
}
