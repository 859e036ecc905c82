package core

import (
	"strings"
	"time"
)

// Topic limits and defaults (SPEC §1).
const (
	DefaultQueues         = 8
	MaxQueues             = 256
	DefaultRetentionHours = 72
)

// System topic names and prefixes (SPEC §1).
const (
	RetryTopicPrefix = "%RETRY%"
	DLQTopicPrefix   = "%DLQ%"
	ScheduleTopic    = "SCHEDULE_TOPIC_XXXX"
)

// NamePattern is the rule for user topic and group names, as the OpenAPI
// document states it; ValidName checks it.
const NamePattern = `^[A-Za-z0-9_-]{1,127}$`

// MaxNameLen is NamePattern's length bound.
const MaxNameLen = 127

// ValidName reports whether s is a valid user topic or group name
// (NamePattern). It runs on every request that names a topic or group, so
// it is a loop, not a regular expression; a test holds the two together.
func ValidName(s string) bool {
	if len(s) == 0 || len(s) > MaxNameLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// IsSystemTopic reports whether clients may not create or publish to topic.
func IsSystemTopic(topic string) bool {
	return strings.HasPrefix(topic, "%") || topic == ScheduleTopic
}

// RetryTopic is the retry topic of a consumer group (`%RETRY%<group>`).
func RetryTopic(group string) string { return RetryTopicPrefix + group }

// DLQTopic is the dead-letter topic of a consumer group (`%DLQ%<group>`).
func DLQTopic(group string) string { return DLQTopicPrefix + group }

// TopicConfig is what a client sets on a topic.
type TopicConfig struct {
	Name           string
	Queues         int // 1..256; read = write queue count
	RetentionHours int // RocketMQ fileReservedTime
}

// Topic is a topic as stored.
type Topic struct {
	TopicConfig
	CreatedAt time.Time
	// UID is the topic's incarnation: a topic deleted and created again
	// under the same name gets a larger one. 0 for a %RETRY% / %DLQ% topic
	// that no message created yet.
	UID uint64
	// Layouts is the topic's growth history, oldest first: one entry per
	// time the queue count grew (see TopicLayout). Empty for a topic that
	// never grew.
	Layouts []TopicLayout
}

// TopicLayout records one growth of a topic: the queue count before it
// and, per queue of that count, the fence — the queue's max offset when
// the growth committed. Every message at queue q < Queues and offset
// below Fence[q] was published under this layout or an earlier one
// (its sharding key chose its queue modulo at most Queues); every message
// above the fences, and every message of a queue added later, was
// published under a later one. ORDERLY groups consume a layout's messages
// only after everything of the layouts before it is consumed, which is
// what keeps per-key order across growth.
type TopicLayout struct {
	Queues int
	Fence  []int64
}

// LayoutOf returns which layout the message at (queue, offset) belongs to:
// the index of the first growth whose fence it is below, or len(layouts)
// (the current layout) when there is none.
func LayoutOf(layouts []TopicLayout, queue int, offset int64) int {
	for i, l := range layouts {
		if queue < l.Queues && offset < l.Fence[queue] {
			return i
		}
	}
	return len(layouts)
}

// QueueStats is one queue's offset range: [MinOffset, MaxOffset).
type QueueStats struct {
	QueueID   int
	MinOffset int64
	MaxOffset int64
}

// TopicStats counts a topic's messages.
type TopicStats struct {
	Messages int64 // sum over queues of MaxOffset-MinOffset
	Queues   []QueueStats
	// Corrupt counts the topic's stored messages set aside because they
	// failed their checksum when read (they are part of Messages).
	Corrupt int64
	// Bytes estimates the stored size of the topic's messages (records as
	// kept in the commit log, from a sample of each queue's units).
	Bytes int64
}

// MessageQueue names one queue of one topic (RocketMQ MessageQueue; the
// broker name is implicit: there is one embedded engine).
type MessageQueue struct {
	Topic   string
	QueueID int
}

// Less orders queues by topic, then queue id, as rebalance sorts them.
func (q MessageQueue) Less(o MessageQueue) bool {
	if q.Topic != o.Topic {
		return q.Topic < o.Topic
	}
	return q.QueueID < o.QueueID
}
