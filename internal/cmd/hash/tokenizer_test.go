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
	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/hermetic"
)

const toyTokenizer = "../../../pkg/tokenizer/testdata/toy_bytelevel.json"

// TestHashPromptGolden pins the prompt path with the hand-written tokenizer.
func TestHashPromptGolden(t *testing.T) {
	dir := t.TempDir()
	promptFile := filepath.Join(dir, "prompt.txt")
	if err := os.WriteFile(promptFile, []byte("Hello, world! Hello again, world.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		args  []string
		stdin string
	}{
		{"prompt_wide", []string{"hash", "--tokenizer", toyTokenizer, "--prompt", "Hello, world! Hello again, world.", "--block-size", "4", "-o", "wide"}, ""},
		{"prompt_json", []string{"hash", "--tokenizer", toyTokenizer, "--prompt", "Hello, world!", "--block-size", "2", "-o", "json"}, ""},
		{"prompt_stdin", []string{"hash", "--tokenizer", toyTokenizer, "--prompt-file", "-", "--block-size", "4"}, "Hello again, world.\n"},
		// One rule with explain-route: special tokens are added unless
		// --add-special-tokens=false (cmdutil.AddSpecialTokensHelp).
		{"prompt_no_special_tokens", []string{"hash", "--tokenizer", toyTokenizer, "--prompt", "Hello, world!", "--block-size", "2", "--add-special-tokens=false"}, ""},
		{"err_special_tokens_with_tokens", []string{"hash", "--tokens", "1,2", "--add-special-tokens=false"}, ""},
		{"err_prompt_without_tokenizer", []string{"hash", "--prompt", "hi"}, ""},
		{"err_tokenizer_with_tokens", []string{"hash", "--tokens", "1,2", "--tokenizer", toyTokenizer}, ""},
		{"err_prompt_and_tokens", []string{"hash", "--tokens", "1,2", "--prompt", "hi", "--tokenizer", toyTokenizer}, ""},
		{"err_empty_prompt", []string{"hash", "--prompt", "", "--tokenizer", toyTokenizer}, ""},
		{"err_unknown_model", []string{"hash", "--prompt", "hi", "--tokenizer", "no-such-org/no-such-model"}, ""},
		{"err_not_a_tokenizer", []string{"hash", "--prompt", "hi", "--tokenizer", "tokenizer_test.go"}, ""},
		{"err_tokenizer_is_a_device", []string{"hash", "--prompt", "hi", "--tokenizer", "/dev/zero"}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("HF_HUB_CACHE", filepath.Join(dir, "empty-hub"))
			t.Setenv("HF_HOME", filepath.Join(dir, "empty-home"))
			t.Setenv("HOME", dir)
			t.Setenv("XDG_CACHE_HOME", "") // the lookup order is pinned by the golden file
			r := cmdtest.RunWith(t, cmdtest.Options{Stdin: tc.stdin}, tc.args...)
			golden.Assert(t, []byte(strings.ReplaceAll(string(cmdtest.Transcript(tc.args, tc.stdin, r)), dir, "$TMP")))
			wantCode := 0
			if strings.HasPrefix(tc.name, "err_") {
				wantCode = 1
			}
			if r.ExitCode != wantCode {
				t.Errorf("exit %d, want %d: %s", r.ExitCode, wantCode, r.Stderr)
			}
		})
	}
	t.Run("prompt_file_equals_prompt", func(t *testing.T) {
		a := cmdtest.Run(t, "hash", "--tokenizer", toyTokenizer, "--prompt-file", promptFile, "-o", "json", "--block-size", "2")
		b := cmdtest.Run(t, "hash", "--tokenizer", toyTokenizer, "--prompt", "Hello, world! Hello again, world.\n", "-o", "json", "--block-size", "2")
		if a.ExitCode != 0 || a.Stdout != b.Stdout {
			t.Errorf("--prompt-file and --prompt disagree:\n%s\n%s\n%s", a.Stdout, b.Stdout, a.Stderr)
		}
	})
}

