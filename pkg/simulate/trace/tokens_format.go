package trace

import (
	"encoding/json"
	"time"
)

// tokensRow is a row of the tokens and texts formats.
type tokensRow struct {
	Timestamp    *json.Number `json:"timestamp"`
	Tokens       []uint32     `json:"tokens"`
	Text         *string      `json:"text"`
	OutputLength *int64       `json:"output_length"`
	SessionID    sessionID    `json:"session_id"`
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
	r.row = tokensRow{}
	if err := decodeLine(b, line, &r.row); err != nil {
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
	if row.Tokens == nil {
		return Request{}, lineErr(line, "the row has no tokens")
	}
	if len(row.Tokens) > r.o.MaxInputTokens {
		return Request{}, lineErr(line, "the row has %d tokens, over the limit of %d (Options.MaxInputTokens)", len(row.Tokens), r.o.MaxInputTokens)
	}
	req.Tokens = row.Tokens // freshly decoded, owned by the caller from here
	return req, nil
}
