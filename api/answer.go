package api

import (
	"strconv"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/gateway/wire"
)

// The answers of the hottest requests — publish and batch publish
// results, a receive's messages, ack/nack/extend's HandleResults — are appended by hand into writeJSON's
// pooled buffer: the general encoder's type lookup, the result structs
// (two pointers per publish result) and the `any` conversion cost an ack
// request more than building the few bytes. The output is encoding/json's,
// byte for byte, newline included (TestHandAnswersMatchStdlib, with the
// types' own encoding as the reference); the types stay the documented
// shapes.

// appendJSONString appends s as a JSON string exactly as encoding/json
// writes it (wire.AppendString).
func appendJSONString(b []byte, s string) []byte { return wire.AppendString(b, s) }

// appendPublishResult appends newPublishResult(*r) as encoding/json's
// Encoder writes it.
func appendPublishResult(b []byte, r *core.PutResult) []byte {
	return append(appendPublishObject(b, r), '\n')
}

// appendPublishBatchResult appends the PublishBatchResult of rs as
// encoding/json's Encoder writes it.
func appendPublishBatchResult(b []byte, rs []core.PutResult) []byte {
	b = append(b, `{"results":[`...)
	for i := range rs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendPublishObject(b, &rs[i])
	}
	return append(b, "]}\n"...)
}

func appendPublishObject(b []byte, r *core.PutResult) []byte {
	b = append(b, `{"messageId":`...)
	b = appendJSONString(b, r.MessageID)
	b = append(b, `,"topic":`...)
	b = appendJSONString(b, r.Topic)
	if r.DeliverAt.IsZero() {
		b = append(b, `,"queueId":`...)
		b = strconv.AppendInt(b, int64(r.QueueID), 10)
		b = append(b, `,"queueOffset":`...)
		b = strconv.AppendInt(b, r.QueueOffset, 10)
	} else {
		b = append(b, `,"deliverAt":`...)
		b = appendJSONString(b, formatTime(r.DeliverAt))
	}
	if r.Replayed {
		b = append(b, `,"replayed":true`...)
	}
	return append(b, '}')
}

// appendHandleResults appends newHandleResults(rs) as encoding/json's
// Encoder writes it.
func appendHandleResults(b []byte, rs []core.HandleResult) []byte {
	b = append(b, `{"results":[`...)
	b = appendHandleResultObjects(b, rs)
	return append(b, "]}\n"...)
}

// appendHandleResultObjects appends rs as the members of a results
// array (a REST answer's or a stream's results frame).
func appendHandleResultObjects(b []byte, rs []core.HandleResult) []byte {
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
			b = wire.AppendTime(b, r.InvisibleUntil)
		}
		b = append(b, '}')
	}
	return b
}

// appendReceived appends the ReceiveResponse of got (not empty) as
// encoding/json's Encoder writes it.
func appendReceived(b []byte, got []core.Received) []byte {
	b = append(b, `{"messages":[`...)
	b = appendReceivedObjects(b, got)
	return append(b, "]}\n"...)
}

// appendReceivedObjects appends got as the members of a messages array
// (a receive's answer or a stream's messages frame): each message
// straight from the stored one (wire.AppendMessageFields), no Message in
// between.
func appendReceivedObjects(b []byte, got []core.Received) []byte {
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
	return b
}
