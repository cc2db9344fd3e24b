package routecore

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"
)

// This file ports the router's own ledger of in-flight requests: Dynamo's
// ActiveSequences (one per worker and dp rank) and ActiveSequencesMultiWorker, the
// PromptRegistry projection the scheduler reads (WorkerLoadProjection), and the
// frontend hooks that feed them (the scheduler queue's prefill_load_hint_for and
// the request guard's OutputBlockTracker). Sources, ai-dynamo/dynamo:
//
//   - lib/kv-router/src/sequences/single.rs (ActiveSequences: add_request_with_
//     prefill_tracking, mark_prefill_completed, free, add_output_block,
//     force_expiry, set_single_ref_blocks_as_fractional, worker_load_snapshot),
//     read at 312d34274a83ad625ac6927b21b31062f32bba6c and
//     04df1c42f2fedff2286f46f13efcc96ec32a55bd; the older shape with
//     add_request(isl, overlap) and new_tokens at
//     7caca0669db3faf3269a980b0cc40bfe9ab2f704;
//   - lib/kv-router/src/sequences/multi_worker.rs
//     (ActiveSequencesMultiWorker: add_request, free, mark_prefill_completed,
//     add_output_block, update_workers, SequenceError) at 04df1c42;
//   - lib/kv-router/src/sequences/block_tracker.rs (BlockTracker: acquire_prompt,
//     append_output, release, set_unique_suffix_fractional, active_blocks) at
//     057096c31e3cb60ed3bc7c62ceb6846fbdb29ad0, and sequences/mod.rs
//     (estimate_physical_active_blocks) at 784f58950c920e8b3870442f0fc68f2514cbc321;
//   - lib/kv-router/src/sequences/prefill_tracker.rs (PrefillLoadTracker) at
//     0b6b9200b004574d9df38ed84e52b6fae3be790a;
//   - lib/kv-router/src/sequences/prompt_registry.rs (project_worker_loads,
//     potential_blocks_and_tokens, WorkerLoadProjection) at 312d3427;
//   - the scheduler queue's admit_one / prefill_load_hint_for, the kv router
//     config's compute_seq_hashes_for_tracking, and the request guard's
//     OutputBlockTracker::observe (newest versions found in the index; the
//     index does not name their commits).
//
// What is not modelled: the AIC prefill-duration decay of active prefill tokens
// (PrefillLoadSnapshot::active_tokens_at with an expected_prefill_duration; with no
// prefill load estimator configured — the default — there is no duration and the
// tokens do not decay, which is what this ledger reproduces); the staged
// "selector" decode tracker of aggregated dual-signal routing
// (selector_decode_blocks, staged_decode_blocks), which routecore's selector has
// no input for; replica sync between routers; LoRA counts; the prompt-membership
// deltas themselves (only their effect on AdditionalBlocks is kept).

// Errors returned by ActiveLedger. Upstream logs and ignores some of these cases
// (see each method); the ledger returns them so a simulator notices, and callers
// that want upstream's leniency can test with errors.Is and carry on.
var (
	// ErrActiveDuplicateRequest: Add with an id already live (SequenceError::DuplicateRequest).
	ErrActiveDuplicateRequest = errors.New("routecore: active request already exists")
	// ErrActiveUnknownRequest: the id is not live (SequenceError::RequestNotFound).
	ErrActiveUnknownRequest = errors.New("routecore: active request not found")
	// ErrActiveInvalid: an argument outside what the router can produce.
	ErrActiveInvalid = errors.New("routecore: invalid active-ledger argument")
)

// ActiveLedgerOptions configures an ActiveLedger.
type ActiveLedgerOptions struct {
	// BlockSize is the KV block size in tokens (ActiveSequencesMultiWorker::new's
	// block_size); it must be > 0.
	BlockSize int
	// TrackOutputBlocks is router_track_output_blocks: ObserveOutput books an output
	// block each time the generated text crosses into a new block. When false,
	// ObserveOutput books nothing (AddOutputBlock still works).
	TrackOutputBlocks bool
	// ExpireAfter is single.rs's EXPIRY_DURATION: a request booked more than this
	// long before an expiry check is freed as stale. 0 turns expiry off (the ledger
	// then never reads ActiveRequest.At). Upstream's constant has been 300 s and,
	// in a later reading of single.rs (04df1c42), 3600 s; ActiveExpiryDuration
	// is the latter.
	ExpireAfter time.Duration
	// ExpiryCheckEvery is CHECK_EXPIRY_FREQUENCY (30 s upstream,
	// ActiveExpiryCheckEvery): a worker checks for stale requests at most this
	// often, lazily on Add and from ForceExpiry. Read only when ExpireAfter > 0.
	ExpiryCheckEvery time.Duration
}

