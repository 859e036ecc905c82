// Package embedded is the default backend: the bbolt engine in this
// process (core/engine), its consumer-group registry (core/groups), the
// push-consumer gateway that leases messages to HTTP callers (gateway) and
// the group admin, wired as one core.Backend. Open is the only way to
// build it: cmd/mqgate, cmd/mqbench, conformance/ and the test harnesses
// all call it, so the wiring is written once.
package embedded

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rs/zerolog"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/core/consumer"
	"github.com/mqgate/mqgate/core/engine"
	"github.com/mqgate/mqgate/core/groups"
	"github.com/mqgate/mqgate/gateway"
	"github.com/mqgate/mqgate/gateway/webhook"
)

// Options configure Open.
type Options struct {
	// Engine configures the bbolt engine. Engine.Dir is the data
	// directory (required); the gateway keeps its handle key (unless Key
	// is set) and parked keys there too. Open sets Engine.Logger (from
	// Logger) and Engine.JobRedriven (when timelines are on).
	Engine engine.Options
	// Logger is the base logger; each part logs with component=engine,
	// groups or gateway.
	Logger zerolog.Logger
	// TimelineEvents is the size of each group's in-memory timeline ring
	// (0: timelines off, MessageEvents answers none).
	TimelineEvents int
	// Key signs receipt handles (nil: the data directory's gateway.key);
	// PreviousKeys still verify handles signed before a rotation.
	Key          []byte
	PreviousKeys [][]byte
	// Consumer tunes every push-consumer client the gateway starts (cmd
	// sets the process-wide cache budget and its observer). Nil: defaults.
	Consumer func(*consumer.Options)
	// MaxWaitingPerGroup and MaxWaiting bound the parked long polls
	// (gateway defaults when 0); BroadcastIdleTimeout ends idle
	// BROADCASTING clients.
	MaxWaitingPerGroup, MaxWaiting int
	BroadcastIdleTimeout           time.Duration
	// Webhook configures push groups' pushers and the network guard their
	// URLs are checked against when a group is put.
	Webhook webhook.Options
}

// Backend is the embedded engine as a core.Backend. The engine, gateway
// and admin serve the seam's methods directly; Engine and Registry stay
// reachable for what only this backend has (store metrics, backups,
// the writer's state).
type Backend struct {
	*engine.Engine
	*gateway.Embedded
	*gateway.Admin
	Registry *groups.Registry
}

var _ core.Backend = (*Backend)(nil)

// Open opens the engine in opts.Engine.Dir, then the group registry over
// its store, then the gateway (started), as `mqgate serve` runs them.
// On an error everything opened so far is closed again.
func Open(opts Options) (*Backend, error) {
	component := func(name string) zerolog.Logger {
		return opts.Logger.With().Str("component", name).Logger()
	}
	// Message timelines: bounded rings in memory (nil: off). Made before
	// the engine opens: a redrive job resumed by Open records into it.
	var timeline *gateway.Timeline
	eo := opts.Engine
	eo.Logger = component("engine")
	if opts.TimelineEvents > 0 {
		timeline = gateway.NewTimeline(opts.TimelineEvents)
		eo.JobRedriven = timeline.RecordJobRedriven
	}
	eng, err := engine.Open(eo)
	if err != nil {
		return nil, fmt.Errorf("open store in %s: %w", eo.Dir, err)
	}
	reg, err := groups.OpenWith(eng.Store(), groups.Options{
		Logger:  component("groups"),
		Offsets: eng,
		// Consumer positions join the store's group commit.
		Commit: eng.CommitHook,
	})
	if err != nil {
		return nil, errors.Join(fmt.Errorf("open consumer groups: %w", err), eng.Close())
	}
	checkPushURL, err := webhook.URLChecker(opts.Webhook)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("webhook network guard: %w", err), reg.Close(), eng.Close())
	}
	gw, err := gateway.New(gateway.Options{
		Key:          opts.Key,
		PreviousKeys: opts.PreviousKeys,
		Dir:          eo.Dir,
		Groups:       reg,
		Parks:        reg,
		Timeline:     timeline,
		NewClient: gateway.ConsumerFactory(consumer.Deps{Reader: eng,
			SendBack:    gateway.SettlingSendBack{Engine: eng, Registry: reg, Timeline: timeline},
			Coordinator: reg,
			Heartbeats:  consumer.NewHeartbeats(reg, 0), // one heartbeat timer for every client of the process
		}, opts.Consumer),
		Logger: component("gateway"),

		MaxWaitingPerGroup:   opts.MaxWaitingPerGroup,
		MaxWaiting:           opts.MaxWaiting,
		BroadcastIdleTimeout: opts.BroadcastIdleTimeout,
		Webhook:              opts.Webhook,
	})
	if err == nil {
		if err = gw.Start(); err != nil {
			err = errors.Join(fmt.Errorf("start gateway: %w", err), gw.Close(context.Background()))
		}
	} else {
		err = fmt.Errorf("gateway: %w", err)
	}
	if err != nil {
		return nil, errors.Join(err, reg.Close(), eng.Close())
	}
	return &Backend{Engine: eng, Embedded: gw, Registry: reg,
		Admin: &gateway.Admin{Registry: reg, Engine: eng, Service: gw, CheckPushURL: checkPushURL}}, nil
}

// Drain answers every parked receive at once and refuses new ones.
func (b *Backend) Drain() { b.Embedded.Drain() }

// Close shuts the gateway down (its clients persist their offsets and
// unlock their queues), then the registry, then the engine: each closes
// before what it writes through.
func (b *Backend) Close(ctx context.Context) error {
	var errs []error
	if err := b.Embedded.Close(ctx); err != nil {
		errs = append(errs, fmt.Errorf("close gateway: %w", err))
	}
	if err := b.Registry.Close(); err != nil {
		errs = append(errs, fmt.Errorf("close groups: %w", err))
	}
	if err := b.Engine.Close(); err != nil {
		errs = append(errs, fmt.Errorf("close engine: %w", err))
	}
	return errors.Join(errs...)
}
