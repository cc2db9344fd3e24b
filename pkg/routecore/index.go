package routecore

import (
	"errors"
	"fmt"
	"slices"
)

// Errors from Index.ApplyEvent. They are sentinels for errors.Is; the returned
// error wraps one of them with the worker, dp rank, event id and block hash.
var (
	// ErrParentBlockNotFound means a stored event names a parent_hash that this
	// (worker, dp rank) does not hold; the event is skipped and the index is
	// unchanged. It usually means events were lost: resynchronise the worker.
	ErrParentBlockNotFound = errors.New("parent block not found")
	// ErrBlockNotFound means a removed event names a block that this
	// (worker, dp rank) does not hold. The other blocks of the event are still
	// removed, as in Dynamo.
	ErrBlockNotFound = errors.New("block not found")
	// ErrInvalidBlockSequence means a stored event attaches a block beneath
	// itself. The blocks before the offending one stay applied (as in Dynamo's
	// RadixTree); the offending block and the rest of the event are dropped.
	ErrInvalidBlockSequence = errors.New("invalid block sequence: block references itself")
)

// Index is the router's overlap index: a radix tree over local block hashes for
// device events, plus one continuation index per lower storage tier. It
// reproduces Dynamo's ConcurrentRadixTree (find_matches with early_exit false)
// and LowerTierIndexer, including their tolerance of inconsistent engine
// hashes, so that dry-run scores equal the router's.
//
// The zero value is not usable; call NewIndex. An Index is not safe for
// concurrent use: guard it with a mutex, or give each goroutine its own.
type Index struct {
	dev   radixTree
	lower [NumStorageTiers]*lowerTier // index 0 (device) unused
}

// NewIndex returns an empty index.
func NewIndex() *Index {
	ix := &Index{}
	ix.dev.init()
	for t := TierHostPinned; t <= TierExternal; t++ {
		ix.lower[t] = newLowerTier()
	}
	return ix
}

// OverlapScore is one worker's device overlap.
type OverlapScore struct {
	// Worker is the (worker, dp rank) candidate.
	Worker WorkerWithDpRank `json:"worker"`
	// Blocks is the length of the longest prefix of the query, from block 0,
	// that the worker holds contiguously along the tree path; always >= 1.
	Blocks uint32 `json:"blocks"`
	// LastBlockHash is the external hash of the deepest matched block; lower
	// tiers continue from it.
	LastBlockHash SequenceHash `json:"lastBlockHash"`
}

// OverlapScores lists the workers with a non-zero overlap, sorted by
// WorkerWithDpRank.Compare. Workers that are absent score 0, as in Dynamo.
type OverlapScores []OverlapScore

// Blocks returns the overlap of w, or 0 when w is absent.
func (s OverlapScores) Blocks(w WorkerWithDpRank) uint32 {
	if e, ok := s.Lookup(w); ok {
		return e.Blocks
	}
	return 0
}

// Lookup finds w by binary search.
func (s OverlapScores) Lookup(w WorkerWithDpRank) (OverlapScore, bool) {
	i, ok := slices.BinarySearchFunc(s, w, func(e OverlapScore, t WorkerWithDpRank) int { return e.Worker.Compare(t) })
	if !ok {
		return OverlapScore{}, false
	}
	return s[i], true
}

// WorkerBlocks is the number of device blocks one (worker, dp rank) holds
// (Dynamo's tree_sizes entry).
type WorkerBlocks struct {
	// Worker is the candidate.
	Worker WorkerWithDpRank `json:"worker"`
	// Blocks counts the distinct external block hashes it holds.
	Blocks int `json:"blocks"`
}

// ApplyEvent applies one event to the tree of its storage tier. Errors wrap
// ErrParentBlockNotFound, ErrBlockNotFound, ErrInvalidBlockSequence or
// ErrMalformedEvent and say which worker and event caused them; the index
// stays consistent after any error, so callers may log and continue.
func (ix *Index) ApplyEvent(ev RouterEvent) error {
	if _, err := ev.Event.Data.kind(); err != nil {
		return err
	}
	w := WorkerWithDpRank{WorkerID: ev.WorkerID, DpRank: ev.Event.DpRank}
	var err error
	switch {
	case ev.StorageTier == TierDevice:
		err = ix.dev.apply(w, ev.Event.Data)
	case int(ev.StorageTier) < NumStorageTiers:
		err = ix.lower[ev.StorageTier].apply(w, ev.Event.Data)
	default:
		return fmt.Errorf("%w: unknown storage tier %d", ErrMalformedEvent, ev.StorageTier)
	}
	if err != nil {
		return fmt.Errorf("apply %s event %d of worker %s (tier %s): %w", kindName(ev.Event.Data), ev.Event.EventID, w, ev.StorageTier, err)
	}
	return nil
}