// Upstream expiry constants (single.rs EXPIRY_DURATION, CHECK_EXPIRY_FREQUENCY;
// multi_worker.rs FORCE_EXPIRE_REQUESTS_ACROSS_ALL_WORKERS_INTERVAL).
const (
	ActiveExpiryDuration             = 3600 * time.Second
	ActiveExpiryCheckEvery           = 30 * time.Second
	ActiveForceExpiryInterval        = 60 * time.Second
	activeUnit                uint64 = 1 << 32 // fixed-point weight of one whole block
)

// ActiveRequest is one booking: the request the router just routed to Worker
// (SequenceRequest in multi_worker.rs, built by the scheduler queue's admit_one).
type ActiveRequest struct {
	// ID is the caller-assigned request id (upstream's request_id string).
	ID uint64
	// Worker is the selected worker and dp rank; each rank has its own ledger
	// (one ActiveSequences per WorkerWithDpRank), created on first use
	// (ensure_worker_registered).
	Worker WorkerWithDpRank
	// Blocks are the sequence hashes of the request's full prompt blocks when
	// router_track_active_blocks and router_assume_kv_reuse are both on
	// (compute_seq_hashes_for_tracking). Shared hashes count once per worker.
	// nil with active-block tracking off (token_sequence None).
	Blocks []SequenceHash
	// PrivateBlocks is the number of full prompt blocks, floor(ISL/B), booked when
	// router_assume_kv_reuse is off: upstream tracks them under fresh random
	// hashes, so they never match anything and count fully on this worker. The
	// ledger models them as that many never-shared blocks without drawing random
	// numbers (a 64-bit collision is the only difference). Use Blocks or
	// PrivateBlocks, not both.
	PrivateBlocks int
	// ISL is the prompt length in tokens, a trailing partial block included.
	ISL int
	// OverlapBlocks is the device overlap the router credited on Worker
	// (WorkerSelectionResult::overlap_blocks).
	OverlapBlocks uint32
	// SkipPrefillTracking is track_prefill_tokens = false (the decode router's
	// override, or router_track_prefill_tokens off): no prompt tokens are booked.
	SkipPrefillTracking bool
	// ExpectedOutputTokens is the request's expected output length, if known; it
	// drives the fractional decay of output blocks in ObserveOutput.
	ExpectedOutputTokens *uint32
	// At is the caller's clock when the router booked the request (Instant::now()
	// in add_request). Read only when expiry is on.
	At time.Duration
}

// ActiveLedger is the router's ledger of in-flight requests per (worker, dp rank):
// what Dynamo's ActiveSequencesMultiWorker books when it routes a request, frees
// when the request ends, and projects into every later routing decision as
// WorkerLoadProjection (active prefill tokens, active decode blocks, active
// request count, and the request's additional active blocks). Load and
// AdditionalBlocks give exactly the inputs routecore's Select takes as
// RankLoad and Request.AdditionalActiveBlocks.
//
// Rules (each method cites its upstream function):
//
//   - Prefill tokens: when prefill is tracked, a request books
//     isl − overlap·B (saturating at 0; the trailing partial block counts), and
//     books nothing when that is 0; the booking ends at MarkPrefillCompleted or
//     Free. Without a prefill-duration model nothing decays.
//   - Decode blocks: the distinct prompt hashes held by the worker's live
//     requests, plus every private (non-reused) prompt block and output block,
//     each weighing 1 unless a decay fraction set it lower; the total is rounded
//     to the nearest integer, halves away from zero (f64::round).
//   - Active requests: the number of live requests on the worker.
//   - Additional blocks: a request's block count minus the longest prefix of its
//     hashes that the worker's live prompts hold (PromptMembershipTrie depth).
//
// The ledger is deterministic, reads no clock (times come in through
// ActiveRequest.At and ForceExpiry), draws no random numbers and starts no
// goroutines. It is not safe for concurrent use, reads included (AdditionalBlocks
// uses scratch space).
type ActiveLedger struct {
	opts     ActiveLedgerOptions
	workers  []*activeWorker
	byKey    map[WorkerWithDpRank]int32
	requests map[uint64]*activeReq
	// index is the reverse map hash → workers whose live prompts hold it
	// (PromptRegistry's membership): what makes AdditionalBlocks cost the sum
	// over the request's blocks of their holders, not workers × blocks.
	index   holderIndex
	expired []uint64
	// scratch for AdditionalBlocks
	alive, next []int32
	mark        []uint64
	stamp       uint64
}

