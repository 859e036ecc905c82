package core

import "time"

// ReceiveRequest is one long poll of a pull group. Validate holds it to
// the receive limits (limits.go); every backend calls it once, before it
// looks at the group.
type ReceiveRequest struct {
	MaxMessages int           // 1..MaxReceiveMessages
	Wait        time.Duration // 0..MaxWait; 0: answer at once
	Invisible   time.Duration // 0: the group's invisibleSeconds; else MinInvisible..MaxInvisible
	ConsumerID  string        // BROADCASTING only (required there); NamePattern
}

// Validate checks r against the receive limits. It answers an EInvalid
// Error naming the first field that fails, in the API's words (the
// field names are the JSON members of a receive request).
func (r *ReceiveRequest) Validate() error {
	switch {
	case r.MaxMessages < 1:
		return FieldError("maxMessages", "%s", mustBeAtLeast(1))
	case r.MaxMessages > MaxReceiveMessages:
		return FieldError("maxMessages", "%s", mustBeAtMost(MaxReceiveMessages))
	case r.Wait < 0:
		return FieldError("waitSeconds", "%s", mustBeAtLeast(0))
	case r.Wait > MaxWait:
		return FieldError("waitSeconds", "%s", mustBeAtMost(int64(MaxWait/time.Second)))
	case r.Invisible != 0:
		if err := ValidateLease(r.Invisible); err != nil {
			return err
		}
	}
	if r.ConsumerID != "" && !ValidName(r.ConsumerID) {
		return FieldError("consumerId", "must match %s", NamePattern)
	}
	return nil
}
