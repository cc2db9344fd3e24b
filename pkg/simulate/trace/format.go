package trace

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// Format names a trace file format.
type Format string

// The formats Open reads (Synthetic makes the last).
const (
	Mooncake           Format = "mooncake"
	MooncakeDelta      Format = "mooncake-delta"
	DynamoRequestTrace Format = "dynamo-request-trace"
	Tokens             Format = "tokens"
	Texts              Format = "texts"
	SyntheticFormat    Format = "synthetic"
)

// Formats lists every format in the order the documentation gives them.
var Formats = []Format{Mooncake, MooncakeDelta, DynamoRequestTrace, Tokens, Texts, SyntheticFormat}

// aliases maps the other spellings upstream tools accept to a format.
var aliases = map[string]Format{
	"mooncake_delta":       MooncakeDelta,
	"dynamo":               DynamoRequestTrace, // dynamo.replay's --trace-format dynamo
	"dynamo_request_trace": DynamoRequestTrace,
	"token":                Tokens,
	"text":                 Texts,
}

// ParseFormat resolves a --trace-format value; "auto" is not a format (the
// caller sniffs with Detect).
func ParseFormat(s string) (Format, error) {
	v := strings.ToLower(strings.TrimSpace(s))
	if slices.Contains(Formats, Format(v)) {
		return Format(v), nil
	}
	if f, ok := aliases[v]; ok {
		return f, nil
	}
	names := make([]string, len(Formats))
	for i, f := range Formats {
		names[i] = string(f)
	}
	return "", fmt.Errorf("unknown trace format %q: want one of %s", s, strings.Join(names, ", "))
}

// Default bounds, used when the Options field is zero.
const (
	DefaultTraceBlockSize = 512      // tokens per hash id in the Mooncake traces
	DefaultMaxLineBytes   = 16 << 20 // 16 MiB
	DefaultMaxInputTokens = 2_000_000
	// MaxOutputTokens bounds a request's output length in every format.
	MaxOutputTokens = 1 << 24
	// maxTraceBlockSize keeps a hostile --trace-block-size from asking for
	// absurd blocks; real ones are 16 to 512.
	maxTraceBlockSize = 1 << 20
)

// Options tunes Open. The zero value is usable except for texts, which need
// Tokenize.
type Options struct {
	// TraceBlockSize is the number of tokens one hash id stands for in the
	// mooncake formats; 0 means 512. Dynamo request traces carry their own.
	TraceBlockSize int
	// MaxLineBytes bounds one line; 0 means 16 MiB.
	MaxLineBytes int
	// MaxInputTokens bounds one request's prompt (for mooncake-delta, the
	// accumulated one); 0 means 2,000,000. A longer prompt is an error naming
	// its line.
	MaxInputTokens int
	// Tokenize turns a texts row into token ids.
	Tokenize func(text string) ([]uint32, error)
}

func (o Options) withDefaults() (Options, error) {
	if o.TraceBlockSize == 0 {
		o.TraceBlockSize = DefaultTraceBlockSize
	}
	if o.MaxLineBytes == 0 {
		o.MaxLineBytes = DefaultMaxLineBytes
	}
	if o.MaxInputTokens == 0 {
		o.MaxInputTokens = DefaultMaxInputTokens
	}
	switch {
	case o.TraceBlockSize < 1 || o.TraceBlockSize > maxTraceBlockSize:
		return o, fmt.Errorf("trace block size %d is out of range: want 1 to %d tokens per hash id", o.TraceBlockSize, maxTraceBlockSize)
	case o.MaxLineBytes < 1:
		return o, fmt.Errorf("maximum line length %d is not positive", o.MaxLineBytes)
	case o.MaxInputTokens < 1:
		return o, fmt.Errorf("maximum input tokens %d is not positive", o.MaxInputTokens)
	}
	return o, nil
}

