package routecore

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"strconv"
	"testing"

	"github.com/zeebo/xxh3"
)

// TestComputeBlocksGold checks Dynamo's published vectors (lib/tokens
// test_tokens_blocks and the HASH_1_4…SEQ_HASH_9_12 constants).
func TestComputeBlocksGold(t *testing.T) {
	tests := []struct {
		name   string
		tokens []uint32
		want   [][2]uint64
	}{
		{"1..12", seq(1, 12), [][2]uint64{
			{14643705804678351452, 14643705804678351452},
			{16777012769546811212, 4945711292740353085},
			{483935686894639516, 12583592247330656132},
		}},
		{"1..10 drops the partial block", seq(1, 10), [][2]uint64{
			{14643705804678351452, 14643705804678351452},
			{16777012769546811212, 4945711292740353085},
		}},
		{"fewer tokens than a block", seq(1, 3), nil},
		{"empty", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ComputeBlocks(tt.tokens, 4, HashOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d blocks, want %d", len(got), len(tt.want))
			}
			for i, w := range tt.want {
				if uint64(got[i].LocalHash) != w[0] || uint64(got[i].SequenceHash) != w[1] {
					t.Errorf("block %d = (%d, %d), want (%d, %d)", i, got[i].LocalHash, got[i].SequenceHash, w[0], w[1])
				}
				if got[i].Index != i || got[i].Start != 4*i || got[i].End != 4*i+4 {
					t.Errorf("block %d span = %d [%d,%d)", i, got[i].Index, got[i].Start, got[i].End)
				}
			}
		})
	}
}

