package routecore

import (
	"slices"
	"strings"
	"testing"
)

// TestBuildPadRouting ports upstream's expectations of the pad-value routing
// tokens (Dynamo #10328): placeholders filled with pad_value_for_mm_hash, the
// sequence zero-padded to a whole block, expanded_prompt_len the unpadded
// count, and no block_mm_infos.
func TestBuildPadRouting(t *testing.T) {
	padA, padB := PadValueForMmHash(0xaaaaaaaaaaaaaaaa), PadValueForMmHash(0xbbbbbbbbbbbbbbbb)
	first, second := PadValueForMmHash(0x1234), PadValueForMmHash(0x5678)
	obj := func(h uint64, rs ...TokenRange) RequestMmObjectInfo {
		return RequestMmObjectInfo{MmHash: MmHash(h), Offsets: rs}
	}
	tests := []struct {
		name      string
		tokens    []uint32
		objs      []RequestMmObjectInfo
		bs        int
		want      []uint32
		promptLen int
	}{
		// lib/llm preprocessor test (/generate projection): token_ids
		// [10, 11, 12, 12, 12, 15, 16, 12, 12, 19], block size 4 →
		// routing_token_ids [10, 11, pad_a, pad_a, pad_a, 15, 16, pad_b, pad_b,
		// 19, 0, 0], expanded_prompt_len 10, block_mm_infos empty.
		{"upstream generate projection", []uint32{10, 11, 12, 12, 12, 15, 16, 12, 12, 19},
			[]RequestMmObjectInfo{obj(0xaaaaaaaaaaaaaaaa, TokenRange{2, 5}), obj(0xbbbbbbbbbbbbbbbb, TokenRange{7, 9})}, 4,
			[]uint32{10, 11, padA, padA, padA, 15, 16, padB, padB, 19, 0, 0}, 10},
		// build_mm_routing_info test (chat path): [10, 99, 11, 99, 12] with
		// BOS 1 and images of 2 and 3 tokens expand to 9 tokens; block size 4
		// pads to 12: [1, 10, f, f, 11, s, s, s, 12, 0, 0, 0]. Here the
		// placeholders are given already expanded.
		{"upstream chat expansion", []uint32{1, 10, 99, 99, 11, 99, 99, 99, 12},
			[]RequestMmObjectInfo{obj(0x1234, TokenRange{2, 4}), obj(0x5678, TokenRange{5, 8})}, 4,
			[]uint32{1, 10, first, first, 11, second, second, second, 12, 0, 0, 0}, 9},
		{"whole blocks are not padded", []uint32{1, 2, 3, 4}, []RequestMmObjectInfo{obj(42, TokenRange{1, 3})}, 4,
			[]uint32{1, PadValueForMmHash(42), PadValueForMmHash(42), 4}, 4},
		{"one object in two ranges", []uint32{1, 2, 3, 4, 5, 6}, []RequestMmObjectInfo{obj(7, TokenRange{0, 1}, TokenRange{4, 6})}, 3,
			[]uint32{PadValueForMmHash(7), 2, 3, 4, PadValueForMmHash(7), PadValueForMmHash(7)}, 6},
		{"range past the end is clipped", []uint32{1, 2, 3}, []RequestMmObjectInfo{obj(7, TokenRange{2, 9})}, 2,
			[]uint32{1, 2, PadValueForMmHash(7), 0}, 3},
		{"no objects: padding only", []uint32{1, 2, 3}, nil, 2, []uint32{1, 2, 3, 0}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := slices.Clone(tt.tokens)
			got, err := BuildPadRouting(in, &RequestExtraInfo{MmObjects: tt.objs}, tt.bs)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.Tokens, tt.want) || got.PromptLen != tt.promptLen || got.Padded() != len(tt.want)-tt.promptLen {
				t.Errorf("got %v (prompt %d), want %v (prompt %d)", got.Tokens, got.PromptLen, tt.want, tt.promptLen)
			}
			if !slices.Equal(in, tt.tokens) {
				t.Errorf("input modified: %v", in)
			}
		})
	}
}

