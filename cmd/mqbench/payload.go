package main

import (
	"encoding/base64"
	"encoding/json"
	"math/rand/v2"
)

// wireMessage is one message of a publish request (API.md "Publishing").
type wireMessage struct {
	Body       *string           `json:"body,omitempty"`
	BodyBase64 string            `json:"bodyBase64,omitempty"`
	Tags       string            `json:"tags,omitempty"`
	Properties map[string]string `json:"properties,omitempty"`
	// DelayLevel and DelaySeconds make the message a delayed one
	// (--delay-level, --delay-seconds): it waits on the schedule topic or
	// in the timer index instead of its queue.
	DelayLevel   int `json:"delayLevel,omitempty"`
	DelaySeconds int `json:"delaySeconds,omitempty"`
}

// delay is the delay every published message asks for (zero: none).
type delay struct {
	Level   int
	Seconds int
}

type wireBatch struct {
	Messages []wireMessage `json:"messages"`
}

// textAlphabet holds printable characters that JSON needs no escape for,
// so a text body of n characters is n bytes on the wire and in the store.
const textAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789 .,:;-_"

// randomMessage is a message with a size-byte body: random printable text
// as `body`, or random bytes as `bodyBase64` when binary.
func randomMessage(r *rand.Rand, size int, binary bool) wireMessage {
	if binary {
		b := make([]byte, size)
		for i := range b {
			b[i] = byte(r.UintN(256))
		}
		return wireMessage{BodyBase64: base64.StdEncoding.EncodeToString(b)}
	}
	b := make([]byte, size)
	for i := range b {
		b[i] = textAlphabet[r.IntN(len(textAlphabet))]
	}
	s := string(b)
	return wireMessage{Body: &s}
}

// payloads is a small set of pre-encoded request bodies that workers
// rotate through, so JSON encoding stays out of the measured loop while the
// bodies still differ from request to request.
type payloads struct {
	full [][]byte // batch messages each (or one single message)
	last []byte   // the remainder batch of a --count not divisible by batch
	// lastN is the number of messages in last (0: none).
	lastN int
}

const payloadVariants = 8

// encodePayloads pre-encodes variants of a request of batch messages of
// size bytes, and the remainder batch of rem messages when rem > 0.
// Every message carries d.
func encodePayloads(seed uint64, size, batch, rem int, binary bool, d delay) (payloads, error) {
	r := rand.New(rand.NewPCG(seed, 0x6d71626e6368))
	msg := func() wireMessage {
		m := randomMessage(r, size, binary)
		m.DelayLevel, m.DelaySeconds = d.Level, d.Seconds
		return m
	}
	enc := func(n int) ([]byte, error) {
		if batch == 1 && n == 1 {
			return json.Marshal(msg())
		}
		b := wireBatch{Messages: make([]wireMessage, n)}
		for i := range b.Messages {
			b.Messages[i] = msg()
		}
		return json.Marshal(b)
	}
	var p payloads
	for range payloadVariants {
		b, err := enc(batch)
		if err != nil {
			return p, err
		}
		p.full = append(p.full, b)
	}
	if rem > 0 {
		b, err := enc(rem)
		if err != nil {
			return p, err
		}
		p.last, p.lastN = b, rem
	}
	return p, nil
}
