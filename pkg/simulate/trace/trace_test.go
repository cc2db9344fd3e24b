package trace

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
)

// readAll drains a reader.
func readAll(t testing.TB, r Reader) []Request {
	t.Helper()
	var out []Request
	for {
		req, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("after %d requests: %v", len(out), err)
		}
		out = append(out, req)
	}
}

// readErr drains a reader and returns its error (nil at io.EOF).
func readErr(r Reader) error {
	for {
		_, err := r.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func openString(t testing.TB, s string, f Format, o Options) Reader {
	t.Helper()
	r, err := Open(strings.NewReader(s), f, o)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestParseFormat(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    Format
		wantErr string
	}{
		{in: "mooncake", want: Mooncake},
		{in: "Mooncake-Delta", want: MooncakeDelta},
		{in: "mooncake_delta", want: MooncakeDelta},
		{in: "dynamo", want: DynamoRequestTrace},
		{in: "dynamo-request-trace", want: DynamoRequestTrace},
		{in: "tokens", want: Tokens},
		{in: "texts", want: Texts},
		{in: "synthetic", want: SyntheticFormat},
		{in: "auto", wantErr: `unknown trace format "auto": want one of mooncake, mooncake-delta, dynamo-request-trace, tokens, texts, synthetic`},
		{in: "", wantErr: "unknown trace format"},
	} {
		got, err := ParseFormat(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ParseFormat(%q) error = %v, want %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseFormat(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func gz(t testing.TB, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	if _, err := w.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

const dynamoLine = `{"schema":"dynamo.request.trace.v1","event_type":"request_end","event_time_unix_ms":1100,"request":{"request_id":"req-1","request_received_ms":1000,"output_tokens":4,"replay":{"trace_block_size":2,"input_length":3,"input_sequence_hashes":[11,22]}}}`

func TestDetect(t *testing.T) {
	conv, err := os.ReadFile(filepath.Join("testdata", "mooncake_conversation_head200.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		peek    []byte
		want    Format
		wantErr string
	}{
		{name: "mooncake excerpt", peek: conv[:4096], want: Mooncake},
		{name: "mooncake cut mid-line", peek: conv[:60], want: Mooncake},
		{name: "gzip mooncake", peek: gz(t, string(conv))[:512], want: Mooncake},
		{name: "dynamo", peek: []byte(dynamoLine + "\n"), want: DynamoRequestTrace},
		{name: "dynamo wrapped", peek: []byte(`{"timestamp":1,"event":` + dynamoLine + "}\n"), want: DynamoRequestTrace},
		{name: "tokens after blank lines and a BOM", peek: []byte("\xef\xbb\xbf\n  \n{\"timestamp\": 0, \"tokens\": [1,2], \"output_length\": 3}\n"), want: Tokens},
		{name: "texts", peek: []byte(`{"text": "hi", "output_length": 3}`), want: Texts},
		{name: "nested keys do not count", peek: []byte(`{"meta": {"tokens": [1]}, "text": "x"}`), want: Texts},
		{name: "empty", peek: []byte("\n\n"), wantErr: "the trace is empty"},
		{name: "not JSON", peek: []byte("timestamp,input_length\n"), wantErr: "does not start a JSON object"},
		{name: "unknown keys", peek: []byte(`{"prompt": "x"}`), wantErr: "first line's keys [prompt]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Detect(tc.peek)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("Detect = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestMooncakeExcerpts(t *testing.T) {
	for _, tc := range []struct {
		file     string
		requests int
	}{
		{file: "mooncake_conversation_head200.jsonl", requests: 200},
		{file: "mooncake_synthetic_head50.jsonl", requests: 50},
	} {
		t.Run(tc.file, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
			reqs := readAll(t, openString(t, string(raw), Mooncake, Options{}))
			if len(reqs) != tc.requests || len(lines) != tc.requests {
				t.Fatalf("got %d requests from %d lines, want %d", len(reqs), len(lines), tc.requests)
			}
			for i, req := range reqs {
				var want struct {
					ts, in, out int
					ids         []uint64
				}
				var idsText string
				if _, err := fmt.Sscanf(lines[i], `{"timestamp": %d, "input_length": %d, "output_length": %d, "hash_ids": [`, &want.ts, &want.in, &want.out); err != nil {
					t.Fatalf("line %d: %v", i+1, err)
				}
				idsText = lines[i][strings.Index(lines[i], "[")+1 : strings.Index(lines[i], "]")]
				for f := range strings.SplitSeq(idsText, ", ") {
					var id uint64
					if _, err := fmt.Sscan(f, &id); err != nil {
						t.Fatalf("line %d: hash id %q: %v", i+1, f, err)
					}
					want.ids = append(want.ids, id)
				}
				if req.Line != i+1 || req.Arrival != time.Duration(want.ts)*time.Millisecond || len(req.Tokens) != want.in || req.OutputTokens != want.out {
					t.Fatalf("request %d = line %d, %v, %d tokens, %d out; want line %d, %d ms, %d, %d", i, req.Line, req.Arrival, len(req.Tokens), req.OutputTokens, i+1, want.ts, want.in, want.out)
				}
				if wantToks := TokensForHashIDs(want.ids, want.in, 512, nil); !slices.Equal(req.Tokens, wantToks) {
					t.Fatalf("line %d: tokens differ from TokensForHashIDs", i+1)
				}
				if i > 0 && req.Arrival < reqs[i-1].Arrival {
					t.Fatalf("line %d goes back in time", i+1)
				}
			}
		})
	}
}

// TestTokensForHashIDsPinned pins the hash id → tokens mapping: it is part
// of the package's contract (a change moves every replayed block hash).
func TestTokensForHashIDsPinned(t *testing.T) {
	got := TokensForHashIDs([]uint64{0, 1, 1 << 63}, 7, 3, nil)
	want := []uint32{pinned0, pinned1, pinned2, pinned3, pinned4, pinned5, pinned6}
	if !slices.Equal(got, want) {
		t.Fatalf("TokensForHashIDs = %v, want %v", got, want)
	}
	for _, tok := range TokensForHashIDs([]uint64{42, 43}, 1024, 512, nil) {
		if tok >= 1<<VocabBits {
			t.Fatalf("token %d is outside [0, 2^%d)", tok, VocabBits)
		}
	}
	// appends to dst, cuts at inputLen, stops at the ids, ignores nonsense
	dst := []uint32{9}
	if got := TokensForHashIDs([]uint64{5}, 100, 4, dst); len(got) != 5 || got[0] != 9 {
		t.Fatalf("append: %v", got)
	}
	if got := TokensForHashIDs([]uint64{5, 6}, 0, 4, nil); len(got) != 0 {
		t.Fatalf("inputLen 0: %v", got)
	}
	if got := TokensForHashIDs([]uint64{5, 6}, 8, 0, nil); len(got) != 0 {
		t.Fatalf("block size 0: %v", got)
	}
}

// sharedBlocks counts the leading router blocks two prompts share.
func sharedBlocks(t *testing.T, a, b []uint32, bs int) int {
	t.Helper()
	ba, err := routecore.ComputeBlocks(a, bs, routecore.HashOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bb, err := routecore.ComputeBlocks(b, bs, routecore.HashOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for n < min(len(ba), len(bb)) && ba[n].SequenceHash == bb[n].SequenceHash {
		n++
	}
	return n
}

func TestSharedHashIDsShareRouterBlocks(t *testing.T) {
	// Two rows that share their first k hash ids, then differ.
	base := []uint64{100, 101, 102, 103, 104, 105}
	for k := 0; k <= 4; k++ {
		other := append(slices.Clone(base[:k]), 900, 901, 902, 903, 904, 905)[:6]
		a := TokensForHashIDs(base, 6*512-100, 512, nil)
		b := TokensForHashIDs(other, 6*512-7, 512, nil)
		if !slices.Equal(a[:k*512], b[:k*512]) {
			t.Fatalf("k=%d: the shared hash ids give different tokens", k)
		}
		if k < 6 && a[k*512] == b[k*512] && slices.Equal(a[k*512:k*512+16], b[k*512:k*512+16]) {
			t.Fatalf("k=%d: different hash ids give the same tokens", k)
		}
		for _, bs := range []int{16, 32, 64, 128, 512, 1024, 100, 7} {
			if got, want := sharedBlocks(t, a, b, bs), k*512/bs; got != want {
				t.Errorf("k=%d router block size %d: %d shared blocks, want %d", k, bs, got, want)
			}
		}
	}
	// The real excerpt: every conversation request starts with hash id 0,
	// so every pair shares its first 32 blocks of 16 tokens.
	raw, err := os.ReadFile(filepath.Join("testdata", "mooncake_conversation_head200.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	reqs := readAll(t, openString(t, string(raw), Mooncake, Options{}))
	if got := sharedBlocks(t, reqs[0].Tokens, reqs[1].Tokens, 16); got != 512/16 {
		t.Errorf("lines 1 and 2 share %d router blocks, want %d (one hash id)", got, 512/16)
	}
}

func TestUniqueTail(t *testing.T) {
	// input_length beyond the hash ids: the rest is unique to the request
	in := `{"timestamp": 0, "input_length": 40, "output_length": 1, "hash_ids": [7]}
{"timestamp": 0, "input_length": 40, "output_length": 1, "hash_ids": [7]}
{"timestamp": 5, "input_length": 20, "output_length": 1}
`
	reqs := readAll(t, openString(t, in, Mooncake, Options{TraceBlockSize: 16}))
	a, b := reqs[0].Tokens, reqs[1].Tokens
	if len(a) != 40 || !slices.Equal(a[:16], b[:16]) || slices.Equal(a[16:], b[16:]) {
		t.Fatalf("the hash-id block must be shared and the tails unique: %v / %v", a, b)
	}
	if len(reqs[2].Tokens) != 20 {
		t.Fatalf("a row without hash_ids has %d tokens, want 20", len(reqs[2].Tokens))
	}
	// input_length absent: the ids' full blocks
	reqs = readAll(t, openString(t, `{"timestamp": 1.5, "output_length": 0, "hash_ids": [1, 2]}`, Mooncake, Options{TraceBlockSize: 4}))
	if len(reqs[0].Tokens) != 8 || reqs[0].Arrival != 1500*time.Microsecond {
		t.Fatalf("got %d tokens at %v", len(reqs[0].Tokens), reqs[0].Arrival)
	}
}

func TestMalformed(t *testing.T) {
	ok := `{"timestamp": 0, "input_length": 4, "output_length": 1, "hash_ids": [1]}` + "\n"
	small := Options{TraceBlockSize: 4, MaxLineBytes: 200, MaxInputTokens: 64}
	tok := func(s string) ([]uint32, error) {
		if s == "boom" {
			return nil, errors.New("no such word")
		}
		return make([]uint32, len(s)), nil
	}
	for _, tc := range []struct {
		name string
		f    Format
		in   string
		o    Options
		want string
	}{
		{"bad JSON", Mooncake, ok + `{"timestamp": 0,` + "\n", small, "line 2: invalid JSON"},
		{"not an object", Mooncake, ok + "[1,2]\n", small, "line 2: the line: cannot use JSON array"},
		{"negative input", Mooncake, ok + `{"timestamp": 1, "input_length": -4, "output_length": 1, "hash_ids": []}`, small, "line 2: input_length -4 is negative"},
		{"negative output", Mooncake, `{"timestamp": 1, "input_length": 4, "output_length": -1, "hash_ids": [1]}`, small, "line 1: output_length -1 is out of range"},
		{"negative hash id", Mooncake, `{"timestamp": 1, "input_length": 4, "output_length": 1, "hash_ids": [-1]}`, small, "line 1: hash_ids: cannot use JSON number -1 as an unsigned 64-bit integer"},
		{"hash id over u64", Mooncake, `{"timestamp": 1, "input_length": 4, "output_length": 1, "hash_ids": [18446744073709551616]}`, small, "line 1: hash_ids: cannot use JSON number 18446744073709551616"},
		{"fractional length", Mooncake, `{"timestamp": 1, "input_length": 4.5, "output_length": 1, "hash_ids": [1]}`, small, "line 1: input_length: cannot use JSON number 4.5 as an integer"},
		{"huge length", Mooncake, `{"timestamp": 1, "input_length": 99999999999999999999, "output_length": 1}`, small, "line 1: input_length: cannot use JSON number 99999999999999999999"},
		{"too many tokens", Mooncake, `{"timestamp": 1, "input_length": 65, "output_length": 1}`, small, "line 1: input_length 65 exceeds the limit of 64 tokens"},
		{"too many hash ids", Mooncake, `{"timestamp": 1, "output_length": 1, "hash_ids": [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17]}`, small, "line 1: 17 hash_ids stand for more than the limit of 64 input tokens"},
		{"surplus hash ids", Mooncake, `{"timestamp": 1, "input_length": 4, "output_length": 1, "hash_ids": [1, 2]}`, small, "line 1: input_length 4 fills 1 blocks of 4 tokens but the row has 2 hash_ids"},
		{"too long line", Mooncake, ok + ok + `{"timestamp": 1, "input_length": 4, "output_length": 1, "hash_ids": [1]` + strings.Repeat(" ", 300) + "}\n", small, "line 3: the line is longer than 200 bytes"},
		{"missing timestamp", Mooncake, `{"input_length": 4, "output_length": 1}`, small, "line 1: the row has no timestamp"},
		{"delay only", Mooncake, `{"session_id": "a", "delay": 5, "input_length": 4, "output_length": 1}`, small, "line 1: the row has a delay but no timestamp"},
		{"negative timestamp", Mooncake, `{"timestamp": -1, "input_length": 4, "output_length": 1}`, small, "line 1: timestamp -1 is not a plain non-negative number"},
		{"exponent timestamp", Mooncake, `{"timestamp": 1e3, "input_length": 4, "output_length": 1}`, small, "line 1: timestamp 1e3 is not a plain"},
		{"huge timestamp", Mooncake, `{"timestamp": 99999999999999999999, "input_length": 4, "output_length": 1}`, small, "line 1: timestamp 99999999999999999999 ms is too large"},
		{"out of order", Mooncake, `{"timestamp": 10, "input_length": 4, "output_length": 1}` + "\n\n" + `{"timestamp": 9, "input_length": 4, "output_length": 1}`, small, "line 3: timestamp 9 ms is earlier than line 1's 10 ms"},
		{"no output length", Mooncake, `{"timestamp": 1, "input_length": 4}`, small, "line 1: the row has no output_length"},
		{"neither length nor ids", Mooncake, `{"timestamp": 1, "output_length": 4}`, small, "line 1: the row has neither input_length nor hash_ids"},
		{"bad session", Mooncake, `{"timestamp": 1, "input_length": 4, "output_length": 1, "session_id": [1]}`, small, "line 1: session_id must be a string or an integer"},
		{"delta accumulates past the limit", MooncakeDelta, strings.Repeat(`{"session_id": 7, "timestamp": 1, "input_length": 30, "output_length": 1}`+"\n", 3), small, `line 3: session "7"'s accumulated prompt reaches 92 tokens, over the limit of 64`},
		{"tokens over u32", Tokens, `{"tokens": [4294967296], "output_length": 1}`, small, "line 1: tokens: cannot use JSON number 4294967296 as an unsigned 32-bit integer"},
		{"too many tokens (tokens)", Tokens, `{"tokens": [` + strings.TrimSuffix(strings.Repeat("1,", 65), ",") + `], "output_length": 1}`, small, "line 1: the row has 65 tokens, over the limit of 64"},
		{"no tokens", Tokens, `{"timestamp": 1, "output_length": 1}`, small, "line 1: the row has no tokens"},
		{"no text", Texts, `{"timestamp": 1, "output_length": 1}`, Options{Tokenize: tok}, "line 1: the row has no text"},
		{"tokenizer fails", Texts, `{"text": "hi", "output_length": 1}` + "\n" + `{"text": "boom", "output_length": 1}`, Options{Tokenize: tok}, "line 2: tokenizing the text: no such word"},
		{"text too long", Texts, `{"text": "` + strings.Repeat("a", 65) + `", "output_length": 1}`, Options{Tokenize: tok, MaxInputTokens: 64}, "line 1: the text is 65 tokens, over the limit of 64"},
		{"dynamo: no replay", DynamoRequestTrace, `{"schema":"dynamo.request.trace.v1","event_type":"request_end","event_time_unix_ms":1100,"request":{"request_id":"req-1","request_received_ms":1000,"output_tokens":4}}`, Options{}, `line 1: request "req-1" has no replay metadata`},
		{"dynamo: other schema", DynamoRequestTrace, strings.Replace(dynamoLine, "v1", "v2", 1), Options{}, `line 1: schema "dynamo.request.trace.v2" is not "dynamo.request.trace.v1"`},
		{"dynamo: other event", DynamoRequestTrace, strings.Replace(dynamoLine, "request_end", "request_start", 1), Options{}, `line 1: event_type "request_start" is not one of`},
		{"dynamo: hash count", DynamoRequestTrace, strings.Replace(dynamoLine, "[11,22]", "[11,22,33]", 1), Options{}, "line 1: replay.input_length 3 at trace_block_size 2 needs exactly 2 input_sequence_hashes, got 3"},
		{"dynamo: no arrival", DynamoRequestTrace, strings.Replace(dynamoLine, `"request_received_ms":1000,`, "", 1), Options{}, `line 1: request "req-1" has no request_received_ms`},
		{"dynamo: no output", DynamoRequestTrace, strings.Replace(dynamoLine, `"output_tokens":4,`, "", 1), Options{}, `line 1: request "req-1" has no output_tokens`},
		{"dynamo: block size 0", DynamoRequestTrace, strings.Replace(dynamoLine, `"trace_block_size":2`, `"trace_block_size":0`, 1), Options{}, "line 1: replay.trace_block_size 0 is out of range"},
		{"dynamo: mixed block sizes", DynamoRequestTrace, dynamoLine + "\n" + strings.Replace(strings.Replace(dynamoLine, `"trace_block_size":2`, `"trace_block_size":3`, 1), "[11,22]", "[11]", 1), Options{}, "line 2: replay.trace_block_size 3 differs from line 1's 2"},
		{"dynamo: too many tokens", DynamoRequestTrace, dynamoLine, Options{MaxInputTokens: 2}, "line 1: replay.input_length 3 exceeds the limit of 2 tokens"},
		{"dynamo: huge arrival", DynamoRequestTrace, strings.Replace(dynamoLine, "1000,", "18446744073709551615,", 1), Options{}, "line 1: request_received_ms 18446744073709551615 is too large"},
		{"dynamo: nothing to replay", DynamoRequestTrace, `{"schema":"dynamo.request.trace.v1","event_type":"tool_end","event_time_unix_ms":1}`, Options{}, "no request_end records"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := readErr(openString(t, tc.in, tc.f, tc.o))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v\nwant it to contain %q", err, tc.want)
			}
		})
	}
}

func TestOpenErrors(t *testing.T) {
	for _, tc := range []struct {
		f    Format
		o    Options
		want string
	}{
		{Texts, Options{}, "texts need a tokenizer"},
		{SyntheticFormat, Options{}, "the synthetic format has no trace file"},
		{"csv", Options{}, `unknown trace format "csv"`},
		{Mooncake, Options{TraceBlockSize: -1}, "trace block size -1 is out of range"},
		{Mooncake, Options{MaxLineBytes: -1}, "maximum line length -1 is not positive"},
		{Mooncake, Options{MaxInputTokens: -1}, "maximum input tokens -1 is not positive"},
	} {
		if _, err := Open(strings.NewReader(""), tc.f, tc.o); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Open(%q) error = %v, want %q", tc.f, err, tc.want)
		}
	}
}

func TestMooncakeDelta(t *testing.T) {
	in := `{"session_id": "a", "timestamp": 0, "input_length": 10, "output_length": 3, "hash_ids": [1, 2, 3]}
{"session_id": "b", "timestamp": 1, "input_length": 10, "output_length": 5, "hash_ids": [1, 2, 3]}
{"session_id": "a", "timestamp": 2, "input_length": 6, "output_length": 2, "hash_ids": [7, 8]}
{"timestamp": 3, "input_length": 4, "output_length": 2, "hash_ids": [9]}
{"session_id": "a", "timestamp": 4, "input_length": 4, "output_length": 2, "hash_ids": [9]}
`
	const bs = 4
	reqs := readAll(t, openString(t, in, MooncakeDelta, Options{TraceBlockSize: bs}))
	a1, b1, a2, lone, a3 := reqs[0], reqs[1], reqs[2], reqs[3], reqs[4]
	if !slices.Equal(a1.Tokens, b1.Tokens) || len(a1.Tokens) != 10 {
		t.Fatalf("first turns with equal hash ids differ: %v / %v", a1.Tokens, b1.Tokens)
	}
	// turn 2 = turn 1 + turn 1's 3 output tokens + the 6-token delta
	if len(a2.Tokens) != 10+3+6 || !slices.Equal(a2.Tokens[:10], a1.Tokens) ||
		!slices.Equal(a2.Tokens[13:], TokensForHashIDs([]uint64{7, 8}, 6, bs, nil)) {
		t.Fatalf("turn 2 = %v", a2.Tokens)
	}
	if len(a3.Tokens) != 19+2+4 || !slices.Equal(a3.Tokens[:19], a2.Tokens) {
		t.Fatalf("turn 3 = %v", a3.Tokens)
	}
	if !slices.Equal(lone.Tokens, TokensForHashIDs([]uint64{9}, 4, bs, nil)) || lone.Session != "" {
		t.Fatalf("a row without a session is its own prompt: %v", lone.Tokens)
	}
	// The same rows read as plain mooncake are not accumulated.
	plain := readAll(t, openString(t, in, Mooncake, Options{TraceBlockSize: bs}))
	if len(plain[2].Tokens) != 6 || plain[2].Session != "a" {
		t.Fatalf("mooncake must not accumulate: %d tokens", len(plain[2].Tokens))
	}
}

func dynamoRow(id string, received, end uint64, hashes string, n int) string {
	return fmt.Sprintf(`{"schema":"dynamo.request.trace.v1","event_type":"request_end","event_time_unix_ms":%d,"agent_context":{"session_id":%q},"request":{"request_id":%q,"request_received_ms":%d,"output_tokens":4,"replay":{"trace_block_size":2,"input_length":%d,"input_sequence_hashes":[%s]}}}`, end, "s-"+id, id, received, n, hashes)
}

func TestDynamoRequestTrace(t *testing.T) {
	huge := `{"schema":"dynamo.request.trace.v1","event_type":"request_payload","event_time_unix_ms":1050,"payload":{"request":{"messages":[{"content":"` + strings.Repeat("x", 5000) + `"}]}}}`
	in := strings.Join([]string{
		dynamoRow("late", 1_700_000_000_500, 1_700_000_000_900, "11,22", 4),
		huge, // over MaxLineBytes: skipped because it is a payload record
		`{"timestamp":1,"event":` + dynamoRow("early", 1_700_000_000_100, 1_700_000_000_200, "11,33,44", 5) + `}`,
		`{"schema":"dynamo.request.trace.v1","event_type":"tool_end","event_time_unix_ms":1,"tool":{"tool_call_id":"t","tool_class":"x"}}`,
		dynamoRow("big", 1_700_000_000_300, 1_700_000_000_950, "18446744073709551615", 1),
	}, "\n")
	reqs := readAll(t, openString(t, in, DynamoRequestTrace, Options{MaxLineBytes: 1000}))
	if len(reqs) != 3 {
		t.Fatalf("got %d requests, want 3", len(reqs))
	}
	early, big, late := reqs[0], reqs[1], reqs[2]
	if early.Line != 3 || big.Line != 5 || late.Line != 1 {
		t.Fatalf("order by arrival: lines %d %d %d, want 3 5 1", early.Line, big.Line, late.Line)
	}
	if early.Arrival != 1_700_000_000_100*time.Millisecond || len(early.Tokens) != 5 || early.OutputTokens != 4 || early.Session != "s-early" {
		t.Fatalf("early = %+v", early)
	}
	if !slices.Equal(early.Tokens[:2], late.Tokens[:2]) || slices.Equal(early.Tokens[2:4], late.Tokens[2:4]) {
		t.Fatalf("equal sequence hashes must give equal tokens, different ones different: %v / %v", early.Tokens, late.Tokens)
	}
	if !slices.Equal(big.Tokens, TokensForHashIDs([]uint64{1<<64 - 1}, 1, 2, nil)) {
		t.Fatalf("a u64 hash must reach the mapping intact: %v", big.Tokens)
	}

	// A record far more than the window late is an error, not a silent reorder.
	var b strings.Builder
	for i := range dynamoReorderWindow + 2 {
		b.WriteString(dynamoRow(fmt.Sprint("r", i), uint64(1000+i), uint64(2000+i), "1", 2) + "\n")
	}
	b.WriteString(dynamoRow("straggler", 999, 9999, "1", 2) + "\n")
	err := readErr(openString(t, b.String(), DynamoRequestTrace, Options{}))
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf(`line %d: request "straggler" arrived at 999 ms, before a request already replayed`, dynamoReorderWindow+3)) {
		t.Fatalf("error = %v", err)
	}
}

func TestTokensAndTexts(t *testing.T) {
	in := `{"timestamp": 5, "tokens": [1, 2, 4294967295], "output_length": 3, "session_id": "x"}
{"tokens": [], "output_length": 0}
{"timestamp": 7.25, "tokens": [9], "output_length": 1, "session_id": 12}
`
	reqs := readAll(t, openString(t, in, Tokens, Options{}))
	want := []Request{
		{Line: 1, Arrival: 5 * time.Millisecond, Tokens: []uint32{1, 2, 4294967295}, OutputTokens: 3, Session: "x"},
		{Line: 2, Arrival: 5 * time.Millisecond, Tokens: []uint32{}, OutputTokens: 0},
		{Line: 3, Arrival: 7250 * time.Microsecond, Tokens: []uint32{9}, OutputTokens: 1, Session: "12"},
	}
	if len(reqs) != len(want) {
		t.Fatalf("got %d requests", len(reqs))
	}
	for i := range want {
		if g, w := reqs[i], want[i]; g.Line != w.Line || g.Arrival != w.Arrival || !slices.Equal(g.Tokens, w.Tokens) || g.OutputTokens != w.OutputTokens || g.Session != w.Session {
			t.Errorf("request %d = %+v, want %+v", i, g, w)
		}
	}
	words := func(s string) ([]uint32, error) {
		var out []uint32
		for w := range strings.FieldsSeq(s) {
			out = append(out, uint32(len(w)))
		}
		return out, nil
	}
	reqs = readAll(t, openString(t, `{"timestamp": 1, "text": "a bb ccc", "output_length": 2}`, Texts, Options{Tokenize: words}))
	if len(reqs) != 1 || !slices.Equal(reqs[0].Tokens, []uint32{1, 2, 3}) || reqs[0].OutputTokens != 2 {
		t.Fatalf("texts = %+v", reqs)
	}
}

func TestGzipInput(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "mooncake_synthetic_head50.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	plain := readAll(t, openString(t, string(raw), Mooncake, Options{}))
	r, err := Open(bytes.NewReader(gz(t, string(raw))), Mooncake, Options{})
	if err != nil {
		t.Fatal(err)
	}
	zipped := readAll(t, r)
	if len(zipped) != len(plain) || !slices.Equal(zipped[49].Tokens, plain[49].Tokens) {
		t.Fatal("gzip input reads differently")
	}
}

func TestSyntheticDeterminism(t *testing.T) {
	const spec = "rate=50,isl=100-400,osl=20-30,prefix-share=0.5,duration=20s,prefixes=4"
	read := func(seed uint64) []Request {
		r, err := Synthetic(spec, seed)
		if err != nil {
			t.Fatal(err)
		}
		return readAll(t, r)
	}
	a, b, c := read(1), read(1), read(2)
	if len(a) != len(b) {
		t.Fatalf("same seed, %d and %d requests", len(a), len(b))
	}
	for i := range a {
		if a[i].Arrival != b[i].Arrival || !slices.Equal(a[i].Tokens, b[i].Tokens) || a[i].OutputTokens != b[i].OutputTokens {
			t.Fatalf("same seed, request %d differs", i)
		}
	}
	if len(a) == len(c) && slices.Equal(a[0].Tokens, c[0].Tokens) {
		t.Fatal("different seeds gave the same stream")
	}
	// Pin the first request so that the stream stays the same across
	// releases (benchmarks compare runs).
	if got := fmt.Sprint(a[0].Arrival, len(a[0].Tokens), a[0].OutputTokens, a[0].Tokens[:3], len(a)); got != pinnedSynthetic {
		t.Errorf("first request of seed 1 = %s, want %s", got, pinnedSynthetic)
	}
}

func TestSyntheticStatistics(t *testing.T) {
	const rate, secs, share, prefixes = 40.0, 500, 0.25, 5
	r, err := Synthetic(fmt.Sprintf("rate=%v,isl=200-600,osl=7,prefix-share=%v,duration=%ds,prefixes=%d", rate, share, secs, prefixes), 42)
	if err != nil {
		t.Fatal(err)
	}
	reqs := readAll(t, r)
	n := float64(len(reqs))
	want := rate * secs // 20,000; Poisson sd is √20000 ≈ 141
	if n < want-5*141 || n > want+5*141 {
		t.Fatalf("%v requests in %ds at %v/s, want about %v", n, secs, rate, want)
	}
	// A request shares round(share·isl) tokens with every request that
	// picked the same prefix and is at least as long; group by the first
	// token and compare each with its group's longest.
	groups := map[uint32][]Request{}
	for i, req := range reqs {
		if i > 0 && req.Arrival < reqs[i-1].Arrival {
			t.Fatal("arrivals go back")
		}
		if len(req.Tokens) < 200 || len(req.Tokens) > 600 || req.OutputTokens != 7 {
			t.Fatalf("request %d: isl %d osl %d", i, len(req.Tokens), req.OutputTokens)
		}
		groups[req.Tokens[0]] = append(groups[req.Tokens[0]], req)
	}
	if len(groups) != prefixes {
		t.Fatalf("%d distinct prefixes, want %d", len(groups), prefixes)
	}
	var islSum, sharedSum float64
	for _, g := range groups {
		if f := float64(len(g)) / n; f < 1.0/prefixes-0.02 || f > 1.0/prefixes+0.02 {
			t.Errorf("a prefix got %.3f of the requests, want about %.3f", f, 1.0/prefixes)
		}
		longest := slices.MaxFunc(g, func(a, b Request) int { return len(a.Tokens) - len(b.Tokens) })
		for _, req := range g {
			if req.Line == longest.Line && req.Arrival == longest.Arrival {
				continue
			}
			k := 0
			for k < len(req.Tokens) && req.Tokens[k] == longest.Tokens[k] {
				k++
			}
			if want := int(share*float64(len(req.Tokens)) + 0.5); k < want || k > want+2 {
				t.Fatalf("%d tokens in common with the group's longest, want %d", k, want)
			}
			sharedSum += float64(k)
			islSum += float64(len(req.Tokens))
		}
	}
	if f := sharedSum / islSum; f < share-0.005 || f > share+0.005 {
		t.Errorf("shared fraction %.4f, want about %v", f, share)
	}
}

func TestSyntheticSpecErrors(t *testing.T) {
	for _, tc := range []struct{ spec, want string }{
		{"isl=100,duration=1s", "synthetic: rate is required"},
		{"rate=1,duration=1s", "synthetic: isl is required"},
		{"rate=1,isl=5", "synthetic: give duration or requests"},
		{"rate=0,isl=5,requests=1", `synthetic: rate="0": want requests per second`},
		{"rate=NaN,isl=5,requests=1", `synthetic: rate="NaN"`},
		{"rate=1e-11,isl=5,duration=1h", `synthetic: rate="1e-11": want requests per second, a number from 0.000001`},
		{"rate=1,isl=4000-1000,requests=1", `synthetic: isl="4000-1000": want a token count or an inclusive range lo-hi`},
		{"rate=1,isl=0,requests=1", `synthetic: isl="0"`},
		{"rate=1,isl=10,osl=x,requests=1", `synthetic: osl="x"`},
		{"rate=1,isl=10,prefix-share=1.5,requests=1", `synthetic: prefix-share="1.5": want a fraction from 0 to 1`},
		{"rate=1,isl=10,prefixes=0,requests=1", `synthetic: prefixes="0"`},
		{"rate=1,isl=10,duration=-1s", `synthetic: duration="-1s": want a positive Go duration`},
		{"rate=1,isl=10,requests=1.5", `synthetic: requests="1.5"`},
		{"rate=1,isl=10,requests=1,seed=4", `synthetic: unknown key "seed"`},
		{"rate=1,rate=2", "synthetic: rate is given twice"},
		{"rate", `synthetic: "rate" is not key=value`},
	} {
		if _, err := Synthetic(tc.spec, 0); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Synthetic(%q) error = %v, want %q", tc.spec, err, tc.want)
		}
	}
	r, err := Synthetic(" rate=1000 , isl=3 , requests=5 ", 0)
	if err != nil {
		t.Fatal(err)
	}
	if reqs := readAll(t, r); len(reqs) != 5 || reqs[0].OutputTokens != 128 {
		t.Fatalf("requests=5: %d requests, osl %d", len(reqs), reqs[0].OutputTokens)
	}
}

// TestUnknownKeys (issue 31): a row with a key its format does not read is
// refused with its line, the key and the nearest known key; json's own
// matching (any case, escaped names) is kept.
func TestUnknownKeys(t *testing.T) {
	ok := `{"timestamp": 0, "input_length": 600, "output_length": 5, "hash_ids": [1, 2]}` + "\n"
	for _, tc := range []struct {
		name string
		f    Format
		in   string
		want string // "" reads
	}{
		{"hashids", Mooncake, ok + `{"timestamp": 1, "input_length": 600, "output_length": 5, "hashids": [1, 2]}`,
			`line 2: unknown key "hashids" (did you mean "hash_ids"?): a mooncake row's keys are timestamp, input_length, output_length, hash_ids,`},
		{"inputLength", Mooncake, `{"timestamp": 0, "inputLength": 600, "output_length": 5, "hash_ids": [1, 2]}`, `line 1: unknown key "inputLength" (did you mean "input_length"?)`},
		{"nothing near", MooncakeDelta, `{"timestamp": 0, "input_length": 600, "output_length": 5, "hash_ids": [1, 2], "model": "x"}`,
			`line 1: unknown key "model": a mooncake-delta row's keys are`},
		{"after a nested value", Mooncake, `{"timestamp": 0, "hash_ids": [1, [2, {"a": "}"}]], "Output-Length": 5}`, `unknown key "Output-Length" (did you mean "output_length"?)`},
		{"tokens", Tokens, `{"timestamp": 0, "token": [1, 2], "output_length": 5}`, `line 1: unknown key "token" (did you mean "tokens"?): a tokens row's keys are timestamp, tokens, output_length, session_id`},
		{"any case", Mooncake, `{"Timestamp": 0, "INPUT_LENGTH": 600, "output_length": 5, "Hash_Ids": [1, 2]}`, ""},
		{"escaped", Mooncake, `{"timestamp": 0, "input_length": 600, "output_length": 5, "hash\u005fids": [1, 2]}`, ""},
		{"session and created_time", Mooncake, `{"created_time": 0, "input_length": 600, "output_length": 5, "hash_ids": [1, 2], "session_id": 3}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Open(strings.NewReader(tc.in), tc.f, Options{})
			if err != nil {
				t.Fatal(err)
			}
			for err == nil {
				_, err = r.Next()
			}
			if tc.want == "" {
				if !errors.Is(err, io.EOF) {
					t.Fatalf("err = %v, want the rows read", err)
				}
				return
			}
			var le *LineError
			if !errors.As(err, &le) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

// TestShortHashIDsWarn (issue 31): hash ids that cover less of the prompt
// than input_length fills at --trace-block-size (a 512-token trace read at
// 16) replay with unique tails, and the reader says so, with the block size
// the ids imply: 6,758 tokens in 14 ids are blocks of ⌈6758/14⌉ = 483 to
// ⌈6758/13⌉ − 1 = 519 tokens.
func TestShortHashIDsWarn(t *testing.T) {
	in := `{"timestamp": 0, "input_length": 6758, "output_length": 5, "hash_ids": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]}
{"timestamp": 1, "input_length": 1000, "output_length": 5, "hash_ids": [0, 14]}
{"timestamp": 2, "input_length": 16, "output_length": 5, "hash_ids": [15]}
`
	r := openString(t, in, Mooncake, Options{TraceBlockSize: 16})
	reqs := readAll(t, r)
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	w := r.(Warner).Warnings()
	want := "line 1: input_length 6758 fills 423 blocks of 16 tokens but the row has only 14 hash_ids (2 of 3 rows are so): the tokens past a row's hash ids are unique to it, so no prefix beyond them is shared; if its hash ids stand for 483 to 519 tokens each, set --trace-block-size 512 (Mooncake's published traces)"
	if len(w) != 1 || w[0] != want {
		t.Errorf("warnings %q\nwant %q", w, want)
	}
	// At the trace's own block size, nothing to say.
	r = openString(t, in, Mooncake, Options{TraceBlockSize: 512})
	readAll(t, r)
	if w := r.(Warner).Warnings(); len(w) != 0 {
		t.Errorf("at 512: %q", w)
	}
}
