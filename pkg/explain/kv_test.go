package explain

import (
	"reflect"
	"strings"
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
)

func kvStore(worker uint64, blocks ...uint64) routecore.RouterEvent {
	var bl []routecore.KvCacheStoredBlock
	for _, b := range blocks {
		bl = append(bl, routecore.KvCacheStoredBlock{BlockHash: routecore.SequenceHash(b * 1000), TokensHash: routecore.LocalBlockHash(b)})
	}
	return routecore.RouterEvent{WorkerID: routecore.WorkerID(worker), Event: routecore.KvCacheEvent{EventID: 1,
		Data: routecore.KvCacheEventData{Stored: &routecore.KvCacheStoreData{Blocks: bl}}}}
}

// TestIndexAhead: the index built in the background is the one IndexEvents
// builds whenever the deployment's block size would not drop a set, and is
// rebuilt when it would; a capture with several deployments is not indexed ahead.
func TestIndexAhead(t *testing.T) {
	dep := &model.Deployment{Namespace: "ns", Name: "d"}
	b := &raw.Bundle{KvEvents: []raw.KvEvents{
		{Namespace: "ns", Deployment: "d", BlockSize: 16, Source: "a", Events: []routecore.RouterEvent{kvStore(1, 1, 2, 3), kvStore(2, 1, 2)}},
		{Namespace: "ns", Deployment: "d", Source: "b", Events: []routecore.RouterEvent{kvStore(3, 1)}},
	}}
	query := []routecore.LocalBlockHash{1, 2, 3}
	scores := func(ix *routecore.Index) routecore.OverlapScores { return ix.FindMatches(query) }
	sets := BundleEventSets(b, dep)
	for _, tc := range []struct {
		blockSize int
		reused    bool
	}{{16, true}, {0, true}, {32, false}} {
		a := StartIndexAhead(b)
		if a == nil {
			t.Fatal("a one-deployment capture was not indexed ahead")
		}
		ix, notes := a.Take(sets, dep, tc.blockSize)
		a.Wait()
		want, wantNotes := IndexEvents(sets, tc.blockSize)
		if got := ix == a.ix; got != tc.reused {
			t.Errorf("block size %d: reused %v, want %v", tc.blockSize, got, tc.reused)
		}
		if !reflect.DeepEqual(scores(ix), scores(want)) || ix.BlockCount() != want.BlockCount() || !reflect.DeepEqual(notes, wantNotes) {
			t.Errorf("block size %d: index differs from IndexEvents: %v %v vs %v %v", tc.blockSize, scores(ix), notes, scores(want), wantNotes)
		}
		if tc.blockSize == 32 && (len(notes) != 1 || !strings.Contains(notes[0], "block size 16 differs")) {
			t.Errorf("block size 32: notes %v", notes)
		}
	}
	// Another deployment's Take builds its own.
	a := StartIndexAhead(b)
	other := &model.Deployment{Namespace: "ns", Name: "e"}
	ix, _ := a.Take(BundleEventSets(b, other), other, 16)
	a.Wait()
	if ix == a.ix || ix.BlockCount() != 0 {
		t.Errorf("another deployment got the ahead index (%d blocks)", ix.BlockCount())
	}
	// Two deployments, or two block sizes: nothing ahead; nil is safe to use.
	two := &raw.Bundle{KvEvents: append(append([]raw.KvEvents{}, b.KvEvents...), raw.KvEvents{Namespace: "ns", Deployment: "e"})}
	sizes := &raw.Bundle{KvEvents: append(append([]raw.KvEvents{}, b.KvEvents...), raw.KvEvents{Namespace: "ns", Deployment: "d", BlockSize: 32})}
	for _, bb := range []*raw.Bundle{two, sizes, {}, nil} {
		if a := StartIndexAhead(bb); a != nil {
			t.Errorf("indexed ahead: %+v", bb)
		}
	}
	var none *IndexAhead
	none.Wait()
	if ix, _ := none.Take(sets, dep, 16); !reflect.DeepEqual(scores(ix), scores(must(IndexEvents(sets, 16)))) {
		t.Error("nil IndexAhead.Take differs from IndexEvents")
	}
}

func must(ix *routecore.Index, _ []string) *routecore.Index { return ix }