type activeWorker struct {
	key    WorkerWithDpRank
	blocks map[SequenceHash]*activeBlock
	// units is Σ block weights in 1/2^32 blocks: distinct prompt hashes plus the
	// private and output blocks of every live request.
	units    uint64
	prefill  uint64
	requests uint64
	// lastCheck is last_expiry_check_time.
	lastCheck time.Duration
}

type activeBlock struct {
	hash SequenceHash
	refs uint32 // occurrences in live prompts on this worker (Arc strong count)
	pos  uint32 // position in ActiveLedger.index's holders of hash
	w    uint64 // weight in 1/2^32 blocks
}

type activeReq struct {
	id      uint64
	worker  int32
	blocks  []*activeBlock
	prefill uint64
	// exclusive blocks (private prompt blocks and output blocks) are always held
	// by this request alone; whole ones weigh 1, decayed ones weigh frac.
	whole, decayed uint64
	frac           uint64
	isl            uint64
	totalBlocks    uint64 // OutputBlockTracker::current_total_blocks
	expected       *uint32
	at             time.Duration
}

// NewActiveLedger returns an empty ledger. A BlockSize ≤ 0 is replaced by 1 so the
// ledger never divides by zero; callers should pass the real block size.
func NewActiveLedger(opts ActiveLedgerOptions) *ActiveLedger {
	if opts.BlockSize <= 0 {
		opts.BlockSize = 1
	}
	return &ActiveLedger{
		opts:     opts,
		byKey:    make(map[WorkerWithDpRank]int32),
		requests: make(map[uint64]*activeReq),
		index:    holderIndex{one: make(map[SequenceHash]int32), many: make(map[SequenceHash][]int32)},
	}
}

// holderIndex maps a hash to the workers holding it, in the order they took
// it. Most hashes of a ledger have one holder (a prompt's own tail): its
// worker is kept inline in one; a hash held by several has its list in many.
// (A slice per hash was three quarters of the ledger's memory under a long
// queue: its header in the map and a tiny allocation each.)
type holderIndex struct {
	one  map[SequenceHash]int32
	many map[SequenceHash][]int32
	buf  [1]int32
}

// holders returns h's holders; the slice is valid until the next change, and
// until the next call for a hash of one holder.
func (x *holderIndex) holders(h SequenceHash) []int32 {
	if hs, ok := x.many[h]; ok {
		return hs
	}
	if w, ok := x.one[h]; ok {
		x.buf[0] = w
		return x.buf[:]
	}
	return nil
}

// add appends worker w to h's holders and returns its position.
func (x *holderIndex) add(h SequenceHash, w int32) uint32 {
	if hs, ok := x.many[h]; ok {
		x.many[h] = append(hs, w)
		return uint32(len(hs))
	}
	if first, ok := x.one[h]; ok {
		delete(x.one, h)
		x.many[h] = []int32{first, w}
		return 1
	}
	x.one[h] = w
	return 0
}

// remove takes the holder at pos out of h's holders, the last one moving into
// its place; it returns the moved holder and whether one moved.
func (x *holderIndex) remove(h SequenceHash, pos uint32) (moved int32, ok bool) {
	hs, isMany := x.many[h]
	if !isMany {
		delete(x.one, h)
		return 0, false
	}
	last := len(hs) - 1
	if int(pos) != last {
		moved, ok = hs[last], true
		hs[pos] = moved
	}
	switch last {
	case 1:
		delete(x.many, h)
		x.one[h] = hs[0]
	default:
		x.many[h] = hs[:last]
	}
	return moved, ok
}

// remap renumbers every holder (a worker left the table).
func (x *holderIndex) remap(to []int32) {
	for h, w := range x.one {
		x.one[h] = to[w]
	}
	for _, hs := range x.many {
		for j, w := range hs {
			hs[j] = to[w]
		}
	}
}

