package routecore

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/zeebo/xxh3"
)

// Multimodal block hashes, as in Dynamo's lib/kv-router/src/protocols.rs
// (compute_block_hash_for_seq with BlockHashOptions.block_mm_infos,
// RequestExtraInfo::to_block_level, hash_mm_identifier, pad_value_for_mm_hash).
//
// A request carrying images (or other multimodal objects) names each object
// by a u64 mm_hash and the token ranges of its placeholder. A block whose
// tokens hold part of a placeholder hashes its token bytes followed by the
// mm_hash of every object it holds, sorted ascending, each as a little-endian
// u64, with the same seed as a text block. Blocks with no multimodal object
// hash as text, so two requests with the same placeholder tokens but different
// images share only the blocks before the first image.

// TokenRange is a half-open range [Start, End) of token positions; it is
// upstream's (start_offset, end_offset) tuple and decodes from and encodes to a
// JSON pair [start, end].
type TokenRange struct {
	Start, End int
}

// MarshalJSON encodes the range as [start, end].
func (r TokenRange) MarshalJSON() ([]byte, error) {
	return json.Marshal([2]int{r.Start, r.End})
}

// UnmarshalJSON decodes [start, end].
func (r *TokenRange) UnmarshalJSON(b []byte) error {
	var p [2]int
	if err := json.Unmarshal(b, &p); err != nil {
		return fmt.Errorf("a token range is a pair [start, end]: %w", err)
	}
	if p[0] < 0 || p[1] < 0 {
		return fmt.Errorf("token range [%d, %d] has a negative offset", p[0], p[1])
	}
	r.Start, r.End = p[0], p[1]
	return nil
}

// MmHash is a multimodal object's u64 hash. It decodes from a JSON number
// (upstream's serde form, read digit for digit, never through float64) or a
// decimal string (the form this tool prints).
type MmHash uint64

// UnmarshalJSON accepts 42 or "42".
func (h *MmHash) UnmarshalJSON(b []byte) error {
	s := string(bytes.TrimSpace(b))
	if unq, err := strconv.Unquote(s); err == nil {
		s = unq
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return fmt.Errorf("mm_hash %s is not an unsigned 64-bit integer", string(b))
	}
	*h = MmHash(v)
	return nil
}

// BlockMmObjectInfo is one multimodal object within a block (upstream
// BlockMmObjectInfo): its hash and where its placeholder lies in the block
// (offsets relative to the block start). Only MmHash enters the block hash.
type BlockMmObjectInfo struct {
	MmHash  MmHash       `json:"mm_hash"`
	Offsets []TokenRange `json:"offsets"`
}

// BlockExtraInfo is the multimodal metadata of one block (upstream BlockExtraInfo).
type BlockExtraInfo struct {
	MmObjects []BlockMmObjectInfo `json:"mm_objects"`
}

// RequestMmObjectInfo is one multimodal object of a request (upstream
// RequestMmObjectInfo): its hash and the ranges of its placeholder tokens in
// the whole request.
type RequestMmObjectInfo struct {
	MmHash  MmHash       `json:"mm_hash"`
	Offsets []TokenRange `json:"offsets"`
}

// RequestExtraInfo is a request's multimodal metadata (upstream RequestExtraInfo).
type RequestExtraInfo struct {
	MmObjects []RequestMmObjectInfo `json:"mm_objects"`
}

// ToBlockLevel splits request-level placeholder ranges into per-block metadata,
// exactly as upstream RequestExtraInfo::to_block_level: ceil(totalTokens /
// blockSize) entries (nil for a block with no object); a range adds its object
// to every block it intersects, with the intersection relative to the block;
// an object already in a block (same mm_hash) gains the range instead of
// appearing twice. Ranges past totalTokens are clipped or ignored. It returns
// nil when blockSize < 1 or totalTokens < 1 (upstream divides by zero or
// underflows there).
func (r RequestExtraInfo) ToBlockLevel(blockSize, totalTokens int) []*BlockExtraInfo {
	if blockSize < 1 || totalTokens < 1 {
		return nil
	}
	numBlocks := (totalTokens + blockSize - 1) / blockSize
	infos := make([]*BlockExtraInfo, numBlocks)
	for _, obj := range r.MmObjects {
		for _, rg := range obj.Offsets {
			startBlock := rg.Start / blockSize
			endBlock := 0
			if rg.End > 0 {
				endBlock = (rg.End - 1) / blockSize
			}
			upper := min(endBlock, numBlocks-1) + 1
			for b := startBlock; b < upper; b++ {
				blockStart := b * blockSize
				blockEnd := min((b+1)*blockSize, totalTokens)
				localStart := max(rg.Start, blockStart) - blockStart
				localEnd := min(rg.End, blockEnd) - blockStart
				if localStart >= localEnd {
					continue
				}
				if infos[b] == nil {
					infos[b] = &BlockExtraInfo{}
				}
				local := TokenRange{Start: localStart, End: localEnd}
				if i := slices.IndexFunc(infos[b].MmObjects, func(o BlockMmObjectInfo) bool { return o.MmHash == obj.MmHash }); i >= 0 {
					infos[b].MmObjects[i].Offsets = append(infos[b].MmObjects[i].Offsets, local)
				} else {
					infos[b].MmObjects = append(infos[b].MmObjects, BlockMmObjectInfo{MmHash: obj.MmHash, Offsets: []TokenRange{local}})
				}
			}
		}
	}
	return infos
}

