package tui

import (
	"testing"

	"github.com/charmbracelet/x/ansi"
)

func TestNameFitter(t *testing.T) {
	pods := []string{"qwen3-32b-0-decode-us-east-1a-0", "qwen3-32b-0-decode-us-east-1a-1", "qwen3-32b-0-prefill-us-east-1c-0"}
	if got := newNameFitter([]string{"a-very-long-single-name"}, 10).fit("a-very-long-single-name"); got != "a-ver…name" {
		t.Errorf("a single name is cut in the middle: %q", got)
	}
	for _, tc := range []struct {
		width int
		want  []string
	}{
		{40, pods}, // fits: untouched
		{20, []string{"…decode-us-east-1a-0", "…decode-us-east-1a-1", "…prefill-u…east-1c-0"}},
		{14, []string{"…decode…t-1a-0", "…decode…t-1a-1", "…prefil…t-1c-0"}},
		{5, []string{"…de…0", "…de…1", "…pr…0"}},
	} {
		f := newNameFitter(pods, tc.width)
		seen := map[string]bool{}
		for i, p := range pods {
			got := f.fit(p)
			if got != tc.want[i] {
				t.Errorf("width %d: fit(%q) = %q, want %q", tc.width, p, got, tc.want[i])
			}
			if ansi.StringWidth(got) > tc.width {
				t.Errorf("width %d: %q is %d wide", tc.width, got, ansi.StringWidth(got))
			}
			if seen[got] {
				t.Errorf("width %d: %q shown for two names", tc.width, got)
			}
			seen[got] = true
		}
	}
}
