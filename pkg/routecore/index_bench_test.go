package routecore

import (
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"
)

// benchCorpus is a synthetic cluster: 64 workers, each caching 32 prompts of
// 512 blocks (8k tokens at block size 16) whose first 64 blocks come from one
// of 16 shared system prompts. That is about 1M distinct blocks.
type benchCorpus struct {
	events  []RouterEvent
	queries [][]LocalBlockHash
	entries int // (block, worker) pairs
	nodes   int
}

const (
	benchWorkers   = 64
	benchPrompts   = 32
	benchBlocks    = 512
	benchShared    = 64
	benchSysPrompt = 16
)

var (
	corpusOnce sync.Once
	corpus     benchCorpus
)

func splitmix(x *uint64) uint64 {
	*x += 0x9E3779B97F4A7C15
	z := *x
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

func getCorpus() *benchCorpus {
	corpusOnce.Do(func() {
		seed := uint64(42)
		sys := make([][]LocalBlockHash, benchSysPrompt)
		for i := range sys {
			sys[i] = make([]LocalBlockHash, benchShared)
			for j := range sys[i] {
				sys[i][j] = LocalBlockHash(splitmix(&seed))
			}
		}
		sharedHolders := map[int]map[int]bool{}
		for w := 0; w < benchWorkers; w++ {
			for p := 0; p < benchPrompts; p++ {
				s := (w + p) % benchSysPrompt
				q := slices.Clone(sys[s])
				for len(q) < benchBlocks {
					q = append(q, LocalBlockHash(splitmix(&seed)))
				}
				if sharedHolders[s] == nil {
					sharedHolders[s] = map[int]bool{}
				}
				sharedHolders[s][w] = true
				// Engines publish a sequence hash chain as block_hash; send the
				// prompt in chunks of 16 blocks, each under the previous chunk.
				seqs := make([]SequenceHash, len(q))
				for i, l := range q {
					if i == 0 {
						seqs[i] = SequenceHash(l)
					} else {
						seqs[i] = NextSequenceHash(seqs[i-1], l)
					}
				}
				for c := 0; c < len(q); c += 16 {
					st := &KvCacheStoreData{}
					if c > 0 {
						ph := seqs[c-1]
						st.ParentHash = &ph
					}
					for i := c; i < c+16; i++ {
						st.Blocks = append(st.Blocks, KvCacheStoredBlock{BlockHash: seqs[i], TokensHash: q[i]})
					}
					corpus.events = append(corpus.events, RouterEvent{WorkerID: WorkerID(1000 + w), Event: KvCacheEvent{EventID: uint64(len(corpus.events)), Data: KvCacheEventData{Stored: st}}})
				}
				if p < 4 {
					corpus.queries = append(corpus.queries, q)
				}
				corpus.entries += benchBlocks - benchShared
			}
		}
		for _, h := range sharedHolders {
			corpus.entries += benchShared * len(h)
		}
		corpus.nodes = benchWorkers*benchPrompts*(benchBlocks-benchShared) + benchSysPrompt*benchShared
	})
	return &corpus
}

func heapAlloc() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

var (
	benchIndexOnce sync.Once
	benchIndex     *Index
	benchBytes     uint64
)

func getBenchIndex(b *testing.B) *Index {
	c := getCorpus()
	benchIndexOnce.Do(func() {
		before := heapAlloc()
		ix := NewIndex()
		for _, ev := range c.events {
			if err := ix.ApplyEvent(ev); err != nil {
				b.Fatalf("apply: %v", err)
			}
		}
		benchBytes = heapAlloc() - before
		benchIndex = ix
	})
	return benchIndex
}

// BenchmarkIndexMemory reports the heap held by the 1M-block index per
// (block, worker) entry and per distinct block.
func BenchmarkIndexMemory(b *testing.B) {
	c := getCorpus()
	ix := getBenchIndex(b)
	if n := ix.BlockCount(); n != c.entries {
		b.Fatalf("index holds %d entries, corpus %d", n, c.entries)
	}
	for i := 0; i < b.N; i++ {
		_ = ix.BlockCount()
	}
	b.ReportMetric(float64(benchBytes)/float64(c.entries), "bytes/entry")
	b.ReportMetric(float64(benchBytes)/float64(c.nodes), "bytes/block")
	b.ReportMetric(float64(c.entries), "entries")
	b.ReportMetric(float64(c.nodes), "blocks")
}

// BenchmarkIndexFindMatches queries 8k-token prompts (512 blocks) against the
// 1M-block, 64-worker index and reports the p99 latency of single calls.
func BenchmarkIndexFindMatches(b *testing.B) {
	c := getCorpus()
	ix := getBenchIndex(b)
	if got := ix.FindMatches(c.queries[0]); got.Blocks(WorkerWithDpRank{WorkerID: 1000}) != benchBlocks {
		b.Fatalf("query 0 does not fully match worker 1000: %v", got)
	}
	samples := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		q := c.queries[i%len(c.queries)]
		t0 := time.Now()
		_ = ix.FindMatches(q)
		samples = append(samples, time.Since(t0))
	}
	b.StopTimer()
	slices.Sort(samples)
	b.ReportMetric(float64(samples[len(samples)*99/100].Nanoseconds()), "p99-ns")
	b.ReportMetric(float64(samples[len(samples)/2].Nanoseconds()), "p50-ns")
}

