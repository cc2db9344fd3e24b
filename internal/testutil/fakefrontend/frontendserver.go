package fakefrontend

import (
	"net/http"
	"strings"
	"sync"
	"time"
)

// SampleMetrics is a frontend /metrics answer with per-worker loads.
const SampleMetrics = `# HELP dynamo_frontend_worker_active_decode_blocks Active KV blocks per worker
# TYPE dynamo_frontend_worker_active_decode_blocks gauge
dynamo_frontend_worker_active_decode_blocks{dp_rank="0",worker_id="7587885012467105317",worker_type="decode"} 42
dynamo_frontend_worker_active_prefill_tokens{dp_rank="0",worker_id="7587885012467105317",worker_type="prefill"} 1024
dynamo_frontend_router_workers{model="m",state="available",worker_type="decode"} 2
process_start_time_seconds 1.7e+09
`

// SampleBusy is a frontend GET /busy_threshold answer.
const SampleBusy = `{"thresholds":[{"model":"m","active_decode_blocks_threshold":0.85,"active_prefill_tokens_threshold":null,"active_prefill_tokens_threshold_frac":null}]}`

// FrontendServer serves /metrics and /busy_threshold per mode, recording every
// request's method and path.
type FrontendServer struct {
	Mu   sync.Mutex
	Reqs []string
}

// Handler serves /metrics and /busy_threshold in the given mode ("" for the
// samples; see the cases below for the failure modes).
func (f *FrontendServer) Handler(mode string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.Mu.Lock()
		f.Reqs = append(f.Reqs, r.Method+" "+r.URL.Path)
		f.Mu.Unlock()
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
			_, _ = w.Write([]byte("<html><body>this is not metrics</body></html>\n"))
			return
		case mode == "oversized":
			_, _ = w.Write([]byte(strings.Repeat("x_total 1\n", 1000)))
			return
		case r.URL.Path == "/metrics":
			_, _ = w.Write([]byte(SampleMetrics))
		case r.URL.Path == "/busy_threshold" && mode == "old":
			http.NotFound(w, r)
		case r.URL.Path == "/busy_threshold" && mode == "badjson":
			_, _ = w.Write([]byte("{not json"))
		case r.URL.Path == "/busy_threshold":
			_, _ = w.Write([]byte(SampleBusy))
		default:
			http.NotFound(w, r)
		}
	})
}
