package gateway

import (
	"context"
	"testing"

	"github.com/mqgate/mqgate/core"
)

// TestAdminDeleteGroup: deleting a group answers nil whether or not its
// system topics exist, and removes %DLQ%<group> (and %RETRY%<group>) with
// it. It used to call the engine's user-facing DeleteTopic, which refuses
// system topics, so every DELETE /v1/groups/{group} answered 403 after
// already removing the group.
func TestAdminDeleteGroup(t *testing.T) {
	env := newRealEnv(t)
	ctx := context.Background()
	if _, _, err := env.eng.PutTopic(core.TopicConfig{Name: "t", Queues: 1}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"plain", "dead"} {
		cfg := clustering(name)
		if _, _, err := env.admin.PutGroup(ctx, cfg); err != nil {
			t.Fatal(err)
		}
	}
	env.publish(t, "t", 1, nil)
	got, err := env.eng.GetMessages(core.MessageQueue{Topic: "t", QueueID: 0}, 0, 1, core.MatchAll)
	if err != nil || len(got.Messages) != 1 {
		t.Fatalf("read back: %v %d", err, len(got.Messages))
	}
	if err := env.eng.SendMessageBack(ctx, "dead", got.Messages[0], -1, 16); err != nil {
		t.Fatal(err)
	}
	// (Topic reports an absent system topic as existing; TopicStats does not.)
	if _, err := env.eng.TopicStats(core.DLQTopic("dead")); err != nil {
		t.Fatalf("the dead-letter topic was not created: %v", err)
	}

	for _, name := range []string{"plain", "dead"} {
		if err := env.admin.DeleteGroup(ctx, name); err != nil {
			t.Fatalf("delete %s: %v", name, err)
		}
		if _, err := env.admin.Group(ctx, name); core.ErrorCode(err) != core.ENotFound {
			t.Fatalf("group %s after delete: %v", name, err)
		}
	}
	if _, err := env.eng.TopicStats(core.DLQTopic("dead")); core.ErrorCode(err) != core.ENotFound {
		t.Fatalf("the dead-letter topic outlived its group: %v", err)
	}
}
