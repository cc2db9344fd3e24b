package routecore

import (
	"fmt"
	"math"
	"slices"
)

// TierHits is one worker's hits in a lower storage tier: the number of
// consecutive blocks, continuing where its device (or previous tier) match
// stopped, that the tier holds for it.
type TierHits struct {
	// Worker is the candidate.
	Worker WorkerWithDpRank `json:"worker"`
	// Blocks are the extension blocks found in this tier (may be 0).
	Blocks uint32 `json:"blocks"`
}

// TieredMatches is Dynamo's TieredMatchDetails: the device overlap plus the
// per-tier extensions. Lower[t] is nil when tier t has never received an event
// (Dynamo creates lower-tier indexers lazily); otherwise it lists every worker
// that was queried in that tier, including those with 0 hits, sorted.
type TieredMatches struct {
	// Device is the radix-tree overlap.
	Device OverlapScores `json:"device"`
	// Lower holds host_pinned, disk and external hits at their tier index;
	// Lower[TierDevice] is always nil.
	Lower [NumStorageTiers][]TierHits `json:"lower"`
}

// Hits returns the extension blocks of w in tier t (0 when absent).
func (m TieredMatches) Hits(t StorageTier, w WorkerWithDpRank) uint32 {
	if t == TierDevice {
		return m.Device.Blocks(w)
	}
	if int(t) >= NumStorageTiers {
		return 0
	}
	l := m.Lower[t]
	i, ok := slices.BinarySearchFunc(l, w, func(e TierHits, t WorkerWithDpRank) int { return e.Worker.Compare(t) })
	if !ok {
		return 0
	}
	return l[i].Blocks
}

// FindTieredMatches scores the device tier and then extends each worker's
// match through host_pinned, disk and external in that order, as Dynamo's
// query_lower_tiers does. A worker's extension in a tier is the number of
// consecutive query blocks, starting at the position and external hash where
// its previous match stopped, whose (parent hash, local hash) transition the
// tier holds for that worker. Workers with no device match that own the
// tier's root transition for the first block start from the root at
// position 0. Extensions therefore never double-count device blocks.
func (ix *Index) FindTieredMatches(localHashes []LocalBlockHash) TieredMatches {
	var m TieredMatches
	m.Device = ix.dev.findMatches(localHashes)
	conts := make(map[WorkerWithDpRank]continuation, len(m.Device))
	for _, s := range m.Device {
		conts[s.Worker] = continuation{pos: int(s.Blocks), hash: uint64(s.LastBlockHash), hasHash: true}
	}
	for t := TierHostPinned; t <= TierExternal; t++ {
		lt := ix.lower[t]
		if !lt.exists {
			continue
		}
		if len(localHashes) > 0 {
			if e, ok := lt.edges[transitionKey{local: uint64(localHashes[0])}]; ok {
				for _, w := range e.owners {
					if _, ok := conts[w]; !ok {
						conts[w] = continuation{}
					}
				}
			}
		}
		hits := make([]TierHits, 0, len(conts))
		for w, c := range conts {
			n := lt.advance(w, localHashes, &c)
			conts[w] = c
			hits = append(hits, TierHits{Worker: w, Blocks: uint32(min(n, math.MaxUint32))})
		}
		slices.SortFunc(hits, func(a, b TierHits) int { return a.Worker.Compare(b.Worker) })
		m.Lower[t] = hits
	}
	return m
}

// FindTierMatches scores one lower tier on its own, from the root, the way
// Dynamo's LowerTierIndexer::find_matches does; workers with 0 hits are
// omitted. For the device tier it is FindMatches without the last hashes.
func (ix *Index) FindTierMatches(t StorageTier, localHashes []LocalBlockHash) []TierHits {
	if t == TierDevice {
		d := ix.dev.findMatches(localHashes)
		out := make([]TierHits, len(d))
		for i, s := range d {
			out[i] = TierHits{Worker: s.Worker, Blocks: s.Blocks}
		}
		return out
	}
	if int(t) >= NumStorageTiers || len(localHashes) == 0 {
		return nil
	}
	lt := ix.lower[t]
	e, ok := lt.edges[transitionKey{local: uint64(localHashes[0])}]
	if !ok {
		return nil
	}
	var out []TierHits
	for _, w := range e.owners {
		c := continuation{}
		if n := lt.advance(w, localHashes, &c); n > 0 {
			out = append(out, TierHits{Worker: w, Blocks: uint32(min(n, math.MaxUint32))})
		}
	}
	return out // owners are sorted, so out is too
}

