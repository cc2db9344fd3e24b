package jsonscan

// Iteration over validated JSON without building values: the typed decoders
// (pkg/raw/decode) walk an object's members, read the few they keep and skip
// the rest, so a large object costs one pass and no allocation for what it
// does not keep.

// Obj iterates over the members of a validated object. Start it with
// NewObj at the '{'; each Next positions it on a member (Key, Val). The
// caller either reads the value and says where it ended (Done), or leaves it:
// the next Next skips it.
type Obj struct {
	b    []byte
	ends *Ends
	i    int
	// KeyStart and KeyEnd delimit the member's key, quotes included; Val is
	// where its value starts.
	KeyStart, KeyEnd, Val int
	pending               bool
}

// NewObj starts iterating over the validated object at b[i] == '{'. ends,
// when not nil, holds the recorded ends of containers (Validator.Ends), which
// makes skipping them free.
func NewObj(ends *Ends, b []byte, i int) Obj {
	return Obj{b: b, ends: ends, i: SkipWS(b, i+1)}
}

// Next moves to the next member; false at the end of the object.
func (o *Obj) Next() bool {
	if o.pending {
		o.Done(SkipKnown(o.ends, o.b, o.Val))
	}
	b, i := o.b, o.i
	if i >= len(b) || b[i] != '"' {
		return false
	}
	o.KeyStart = i
	o.KeyEnd, _, _, _ = jsStringEnd(b, i)
	i = SkipWS(b, o.KeyEnd)
	if i >= len(b) || b[i] != ':' {
		return false
	}
	o.Val = SkipWS(b, i+1)
	o.pending = true
	return true
}

// Done records that the current value, read by the caller, ends at end.
func (o *Obj) Done(end int) {
	o.pending = false
	i := SkipWS(o.b, end)
	if i < len(o.b) && o.b[i] == ',' {
		i = SkipWS(o.b, i+1)
	}
	o.i = i
}

// RawKey is the key's bytes without quotes: the key itself unless Escaped.
func (o *Obj) RawKey() []byte { return o.b[o.KeyStart+1 : o.KeyEnd-1] }

// Key is the key decoded (as encoding/json decodes it).
func (o *Obj) Key() string { return String(o.b, o.KeyStart, o.KeyEnd) }

// Escaped reports whether the key holds an escape: only then can it decode
// to a name its bytes do not spell.
func (o *Obj) Escaped() bool { return containsByte(o.RawKey(), '\\') }

// End is where the object ends, once Next returned false.
func (o *Obj) End() int {
	if o.i < len(o.b) && o.b[o.i] == '}' {
		return o.i + 1
	}
	return o.i
}

// Arr iterates over the elements of a validated array, like Obj.
type Arr struct {
	b       []byte
	ends    *Ends
	i       int
	Val     int
	pending bool
}

// NewArr starts iterating over the validated array at b[i] == '['.
func NewArr(ends *Ends, b []byte, i int) Arr {
	return Arr{b: b, ends: ends, i: SkipWS(b, i+1)}
}

// Next moves to the next element; false at the end of the array.
func (a *Arr) Next() bool {
	if a.pending {
		a.Done(SkipKnown(a.ends, a.b, a.Val))
	}
	if a.i >= len(a.b) || a.b[a.i] == ']' {
		return false
	}
	a.Val = a.i
	a.pending = true
	return true
}

// Done records that the current element, read by the caller, ends at end.
func (a *Arr) Done(end int) {
	a.pending = false
	i := SkipWS(a.b, end)
	if i < len(a.b) && a.b[i] == ',' {
		i = SkipWS(a.b, i+1)
	}
	a.i = i
}

// End is where the array ends, once Next returned false.
func (a *Arr) End() int {
	if a.i < len(a.b) && a.b[a.i] == ']' {
		return a.i + 1
	}
	return a.i
}

// StringEnd scans the validated string at b[i] == '"': the index after it,
// and whether it holds escapes or bytes >= 0x80 (then String decodes it;
// otherwise its bytes are the string).
func StringEnd(b []byte, i int) (end int, escaped, nonASCII bool) {
	end, escaped, nonASCII, _ = jsStringEnd(b, i)
	return end, escaped, nonASCII
}

// Number converts a validated number literal as Decoder does: int64 when it
// is an integer that fits, else float64 when it parses as one, else
// json.Number.
func Number(lit []byte) any { return jsNumber(lit) }

// AppendShifted appends src's spans moved by delta: the ends of containers
// validated in one buffer, for the same bytes copied at another offset.
func (e *Ends) AppendShifted(src *Ends, delta int) {
	for _, s := range src.Spans {
		e.Spans = append(e.Spans, Span{start: s.start + delta, end: s.end + delta})
	}
}

// Reset forgets the recorded spans, keeping their storage.
func (e *Ends) Reset() { e.Spans = e.Spans[:0] }
