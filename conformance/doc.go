// Package conformance runs one HTTP-level suite against every backend:
// the embedded engine (bbolt, one gateway) and the JetStream backend (an
// in-process 3-node cluster, two gateways behind a round-robin proxy).
// Each rule the suite checks holds on both; the rules that hold on the
// embedded backend only are named in embeddedOnly (suite_test.go) with
// the reason, and docs/jetstream.md explains them.
package conformance
