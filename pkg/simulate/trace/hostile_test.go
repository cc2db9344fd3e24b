package trace

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/memguard"
)

// Hostile traces (issue 29): each input here grew memory or time without
// bound before; the tests bound them by memory and by bytes read, never by
// time.

// repeat is an io.Reader that yields line n times (lazily) and counts what was
// read from it.
type repeat struct {
	line []byte
	n    int
	buf  []byte
	read int64
}

func (r *repeat) Read(p []byte) (int, error) {
	if len(r.buf) == 0 {
		if r.n == 0 {
			return 0, io.EOF
		}
		r.n--
		r.buf = r.line
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	r.read += int64(n)
	return n, nil
}

// gen is an io.Reader of n lines made on the fly by line(i).
type gen struct {
	line func(i int) string
	i, n int
	buf  []byte
}

func (g *gen) Read(p []byte) (int, error) {
	if len(g.buf) == 0 {
		if g.i == g.n {
			return 0, io.EOF
		}
		g.buf = []byte(g.line(g.i))
		g.i++
	}
	n := copy(p, g.buf)
	g.buf = g.buf[n:]
	return n, nil
}

func ids(n int, sep string) string {
	return "[" + strings.TrimSuffix(strings.Repeat("7"+sep, n), sep) + "]"
}

// TestDynamoReorderWindowMemory: the Dynamo reader held 4,097 records before
// replaying the first, each up to 16 MB of hashes (a 17 MB gzip grew past
// 9 GB); the window now holds at most 64 MiB of them.
func TestDynamoReorderWindowMemory(t *testing.T) {
	const hashes = 100_000 // 800 KB decoded each
	line := fmt.Sprintf(`{"schema":"dynamo.request.trace.v1","event_type":"request_end","event_time_unix_ms":1100,"request":{"request_id":"r","request_received_ms":1000,"output_tokens":4,"replay":{"trace_block_size":1,"input_length":%d,"input_sequence_hashes":%s}}}`+"\n", hashes, ids(hashes, ","))
	g := memguard.Watch(t, 160<<20)
	r, err := Open(&repeat{line: []byte(line), n: 200}, DynamoRequestTrace, Options{MaxInputTokens: hashes})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for ; n < 150; n++ {
		req, err := r.Next()
		if err != nil {
			t.Fatalf("request %d: %v", n+1, err)
		}
		if len(req.Tokens) != hashes {
			t.Fatalf("request %d has %d tokens", n+1, len(req.Tokens))
		}
	}
	t.Logf("%d requests of %d hashes: peak %s", n, hashes, memguard.MiB(g.Stop()))
}

// TestDeltaSessionMemory: mooncake-delta keeps every session's prompt; at
// --trace-block-size 1 sessions of long turns grew without bound (8 GB in
// 150 s). They are bounded, with an error naming the cause.
func TestDeltaSessionMemory(t *testing.T) {
	const perTurn = 100_000 // 800 KB of hash ids a turn
	list := ids(perTurn, ",")
	src := &gen{n: 1000, line: func(i int) string {
		return fmt.Sprintf(`{"session_id": %d, "timestamp": %d, "output_length": 1, "hash_ids": %s}`+"\n", i, i, list)
	}}
	g := memguard.Watch(t, 448<<20)
	r, err := Open(src, MooncakeDelta, Options{TraceBlockSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	err = readErr(r)
	t.Logf("peak %s: %v", memguard.MiB(g.Stop()), err)
	if err == nil || !strings.Contains(err.Error(), "mooncake-delta keeps every session's prompt, and the") || !strings.Contains(err.Error(), "raise --trace-block-size") {
		t.Fatalf("err = %v, want the sessions' bound", err)
	}
}

// TestCountsAreCheckedBeforeDecoding: a 16 MiB line of small ids is 8
// million of them; the count is checked against the limit before any is
// decoded (the review measured 404 MB for one such line).
func TestCountsAreCheckedBeforeDecoding(t *testing.T) {
	const n = 5_000_000 // 10 MB of "7,"
	tests := []struct {
		name string
		f    Format
		line string
		want string
	}{
		{"mooncake hash_ids", Mooncake, `{"timestamp": 1, "output_length": 1, "hash_ids": ` + ids(n, ",") + `}`, "5000000 hash_ids stand for more than the limit of 2000000 input tokens"},
		{"tokens", Tokens, `{"timestamp": 1, "output_length": 1, "tokens": ` + ids(n, ",") + `}`, "the row has 5000000 tokens, over the limit of 2000000"},
		{"dynamo hashes", DynamoRequestTrace, `{"schema":"dynamo.request.trace.v1","event_type":"request_end","request":{"request_id":"r","request_received_ms":1,"output_tokens":1,"replay":{"trace_block_size":1,"input_length":2000000,"input_sequence_hashes":` + ids(n, ",") + `}}}`, "needs exactly 2000000 input_sequence_hashes, got 5000000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := memguard.Watch(t, 64<<20)
			r, err := Open(strings.NewReader(tt.line+"\n"), tt.f, Options{TraceBlockSize: 1})
			if err != nil {
				t.Fatal(err)
			}
			_, err = r.Next()
			t.Logf("peak %s", memguard.MiB(g.Stop()))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

// TestBlankLinesAreBounded: a gzip of blank lines expands a thousandfold
// (1 MB was 13 s of skipping per variant); more than a line's limit of them
// in a row is an error, after reading no more than that.
func TestBlankLinesAreBounded(t *testing.T) {
	src := &repeat{line: bytes.Repeat([]byte("\n"), 1<<20), n: 1024} // 1 GiB of blank lines
	r, err := Open(src, Mooncake, Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Next()
	var le *LineError
	if !errors.As(err, &le) || !strings.Contains(err.Error(), "more than 16 MiB of blank lines in a row: is this a JSON-lines trace?") {
		t.Fatalf("err = %v", err)
	}
	if src.read > 32<<20 {
		t.Errorf("read %d MiB of blank lines before refusing them", src.read>>20)
	}
}

// TestSyntheticArrivalsStayInRange: a rate so low that the arrivals leave
// what a time.Duration holds is refused, and a stream that would get there is
// an error, never wrapped-around arrival times (the review's rate=1e-11 never
// reached its duration).
func TestSyntheticArrivalsStayInRange(t *testing.T) {
	r := NewSynthetic(SyntheticSpec{Rate: 1e-6, ISL: Range{1, 1}, OSL: Range{1, 1}, Prefixes: 1, Requests: 100_000}, 1)
	var last int64
	for i := 0; ; i++ {
		req, err := r.Next()
		if errors.Is(err, io.EOF) {
			t.Fatalf("the stream ended after %d requests without an error; arrivals reached %d ns", i, last)
		}
		if err != nil {
			if !strings.Contains(err.Error(), "later than a replay can represent: raise rate or lower requests") {
				t.Fatalf("err = %v", err)
			}
			return
		}
		if int64(req.Arrival) < last {
			t.Fatalf("request %d arrives at %d ns, before the previous one (%d ns): the arrival time wrapped around", i+1, req.Arrival, last)
		}
		last = int64(req.Arrival)
	}
}
