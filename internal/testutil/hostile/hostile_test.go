package hostile

import "testing"

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
