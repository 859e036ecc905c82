package jetstream

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	jsapi "github.com/nats-io/nats.go/jetstream"

	"github.com/mqgate/mqgate/core"
)

// Paused groups (core.Group.Paused; API.md "Pause"), as on embedded
// (gateway/pause.go). The flag lives in the group's config in
// MQGATE_GROUPS, so every instance answers the same and a pause survives
// restarts. A paused pull group hands nothing out: a receive waits out its
// waitSeconds on a watch of the group's key and answers empty (Diagnose:
// PAUSED); a resume through any instance wakes it at once. Acks, nacks and
// extends of what was received before go on, and leases still expire.
// Messages an instance had already pulled stay unleased in its stash and
// are redelivered by JetStream when their ack wait ends. A paused push
// group has its feeders and pusher stopped by every instance's watch of
// the bucket (push.go), and started again on resume.

// PauseGroup implements core.GroupService: a compare-and-set of the
// group's config on its current revision (read from the bucket's leader),
// so a pause never undoes a concurrent config change.
func (b *Backend) PauseGroup(ctx context.Context, name string, paused bool) (core.Group, error) {
	if !core.ValidName(name) {
		return core.Group{}, core.Errorf(core.ENotFound, "group %q not found", name)
	}
	ctx, cancel := b.ctx(ctx)
	defer cancel()
	for attempt := 0; ; attempt++ {
		m, err := b.leaderMsg(ctx, "KV_"+groupsBucket, msgGet{LastBySubj: "$KV." + groupsBucket + "." + name})
		if errors.Is(err, jsapi.ErrMsgNotFound) || (err == nil && len(m.Data) == 0) {
			return core.Group{}, core.Errorf(core.ENotFound, "group %q not found", name)
		} else if err != nil {
			return core.Group{}, mapErr(err)
		}
		var g core.Group
		if err := json.Unmarshal(m.Data, &g); err != nil {
			return core.Group{}, err
		}
		if g.Paused == paused {
			return g, nil // pausing a paused group changes nothing
		}
		g.Paused, g.PausedAt = paused, time.Time{}
		if paused {
			g.PausedAt = time.Now().UTC().Truncate(time.Millisecond)
		}
		raw, _ := json.Marshal(g)
		if _, err := b.groups.Update(ctx, name, raw, m.Sequence); err != nil {
			if errors.Is(err, jsapi.ErrKeyRevisionMismatch) && attempt < 8 {
				continue // the config changed in between: apply to the new one
			}
			return core.Group{}, mapErr(err)
		}
		b.gcache().forget(name)
		return g, nil
	}
}

// awaitResume waits until group is no longer paused (true), or wait ends,
// ctx ends or the backend drains (false). It watches the group's key, so
// a resume through any instance ends it at once; the config is read again
// once the watch runs, so a resume just before it is not missed.
func (b *Backend) awaitResume(ctx context.Context, group string, wait time.Duration) bool {
	if wait <= 0 {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	w, err := b.groups.Watch(ctx, group, jsapi.UpdatesOnly())
	if err != nil {
		<-ctx.Done() // the cluster is unreachable: answer empty at the end of the wait
		return false
	}
	defer w.Stop()
	if g, err := b.Group(ctx, group); err != nil || !g.Paused {
		b.gcache().forget(group)
		return err == nil
	}
	for {
		select {
		case e, ok := <-w.Updates():
			if !ok {
				return false
			}
			if e == nil {
				continue
			}
			var g core.Group
			if e.Operation() != jsapi.KeyValuePut || json.Unmarshal(e.Value(), &g) != nil || !g.Paused {
				// Resumed (or deleted: the receive then answers 404).
				b.gcache().forget(group)
				return true
			}
		case <-ctx.Done():
			return false
		case <-b.drain:
			return false
		}
	}
}
