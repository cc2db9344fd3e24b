package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
)

// MaxRequestIDBytes bounds a request id: longer ids are cut (they still join,
// by their first MaxRequestIDBytes bytes).
const MaxRequestIDBytes = 256

// ErrMalformed is returned for a line that carries a router marker but does
// not follow the marker's grammar (a cut line, or another program's text).
var ErrMalformed = errors.New("malformed router line")

// errNotOurs marks a line that matched a marker's text but is another message
// ("Selected worker is overloaded, please retry later").
var errNotOurs = errors.New("not a router decision line")

// markers are the texts that make a line a router line, in the order a
// message is matched against them (the longer names first).
var markers = []struct {
	text string
	kind LineKind
}{
	{"Selected pinned worker: ", KindSelected},
	{"Selected worker", KindSelected},
	{"Session affinity formula for worker_id=", KindFormula},
	{"Pinned formula for worker_id=", KindFormula},
	{"Formula for worker_id=", KindFormula},
	{"[ROUTING] Best: ", KindBest},
	{"[ROUTING_INPUT] request local hashes", KindInput},
}

// mayHoldMarker is the cheap test every line passes first: most log lines are
// not the router's.
func mayHoldMarker(line []byte) bool {
	return bytes.Contains(line, []byte("Selected ")) || bytes.Contains(line, []byte("ormula for worker_id=")) ||
		bytes.Contains(line, []byte("[ROUTING"))
}

// ParseLine parses one log line (without its newline). ok is false for a line
// that is not a router line; err wraps ErrMalformed for a line that carries a
// router marker but cannot be read. Position is left for the caller.
func ParseLine(line []byte) (rec Record, ok bool, err error) {
	if !mayHoldMarker(line) {
		return Record{}, false, nil
	}
	if i := bytes.IndexByte(line, '{'); i >= 0 {
		obj := bytes.TrimRight(line[i:], " \t\r")
		if len(obj) > 1 && obj[len(obj)-1] == '}' && json.Valid(obj) {
			return parseJSONLine(obj)
		}
	}
	return parseTextLine(line)
}

// field is one structured field's value as text: a string's content, or a
// number's digits as printed.
type field struct {
	text string
	// quoted is true for a string value (a Debug-quoted text field, a JSON
	// string).
	quoted bool
}

// fields holds a line's structured fields; the first value of a name wins
// (an event's own fields precede its spans' in text).
type fields map[string]field

func (f fields) str(name string) (string, bool) {
	v, ok := f[name]
	return v.text, ok
}

// u64 reads an unsigned integer field: digits, a Debug-quoted number, or
// Some(N).
func (f fields) u64(name string) (uint64, bool) {
	v, ok := f[name]
	if !ok {
		return 0, false
	}
	s := v.text
	if inner, ok := strings.CutPrefix(s, "Some("); ok {
		s = strings.TrimSuffix(inner, ")")
	}
	n, err := strconv.ParseUint(s, 10, 64)
	return n, err == nil
}

// num reads a float field as the router printed it (Debug or serde_json's f64
// form: exact).
func (f fields) num(name string) (Number, bool) {
	v, ok := f[name]
	if !ok || v.quoted {
		return Number{}, false
	}
	return parseNumber(v.text, true)
}

// parseJSONLine reads a DYN_LOGGING_JSONL line.
func parseJSONLine(obj []byte) (Record, bool, error) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return Record{}, false, nil //nolint:nilerr // not a JSON object after all: not a router line
	}
	msg, _ := m["message"].(string)
	if msg == "" {
		return Record{}, false, nil
	}
	f := fields{}
	for k, v := range m {
		switch v := v.(type) {
		case string:
			f[k] = field{text: v, quoted: true}
		case json.Number:
			f[k] = field{text: v.String()}
		case bool:
			f[k] = field{text: strconv.FormatBool(v)}
		}
	}
	rec := Record{Format: FormatJSON}
	rec.Time, _ = m["time"].(string)
	rec.Level, _ = m["level"].(string)
	kind, rest, start, ok := findMarker(msg)
	if !ok || start != 0 {
		return Record{}, false, nil
	}
	if err := parseMessage(&rec, kind, rest, f); err != nil {
		return Record{}, !errors.Is(err, errNotOurs), ignoreNotOurs(err)
	}
	rec.detach()
	return rec, true, nil
}

