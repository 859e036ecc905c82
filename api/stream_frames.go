package api

// The frames of the mqgate.v1 stream protocol (docs/streaming.md). These
// types are the protocol's definition: openapi/gen writes the AsyncAPI 3
// document openapi/asyncapi.json from them (StreamFrames lists them), and
// TestStreamFramesMatchAsyncAPI keeps the two in step. The server decodes
// client frames into them and writes server frames in their shape (most
// of them appended by hand, stream_encode.go, the way answer.go does for
// REST answers).

// StreamProtocol is the WebSocket subprotocol every stream must offer.
const StreamProtocol = "mqgate.v1"

// StreamKeyProtocolPrefix starts the second subprotocol a browser offers to
// carry its API key: mqgate.key.<base64url of the key, no padding>.
const StreamKeyProtocolPrefix = "mqgate.key."

// Frame types, the value of every frame's "type".
const (
	FrameOpen     = "open"
	FrameMessages = "messages"
	FrameEmpty    = "empty"
	FrameResults  = "results"
	FrameFlow     = "flow"
	FrameConfirm  = "confirm"
	FrameError    = "error"
	FrameAck      = "ack"
	FrameNack     = "nack"
	FrameExtend   = "extend"
	FramePublish  = "publish"
)

// ConsumeOpenFrame is the first frame of a consume stream (server → client).
type ConsumeOpenFrame struct {
	Type     string `json:"type" enums:"open"`
	Protocol string `json:"protocol" example:"mqgate.v1"`
	// Stream names this stream in the server's log.
	Stream string `json:"stream" example:"s-3f2a"`
	Group  string `json:"group" example:"billing"`
	// MaxOutstandingMessages and MaxOutstandingBytes are the flow limits in force.
	MaxOutstandingMessages int   `json:"maxOutstandingMessages" example:"1000"`
	MaxOutstandingBytes    int64 `json:"maxOutstandingBytes" example:"10485760"`
	// InvisibleSeconds is the lease of each delivery.
	InvisibleSeconds int `json:"invisibleSeconds" example:"60"`
	// PingSeconds is how often the server pings; a pong must come within it.
	PingSeconds int `json:"pingSeconds" example:"30"`
}

// PublishOpenFrame is the first frame of a publish stream (server → client).
type PublishOpenFrame struct {
	Type     string `json:"type" enums:"open"`
	Protocol string `json:"protocol" example:"mqgate.v1"`
	Stream   string `json:"stream" example:"s-91c0"`
	Topic    string `json:"topic" example:"orders"`
	// MaxUnconfirmedMessages and MaxUnconfirmedBytes are the limits in
	// force: at either, the server reads no further frame until confirms go out.
	MaxUnconfirmedMessages int   `json:"maxUnconfirmedMessages" example:"1000"`
	MaxUnconfirmedBytes    int64 `json:"maxUnconfirmedBytes" example:"16777216"`
	PingSeconds            int   `json:"pingSeconds" example:"30"`
}

// MessagesFrame carries deliveries (server → client), each exactly as in a
// receive answer.
type MessagesFrame struct {
	Type     string            `json:"type" enums:"messages"`
	Messages []ReceivedMessage `json:"messages"`
}

// EmptyFrame says why nothing can be delivered, once per change of reason
// (server → client).
type EmptyFrame struct {
	Type  string       `json:"type" enums:"empty"`
	Empty EmptyReceive `json:"empty"`
}

// AckFrame acknowledges deliveries (client → server), as POST …/ack.
type AckFrame struct {
	Type string `json:"type" enums:"ack"`
	// ID is the client's name for this frame (1..64 printable ASCII
	// characters), repeated in its answer.
	ID             string   `json:"id" minLength:"1" maxLength:"64" example:"a1"`
	ReceiptHandles []string `json:"receiptHandles" validate:"required,min=1,max=100,dive,max=1024" minItems:"1" maxItems:"100"`
}

// NackFrame gives deliveries back for a retry (client → server), as POST …/nack.
type NackFrame struct {
	Type           string   `json:"type" enums:"nack"`
	ID             string   `json:"id" minLength:"1" maxLength:"64" example:"n1"`
	ReceiptHandles []string `json:"receiptHandles" validate:"required,min=1,max=100,dive,max=1024" minItems:"1" maxItems:"100"`
	// DelayLevel: 0 lets the engine decide, -1 dead-letters now, 1.. a level.
	DelayLevel int `json:"delayLevel,omitempty" validate:"min=-1" minimum:"-1"`
	// Reason says why the messages failed (at most 256 characters).
	Reason string `json:"reason,omitempty" validate:"omitempty,max=256" maxLength:"256"`
}

