package api

import (
	"context"

	"github.com/mqgate/mqgate/core"
)

// EmptyReceive tells why a receive answered no message (API.md "Receive
// diagnostics"); old clients ignore it.
type EmptyReceive struct {
	// Reason: NO_MESSAGES (nothing buffered, leased or suspended),
	// NOT_VISIBLE_YET (everything held is leased to other receives),
	// KEYS_BLOCKED (ORDERLY queues wait behind a message in flight or a
	// failed head's suspension), PAUSED (the group is paused: POST
	// /v1/groups/{group}/resume), NO_SUBSCRIPTION_MATCH (none of the
	// subscribed topics exists).
	Reason string `json:"reason" enums:"NO_MESSAGES,NOT_VISIBLE_YET,KEYS_BLOCKED,PAUSED,NO_SUBSCRIPTION_MATCH" example:"KEYS_BLOCKED"`
	// NextVisibleAt is the earliest lease deadline or suspension end of
	// what holds messages back.
	NextVisibleAt string `json:"nextVisibleAt,omitempty" format:"date-time" example:"2026-01-02T15:05:05.000Z"`
	// BlockedKeys are the sharding keys of the heads holding ORDERLY
	// queues back (KEYS_BLOCKED), one per queue.
	BlockedKeys []string `json:"blockedKeys,omitempty" example:"customer-9"`
}

// emptyReceive explains an empty receive of group; nil when the service
// cannot tell.
func (s *Server) emptyReceive(ctx context.Context, group, consumerID string) *EmptyReceive {
	if s.noSubscribedTopic(ctx, group) {
		return &EmptyReceive{Reason: string(core.EmptyNoSubscriptionMatch)}
	}
	dg, err := s.backend.Diagnose(group, consumerID)
	if err != nil {
		return nil
	}
	return newEmptyReceive(dg)
}

func newEmptyReceive(dg core.Diagnosis) *EmptyReceive {
	out := &EmptyReceive{Reason: string(dg.Reason)}
	if !dg.NextVisibleAt.IsZero() {
		out.NextVisibleAt = formatTime(dg.NextVisibleAt)
	}
	for _, h := range dg.Blocked {
		out.BlockedKeys = append(out.BlockedKeys, h.Head.ShardingKey)
	}
	return out
}

// noSubscribedTopic reports whether none of group's subscribed topics
// exists (a group with no subscription counts too).
func (s *Server) noSubscribedTopic(ctx context.Context, group string) bool {
	if s.backend == nil {
		return false
	}
	g, err := s.backend.Group(ctx, group)
	if err != nil {
		return false
	}
	for _, sub := range g.Subscriptions {
		if _, err := s.backend.Topic(sub.Topic); err == nil || core.ErrorCode(err) != core.ENotFound {
			return false
		}
	}
	return true
}

// statusEmpty is the group status's "empty": what an empty receive would
// answer now; nil while messages wait to be received (unless ORDERLY
// queues are blocked) or when the service cannot tell.
func (s *Server) statusEmpty(ctx context.Context, group string, buffered int) *EmptyReceive {
	e := s.emptyReceive(ctx, group, "")
	if e == nil || (buffered > 0 && e.Reason != string(core.EmptyKeysBlocked) && e.Reason != string(core.EmptyPaused)) {
		return nil
	}
	return e
}
