package routecore

import (
	"bytes"
	"strconv"
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
	if !p.eat('[') {
		return nil, false
	}
	out := make([]KvCacheStoredBlock, 0, bytes.Count(raw, []byte(`"tokens_hash"`)))
	p.ws()
	if p.eat(']') {
		p.ws()
		return out, p.i == len(p.b)
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
			switch key {
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
			break
		}
		return nil, false
	}
	p.ws()
	return out, p.i == len(p.b)
}

// evScan is a minimal JSON scanner for evFastBlocks.
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

// key reads a string without escapes.
func (p *evScan) key() (string, bool) {
	if !p.eat('"') {
		return "", false
	}
	start := p.i
	for p.i < len(p.b) {
		switch c := p.b[p.i]; {
		case c == '"':
			s := string(p.b[start:p.i])
			p.i++
			return s, true
		case c == '\\' || c < 0x20:
			return "", false
		}
		p.i++
	}
	return "", false
}

// u64 reads an integer literal with evParseU64's rules (negative i64 values
// keep their bit pattern).
func (p *evScan) u64() (uint64, bool) {
	start := p.i
	if p.i < len(p.b) && p.b[p.i] == '-' {
		p.i++
	}
	digits := p.i
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		p.i++
	}
	if p.i == digits || (p.b[digits] == '0' && p.i-digits > 1) {
		return 0, false
	}
	if p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r', ',', '}':
		default:
			return 0, false
		}
	}
	s := string(p.b[start:p.i])
	if s[0] == '-' {
		v, err := strconv.ParseInt(s, 10, 64)
		return uint64(v), err == nil
	}
	v, err := strconv.ParseUint(s, 10, 64)
	return v, err == nil
}

func (p *evScan) null() bool {
	if bytes.HasPrefix(p.b[p.i:], []byte("null")) {
		p.i += 4
		return true
	}
	return false
}
