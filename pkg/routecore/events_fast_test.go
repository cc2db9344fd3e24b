package routecore

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

// slowBlocks is the general decoder on its own (the fast path disabled).
func slowBlocks(raw []byte) ([]KvCacheStoredBlock, error) {
	var s KvCacheStoreData
	err := s.decodeBlocks(raw)
	return s.Blocks, err
}

var fastBlocksSeeds = []string{
	`[]`, ` [ ] `,
	`[{"block_hash":1,"tokens_hash":2}]`,
	`[{"block_hash":18446744073709551615,"tokens_hash":-1,"mm_extra_info":null}]`,
	`[{"tokens_hash":2,"block_hash":1},{"block_hash":3,"tokens_hash":4}]`,
	"[ {\"block_hash\" : 1 ,\n \"tokens_hash\":\t2 } ]",
	`[{"block_hash":1,"tokens_hash":2,"block_hash":3}]`,
	`[{"block_hash":1}]`,
	`[{"block_hash":1,"tokens_hash":2,"extra":true}]`,
	`[{"block_hash":1.0,"tokens_hash":2}]`,
	`[{"block_hash":1e3,"tokens_hash":2}]`,
	`[{"block_hash":007,"tokens_hash":2}]`,
	`[{"block_hash":-9223372036854775809,"tokens_hash":2}]`,
	`[{"block_hash":18446744073709551616,"tokens_hash":2}]`,
	`[{"block_hash":"1","tokens_hash":2}]`,
	`[{"block_hash":1,"tokens_hash":2,"mm_extra_info":{"mm_hashes":[1]}}]`,
	`[{"block\u005fhash":1,"tokens_hash":2}]`,
	`[{"BLOCK_HASH":1,"tokens_hash":2}]`,
	`[{"block_hash":1,"tokens_hash":2},]`,
	`[{"block_hash":1,"tokens_hash":2}] x`,
	`[1]`, `{}`, `null`, `[{"block_hash":-0,"tokens_hash":0}]`,
}

func checkFastBlocks(t *testing.T, raw string) {
	fast, ok := evFastBlocks([]byte(raw))
	slow, err := slowBlocks(json.RawMessage(raw))
	if !json.Valid([]byte(raw)) {
		// Invalid JSON never reaches the decoder (the event was parsed first);
		// the fast path must still not claim it.
		if ok {
			t.Errorf("%s: fast path accepted invalid JSON", raw)
		}
		return
	}
	if !ok {
		return // the general decoder decides
	}
	if err != nil {
		if !errors.Is(err, ErrMalformedEvent) {
			t.Fatalf("%s: %v", raw, err)
		}
		t.Errorf("%s: fast path accepted what the general decoder rejects: %v", raw, err)
		return
	}
	if len(fast) == 0 && len(slow) == 0 {
		return
	}
	if !reflect.DeepEqual(fast, slow) {
		t.Errorf("%s: fast %+v, general %+v", raw, fast, slow)
	}
}

func TestFastBlocksMatchesGeneral(t *testing.T) {
	for _, s := range fastBlocksSeeds {
		checkFastBlocks(t, s)
	}
	if _, ok := evFastBlocks([]byte(`[{"block_hash":1,"tokens_hash":2}]`)); !ok {
		t.Error("the common shape must take the fast path")
	}
}

func FuzzFastBlocksMatchesGeneral(f *testing.F) {
	for _, s := range fastBlocksSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) { checkFastBlocks(t, raw) })
}

var splitSeeds = []string{
	`{}`, ` { } `, `{"a":1}`, `{"a":1,"a":2}`, `{"a\u005fb":{"x":[1,"]}",{"y":"}"}]},"c":"q\"uote"}`,
	`{"worker_id":1,"event":{"event_id":2,"data":"cleared"}}`, `[1]`, `null`, `"s"`, `{"a":[],"b":{},"c":null,"d":true,"e":-1.5e3}`,
	"{\n\t\"k\" :\r [ 1 , 2 ] }",
}

func checkSplit(t *testing.T, raw string) {
	if !json.Valid([]byte(raw)) {
		return
	}
	got, err := evDecodeObject([]byte(raw), "x")
	var want map[string]json.RawMessage
	werr := json.Unmarshal([]byte(raw), &want)
	if werr != nil || want == nil {
		if err == nil {
			t.Errorf("%s: split accepted a non-object", raw)
		}
		return
	}
	if err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	if len(got) != len(want) {
		t.Fatalf("%s: %d members, json has %d", raw, len(got), len(want))
	}
	for k, v := range want {
		if !bytes.Equal(got[k], v) {
			t.Errorf("%s: member %q = %s, json %s", raw, k, got[k], v)
		}
	}
}

func TestEvDecodeObjectMatchesJSON(t *testing.T) {
	for _, s := range splitSeeds {
		checkSplit(t, s)
	}
}

func FuzzEvDecodeObjectMatchesJSON(f *testing.F) {
	for _, s := range splitSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		checkSplit(t, raw)
		checkDecodeValid(t, raw)
	})
}

// checkDecodeValid: DecodeValidRouterEvent never panics, even on invalid JSON,
// and on valid JSON it is DecodeRouterEvent.
func checkDecodeValid(t *testing.T, raw string) {
	got, gotErr := DecodeValidRouterEvent([]byte(raw))
	if !json.Valid([]byte(raw)) {
		return
	}
	want, wantErr := DecodeRouterEvent([]byte(raw))
	if (gotErr == nil) != (wantErr == nil) || !reflect.DeepEqual(got, want) {
		t.Fatalf("DecodeValidRouterEvent(%q) = %+v, %v; DecodeRouterEvent = %+v, %v", raw, got, gotErr, want, wantErr)
	}
}

