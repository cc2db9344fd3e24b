package memguard

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"testing"
	"time"
)

// Guard watches one test's memory.
type Guard struct {
	name     string
	limit    uint64
	baseline uint64
	oldLimit int64

	mu   sync.Mutex
	peak uint64
	stop chan struct{}
	done chan struct{}
}

var samples = []metrics.Sample{
	{Name: "/memory/classes/total:bytes"},
	{Name: "/memory/classes/heap/released:bytes"},
}

// mapped is the memory the runtime holds from the OS and has not released: the
// process's resident Go memory, about.
func mapped() uint64 {
	metrics.Read(samples)
	total, released := samples[0].Value.Uint64(), samples[1].Value.Uint64()
	if released > total {
		return 0
	}
	return total - released
}

// Watch starts watching: from now until Stop, the memory the runtime maps
// beyond what it mapped at the start may not exceed limit bytes. The garbage
// collector is asked to keep the heap under the same bound (a soft limit), so
// garbage does not count against the code under test. When the bound is
// passed the test binary ends (a panic) with a message naming the test
// and the figures (a failing test then cannot take the machine down with it).
// Tests that use Watch must not run in parallel with each other.
func Watch(t testing.TB, limit uint64) *Guard {
	t.Helper()
	runtime.GC()
	debug.FreeOSMemory()
	g := &Guard{name: t.Name(), limit: limit, baseline: mapped(), stop: make(chan struct{}), done: make(chan struct{})}
	g.oldLimit = debug.SetMemoryLimit(int64(g.baseline + limit*3/4))
	go g.run()
	t.Cleanup(func() { g.Stop() })
	return g
}

func (g *Guard) run() {
	defer close(g.done)
	tick := time.NewTicker(time.Millisecond)
	for {
		select {
		case <-g.stop:
			tick.Stop()
			return
		case <-tick.C:
		}
		m := mapped()
		used := uint64(0)
		if m > g.baseline {
			used = m - g.baseline
		}
		g.mu.Lock()
		g.peak = max(g.peak, used)
		g.mu.Unlock()
		if used > g.limit {
			// A panic on this goroutine ends the test binary at once, with
			// the message: the code under test cannot be stopped otherwise.
			panic(fmt.Sprintf("--- FAIL: %s: memory bound broken: the runtime mapped %d MiB beyond the %d MiB it held at the start, over the test's limit of %d MiB; ending the test binary",
				g.name, used>>20, g.baseline>>20, g.limit>>20))
		}
	}
}

// Stop ends the watch and returns the peak seen, in bytes above the
// baseline. It may be called more than once.
func (g *Guard) Stop() uint64 {
	select {
	case <-g.stop:
	default:
		close(g.stop)
		<-g.done
		debug.SetMemoryLimit(g.oldLimit)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.peak
}

// MiB formats bytes for test logs.
func MiB(b uint64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }
