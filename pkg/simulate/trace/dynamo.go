package trace

import (
	"bytes"
	"container/heap"
	"encoding/json"
	"errors"
	"io"
	"time"
)

// dynamoSchema is the only request-trace schema Dynamo writes.
const dynamoSchema = "dynamo.request.trace.v1"

// dynamoReorderWindow is how many request_end records the reader holds to
// put them back in arrival order: Dynamo writes a record when its request
// ends, so a long request's record comes after those of requests that
// arrived later. A record that arrives more than this many records late is
// an error.
const dynamoReorderWindow = 4096

// dynamoWindowBytes bounds the memory the reorder window holds (hashes and
// ids): a record may carry up to Options.MaxInputTokens hashes (16 MB at
// trace_block_size 1), and 4,096 such records were 64 GB. The window holds
// fewer records when they are large.
const dynamoWindowBytes = 64 << 20

// dynamoRecord is the part of a Dynamo request-trace line the replay uses
// (lib/llm/src/request_trace/types.rs); a sink may wrap it as {"event": …}.
type dynamoRecord struct {
	Schema          string  `json:"schema"`
	EventType       string  `json:"event_type"`
	EventTimeUnixMS *uint64 `json:"event_time_unix_ms"`
	AgentContext    *struct {
		SessionID string `json:"session_id"`
	} `json:"agent_context"`
	Request *struct {
		RequestID         string  `json:"request_id"`
		OutputTokens      *uint64 `json:"output_tokens"`
		RequestReceivedMS *uint64 `json:"request_received_ms"`
		Replay            *struct {
			TraceBlockSize uint64 `json:"trace_block_size"`
			InputLength    uint64 `json:"input_length"`
			// decoded after its count is checked against input_length
			InputSequenceHashes json.RawMessage `json:"input_sequence_hashes"`
		} `json:"replay"`
	} `json:"request"`
	Event json.RawMessage `json:"event"`
}

// pending is a request held in the reorder window.
type pending struct {
	at, end    time.Duration
	id         string
	line       int
	hashes     []uint64
	n, out, bs int
	session    string
}

// size is the memory a held record takes, about.
func (p *pending) size() int { return 8*len(p.hashes) + len(p.id) + len(p.session) + 128 }

type pendingHeap []*pending

func (h pendingHeap) Len() int { return len(h) }
func (h pendingHeap) Less(i, j int) bool {
	a, b := h[i], h[j]
	if a.at != b.at {
		return a.at < b.at
	}
	if a.end != b.end {
		return a.end < b.end
	}
	if a.id != b.id {
		return a.id < b.id
	}
	return a.line < b.line
}
func (h pendingHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *pendingHeap) Push(x any)   { *h = append(*h, x.(*pending)) }
func (h *pendingHeap) Pop() any {
	old := *h
	p := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return p
}

type dynamoReader struct {
	lines   *lineReader
	o       Options
	window  pendingHeap
	held    int // bytes the window holds (size)
	eof     bool
	order   order
	bs      int
	bsLine  int
	records int
}

func newDynamoReader(lr *lineReader, o Options) *dynamoReader {
	return &dynamoReader{lines: lr, o: o}
}

func (r *dynamoReader) Next() (Request, error) {
	for !r.eof && len(r.window) <= dynamoReorderWindow && r.held <= dynamoWindowBytes {
		p, err := r.read()
		if errors.Is(err, io.EOF) {
			r.eof = true
			break
		}
		if err != nil {
			return Request{}, err
		}
		heap.Push(&r.window, p)
		r.held += p.size()
	}
	if len(r.window) == 0 {
		if r.records == 0 {
			return Request{}, errors.New("the Dynamo request trace has no request_end records with replay hashes")
		}
		return Request{}, io.EOF
	}
	p := heap.Pop(&r.window).(*pending)
	r.held -= p.size()
	if err := r.order.check(p.at, p.line, "request_received_ms"); err != nil {
		return Request{}, lineErr(p.line, "request %q arrived at %s, before a request already replayed (line %d, %s): its record is more than %d records late, too far out of order to replay while streaming; sort the trace by request.request_received_ms",
			clip([]byte(p.id), 60), fmtMS(p.at), r.order.lastLine, fmtMS(r.order.last), dynamoReorderWindow)
	}
	seg := segment{ids: p.hashes, n: p.n, tail: tailBase(domainTail, p.line, int64(p.at))}
	return Request{
		Line:         p.line,
		Arrival:      p.at,
		Tokens:       appendSegment(make([]uint32, 0, p.n), seg, p.bs),
		OutputTokens: p.out,
		Session:      p.session,
	}, nil
}

