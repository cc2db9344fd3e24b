package preflight

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/hermetic"
)

// placePodByPod is the placement as it was written before it was computed:
// replica after replica, each pod on the node with the most free GPUs (the
// first on a tie), a replica that does not fit taking nothing and ending the
// loop. It is the reference placeReplicas must equal.
func placePodByPod(k *component, nodes []*Node) int32 {
	placed := int32(0)
	for r := int32(0); r < k.replicas && len(nodes) > 0; r++ {
		if k.gpus <= 0 {
			placed++
			continue
		}
		var chosen []*Node
		ok := true
		for p := int32(0); p < k.nodes; p++ {
			var best *Node
			for _, n := range nodes {
				if n.Free() >= k.gpus && (best == nil || n.Free() > best.Free()) {
					best = n
				}
			}
			if best == nil {
				for _, n := range chosen {
					n.planned -= k.gpus
				}
				ok = false
				break
			}
			best.planned += k.gpus
			chosen = append(chosen, best)
		}
		if !ok {
			break
		}
		placed++
	}
	return placed
}

// TestPlaceReplicasIsPodByPod: the computed placement places as many
// replicas, and the same GPUs on each node, as the pod-by-pod one, over
// random clusters and components placed one after the other.
func TestPlaceReplicasIsPodByPod(t *testing.T) {
	seed := rand.Uint64()
	rng := rand.New(rand.NewPCG(seed, 1))
	t.Logf("seed %d", seed)
	for iter := range hermetic.Size(300, 3000, 30000) {
		nNodes := 1 + rng.IntN(6)
		var a, b []*Node
		for i := range nNodes {
			alloc := int64(rng.IntN(17))
			req := int64(rng.IntN(5))
			a = append(a, &Node{Name: fmt.Sprint(i), Allocatable: alloc, Requested: req})
			b = append(b, &Node{Name: fmt.Sprint(i), Allocatable: alloc, Requested: req})
		}
		for range 1 + rng.IntN(4) {
			k := &component{replicas: int32(rng.IntN(12)), gpus: int64(rng.IntN(5)), nodes: int32(1 + rng.IntN(3))}
			// each component may use a random subset of the nodes
			var ea, eb []*Node
			for i := range nNodes {
				if rng.IntN(4) > 0 {
					ea, eb = append(ea, a[i]), append(eb, b[i])
				}
			}
			want := placePodByPod(k, ea)
			got := placeReplicas(k, eb)
			if got != want {
				t.Fatalf("iteration %d: %+v on %d nodes: placed %d, pod by pod %d", iter, *k, len(ea), got, want)
			}
			pa, pb := planned(a), planned(b)
			if !slices.Equal(pa, pb) {
				t.Fatalf("iteration %d: %+v: planned %v, pod by pod %v", iter, *k, pb, pa)
			}
		}
	}
}

func planned(ns []*Node) []int64 {
	out := make([]int64, len(ns))
	for i, n := range ns {
		out[i] = n.planned
	}
	return out
}
