package routecore

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// Multimodal block hashes against ai-dynamo/dynamo lib/kv-router/src/protocols.rs
// at commit 038eab23a6b6e9b6391de6640f4f69d4c2726681 (compute_block_hash_for_seq,
// RequestExtraInfo::to_block_level, pad_value_for_mm_hash, hash_mm_identifier
// and their tests). Upstream's multimodal tests compare hashes with each other
// (assert_ne); the numbers below were computed independently with libxxhash
// 0.8.1 (XXH3_64bits_withSeed over the same bytes) and pin the port.

// TestComputeBlocksMultimodalUpstream is upstream's
// test_tokens_with_hashes_mm_change_recomputes_cached_hashes: tokens 0..3 in
// blocks of 2, block 0 holding object 42 at offsets (0, 1), block 1 none. The
// multimodal block hashes differ from the text ones, the plain block does not,
// and every sequence hash from the image on changes.
func TestComputeBlocksMultimodalUpstream(t *testing.T) {
	tokens := []uint32{0, 1, 2, 3}
	infos := []*BlockExtraInfo{
		{MmObjects: []BlockMmObjectInfo{{MmHash: 42, Offsets: []TokenRange{{0, 1}}}}},
		nil,
	}
	text, err := ComputeBlocks(tokens, 2, HashOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mm, err := ComputeBlocks(tokens, 2, HashOptions{BlockMmInfos: infos})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][][2]uint64{
		"text": {{10918435022357402928, 10918435022357402928}, {10731123482949079648, 7454852371412049951}},
		"mm":   {{6100948656312251355, 6100948656312251355}, {10731123482949079648, 1446685509019147680}},
	}
	for name, got := range map[string][]Block{"text": text, "mm": mm} {
		assertBlocks(t, name, got, want[name])
	}
	if mm[0].LocalHash == text[0].LocalHash || mm[1].SequenceHash == text[1].SequenceHash {
		t.Error("the multimodal object changed neither its block hash nor the sequence hashes")
	}
	if mm[1].LocalHash != text[1].LocalHash {
		t.Error("a block without multimodal info must hash as text")
	}
}

func assertBlocks(t *testing.T, name string, got []Block, want [][2]uint64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d blocks, want %d", name, len(got), len(want))
	}
	for i, w := range want {
		if uint64(got[i].LocalHash) != w[0] || uint64(got[i].SequenceHash) != w[1] {
			t.Errorf("%s block %d = (%d, %d), want (%d, %d)", name, i, got[i].LocalHash, got[i].SequenceHash, w[0], w[1])
		}
	}
}

