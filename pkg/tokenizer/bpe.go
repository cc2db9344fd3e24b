package tokenizer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"
)

const (
	// maxVocabID bounds the ids accepted from a file, to refuse absurd
	// allocations on malformed input.
	maxVocabID = 1 << 22
	// cacheCapacity bounds the number of cached pre-token encodings; the
	// cache is emptied when it is full.
	cacheCapacity = 1 << 15
	// maxCachedWord is the longest pre-token (in bytes) that is cached.
	maxCachedWord = 256
	// linearMergeLimit is the symbol count up to which the simple
	// rank-array merge loop is used instead of the heap.
	linearMergeLimit = 96
	noID             = -1
)

// bpeModel is the "BPE" model of tokenizer.json, with the semantics of the
// Rust tokenizers crate (models/bpe/model.rs and word.rs).
type bpeModel struct {
	vocab     map[string]uint32
	idToToken []string
	hasID     []bool
	// merges maps pair (a<<32|b) to rank<<32|newID.
	merges       map[uint64]uint64
	unkID        int64
	fuseUnk      bool
	byteFallback bool
	ignoreMerges bool
	prefix       string
	suffix       string
	byteFB       [256]int64

	// raw is set when pre-tokens arrive as raw bytes that still need the
	// byte-level mapping (ByteLevel is the last pre-tokenizer). Then
	// byteTok gives each byte's initial symbol and rawVocab looks up whole
	// words by their raw bytes.
	raw      bool
	byteTok  [256]uint32
	rawVocab map[string]uint32

	cache wordCache
}

type wordCache struct {
	mu sync.RWMutex
	m  map[string][]uint32
}

func (c *wordCache) get(k string) ([]uint32, bool) {
	c.mu.RLock()
	v, ok := c.m[k]
	c.mu.RUnlock()
	return v, ok
}

func (c *wordCache) put(k string, v []uint32) {
	c.mu.Lock()
	if c.m == nil || len(c.m) >= cacheCapacity {
		c.m = make(map[string][]uint32, 1024)
	}
	c.m[strings.Clone(k)] = v
	c.mu.Unlock()
}

func pairKey(a, b uint32) uint64 { return uint64(a)<<32 | uint64(b) }

func parseBPE(o *obj) (*bpeModel, error) {
	if err := o.allow("BPE model", "vocab", "merges", "dropout", "unk_token",
		"continuing_subword_prefix", "end_of_word_suffix", "fuse_unk",
		"byte_fallback", "ignore_merges"); err != nil {
		return nil, err
	}
	if o.has("dropout") {
		var d float64
		if err := json.Unmarshal(o.m["dropout"], &d); err != nil {
			return nil, invalid(o.sub("dropout"), "expected a number")
		}
		if d != 0 {
			return nil, unsupported(o.sub("dropout"), "BPE dropout %v (it makes tokenization random)", d)
		}
	}
	m := &bpeModel{unkID: noID}
	var err error
	if !o.has("vocab") {
		return nil, invalid(o.sub("vocab"), "missing vocabulary")
	}
	if err := json.Unmarshal(o.m["vocab"], &m.vocab); err != nil {
		return nil, invalid(o.sub("vocab"), "expected an object of token to id")
	}
	maxID := -1
	for _, id := range m.vocab {
		if id >= maxVocabID {
			return nil, invalid(o.sub("vocab"), "id %d is too large", id)
		}
		if int(id) > maxID {
			maxID = int(id)
		}
	}
	m.idToToken = make([]string, maxID+1)
	m.hasID = make([]bool, maxID+1)
	for tok, id := range m.vocab {
		m.idToToken[id] = tok
		m.hasID[id] = true
	}
	if m.prefix, err = o.str("continuing_subword_prefix", ""); err != nil {
		return nil, err
	}
	if m.suffix, err = o.str("end_of_word_suffix", ""); err != nil {
		return nil, err
	}
	if m.fuseUnk, err = o.boolean("fuse_unk", false); err != nil {
		return nil, err
	}
	if m.byteFallback, err = o.boolean("byte_fallback", false); err != nil {
		return nil, err
	}
	if m.ignoreMerges, err = o.boolean("ignore_merges", false); err != nil {
		return nil, err
	}
	unk, err := o.str("unk_token", "")
	if err != nil {
		return nil, err
	}
	if o.has("unk_token") {
		id, ok := m.vocab[unk]
		if !ok {
			return nil, invalid(o.sub("unk_token"), "unk token %q is not in the vocabulary", unk)
		}
		m.unkID = int64(id)
	}
	for b := 0; b < 256; b++ {
		m.byteFB[b] = noID
		if id, ok := m.vocab[fmt.Sprintf("<0x%02X>", b)]; ok {
			m.byteFB[b] = int64(id)
		}
	}
	if err := m.parseMerges(o); err != nil {
		return nil, err
	}
	return m, nil
}