// ignoreNotOurs drops errNotOurs: such a line is simply not a router line.
func ignoreNotOurs(err error) error {
	if errors.Is(err, errNotOurs) {
		return nil
	}
	return err
}

// parseTextLine reads a compact-format text line, after removing its colour.
func parseTextLine(line []byte) (Record, bool, error) {
	format := FormatText
	s := string(line)
	if strings.IndexByte(s, 0x1b) >= 0 {
		s = stripANSI(s)
		format = FormatANSI
	}
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	kind, rest, start, ok := findMarker(s)
	if !ok {
		return Record{}, false, nil
	}
	rec := Record{Format: format}
	rec.Time, rec.Level = textPrefix(s[:start])
	if err := parseMessage(&rec, kind, rest, nil); err != nil {
		return Record{}, !errors.Is(err, errNotOurs), ignoreNotOurs(err)
	}
	rec.detach()
	return rec, true, nil
}

// detach copies every string of r out of the line it was cut from, so that a
// kept record does not keep its whole line alive (a [ROUTING_INPUT] line can
// be hundreds of kilobytes).
func (r *Record) detach() {
	r.Time, r.Level, r.RequestID, r.WorkerType = strings.Clone(r.Time), strings.Clone(r.Level), strings.Clone(r.RequestID), strings.Clone(r.WorkerType)
	num := func(ns ...*Number) {
		for _, n := range ns {
			if n != nil {
				n.Text = strings.Clone(n.Text)
			}
		}
	}
	if s := r.Selection; s != nil {
		s.RouterMode = strings.Clone(s.RouterMode)
		num(&s.Logit, s.EffectiveCachedBlocks)
	}
	if f := r.Formula; f != nil {
		num(&f.EffectiveBlocks, f.SharedMultiplier, &f.Logit, &f.Scale, &f.Adjusted, &f.Decode, &f.RequestCost, &f.Raw, &f.Credit, &f.Decay, &f.Weight, &f.PrefillBlocks)
	}
}

// findMarker finds the earliest router marker in s and returns its kind, the
// message from the marker on, and where it starts.
func findMarker(s string) (kind LineKind, msg string, start int, ok bool) {
	start = -1
	for _, m := range markers {
		i := strings.Index(s, m.text)
		if i < 0 {
			continue
		}
		// "Selected worker" alone must end the message or be followed by a
		// field, a colon (the text form) or the end.
		if m.text == "Selected worker" {
			j := i + len(m.text)
			if j < len(s) && s[j] != ' ' && s[j] != ':' {
				continue
			}
		}
		if start < 0 || i < start {
			start, kind = i, m.kind
		}
	}
	if start < 0 {
		return "", "", 0, false
	}
	return kind, s[start:], start, true
}

// textPrefix picks the timestamp and the level out of what precedes the
// message (the compact format's "TIME LEVEL target:"; kubectl may add its own
// timestamp or a [pod/…] prefix before it).
func textPrefix(s string) (time, level string) {
	for _, w := range strings.Fields(s) {
		switch w {
		case "TRACE", "DEBUG", "INFO", "WARN", "ERROR":
			level = w
		default:
			if time == "" && len(w) >= 10 && w[0] >= '0' && w[0] <= '9' && strings.Contains(w, "T") {
				time = w
			}
		}
	}
	return time, level
}

// stripANSI removes ANSI escape sequences: CSI (ESC [ … final byte), OSC
// (ESC ] … BEL or ST) and two-byte escapes.
func stripANSI(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		c := s[i]
		if c != 0x1b {
			b.WriteByte(c)
			i++
			continue
		}
		if i+1 >= len(s) {
			break
		}
		switch s[i+1] {
		case '[':
			j := i + 2
			for j < len(s) && (s[j] < 0x40 || s[j] > 0x7e) {
				j++
			}
			i = min(j+1, len(s))
		case ']':
			j := i + 2
			for j < len(s) && s[j] != 0x07 && (s[j] != 0x1b || j+1 >= len(s) || s[j+1] != '\\') {
				j++
			}
			switch {
			case j < len(s) && s[j] == 0x07:
				i = j + 1
			default:
				i = min(j+2, len(s))
			}
		default:
			i += 2
		}
	}
	return b.String()
}