// Request is one request of a trace.
type Request struct {
	// Line is the request's 1-based line in the file (0 for synthetic).
	Line int
	// Arrival is the request's time from the trace's time origin; the
	// first request's is not subtracted (Dynamo request traces give Unix
	// time).
	Arrival time.Duration
	// Tokens are the prompt's token ids; len(Tokens) is the input length.
	// Every call of Next returns a fresh slice that the caller may keep.
	Tokens []uint32
	// OutputTokens is the number of tokens to generate.
	OutputTokens int
	// Session is the session or conversation id when the format has one.
	Session string
}

// Reader streams a trace's requests in arrival order.
type Reader interface {
	// Next returns the next request, or io.EOF after the last one. Any
	// other error is final and names the line.
	Next() (Request, error)
}

// Warner is a Reader that can say, after reading, what in the rows read may
// not replay as the trace meant (the mooncake formats: rows whose hash ids
// cover less than their input_length).
type Warner interface {
	Warnings() []string
}

// LineError is an error in one line of a trace.
type LineError struct {
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }

func (e *LineError) Unwrap() error { return e.Err }

func lineErr(line int, format string, args ...any) error {
	return &LineError{Line: line, Err: fmt.Errorf(format, args...)}
}

// Open starts reading a trace of format f from r. Gzip-compressed input
// (Dynamo's .jsonl.gz shards) is decompressed on the fly. The synthetic
// format has no file; use Synthetic.
func Open(r io.Reader, f Format, o Options) (Reader, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	br := bufio.NewReaderSize(r, 64<<10)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("reading the gzip header: %w", err)
		}
		br = bufio.NewReaderSize(zr, 64<<10)
	}
	lr := &lineReader{r: br, max: o.MaxLineBytes}
	switch f {
	case Mooncake, MooncakeDelta:
		return newMooncakeReader(lr, o, f == MooncakeDelta), nil
	case DynamoRequestTrace:
		return newDynamoReader(lr, o), nil
	case Tokens:
		return &tokensReader{lines: lr, o: o}, nil
	case Texts:
		if o.Tokenize == nil {
			return nil, errors.New("texts need a tokenizer: pass Options.Tokenize (the simulator's --tokenizer)")
		}
		return &tokensReader{lines: lr, o: o, texts: true}, nil
	case SyntheticFormat:
		return nil, errors.New("the synthetic format has no trace file: use --synthetic (trace.Synthetic)")
	}
	_, err = ParseFormat(string(f))
	return nil, err
}

// Detect sniffs the format from the start of a trace (its first non-blank
// line, or as much of it as peek holds), for --trace-format auto. It cannot
// tell mooncake-delta from mooncake (their rows look alike) and says
// mooncake.
func Detect(peek []byte) (Format, error) {
	if len(peek) >= 2 && peek[0] == 0x1f && peek[1] == 0x8b {
		zr, err := gzip.NewReader(bytes.NewReader(peek))
		if err != nil {
			return "", fmt.Errorf("the trace looks gzip-compressed but its header is unreadable: %w", err)
		}
		plain, _ := io.ReadAll(io.LimitReader(zr, 1<<20)) // a cut-off peek ends in io.ErrUnexpectedEOF; what came out is enough
		peek = plain
	}
	peek = bytes.TrimPrefix(peek, []byte("\xef\xbb\xbf"))
	var first []byte
	for line := range bytes.Lines(peek) {
		if t := bytes.TrimSpace(line); len(t) > 0 {
			first = t
			break
		}
	}
	if first == nil {
		return "", errors.New("cannot detect the trace format: the trace is empty; pass --trace-format")
	}
	if first[0] != '{' {
		return "", fmt.Errorf("cannot detect the trace format: the first line does not start a JSON object (%q); pass --trace-format", clip(first, 40))
	}
	keys := topLevelKeys(first)
	has := func(names ...string) bool {
		for _, n := range names {
			if slices.Contains(keys, n) {
				return true
			}
		}
		return false
	}
	switch {
	case has("schema", "event_type", "event"):
		return DynamoRequestTrace, nil
	case has("hash_ids", "input_length"):
		return Mooncake, nil
	case has("tokens"):
		return Tokens, nil
	case has("text"):
		return Texts, nil
	}
	return "", fmt.Errorf("cannot detect the trace format from the first line's keys %v: pass --trace-format (mooncake rows have hash_ids, tokens rows tokens, texts rows text, Dynamo request traces schema)", keys)
}

// topLevelKeys returns the keys of the JSON object that b starts, as far
// as b holds it.
func topLevelKeys(b []byte) []string {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var keys []string
	depth := 0
	expectKey := false
	for {
		tok, err := dec.Token()
		if err != nil {
			return keys
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{', '[':
				depth++
				expectKey = t == '{' && depth == 1
			case '}', ']':
				depth--
				expectKey = depth == 1
				if depth == 0 {
					return keys
				}
			}
			continue
		case string:
			if depth == 1 && expectKey {
				keys = append(keys, t)
				expectKey = false
				continue
			}
		}
		if depth == 1 {
			expectKey = true
		}
	}
}

func clip(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}

// lineReader yields the lines of a trace with their numbers, bounded in
// length.
type lineReader struct {
	r    *bufio.Reader
	max  int
	buf  []byte
	line int
}

// next returns the next non-blank line (without its end of line) and its
// number. A line longer than max comes back cut to max bytes with long set,
// the rest of it discarded. The returned slice is valid until the next call.
func (l *lineReader) next() (b []byte, line int, long bool, err error) {
	blank := 0 // bytes of blank lines skipped in a row
	for {
		l.buf = l.buf[:0]
		long = false
		for {
			chunk, err := l.r.ReadSlice('\n')
			if room := l.max - len(l.buf); len(chunk) > room {
				l.buf = append(l.buf, chunk[:room]...)
				long = true
			} else {
				l.buf = append(l.buf, chunk...)
			}
			if err == nil {
				break
			}
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			if errors.Is(err, io.EOF) {
				if len(l.buf) == 0 && !long {
					return nil, l.line, false, io.EOF
				}
				break
			}
			return nil, l.line + 1, false, &LineError{Line: l.line + 1, Err: fmt.Errorf("reading the trace: %w", err)}
		}
		l.line++
		b = l.buf
		if l.line == 1 {
			b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
		}
		if t := bytes.TrimSpace(b); len(t) > 0 || long {
			return t, l.line, long, nil
		}
		// A gzip of blank lines expands about a thousandfold: a 1 MB file
		// was a gigabyte of them to skip, for every variant.
		if blank += len(l.buf) + 1; blank > l.max {
			return nil, l.line, false, lineErr(l.line, "more than %s of blank lines in a row: is this a JSON-lines trace?", byteWords(l.max))
		}
	}
}

// byteWords says n bytes in MiB when it is a whole number of them.
func byteWords(n int) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// tooLong is the error for a line over the limit.
func (l *lineReader) tooLong(line int) error {
	return lineErr(line, "the line is longer than %d bytes (Options.MaxLineBytes); is this a JSON-lines trace?", l.max)
}

// decodeLine unmarshals one JSON line into v, naming the line on failure.
func decodeLine(b []byte, line int, v any) error {
	if err := json.Unmarshal(b, v); err != nil {
		return lineErr(line, "%s", jsonProblem(err))
	}
	return nil
}

// arrayLen counts the elements of the JSON array raw without decoding them
// (raw is valid JSON: it was decoded as part of its line); ok is false when
// raw is not an array. A count is checked against its limit before anything
// is allocated for the elements: a 16 MiB line of small ids is 8 million of
// them.
func arrayLen(raw []byte) (n int, ok bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) < 2 || raw[0] != '[' {
		return 0, false
	}
	inner := bytes.TrimSpace(raw[1 : len(raw)-1])
	if len(inner) == 0 {
		return 0, true
	}
	depth, inStr, esc := 0, false, false
	n = 1
	for _, c := range inner {
		switch {
		case inStr:
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
		case c == '"':
			inStr = true
		case c == '[' || c == '{':
			depth++
		case c == ']' || c == '}':
			depth--
		case c == ',' && depth == 0:
			n++
		}
	}
	return n, true
}

// isNull reports whether a raw field is absent or null.
func isNull(raw []byte) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || string(t) == "null"
}

