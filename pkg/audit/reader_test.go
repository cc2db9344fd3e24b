package audit_test

import (
	"bytes"
	"compress/gzip"
	"strings"
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/audit"
)

const (
	lineSel   = `2026-11-20T12:04:00.000100Z  INFO dynamo_kv_router::scheduling::selector: Selected worker router_mode="kv" request_id="r" worker_id=3 worker_type=decode dp_rank=0 logit=41.0 host_pinned_blocks=0 disk_blocks=0`
	lineInput = `2026-11-20T12:04:00.000010Z DEBUG dynamo_llm::kv_router: [ROUTING_INPUT] request local hashes request_id="r" isl_tokens=40 block_size=16 num_blocks=2 local_hashes=[1, 2]`
	lineOther = `2026-11-20T12:04:00.000000Z  INFO dynamo_llm::http::service: request served`
)

func gz(t *testing.T, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestReadLogs(t *testing.T) {
	head, _, _ := strings.Cut(lineInput, "[1, 2]")
	long := head + "[" + strings.Repeat("1, ", 400) + "1]"
	cases := []struct {
		name    string
		data    []byte
		lim     audit.Limits
		records int
		check   func(t *testing.T, st audit.StreamStats, recs []audit.Record)
	}{
		{"plain, with other lines and CRLF", []byte(lineOther + "\r\n" + lineInput + "\r\n" + lineSel + "\r\n"), audit.Limits{}, 2,
			func(t *testing.T, st audit.StreamStats, recs []audit.Record) {
				if st.Lines != 3 || st.Gzip || recs[1].Pos.Line != 3 || recs[0].Pos.Source != "f" {
					t.Errorf("stats %+v, positions %v %v", st, recs[0].Pos, recs[1].Pos)
				}
				if st.First != "2026-11-20T12:04:00.000010Z" || st.Last != "2026-11-20T12:04:00.000100Z" {
					t.Errorf("time span %s..%s", st.First, st.Last)
				}
			}},
		{"gzip", gz(t, lineInput+"\n"+lineSel+"\n"), audit.Limits{}, 2,
			func(t *testing.T, st audit.StreamStats, _ []audit.Record) {
				if !st.Gzip {
					t.Error("gzip not detected")
				}
			}},
		{"a last line without newline is read and flagged", []byte(lineInput + "\n" + lineSel), audit.Limits{}, 2,
			func(t *testing.T, st audit.StreamStats, _ []audit.Record) {
				if !st.PartialLastLine || st.Lines != 2 {
					t.Errorf("stats %+v", st)
				}
			}},
		{"an overlong line is skipped and counted", []byte(long + "\n" + lineSel + "\n"), audit.Limits{MaxLineBytes: 1000}, 1,
			func(t *testing.T, st audit.StreamStats, recs []audit.Record) {
				if st.Overlong != 1 || st.Lines != 2 || recs[0].Pos.Line != 2 {
					t.Errorf("stats %+v, line %d", st, recs[0].Pos.Line)
				}
			}},
		{"the byte bound stops the read", []byte(lineInput + "\n" + lineSel + "\n" + lineSel + "\n"), audit.Limits{MaxBytes: int64(len(lineInput) + 1 + len(lineSel) + 1)}, 2,
			func(t *testing.T, st audit.StreamStats, _ []audit.Record) {
				if !st.Truncated || !strings.HasPrefix(st.TruncatedBy, "bytes") {
					t.Errorf("stats %+v", st)
				}
			}},
		{"the byte bound applies after decompression", gz(t, strings.Repeat(lineSel+"\n", 1000)), audit.Limits{MaxBytes: 10 * int64(len(lineSel)+1)}, 10,
			func(t *testing.T, st audit.StreamStats, _ []audit.Record) {
				if !st.Truncated || st.Bytes != 10*int64(len(lineSel)+1) {
					t.Errorf("stats %+v", st)
				}
			}},
		{"the record bound stops the read", []byte(strings.Repeat(lineSel+"\n", 5)), audit.Limits{MaxRecords: 3}, 3,
			func(t *testing.T, st audit.StreamStats, _ []audit.Record) {
				if !st.Truncated || !strings.HasPrefix(st.TruncatedBy, "records") {
					t.Errorf("stats %+v", st)
				}
			}},
		{"malformed lines are counted with examples", []byte(strings.Repeat(lineInput[:len(lineInput)-3]+"\n", 7)), audit.Limits{}, 0,
			func(t *testing.T, st audit.StreamStats, _ []audit.Record) {
				if st.Malformed != 7 || len(st.MalformedExamples) != audit.MaxMalformedExamples || !strings.HasPrefix(st.MalformedExamples[0], "f:1: malformed") {
					t.Errorf("stats %+v", st)
				}
			}},
		{"empty", nil, audit.Limits{}, 0, func(t *testing.T, st audit.StreamStats, _ []audit.Record) {
			if st.Lines != 0 || st.Bytes != 0 {
				t.Errorf("stats %+v", st)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			recs, st, err := audit.ReadLogs(bytes.NewReader(tc.data), "f", tc.lim)
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) != tc.records {
				t.Fatalf("%d records, want %d (stats %+v)", len(recs), tc.records, st)
			}
			tc.check(t, st, recs)
		})
	}
}

func TestReadLogsBrokenGzip(t *testing.T) {
	data := gz(t, strings.Repeat(lineSel+"\n", 100))
	_, _, err := audit.ReadLogs(bytes.NewReader(data[:len(data)/2]), "logs.gz", audit.Limits{})
	if err == nil || !strings.Contains(err.Error(), "logs.gz") {
		t.Fatalf("a cut gzip stream must fail naming the stream, got %v", err)
	}
}
