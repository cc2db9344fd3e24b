package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/cmdtest"
	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/kubeenv"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/capture"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/etcd"
)

// TestSafetyHugeCaptureFile: a 2 GiB capture (a sparse file: it costs neither
// disk nor memory) is refused at once by every command that reads captures,
// with the limit in the message, without being read.
func TestSafetyHugeCaptureFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "huge.yaml")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(2 << 30); err != nil {
		t.Skipf("no sparse files here: %v", err)
	}
	_ = f.Close()
	for _, args := range [][]string{
		{"topology", "--from-file", path},
		{"explain-route", "d", "--from-file", path, "--tokens", "1,2,3"},
	} {
		began := time.Now()
		r := cmdtest.Run(t, args...)
		if r.ExitCode != 1 || !strings.Contains(r.Stderr, "is larger than the 512 MiB limit (2048 MiB)") || time.Since(began) > 5*time.Second {
			t.Errorf("%s: exit %d in %v, stderr %q", args[0], r.ExitCode, time.Since(began), r.Stderr)
		}
		t.Logf("%s: %s", args[0], strings.TrimSpace(r.Stderr))
	}
}

// TestSafetyHugeEtcdValue: a discovery etcd (started with a 16 MiB request limit)
// holds a value just over the 10 MiB limit, one just under, and a small one: the
// big one is skipped with a note naming the key and the limit, the others are
// read.
func TestSafetyHugeEtcdValue(t *testing.T) {
	t.Setenv("ETCD_MAX_REQUEST_BYTES", strconv.Itoa(16<<20)) // read by etcdServer at start
	etcdServer := kubeenv.StartEtcd(t)
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{etcdServer.Endpoint}, DialTimeout: 10 * time.Second, MaxCallSendMsgSize: 32 << 20})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	values := map[string]int{
		"v1/instances/ns/c/e/1": etcd.DefaultMaxValueBytes + 1,
		"v1/instances/ns/c/e/2": etcd.DefaultMaxValueBytes - 100,
		"v1/instances/ns/c/e/3": 64,
	}
	for k, n := range values {
		if _, err := cli.Put(ctx, k, strings.Repeat("x", n)); err != nil {
			t.Fatalf("put %d bytes: %v", n, err)
		}
	}
	_ = cli.Close()
	res := etcd.Collect(ctx, etcd.Options{Endpoints: []string{etcdServer.Endpoint}})
	var keys []string
	for _, kv := range res.KVs {
		keys = append(keys, kv.Key)
	}
	if strings.Join(keys, ",") != "v1/instances/ns/c/e/2,v1/instances/ns/c/e/3" {
		t.Errorf("keys read: %v", keys)
	}
	var notes []string
	for _, n := range res.Notes {
		notes = append(notes, n.Message)
	}
	want := fmt.Sprintf("etcd value of v1/instances/ns/c/e/1 is %d bytes, over the 10 MiB limit: skipped", etcd.DefaultMaxValueBytes+1)
	if !strings.Contains(strings.Join(notes, "\n"), want) {
		t.Errorf("notes %q lack %q", notes, want)
	}
	t.Logf("notes: %v", notes)
}

