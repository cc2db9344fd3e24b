package routecore

import (
	"bytes"
	"errors"
	"slices"
	"testing"
)

// refTree is a deliberately naive, pointer-and-map transliteration of
// Dynamo's ConcurrentRadixTree (plus this package's documented error
// choices). The compact Index must agree with it on every input.
type refNode struct {
	hash     uint64
	children map[uint64]*refNode
	workers  map[WorkerWithDpRank]bool
}

type refTree struct {
	root   *refNode
	lookup map[WorkerWithDpRank]map[uint64]*refNode
}

func newRefNode(h uint64) *refNode {
	return &refNode{hash: h, children: map[uint64]*refNode{}, workers: map[WorkerWithDpRank]bool{}}
}

func newRefTree() *refTree {
	return &refTree{root: newRefNode(0), lookup: map[WorkerWithDpRank]map[uint64]*refNode{}}
}

func (r *refTree) dropWorker(n *refNode, w WorkerWithDpRank) {
	delete(n.workers, w)
	if len(n.workers) == 0 {
		n.children = map[uint64]*refNode{}
	}
}

func (r *refTree) apply(ev RouterEvent) error {
	if ev.StorageTier != TierDevice {
		return nil
	}
	w := WorkerWithDpRank{WorkerID: ev.WorkerID, DpRank: ev.Event.DpRank}
	d := ev.Event.Data
	switch {
	case d.Stored != nil:
		lk := r.lookup[w]
		if lk == nil {
			lk = map[uint64]*refNode{}
			r.lookup[w] = lk
		}
		cur := r.root
		if d.Stored.ParentHash != nil {
			p, ok := lk[uint64(*d.Stored.ParentHash)]
			if !ok {
				return ErrParentBlockNotFound
			}
			cur = p
		}
		for _, b := range d.Stored.Blocks {
			child, ok := cur.children[uint64(b.TokensHash)]
			if !ok {
				if n, ok := lk[uint64(b.BlockHash)]; ok {
					child = n
				} else {
					child = newRefNode(uint64(b.BlockHash))
				}
				if child == cur {
					return ErrInvalidBlockSequence
				}
				cur.children[uint64(b.TokensHash)] = child
			}
			child.workers[w] = true
			lk[uint64(b.BlockHash)] = child
			cur = child
		}
	case d.Removed != nil:
		lk, ok := r.lookup[w]
		if !ok {
			return ErrBlockNotFound
		}
		var err error
		for _, h := range d.Removed.BlockHashes {
			n, ok := lk[uint64(h)]
			if !ok {
				err = ErrBlockNotFound
				continue
			}
			delete(lk, uint64(h))
			r.dropWorker(n, w)
		}
		return err
	case d.Cleared:
		if lk, ok := r.lookup[w]; ok {
			for _, n := range lk {
				r.dropWorker(n, w)
			}
			r.lookup[w] = map[uint64]*refNode{}
		}
	}
	return nil
}

func (r *refTree) removeWorker(id WorkerID) {
	for w, lk := range r.lookup {
		if w.WorkerID == id {
			for _, n := range lk {
				r.dropWorker(n, w)
			}
			delete(r.lookup, w)
		}
	}
}

func (r *refTree) findMatches(seq []LocalBlockHash) map[WorkerWithDpRank]uint32 {
	scores := map[WorkerWithDpRank]uint32{}
	if len(seq) == 0 {
		return scores
	}
	cur, ok := r.root.children[uint64(seq[0])]
	if !ok || len(cur.workers) == 0 {
		return scores
	}
	active := map[WorkerWithDpRank]bool{}
	for w := range cur.workers {
		active[w] = true
	}
	depth := uint32(1)
	for idx := 1; idx < len(seq); idx++ {
		next, ok := cur.children[uint64(seq[idx])]
		if !ok {
			break
		}
		if len(next.workers) != len(active) {
			for w := range active {
				if !next.workers[w] {
					scores[w] = depth
					delete(active, w)
				}
			}
			if len(active) == 0 {
				break
			}
		}
		cur = next
		depth = uint32(idx + 1)
	}
	for w := range active {
		scores[w] = depth
	}
	return scores
}

