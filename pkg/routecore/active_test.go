package routecore

import (
	"errors"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func activeW(id uint64, rank uint32) WorkerWithDpRank {
	return WorkerWithDpRank{WorkerID: WorkerID(id), DpRank: rank}
}

func activeHashes(hs ...uint64) []SequenceHash {
	out := make([]SequenceHash, len(hs))
	for i, h := range hs {
		out[i] = SequenceHash(h)
	}
	return out
}

func activeMust(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// activeStep is one operation of an upstream scenario and the worker-0 load
// expected after it.
type activeStep struct {
	op       string // add, mark, free, out
	id       uint64
	blocks   []SequenceHash
	isl      int
	overlap  uint32
	noTrack  bool
	frac     *float64
	at       time.Duration
	wantBlk  uint64
	wantTok  uint64
	wantReqs uint64
	wantErr  error
}

func f64(v float64) *float64 { return &v }

func runActiveSteps(t *testing.T, l *ActiveLedger, w WorkerWithDpRank, steps []activeStep) {
	t.Helper()
	for i, s := range steps {
		var err error
		switch s.op {
		case "add":
			err = l.Add(ActiveRequest{ID: s.id, Worker: w, Blocks: s.blocks, ISL: s.isl, OverlapBlocks: s.overlap, SkipPrefillTracking: s.noTrack, At: s.at})
		case "mark":
			err = l.MarkPrefillCompleted(s.id)
		case "free":
			err = l.Free(s.id)
		case "out":
			err = l.AddOutputBlock(s.id, s.frac)
		default:
			t.Fatalf("step %d: bad op %q", i, s.op)
		}
		if !errors.Is(err, s.wantErr) || (err != nil) != (s.wantErr != nil) {
			t.Fatalf("step %d (%s %d): err %v, want %v", i, s.op, s.id, err, s.wantErr)
		}
		got := l.Load(w)
		if got.ActiveDecodeBlocks != s.wantBlk || got.ActivePrefillTokens != s.wantTok || got.ActiveRequests != s.wantReqs {
			t.Fatalf("step %d (%s %d): load blocks %d tokens %d requests %d, want %d %d %d", i, s.op, s.id,
				got.ActiveDecodeBlocks, got.ActivePrefillTokens, got.ActiveRequests, s.wantBlk, s.wantTok, s.wantReqs)
		}
	}
}

// TestActiveUpstreamScenarios ports the unit tests of lib/kv-router/src/sequences/
// single.rs (ai-dynamo/dynamo @312d3427, @04df1c42, @7caca066) with their numbers.
// Upstream's tracking_hint(n) is written here as isl/overlap giving n prompt
// tokens (isl − overlap·B), the form of the older add_request(isl, overlap).
func TestActiveUpstreamScenarios(t *testing.T) {
	w := activeW(1, 0)
	tests := []struct {
		name  string
		steps []activeStep
	}{
		{"test_active_sequences_shared_blocks", []activeStep{
			{op: "add", id: 1, blocks: activeHashes(1, 2, 3), isl: 12, wantBlk: 3, wantTok: 12, wantReqs: 1},
			{op: "add", id: 2, blocks: activeHashes(4), isl: 4, wantBlk: 4, wantTok: 16, wantReqs: 2},
			{op: "add", id: 3, blocks: activeHashes(1, 2, 3, 4), isl: 16, overlap: 4, wantBlk: 4, wantTok: 16, wantReqs: 3},
			{op: "free", id: 2, wantBlk: 4, wantTok: 12, wantReqs: 2},
			{op: "free", id: 3, wantBlk: 3, wantTok: 12, wantReqs: 1},
			{op: "free", id: 1, wantBlk: 0, wantTok: 0, wantReqs: 0},
		}},
		{"test_output_blocks_with_fractional_decay", []activeStep{
			{op: "add", id: 1, blocks: activeHashes(1, 2, 3), isl: 12, wantBlk: 3, wantTok: 12, wantReqs: 1},
			// 4 single-ref blocks at 0.5 → 2.
			{op: "out", id: 1, frac: f64(0.5), wantBlk: 2, wantTok: 12, wantReqs: 1},
			// 1 and 2 now shared but keep 0.5 → still 2.
			{op: "add", id: 2, blocks: activeHashes(1, 2), isl: 8, wantBlk: 2, wantTok: 20, wantReqs: 2},
			// 0.5+0.5 for the shared pair, block 3 and both outputs at 0 → 1.
			{op: "out", id: 1, frac: f64(0), wantBlk: 1, wantTok: 20, wantReqs: 2},
			{op: "free", id: 2, wantBlk: 1, wantTok: 12, wantReqs: 1},
			{op: "free", id: 1, wantBlk: 0, wantTok: 0, wantReqs: 0},
		}},
		{"test_mark_prefill_completed", []activeStep{
			{op: "add", id: 1, blocks: activeHashes(1, 2, 3), isl: 12, wantBlk: 3, wantTok: 12, wantReqs: 1},
			{op: "mark", id: 1, wantBlk: 3, wantTok: 0, wantReqs: 1},
			{op: "mark", id: 1, wantBlk: 3, wantTok: 0, wantReqs: 1},
			{op: "add", id: 2, blocks: activeHashes(4, 5), isl: 8, wantBlk: 5, wantTok: 8, wantReqs: 2},
			{op: "free", id: 2, wantBlk: 3, wantTok: 0, wantReqs: 1},
		}},
		{"test_add_request_without_prefill_tracking_keeps_active_tokens_zero", []activeStep{
			{op: "add", id: 1, blocks: activeHashes(1, 2, 3), isl: 12, noTrack: true, wantBlk: 3, wantTok: 0, wantReqs: 1},
			{op: "mark", id: 1, wantBlk: 3, wantTok: 0, wantReqs: 1},
			{op: "free", id: 1, wantBlk: 0, wantTok: 0, wantReqs: 0},
		}},
		{"test_prefill_queue_and_sum_invariants_survive_idempotent_cleanup", []activeStep{
			{op: "add", id: 1, blocks: activeHashes(1), isl: 50, wantBlk: 1, wantTok: 50, wantReqs: 1},
			{op: "add", id: 2, blocks: activeHashes(2), isl: 30, wantBlk: 2, wantTok: 80, wantReqs: 2},
			{op: "mark", id: 1, wantBlk: 2, wantTok: 30, wantReqs: 2},
			{op: "mark", id: 1, wantBlk: 2, wantTok: 30, wantReqs: 2},
			{op: "free", id: 1, wantBlk: 1, wantTok: 30, wantReqs: 1},
			// Upstream's second free is a logged no-op; the ledger reports it.
			{op: "free", id: 1, wantBlk: 1, wantTok: 30, wantReqs: 1, wantErr: ErrActiveUnknownRequest},
			{op: "free", id: 2, wantBlk: 0, wantTok: 0, wantReqs: 0},
		}},
		{"staged_decode_cost_deduplicates_shared_prefix (active tracker)", []activeStep{
			{op: "add", id: 1, blocks: activeHashes(1, 2, 3), isl: 12, overlap: 2, wantBlk: 3, wantTok: 4, wantReqs: 1},
			{op: "add", id: 2, blocks: activeHashes(1, 2, 3), isl: 12, overlap: 2, wantBlk: 3, wantTok: 8, wantReqs: 2},
			{op: "mark", id: 1, wantBlk: 3, wantTok: 4, wantReqs: 2},
			// The output block is r1's alone; 1, 2, 3 are shared, so only it decays.
			{op: "out", id: 1, frac: f64(0.5), wantBlk: 4, wantTok: 4, wantReqs: 2}, // 3.5 rounds up
			{op: "free", id: 1, wantBlk: 3, wantTok: 4, wantReqs: 1},
			{op: "free", id: 2, wantBlk: 0, wantTok: 0, wantReqs: 0},
		}},
		{"errors: duplicate add, unknown id, overlap beyond isl", []activeStep{
			{op: "add", id: 7, blocks: activeHashes(1), isl: 4, overlap: 9, wantBlk: 1, wantTok: 0, wantReqs: 1},
			{op: "add", id: 7, blocks: activeHashes(2), isl: 4, wantBlk: 1, wantTok: 0, wantReqs: 1, wantErr: ErrActiveDuplicateRequest},
			{op: "mark", id: 8, wantBlk: 1, wantReqs: 1, wantErr: ErrActiveUnknownRequest},
			{op: "out", id: 8, wantBlk: 1, wantReqs: 1, wantErr: ErrActiveUnknownRequest},
			{op: "out", id: 7, frac: f64(1.5), wantBlk: 1, wantReqs: 1, wantErr: ErrActiveInvalid},
			{op: "out", id: 7, frac: f64(math.NaN()), wantBlk: 1, wantReqs: 1, wantErr: ErrActiveInvalid},
			{op: "out", id: 7, wantBlk: 2, wantReqs: 1},
			{op: "free", id: 7},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := NewActiveLedger(ActiveLedgerOptions{BlockSize: 4})
			runActiveSteps(t, l, w, tc.steps)
		})
	}
}

// TestActiveForceExpiry ports single.rs test_force_expiry (@04df1c42: EXPIRY 3600 s,
// checks every 30 s) and the expiry half of
// test_force_expiry_reanchors_new_oldest_request.
func TestActiveForceExpiry(t *testing.T) {
	w := activeW(1, 0)
	l := NewActiveLedger(ActiveLedgerOptions{BlockSize: 4, ExpireAfter: ActiveExpiryDuration, ExpiryCheckEvery: ActiveExpiryCheckEvery})
	activeMust(t, l.Add(ActiveRequest{ID: 1, Worker: w, Blocks: activeHashes(1, 2), ISL: 8}))
	activeMust(t, l.Add(ActiveRequest{ID: 2, Worker: w, Blocks: activeHashes(3, 4), ISL: 8}))
	if got := l.Load(w).ActiveDecodeBlocks; got != 4 {
		t.Fatalf("blocks %d, want 4", got)
	}
	now := 20 * time.Second
	if got := l.ForceExpiry(now); len(got) != 0 {
		t.Fatalf("no check before CHECK_EXPIRY_FREQUENCY: expired %v", got)
	}
	now += 11 * time.Second
	if got := l.ForceExpiry(now); len(got) != 0 {
		t.Fatalf("requests not old enough: expired %v", got)
	}
	now += ActiveExpiryDuration - 30*time.Second
	if got := l.ForceExpiry(now); !slices.Equal(got, []uint64{1, 2}) {
		t.Fatalf("expired %v, want [1 2]", got)
	}
	if got := l.Load(w); got != (RankLoad{}) {
		t.Fatalf("load after expiry %+v", got)
	}
	now += 31 * time.Second
	activeMust(t, l.Add(ActiveRequest{ID: 3, Worker: w, Blocks: activeHashes(5), ISL: 4, At: now}))
	if got := l.TakeExpired(); len(got) != 0 {
		t.Fatalf("add expired %v", got)
	}
	if got := l.Load(w); got.ActiveDecodeBlocks != 1 || got.ActivePrefillTokens != 4 {
		t.Fatalf("load %+v, want 1 block 4 tokens", got)
	}

	// reanchors: r1 at 0 (40 tokens), r2 at E−50 s (30 tokens); at E+10 s only r1
	// is stale. Here the check runs lazily from Add, as upstream's add_request does.
	l = NewActiveLedger(ActiveLedgerOptions{BlockSize: 4, ExpireAfter: ActiveExpiryDuration, ExpiryCheckEvery: ActiveExpiryCheckEvery})
	activeMust(t, l.Add(ActiveRequest{ID: 1, Worker: w, Blocks: activeHashes(1), ISL: 40}))
	activeMust(t, l.Add(ActiveRequest{ID: 2, Worker: w, Blocks: activeHashes(2), ISL: 30, At: ActiveExpiryDuration - 50*time.Second}))
	if got := l.TakeExpired(); len(got) != 0 {
		t.Fatalf("expired %v before the horizon", got)
	}
	activeMust(t, l.Add(ActiveRequest{ID: 3, Worker: activeW(9, 0), ISL: 1, At: ActiveExpiryDuration + 10*time.Second}))
	if got := l.TakeExpired(); len(got) != 0 {
		t.Fatalf("another rank's add expired %v", got)
	}
	if got := l.ForceExpiry(ActiveExpiryDuration + 10*time.Second); !slices.Equal(got, []uint64{1}) {
		t.Fatalf("expired %v, want [1]", got)
	}
	if got := l.Load(w).ActivePrefillTokens; got != 30 {
		t.Fatalf("tokens %d, want 30", got)
	}
	if l.Has(1) || !l.Has(2) {
		t.Fatal("wrong request expired")
	}
	// Expiry off: nothing ever expires.
	l = NewActiveLedger(ActiveLedgerOptions{BlockSize: 4})
	activeMust(t, l.Add(ActiveRequest{ID: 1, Worker: w, ISL: 4}))
	if got := l.ForceExpiry(100 * ActiveExpiryDuration); got != nil {
		t.Fatalf("expiry off expired %v", got)
	}
}

// TestActiveAdditionalBlocksUpstream ports prompt_registry.rs tests (@312d3427):
// staggered_prefix_overlap_matches_naive_projection,
// dp_ranks_with_same_worker_id_remain_isolated,
// removing_worker_clears_prompt_membership_and_load_state, and single.rs
// test_prompt_membership_delta_only_reports_first_add_and_last_remove as seen
// through the projection.
func TestActiveAdditionalBlocksUpstream(t *testing.T) {
	full := make([]SequenceHash, 96)
	for i := range full {
		full[i] = SequenceHash(i + 1)
	}
	l := NewActiveLedger(ActiveLedgerOptions{BlockSize: 16})
	for i, n := range []int{96, 64, 33} {
		activeMust(t, l.Add(ActiveRequest{ID: uint64(i), Worker: activeW(uint64(i+1), 0), Blocks: full[:n], ISL: 16 * n}))
	}
	dst := map[WorkerWithDpRank]uint64{activeW(77, 0): 5} // stale entry must go
	l.AdditionalBlocks(full, dst)
	want := map[WorkerWithDpRank]uint64{activeW(1, 0): 0, activeW(2, 0): 32, activeW(3, 0): 63}
	if !maps.Equal(dst, want) {
		t.Fatalf("staggered: %v, want %v", dst, want)
	}
	for i, n := range []uint64{96, 64, 33} {
		if got := l.Load(activeW(uint64(i+1), 0)).ActiveDecodeBlocks; got != n {
			t.Fatalf("worker %d blocks %d, want %d", i+1, got, n)
		}
	}

	// dp ranks of one worker are separate ledgers.
	l = NewActiveLedger(ActiveLedgerOptions{BlockSize: 4})
	activeMust(t, l.Add(ActiveRequest{ID: 1, Worker: activeW(1, 0), Blocks: activeHashes(1, 2, 3), ISL: 12}))
	activeMust(t, l.Add(ActiveRequest{ID: 2, Worker: activeW(1, 1), Blocks: activeHashes(1), ISL: 4}))
	l.AdditionalBlocks(activeHashes(1, 2, 3), dst)
	if want := map[WorkerWithDpRank]uint64{activeW(1, 0): 0, activeW(1, 1): 2}; !maps.Equal(dst, want) {
		t.Fatalf("dp ranks: %v, want %v", dst, want)
	}
	if a, b := l.Load(activeW(1, 0)), l.Load(activeW(1, 1)); a.ActiveDecodeBlocks != 3 || b.ActiveDecodeBlocks != 1 {
		t.Fatalf("dp rank loads %+v %+v", a, b)
	}

	// removing a worker clears its membership and load.
	l = NewActiveLedger(ActiveLedgerOptions{BlockSize: 4})
	activeMust(t, l.Add(ActiveRequest{ID: 1, Worker: activeW(1, 0), Blocks: activeHashes(1, 2, 3), ISL: 12}))
	activeMust(t, l.Add(ActiveRequest{ID: 2, Worker: activeW(2, 0), Blocks: activeHashes(1, 2), ISL: 8}))
	if got := l.RemoveWorker(1); !slices.Equal(got, []uint64{1}) {
		t.Fatalf("removed %v", got)
	}
	l.AdditionalBlocks(activeHashes(1, 2, 3), dst)
	if want := map[WorkerWithDpRank]uint64{activeW(2, 0): 1}; !maps.Equal(dst, want) {
		t.Fatalf("after removal: %v, want %v", dst, want)
	}
	if got := l.Load(activeW(2, 0)).ActiveDecodeBlocks + dst[activeW(2, 0)]; got != 3 {
		t.Fatalf("worker 2 potential blocks %d, want 3", got)
	}
	if got := l.Load(activeW(1, 0)); got != (RankLoad{}) {
		t.Fatalf("removed worker load %+v", got)
	}
	if l.Has(1) || l.Len() != 1 {
		t.Fatal("removed worker's request still live")
	}

	// membership: first add stores [1 2], the second adds [3]; freeing r1 keeps
	// all three (r2 holds them), freeing r2 removes them.
	l = NewActiveLedger(ActiveLedgerOptions{BlockSize: 4})
	w := activeW(1, 0)
	activeMust(t, l.Add(ActiveRequest{ID: 1, Worker: w, Blocks: activeHashes(1, 2), ISL: 8}))
	activeMust(t, l.Add(ActiveRequest{ID: 2, Worker: w, Blocks: activeHashes(1, 2, 3), ISL: 12}))
	activeMust(t, l.Free(1))
	l.AdditionalBlocks(activeHashes(1, 2, 3, 4), dst)
	if want := map[WorkerWithDpRank]uint64{w: 1}; !maps.Equal(dst, want) {
		t.Fatalf("after first free: %v, want %v", dst, want)
	}
	activeMust(t, l.Free(2))
	l.AdditionalBlocks(activeHashes(1, 2, 3), dst)
	if len(dst) != 0 {
		t.Fatalf("after last free: %v", dst)
	}
	// Prefix depth, not membership count: holding block 2 without block 1 is depth 0.
	activeMust(t, l.Add(ActiveRequest{ID: 3, Worker: w, Blocks: activeHashes(2, 3), ISL: 8}))
	l.AdditionalBlocks(activeHashes(1, 2, 3), dst)
	if len(dst) != 0 {
		t.Fatalf("non-prefix holder: %v", dst)
	}
	// Output blocks never match.
	activeMust(t, l.AddOutputBlock(3, nil))
	l.AdditionalBlocks(activeHashes(2, 3, 4), dst)
	if want := map[WorkerWithDpRank]uint64{w: 1}; !maps.Equal(dst, want) {
		t.Fatalf("with output block: %v, want %v", dst, want)
	}
	l.AdditionalBlocks(nil, dst)
	if len(dst) != 0 {
		t.Fatalf("empty query: %v", dst)
	}
}

// TestActiveObserveOutput mirrors the frontend's OutputBlockTracker::observe: one
// output block per crossing into a new block of isl+osl, decayed by
// max(0, 1 − osl/max(expected, 1)).
func TestActiveObserveOutput(t *testing.T) {
	w := activeW(1, 0)
	exp := uint32(8)
	l := NewActiveLedger(ActiveLedgerOptions{BlockSize: 4, TrackOutputBlocks: true})
	activeMust(t, l.Add(ActiveRequest{ID: 1, Worker: w, Blocks: activeHashes(1, 2), ISL: 10, ExpectedOutputTokens: &exp}))
	steps := []struct {
		osl   uint64
		added bool
		blk   uint64
	}{
		{1, false, 2}, // ceil(11/4)=3 = ceil(10/4)
		{2, false, 2},
		// ceil(13/4)=4: output block; fraction 1−3/8 = 0.625 on blocks 1, 2 and
		// the output → 1.875 → 2.
		{3, true, 2},
		{4, false, 2},
		// ceil(18/4)=5, two boundaries at once still books one block; fraction
		// 1−8/8 = 0 → 0.
		{8, true, 0},
		{20, true, 0}, // fraction max(0, 1−20/8) = 0
	}
	for _, s := range steps {
		added, err := l.ObserveOutput(1, s.osl)
		activeMust(t, err)
		if added != s.added || l.Load(w).ActiveDecodeBlocks != s.blk {
			t.Fatalf("osl %d: added %v blocks %d, want %v %d", s.osl, added, l.Load(w).ActiveDecodeBlocks, s.added, s.blk)
		}
	}
	// Without an expected length the blocks count whole.
	activeMust(t, l.Add(ActiveRequest{ID: 2, Worker: w, PrivateBlocks: 2, ISL: 8}))
	if added, err := l.ObserveOutput(2, 1); err != nil || !added {
		t.Fatalf("added %v err %v", added, err)
	}
	if got := l.Load(w).ActiveDecodeBlocks; got != 3 {
		t.Fatalf("blocks %d, want 3", got)
	}
	// TrackOutputBlocks off books nothing.
	off := NewActiveLedger(ActiveLedgerOptions{BlockSize: 4})
	activeMust(t, off.Add(ActiveRequest{ID: 1, Worker: w, ISL: 4}))
	if added, err := off.ObserveOutput(1, 100); err != nil || added || off.Load(w).ActiveDecodeBlocks != 0 {
		t.Fatalf("tracking off: added %v err %v", added, err)
	}
	if _, err := off.ObserveOutput(5, 1); !errors.Is(err, ErrActiveUnknownRequest) {
		t.Fatalf("unknown id: %v", err)
	}
}

// TestActivePrivateBlocksAndFillLoads covers assume_kv_reuse=false bookings and
// the Worker.Loads fill.
func TestActivePrivateBlocksAndFillLoads(t *testing.T) {
	l := NewActiveLedger(ActiveLedgerOptions{BlockSize: 16})
	activeMust(t, l.Add(ActiveRequest{ID: 1, Worker: activeW(5, 1), PrivateBlocks: 3, ISL: 50, OverlapBlocks: 1}))
	activeMust(t, l.Add(ActiveRequest{ID: 2, Worker: activeW(5, 1), PrivateBlocks: 3, ISL: 50}))
	if got := l.Load(activeW(5, 1)); got != (RankLoad{ActivePrefillTokens: 34 + 50, ActiveDecodeBlocks: 6, ActiveRequests: 2}) {
		t.Fatalf("load %+v", got)
	}
	used := uint64(9)
	workers := []Worker{
		{ID: 5, Runtime: RuntimeConfig{DataParallelSize: 2}, Loads: map[uint32]RankLoad{1: {KvUsedBlocks: &used, ActiveRequests: 99}}},
		{ID: 6},
	}
	l.FillLoads(workers)
	if got := workers[0].Loads[1]; got.ActiveRequests != 2 || got.ActiveDecodeBlocks != 6 || got.KvUsedBlocks != &used {
		t.Fatalf("rank 1 %+v", got)
	}
	if got, ok := workers[0].Loads[0]; !ok || got != (RankLoad{}) {
		t.Fatalf("rank 0 %+v %v", got, ok)
	}
	if got, ok := workers[1].Loads[0]; !ok || got != (RankLoad{}) || len(workers[1].Loads) != 1 {
		t.Fatalf("worker 6 %+v", workers[1].Loads)
	}
	all := map[WorkerWithDpRank]RankLoad{}
	l.Loads(all)
	if len(all) != 1 || all[activeW(5, 1)].ActiveDecodeBlocks != 6 {
		t.Fatalf("loads %v", all)
	}
	if w, ok := l.WorkerOf(2); !ok || w != activeW(5, 1) {
		t.Fatalf("worker of 2: %v %v", w, ok)
	}
	if _, ok := l.WorkerOf(3); ok {
		t.Fatal("worker of unknown id")
	}
	if err := l.Add(ActiveRequest{ID: 3, ISL: -1}); !errors.Is(err, ErrActiveInvalid) {
		t.Fatalf("negative isl: %v", err)
	}
}

// --- randomized comparison with a straightforward reference ---

type refActiveReq struct {
	id       uint64
	w        WorkerWithDpRank
	blocks   []SequenceHash
	excl     []uint64 // weights of private and output blocks
	prefill  uint64
	isl      uint64
	total    uint64
	expected *uint32
}

// refActive recomputes everything from the live requests; its only state beyond
// them is each worker's hash → weight map (a hash's decay weight survives while
// any request on the worker holds it).
type refActive struct {
	bs     uint64
	reqs   []*refActiveReq
	weight map[WorkerWithDpRank]map[SequenceHash]uint64
}

func (r *refActive) find(id uint64) int {
	return slices.IndexFunc(r.reqs, func(q *refActiveReq) bool { return q.id == id })
}

func (r *refActive) held(w WorkerWithDpRank, h SequenceHash) int {
	n := 0
	for _, q := range r.reqs {
		if q.w == w {
			for _, b := range q.blocks {
				if b == h {
					n++
				}
			}
		}
	}
	return n
}

func (r *refActive) add(q *refActiveReq) {
	r.reqs = append(r.reqs, q)
	m := r.weight[q.w]
	if m == nil {
		m = map[SequenceHash]uint64{}
		r.weight[q.w] = m
	}
	for _, h := range q.blocks {
		if _, ok := m[h]; !ok {
			m[h] = activeUnit
		}
	}
}

func (r *refActive) free(i int) {
	q := r.reqs[i]
	r.reqs = slices.Delete(r.reqs, i, i+1)
	for _, h := range q.blocks {
		if r.held(q.w, h) == 0 {
			delete(r.weight[q.w], h)
		}
	}
}

func (r *refActive) output(q *refActiveReq, frac *float64) {
	q.excl = append(q.excl, activeUnit)
	if frac == nil {
		return
	}
	v := uint64(math.Round(*frac * float64(activeUnit)))
	for _, h := range q.blocks {
		if r.held(q.w, h) == 1 {
			r.weight[q.w][h] = v
		}
	}
	for i := range q.excl {
		q.excl[i] = v
	}
}

func (r *refActive) load(w WorkerWithDpRank) RankLoad {
	var units uint64
	var out RankLoad
	for _, v := range r.weight[w] {
		units += v
	}
	for _, q := range r.reqs {
		if q.w != w {
			continue
		}
		out.ActiveRequests++
		out.ActivePrefillTokens += q.prefill
		for _, v := range q.excl {
			units += v
		}
	}
	out.ActiveDecodeBlocks = uint64(math.Round(float64(units) / float64(activeUnit))) // f64::round
	return out
}

func (r *refActive) additional(blocks []SequenceHash) map[WorkerWithDpRank]uint64 {
	out := map[WorkerWithDpRank]uint64{}
	for w, m := range r.weight {
		depth := 0
		for depth < len(blocks) {
			if _, ok := m[blocks[depth]]; !ok {
				break
			}
			depth++
		}
		if depth > 0 {
			out[w] = uint64(len(blocks) - depth)
		}
	}
	return out
}

func TestActiveLedgerMatchesReference(t *testing.T) {
	workers := []WorkerWithDpRank{activeW(1, 0), activeW(1, 1), activeW(2, 0), activeW(3, 0), activeW(4, 2)}
	for _, seed := range []uint64{1, 2, 3} {
		rng := rand.New(rand.NewPCG(seed, 0xac71e))
		const bs = 4
		l := NewActiveLedger(ActiveLedgerOptions{BlockSize: bs, TrackOutputBlocks: true})
		ref := &refActive{bs: bs, weight: map[WorkerWithDpRank]map[SequenceHash]uint64{}}
		// Prompts: a family prefix f·1000+i (chained-hash-like), sometimes with
		// hashes from a tiny shared pool (repeats inside a request, non-prefix
		// sharing) to exercise the general rules.
		prompt := func() []SequenceHash {
			if rng.IntN(10) == 0 {
				return nil
			}
			f, n := rng.IntN(4), rng.IntN(10)
			out := make([]SequenceHash, 0, n+2)
			for i := range n {
				out = append(out, SequenceHash(f*1000+i))
			}
			for range rng.IntN(3) {
				if rng.IntN(3) == 0 {
					out = append(out, SequenceHash(90000+rng.IntN(4)))
				} else {
					out = append(out, SequenceHash(50000+rng.Uint64N(1<<20)))
				}
			}
			return out
		}
		nextID := uint64(1)
		dst := map[WorkerWithDpRank]uint64{}
		for op := range 20000 {
			live := len(ref.reqs)
			k := rng.IntN(100)
			switch {
			case k < 40 || live == 0:
				blocks := prompt()
				isl := len(blocks)*bs + rng.IntN(bs)
				priv := 0
				if blocks == nil && rng.IntN(2) == 0 {
					priv = isl / bs
				}
				id := nextID
				if live > 0 && rng.IntN(50) == 0 {
					id = ref.reqs[rng.IntN(live)].id // duplicate
				} else {
					nextID++
				}
				var exp *uint32
				if rng.IntN(2) == 0 {
					e := uint32(rng.IntN(40))
					exp = &e
				}
				ar := ActiveRequest{ID: id, Worker: workers[rng.IntN(len(workers))], Blocks: blocks, PrivateBlocks: priv,
					ISL: isl, OverlapBlocks: uint32(rng.IntN(len(blocks) + 2)), SkipPrefillTracking: rng.IntN(5) == 0, ExpectedOutputTokens: exp}
				err := l.Add(ar)
				if ref.find(id) >= 0 {
					if !errors.Is(err, ErrActiveDuplicateRequest) {
						t.Fatalf("seed %d op %d: duplicate add: %v", seed, op, err)
					}
					break
				}
				activeMust(t, err)
				q := &refActiveReq{id: id, w: ar.Worker, blocks: blocks, isl: uint64(isl), expected: exp, total: (uint64(isl) + bs - 1) / bs}
				for range priv {
					q.excl = append(q.excl, activeUnit)
				}
				if !ar.SkipPrefillTracking && isl > int(ar.OverlapBlocks)*bs {
					q.prefill = uint64(isl - int(ar.OverlapBlocks)*bs)
				}
				ref.add(q)
			case k < 55:
				id := nextID + 1 // unknown unless a live one is drawn
				if rng.IntN(20) != 0 {
					id = ref.reqs[rng.IntN(live)].id
				}
				err := l.MarkPrefillCompleted(id)
				if i := ref.find(id); i >= 0 {
					activeMust(t, err)
					ref.reqs[i].prefill = 0
				} else if !errors.Is(err, ErrActiveUnknownRequest) {
					t.Fatalf("seed %d op %d: mark unknown: %v", seed, op, err)
				}
			case k < 80:
				id := nextID + 1
				if rng.IntN(20) != 0 {
					id = ref.reqs[rng.IntN(live)].id
				}
				err := l.Free(id)
				if i := ref.find(id); i >= 0 {
					activeMust(t, err)
					ref.free(i)
				} else if !errors.Is(err, ErrActiveUnknownRequest) {
					t.Fatalf("seed %d op %d: free unknown: %v", seed, op, err)
				}
			case k < 88:
				q := ref.reqs[rng.IntN(live)]
				var frac *float64
				if rng.IntN(3) > 0 {
					v := rng.Float64()
					if rng.IntN(4) == 0 {
						v = float64(rng.IntN(5)) / 4
					}
					frac = &v
				}
				activeMust(t, l.AddOutputBlock(q.id, frac))
				ref.output(q, frac)
			case k < 99:
				q := ref.reqs[rng.IntN(live)]
				osl := uint64(rng.IntN(40))
				added, err := l.ObserveOutput(q.id, osl)
				activeMust(t, err)
				total := (q.isl + osl + bs - 1) / bs
				want := total > q.total
				if want {
					q.total = total
					var frac *float64
					if q.expected != nil {
						v := max(1-float64(osl)/float64(max(*q.expected, 1)), 0)
						frac = &v
					}
					ref.output(q, frac)
				}
				if added != want {
					t.Fatalf("seed %d op %d: observe added %v, want %v", seed, op, added, want)
				}
			default:
				w := workers[rng.IntN(len(workers))].WorkerID
				got := l.RemoveWorker(w)
				var want []uint64
				for i := len(ref.reqs) - 1; i >= 0; i-- {
					if ref.reqs[i].w.WorkerID == w {
						want = append(want, ref.reqs[i].id)
						ref.free(i)
					}
				}
				slices.Sort(want)
				if !slices.Equal(got, want) {
					t.Fatalf("seed %d op %d: removed %v, want %v", seed, op, got, want)
				}
			}
			if l.Len() != len(ref.reqs) {
				t.Fatalf("seed %d op %d: %d live, want %d", seed, op, l.Len(), len(ref.reqs))
			}
			for _, w := range workers {
				if got, want := l.Load(w), ref.load(w); got != want {
					t.Fatalf("seed %d op %d: %v load %+v, want %+v", seed, op, w, got, want)
				}
			}
			for range 2 {
				var qb []SequenceHash
				if live := len(ref.reqs); live > 0 && rng.IntN(2) == 0 {
					qb = slices.Clone(ref.reqs[rng.IntN(live)].blocks)
					qb = append(qb[:rng.IntN(len(qb)+1)], prompt()...)
				} else {
					qb = prompt()
				}
				l.AdditionalBlocks(qb, dst)
				if want := ref.additional(qb); !maps.Equal(dst, want) {
					t.Fatalf("seed %d op %d: additional(%v) = %v, want %v", seed, op, qb, dst, want)
				}
			}
		}
	}
}
