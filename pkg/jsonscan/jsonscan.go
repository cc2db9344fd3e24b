package jsonscan

import (
	"encoding/binary"
	"encoding/json"
	"math/bits"
	"strconv"
	"unicode/utf8"
)

// A validating JSON scanner and a decoder for validated JSON, used by the fast
// capture reader (capture_fast.go). Validate accepts exactly what
// encoding/json accepts (RFC 8259 values, no UTF-8 check inside strings, nesting
// up to encoding/json's limit); the js* helpers after it assume their input was
// validated and never index out of range either way. jsDecode builds the same
// values as DecodeJSONObject: int64 for integers that fit, float64 for other
// finite numbers, json.Number otherwise, strings unescaped exactly as
// encoding/json does.

// jsMaxDepth is encoding/json's nesting limit.
const jsMaxDepth = 10000

const (
	jsOnes  = 0x0101010101010101
	jsHighs = 0x8080808080808080
)

// jsStringSpecial returns a mask whose lowest set bit marks the first byte of x
// (little endian) that is '"', '\\' or a control character (< 0x20). Bits above
// the first match may be spurious (borrow propagation); the lowest is exact.
func jsStringSpecial(x uint64) uint64 {
	q := x ^ (jsOnes * '"')
	b := x ^ (jsOnes * '\\')
	return ((q - jsOnes) &^ q & jsHighs) | ((b - jsOnes) &^ b & jsHighs) | ((x - jsOnes*0x20) &^ x & jsHighs)
}

// jsStringEnd scans the string whose opening quote is at b[i]. It returns the
// index after the closing quote, whether the string has escapes, whether it has
// bytes >= 0x80, and ok false when the string is invalid or unterminated.
func jsStringEnd(b []byte, i int) (end int, escaped, nonASCII, ok bool) {
	i++
	var high uint64
	for {
		for i+8 <= len(b) {
			x := binary.LittleEndian.Uint64(b[i:])
			if m := jsStringSpecial(x); m != 0 {
				n := bits.TrailingZeros64(m) / 8
				high |= x & (uint64(1)<<(8*n) - 1) & jsHighs
				i += n
				break
			}
			high |= x & jsHighs
			i += 8
		}
		if i >= len(b) {
			return i, escaped, high != 0, false
		}
		c := b[i]
		switch {
		case c == '"':
			return i + 1, escaped, high != 0, true
		case c == '\\':
			escaped = true
			if i+1 >= len(b) {
				return i, escaped, high != 0, false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) || !jsHex(b[i+2]) || !jsHex(b[i+3]) || !jsHex(b[i+4]) || !jsHex(b[i+5]) {
					return i, escaped, high != 0, false
				}
				i += 6
			default:
				return i, escaped, high != 0, false
			}
		case c < 0x20:
			return i, escaped, high != 0, false
		default: // fewer than 8 bytes left: one at a time
			if c >= 0x80 {
				high = 1
			}
			i++
		}
	}
}

func jsHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func jsSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// SkipWS returns the index of the first byte at or after i that is not JSON
// whitespace.
func SkipWS(b []byte, i int) int {
	for i < len(b) && jsSpace(b[i]) {
		i++
	}
	return i
}

// NumberEnd validates the number starting at b[i]; end is the index after it.
func NumberEnd(b []byte, i int) (end int, ok bool) {
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = jsDigits(b, i+1)
	default:
		return i, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return i, false
		}
		for i++; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return i, false
		}
		for i++; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		}
	}
	return i, true
}

// jsDigits returns the index of the first byte at or after i that is not an
// ASCII digit, testing eight bytes at a time (KV event hashes are 19-20 digit
// numbers, a third of a large capture).
func jsDigits(b []byte, i int) int {
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		// All eight are digits when every high nibble is 3 and adding 6 to
		// every byte carries none of them past 9 ('0'..'9' are 0x30..0x39).
		if x&0xF0F0F0F0F0F0F0F0 != 0x3030303030303030 || (x+0x0606060606060606)&0xF0F0F0F0F0F0F0F0 != 0x3030303030303030 {
			break
		}
	}
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
	}
	return i
}

func jsLiteral(b []byte, i int, lit string) (int, bool) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return i, false
	}
	return i + len(lit), true
}

// Validate validates the JSON value starting at b[i] (leading whitespace
// allowed) and returns the index after it.
func Validate(b []byte, i int) (int, bool) {
	v := Validator{B: b}
	return v.Value(SkipWS(b, i), 0)
}

// Validator validates JSON; when ends is not nil it records where every
// object or array nested at most EndsDepth deep ends, so that skipping them
// later is free (SkipKnown).
type Validator struct {
	B         []byte
	Ends      *Ends
	EndsDepth int
	// OnObject, when set, is called as each object nested ObjectDepth deep
	// is validated (the items of a List), so they can be decoded while the
	// rest of the document is still being validated.
	OnObject    func(start, end int)
	ObjectDepth int
}

