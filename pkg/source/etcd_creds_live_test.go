package source

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/fakekube"
	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/kubeenv"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/etcd"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/kube"
)

// tapProxy is a TCP proxy in front of an etcd that keeps every byte the client
// sent: etcd's gRPC is plain HTTP/2 here, so a password sent in an
// Authenticate request is in the clear in what it keeps.
type tapProxy struct {
	ln   net.Listener
	mu   sync.Mutex
	sent bytes.Buffer
}

func startTap(t *testing.T, target string) *tapProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &tapProxy{ln: ln}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				up, err := net.Dial("tcp", target)
				if err != nil {
					return
				}
				defer up.Close()
				go io.Copy(c, up) //nolint:errcheck // the test reads only the client's side
				buf := make([]byte, 32<<10)
				for {
					n, err := c.Read(buf)
					if n > 0 {
						p.mu.Lock()
						p.sent.Write(buf[:n])
						p.mu.Unlock()
						if _, werr := up.Write(buf[:n]); werr != nil {
							return
						}
					}
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	return p
}

func (p *tapProxy) url() string { return "http://" + p.ln.Addr().String() }

func (p *tapProxy) received(secret string) (bool, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return bytes.Contains(p.sent.Bytes(), []byte(secret)), p.sent.Len()
}

// TestLiveEtcdCredentialsOnlyWhereTheUserSentThem: a pod of the deployment says
// DYN_DISCOVERY_BACKEND=etcd and ETCD_ENDPOINTS=<an endpoint its author
// controls>. Before, a live collection sent the etcd username and password
// (KDYN_ETCD_*) there. Now an auto-detected endpoint gets no credentials and no
// client certificate, and a note says so; the user gets them sent by naming
// the endpoint (--etcd-endpoints) or opting in (--etcd-trust-detected), which
// are also the positive controls that the tap would see a password.
func TestLiveEtcdCredentialsOnlyWhereTheUserSentThem(t *testing.T) {
	e := kubeenv.Start(t, kubeenv.Options{CRDs: []string{"../../test/crds"}})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	etcdURL, err := url.Parse(e.EtcdEndpoint)
	if err != nil {
		t.Fatal(err)
	}
	tap := startTap(t, etcdURL.Host)
	ns, err := e.NewNamespace(ctx, "creds")
	if err != nil {
		t.Fatal(err)
	}
	pod := fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: llama-decode-0
  namespace: %s
  labels: {nvidia.com/dynamo-graph-deployment-name: llama, nvidia.com/dynamo-component-type: worker}
spec:
  containers:
  - name: main
    image: nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.0.0
    command: [python3, -m, dynamo.vllm, --is-decode-worker]
    env:
    - {name: DYN_DISCOVERY_BACKEND, value: etcd}
    - {name: ETCD_ENDPOINTS, value: "%s"}
`, ns, tap.url())
	if _, err := e.ApplyYAML(ctx, []byte(pod)); err != nil {
		t.Fatal(err)
	}
	const secret = "hunter2-etcd-secret"
	creds := etcd.Options{Username: "kdyn", Password: secret, DialTimeout: 3 * time.Second, RequestTimeout: 3 * time.Second}

	collect := func(t *testing.T, o CollectOptions) *raw.Bundle {
		t.Helper()
		api, err := kube.NewAPI(e.RESTConfig)
		if err != nil {
			t.Fatal(err)
		}
		o.Kube, o.Namespace, o.NoFrontend = api, ns, true
		b, err := Collect(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}

	t.Run("auto-detected: no credentials sent", func(t *testing.T) {
		b := collect(t, CollectOptions{Etcd: creds})
		got, n := tap.received(secret)
		if n == 0 {
			t.Fatalf("nothing reached the detected endpoint: the test does not exercise detection\n%s", fakekube.NoteLines(b.Notes))
		}
		if got {
			t.Errorf("the etcd password was sent to %s, an endpoint named by a pod", tap.url())
		}
		notes := fakekube.NoteLines(b.Notes)
		if !strings.Contains(notes, "etcd: reading "+tap.url()+", auto-detected from the ETCD_ENDPOINTS of the deployment's pods, without the configured credentials") {
			t.Errorf("no note says which endpoint was read and why:\n%s", notes)
		}
		if strings.Contains(notes, secret) {
			t.Errorf("a note prints the password:\n%s", notes)
		}
	})
	t.Run("opted in with --etcd-trust-detected", func(t *testing.T) {
		b := collect(t, CollectOptions{Etcd: creds, TrustDetectedEtcd: true})
		if got, _ := tap.received(secret); !got {
			t.Errorf("with --etcd-trust-detected the password did not reach the endpoint: the tap cannot see it\n%s", fakekube.NoteLines(b.Notes))
		}
	})
	t.Run("named by the user with --etcd-endpoints", func(t *testing.T) {
		tap.mu.Lock()
		tap.sent.Reset()
		tap.mu.Unlock()
		named := creds
		named.Endpoints = []string{tap.url()}
		collect(t, CollectOptions{Etcd: named})
		if got, _ := tap.received(secret); !got {
			t.Error("the password did not reach an endpoint the user named")
		}
	})
}