// sweep is Dynamo's sweep_stale_children: BFS edges from the root, visited
// deepest first, unlinking empty childless leaves referenced only by that edge.
func (r *refTree) sweep() {
	refs := map[*refNode]int{}
	seen := map[*refNode]bool{}
	var stack []*refNode
	visit := func(n *refNode) {
		if !seen[n] {
			seen[n] = true
			stack = append(stack, n)
		}
	}
	visit(r.root)
	for _, lk := range r.lookup {
		for _, n := range lk {
			refs[n]++
			visit(n)
		}
	}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, c := range n.children {
			refs[c]++
			visit(c)
		}
	}
	type edge struct {
		parent *refNode
		key    uint64
		child  *refNode
	}
	var edges []edge
	bseen := map[*refNode]bool{r.root: true}
	queue := []*refNode{r.root}
	for qi := 0; qi < len(queue); qi++ {
		p := queue[qi]
		keys := make([]uint64, 0, len(p.children))
		for k := range p.children {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			c := p.children[k]
			edges = append(edges, edge{p, k, c})
			if !bseen[c] {
				bseen[c] = true
				queue = append(queue, c)
			}
		}
	}
	for i := len(edges) - 1; i >= 0; i-- {
		e := edges[i]
		if e.parent.children[e.key] != e.child {
			continue
		}
		c := e.child
		if len(c.workers) == 0 && len(c.children) == 0 && refs[c] == 1 {
			delete(e.parent.children, e.key)
			refs[c] = 0
		}
	}
}

func (r *refTree) treeSizes() []WorkerBlocks {
	var out []WorkerBlocks
	for w, lk := range r.lookup {
		out = append(out, WorkerBlocks{Worker: w, Blocks: len(lk)})
	}
	slices.SortFunc(out, func(a, b WorkerBlocks) int { return a.Worker.Compare(b.Worker) })
	return out
}

// fuzzProgram interprets bytes as a compact program over a tiny hash alphabet,
// so that shared prefixes, inconsistent engine hashes, lookup reuse and
// emptied nodes all occur often.
type fuzzOp struct {
	ev        *RouterEvent
	removeID  *WorkerID
	compact   bool
	query     []LocalBlockHash
	queryOnly bool
}

func decodeFuzzProgram(data []byte) []fuzzOp {
	var ops []fuzzOp
	next := func() (byte, bool) {
		if len(data) == 0 {
			return 0, false
		}
		b := data[0]
		data = data[1:]
		return b, true
	}
	id := uint64(0)
	for len(ops) < 200 {
		op, ok := next()
		if !ok {
			break
		}
		wb, _ := next()
		w := WorkerWithDpRank{WorkerID: WorkerID(wb & 3), DpRank: uint32(wb>>2) & 1}
		tier := TierDevice
		if wb&0x80 != 0 {
			tier = TierHostPinned
		}
		id++
		switch op % 8 {
		case 0, 1, 2: // store
			n, _ := next()
			s := &KvCacheStoreData{}
			if n&0x80 != 0 {
				p, _ := next()
				ph := SequenceHash(p % 12)
				s.ParentHash = &ph
			}
			for i := 0; i < int(n&7); i++ {
				b, _ := next()
				// Mostly consistent hashes (block = 10*local + 1) with some noise.
				local := uint64(b % 5)
				bh := 10*local + 1
				if b&0x80 != 0 {
					bh = uint64(b>>3) % 12
				}
				s.Blocks = append(s.Blocks, KvCacheStoredBlock{BlockHash: SequenceHash(bh), TokensHash: LocalBlockHash(local)})
			}
			ops = append(ops, fuzzOp{ev: &RouterEvent{WorkerID: w.WorkerID, StorageTier: tier, Event: KvCacheEvent{EventID: id, DpRank: w.DpRank, Data: KvCacheEventData{Stored: s}}}})
		case 3, 4: // remove
			n, _ := next()
			r := &KvCacheRemoveData{}
			for i := 0; i < int(n&3)+1; i++ {
				b, _ := next()
				bh := 10*uint64(b%5) + 1
				if b&0x80 != 0 {
					bh = uint64(b>>3) % 12
				}
				r.BlockHashes = append(r.BlockHashes, SequenceHash(bh))
			}
			ops = append(ops, fuzzOp{ev: &RouterEvent{WorkerID: w.WorkerID, StorageTier: tier, Event: KvCacheEvent{EventID: id, DpRank: w.DpRank, Data: KvCacheEventData{Removed: r}}}})
		case 5:
			ops = append(ops, fuzzOp{ev: &RouterEvent{WorkerID: w.WorkerID, StorageTier: tier, Event: KvCacheEvent{EventID: id, DpRank: w.DpRank, Data: KvCacheEventData{Cleared: true}}}})
		case 6:
			if wb&0x40 != 0 {
				ops = append(ops, fuzzOp{compact: true})
			} else {
				wid := w.WorkerID
				ops = append(ops, fuzzOp{removeID: &wid})
			}
		case 7:
			n, _ := next()
			var q []LocalBlockHash
			for i := 0; i < int(n&7); i++ {
				b, _ := next()
				q = append(q, LocalBlockHash(b%5))
			}
			ops = append(ops, fuzzOp{query: q, queryOnly: true})
		}
	}
	return ops
}

