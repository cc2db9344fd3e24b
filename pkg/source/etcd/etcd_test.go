package etcd

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/etcdfixture"
	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/fakekube"
	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/kubeenv"
)

func TestCollectEtcdRealServer(t *testing.T) {
	e := kubeenv.StartEtcd(t)
	want := etcdfixture.EtcdFixture()
	etcdfixture.PutAll(t, e.Endpoint, want)
	big := strings.Repeat("x", 2048)
	etcdfixture.PutAll(t, e.Endpoint, map[string]string{"v1/mdc/dynamo/backend/generate/ffffffffffffffff/lora": big})

	before := etcdfixture.GrpcCalls(t, e.Endpoint)
	r := Collect(context.Background(), Options{Endpoints: []string{e.Endpoint}, PageSize: 2, MaxValueBytes: 1024})
	after := etcdfixture.GrpcCalls(t, e.Endpoint)

	got := map[string]string{}
	for _, kv := range r.KVs {
		got[kv.Key] = kv.Value
	}
	for k, v := range want {
		if k == "unrelated/key" {
			if _, ok := got[k]; ok {
				t.Errorf("read a key outside the Dynamo prefixes: %s", k)
			}
			continue
		}
		if got[k] != v {
			t.Errorf("%s = %q, want %q (values must be kept byte for byte)", k, got[k], v)
		}
	}
	if !strings.Contains(got[fmt.Sprintf("v1/instances/dynamo/backend/generate/%x", etcdfixture.EtcdLeaseB)], `"instance_id":9223372036854775553`) {
		t.Error("u64 instance id not kept exactly")
	}
	if r.Source.Degraded {
		t.Errorf("degraded: %s", r.Source.Message)
	}
	fakekube.WantNotes(t, r.Notes, "etcd value of v1/mdc/dynamo/backend/generate/ffffffffffffffff/lora is 2048 bytes, over the 1 KiB limit: skipped")
	for i := 1; i < len(r.KVs); i++ {
		if r.KVs[i-1].Key >= r.KVs[i].Key {
			t.Errorf("keys not sorted: %s, %s", r.KVs[i-1].Key, r.KVs[i].Key)
		}
	}
	// Page size 2: v1/instances/ (2 keys) 1 Range, v1/mdc/ (3 keys) 2, the
	// three other prefixes 1 each.
	if r.Requests != 6 {
		t.Errorf("Range requests = %d, want 6", r.Requests)
	}
	// Only Range was called on the server.
	for m, n := range after {
		if d := n - before[m]; d > 0 && m != "etcdserverpb.KV/Range" {
			t.Errorf("etcd saw %d %s calls from the collector: only Range is allowed", d, m)
		}
	}
	if d := after["etcdserverpb.KV/Range"] - before["etcdserverpb.KV/Range"]; d != r.Requests {
		t.Errorf("server saw %d Range calls, collector counted %d", d, r.Requests)
	}
}

func TestCollectEtcdAuthAndPermissions(t *testing.T) {
	e := kubeenv.StartEtcd(t)
	etcdfixture.PutAll(t, e.Endpoint, etcdfixture.EtcdFixture())
	const password = "planted-etcd-pass-9f8e7d"
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admin, err := clientv3.New(clientv3.Config{Endpoints: []string{e.Endpoint}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range []func() error{
		func() error { _, err := admin.UserAdd(ctx, "root", "rootpw"); return err },
		func() error { _, err := admin.UserGrantRole(ctx, "root", "root"); return err },
		func() error { _, err := admin.RoleAdd(ctx, "reader"); return err },
		func() error {
			_, err := admin.RoleGrantPermission(ctx, "reader", "v1/", clientv3.GetPrefixRangeEnd("v1/"), clientv3.PermissionType(clientv3.PermRead))
			return err
		},
		func() error { _, err := admin.UserAdd(ctx, "dynreader", password); return err },
		func() error { _, err := admin.UserGrantRole(ctx, "dynreader", "reader"); return err },
		func() error { _, err := admin.AuthEnable(ctx); return err },
	} {
		if err := step(); err != nil {
			t.Fatalf("set up etcd auth: %v", err)
		}
	}
	admin.Close()

	// Credentials from the environment; read-only role on v1/ only.
	env := map[string]string{EnvUsername: "dynreader", EnvPassword: password}
	o := Options{Endpoints: []string{e.Endpoint}}.WithEnv(func(k string) string { return env[k] })
	r := Collect(context.Background(), o)
	if r.Source.Degraded {
		t.Errorf("degraded with a v1/-only role: %s\n%s", r.Source.Message, fakekube.NoteLines(r.Notes))
	}
	if len(r.KVs) != 5 {
		t.Errorf("read %d keys, want the 5 under v1/", len(r.KVs))
	}
	fakekube.WantNotes(t, r.Notes, "cannot read etcd prefix models/ (model entries (Dynamo before v1/mdc))")
	assertNoSecret(t, r, password)

	// A wrong password: a note naming the flags, never the password.
	o.Password = "wrong-" + password
	r = Collect(context.Background(), o)
	if !r.Source.Degraded || len(r.KVs) != 0 {
		t.Errorf("wrong password not degraded: %+v", r.Source)
	}
	fakekube.WantNotes(t, r.Notes, "rejected the credentials", "--etcd-username/--etcd-password")
	assertNoSecret(t, r, o.Password)
}

func assertNoSecret(t *testing.T, r *Result, secret string) {
	t.Helper()
	text := fmt.Sprintf("%+v %+v", r.Source, r.Notes)
	if strings.Contains(text, secret) {
		t.Errorf("etcd password leaked: %s", text)
	}
}

func TestCollectEtcdUnreachable(t *testing.T) {
	start := time.Now()
	r := Collect(context.Background(), Options{Endpoints: []string{"http://user:pw-unreach-1234@127.0.0.1:1"}, DialTimeout: 300 * time.Millisecond, RequestTimeout: 300 * time.Millisecond})
	if time.Since(start) > 5*time.Second {
		t.Errorf("took %v", time.Since(start))
	}
	if !r.Source.Degraded || len(r.KVs) != 0 {
		t.Errorf("unreachable etcd: %+v", r.Source)
	}
	fakekube.WantNotes(t, r.Notes, "is unreachable (no connection within 300ms, --etcd-dial-timeout)", "port-forward etcd and pass --etcd-endpoints")
	if strings.Contains(fmt.Sprint(r.Notes, r.Source), "pw-unreach-1234") {
		t.Error("password from the endpoint URL leaked")
	}
	if len(r.Notes) != 1 {
		t.Errorf("one note expected, got:\n%s", fakekube.NoteLines(r.Notes))
	}

	// The dial timeout, not the (longer) request timeout, bounds an unreachable etcd.
	start = time.Now()
	r = Collect(context.Background(), Options{Endpoints: []string{"http://127.0.0.1:1"}, DialTimeout: 300 * time.Millisecond, RequestTimeout: time.Minute})
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("an unreachable etcd took %v with a 300ms dial timeout and a 1m request timeout", d)
	}
	fakekube.WantNotes(t, r.Notes, "no connection within 300ms")

	r = Collect(context.Background(), Options{Endpoints: []string{"http://127.0.0.1:1"}, Cert: "/nonexistent.pem"})
	fakekube.WantNotes(t, r.Notes, "--etcd-cert and --etcd-key must be given together")
	r = Collect(context.Background(), Options{})
	fakekube.WantNotes(t, r.Notes, "no etcd endpoints given")
}
