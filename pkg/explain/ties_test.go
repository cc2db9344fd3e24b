package explain

import (
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/behavior"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
)

// TestLegacyTieGoesToTheSmallestTree: two prefill workers hold the same
// leading blocks of the prompt (a tie at T=0 on idle workers), one holding
// ten more blocks of another prompt. Dynamo 1.1 (legacy-v1.1: #4257, #9975)
// gives the tie to the smaller radix tree with no draw; the newest router
// draws uniformly among the tied workers. Workers without a match have no
// tree size (0) but are not tied here: their cost is higher.
func TestLegacyTieGoesToTheSmallestTree(t *testing.T) {
	_, s := loadExample(t, "healthy-three-zone-required.yaml")
	dep := &s.Deployments[0]
	toks := exampleTokens(t)
	plan, err := NewPlan(Input{Snapshot: s, Deployment: dep})
	if err != nil {
		t.Fatal(err)
	}
	pre, _ := plan.Pools()
	big, small := pre[0].ID, pre[1].ID
	blocks, err := routecore.ComputeBlocks(toks, plan.BlockSize(), routecore.HashOptions{})
	if err != nil {
		t.Fatal(err)
	}
	store := func(id routecore.WorkerID, ev uint64, bs []routecore.Block) routecore.RouterEvent {
		st := &routecore.KvCacheStoreData{}
		for _, b := range bs {
			st.Blocks = append(st.Blocks, routecore.KvCacheStoredBlock{BlockHash: b.SequenceHash, TokensHash: b.LocalHash})
		}
		return routecore.RouterEvent{WorkerID: id, Event: routecore.KvCacheEvent{EventID: ev, Data: routecore.KvCacheEventData{Stored: st}}}
	}
	other := make([]uint32, 10*plan.BlockSize())
	for i := range other {
		other[i] = uint32(900000 + i)
	}
	otherBlocks, _ := routecore.ComputeBlocks(other, plan.BlockSize(), routecore.HashOptions{})
	ix, _ := IndexEvents([]EventSet{{Name: "test", Events: []routecore.RouterEvent{
		store(big, 1, blocks[:2]), store(small, 1, blocks[:2]), store(big, 2, otherBlocks),
	}}}, plan.BlockSize())
	kv := IndexCache(ix, "test", s.CollectedAt)
	for _, tc := range []struct {
		version string
		random  bool
	}{{"1.1.0", false}, {"latest", true}} {
		rel, err := behavior.ParseRelease(tc.version)
		if err != nil {
			t.Fatal(err)
		}
		p := rel.Profile()
		for seed := range uint64(6) {
			x, err := Explain(Input{Snapshot: s, Deployment: dep, Request: Request{Tokens: toks}, KV: kv,
				Options: Options{AssumeIdle: true, Seed: seed, Knobs: Knobs{Profile: &p}}})
			if err != nil {
				t.Fatal(err)
			}
			st := x.Prefill
			if st.RandomTie != tc.random {
				t.Fatalf("%s seed %d: random tie %v, want %v (selected %v)", tc.version, seed, st.RandomTie, tc.random, st.Selected)
			}
			if !tc.random && st.Pick != plan.e.byID[small].pod.Pod {
				t.Errorf("%s: picked %s, want the smaller tree %s", tc.version, st.Pick, plan.e.byID[small].pod.Pod)
			}
			if tc.random && len(st.Selected) != 2 {
				t.Errorf("%s: tie set %v, want the two workers holding the prefix", tc.version, st.Selected)
			}
		}
	}
}
