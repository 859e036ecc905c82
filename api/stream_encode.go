package api

import (
	"encoding/base64"
	"path"
	"strconv"

	fastjson "github.com/segmentio/encoding/json"

	"github.com/mqgate/mqgate/core"
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
	b = appendReceivedObjects(b, got)
	return append(b, "]}"...)
}

// appendResultsFrame appends a ResultsFrame.
func appendResultsFrame(b []byte, id string, rs []core.HandleResult) []byte {
	b = append(b, `{"type":"results","id":`...)
	b = appendJSONString(b, id)
	b = append(b, `,"results":[`...)
	b = appendHandleResultObjects(b, rs)
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