// Len returns the number of live requests.
func (l *ActiveLedger) Len() int { return len(l.requests) }

// Has reports whether id is live.
func (l *ActiveLedger) Has(id uint64) bool { _, ok := l.requests[id]; return ok }

// WorkerOf returns the worker and rank a live request is booked on.
func (l *ActiveLedger) WorkerOf(id uint64) (WorkerWithDpRank, bool) {
	r, ok := l.requests[id]
	if !ok {
		return WorkerWithDpRank{}, false
	}
	return l.workers[r.worker].key, true
}

func (l *ActiveLedger) worker(k WorkerWithDpRank, at time.Duration) int32 {
	if i, ok := l.byKey[k]; ok {
		return i
	}
	i := int32(len(l.workers))
	l.byKey[k] = i
	// A new slot starts its expiry timer now (ActiveSequences::new sets
	// last_expiry_check_time to Instant::now()).
	l.workers = append(l.workers, &activeWorker{key: k, blocks: make(map[SequenceHash]*activeBlock), lastCheck: at})
	l.mark = append(l.mark, 0)
	return i
}

// PrefillTokens returns the prompt tokens a request books on its worker: the
// scheduler queue's prefill_load_hint_for, isl.saturating_sub(overlap_blocks·B),
// or 0 when prefill is not tracked (no hint, so nothing is booked). The older
// ActiveSequences::new_tokens computed the same difference.
func (o ActiveLedgerOptions) PrefillTokens(r ActiveRequest) uint64 {
	if r.SkipPrefillTracking || r.ISL <= 0 {
		return 0
	}
	bs := uint64(max(o.BlockSize, 1))
	prefix := uint64(r.OverlapBlocks) * bs
	if isl := uint64(r.ISL); isl > prefix {
		return isl - prefix
	}
	return 0
}

// Add books a routed request (ActiveSequencesMultiWorker::add_request →
// ActiveSequences::add_request_with_prefill_tracking). A live id is refused with
// ErrActiveDuplicateRequest before anything changes (try_insert_request). With
// expiry on, the worker first frees its stale requests (force_expiry at
// r.At); their ids are kept for TakeExpired. Each prompt hash takes a reference
// on the worker (touch_block): a hash already live there costs nothing more, and
// a hash repeated inside one request counts once but holds two references.
// Private blocks are booked as never-shared blocks. The prompt tokens of
// PrefillTokens are booked unless zero (the hint's initial_effective_prefill_
// tokens > 0 check).
func (l *ActiveLedger) Add(r ActiveRequest) error {
	if _, ok := l.requests[r.ID]; ok {
		return fmt.Errorf("%w: %s", ErrActiveDuplicateRequest, strconv.FormatUint(r.ID, 10))
	}
	if r.ISL < 0 || r.PrivateBlocks < 0 {
		return fmt.Errorf("%w: isl %d, private blocks %d", ErrActiveInvalid, r.ISL, r.PrivateBlocks)
	}
	wi := l.worker(r.Worker, r.At)
	if l.opts.ExpireAfter > 0 {
		l.expired = append(l.expired, l.forceExpiry(wi, r.At)...)
	}
	wk := l.workers[wi]
	req := &activeReq{
		id:       r.ID,
		worker:   wi,
		prefill:  l.opts.PrefillTokens(r),
		whole:    uint64(r.PrivateBlocks),
		isl:      uint64(r.ISL),
		expected: r.ExpectedOutputTokens,
		at:       r.At,
	}
	bs := uint64(l.opts.BlockSize)
	req.totalBlocks = (req.isl + bs - 1) / bs // OutputBlockTracker::new: isl.div_ceil(B)
	if len(r.Blocks) > 0 {
		req.blocks = make([]*activeBlock, len(r.Blocks))
		var slab []activeBlock // new blocks of this request, allocated together
		for i, h := range r.Blocks {
			b := wk.blocks[h]
			if b == nil {
				if len(slab) == cap(slab) {
					slab = make([]activeBlock, 0, len(r.Blocks)-i)
				}
				slab = append(slab, activeBlock{hash: h, w: activeUnit})
				b = &slab[len(slab)-1]
				wk.blocks[h] = b
				wk.units += activeUnit
				b.pos = l.index.add(h, wi)
			}
			b.refs++
			req.blocks[i] = b
		}
	}
	wk.units += req.whole * activeUnit
	wk.prefill += req.prefill
	wk.requests++
	l.requests[r.ID] = req
	return nil
}

