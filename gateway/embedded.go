package gateway

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/core/consumer"
)

// Embedded is the Service over the in-process push consumer: one client per
// CLUSTERING group (client id = the instance id) and one per BROADCASTING
// consumerId, with the gateway (an inbox per client) as their Listener.
type Embedded struct {
	opts   Options
	log    zerolog.Logger
	leases *leaseTable

	mu       sync.Mutex // guards below; taken before leaseTable.mu
	groups   map[string]*groupRT
	pushes   map[string]*pushRT // push (webhook) groups; changed by the reconcile path only
	waiting  int
	draining bool
	started  bool
	closed   bool

	drain chan struct{} // closed by Drain: parked receives answer at once
	stop  chan struct{} // closed by Close: background loops end
	kick  chan struct{} // cap 1: a BROADCASTING client went idle
	wg    sync.WaitGroup
}

var _ Service = (*Embedded)(nil)

// groupRT is a running group.
type groupRT struct {
	cfg     core.GroupConfig
	clients map[string]*clientRT // by consumerId; "" for CLUSTERING
	waiting int
}

// clientRT is one push-consumer client and its inbox.
type clientRT struct {
	consumerID string
	box        *inbox
	pc         PushClient
	active     int       // receives in progress
	lastUsed   time.Time // end of the last receive (idle expiry)
}

// New builds the gateway; Start starts it.
func New(opts Options) (*Embedded, error) {
	opts.setDefaults()
	if opts.Groups == nil || opts.NewClient == nil {
		return nil, errors.New("gateway: Options.Groups and Options.NewClient are required")
	}
	key := opts.Key
	if key == nil {
		if opts.Dir == "" {
			return nil, errors.New("gateway: set Options.Key or Options.Dir")
		}
		var err error
		if key, err = LoadOrCreateKey(opts.Dir); err != nil {
			return nil, err
		}
	}
	if len(key) < keySize {
		return nil, fmt.Errorf("gateway: handle key must be at least %d bytes", keySize)
	}
	var nonce [8]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return nil, err
	}
	if opts.InstanceID == "" {
		opts.InstanceID = "gw-" + hex.EncodeToString(nonce[:4])
	}
	return &Embedded{
		opts:   opts,
		log:    opts.Logger,
		leases: newLeaseTable(binary.BigEndian.Uint64(nonce[:]), newHandleCodec(key)),
		groups: map[string]*groupRT{},
		pushes: map[string]*pushRT{},
		drain:  make(chan struct{}),
		stop:   make(chan struct{}),
		kick:   make(chan struct{}, 1),
	}, nil
}

// Start starts a client for every CLUSTERING group (BROADCASTING clients
// start on a consumer's first receive), then follows group changes.
func (e *Embedded) Start() error {
	e.mu.Lock()
	if e.started {
		e.mu.Unlock()
		return errors.New("gateway: already started")
	}
	e.started = true
	e.mu.Unlock()

	// Watch before listing, so that no change falls between the two.
	ch, cancel := e.opts.Groups.Watch()
	list, err := e.opts.Groups.List()
	if err != nil {
		cancel()
		return fmt.Errorf("gateway: list groups: %w", err)
	}
	for _, g := range list {
		e.reconcileWith(g.Name, g, nil)
	}
	e.wg.Add(2)
	go func() {
		defer e.wg.Done()
		e.leases.run(e.stop)
	}()
	go func() {
		defer e.wg.Done()
		defer cancel()
		e.run(ch)
	}()
	return nil
}

// Drain answers every parked receive at once with what it has and refuses
// new receives (EUnavailable); acks keep working. Call it when the HTTP
// server starts shutting down (http.Server.RegisterOnShutdown).
func (e *Embedded) Drain() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.draining {
		e.draining = true
		close(e.drain)
	}
}

// Close drains, stops the background loops and shuts every client down
// (they persist their offsets; unacknowledged messages are delivered again
// after a restart).
func (e *Embedded) Close(ctx context.Context) error {
	e.Drain()
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	close(e.stop)
	e.mu.Unlock()
	e.wg.Wait()

	e.mu.Lock()
	var all []*clientRT
	for name, rt := range e.groups {
		for _, c := range rt.clients {
			all = append(all, c)
		}
		delete(e.groups, name)
	}
	pushes := e.pushes
	e.pushes = map[string]*pushRT{}
	e.mu.Unlock()
	var errs []error
	for _, c := range all {
		if err := e.stopClient(ctx, c); err != nil {
			errs = append(errs, err)
		}
	}
	for name, prt := range pushes {
		e.stopPushRT(name, prt)
	}
	return errors.Join(errs...)
}

