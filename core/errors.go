package core

import (
	"errors"
	"fmt"
)

// Error codes. The HTTP layer maps each to one status (api/problem.go); a
// code that is not listed here is an internal error and is never shown to
// users verbatim.
const (
	EInvalid     = "invalid"     // 400: the request is malformed or breaks a rule
	ENotFound    = "not_found"   // 404: unknown topic, group or message
	EConflict    = "conflict"    // 409: the request contradicts current state
	ETooLarge    = "too_large"   // 413: a message or batch exceeds a size limit
	EForbidden   = "forbidden"   // 403: e.g. publishing to a system topic
	EUnavailable = "unavailable" // 503: shutting down or store unavailable
	EUnsupported = "unsupported" // 503, no Retry-After: a capability this backend does not offer
	ETooMany     = "too_many"    // 429: too many waiting receives
	EInternal    = "internal"    // 500
	ECorrupt     = "corrupt"     // 500: a stored message failed its checksum; it is set aside
	// 422: well-formed but not honoured as sent (an idempotency key reused
	// with another request).
	EUnprocessable = "unprocessable"
)

// Error is a domain error with a machine code, a message written for users
// and, for validation errors, the offending field (JSON name).
type Error struct {
	Code    string
	Message string
	Field   string
}

func (e *Error) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("%s: %s: %s", e.Code, e.Field, e.Message)
	}
	return e.Code + ": " + e.Message
}

// Errorf returns a domain error with the given code.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// FieldError returns an EInvalid error about one request field.
func FieldError(field, format string, args ...any) *Error {
	return &Error{Code: EInvalid, Field: field, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of a domain error anywhere in err's chain,
// EInternal for any other non-nil error and "" for nil.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EInternal
}

// Sentinel errors shared across packages.
var (
	ErrClosed = &Error{Code: EUnavailable, Message: "the engine is shutting down"}
	// ErrGroupGone is what a send-back's settle hook returns when the
	// group (the incarnation that received the message) no longer exists:
	// the engine then writes nothing (no retry or dead-letter copy, no
	// %RETRY% / %DLQ% topic) and SendMessageBackSettled reports success,
	// since there is nobody left to redeliver to.
	ErrGroupGone = &Error{Code: EConflict, Message: "the consumer group was deleted"}
)

// Unsupported is the answer of a capability a backend cannot offer (an
// EUnsupported error, 503 with this detail): the seam (Backend) has no
// optional parts, so a backend that lacks one says so in words.
// docs/jetstream.md lists every capability that answers it there.
func Unsupported(capability, backend string) *Error {
	return &Error{Code: EUnsupported, Message: fmt.Sprintf("%s is not available on the %s backend", capability, backend)}
}
