package core

import (
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// The checks of publish and settle requests against the limits
// (limits.go). Each backend calls them once per request, before it
// writes anything, so a bad message never costs a transaction and both
// backends refuse it with the same Error: EInvalid (ETooLarge for bodies
// over MaxMessageSize), the failing field as the API names it, and the
// API's words for the rule (those of api's checks).

// The words of the rules, as the API says them.
func mustBeAtMostChars(n int) string { return "must be at most " + strconv.Itoa(n) + " characters" }
func mustHaveAtMost(n int) string    { return "must have at most " + strconv.Itoa(n) + " items" }
func mustBeAtLeast(n int64) string   { return "must be ≥ " + strconv.FormatInt(n, 10) }
func mustBeAtMost(n int64) string    { return "must be ≤ " + strconv.FormatInt(n, 10) }

const (
	msgRequired      = "is required"
	msgAtLeastOne    = "must have at least 1 items"
	msgNotEmpty      = "must not be empty"
	msgOneDelay      = "give at most one of delayLevel, delaySeconds and deliverAt"
	msgNoDoublePipe  = `must not contain "||"`
	msgStateNoParent = "only with a traceparent"
)

// DedupIDRule is the rule of an Idempotency-Key or deduplicationId, in
// the API's words; ValidDedupID checks it.
const DedupIDRule = "must be 1 to 128 printable ASCII characters"

// ValidDedupID reports whether s is a valid Idempotency-Key or
// deduplicationId: 1..MaxDedupIDLen printable ASCII characters (space
// included).
func ValidDedupID(s string) bool {
	if len(s) == 0 || len(s) > MaxDedupIDLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// charsOver reports whether s has more than n characters; a string of at
// most n bytes is never counted.
func charsOver(s string, n int) bool {
	return len(s) > n && utf8.RuneCountInString(s) > n
}

// ValidatePut checks one publish: msgs is a single message or a batch,
// stored all or nothing. Beyond each message's Validate it bounds the
// batch (1..MaxBatch messages, MaxMessageSize body bytes in all) and
// each deliverAt to maxDelay after now (the backend's MaxDelay option;
// 0 means MaxDelay). A field of batch entry i is named messages[i].name.
func ValidatePut(msgs []PutMessage, now time.Time, maxDelay time.Duration) error {
	switch {
	case len(msgs) == 0:
		return FieldError("messages", msgAtLeastOne)
	case len(msgs) > MaxBatch:
		return FieldError("messages", "%s", mustHaveAtMost(MaxBatch))
	}
	if maxDelay <= 0 {
		maxDelay = MaxDelay
	}
	total := 0
	for i := range msgs {
		m := &msgs[i]
		entry := i
		if len(msgs) == 1 {
			entry = -1
		}
		if err := m.validate(entry); err != nil {
			return err
		}
		if !m.DeliverAt.IsZero() && m.DeliverAt.Sub(now) > maxDelay {
			return FieldError(entryField(entry, "deliverAt"), "must be at most %s ahead", maxDelay)
		}
		total += len(m.Body)
	}
	if len(msgs) > 1 && total > MaxMessageSize {
		return &Error{Code: ETooLarge, Field: "messages",
			Message: "the batch bodies total " + strconv.Itoa(total) + " bytes; the limit is " + strconv.Itoa(MaxMessageSize)}
	}
	return nil
}

// Validate checks one message against the publish limits that need no
// context (ValidatePut adds the batch's and the clock's).
func (m *PutMessage) Validate() error { return m.validate(-1) }

// entryField is the name of a field of batch entry i (messages[i].name),
// or name itself for i < 0. It is only built for a failing field, so a
// valid batch pays nothing for it.
func entryField(i int, name string) string {
	if i < 0 {
		return name
	}
	return "messages[" + strconv.Itoa(i) + "]." + name
}

// validate is Validate of batch entry i (-1: a single message).
func (m *PutMessage) validate(i int) error {
	bodyField := "body"
	if !m.BodyIsText {
		bodyField = "bodyBase64"
	}
	switch {
	case len(m.Body) > MaxMessageSize:
		return &Error{Code: ETooLarge, Field: entryField(i, bodyField),
			Message: "the body has " + strconv.Itoa(len(m.Body)) + " bytes; the limit is " + strconv.Itoa(MaxMessageSize)}
	case len(m.Body) == 0:
		return FieldError(entryField(i, bodyField), msgNotEmpty)
	case charsOver(m.Tags, MaxTagsLen):
		return FieldError(entryField(i, "tags"), "%s", mustBeAtMostChars(MaxTagsLen))
	case strings.Contains(m.Tags, "||"):
		return FieldError(entryField(i, "tags"), msgNoDoublePipe)
	case len(m.Keys) > MaxKeys:
		return FieldError(entryField(i, "keys"), "%s", mustHaveAtMost(MaxKeys))
	case len(m.Properties) > MaxProperties:
		return FieldError(entryField(i, "properties"), "%s", mustHaveAtMost(MaxProperties))
	case charsOver(m.ShardingKey, MaxKeyLen):
		return FieldError(entryField(i, "shardingKey"), "%s", mustBeAtMostChars(MaxKeyLen))
	case m.DelayLevel < 0:
		return FieldError(entryField(i, "delayLevel"), "%s (0: no delay)", mustBeAtLeast(0))
	case m.DelayLevel != 0 && !m.DeliverAt.IsZero():
		return FieldError(entryField(i, "delayLevel"), msgOneDelay)
	case m.DedupID != "" && !ValidDedupID(m.DedupID):
		return FieldError(entryField(i, "deduplicationId"), DedupIDRule)
	case len(m.TraceParent) > MaxTraceParentLen:
		return FieldError(entryField(i, "traceparent"), "%s", mustBeAtMostChars(MaxTraceParentLen))
	case len(m.TraceState) > MaxTraceStateLen:
		return FieldError(entryField(i, "tracestate"), "%s", mustBeAtMostChars(MaxTraceStateLen))
	case m.TraceState != "" && m.TraceParent == "":
		return FieldError(entryField(i, "tracestate"), msgStateNoParent)
	}
	for j, k := range m.Keys {
		switch {
		case k == "":
			return FieldError(entryField(i, "keys["+strconv.Itoa(j)+"]"), msgRequired)
		case charsOver(k, MaxKeyLen):
			return FieldError(entryField(i, "keys["+strconv.Itoa(j)+"]"), "%s", mustBeAtMostChars(MaxKeyLen))
		}
	}
	// Map order is random: of several bad properties the one with the
	// least name is named, so the answer does not change between calls.
	var bad *Error
	for k, v := range m.Properties {
		var e *Error
		switch {
		case k == "":
			e = FieldError(entryField(i, "properties[]"), msgRequired)
		case charsOver(k, MaxPropertyNameLen):
			e = FieldError(entryField(i, "properties["+k+"]"), "%s", mustBeAtMostChars(MaxPropertyNameLen))
		case charsOver(v, MaxPropertyValueLen):
			e = FieldError(entryField(i, "properties["+k+"]"), "%s", mustBeAtMostChars(MaxPropertyValueLen))
		}
		if e != nil && (bad == nil || e.Field < bad.Field) {
			bad = e
		}
	}
	if bad != nil {
		return bad
	}
	return nil
}

// ValidateHandles checks the receipt handles of one ack, nack or extend:
// 1..MaxHandles of them. (A malformed handle is no request error: it is
// answered invalid in its own result.)
func ValidateHandles(handles []string) error {
	switch {
	case len(handles) == 0:
		return FieldError("receiptHandles", msgAtLeastOne)
	case len(handles) > MaxHandles:
		return FieldError("receiptHandles", "%s", mustHaveAtMost(MaxHandles))
	}
	return nil
}

// ValidateNack checks a nack's delay level (-1 dead-letters, 0 lets the
// engine decide, 1.. is a level; one above the last is the last) and its
// reason (at most MaxReasonLength characters).
func ValidateNack(delayLevel int, reason string) error {
	if delayLevel < -1 {
		return FieldError("delayLevel", "%s", mustBeAtLeast(-1))
	}
	if charsOver(reason, MaxReasonLength) {
		return FieldError("reason", "%s", mustBeAtMostChars(MaxReasonLength))
	}
	return nil
}

// ValidateLease checks a lease (extend, receive's invisibleSeconds):
// MinInvisible..MaxInvisible.
func ValidateLease(invisible time.Duration) error {
	switch {
	case invisible < MinInvisible:
		return FieldError("invisibleSeconds", "%s", mustBeAtLeast(int64(MinInvisible/time.Second)))
	case invisible > MaxInvisible:
		return FieldError("invisibleSeconds", "%s", mustBeAtMost(int64(MaxInvisible/time.Second)))
	}
	return nil
}
