package routecore

import "testing"

// selBenchInput builds n single-rank workers with varied loads, a tenth with overlap.
func selBenchInput(n int) ([]Worker, Request) {
	ws := make([]Worker, n)
	req := Request{ISL: 4096, BlockSize: 16, Overlap: OverlapInput{
		DeviceBlocks: map[WorkerWithDpRank]uint64{},
		CachedTokens: map[WorkerWithDpRank]uint64{},
	}}
	for i := range ws {
		id := WorkerID(i*7919 + 1)
		ws[i] = Worker{ID: id, Loads: map[uint32]RankLoad{0: {
			ActivePrefillTokens: uint64(i*37) % 8192, ActiveDecodeBlocks: uint64(i*101) % 5000, ActiveRequests: uint64(i % 17),
		}}}
		if i%10 == 0 {
			c := WorkerWithDpRank{WorkerID: id}
			req.Overlap.DeviceBlocks[c] = uint64(i % 256)
			req.Overlap.CachedTokens[c] = uint64(i%256) * 16
		}
	}
	return ws, req
}

// selBenchTemps are the temperatures the selection benchmarks run at.
var selBenchTemps = []struct {
	name string
	temp float64
}{{"T0", 0}, {"T0.5", 0.5}}

// goroutines is the Go a caller injects to let selections use several cores.
func goroutines(f func()) { go f() }

// BenchmarkSelect10k measures one selection over 10,000 candidates at T=0 and T>0,
// a fresh Selector with goroutines injected (split across up to GOMAXPROCS
// goroutines, see selParts).
func BenchmarkSelect10k(b *testing.B) {
	ws, req := selBenchInput(10_000)
	for _, tc := range selBenchTemps {
		cfg := DefaultKvRouterConfig()
		cfg.RouterTemperature = tc.temp
		cfg.OverlapScoreCreditDecay = 1
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := (&Selector{Go: goroutines}).SelectWithDraw(cfg, BusyThresholds{}, ws, req, 0.5); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSelectorReuse10k is BenchmarkSelect10k through a Selector that reuses
// its memory between calls, as the what-if loops and the all-prefill matrix do.
func BenchmarkSelectorReuse10k(b *testing.B) {
	ws, req := selBenchInput(10_000)
	for _, tc := range selBenchTemps {
		cfg := DefaultKvRouterConfig()
		cfg.RouterTemperature = tc.temp
		cfg.OverlapScoreCreditDecay = 1
		b.Run(tc.name, func(b *testing.B) {
			sel := Selector{Go: goroutines}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := sel.SelectWithDraw(cfg, BusyThresholds{}, ws, req, 0.5); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSelect10kSequential is BenchmarkSelect10k (one-shot) and
// BenchmarkSelectorReuse10k (reuse) with the parallel path disabled: every phase
// runs on the calling goroutine, which is the figure for a single core.
func BenchmarkSelect10kSequential(b *testing.B) {
	ws, req := selBenchInput(10_000)
	defer func(v int) { selParallelMin = v }(selParallelMin)
	selParallelMin = selSequential // and no Go: one goroutine, as without injection
	for _, mode := range []string{"oneshot", "reuse"} {
		for _, tc := range selBenchTemps {
			cfg := DefaultKvRouterConfig()
			cfg.RouterTemperature = tc.temp
			cfg.OverlapScoreCreditDecay = 1
			b.Run(mode+"/"+tc.name, func(b *testing.B) {
				var sel Selector
				b.ReportAllocs()
				for b.Loop() {
					if mode == "oneshot" {
						sel = Selector{}
					}
					if _, err := sel.SelectWithDraw(cfg, BusyThresholds{}, ws, req, 0.5); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
