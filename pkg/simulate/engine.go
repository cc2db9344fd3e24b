package simulate

import (
	"fmt"
	"math"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
)

// Engine is the engine model: how long a worker takes to prefill a prompt and
// to decode, how long a KV transfer takes, and how many blocks a worker's
// prefix cache holds. It is a deliberately small approximation (see
// docs/commands/simulate.md): the routing decisions are exact, the timings are
// estimates. Every parameter can be replaced with --engine-profile.
type Engine struct {
	// PrefillTokensPerSecondPerGPU is one GPU's prefill throughput; a worker
	// (dp rank) prefills at this times its GPUs, one prompt at a time (FIFO).
	PrefillTokensPerSecondPerGPU float64
	// DecodeStepMs + DecodeStepMsPerSequence × active is the time of one
	// decode step, in which every active sequence of the worker gets one token
	// (processor sharing).
	DecodeStepMs            float64
	DecodeStepMsPerSequence float64
	// KvTransferMsPerBlock is the prefill→decode transfer time per block
	// within one domain value; KvTransferMsPerBlockCrossDomain across values.
	KvTransferMsPerBlock            float64
	KvTransferMsPerBlockCrossDomain float64
	// KvCapacityBlocks is a dp rank's prefix-cache capacity in blocks when its
	// runtime config publishes no total_kv_blocks.
	KvCapacityBlocks uint64
	// Source says where the parameters came from; KvCapacitySource where
	// KvCapacityBlocks did (the built-in default, --kv-capacity-blocks, a
	// profile), for the report's per-pool capacity lines.
	Source           string
	KvCapacitySource string
}

// Where a worker's KV capacity comes from (PoolCapacity.Source): its card's
// total_kv_blocks, else the engine model's KvCapacityBlocks, whose own source
// is Engine.KvCapacitySource (KvSourceDefault, or what the caller names: the
// command says --kv-capacity-blocks or the profile file).
const (
	KvSourceCards   = "worker cards (total_kv_blocks)"
	KvSourceDefault = "built-in default"
)

// DefaultEngine returns the built-in parameters: rough figures for a
// mid-size dense model on one current data-centre GPU per rank. They are
// placeholders for a profile, not measurements of any deployment.
func DefaultEngine() Engine {
	return Engine{
		PrefillTokensPerSecondPerGPU:    10000,
		DecodeStepMs:                    12,
		DecodeStepMsPerSequence:         0.08,
		KvTransferMsPerBlock:            0.02,
		KvTransferMsPerBlockCrossDomain: 0.2,
		KvCapacityBlocks:                32768,
		Source:                          "built-in defaults (rough figures, not a profile of this deployment)",
		KvCapacitySource:                KvSourceDefault,
	}
}

// The ranges the engine model accepts: wide enough for any real engine, narrow
// enough that every time the model computes stays finite and within
// MaxVirtualMs for a request within the trace readers' bounds (a hostile
// profile's 1e-300 tokens/s made a prefill last +Inf ms).
const (
	MinPrefillTokensPerSecondPerGPU = 1
	MaxPrefillTokensPerSecondPerGPU = 1e9
	MinDecodeStepMs                 = 1e-3
	MaxStepMs                       = 1e6
)

// Validate rejects parameters the model cannot run with: each must be a
// finite number within its range.
func (e Engine) Validate() error {
	in := func(name string, v, lo, hi float64) error {
		if math.IsNaN(v) || v < lo || v > hi {
			return fmt.Errorf("engine model: %s must be a number from %s to %s, got %v", name, shortG(lo), shortG(hi), v)
		}
		return nil
	}
	for _, err := range []error{
		in("prefillTokensPerSecondPerGPU", e.PrefillTokensPerSecondPerGPU, MinPrefillTokensPerSecondPerGPU, MaxPrefillTokensPerSecondPerGPU),
		in("decodeStepMs", e.DecodeStepMs, MinDecodeStepMs, MaxStepMs),
		in("decodeStepMsPerSequence", e.DecodeStepMsPerSequence, 0, MaxStepMs),
		in("kvTransferMsPerBlock", e.KvTransferMsPerBlock, 0, MaxStepMs),
		in("kvTransferMsPerBlockCrossDomain", e.KvTransferMsPerBlockCrossDomain, 0, MaxStepMs),
	} {
		if err != nil {
			return err
		}
	}
	if e.KvCapacityBlocks == 0 {
		return fmt.Errorf("engine model: kvCapacityBlocks must be at least 1")
	}
	return nil
}

// Info is the engine model as the report shows it.
func (e Engine) Info() EngineInfo { return EngineInfo(e) }

func (e Engine) stepMs(active int) float64 {
	return e.DecodeStepMs + float64(e.DecodeStepMsPerSequence*float64(active))
}

// lru is one dp rank's prefix cache: sequence hashes in least-recently-used
// order, in flat arrays (no per-block allocation).
type lru struct {
	capacity   int
	pos        hashIndex
	hash       []routecore.SequenceHash
	prev, next []int32
	head, tail int32 // head: most recent; tail: least recent
	free       []int32
	peak       int
}

func newLRU(capacity uint64) *lru {
	c := int(min(capacity, 1<<30))
	return &lru{capacity: c, head: -1, tail: -1}
}

