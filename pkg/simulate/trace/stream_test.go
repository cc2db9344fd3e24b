package trace

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/hermetic"
)

// genTrace is an io.Reader that writes n Mooncake lines on the fly, so the
// trace itself never sits in memory.
type genTrace struct {
	n, i int
	buf  []byte
}

func (g *genTrace) Read(p []byte) (int, error) {
	for len(g.buf) == 0 {
		if g.i >= g.n {
			return 0, io.EOF
		}
		// four hash ids of 16 tokens: the first shared by all, the second
		// by one request in eight, the rest unique
		g.buf = fmt.Appendf(g.buf[:0], `{"timestamp": %d, "input_length": %d, "output_length": %d, "hash_ids": [0, %d, %d, %d]}`+"\n",
			g.i/10, 60+g.i%5, 1+g.i%300, 1+g.i%8, 100+2*g.i, 101+2*g.i)
		g.i++
	}
	n := copy(p, g.buf)
	g.buf = g.buf[n:]
	return n, nil
}

// TestStreamingMemoryIsBounded reads a 1,000,000-line trace through an
// io.Reader and checks that the heap stays within a few MiB of where it
// started: the reader holds one line and one request, never the trace.
func TestStreamingMemoryIsBounded(t *testing.T) {
	n := hermetic.Size(100_000, 1_000_000, 5_000_000)
	r, err := Open(&genTrace{n: n}, Mooncake, Options{TraceBlockSize: 16})
	if err != nil {
		t.Fatal(err)
	}
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	base, peak := ms.HeapAlloc, ms.HeapAlloc
	var tokens int
	count := 0
	for {
		req, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		tokens += len(req.Tokens)
		count++
		if count%50_000 == 0 {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
		}
	}
	runtime.ReadMemStats(&ms)
	if count != n {
		t.Fatalf("read %d requests, want %d", count, n)
	}
	// Live data is a few KiB; HeapAlloc also counts garbage not yet
	// collected, which the runtime keeps near its 4 MiB minimum heap target.
	const limit = 32 << 20
	if grew := int64(peak) - int64(base); grew > limit {
		t.Fatalf("the heap grew by %d bytes over %d requests (%d tokens), want at most %d", grew, n, tokens, limit)
	}
	t.Logf("%d requests, %d tokens, %d MiB allocated in all, heap peak %+d KiB over the start",
		n, tokens, ms.TotalAlloc>>20, (int64(peak)-int64(base))>>10)
}

// TestAllocationsPerRequest bounds the allocations of one Mooncake row: the
// decoder's and one fresh Tokens slice, independent of the trace's length.
func TestAllocationsPerRequest(t *testing.T) {
	line := `{"timestamp": 0, "input_length": 6758, "output_length": 500, "hash_ids": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]}` + "\n"
	const runs = 1000
	r, err := Open(strings.NewReader(strings.Repeat(line, runs+1)), Mooncake, Options{})
	if err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(runs, func() {
		if _, err := r.Next(); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 16 {
		t.Fatalf("%.1f allocations per request, want at most 16", allocs)
	}
	t.Logf("%.1f allocations per request", allocs)
}
