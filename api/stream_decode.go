package api

import (
	"strconv"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/internal/jsonscan"
)

// clientFrame is any client → server frame, decoded once under the REST
// bodies' strict rules (decodeBytes: unknown members, duplicates, nulls
// and invalid UTF-8 refused). Pointers tell a member left out from a zero
// one, so that a member of another frame type is refused as unknown.
type clientFrame struct {
	Type                   string           `json:"type"`
	ID                     string           `json:"id"`
	ReceiptHandles         []string         `json:"receiptHandles"`
	DelayLevel             *int             `json:"delayLevel"`
	Reason                 *string          `json:"reason"`
	InvisibleSeconds       *int             `json:"invisibleSeconds"`
	MaxOutstandingMessages *int             `json:"maxOutstandingMessages"`
	MaxOutstandingBytes    *int64           `json:"maxOutstandingBytes"`
	Message                *PublishRequest  `json:"message"`
	Messages               []PublishRequest `json:"messages"`
}

// frameIDOnly reads just the id of a frame that failed to decode, so its
// error frame can still name it.
type frameIDOnly struct {
	ID string `json:"id"`
}

// decodeFrame decodes one client frame. On error it still returns the
// frame's id when one could be read.
func decodeFrame(b []byte, f *clientFrame) error {
	if fastAckFrame(b, f) {
		return nil
	}
	if err := decodeBytes(b, f, false); err != nil {
		var id frameIDOnly
		if jsonv2.Unmarshal(b, &id) == nil && validFrameID(id.ID) {
			f.ID = id.ID
		} else {
			f.ID = ""
		}
		return err
	}
	if f.Type == "" {
		return core.FieldError("type", "is required (one of ack, nack, extend, flow, publish)")
	}
	if !validFrameID(f.ID) {
		bad := f.ID
		f.ID = ""
		if bad == "" {
			return core.FieldError("id", "is required (1..64 printable ASCII characters)")
		}
		return core.FieldError("id", "must be 1..64 printable ASCII characters")
	}
	// Members that belong to another frame type.
	var fe fieldErrors
	other := func(present bool, name string) {
		if present {
			fe.add(name, "unknown field for a frame of type "+strconv.Quote(f.Type))
		}
	}
	handles := f.Type == FrameAck || f.Type == FrameNack || f.Type == FrameExtend
	other(f.ReceiptHandles != nil && !handles, "receiptHandles")
	other(f.DelayLevel != nil && f.Type != FrameNack, "delayLevel")
	other(f.Reason != nil && f.Type != FrameNack, "reason")
	other(f.InvisibleSeconds != nil && f.Type != FrameExtend, "invisibleSeconds")
	other(f.MaxOutstandingMessages != nil && f.Type != FrameFlow, "maxOutstandingMessages")
	other(f.MaxOutstandingBytes != nil && f.Type != FrameFlow, "maxOutstandingBytes")
	other(f.Message != nil && f.Type != FramePublish, "message")
	other(f.Messages != nil && f.Type != FramePublish, "messages")
	return fe.err()
}

// validFrameID: 1..64 printable ASCII characters.
func validFrameID(id string) bool {
	if len(id) < 1 || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if id[i] < 0x20 || id[i] > 0x7e {
			return false
		}
	}
	return true
}

// fastAckFrame decodes the plainest ack frame, {"type":"ack","id":…,
// "receiptHandles":[…]} in any member order with no escapes, the way the
// strict decoder would (the hottest frame: one per settled message for
// the simplest consumers). Anything else reports false and goes to the
// strict decoder.
func fastAckFrame(b []byte, f *clientFrame) bool {
	s := fastScanner{Scanner: jsonscan.Scanner{B: b}}
	var head frameHead
	var seenHandles bool
	var out clientFrame
	ok := s.Object(func(name []byte) bool {
		var ok bool
		switch string(name) {
		case "type", "id":
			ok = s.frameHead(name, FrameAck, &head, &out)
		case "receiptHandles":
			if seenHandles {
				return false
			}
			seenHandles = true
			out.ReceiptHandles, ok = s.strs()
		}
		return ok
	})
	if !ok || !s.End() || !head.complete() || !seenHandles {
		return false
	}
	*f = out
	return true
}

// frameHead is which of a frame's "type" and "id" members the fast
// decoders have read.
type frameHead struct{ seenType, seenID bool }

func (h frameHead) complete() bool { return h.seenType && h.seenID }

// frameHead reads the value of a frame's "type" (which must be want) or
// "id" member into out, refusing a member seen before: the part every
// fast frame decoder shares.
func (s *fastScanner) frameHead(name []byte, want string, h *frameHead, out *clientFrame) bool {
	v, ok := s.Raw()
	if string(name) == "type" {
		if h.seenType {
			return false
		}
		h.seenType = true
		out.Type = want
		return ok && string(v) == want
	}
	if h.seenID {
		return false
	}
	h.seenID = true
	out.ID = string(v)
	return ok && validFrameID(out.ID)
}