// TierBlockCount reports how many blocks tier t holds for all workers together.
func (ix *Index) TierBlockCount(t StorageTier) int {
	if t == TierDevice {
		return ix.BlockCount()
	}
	if int(t) >= NumStorageTiers {
		return 0
	}
	n := 0
	for _, m := range ix.lower[t].blocks {
		n += len(m)
	}
	return n
}

// ---------------------------------------------------------------------------
// Lower-tier continuation index (Dynamo's LowerTierIndexer). It stores, per
// (parent external hash or root, local hash) transition, the child external
// hash and its owners. The first mapping stored for a transition wins; a
// conflicting child hash from a later event is ignored.

type transitionKey struct {
	parent    uint64
	hasParent bool
	local     uint64
}

type transitionOwners struct {
	child  uint64
	owners []WorkerWithDpRank // sorted
}

type lowerTier struct {
	exists bool
	edges  map[transitionKey]*transitionOwners
	blocks map[WorkerWithDpRank]map[uint64]transitionKey
}

type continuation struct {
	pos     int
	hash    uint64
	hasHash bool
}

func newLowerTier() *lowerTier {
	return &lowerTier{
		edges:  map[transitionKey]*transitionOwners{},
		blocks: map[WorkerWithDpRank]map[uint64]transitionKey{},
	}
}

func (lt *lowerTier) apply(w WorkerWithDpRank, d KvCacheEventData) error {
	lt.exists = true
	switch {
	case d.Stored != nil:
		lt.store(w, d.Stored)
	case d.Removed != nil:
		return lt.remove(w, d.Removed.BlockHashes)
	case d.Cleared:
		// Dynamo's lower tier clears every dp rank of the worker here.
		lt.removeWorker(w.WorkerID)
	}
	return nil
}

func (lt *lowerTier) store(w WorkerWithDpRank, op *KvCacheStoreData) {
	key := transitionKey{}
	if op.ParentHash != nil {
		key.parent, key.hasParent = uint64(*op.ParentHash), true
	}
	wm := lt.blocks[w]
	if wm == nil {
		wm = map[uint64]transitionKey{}
		lt.blocks[w] = wm
	}
	for _, b := range op.Blocks {
		key.local = uint64(b.TokensHash)
		bh := uint64(b.BlockHash)
		if old, ok := wm[bh]; ok && old != key {
			key = transitionKey{parent: bh, hasParent: true}
			continue
		}
		inserted := false
		if e, ok := lt.edges[key]; ok {
			if e.child == bh {
				if i, found := slices.BinarySearchFunc(e.owners, w, WorkerWithDpRank.Compare); !found {
					e.owners = slices.Insert(e.owners, i, w)
				}
				inserted = true
			}
		} else {
			lt.edges[key] = &transitionOwners{child: bh, owners: []WorkerWithDpRank{w}}
			inserted = true
		}
		if inserted {
			wm[bh] = key
		}
		key = transitionKey{parent: bh, hasParent: true}
	}
}

func (lt *lowerTier) remove(w WorkerWithDpRank, hashes []SequenceHash) error {
	wm, ok := lt.blocks[w]
	if !ok {
		return fmt.Errorf("%w: the worker has no blocks on this tier", ErrBlockNotFound)
	}
	for i, h := range hashes {
		key, ok := wm[uint64(h)]
		if !ok {
			// Dynamo's lower tier stops at the first unknown block.
			return fmt.Errorf("%w: block_hash %d; the %d blocks after it were not removed", ErrBlockNotFound, uint64(h), len(hashes)-i-1)
		}
		delete(wm, uint64(h))
		lt.dropOwner(key, w)
	}
	if len(wm) == 0 {
		delete(lt.blocks, w)
	}
	return nil
}

func (lt *lowerTier) dropOwner(key transitionKey, w WorkerWithDpRank) {
	e, ok := lt.edges[key]
	if !ok {
		return
	}
	if len(e.owners) == 1 {
		if e.owners[0] == w {
			delete(lt.edges, key)
		}
		return
	}
	if i, found := slices.BinarySearchFunc(e.owners, w, WorkerWithDpRank.Compare); found {
		e.owners = slices.Delete(e.owners, i, i+1)
	}
}

func (lt *lowerTier) removeWorker(id WorkerID) {
	var ws []WorkerWithDpRank
	for w := range lt.blocks {
		if w.WorkerID == id {
			ws = append(ws, w)
		}
	}
	for _, w := range ws {
		lt.removeSlot(w)
	}
}

// removeSlot forgets one (worker, dp rank) (remove_worker_dp_rank).
func (lt *lowerTier) removeSlot(w WorkerWithDpRank) {
	for _, key := range lt.blocks[w] {
		lt.dropOwner(key, w)
	}
	delete(lt.blocks, w)
}

