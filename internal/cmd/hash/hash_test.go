package hash_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/cmdtest"
	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/golden"
)

// TestHashGolden pins everything a user sees for representative invocations.
func TestHashGolden(t *testing.T) {
	dir := t.TempDir()
	jsonFile := filepath.Join(dir, "ids.json")
	if err := os.WriteFile(jsonFile, []byte("[1, 2, 3, 4,\n 5, 6, 7, 8, 9, 10, 11, 12]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		args  []string
		stdin string
	}{
		{"table", []string{"hash", "--tokens", "1,2,3,4,5,6,7,8,9,10,11,12", "--block-size", "4"}, ""},
		{"wide_partial_tail", []string{"hash", "--tokens", "1 2 3 4 5 6 7 8 9 10", "--block-size", "4", "-o", "wide"}, ""},
		{"no_headers", []string{"hash", "--tokens", "1,2,3,4", "--block-size", "4", "--no-headers"}, ""},
		{"json", []string{"hash", "--tokens", "1,2,3,4,5,6,7,8,9,10,11,12", "--block-size", "4", "-o", "json"}, ""},
		{"yaml_lora_namespace", []string{"hash", "--tokens", "1,2,3,4,5,6,7,8", "--block-size", "4", "--lora-name", "my-adapter", "--cache-namespace", "tenant-a", "-o", "yaml"}, ""},
		{"eagle", []string{"hash", "--tokens", "0,1,2,3,4,5", "--block-size", "2", "--eagle", "-o", "json"}, ""},
		{"stdin", []string{"hash", "--token-file", "-", "--block-size", "4"}, "1\n2\n3\n4\n"},
		{"fewer_than_a_block", []string{"hash", "--tokens", "1,2,3", "--block-size", "4"}, ""},
		{"err_non_numeric", []string{"hash", "--tokens", "1,two,3"}, ""},
		{"err_too_large", []string{"hash", "--tokens", "1,4294967296"}, ""},
		{"err_negative", []string{"hash", "--tokens", "-1"}, ""},
		{"err_block_size_zero", []string{"hash", "--tokens", "1,2", "--block-size", "0"}, ""},
		{"err_empty", []string{"hash", "--tokens", " , "}, ""},
		{"err_no_input", []string{"hash"}, ""},
		{"err_both_inputs", []string{"hash", "--tokens", "1", "--token-file", "x"}, ""},
		{"err_missing_file", []string{"hash", "--token-file", filepath.Join("testdata", "does-not-exist.json")}, ""},
		{"err_bad_json", []string{"hash", "--token-file", "-"}, "[1, 2.5]"},
		{"err_json_string", []string{"hash", "--token-file", "-"}, `["1"]`},
		{"err_trailing_json", []string{"hash", "--token-file", "-"}, `[1] [2]`},
		{"err_output", []string{"hash", "--tokens", "1", "-o", "xml"}, ""},
		// Multimodal objects (issue 21 item 3). mm_upstream_vector is upstream's
		// test_tokens_with_hashes_mm_change_recomputes_cached_hashes (tokens 0..3,
		// blocks of 2, mm_hash 42 at (0, 1)); pkg/routecore pins its numbers.
		{"mm_table", []string{"hash", "--tokens", "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16", "--block-size", "4", "--mm", "42@4:12"}, ""},
		{"mm_wide_two_objects", []string{"hash", "--tokens", "1,2,3,4,5,6,7,8,9,10", "--block-size", "4", "--mm", "7@4:6", "--mm", "3@6:10", "-o", "wide"}, ""},
		// Pad-value scheme (Dynamo 1.3+, #10328) by default; --dynamo-version
		// 1.2 keeps the mm_hash append scheme, which upstream's block_mm_infos
		// vector pins.
		{"mm_upstream_vector", []string{"hash", "--tokens", "0,1,2,3", "--block-size", "2", "--mm", "42@0:1", "--dynamo-version", "1.2.0", "-o", "json"}, ""},
		{"mm_pad_value_upstream", []string{"hash", "--tokens", "10,11,12,12,12,15,16,12,12,19", "--block-size", "4",
			"--mm", "0xaaaaaaaaaaaaaaaa@2:5", "--mm", "0xbbbbbbbbbbbbbbbb@7:9", "-o", "wide"}, ""},
		{"mm_pad_value_json", []string{"hash", "--tokens", "10,11,12,12,12,15,16,12,12,19", "--block-size", "4",
			"--mm", "0xaaaaaaaaaaaaaaaa@2:5", "--mm", "0xbbbbbbbbbbbbbbbb@7:9", "-o", "json"}, ""},
		{"mm_table_v1_2", []string{"hash", "--tokens", "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16", "--block-size", "4", "--mm", "42@4:12", "--dynamo-version", "v1.2.3"}, ""},
		{"mm_file_blocks_latest", []string{"hash", "--tokens", "0,1,2,3", "--block-size", "2", "--mm-file", "-", "--dynamo-version", "latest"},
			`[null, {"mm_objects":[{"mm_hash":18446744073709551615,"offsets":[[0,2]]}]}]`},
		{"err_mm_overlap", []string{"hash", "--tokens", "1,2,3,4", "--mm", "1@0:3", "--mm", "2@2:4"}, ""},
		{"err_dynamo_version", []string{"hash", "--tokens", "1,2,3,4", "--dynamo-version", "banana"}, ""},
		{"mm_identifier_yaml", []string{"hash", "--tokens", "0,1,2,3", "--block-size", "2", "--mm", "id:opaque-renderer-image-0@2:4", "-o", "yaml"}, ""},
		{"mm_file_blocks", []string{"hash", "--tokens", "0,1,2,3", "--block-size", "2", "--mm-file", "-", "-o", "json"},
			`[null, {"mm_objects":[{"mm_hash":18446744073709551615,"offsets":[[0,2]]}]}]`},
		{"mm_file_request", []string{"hash", "--tokens", "0,1,2,3", "--block-size", "2", "--mm-file", "-"},
			`{"mm_objects":[{"mm_hash":"42","offsets":[[0,1]]}]}`},
		{"err_mm_syntax", []string{"hash", "--tokens", "1,2,3,4", "--mm", "42@1-3"}, ""},
		{"err_mm_hash", []string{"hash", "--tokens", "1,2,3,4", "--mm", "abc@1:3"}, ""},
		{"err_mm_past_end", []string{"hash", "--tokens", "1,2,3,4", "--block-size", "2", "--mm", "42@2:6"}, ""},
		{"err_mm_both", []string{"hash", "--tokens", "1,2,3,4", "--mm", "42@0:1", "--mm-file", "x.json"}, ""},
		{"err_mm_file_json", []string{"hash", "--tokens", "1,2,3,4", "--mm-file", "-"}, `{"mm_objects":[{"mm_hash":1.5,"offsets":[[0,1]]}]}`},
		{"err_mm_two_stdins", []string{"hash", "--token-file", "-", "--mm-file", "-"}, "1 2 3 4"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := cmdtest.RunWith(t, cmdtest.Options{Stdin: tc.stdin}, tc.args...)
			golden.Assert(t, cmdtest.Transcript(tc.args, tc.stdin, r))
			if strings.HasPrefix(tc.name, "err_") {
				if r.ExitCode != 1 {
					t.Errorf("exit code = %d, want 1", r.ExitCode)
				}
				if !strings.HasPrefix(r.Stderr, "error: ") || r.Stdout != "" {
					t.Errorf("want one error on stderr and nothing on stdout, got stdout %q stderr %q", r.Stdout, r.Stderr)
				}
				if strings.Count(r.Stderr, "error:") != 1 {
					t.Errorf("error printed more than once: %q", r.Stderr)
				}
			} else if r.ExitCode != 0 {
				t.Errorf("exit code = %d, want 0 (stderr %q)", r.ExitCode, r.Stderr)
			}
		})
	}
	t.Run("json_file", func(t *testing.T) {
		r := cmdtest.Run(t, "hash", "--token-file", jsonFile, "--block-size", "4", "-o", "json")
		if r.ExitCode != 0 {
			t.Fatalf("exit %d: %s", r.ExitCode, r.Stderr)
		}
		var doc struct {
			TokenCount int `json:"tokenCount"`
			Blocks     []struct {
				LocalHash    string `json:"localHash"`
				SequenceHash string `json:"sequenceHash"`
			} `json:"blocks"`
		}
		if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
			t.Fatal(err)
		}
		// Dynamo's gold vectors (lib/tokens test_tokens_blocks).
		want := [][2]string{
			{"14643705804678351452", "14643705804678351452"},
			{"16777012769546811212", "4945711292740353085"},
			{"483935686894639516", "12583592247330656132"},
		}
		if doc.TokenCount != 12 || len(doc.Blocks) != len(want) {
			t.Fatalf("got %d tokens, %d blocks", doc.TokenCount, len(doc.Blocks))
		}
		for i, w := range want {
			if doc.Blocks[i].LocalHash != w[0] || doc.Blocks[i].SequenceHash != w[1] {
				t.Errorf("block %d = %+v, want %v", i, doc.Blocks[i], w)
			}
		}
	})
}