// ApplyEvents applies evs in order, exactly as calling ApplyEvent on each
// would, and calls onError (when not nil) with the position and error of each
// rejected event. It is the fast way to load a snapshot: the worker-set
// updates of a run of stored events are gathered and applied once per node at
// the end of the run (before any removal, clear or compaction), instead of
// building a new set for every block a worker adds to a shared prefix.
func (ix *Index) ApplyEvents(evs []RouterEvent, onError func(i int, err error)) {
	t := &ix.dev
	t.bulk = true
	defer func() {
		t.flushSets()
		t.bulk = false
		t.pend.release()
	}()
	for i := range evs {
		if err := ix.ApplyEvent(evs[i]); err != nil && onError != nil {
			onError(i, err)
		}
	}
}

// Reserve prepares the device tree for about blocks more stored blocks, so a
// bulk load (a snapshot of a million blocks) does not repeatedly grow the node
// arena. The edge table is left to grow on demand: the blocks of a stored
// chain link to their parent implicitly (see rnode.implicit), so a snapshot
// needs table edges only where chains branch. It changes nothing observable.
func (ix *Index) Reserve(blocks int) {
	t := &ix.dev
	if blocks <= 0 || blocks > MaxReserveBlocks {
		return
	}
	t.nodes = slices.Grow(t.nodes, blocks)
}

// MaxReserveBlocks bounds Reserve (a hint, not a promise to store that many).
const MaxReserveBlocks = 1 << 26

func kindName(d KvCacheEventData) string {
	k, _ := d.kind()
	return k
}

// RemoveWorker forgets every dp rank of a worker in every tier, as when it
// leaves discovery.
func (ix *Index) RemoveWorker(id WorkerID) {
	ix.dev.removeWorker(id)
	for t := TierHostPinned; t <= TierExternal; t++ {
		ix.lower[t].removeWorker(id)
	}
}

// FindMatches scores every device (worker, dp rank) by its contiguous prefix
// overlap with localHashes, following Dynamo's find_matches exactly: the walk
// follows the tree path of the query, a worker leaves when a node's worker
// count differs from the active count and it is not on that node, and the walk
// never exits early. It does not modify the index.
func (ix *Index) FindMatches(localHashes []LocalBlockHash) OverlapScores {
	return ix.dev.findMatches(localHashes)
}

// TreeSizes lists how many device blocks each tracked (worker, dp rank) holds,
// in canonical order. Ranks that were cleared but not removed report 0.
func (ix *Index) TreeSizes() []WorkerBlocks {
	return ix.dev.treeSizes()
}