// SortedMmHashes returns the block's mm_hash values in the order they are
// appended to its bytes: ascending, duplicates kept (sort_unstable).
func (b *BlockExtraInfo) SortedMmHashes() []uint64 {
	if b == nil {
		return nil
	}
	out := make([]uint64, len(b.MmObjects))
	for i, o := range b.MmObjects {
		out[i] = uint64(o.MmHash)
	}
	slices.Sort(out)
	return out
}

// HashTokensWithMm is the multimodal path of compute_block_hash_for_seq:
// XXH3-64(tokens as u32 LE ‖ each of the block's mm_hashes sorted ascending as
// u64 LE, seed).
func HashTokensWithMm(tokens []uint32, info *BlockExtraInfo, seed uint64) LocalBlockHash {
	hashes := info.SortedMmHashes()
	buf := make([]byte, 4*len(tokens)+8*len(hashes))
	for i, t := range tokens {
		binary.LittleEndian.PutUint32(buf[4*i:], t)
	}
	off := 4 * len(tokens)
	for i, h := range hashes {
		binary.LittleEndian.PutUint64(buf[off+8*i:], h)
	}
	return LocalBlockHash(xxh3.HashSeed(buf, seed))
}

// MmPadShiftValue and MmPadHashMask are sglang's MultimodalItem._compute_pad_value
// constants (upstream MM_PAD_SHIFT_VALUE, MM_PAD_HASH_MASK).
const (
	MmPadShiftValue uint64 = 1_000_000
	MmPadHashMask   uint64 = 1<<30 - 1
)

// PadValueForMmHash is upstream pad_value_for_mm_hash: the token id sglang
// writes over an object's placeholder, 1,000,000 plus the low 30 bits of the
// mm_hash (truncated to u32). It rewrites tokens; it does not enter the
// block-hash bytes.
func PadValueForMmHash(mmHash uint64) uint32 {
	return uint32(MmPadShiftValue + (mmHash & MmPadHashMask))
}

// HashMmIdentifier is upstream hash_mm_identifier: the routing mm_hash of a
// multimodal identifier. vLLM's 64-hex-digit digest maps to its first 16 hex
// digits; any other non-empty identifier to XXH3-64 (seed 0) of its bytes. An
// empty identifier has none (ok false).
func HashMmIdentifier(identifier string) (uint64, bool) {
	if identifier == "" {
		return 0, false
	}
	if len(identifier) == 64 && isHex(identifier) {
		v, err := strconv.ParseUint(identifier[:16], 16, 64)
		return v, err == nil
	}
	return xxh3.HashString(identifier), true
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if !strings.ContainsRune("0123456789abcdefABCDEF", rune(s[i])) {
			return false
		}
	}
	return true
}

// ErrNoMultimodal is returned by ParseMultimodalJSON for an empty document.
var ErrNoMultimodal = errors.New("no multimodal objects")

// Multimodal is a request's multimodal metadata as a user gives it: either
// request-level objects (placeholder ranges in the whole request) or
// per-block infos (upstream's block_mm_infos, as in mm_routing_info).
type Multimodal struct {
	Request *RequestExtraInfo
	Blocks  []*BlockExtraInfo
}

// IsZero reports whether no multimodal metadata is given.
func (m Multimodal) IsZero() bool {
	return (m.Request == nil || len(m.Request.MmObjects) == 0) && len(m.Blocks) == 0
}

// BlockInfos returns the per-block metadata for a request of totalTokens
// tokens hashed in blocks of blockSize.
func (m Multimodal) BlockInfos(blockSize, totalTokens int) []*BlockExtraInfo {
	if m.Blocks != nil {
		return m.Blocks
	}
	if m.Request == nil {
		return nil
	}
	return m.Request.ToBlockLevel(blockSize, totalTokens)
}

