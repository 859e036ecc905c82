// Package stream is the Go client of mqgate's WebSocket streams
// (docs/streaming.md, subprotocol mqgate.v1): a consume stream that pushes
// deliveries and answers ack, nack, extend and flow frames, and a publish
// stream that answers every publish with a confirm once it is durable.
//
// Every frame a client sends carries an id; the answer (results, confirm,
// flow or error) comes back with that id, in any order. Each send returns a
// *Future that is completed by its answer, or failed when the stream ends
// first; the blocking helpers (Ack, Nack, Extend, Flow, PublishWait) send
// and wait. A publish stream also keeps the server's limits on unconfirmed
// messages and bytes on the client side, so a fast producer waits in
// Publish instead of filling the socket.
//
// Owns: the client side of the stream protocol over
// github.com/coder/websocket (the library the server uses). It imports
// only apiclient (the generated REST types, which the frames reuse), never
// the server's packages: like apiclient it is the contract seen from
// outside.
package stream
