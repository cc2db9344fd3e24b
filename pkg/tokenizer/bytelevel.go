package tokenizer

import (
	"strings"
	"unicode/utf8"
)

// byteToRune is GPT-2's bytes_to_unicode table: printable Latin-1 bytes map to
// themselves, the others to U+0100 onwards.
var byteToRune [256]rune

// runeToByte is the inverse of byteToRune; runes outside the table map to -1.
var runeToByte = map[rune]int{}

// byteToString caches the UTF-8 encoding of byteToRune.
var byteToString [256]string

func init() {
	n := 0
	for b := 0; b < 256; b++ {
		if (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF) {
			byteToRune[b] = rune(b)
		} else {
			byteToRune[b] = rune(256 + n)
			n++
		}
		runeToByte[byteToRune[b]] = b
		byteToString[b] = string(byteToRune[b])
	}
}

// byteLevelEncode maps every byte of s to its byte-level rune.
func byteLevelEncode(s string) string {
	var sb strings.Builder
	sb.Grow(len(s) * 2)
	for i := 0; i < len(s); i++ {
		sb.WriteString(byteToString[s[i]])
	}
	return sb.String()
}

// byteLevelDecode maps byte-level runes back to bytes. ok is false if s
// contains a rune outside the table.
func byteLevelDecode(s string) (out []byte, ok bool) {
	out = make([]byte, 0, len(s))
	for _, r := range s {
		b, found := runeToByte[r]
		if !found {
			return nil, false
		}
		out = append(out, byte(b))
	}
	return out, true
}

// lossyUTF8 converts b to a string the way Rust's String::from_utf8_lossy and
// the WHATWG TextDecoder do: each maximal ill-formed subsequence becomes one
// U+FFFD.
func lossyUTF8(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	var sb strings.Builder
	sb.Grow(len(b) + 8)
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r != utf8.RuneError || size > 1 {
			sb.WriteString(string(b[i : i+size]))
			i += size
			continue
		}
		sb.WriteRune(utf8.RuneError)
		i += maximalSubpart(b[i:])
	}
	return sb.String()
}

// maximalSubpart returns the length (at least 1) of the longest prefix of b
// that is a prefix of some well-formed UTF-8 sequence (Unicode §3.9, D93b).
func maximalSubpart(b []byte) int {
	c := b[0]
	var need int
	lo, hi := byte(0x80), byte(0xBF)
	switch {
	case c >= 0xC2 && c <= 0xDF:
		need = 1
	case c == 0xE0:
		need, lo = 2, 0xA0
	case c >= 0xE1 && c <= 0xEC, c == 0xEE, c == 0xEF:
		need = 2
	case c == 0xED:
		need, hi = 2, 0x9F
	case c == 0xF0:
		need, lo = 3, 0x90
	case c >= 0xF1 && c <= 0xF3:
		need = 3
	case c == 0xF4:
		need, hi = 3, 0x8F
	default:
		return 1
	}
	n := 1
	for k := 0; k < need && n < len(b); k++ {
		x := b[n]
		if k == 0 {
			if x < lo || x > hi {
				return n
			}
		} else if x < 0x80 || x > 0xBF {
			return n
		}
		n++
	}
	return n
}