// Value validates the JSON value at b[i], nested depth deep, and returns the
// index after it and whether it is valid.
func (v *Validator) Value(i, depth int) (int, bool) {
	b := v.B
	if i >= len(b) {
		return i, false
	}
	switch c := b[i]; {
	case c == '"':
		end, _, _, ok := jsStringEnd(b, i)
		return end, ok
	case c == '{' || c == '[':
		if depth+1 > jsMaxDepth {
			return i, false
		}
		closer := byte('}')
		if c == '[' {
			closer = ']'
		}
		start := i
		rec := v.open(depth, start)
		i = SkipWS(b, i+1)
		if i < len(b) && b[i] == closer {
			v.close(rec, i+1)
			return i + 1, true
		}
		for {
			if c == '{' {
				if i >= len(b) || b[i] != '"' {
					return i, false
				}
				end, _, _, ok := jsStringEnd(b, i)
				if !ok {
					return end, false
				}
				i = SkipWS(b, end)
				if i >= len(b) || b[i] != ':' {
					return i, false
				}
				i = SkipWS(b, i+1)
			}
			end, ok := v.Value(i, depth+1)
			if !ok {
				return end, false
			}
			i = SkipWS(b, end)
			if i >= len(b) {
				return i, false
			}
			if b[i] == closer {
				v.close(rec, i+1)
				if c == '{' && depth == v.ObjectDepth && v.OnObject != nil {
					v.OnObject(start, i+1)
				}
				return i + 1, true
			}
			if b[i] != ',' {
				return i, false
			}
			i = SkipWS(b, i+1)
		}
	case c == '-' || c >= '0' && c <= '9':
		return NumberEnd(b, i)
	case c == 't':
		return jsLiteral(b, i, "true")
	case c == 'f':
		return jsLiteral(b, i, "false")
	case c == 'n':
		return jsLiteral(b, i, "null")
	}
	return i, false
}

// open records that a container starts at start (when it is shallow enough)
// and returns the record to close, or -1.
func (v *Validator) open(depth, start int) int {
	if v.Ends == nil || depth > v.EndsDepth {
		return -1
	}
	v.Ends.Spans = append(v.Ends.Spans, Span{start: start, end: -1})
	return len(v.Ends.Spans) - 1
}

func (v *Validator) close(rec, end int) {
	if rec >= 0 {
		v.Ends.Spans[rec].end = end
	}
}

// Ends records where containers start and end. Containers are recorded as
// they open, so spans are sorted by start and found by binary search; this is
// several times cheaper to build than a map for the 100,000s of containers a
// large capture has.
type Ends struct {
	Spans []Span
}

// Span is where one container (object or array) starts and ends.
type Span struct{ start, end int }