// MarkPrefillCompleted ends a request's prompt-token booking
// (ActiveSequences::mark_prefill_completed → PrefillLoadTracker::remove). Calling
// it again is a no-op, as upstream. An id that is not live returns
// ErrActiveUnknownRequest (the multi-worker lookup's RequestNotFound).
func (l *ActiveLedger) MarkPrefillCompleted(id uint64) error {
	req, ok := l.requests[id]
	if !ok {
		return fmt.Errorf("%w: %s", ErrActiveUnknownRequest, strconv.FormatUint(id, 10))
	}
	l.workers[req.worker].prefill -= req.prefill
	req.prefill = 0
	return nil
}

// Free ends a request (ActiveSequences::free): its remaining prompt tokens go
// (free implies mark_prefill_completed), every prompt hash drops a reference and
// leaves the worker at zero references (with any decay fraction it carried), and
// its private and output blocks go. An id that is not live returns
// ErrActiveUnknownRequest; upstream treats that as an idempotent no-op
// (ActiveSequencesMultiWorker::free logs and returns Ok), so a caller may ignore it.
func (l *ActiveLedger) Free(id uint64) error {
	req, ok := l.requests[id]
	if !ok {
		return fmt.Errorf("%w: %s", ErrActiveUnknownRequest, strconv.FormatUint(id, 10))
	}
	l.free(req)
	return nil
}

func (l *ActiveLedger) free(req *activeReq) {
	wk := l.workers[req.worker]
	wk.prefill -= req.prefill
	for _, b := range req.blocks {
		b.refs--
		if b.refs > 0 {
			continue
		}
		// release / try_remove_block: the hash leaves the worker with its weight.
		wk.units -= b.w
		delete(wk.blocks, b.hash)
		if moved, ok := l.index.remove(b.hash, b.pos); ok {
			l.workers[moved].blocks[b.hash].pos = b.pos
		}
	}
	wk.units -= req.whole*activeUnit + req.decayed*req.frac
	wk.requests--
	delete(l.requests, req.id)
}

// AddOutputBlock books one generated block for a live request
// (ActiveSequences::add_output_block: a fresh random hash, so a never-shared
// block). With a decay fraction, every block only this request holds — its
// output and private blocks and every prompt hash with a single reference on the
// worker — is then weighted by the fraction (set_single_ref_blocks_as_fractional,
// set_unique_suffix_fractional); a hash weighted earlier keeps its weight when a
// later request shares it. The fraction must lie in [0, 1] (the frontend computes
// max(0, 1 − osl/expected)). Weights are kept in fixed point with 32 fraction
// bits, so the rounded total cannot drift with the order of operations; it agrees
// with upstream's f64 running sums except where the exact total lies within
// about n·2^-33 of a half (n the blocks involved), where upstream's own sum is
// order-dependent too.
func (l *ActiveLedger) AddOutputBlock(id uint64, decayFraction *float64) error {
	req, ok := l.requests[id]
	if !ok {
		return fmt.Errorf("%w: %s", ErrActiveUnknownRequest, strconv.FormatUint(id, 10))
	}
	var q uint64
	if decayFraction != nil {
		f := *decayFraction
		if !(f >= 0 && f <= 1) {
			return fmt.Errorf("%w: decay fraction %v", ErrActiveInvalid, f)
		}
		q = uint64(math.Round(f * float64(activeUnit)))
	}
	wk := l.workers[req.worker]
	req.whole++
	wk.units += activeUnit
	if decayFraction == nil {
		return nil
	}
	for _, b := range req.blocks {
		if b.refs == 1 {
			wk.units = wk.units - b.w + q
			b.w = q
		}
	}
	wk.units = wk.units - req.whole*activeUnit - req.decayed*req.frac + (req.whole+req.decayed)*q
	req.decayed += req.whole
	req.whole = 0
	req.frac = q
	return nil
}

