package routecore

import (
	"bytes"
	"math"
)

// evFastBlocks decodes a stored event's blocks array in one pass when it has
// the shape engines emit: objects holding only block_hash and tokens_hash as
// integer literals and optionally "mm_extra_info": null, keys without escapes,
// each key once. Anything else returns ok == false and the caller falls back to
// the general decoder, which defines the semantics and the error messages; the
// fast path only ever accepts inputs the general decoder decodes identically
// (FuzzFastBlocksMatchesGeneral checks this). A snapshot of a million blocks
// spends most of its decoding time here.
func evFastBlocks(raw []byte) ([]KvCacheStoredBlock, bool) {
	p := evScan{b: raw}
	p.ws()
	out, ok := p.blocks()
	p.ws()
	return out, ok && p.i == len(p.b)
}

// blocks reads a blocks array (see evFastBlocks) starting at p.i.
func (p *evScan) blocks() ([]KvCacheStoredBlock, bool) {
	if !p.eat('[') {
		return nil, false
	}
	out := make([]KvCacheStoredBlock, 0, bytes.Count(p.b[p.i:], []byte(`"tokens_hash"`)))
	p.ws()
	if p.eat(']') {
		return out, true
	}
	for {
		p.ws()
		if !p.eat('{') {
			return nil, false
		}
		var blk KvCacheStoredBlock
		var haveB, haveT, haveM bool
		for {
			p.ws()
			key, ok := p.key()
			if !ok {
				return nil, false
			}
			p.ws()
			if !p.eat(':') {
				return nil, false
			}
			p.ws()
			switch string(key) {
			case "block_hash":
				v, ok := p.u64()
				if !ok || haveB {
					return nil, false
				}
				blk.BlockHash, haveB = SequenceHash(v), true
			case "tokens_hash":
				v, ok := p.u64()
				if !ok || haveT {
					return nil, false
				}
				blk.TokensHash, haveT = LocalBlockHash(v), true
			case "mm_extra_info":
				if haveM || !p.null() {
					return nil, false
				}
				haveM = true
			default:
				return nil, false
			}
			p.ws()
			if p.eat(',') {
				continue
			}
			if p.eat('}') {
				break
			}
			return nil, false
		}
		if !haveB || !haveT {
			return nil, false
		}
		out = append(out, blk)
		p.ws()
		if p.eat(',') {
			continue
		}
		if p.eat(']') {
			return out, true
		}
		return nil, false
	}
}

// evFastEvent decodes a whole RouterEvent in one pass when it has the shape
// publishers emit: the documented keys only, each once, without escapes;
// integers as plain literals; blocks as evFastBlocks reads them. Anything else
// (an unknown or repeated key, a string id, an escape) returns ok == false and
// the general decoder, which defines the semantics and the errors, decides.
// FuzzFastEventMatchesGeneral checks that both agree on what the fast path takes.
func evFastEvent(raw []byte) (RouterEvent, bool) {
	var ev RouterEvent
	p := evScan{b: raw}
	p.ws()
	var haveW, haveT, haveE bool
	ok := p.object(func(key []byte) bool {
		switch string(key) {
		case "worker_id":
			v, ok := p.u64NonNeg()
			if !ok || haveW {
				return false
			}
			ev.WorkerID, haveW = WorkerID(v), true
			return true
		case "storage_tier":
			s, ok := p.key() // a string without escapes
			if !ok || haveT {
				return false
			}
			t, err := ParseStorageTier(string(s))
			ev.StorageTier, haveT = t, true
			return err == nil
		case "event":
			if haveE {
				return false
			}
			haveE = true
			return p.event(&ev.Event)
		}
		return false
	})
	p.ws()
	return ev, ok && haveW && haveE && p.i == len(p.b)
}

// object reads an object at p.i, calling member with p.i at each value; member
// must consume the value and return false to give up.
func (p *evScan) object(member func(key []byte) bool) bool {
	if !p.eat('{') {
		return false
	}
	p.ws()
	if p.eat('}') {
		return true
	}
	for {
		p.ws()
		key, ok := p.key()
		if !ok {
			return false
		}
		p.ws()
		if !p.eat(':') {
			return false
		}
		p.ws()
		if !member(key) {
			return false
		}
		p.ws()
		if p.eat(',') {
			continue
		}
		return p.eat('}')
	}
}

