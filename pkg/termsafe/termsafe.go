package termsafe

import (
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// Unsafe reports whether r must not reach a terminal as it is: C0 and C1
// controls and DEL (escape sequences, carriage return, backspace), bidi
// controls (they reorder what the user reads), zero-width and other invisible
// formatting characters (they hide or join text), line and paragraph
// separators, Unicode tag characters (invisible ASCII look-alikes), the
// interlinear annotation characters, and the noncharacters U+FDD0–U+FDEF, which
// this package reserves for its colour markers.
func Unsafe(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x00ad, r == 0x034f, r == 0x061c, r == 0x115f, r == 0x1160, r == 0x17b4, r == 0x17b5, r == 0x180e:
		return true
	case r >= 0x200b && r <= 0x200f: // zero-width space/non-joiner/joiner, LRM, RLM
		return true
	case r >= 0x2028 && r <= 0x202e: // line/paragraph separators, LRE RLE PDF LRO RLO
		return true
	case r >= 0x2060 && r <= 0x206f: // word joiner, invisible operators, LRI RLI FSI PDI, deprecated formats
		return true
	case r == 0x3164, r == 0xfeff, r == 0xffa0:
		return true
	case r >= 0xfdd0 && r <= 0xfdef:
		return true
	case r >= 0xfff9 && r <= 0xfffb:
		return true
	case r >= 0x1d173 && r <= 0x1d17a:
		return true
	case r >= 0xe0000 && r <= 0xe007f: // tags
		return true
	}
	return false
}

// keepNone and keepText say which unsafe runes a mode lets through.
func keepNone(rune) bool   { return false }
func keepText(r rune) bool { return r == '\n' || r == '\t' }

// Escape renders every unsafe rune of s visibly (`\x1b`, `\u202e`, `\U000e0041`)
// and every byte that is not UTF-8 as `\xNN`, newlines and tabs included: the
// form for one-line values (table cells, names, labels). s is returned as it is,
// without allocating, when it is safe.
func Escape(s string) string { return escape(s, keepNone) }

// EscapeText is Escape for multi-line free text: it keeps newlines and tabs.
func EscapeText(s string) string { return escape(s, keepText) }

// Safe reports whether s has nothing for Escape to do.
func Safe(s string) bool { return firstUnsafe(s, keepNone) < 0 }

func firstUnsafe(s string, keep func(rune) bool) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7f {
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || (Unsafe(r) && !keep(r)) {
			return i
		}
		i += size
	}
	return -1
}

func escape(s string, keep func(rune) bool) string {
	i := firstUnsafe(s, keep)
	if i < 0 {
		return s
	}
	b := make([]byte, 0, len(s)+16)
	b = append(b, s[:i]...)
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = appendByteEscape(b, s[i])
		case Unsafe(r) && !keep(r):
			b = appendRuneEscape(b, r)
		default:
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return string(b)
}

const hexDigits = "0123456789abcdef"

// appendByteEscape appends `\xNN`.
func appendByteEscape(dst []byte, c byte) []byte {
	return append(dst, '\\', 'x', hexDigits[c>>4], hexDigits[c&0xf])
}

// appendRuneEscape appends `\xNN` (ASCII), `\uNNNN` or `\UNNNNNNNN`.
func appendRuneEscape(dst []byte, r rune) []byte {
	switch {
	case r < 0x80:
		return appendByteEscape(dst, byte(r))
	case r <= 0xffff:
		return appendHex(append(dst, '\\', 'u'), uint32(r), 4)
	default:
		return appendHex(append(dst, '\\', 'U'), uint32(r), 8)
	}
}

func appendHex(dst []byte, v uint32, digits int) []byte {
	for shift := (digits - 1) * 4; shift >= 0; shift -= 4 {
		dst = append(dst, hexDigits[(v>>uint(shift))&0xf])
	}
	return dst
}

// The colour markers: markOpen, the process secret, an SGR parameter list, then
// markClose. Both runes are noncharacters, which Escape and Writer escape
// wherever they do not open a marker with the right secret.
const (
	markOpen  = "\ufdd0"
	markClose = "\ufdd1"
	// maxCode bounds an SGR parameter list in a marker.
	maxCode = 24
)

