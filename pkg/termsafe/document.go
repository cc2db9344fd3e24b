package termsafe

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// JSON escapes, in an encoded JSON document, every unsafe rune inside its
// strings as \uXXXX (a surrogate pair above U+FFFF), so the document decodes to
// exactly the same values and is safe to print. Go's encoder already escapes
// C0 controls and U+2028/U+2029; this adds DEL, C1, bidi and invisible runes.
// Outside strings a JSON document holds only ASCII structure and whitespace,
// which is left alone. doc must be valid UTF-8 (encoding/json's output is).
func JSON(doc []byte) []byte {
	i := firstUnsafeDoc(doc)
	if i < 0 {
		return doc
	}
	out := make([]byte, 0, len(doc)+32)
	out = append(out, doc[:i]...)
	for i < len(doc) {
		r, size := utf8.DecodeRune(doc[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			out = append(out, `\ufffd`...)
		case Unsafe(r) && r != '\n' && r != '\t' && r != '\r':
			out = appendJSONEscape(out, r)
		default:
			out = append(out, doc[i:i+size]...)
		}
		i += size
	}
	return out
}

func firstUnsafeDoc(doc []byte) int {
	for i := 0; i < len(doc); {
		c := doc[i]
		if c < utf8.RuneSelf {
			if c == 0x7f || (c < 0x20 && c != '\n' && c != '\t' && c != '\r') {
				return i
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(doc[i:])
		if (r == utf8.RuneError && size == 1) || Unsafe(r) {
			return i
		}
		i += size
	}
	return -1
}

func appendJSONEscape(out []byte, r rune) []byte {
	if r > 0xffff {
		r -= 0x10000
		out = appendU4(out, 0xd800+(r>>10))
		return appendU4(out, 0xdc00+(r&0x3ff))
	}
	return appendU4(out, r)
}

func appendU4(out []byte, r rune) []byte {
	out = append(out, '\\', 'u')
	for shift := 12; shift >= 0; shift -= 4 {
		out = append(out, hexDigits[(r>>uint(shift))&0xf])
	}
	return out
}

// YAMLStrings prepares an encoded JSON document for a JSON-to-YAML converter
// that would print unsafe runes raw (YAML emitters consider bidi controls and
// zero-width runes printable): every string that holds one is replaced by a
// placeholder, and restore puts each back, in the converter's output, as a YAML
// double-quoted scalar with the unsafe runes escaped. Placeholders carry the
// process secret, so no value can collide with one.
func YAMLStrings(doc []byte) (prepared []byte, restore func([]byte) []byte, err error) {
	var quoted []string
	out := make([]byte, 0, len(doc))
	for i := 0; i < len(doc); {
		c := doc[i]
		if c != '"' {
			out = append(out, c)
			i++
			continue
		}
		end := stringEnd(doc, i)
		if end < 0 {
			return nil, nil, fmt.Errorf("unterminated string at byte %d", i)
		}
		lit := doc[i:end]
		i = end
		var s string
		if !bytes.ContainsRune(lit, '\\') && firstUnsafeDoc(lit) < 0 {
			out = append(out, lit...)
			continue
		}
		if err := json.Unmarshal(lit, &s); err != nil {
			return nil, nil, fmt.Errorf("string at byte %d: %w", i, err)
		}
		if firstUnsafe(s, keepText) < 0 { // newlines and tabs: the emitter's business
			out = append(out, lit...)
			continue
		}
		out = append(out, '"')
		out = append(out, placeholder(len(quoted))...)
		out = append(out, '"')
		quoted = append(quoted, yamlQuote(s))
	}
	if len(quoted) == 0 {
		return doc, func(y []byte) []byte { return y }, nil
	}
	restore = func(y []byte) []byte {
		for k := len(quoted) - 1; k >= 0; k-- {
			y = bytes.ReplaceAll(y, []byte(placeholder(k)), []byte(quoted[k]))
		}
		return y
	}
	return out, restore, nil
}

func placeholder(k int) string { return "kdynq" + secret + "n" + strconv.Itoa(k) + "z" }

// stringEnd returns the index just past the JSON string literal starting at
// doc[i] (a quote), or -1.
func stringEnd(doc []byte, i int) int {
	for j := i + 1; j < len(doc); j++ {
		switch doc[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// yamlQuote is s as a YAML double-quoted scalar, every unsafe rune escaped.
func yamlQuote(s string) string {
	b := make([]byte, 0, len(s)+8)
	b = append(b, '"')
	for _, r := range s {
		switch {
		case r == '"':
			b = append(b, '\\', '"')
		case r == '\\':
			b = append(b, '\\', '\\')
		case r == '\n':
			b = append(b, '\\', 'n')
		case r == '\t':
			b = append(b, '\\', 't')
		case Unsafe(r):
			b = appendRuneEscape(b, r)
		default:
			b = utf8.AppendRune(b, r)
		}
	}
	return string(append(b, '"'))
}