// run follows registry changes and expires idle BROADCASTING clients with
// one timer re-armed to the next idle deadline.
func (e *Embedded) run(changes <-chan string) {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		var fire <-chan time.Time
		if next := e.nextIdle(); !next.IsZero() {
			timer.Reset(time.Until(next))
			fire = timer.C
		}
		select {
		case name, ok := <-changes:
			if !ok {
				changes = nil
				break
			}
			e.reconcile(name)
		case <-fire:
			e.expireIdle(time.Now())
		case <-e.kick:
		case <-e.stop:
			timer.Stop()
			return
		}
		timer.Stop()
	}
}

// reconcile brings a group's clients in line with its stored config.
func (e *Embedded) reconcile(name string) {
	g, err := e.opts.Groups.Get(name)
	if err != nil && core.ErrorCode(err) != core.ENotFound {
		e.log.Error().Err(err).Str("group", name).Msg("gateway: read group")
		return
	}
	e.reconcileWith(name, g, err)
}

// reconcileWith applies g (or its absence, getErr) to both kinds of
// group. A group moving between pull and push has its old client stopped
// before the new one starts: both would use the instance id as client id.
func (e *Embedded) reconcileWith(name string, g core.Group, getErr error) {
	push := getErr == nil && g.Push != nil
	if !push {
		e.stopPush(name)
	}
	e.reconcilePull(name, g, getErr)
	if push {
		e.reconcilePush(name, g)
	}
}

// reconcilePull starts, updates or stops a pull group's clients; a push
// group counts as gone here.
func (e *Embedded) reconcilePull(name string, g core.Group, getErr error) {
	var stopping []*clientRT
	var updates []PushClient
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return
	}
	rt := e.groups[name]
	switch {
	case getErr != nil || g.Push != nil:
		// Deleted, or a webhook group (reconcilePush runs it): stop the
		// pull clients; their inboxes' unanswered deliveries are abandoned
		// by Shutdown and delivered again from the committed offset.
		if rt != nil {
			stopping = rt.detachAll()
			delete(e.groups, name)
		}
	case rt == nil:
		rt = &groupRT{cfg: g.GroupConfig, clients: map[string]*clientRT{}}
		e.groups[name] = rt
		if rt.cfg.MessageModel != core.Broadcasting {
			if _, err := e.clientLocked(rt, ""); err != nil {
				e.log.Error().Err(err).Str("group", name).Msg("gateway: start client")
			}
		}
	case !reflect.DeepEqual(rt.cfg, g.GroupConfig):
		old := rt.cfg
		rt.cfg = g.GroupConfig
		if old.MessageModel != rt.cfg.MessageModel || old.ConsumeMode != rt.cfg.ConsumeMode {
			// What the inboxes hold was dispatched under the old mode:
			// start over with fresh clients (offsets are kept).
			stopping = rt.detachAll()
			if rt.cfg.MessageModel != core.Broadcasting {
				if _, err := e.clientLocked(rt, ""); err != nil {
					e.log.Error().Err(err).Str("group", name).Msg("gateway: start client")
				}
			}
		} else {
			for _, c := range rt.clients {
				updates = append(updates, c.pc)
			}
		}
	}
	cfg := g.GroupConfig
	e.mu.Unlock()
	for _, pc := range updates {
		pc.UpdateConfig(cfg)
	}
	for _, c := range stopping {
		ctx, cancel := context.WithTimeout(context.Background(), e.opts.ClientShutdownTimeout)
		if err := e.stopClient(ctx, c); err != nil {
			e.log.Error().Err(err).Str("group", name).Msg("gateway: stop client")
		}
		cancel()
	}
}

func (rt *groupRT) detachAll() []*clientRT {
	var out []*clientRT
	for id, c := range rt.clients {
		out = append(out, c)
		delete(rt.clients, id)
	}
	return out
}

// groupLocked returns the running group, starting it if the registry has
// it and the watch has not caught up yet.
func (e *Embedded) groupLocked(name string) (*groupRT, error) {
	if rt := e.groups[name]; rt != nil {
		return rt, nil
	}
	g, err := e.opts.Groups.Get(name)
	if err != nil {
		return nil, err
	}
	if g.Push != nil {
		return nil, core.Errorf(core.EConflict, "group %q is a push (webhook) group: it cannot be received from", name)
	}
	rt := &groupRT{cfg: g.GroupConfig, clients: map[string]*clientRT{}}
	e.groups[name] = rt
	return rt, nil
}

