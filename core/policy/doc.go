// Package policy holds the consumption rules every backend must apply the
// same way, so that the HTTP API behaves identically over the embedded
// engine and over JetStream (issue 12, "the gateway keeps what must behave
// the same on every backend"):
//
//   - the delay-level table (RocketMQ messageDelayLevel): its default,
//     its parser (--delay-levels), how a level maps to a delay (a level
//     above the last is the last) and which level covers a duration
//     (Retry-After);
//   - the retry policy of a failed delivery (RocketMQ
//     asyncConsumerSendMsgBack): dead-letter when reconsumeTimes reached
//     maxReconsumeTimes or the level is -1, else retry at the asked level,
//     3 + reconsumeTimes for level 0;
//   - receipt handles: the HMAC-SHA256 seal every handle carries (a key
//     shared by all instances), and the three answers a handle gets
//     (ok / expired / invalid).
//
// The embedded engine (core/engine: send-back, schedule), the embedded
// gateway (gateway: handle codec, timeline) and backend/jetstream (nack,
// dead-lettering on receive, schedules, handles) all call these; none of
// them restates a rule.
//
// It imports only the standard library and must stay that way: it sits
// below core/engine, gateway and every backend.
package policy
