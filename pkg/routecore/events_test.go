package routecore

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEventDecodeFullShape(t *testing.T) {
	// The annotated example of discovery-state §4.2 without comments.
	in := `{"worker_id": 7587888160958627365,
 "storage_tier": "device",
 "residency_domain": "worker",
 "event": {
   "event_id": 1812,
   "dp_rank": 0,
   "data": {"stored": {
       "parent_hash": 11502843919348116077,
       "start_position": 48,
       "blocks": [
         {"block_hash": 4183092145531202937,
          "tokens_hash": 9034612871098223409,
          "mm_extra_info": null}
       ]}}
 },
 "state_source": null}`
	ev, err := DecodeRouterEvent([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if ev.WorkerID != 7587888160958627365 || ev.StorageTier != TierDevice || ev.Event.EventID != 1812 {
		t.Fatalf("header: %+v", ev)
	}
	s := ev.Event.Data.Stored
	if s == nil || s.ParentHash == nil || *s.ParentHash != 11502843919348116077 || *s.StartPosition != 48 {
		t.Fatalf("stored: %+v", s)
	}
	if s.Blocks[0].BlockHash != 4183092145531202937 || s.Blocks[0].TokensHash != 9034612871098223409 || s.Blocks[0].MmExtraInfo != nil {
		t.Fatalf("block: %+v", s.Blocks[0])
	}
}

func TestEventRoundTripExactU64(t *testing.T) {
	// Ids above 2^53 and negative i64 hashes must survive exactly.
	in := `{"worker_id":18446744073709551615,"event":{"event_id":9007199254740993,"data":{"stored":{"parent_hash":-1,"blocks":[{"block_hash":-9223372036854775808,"tokens_hash":9007199254740993,"mm_extra_info":{"mm_hashes":[1]}}]}},"dp_rank":4294967295}}`
	ev, err := DecodeRouterEvent([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if ev.WorkerID != 1<<64-1 || ev.Event.EventID != 1<<53+1 || ev.Event.DpRank != 1<<32-1 {
		t.Fatalf("ids: %+v", ev)
	}
	b := ev.Event.Data.Stored.Blocks[0]
	if *ev.Event.Data.Stored.ParentHash != 1<<64-1 || b.BlockHash != 1<<63 || b.TokensHash != 1<<53+1 {
		t.Fatalf("hashes: %+v %+v", *ev.Event.Data.Stored.ParentHash, b)
	}
	out, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"worker_id":18446744073709551615,"storage_tier":"device","event":{"event_id":9007199254740993,"data":{"stored":{"parent_hash":18446744073709551615,"blocks":[{"block_hash":9223372036854775808,"tokens_hash":9007199254740993,"mm_extra_info":{"mm_hashes":[1]}}]}},"dp_rank":4294967295}}`
	if string(out) != want {
		t.Fatalf("marshal:\n got %s\nwant %s", out, want)
	}
	back, err := DecodeRouterEvent(out)
	if err != nil {
		t.Fatal(err)
	}
	out2, _ := json.Marshal(back)
	if string(out2) != string(out) {
		t.Fatalf("second round trip differs:\n%s\n%s", out, out2)
	}
}

func TestEventVariants(t *testing.T) {
	for _, tc := range []struct {
		name, in, out string
	}{
		{"cleared string", `{"worker_id":1,"event":{"event_id":2,"data":"cleared"}}`,
			`{"worker_id":1,"storage_tier":"device","event":{"event_id":2,"data":"cleared","dp_rank":0}}`},
		{"cleared map", `{"worker_id":1,"storage_tier":"disk","event":{"event_id":2,"data":{"cleared":null},"dp_rank":3}}`,
			`{"worker_id":1,"storage_tier":"disk","event":{"event_id":2,"data":"cleared","dp_rank":3}}`},
		{"removed", `{"worker_id":1,"storage_tier":"host_pinned","event":{"event_id":2,"data":{"removed":{"block_hashes":[1,-2]}}}}`,
			`{"worker_id":1,"storage_tier":"host_pinned","event":{"event_id":2,"data":{"removed":{"block_hashes":[1,18446744073709551614]}},"dp_rank":0}}`},
		{"stored root", `{"worker_id":1,"storage_tier":"external","event":{"event_id":2,"data":{"stored":{"blocks":[]}}}}`,
			`{"worker_id":1,"storage_tier":"external","event":{"event_id":2,"data":{"stored":{"parent_hash":null,"blocks":[]}},"dp_rank":0}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev, err := DecodeRouterEvent([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			out, err := json.Marshal(ev)
			if err != nil {
				t.Fatal(err)
			}
			if string(out) != tc.out {
				t.Fatalf("got  %s\nwant %s", out, tc.out)
			}
		})
	}
}

func TestEventDecodeErrors(t *testing.T) {
	for _, tc := range []struct {
		name, in, field string
	}{
		{"float worker", `{"worker_id":1.5,"event":{"event_id":1,"data":"cleared"}}`, "worker_id"},
		{"exponent id", `{"worker_id":1,"event":{"event_id":1e3,"data":"cleared"}}`, "event.event_id"},
		{"string hash", `{"worker_id":1,"event":{"event_id":1,"data":{"removed":{"block_hashes":["5"]}}}}`, "block_hashes[0]"},
		{"u64 overflow", `{"worker_id":18446744073709551616,"event":{"event_id":1,"data":"cleared"}}`, "worker_id"},
		{"i64 underflow", `{"worker_id":1,"event":{"event_id":1,"data":{"removed":{"block_hashes":[-9223372036854775809]}}}}`, "block_hashes[0]"},
		{"negative worker", `{"worker_id":-1,"event":{"event_id":1,"data":"cleared"}}`, "worker_id"},
		{"dp_rank overflow", `{"worker_id":1,"event":{"event_id":1,"dp_rank":4294967296,"data":"cleared"}}`, "dp_rank"},
		{"unknown tier", `{"worker_id":1,"storage_tier":"gpu","event":{"event_id":1,"data":"cleared"}}`, "storage_tier"},
		{"unknown variant", `{"worker_id":1,"event":{"event_id":1,"data":{"evicted":{}}}}`, "evicted"},
		{"two variants", `{"worker_id":1,"event":{"event_id":1,"data":{"removed":{"block_hashes":[]},"cleared":null}}}`, "exactly one"},
		{"missing tokens hash", `{"worker_id":1,"event":{"event_id":1,"data":{"stored":{"parent_hash":null,"blocks":[{"block_hash":1}]}}}}`, "blocks[0].tokens_hash"},
		{"missing event", `{"worker_id":1}`, "event"},
		{"null worker", `{"worker_id":null,"event":{"event_id":1,"data":"cleared"}}`, "worker_id"},
		{"not an object", `[1,2]`, "router event"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeRouterEvent([]byte(tc.in))
			if !errors.Is(err, ErrMalformedEvent) {
				t.Fatalf("err = %v, want ErrMalformedEvent", err)
			}
			if !strings.Contains(err.Error(), tc.field) {
				t.Fatalf("error %q does not name %q", err, tc.field)
			}
		})
	}
}

func TestEventMarshalRejectsInvalidData(t *testing.T) {
	if _, err := json.Marshal(RouterEvent{}); err == nil {
		t.Fatal("event with no variant marshalled")
	}
	ev := RouterEvent{Event: KvCacheEvent{Data: KvCacheEventData{Cleared: true, Removed: &KvCacheRemoveData{}}}}
	if _, err := json.Marshal(ev); err == nil {
		t.Fatal("event with two variants marshalled")
	}
	if err := NewIndex().ApplyEvent(RouterEvent{}); !errors.Is(err, ErrMalformedEvent) {
		t.Fatalf("ApplyEvent of empty data: %v", err)
	}
}

func TestEventDecoderStreams(t *testing.T) {
	one := `{"worker_id":1,"event":{"event_id":1,"data":"cleared"}}`
	two := `{"worker_id":2,"event":{"event_id":9007199254740993,"data":"cleared"}}`
	for _, tc := range []struct {
		name, in string
		n        int
	}{
		{"array", "[" + one + ",\n" + two + "]", 2},
		{"ndjson", one + "\n" + two + "\n", 2},
		{"concatenated", one + two, 2},
		{"empty", "  \n", 0},
		{"empty array", "[]", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			evs, err := DecodeRouterEvents(strings.NewReader(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if len(evs) != tc.n {
				t.Fatalf("got %d events, want %d", len(evs), tc.n)
			}
			if tc.n == 2 && evs[1].Event.EventID != 9007199254740993 {
				t.Fatalf("event id lost precision: %d", evs[1].Event.EventID)
			}
		})
	}
}

func TestEventDecoderErrors(t *testing.T) {
	one := `{"worker_id":1,"event":{"event_id":1,"data":"cleared"}}`
	// A malformed event reports its position.
	_, err := DecodeRouterEvents(strings.NewReader(one + "\n" + `{"worker_id":1.5}`))
	if !errors.Is(err, ErrMalformedEvent) || !strings.Contains(err.Error(), "event 1") {
		t.Fatalf("bad second event: %v", err)
	}
	// A truncated array is malformed.
	_, err = DecodeRouterEvents(strings.NewReader("[" + one + ","))
	if !errors.Is(err, ErrMalformedEvent) {
		t.Fatalf("truncated array: %v", err)
	}
	// An oversized event is refused without reading the whole stream.
	big := `{"worker_id":1,"event":{"event_id":1,"data":{"removed":{"block_hashes":[` + strings.Repeat("1234567890,", 100000) + `1]}}}}`
	d := NewEventDecoder(strings.NewReader(one + "\n" + big))
	d.SetMaxEventBytes(64 << 10)
	if _, err := d.Next(); err != nil {
		t.Fatalf("first event: %v", err)
	}
	if _, err := d.Next(); !errors.Is(err, ErrEventTooLarge) {
		t.Fatalf("oversized event: %v", err)
	}
	if _, err := d.Next(); !errors.Is(err, io.EOF) {
		t.Fatalf("after fatal error: %v", err)
	}
}

func TestEventFixtureFiles(t *testing.T) {
	// Every fixture decodes, re-encodes to the committed .golden form, and
	// applies to an index without error.
	files, _ := filepath.Glob("testdata/index/*.ndjson")
	if len(files) == 0 {
		t.Skip("no fixtures")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			evs, err := DecodeRouterEvents(strings.NewReader(string(raw)))
			if err != nil {
				t.Fatal(err)
			}
			ix := NewIndex()
			var sb strings.Builder
			for _, ev := range evs {
				if err := ix.ApplyEvent(ev); err != nil {
					t.Fatalf("apply: %v", err)
				}
				b, _ := json.Marshal(ev)
				sb.Write(b)
				sb.WriteByte('\n')
			}
			golden, err := os.ReadFile(strings.TrimSuffix(f, ".ndjson") + ".golden")
			if err != nil {
				t.Fatal(err)
			}
			if sb.String() != string(golden) {
				t.Fatalf("re-encoded events differ from golden:\n%s", sb.String())
			}
		})
	}
}