// TestComputeBlocksEagleWindows mirrors protocols.rs
// test_compute_block_hash_for_seq_eagle_windows: six tokens with block size 2 give
// three normal hashes or two eagle hashes, hash([0,1,2]) and hash([2,3,4]).
func TestComputeBlocksEagleWindows(t *testing.T) {
	tokens := seq(0, 5)
	normal, err := ComputeBlocks(tokens, 2, HashOptions{})
	if err != nil {
		t.Fatal(err)
	}
	eagle, err := ComputeBlocks(tokens, 2, HashOptions{Eagle: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(normal) != 3 || len(eagle) != 2 {
		t.Fatalf("got %d normal and %d eagle blocks, want 3 and 2", len(normal), len(eagle))
	}
	if eagle[0].LocalHash != HashTokens([]uint32{0, 1, 2}, HashSeed) || eagle[1].LocalHash != HashTokens([]uint32{2, 3, 4}, HashSeed) {
		t.Errorf("eagle windows hash the wrong tokens: %+v", eagle)
	}
	if eagle[1].SequenceHash != NextSequenceHash(SequenceHash(eagle[0].LocalHash), eagle[1].LocalHash) {
		t.Error("eagle sequence chain broken")
	}
}

func TestComputeBlocksInvalidBlockSize(t *testing.T) {
	for _, bs := range []int{0, -1} {
		if _, err := ComputeBlocks([]uint32{1, 2}, bs, HashOptions{}); !errors.Is(err, ErrInvalidBlockSize) {
			t.Errorf("block size %d: err = %v, want ErrInvalidBlockSize", bs, err)
		}
	}
}

// TestSaltSeed checks the salt rules of compute_salt_hash: empty strings are absent,
// additions wrap, the LoRA-only form equals 1337 + XXH3(name, 0), and every salt
// changes every block hash while the chain seed stays 1337.
func TestSaltSeed(t *testing.T) {
	if got := SaltSeed("", ""); got != 1337 {
		t.Errorf("no salt = %d, want 1337", got)
	}
	if got, want := SaltSeed("a", ""), uint64(1337)+xxh3.HashString("a"); got != want {
		t.Errorf("lora seed = %d, want %d", got, want)
	}
	if got, want := SaltSeed("", "ns"), uint64(1337)+xxh3.HashStringSeed("ns", 1); got != want {
		t.Errorf("namespace seed = %d, want %d", got, want)
	}
	both := SaltSeed("a", "ns")
	if want := uint64(1337) + xxh3.HashString("a") + xxh3.HashStringSeed("ns", 1); both != want {
		t.Errorf("both = %d, want %d (wrapping)", both, want)
	}
	plain, _ := ComputeBlocks(seq(1, 8), 4, HashOptions{})
	for _, o := range []HashOptions{{LoraName: "a"}, {CacheNamespace: "ns"}, {LoraName: "a", CacheNamespace: "ns"}} {
		salted, _ := ComputeBlocks(seq(1, 8), 4, o)
		for i := range salted {
			if salted[i].LocalHash == plain[i].LocalHash || salted[i].SequenceHash == plain[i].SequenceHash {
				t.Errorf("%+v: block %d unchanged by the salt", o, i)
			}
		}
		if salted[1].SequenceHash != NextSequenceHash(salted[0].SequenceHash, salted[1].LocalHash) {
			t.Errorf("%+v: chain does not use seed 1337", o)
		}
	}
}

type hashVectors struct {
	Raw []struct {
		Hex  string `json:"hex"`
		Seed string `json:"seed"`
		Hash string `json:"hash"`
	} `json:"raw"`
	Blocks []struct {
		BlockSize int         `json:"blockSize"`
		Lora      string      `json:"lora"`
		Namespace string      `json:"namespace"`
		Eagle     bool        `json:"eagle"`
		Seed      string      `json:"seed"`
		Tokens    []uint32    `json:"tokens"`
		Blocks    [][2]string `json:"blocks"`
	} `json:"blocks"`
}

// TestHashVectorsFromLibxxhash compares the XXH3 package and the whole block-hash
// pipeline with vectors computed by the official C library (hack/hashvectors), on
// inputs of every length class including > 240 bytes, and on blocks of up to 128
// tokens (512 bytes) with LoRA and namespace salts and eagle windows.
func TestHashVectorsFromLibxxhash(t *testing.T) {
	data, err := os.ReadFile("testdata/hashvectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var v hashVectors
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Raw) < 100 || len(v.Blocks) < 70 {
		t.Fatalf("vector file too small: %d raw, %d block cases", len(v.Raw), len(v.Blocks))
	}
	long := 0
	for i, r := range v.Raw {
		b, err := hex.DecodeString(r.Hex)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) > 240 {
			long++
		}
		seed := mustU64(t, r.Seed)
		if got := xxh3.HashSeed(b, seed); got != mustU64(t, r.Hash) {
			t.Errorf("raw %d (len %d, seed %d): got %d, want %s", i, len(b), seed, got, r.Hash)
		}
	}
	if long < 20 {
		t.Errorf("only %d raw vectors longer than 240 bytes", long)
	}
	for i, c := range v.Blocks {
		if got := SaltSeed(c.Lora, c.Namespace); got != mustU64(t, c.Seed) {
			t.Errorf("case %d: seed %d, want %s", i, got, c.Seed)
		}
		got, err := ComputeBlocks(c.Tokens, c.BlockSize, HashOptions{LoraName: c.Lora, CacheNamespace: c.Namespace, Eagle: c.Eagle})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(c.Blocks) {
			t.Fatalf("case %d: %d blocks, want %d", i, len(got), len(c.Blocks))
		}
		for j, w := range c.Blocks {
			if uint64(got[j].LocalHash) != mustU64(t, w[0]) || uint64(got[j].SequenceHash) != mustU64(t, w[1]) {
				t.Errorf("case %d (B=%d eagle=%v lora=%q ns=%q) block %d: got (%d, %d), want %v",
					i, c.BlockSize, c.Eagle, c.Lora, c.Namespace, j, got[j].LocalHash, got[j].SequenceHash, w)
			}
		}
	}
}

// TestHashTokensPaths checks that the in-place little-endian path and the explicit
// encoding agree, including for blocks larger than the stack buffer.
func TestHashTokensPaths(t *testing.T) {
	for _, n := range []int{0, 1, 16, 63, 64, 65, 300} {
		toks := make([]uint32, n)
		for i := range toks {
			toks[i] = uint32(i)*2654435761 + 7
		}
		for _, seed := range []uint64{0, HashSeed, SaltSeed("x", "y")} {
			if a, b := HashTokens(toks, seed), hashTokensPortable(toks, seed); a != b {
				t.Errorf("n=%d seed=%d: in-place %d, portable %d", n, seed, a, b)
			}
		}
	}
}

func TestParseTokenID(t *testing.T) {
	tests := []struct {
		in      string
		want    uint32
		wantErr bool
	}{
		{"0", 0, false},
		{"4294967295", 4294967295, false},
		{"4294967296", 0, true},
		{"99999999999999999999999", 0, true},
		{"-1", 0, true},
		{"1.0", 0, true},
		{"1e3", 0, true},
		{"", 0, true},
		{" 1", 0, true},
		{"٣", 0, true},
	}
	for _, tt := range tests {
		got, err := ParseTokenID(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("ParseTokenID(%q) = %d, %v; want %d, err %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

// FuzzComputeBlocks checks invariants on arbitrary token sequences: block count,
// spans, chain consistency and agreement with the one-block primitive.
func FuzzComputeBlocks(f *testing.F) {
	f.Add([]byte{1, 0, 0, 0, 2, 0, 0, 0}, uint8(1), "", "", false)
	f.Add(make([]byte, 400), uint8(16), "lora", "ns", true)
	f.Fuzz(func(t *testing.T, raw []byte, bs uint8, lora, ns string, eagle bool) {
		toks := make([]uint32, len(raw)/4)
		for i := range toks {
			toks[i] = uint32(raw[4*i]) | uint32(raw[4*i+1])<<8 | uint32(raw[4*i+2])<<16 | uint32(raw[4*i+3])<<24
		}
		blocks, err := ComputeBlocks(toks, int(bs), HashOptions{LoraName: lora, CacheNamespace: ns, Eagle: eagle})
		if bs == 0 {
			if !errors.Is(err, ErrInvalidBlockSize) {
				t.Fatalf("block size 0: err = %v", err)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(blocks) != BlockCount(len(toks), int(bs), eagle) {
			t.Fatalf("%d blocks, BlockCount says %d", len(blocks), BlockCount(len(toks), int(bs), eagle))
		}
		seed := SaltSeed(lora, ns)
		for i, b := range blocks {
			if b.End > len(toks) || b.Start != i*int(bs) {
				t.Fatalf("block %d span [%d,%d) of %d tokens", i, b.Start, b.End, len(toks))
			}
			if b.LocalHash != HashTokens(toks[b.Start:b.End], seed) {
				t.Fatalf("block %d local hash mismatch", i)
			}
			if i == 0 && uint64(b.SequenceHash) != uint64(b.LocalHash) {
				t.Fatal("first sequence hash must equal the local hash")
			}
			if i > 0 && b.SequenceHash != NextSequenceHash(blocks[i-1].SequenceHash, b.LocalHash) {
				t.Fatalf("block %d chain mismatch", i)
			}
		}
	})
}

func seq(from, to uint32) []uint32 {
	var out []uint32
	for v := from; v <= to; v++ {
		out = append(out, v)
	}
	return out
}

func mustU64(t *testing.T, s string) uint64 {
	t.Helper()
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		t.Fatalf("bad u64 %q: %v", s, err)
	}
	return v
}

// TestBlockHashesAreComputeBlocks: BlockHashes gives ComputeBlocks' hashes,
// block for block, with and without Eagle, a LoRA and multimodal blocks, and
// appends to what the slices hold.
func TestBlockHashesAreComputeBlocks(t *testing.T) {
	tokens := make([]uint32, 1000)
	for i := range tokens {
		tokens[i] = uint32(i*7919) % 50000
	}
	mm := []*BlockExtraInfo{nil, {MmObjects: []BlockMmObjectInfo{{MmHash: 42}}}}
	for _, bs := range []int{1, 7, 16, 64, 1000, 1001} {
		for _, opts := range []HashOptions{{}, {Eagle: true}, {LoraName: "adapter"}, {BlockMmInfos: mm}} {
			blocks, err := ComputeBlocks(tokens, bs, opts)
			if err != nil {
				t.Fatal(err)
			}
			seq, local, err := BlockHashes(tokens, bs, opts, []SequenceHash{1}, []LocalBlockHash{2})
			if err != nil {
				t.Fatal(err)
			}
			if len(seq) != len(blocks)+1 || len(local) != len(blocks)+1 || seq[0] != 1 || local[0] != 2 {
				t.Fatalf("block size %d %+v: %d/%d hashes for %d blocks", bs, opts, len(seq), len(local), len(blocks))
			}
			for i, b := range blocks {
				if seq[i+1] != b.SequenceHash || local[i+1] != b.LocalHash {
					t.Fatalf("block size %d %+v: block %d differs", bs, opts, i)
				}
			}
		}
	}
	if _, _, err := BlockHashes(tokens, 0, HashOptions{}, nil, nil); !errors.Is(err, ErrInvalidBlockSize) {
		t.Errorf("block size 0: %v", err)
	}
}
