package printers

import (
	"bytes"
	"encoding/json"
)

// indentJSON appends src, one compact JSON value as encoding/json writes it
// (no whitespace outside strings, optionally followed by a newline), to dst
// indented exactly as json.Indent(dst, src, "", "  ") would. It copies
// strings, numbers and literals in runs instead of stepping a scanner through
// every byte, which makes printing a large document (explain-route over
// 10,000 workers) several times faster. src must be valid JSON (JSON calls it
// on the encoder's output); input with whitespace outside strings is handed
// to json.Indent.
func indentJSON(dst, src []byte) ([]byte, error) {
	out, ok := indentCompact(dst, src)
	if ok {
		return out, nil
	}
	var buf bytes.Buffer
	buf.Write(dst)
	if err := json.Indent(&buf, src, "", "  "); err != nil {
		return dst, err
	}
	return buf.Bytes(), nil
}

// indentCompact does the work of indentJSON; ok is false when src is not
// compact, well-formed JSON (then dst is unusable).
func indentCompact(dst, src []byte) (out []byte, ok bool) {
	depth := 0
	needIndent := false
	top := false // a complete top-level value has been copied
	i := 0
	for i < len(src) {
		c := src[i]
		if top {
			// Only the newline json.Encoder adds may follow the value.
			if c != '\n' || i != len(src)-1 {
				return dst, false
			}
			return append(dst, c), true
		}
		if needIndent && c != '}' && c != ']' {
			needIndent = false
			depth++
			dst = indentNewline(dst, depth)
		}
		end := i + 1 // a string, number or literal is copied as one run up to end
		switch c {
		case '"':
			if end = stringEnd(src, i+1); end < 0 {
				return dst, false
			}
		case '{', '[':
			needIndent = true
			dst = append(dst, c)
			i++
			continue
		case ',':
			if depth == 0 {
				return dst, false
			}
			dst = append(dst, c)
			dst = indentNewline(dst, depth)
			i++
			continue
		case ':':
			dst = append(dst, c, ' ')
			i++
			continue
		case '}', ']':
			if needIndent {
				needIndent = false
			} else {
				if depth == 0 {
					return dst, false
				}
				depth--
				dst = indentNewline(dst, depth)
			}
			dst = append(dst, c)
			top = depth == 0
			i++
			continue
		default:
			if !isLiteralByte(c) {
				return dst, false // whitespace (not compact: json.Indent handles it) or garbage
			}
			for end < len(src) && isLiteralByte(src[end]) {
				end++
			}
		}
		dst = append(dst, src[i:end]...)
		i = end
		top = depth == 0
	}
	if needIndent || depth != 0 || !top {
		return dst, false
	}
	return dst, true
}

// stringEnd returns the index just past the closing quote of the string whose
// body starts at i, or -1 when it is unterminated.
func stringEnd(src []byte, i int) int {
	for {
		k := bytes.IndexByte(src[i:], '"')
		if k < 0 {
			return -1
		}
		q := i + k
		// The quote is escaped when an odd number of backslashes precede it.
		n := 0
		for p := q - 1; p >= i && src[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return q + 1
		}
		i = q + 1
	}
}

// isLiteralByte reports bytes of numbers, true, false and null.
func isLiteralByte(c byte) bool {
	return c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func indentNewline(dst []byte, depth int) []byte {
	dst = append(dst, '\n')
	for range depth {
		dst = append(dst, ' ', ' ')
	}
	return dst
}