// decodeUints decodes the JSON array raw of n elements (arrayLen) into a
// slice of exactly that capacity; a type error names field.
func decodeUints[T uint32 | uint64](raw []byte, n int, field string, line int) ([]T, error) {
	v := make([]T, 0, n)
	if err := json.Unmarshal(raw, &v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			te.Field = field
		}
		return nil, lineErr(line, "%s", jsonProblem(err))
	}
	return v, nil
}

// jsonProblem words a decoding error for a person reading the trace.
func jsonProblem(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := te.Field
		if field == "" {
			field = "the line"
		}
		return fmt.Sprintf("%s: cannot use JSON %s as %s", field, te.Value, kindWord(te.Type.String()))
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("invalid JSON at byte %d: %v", se.Offset, se)
	}
	return err.Error() // a field's own decoder (session_id) says what it wants
}

func kindWord(t string) string {
	switch t {
	case "uint64", "uint32":
		return "an unsigned " + t[4:] + "-bit integer"
	case "int64", "int":
		return "an integer"
	case "string", "trace.sessionID":
		return "a string"
	case "json.Number":
		return "a number"
	}
	return t
}

// sessionID accepts a session id written as a string or an integer.
type sessionID string

func (s *sessionID) UnmarshalJSON(b []byte) error {
	switch {
	case len(b) > 0 && b[0] == '"':
		var v string
		if err := json.Unmarshal(b, &v); err != nil {
			return err
		}
		*s = sessionID(v)
	case string(b) == "null":
		*s = ""
	case len(b) > 0 && (b[0] == '-' || b[0] >= '0' && b[0] <= '9'):
		*s = sessionID(b)
	default:
		return errors.New("session_id must be a string or an integer")
	}
	return nil
}

// parseMillis reads a non-negative time in milliseconds, an integer or a
// decimal fraction (converters write 1500.0), exactly, without float64.
func parseMillis(n json.Number, field string, line int) (time.Duration, error) {
	s := string(n)
	intPart, frac, _ := strings.Cut(s, ".")
	bad := func() error {
		return lineErr(line, "%s %s is not a plain non-negative number of milliseconds (want e.g. 1500 or 1500.25)", field, clip([]byte(s), 40))
	}
	if intPart == "" || strings.ContainsAny(s, "eE+-") {
		return 0, bad()
	}
	const maxMS = int64(1<<63-1) / int64(time.Millisecond)
	var ms int64
	for _, c := range []byte(intPart) {
		if c < '0' || c > '9' {
			return 0, bad()
		}
		if ms > (maxMS-int64(c-'0'))/10 {
			return 0, lineErr(line, "%s %s ms is too large (the most is %d ms, about 292 years)", field, clip([]byte(s), 40), maxMS)
		}
		ms = ms*10 + int64(c-'0')
	}
	var ns int64
	scale := int64(100_000) // the first fraction digit is 0.1 ms = 100 µs
	for _, c := range []byte(frac) {
		if c < '0' || c > '9' {
			return 0, bad()
		}
		ns += int64(c-'0') * scale
		scale /= 10 // digits past the nanosecond are dropped
	}
	d := time.Duration(ms)*time.Millisecond + time.Duration(ns)
	if d < 0 {
		return 0, lineErr(line, "%s %s ms is too large", field, clip([]byte(s), 40))
	}
	return d, nil
}

// order checks that arrivals never go back in time.
type order struct {
	last     time.Duration
	lastLine int
}

func (o *order) check(at time.Duration, line int, field string) error {
	if o.lastLine > 0 && at < o.last {
		return lineErr(line, "%s %s is earlier than line %d's %s: the trace must be sorted by arrival time (a streaming reader cannot reorder it)", field, fmtMS(at), o.lastLine, fmtMS(o.last))
	}
	o.last, o.lastLine = at, line
	return nil
}

func fmtMS(d time.Duration) string {
	if d%time.Millisecond == 0 {
		return fmt.Sprintf("%d ms", d/time.Millisecond)
	}
	return fmt.Sprintf("%d.%06d ms", d/time.Millisecond, d%time.Millisecond)
}