// advance walks w's continuation forward and returns the hits; c becomes the
// next tier's continuation (unchanged when there were no hits).
func (lt *lowerTier) advance(w WorkerWithDpRank, seq []LocalBlockHash, c *continuation) int {
	pos, hash, has := c.pos, c.hash, c.hasHash
	for pos < len(seq) {
		e, ok := lt.edges[transitionKey{parent: hash, hasParent: has, local: uint64(seq[pos])}]
		if !ok {
			break
		}
		if _, found := slices.BinarySearchFunc(e.owners, w, WorkerWithDpRank.Compare); !found {
			break
		}
		hash, has = e.child, true
		pos++
	}
	n := pos - c.pos
	if n > 0 {
		*c = continuation{pos: pos, hash: hash, hasHash: has}
	}
	return n
}

// ---------------------------------------------------------------------------
// Tier weighting (lib/kv-router/src/scheduling/overlap.rs).

// TierWeights are the router's credits for lower-tier blocks
// (host_cache_hit_weight and disk_cache_hit_weight); Disk applies to both the
// disk and the external tier.
type TierWeights struct {
	// HostPinned weighs host_pinned extension blocks.
	HostPinned float64 `json:"hostPinned"`
	// Disk weighs disk and external extension blocks.
	Disk float64 `json:"disk"`
}

func (tw TierWeights) forTier(t StorageTier) float64 {
	switch t {
	case TierDevice:
		return 1
	case TierHostPinned:
		return tw.HostPinned
	default:
		return tw.Disk
	}
}

// CacheHitEstimate is one worker's effective overlap.
type CacheHitEstimate struct {
	// Worker is the candidate.
	Worker WorkerWithDpRank `json:"worker"`
	// EffectiveBlocks is device + host_w·host + disk_w·(disk + external)
	// (effective_overlap_blocks).
	EffectiveBlocks float64 `json:"effectiveBlocks"`
	// CachedTokens is round(EffectiveBlocks · block size), rounding halves away
	// from zero and clamping at 0 (effective_cached_tokens).
	CachedTokens uint64 `json:"cachedTokens"`
}

// EstimateCacheHits converts tiered matches into effective overlap blocks and
// cached tokens like Dynamo's cache_hit_estimates_from_tiered_matches: tiers
// with weight 0 and zero hits add nothing, and a worker only present in a
// lower tier still gets an entry. Dynamo sums the lower tiers in hash-map
// order; this sums host_pinned, disk, external in that order, which can differ
// from a given Dynamo run only in the last bit of EffectiveBlocks.
func EstimateCacheHits(m TieredMatches, w TierWeights, blockSize uint32) []CacheHitEstimate {
	eff := map[WorkerWithDpRank]float64{}
	for _, s := range m.Device {
		eff[s.Worker] = float64(s.Blocks)
	}
	for t := TierHostPinned; t <= TierExternal; t++ {
		wt := w.forTier(t)
		if wt == 0 {
			continue
		}
		for _, h := range m.Lower[t] {
			if h.Blocks == 0 {
				continue
			}
			eff[h.Worker] += float64(float64(h.Blocks) * wt) // rounded, never fused (Rust)
		}
	}
	out := make([]CacheHitEstimate, 0, len(eff))
	for wk, e := range eff {
		out = append(out, CacheHitEstimate{Worker: wk, EffectiveBlocks: e, CachedTokens: roundTokens(e * float64(blockSize))})
	}
	slices.SortFunc(out, func(a, b CacheHitEstimate) int { return a.Worker.Compare(b.Worker) })
	return out
}

// roundTokens is Rust's `x.round().max(0.0) as usize` on a 64-bit target.
func roundTokens(x float64) uint64 {
	r := math.Round(x)
	if !(r > 0) { // also NaN
		return 0
	}
	if r >= math.MaxUint64 {
		return math.MaxUint64
	}
	return uint64(r)
}

// TierOverlap is one worker's raw blocks per tier (Dynamo's TierOverlapBlocks
// maps joined into one row): Disk is the disk plus external extension.
type TierOverlap struct {
	// Worker is the candidate.
	Worker WorkerWithDpRank `json:"worker"`
	// Device is the device overlap.
	Device uint64 `json:"device"`
	// HostPinned is the host_pinned extension beyond the device prefix.
	HostPinned uint64 `json:"hostPinned"`
	// Disk is the disk plus external extension beyond the host extension.
	Disk uint64 `json:"disk"`
}

