package explain

import (
	"fmt"
	"strconv"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
)

// blockMmInfos returns the request's multimodal objects per block of bs
// tokens, as the router hashes them (compute_block_hash_for_seq with
// block_mm_infos): a block holding part of a placeholder hashes its tokens
// followed by the objects' mm_hashes. A request-level range that ends past the
// last token is an input error (the router would clip it silently).
func (r Request) blockMmInfos(bs int) ([]*routecore.BlockExtraInfo, error) {
	if r.Multimodal.IsZero() {
		return nil, nil
	}
	if end := r.Multimodal.MaxEnd(); end > len(r.Tokens) {
		return nil, inputErr("Give the placeholder's token positions in the request's token ids (START:END, END exclusive).",
			"a multimodal placeholder ends at token %d but the request has %d tokens", end, len(r.Tokens))
	}
	return r.Multimodal.BlockInfos(bs, len(r.Tokens)), nil
}

// mmHashStrings lists the mm_hashes block i appends to its bytes, in order,
// as decimal strings (nil for a text block).
func mmHashStrings(infos []*routecore.BlockExtraInfo, i int) []string {
	if i >= len(infos) {
		return nil
	}
	var out []string
	for _, h := range infos[i].SortedMmHashes() {
		out = append(out, strconv.FormatUint(h, 10))
	}
	return out
}

// MultimodalSummary says which hashed blocks carry multimodal objects, for the
// request line ("" for a text-only request).
func (r RequestInfo) MultimodalSummary() string {
	var blocks []int
	for _, b := range r.Blocks {
		if len(b.MmHashes) > 0 {
			blocks = append(blocks, b.Index)
		}
	}
	switch {
	case r.MultimodalObjects == 0:
		return ""
	case len(blocks) == 0:
		return fmt.Sprintf("%d multimodal object(s), none in a hashed block", r.MultimodalObjects)
	case len(blocks) == 1:
		return fmt.Sprintf("%d multimodal object(s) in block #%d", r.MultimodalObjects, blocks[0])
	}
	return fmt.Sprintf("%d multimodal object(s) in blocks #%d–#%d (%d blocks)", r.MultimodalObjects, blocks[0], blocks[len(blocks)-1], len(blocks))
}

// multimodalObjectCount counts the distinct objects (mm_hash values) given.
func multimodalObjectCount(m routecore.Multimodal) int {
	seen := map[uint64]bool{}
	if m.Request != nil {
		for _, o := range m.Request.MmObjects {
			seen[uint64(o.MmHash)] = true
		}
	}
	for _, b := range m.Blocks {
		for _, h := range b.SortedMmHashes() {
			seen[h] = true
		}
	}
	return len(seen)
}
