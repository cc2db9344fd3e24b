// Package trace turns traffic traces into a stream of requests with token
// ids for `kubectl dynamo simulate`, which replays them through the
// routecore port of Dynamo's KV router.
//
// Readers stream: they hold one line and one request (mooncake-delta also
// keeps each open session's prompt as hash ids, and dynamo-request-trace a
// reorder window), so a trace of any length reads in bounded memory. Input
// is treated as hostile: a line is at most Options.MaxLineBytes, a prompt at
// most Options.MaxInputTokens tokens, the hash ids at most what that many
// tokens need, an output at most MaxOutputTokens; every error names its
// line (LineError); u64 ids and hashes are parsed as integers, never through
// float64, and timestamps as exact decimals. Gzip input is decompressed on
// the fly. Arrivals never go back: the JSON-lines formats must be sorted by
// timestamp (every Mooncake FAST'25 trace file is), and a row earlier than
// the one before it is an error, not clamped, since a streaming reader
// cannot sort and clamping would change the workload silently.
//
// # From hash ids to tokens
//
// A hash id stands for one block of Options.TraceBlockSize tokens (512 in
// the Mooncake traces). TokensForHashIDs maps it to that many token ids in
// [0, 2^VocabBits) with a SplitMix64 mix of the id and the position in the
// block (the formula is in tokens.go and pinned by a test), so rows that
// share their first k hash ids share their first k·TraceBlockSize tokens and
// therefore every router block inside them, at any router block size,
// whether it divides the trace block size or not; different ids give
// different tokens (equal 16-token runs have probability 2^-272). The last
// block is cut at the row's input length. When the input length exceeds what
// the hash ids cover, the rest are tokens unique to the request, derived from
// its line number and timestamp (so unique within one trace file).
//
// # Formats
//
// mooncake: JSON lines {"timestamp": ms, "input_length": N, "output_length":
// M, "hash_ids": [...]}, as released in kvcache-ai/Mooncake
// FAST25-release/traces/*.jsonl (README there, commit 3cca71d). timestamp may
// be fractional (converters write 1500.0) and may be spelled created_time;
// input_length defaults to len(hash_ids)·TraceBlockSize; a row with more hash
// ids than its input length needs is an error (a wrong trace block size
// shows up this way); session_id (string or integer) becomes
// Request.Session. Rows with a delay but no timestamp (Dynamo's closed-loop
// sessions) are rejected: their arrival depends on when the previous turn
// finishes, which a reader cannot know.
//
// mooncake-delta: the same rows, but a row with a session_id carries only
// the prompt segment its turn adds, as in ai-dynamo/dynamo's DynoSim
// (PR #9653, docs/dynosim/trace-formats.md "Mooncake Delta", and the
// TraceFileFormat::MooncakeDelta doc comment in lib/mocker/src/loadgen:
// "accumulates each generated output and the next input delta per session
// before computing engine block hashes"). A turn's prompt is the previous
// turn's prompt, then the previous turn's output, then its own delta. The
// trace does not record what the model generated, so each turn's output is
// stood in for by output_length tokens unique to that turn. Rows without a
// session_id are whole prompts. Detect cannot tell this format from
// mooncake and never returns it.
//
// dynamo-request-trace: Dynamo's request trace (schema
// "dynamo.request.trace.v1", written with DYN_REQUEST_TRACE; replay hashes
// since ai-dynamo/dynamo PR #8998, direct replay as `--trace-format dynamo`
// since PR #10944). Fields follow lib/llm/src/request_trace/types.rs and the
// replay loader lib/data-gen/src/request_trace/load.rs: request_end records
// give request.request_received_ms (Unix ms, the arrival),
// request.output_tokens and request.replay{trace_block_size, input_length,
// input_sequence_hashes}, one chained sequence hash per block including a
// partial last one, so equal hashes mean equal prefixes and each maps to
// tokens like a Mooncake hash id at the record's own trace_block_size
// (Options.TraceBlockSize does not apply; mixed sizes are an error, as
// upstream). A record may be wrapped as {"event": {...}}; request_payload
// and tool_* records are skipped, a request_payload line even when it is
// longer than MaxLineBytes. Records are written when requests end, so the
// reader puts them back in arrival order through a window of 4,096 records;
// one later than that is an error. agent_context.session_id becomes
// Request.Session. Not replayed: the agentic request graph (tool waits,
// spawn and join edges), completion_sequence_hashes (generated-output
// identity) and duplicate request_id checks (they would need memory for the
// whole trace). A record without request.replay is an error saying the trace
// was captured without replay hashes.
//
// tokens: JSON lines {"timestamp": ms, "tokens": [ids], "output_length": N,
// "session_id": s}; tokens are u32; timestamp is optional, a row without one
// arriving with the row before it (at 0 for the first).
//
// texts: JSON lines {"timestamp": ms, "text": "...", "output_length": N,
// "session_id": s}, tokenized with Options.Tokenize (the simulator passes
// pkg/tokenizer); Open fails without one.
//
// synthetic: no file; Synthetic parses --synthetic rate=…,isl=…,osl=…,
// prefix-share=…,duration=…[,prefixes=N][,requests=N] and makes Poisson
// arrivals with a share of each prompt drawn from shared prefixes,
// deterministic for a seed (math/rand/v2 PCG).
//
// testdata/README.md describes the Mooncake excerpts the tests read and the
// full conversation trace's statistics.
package trace
