package cmdutil

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

func TestParseTokenList(t *testing.T) {
	tests := []struct {
		in      string
		want    []uint32
		wantErr string
	}{
		{"1,2,3", []uint32{1, 2, 3}, ""},
		{" 1 2\n3\t4 ", []uint32{1, 2, 3, 4}, ""},
		{"1, 2 ,3", []uint32{1, 2, 3}, ""},
		{"[1, 2, 4294967295]", []uint32{1, 2, 4294967295}, ""},
		{"[ ]", nil, "holds no token ids"},
		{"", nil, "holds no token ids"},
		{"1,,2", []uint32{1, 2}, ""},
		{"[1, -2]", nil, "input, token 2: "},
		{"1,2,abc", nil, "input, token 3: token id \"abc\""},
		{"abc", nil, "input, token 1: "},
		{"[1, 1e2]", nil, "not a non-negative integer"},
		{"[1, null]", nil, "token 2"},
		{`{"a":1}`, nil, "not a non-negative integer"},
		{"[1, [2]]", nil, "token 2"},
		{`["1"]`, nil, "input, token 1: \"1\" is a JSON string"},
		{"[1,", nil, "invalid JSON token array"},
		{"0x10", nil, "not a non-negative integer"},
		{"18446744073709551616", nil, "does not fit in 32 bits"},
		{"# a comment\n1 2\n  # indented comment 9\n3", []uint32{1, 2, 3}, ""},
		{"# only a comment\n", nil, "holds no token ids"},
		{"1 #2", nil, "not a non-negative integer"},
	}
	for _, tt := range tests {
		got, err := ParseTokenList([]byte(tt.in), "input")
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%q: err = %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("%q: got %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestReadInput(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "x")
	if err := os.WriteFile(f, []byte("abc"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadInput(nil, f, "--x"); err != nil || string(b) != "abc" {
		t.Errorf("file: %q %v", b, err)
	}
	if b, err := ReadInput(strings.NewReader("stdin"), "-", "--x"); err != nil || string(b) != "stdin" {
		t.Errorf("stdin: %q %v", b, err)
	}
	if _, err := ReadInput(nil, dir, "--x"); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("dir: %v", err)
	}
	big := &repeatReader{n: MaxInputFileBytes + 10}
	if _, err := ReadInput(big, "-", "--x"); err == nil || !strings.Contains(err.Error(), "larger than the 256 MiB limit") {
		t.Errorf("oversized: %v", err)
	}
}

type repeatReader struct{ n int }

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, errors.New("EOF not expected: the reader must stop at the limit")
	}
	n := min(len(p), r.n)
	r.n -= n
	return n, nil
}

func TestExitCodeAndReport(t *testing.T) {
	root := &cobra.Command{Use: "kubectl-dynamo", Annotations: map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl dynamo"}}
	root.AddCommand(&cobra.Command{Use: "hash", Run: func(*cobra.Command, []string) {}})
	tests := []struct {
		name     string
		err      error
		code     int
		contains []string
	}{
		{"nil", nil, 0, nil},
		{"plain", errors.New("boom"), 1, []string{"error: boom\n"}},
		{"flag", FlagErrorf("bad --x"), 1, []string{"error: bad --x\n", "See 'kubectl dynamo hash --help' for usage."}},
		{"hint", WithHint(errors.New("no cluster"), "Try: kubectl dynamo hash"), 1, []string{"error: no cluster\nTry: kubectl dynamo hash\n"}},
		{"findings", &ResultError{Code: ExitFindings, Message: "2 findings at or above error"}, 2, []string{"2 findings at or above error\n"}},
		{"wrapped findings", errors.Join(&ResultError{Code: ExitFindings}), 2, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if got := Report(&b, root, []string{"hash"}, tt.err); got != tt.code {
				t.Errorf("code = %d, want %d", got, tt.code)
			}
			for _, c := range tt.contains {
				if !strings.Contains(b.String(), c) {
					t.Errorf("output %q lacks %q", b.String(), c)
				}
			}
			if tt.code == 2 && strings.Contains(b.String(), "error:") {
				t.Errorf("a findings exit is not an error: %q", b.String())
			}
		})
	}
}

func TestPrintStructuredTemplates(t *testing.T) {
	doc := map[string]any{"apiVersion": "kubectl-dynamo.io/v1alpha1", "kind": "X",
		"id": uint64(18446744073709551615), "items": []map[string]any{{"name": "a"}, {"name": "b"}}}
	tests := []struct {
		format, want, wantErr string
		table                 bool
	}{
		{format: "jsonpath={.kind}", want: "X\n"},
		{format: "jsonpath=.kind", want: "X\n"},
		{format: "jsonpath={.items[*].name}", want: "a b\n"},
		{format: "jsonpath={.id}", want: "18446744073709551615\n"},
		{format: "go-template={{.id}}", want: "18446744073709551615"},
		{format: "go-template={{range .items}}{{.name}},{{end}}", want: "a,b,"},
		{format: "jsonpath={.missing}", wantErr: "missing is not found"},
		{format: "go-template={{.missing}}", wantErr: "missing"},
		{format: "json", want: "\"id\": 18446744073709551615"},
		{format: "table", table: true},
	}
	for _, tt := range tests {
		o := OutputFlags{Format: tt.format, allowed: []string{OutputTable, OutputWide, OutputJSON, OutputYAML}}
		if err := o.Validate(); err != nil {
			t.Fatalf("%s: %v", tt.format, err)
		}
		var b strings.Builder
		ok, err := o.PrintStructured(&b, doc)
		switch {
		case tt.table:
			if ok {
				t.Errorf("%s: handled a human format", tt.format)
			}
		case tt.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: err %v, want %q", tt.format, err, tt.wantErr)
			}
		case err != nil || !ok || !strings.Contains(b.String(), tt.want):
			t.Errorf("%s: %q %v, want %q", tt.format, b.String(), err, tt.want)
		}
	}
	for _, bad := range []string{"jsonpath=", "jsonpath", "jsonpath={.a", "go-template={{.a", "csv"} {
		o := OutputFlags{Format: bad, allowed: []string{OutputTable, OutputJSON}}
		if err := o.Validate(); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	o := OutputFlags{Format: "jsonpath={.a}", allowed: []string{"text"}}
	if err := o.Validate(); err == nil {
		t.Error("jsonpath accepted on a command without json")
	}
}