// ParseMultimodalJSON decodes upstream's serde shapes: an object
// {"mm_objects":[{"mm_hash":N,"offsets":[[start,end],…]},…]} (RequestExtraInfo,
// offsets in the whole request), or an array with one entry per block, null or
// {"mm_objects":[…]} with offsets in the block (block_mm_infos).
func ParseMultimodalJSON(data []byte) (Multimodal, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return Multimodal{}, ErrNoMultimodal
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.DisallowUnknownFields()
	var m Multimodal
	var err error
	switch trimmed[0] {
	case '[':
		var blocks []*BlockExtraInfo
		if err = dec.Decode(&blocks); err == nil {
			if blocks == nil {
				blocks = []*BlockExtraInfo{}
			}
			m.Blocks = blocks
		}
	case '{':
		var req RequestExtraInfo
		if err = dec.Decode(&req); err == nil {
			m.Request = &req
		}
	default:
		return Multimodal{}, errors.New(`expected {"mm_objects":[{"mm_hash":N,"offsets":[[start,end]]}]} or an array of per-block {"mm_objects":[…]} or null`)
	}
	if err != nil {
		return Multimodal{}, fmt.Errorf("parse multimodal objects: %w", err)
	}
	if dec.More() {
		return Multimodal{}, errors.New("parse multimodal objects: trailing data after the JSON value")
	}
	for _, o := range m.objects() {
		for _, r := range o {
			if r.End <= r.Start {
				return Multimodal{}, fmt.Errorf("token range [%d, %d] is empty (ranges are [start, end) with end > start)", r.Start, r.End)
			}
		}
	}
	return m, nil
}

// objects lists every object's ranges, for validation.
func (m Multimodal) objects() [][]TokenRange {
	var out [][]TokenRange
	if m.Request != nil {
		for _, o := range m.Request.MmObjects {
			out = append(out, o.Offsets)
		}
	}
	for _, b := range m.Blocks {
		if b != nil {
			for _, o := range b.MmObjects {
				out = append(out, o.Offsets)
			}
		}
	}
	return out
}