func (p *evScan) event(e *KvCacheEvent) bool {
	var haveID, haveRank, haveData bool
	ok := p.object(func(key []byte) bool {
		switch string(key) {
		case "event_id":
			v, ok := p.u64NonNeg()
			if !ok || haveID {
				return false
			}
			e.EventID, haveID = v, true
			return true
		case "dp_rank":
			v, ok := p.u64NonNeg()
			if !ok || haveRank || v > math.MaxUint32 {
				return false
			}
			e.DpRank, haveRank = uint32(v), true
			return true
		case "data":
			if haveData {
				return false
			}
			haveData = true
			return p.data(&e.Data)
		}
		return false
	})
	return ok && haveID && haveData
}

func (p *evScan) data(d *KvCacheEventData) bool {
	if p.i < len(p.b) && p.b[p.i] == '"' {
		s, ok := p.key()
		d.Cleared = ok && string(s) == "cleared"
		return d.Cleared
	}
	n := 0
	ok := p.object(func(key []byte) bool {
		n++
		switch string(key) {
		case "stored":
			d.Stored = new(KvCacheStoreData)
			return p.stored(d.Stored)
		case "removed":
			d.Removed = new(KvCacheRemoveData)
			return p.removed(d.Removed)
		case "cleared":
			d.Cleared = true
			return p.null()
		}
		return false
	})
	return ok && n == 1
}

func (p *evScan) stored(s *KvCacheStoreData) bool {
	var haveP, haveS, haveB bool
	ok := p.object(func(key []byte) bool {
		switch string(key) {
		case "parent_hash":
			if haveP {
				return false
			}
			haveP = true
			if p.null() {
				return true
			}
			v, ok := p.u64()
			h := SequenceHash(v)
			s.ParentHash = &h
			return ok
		case "start_position":
			if haveS {
				return false
			}
			haveS = true
			if p.null() {
				return true
			}
			v, ok := p.u64NonNeg()
			s.StartPosition = &v
			return ok
		case "blocks":
			if haveB {
				return false
			}
			haveB = true
			var ok bool
			s.Blocks, ok = p.blocks()
			return ok
		}
		return false
	})
	return ok && haveB
}

func (p *evScan) removed(r *KvCacheRemoveData) bool {
	have := false
	ok := p.object(func(key []byte) bool {
		if string(key) != "block_hashes" || have {
			return false
		}
		have = true
		if !p.eat('[') {
			return false
		}
		r.BlockHashes = []SequenceHash{}
		p.ws()
		if p.eat(']') {
			return true
		}
		for {
			p.ws()
			v, ok := p.u64()
			if !ok {
				return false
			}
			r.BlockHashes = append(r.BlockHashes, SequenceHash(v))
			p.ws()
			if p.eat(',') {
				continue
			}
			return p.eat(']')
		}
	})
	return ok && have
}

// u64NonNeg is u64 without the negative-literal reinterpretation.
func (p *evScan) u64NonNeg() (uint64, bool) {
	if p.i < len(p.b) && p.b[p.i] == '-' {
		return 0, false
	}
	return p.u64()
}

// evScan is a minimal JSON scanner for evFastBlocks and evFastEvent.
type evScan struct {
	b []byte
	i int
}

func (p *evScan) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *evScan) eat(c byte) bool {
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

// key reads a string without escapes; the result aliases the input.
func (p *evScan) key() ([]byte, bool) {
	if !p.eat('"') {
		return nil, false
	}
	start := p.i
	for p.i < len(p.b) {
		switch c := p.b[p.i]; {
		case c == '"':
			k := p.b[start:p.i]
			p.i++
			return k, true
		case c == '\\' || c < 0x20:
			return nil, false
		}
		p.i++
	}
	return nil, false
}

// u64 reads an integer literal with evParseU64's rules (negative i64 values
// keep their bit pattern), without allocating.
func (p *evScan) u64() (uint64, bool) {
	neg := false
	if p.i < len(p.b) && p.b[p.i] == '-' {
		neg = true
		p.i++
	}
	digits := p.i
	var v uint64
	overflow := false
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		d := uint64(p.b[p.i] - '0')
		if v > (math.MaxUint64-d)/10 {
			overflow = true
		}
		v = v*10 + d
		p.i++
	}
	if p.i == digits || (p.b[digits] == '0' && p.i-digits > 1) || overflow {
		return 0, false
	}
	if p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r', ',', '}', ']':
		default:
			return 0, false
		}
	}
	if neg {
		// strconv.ParseInt: the magnitude must fit an int64 (−2^63 included).
		if v > 1<<63 {
			return 0, false
		}
		return -v, true
	}
	return v, true
}

func (p *evScan) null() bool {
	if bytes.HasPrefix(p.b[p.i:], []byte("null")) {
		p.i += 4
		return true
	}
	return false
}