func (m *bpeModel) parseMerges(o *obj) error {
	path := o.sub("merges")
	raw := bytes.TrimSpace(o.m["merges"])
	if isNull(raw) {
		m.merges = map[uint64]uint64{}
		return nil
	}
	var pairs [][2]string
	inner := bytes.TrimSpace(bytes.TrimPrefix(raw, []byte("[")))
	if len(inner) > 0 && inner[0] == '[' {
		var l [][]string
		if err := json.Unmarshal(raw, &l); err != nil {
			return invalid(path, `expected a list of ["a","b"] pairs or of "a b" strings`)
		}
		pairs = make([][2]string, len(l))
		for i, p := range l {
			if len(p) != 2 {
				return invalid(index(path, i), "expected a pair of two tokens")
			}
			pairs[i] = [2]string{p[0], p[1]}
		}
	} else {
		var l []string
		if err := json.Unmarshal(raw, &l); err != nil {
			return invalid(path, `expected a list of ["a","b"] pairs or of "a b" strings`)
		}
		pairs = make([][2]string, len(l))
		for i, s := range l {
			a, b, ok := strings.Cut(s, " ")
			if !ok {
				return invalid(index(path, i), "merge %q is not two tokens separated by a space", s)
			}
			pairs[i] = [2]string{a, b}
		}
	}
	if len(pairs) >= 1<<31 {
		return invalid(path, "too many merges")
	}
	m.merges = make(map[uint64]uint64, len(pairs))
	for rank, p := range pairs {
		a, ok := m.vocab[p[0]]
		if !ok {
			return invalid(index(path, rank), "token %q of the merge is not in the vocabulary", p[0])
		}
		b, ok := m.vocab[p[1]]
		if !ok {
			return invalid(index(path, rank), "token %q of the merge is not in the vocabulary", p[1])
		}
		right := p[1]
		if m.prefix != "" {
			right = strings.TrimPrefix(right, m.prefix)
		}
		n, ok := m.vocab[p[0]+right]
		if !ok {
			return invalid(index(path, rank), "merged token %q is not in the vocabulary", p[0]+right)
		}
		m.merges[pairKey(a, b)] = uint64(rank)<<32 | uint64(n)
	}
	return nil
}

// enableRaw switches the model to raw-byte input when every byte has a
// byte-level symbol in the vocabulary and no prefix or suffix decorates the
// symbols. It reports whether it did.
func (m *bpeModel) enableRaw() bool {
	if m.prefix != "" || m.suffix != "" {
		return false
	}
	for b := 0; b < 256; b++ {
		id, ok := m.vocab[byteToString[b]]
		if !ok {
			return false
		}
		m.byteTok[b] = id
	}
	m.rawVocab = make(map[string]uint32, len(m.vocab))
	for tok, id := range m.vocab {
		if raw, ok := byteLevelDecode(tok); ok {
			m.rawVocab[string(raw)] = id
		}
	}
	m.raw = true
	return true
}

// encodeWord appends the ids of one pre-token to out.
func (m *bpeModel) encodeWord(word string, out []uint32) []uint32 {
	if word == "" {
		return out
	}
	if m.ignoreMerges {
		var id uint32
		var ok bool
		if m.raw {
			id, ok = m.rawVocab[word]
		} else {
			id, ok = m.vocab[word]
		}
		if ok {
			return append(out, id)
		}
	}
	if ids, ok := m.cache.get(word); ok {
		return append(out, ids...)
	}
	var buf [64]uint32
	ids := buf[:0]
	if m.raw {
		for i := 0; i < len(word); i++ {
			ids = append(ids, m.byteTok[word[i]])
		}
	} else {
		ids = m.initialSymbols(word, ids)
	}
	ids = m.mergeAll(ids)
	if len(word) < maxCachedWord {
		m.cache.put(word, append([]uint32(nil), ids...))
	}
	return append(out, ids...)
}

// initialSymbols splits word into characters and maps them to ids, with
// continuing_subword_prefix, end_of_word_suffix, byte_fallback and unk/fuse_unk
// handled as in Rust's BPE::merge_word.
func (m *bpeModel) initialSymbols(word string, ids []uint32) []uint32 {
	unk := int64(noID)
	for i := 0; i < len(word); {
		_, size := utf8.DecodeRuneInString(word[i:])
		s := word[i : i+size]
		if i > 0 && m.prefix != "" {
			s = m.prefix + s
		}
		if i+size == len(word) && m.suffix != "" {
			s += m.suffix
		}
		i += size
		if id, ok := m.vocab[s]; ok {
			if unk != noID {
				ids = append(ids, uint32(unk))
				unk = noID
			}
			ids = append(ids, id)
			continue
		}
		if m.byteFallback {
			all := true
			for k := 0; k < len(s); k++ {
				if m.byteFB[s[k]] == noID {
					all = false
					break
				}
			}
			if all {
				// Rust adds the byte tokens without flushing a pending unk.
				for k := 0; k < len(s); k++ {
					ids = append(ids, uint32(m.byteFB[s[k]]))
				}
				continue
			}
		}
		if m.unkID != noID {
			if unk != noID && !m.fuseUnk {
				ids = append(ids, uint32(unk))
			}
			unk = m.unkID
		}
	}
	if unk != noID {
		ids = append(ids, uint32(unk))
	}
	return ids
}

