// Package gateway turns the push consumer into HTTP consumption: it is the
// push consumer's message listener and hands dispatched messages to long-poll
// receives, tracks leases and receipt handles, and turns ack / nack / extend
// and lease expiry into consume results (SPEC §7).
//
// It imports core and its sub-packages, never api or net/http handlers.
package gateway
