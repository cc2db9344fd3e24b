package explain

import (
	"fmt"
	"strconv"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
)

// mmRouting applies the profile's multimodal scheme to the request
// (routecore.Multimodal.Routing): under the pad-value scheme (Dynamo #10328,
// 1.3 and later) request-level objects fill their placeholders with pad values
// and the routing tokens are zero-padded to a whole block; under the mm-hash
// scheme, and for per-block input in either, a block holding an object
// hashes its tokens followed by the objects' mm_hashes. A request-level range
// that ends past the last token is an input error (the router would clip it
// silently).
func (r Request) mmRouting(bs int, scheme routecore.MmScheme) (routecore.MmRouting, error) {
	if end := r.Multimodal.MaxEnd(); end > len(r.Tokens) {
		return routecore.MmRouting{}, inputErr("Give the placeholder's token positions in the request's token ids (START:END, END exclusive).",
			"a multimodal placeholder ends at token %d but the request has %d tokens", end, len(r.Tokens))
	}
	m, err := r.Multimodal.Routing(r.Tokens, bs, scheme)
	if err != nil {
		return routecore.MmRouting{}, inputErr("Give each image its own placeholder tokens.", "%v", err)
	}
	return m, nil
}

// blockMultimodal fills a block's multimodal fields from what it holds.
func blockMultimodal(info *BlockInfo, m routecore.MmRouting, b routecore.Block) {
	appended, pads, zero := m.BlockObjects(b)
	for _, h := range appended {
		info.MmHashes = append(info.MmHashes, strconv.FormatUint(h, 10))
	}
	for _, h := range pads {
		info.PadValues = append(info.PadValues, PadValue{PadValue: routecore.PadValueForMmHash(uint64(h)), MmHash: strconv.FormatUint(uint64(h), 10)})
	}
	info.ZeroPadded = zero
}

// MultimodalSummary says which hashed blocks carry multimodal objects, for the
// request line ("" for a text-only request).
func (r RequestInfo) MultimodalSummary() string {
	var blocks []int
	for _, b := range r.Blocks {
		if len(b.MmHashes) > 0 || len(b.PadValues) > 0 {
			blocks = append(blocks, b.Index)
		}
	}
	how := ""
	switch r.MmScheme {
	case routecore.MmSchemePadValue:
		how = ", placeholders hashed as pad values"
	case routecore.MmSchemeMmHash:
		how = ", mm_hashes appended to the block bytes"
	}
	switch {
	case r.MultimodalObjects == 0:
		return ""
	case len(blocks) == 0:
		return fmt.Sprintf("%d multimodal object(s), none in a hashed block", r.MultimodalObjects)
	case len(blocks) == 1:
		return fmt.Sprintf("%d multimodal object(s) in block #%d%s", r.MultimodalObjects, blocks[0], how)
	}
	return fmt.Sprintf("%d multimodal object(s) in blocks #%d–#%d (%d blocks)%s", r.MultimodalObjects, blocks[0], blocks[len(blocks)-1], len(blocks), how)
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