func (l *lru) len() int { return l.pos.n }

// prefix is how many of seq's leading blocks the cache holds.
func (l *lru) prefix(seq []routecore.SequenceHash) int {
	for i, h := range seq {
		if _, ok := l.pos.get(uint64(h)); !ok {
			return i
		}
	}
	return len(seq)
}

func (l *lru) unlink(i int32) {
	p, n := l.prev[i], l.next[i]
	if p >= 0 {
		l.next[p] = n
	} else {
		l.head = n
	}
	if n >= 0 {
		l.prev[n] = p
	} else {
		l.tail = p
	}
}

func (l *lru) pushFront(i int32) {
	l.prev[i], l.next[i] = -1, l.head
	if l.head >= 0 {
		l.prev[l.head] = i
	}
	l.head = i
	if l.tail < 0 {
		l.tail = i
	}
}

// store inserts or refreshes seq's blocks, the last first, so that the
// prompt's leading blocks end most recent and the tail is evicted first (the
// order engines free a finished sequence's blocks in). It returns the index of
// the first block that was not cached before (one pass: each hash is looked
// up once), and appends evicted hashes to evicted.
func (l *lru) store(seq []routecore.SequenceHash, evicted []routecore.SequenceHash) (firstNew int, _ []routecore.SequenceHash) {
	firstNew = len(seq)
	for k := len(seq) - 1; k >= 0; k-- {
		h := seq[k]
		if i, ok := l.pos.get(uint64(h)); ok {
			l.unlink(i)
			l.pushFront(i)
			continue
		}
		firstNew = k
		var i int32
		if n := len(l.free); n > 0 {
			i = l.free[n-1]
			l.free = l.free[:n-1]
			l.hash[i] = h
		} else {
			i = int32(len(l.hash))
			l.hash = append(l.hash, h)
			l.prev = append(l.prev, -1)
			l.next = append(l.next, -1)
		}
		l.pos.put(uint64(h), i)
		l.pushFront(i)
	}
	for l.pos.n > l.capacity {
		// Never evict what this store just placed (it is at the front, and its
		// hashes are distinct): a capacity below one prompt keeps the prompt,
		// which the engine holds while it runs.
		if l.pos.n <= len(seq) {
			break
		}
		t := l.tail
		l.unlink(t)
		l.pos.del(uint64(l.hash[t]))
		evicted = append(evicted, l.hash[t])
		l.free = append(l.free, t)
	}
	l.peak = max(l.peak, l.pos.n)
	return firstNew, evicted
}

// hashIndex maps a block hash to its slot: open addressing with linear
// probing and backward-shift deletion (no tombstones), keys and values inline,
// so a lookup touches one or two cache lines. Key 0 marks an empty slot; the
// hash 0 itself is kept aside.
type hashIndex struct {
	keys    []uint64
	vals    []int32
	n       int
	zero    int32
	hasZero bool
}

func hiMix(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	return x
}

func (h *hashIndex) get(k uint64) (int32, bool) {
	if k == 0 {
		return h.zero, h.hasZero
	}
	if len(h.keys) == 0 {
		return 0, false
	}
	mask := uint64(len(h.keys) - 1)
	for i := hiMix(k) & mask; ; i = (i + 1) & mask {
		switch h.keys[i] {
		case k:
			return h.vals[i], true
		case 0:
			return 0, false
		}
	}
}

func (h *hashIndex) put(k uint64, v int32) {
	if k == 0 {
		if !h.hasZero {
			h.n++
		}
		h.zero, h.hasZero = v, true
		return
	}
	if 4*(h.n+1) > 3*len(h.keys) {
		h.grow()
	}
	mask := uint64(len(h.keys) - 1)
	for i := hiMix(k) & mask; ; i = (i + 1) & mask {
		switch h.keys[i] {
		case k:
			h.vals[i] = v
			return
		case 0:
			h.keys[i], h.vals[i] = k, v
			h.n++
			return
		}
	}
}

func (h *hashIndex) del(k uint64) {
	if k == 0 {
		if h.hasZero {
			h.zero, h.hasZero = 0, false
			h.n--
		}
		return
	}
	if len(h.keys) == 0 {
		return
	}
	mask := uint64(len(h.keys) - 1)
	i := hiMix(k) & mask
	for h.keys[i] != k {
		if h.keys[i] == 0 {
			return
		}
		i = (i + 1) & mask
	}
	h.n--
	// Backward shift: move later entries of the run into the hole when their
	// home slot is not between the hole and them.
	for j := (i + 1) & mask; h.keys[j] != 0; j = (j + 1) & mask {
		home := hiMix(h.keys[j]) & mask
		if (j > i && (home <= i || home > j)) || (j < i && home <= i && home > j) {
			h.keys[i], h.vals[i] = h.keys[j], h.vals[j]
			i = j
		}
	}
	h.keys[i], h.vals[i] = 0, 0
}

func (h *hashIndex) grow() {
	old, oldv := h.keys, h.vals
	size := max(64, 2*len(old))
	h.keys, h.vals = make([]uint64, size), make([]int32, size)
	hasZero := h.hasZero
	h.n = 0
	for i, k := range old {
		if k != 0 {
			h.put(k, oldv[i])
		}
	}
	if hasZero {
		h.n++
	}
}