// read returns the next request_end record, skipping payload and tool
// records.
func (r *dynamoReader) read() (*pending, error) {
	for {
		b, line, long, err := r.lines.next()
		if err != nil {
			return nil, err
		}
		if long {
			// request_payload records carry whole prompts and can be
			// huge; Dynamo writes event_type before the payload, so the
			// start of the line tells.
			if isPayloadRecord(b) {
				continue
			}
			return nil, r.lines.tooLong(line)
		}
		var rec dynamoRecord
		if err := decodeLine(b, line, &rec); err != nil {
			return nil, err
		}
		if rec.Event != nil && rec.Schema == "" && rec.EventType == "" {
			wrapped := rec.Event
			rec = dynamoRecord{}
			if err := decodeLine(wrapped, line, &rec); err != nil {
				return nil, err
			}
		}
		if rec.Schema != dynamoSchema {
			return nil, lineErr(line, "schema %q is not %q, the Dynamo request-trace schema this reader knows", clip([]byte(rec.Schema), 60), dynamoSchema)
		}
		switch rec.EventType {
		case "request_end":
		case "request_payload", "tool_start", "tool_end", "tool_error":
			continue
		default:
			return nil, lineErr(line, "event_type %q is not one of request_end, request_payload, tool_start, tool_end, tool_error", clip([]byte(rec.EventType), 60))
		}
		p, err := r.request(&rec, line)
		if err != nil {
			return nil, err
		}
		r.records++
		return p, nil
	}
}

func (r *dynamoReader) request(rec *dynamoRecord, line int) (*pending, error) {
	q := rec.Request
	if q == nil {
		return nil, lineErr(line, "the request_end record has no request")
	}
	rp := q.Replay
	switch {
	case rp == nil:
		return nil, lineErr(line, "request %q has no replay metadata (request.replay with trace_block_size, input_length and input_sequence_hashes): the trace was captured without replay hashes, so its prompts cannot be rebuilt", clip([]byte(q.RequestID), 60))
	case q.RequestReceivedMS == nil:
		return nil, lineErr(line, "request %q has no request_received_ms", clip([]byte(q.RequestID), 60))
	case q.OutputTokens == nil:
		return nil, lineErr(line, "request %q has no output_tokens", clip([]byte(q.RequestID), 60))
	case rp.TraceBlockSize == 0 || rp.TraceBlockSize > maxTraceBlockSize:
		return nil, lineErr(line, "replay.trace_block_size %d is out of range: want 1 to %d", rp.TraceBlockSize, maxTraceBlockSize)
	case rp.InputLength > uint64(r.o.MaxInputTokens):
		return nil, lineErr(line, "replay.input_length %d exceeds the limit of %d tokens (Options.MaxInputTokens)", rp.InputLength, r.o.MaxInputTokens)
	case *q.OutputTokens > MaxOutputTokens:
		return nil, lineErr(line, "output_tokens %d exceeds %d", *q.OutputTokens, MaxOutputTokens)
	}
	bs := int(rp.TraceBlockSize)
	if r.bsLine == 0 {
		r.bs, r.bsLine = bs, line
	} else if bs != r.bs {
		return nil, lineErr(line, "replay.trace_block_size %d differs from line %d's %d: mixed block sizes are not supported", bs, r.bsLine, r.bs)
	}
	n := int(rp.InputLength)
	count, ok := arrayLen(rp.InputSequenceHashes)
	if !ok && !isNull(rp.InputSequenceHashes) {
		return nil, lineErr(line, "replay.input_sequence_hashes: cannot use JSON %s as an array of unsigned 64-bit integers", clip(bytes.TrimSpace(rp.InputSequenceHashes), 20))
	}
	if need := (n + bs - 1) / bs; count != need {
		return nil, lineErr(line, "replay.input_length %d at trace_block_size %d needs exactly %d input_sequence_hashes, got %d", n, bs, need, count)
	}
	var hashes []uint64
	if count > 0 {
		h, err := decodeUints[uint64](rp.InputSequenceHashes, count, "request.replay.input_sequence_hashes", line)
		if err != nil {
			return nil, err
		}
		hashes = h
	}
	at, err := msDuration(*q.RequestReceivedMS, "request_received_ms", line)
	if err != nil {
		return nil, err
	}
	end := at
	if rec.EventTimeUnixMS != nil {
		if e, err := msDuration(*rec.EventTimeUnixMS, "event_time_unix_ms", line); err == nil {
			end = e
		}
	}
	p := &pending{at: at, end: end, id: q.RequestID, line: line, hashes: hashes, n: n, out: int(*q.OutputTokens), bs: bs}
	if rec.AgentContext != nil {
		p.session = rec.AgentContext.SessionID
	}
	return p, nil
}

// msDuration converts a u64 millisecond count without float64.
func msDuration(ms uint64, field string, line int) (time.Duration, error) {
	const maxMS = uint64(1<<63-1) / uint64(time.Millisecond)
	if ms > maxMS {
		return 0, lineErr(line, "%s %d is too large (the most is %d ms)", field, ms, maxMS)
	}
	return time.Duration(ms) * time.Millisecond, nil
}

func isPayloadRecord(prefix []byte) bool {
	head := prefix[:min(len(prefix), 4096)]
	return bytes.Contains(head, []byte(`"event_type":"request_payload"`)) ||
		bytes.Contains(head, []byte(`"event_type": "request_payload"`))
}
