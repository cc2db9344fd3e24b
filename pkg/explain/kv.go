package explain

import (
	"fmt"
	"time"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/inspect"
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
	var notes []string
	for _, s := range sets {
		if s.BlockSize > 0 && blockSize > 0 && s.BlockSize != blockSize {
			notes = append(notes, fmt.Sprintf("%s: block size %d differs from the deployment's %d; its %d event(s) were not used", s.Name, s.BlockSize, blockSize, len(s.Events)))
			continue
		}
		bad, first := 0, ""
		for _, ev := range s.Events {
			if err := ix.ApplyEvent(ev); err != nil {
				bad++
				if first == "" {
					first = err.Error()
				}
			}
		}
		if bad > 0 {
			notes = append(notes, fmt.Sprintf("%s: %d of %d event(s) were rejected by the index (first: %s), as Dynamo's indexer would skip them", s.Name, bad, len(s.Events), first))
		}
	}
	return ix, notes
}

// BundleEventSets returns the capture's KvEvents for one deployment.
func BundleEventSets(b *inspect.Bundle, dep *inspect.Deployment) []EventSet {
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