// parseMessage fills rec from the message (from its marker on) and the
// line's fields: those of a JSON line (f), or, for text, the key=value pairs
// that follow the message.
func parseMessage(rec *Record, kind LineKind, msg string, f fields) error {
	rec.Kind = kind
	c := &cursor{s: msg}
	switch kind {
	case KindSelected:
		if err := parseSelected(rec, c); err != nil {
			return err
		}
	case KindFormula:
		if err := parseFormula(rec, c); err != nil {
			return err
		}
	case KindBest:
		if err := parseBest(rec, c); err != nil {
			return err
		}
	case KindInput:
		c.lit("[ROUTING_INPUT] request local hashes")
		rec.Input = &RoutingInput{}
	}
	if f == nil {
		f = textFields(c.rest())
	}
	return applyFields(rec, f)
}

// applyFields reads the structured fields of each kind.
func applyFields(rec *Record, f fields) error {
	if id, ok := f.str("request_id"); ok {
		rec.RequestID = normalizeRequestID(id)
	}
	if wt, ok := f.str("worker_type"); ok && rec.WorkerType == "" {
		rec.WorkerType = cut(wt, 32)
	}
	switch rec.Kind {
	case KindSelected:
		s := rec.Selection
		if s.Form != "structured" {
			return nil
		}
		if _, ok := f["worker_id"]; !ok {
			return errNotOurs
		}
		id, ok := f.u64("worker_id")
		if !ok {
			return fmt.Errorf("%w: Selected worker without a u64 worker_id", ErrMalformed)
		}
		s.Worker.WorkerID = routecore.WorkerID(id)
		if r, ok := f.u64("dp_rank"); ok && r <= math.MaxUint32 {
			s.Worker.DpRank = uint32(r)
		}
		logit, ok := f.num("logit")
		if !ok {
			return fmt.Errorf("%w: Selected worker without a logit", ErrMalformed)
		}
		s.Logit = logit
		if n, ok := f.num("effective_cached_blocks"); ok {
			s.EffectiveCachedBlocks = &n
		}
		s.HostPinnedBlocks = optU64(f, "host_pinned_blocks")
		s.DiskBlocks = optU64(f, "disk_blocks")
		s.TotalKvBlocks = optU64(f, "total_kv_blocks")
		s.RouterMode, _ = f.str("router_mode")
		s.RouterMode = cut(s.RouterMode, 32)
	case KindBest:
		// The message carries the worker and the counts; the fields repeat
		// them (and are what upstream's own log parser reads first).
		if v, ok := f.u64("overlap_blocks"); ok {
			rec.Best.OverlapBlocks = v
		}
		if v, ok := f.u64("total_blocks"); ok {
			rec.Best.TotalBlocks = v
		}
	case KindInput:
		in := rec.Input
		in.ISLTokens, _ = f.u64("isl_tokens")
		in.BlockSize, _ = f.u64("block_size")
		in.NumBlocks, _ = f.u64("num_blocks")
		if v, ok := f.str("local_hashes"); ok {
			hs, err := parseHashList(v)
			if err != nil {
				return err
			}
			in.LocalHashes = hs
		}
	}
	return nil
}

func optU64(f fields, name string) *uint64 {
	if v, ok := f.u64(name); ok {
		return &v
	}
	return nil
}

// normalizeRequestID turns the router's "no id" forms ("-", "") into "" and
// bounds the id.
func normalizeRequestID(id string) string {
	if id == "-" {
		return ""
	}
	return cut(id, MaxRequestIDBytes)
}

