// Command mqgate is the mqgate server, and its command-line client.
//
//	mqgate serve [--addr 127.0.0.1:8080] [--data ./data] [--log-level info] [--log-format auto] [--pprof-addr 127.0.0.1:6060]
//	             (beyond loopback only with --api-keys or --insecure-open: listener.go)
//	mqgate healthcheck [--url URL | --addr 127.0.0.1:8080]
//	mqgate backup --out FILE [--url URL | --data DIR] [--key KEY]
//	mqgate compact [--data DIR]
//	mqgate version
//	mqgate help
//	mqgate [--url U] [--key K] [-o json] topic|group|pub|sub|ack|nack|dlq|redrive|offsets|reset ... (internal/cli, docs/cli.md)
//
// The client commands live in internal/cli (one file per command group)
// and speak only the HTTP API through apiclient; main dispatches to them
// with a context that SIGINT/SIGTERM cancel.
//
// This package owns what only a program has: flags and environment
// (flags win over MQGATE_* variables), logging set-up, signals and the
// order of start-up and shutdown. It wires core/engine into api and knows
// nothing else about either. Main (NewMain / ParseFlags / Run / Close)
// holds one running server so tests can run the program in-process too.
//
// Shutdown order on SIGINT/SIGTERM: /readyz turns 503, the listener
// closes, in-flight requests finish (up to --shutdown-timeout), then the
// engine closes (flushing and closing the bbolt file).
//
// Runtime tuning (tune.go), each unless its variable is set: GOGC 200,
// with a heap goal of at least 64 MiB (MQGATE_GC_HEAP_FLOOR) while the
// live heap is small; a soft memory limit at 90% of a cgroup v2 memory
// limit. GOMAXPROCS is left to Go (raising it helped the store writer get
// a P back after fsync, but it also skews comparisons with the baseline;
// set it to try).
// Log lines are coalesced into few writes under load (logwriter.go);
// profiles are served only on --pprof-addr's own listener (pprof.go).
// Start-up refuses a data dir whose store is missing or empty beside its
// gateway.key unless --init is given (initcheck.go); the store's own open
// refuses a damaged file (core/store/precheck.go).
package main