// TestComputeBlocksMultimodalBytes: the hashed bytes are the tokens followed by
// the block's mm_hashes sorted ascending (sort_unstable, duplicates kept), each
// u64 LE, with the request's salt seed; eagle windows index the infos by block.
func TestComputeBlocksMultimodalBytes(t *testing.T) {
	obj := func(hashes ...uint64) *BlockExtraInfo {
		b := &BlockExtraInfo{}
		for _, h := range hashes {
			b.MmObjects = append(b.MmObjects, BlockMmObjectInfo{MmHash: MmHash(h)})
		}
		return b
	}
	tests := []struct {
		name   string
		tokens []uint32
		bs     int
		opts   HashOptions
		want   [][2]uint64
	}{
		{"two objects appended in ascending order", seq(1, 8), 4,
			HashOptions{BlockMmInfos: []*BlockExtraInfo{nil, obj(7, 3)}},
			[][2]uint64{{14643705804678351452, 14643705804678351452}, {1165643180200632221, 4971523283671923519}}},
		{"order of objects does not matter", seq(1, 8), 4,
			HashOptions{BlockMmInfos: []*BlockExtraInfo{nil, obj(3, 7)}},
			[][2]uint64{{14643705804678351452, 14643705804678351452}, {1165643180200632221, 4971523283671923519}}},
		{"duplicate hashes are both appended", []uint32{0, 1}, 2,
			HashOptions{BlockMmInfos: []*BlockExtraInfo{obj(42, 42)}},
			[][2]uint64{{12945423466412996532, 12945423466412996532}}},
		{"LoRA salt seeds the multimodal path too", []uint32{0, 1}, 2,
			HashOptions{LoraName: "my-adapter", BlockMmInfos: []*BlockExtraInfo{obj(42)}},
			[][2]uint64{{7531029486752885682, 7531029486752885682}}},
		{"eagle windows read infos by block index", []uint32{0, 1, 2, 3, 4, 5}, 2,
			HashOptions{Eagle: true, BlockMmInfos: []*BlockExtraInfo{obj(42)}},
			[][2]uint64{{6689221200102693744, 6689221200102693744}, {9948816348502404300, 13695797737972139161}}},
		{"an info with no objects hashes as text", []uint32{0, 1, 2, 3}, 2,
			HashOptions{BlockMmInfos: []*BlockExtraInfo{{}, {}}},
			[][2]uint64{{10918435022357402928, 10918435022357402928}, {10731123482949079648, 7454852371412049951}}},
		{"infos beyond the full blocks are unused", []uint32{0, 1, 2}, 2,
			HashOptions{BlockMmInfos: []*BlockExtraInfo{nil, obj(42)}},
			[][2]uint64{{10918435022357402928, 10918435022357402928}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ComputeBlocks(tt.tokens, tt.bs, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			assertBlocks(t, tt.name, got, tt.want)
		})
	}
}

// TestToBlockLevel follows RequestExtraInfo::to_block_level: ceil(total/bs)
// entries, intersections relative to each block, one entry per mm_hash per
// block, ranges clipped at total_tokens.
func TestToBlockLevel(t *testing.T) {
	req := func(objs ...RequestMmObjectInfo) RequestExtraInfo { return RequestExtraInfo{MmObjects: objs} }
	o := func(h uint64, rs ...TokenRange) RequestMmObjectInfo {
		return RequestMmObjectInfo{MmHash: MmHash(h), Offsets: rs}
	}
	b := func(objs ...BlockMmObjectInfo) *BlockExtraInfo { return &BlockExtraInfo{MmObjects: objs} }
	bo := func(h uint64, rs ...TokenRange) BlockMmObjectInfo {
		return BlockMmObjectInfo{MmHash: MmHash(h), Offsets: rs}
	}
	tests := []struct {
		name      string
		req       RequestExtraInfo
		bs, total int
		want      []*BlockExtraInfo
	}{
		{"upstream fuzz seed: 42 at (0, 1)", req(o(42, TokenRange{0, 1})), 4, 10,
			[]*BlockExtraInfo{b(bo(42, TokenRange{0, 1})), nil, nil}},
		{"a placeholder spanning three blocks", req(o(7, TokenRange{2, 10})), 4, 12,
			[]*BlockExtraInfo{b(bo(7, TokenRange{2, 4})), b(bo(7, TokenRange{0, 4})), b(bo(7, TokenRange{0, 2}))}},
		{"two objects sharing a block, in request order", req(o(9, TokenRange{0, 2}), o(3, TokenRange{2, 4})), 4, 4,
			[]*BlockExtraInfo{b(bo(9, TokenRange{0, 2}), bo(3, TokenRange{2, 4}))}},
		{"the same hash twice in a block merges its ranges", req(o(5, TokenRange{0, 1}), o(5, TokenRange{2, 3})), 4, 4,
			[]*BlockExtraInfo{b(bo(5, TokenRange{0, 1}, TokenRange{2, 3}))}},
		{"a range past the request is clipped", req(o(1, TokenRange{5, 20})), 4, 6,
			[]*BlockExtraInfo{nil, b(bo(1, TokenRange{1, 2}))}},
		{"a range after the request is ignored", req(o(1, TokenRange{8, 9})), 4, 6,
			[]*BlockExtraInfo{nil, nil}},
		{"an empty range adds nothing", req(o(1, TokenRange{0, 0})), 4, 4,
			[]*BlockExtraInfo{nil}},
		{"block size 0", req(o(42, TokenRange{0, 1})), 0, 10, nil},
		{"no tokens", req(o(42, TokenRange{0, 1})), 4, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.req.ToBlockLevel(tt.bs, tt.total); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %s, want %s", fmtInfos(got), fmtInfos(tt.want))
			}
		})
	}
}

func fmtInfos(infos []*BlockExtraInfo) string {
	b, _ := json.Marshal(infos)
	return string(b)
}

