package jetstream

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/mqgate/mqgate/core"
)

// Names of everything the backend keeps in JetStream (docs/jetstream.md).
// Topic and group names match ^[A-Za-z0-9_-]{1,127}$, so they are valid
// stream-name and subject tokens as they are; '~' (never in a name)
// separates the parts of consumer names.

func topicStream(topic string) string   { return "MQ_" + topic }
func topicSubjects(topic string) string { return "mq." + topic + ".>" }

// indexSubjects holds a topic's index and dedup entries (publish.go,
// dedup.go), one subject per message id, key and idempotency key, under
// a first token of their own. Under mq.<topic> (as before) every
// consumer's read of its next message walked all of them: a consumer
// with several filter subjects (mq.<topic>.* and the group's redrive
// subject) matches a stored block's subjects by intersecting its
// filters with the block's subject tree, and a filter mq.<topic>.*
// admits the prefix mq.<topic>.i, so the walk visited every index
// subject of the block, at each delivery. Under mqi.<topic> the walk
// leaves them at the first token. Streams created before keep their
// older entries under mq.<topic> (legacyIndexSubject); lookups read both.
func indexSubjects(topic string) string { return "mqi." + topic + ".>" }

// legacyIndexSubject is an index or dedup subject as it was before
// indexSubjects: mq.<topic>.<kind>.<token>.
func legacyIndexSubject(subject string) string { return "mq." + strings.TrimPrefix(subject, "mqi.") }

func queueSubject(topic string, q int) string { return "mq." + topic + "." + strconv.Itoa(q) }
func queueWildcard(topic string) string       { return "mq." + topic + ".*" }

// scheduleSubject holds the schedule message of one delayed message (one
// subject per message: a schedule is the last message on its subject).
func scheduleSubject(topic, id string) string { return "mq." + topic + ".s." + id }

// redriveSubject carries messages redriven to one group only.
func redriveSubject(topic, group string) string { return "mq." + topic + ".r." + group }

func dlqStream(group string) string  { return "MQD_" + group }
func dlqSubject(group string) string { return "mqd." + group }

// consumerName is the durable consumer of group on one topic stream:
// queue < 0 for a CONCURRENTLY group (one consumer over every queue), the
// queue for ORDERLY (one per queue, MaxAckPending 1); consumerID names a
// BROADCASTING consumer.
func consumerName(group, consumerID string, queue int) string {
	var b strings.Builder
	b.WriteString(group)
	if consumerID != "" {
		b.WriteString("~b~")
		b.WriteString(consumerID)
	}
	if queue >= 0 {
		fmt.Fprintf(&b, "~q%d", queue)
	}
	return b.String()
}

// consumerQueue is the queue of an ORDERLY queue consumer's name (see
// consumerName); false for any other consumer.
func consumerQueue(name string) (int, bool) {
	i := strings.LastIndex(name, "~q")
	if i < 0 {
		return 0, false
	}
	q, err := strconv.Atoi(name[i+2:])
	return q, err == nil && q >= 0
}

// subjectQueue parses the queue of a stored message's subject
// (mq.<topic>.<queue>); -1 for any other subject.
func subjectQueue(subj string) (topic string, queue int) {
	t := strings.Split(subj, ".")
	if len(t) == 3 && t[0] == "mq" {
		if q, err := strconv.Atoi(t[2]); err == nil {
			return t[1], q
		}
	}
	if len(t) >= 2 {
		return t[1], -1
	}
	return "", -1
}

func userTopic(name string) error {
	if core.IsSystemTopic(name) {
		return core.Errorf(core.EForbidden, "%q is a system topic", name)
	}
	if !core.ValidName(name) {
		return core.FieldError("name", "must match ^[A-Za-z0-9_-]{1,127}$")
	}
	return nil
}
