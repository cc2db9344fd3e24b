package preflight

import (
	"fmt"
	"hash/fnv"
	"strings"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/behavior"
)

// Grove names every pod of a component from the PodCliqueSet (PCS) name, the
// scaling group (PCSG) name and the PodClique name, and the result may not
// exceed 45 characters. What follows is our port of the operator's naming
// (ai-dynamo/dynamo deploy/operator/internal/dynamo/graph.go PCSNameForDGD,
// LongestPodCliqueNameForDGDComponent and expandRolesForComponent; the webhook
// measures it in deploy/operator/internal/webhook/validation/
// dynamographdeployment_helpers.go dgdComponentResourceNameLength), and of the
// rule it replaced (rule grove-name-length in pkg/behavior).
const (
	// maxGroveName is consts.MaxCombinedGroveResourceNameLength.
	maxGroveName = 45
	// minPCSName is the shortest PCS name the operator shortens to.
	minPCSName = 8
)

// groveShape is what decides a component's Grove names.
type groveShape struct {
	name string
	// nodes is multinode.nodeCount (1 for a single-node component).
	nodes int32
	// interPodGMS: experimental.gpuMemoryService.mode InterPod (v1beta1), or
	// gpuMemoryService {enabled: true, mode: interPod} (v1alpha1).
	interPodGMS bool
	// forceScalingGroup: experimental.grove.forceScalingGroup.
	forceScalingGroup bool
}

// usesPCSG is api/v1beta1 UsesPCSG: Grove renders the component as a
// PodCliqueScalingGroup instead of a standalone PodClique.
func (g groveShape) usesPCSG() bool {
	return g.nodes > 1 || g.interPodGMS || g.forceScalingGroup
}

// cliqueNames are the PodClique names of a scaling-group component (the
// operator's role expansion), lower-cased.
func (g groveShape) cliqueNames() []string {
	c := strings.ToLower(g.name)
	switch {
	case g.nodes > 1 && g.interPodGMS:
		var out []string
		for rank := int32(0); rank < g.nodes; rank++ {
			out = append(out, fmt.Sprintf("%s-gms-%d", c, rank))
			if rank == 0 {
				out = append(out, c+"-ldr")
			} else {
				out = append(out, fmt.Sprintf("%s-wkr-%d", c, rank))
			}
		}
		return out
	case g.nodes > 1:
		return []string{c + "-ldr", c + "-wkr"}
	case g.interPodGMS:
		return []string{c + "-gms-0", c}
	}
	return []string{c}
}

// longestClique is LongestPodCliqueNameForDGDComponent.
func (g groveShape) longestClique() string {
	longest := strings.ToLower(g.name)
	if !g.usesPCSG() {
		return longest
	}
	for _, n := range g.cliqueNames() {
		if len(n) > len(longest) {
			longest = n
		}
	}
	return longest
}

// budget is what the component adds to the PCS name: its PodClique name, or
// its PCSG name plus its longest PodClique name.
func (g groveShape) budget() int {
	if g.usesPCSG() {
		return len(g.name) + len(g.longestClique())
	}
	return len(g.name)
}

// pcsName is PCSNameForDGD: the DGD name when it leaves room for the largest
// component budget, else the DGD name cut to 45 minus that budget (at least
// 8) ending in "-" and the low 16 bits of its FNV-1a hash as four hex digits.
func pcsName(dgd string, comps []groveShape) string {
	largest := 0
	for _, g := range comps {
		largest = max(largest, g.budget())
	}
	room := max(maxGroveName-largest, minPCSName)
	if len(dgd) <= room {
		return dgd
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(dgd))
	return fmt.Sprintf("%s-%04x", dgd[:room-5], h.Sum32()&0xffff)
}

// groveName is the length the webhook measures for one component and what
// it is made of.
type groveName struct {
	length int
	// pcs is the PodCliqueSet name the operator will use.
	pcs string
	// parts says what was added ("PCS name + component name").
	parts string
}

// groveNameLength measures component g of a DGD named dgd with components
// comps as the release rel's webhook does (rule grove-name-length).
func groveNameLength(rel behavior.Release, dgd string, comps []groveShape, g groveShape) groveName {
	lower := strings.ToLower(g.name)
	if behavior.At(behavior.RuleGroveNameLength, rel).Key == behavior.EraRawNames {
		// Before #8563: the PCS carries the DGD name as is; a multinode
		// component adds its leader clique name.
		n := groveName{length: len(dgd) + len(lower), pcs: dgd, parts: "DGD name + component name"}
		if g.nodes > 1 {
			n.length += len(lower + "-ldr")
			n.parts = fmt.Sprintf("DGD name + PCSG name + longest PodClique name %q", lower+"-ldr")
		}
		return n
	}
	pcs := pcsName(dgd, comps)
	n := groveName{length: len(pcs) + len(lower), pcs: pcs, parts: "PCS name + component name"}
	if g.usesPCSG() {
		longest := g.longestClique()
		n.length += len(longest)
		n.parts = fmt.Sprintf("PCS name + PCSG name + longest PodClique name %q", longest)
	}
	return n
}
