package gateway

import (
	"context"

	"github.com/mqgate/mqgate/core/consumer"
	"github.com/mqgate/mqgate/core/engine"
	"github.com/mqgate/mqgate/core/groups"
)

// ConsumerFactory returns the NewClientFunc that builds real push-consumer
// clients over deps (cmd wires deps to the engine and the group registry).
// tune, if set, adjusts each client's options (e.g. PersistInterval).
func ConsumerFactory(deps consumer.Deps, tune func(*consumer.Options)) NewClientFunc {
	return func(o consumer.Options) (PushClient, error) {
		if tune != nil {
			tune(&o)
		}
		return consumer.New(o, deps)
	}
}

// SettlingSendBack is the push consumer's SendBacker over the engine and
// the group registry: the retry or dead-letter copy and the original's
// settlement in the group's position commit in one transaction (SPEC §8.4:
// a message is in the DLQ at most once whatever the crash). A send-back for
// a group incarnation that was deleted meanwhile writes nothing.
type SettlingSendBack struct {
	Engine   *engine.Engine
	Registry *groups.Registry
	// Timeline, if set, records RETRY_SCHEDULED and DEAD_LETTERED.
	Timeline *Timeline
}

var _ consumer.SendBacker = SettlingSendBack{}

// SendMessagesBack implements consumer.SendBacker: one engine batch (one
// store transaction) whose guard checks the group incarnation once and
// whose copies each carry their settle hook.
func (s SettlingSendBack) SendMessagesBack(ctx context.Context, group string, backs []consumer.SendBack) error {
	if len(backs) == 0 {
		return nil
	}
	out := make([]engine.SendBack, len(backs))
	for i, b := range backs {
		st := b.Settle
		// A hook answering core.ErrGroupGone drops its copy only.
		out[i] = engine.SendBack{Msg: b.Msg, DelayLevel: b.DelayLevel, MaxReconsumeTimes: b.MaxReconsumeTimes,
			Settle: s.Registry.SettleHook(group, st.Incarnation, st.ConsumerID, st.Queue, st.Offset, st.Epoch, st.TopicUID)}
	}
	// A batch is one client's: one group incarnation.
	err := s.Engine.SendMessagesBack(ctx, group, s.Registry.GroupGuard(group, backs[0].Settle.Incarnation), out)
	if err == nil {
		for _, b := range backs {
			s.Timeline.recordSendBack(group, b.Msg, b.DelayLevel, b.MaxReconsumeTimes)
		}
	}
	return err
}
