package hash_test

import (
	"encoding/json"
	"os"
	"path/filepath"
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
		{"mm_upstream_vector", []string{"hash", "--tokens", "0,1,2,3", "--block-size", "2", "--mm", "42@0:1", "-o", "json"}, ""},
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
