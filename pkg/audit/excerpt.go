package audit

import (
	"fmt"
)

// Pseudonyms replaces request ids with stable stand-ins ("req-000001", in
// order of first appearance), so that an excerpt still joins its lines by
// request without carrying the ids themselves. The zero value is ready; one
// Pseudonyms shared by several excerpts keeps a request's pseudonym across
// them.
type Pseudonyms struct {
	ids map[string]string
}

// Of returns id's pseudonym ("" for "").
func (p *Pseudonyms) Of(id string) string {
	if id == "" {
		return ""
	}
	if p.ids == nil {
		p.ids = map[string]string{}
	}
	if s, ok := p.ids[id]; ok {
		return s
	}
	s := fmt.Sprintf("req-%06d", len(p.ids)+1)
	p.ids[id] = s
	return s
}

// Excerpt is the redacted form of a frontend log's router lines that a
// capture carries (capture --logs): the last maxLines records (all when 0),
// each re-written by FormatLine as compact text with only the fields the
// audit reads (the message, request id, worker type and the numbers), the
// request ids replaced by pseudonyms. Whatever else a line held (other
// fields, span fields such as a request's URI or model, surrounding text) is
// not carried. dropped counts the records left out.
func Excerpt(recs []Record, maxLines int, p *Pseudonyms) (lines []string, dropped int, err error) {
	if maxLines > 0 && len(recs) > maxLines {
		dropped = len(recs) - maxLines
		recs = recs[dropped:]
	}
	lines = make([]string, 0, len(recs))
	for _, r := range recs {
		r.RequestID = p.Of(r.RequestID)
		if r.Selection != nil {
			s := *r.Selection
			s.RouterMode = "kv"
			r.Selection = &s
		}
		line, err := FormatLine(r, FormatText)
		if err != nil {
			return nil, 0, fmt.Errorf("%s: %w", r.Pos, err)
		}
		lines = append(lines, string(line))
	}
	return lines, dropped, nil
}