// TierOverlapBlocks joins the per-tier blocks of every worker that appears in
// any tier, sorted by worker.
func TierOverlapBlocks(m TieredMatches) []TierOverlap {
	rows := map[WorkerWithDpRank]*TierOverlap{}
	row := func(w WorkerWithDpRank) *TierOverlap {
		r := rows[w]
		if r == nil {
			r = &TierOverlap{Worker: w}
			rows[w] = r
		}
		return r
	}
	for _, s := range m.Device {
		row(s.Worker).Device = uint64(s.Blocks)
	}
	for _, h := range m.Lower[TierHostPinned] {
		row(h.Worker).HostPinned = uint64(h.Blocks)
	}
	for _, t := range []StorageTier{TierDisk, TierExternal} {
		for _, h := range m.Lower[t] {
			row(h.Worker).Disk += uint64(h.Blocks)
		}
	}
	out := make([]TierOverlap, 0, len(rows))
	for _, r := range rows {
		out = append(out, *r)
	}
	slices.SortFunc(out, func(a, b TierOverlap) int { return a.Worker.Compare(b.Worker) })
	return out
}

// ToOverlapInput fills the selector's OverlapInput from tiered matches, so a
// dry run can feed index results straight into Select. Tier maps are filled
// only for tiers that exist, which keeps Dynamo's "use the device map when any
// tier map is non-empty" rule intact. TreeSizes is left for the caller.
func ToOverlapInput(m TieredMatches, w TierWeights, blockSize uint32, shared *SharedCacheHits) OverlapInput {
	in := OverlapInput{}
	if len(m.Device) > 0 {
		in.DeviceBlocks = map[WorkerWithDpRank]uint64{}
		for _, s := range m.Device {
			in.DeviceBlocks[s.Worker] = uint64(s.Blocks)
		}
	}
	for _, r := range TierOverlapBlocks(m) {
		if m.Lower[TierHostPinned] != nil {
			if in.HostBlocks == nil {
				in.HostBlocks = map[WorkerWithDpRank]uint64{}
			}
			in.HostBlocks[r.Worker] = r.HostPinned
		}
		if m.Lower[TierDisk] != nil || m.Lower[TierExternal] != nil {
			if in.DiskBlocks == nil {
				in.DiskBlocks = map[WorkerWithDpRank]uint64{}
			}
			in.DiskBlocks[r.Worker] = r.Disk
		}
	}
	if est := EstimateCacheHits(m, w, blockSize); len(est) > 0 {
		in.EffectiveBlocks = map[WorkerWithDpRank]float64{}
		in.CachedTokens = map[WorkerWithDpRank]uint64{}
		for _, e := range est {
			in.EffectiveBlocks[e.Worker] = e.EffectiveBlocks
			in.CachedTokens[e.Worker] = e.CachedTokens
		}
	}
	if shared != nil {
		in.SharedHits = slices.Clone(shared.Ranges)
		if in.SharedHits == nil {
			in.SharedHits = []SharedHitRange{}
		}
	}
	return in
}

// SharedCacheHits are the request's block positions found in a shared cache
// (HiCache L3), as Dynamo's SharedCacheHits: sorted, non-overlapping,
// half-open ranges and their total.
type SharedCacheHits struct {
	// Ranges are half-open [Start, End) block positions.
	Ranges []SharedHitRange `json:"ranges"`
	// TotalHits is the sum of the range lengths.
	TotalHits uint32 `json:"totalHits"`
}

// NewSharedCacheHits builds hits from ranges the caller guarantees are sorted
// and non-overlapping (as Dynamo's from_ranges assumes). Ranges with
// End < Start count as empty.
func NewSharedCacheHits(ranges []SharedHitRange) SharedCacheHits {
	var total uint32
	for _, r := range ranges {
		if r.End > r.Start {
			total += r.End - r.Start
		}
	}
	return SharedCacheHits{Ranges: slices.Clone(ranges), TotalHits: total}
}

// SharedCacheHitsFromHits coalesces a per-block hit vector into ranges.
func SharedCacheHitsFromHits(hits []bool) SharedCacheHits {
	var rs []SharedHitRange
	for i := 0; i < len(hits); {
		if !hits[i] {
			i++
			continue
		}
		s := i
		for i < len(hits) && hits[i] {
			i++
		}
		rs = append(rs, SharedHitRange{Start: uint32(s), End: uint32(i)})
	}
	return NewSharedCacheHits(rs)
}

// HitsBeyond counts hit positions >= from, the shared blocks a worker whose
// device prefix is from blocks long would still gain (hits_beyond).
func (h SharedCacheHits) HitsBeyond(from uint32) uint32 {
	var n uint32
	for _, r := range h.Ranges {
		switch {
		case r.End <= from || r.End <= r.Start:
		case r.Start >= from:
			n += r.End - r.Start
		default:
			n += r.End - from
		}
	}
	return n
}
