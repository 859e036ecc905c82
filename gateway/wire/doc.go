// Package wire owns the JSON shape of a message as consumers see it
// (API.md "Message"): the receive answer (api) and the webhook body
// (gateway/webhook) carry the same Message, so it is built in one place.
// NewMessage decides what a consumer is shown of a stored message: the
// user-facing id and original topic of a retry copy, a body as text or
// base64, millisecond UTC times.
//
// It is a leaf: it imports core only, never the engine, the gateway, api
// or cmd, so that both api (cmd → api → gateway → core) and the webhook
// pusher under gateway can import it without a cycle.
//
// Invariants:
//   - api.Message is the same struct with swag annotations (api converts
//     with Message(wire.NewMessage(m)), so the compiler keeps the fields
//     in step); a test in api pins the two JSON encodings to each other.
//   - Each caller keeps its own encoder settings: the webhook body is
//     encoded without HTML escaping (it is signed and not for browsers),
//     api answers with encoding/json's defaults.
package wire
