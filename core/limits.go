package core

import "time"

// The limits of what a client may publish, receive and settle (SPEC §1,
// API.md). This file is their one definition:
//
//   - every backend enforces them through ValidatePut,
//     ReceiveRequest.Validate and the settle checks (validate.go), so the
//     embedded engine and JetStream refuse the same requests with the same
//     words;
//   - the store's layout is checked at compile time to hold a message of
//     this size (core/store/layout.go);
//   - api's hand checks read them, and its validate tags and OpenAPI
//     annotations spell the same numbers (api/limits_test.go compares the
//     tags and openapi/openapi.json with these constants).
//
// Lengths of text are in characters (Unicode code points), as the API
// counts them; sizes of bodies are in bytes.
const (
	// MaxMessageSize bounds a message body, and the bodies of one batch
	// in all (RocketMQ maxMessageSize).
	MaxMessageSize = 4 << 20
	// MaxBatch bounds the messages of one batch publish.
	MaxBatch = 1000
	// MaxIDLength bounds a message id as a client may name it.
	MaxIDLength = 64

	MaxTagsLen          = 128  // characters of a message's tags
	MaxKeys             = 32   // keys of one message
	MaxKeyLen           = 128  // characters of one key, and of the sharding key
	MaxProperties       = 64   // user properties of one message
	MaxPropertyNameLen  = 128  // characters of a property name
	MaxPropertyValueLen = 4096 // characters of a property value

	// MaxDedupIDLen bounds an Idempotency-Key or deduplicationId, which
	// is printable ASCII (ValidDedupID).
	MaxDedupIDLen = 128

	// MaxTraceParentLen and MaxTraceStateLen bound the trace context a
	// publish may carry: a traceparent is 55 characters in version 00
	// (W3C Trace Context §3.2), a tracestate at most 32 members of
	// bounded length (§3.3); longer ones are refused.
	MaxTraceParentLen = 55
	MaxTraceStateLen  = 512
)

// MaxDelay is how far ahead a message may be delayed: the bound of a
// publish's delaySeconds, and the default of each backend's MaxDelay
// option (--max-delay), which bounds deliverAt.
const MaxDelay = 40 * 24 * time.Hour

// Limits of receive, ack, nack and extend (API.md "Consuming").
const (
	// MaxReceiveMessages bounds ReceiveRequest.MaxMessages (1..32).
	MaxReceiveMessages = 32
	// MaxWait bounds the long poll of one receive.
	MaxWait = 30 * time.Second
	// MinInvisible and MaxInvisible bound a lease (receive's
	// invisibleSeconds, extend, a group's invisibleSeconds).
	MinInvisible = time.Second
	MaxInvisible = 12 * time.Hour
	// MaxHandles bounds the receipt handles of one ack, nack or extend.
	MaxHandles = 100
	// MaxReasonLength bounds a nack's reason, in characters.
	MaxReasonLength = 256
)