// end returns where the container starting at start ends, if it was recorded.
func (e *Ends) end(start int) (int, bool) {
	if e == nil {
		return 0, false
	}
	sp := e.Spans
	lo, hi := 0, len(sp)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if sp[m].start < start {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(sp) && sp[lo].start == start && sp[lo].end >= 0 {
		return sp[lo].end, true
	}
	return 0, false
}

// Skip returns the index after the (validated) value starting at b[i].
func Skip(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		end, _, _, _ := jsStringEnd(b, i)
		return end
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i, _, _, _ = jsStringEnd(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	}
	for i < len(b) {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
		i++
	}
	return i
}

// Member is one member of a validated object: the key's and the value's spans.
type Member struct {
	KeyStart, KeyEnd int // the quoted key
	ValStart, ValEnd int
}

// SkipKnown is Skip, or the recorded end (Validator.ends) of a container.
func SkipKnown(ends *Ends, b []byte, i int) int {
	if i < len(b) && (b[i] == '{' || b[i] == '[') {
		if e, ok := ends.end(i); ok {
			return e
		}
	}
	return Skip(b, i)
}

// Members lists the members of the validated object starting at b[i] == '{'.
func Members(ends *Ends, b []byte, i int, out []Member) []Member {
	i = SkipWS(b, i+1)
	for i < len(b) && b[i] == '"' {
		var m Member
		m.KeyStart = i
		m.KeyEnd, _, _, _ = jsStringEnd(b, i)
		i = SkipWS(b, m.KeyEnd)
		if i >= len(b) || b[i] != ':' {
			return out
		}
		m.ValStart = SkipWS(b, i+1)
		m.ValEnd = SkipKnown(ends, b, m.ValStart)
		out = append(out, m)
		i = SkipWS(b, m.ValEnd)
		if i < len(b) && b[i] == ',' {
			i = SkipWS(b, i+1)
		}
	}
	return out
}

// Elements lists the element spans of the validated array starting at b[i] == '['.
func Elements(ends *Ends, b []byte, i int, out [][2]int) [][2]int {
	i = SkipWS(b, i+1)
	for i < len(b) && b[i] != ']' {
		start := i
		i = SkipKnown(ends, b, i)
		out = append(out, [2]int{start, i})
		i = SkipWS(b, i)
		if i < len(b) && b[i] == ',' {
			i = SkipWS(b, i+1)
		}
	}
	return out
}

// KeyIs reports whether the quoted key b[s:e] decodes to name.
func KeyIs(b []byte, s, e int, name string) bool {
	raw := b[s+1 : e-1]
	for _, c := range raw {
		if c == '\\' || c >= 0x80 {
			return String(b, s, e) == name
		}
	}
	return string(raw) == name
}

// String decodes the validated quoted string b[s:e] as encoding/json does.
func String(b []byte, s, e int) string {
	raw := b[s+1 : e-1]
	plain := true
	for _, c := range raw {
		if c == '\\' || c >= 0x80 {
			plain = false
			break
		}
	}
	if plain || (!containsByte(raw, '\\') && utf8.Valid(raw)) {
		return string(raw)
	}
	var v string
	if err := json.Unmarshal(b[s:e], &v); err != nil {
		return string(raw) // unreachable for validated input
	}
	return v
}

func containsByte(b []byte, c byte) bool {
	for _, x := range b {
		if x == c {
			return true
		}
	}
	return false
}

// Decoder builds Go values from validated JSON.
type Decoder struct {
	B []byte
	// strs interns object keys and short plain strings, boxed as the any a
	// map value holds: a capture repeats the same keys and values ("name",
	// "True", "Running", …) in every object, and sharing the string and its
	// box saves a third of the decoder's allocations.
	strs map[string]any
}

// jsInternMax bounds the interned strings (length and count), so unique
// values (names, uids) do not grow the table without benefit.
const (
	jsInternMaxLen   = 32
	jsInternMaxCount = 1 << 14
)

// str returns raw (plain ASCII, no escapes) as a string, shared when short.
func (d *Decoder) str(raw []byte) string {
	s, _ := d.boxed(raw).(string)
	return s
}

// boxed is str as an interface value, the box shared too when short.
func (d *Decoder) boxed(raw []byte) any {
	if len(raw) > jsInternMaxLen {
		return string(raw)
	}
	if v, ok := d.strs[string(raw)]; ok {
		return v
	}
	s := string(raw)
	var v any = s
	if d.strs == nil {
		d.strs = make(map[string]any, 256)
	}
	if len(d.strs) < jsInternMaxCount {
		d.strs[s] = v
	}
	return v
}

// Value decodes the value at b[i] and returns the index after it.
func (d *Decoder) Value(i int) (any, int) {
	b := d.B
	if i >= len(b) {
		return nil, i
	}
	switch b[i] {
	case '"':
		end, escaped, nonASCII, _ := jsStringEnd(b, i)
		if !escaped && !nonASCII {
			return d.boxed(b[i+1 : end-1]), end
		}
		if !escaped && utf8.Valid(b[i+1:end-1]) {
			return string(b[i+1 : end-1]), end
		}
		return String(b, i, end), end
	case '{':
		m := make(map[string]any)
		i = SkipWS(b, i+1)
		for i < len(b) && b[i] == '"' {
			kend, escaped, nonASCII, _ := jsStringEnd(b, i)
			var key string
			if !escaped && !nonASCII {
				key = d.str(b[i+1 : kend-1])
			} else {
				key = String(b, i, kend)
			}
			i = SkipWS(b, kend)
			if i < len(b) && b[i] == ':' {
				i = SkipWS(b, i+1)
			}
			var v any
			v, i = d.Value(i)
			m[key] = v
			i = SkipWS(b, i)
			if i < len(b) && b[i] == ',' {
				i = SkipWS(b, i+1)
			}
		}
		if i < len(b) && b[i] == '}' {
			i++
		}
		return m, i
	case '[':
		a := make([]any, 0)
		i = SkipWS(b, i+1)
		for i < len(b) && b[i] != ']' {
			var v any
			v, i = d.Value(i)
			a = append(a, v)
			i = SkipWS(b, i)
			if i < len(b) && b[i] == ',' {
				i = SkipWS(b, i+1)
			}
		}
		if i < len(b) {
			i++
		}
		return a, i
	case 't':
		return true, i + 4
	case 'f':
		return false, i + 5
	case 'n':
		return nil, i + 4
	}
	end, _ := NumberEnd(b, i)
	return jsNumber(b[i:end]), end
}

// jsNumber converts a validated number literal the way DecodeJSONObject does.
func jsNumber(lit []byte) any {
	integer := true
	for _, c := range lit {
		if c == '.' || c == 'e' || c == 'E' {
			integer = false
			break
		}
	}
	if integer {
		// Up to 18 digits always fit in an int64.
		digits := lit
		neg := len(digits) > 0 && digits[0] == '-'
		if neg {
			digits = digits[1:]
		}
		if len(digits) <= 18 {
			var v int64
			for _, c := range digits {
				v = v*10 + int64(c-'0')
			}
			if neg {
				v = -v
			}
			return v
		}
		s := string(lit)
		if v, err := strconv.ParseInt(s, 10, 64); err == nil {
			return v
		}
		return json.Number(s)
	}
	s := string(lit)
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return f
	}
	return json.Number(s)
}
