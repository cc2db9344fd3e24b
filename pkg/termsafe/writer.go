package termsafe

import (
	"bytes"
	"io"
	"sync"
	"unicode/utf8"
)

// Writer is the output boundary for human-readable text: everything written to
// it reaches the underlying stream with unsafe runes escaped (newlines and tabs
// kept), invalid UTF-8 escaped byte by byte, and the plugin's colour markers
// turned into ANSI SGR sequences when colour is on (dropped when it is off). A
// marker without the process secret is escaped like any other unsafe rune.
//
// Writes are passed on at once, except an incomplete UTF-8 sequence or an
// incomplete marker at the very end, which waits for the next Write or Flush.
// Writer is safe for concurrent use.
type Writer struct {
	mu      sync.Mutex
	w       io.Writer
	color   func() bool
	pending []byte
	out     []byte
}

// NewWriter returns a Writer over w; color is asked at every write whether
// colour is on (nil means never).
func NewWriter(w io.Writer, color func() bool) *Writer {
	if color == nil {
		color = func() bool { return false }
	}
	return &Writer{w: w, color: color}
}

// Underlying is the stream Writer writes to (for a full-screen program that
// must drive the terminal itself).
func (w *Writer) Underlying() io.Writer { return w.w }

// Write escapes p and writes it through. It reports len(p) on success.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var buf []byte
	if len(w.pending) > 0 {
		w.pending = append(w.pending, p...)
		buf = w.pending
	} else {
		buf = p
	}
	n := completePrefix(buf)
	err := w.emit(buf[:n])
	rest := buf[n:]
	if len(rest) > 0 {
		w.pending = append(w.pending[:0:0], rest...)
	} else {
		w.pending = w.pending[:0]
	}
	if err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes what is held back, escaping an incomplete sequence byte by byte.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.pending) == 0 {
		return nil
	}
	err := w.emit(w.pending)
	w.pending = w.pending[:0]
	return err
}

func (w *Writer) emit(p []byte) error {
	if len(p) == 0 {
		return nil
	}
	w.out = render(w.out[:0], p, w.color())
	_, err := w.w.Write(w.out)
	if cap(w.out) > 64<<10 {
		w.out = nil
	}
	return err
}

// completePrefix is how much of p can be rendered now: all of it, but an
// incomplete UTF-8 sequence or an incomplete marker at the end.
func completePrefix(p []byte) int {
	n := len(p)
	// An incomplete rune at the end: at most utf8.UTFMax-1 bytes.
	for i := n - 1; i >= 0 && i >= n-utf8.UTFMax+1; i-- {
		if utf8.RuneStart(p[i]) {
			if !utf8.FullRune(p[i:]) {
				n = i
			}
			break
		}
	}
	// An incomplete marker at the end.
	if j := bytes.LastIndex(p[:n], []byte(markOpen)); j >= 0 && n-j < maxMarker {
		if !bytes.Contains(p[j:n], []byte(markClose)) {
			n = j
		}
	}
	return n
}

// render appends p to dst with markers turned into SGR (or dropped) and
// everything unsafe but newline and tab escaped.
func render(dst, p []byte, color bool) []byte {
	for i := 0; i < len(p); {
		c := p[i]
		if c >= 0x20 && c < 0x7f || c == '\n' || c == '\t' {
			j := i + 1
			for j < len(p) && (p[j] >= 0x20 && p[j] < 0x7f || p[j] == '\n' || p[j] == '\t') {
				j++
			}
			dst = append(dst, p[i:j]...)
			i = j
			continue
		}
		r, size := utf8.DecodeRune(p[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = appendByteEscape(dst, c)
		case r == 0xfdd0:
			if code, n, ok := parseMarker(string(p[i:min(len(p), i+maxMarker)])); ok {
				if color {
					dst = append(dst, "\x1b["...)
					dst = append(dst, code...)
					dst = append(dst, 'm')
				}
				i += n
				continue
			}
			dst = appendRuneEscape(dst, r)
		case Unsafe(r):
			dst = appendRuneEscape(dst, r)
		default:
			dst = append(dst, p[i:i+size]...)
		}
		i += size
	}
	return dst
}
