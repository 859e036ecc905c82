package gateway

import (
	"context"
	"errors"
	"reflect"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/core/consumer"
	"github.com/mqgate/mqgate/gateway/webhook"
)

// pushRT is a running push (webhook) group: one push-consumer client whose
// Listener is the group's webhook.Pusher instead of an inbox. Receive on
// such a group answers 409; nothing of it is in Embedded.groups.
type pushRT struct {
	cfg    core.GroupConfig
	pusher *webhook.Pusher
	pc     PushClient
}

// reconcilePush brings a push group's pusher and client in line with g
// (g.Push != nil). It runs on the reconcile path only (Start, then the run
// loop), so pushes is never changed by two goroutines at once.
func (e *Embedded) reconcilePush(name string, g core.Group) {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return
	}
	prt := e.pushes[name]
	e.mu.Unlock()

	switch {
	case prt == nil:
		e.startPush(name, g.GroupConfig)
	case reflect.DeepEqual(prt.cfg, g.GroupConfig):
	case prt.cfg.MessageModel != g.MessageModel || prt.cfg.Incarnation != g.Incarnation || batchSize(prt.cfg) != batchSize(g.GroupConfig):
		// The consumer picks its offset owner (group or consumerId) from
		// the model, and its delivery size from push.batchSize, when it is
		// built: a new client, the same pusher.
		if err := prt.pusher.Update(*g.Push); err != nil {
			e.log.Error().Err(err).Str("group", name).Msg("gateway: update webhook")
		}
		e.shutdownPushClient(name, prt.pc)
		pc, err := e.newPushClient(g.GroupConfig, prt.pusher)
		e.mu.Lock()
		prt.cfg, prt.pc = g.GroupConfig, pc
		e.mu.Unlock()
		if err != nil {
			e.log.Error().Err(err).Str("group", name).Msg("gateway: start push client")
		}
	default:
		if err := prt.pusher.Update(*g.Push); err != nil {
			e.log.Error().Err(err).Str("group", name).Msg("gateway: update webhook")
		}
		e.mu.Lock()
		prt.cfg = g.GroupConfig
		pc := prt.pc
		e.mu.Unlock()
		if pc != nil {
			pc.UpdateConfig(g.GroupConfig) // subscriptions, mode: live (next rebalance)
			return
		}
		// The client could not start before: try again with the new config.
		pc, err := e.newPushClient(g.GroupConfig, prt.pusher)
		if err != nil {
			e.log.Error().Err(err).Str("group", name).Msg("gateway: start push client")
			return
		}
		e.mu.Lock()
		prt.pc = pc
		e.mu.Unlock()
	}
}

// startPush creates the group's pusher and starts a client feeding it.
func (e *Embedded) startPush(name string, cfg core.GroupConfig) {
	p, err := webhook.New(name, *cfg.Push, e.opts.Webhook)
	if err != nil {
		// The api validates push blocks (webhook.ValidateConfig), so this
		// is a config stored by an older build or a metrics clash.
		e.log.Error().Err(err).Str("group", name).Msg("gateway: create webhook pusher")
		return
	}
	pc, err := e.newPushClient(cfg, p)
	if err != nil {
		e.log.Error().Err(err).Str("group", name).Msg("gateway: start push client")
	}
	e.mu.Lock()
	e.pushes[name] = &pushRT{cfg: cfg, pusher: p, pc: pc}
	e.mu.Unlock()
}

// newPushClient builds and starts a push-consumer client delivering to p;
// nil with the error when it cannot start.
func (e *Embedded) newPushClient(cfg core.GroupConfig, p *webhook.Pusher) (PushClient, error) {
	pc, err := e.opts.NewClient(consumer.Options{
		Group:    cfg,
		ClientID: e.opts.InstanceID,
		Listener: p,
		Logger:   e.log,
		// Deliveries as large as a POST may carry: the pusher splits
		// larger ones, and an ORDERLY queue's next batch waits for the
		// whole delivery, so a smaller one would post one message at a
		// time whatever push.batchSize says.
		ConsumeMessageBatchMaxSize: batchSize(cfg),
		// The pusher answers every message itself, each request bounded
		// by push.timeoutSeconds and each pause by MaxRetryAfter; a
		// message may wait in its queue behind such a pause, so the
		// consume service's own timeout (cleanExpireMsg) is only a
		// backstop against an answer lost by a bug, far beyond both.
		ConsumeTimeout: pushConsumeTimeout,
	})
	if err != nil {
		return nil, err
	}
	if err := pc.Start(); err != nil {
		return nil, err
	}
	return pc, nil
}

// stopPush stops the group's push delivery if it has one (push removed or
// group deleted).
func (e *Embedded) stopPush(name string) {
	e.mu.Lock()
	prt := e.pushes[name]
	e.mu.Unlock()
	if prt == nil {
		return
	}
	// Listed until its client has persisted its positions: a receive
	// meanwhile must not start a pull client that reads them stale.
	e.stopPushRT(name, prt)
	e.mu.Lock()
	if e.pushes[name] == prt {
		delete(e.pushes, name)
	}
	e.mu.Unlock()
}

// stopPushRT shuts the client down first, then closes the pusher.
//
// Client first: Shutdown persists offsets below every unanswered message
// and abandons the deliveries still out, so nothing the pusher holds is
// lost (it is delivered again from the committed offset) and the pusher's
// late answers are ignored. Pusher first would nack its queue, and every
// batch the consume services dispatch until Shutdown, into the retry
// topic: each such message would lose a reconsume attempt (ORDERLY: a
// suspend round), and could reach the DLQ for no delivery failure.
// Requests still in flight are then aborted at once: their answers no
// longer count, and a removed webhook should stop receiving now.
func (e *Embedded) stopPushRT(name string, prt *pushRT) {
	e.shutdownPushClient(name, prt.pc)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := prt.pusher.Close(ctx); err != nil && !errors.Is(err, context.Canceled) {
		e.log.Error().Err(err).Str("group", name).Msg("gateway: close webhook pusher")
	}
}

func (e *Embedded) shutdownPushClient(name string, pc PushClient) {
	if pc == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), e.opts.ClientShutdownTimeout)
	defer cancel()
	if err := pc.Shutdown(ctx); err != nil {
		e.log.Error().Err(err).Str("group", name).Msg("gateway: stop push client")
	}
}

// pushStatus fills st for a push group: its client's queues and the
// pusher's delivery state. It reports false when group is not pushing
// here.
func (e *Embedded) pushStatus(group string, st *core.GroupStatus) bool {
	e.mu.Lock()
	prt := e.pushes[group]
	var pc PushClient
	if prt != nil {
		pc = prt.pc
	}
	e.mu.Unlock()
	if prt == nil {
		return false
	}
	ps := prt.pusher.Status()
	st.Push = &ps
	if pc != nil {
		cst := core.ClientStatus{ClientID: e.opts.InstanceID}
		for _, q := range pc.Status() {
			cst.Queues = append(cst.Queues, core.QueueStatus{
				Queue: q.Queue, Position: q.ConsumedOffset, Held: q.Cached, Exclusive: q.Locked,
			})
		}
		st.Clients = append(st.Clients, cst)
		sortClients(st.Clients)
	}
	return true
}

// batchSize is the group's messages per POST (push.batchSize, default 1).
func batchSize(cfg core.GroupConfig) int {
	if cfg.Push == nil || cfg.Push.BatchSize < 1 {
		return 1
	}
	return cfg.Push.BatchSize
}