// allQueries enumerates every sequence over the 5-hash alphabet up to length 3
// plus a few longer ones, which covers every path a small tree can have.
func allQueries() [][]LocalBlockHash {
	var out [][]LocalBlockHash
	var rec func(prefix []LocalBlockHash)
	rec = func(prefix []LocalBlockHash) {
		out = append(out, slices.Clone(prefix))
		if len(prefix) == 3 {
			return
		}
		for h := LocalBlockHash(0); h < 5; h++ {
			rec(append(prefix, h))
		}
	}
	rec(nil)
	out = append(out, lh(0, 1, 2, 3, 4), lh(1, 1, 1, 1, 1, 1), lh(0, 0, 0, 0))
	return out
}

func checkAgainstRef(t *testing.T, ix *Index, ref *refTree, queries [][]LocalBlockHash, step int) {
	t.Helper()
	for _, q := range queries {
		got := ix.FindMatches(q)
		want := ref.findMatches(q)
		if len(got) != len(want) {
			t.Fatalf("step %d query %v: got %v, want %v", step, q, got, want)
		}
		for i, s := range got {
			if i > 0 && got[i-1].Worker.Compare(s.Worker) >= 0 {
				t.Fatalf("step %d: scores not sorted/unique: %v", step, got)
			}
			if s.Blocks == 0 || int(s.Blocks) > len(q) {
				t.Fatalf("step %d query %v: score %d out of range", step, q, s.Blocks)
			}
			if want[s.Worker] != s.Blocks {
				t.Fatalf("step %d query %v: got %v, want %v", step, q, got, want)
			}
		}
	}
	if got, want := ix.TreeSizes(), ref.treeSizes(); !slices.Equal(got, want) {
		t.Fatalf("step %d: tree sizes %v, want %v", step, got, want)
	}
}

func runFuzzProgram(t *testing.T, data []byte) {
	runFuzzProgramMode(t, data, false)
	runFuzzProgramMode(t, data, true)
	// Again with every addition of a batch deferred (the programs' sets are
	// smaller than bulkDeferMin).
	defer func(prev int) { bulkDeferMin = prev }(bulkDeferMin)
	bulkDeferMin = 0
	runFuzzProgramMode(t, data, true)
}

// runFuzzProgramMode runs a program against the reference. In batch mode,
// runs of consecutive events (of a length drawn from the data) go through
// ApplyEvents, and each event's error must match the reference's.
func runFuzzProgramMode(t *testing.T, data []byte, batch bool) {
	ix := NewIndex()
	ref := newRefTree()
	queries := allQueries()
	ix.Reserve(len(data) % 64) // Reserve (also mid-program below) changes nothing observable
	ops := decodeFuzzProgram(data)
	for step := 0; step < len(ops); step++ {
		op := ops[step]
		if step%5 == 4 {
			ix.Reserve(step * 3)
		}
		if batch && op.ev != nil {
			limit := 1 + int(data[step%len(data)])%12
			var evs []RouterEvent
			for len(evs) < limit && step < len(ops) && ops[step].ev != nil {
				evs = append(evs, *ops[step].ev)
				step++
			}
			step--
			errs := make([]error, len(evs))
			ix.ApplyEvents(evs, func(i int, err error) {
				if errs[i] != nil || err == nil {
					t.Fatalf("step %d: onError called twice or with nil for event %d", step, i)
				}
				errs[i] = err
			})
			for i, ev := range evs {
				rerr := ref.apply(ev)
				if ev.StorageTier != TierDevice {
					continue
				}
				for _, s := range []error{ErrParentBlockNotFound, ErrBlockNotFound, ErrInvalidBlockSequence} {
					if errors.Is(errs[i], s) != errors.Is(rerr, s) {
						t.Fatalf("step %d batch event %d: error %v, reference %v", step, i, errs[i], rerr)
					}
				}
				if (errs[i] == nil) != (rerr == nil) {
					t.Fatalf("step %d batch event %d: error %v, reference %v", step, i, errs[i], rerr)
				}
			}
			if len(ix.dev.pend.nodes) != 0 || ix.dev.bulk {
				t.Fatalf("step %d: ApplyEvents left deferred set updates behind", step)
			}
			checkAgainstRef(t, ix, ref, queries, step)
			continue
		}
		switch {
		case op.ev != nil:
			err := ix.ApplyEvent(*op.ev)
			rerr := ref.apply(*op.ev)
			if op.ev.StorageTier == TierDevice {
				for _, s := range []error{ErrParentBlockNotFound, ErrBlockNotFound, ErrInvalidBlockSequence} {
					if errors.Is(err, s) != errors.Is(rerr, s) {
						t.Fatalf("step %d: error %v, reference %v", step, err, rerr)
					}
				}
				if (err == nil) != (rerr == nil) {
					t.Fatalf("step %d: error %v, reference %v", step, err, rerr)
				}
			}
		case op.removeID != nil:
			ix.RemoveWorker(*op.removeID)
			ref.removeWorker(*op.removeID)
		case op.compact:
			ix.dev.compact()
			ref.sweep()
		case op.queryOnly:
			got := ix.FindMatches(op.query)
			for _, s := range got {
				if int(s.Blocks) > len(op.query) {
					t.Fatalf("score beyond query length")
				}
			}
			m := ix.FindTieredMatches(op.query)
			for _, h := range m.Lower[TierHostPinned] {
				if int(h.Blocks)+int(m.Device.Blocks(h.Worker)) > len(op.query) {
					t.Fatalf("tier extension beyond query length: %+v", m)
				}
			}
			continue
		}
		checkAgainstRef(t, ix, ref, queries, step)
	}
}

