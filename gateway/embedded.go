package gateway

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/core/policy"
)

// Embedded is the Service over the in-process push consumer: one client per
// CLUSTERING group (client id = the instance id) and one per BROADCASTING
// consumerId, with the gateway (an inbox per client) as their Listener.
type Embedded struct {
	opts   Options
	log    zerolog.Logger
	leases *leaseTable
	parks  blockedRules // skip and park rules of ORDERLY groups (blocked.go)

	mu     sync.Mutex // guards below; taken before leaseTable.mu
	groups map[string]*groupRT
	pushes map[string]*pushRT // push (webhook) groups; changed by the reconcile path only
	// incarnations: each group's incarnation as the reconcile path last
	// saw it (a change means deleted and created again: its rules go).
	incarnations map[string]uint64
	waiting      int
	draining     bool
	started      bool
	closed       bool

	drain chan struct{} // closed by Drain: parked receives answer at once
	stop  chan struct{} // closed by Close: background loops end
	kick  chan struct{} // cap 1: a BROADCASTING client went idle
	syncs chan syncReq  // SyncGroup's requests to the run loop (pause.go)
	wg    sync.WaitGroup
}

var _ core.ConsumeService = (*Embedded)(nil)

// groupRT is a running group.
type groupRT struct {
	cfg     core.GroupConfig
	clients map[string]*clientRT // by consumerId; "" for CLUSTERING
	waiting int
	paused  bool // the group is paused: its inboxes hand nothing out (pause.go)
}

// clientRT is one push-consumer client and its inbox.
type clientRT struct {
	consumerID string
	box        *inbox
	pc         PushClient
	active     int       // receives in progress
	lastUsed   time.Time // end of the last receive (idle expiry)
	idle       bool      // prefetch lowered to IdlePrefetch (reconcile.go expireIdle)
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
	if _, err := policy.NewSealer(key, opts.PreviousKeys...); err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	var nonce [8]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return nil, err
	}
	if opts.InstanceID == "" {
		opts.InstanceID = "gw-" + hex.EncodeToString(nonce[:4])
	}
	return &Embedded{
		opts:         opts,
		log:          opts.Logger,
		leases:       withTimeline(newLeaseTable(binary.BigEndian.Uint64(nonce[:]), newHandleCodec(key, opts.PreviousKeys...)), opts.Timeline),
		parks:        blockedRules{store: opts.Parks, file: parkFile(opts.Dir), log: opts.Logger},
		groups:       map[string]*groupRT{},
		pushes:       map[string]*pushRT{},
		incarnations: map[string]uint64{},
		drain:        make(chan struct{}),
		stop:         make(chan struct{}),
		kick:         make(chan struct{}, 1),
		syncs:        make(chan syncReq),
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

	if err := e.parks.open(); err != nil {
		return fmt.Errorf("gateway: parked keys: %w", err)
	}
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
