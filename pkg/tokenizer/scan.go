package tokenizer

import (
	"unicode"
	"unicode/utf8"
)

// Hand-written scanners for the split regexes seen in practice. Each one
// returns the end of the leftmost-first match that starts at i, exactly as a
// backtracking engine (Oniguruma, regexp2, JavaScript) would for the pattern
// string it stands for. Every one of these patterns matches at every
// position, so a split is a sequence of consecutive matches.

// patternGPT2 is the GPT-2 split regex (also the built-in regex of the
// ByteLevel pre-tokenizer with use_regex).
const patternGPT2 = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`

// patternLlama3 is the split regex of Llama-3/3.x (cl100k-like).
const patternLlama3 = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`

// patternQwen2 is the split regex of Qwen2/2.5/3: Llama-3's with single
// digits.
const patternQwen2 = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`

// scanner returns the end of the match at i (i < len(s)).
type scanner func(s string, i int) int

func knownScanner(regex string) scanner {
	switch regex {
	case patternGPT2:
		return scanGPT2
	case patternLlama3:
		return func(s string, i int) int { return scanLlama3(s, i, 3) }
	case patternQwen2:
		return func(s string, i int) int { return scanLlama3(s, i, 1) }
	}
	return nil
}

var asciiClass [128]uint8

const (
	clsL = 1 << iota
	clsN
	clsWS
)

func init() {
	for c := 0; c < 128; c++ {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
			asciiClass[c] = clsL
		case c >= '0' && c <= '9':
			asciiClass[c] = clsN
		case c == ' ', c >= '\t' && c <= '\r':
			asciiClass[c] = clsWS
		}
	}
}

func decodeAt(s string, i int) (rune, int) {
	if c := s[i]; c < utf8.RuneSelf {
		return rune(c), 1
	}
	return utf8.DecodeRuneInString(s[i:])
}

// isL is \p{L}.
func isL(r rune) bool {
	if r < utf8.RuneSelf {
		return asciiClass[r]&clsL != 0
	}
	return unicode.IsLetter(r)
}

// isN is \p{N}.
func isN(r rune) bool {
	if r < utf8.RuneSelf {
		return asciiClass[r]&clsN != 0
	}
	return unicode.IsNumber(r)
}

// isWS is Oniguruma's Unicode \s, which is the White_Space property.
func isWS(r rune) bool {
	if r < utf8.RuneSelf {
		return asciiClass[r]&clsWS != 0
	}
	switch r {
	case 0x85, 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000:
		return true
	}
	return r >= 0x2000 && r <= 0x200A
}

// isOther is [^\s\p{L}\p{N}].
func isOther(r rune) bool {
	if r < utf8.RuneSelf {
		return asciiClass[r] == 0
	}
	return !isWS(r) && !unicode.IsLetter(r) && !unicode.IsNumber(r)
}

func runEnd(s string, j int, in func(rune) bool) int {
	for j < len(s) {
		r, w := decodeAt(s, j)
		if !in(r) {
			break
		}
		j += w
	}
	return j
}

func lettersEnd(s string, j int) int {
	for j < len(s) {
		if c := s[j]; c < utf8.RuneSelf {
			if asciiClass[c]&clsL == 0 {
				return j
			}
			j++
			continue
		}
		r, w := utf8.DecodeRuneInString(s[j:])
		if !unicode.IsLetter(r) {
			return j
		}
		j += w
	}
	return j
}

// contraction returns the length of 's|'t|'re|'ve|'m|'ll|'d after the
// apostrophe at s[j-1], or 0. With fold, ASCII case is ignored.
func contraction(s string, j int, fold bool) int {
	if j >= len(s) {
		return 0
	}
	lower := func(c byte) byte {
		if fold && c >= 'A' && c <= 'Z' {
			return c + 'a' - 'A'
		}
		return c
	}
	switch lower(s[j]) {
	case 's', 't', 'm', 'd':
		return 1
	case 'r', 'v':
		if j+1 < len(s) && lower(s[j+1]) == 'e' {
			return 2
		}
	case 'l':
		if j+1 < len(s) && lower(s[j+1]) == 'l' {
			return 2
		}
	}
	return 0
}

// whitespaceEnd handles the trailing `\s+(?!\S)|\s+` alternatives at i,
// where s[i] is whitespace.
func whitespaceEnd(s string, i int) int {
	e, lastW := i, 0
	for e < len(s) {
		r, w := decodeAt(s, e)
		if !isWS(r) {
			break
		}
		e, lastW = e+w, w
	}
	if e == len(s) || e-lastW == i {
		return e
	}
	return e - lastW
}

func scanGPT2(s string, i int) int {
	r, w := decodeAt(s, i)
	if r == '\'' {
		if n := contraction(s, i+1, false); n > 0 {
			return i + 1 + n
		}
	}
	if r == ' ' && i+1 < len(s) {
		r2, w2 := decodeAt(s, i+1)
		switch {
		case isL(r2):
			return lettersEnd(s, i+1+w2)
		case isN(r2):
			return runEnd(s, i+1+w2, isN)
		case isOther(r2):
			return runEnd(s, i+1+w2, isOther)
		}
	}
	switch {
	case isL(r):
		return lettersEnd(s, i+w)
	case isN(r):
		return runEnd(s, i+w, isN)
	case isOther(r):
		return runEnd(s, i+w, isOther)
	}
	return whitespaceEnd(s, i)
}

func scanLlama3(s string, i int, maxDigits int) int {
	r, w := decodeAt(s, i)
	// (?i:'s|'t|'re|'ve|'m|'ll|'d)
	if r == '\'' {
		if n := contraction(s, i+1, true); n > 0 {
			return i + 1 + n
		}
	}
	// [^\r\n\p{L}\p{N}]?\p{L}+
	if isL(r) {
		return lettersEnd(s, i+w)
	}
	if r != '\r' && r != '\n' && !isN(r) && i+w < len(s) {
		if r2, w2 := decodeAt(s, i+w); isL(r2) {
			return lettersEnd(s, i+w+w2)
		}
	}
	// \p{N}{1,maxDigits}
	if isN(r) {
		j := i + w
		for k := 1; k < maxDigits && j < len(s); k++ {
			r2, w2 := decodeAt(s, j)
			if !isN(r2) {
				break
			}
			j += w2
		}
		return j
	}
	//  ?[^\s\p{L}\p{N}]+[\r\n]*
	j := i
	if r == ' ' {
		j = i + 1
	}
	if j < len(s) {
		if r2, w2 := decodeAt(s, j); isOther(r2) {
			j = runEnd(s, j+w2, isOther)
			for j < len(s) && (s[j] == '\r' || s[j] == '\n') {
				j++
			}
			return j
		}
	}
	// \s*[\r\n]+
	e, lastNL := i, -1
	for e < len(s) {
		r2, w2 := decodeAt(s, e)
		if !isWS(r2) {
			break
		}
		if r2 == '\r' || r2 == '\n' {
			lastNL = e
		}
		e += w2
	}
	if lastNL >= 0 {
		return lastNL + 1
	}
	if e == i {
		// Not reachable for valid input: every rune is L, N, \s or other.
		return i + w
	}
	// \s+(?!\S)|\s+
	return whitespaceEnd(s, i)
}
