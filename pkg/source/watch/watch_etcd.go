package watch

import (
	"context"
	"strings"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/connectivity"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/etcd"
)

// etcdWatchKeepAlive is how often the watch's connection is pinged when idle,
// so that a connection that died silently (a partition: no reset, no close) is
// noticed. etcd refuses pings more often than every 5 s by default
// (--grpc-keepalive-min-time), gRPC sends none more often than every 10 s.
const etcdWatchKeepAlive = 10 * time.Second

// staleSource describes an unreachable target; w.mu must be held.
func (t *watchTarget) staleSource() model.StaleSource {
	return model.StaleSource{Kind: model.SourceEtcd, Name: t.name, Reason: t.reason, Since: t.since}
}

// setUnreachable marks t unreachable (stale) for reason, keeping the first
// reason and time while it stays unreachable.
func (w *Watcher) setUnreachable(t *watchTarget, reason string) {
	w.mu.Lock()
	if t.state == "unreachable" {
		w.mu.Unlock()
		return
	}
	t.state, t.reason, t.since = "unreachable", reason, time.Now()
	w.mu.Unlock()
	w.poke()
}

// watchEtcd follows the Dynamo discovery prefixes in etcd with Watch requests
// (read-only, like the Range requests of etcd.Collect) and reports every change
// through the Watcher's debounce. A compacted revision (the etcd analogue of
// 410 Gone) or a broken watch is re-established from the current revision and
// counted as one change, since the collection re-reads the keys anyway.
//
// An etcd that cannot be reached — at the start, or mid-watch when the
// connection is lost and not back within the dial timeout (etcd stopped, a
// partition found by keepalive pings) — makes the target "unreachable": the
// watcher is degraded and reports the source as stale (Status.Stale).
// The watch itself is given up meanwhile, and reconnection is retried with a
// doubling delay (up to 30 s); once etcd answers, the watch restarts from the
// current revision and one change is reported, so that the collection re-reads
// the keys changed while it was unreachable. It returns when ctx ends.
func (w *Watcher) watchEtcd(ctx context.Context, o etcd.Options, t *watchTarget) {
	o = o.WithDefaults()
	cfg, err := o.ClientConfig()
	if err != nil {
		w.setState(t, "failing", err.Error())
		return
	}
	cfg.Context = ctx
	cfg.DialKeepAliveTime, cfg.DialKeepAliveTimeout = etcdWatchKeepAlive, o.DialTimeout
	cli, err := clientv3.New(cfg)
	if err != nil {
		w.setState(t, "failing", err.Error())
		return
	}
	defer cli.Close()
	conn := cli.ActiveConnection()
	delay := w.o.RetryDelay
	for ctx.Err() == nil {
		if err := etcd.WaitConnected(ctx, cli, o.DialTimeout); err != nil {
			if ctx.Err() != nil {
				return
			}
			w.setUnreachable(t, "no connection within --etcd-dial-timeout "+o.DialTimeout.String())
			if !sleepCtx(ctx, delay) {
				return
			}
			delay = min(2*delay, 30*time.Second)
			// Try again now, not after gRPC's own reconnect backoff (up to 2 min).
			conn.ResetConnectBackoff()
			continue
		}
		delay = w.o.RetryDelay
		wasDown := w.targetState(t) == "unreachable"
		wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
		merged := make(chan clientv3.WatchResponse)
		for _, p := range o.Prefixes {
			ch := cli.Watch(wctx, p.Prefix, clientv3.WithPrefix())
			go func() {
				for r := range ch {
					select {
					case merged <- r:
					case <-wctx.Done():
						return
					}
				}
			}()
		}
		w.setState(t, "watching", "")
		if wasDown {
			// The keys may have changed while etcd was unreachable: the
			// collection re-reads them.
			w.change()
		}
		var lost atomic.Bool
		monitored := make(chan struct{})
		go func() {
			defer close(monitored)
			if etcdWaitLost(wctx, cli, o.DialTimeout) {
				lost.Store(true)
				cancel()
			}
		}()
		w.consumeEtcd(wctx, t, merged)
		cancel()
		<-monitored
		switch {
		case ctx.Err() != nil:
			return
		case lost.Load():
			w.setUnreachable(t, "connection lost, not back within --etcd-dial-timeout "+o.DialTimeout.String())
			conn.ResetConnectBackoff()
		default:
			// The watch broke (compaction, leader loss, closed stream): the
			// keys may have changed meanwhile.
			w.setState(t, "re-listing", "")
			w.change()
			if !sleepCtx(ctx, w.o.RetryDelay) {
				return
			}
		}
	}
}

// etcdWaitLost blocks while the connection to etcd is up, and returns true
// once it has been down for grace without coming back; false when ctx ends.
func etcdWaitLost(ctx context.Context, cli *clientv3.Client, grace time.Duration) bool {
	conn := cli.ActiveConnection()
	for {
		if st := conn.GetState(); st == connectivity.Ready {
			if !conn.WaitForStateChange(ctx, st) {
				return false
			}
			continue
		}
		if etcd.WaitConnected(ctx, cli, grace) == nil {
			continue // a blip: back within grace
		}
		return ctx.Err() == nil
	}
}

// consumeEtcd reads watch responses until one fails or ctx ends.
func (w *Watcher) consumeEtcd(ctx context.Context, t *watchTarget, ch <-chan clientv3.WatchResponse) {
	for {
		select {
		case <-ctx.Done():
			return
		case r := <-ch:
			if err := r.Err(); err != nil || r.Canceled {
				reason := "watch canceled"
				if err != nil {
					reason = err.Error()
				}
				w.mu.Lock()
				t.reason = reason
				w.mu.Unlock()
				return
			}
			if len(r.Events) > 0 {
				w.change()
			}
		}
	}
}

// etcdTargetName names the etcd watch for the status line.
func etcdTargetName(o etcd.Options) string {
	return "etcd " + strings.Join(o.Endpoints, ",")
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