// TestHashColor checks that headers are bold only when colour is allowed.
func TestHashColor(t *testing.T) {
	args := []string{"hash", "--tokens", "1,2,3,4", "--block-size", "4"}
	cases := []struct {
		name string
		opts cmdtest.Options
		flag []string
		bold bool
	}{
		{"pipe_auto", cmdtest.Options{}, nil, false},
		{"tty_auto", cmdtest.Options{TTY: true}, nil, true},
		{"tty_no_color_env", cmdtest.Options{TTY: true, Env: map[string]string{"NO_COLOR": "1"}}, nil, false},
		{"pipe_clicolor_force", cmdtest.Options{Env: map[string]string{"CLICOLOR_FORCE": "1"}}, nil, true},
		{"tty_color_never", cmdtest.Options{TTY: true}, []string{"--color", "never"}, false},
		{"pipe_color_always", cmdtest.Options{}, []string{"--color=always"}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := cmdtest.RunWith(t, tc.opts, append(append([]string{}, args...), tc.flag...)...)
			if got := strings.Contains(r.Stdout, "\x1b["); got != tc.bold {
				t.Errorf("colour = %v, want %v; output %q", got, tc.bold, r.Stdout)
			}
			plain := strings.NewReplacer("\x1b[1m", "", "\x1b[0m", "").Replace(r.Stdout)
			if !strings.HasPrefix(plain, "BLOCK   TOKENS   LOCAL HASH") {
				t.Errorf("header misaligned: %q", plain)
			}
		})
	}
	r := cmdtest.Run(t, append(args, "--color", "sometimes")...)
	if r.ExitCode != 1 || !strings.Contains(r.Stderr, `invalid --color value "sometimes"`) {
		t.Errorf("bad --color: exit %d, stderr %q", r.ExitCode, r.Stderr)
	}
}

