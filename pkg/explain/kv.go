package explain

import (
	"fmt"
	"sync"
	"time"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
)

// EventSet is a batch of RouterEvents from one source with its block size.
type EventSet struct {
	// Name says where the events came from (for messages).
	Name      string
	BlockSize int
	Events    []routecore.RouterEvent
}

// IndexEvents builds a radix index from event sets. Sets whose block size is
// known and differs from blockSize are skipped with a note (their hashes are
// not comparable); events the index rejects (a removal of an unknown block, a
// store under an unknown parent) are counted and reported in one note per set,
// the way Dynamo's indexer logs and skips them.
func IndexEvents(sets []EventSet, blockSize int) (*routecore.Index, []string) {
	ix := routecore.NewIndex()
	blocks := 0
	for _, s := range sets {
		for i := range s.Events {
			if st := s.Events[i].Event.Data.Stored; st != nil && s.Events[i].StorageTier == routecore.TierDevice {
				blocks += len(st.Blocks)
			}
		}
	}
	ix.Reserve(blocks)
	var notes []string
	for _, s := range sets {
		if s.BlockSize > 0 && blockSize > 0 && s.BlockSize != blockSize {
			notes = append(notes, fmt.Sprintf("%s: block size %d differs from the deployment's %d; its %d event(s) were not used", s.Name, s.BlockSize, blockSize, len(s.Events)))
			continue
		}
		bad, first := 0, ""
		ix.ApplyEvents(s.Events, func(_ int, err error) {
			bad++
			if first == "" {
				first = err.Error()
			}
		})
		if bad > 0 {
			notes = append(notes, fmt.Sprintf("%s: %d of %d event(s) were rejected by the index (first: %s), as Dynamo's indexer would skip them", s.Name, bad, len(s.Events), first))
		}
	}
	return ix, notes
}

// BundleEventSets returns the capture's KvEvents for one deployment.
func BundleEventSets(b *raw.Bundle, dep *model.Deployment) []EventSet {
	var out []EventSet
	for i, kv := range b.KvEvents {
		if kv.Namespace != dep.Namespace || kv.Deployment != dep.Name {
			continue
		}
		name := kv.Source
		if name == "" {
			name = fmt.Sprintf("KvEvents #%d", i+1)
		}
		out = append(out, EventSet{Name: name, BlockSize: kv.BlockSize, Events: kv.Events})
	}
	return out
}

// IndexCache wraps an index as a KVCache.
func IndexCache(ix *routecore.Index, detail string, at time.Time) KVCache {
	return KVCache{Kind: KVIndex, Index: ix, Detail: detail, At: at}
}

// IndexAhead builds the index of a capture's KV events in the background while
// the caller does other work (building the snapshot), for the one deployment
// the capture holds KvEvents for. Take returns it when IndexEvents(sets,
// blockSize) would give the same result, else builds that one; Wait stops
// nothing but waits for the background work (call it before returning).
type IndexAhead struct {
	ns, name string
	sizes    map[int]bool // the sets' known block sizes
	wg       sync.WaitGroup
	ix       *routecore.Index
	notes    []string
}

// StartIndexAhead starts indexing when every KvEvents item of b belongs to one
// deployment (the common case); it returns nil otherwise.
func StartIndexAhead(b *raw.Bundle) *IndexAhead {
	if b == nil || len(b.KvEvents) == 0 {
		return nil
	}
	a := &IndexAhead{ns: b.KvEvents[0].Namespace, name: b.KvEvents[0].Deployment, sizes: map[int]bool{}}
	var sets []EventSet
	for _, kv := range b.KvEvents {
		if kv.Namespace != a.ns || kv.Deployment != a.name {
			return nil
		}
		if kv.BlockSize > 0 {
			a.sizes[kv.BlockSize] = true
		}
	}
	if len(a.sizes) > 1 {
		return nil // which sets are used depends on the deployment's block size
	}
	sets = BundleEventSets(b, &model.Deployment{Namespace: a.ns, Name: a.name})
	a.wg.Go(func() { a.ix, a.notes = IndexEvents(sets, 0) })
	return a
}

// Take returns the index of dep's events at blockSize: the one built ahead when
// it is the same, else a new one.
func (a *IndexAhead) Take(sets []EventSet, dep *model.Deployment, blockSize int) (*routecore.Index, []string) {
	if a != nil && dep.Namespace == a.ns && dep.Name == a.name && (blockSize <= 0 || len(a.sizes) == 0 || a.sizes[blockSize]) {
		a.wg.Wait()
		return a.ix, a.notes
	}
	return IndexEvents(sets, blockSize)
}

// Wait waits for the background indexing, if any.
func (a *IndexAhead) Wait() {
	if a != nil {
		a.wg.Wait()
	}
}

// TreeSizesForTies is the overlap input's tree sizes under a profile whose
// T=0 ties go to the smallest radix tree (routecore.TieSmallestTreeThenRandom,
// Dynamo 1.1 and before, #4257/#6253/#9975): the blocks each worker holds in
// the index, for the workers that matched at least one of the request's
// blocks — upstream's indexer filled tree sizes only for them, so a tied
// worker without a match counts 0. Nil under other profiles (nothing reads
// them).
func TreeSizesForTies(cfg routecore.KvRouterConfig, ix *routecore.Index, m routecore.TieredMatches) map[routecore.WorkerWithDpRank]uint64 {
	b, err := cfg.Profile.Behavior()
	if err != nil || b.TieBreak != routecore.TieSmallestTreeThenRandom || ix == nil {
		return nil
	}
	matched := map[routecore.WorkerWithDpRank]bool{}
	for _, s := range m.Device {
		if s.Blocks > 0 {
			matched[s.Worker] = true
		}
	}
	out := map[routecore.WorkerWithDpRank]uint64{}
	for _, t := range ix.TreeSizes() {
		if matched[t.Worker] {
			out[t.Worker] = uint64(t.Blocks)
		}
	}
	return out
}