// TestPadValueForMmHash is upstream's pad_value_matches_sglang_protocol.
func TestPadValueForMmHash(t *testing.T) {
	if MmPadShiftValue != 1_000_000 || MmPadHashMask != 1<<30-1 {
		t.Fatalf("constants drifted: %d %d", MmPadShiftValue, MmPadHashMask)
	}
	fits := uint64(1<<30 - 1)
	for _, tt := range []struct {
		in   uint64
		want uint32
	}{
		{0, 1_000_000},
		{fits, uint32(1_000_000 + fits)},
		{1<<30 | 0xCAFE, 1_000_000 + 0xCAFE},
	} {
		if got := PadValueForMmHash(tt.in); got != tt.want {
			t.Errorf("PadValueForMmHash(%d) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

// TestHashMmIdentifier is upstream's
// mm_identifier_hash_preserves_canonical_vllm_digest_mapping and
// mm_identifier_hash_supports_opaque_identifiers.
func TestHashMmIdentifier(t *testing.T) {
	for _, tt := range []struct {
		id   string
		want uint64
		ok   bool
	}{
		{strings.Repeat("0123456789abcdef", 4), 0x0123_4567_89ab_cdef, true},
		{"opaque-renderer-image-0", 14437604544409538977, true}, // xxh3_64, seed 0
		{"", 0, false},
	} {
		got, ok := HashMmIdentifier(tt.id)
		if got != tt.want || ok != tt.ok {
			t.Errorf("HashMmIdentifier(%q) = %d, %v; want %d, %v", tt.id, got, ok, tt.want, tt.ok)
		}
	}
}

func TestParseMmObject(t *testing.T) {
	for _, tt := range []struct {
		in      string
		want    RequestMmObjectInfo
		wantErr string
	}{
		{"42@4:12", RequestMmObjectInfo{MmHash: 42, Offsets: []TokenRange{{4, 12}}}, ""},
		// above 2^53: a float64 round trip would change it
		{"18446744073709551615@0:1,3:5", RequestMmObjectInfo{MmHash: 18446744073709551615, Offsets: []TokenRange{{0, 1}, {3, 5}}}, ""},
		{"0xCAFE@0:1", RequestMmObjectInfo{MmHash: 0xCAFE, Offsets: []TokenRange{{0, 1}}}, ""},
		{strings.Repeat("0123456789abcdef", 4) + "@0:1", RequestMmObjectInfo{MmHash: 0x0123456789abcdef, Offsets: []TokenRange{{0, 1}}}, ""},
		{"id:opaque-renderer-image-0@0:1", RequestMmObjectInfo{MmHash: 14437604544409538977, Offsets: []TokenRange{{0, 1}}}, ""},
		{"42", RequestMmObjectInfo{}, "expected HASH@START:END"},
		{"42@4-12", RequestMmObjectInfo{}, "is not START:END"},
		{"42@5:5", RequestMmObjectInfo{}, "is empty"},
		{"-1@0:1", RequestMmObjectInfo{}, "is not an mm_hash"},
		{"18446744073709551616@0:1", RequestMmObjectInfo{}, "is not an mm_hash"},
		{"id:@0:1", RequestMmObjectInfo{}, "non-empty identifier"},
	} {
		got, err := ParseMmObject(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseMmObject(%q) error = %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseMmObject(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
	}
}

func TestParseMultimodalJSON(t *testing.T) {
	m, err := ParseMultimodalJSON([]byte(`{"mm_objects":[{"mm_hash":9007199254740993,"offsets":[[4,12]]},{"mm_hash":"18446744073709551615","offsets":[[12,14]]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := &RequestExtraInfo{MmObjects: []RequestMmObjectInfo{
		{MmHash: 9007199254740993, Offsets: []TokenRange{{4, 12}}},
		{MmHash: 18446744073709551615, Offsets: []TokenRange{{12, 14}}},
	}}
	if !reflect.DeepEqual(m.Request, want) || m.Blocks != nil || m.MaxEnd() != 14 {
		t.Errorf("request form = %+v", m)
	}
	m, err = ParseMultimodalJSON([]byte(`[null, {"mm_objects":[{"mm_hash":42,"offsets":[[0,1]]}]}]`))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Blocks) != 2 || m.Blocks[0] != nil || m.Blocks[1].SortedMmHashes()[0] != 42 {
		t.Errorf("block form = %+v", m)
	}
	if got := m.BlockInfos(4, 100); len(got) != 2 {
		t.Errorf("block form is used as given, got %d entries", len(got))
	}
	for _, bad := range []string{``, `42`, `{"mm_objects":[{"mm_hash":1.5,"offsets":[]}]}`, `{"mm_objects":[{"mm_hash":-1,"offsets":[]}]}`,
		`{"objects":[]}`, `{"mm_objects":[]} {}`, `{"mm_objects":[{"mm_hash":1,"offsets":[[3,3]]}]}`, `{"mm_objects":[{"mm_hash":1,"offsets":[[0]]}]}`} {
		if _, err := ParseMultimodalJSON([]byte(bad)); err == nil {
			t.Errorf("ParseMultimodalJSON(%q) accepted", bad)
		}
	}
	if _, err := ParseMultimodalJSON(nil); !errors.Is(err, ErrNoMultimodal) {
		t.Errorf("empty input: %v", err)
	}
}
