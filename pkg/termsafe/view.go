package termsafe

import "unicode/utf8"

// SGRSet is the set of SGR sequences a full-screen view may contain: exactly
// those its own styles produce.
type SGRSet map[string]bool

// CollectSGR returns the SGR sequences found in samples (typically every style
// of a program rendered once), plus the reset.
func CollectSGR(samples ...string) SGRSet {
	set := SGRSet{"\x1b[0m": true, "\x1b[m": true}
	for _, s := range samples {
		for i := 0; i < len(s); i++ {
			if s[i] != 0x1b {
				continue
			}
			if n := sgrLen(s[i:]); n > 0 {
				set[s[i:i+n]] = true
				i += n - 1
			}
		}
	}
	return set
}

// sgrLen is the length of the SGR sequence (ESC [ params m) at the start of s,
// or 0.
func sgrLen(s string) int {
	if len(s) < 3 || s[0] != 0x1b || s[1] != '[' {
		return 0
	}
	for j := 2; j < len(s) && j < 64; j++ {
		switch c := s[j]; {
		case c == 'm':
			return j + 1
		case c >= '0' && c <= '9', c == ';', c == ':':
		default:
			return 0
		}
	}
	return 0
}

// View makes a finished full-screen frame safe: the SGR sequences in allowed
// stay, every other escape sequence, control and unsafe rune is escaped
// visibly (newlines kept). It returns frame itself when there is nothing to do,
// and reports whether anything was escaped (the caller then re-fits the lines,
// which escaping made longer).
//
// View cannot tell an allowed sequence that came with the data from the
// program's own, and it runs after the layout, which measured an escape
// sequence in the data as zero cells. So it is the second line only: a program
// escapes the data it shows (Escape) where it places it into the frame, and
// cuts it to its cell (Truncate, Width); then nothing from the data can form a
// sequence View keeps, and View finds nothing of the data to escape.
func View(frame string, allowed SGRSet) (string, bool) {
	i := firstUnsafeView(frame, allowed)
	if i < 0 {
		return frame, false
	}
	b := make([]byte, 0, len(frame)+32)
	b = append(b, frame[:i]...)
	for i < len(frame) {
		c := frame[i]
		if c == 0x1b {
			if n := sgrLen(frame[i:]); n > 0 && allowed[frame[i:i+n]] {
				b = append(b, frame[i:i+n]...)
				i += n
				continue
			}
		}
		r, size := utf8.DecodeRuneInString(frame[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = appendByteEscape(b, c)
		case Unsafe(r) && r != '\n':
			b = appendRuneEscape(b, r)
		default:
			b = append(b, frame[i:i+size]...)
		}
		i += size
	}
	return string(b), true
}

func firstUnsafeView(frame string, allowed SGRSet) int {
	for i := 0; i < len(frame); {
		c := frame[i]
		if c == 0x1b {
			if n := sgrLen(frame[i:]); n > 0 && allowed[frame[i:i+n]] {
				i += n
				continue
			}
			return i
		}
		if c >= 0x20 && c < 0x7f || c == '\n' {
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(frame[i:])
		if (r == utf8.RuneError && size == 1) || Unsafe(r) {
			return i
		}
		i += size
	}
	return -1
}
