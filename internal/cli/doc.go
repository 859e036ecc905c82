// Package cli is mqgate's command-line client: `mqgate topic|group|pub|
// sub|ack|nack|dlq|redrive|offsets|reset`, one file per command group. It
// speaks the HTTP API v1 only, through the generated client (apiclient),
// like any other program would: it never opens a data directory.
//
// Conventions (nsq_tail, gcloud pubsub, mqadmin): --url and --key (env
// MQGATE_URL, MQGATE_KEY) name the server and the API key; tables for
// people by default, -o json for scripts (the API's own JSON, one document
// per answer; `sub` writes one message per line); flags may come before or
// after the positional arguments. Exit codes (docs/cli.md): 0 ok, 1 usage
// or a request the server refused as invalid (400, 413, 415), 2 not found
// (404), 3 conflict (409, 422), 4 server or transport error (5xx, 429,
// connection refused, timeout), 5 not permitted (401, 403).
//
// Owns: argument parsing, output formatting, exit codes. Imports apiclient
// and the standard library only; nothing of the server.
package cli
