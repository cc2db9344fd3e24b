// Package hostile holds the checks the hostile-cluster tests share: what a
// terminal would interpret in a command's output, judged independently of
// internal/termsafe (so that a bug there cannot hide itself).
package hostile

import "unicode/utf8"

// ControlFree reports the first thing a terminal would interpret in s — C0
// but newline and tab, DEL, C1, bidi, zero-width and invisible runes,
// noncharacters, tags, invalid UTF-8 — with 40 bytes of context on each side,
// and false; or "", true when there is none.
func ControlFree(s string) (string, bool) {
	for i, r := range s {
		bad := r < 0x20 && r != '\n' && r != '\t' || r == 0x7f || r >= 0x80 && r <= 0x9f ||
			r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 || r >= 0x200b && r <= 0x200f ||
			r == 0xfeff || r == 0x2028 || r == 0x2029 || r >= 0xfdd0 && r <= 0xfdef || r >= 0xe0000 && r <= 0xe007f
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				bad = true
			}
		}
		if bad {
			return s[max(0, i-40):min(len(s), i+40)], false
		}
	}
	return "", true
}
