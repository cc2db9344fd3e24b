package routecore

import (
	"slices"
	"testing"
)

// TestLegacyV11TieBreakByTreeSize mirrors the tie rule of the releases that
// ProfileLegacyV1_1 reproduces (lib/llm/src/kv_router/scheduler.rs, then
// lib/kv-router/src/scheduling/selector.rs, from Dynamo #4257 to #9516, and the
// v1.1.2 branch, #9975):
//
//	let tree_sizes = candidates.map(|w| (request.overlaps.tree_sizes.get(w).copied().unwrap_or(0), w));
//	if tree_sizes.iter().all(|(s, _)| *s == tree_sizes[0].0) { candidates[random] }
//	else { *tree_sizes.iter().min_by_key(|(s, _)| *s).unwrap().1 }
//
// A unique smallest tree wins without a draw; equal sizes are drawn; a
// candidate without a tree size (upstream fills tree_sizes only for workers
// that matched a block) counts 0. latest ignores tree sizes (#9516).
func TestLegacyV11TieBreakByTreeSize(t *testing.T) {
	for _, p := range []Profile{ProfileLegacyV1_1, ProfileLegacyTreeSize} {
		b, err := p.Behavior()
		if err != nil || b.TieBreak != TieSmallestTreeThenRandom {
			t.Fatalf("%s: tie break %q (%v)", p, b.TieBreak, err)
		}
	}
	if b, _ := ProfileLatest.Behavior(); b.TieBreak != TieUniformRandom {
		t.Fatalf("latest: tie break %q", b.TieBreak)
	}
	ws := selWorkers(1, 2, 3)
	for _, tc := range []struct {
		name     string
		profile  Profile
		sizes    map[WorkerWithDpRank]uint64
		draw     float64
		want     WorkerWithDpRank
		ties     []WorkerWithDpRank
		rule     SelectionRule
		drawUsed bool
	}{
		{"smallest tree wins", ProfileLegacyV1_1, map[WorkerWithDpRank]uint64{selW(1): 50, selW(2): 10, selW(3): 11}, 0.9,
			selW(2), []WorkerWithDpRank{selW(2)}, RuleMinimumCostTieTreeSize, false},
		{"no entry counts 0", ProfileLegacyV1_1, map[WorkerWithDpRank]uint64{selW(1): 50, selW(2): 10}, 0.1,
			selW(3), []WorkerWithDpRank{selW(3)}, RuleMinimumCostTieTreeSize, false},
		{"equal smallest trees are drawn", ProfileLegacyV1_1, map[WorkerWithDpRank]uint64{selW(1): 50, selW(2): 10, selW(3): 10}, 0.9,
			selW(3), []WorkerWithDpRank{selW(2), selW(3)}, RuleMinimumCostTieRandom, true},
		{"all equal: uniform over the tie", ProfileLegacyV1_1, nil, 0.5,
			selW(2), []WorkerWithDpRank{selW(1), selW(2), selW(3)}, RuleMinimumCostTieRandom, true},
		{"latest ignores tree sizes", ProfileLatest, map[WorkerWithDpRank]uint64{selW(1): 50, selW(2): 10, selW(3): 11}, 0.1,
			selW(1), []WorkerWithDpRank{selW(1), selW(2), selW(3)}, RuleMinimumCostTieRandom, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := selCfg(func(c *KvRouterConfig) { c.Profile = tc.profile })
			req := Request{ISL: 16, BlockSize: 16, Overlap: OverlapInput{TreeSizes: tc.sizes}}
			d := selMustSelect(t, cfg, BusyThresholds{}, ws, req, tc.draw)
			if d.Selected != tc.want || d.SelectionRule != tc.rule || d.DrawUsed != tc.drawUsed || !slices.Equal(d.TieSet, tc.ties) {
				t.Errorf("selected %s by %s (draw used %v), ties %v; want %s by %s (%v), ties %v",
					d.Selected, d.SelectionRule, d.DrawUsed, d.TieSet, tc.want, tc.rule, tc.drawUsed, tc.ties)
			}
		})
	}
}
