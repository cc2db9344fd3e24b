package routecore

import (
	"math/rand/v2"
	"testing"
)

// activeBenchLedger books 10,000 requests of 600 blocks on 1,000 workers: each
// prompt is one of 100 shared 400-block prefixes followed by a 200-block suffix
// of its own.
func activeBenchLedger(b *testing.B) (*ActiveLedger, *rand.Rand, func() []SequenceHash) {
	b.Helper()
	const (
		workers, requests = 1000, 10000
		families, prefix  = 100, 400
		suffix            = 200
	)
	rng := rand.New(rand.NewPCG(7, 11))
	next := uint64(1 << 40)
	prompt := func() []SequenceHash {
		f := uint64(rng.IntN(families))
		out := make([]SequenceHash, 0, prefix+suffix)
		for i := range uint64(prefix) {
			out = append(out, SequenceHash(f<<20|i))
		}
		for range suffix {
			next++
			out = append(out, SequenceHash(next))
		}
		return out
	}
	l := NewActiveLedger(ActiveLedgerOptions{BlockSize: 16})
	for id := range uint64(requests) {
		w := WorkerWithDpRank{WorkerID: WorkerID(rng.IntN(workers))}
		if err := l.Add(ActiveRequest{ID: id, Worker: w, Blocks: prompt(), ISL: 16 * (prefix + suffix)}); err != nil {
			b.Fatal(err)
		}
	}
	return l, rng, prompt
}

// BenchmarkActiveAddFree books and frees one more 600-block request against the
// 10,000 live ones.
func BenchmarkActiveAddFree(b *testing.B) {
	l, rng, prompt := activeBenchLedger(b)
	blocks := prompt()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		id := uint64(1<<32) + uint64(i)
		w := WorkerWithDpRank{WorkerID: WorkerID(rng.IntN(1000))}
		if err := l.Add(ActiveRequest{ID: id, Worker: w, Blocks: blocks, ISL: 16 * len(blocks), OverlapBlocks: 400}); err != nil {
			b.Fatal(err)
		}
		if err := l.Free(id); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkActiveAdditionalBlocks projects a 600-block request (a shared
// 400-block prefix, held by about 100 workers, plus a new suffix) over the
// 1,000-worker ledger.
func BenchmarkActiveAdditionalBlocks(b *testing.B) {
	l, _, prompt := activeBenchLedger(b)
	queries := make([][]SequenceHash, 16)
	for i := range queries {
		queries[i] = prompt()
	}
	dst := make(map[WorkerWithDpRank]uint64)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		l.AdditionalBlocks(queries[i%len(queries)], dst)
	}
	b.ReportMetric(float64(len(dst)), "workers-filled")
}

// BenchmarkActiveLoads fills the loads of all 1,000 workers.
func BenchmarkActiveLoads(b *testing.B) {
	l, _, _ := activeBenchLedger(b)
	dst := make(map[WorkerWithDpRank]RankLoad)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		l.Loads(dst)
	}
}
