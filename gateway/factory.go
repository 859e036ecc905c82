package gateway

import (
	"context"

	"github.com/mqgate/mqgate/core"
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

// SendMessageBack implements consumer.SendBacker.
func (s SettlingSendBack) SendMessageBack(ctx context.Context, group string, msg *core.Message, delayLevel, maxReconsumeTimes int, st consumer.Settle) error {
	// A hook answering core.ErrGroupGone makes the engine write nothing.
	hook := s.Registry.SettleHook(group, st.Incarnation, st.ConsumerID, st.Queue, st.Offset, st.Epoch, st.TopicUID)
	err := s.Engine.SendMessageBackSettled(ctx, group, msg, delayLevel, maxReconsumeTimes, hook)
	if err == nil {
		s.Timeline.recordSendBack(group, msg, delayLevel, maxReconsumeTimes)
	}
	return err
}
