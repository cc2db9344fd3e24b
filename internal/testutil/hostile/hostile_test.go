package hostile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestControlFree(t *testing.T) {
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{"plain text\twith tab\n", true}, {"zone us-east-1a ✓ 日本", true},
		{"esc \x1b[31m", false}, {"bell \a", false}, {"del \x7f", false}, {"c1 \u0085", false},
		{"bidi \u202e", false}, {"isolate \u2066", false}, {"zwsp \u200b", false}, {"bom \ufeff", false},
		{"line sep \u2028", false}, {"nonchar \ufdd0", false}, {"tag \U000e0041", false}, {"bad \xff utf8", false},
	} {
		if _, ok := ControlFree(tc.in); ok != tc.ok {
			t.Errorf("ControlFree(%q) = %v, want %v", tc.in, ok, tc.ok)
		}
	}
}

func TestCapturePoisonsEveryStringAndKey(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "c.yaml")
	doc := "apiVersion: v1\nkind: List\nitems:\n- metadata:\n    name: zone-a\n    labels: {zone-a: zone-a}\n  data: '{\"k\":\"zone-a\"}'\n  n: 12345678901234567890\n"
	if err := os.WriteFile(in, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	out := Capture(t, in, CaptureOptions{Replace: strings.NewReplacer("zone-a", "zone-\x1b[31ma").Replace, Context: "ctx\a", Note: "n\u202e", Dir: dir})
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for _, want := range []string{`"name":"zone-\u001b[31ma"`, `"zone-\u001b[31ma":"zone-\u001b[31ma"`, `\"k\":\"zone-\\u001b[31ma\"`, `"kubectl-dynamo.io/context":"ctx\u0007"`, `"kubectl-dynamo.io/hostile":"n` + "\u202e" + `"`, `12345678901234567890`} {
		if !strings.Contains(s, want) {
			t.Errorf("the poisoned capture lacks %s:\n%s", want, s)
		}
	}
	if strings.Contains(s, "zone-a") {
		t.Errorf("an unpoisoned value is left:\n%s", s)
	}
}
