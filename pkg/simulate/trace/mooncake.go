package trace

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// mooncakeRow is one row of a Mooncake trace (and of mooncake-delta). The
// fields upstream readers also accept are kept so that a trace using them
// gets a clear answer.
type mooncakeRow struct {
	Timestamp    *json.Number `json:"timestamp"`
	CreatedTime  *json.Number `json:"created_time"`
	InputLength  *int64       `json:"input_length"`
	OutputLength *int64       `json:"output_length"`
	// HashIDs is decoded after its count is checked (arrayLen).
	HashIDs   json.RawMessage `json:"hash_ids"`
	SessionID sessionID       `json:"session_id"`
	Delay     *json.Number    `json:"delay"`
	DelayMS   *json.Number    `json:"delay_ms"`
}

// maxSessions bounds the sessions a mooncake-delta trace may keep open.
const maxSessions = 1 << 20

// maxSessionBytes bounds the memory mooncake-delta sessions hold (their hash
// ids and names): at --trace-block-size 1 each session may hold 2,000,000 ids
// (16 MB), and a trace of many long sessions grew without bound.
const maxSessionBytes = 256 << 20

type mooncakeReader struct {
	lines *lineReader
	o     Options
	delta bool
	row   mooncakeRow
	order order
	// sessions holds each mooncake-delta session's prompt so far, as
	// segments (hash ids and lengths), not tokens.
	sessions map[string]*deltaSession
	// held is the bytes the sessions hold, about.
	held int
	// rows counts the rows read, short those with fewer hash ids than their
	// input_length fills at the trace block size (Warnings), the first of
	// them described.
	rows, short           int
	shortFirst, shortHint string
}

// Warnings says what the rows read so far hold that the replay may not be
// what the trace meant: rows whose hash ids cover less than their
// input_length at --trace-block-size.
func (r *mooncakeReader) Warnings() []string {
	if r.short == 0 {
		return nil
	}
	return []string{fmt.Sprintf("%s (%d of %d rows are so): the tokens past a row's hash ids are unique to it, so no prefix beyond them is shared; if %s",
		r.shortFirst, r.short, r.rows, r.shortHint)}
}

type deltaSession struct {
	segs []segment
	n    int
	// the previous turn, whose stand-in output comes before the next delta
	lastLine   int
	lastAt     time.Duration
	lastOutput int
}

func newMooncakeReader(lr *lineReader, o Options, delta bool) *mooncakeReader {
	r := &mooncakeReader{lines: lr, o: o, delta: delta}
	if delta {
		r.sessions = map[string]*deltaSession{}
	}
	return r
}

func (r *mooncakeReader) Next() (Request, error) {
	b, line, long, err := r.lines.next()
	if err != nil {
		return Request{}, err
	}
	if long {
		return Request{}, r.lines.tooLong(line)
	}
	raw := r.row.HashIDs[:0] // reused: only the decoded ids are kept
	r.row = mooncakeRow{HashIDs: raw}
	if err := decodeLine(b, line, &r.row); err != nil {
		return Request{}, err
	}
	format := Mooncake
	if r.delta {
		format = MooncakeDelta
	}
	if err := checkKeys(b, line, format, mooncakeKeys); err != nil {
		return Request{}, err
	}
	row := &r.row
	bs := r.o.TraceBlockSize

	var at time.Duration
	switch {
	case row.Timestamp != nil:
		at, err = parseMillis(*row.Timestamp, "timestamp", line)
	case row.CreatedTime != nil:
		at, err = parseMillis(*row.CreatedTime, "created_time", line)
	case row.Delay != nil || row.DelayMS != nil:
		return Request{}, lineErr(line, "the row has a delay but no timestamp: closed-loop session replay (a turn starts a delay after the previous one finishes) is not supported; give every row a timestamp")
	default:
		return Request{}, lineErr(line, "the row has no timestamp (milliseconds)")
	}
	if err != nil {
		return Request{}, err
	}
	if err := r.order.check(at, line, "timestamp"); err != nil {
		return Request{}, err
	}

	if row.OutputLength == nil {
		return Request{}, lineErr(line, "the row has no output_length")
	}
	out := *row.OutputLength
	if out < 0 || out > MaxOutputTokens {
		return Request{}, lineErr(line, "output_length %d is out of range: want 0 to %d", out, MaxOutputTokens)
	}
	var ids []uint64
	if !isNull(row.HashIDs) {
		count, ok := arrayLen(row.HashIDs)
		if !ok {
			return Request{}, lineErr(line, "hash_ids: cannot use JSON %s as an array of unsigned 64-bit integers", clip(bytes.TrimSpace(row.HashIDs), 20))
		}
		maxIDs := (r.o.MaxInputTokens + bs - 1) / bs
		if count > maxIDs {
			return Request{}, lineErr(line, "%d hash_ids stand for more than the limit of %d input tokens (Options.MaxInputTokens) at %d tokens per hash id", count, r.o.MaxInputTokens, bs)
		}
		if ids, err = decodeUints[uint64](row.HashIDs, count, "hash_ids", line); err != nil {
			return Request{}, err
		}
	}
	var n int64
	switch {
	case row.InputLength != nil:
		n = *row.InputLength
	case ids != nil:
		n = int64(len(ids) * bs)
	default:
		return Request{}, lineErr(line, "the row has neither input_length nor hash_ids")
	}
	if n < 0 {
		return Request{}, lineErr(line, "input_length %d is negative", n)
	}
	if n > int64(r.o.MaxInputTokens) {
		return Request{}, lineErr(line, "input_length %d exceeds the limit of %d tokens (Options.MaxInputTokens)", n, r.o.MaxInputTokens)
	}
	if need := (int(n) + bs - 1) / bs; len(ids) > need {
		return Request{}, lineErr(line, "input_length %d fills %d blocks of %d tokens but the row has %d hash_ids: is the trace block size right (Mooncake's is 512)?", n, need, bs, len(ids))
	} else if len(ids) > 0 && len(ids) < need {
		// Each hash id stands for one block of the prompt: fewer ids than
		// blocks mean the ids cover only the prompt's start, or blocks larger
		// than --trace-block-size — then every token past the ids is unique
		// and almost nothing is shared. Read on, and say so (Warnings).
		if r.short == 0 {
			r.shortFirst = fmt.Sprintf("line %d: input_length %d fills %d blocks of %d tokens but the row has only %d hash_ids", line, n, need, bs, len(ids))
			r.shortHint = impliedBlockSize(int(n), len(ids))
		}
		r.short++
	}
	r.rows++
	seg := segment{ids: ids, n: int(n), tail: tailBase(domainTail, line, int64(at))}
	req := Request{Line: line, Arrival: at, OutputTokens: int(out), Session: string(row.SessionID)}
	if !r.delta || req.Session == "" {
		req.Tokens = appendSegment(make([]uint32, 0, seg.n), seg, bs)
		return req, nil
	}
	return r.accumulate(req, seg)
}