// TestSafetyExactIDsRoundTrip: instance ids above 2^53 (the etcd-discovery
// example's lease ids) and KV block hashes published as negative i64 go through
// capture write → capture read → explain-route -o json exactly: the worker whose
// placements carry the negative hashes is matched (a rounded or sign-mangled
// hash would match nothing) and every instanceId in the JSON is the published
// decimal string.
func TestSafetyExactIDsRoundTrip(t *testing.T) {
	data, err := os.ReadFile("../../examples/etcd-discovery-v1alpha1.yaml")
	if err != nil {
		t.Fatal(err)
	}
	b, err := capture.ParseWhole(data, "example")
	if err != nil {
		t.Fatal(err)
	}
	// The prefill instance ids the example publishes, exactly.
	var prefill []string
	published := map[string]bool{}
	for _, kv := range b.Etcd {
		dec := json.NewDecoder(strings.NewReader(kv.Value))
		dec.UseNumber()
		var v struct {
			InstanceID json.Number `json:"instance_id"`
			Card       struct {
				WorkerType string `json:"worker_type"`
			} `json:"card_json"`
		}
		if dec.Decode(&v) != nil || v.InstanceID == "" {
			continue
		}
		published[v.InstanceID.String()] = true
		if strings.HasPrefix(kv.Key, "v1/mdc/") && v.Card.WorkerType == "prefill" {
			prefill = append(prefill, v.InstanceID.String())
		}
	}
	if len(prefill) == 0 {
		t.Fatal("no prefill instance in the example")
	}
	hot := prefill[0]
	if n, _ := strconv.ParseUint(hot, 10, 64); n <= 1<<53 {
		t.Fatalf("instance id %s is not above 2^53", hot)
	}
	// Tokens whose block hashes have the top bit set (so they are negative as i64).
	var tokens []uint32
	var blocks []routecore.Block
	for off := uint32(0); ; off += 1000 {
		tokens = tokens[:0]
		for i := range uint32(64) {
			tokens = append(tokens, off+i+1)
		}
		blocks, err = routecore.ComputeBlocks(tokens, 16, routecore.HashOptions{})
		if err != nil {
			t.Fatal(err)
		}
		neg := 0
		for _, bl := range blocks {
			if int64(bl.SequenceHash) < 0 {
				neg++
			}
		}
		if neg >= 2 {
			break
		}
	}
	var sb strings.Builder
	for i, bl := range blocks {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `{"block_hash":%d,"tokens_hash":%d}`, int64(bl.SequenceHash), int64(bl.LocalHash))
	}
	var ev routecore.RouterEvent
	line := `{"worker_id":` + hot + `,"event":{"event_id":1,"dp_rank":0,"data":{"stored":{"parent_hash":null,"blocks":[` + sb.String() + `]}}}}`
	if err := json.Unmarshal([]byte(line), &ev); err != nil {
		t.Fatal(err)
	}
	b.KvEvents = append(b.KvEvents, raw.KvEvents{Namespace: "research", Deployment: "deepseek-r1", BlockSize: 16, Source: "test", Events: []routecore.RouterEvent{ev}})

	var buf bytes.Buffer
	if err := capture.Write(&buf, b); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "ids.yaml")
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	ids := make([]string, len(tokens))
	for i, id := range tokens {
		ids[i] = strconv.FormatUint(uint64(id), 10)
	}
	r := cmdtest.Run(t, "explain-route", "deepseek-r1", "-n", "research", "--from-file", path, "--tokens", strings.Join(ids, ","), "-o", "json")
	if r.ExitCode != 0 && r.ExitCode != 2 {
		t.Fatalf("exit %d: %s", r.ExitCode, r.Stderr)
	}
	var out struct {
		Prefill struct {
			Pick       string `json:"pick"`
			Candidates []struct {
				Worker        string          `json:"worker"`
				InstanceID    json.RawMessage `json:"instanceId"`
				OverlapBlocks float64         `json:"overlapBlocks"`
			} `json:"candidates"`
		} `json:"prefill"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil {
		t.Fatal(err)
	}
	matched := false
	for _, c := range out.Prefill.Candidates {
		var s string
		if err := json.Unmarshal(c.InstanceID, &s); err != nil || !published[s] {
			t.Errorf("%s: instanceId %s is not a published id as a JSON string", c.Worker, c.InstanceID)
		}
		if s == hot {
			matched = true
			if c.OverlapBlocks != float64(len(blocks)) || out.Prefill.Pick != c.Worker {
				t.Errorf("%s (%s): overlap %v, pick %s; want overlap %d and picked: the negative-i64 hashes did not round-trip", c.Worker, s, c.OverlapBlocks, out.Prefill.Pick, len(blocks))
			}
		}
	}
	if !matched {
		t.Errorf("instance %s is not a candidate:\n%s", hot, trimOut(r.Stdout))
	}
	t.Logf("instance %s matched %d blocks published as negative i64 (e.g. %d)", hot, len(blocks), int64(blocks[len(blocks)-1].SequenceHash))
}
