package cmdutil

import "testing"

func TestSuggest(t *testing.T) {
	domains := []string{"zone", "rack", "host", "nvlink-domain"}
	tests := []struct{ word, want string }{
		{"zon", "zone"},
		{"Zone", ""}, // a match, not a suggestion
		{"zones", "zone"},
		{"rac", "rack"},
		{"hots", ""}, // a transposition is two edits: too far for four letters
		{"nvlink-domian", "nvlink-domain"},
		{"nvlink", ""},
		{"region", ""},
		{"", ""},
	}
	for _, tt := range tests {
		if got := Suggest(tt.word, domains); got != tt.want {
			t.Errorf("Suggest(%q) = %q, want %q", tt.word, got, tt.want)
		}
	}
	if got := Suggest("x", nil); got != "" {
		t.Errorf("no candidates: %q", got)
	}
}