// mergeAll applies merges by rank, lowest first and leftmost on ties, which is
// the order of the priority queue in Rust's Word::merge_all.
func (m *bpeModel) mergeAll(ids []uint32) []uint32 {
	if len(ids) < 2 {
		return ids
	}
	if len(ids) <= linearMergeLimit {
		return m.mergeLinear(ids)
	}
	return m.mergeHeap(ids)
}

const noRank = ^uint32(0)

func (m *bpeModel) rankOf(a, b uint32) (rank, newID uint32) {
	v, ok := m.merges[pairKey(a, b)]
	if !ok {
		return noRank, 0
	}
	return uint32(v >> 32), uint32(v)
}

func (m *bpeModel) mergeLinear(ids []uint32) []uint32 {
	var rbuf [linearMergeLimit]uint32
	var nbuf [linearMergeLimit]uint32
	ranks := rbuf[:len(ids)-1]
	news := nbuf[:len(ids)-1]
	for i := range ranks {
		ranks[i], news[i] = m.rankOf(ids[i], ids[i+1])
	}
	for {
		best, bi := noRank, -1
		for i, r := range ranks {
			if r < best {
				best, bi = r, i
			}
		}
		if bi < 0 {
			return ids
		}
		ids[bi] = news[bi]
		copy(ids[bi+1:], ids[bi+2:])
		ids = ids[:len(ids)-1]
		copy(ranks[bi:], ranks[bi+1:])
		ranks = ranks[:len(ranks)-1]
		copy(news[bi:], news[bi+1:])
		news = news[:len(news)-1]
		if bi > 0 {
			ranks[bi-1], news[bi-1] = m.rankOf(ids[bi-1], ids[bi])
		}
		if bi < len(ranks) {
			ranks[bi], news[bi] = m.rankOf(ids[bi], ids[bi+1])
		}
	}
}

// mergeHeap is the priority-queue version of mergeLinear for long words:
// symbols form a linked list and stale queue entries are skipped when their
// pair no longer has the queued rank.
func (m *bpeModel) mergeHeap(ids []uint32) []uint32 {
	n := len(ids)
	prev := make([]int32, n)
	next := make([]int32, n)
	alive := make([]bool, n)
	for i := range ids {
		prev[i] = int32(i - 1)
		next[i] = int32(i + 1)
		alive[i] = true
	}
	next[n-1] = -1
	h := make(mergeHeap, 0, n)
	for i := 0; i+1 < n; i++ {
		if r, _ := m.rankOf(ids[i], ids[i+1]); r != noRank {
			h = append(h, uint64(r)<<32|uint64(i))
		}
	}
	h.init()
	for len(h) > 0 {
		top := h.pop()
		rank, pos := uint32(top>>32), int32(uint32(top))
		if !alive[pos] || next[pos] < 0 {
			continue
		}
		nx := next[pos]
		r, newID := m.rankOf(ids[pos], ids[nx])
		if r != rank {
			continue
		}
		ids[pos] = newID
		alive[nx] = false
		next[pos] = next[nx]
		if next[pos] >= 0 {
			prev[next[pos]] = pos
		}
		if p := prev[pos]; p >= 0 {
			if r, _ := m.rankOf(ids[p], ids[pos]); r != noRank {
				h.push(uint64(r)<<32 | uint64(p))
			}
		}
		if q := next[pos]; q >= 0 {
			if r, _ := m.rankOf(ids[pos], ids[q]); r != noRank {
				h.push(uint64(r)<<32 | uint64(pos))
			}
		}
	}
	out := ids[:0]
	for i := int32(0); i >= 0; i = next[i] {
		out = append(out, ids[i])
	}
	return out
}

// mergeHeap is a binary min-heap of rank<<32|position.
type mergeHeap []uint64

func (h mergeHeap) init() {
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h *mergeHeap) push(v uint64) {
	*h = append(*h, v)
	s := *h
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 2
		if s[p] <= s[i] {
			break
		}
		s[p], s[i] = s[i], s[p]
		i = p
	}
}

func (h *mergeHeap) pop() uint64 {
	s := *h
	v := s[0]
	last := len(s) - 1
	s[0] = s[last]
	*h = s[:last]
	h.down(0)
	return v
}

func (h mergeHeap) down(i int) {
	n := len(h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		c := l
		if r := l + 1; r < n && h[r] < h[l] {
			c = r
		}
		if h[i] <= h[c] {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}

// tokenOf returns the string of id in the model vocabulary.
func (m *bpeModel) tokenOf(id uint32) (string, bool) {
	if int(id) < len(m.idToToken) && m.hasID[id] {
		return m.idToToken[id], true
	}
	return "", false
}
