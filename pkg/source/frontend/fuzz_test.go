package frontend

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
)

// Fuzz targets of the safety suite (issue 8): every decoder of untrusted input
// the collector reads — DWM spec.data, etcd values, Prometheus text, the KV
// placements stream and the frontend's JSON answers. Seeds are committed under
// testdata/fuzz/<target>; `make fuzz` runs each briefly.

// FuzzPlacementStream: no placements stream panics the reader; every outcome
// is a snapshot or an error, within the size limits.
func FuzzPlacementStream(f *testing.F) {
	begin := `{"v":1,"type":"placement_snapshot_begin","snapshot_id":1,"complete":false}`
	end := `{"v":1,"type":"placement_snapshot_end","snapshot_id":1,"complete":true,"cursor":[]}`
	ev := `{"v":1,"type":"placement_snapshot_events","snapshot_id":1,"model":"m","namespace":"n","component":"prefill","endpoint":"generate","block_size_tokens":16,"cursor":4,"batch_index":0,"batch_count":1,"events":[{"worker_id":18446744073709551615,"event":{"event_id":1,"dp_rank":0,"data":{"stored":{"parent_hash":null,"blocks":[{"block_hash":-1,"tokens_hash":-9223372036854775808}]}}}}]}`
	for _, s := range []string{
		begin + "\n" + ev + "\n" + end + "\n",
		begin + "\n" + `{"v":1,"type":"ping"}` + "\n" + `{"v":1,"type":"x_future"}` + "\n" + end + "\n",
		begin + "\n" + `{"v":1,"type":"placement_source_error","model":"m","reason":"feed_unavailable"}` + "\n" + strings.Replace(end, "true", "false", 1) + "\n",
		begin + "\n" + strings.Replace(ev, `"batch_count":1`, `"batch_count":0`, 1) + "\n" + end,
		begin + "\n{not json\n" + end,
		ev + "\n" + end,
		begin + "\n",
		"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p := newPlacementReader(bytes.NewReader(data), 1<<20, 64<<10)
		snap, err := p.read()
		if (snap == nil) == (err == nil) {
			t.Fatalf("snapshot %v and error %v", snap != nil, err)
		}
		if snap != nil && snap.Bytes > int64(len(data)) {
			t.Fatalf("read %d bytes of %d", snap.Bytes, len(data))
		}
	})
}

// FuzzFrontendAnswers: the POST /tokenize and POST /query answers never panic
// their decoders, and accepted token ids and scores round-trip exactly.
func FuzzFrontendAnswers(f *testing.F) {
	for _, s := range []string{
		`{"count":3,"max_model_len":131072,"tokens":[1,2,4294967295]}`,
		`{"tokens":[],"count":0}`, `{"tokens":[-1]}`, `{"tokens":[1.0]}`, `{"tokens":["1"]}`, `{"count":2,"tokens":[1]}`,
		`{"scores":{"18446744073709551615":{"0":160,"4294967295":18446744073709551615}},"frequencies":[],"instances":{}}`,
		`{"scores":{"-1":{"0":1}}}`, `{"scores":{"1":{"0":-1}}}`, `{"scores":null}`, `[]`, `null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if tokens, _, err := decodeTokenizeAnswer(data); err == nil {
			js, _ := json.Marshal(map[string]any{"tokens": tokens, "count": len(tokens)})
			again, _, err := decodeTokenizeAnswer(js)
			if err != nil || !reflect.DeepEqual(nonNil(again), nonNil(tokens)) {
				t.Fatalf("tokens %v re-encoded as %s: %v, %v", tokens, js, again, err)
			}
		}
		if scores, err := decodeIndexerScores(data); err == nil {
			var b strings.Builder
			b.WriteString(`{"scores":{`)
			byWorker := map[routecore.WorkerID][]routecore.WorkerWithDpRank{}
			for k := range scores {
				byWorker[k.WorkerID] = append(byWorker[k.WorkerID], k)
			}
			first := true
			for w, ks := range byWorker {
				if !first {
					b.WriteByte(',')
				}
				first = false
				b.WriteString(`"` + strconv.FormatUint(uint64(w), 10) + `":{`)
				for i, k := range ks {
					if i > 0 {
						b.WriteByte(',')
					}
					b.WriteString(`"` + strconv.FormatUint(uint64(k.DpRank), 10) + `":` + strconv.FormatUint(scores[k], 10))
				}
				b.WriteByte('}')
			}
			b.WriteString(`}}`)
			again, err := decodeIndexerScores([]byte(b.String()))
			if err != nil || !reflect.DeepEqual(again, scores) {
				t.Fatalf("scores %v re-encoded as %s: %v, %v", scores, b.String(), again, err)
			}
		}
	})
}

func nonNil(s []uint32) []uint32 {
	if s == nil {
		return []uint32{}
	}
	return s
}
