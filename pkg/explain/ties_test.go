package explain

import (
	"slices"
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/behavior"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
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

// TestTieLabelsMatchLabel checks that tieLabels labels a tie set as label does
// candidate by candidate, and shares the labels only between equal tie sets.
func TestTieLabelsMatchLabel(t *testing.T) {
	workers := []model.Worker{{Pod: "d-0"}, {Pod: "d-1"}, {Pod: "d-2"}}
	insts := []model.Instance{{}, {}, {}}
	insts[2].Runtime.DataParallelSize = 2
	e := &explainer{byID: map[routecore.WorkerID]*member{}}
	for i := range workers {
		e.byID[routecore.WorkerID(10+i)] = &member{pod: &workers[i], inst: &insts[i]}
	}
	w := func(id uint64, rank uint32) routecore.WorkerWithDpRank {
		return routecore.WorkerWithDpRank{WorkerID: routecore.WorkerID(id), DpRank: rank}
	}
	tests := []struct {
		name string
		ties []routecore.WorkerWithDpRank
		want []string
	}{
		{"pods", []routecore.WorkerWithDpRank{w(10, 0), w(11, 0), w(12, 1)}, []string{"d-0", "d-1", "d-2:1"}},
		{"same first, last and length, another middle", []routecore.WorkerWithDpRank{w(10, 0), w(12, 0), w(12, 1)}, []string{"d-0", "d-2:0", "d-2:1"}},
		{"an unknown id", []routecore.WorkerWithDpRank{w(10, 0), w(99, 0)}, []string{"d-0", "99"}},
		{"the first again", []routecore.WorkerWithDpRank{w(10, 0), w(11, 0), w(12, 1)}, []string{"d-0", "d-1", "d-2:1"}},
	}
	seen := map[string][]string{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := e.tieLabels(slices.Clone(tt.ties))
			if !slices.Equal(got, tt.want) {
				t.Fatalf("tieLabels = %q, want %q", got, tt.want)
			}
			for i, c := range tt.ties {
				if l := e.label(c, true); got[i] != l {
					t.Errorf("label %d = %q, label() says %q", i, got[i], l)
				}
			}
			for name, prev := range seen {
				shared := &prev[0] == &got[0]
				if equal := slices.Equal(prev, got); shared != equal {
					t.Errorf("shares labels with %q: %t, but equal: %t", name, shared, equal)
				}
			}
			seen[tt.name] = got
		})
	}
}