// TestPadRoutingHashesAsText: the pad-value blocks hash with no block_mm_infos,
// as the kv-router's normalized worker events do (zmq_wire
// vllm_event_normalizes_to_frontend_pad_value_hash: [10, 20, img, img] with
// mm_hash 9533257059414191570, block size 4; the TensorRT-LLM gRPC
// trt_grpc_event_normalizes_to_frontend_pad_value_hash: [10, img, img, 20]
// with mm_hash 42), and the two schemes give different hashes.
func TestPadRoutingHashesAsText(t *testing.T) {
	for _, tc := range []struct {
		tokens []uint32
		mm     uint64
		at     TokenRange
	}{
		{[]uint32{10, 20, 151655, 151655}, 9_533_257_059_414_191_570, TokenRange{2, 4}},
		{[]uint32{10, 151655, 151655, 20}, 42, TokenRange{1, 3}},
	} {
		req := &RequestExtraInfo{MmObjects: []RequestMmObjectInfo{{MmHash: MmHash(tc.mm), Offsets: []TokenRange{tc.at}}}}
		pr, err := BuildPadRouting(tc.tokens, req, 4)
		if err != nil {
			t.Fatal(err)
		}
		event := slices.Clone(tc.tokens)
		for i := tc.at.Start; i < tc.at.End; i++ {
			event[i] = PadValueForMmHash(tc.mm)
		}
		blocks, err := ComputeBlocks(pr.Tokens, 4, HashOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(blocks) != 1 || blocks[0].LocalHash != HashTokens(event, HashSeed) {
			t.Errorf("%v: pad-value block hash %v, want the text hash of %v", tc.tokens, blocks, event)
		}
		legacy, _ := ComputeBlocks(tc.tokens, 4, HashOptions{BlockMmInfos: req.ToBlockLevel(4, len(tc.tokens))})
		if legacy[0].LocalHash == blocks[0].LocalHash {
			t.Errorf("%v: the mm-hash and pad-value schemes agree", tc.tokens)
		}
	}
}

// TestPadRoutingTwoImages: the same placeholder with two different images
// gives different routing tokens and hashes, unless the hashes agree in their
// low 30 bits (pad_value keeps only those).
func TestPadRoutingTwoImages(t *testing.T) {
	tokens := []uint32{1, 2, 9, 9, 9, 9, 3, 4}
	hashOf := func(mm uint64) []Block {
		pr, err := BuildPadRouting(tokens, &RequestExtraInfo{MmObjects: []RequestMmObjectInfo{{MmHash: MmHash(mm), Offsets: []TokenRange{{2, 6}}}}}, 4)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := ComputeBlocks(pr.Tokens, 4, HashOptions{})
		return b
	}
	a, b := hashOf(42), hashOf(43)
	if a[0].LocalHash == b[0].LocalHash || a[1].LocalHash == b[1].LocalHash {
		t.Errorf("two images share a block hash: %v %v", a, b)
	}
	if c := hashOf(42 + 1<<30); c[0].LocalHash != a[0].LocalHash {
		t.Errorf("mm_hashes equal in their low 30 bits should share the pad value")
	}
}

func TestBuildPadRoutingOverlap(t *testing.T) {
	req := &RequestExtraInfo{MmObjects: []RequestMmObjectInfo{
		{MmHash: 1, Offsets: []TokenRange{{0, 10}}},
		{MmHash: 1, Offsets: []TokenRange{{2, 4}}},
		{MmHash: 2, Offsets: []TokenRange{{8, 12}}},
	}}
	if _, err := BuildPadRouting(make([]uint32, 16), req, 4); err == nil || !strings.Contains(err.Error(), "overlap") {
		t.Errorf("overlapping objects accepted: %v", err)
	}
	req.MmObjects[2].Offsets[0] = TokenRange{10, 12}
	if _, err := BuildPadRouting(make([]uint32, 16), req, 4); err != nil {
		t.Errorf("one object's own overlapping ranges and a disjoint one: %v", err)
	}
}

func TestPadObjectsIn(t *testing.T) {
	req := &RequestExtraInfo{MmObjects: []RequestMmObjectInfo{
		{MmHash: 5, Offsets: []TokenRange{{6, 8}, {1, 2}}},
		{MmHash: 3, Offsets: []TokenRange{{3, 5}}},
	}}
	for _, tt := range []struct {
		start, end int
		want       []MmHash
	}{{0, 4, []MmHash{5, 3}}, {4, 8, []MmHash{3, 5}}, {8, 12, nil}, {2, 3, nil}} {
		if got := req.PadObjectsIn(tt.start, tt.end); !slices.Equal(got, tt.want) {
			t.Errorf("[%d,%d) = %v, want %v", tt.start, tt.end, got, tt.want)
		}
	}
}
