package inspect

import (
	"context"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// watchEtcd follows the Dynamo discovery prefixes in etcd with Watch requests
// (read-only, like the Range requests of CollectEtcd) and reports every change
// through the Watcher's debounce. A compacted revision (the etcd analogue of
// 410 Gone) or a broken watch is re-established from the current revision and
// counted as one change, since the collection re-reads the keys anyway; an
// unreachable etcd degrades the watcher until it answers again. It returns when
// ctx ends.
func (w *Watcher) watchEtcd(ctx context.Context, o EtcdOptions, t *watchTarget) {
	o = o.withDefaults()
	cfg, err := o.clientConfig()
	if err != nil {
		w.setState(t, "failing", err.Error())
		return
	}
	cfg.Context = ctx
	cli, err := clientv3.New(cfg)
	if err != nil {
		w.setState(t, "failing", err.Error())
		return
	}
	defer cli.Close()
	delay := w.o.RetryDelay
	for ctx.Err() == nil {
		if err := etcdWaitConnected(ctx, cli, o.DialTimeout); err != nil {
			w.setState(t, "failing", "unreachable")
			if !sleepCtx(ctx, delay) {
				return
			}
			delay = min(2*delay, 30*time.Second)
			continue
		}
		w.setState(t, "watching", "")
		delay = w.o.RetryDelay
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
		w.consumeEtcd(wctx, t, merged)
		cancel()
		if ctx.Err() == nil {
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
func etcdTargetName(o EtcdOptions) string {
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
