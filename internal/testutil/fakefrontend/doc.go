// Package fakefrontend is a fake NVIDIA Dynamo frontend (and standalone KV
// indexer) over httptest, for tests of the code that reads a live deployment.
//
// New starts a server that answers like a recent Dynamo frontend:
//
//	GET  /metrics                        Config.Metrics (Prometheus text)
//	GET  /busy_threshold                 Config.BusyThreshold (JSON; 404 when "")
//	POST /tokenize                       {count, max_model_len, tokens, token_strs?}
//	                                     from Config.Tokenize; 405 for other methods
//	GET  /v1/kv-cache/placements/stream  NDJSON: placement_snapshot_begin, the
//	                                     configured events per source in batches of
//	                                     at most 64, placement_snapshot_end, then a
//	                                     live tail (placement_events and ping lines
//	                                     every Config.LiveInterval) until the client
//	                                     disconnects
//	POST /query                          a standalone KV indexer's answer built from
//	                                     Config.Scores
//
// Every request is recorded (method, path, body) so tests can assert that
// nothing mutating was sent (Server.Mutating), and the placements stream counts
// the clients that disconnected (Server.StreamsClosed, Server.WaitStreamsClosed),
// which proves that a reader stopped at placement_snapshot_end instead of
// following the live tail.
//
// Faults are injected per path: a status code (Config.Status), a garbage body
// (Config.Garbage), a request that never answers (Config.Hang), a placements
// stream that never reaches placement_snapshot_end (Config.StreamNeverEnds),
// extra raw lines (Config.ExtraLines) and a huge line (Config.HugeLineBytes).
package fakefrontend