// TestHashPromptRealTokenizerFromHFCache resolves a model id through a Hugging Face
// cache layout to the real Qwen3 tokenizer.json (fetched by hack/tokenizer/fetch.sh)
// and checks the ids against those produced by the reference implementation.
func TestHashPromptRealTokenizerFromHFCache(t *testing.T) {
	qwenHubCache(t)

	var gold struct {
		Cases []struct {
			Text string   `json:"text"`
			IDs  []uint32 `json:"ids"`
		} `json:"cases"`
	}
	data, err := os.ReadFile("../../../pkg/tokenizer/testdata/golden/qwen3.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &gold); err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, c := range gold.Cases {
		if len(c.IDs) < 8 || checked >= 5 {
			continue
		}
		checked++
		r := cmdtest.Run(t, "hash", "--tokenizer", "Qwen/Qwen3-0.6B", "--prompt", c.Text, "--block-size", "4", "-o", "json")
		if r.ExitCode != 0 {
			t.Fatalf("exit %d: %s", r.ExitCode, r.Stderr)
		}
		var doc struct {
			Tokenizer string   `json:"tokenizer"`
			Tokens    []uint32 `json:"tokens"`
			Blocks    []struct {
				LocalHash string `json:"localHash"`
			} `json:"blocks"`
		}
		if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(doc.Tokens, c.IDs) {
			t.Errorf("%q: ids %v, reference %v", c.Text, doc.Tokens, c.IDs)
		}
		if !strings.Contains(doc.Tokenizer, "Qwen/Qwen3-0.6B (Hugging Face cache, snapshot 0123456789ab") {
			t.Errorf("tokenizer source = %q", doc.Tokenizer)
		}
		if len(doc.Blocks) != len(c.IDs)/4 {
			t.Errorf("%q: %d blocks for %d tokens", c.Text, len(doc.Blocks), len(c.IDs))
		}
	}
	if checked == 0 {
		t.Fatal("no golden case long enough")
	}
}

// TestHashDocTranscript: the --tokenizer transcript in docs/commands/hash.md is
// this command's real output, through the same Hugging Face cache layout
// (UPDATE_GOLDEN=1 rewrites the block).
func TestHashDocTranscript(t *testing.T) {
	hub := qwenHubCache(t)
	const doc = "../../../docs/commands/hash.md"
	data, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	const prompt = "$ kubectl dynamo hash --tokenizer Qwen/Qwen3-0.6B --prompt \"Hello, world! How are you?\" --block-size 4 -o wide\n"
	start := strings.Index(string(data), prompt)
	if start < 0 {
		t.Fatalf("%s has no block starting with %q", doc, prompt)
	}
	end := strings.Index(string(data)[start:], "\n```")
	block := string(data)[start+len(prompt) : start+end+1]
	r := cmdtest.Run(t, "hash", "--tokenizer", "Qwen/Qwen3-0.6B", "--prompt", "Hello, world! How are you?", "--block-size", "4", "-o", "wide")
	if r.ExitCode != 0 {
		t.Fatalf("exit %d: %s", r.ExitCode, r.Stderr)
	}
	// The cache shows where a user's is.
	if got := strings.ReplaceAll(r.Stdout+r.Stderr, hub, "~/.cache/huggingface/hub"); got != block {
		if golden.Updating() {
			out := string(data)[:start+len(prompt)] + got + string(data)[start+end+1:]
			if err := os.WriteFile(doc, []byte(out), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("%s shows an output the command no longer prints (UPDATE_GOLDEN=1 rewrites it):\n--- doc\n%s--- now\n%s", doc, block, got)
	}
}

// qwenHubCache lays out a Hugging Face hub cache (HF_HUB_CACHE) holding the
// real Qwen3 tokenizer.json (fetched by hack/tokenizer/fetch.sh) as
// Qwen/Qwen3-0.6B, snapshot 0123456789abcdef, and returns its directory.
func qwenHubCache(t *testing.T) string {
	t.Helper()
	realFile := filepath.Join(hermetic.CacheDir(), "tokenizers", "qwen3", "tokenizer.json")
	if _, err := os.Stat(realFile); err != nil {
		hermetic.SkipOrFail(t, realFile, "hack/tokenizer/fetch.sh")
	}
	hub := t.TempDir()
	model := filepath.Join(hub, "models--Qwen--Qwen3-0.6B")
	snap := filepath.Join(model, "snapshots", "0123456789abcdef")
	if err := os.MkdirAll(snap, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(realFile, filepath.Join(snap, "tokenizer.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(model, "refs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(model, "refs", "main"), []byte("0123456789abcdef"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HF_HUB_CACHE", hub)
	return hub
}
