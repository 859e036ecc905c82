// Package api is mqgate's HTTP/REST surface (API.md): the chi router, the
// middleware every request passes through, the request and response types
// (validator/v10 tags and swag annotations; the OpenAPI document in
// openapi/ is generated from them) and the one place that turns domain
// errors into application/problem+json answers.
//
// Layout: one resource per file (topics.go, messages.go, messages_read.go,
// groups.go, consume.go, dlq.go, ops.go, corrupt.go), every route registered in one
// block in routes.go, error mapping in problem.go, JSON decoding and
// validation in decode.go and validate.go, middleware in middleware.go,
// HTTP metrics in metrics.go and the scrape-time schedule / retry / DLQ
// collector in metrics_schedule.go. API keys (auth.go): when Options.Keys
// is set, the /v1 sub-router checks the bearer key against routeAccess,
// the one route → grant table, before routing (keys and grants live in
// internal/auth).
//
// Dependencies point one way: api imports core (domain types, error codes
// and the seam) and, for its limits and the webhook config check, gateway
// and gateway/webhook; it never imports core/store, core/engine or a
// backend. Everything below HTTP is the one core.Backend of
// Options.Backend, called directly: no optional interface is probed
// (seam_test.go fails on a type assertion on it), and a capability a
// backend lacks answers core.Unsupported. cmd/mqgate wires
// backend/embedded or backend/jetstream; tests use embedded.Open or a fake
// embedding core.Backend.
//
// Invariants:
//   - every response carries X-Request-Id (set before the handler runs);
//   - every error answer is application/problem+json built by writeProblem;
//     internal errors are logged with the request id and answered with a
//     generic message, never with err.Error();
//   - a request that fails decoding or validation never reaches the engine,
//     so a rejected request changes nothing.
//
// The Server holds no locks; its only mutable state is the shutting-down
// flag (atomic) read by /readyz.
package api
