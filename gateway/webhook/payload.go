package webhook

import (
	"bytes"
	"encoding/json"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/gateway/wire"
)

// Payload is the request body of one push: {"messages": [...]}. Receivers
// may decode into it.
type Payload struct {
	Messages []json.RawMessage `json:"messages"`
}

// encodeMessages builds the body of one request: {"messages": [Message]},
// each message as wire.NewMessage shows it to every consumer (the same
// Message JSON as a receive answer, without receipt handle and lease; a
// webhook is answered by its status code).
func encodeMessages(msgs []*core.Message) ([]byte, error) {
	body := struct {
		Messages []wire.Message `json:"messages"`
	}{Messages: make([]wire.Message, len(msgs))}
	for i, m := range msgs {
		body.Messages[i] = wire.NewMessage(m)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	// Bodies are user text: keep <, > and & as they are (the receiver is
	// not a browser), which also keeps the signed bytes readable.
	enc.SetEscapeHTML(false)
	if err := enc.Encode(body); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}
