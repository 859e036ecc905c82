package policy

// RetryBaseLevel is the level of the first retry when a failure names none
// (level 0): retries wait 3 + reconsumeTimes levels (10 s, 30 s, 1 m, 2 m …
// 2 h on the default table).
const RetryBaseLevel = 3

// Outcome is what becomes of one failed delivery.
type Outcome struct {
	// DeadLetter: the message goes to the group's DLQ (%DLQ%<group> on
	// the embedded engine, stream MQD_<group> on JetStream) instead of
	// being retried.
	DeadLetter bool
	// Level is the delay level of the retry (1..; not clamped to the
	// table: LevelIndex / LevelDelay clamp). 0 when DeadLetter.
	Level int
}

// Retry is the one retry policy of every backend (RocketMQ
// asyncConsumerSendMsgBack, SPEC §6). reconsumeTimes is how often the
// message failed before this delivery (0 on the first delivery),
// maxReconsumeTimes the group's limit, level the delay level the failure
// asked for (0: the policy decides, -1: dead-letter now). The failure
// that finds reconsumeTimes at maxReconsumeTimes dead-letters: a group
// with maxReconsumeTimes 16 sees a message delivered 17 times, then it is
// in the DLQ once.
func Retry(reconsumeTimes, maxReconsumeTimes, level int) Outcome {
	reconsumeTimes = max(reconsumeTimes, 0)
	if reconsumeTimes >= maxReconsumeTimes || level < 0 {
		return Outcome{DeadLetter: true}
	}
	if level == 0 {
		level = RetryBaseLevel + reconsumeTimes
	}
	return Outcome{Level: level}
}

// Exhausted reports whether a delivery that already failed reconsumeTimes
// times is past the group's limit before anyone answered it: a backend
// whose lease expiry counts as a failure without a send-back (JetStream
// redelivers after its ack wait) dead-letters such a delivery when it
// arrives instead of handing it out.
func Exhausted(reconsumeTimes, maxReconsumeTimes int) bool {
	return reconsumeTimes > maxReconsumeTimes
}
