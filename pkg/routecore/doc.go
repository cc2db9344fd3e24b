// Package routecore is a pure, deterministic Go port of the decision logic of
// NVIDIA Dynamo's KV router: how a request's tokens become block hashes, how
// those hashes are matched against the KV-cache contents workers report, how every
// candidate worker is costed, and how the prefill pick constrains the decode pick
// under topology-aware KV transfer. kubectl-dynamo uses it to dry-run and explain
// routing; it must agree with the router bit for bit, so every rule below names
// the Rust code it mirrors (ai-dynamo/dynamo, lib/kv-router and lib/llm).
//
// # Hashing (hash.go)
//
// Token ids are u32, hashed little-endian, in full blocks only (a trailing partial
// block is ignored). A block's local hash is XXH3-64 with seed 1337, salted by the
// request's LoRA name (+XXH3(name, 0)) and cache namespace (+XXH3(ns, 1)) with
// wrapping additions (compute_block_hash_for_seq, compute_salt_hash). Sequence
// hashes chain blocks with XXH3(le64(parent) ‖ le64(local), 1337). Eagle workers
// hash windows of B+1 tokens at stride B. The XXH3 package is checked against
// vectors from the official C library, including inputs above 240 bytes.
//
// # Overlap (events.go, index.go, overlap.go)
//
// An Index is fed Dynamo RouterEvent JSON (stored, removed, cleared, per worker
// and dp rank and storage tier) and answers FindMatches the way the frontend's
// ConcurrentRadixTree does with early exit off: a worker's overlap is the length
// of the contiguous prefix of the request's blocks, from block 0, that it holds.
// Lower tiers (host, disk, external) extend a worker's device prefix. u64 ids and
// hashes are decoded from their JSON text and never pass through float64; hashes
// sent as negative i64 keep their bit pattern.
//
// # Selection (config.go, override.go, eligibility.go, cost.go, sampling.go,
// selector.go)
//
// Select scores every (worker, dp rank) candidate. Eligibility follows filter.rs
// and worker_monitor.rs: allow-list, fencing, overload from the busy thresholds
// (a worker is overloaded only when all its ranks are), required taints, dp range
// — each rejected candidate carries its reason. The cost is the newest
// DefaultWorkerScorer::worker_logit: overlap credit with optional decay, tier
// weights and shared-cache hits, prefill tokens clamped at zero and scaled, decode
// blocks, an active-request term, and the preferred-taint multiplier
// exp(−tanh(Σw)). At temperature 0 the minimum-cost candidates form the tie set —
// production breaks ties uniformly at random, and the Decision says so instead of
// pretending to be deterministic; above 0 every candidate gets its min–max
// normalised softmax probability and an injected draw picks one. Compatibility
// profiles (Profile) reproduce older releases where behaviour differs, such as
// the unclamped prefill cost.
//
// # Disaggregation and topology (topology.go, conditional.go, disagg.go)
//
// RouteDisaggregated runs the frontend PrefillRouter flow: conditional
// disaggregation (optional bypass to a decode worker), prefill selection with
// active-block tracking off, derivation of the decode constraint from the selected
// prefill worker's runtime config (get_kv_transfer_routing_constraints: required →
// required taint dynamo.topology/<domain>=<value>, preferred → weighted preferred
// taint, fail-closed rules), the merge with the user's constraints, and decode
// selection with the decode override (credit 0, no KV-reuse assumption, no prefill
// tracking). When the prefill pick is random, the decode outcome of every possible
// landing is evaluated; EvaluateAllPrefill gives the full matrix.
//
// # Purity
//
// The package imports only the standard library and github.com/zeebo/xxh3. It
// reads no clock, uses no global randomness (draws come through Rand or are
// passed explicitly), starts no goroutines, logs nothing, and orders every output
// canonically by (worker id, dp rank). Every decision returns its evidence —
// per-candidate cost terms, eligibility, probabilities, ties, derived constraints
// and the error kind — as data.
package routecore
