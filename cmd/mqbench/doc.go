// Command mqbench drives a running mqgate over its public HTTP API (API.md)
// and measures it.
//
// Modes:
//
//	mqbench publish          N clients publish single messages or batches
//	mqbench baseline-server  a bare net/http server with the publish routes'
//	                         request and answer shapes that stores nothing
//	mqbench compare          the same publish load against baseline-server (a
//	                         child process) and the gateway, alternating A/B,
//	                         reporting medians and the gateway/baseline ratio
//	mqbench consume          pre-publish, then N consumers receive+ack
//	mqbench latency          publish at a fixed rate, measure publish→receive
//	mqbench webhook          publish at a fixed rate to a push group whose
//	                         webhook mqbench serves, measure publish→webhook
//	mqbench streams          the WebSocket streams beside REST in one run:
//	                         publish, consume, latency, server CPU per message
//
// publish --delay-level N / --delay-seconds N publish delayed messages;
// pending.sh (issue 5) uses them to load a server with 1M pending delayed
// messages and compares publishing into it with a fresh one, A/B per round.
// growth.sh (issue 10) fills a store with GB gigabytes of 1 KiB messages
// and times publishing into it against an empty one, start-up, freeing
// (topic deletion: retention's removal path) and mqgate compact.
//
// What it owns: load generation, the baseline server and the statistics. It
// talks plain HTTP to the documented contract and imports nothing of the
// project but core's constants and the public Go stream client
// (apiclient/stream, for the streams mode), so it measures exactly what a
// client sees;
// it must not import api/, gateway/ or core/engine.
//
// What the modes share: runs.go (the --runs loop, fresh topic and group
// names, table rows), receiver.go (receive+ack loops started and stopped
// as one receiverSet), tracker.go (latency and webhook: the paced publish,
// the drain and the latencyTracker), client.go and wire.go (HTTP calls and
// API shapes), stats.go (summaries and medians).
//
// Invariants:
//   - The client is kept from being the bottleneck: the publish loop
//     writes pre-built HTTP/1.1 requests on one keep-alive connection per
//     worker (rawclient.go; or one tuned http.Transport with
//     MaxIdleConnsPerHost above the concurrency, --client std), bodies are
//     encoded before the clock starts, and per-worker latency slices are
//     merged after the run (no shared lock on the hot path). Each run
//     reports the CPU mqbench itself used.
//   - Only requests that start after the warm-up count; a run's elapsed time
//     is from the end of the warm-up to the last measured completion.
//   - Every goroutine it starts (workers, receivers, the baseline server,
//     child processes) is stopped and waited for before a run returns.
//   - MB/s is 10^6 bytes of message body per second (not counting JSON).
package main
