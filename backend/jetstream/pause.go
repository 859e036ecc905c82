package jetstream

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	jsapi "github.com/nats-io/nats.go/jetstream"

	"github.com/mqgate/mqgate/core"
)

// Paused groups (core.Group.Paused; API.md "Pause"), as on embedded
// (gateway/pause.go). The flag lives in the group's config in
// MQGATE_GROUPS, so every instance answers the same and a pause survives
// restarts. A paused pull group hands nothing out: a receive waits out its
// waitSeconds on this instance's one watch of the group's key (shared by
// all its waiting receives) and answers empty (Diagnose: PAUSED); a
// resume through any instance wakes them at once. Acks, nacks and
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
// ctx ends or the backend drains (false). It joins this instance's watch
// of the group's key (resumeWatch: one per paused group, however many
// receives wait), so a resume through any instance ends it at once; the
// config is read again once the watch runs, so a resume just before it is
// not missed.
func (b *Backend) awaitResume(ctx context.Context, group string, wait time.Duration) bool {
	if wait <= 0 {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	resumed, leave, err := b.joinResumeWatch(group)
	if err != nil {
		<-ctx.Done() // the cluster is unreachable: answer empty at the end of the wait
		return false
	}
	defer leave()
	if g, err := b.Group(ctx, group); err != nil || !g.Paused {
		b.gcache().forget(group)
		return err == nil
	}
	select {
	case <-resumed:
		// Resumed (or deleted: the receive then answers 404).
		b.gcache().forget(group)
		return true
	case <-ctx.Done():
		return false
	case <-b.drain:
		return false
	}
}

// resumeWatch is this instance's watch of one paused group's key, shared
// by the receives waiting for its resume.
type resumeWatch struct {
	waiters int
	resumed chan struct{} // closed at a resume, the group's deletion, or the watch's end
	left    chan struct{} // closed when the last waiter leaves
	ended   bool
}

// resumeWatches are the watches by group (awaitResume).
type resumeWatches struct {
	mu sync.Mutex // held while a watch is started: joins wait for it
	m  map[string]*resumeWatch
}

// joinResumeWatch joins group's watch, starting it if none runs; the
// watch runs (it sees every later change) when this returns. leave must
// be called when done.
func (b *Backend) joinResumeWatch(group string) (resumed <-chan struct{}, leave func(), err error) {
	ws := &b.resumes
	ws.mu.Lock()
	defer ws.mu.Unlock()
	rw := ws.m[group]
	if rw == nil {
		w, err := b.groups.Watch(context.Background(), group, jsapi.UpdatesOnly())
		if err != nil {
			return nil, nil, err
		}
		b.mu.Lock()
		if b.closed {
			b.mu.Unlock()
			w.Stop()
			return nil, nil, core.ErrClosed
		}
		b.wg.Add(1)
		b.mu.Unlock()
		rw = &resumeWatch{resumed: make(chan struct{}), left: make(chan struct{})}
		if ws.m == nil {
			ws.m = map[string]*resumeWatch{}
		}
		ws.m[group] = rw
		go b.followResume(group, rw, w)
	}
	rw.waiters++
	return rw.resumed, func() {
		ws.mu.Lock()
		defer ws.mu.Unlock()
		if rw.waiters--; rw.waiters == 0 && !rw.ended {
			rw.ended = true
			delete(ws.m, group)
			close(rw.left)
		}
	}, nil
}

// followResume runs rw's watch until the group is resumed (or deleted),
// the watch ends, its last waiter leaves, or the backend closes.
func (b *Backend) followResume(group string, rw *resumeWatch, w jsapi.KeyWatcher) {
	defer b.wg.Done()
	defer w.Stop()
	end := func() {
		ws := &b.resumes
		ws.mu.Lock()
		defer ws.mu.Unlock()
		if !rw.ended {
			rw.ended = true
			delete(ws.m, group)
		}
		close(rw.resumed)
	}
	for {
		select {
		case e, ok := <-w.Updates():
			if !ok {
				end() // its waiters look again
				return
			}
			if e == nil {
				continue
			}
			var g core.Group
			if e.Operation() != jsapi.KeyValuePut || json.Unmarshal(e.Value(), &g) != nil || !g.Paused {
				end()
				return
			}
		case <-rw.left:
			return
		case <-b.stop:
			end()
			return
		}
	}
}
