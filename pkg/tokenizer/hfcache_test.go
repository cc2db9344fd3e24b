package tokenizer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestResolve(t *testing.T) {
	home := t.TempDir()
	hub := filepath.Join(home, ".cache", "huggingface", "hub")
	write := func(rel, content string) string {
		p := filepath.Join(hub, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	mainTok := write("models--Qwen--Qwen3-0.6B/snapshots/aaaa1111/tokenizer.json", "{}")
	write("models--Qwen--Qwen3-0.6B/snapshots/bbbb2222/tokenizer.json", "{}")
	write("models--Qwen--Qwen3-0.6B/refs/main", "aaaa1111\n")
	write("models--Qwen--Qwen3-0.6B/refs/v2", "bbbb2222")
	single := write("models--meta--llama/snapshots/cccc3333/tokenizer.json", "{}")
	write("models--two--snaps/snapshots/d1/tokenizer.json", "{}")
	write("models--two--snaps/snapshots/d2/tokenizer.json", "{}")
	altHF := t.TempDir()
	alt := filepath.Join(altHF, "hub", "models--org--alt", "snapshots", "e5", "tokenizer.json")
	if err := os.MkdirAll(filepath.Dir(alt), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(alt, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(t.TempDir(), "tok.json")
	if err := os.WriteFile(plain, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"HOME": home, "HF_HOME": altHF}
	getenv := func(k string) string { return env[k] }

	tests := []struct {
		ref      string
		wantPath string
		wantRev  string
		wantErr  string
	}{
		{plain, plain, "", ""},
		{filepath.Dir(plain), "", "", "has no tokenizer.json"},
		{filepath.Dir(mainTok), mainTok, "", ""},
		{"Qwen/Qwen3-0.6B", mainTok, "aaaa1111", ""},
		{"Qwen/Qwen3-0.6B@v2", strings.Replace(mainTok, "aaaa1111", "bbbb2222", 1), "bbbb2222", ""},
		{"Qwen/Qwen3-0.6B@bbbb2222", strings.Replace(mainTok, "aaaa1111", "bbbb2222", 1), "bbbb2222", ""},
		{"Qwen/Qwen3-0.6B@nope", "", "", `revision "nope" has no tokenizer.json`},
		{"meta/llama", single, "cccc3333", ""},
		{"two/snaps", "", "", "2 cached snapshots"},
		{"org/alt", alt, "e5", ""},
		{"missing/model", "", "", "huggingface-cli download missing/model tokenizer.json"},
		{"not-a-model", "", "", "not a Hugging Face model id"},
		{"", "", "", "no tokenizer given"},
	}
	for _, tt := range tests {
		t.Run(tt.ref, func(t *testing.T) {
			src, err := Resolve(tt.ref, getenv)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if src.Path != tt.wantPath || src.Revision != tt.wantRev {
				t.Errorf("got %+v, want path %s rev %s", src, tt.wantPath, tt.wantRev)
			}
		})
	}
}
