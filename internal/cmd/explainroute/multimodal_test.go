package explainroute_test

import (
	"os"
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
	mm, _ := explainJSON(t, "--from-file", capture, "--token-file", prompt, "--mm", "42@64:96")
	if mm.Request.MultimodalObjects != 1 {
		t.Errorf("multimodalObjects = %d, want 1", mm.Request.MultimodalObjects)
	}
	for i, b := range mm.Request.Blocks {
		holds := i == 4 || i == 5
		if got := len(b.MmHashes) > 0; got != holds {
			t.Errorf("block %d mmHashes = %v", i, b.MmHashes)
		}
		if sameHash := b.LocalHash == text.Request.Blocks[i].LocalHash; sameHash == holds {
			t.Errorf("block %d: local hash %d vs text %d (holds the image: %v)", i, b.LocalHash, text.Request.Blocks[i].LocalHash, holds)
		}
		if sameSeq := b.SequenceHash == text.Request.Blocks[i].SequenceHash; sameSeq != (i < 4) {
			t.Errorf("block %d: sequence hash changed = %v, want %v", i, !sameSeq, i >= 4)
		}
	}
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
