package audit

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
)

// Limits bound what ReadLogs reads from one stream.
type Limits struct {
	// MaxBytes is the most bytes read (after decompression); the rest of the
	// stream is left unread and the stream is marked Truncated.
	MaxBytes int64
	// MaxLineBytes is the longest line kept; longer lines are skipped and
	// counted (a [ROUTING_INPUT] line of a 128k-token prompt is about 180 kB).
	MaxLineBytes int
	// MaxRecords is the most router records kept from the stream.
	MaxRecords int
}

// DefaultLimits are the bounds of a log read.
var DefaultLimits = Limits{MaxBytes: 256 << 20, MaxLineBytes: 1 << 20, MaxRecords: 500_000}

// MaxMalformedExamples is how many malformed lines a stream keeps as
// examples.
const MaxMalformedExamples = 5

// StreamStats say what one log stream held.
type StreamStats struct {
	// Name is the file, "-" for standard input, or pod/container.
	Name string `json:"name"`
	// Gzip is true when the stream was gzip-compressed.
	Gzip bool `json:"gzip,omitempty"`
	// Bytes and Lines are what was read.
	Bytes int64 `json:"bytes"`
	Lines int   `json:"lines"`
	// Records counts the router lines read, by kind.
	Records map[LineKind]int `json:"records"`
	// Formats counts the router lines by format (text, ansi, json).
	Formats map[Format]int `json:"formats"`
	// Overlong counts lines skipped for exceeding MaxLineBytes.
	Overlong int `json:"overlong,omitempty"`
	// Malformed counts lines with a router marker that could not be read;
	// MalformedExamples are the first few, with why.
	Malformed         int      `json:"malformed,omitempty"`
	MalformedExamples []string `json:"malformedExamples,omitempty"`
	// Truncated is set when a bound (bytes or records) stopped the read;
	// TruncatedBy says which.
	Truncated   bool   `json:"truncated,omitempty"`
	TruncatedBy string `json:"truncatedBy,omitempty"`
	// PartialLastLine is set when the stream ended inside a line.
	PartialLastLine bool `json:"partialLastLine,omitempty"`
	// First and Last are the first and last timestamps of router lines.
	First string `json:"first,omitempty"`
	Last  string `json:"last,omitempty"`
}

// ReadLogs reads one log stream (plain or gzip, detected from its first
// bytes) and returns its router records with their positions. The read stops
// at lim.MaxBytes or lim.MaxRecords (Truncated); zero limits take
// DefaultLimits. An error is returned only when the stream cannot be read at
// all (a broken gzip stream is an error; a bound is not).
func ReadLogs(r io.Reader, name string, lim Limits) ([]Record, StreamStats, error) {
	lim = lim.withDefaults()
	st := StreamStats{Name: name, Records: map[LineKind]int{}, Formats: map[Format]int{}}
	br := bufio.NewReaderSize(r, 64<<10)
	if magic, err := br.Peek(2); err == nil && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, st, fmt.Errorf("read %s: not a readable gzip stream: %w", name, err)
		}
		defer func() { _ = zr.Close() }()
		st.Gzip = true
		br = bufio.NewReaderSize(zr, 64<<10)
	}
	counted := &countingReader{r: br, limit: lim.MaxBytes}
	lr := bufio.NewReaderSize(counted, 64<<10)

	var recs []Record
	var line []byte
	overlong := false
	for {
		chunk, err := lr.ReadSlice('\n')
		if len(chunk) > 0 {
			switch {
			case overlong:
			case len(line)+len(chunk) > lim.MaxLineBytes+1: // +1: the newline
				overlong, line = true, line[:0]
			default:
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		complete := len(chunk) > 0 && chunk[len(chunk)-1] == '\n'
		if len(chunk) > 0 || len(line) > 0 || overlong {
			if !complete && err != nil && !overlong && len(line) > 0 {
				st.PartialLastLine = true
			}
			if overlong || len(line) > 0 || complete {
				st.Lines++
			}
			if overlong {
				st.Overlong++
			} else if len(line) > 0 {
				if rec, ok := st.parse(bytes.TrimRight(line, "\r\n"), name, st.Lines); ok {
					if len(recs) >= lim.MaxRecords {
						st.Truncated, st.TruncatedBy = true, fmt.Sprintf("records (at most %d)", lim.MaxRecords)
						break
					}
					recs = append(recs, rec)
				}
			}
			line, overlong = line[:0], false
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			if errors.Is(err, errByteLimit) {
				st.Truncated, st.TruncatedBy = true, fmt.Sprintf("bytes (at most %d)", lim.MaxBytes)
				break
			}
			st.Bytes = counted.n
			if st.Gzip {
				return recs, st, fmt.Errorf("read %s: the gzip stream is corrupt or cut short: %w", name, err)
			}
			return recs, st, fmt.Errorf("read %s: %w", name, err)
		}
	}
	st.Bytes = counted.n
	return recs, st, nil
}

// parse parses one line and counts it.
func (st *StreamStats) parse(line []byte, name string, n int) (Record, bool) {
	rec, ok, err := ParseLine(line)
	if err != nil {
		st.Malformed++
		if len(st.MalformedExamples) < MaxMalformedExamples {
			st.MalformedExamples = append(st.MalformedExamples, fmt.Sprintf("%s:%d: %v", name, n, err))
		}
		return Record{}, false
	}
	if !ok {
		return Record{}, false
	}
	rec.Pos = Position{Source: name, Line: n}
	st.Records[rec.Kind]++
	st.Formats[rec.Format]++
	if rec.Time != "" {
		if st.First == "" {
			st.First = rec.Time
		}
		st.Last = rec.Time
	}
	return rec, true
}

func (l Limits) withDefaults() Limits {
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultLimits.MaxBytes
	}
	if l.MaxLineBytes <= 0 {
		l.MaxLineBytes = DefaultLimits.MaxLineBytes
	}
	if l.MaxRecords <= 0 {
		l.MaxRecords = DefaultLimits.MaxRecords
	}
	return l
}

// errByteLimit ends a read at Limits.MaxBytes.
var errByteLimit = errors.New("byte limit reached")

// countingReader counts what it passes on and stops at limit.
type countingReader struct {
	r     io.Reader
	n     int64
	limit int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	if c.n >= c.limit {
		return 0, errByteLimit
	}
	if rem := c.limit - c.n; int64(len(p)) > rem {
		p = p[:rem]
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