// ExtendFrame lengthens leases (client → server), as POST …/extend.
type ExtendFrame struct {
	Type             string   `json:"type" enums:"extend"`
	ID               string   `json:"id" minLength:"1" maxLength:"64" example:"e1"`
	ReceiptHandles   []string `json:"receiptHandles" validate:"required,min=1,max=100,dive,max=1024" minItems:"1" maxItems:"100"`
	InvisibleSeconds int      `json:"invisibleSeconds" validate:"required,min=1,max=43200" minimum:"1" maximum:"43200"`
}

// FlowFrame changes a consume stream's flow limits (client → server; a
// field left out keeps its value), and answers it with the limits now in
// force (server → client, both fields present).
type FlowFrame struct {
	Type                   string `json:"type" enums:"flow"`
	ID                     string `json:"id" minLength:"1" maxLength:"64" example:"f1"`
	MaxOutstandingMessages *int   `json:"maxOutstandingMessages,omitempty" minimum:"1" maximum:"10000"`
	MaxOutstandingBytes    *int64 `json:"maxOutstandingBytes,omitempty" minimum:"1024" maximum:"268435456"`
}

// ResultsFrame answers an ack, nack or extend frame, one result per handle
// in order (server → client).
type ResultsFrame struct {
	Type    string         `json:"type" enums:"results"`
	ID      string         `json:"id"`
	Results []HandleResult `json:"results"`
}

// PublishFrame publishes one message or an atomic batch (client → server):
// exactly one of message and messages.
type PublishFrame struct {
	Type    string          `json:"type" enums:"publish"`
	ID      string          `json:"id" minLength:"1" maxLength:"64" example:"p1"`
	Message *PublishRequest `json:"message,omitempty"`
	// Messages is an atomic batch (1..1000 messages, 4 MiB of bodies in all).
	Messages []PublishRequest `json:"messages,omitempty" maxItems:"1000"`
}

// ConfirmFrame answers a publish frame once its messages are durable
// (server → client), one result per message in order.
type ConfirmFrame struct {
	Type    string          `json:"type" enums:"confirm"`
	ID      string          `json:"id"`
	Results []PublishResult `json:"results"`
}

// ErrorFrame answers a frame the server cannot act on (server → client);
// the stream goes on. ID is the frame's when it had one.
type ErrorFrame struct {
	Type    string  `json:"type" enums:"error"`
	ID      string  `json:"id,omitempty"`
	Problem Problem `json:"problem"`
}

// StreamFrame names one frame type of the protocol for the AsyncAPI
// generator: which stream carries it, in which direction.
type StreamFrame struct {
	Name      string // the AsyncAPI message name
	Stream    string // "consume" or "publish"
	ToServer  bool   // client → server
	Type      string // the frame's "type"
	Example   any    // a Go value of the frame's type
	Summary   string
	Reference string // the section of docs/streaming.md
}

// StreamFrames lists every frame of mqgate.v1, the input of the AsyncAPI
// generator (openapi/gen).
func StreamFrames() []StreamFrame {
	return []StreamFrame{
		{"consumeOpen", "consume", false, FrameOpen, ConsumeOpenFrame{}, "The stream is open; the limits in force.", "the-consume-stream"},
		{"messages", "consume", false, FrameMessages, MessagesFrame{}, "Deliveries, each as in a receive answer.", "the-consume-stream"},
		{"empty", "consume", false, FrameEmpty, EmptyFrame{}, "Why nothing can be delivered, once per change.", "the-consume-stream"},
		{"results", "consume", false, FrameResults, ResultsFrame{}, "The answer to an ack, nack or extend frame.", "the-consume-stream"},
		{"flowAnswer", "consume", false, FrameFlow, FlowFrame{}, "The flow limits now in force.", "the-consume-stream"},
		{"consumeError", "consume", false, FrameError, ErrorFrame{}, "A frame the server could not act on.", "errors-on-a-stream"},
		{"ack", "consume", true, FrameAck, AckFrame{}, "Acknowledge deliveries.", "the-consume-stream"},
		{"nack", "consume", true, FrameNack, NackFrame{}, "Give deliveries back for a retry.", "the-consume-stream"},
		{"extend", "consume", true, FrameExtend, ExtendFrame{}, "Lengthen leases.", "the-consume-stream"},
		{"flow", "consume", true, FrameFlow, FlowFrame{}, "Change the flow limits.", "the-consume-stream"},
		{"publishOpen", "publish", false, FrameOpen, PublishOpenFrame{}, "The stream is open; the limits in force.", "the-publish-stream"},
		{"confirm", "publish", false, FrameConfirm, ConfirmFrame{}, "The messages of a publish frame are durable.", "the-publish-stream"},
		{"publishError", "publish", false, FrameError, ErrorFrame{}, "A frame the server could not act on.", "errors-on-a-stream"},
		{"publish", "publish", true, FramePublish, PublishFrame{}, "Publish one message or an atomic batch.", "the-publish-stream"},
	}
}