// ObserveOutput reports that a live request has generated cumulativeOSL tokens so
// far; it mirrors the frontend's OutputBlockTracker::observe. When the prompt plus
// output, ceil((isl+osl)/B) blocks, passes the block count seen so far (initially
// ceil(isl/B)), the count advances and — with TrackOutputBlocks — one output block
// is booked (one per observation, however many boundaries were crossed), decayed
// by max(0, 1 − osl/max(expected, 1)) when the request has ExpectedOutputTokens.
// It returns whether a block was booked.
func (l *ActiveLedger) ObserveOutput(id uint64, cumulativeOSL uint64) (bool, error) {
	req, ok := l.requests[id]
	if !ok {
		return false, fmt.Errorf("%w: %s", ErrActiveUnknownRequest, strconv.FormatUint(id, 10))
	}
	if !l.opts.TrackOutputBlocks {
		return false, nil
	}
	bs := uint64(l.opts.BlockSize)
	total := req.isl + cumulativeOSL
	if total < req.isl { // overflow: no real stream gets here
		return false, fmt.Errorf("%w: output length %s", ErrActiveInvalid, strconv.FormatUint(cumulativeOSL, 10))
	}
	blocks := total/bs + min(total%bs, 1)
	if blocks <= req.totalBlocks {
		return false, nil
	}
	req.totalBlocks = blocks
	var frac *float64
	if req.expected != nil {
		f := max(1-float64(cumulativeOSL)/float64(max(*req.expected, 1)), 0)
		frac = &f
	}
	return true, l.AddOutputBlock(id, frac)
}

// Load returns the worker rank's load as the scheduler's projection reads it
// (worker_load_snapshot → WorkerLoadProjection): ActivePrefillTokens is the sum
// of booked prompt tokens, ActiveDecodeBlocks the rounded block weight
// (BlockTracker::active_blocks, estimate_physical_active_blocks with stride 1),
// ActiveRequests the live request count. A rank the ledger has never seen reads
// zero, as a registered but idle slot does upstream. KvUsedBlocks and
// DecodeOverloadLatched are engine facts and stay nil.
func (l *ActiveLedger) Load(w WorkerWithDpRank) RankLoad {
	i, ok := l.byKey[w]
	if !ok {
		return RankLoad{}
	}
	return l.workers[i].load()
}

func (wk *activeWorker) load() RankLoad {
	return RankLoad{
		ActivePrefillTokens: wk.prefill,
		ActiveDecodeBlocks:  (wk.units >> 32) + (wk.units>>31)&1,
		ActiveRequests:      wk.requests,
	}
}

// Loads writes Load for every rank the ledger has seen into dst (entries for other
// ranks are left alone).
func (l *ActiveLedger) Loads(dst map[WorkerWithDpRank]RankLoad) {
	for _, wk := range l.workers {
		dst[wk.key] = wk.load()
	}
}

// FillLoads sets, for every worker and every dp rank of its runtime config's
// range, Loads[rank] to the ledger's load, keeping the entry's engine-reported
// KvUsedBlocks and DecodeOverloadLatched. Upstream registers a load slot for every
// rank of every known worker, so each rank has a load (has_load) even when idle.
// Existing Loads maps are updated in place (allocated when nil).
func (l *ActiveLedger) FillLoads(workers []Worker) {
	for k := range workers {
		w := &workers[k]
		start := uint64(w.Runtime.DataParallelStartRank)
		end := min(start+uint64(w.Runtime.DpSize()), uint64(math.MaxUint32)+1)
		if w.Loads == nil {
			w.Loads = make(map[uint32]RankLoad, end-start)
		}
		for r := start; r < end; r++ {
			rank := uint32(r)
			load := l.Load(WorkerWithDpRank{WorkerID: w.ID, DpRank: rank})
			if old, ok := w.Loads[rank]; ok {
				load.KvUsedBlocks, load.DecodeOverloadLatched = old.KvUsedBlocks, old.DecodeOverloadLatched
			}
			w.Loads[rank] = load
		}
	}
}

