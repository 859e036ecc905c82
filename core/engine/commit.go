package engine

import (
	"context"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/core/store"
)

// putOp is one message bound for an explicit queue: the reusable write
// primitive under Put, and under the schedule service (moving a due message
// to its real topic) and sendMessageBack (%RETRY%g / %DLQ%g) — system
// topics are allowed here.
type putOp struct {
	topic   string
	queueID int
	// msg carries id, body, tags, keys, properties, system properties,
	// bornAt and reconsumeTimes; commit fills in its topic, queue id, queue
	// offset, commit log offset and storedAt.
	msg *core.Message
	// tagsCode overrides the consume-queue tags code when hasTagsCode is set
	// (schedule queues keep the due time there); by default it is the hash
	// of msg.Tags.
	tagsCode    int64
	hasTagsCode bool
	// autoCreate creates a missing system topic with that many queues;
	// zero means 1 for %RETRY%/%DLQ% topics and none otherwise.
	autoCreate int
	// expectUID (optional) is the topic incarnation the message belongs to:
	// the commit fails with ENotFound if the topic now has another one
	// (store.Op.ExpectUID).
	expectUID uint64
}

// commit appends ops atomically and durably in the next group commit;
// hook (optional) runs in the same transaction after the appends and may
// run more than once (see store.Hook). On success every op's msg is
// updated with where it landed.
func (e *Engine) commit(ctx context.Context, ops []putOp, hook store.Hook) error {
	sops := make([]store.Op, len(ops))
	// Every record of the group in one buffer: one allocation, not one
	// per message. Each record is capped at its own length, so the
	// writer's patching (store.place) stays inside it.
	size := 0
	for i := range ops {
		op := &ops[i]
		op.msg.Topic, op.msg.QueueID = op.topic, op.queueID
		size += store.EncodedSize(op.msg)
	}
	recs := make([]byte, 0, size)
	for i := range ops {
		op := &ops[i]
		tc := int64(core.TagsCode(op.msg.Tags))
		if op.hasTagsCode {
			tc = op.tagsCode
		}
		auto := op.autoCreate
		if auto == 0 && isGroupTopic(op.topic) {
			auto = 1
		}
		start := len(recs)
		recs = store.AppendMessage(recs, op.msg)
		sops[i] = store.Op{Topic: op.topic, QueueID: op.queueID, Record: recs[start:len(recs):len(recs)],
			ID: op.msg.ID, Keys: op.msg.Keys, TagsCode: tc, AutoCreate: auto, ExpectUID: op.expectUID}
	}
	placed, err := e.st.Commit(ctx, sops, hook)
	if err != nil {
		return err
	}
	for i, p := range placed {
		m := ops[i].msg
		m.QueueOffset, m.CommitLogOffset, m.StoredAt = p.QueueOffset, p.CommitLogOffset, p.StoredAt
	}
	return nil
}
