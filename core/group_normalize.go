package core

import (
	"fmt"
	"net/url"
	"time"
)

// Limits on a group config (SPEC §4, API.md).
const (
	MaxMaxReconsumeTimes = 1000                            // RocketMQ has no bound; past 16 every retry waits 2 h anyway
	MaxInvisibleSeconds  = int(MaxInvisible / time.Second) // the longest lease (limits.go)
	MaxSubscriptions     = 64

	DefaultPushMaxInFlight    = 16
	DefaultPushTimeoutSeconds = 15
	DefaultPushBatchSize      = 1
	MaxPushMaxInFlight        = 1024
	MaxPushTimeoutSeconds     = 300
)

// NormalizeGroup validates cfg and fills in the defaults (RocketMQ
// SubscriptionGroupConfig defaults plus SPEC §4). It returns an EInvalid
// *Error naming the offending field (JSON names).
func NormalizeGroup(cfg GroupConfig) (GroupConfig, error) {
	cfg.Incarnation = 0 // the registry's to assign
	if !ValidName(cfg.Name) {
		return cfg, FieldError("name", "must match ^[A-Za-z0-9_-]{1,127}$")
	}
	if len(cfg.Subscriptions) == 0 {
		return cfg, FieldError("subscriptions", "at least one subscription is required")
	}
	if len(cfg.Subscriptions) > MaxSubscriptions {
		return cfg, FieldError("subscriptions", "at most %d subscriptions", MaxSubscriptions)
	}
	subs := make([]Subscription, 0, len(cfg.Subscriptions))
	seen := map[string]bool{}
	for i, s := range cfg.Subscriptions {
		if !ValidName(s.Topic) {
			return cfg, FieldError(fmt.Sprintf("subscriptions[%d].topic", i), "must be a user topic name matching ^[A-Za-z0-9_-]{1,127}$")
		}
		if seen[s.Topic] {
			return cfg, FieldError(fmt.Sprintf("subscriptions[%d].topic", i), "topic %q is subscribed twice", s.Topic)
		}
		seen[s.Topic] = true
		f, err := ParseSubscription(s)
		if err != nil {
			ce := err.(*Error)
			return cfg, FieldError(fmt.Sprintf("subscriptions[%d].%s", i, ce.Field), "%s", ce.Message)
		}
		ns := Subscription{Topic: s.Topic, Filter: f.Expr}
		if f.SQL() {
			ns.FilterType = FilterSQL92 // TAG is stored as "", as before SQL92 existed
		}
		subs = append(subs, ns)
	}
	cfg.Subscriptions = subs

	switch cfg.MessageModel {
	case "":
		cfg.MessageModel = Clustering
	case Clustering, Broadcasting:
	default:
		return cfg, FieldError("messageModel", "must be CLUSTERING or BROADCASTING")
	}
	switch cfg.ConsumeMode {
	case "":
		cfg.ConsumeMode = Concurrently
	case Concurrently, Orderly:
	default:
		return cfg, FieldError("consumeMode", "must be CONCURRENTLY or ORDERLY")
	}
	switch cfg.ConsumeFrom {
	case "":
		cfg.ConsumeFrom = ConsumeFromLastOffset
	case ConsumeFromLastOffset, ConsumeFromFirstOffset:
	case ConsumeFromTimestamp:
		if cfg.ConsumeTimestamp.IsZero() {
			return cfg, FieldError("consumeFrom.timestamp", "is required when position is TIMESTAMP")
		}
	default:
		return cfg, FieldError("consumeFrom.position", "must be LAST_OFFSET, FIRST_OFFSET or TIMESTAMP")
	}
	if cfg.ConsumeFrom != ConsumeFromTimestamp {
		cfg.ConsumeTimestamp = time.Time{}
	}
	if cfg.MaxReconsumeTimes < 0 || cfg.MaxReconsumeTimes > MaxMaxReconsumeTimes {
		return cfg, FieldError("maxReconsumeTimes", "must be between 0 and %d", MaxMaxReconsumeTimes)
	}
	// 0 is a legal maxReconsumeTimes in RocketMQ (dead-letter on first
	// failure), so the default can only be applied by the caller; the API
	// layer sends DefaultMaxReconsumeTimes when the field is absent.
	if cfg.InvisibleSeconds == 0 {
		cfg.InvisibleSeconds = DefaultInvisibleSeconds
	}
	if cfg.InvisibleSeconds < 1 || cfg.InvisibleSeconds > MaxInvisibleSeconds {
		return cfg, FieldError("invisibleSeconds", "must be between 1 and %d", MaxInvisibleSeconds)
	}
	if p := cfg.Push; p != nil {
		pc := *p
		u, err := url.Parse(pc.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return cfg, FieldError("push.url", "must be an absolute http or https URL")
		}
		if pc.MaxInFlight == 0 {
			pc.MaxInFlight = DefaultPushMaxInFlight
		}
		if pc.MaxInFlight < 1 || pc.MaxInFlight > MaxPushMaxInFlight {
			return cfg, FieldError("push.maxInFlight", "must be between 1 and %d", MaxPushMaxInFlight)
		}
		if pc.TimeoutSeconds == 0 {
			pc.TimeoutSeconds = DefaultPushTimeoutSeconds
		}
		if pc.TimeoutSeconds < 1 || pc.TimeoutSeconds > MaxPushTimeoutSeconds {
			return cfg, FieldError("push.timeoutSeconds", "must be between 1 and %d", MaxPushTimeoutSeconds)
		}
		if pc.BatchSize == 0 {
			pc.BatchSize = DefaultPushBatchSize // read back as applied
		}
		cfg.Push = &pc
	}
	return cfg, nil
}
