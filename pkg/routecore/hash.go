package routecore

import (
	"encoding/binary"
	"errors"
	"fmt"

	"unsafe"

	"github.com/zeebo/xxh3"
)

// littleEndianHost reports whether uint32s are stored little-endian in memory.
var littleEndianHost = func() bool {
	x := uint32(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}()

// HashSeed is Dynamo's XXH3 seed for block hashing and for the sequence-hash chain
// (XXH3_SEED / CHAIN_XXH3_SEED in lib/kv-router/src/protocols.rs and lib/kv-hashing).
const HashSeed uint64 = 1337

// HashOptions are the per-request inputs that change block hashes.
type HashOptions struct {
	// LoraName salts every local hash when non-empty.
	LoraName string
	// CacheNamespace (the request's cache salt) salts every local hash when non-empty.
	CacheNamespace string
	// Eagle hashes windows of BlockSize+1 tokens at stride BlockSize, as Dynamo does
	// for workers whose runtime config sets enable_eagle.
	Eagle bool
	// BlockMmInfos holds the multimodal objects of block i at index i (nil for a
	// block without any, or when the slice is shorter); such a block hashes
	// its token bytes followed by the objects' mm_hashes (HashTokensWithMm).
	// Build it with RequestExtraInfo.ToBlockLevel or Multimodal.BlockInfos.
	BlockMmInfos []*BlockExtraInfo
}

// Block is one hashed full block of a request.
type Block struct {
	// Index is the block's position, from 0.
	Index int `json:"index"`
	// Start and End delimit the tokens hashed for this block (End exclusive). For
	// eagle windows End-Start is BlockSize+1.
	Start int `json:"start"`
	End   int `json:"end"`
	// LocalHash is XXH3(tokens as u32 little-endian, salt seed).
	LocalHash LocalBlockHash `json:"localHash"`
	// SequenceHash chains every block up to and including this one.
	SequenceHash SequenceHash `json:"sequenceHash"`
}

// ErrInvalidBlockSize is returned for a block size of 0.
var ErrInvalidBlockSize = errors.New("block size must be at least 1")

// SaltSeed returns the seed Dynamo uses for local block hashes given a LoRA name and
// a cache namespace (dynamo_kv_hashing::compute_salt_hash): 1337, plus XXH3(lora, 0),
// plus XXH3(namespace, 1), with wrapping u64 additions; empty strings count as absent.
func SaltSeed(loraName, cacheNamespace string) uint64 {
	seed := HashSeed
	if loraName != "" {
		seed += xxh3.HashString(loraName) // seed 0
	}
	if cacheNamespace != "" {
		seed += xxh3.HashStringSeed(cacheNamespace, 1)
	}
	return seed
}

// HashTokens returns XXH3-64 of the tokens encoded as u32 little-endian, with seed.
func HashTokens(tokens []uint32, seed uint64) LocalBlockHash {
	if littleEndianHost && len(tokens) > 0 {
		// The in-memory form of []uint32 is already the little-endian byte
		// string Dynamo hashes; hash it in place instead of copying.
		return LocalBlockHash(xxh3.HashSeed(unsafe.Slice((*byte)(unsafe.Pointer(&tokens[0])), 4*len(tokens)), seed))
	}
	return hashTokensPortable(tokens, seed)
}

// hashTokensPortable encodes the tokens explicitly; it is the path for big-endian
// hosts and the reference the in-place path is tested against.
func hashTokensPortable(tokens []uint32, seed uint64) LocalBlockHash {
	var stack [256]byte
	var buf []byte
	if n := 4 * len(tokens); n <= len(stack) {
		buf = stack[:n]
	} else {
		buf = make([]byte, n)
	}
	for i, t := range tokens {
		binary.LittleEndian.PutUint32(buf[4*i:], t)
	}
	return LocalBlockHash(xxh3.HashSeed(buf, seed))
}

// NextSequenceHash extends a sequence-hash chain by one block:
// XXH3(le64(parent) ‖ le64(local), 1337).
func NextSequenceHash(parent SequenceHash, local LocalBlockHash) SequenceHash {
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], uint64(parent))
	binary.LittleEndian.PutUint64(b[8:], uint64(local))
	return SequenceHash(xxh3.HashSeed(b[:], HashSeed))
}

