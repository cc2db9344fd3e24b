package etcdfixture

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// EtcdFixture is discovery content for two workers whose instance ids are
// above 2^53, plus keys the reader must ignore.
func EtcdFixture() map[string]string {
	kv := map[string]string{}
	for _, id := range []uint64{etcdLeaseA, EtcdLeaseB} {
		kv[fmt.Sprintf("v1/instances/dynamo/backend/generate/%x", id)] = fmt.Sprintf(`{"type":"Endpoint","namespace":"dynamo","component":"backend","endpoint":"generate","instance_id":%d,"transport":{"tcp":"10.0.0.1:9999"}}`, id)
		kv[fmt.Sprintf("v1/mdc/dynamo/backend/generate/%x", id)] = fmt.Sprintf(`{"type":"Model","namespace":"dynamo","component":"backend","endpoint":"generate","instance_id":%d,"card_json":{"display_name":"m","runtime_config":{"total_kv_blocks":18446744073709551615,"topology_domains":{"zone":"a"}}}}`, id)
	}
	kv["v1/event_channels/namespace/dynamo/component/backend/topic/kv_events/1"] = `{"type":"EventChannel"}`
	kv["models/old"] = `{"name":"m"}`
	kv["unrelated/key"] = "nope"
	return kv
}

// PutAll writes kv into the etcd at endpoint.
func PutAll(t *testing.T, endpoint string, kv map[string]string) {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for k, v := range kv {
		if _, err := cli.Put(ctx, k, v); err != nil {
			t.Fatal(err)
		}
	}
}

// GrpcCalls reads etcd's per-method gRPC counters from its /metrics.
func GrpcCalls(t *testing.T, endpoint string) map[string]int {
	t.Helper()
	resp, err := http.Get(endpoint + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	re := regexp.MustCompile(`(?m)^grpc_server_started_total\{grpc_method="([^"]+)",grpc_service="([^"]+)",grpc_type="[^"]+"\} (\d+)`)
	out := map[string]int{}
	for _, m := range re.FindAllStringSubmatch(string(body), -1) {
		n, _ := strconv.Atoi(m[3])
		out[m[2]+"/"+m[1]] += n
	}
	return out
}

// Instance ids above 2^53 (a float64 would round them).
const (
	etcdLeaseA = uint64(0x694d98147d54be25) // 7587885012467105317
	EtcdLeaseB = uint64(0x7fffffffffffff01) // 9223372036854775553
)