// BenchmarkIndexApplyEvent measures event ingestion (16-block stored events
// from the corpus, replayed into fresh indexes) in events and blocks per second.
func BenchmarkIndexApplyEvent(b *testing.B) {
	c := getCorpus()
	evs := c.events[:len(c.events)/8]
	ix := NewIndex()
	j := 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if j == len(evs) {
			b.StopTimer()
			ix = NewIndex()
			j = 0
			b.StartTimer()
		}
		_ = ix.ApplyEvent(evs[j])
		j++
	}
	b.StopTimer()
	secs := b.Elapsed().Seconds()
	if secs > 0 {
		b.ReportMetric(float64(b.N)/secs, "events/s")
		b.ReportMetric(float64(b.N)*16/secs, "blocks/s")
	}
}

// BenchmarkIndexRemoveEvent measures removal of stored chunks (leaf first, as
// engines evict), including the amortised cost of compaction.
func BenchmarkIndexRemoveEvent(b *testing.B) {
	c := getCorpus()
	evs := c.events[:len(c.events)/16]
	removes := make([]RouterEvent, len(evs))
	for i, ev := range evs {
		r := &KvCacheRemoveData{}
		for _, blk := range ev.Event.Data.Stored.Blocks {
			r.BlockHashes = append(r.BlockHashes, blk.BlockHash)
		}
		slices.Reverse(r.BlockHashes)
		removes[len(evs)-1-i] = RouterEvent{WorkerID: ev.WorkerID, Event: KvCacheEvent{Data: KvCacheEventData{Removed: r}}}
	}
	var ix *Index
	j := len(removes)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if j == len(removes) {
			b.StopTimer()
			ix = NewIndex()
			for _, ev := range evs {
				_ = ix.ApplyEvent(ev)
			}
			j = 0
			b.StartTimer()
		}
		_ = ix.ApplyEvent(removes[j])
		j++
	}
	b.StopTimer()
	if secs := b.Elapsed().Seconds(); secs > 0 {
		b.ReportMetric(float64(b.N)/secs, "events/s")
	}
}

// BenchmarkIndexLoadSnapshot loads the whole corpus (about 1M blocks held by
// 64 workers, shared system prompts included) into a fresh index, through
// ApplyEvents (the bulk path a snapshot takes) and one ApplyEvent at a time.
func BenchmarkIndexLoadSnapshot(b *testing.B) {
	c := getCorpus()
	blocks := 0
	for _, ev := range c.events {
		blocks += len(ev.Event.Data.Stored.Blocks)
	}
	b.Run("ApplyEvents", func(b *testing.B) {
		for b.Loop() {
			ix := NewIndex()
			ix.Reserve(blocks)
			ix.ApplyEvents(c.events, func(i int, err error) { b.Fatalf("event %d: %v", i, err) })
		}
		b.ReportMetric(float64(blocks)*float64(b.N)/b.Elapsed().Seconds(), "blocks/s")
	})
	b.Run("ApplyEvent", func(b *testing.B) {
		for b.Loop() {
			ix := NewIndex()
			ix.Reserve(blocks)
			for _, ev := range c.events {
				if err := ix.ApplyEvent(ev); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(blocks)*float64(b.N)/b.Elapsed().Seconds(), "blocks/s")
	})
}