// ParseMmHash reads a multimodal object's hash: a decimal u64, 0x followed by
// up to 16 hex digits, a 64-hex-digit digest (vLLM's mm_hash, mapped by
// hash_mm_identifier to its first 16 hex digits), or id:IDENTIFIER (any
// identifier, mapped by hash_mm_identifier).
func ParseMmHash(s string) (uint64, error) {
	if id, ok := strings.CutPrefix(s, "id:"); ok {
		h, ok := HashMmIdentifier(id)
		if !ok {
			return 0, errors.New("id: needs a non-empty identifier")
		}
		return h, nil
	}
	if len(s) == 64 && isHex(s) {
		h, _ := HashMmIdentifier(s)
		return h, nil
	}
	if hx, ok := strings.CutPrefix(strings.ToLower(s), "0x"); ok {
		v, err := strconv.ParseUint(hx, 16, 64)
		if err != nil || !isHex(hx) {
			return 0, fmt.Errorf("%q is not a 64-bit hex number", s)
		}
		return v, nil
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil || !isDigits(s) {
		return 0, fmt.Errorf("%q is not an mm_hash: give a decimal u64, 0xHEX, a 64-hex-digit digest or id:IDENTIFIER", s)
	}
	return v, nil
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// ParseMmObject reads one HASH@START:END[,START:END…] argument: an object's
// hash and the half-open token ranges of its placeholder in the request.
func ParseMmObject(s string) (RequestMmObjectInfo, error) {
	hashPart, ranges, ok := strings.Cut(s, "@")
	if !ok || hashPart == "" || ranges == "" {
		return RequestMmObjectInfo{}, fmt.Errorf("%q: expected HASH@START:END (the placeholder's tokens, end exclusive), e.g. 42@4:12", s)
	}
	h, err := ParseMmHash(hashPart)
	if err != nil {
		return RequestMmObjectInfo{}, err
	}
	obj := RequestMmObjectInfo{MmHash: MmHash(h)}
	for _, part := range strings.Split(ranges, ",") {
		a, b, ok := strings.Cut(strings.TrimSpace(part), ":")
		start, err1 := strconv.Atoi(a)
		end, err2 := strconv.Atoi(b)
		if !ok || err1 != nil || err2 != nil || start < 0 || end < 0 || !isDigits(a) || !isDigits(b) {
			return RequestMmObjectInfo{}, fmt.Errorf("%q: range %q is not START:END with non-negative token positions", s, part)
		}
		if end <= start {
			return RequestMmObjectInfo{}, fmt.Errorf("%q: range %d:%d is empty (END is exclusive and must be greater than START)", s, start, end)
		}
		obj.Offsets = append(obj.Offsets, TokenRange{Start: start, End: end})
	}
	return obj, nil
}

// MaxEnd returns the largest placeholder end, for checking it against the
// request's token count.
func (m Multimodal) MaxEnd() int {
	end := 0
	if m.Request != nil {
		for _, o := range m.Request.MmObjects {
			for _, r := range o.Offsets {
				end = max(end, r.End)
			}
		}
	}
	return end
}

// MmScheme is how a request's multimodal objects enter its block hashes.
type MmScheme string

const (
	// MmSchemePadValue is the frontend's scheme since Dynamo #10328 (1.3):
	// every placeholder position of an object is replaced by
	// PadValueForMmHash(mm_hash) in the routing tokens (routing_token_ids),
	// which are zero-padded to a whole number of blocks, and block_mm_infos
	// is empty, so the blocks hash as text (BuildPadRouting). The kv-router
	// normalizes vLLM and TensorRT-LLM stored events to the same tokens
	// (zmq_wire normalize_mm_token_runs, create_stored_block_from_parts).
	MmSchemePadValue MmScheme = "pad-value"
	// MmSchemeMmHash is the scheme before #10328: the tokens as given, and a
	// block holding part of a placeholder hashes its token bytes followed by
	// the objects' mm_hashes (HashTokensWithMm, block_mm_infos). A request or
	// event that carries block_mm_infos explicitly still hashes this way.
	MmSchemeMmHash MmScheme = "mm-hash"
)

// PadRouting is a request's routing view under MmSchemePadValue, as
// upstream's MmRoutingInfo built by gather_mm_exact_routing_info
// (lib/llm/src/preprocessor.rs).
type PadRouting struct {
	// Tokens are routing_token_ids: the request's tokens with every
	// placeholder position filled with its object's pad value, then padded
	// with token 0 to a whole multiple of the block size. The router hashes
	// all of them (the padded tail is a full block) and takes their count as
	// the request's ISL (KvRouter::find_best_match_details: isl_tokens =
	// tokens.len()).
	Tokens []uint32
	// PromptLen is expanded_prompt_len: the count before the zero padding.
	// Upstream uses it only for the max_tokens default and token budget, not
	// for routing.
	PromptLen int
}

// Padded is the number of zero tokens appended to fill the last block.
func (p PadRouting) Padded() int { return len(p.Tokens) - p.PromptLen }

// BuildPadRouting builds the pad-value routing tokens of a request from its
// tokens and request-level objects: each object's ranges are filled with
// PadValueForMmHash(mm_hash) (ranges past the last token are clipped), then
// token 0 pads the sequence to a whole multiple of blockSize
// (expanded.resize(total_tokens, 0)). blockSize < 1 pads nothing. Ranges of
// two different objects may not overlap (upstream's /generate projection
// rejects them, and the chat path builds them disjoint); tokens is not
// modified.
func BuildPadRouting(tokens []uint32, req *RequestExtraInfo, blockSize int) (PadRouting, error) {
	out := slices.Clone(tokens)
	if req != nil {
		if err := checkPadOverlaps(req); err != nil {
			return PadRouting{}, err
		}
		for _, o := range req.MmObjects {
			pad := PadValueForMmHash(uint64(o.MmHash))
			for _, r := range o.Offsets {
				end := min(r.End, len(out))
				for i := r.Start; i < end; i++ {
					out[i] = pad
				}
			}
		}
	}
	n := len(out)
	if blockSize > 0 && n%blockSize != 0 {
		out = append(out, make([]uint32, blockSize-n%blockSize)...)
	}
	return PadRouting{Tokens: out, PromptLen: n}, nil
}

// checkPadOverlaps rejects overlapping ranges of different objects, whose
// positions would hold whichever pad value was written last.
func checkPadOverlaps(req *RequestExtraInfo) error {
	type span struct {
		TokenRange
		hash MmHash
	}
	var spans []span
	for _, o := range req.MmObjects {
		for _, r := range o.Offsets {
			spans = append(spans, span{r, o.MmHash})
		}
	}
	slices.SortStableFunc(spans, func(a, b span) int { return a.Start - b.Start })
	var cover *span
	for i := range spans {
		s := &spans[i]
		if cover != nil && s.Start < cover.End && s.hash != cover.hash {
			return fmt.Errorf("multimodal placeholders overlap: [%d, %d) of mm_hash %d and [%d, %d) of mm_hash %d (each position holds one object's pad value)",
				cover.Start, cover.End, cover.hash, s.Start, s.End, s.hash)
		}
		if cover == nil || s.End > cover.End {
			cover = s
		}
	}
	return nil
}

// PadObjectsIn lists the objects whose placeholders fill some of the
// positions [start, end) with their pad value, in order of their first
// position there, each once.
func (r *RequestExtraInfo) PadObjectsIn(start, end int) []MmHash {
	if r == nil {
		return nil
	}
	type hit struct {
		pos  int
		hash MmHash
	}
	var hits []hit
	for _, o := range r.MmObjects {
		first := -1
		for _, rg := range o.Offsets {
			lo, hi := max(rg.Start, start), min(rg.End, end)
			if lo < hi && (first < 0 || lo < first) {
				first = lo
			}
		}
		if first >= 0 {
			hits = append(hits, hit{first, o.MmHash})
		}
	}
	slices.SortStableFunc(hits, func(a, b hit) int { return a.pos - b.pos })
	var out []MmHash
	for _, h := range hits {
		if !slices.Contains(out, h.hash) {
			out = append(out, h.hash)
		}
	}
	return out
}

// MmRouting is what the router hashes for a request under an MmScheme
// (Multimodal.Routing).
type MmRouting struct {
	// Scheme is the scheme applied; "" for a text request.
	Scheme MmScheme
	// Tokens are the tokens hashed: the request's own, or under
	// MmSchemePadValue its routing tokens (BuildPadRouting). len(Tokens) is the
	// ISL the router routes with.
	Tokens []uint32
	// PromptLen is the request's token count before any zero padding.
	PromptLen int
	// BlockMmInfos are the per-block objects appended under MmSchemeMmHash
	// (HashOptions.BlockMmInfos); nil otherwise.
	BlockMmInfos []*BlockExtraInfo
	// Request are the objects whose pad values fill Tokens under
	// MmSchemePadValue; nil otherwise.
	Request *RequestExtraInfo
}

// Routing applies scheme to a request of tokens hashed in blocks of
// blockSize. Per-block input (Blocks, upstream's block_mm_infos as a request
// or an event carries it) always hashes with MmSchemeMmHash: the router and
// the kv-router's event normalization append an explicit block_mm_infos as
// given. Request-level objects follow scheme. Without objects the tokens
// hash as text under either scheme (the frontend builds no routing tokens).
func (m Multimodal) Routing(tokens []uint32, blockSize int, scheme MmScheme) (MmRouting, error) {
	out := MmRouting{Tokens: tokens, PromptLen: len(tokens)}
	switch {
	case m.IsZero():
		return out, nil
	case m.Blocks != nil || scheme != MmSchemePadValue:
		out.Scheme, out.BlockMmInfos = MmSchemeMmHash, m.BlockInfos(blockSize, len(tokens))
		return out, nil
	}
	pr, err := BuildPadRouting(tokens, m.Request, blockSize)
	if err != nil {
		return MmRouting{}, err
	}
	out.Scheme, out.Tokens, out.PromptLen, out.Request = MmSchemePadValue, pr.Tokens, pr.PromptLen, m.Request
	return out, nil
}

// HashOptions returns opts with the per-block objects of the mm-hash scheme.
func (r MmRouting) HashOptions(opts HashOptions) HashOptions {
	opts.BlockMmInfos = r.BlockMmInfos
	return opts
}

// BlockObjects says what a hashed block holds of the request's objects: the
// mm_hashes appended to its bytes (mm-hash scheme, sorted), or the objects
// whose pad values are among its tokens and the count of zero tokens padding
// it to a whole block (pad-value scheme).
func (r MmRouting) BlockObjects(b Block) (appended []uint64, pads []MmHash, zeroPadded int) {
	switch r.Scheme {
	case MmSchemeMmHash:
		if b.Index < len(r.BlockMmInfos) {
			appended = r.BlockMmInfos[b.Index].SortedMmHashes()
		}
	case MmSchemePadValue:
		end := min(b.End, len(r.Tokens))
		pads = r.Request.PadObjectsIn(b.Start, min(end, r.PromptLen))
		zeroPadded = max(0, end-max(b.Start, r.PromptLen))
	}
	return appended, pads, zeroPadded
}
