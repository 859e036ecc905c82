// Package quota enforces the per-key limits of the API key file
// (auth.Limits, docs/quotas.md): token buckets for published messages,
// published bytes and deliveries, and counters of receives in flight, per
// key and per topic or group entry of a key.
//
// The buckets are golang.org/x/time/rate limiters: a maintained token
// bucket whose reservations can be cancelled, so a request checked
// against several buckets (the key's and its topic entry's, messages and
// bytes) takes from all of them or from none.
//
// Imports: internal/auth, x/time/rate and the Prometheus client; never
// api, gateway or core. api asks it; cmd never needs to.
//
// Invariants:
//   - a Quotas follows its Keyring: the first request after a reload
//     (SIGHUP) rebuilds the table for the new key set. A bucket or counter
//     whose key and policy name stay keeps its state (tokens, requests in
//     flight) and takes the new rate and burst; one that goes is dropped.
//   - a refused request takes no tokens (its reservations are cancelled),
//     so a client that waits Retry-After gets exactly the configured rate.
//   - the limits are this process's: N gateways in front of one JetStream
//     each allow the full rate (docs/quotas.md says so, and so does
//     GET /v1/admin/limits).
//
// Locks: Quotas.mu serialises rebuilds only; requests read the table
// through an atomic pointer. rate.Limiter has its own lock.
package quota