func TestDecodeValidRouterEvent(t *testing.T) {
	for _, s := range append(splitSeeds, `{"worker_id":1,"event":{"event_id":2,"data":{"stored":{"parent_hash":null,"blocks":[{"block_hash":1,"tokens_hash":2}]}}}}`, `{"worker_id":`, `{"worker_id":1,"event":{"event_id":2,"data":{"stored":{"blocks":[{"block_hash":1,"tokens_hash"`, "") {
		checkDecodeValid(t, s)
	}
}

var fastEventSeeds = []string{
	`{"worker_id":1,"event":{"event_id":2,"data":"cleared"}}`,
	`{"worker_id":1,"storage_tier":"device","event":{"event_id":2,"dp_rank":3,"data":{"cleared":null}}}`,
	`{"worker_id":18446744073709551615,"storage_tier":"host_pinned","event":{"data":{"stored":{"parent_hash":-1,"start_position":16,"blocks":[{"block_hash":1,"tokens_hash":2,"mm_extra_info":null}]}},"event_id":9}}`,
	`{"event":{"event_id":2,"data":{"stored":{"parent_hash":null,"blocks":[]}}},"worker_id":1}`,
	`{"worker_id":1,"event":{"event_id":2,"data":{"removed":{"block_hashes":[1,-2,18446744073709551615]}}}}`,
	`{"worker_id":1,"event":{"event_id":2,"data":{"removed":{"block_hashes":[]}}}}`,
	` { "worker_id" : 1 , "event" : { "event_id" : 2 , "data" : { "stored" : { "blocks" : [ { "block_hash" : 1 , "tokens_hash" : 2 } ] } } } } `,
	`{"worker_id":1,"worker_id":2,"event":{"event_id":2,"data":"cleared"}}`,
	`{"worker_id":1,"worker_id":2,"worker_id":3,"event":{"event_id":2,"data":"cleared"}}`,
	`{"worker_id":-1,"event":{"event_id":2,"data":"cleared"}}`,
	`{"worker_id":"1","event":{"event_id":2,"data":"cleared"}}`,
	`{"worker_id":1,"event":{"event_id":2,"dp_rank":4294967296,"data":"cleared"}}`,
	`{"worker_id":1,"event":{"event_id":2,"dp_rank":4294967295,"data":"cleared"}}`,
	`{"worker_id":1,"event":{"event_id":2,"data":{"stored":{"blocks":[]},"removed":{"block_hashes":[]}}}}`,
	`{"worker_id":1,"event":{"event_id":2,"data":{"stored":{"blocks":[]},"stored":{"blocks":[{"block_hash":1,"tokens_hash":2}]}}}}`,
	`{"worker_id":1,"event":{"event_id":2,"data":{"cleared":1}}}`,
	`{"worker_id":1,"event":{"event_id":2,"data":"clear\u0065d"}}`,
	`{"worker_id":1,"event":{"event_id":2,"data":"stored"}}`,
	`{"worker_id":1,"storage_tier":"tape","event":{"event_id":2,"data":"cleared"}}`,
	`{"worker_id":1,"storage_tier":"de\u0076ice","event":{"event_id":2,"data":"cleared"}}`,
	`{"worker_id":1,"event":{"event_id":2,"data":{"stored":{"parent_hash":1,"start_position":-1,"blocks":[]}}}}`,
	`{"worker_id":1,"event":{"event_id":2,"data":{"stored":{"start_position":null,"blocks":[]}}}}`,
	`{"worker_id":1,"event":{"event_id":2,"data":{"stored":{"blocks":[],"lora_id":3}}}}`,
	`{"worker_id":1,"event":{"event_id":2,"data":{"removed":{"block_hashes":[1.5]}}}}`,
	`{"worker_id":1,"event":{"event_id":2,"data":{"removed":{}}}}`,
	`{"worker_id":1,"event":{"event_id":2}}`,
	`{"worker_id":1}`,
	`{"worker_id":1,"event":{"event_id":2,"data":"cleared"},"extra":[1,{"a":"b"}]}`,
	`{"Worker_Id":1,"event":{"event_id":2,"data":"cleared"}}`,
	`{}`, `[]`, `null`, `1`,
}

// checkFastEvent: on valid JSON, whatever the single-pass decoder accepts the
// general decoder decodes identically.
func checkFastEvent(t *testing.T, raw string) {
	fast, ok := evFastEvent([]byte(raw))
	if !json.Valid([]byte(raw)) {
		if ok {
			t.Errorf("%s: fast path accepted invalid JSON", raw)
		}
		return
	}
	if !ok {
		return
	}
	var slow RouterEvent
	if err := slow.decodeGeneral([]byte(raw)); err != nil {
		t.Errorf("%s: fast path accepted what the general decoder rejects: %v", raw, err)
		return
	}
	if !reflect.DeepEqual(fast, slow) {
		t.Errorf("%s: fast %+v, general %+v", raw, fast, slow)
	}
}

func TestFastEventMatchesGeneral(t *testing.T) {
	for _, s := range fastEventSeeds {
		checkFastEvent(t, s)
	}
	for _, s := range fastEventSeeds[:7] {
		if _, ok := evFastEvent([]byte(s)); !ok {
			t.Errorf("%s: the common shape must take the fast path", s)
		}
	}
}

func FuzzFastEventMatchesGeneral(f *testing.F) {
	for _, s := range fastEventSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) { checkFastEvent(t, raw) })
}