// TestHashMultimodalSchemes: per profile, the scheme applied; the same
// placeholder with two different images hashes differently in both schemes;
// a text request hashes the same in every profile; the pad-value routing
// tokens are upstream's (lib/llm preprocessor test: [10, 11, pad_a ×3, 15, 16,
// pad_b ×2, 19, 0, 0]).
func TestHashMultimodalSchemes(t *testing.T) {
	type doc struct {
		TokenCount    int      `json:"tokenCount"`
		MmScheme      string   `json:"mmScheme"`
		RoutingTokens []uint32 `json:"routingTokens"`
		Blocks        []struct {
			LocalHash string   `json:"localHash"`
			MmHashes  []string `json:"mmHashes"`
			PadValues []struct {
				PadValue uint32 `json:"padValue"`
				MmHash   string `json:"mmHash"`
			} `json:"padValues"`
			ZeroPadded int `json:"zeroPadded"`
		} `json:"blocks"`
	}
	run := func(t *testing.T, args ...string) doc {
		t.Helper()
		r := cmdtest.Run(t, append([]string{"hash", "--block-size", "4", "-o", "json"}, args...)...)
		if r.ExitCode != 0 {
			t.Fatalf("exit %d: %s", r.ExitCode, r.Stderr)
		}
		var d doc
		if err := json.Unmarshal([]byte(r.Stdout), &d); err != nil {
			t.Fatal(err)
		}
		return d
	}
	const toks = "1,2,3,4,5,6,7,8,9,10,11,12,13,14"
	text := run(t, "--tokens", toks)
	for _, tc := range []struct {
		version, scheme string
		blocks          int
	}{{"", "pad-value", 4}, {"latest", "pad-value", 4}, {"1.3.0", "pad-value", 4}, {"1.2.0", "mm-hash", 3}, {"legacy-v1.2", "mm-hash", 3}, {"1.1.0", "mm-hash", 3}} {
		t.Run("profile_"+tc.version, func(t *testing.T) {
			v := []string{"--dynamo-version", tc.version}
			if tc.version == "" {
				v = nil
			}
			if d := run(t, append([]string{"--tokens", toks}, v...)...); d.MmScheme != "" || len(d.Blocks) != 3 || d.Blocks[2].LocalHash != text.Blocks[2].LocalHash {
				t.Errorf("text request: scheme %q, %d blocks", d.MmScheme, len(d.Blocks))
			}
			a := run(t, append([]string{"--tokens", toks, "--mm", "42@4:8"}, v...)...)
			b := run(t, append([]string{"--tokens", toks, "--mm", "43@4:8"}, v...)...)
			if a.MmScheme != tc.scheme || len(a.Blocks) != tc.blocks {
				t.Fatalf("scheme %q with %d blocks, want %q with %d", a.MmScheme, len(a.Blocks), tc.scheme, tc.blocks)
			}
			if a.Blocks[0].LocalHash != text.Blocks[0].LocalHash || a.Blocks[1].LocalHash == b.Blocks[1].LocalHash || a.Blocks[1].LocalHash == text.Blocks[1].LocalHash {
				t.Errorf("block 0 must hash as text, block 1 differ per image and from text")
			}
			if tc.scheme == "pad-value" {
				if len(a.Blocks[1].PadValues) != 1 || a.Blocks[1].PadValues[0].PadValue != 1_000_042 || a.Blocks[3].ZeroPadded != 2 || len(a.RoutingTokens) != 16 {
					t.Errorf("pad-value blocks %+v, routing tokens %v", a.Blocks, a.RoutingTokens)
				}
			} else if len(a.Blocks[1].MmHashes) != 1 || a.Blocks[1].MmHashes[0] != "42" || a.RoutingTokens != nil {
				t.Errorf("mm-hash blocks %+v", a.Blocks)
			}
		})
	}
	d := run(t, "--tokens", "10,11,12,12,12,15,16,12,12,19", "--mm", "0xaaaaaaaaaaaaaaaa@2:5", "--mm", "0xbbbbbbbbbbbbbbbb@7:9")
	padA, padB := uint32(1_000_000+0xaaaaaaaaaaaaaaaa&(1<<30-1)), uint32(1_000_000+0xbbbbbbbbbbbbbbbb&(1<<30-1))
	want := []uint32{10, 11, padA, padA, padA, 15, 16, padB, padB, 19, 0, 0}
	if !slices.Equal(d.RoutingTokens, want) || d.TokenCount != 10 || len(d.Blocks) != 3 {
		t.Errorf("routing tokens %v (%d tokens, %d blocks), want %v", d.RoutingTokens, d.TokenCount, len(d.Blocks), want)
	}
}
