package kubeenv

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Etcd is a running etcd server (an etcd v3.6 binary) on loopback, plain HTTP.
type Etcd struct {
	// Endpoint is the client URL, e.g. http://127.0.0.1:41234; use it with
	// go.etcd.io/etcd/client/v3 or etcdctl --endpoints.
	Endpoint string
	// DataDir is the member's data directory.
	DataDir string
	// LogPath is the file with etcd's output.
	LogPath string

	proc *process
}

// StartEtcd starts a separate etcd server for t (for example a stand-in for a
// Dynamo discovery etcd) and stops it with t.Cleanup. It skips or fails t like
// Start when the binaries are missing.
func StartEtcd(t testing.TB) *Etcd {
	t.Helper()
	bin := findOrSkip(t, "")
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	e, err := startEtcd(ctx, bin, dir)
	if err != nil {
		t.Fatalf("kubeenv: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("kubeenv: last lines of %s:\n%s", e.LogPath, tailFile(e.LogPath, 30))
		}
		if err := e.Stop(); err != nil {
			t.Errorf("kubeenv: %v", err)
		}
	})
	return e
}

// Stop kills the etcd process and waits for it to exit. The data directory is
// left to its owner. Stop is idempotent.
func (e *Etcd) Stop() error {
	if e == nil || e.proc == nil {
		return nil
	}
	return e.proc.stop(30 * time.Second)
}

// PID returns the etcd process id (also its process-group id).
func (e *Etcd) PID() int { return e.proc.pid() }

// startEtcd starts etcd with its data and log in dir and waits until it is
// healthy. Ports are picked free; a lost race for one is retried.
func startEtcd(ctx context.Context, bin Binaries, dir string) (*Etcd, error) {
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		e, err := startEtcdOnce(ctx, bin, dir, attempt)
		if err == nil {
			return e, nil
		}
		lastErr = err
		if !strings.Contains(err.Error(), "address already in use") {
			break
		}
	}
	return nil, lastErr
}

func startEtcdOnce(ctx context.Context, bin Binaries, dir string, attempt int) (*Etcd, error) {
	ports, err := freePorts(2)
	if err != nil {
		return nil, err
	}
	client := "http://127.0.0.1:" + strconv.Itoa(ports[0])
	peer := "http://127.0.0.1:" + strconv.Itoa(ports[1])
	dataDir := filepath.Join(dir, fmt.Sprintf("etcd-data-%d", attempt))
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, err
	}
	logPath := filepath.Join(dir, "etcd.log")
	args := []string{
		"--name=kubeenv",
		"--data-dir=" + dataDir,
		"--listen-client-urls=" + client,
		"--advertise-client-urls=" + client,
		"--listen-peer-urls=" + peer,
		"--initial-advertise-peer-urls=" + peer,
		"--initial-cluster=kubeenv=" + peer,
		"--initial-cluster-state=new",
		"--unsafe-no-fsync", // throwaway data: no fsync makes writes much faster
		"--log-level=warn",
	}
	p, err := startProcess("etcd", bin.Etcd, args, logPath)
	if err != nil {
		return nil, err
	}
	e := &Etcd{Endpoint: client, DataDir: dataDir, LogPath: logPath, proc: p}
	hc := &http.Client{Timeout: 2 * time.Second}
	err = poll(ctx, 50*time.Millisecond, "etcd "+client+"/health", []*process{p}, func(ctx context.Context) (bool, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, client+"/health", nil)
		if err != nil {
			return false, err
		}
		resp, err := hc.Do(req)
		if err != nil {
			return false, err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode == http.StatusOK && strings.Contains(string(body), `"true"`), nil
	})
	if err != nil {
		_ = e.Stop()
		return nil, fmt.Errorf("etcd did not become healthy: %w\nlast lines of %s:\n%s", err, logPath, tailFile(logPath, 30))
	}
	return e, nil
}

// freePorts returns n distinct free TCP ports on 127.0.0.1. Another process can
// take one before it is used; callers retry on "address already in use".
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("find a free port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
