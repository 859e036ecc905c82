package api

import (
	"encoding/base64"
	"path"
	"strconv"

	fastjson "github.com/segmentio/encoding/json"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/gateway/wire"
)

// The stream frames sent most (deliveries, results, confirms) are appended
// by hand, as answer.go does for the REST answers they mirror: each
// delivery goes from the stored message into the frame's buffer with no
// Message in between. TestStreamFrameEncoding holds them to the frame
// types' own encoding.

var b64url = base64.RawURLEncoding

var pathMatch = path.Match

// appendMessagesFrame appends a MessagesFrame of got.
func appendMessagesFrame(b []byte, got []core.Received) []byte {
	b = append(b, `{"type":"messages","messages":[`...)
	for i := range got {
		if i > 0 {
			b = append(b, ',')
		}
		b = wire.AppendMessageFields(b, got[i].Message)
		b = append(b, `,"receiptHandle":`...)
		b = appendJSONString(b, got[i].ReceiptHandle)
		b = append(b, `,"invisibleUntil":`...)
		b = wire.AppendTime(b, got[i].InvisibleUntil)
		b = append(b, '}')
	}
	return append(b, "]}"...)
}

// appendResultsFrame appends a ResultsFrame.
func appendResultsFrame(b []byte, id string, rs []core.HandleResult) []byte {
	b = append(b, `{"type":"results","id":`...)
	b = appendJSONString(b, id)
	b = append(b, `,"results":[`...)
	for i := range rs {
		r := &rs[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"receiptHandle":`...)
		b = appendJSONString(b, r.ReceiptHandle)
		b = append(b, `,"status":`...)
		b = appendJSONString(b, string(r.Status))
		if !r.InvisibleUntil.IsZero() {
			b = append(b, `,"invisibleUntil":`...)
			b = appendJSONString(b, formatTime(r.InvisibleUntil))
		}
		b = append(b, '}')
	}
	return append(b, "]}"...)
}

// appendConfirmFrame appends a ConfirmFrame.
func appendConfirmFrame(b []byte, id string, rs []core.PutResult) []byte {
	b = append(b, `{"type":"confirm","id":`...)
	b = appendJSONString(b, id)
	b = append(b, `,"results":[`...)
	for i := range rs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendPublishObject(b, &rs[i])
	}
	return append(b, "]}"...)
}

// appendErrorFrame appends an ErrorFrame (rare: the general encoder).
func appendErrorFrame(b []byte, id string, p *Problem) []byte {
	return appendJSONValue(b, ErrorFrame{Type: FrameError, ID: id, Problem: *p})
}

// appendJSONValue appends v as JSON, without the encoder's newline.
func appendJSONValue(b []byte, v any) []byte {
	out, err := fastjson.Marshal(v)
	if err != nil {
		// Our own frame types always encode; this is a bug.
		return append(b, `{"type":"error","problem":{"type":"urn:mqgate:problem:internal","title":"Internal error","status":500}}`...)
	}
	return append(b, out...)
}

// appendFlowAnswer appends the flow frame that answers a flow request.
func appendFlowAnswer(b []byte, id string, msgs int, bytes int64) []byte {
	b = append(b, `{"type":"flow","id":`...)
	b = appendJSONString(b, id)
	b = append(b, `,"maxOutstandingMessages":`...)
	b = strconv.AppendInt(b, int64(msgs), 10)
	b = append(b, `,"maxOutstandingBytes":`...)
	b = strconv.AppendInt(b, bytes, 10)
	return append(b, '}')
}