// secret is fixed per process; text read from a cluster or a file cannot know
// it, so it cannot forge a marker.
var secret = newSecret()

func newSecret() string {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("termsafe: no randomness for the colour-marker secret: " + err.Error())
	}
	return hex.EncodeToString(b[:])
}

// maxMarker is the longest marker in bytes.
var maxMarker = len(markOpen) + len(secret) + maxCode + len(markClose)

// SGR wraps s in the plugin's colour: code is an SGR parameter list ("1",
// "31", "1;33"). The result carries markers, not escape sequences; a Writer
// with colour on turns them into ANSI SGR, one with colour off drops them.
// Printers use it only when colour is enabled, and never on text that is not
// the plugin's own decoration around (already escaped) values.
func SGR(code, s string) string {
	if !validCode(code) {
		panic("termsafe: invalid SGR code " + strconv.Quote(code))
	}
	return markOpen + secret + code + markClose + s + markOpen + secret + "0" + markClose
}

func validCode(code string) bool {
	if code == "" || len(code) > maxCode {
		return false
	}
	for i := 0; i < len(code); i++ {
		if c := code[i]; (c < '0' || c > '9') && c != ';' {
			return false
		}
	}
	return true
}

// parseMarker reads a marker at the start of s: its SGR code and length, or
// ok false when s does not start with a whole, valid marker.
func parseMarker(s string) (code string, n int, ok bool) {
	if !strings.HasPrefix(s, markOpen+secret) {
		return "", 0, false
	}
	rest := s[len(markOpen)+len(secret):]
	end := strings.Index(rest, markClose)
	if end < 0 || end > maxCode {
		return "", 0, false
	}
	code = rest[:end]
	if !validCode(code) {
		return "", 0, false
	}
	return code, len(markOpen) + len(secret) + end + len(markClose), true
}

// Strip removes the plugin's colour markers from s (for measuring it).
func Strip(s string) string {
	if !strings.Contains(s, markOpen) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if strings.HasPrefix(s[i:], markOpen) {
			if _, n, ok := parseMarker(s[i:]); ok {
				i += n
				continue
			}
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		b.WriteString(s[i : i+size])
		i += size
	}
	return b.String()
}

// PlainASCII reports whether s is printable ASCII only (0x20 to 0x7e): text
// that escaping leaves alone and that is one terminal cell per byte.
func PlainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}

// Width is the display width of s in terminal cells, markers excluded. s should
// be escaped already; unsafe runes count as they would print raw.
func Width(s string) int { return ansi.StringWidth(Strip(s)) }

// Truncate cuts s to at most width display cells, keeping its beginning and its
// end and putting an ellipsis in the middle, where names differ least (pod
// names end in their unique suffix). s must hold no markers (escape and cut a
// value before decorating it).
func Truncate(s string, width int) string {
	if width <= 0 {
		return ""
	}
	if PlainASCII(s) {
		// One cell per byte: the same cut without measuring every rune (a
		// cell may hold a list of thousands of pod names).
		if len(s) <= width {
			return s
		}
		if width == 1 {
			return "…"
		}
		tail := (width - 1) / 3
		return s[:width-1-tail] + "…" + s[len(s)-tail:]
	}
	if ansi.StringWidth(s) <= width {
		return s
	}
	if width == 1 {
		return "…"
	}
	tail := (width - 1) / 3
	head := width - 1 - tail
	return ansi.Truncate(s, head, "") + "…" + ansi.TruncateLeft(s, ansi.StringWidth(s)-tail, "")
}

// EscapeMarked is Escape for text that may carry the plugin's colour markers:
// the markers stay, everything else is escaped.
func EscapeMarked(s string) string {
	if !strings.Contains(s, markOpen) {
		return Escape(s)
	}
	var b strings.Builder
	seg := 0
	for i := 0; i < len(s); {
		if strings.HasPrefix(s[i:], markOpen) {
			if _, n, ok := parseMarker(s[i:]); ok {
				b.WriteString(Escape(s[seg:i]))
				b.WriteString(s[i : i+n])
				i += n
				seg = i
				continue
			}
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	b.WriteString(Escape(s[seg:]))
	return b.String()
}