// clientLocked returns the group's client for consumerID, creating and
// starting it if needed.
func (e *Embedded) clientLocked(rt *groupRT, consumerID string) (*clientRT, error) {
	if c := rt.clients[consumerID]; c != nil {
		return c, nil
	}
	clientID := e.opts.InstanceID
	if consumerID != "" {
		clientID = consumerID
	}
	box := newInbox(rt.cfg.Name, clientID)
	pc, err := e.opts.NewClient(consumer.Options{
		Group:          rt.cfg,
		ClientID:       clientID,
		Listener:       box,
		Logger:         e.log,
		ConsumeTimeout: consumeTimeout,
	})
	if err != nil {
		return nil, err
	}
	if err := pc.Start(); err != nil {
		return nil, err
	}
	c := &clientRT{consumerID: consumerID, box: box, pc: pc, lastUsed: time.Now()}
	rt.clients[consumerID] = c
	return c, nil
}

func (e *Embedded) stopClient(ctx context.Context, c *clientRT) error {
	c.box.close()
	return c.pc.Shutdown(ctx)
}

// nextIdle is the earliest moment an idle BROADCASTING client expires.
func (e *Embedded) nextIdle() time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	var next time.Time
	for _, rt := range e.groups {
		if rt.cfg.MessageModel != core.Broadcasting {
			continue
		}
		for _, c := range rt.clients {
			if c.active > 0 {
				continue
			}
			if d := c.lastUsed.Add(e.opts.BroadcastIdleTimeout); next.IsZero() || d.Before(next) {
				next = d
			}
		}
	}
	return next
}

func (e *Embedded) expireIdle(now time.Time) {
	var idle []*clientRT
	e.mu.Lock()
	for _, rt := range e.groups {
		if rt.cfg.MessageModel != core.Broadcasting {
			continue
		}
		for id, c := range rt.clients {
			if c.active == 0 && !now.Before(c.lastUsed.Add(e.opts.BroadcastIdleTimeout)) {
				idle = append(idle, c)
				delete(rt.clients, id)
			}
		}
	}
	e.mu.Unlock()
	for _, c := range idle {
		ctx, cancel := context.WithTimeout(context.Background(), e.opts.ClientShutdownTimeout)
		if err := e.stopClient(ctx, c); err != nil {
			e.log.Error().Err(err).Str("consumerId", c.consumerID).Msg("gateway: stop idle client")
		}
		cancel()
	}
}

// Receive implements Service.
func (e *Embedded) Receive(ctx context.Context, group string, req ReceiveRequest) ([]Received, error) {
	if req.MaxMessages < 1 || req.MaxMessages > MaxReceiveMessages {
		return nil, core.FieldError("maxMessages", "must be between 1 and %d", MaxReceiveMessages)
	}
	if req.Wait < 0 || req.Wait > MaxWait {
		return nil, core.FieldError("waitSeconds", "must be between 0 and %d", int(MaxWait/time.Second))
	}
	if req.Invisible != 0 && (req.Invisible < MinInvisible || req.Invisible > MaxInvisible) {
		return nil, core.FieldError("invisibleSeconds", "must be between 1 and %d", int(MaxInvisible/time.Second))
	}

	e.mu.Lock()
	if e.draining {
		e.mu.Unlock()
		return nil, core.ErrClosed
	}
	rt, err := e.groupLocked(group)
	if err != nil {
		e.mu.Unlock()
		return nil, err
	}
	consumerID := ""
	if rt.cfg.MessageModel == core.Broadcasting {
		if req.ConsumerID == "" {
			e.mu.Unlock()
			return nil, core.FieldError("consumerId", "is required for a BROADCASTING group")
		}
		if !core.ValidName(req.ConsumerID) {
			e.mu.Unlock()
			return nil, core.FieldError("consumerId", "must match ^[A-Za-z0-9_-]{1,127}$")
		}
		consumerID = req.ConsumerID
	}
	c, err := e.clientLocked(rt, consumerID)
	if err != nil {
		e.mu.Unlock()
		return nil, fmt.Errorf("gateway: start client of group %q: %w", group, err)
	}
	parks := req.Wait > 0
	if parks {
		if rt.waiting >= e.opts.MaxWaitingPerGroup || e.waiting >= e.opts.MaxWaiting {
			e.mu.Unlock()
			return nil, core.Errorf(core.ETooMany, "too many waiting receives; retry later")
		}
		rt.waiting++
		e.waiting++
	}
	c.active++
	invisible := req.Invisible
	if invisible == 0 {
		invisible = time.Duration(rt.cfg.InvisibleSeconds) * time.Second
	}
	if invisible <= 0 {
		invisible = core.DefaultInvisibleSeconds * time.Second
	}
	e.mu.Unlock()

	items, err := c.box.receive(ctx, req.MaxMessages, req.Wait, e.drain)

	e.mu.Lock()
	if parks {
		rt.waiting--
		e.waiting--
	}
	c.active--
	c.lastUsed = time.Now()
	idle := c.active == 0 && consumerID != ""
	e.mu.Unlock()
	if idle {
		select {
		case e.kick <- struct{}{}:
		default:
		}
	}
	if err != nil {
		return nil, err
	}
	return e.leases.grant(c.box, consumerID, items, time.Now().Add(invisible)), nil
}

