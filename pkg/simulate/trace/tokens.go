package trace

// VocabBits is the width of the token ids the readers synthesize: every
// token that stands for a hash id, a request's unique tail or a synthetic
// prompt lies in [0, 1<<VocabBits). The ids only feed the router's block
// hashes, so they need not be a real model's vocabulary.
const VocabBits = 17

// The mapping from a hash id to its block of tokens is
//
//	base     = mix64(id ^ domainHashID)
//	token[j] = mix64(base + (j+1)·golden) >> (64 - VocabBits)    for j in [0, blockSize)
//
// with mix64 the SplitMix64 finalizer and golden = 0x9E3779B97F4A7C15. It is
// part of the package's contract: TestTokensForHashIDsPinned pins it, and a
// change alters every replayed trace's block hashes.
const (
	golden       = 0x9E3779B97F4A7C15
	domainHashID = 0x6D6F6F6E63616B65 // "mooncake"
	domainTail   = 0x7461696C746F6B6E // "tailtokn": tokens unique to one request
	domainOutput = 0x6F7574707574746B // "outputtk": a turn's stand-in output (mooncake-delta)
	domainPrefix = 0x7072656669787368 // "prefixsh": synthetic shared prefixes
	domainUnique = 0x756E697175657379 // "uniquesy": synthetic per-request tokens
)

// mix64 is the SplitMix64 output function (Steele, Lea and Flood, 2014).
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xBF58476D1CE4E5B9
	x ^= x >> 27
	x *= 0x94D049BB133111EB
	x ^= x >> 31
	return x
}

// appendStream appends n tokens of the stream that base selects.
func appendStream(dst []uint32, base uint64, from, n int) []uint32 {
	for j := from; j < from+n; j++ {
		dst = append(dst, uint32(mix64(base+uint64(j+1)*golden)>>(64-VocabBits)))
	}
	return dst
}

// TokensForHashIDs appends to dst the prompt tokens that a row's hash ids
// stand for and returns the extended slice: hash id i covers tokens
// [i·traceBlockSize, (i+1)·traceBlockSize), each a function of the id and the
// position in its block only, so two rows that share their first k hash ids
// share their first k·traceBlockSize tokens, and hence every router block
// (of any router block size) that lies inside them. The last block is cut at
// inputLen. When inputLen exceeds len(ids)·traceBlockSize only the covered
// tokens are appended: the readers fill the rest with tokens unique to the
// request (a Mooncake row's hash ids cover whole blocks, so this happens only
// in traces that list fewer ids than their length needs). A non-positive
// traceBlockSize or inputLen appends nothing.
func TokensForHashIDs(ids []uint64, inputLen, traceBlockSize int, dst []uint32) []uint32 {
	if traceBlockSize <= 0 || inputLen <= 0 {
		return dst
	}
	for _, id := range ids {
		if inputLen <= 0 {
			break
		}
		n := min(traceBlockSize, inputLen)
		dst = appendStream(dst, mix64(id^domainHashID), 0, n)
		inputLen -= n
	}
	return dst
}

// tailBase selects the stream of tokens unique to one request, from values
// that identify it within its trace (its line and timestamp) and a domain.
func tailBase(domain uint64, line int, at int64) uint64 {
	return mix64(mix64(domain^uint64(line)) ^ uint64(at))
}

// segment is a run of prompt tokens: the tokens of ids cut at n, then, when
// the ids cover fewer than n tokens, the stream tail continues them.
type segment struct {
	ids  []uint64
	n    int
	tail uint64
}

// appendSegment appends the segment's n tokens.
func appendSegment(dst []uint32, s segment, traceBlockSize int) []uint32 {
	before := len(dst)
	dst = TokensForHashIDs(s.ids, s.n, traceBlockSize, dst)
	covered := len(dst) - before
	return appendStream(dst, s.tail, covered, s.n-covered)
}
