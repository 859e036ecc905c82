package core

import "time"

// System property names (RocketMQ MessageConst). They live in
// Message.SysProps, never in user Properties.
const (
	PropRetryTopic      = "RETRY_TOPIC"
	PropOriginMessageID = "ORIGIN_MESSAGE_ID"
	PropRealTopic       = "REAL_TOPIC"
	PropRealQueueID     = "REAL_QID"
	// PropRealTopicUID is the incarnation (Topic.UID) of REAL_TOPIC when the
	// message was delayed or sent back: a due message whose real topic now
	// has another incarnation (deleted, maybe re-created) is dropped.
	PropRealTopicUID = "REAL_TOPIC_UID"
	// PropRetryTopicUID is the incarnation of RETRY_TOPIC (the original
	// topic) on a retry or dead-letter copy: once that topic is deleted,
	// its messages' pending retries are not delivered (SPEC §8.9).
	PropRetryTopicUID = "RETRY_TOPIC_UID"
	PropDelay         = "DELAY"
	PropDeliverAt     = "DELIVER_AT" // unix ms of a timer message
	// PropTraceParent and PropTraceState are the W3C Trace Context of the
	// message's creation (the producer's, or mqgate's publish span when
	// tracing is on): kept across retries, dead-lettering and redrives,
	// returned as the message's traceparent and tracestate and sent as
	// headers on a webhook push. As system properties they live beside,
	// never among, the user's Properties, so no user property can set,
	// read or shadow them.
	PropTraceParent = "TRACEPARENT"
	PropTraceState  = "TRACESTATE"
)

// PutMessage is one message as a client publishes it.
type PutMessage struct {
	Body        []byte
	BodyIsText  bool // published as `body` (UTF-8) rather than `bodyBase64`
	Tags        string
	Keys        []string
	Properties  map[string]string
	ShardingKey string

	// At most one of DelayLevel (1..N levels) and DeliverAt is set.
	DelayLevel int
	DeliverAt  time.Time

	// DedupID, when set, makes the publish idempotent (Idempotency-Key,
	// a batch entry's deduplicationId): within the engine's dedup window a
	// repeat with the same id on the same topic stores nothing and answers
	// the original result with Replayed set.
	DedupID string
	// DedupHash fingerprints the request that carried DedupID; a repeat
	// with the same id and another hash is refused (EUnprocessable).
	DedupHash [32]byte

	// TraceParent and TraceState are the message's trace context (W3C
	// Trace Context), stored as PropTraceParent and PropTraceState; ""
	// when it has none. The api layer checks their syntax.
	TraceParent string
	TraceState  string
}

// PutResult is where a published message went.
type PutResult struct {
	MessageID   string
	Topic       string
	QueueID     int
	QueueOffset int64
	StoredAt    time.Time
	// DeliverAt is set for a delayed message, which has no position in its
	// topic yet (QueueID and QueueOffset are -1).
	DeliverAt time.Time
	// Replayed says the message was published before under the same
	// DedupID: this is the original result and nothing new was stored.
	Replayed bool
}

// Message is a stored message as read back from a queue.
type Message struct {
	// ID is the message id as stored; a retry copy has its own id and
	// carries the original in SysProps[PropOriginMessageID].
	ID              string
	Topic           string // topic it is stored in (e.g. %RETRY%g for a retry)
	QueueID         int
	QueueOffset     int64
	CommitLogOffset int64

	Body        []byte
	BodyIsText  bool
	Tags        string
	Keys        []string
	Properties  map[string]string
	SysProps    map[string]string
	ShardingKey string

	BornAt         time.Time // when the gateway first accepted it
	StoredAt       time.Time // when this copy's transaction committed
	ReconsumeTimes int
}

// UserID is the id shown to users: stable across retries and redrives
// (ORIGIN_MESSAGE_ID when present).
func (m *Message) UserID() string {
	if id := m.SysProps[PropOriginMessageID]; id != "" {
		return id
	}
	return m.ID
}

// UserTopic is the topic shown to users: for a retry message the original
// topic (RocketMQ resetRetryAndNamespace).
func (m *Message) UserTopic() string {
	if t := m.SysProps[PropRetryTopic]; t != "" {
		return t
	}
	return m.Topic
}

// TraceParent is the message's stored W3C traceparent ("" when none).
func (m *Message) TraceParent() string { return m.SysProps[PropTraceParent] }

// TraceState is the message's stored W3C tracestate ("" when none).
func (m *Message) TraceState() string { return m.SysProps[PropTraceState] }

// Size is the message's size for flow control (RocketMQ counts the body).
func (m *Message) Size() int { return len(m.Body) }

// GetStatus is the outcome of reading a queue (RocketMQ GetMessageStatus
// folded into PullStatus).
type GetStatus int

const (
	Found         GetStatus = iota // FOUND: Messages holds at least one message
	NoNewMsg                       // NO_NEW_MSG: offset == max offset
	NoMatchedMsg                   // NO_MATCHED_MSG: messages read, none matched the filter
	OffsetIllegal                  // OFFSET_ILLEGAL: offset < min or > max; use NextOffset
)

func (s GetStatus) String() string {
	switch s {
	case Found:
		return "FOUND"
	case NoNewMsg:
		return "NO_NEW_MSG"
	case NoMatchedMsg:
		return "NO_MATCHED_MSG"
	case OffsetIllegal:
		return "OFFSET_ILLEGAL"
	}
	return "UNKNOWN"
}

// GetResult is one read of a queue.
type GetResult struct {
	Status     GetStatus
	Messages   []*Message
	NextOffset int64 // where the next read starts
	MinOffset  int64
	MaxOffset  int64
	// TopicUID and Layouts describe the topic as of the read (the same
	// snapshot): its incarnation (0 for a %RETRY% topic not created yet)
	// and how many growths it has recorded (len(Topic.Layouts)). A reader
	// that classifies messages by layout re-reads the topic when Layouts
	// is more than it knows.
	TopicUID uint64
	Layouts  int
}
