package explainroute_test

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/cmdtest"
	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/golden"
)

// TestExplainRouteMultimodal: an image whose placeholder covers blocks 4 and 5
// of the example prompt changes their hashes (compute_block_hash_for_seq with
// block_mm_infos), so the capture's KV events match only blocks 0–3 on the
// worker that holds the text prompt's first ten blocks.
func TestExplainRouteMultimodal(t *testing.T) {
	const capture = "examples/healthy-three-zone-required.yaml"
	cases := []struct {
		name  string
		args  []string
		stdin string
	}{
		{"table", []string{"--mm", "42@64:96"}, ""},
		{"table_v1_2", []string{"--mm", "42@64:96", "--dynamo-version", "1.2.0"}, ""},
		{"padded_tail_json", []string{"--mm", "42@64:96", "--mm", "43@140:150", "-o", "json"}, ""},
		{"err_overlap", []string{"--mm", "42@64:96", "--mm", "43@90:100"}, ""},
		{"mm_file_blocks", []string{"--mm-file", "-", "-o", "wide"}, `[null, null, null, null, {"mm_objects":[{"mm_hash":"18446744073709551615","offsets":[[0,16]]}]}]`},
		{"err_past_end", []string{"--mm", "42@200:206"}, ""},
		{"err_syntax", []string{"--mm", "42@64"}, ""},
		{"err_indexer", []string{"--mm", "42@64:96", "--indexer-url", "http://127.0.0.1:1"}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"explain-route", "--from-file", capture, "--token-file", prompt}, tc.args...)
			r := runInWith(t, tc.stdin, args...)
			golden.Assert(t, cmdtest.Transcript(args, tc.stdin, r))
			if strings.HasPrefix(tc.name, "err_") {
				if r.ExitCode != 1 || !strings.HasPrefix(r.Stderr, "error: ") || r.Stdout != "" {
					t.Errorf("want one error and exit 1, got exit %d, stdout %q, stderr %q", r.ExitCode, r.Stdout, r.Stderr)
				}
			} else if r.ExitCode != 0 {
				t.Errorf("exit %d: %s", r.ExitCode, r.Stderr)
			}
		})
	}

	text, _ := explainJSON(t, "--from-file", capture, "--token-file", prompt)
	for _, tc := range []struct{ version, scheme string }{{"latest", "pad-value"}, {"1.2.0", "mm-hash"}, {"1.1.0", "mm-hash"}} {
		mm, _ := explainJSON(t, "--from-file", capture, "--token-file", prompt, "--mm", "42@64:96", "--dynamo-version", tc.version)
		other, _ := explainJSON(t, "--from-file", capture, "--token-file", prompt, "--mm", "43@64:96", "--dynamo-version", tc.version)
		if mm.Request.MultimodalObjects != 1 || string(mm.Request.MmScheme) != tc.scheme {
			t.Errorf("%s: multimodalObjects = %d, scheme %q, want 1, %q", tc.version, mm.Request.MultimodalObjects, mm.Request.MmScheme, tc.scheme)
		}
		for i, b := range mm.Request.Blocks {
			if i >= len(text.Request.Blocks) {
				// 205 tokens: the pad-value routing tokens are zero-padded to
				// 208, and the padded block is hashed.
				if tc.scheme != "pad-value" || i != 12 || b.ZeroPadded != 3 || mm.Request.RoutingTokenCount != 208 {
					t.Errorf("%s: extra block %d %+v", tc.version, i, b)
				}
				continue
			}
			holds := i == 4 || i == 5
			if got := len(b.MmHashes)+len(b.PadValues) > 0; got != holds {
				t.Errorf("%s: block %d mmHashes = %v, padValues = %v", tc.version, i, b.MmHashes, b.PadValues)
			}
			if sameHash := b.LocalHash == text.Request.Blocks[i].LocalHash; sameHash == holds {
				t.Errorf("%s: block %d: local hash %d vs text %d (holds the image: %v)", tc.version, i, b.LocalHash, text.Request.Blocks[i].LocalHash, holds)
			}
			if sameSeq := b.SequenceHash == text.Request.Blocks[i].SequenceHash; sameSeq != (i < 4) {
				t.Errorf("%s: block %d: sequence hash changed = %v, want %v", tc.version, i, !sameSeq, i >= 4)
			}
			if holds && b.LocalHash == other.Request.Blocks[i].LocalHash {
				t.Errorf("%s: block %d hashes the same with two different images", tc.version, i)
			}
		}
	}
}

// TestExplainRouteMultimodalISL: under the pad-value scheme the router routes
// with the zero-padded routing tokens (KvRouter::find_best_match_details:
// isl_tokens = routing_token_ids.len()), so a cold worker's prompt load is
// that count in blocks and the padded tail block is hashed; under the
// mm-hash scheme, and for a text request, the tokens as given.
func TestExplainRouteMultimodalISL(t *testing.T) {
	const capture = "examples/healthy-three-zone-required.yaml"
	base := []string{"--from-file", capture, "--tokens", seqTokens(150), "--cold", "--assume-idle"}
	for _, tc := range []struct {
		name        string
		args        []string
		blocks      int
		isl, routed int
	}{
		{"text", nil, 9, 150, 0},
		{"text v1.2", []string{"--dynamo-version", "1.2.0"}, 9, 150, 0},
		{"pad-value", []string{"--mm", "42@20:40"}, 10, 160, 160},
		{"mm-hash", []string{"--mm", "42@20:40", "--dynamo-version", "1.2.0"}, 9, 150, 0},
		{"per-block input", []string{"--mm-file", "internal/cmd/explainroute/testdata/mm-blocks.json"}, 9, 150, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x, _ := explainJSON(t, append(append([]string{}, base...), tc.args...)...)
			r := x.Request
			if r.TokenCount != 150 || len(r.Blocks) != tc.blocks || r.RoutingTokenCount != tc.routed {
				t.Fatalf("%d tokens, %d blocks, routing tokens %d; want 150, %d, %d", r.TokenCount, len(r.Blocks), r.RoutingTokenCount, tc.blocks, tc.routed)
			}
			st := x.Prefill
			if st == nil {
				st = x.Decode
			}
			if st == nil || len(st.Candidates) == 0 {
				t.Fatal("no candidates")
			}
			// A cold, idle worker's prompt-side load is ISL / block size.
			if got, want := st.Candidates[0].PrefillBlocks, float64(tc.isl)/float64(r.BlockSize); got != want {
				t.Errorf("prefill blocks %v, want %v (ISL %d)", got, want, tc.isl)
			}
		})
	}
}

func seqTokens(n int) string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = strconv.Itoa(i + 1)
	}
	return strings.Join(ids, ",")
}

// runInWith is runIn with standard input.
func runInWith(t *testing.T, stdin string, args ...string) cmdtest.Result {
	t.Helper()
	if stdin == "" {
		return runIn(t, args...)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chdir("../../.."); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = os.Chdir(wd) }()
	return cmdtest.RunWith(t, cmdtest.Options{Stdin: stdin}, args...)
}
