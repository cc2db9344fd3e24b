// Package simulate is the traffic simulator behind `kubectl dynamo simulate`:
// it replays a trace (pkg/simulate/trace) through the router model over a
// deployment's topology, in virtual time, once per what-if variant, and
// returns a Report (plain data read by the table printer, the charts in
// pkg/simulate/plot and -o json|yaml).
//
// It forks nothing of the router: every decision is pkg/explain's Plan.Decide,
// the very call explain-route makes for one request, over the same routing
// pools, so a one-request trace reproduces explain-route's decision exactly.
// Between decisions the simulator keeps the router's own state the way the
// router does — routecore.ActiveLedger books and frees each hop's requests
// (Dynamo's ActiveSequences), and the routecore.Index applies the KV events
// the engine model publishes as blocks are stored and evicted — and the
// round-robin rotation of the non-KV modes (routecore.RoundRobinCounter).
//
// The engine model (Engine) is a deliberate approximation: FIFO prefill at a
// throughput per GPU, processor-sharing decode with a step time linear in the
// active sequences, a per-block KV transfer time within and across domains,
// and an LRU prefix cache per dp rank. Its timings are estimates; the routing
// is exact. Memory is bounded by the deployment's KV index and the number of
// requests in flight: the trace is streamed, percentiles come from bounded
// histograms, and the time series merges buckets as it grows.
//
// The package performs no I/O of its own: the caller opens the trace and
// passes the snapshot (pkg/model) and the starting KV contents in.
package simulate