// Ack implements Service.
func (e *Embedded) Ack(ctx context.Context, group string, handles []string) ([]HandleResult, error) {
	return e.apply(group, handles, opAck, 0, 0)
}

// Nack implements Service.
func (e *Embedded) Nack(ctx context.Context, group string, handles []string, delayLevel int) ([]HandleResult, error) {
	if delayLevel < -1 {
		return nil, core.FieldError("delayLevel", "must be -1, 0 or a delay level")
	}
	return e.apply(group, handles, opNack, delayLevel, 0)
}

// Extend implements Service.
func (e *Embedded) Extend(ctx context.Context, group string, handles []string, invisible time.Duration) ([]HandleResult, error) {
	if invisible < MinInvisible || invisible > MaxInvisible {
		return nil, core.FieldError("invisibleSeconds", "must be between 1 and %d", int(MaxInvisible/time.Second))
	}
	return e.apply(group, handles, opExtend, 0, invisible)
}

func (e *Embedded) apply(group string, handles []string, o op, level int, invisible time.Duration) ([]HandleResult, error) {
	if len(handles) < 1 || len(handles) > MaxHandles {
		return nil, core.FieldError("receiptHandles", "must hold 1 to %d handles", MaxHandles)
	}
	if err := e.exists(group); err != nil {
		return nil, err
	}
	now := time.Now()
	res, calls := e.leases.apply(group, handles, o, level, now.Add(invisible), now)
	runCalls(calls)
	return res, nil
}

func (e *Embedded) exists(group string) error {
	e.mu.Lock()
	_, ok := e.groups[group]
	e.mu.Unlock()
	if ok {
		return nil
	}
	_, err := e.opts.Groups.Get(group)
	return err
}

// GroupStatus implements Service.
func (e *Embedded) GroupStatus(ctx context.Context, group string) (GroupStatus, error) {
	if err := e.exists(group); err != nil {
		return GroupStatus{}, err
	}
	st := GroupStatus{Group: group}
	if e.pushStatus(group, &st) {
		return st, nil
	}
	type named struct {
		id string
		c  *clientRT
	}
	var cs []named
	e.mu.Lock()
	if rt := e.groups[group]; rt != nil {
		st.Waiting = rt.waiting
		for id, c := range rt.clients {
			if id == "" {
				id = e.opts.InstanceID
			}
			cs = append(cs, named{id, c})
		}
	}
	e.mu.Unlock()
	for _, n := range cs {
		counts := n.c.box.counts()
		cst := ClientStatus{ClientID: n.id}
		for _, q := range n.c.pc.Status() {
			k := counts[q.Queue]
			cst.Queues = append(cst.Queues, QueueStatus{
				Queue: q.Queue, ConsumedOffset: q.ConsumedOffset, Cached: q.Cached,
				Buffered: k[0], InFlight: k[1], Locked: q.Locked,
			})
		}
		st.Clients = append(st.Clients, cst)
	}
	sortClients(st.Clients)
	return st, nil
}

// GroupStatusWaiting returns how many receives are parked on group.
func (e *Embedded) GroupStatusWaiting(group string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	if rt := e.groups[group]; rt != nil {
		return rt.waiting
	}
	return 0
}