// Workers lists the distinct worker ids with device state, sorted.
func (ix *Index) Workers() []WorkerID {
	var out []WorkerID
	for _, ws := range ix.dev.slots {
		if ws.present {
			out = append(out, ws.w.WorkerID)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// BlockCount reports the number of device blocks indexed for all workers
// together (sum of TreeSizes).
func (ix *Index) BlockCount() int {
	n := 0
	for _, ws := range ix.dev.slots {
		n += ws.lookup.n
	}
	return n
}

// ---------------------------------------------------------------------------
// Device radix tree.
//
// Nodes live in one arena and are addressed by uint32 (0 is the root). A node
// is 16 bytes: its external hash, an interned worker-set id and a "children
// key" (kid). Child edges live in one open-addressing table keyed by
// (parent kid, local hash). Clearing a node's children, which Dynamo does when
// a node loses its last worker, just gives the node a fresh kid, so the old
// edges become unreachable in O(1); a periodic compaction drops them, frees
// unreachable nodes and renumbers everything densely. Worker sets are
// hash-consed, so the thousands of nodes held by the same workers share one
// sorted slice. Each (worker, dp rank) has an open-addressing table from
// external hash to node.

type rnode struct {
	hash uint64 // external block hash given when the node was created
	// local and pkid record the edge (parent kid, local hash) that created the
	// node. Nodes created by one stored event are adjacent in the arena, so
	// walks first try node+1 through this back-reference and fall back to the
	// edge table only at chunk boundaries, which keeps FindMatches sequential
	// in memory. An edge is written once per (kid, local) and never replaced,
	// so the check is exact. pkid is noKid when the node has no such edge.
	local uint64
	set   uint32 // interned worker set
	kid   uint32 // children namespace; changes when children are cleared
	pkid  uint32
	// implicit marks a node created right after its parent in the arena
	// (the next block of a stored chain): its edge lives only in pkid and
	// local, not in the edge table, and is alive while the parent's kid is
	// still pkid. A million-block snapshot then writes almost no edges.
	// Compaction makes every edge explicit again.
	implicit bool
}

const noKid = ^uint32(0)

type ixWorkerSlot struct {
	w       WorkerWithDpRank
	present bool // has a lookup entry in Dynamo's terms
	lookup  ixHashTable
}

type radixTree struct {
	nodes   []rnode
	edges   ixEdgeTable
	nextKid uint32
	slotOf  map[WorkerWithDpRank]uint32
	slots   []ixWorkerSlot
	sets    ixSetPool
	// dirty counts nodes that lost their last worker since the last compaction;
	// it bounds the garbage a compaction can reclaim.
	dirty      int
	setsAtLast int
	// bulk (inside ApplyEvents) defers addWorker into pend; flushSets applies
	// it. Outside ApplyEvents pend is always empty.
	bulk bool
	pend ixPending
	// compactions and deferred count compactions and deferred additions
	// (for tests).
	compactions, deferred int
}

const compactMinDirty = 4096

func (t *radixTree) init() {
	t.nodes = []rnode{{pkid: noKid}}
	t.nextKid = 1
	t.slotOf = map[WorkerWithDpRank]uint32{}
	t.sets.init()
}

func (t *radixTree) slot(w WorkerWithDpRank, create bool) (uint32, bool) {
	if s, ok := t.slotOf[w]; ok {
		if create {
			t.slots[s].present = true
		}
		return s, true
	}
	if !create {
		return 0, false
	}
	s := uint32(len(t.slots))
	t.slots = append(t.slots, ixWorkerSlot{w: w, present: true})
	t.slotOf[w] = s
	return s, true
}

func (t *radixTree) newNode(hash uint64) uint32 {
	n := uint32(len(t.nodes))
	t.nodes = append(t.nodes, rnode{hash: hash, kid: t.takeKid(), pkid: noKid})
	return n
}

// child follows the edge (cur, local), trying the adjacent node first.
func (t *radixTree) child(cur uint32, local uint64) (uint32, bool) {
	kid := t.nodes[cur].kid
	if c := cur + 1; int(c) < len(t.nodes) {
		if n := &t.nodes[c]; n.pkid == kid && n.local == local {
			return c, true
		}
	}
	return t.edges.get(kid, local)
}

func (t *radixTree) takeKid() uint32 {
	k := t.nextKid
	t.nextKid++
	return k
}

func (t *radixTree) apply(w WorkerWithDpRank, d KvCacheEventData) error {
	var err error
	switch {
	case d.Stored != nil:
		err = t.store(w, d.Stored)
	case d.Removed != nil:
		t.flushSets()
		err = t.remove(w, d.Removed.BlockHashes)
	case d.Cleared:
		t.flushSets()
		if s, ok := t.slot(w, false); ok && t.slots[s].present {
			t.clearSlot(s, true)
		}
	}
	t.maybeCompact()
	return err
}

func (t *radixTree) store(w WorkerWithDpRank, op *KvCacheStoreData) error {
	s, _ := t.slot(w, true)
	lk := &t.slots[s].lookup
	cur := uint32(0)
	if op.ParentHash != nil {
		n, ok := lk.get(uint64(*op.ParentHash))
		if !ok {
			return fmt.Errorf("%w: parent_hash %d; the event is skipped", ErrParentBlockNotFound, uint64(*op.ParentHash))
		}
		cur = n
	}
	if len(op.Blocks) > 8 {
		lk.ensure(lk.n + len(op.Blocks))
	}
	fresh := false // cur was created by this event, so it has no children yet
	for i, b := range op.Blocks {
		if i > 0 {
			t.addWorker(cur, s)
		}
		var child uint32
		ok := false
		if !fresh {
			child, ok = t.child(cur, uint64(b.TokensHash))
		}
		fresh = false
		if !ok {
			if n, found := lk.get(uint64(b.BlockHash)); found {
				child = n
			} else {
				child = t.newNode(uint64(b.BlockHash))
				nd := &t.nodes[child]
				nd.local = uint64(b.TokensHash)
				nd.pkid = t.nodes[cur].kid
				nd.implicit = child == cur+1
				fresh = true
			}
			if child == cur {
				return fmt.Errorf("%w: block %d (block_hash %d) would become its own child; blocks after it are dropped", ErrInvalidBlockSequence, i, uint64(b.BlockHash))
			}
			if !fresh || !t.nodes[child].implicit { // a new implicit node needs no table edge
				t.edges.put(t.nodes[cur].kid, uint64(b.TokensHash), child)
			}
		}
		lk.put(uint64(b.BlockHash), child)
		cur = child
	}
	if len(op.Blocks) > 0 {
		t.addWorker(cur, s)
	}
	return nil
}

func (t *radixTree) addWorker(n, s uint32) {
	nd := &t.nodes[n]
	if t.bulk && len(t.sets.members[nd.set]) >= bulkDeferMin {
		// Adding to a large set copies it; deferred, the node's additions
		// are merged into it once (a snapshot with thousands of workers on
		// one prompt would otherwise copy each set once per worker).
		t.pend.add(n, s, len(t.nodes))
		t.deferred++
		return
	}
	nd.set = t.sets.with(nd.set, s)
}

// dropWorker mirrors Dynamo's Block::drop_worker: when the node's set ends up
// empty, its children are forgotten (whether or not the worker was there).
func (t *radixTree) dropWorker(n, s uint32) {
	nd := &t.nodes[n]
	nd.set = t.sets.without(nd.set, s)
	if nd.set == 0 {
		nd.kid = t.takeKid()
		t.dirty++
	}
}

func (t *radixTree) remove(w WorkerWithDpRank, hashes []SequenceHash) error {
	s, ok := t.slot(w, false)
	if !ok || !t.slots[s].present {
		// Dynamo's ConcurrentRadixTree reports this even for an empty list.
		return fmt.Errorf("%w: the worker has no blocks on this tier", ErrBlockNotFound)
	}
	lk := &t.slots[s].lookup
	missingN := 0
	var first uint64
	for _, h := range hashes {
		n, ok := lk.del(uint64(h))
		if !ok {
			if missingN == 0 {
				first = uint64(h)
			}
			missingN++
			continue
		}
		t.dropWorker(n, s)
	}
	if missingN > 0 {
		return fmt.Errorf("%w: %d of %d block_hashes unknown (first %d); the others were removed", ErrBlockNotFound, missingN, len(hashes), first)
	}
	return nil
}

// clearSlot drops the worker from every block its lookup names. keep leaves
// the slot tracked with no blocks (Cleared); otherwise it is forgotten.
func (t *radixTree) clearSlot(s uint32, keep bool) {
	lk := &t.slots[s].lookup
	for _, v := range lk.vals {
		if v != 0 {
			t.dropWorker(v, s)
		}
	}
	lk.reset()
	t.slots[s].present = keep
}

func (t *radixTree) removeWorker(id WorkerID) {
	for s := range t.slots {
		if t.slots[s].w.WorkerID == id && t.slots[s].present {
			t.clearSlot(uint32(s), false)
		}
	}
	t.maybeCompact()
}

func (t *radixTree) treeSizes() []WorkerBlocks {
	var out []WorkerBlocks
	for _, ws := range t.slots {
		if ws.present {
			out = append(out, WorkerBlocks{Worker: ws.w, Blocks: ws.lookup.n})
		}
	}
	slices.SortFunc(out, func(a, b WorkerBlocks) int { return a.Worker.Compare(b.Worker) })
	return out
}

func (t *radixTree) findMatches(seq []LocalBlockHash) OverlapScores {
	if len(seq) == 0 {
		return nil
	}
	first, ok := t.child(0, uint64(seq[0]))
	if !ok {
		return nil
	}
	fs := t.sets.members[t.nodes[first].set]
	if len(fs) == 0 {
		return nil
	}
	var activeBuf [64]uint32
	active := append(activeBuf[:0], fs...)
	// Every worker is scored once and all come from the first node's set.
	res := make(OverlapScores, 0, len(fs))
	cur := first
	depth := uint32(1)
	for idx := 1; idx < len(seq); idx++ {
		next, ok := t.child(cur, uint64(seq[idx]))
		if !ok {
			break
		}
		cs := t.sets.members[t.nodes[next].set]
		if len(cs) != len(active) {
			// Dynamo's reconcile_active_workers: keep active ∩ child, score
			// the others at the depth reached before this node.
			k := 0
			j := 0
			for _, a := range active {
				for j < len(cs) && cs[j] < a {
					j++
				}
				if j < len(cs) && cs[j] == a {
					active[k] = a
					k++
				} else {
					res = append(res, OverlapScore{Worker: t.slots[a].w, Blocks: depth, LastBlockHash: SequenceHash(t.nodes[cur].hash)})
				}
			}
			active = active[:k]
			if k == 0 {
				break
			}
		}
		cur = next
		depth = uint32(idx + 1)
	}
	for _, a := range active {
		res = append(res, OverlapScore{Worker: t.slots[a].w, Blocks: depth, LastBlockHash: SequenceHash(t.nodes[cur].hash)})
	}
	slices.SortFunc(res, func(a, b OverlapScore) int { return a.Worker.Compare(b.Worker) })
	return res
}

// maybeCompact compacts when three quarters of the nodes are dirty, or when
// the worker-set pool has grown by more than the live sets plus half the node
// count since the last compaction: set garbage grows with every store into a
// shared prefix, so tying the trigger to the tree size keeps bulk loads (a
// million-block snapshot) linear instead of compacting every few thousand
// stores. Three quarters rather than half: a compaction walks every node, so
// under steady eviction churn (a simulation replaying engine evictions) it
// costs 4/3 of the garbage it reclaims instead of twice it, for an arena of at
// most four times the live nodes instead of two.
func (t *radixTree) maybeCompact() {
	if t.nextKid >= 1<<31 ||
		(t.dirty >= compactMinDirty && 4*t.dirty >= 3*len(t.nodes)) ||
		len(t.sets.members) >= 2*t.setsAtLast+max(compactMinDirty, len(t.nodes)/2) {
		t.compact()
	}
}

// bulkDeferMin is the set size from which ApplyEvents defers additions;
// smaller sets are cheaper to copy than to defer. (A variable so tests can
// defer every addition.)
var bulkDeferMin = 32

// flushSets applies the deferred worker additions: each node's set becomes its
// set plus the workers added to it, interned once. Sets are sets, so the order
// of the additions never matters.
func (t *radixTree) flushSets() {
	p := &t.pend
	if len(p.nodes) == 0 {
		return
	}
	lastSet, lastSlot, lastRes := ixNoSet, ixNoSet, uint32(0)
	for _, n := range p.nodes {
		e := p.head[n]
		p.head[n] = 0
		nd := &t.nodes[n]
		if p.next[e-1] == 0 {
			// One addition: the common case, often the same (set, worker) as
			// the node before it (a worker's own chain of blocks).
			s := p.slot[e-1]
			if nd.set != lastSet || s != lastSlot {
				lastSet, lastSlot, lastRes = nd.set, s, t.sets.with(nd.set, s)
			}
			nd.set = lastRes
			continue
		}
		add := p.tmp[:0]
		for ; e != 0; e = p.next[e-1] {
			add = append(add, p.slot[e-1])
		}
		nd.set = t.sets.withAll(nd.set, add)
		p.tmp = add
	}
	p.nodes, p.slot, p.next = p.nodes[:0], p.slot[:0], p.next[:0]
}

// compact drops unreachable edges and nodes, emulates Dynamo's periodic
// sweep_stale_children (unlinking empty leaves referenced only by their
// parent), then renumbers nodes, kids and worker sets densely. It never changes
// FindMatches results: it runs at deterministic points, and the only states it
// alters are ones that Dynamo's own five-minute sweep would alter.
func (t *radixTree) compact() {
	t.flushSets() // compaction reads and renumbers sets
	t.compactions++
	nn := len(t.nodes)
	const none = ^uint32(0)
	owner := make([]uint32, t.nextKid)
	for i := range owner {
		owner[i] = none
	}
	for i := range t.nodes {
		owner[t.nodes[i].kid] = uint32(i)
	}
	// Live edges in CSR form, grouped by parent: the table's, and the implicit
	// ones whose parent (the node before) still has the kid they were made in.
	liveImplicit := func(c int) bool {
		return c > 0 && t.nodes[c].implicit && t.nodes[c-1].kid == t.nodes[c].pkid
	}
	start := make([]uint32, nn+1)
	for _, e := range t.edges.entries {
		if e.child != 0 && owner[e.kid] != none {
			start[owner[e.kid]+1]++
		}
	}
	for c := range t.nodes {
		if liveImplicit(c) {
			start[c]++ // parent c-1, counted at index (c-1)+1
		}
	}
	for i := 1; i <= nn; i++ {
		start[i] += start[i-1]
	}
	type cedge struct {
		local uint64
		child uint32
	}
	adj := make([]cedge, start[nn])
	fill := slices.Clone(start[:nn])
	for _, e := range t.edges.entries {
		if e.child != 0 && owner[e.kid] != none {
			p := owner[e.kid]
			adj[fill[p]] = cedge{e.local, e.child}
			fill[p]++
		}
	}
	for c := range t.nodes {
		if liveImplicit(c) {
			adj[fill[c-1]] = cedge{t.nodes[c].local, uint32(c)}
			fill[c-1]++
		}
	}
	// Reachability from the root and every lookup target.
	lookupRefs := make([]uint32, nn)
	live := make([]bool, nn)
	stack := []uint32{0}
	live[0] = true
	for _, ws := range t.slots {
		for _, v := range ws.lookup.vals {
			if v != 0 {
				lookupRefs[v]++
				if !live[v] {
					live[v] = true
					stack = append(stack, v)
				}
			}
		}
	}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, e := range adj[start[n]:start[n+1]] {
			if !live[e.child] {
				live[e.child] = true
				stack = append(stack, e.child)
			}
		}
	}
	indeg := make([]uint32, nn)
	nchild := make([]uint32, nn)
	for p := 0; p < nn; p++ {
		if !live[p] {
			continue
		}
		nchild[p] = start[p+1] - start[p]
		for _, e := range adj[start[p]:start[p+1]] {
			indeg[e.child]++
		}
	}
	// sweep_stale_children: BFS edge order from the root, processed deepest first.
	removed := make([]bool, len(adj))
	var order []uint32 // edge indices in BFS order
	seen := make([]bool, nn)
	seen[0] = true
	queue := []uint32{0}
	for qi := 0; qi < len(queue); qi++ {
		p := queue[qi]
		for ei := start[p]; ei < start[p+1]; ei++ {
			order = append(order, ei)
			c := adj[ei].child
			if !seen[c] {
				seen[c] = true
				queue = append(queue, c)
			}
		}
	}
	parentOf := func(ei uint32) uint32 {
		// binary search the CSR row containing ei
		lo, hi := 0, nn
		for lo < hi {
			m := (lo + hi) / 2
			if start[m+1] <= ei {
				lo = m + 1
			} else {
				hi = m
			}
		}
		return uint32(lo)
	}
	for i := len(order) - 1; i >= 0; i-- {
		ei := order[i]
		if removed[ei] {
			continue
		}
		c := adj[ei].child
		if t.nodes[c].set == 0 && nchild[c] == 0 && indeg[c] == 1 && lookupRefs[c] == 0 {
			removed[ei] = true
			indeg[c] = 0
			live[c] = false
			nchild[parentOf(ei)]--
		}
	}
	// Renumber.
	newIdx := make([]uint32, nn)
	nlive := 0
	for _, l := range live {
		if l {
			nlive++
		}
	}
	nodes := make([]rnode, 0, nlive)
	setMap := map[uint32]uint32{0: 0}
	newSets := ixSetPool{}
	newSets.init()
	for i := 0; i < nn; i++ {
		if !live[i] {
			newIdx[i] = none
			continue
		}
		newIdx[i] = uint32(len(nodes))
		nd := t.nodes[i]
		ns, ok := setMap[nd.set]
		if !ok {
			ns = newSets.intern(t.sets.members[nd.set], t.sets.hashes[nd.set])
			setMap[nd.set] = ns
		}
		nodes = append(nodes, rnode{hash: nd.hash, local: nd.local, set: ns, kid: uint32(len(nodes)), pkid: nd.pkid})
	}
	// Translate creation back-references; they die with their parent.
	for i := range nodes {
		if pk := nodes[i].pkid; pk != noKid {
			nodes[i].pkid = noKid
			if p := owner[pk]; p != none && live[p] {
				nodes[i].pkid = newIdx[p]
			}
		}
	}
	nedges := 0
	for p := 0; p < nn; p++ {
		if live[p] {
			for ei := start[p]; ei < start[p+1]; ei++ {
				if !removed[ei] && live[adj[ei].child] {
					nedges++
				}
			}
		}
	}
	var edges ixEdgeTable
	edges.reserve(nedges)
	for p := 0; p < nn; p++ {
		if !live[p] {
			continue
		}
		for ei := start[p]; ei < start[p+1]; ei++ {
			if !removed[ei] && live[adj[ei].child] {
				edges.put(newIdx[p], adj[ei].local, newIdx[adj[ei].child])
			}
		}
	}
	for s := range t.slots {
		lk := &t.slots[s].lookup
		for i, v := range lk.vals {
			if v != 0 {
				lk.vals[i] = newIdx[v]
			}
		}
	}
	t.nodes = slices.Clip(nodes)
	t.edges = edges
	t.nextKid = uint32(len(nodes))
	t.sets = newSets
	t.setsAtLast = len(newSets.members)
	t.dirty = 0
}

// ---------------------------------------------------------------------------
// Interned worker sets. Set 0 is the empty set. Sets are immutable sorted
// slices of worker slots; with/without results are cached per (set, slot).
// A set's hash is the wrapping sum of its members' mixed values, so with and
// without derive the new set's hash from the old one in O(1); sets with equal
// hashes are chained and told apart by comparing members.

type ixSetPool struct {
	members [][]uint32
	hashes  []uint64
	next    []uint32 // the next set with the same hash, or ixNoSet
	byHash  map[uint64]uint32
	addMemo map[uint64]uint32
	delMemo map[uint64]uint32
	tmp     []uint32
}

const ixNoSet = ^uint32(0)

// ixSetElem is a member's contribution to its set's hash (a variable so tests
// can make every set collide).
var ixSetElem = func(v uint32) uint64 { return ixMix64(uint64(v) + 0x9E3779B97F4A7C15) }

func (p *ixSetPool) init() {
	p.members = [][]uint32{nil}
	p.hashes = []uint64{0}
	p.next = []uint32{ixNoSet}
	p.byHash = map[uint64]uint32{0: 0}
	p.addMemo = map[uint64]uint32{}
	p.delMemo = map[uint64]uint32{}
}

// intern returns the id of the set m (sorted) whose hash is h, adding it if new.
func (p *ixSetPool) intern(m []uint32, h uint64) uint32 {
	head, ok := p.byHash[h]
	if ok {
		for id := head; id != ixNoSet; id = p.next[id] {
			if slices.Equal(p.members[id], m) {
				return id
			}
		}
	} else {
		head = ixNoSet
	}
	id := uint32(len(p.members))
	p.members = append(p.members, slices.Clone(m))
	p.hashes = append(p.hashes, h)
	p.next = append(p.next, head)
	p.byHash[h] = id
	return id
}

func (p *ixSetPool) with(id, s uint32) uint32 {
	key := uint64(id)<<32 | uint64(s)
	if r, ok := p.addMemo[key]; ok {
		return r
	}
	m := p.members[id]
	i, found := slices.BinarySearch(m, s)
	r := id
	if !found {
		p.tmp = append(append(append(p.tmp[:0], m[:i]...), s), m[i:]...)
		r = p.intern(p.tmp, p.hashes[id]+ixSetElem(s))
	}
	p.addMemo[key] = r
	return r
}

func (p *ixSetPool) without(id, s uint32) uint32 {
	key := uint64(id)<<32 | uint64(s)
	if r, ok := p.delMemo[key]; ok {
		return r
	}
	m := p.members[id]
	i, found := slices.BinarySearch(m, s)
	r := id
	if found {
		p.tmp = append(append(p.tmp[:0], m[:i]...), m[i+1:]...)
		r = p.intern(p.tmp, p.hashes[id]-ixSetElem(s))
	}
	p.delMemo[key] = r
	return r
}

// withAll returns the set id plus the slots in add (unsorted, possibly
// repeated or already members); add is reordered.
func (p *ixSetPool) withAll(id uint32, add []uint32) uint32 {
	slices.Sort(add)
	add = slices.Compact(add)
	m := p.members[id]
	out := p.tmp[:0]
	h := p.hashes[id]
	i := 0
	for _, s := range add {
		for i < len(m) && m[i] < s {
			out = append(out, m[i])
			i++
		}
		if i < len(m) && m[i] == s {
			continue
		}
		out = append(out, s)
		h += ixSetElem(s)
	}
	if len(out) == i { // nothing new
		p.tmp = out
		return id
	}
	out = append(out, m[i:]...)
	p.tmp = out
	return p.intern(out, h)
}

// ixPending holds deferred additions of workers to nodes: per node a linked
// list (head, next; entries numbered from 1) of worker slots, and the nodes in
// the order they were first touched.
type ixPending struct {
	head  []uint32 // by node; 0 means no pending additions
	slot  []uint32
	next  []uint32
	nodes []uint32
	tmp   []uint32
}

func (p *ixPending) add(n, s uint32, nodes int) {
	if int(n) >= len(p.head) {
		p.head = slices.Grow(p.head, nodes-len(p.head))[:nodes]
	}
	h := p.head[n]
	if h == 0 {
		p.nodes = append(p.nodes, n)
	} else if p.slot[h-1] == s {
		return // the same worker again (a stored event revisiting the node)
	}
	p.slot = append(p.slot, s)
	p.next = append(p.next, h)
	p.head[n] = uint32(len(p.slot))
}

// release frees the buffers after a bulk load.
func (p *ixPending) release() { *p = ixPending{} }

// ---------------------------------------------------------------------------
// Open-addressing tables with linear probing.

func ixMix64(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

type ixEdgeEntry struct {
	local uint64
	kid   uint32
	child uint32 // 0 = empty slot (the root is never a child)
}

// ixEdgeTable maps (kid, local hash) to a child node. Entries are never deleted
// individually: stale ones are dropped when the tree is compacted.
type ixEdgeTable struct {
	entries []ixEdgeEntry
	n       int
	mask    uint64
}

func (e *ixEdgeTable) reserve(n int) {
	size := 16
	for size*3 < n*4+4 {
		size <<= 1
	}
	e.entries = make([]ixEdgeEntry, size)
	e.mask = uint64(size - 1)
	e.n = 0
}

func edgeHash(kid uint32, local uint64) uint64 {
	return ixMix64(local ^ uint64(kid)*0x9E3779B97F4A7C15)
}

func (e *ixEdgeTable) get(kid uint32, local uint64) (uint32, bool) {
	if e.n == 0 {
		return 0, false
	}
	for i := edgeHash(kid, local) & e.mask; ; i = (i + 1) & e.mask {
		en := &e.entries[i]
		if en.child == 0 {
			return 0, false
		}
		if en.local == local && en.kid == kid {
			return en.child, true
		}
	}
}

func (e *ixEdgeTable) put(kid uint32, local uint64, child uint32) {
	if (e.n+1)*4 > len(e.entries)*3 {
		e.grow()
	}
	for i := edgeHash(kid, local) & e.mask; ; i = (i + 1) & e.mask {
		en := &e.entries[i]
		if en.child == 0 {
			*en = ixEdgeEntry{local: local, kid: kid, child: child}
			e.n++
			return
		}
		if en.local == local && en.kid == kid {
			en.child = child
			return
		}
	}
}

func (e *ixEdgeTable) grow() {
	old := e.entries
	size := max(16, 2*len(old))
	e.entries = make([]ixEdgeEntry, size)
	e.mask = uint64(size - 1)
	e.n = 0
	for _, en := range old {
		if en.child != 0 {
			e.put(en.kid, en.local, en.child)
		}
	}
}

// ixHashTable maps an external block hash to a node (0 = empty slot). Keys and
// values are kept in separate slices so an entry costs 12 bytes.
type ixHashTable struct {
	keys []uint64
	vals []uint32
	n    int
	mask uint64
}

func (h *ixHashTable) get(k uint64) (uint32, bool) {
	if h.n == 0 {
		return 0, false
	}
	for i := ixMix64(k) & h.mask; ; i = (i + 1) & h.mask {
		if h.vals[i] == 0 {
			return 0, false
		}
		if h.keys[i] == k {
			return h.vals[i], true
		}
	}
}

func (h *ixHashTable) put(k uint64, v uint32) {
	if (h.n+1)*4 > len(h.vals)*3 {
		h.grow()
	}
	for i := ixMix64(k) & h.mask; ; i = (i + 1) & h.mask {
		if h.vals[i] == 0 {
			h.keys[i], h.vals[i] = k, v
			h.n++
			return
		}
		if h.keys[i] == k {
			h.vals[i] = v
			return
		}
	}
}

// del removes k with backward-shift deletion and returns its value.
func (h *ixHashTable) del(k uint64) (uint32, bool) {
	if h.n == 0 {
		return 0, false
	}
	i := ixMix64(k) & h.mask
	for {
		if h.vals[i] == 0 {
			return 0, false
		}
		if h.keys[i] == k {
			break
		}
		i = (i + 1) & h.mask
	}
	v := h.vals[i]
	h.n--
	// Shift later entries of the cluster back over the hole.
	j := i
	for {
		j = (j + 1) & h.mask
		if h.vals[j] == 0 {
			break
		}
		home := ixMix64(h.keys[j]) & h.mask
		// Move j into hole i when home is not cyclically in (i, j].
		if (j > i && (home <= i || home > j)) || (j < i && (home <= i && home > j)) {
			h.keys[i], h.vals[i] = h.keys[j], h.vals[j]
			i = j
		}
	}
	h.keys[i], h.vals[i] = 0, 0
	if h.n == 0 || (len(h.vals) > 64 && h.n*8 < len(h.vals)) {
		h.shrink()
	}
	return v, true
}

func (h *ixHashTable) grow() { h.rehash(max(8, 2*len(h.vals))) }

// ensure grows the table once to the size that n entries would grow it to
// one by one (a stored event of many new blocks otherwise rehashes log n times).
func (h *ixHashTable) ensure(n int) {
	size := max(8, len(h.vals))
	for n*4 > size*3 {
		size *= 2
	}
	if size != len(h.vals) {
		h.rehash(size)
	}
}

func (h *ixHashTable) shrink() {
	if h.n == 0 {
		h.reset()
		return
	}
	size := 8
	for size*3 < h.n*4*2 {
		size <<= 1
	}
	h.rehash(size)
}

func (h *ixHashTable) rehash(size int) {
	ok, ov := h.keys, h.vals
	h.keys = make([]uint64, size)
	h.vals = make([]uint32, size)
	h.mask = uint64(size - 1)
	h.n = 0
	for i, v := range ov {
		if v != 0 {
			h.put(ok[i], v)
		}
	}
}

func (h *ixHashTable) reset() { *h = ixHashTable{} }