// cut bounds s to n bytes, on a rune boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// parseHashList reads "[1, 2, 3]" (the Debug form of a Vec<u64>).
func parseHashList(s string) ([]uint64, error) {
	s = strings.TrimSpace(s)
	inner, ok := strings.CutPrefix(s, "[")
	if !ok {
		return nil, fmt.Errorf("%w: local_hashes is not a list", ErrMalformed)
	}
	inner, ok = strings.CutSuffix(inner, "]")
	if !ok {
		return nil, fmt.Errorf("%w: local_hashes is cut short", ErrMalformed)
	}
	inner = strings.TrimSpace(inner)
	if inner == "" {
		return []uint64{}, nil
	}
	out := make([]uint64, 0, strings.Count(inner, ",")+1)
	for part := range strings.SplitSeq(inner, ",") {
		v, err := strconv.ParseUint(strings.TrimSpace(part), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%w: local_hashes holds %q, not a u64", ErrMalformed, cut(strings.TrimSpace(part), 32))
		}
		out = append(out, v)
	}
	return out, nil
}

// textFields reads the key=value pairs of a compact text line: a value is a
// Debug-quoted string, a bracketed list, Some(…), or a word.
func textFields(s string) fields {
	f := fields{}
	i := 0
	for i < len(s) {
		for i < len(s) && s[i] == ' ' {
			i++
		}
		k := i
		for i < len(s) && (isIdent(s[i]) || (i > k && (s[i] == '.' || s[i] >= '0' && s[i] <= '9'))) {
			i++
		}
		if i == k || i >= len(s) || s[i] != '=' {
			for i < len(s) && s[i] != ' ' {
				i++
			}
			continue
		}
		key := s[k:i]
		i++ // '='
		var v field
		switch {
		case i < len(s) && s[i] == '"':
			text, n := rustString(s[i:])
			v, i = field{text: text, quoted: true}, i+n
		case i < len(s) && s[i] == '[':
			j := strings.IndexByte(s[i:], ']')
			if j < 0 {
				v, i = field{text: s[i:]}, len(s)
			} else {
				v, i = field{text: s[i : i+j+1]}, i+j+1
			}
		default:
			j := i
			for j < len(s) && s[j] != ' ' {
				j++
			}
			v, i = field{text: s[i:j]}, j
		}
		if _, seen := f[key]; !seen {
			f[key] = v
		}
	}
	return f
}