// impliedBlockSize says which --trace-block-size makes n tokens k hash ids
// (⌈n/B⌉ = k): B from ⌈n/k⌉ to ⌈n/(k−1)⌉−1, Mooncake's 512 when it fits.
func impliedBlockSize(n, k int) string {
	lo := (n + k - 1) / k
	if k == 1 {
		if lo <= 512 {
			return fmt.Sprintf("its hash id stands for %d tokens or more, set --trace-block-size to the trace's own (Mooncake's published traces: 512)", lo)
		}
		return fmt.Sprintf("its hash id stands for %d tokens or more, set --trace-block-size to the trace's own", lo)
	}
	hi := (n+k-2)/(k-1) - 1
	if lo <= 512 && 512 <= hi {
		return fmt.Sprintf("its hash ids stand for %d to %d tokens each, set --trace-block-size 512 (Mooncake's published traces)", lo, hi)
	}
	return fmt.Sprintf("its hash ids stand for %d to %d tokens each, set --trace-block-size to the trace's own block size", lo, hi)
}

// accumulate appends a mooncake-delta turn to its session's prompt: the
// previous turn's output (tokens unique to that turn, standing in for what
// the model generated), then this turn's delta.
func (r *mooncakeReader) accumulate(req Request, seg segment) (Request, error) {
	s := r.sessions[req.Session]
	if s == nil {
		if len(r.sessions) >= maxSessions {
			return Request{}, lineErr(req.Line, "more than %d sessions: mooncake-delta keeps every session's prompt, and this trace has too many to hold", maxSessions)
		}
		s = &deltaSession{}
		r.sessions[req.Session] = s
		r.held += len(req.Session) + 128
	}
	r.held += 8*len(seg.ids) + 64
	if r.held > maxSessionBytes {
		return Request{}, lineErr(req.Line, "mooncake-delta keeps every session's prompt, and the %d sessions open hold more than %d MiB of hash ids: the sessions are too long to hold at --trace-block-size %d; raise --trace-block-size to the trace's own, or split the trace", len(r.sessions), maxSessionBytes>>20, r.o.TraceBlockSize)
	}
	var prev segment
	if s.lastLine > 0 {
		prev = segment{n: s.lastOutput, tail: tailBase(domainOutput, s.lastLine, int64(s.lastAt))}
	}
	total := s.n + prev.n + seg.n
	if total > r.o.MaxInputTokens {
		return Request{}, lineErr(req.Line, "session %q's accumulated prompt reaches %d tokens, over the limit of %d (Options.MaxInputTokens)", clip([]byte(req.Session), 60), total, r.o.MaxInputTokens)
	}
	if prev.n > 0 {
		s.segs = append(s.segs, prev)
	}
	s.segs = append(s.segs, seg)
	s.n, s.lastLine, s.lastAt, s.lastOutput = total, req.Line, req.Arrival, req.OutputTokens
	req.Tokens = make([]uint32, 0, total)
	for _, g := range s.segs {
		req.Tokens = appendSegment(req.Tokens, g, r.o.TraceBlockSize)
	}
	return req, nil
}
