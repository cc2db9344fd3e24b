package inspect

import (
	"net/http"
	"strings"
	"sync"
	"time"
)

const sampleMetrics = `# HELP dynamo_frontend_worker_active_decode_blocks Active KV blocks per worker
# TYPE dynamo_frontend_worker_active_decode_blocks gauge
dynamo_frontend_worker_active_decode_blocks{dp_rank="0",worker_id="7587885012467105317",worker_type="decode"} 42
dynamo_frontend_worker_active_prefill_tokens{dp_rank="0",worker_id="7587885012467105317",worker_type="prefill"} 1024
dynamo_frontend_router_workers{model="m",state="available",worker_type="decode"} 2
process_start_time_seconds 1.7e+09
`

const sampleBusy = `{"thresholds":[{"model":"m","active_decode_blocks_threshold":0.85,"active_prefill_tokens_threshold":null,"active_prefill_tokens_threshold_frac":null}]}`

// frontendServer serves /metrics and /busy_threshold per mode, recording every
// request's method and path.
type frontendServer struct {
	mu   sync.Mutex
	reqs []string
}

func (f *frontendServer) handler(mode string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.reqs = append(f.reqs, r.Method+" "+r.URL.Path)
		f.mu.Unlock()
		switch {
		case mode == "slow":
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
			return
		case mode == "500":
			http.Error(w, "internal error", http.StatusInternalServerError)
			return
		case mode == "garbage":
			w.Write([]byte("<html><body>this is not metrics</body></html>\n"))
			return
		case mode == "oversized":
			w.Write([]byte(strings.Repeat("x_total 1\n", 1000)))
			return
		case r.URL.Path == "/metrics":
			w.Write([]byte(sampleMetrics))
		case r.URL.Path == "/busy_threshold" && mode == "old":
			http.NotFound(w, r)
		case r.URL.Path == "/busy_threshold" && mode == "badjson":
			w.Write([]byte("{not json"))
		case r.URL.Path == "/busy_threshold":
			w.Write([]byte(sampleBusy))
		default:
			http.NotFound(w, r)
		}
	})
}