// FuzzIndexEvents feeds arbitrary bytes both as a JSON event stream and as a
// compact event program, checking that nothing panics and that the compact
// index agrees with the naive reference model.
func FuzzIndexEvents(f *testing.F) {
	f.Add([]byte(`{"worker_id":1,"event":{"event_id":1,"data":{"stored":{"parent_hash":null,"blocks":[{"block_hash":1,"tokens_hash":2}]}}}}`))
	f.Add([]byte{0, 0, 3, 1, 2, 3, 0, 1, 3, 1, 2, 4, 7, 0, 3, 1, 2, 3})
	f.Add([]byte{0, 0, 0x83, 11, 1, 2, 3, 3, 0, 0, 11, 0, 1, 2, 1, 2, 3, 6, 0x40})
	f.Add([]byte{0, 0, 2, 1, 2, 0, 1, 2, 1, 2, 3, 0, 1, 1, 3, 1, 1, 11, 3, 1, 1, 11, 0, 0, 0x81, 11, 2})
	f.Fuzz(func(t *testing.T, data []byte) {
		// As a JSON stream: decoding must not panic and decoded events must apply.
		evs, _ := DecodeRouterEvents(bytes.NewReader(data))
		ix := NewIndex()
		ref := newRefTree()
		for _, ev := range evs {
			_ = ix.ApplyEvent(ev)
			_ = ref.apply(ev)
			if b, err := ev.MarshalJSON(); err == nil {
				back, err := DecodeRouterEvent(b)
				if err != nil {
					t.Fatalf("re-decode of %s: %v", b, err)
				}
				b2, _ := back.MarshalJSON()
				if !bytes.Equal(b, b2) {
					t.Fatalf("round trip differs: %s vs %s", b, b2)
				}
			}
		}
		var qs [][]LocalBlockHash
		for _, ev := range evs {
			if s := ev.Event.Data.Stored; s != nil {
				q := make([]LocalBlockHash, 0, len(s.Blocks))
				for _, b := range s.Blocks {
					q = append(q, b.TokensHash)
				}
				qs = append(qs, q)
			}
		}
		checkAgainstRef(t, ix, ref, qs, -1)
		// As a compact program.
		runFuzzProgram(t, data)
	})
}

func TestIndexRandomProgramsAgreeWithReference(t *testing.T) {
	// A deterministic sweep of programs so the reference check runs in plain
	// `go test` as well as under the fuzzer.
	seed := uint64(0x9E3779B97F4A7C15)
	for i := 0; i < 300; i++ {
		data := make([]byte, 40+i%160)
		for j := range data {
			seed ^= seed << 13
			seed ^= seed >> 7
			seed ^= seed << 17
			data[j] = byte(seed)
		}
		runFuzzProgram(t, data)
	}
}

// TestIndexSetHashCollisions reruns the reference sweep with a set hash under
// which every set of the same size collides (and one under which all do), so
// interning must tell sets apart by their members.
func TestIndexSetHashCollisions(t *testing.T) {
	orig := ixSetElem
	defer func() { ixSetElem = orig }()
	for name, h := range map[string]func(uint32) uint64{
		"by size": func(uint32) uint64 { return 1 },
		"all":     func(uint32) uint64 { return 0 },
	} {
		ixSetElem = h
		t.Run(name, TestIndexRandomProgramsAgreeWithReference)
	}
}
