package trace

import (
	"bytes"
	"encoding/json"
	"time"
)

// tokensRow is a row of the tokens and texts formats.
type tokensRow struct {
	Timestamp *json.Number `json:"timestamp"`
	// Tokens is decoded after its count is checked (arrayLen).
	Tokens       json.RawMessage `json:"tokens"`
	Text         *string         `json:"text"`
	OutputLength *int64          `json:"output_length"`
	SessionID    sessionID       `json:"session_id"`
}

// tokensReader reads the tokens format, or with texts set the texts format.
type tokensReader struct {
	lines *lineReader
	o     Options
	texts bool
	row   tokensRow
	order order
	at    time.Duration
}

func (r *tokensReader) Next() (Request, error) {
	b, line, long, err := r.lines.next()
	if err != nil {
		return Request{}, err
	}
	if long {
		return Request{}, r.lines.tooLong(line)
	}
	raw := r.row.Tokens[:0] // reused: only the decoded tokens are kept
	r.row = tokensRow{Tokens: raw}
	if err := decodeLine(b, line, &r.row); err != nil {
		return Request{}, err
	}
	format, known := Tokens, tokensKeys
	if r.texts {
		format, known = Texts, textsKeys
	}
	if err := checkKeys(b, line, format, known); err != nil {
		return Request{}, err
	}
	row := &r.row
	if row.Timestamp != nil {
		// A row without a timestamp arrives with the one before it.
		if r.at, err = parseMillis(*row.Timestamp, "timestamp", line); err != nil {
			return Request{}, err
		}
	}
	if err := r.order.check(r.at, line, "timestamp"); err != nil {
		return Request{}, err
	}
	if row.OutputLength == nil {
		return Request{}, lineErr(line, "the row has no output_length")
	}
	if out := *row.OutputLength; out < 0 || out > MaxOutputTokens {
		return Request{}, lineErr(line, "output_length %d is out of range: want 0 to %d", out, MaxOutputTokens)
	}
	req := Request{Line: line, Arrival: r.at, OutputTokens: int(*row.OutputLength), Session: string(row.SessionID)}
	if r.texts {
		if row.Text == nil {
			return Request{}, lineErr(line, "the row has no text")
		}
		toks, err := r.o.Tokenize(*row.Text)
		if err != nil {
			return Request{}, lineErr(line, "tokenizing the text: %w", err)
		}
		if len(toks) > r.o.MaxInputTokens {
			return Request{}, lineErr(line, "the text is %d tokens, over the limit of %d (Options.MaxInputTokens)", len(toks), r.o.MaxInputTokens)
		}
		req.Tokens = append(make([]uint32, 0, len(toks)), toks...)
		return req, nil
	}
	if isNull(row.Tokens) {
		return Request{}, lineErr(line, "the row has no tokens")
	}
	count, ok := arrayLen(row.Tokens)
	if !ok {
		return Request{}, lineErr(line, "tokens: cannot use JSON %s as an array of unsigned 32-bit integers", clip(bytes.TrimSpace(row.Tokens), 20))
	}
	if count > r.o.MaxInputTokens {
		return Request{}, lineErr(line, "the row has %d tokens, over the limit of %d (Options.MaxInputTokens)", count, r.o.MaxInputTokens)
	}
	toks, err := decodeUints[uint32](row.Tokens, count, "tokens", line)
	if err != nil {
		return Request{}, err
	}
	req.Tokens = toks // freshly decoded, owned by the caller from here
	return req, nil
}