// BlockCount returns how many full blocks ComputeBlocks will produce.
func BlockCount(tokenCount, blockSize int, eagle bool) int {
	if blockSize <= 0 || tokenCount <= 0 {
		return 0
	}
	if eagle {
		return (tokenCount - 1) / blockSize
	}
	return tokenCount / blockSize
}

// ComputeBlocks hashes the full blocks of tokens the way Dynamo's router does
// (compute_block_hash_for_seq followed by the sequence chain). The trailing partial
// block is ignored. It returns ErrInvalidBlockSize when blockSize < 1.
func ComputeBlocks(tokens []uint32, blockSize int, opts HashOptions) ([]Block, error) {
	if blockSize < 1 {
		return nil, ErrInvalidBlockSize
	}
	blocks := make([]Block, BlockCount(len(tokens), blockSize, opts.Eagle))
	width := blockSize
	if opts.Eagle {
		width++
	}
	eachBlock(tokens, blockSize, width, opts, func(i int, local LocalBlockHash, seq SequenceHash) {
		start := i * blockSize
		blocks[i] = Block{Index: i, Start: start, End: start + width, LocalHash: local, SequenceHash: seq}
	})
	return blocks, nil
}

// BlockHashes is ComputeBlocks' hashes alone: the sequence and local hash of
// each block, appended to seq and local (one allocation each when their
// capacity is BlockCount's; a replay hashes every request of a trace).
func BlockHashes(tokens []uint32, blockSize int, opts HashOptions, seq []SequenceHash, local []LocalBlockHash) ([]SequenceHash, []LocalBlockHash, error) {
	if blockSize < 1 {
		return seq, local, ErrInvalidBlockSize
	}
	width := blockSize
	if opts.Eagle {
		width++
	}
	eachBlock(tokens, blockSize, width, opts, func(_ int, l LocalBlockHash, s SequenceHash) {
		seq, local = append(seq, s), append(local, l)
	})
	return seq, local, nil
}

// eachBlock hashes tokens' full blocks in order, calling fn with each block's
// index, local hash and sequence hash.
func eachBlock(tokens []uint32, blockSize, width int, opts HashOptions, fn func(i int, local LocalBlockHash, seq SequenceHash)) {
	seed := SaltSeed(opts.LoraName, opts.CacheNamespace)
	var parent SequenceHash
	for i := range BlockCount(len(tokens), blockSize, opts.Eagle) {
		start := i * blockSize
		var local LocalBlockHash
		if i < len(opts.BlockMmInfos) && opts.BlockMmInfos[i] != nil {
			local = HashTokensWithMm(tokens[start:start+width], opts.BlockMmInfos[i], seed)
		} else {
			local = HashTokens(tokens[start:start+width], seed)
		}
		seq := SequenceHash(local)
		if i > 0 {
			seq = NextSequenceHash(parent, local)
		}
		fn(i, local, seq)
		parent = seq
	}
}

// LocalHashes returns just the local hashes of blocks, the radix index's query key.
func LocalHashes(blocks []Block) []LocalBlockHash {
	out := make([]LocalBlockHash, len(blocks))
	for i, b := range blocks {
		out[i] = b.LocalHash
	}
	return out
}

// ParseTokenID converts a decimal token id, rejecting values that do not fit u32.
func ParseTokenID(s string) (uint32, error) {
	var v uint64
	if s == "" {
		return 0, fmt.Errorf("empty token id")
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("token id %q is not a non-negative integer", s)
		}
		v = v*10 + uint64(c-'0')
		if v > 0xFFFFFFFF {
			return 0, fmt.Errorf("token id %q does not fit in 32 bits (ids must be < 4294967296)", s)
		}
	}
	return uint32(v), nil
}
