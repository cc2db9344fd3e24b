// Package audit checks the KV router's real decisions, as its logs record
// them, against pkg/routecore: `kubectl dynamo audit-routes` and
// `explain-route --request-id` are built on it.
//
// # What the router logs
//
// Every format string below was read in ai-dynamo/dynamo at the commit named;
// the parser accepts each of them, as text (with or without ANSI colour, as
// tracing-subscriber's compact formatter writes it) and as the JSON lines of
// DYN_LOGGING_JSONL (lib/runtime/src/logging.rs CustomJsonFormatter @b4d7ad45:
// u64 fields are JSON integers, f64 fields JSON numbers, `?` fields strings of
// their Debug form, and a string field that parses as JSON becomes that value).
//
//   - INFO "Selected worker", once per decision, with structured fields
//     router_mode, request_id, worker_id, worker_type, dp_rank, logit (the cost
//     after the preferred-taint multiplier), effective_cached_blocks,
//     host_pinned_blocks, disk_blocks, total_kv_blocks; the decode variant has
//     neither effective_cached_blocks nor total_kv_blocks; pinned requests log
//     "Selected pinned worker: worker_type={}, worker_id={} dp_rank={:?},
//     logit: {:.3}, effective cached blocks: {:.2}"
//     (lib/kv-router/src/scheduling/selector/mod.rs log_selection @07a6c9ce).
//   - INFO, older selectors: "Selected worker: worker_type={}, worker_id={}
//     dp_rank={:?}, logit: {:.3}, effective cached blocks: {:.2},
//     host_pinned blocks: {}, disk blocks: {}, tree size: {}{, total blocks: {}}"
//     and the decode form "…, logit: {:.3}, host_pinned blocks: {}, disk
//     blocks: {}" (selector/default.rs, stored version 52237991654), and the
//     first generation "Selected worker: worker_id={} dp_rank={:?}, logit:
//     {:.3}, cached blocks: {}, tree size: {}{, total blocks: {}}"
//     (lib/kv-router/src/scheduling/selector.rs @ccd1706e).
//   - DEBUG, one line per candidate, fields request_id and worker_type:
//     "{Formula|Pinned formula|Session affinity formula} for worker_id={}
//     dp_rank={:?} with {:.2} effective cached blocks: {logit:.3} =
//     prefill_load_scale * adjusted_prefill_blocks + decode_blocks +
//     active_request_cost_blocks = {:.3} * {:.3} + {:.3} + {:.3}
//     (raw_prefill_blocks: {:.3}, overlap_credit_blocks: {:.3},
//     overlap_credit_decay: {:.3})", its shared-cache form ("… effective cached
//     blocks, {} shared blocks beyond device (multiplier={:.2}): …") and the
//     decode branch ("… = max(0, decode_blocks - overlap_credit_blocks) +
//     active_request_cost_blocks = max(0, {:.3} - {:.3}) + {:.3}", without the
//     two fields @07a6c9ce, with them @a4bdb9bf)
//     (lib/kv-router/src/scheduling/selector/default.rs @a4bdb9bf); the logit
//     is printed before the preferred-taint multiplier. Older selectors print
//     "… with {:.2} effective cached blocks: {:.3} = {w:.1} * prefill_blocks +
//     decode_blocks = {w:.1} * {:.3} + {:.3}" and a shared-cache form with
//     "(prefill_tokens: {} -> {})" (stored version 52237991654), and the first
//     generation "… with {} cached blocks: …" (selector.rs @ccd1706e).
//   - DEBUG "[ROUTING] Best: worker_{} dp_rank={} with {}/{} blocks overlap",
//     fields request_id, worker_id, dp_rank, overlap_blocks, total_blocks
//     (lib/llm/src/kv_router/push_router/selection.rs @00067c31; parsed the
//     same way by upstream's tests/utils/router_logs.py @231c36c2).
//   - DEBUG "[ROUTING_INPUT] request local hashes", fields request_id,
//     isl_tokens, block_size, num_blocks, local_hashes
//     (lib/llm/src/kv_router.rs log_routing_input_hashes, stored version
//     57071014409).
//
// # Reading
//
// ReadLogs reads one log stream (what `kubectl logs` prints, plain or gzip),
// bounded in bytes and in line length, and returns the router's records. Log
// text is hostile input: lines that are too long are skipped and counted, a
// marker line that does not follow its grammar is counted as malformed, ids
// are kept as text, u64 worker ids and hashes are parsed from their digits and
// never pass through float64, and nothing read is printed without the
// printers' escaping (pkg/termsafe).
//
// # Joining
//
// Join groups the lines of one decision by request id and hop (worker_type:
// "prefill" for the prefill router, "decode" for the frontend's router, which
// serves aggregated deployments too): the Formula lines of a hop are closed by
// its Selected line; the [ROUTING_INPUT] line before it and the [ROUTING] Best
// line after it join the same decision. Decisions of different requests may
// interleave. A decision whose DEBUG lines are missing is kept, and the checks
// that need them say they could not run.
//
// # Checking
//
// Audit runs five checks on every decision it can and counts, per check and
// per hop, how many decisions each covered and how many agreed:
//
//  1. arithmetic: the logged terms give the logged logit in the router's
//     operation order, to the printed precision;
//  2. choice: at temperature 0 the pick is a minimum of the costs (ties within
//     rounding); above 0 the pick's softmax probability
//     (routecore.SoftmaxProbabilities) is not below a threshold;
//  3. transfer: the preferred-taint multiplier implied by the Selected and
//     Formula logits is the one routecore derives from the transfer policy and
//     the prefill and decode workers' domains (routecore.DeriveTransferConstraints,
//     routecore.PreferredTaintMultiplier), and under required enforcement every
//     scored decode worker carries the prefill pick's domain;
//  4. state: the overlap routecore's index computes from the logged local
//     hashes is the logged effective cached blocks;
//  5. candidates: the workers the model holds eligible are the ones the router
//     scored, and no scored worker is unknown to the model.
//
// Each disagreement names the worker, the differing field, the logged and the
// expected value and the most likely cause.
//
// The package imports the standard library, pkg/model, pkg/routecore and
// pkg/explain; it reads no source and performs no I/O besides the reader it is
// given.
package audit