func isIdent(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// rustString reads a Debug-quoted Rust string at the start of s and returns
// its content and the bytes consumed. An unterminated string runs to the end.
func rustString(s string) (string, int) {
	var b strings.Builder
	i := 1
	for i < len(s) {
		c := s[i]
		switch {
		case c == '"':
			return b.String(), i + 1
		case c == '\\' && i+1 < len(s):
			i++
			switch s[i] {
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case '0':
				b.WriteByte(0)
			case 'u':
				if end := strings.IndexByte(s[i:], '}'); i+1 < len(s) && s[i+1] == '{' && end > 0 {
					if r, err := strconv.ParseUint(s[i+2:i+end], 16, 32); err == nil && utf8.ValidRune(rune(r)) {
						b.WriteRune(rune(r))
						i += end
						break
					}
				}
				b.WriteString(`\u`)
			default:
				b.WriteByte(s[i])
			}
			i++
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String(), len(s)
}

// cursor reads a message left to right.
type cursor struct {
	s   string
	i   int
	err error
}

func (c *cursor) rest() string { return c.s[c.i:] }

// lit consumes the literal p, or records an error.
func (c *cursor) lit(p string) bool {
	if c.err != nil {
		return false
	}
	if !strings.HasPrefix(c.s[c.i:], p) {
		c.err = fmt.Errorf("%w: expected %q at %q", ErrMalformed, p, cut(c.s[c.i:], 40))
		return false
	}
	c.i += len(p)
	return true
}

// try consumes p when it is next.
func (c *cursor) try(p string) bool {
	if c.err == nil && strings.HasPrefix(c.s[c.i:], p) {
		c.i += len(p)
		return true
	}
	return false
}

// token reads the next run of number characters.
func (c *cursor) token() string {
	if c.err != nil {
		return ""
	}
	j := c.i
	for j < len(c.s) {
		ch := c.s[j]
		if !numberChar(ch) {
			break
		}
		// A '-' or '+' only inside an exponent or at the start.
		if (ch == '-' || ch == '+') && j > c.i && c.s[j-1] != 'e' && c.s[j-1] != 'E' {
			break
		}
		j++
	}
	t := c.s[c.i:j]
	c.i = j
	return t
}

// num reads a {:.N} number.
func (c *cursor) num() Number {
	t := c.token()
	if c.err != nil {
		return Number{}
	}
	n, ok := parseNumber(t, false)
	if !ok {
		c.err = fmt.Errorf("%w: expected a number at %q", ErrMalformed, cut(c.s[c.i-len(t):], 40))
	}
	return n
}

// u64 reads an unsigned integer.
func (c *cursor) u64() uint64 {
	if c.err != nil {
		return 0
	}
	j := c.i
	for j < len(c.s) && c.s[j] >= '0' && c.s[j] <= '9' {
		j++
	}
	v, err := strconv.ParseUint(c.s[c.i:j], 10, 64)
	if err != nil {
		c.err = fmt.Errorf("%w: expected an unsigned integer at %q", ErrMalformed, cut(c.s[c.i:], 40))
		return 0
	}
	c.i = j
	return v
}

// u32 reads a dp rank.
func (c *cursor) u32() uint32 {
	v := c.u64()
	if v > math.MaxUint32 && c.err == nil {
		c.err = fmt.Errorf("%w: dp rank %d exceeds u32", ErrMalformed, v)
	}
	return uint32(v)
}

// word reads a worker type (letters and underscores).
func (c *cursor) word() string {
	j := c.i
	for j < len(c.s) && (isIdent(c.s[j]) || c.s[j] == '-') {
		j++
	}
	w := c.s[c.i:j]
	c.i = j
	return cut(w, 32)
}

// parseSelected reads the three Selected forms.
func parseSelected(rec *Record, c *cursor) error {
	s := &Selection{}
	rec.Selection = s
	switch {
	case c.try("Selected pinned worker: "):
		s.Form = "pinned"
		c.lit("worker_type=")
		rec.WorkerType = c.word()
		c.lit(", ")
	case c.try("Selected worker: "):
		s.Form = "text"
		if c.try("worker_type=") {
			rec.WorkerType = c.word()
			c.lit(", ")
		} else {
			s.Form = "text-v1"
		}
	default:
		c.lit("Selected worker")
		s.Form = "structured"
		return c.err
	}
	c.lit("worker_id=")
	s.Worker.WorkerID = routecore.WorkerID(c.u64())
	c.lit(" dp_rank=")
	s.Worker.DpRank = c.u32()
	c.lit(", logit: ")
	s.Logit = c.num()
	for c.err == nil && c.try(", ") {
		switch {
		case c.try("effective cached blocks: "):
			n := c.num()
			s.EffectiveCachedBlocks = &n
		case c.try("cached blocks: "):
			n := c.num()
			s.EffectiveCachedBlocks = &n
		case c.try("host_pinned blocks: "):
			v := c.u64()
			s.HostPinnedBlocks = &v
		case c.try("disk blocks: "):
			v := c.u64()
			s.DiskBlocks = &v
		case c.try("tree size: "):
			v := c.u64()
			s.TreeSize = &v
		case c.try("total blocks: "):
			v := c.u64()
			s.TotalKvBlocks = &v
		default:
			c.i -= 2 // not one of ours: the fields start here
			return c.err
		}
	}
	return c.err
}

// parseFormula reads every Formula shape.
func parseFormula(rec *Record, c *cursor) error {
	f := &Formula{}
	rec.Formula = f
	switch {
	case c.try("Session affinity formula"):
		f.Name = "Session affinity formula"
	case c.try("Pinned formula"):
		f.Name = "Pinned formula"
	default:
		c.lit("Formula")
		f.Name = "Formula"
	}
	c.lit(" for worker_id=")
	f.Worker.WorkerID = routecore.WorkerID(c.u64())
	c.lit(" dp_rank=")
	f.Worker.DpRank = c.u32()
	c.lit(" with ")
	f.EffectiveBlocks = c.num()
	c.lit(" ")
	switch {
	case c.try("effective cached blocks: "):
		f.Logit = c.num()
		c.lit(" = ")
		formulaTail(f, c)
	case c.try("effective cached blocks, "):
		sharedHead(f, c)
		f.Logit = c.num()
		c.lit(" = ")
		formulaTail(f, c)
	case c.try("effective device blocks, "):
		sharedHead(f, c)
		f.Logit = c.num()
		c.lit(" = ")
		f.Shape = ShapeWeighted
		f.Weight = c.num()
		c.lit(" * adjusted_prefill_blocks + decode_blocks = ")
		weightedTail(f, c)
		c.lit(" (prefill_tokens: ")
		a := c.u64()
		c.lit(" -> ")
		b := c.u64()
		c.lit(")")
		f.PrefillTokens, f.AdjustedTokens = &a, &b
	case c.try("cached blocks: "):
		f.Logit = c.num()
		c.lit(" = ")
		f.Shape = ShapeWeighted
		f.Weight = c.num()
		c.lit(" * prefill_blocks + decode_blocks = ")
		weightedTail(f, c)
	default:
		c.lit("effective cached blocks: ")
	}
	return c.err
}

// sharedHead reads "{n} shared blocks beyond device (multiplier={m}): ".
func sharedHead(f *Formula, c *cursor) {
	n := c.u64()
	c.lit(" shared blocks beyond device (multiplier=")
	m := c.num()
	c.lit("): ")
	f.SharedBeyond, f.SharedMultiplier = &n, &m
}

// formulaTail reads what follows "L = " in the newest selector's lines.
func formulaTail(f *Formula, c *cursor) {
	switch {
	case c.try("prefill_load_scale * adjusted_prefill_blocks + decode_blocks + active_request_cost_blocks = "):
		f.Shape = ShapePrefill
		f.Scale = c.num()
		c.lit(" * ")
		f.Adjusted = c.num()
		c.lit(" + ")
		f.Decode = c.num()
		c.lit(" + ")
		f.RequestCost = c.num()
		c.lit(" (raw_prefill_blocks: ")
		f.Raw = c.num()
		c.lit(", overlap_credit_blocks: ")
		f.Credit = c.num()
		c.lit(", overlap_credit_decay: ")
		f.Decay = c.num()
		c.lit(")")
	case c.try("max(0, decode_blocks - overlap_credit_blocks) + active_request_cost_blocks = max(0, "):
		f.Shape = ShapeDecodeOverlap
		f.Decode = c.num()
		c.lit(" - ")
		f.Credit = c.num()
		c.lit(") + ")
		f.RequestCost = c.num()
	default:
		// The weighted form: "{w:.1} * prefill_blocks + decode_blocks = …".
		f.Shape = ShapeWeighted
		f.Weight = c.num()
		c.lit(" * prefill_blocks + decode_blocks = ")
		weightedTail(f, c)
	}
}

// weightedTail reads "{w} * {p} + {d}" and checks the repeated weight.
func weightedTail(f *Formula, c *cursor) {
	w := c.num()
	if c.err == nil && w.Text != f.Weight.Text {
		c.err = fmt.Errorf("%w: the weight is printed as %s and %s", ErrMalformed, f.Weight.Text, w.Text)
	}
	c.lit(" * ")
	f.PrefillBlocks = c.num()
	c.lit(" + ")
	f.Decode = c.num()
}

// parseBest reads "[ROUTING] Best: worker_{id} dp_rank={r} with {o}/{t}
// blocks overlap" (dp_rank is absent from older routers).
func parseBest(rec *Record, c *cursor) error {
	b := &Best{}
	rec.Best = b
	c.lit("[ROUTING] Best: worker_")
	b.Worker.WorkerID = routecore.WorkerID(c.u64())
	if c.try(" dp_rank=") {
		b.Worker.DpRank = c.u32()
	}
	c.lit(" with ")
	o := c.num()
	c.lit("/")
	t := c.u64()
	c.lit(" blocks overlap")
	if c.err == nil {
		if o.Value < 0 || math.IsNaN(o.Value) || o.Value > math.MaxUint32 {
			return fmt.Errorf("%w: overlap %s is not a block count", ErrMalformed, o.Text)
		}
		b.OverlapBlocks = uint64(o.Value + 0.5)
		b.TotalBlocks = t
	}
	return c.err
}