// AdditionalBlocks fills dst (cleared first) with, for each worker rank whose live
// prompts hold the request's first block, the request blocks beyond the longest
// prefix of blocks those prompts hold: WorkerLoadProjection.additional_active_
// blocks = query_len − overlap_depth, the depth from PromptMembershipTrie::
// compute_overlap_depths over prompt hashes (output blocks never match). Ranks
// left out would add all len(blocks): set Request.AdditionalBlocksRule to
// AdditionalBlocksAllNew, whose floor(ISL/B) is len(blocks) for router-hashed
// requests. Older ledgers counted the request blocks absent from the worker's
// block set (ActiveSequences::new_blocks); for chained sequence hashes the two
// agree, since a live hash implies its whole prefix is live.
//
// The cost is the sum over the request's blocks of min(holders, workers still
// matching), within a constant factor; never workers × blocks.
func (l *ActiveLedger) AdditionalBlocks(blocks []SequenceHash, dst map[WorkerWithDpRank]uint64) {
	clear(dst)
	n := len(blocks)
	if n == 0 {
		return
	}
	l.alive = append(l.alive[:0], l.index.holders(blocks[0])...)
	alive, next := l.alive, l.next[:0]
	for i := 1; i < n && len(alive) > 0; i++ {
		h := blocks[i]
		hs := l.index.holders(h)
		next = next[:0]
		// Walking the holder list (contiguous) beats per-worker map probes unless
		// it is much longer than the set still matching.
		if len(hs) <= 8*len(alive) {
			l.stamp++
			for _, w := range hs {
				l.mark[w] = l.stamp
			}
			for _, w := range alive {
				if l.mark[w] == l.stamp {
					next = append(next, w)
				} else {
					dst[l.workers[w].key] = uint64(n - i)
				}
			}
		} else {
			for _, w := range alive {
				if _, ok := l.workers[w].blocks[h]; ok {
					next = append(next, w)
				} else {
					dst[l.workers[w].key] = uint64(n - i)
				}
			}
		}
		alive, next = next, alive
	}
	for _, w := range alive {
		dst[l.workers[w].key] = 0
	}
	l.alive, l.next = alive[:0], next[:0]
}

// TakeExpired returns, and forgets, the ids Add freed as stale (in the order they
// were freed, ascending within one check).
func (l *ActiveLedger) TakeExpired() []uint64 {
	out := l.expired
	l.expired = nil
	return out
}

// ForceExpiry runs every worker rank's stale-request check at now
// (force_expire_requests_across_all_workers, which upstream runs every
// ActiveForceExpiryInterval) and returns the freed ids, ascending. Each rank
// checks only if ExpiryCheckEvery has passed since its last check; a request is
// stale when booked before now − ExpireAfter. Nothing happens with expiry off.
func (l *ActiveLedger) ForceExpiry(now time.Duration) []uint64 {
	if l.opts.ExpireAfter <= 0 {
		return nil
	}
	var out []uint64
	for i := range l.workers {
		out = append(out, l.forceExpiry(int32(i), now)...)
	}
	slices.Sort(out)
	return out
}

// forceExpiry is ActiveSequences::force_expiry for one rank.
func (l *ActiveLedger) forceExpiry(wi int32, now time.Duration) []uint64 {
	wk := l.workers[wi]
	if now < wk.lastCheck+l.opts.ExpiryCheckEvery {
		return nil
	}
	wk.lastCheck = now
	if wk.requests == 0 {
		return nil
	}
	cutoff := now - l.opts.ExpireAfter
	var ids []uint64
	for id, r := range l.requests {
		if r.worker == wi && r.at < cutoff {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	for _, id := range ids {
		l.free(l.requests[id])
	}
	return ids
}

// RemoveWorker drops every rank of a worker and frees its requests, returning
// their ids ascending (update_workers removing a slot: remove_worker_requests and
// the registry's apply_topology_change). A later Add for the worker starts a
// fresh slot.
func (l *ActiveLedger) RemoveWorker(id WorkerID) []uint64 {
	var ids []uint64
	for rid, r := range l.requests {
		if l.workers[r.worker].key.WorkerID == id {
			ids = append(ids, rid)
		}
	}
	slices.Sort(ids)
	for _, rid := range ids {
		l.free(l.requests[rid])
	}
	// Compact the worker table; indexes into it live in byKey, index and requests.
	keep := l.workers[:0]
	remap := make([]int32, len(l.workers))
	for i, wk := range l.workers {
		if wk.key.WorkerID == id {
			delete(l.byKey, wk.key)
			remap[i] = -1
			continue
		}
		remap[i] = int32(len(keep))
		keep = append(keep, wk)
	}
	if len(keep) == len(l.workers) {
		return ids
	}
	clear(l.workers[len(keep):])
	l.workers = keep
	l.mark = l.mark[:len(keep)]
	for k, i := range l.byKey {
		l.byKey[k] = remap[i]
	}
	for _, r := range l.requests {
		r.worker = remap[r.worker]
	}
	l.index.remap(remap)
	return ids
}
